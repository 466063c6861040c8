import Foundation
import Testing

@testable import AccessoryCore

@Suite("BoundedInput limits")
struct BoundedInputLimitTests {
    @Test func anEndlessDeviceStopsOneByteAfterTheLimit() {
        #expect(throws: BoundedInputError.tooLarge(name: "/dev/zero", limit: 100)) {
            try BoundedInput.read(path: "/dev/zero", limit: 100)
        }
    }

    @Test func aFileOfExactlyTheLimitIsReadWhole() throws {
        try BoundedInputTests.withSparseFile(size: 4096) { url throws in
            #expect(try BoundedInput.read(path: url.path, limit: 4096) == Data(count: 4096))
            #expect(throws: BoundedInputError.tooLarge(name: url.path, limit: 4095)) {
                try BoundedInput.read(path: url.path, limit: 4095)
            }
        }
    }

    @Test func aPipeIsReadToItsEnd() throws {
        let pipe = Pipe()
        pipe.fileHandleForWriting.write(Data("secret\n".utf8))
        try pipe.fileHandleForWriting.close()
        let data = try BoundedInput.read(
            descriptor: pipe.fileHandleForReading.fileDescriptor, name: "standard input", limit: 4096)
        #expect(data == Data("secret\n".utf8))
    }

    @Test func theHeadOfAFileIsItsFirstBytesOrAllOfAShortOne() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("head-\(UUID().uuidString)")
        try Data("0123456789".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(try BoundedInput.head(path: url.path, count: 4) == Data("0123".utf8))
        #expect(try BoundedInput.head(path: url.path, count: 100) == Data("0123456789".utf8))
        #expect(throws: BoundedInputError.unreadable(name: "/nonexistent/file", reason: "no such file or directory")) {
            try BoundedInput.head(path: "/nonexistent/file", count: 4)
        }
    }

    @Test func aMissingFileIsUnreadableNamingIt() {
        do {
            _ = try BoundedInput.read(path: "/nonexistent/file", limit: 10)
            Issue.record("read a missing file")
        } catch {
            guard case .unreadable(let name, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(name == "/nonexistent/file")
            #expect(error.description == "/nonexistent/file cannot be read: no such file or directory")
        }
    }

    @Test func aDirectoryIsUnreadable() {
        do {
            _ = try BoundedInput.read(path: "/", limit: 10)
            Issue.record("read a directory")
        } catch {
            guard case .unreadable(_, let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(reason == "is a directory")
        }
    }

    @Test func limitsAreNamedInUnits() {
        let document = BoundedInputError.tooLarge(name: "f", limit: BoundedInput.documentLimit)
        let passphrase = BoundedInputError.tooLarge(name: "f", limit: BoundedInput.passphraseLimit)
        #expect(document.reason.hasPrefix("is larger than 8 MiB"))
        #expect(passphrase.reason.hasPrefix("is larger than 4 KiB"))
        #expect(BoundedInputError.tooLarge(name: "f", limit: 100).reason.hasPrefix("is larger than 100 bytes"))
    }
}
