import FoundationEssentials
import Glibc

/// Replaces a file so that after a crash it holds either its old contents or the new ones.
///
/// The new contents go to a temporary file beside it (mode 0600, `.NAME.tmp-UUID`), are
/// flushed to disk, renamed over the file, and the directory is flushed. Temporaries a crash
/// left before its rename are removed first. One process writes a given file.
public enum DurableFile {
    /// Replaces `url`'s contents with `data`, making its directory (root only) if missing.
    /// `beforeRename` runs between writing the temporary file and renaming it (tests throw
    /// there to stand for a crash). The error's description says what failed.
    public static func replace(_ url: URL, with data: Data, beforeRename: () throws -> Void = {}) throws {
        let directory = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let prefix = "." + url.lastPathComponent + ".tmp-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasPrefix(prefix) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        let temporary = directory.appendingPathComponent(prefix + UUID().uuidString).path
        do {
            try writeDurably(data, to: temporary)
            try beforeRename()
            try check(rename(temporary, url.path), "rename \(temporary)")
            try syncDirectory(directory.path)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }

    private static func writeDurably(_ data: Data, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try check(descriptor, "create \(path)")
        defer { close(descriptor) }
        let failure = data.withUnsafeBytes { writeAll($0, to: descriptor) }
        if failure != 0 { throw SystemCallError(operation: "write \(path)", code: failure) }
        try check(fsync(descriptor), "fsync \(path)")
    }

    private static func syncDirectory(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try check(descriptor, "open directory \(path)")
        defer { close(descriptor) }
        try check(fsync(descriptor), "fsync directory \(path)")
    }

    private static func check(_ result: Int32, _ operation: String) throws {
        if result < 0 { throw SystemCallError(operation: operation, code: errno) }
    }
}

struct SystemCallError: Error, CustomStringConvertible {
    var operation: String
    var code: Int32

    var description: String { "\(operation): \(SystemErrorText.reason(code))" }
}
