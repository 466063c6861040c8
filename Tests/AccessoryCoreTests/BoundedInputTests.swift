import Foundation
import Testing

@testable import AccessoryCore

@Suite("BoundedInput")
struct BoundedInputTests {
    /// A sparse file of `size` zero bytes, removed with its directory afterwards.
    static func withSparseFile(size: UInt64, _ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bounded-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("big.json")
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: size)
        try handle.close()
        try body(url)
    }

    @Test("a profile file over 8 MiB is refused as too large, naming the file and the limit")
    func oversizedProfile() throws {
        try Self.withSparseFile(size: 9 << 20) { url in
            let reason = "is larger than 8 MiB, the limit for this input"
            let refused = ProfileError.unreadable(path: url.path, reason: reason)
            #expect(throws: refused) {
                try AccessoryProfile.load(contentsOf: url)
            }
        }
    }

    @Test("a recorded scan over 8 MiB is refused as too large, naming the file and the limit")
    func oversizedScan() throws {
        try Self.withSparseFile(size: 9 << 20) { url in
            let issue = FieldIssue(field: "(file)", message: "is larger than 8 MiB, the limit for this input")
            #expect(throws: RecordedScanError(path: url.path, issues: [issue])) {
                try RecordedScan.load(contentsOf: url)
            }
        }
    }
}
