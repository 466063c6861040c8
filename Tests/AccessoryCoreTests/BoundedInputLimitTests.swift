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
        let data = try BoundedInput.read(descriptor: pipe.fileHandleForReading.fileDescriptor, name: "standard input", limit: 4096)
        #expect(data == Data("secret\n".utf8))
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
            #expect(error.description.hasPrefix("/nonexistent/file cannot be read: "))
        }
    }

    @Test func aDirectoryIsUnreadable() {
        do {
            _ = try BoundedInput.read(path: "/", limit: 10)
            Issue.record("read a directory")
        } catch {
            guard case .unreadable = error else {
                Issue.record("\(error)")
                return
            }
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
