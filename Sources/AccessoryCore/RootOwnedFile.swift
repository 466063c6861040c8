import FoundationEssentials
import Glibc

/// A file the agent trusts because only root can have written it: the kiosk policy and the
/// passphrase files it names.
///
/// Each directory on the way is opened from `/` without following a symbolic link
/// (`O_NOFOLLOW` at every step, `openat`), and it and the file are checked with `fstat` on the
/// very descriptors the file is then read through, so nothing can be swapped in between the
/// check and the read. A directory must be root's and writable by no one else (or sticky, as
/// `/tmp` is, where no one else can replace root's entries); the file must be a regular file of
/// root's that no one else may write, and for `.rootOnly` one no one else may read either.
public enum RootOwnedFile {
    public enum Access: Sendable {
        /// Others may read it (a policy).
        case readableByOthers
        /// Root alone may read it (a secret).
        case rootOnly
    }

    /// The file's contents, at most `limit` bytes; the error's reason says what to change.
    public static func read(path: String, limit: Int, access: Access) throws(RootOwnedFileError) -> Data {
        guard path.hasPrefix("/") else { throw RootOwnedFileError(path: path, reason: "is not an absolute path") }
        let components = path.split(separator: "/").map(String.init)
        guard let name = components.last, !components.contains(".."), !components.contains(".") else {
            throw RootOwnedFileError(path: path, reason: "is not a plain absolute path to a file")
        }
        var directory = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else {
            throw RootOwnedFileError(path: path, reason: "/ cannot be opened: \(SystemErrorText.reason(errno))")
        }
        defer { close(directory) }
        var walked = ""
        try checkDirectory(directory, named: "/", path: path)
        for component in components.dropLast() {
            walked += "/" + component
            let next = openat(directory, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else {
                throw RootOwnedFileError(path: path, reason: reason(opening: component, in: directory, walked, errno))
            }
            close(directory)
            directory = next
            try checkDirectory(directory, named: walked, path: path)
        }
        let file = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard file >= 0 else {
            throw RootOwnedFileError(path: path, reason: reason(opening: name, in: directory, path, errno))
        }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0 else {
            throw RootOwnedFileError(path: path, reason: "cannot be examined: \(SystemErrorText.reason(errno))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw RootOwnedFileError(path: path, reason: "is not a regular file")
        }
        guard status.st_uid == 0 else {
            throw RootOwnedFileError(path: path, reason: "is not owned by root; run 'chown root: \(path)'")
        }
        switch access {
        case .readableByOthers where status.st_mode & 0o022 != 0:
            throw RootOwnedFileError(path: path, reason: "may be written by others than root; run 'chmod go-w \(path)'")
        case .rootOnly where status.st_mode & 0o077 != 0:
            throw RootOwnedFileError(
                path: path, reason: "may be read or written by others than root; run 'chmod 600 \(path)'")
        default:
            break
        }
        do {
            return try BoundedInput.read(descriptor: file, name: path, limit: limit)
        } catch {
            throw RootOwnedFileError(path: path, reason: error.reason)
        }
    }

    private static func checkDirectory(_ descriptor: Int32, named name: String, path: String) throws(RootOwnedFileError)
    {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw RootOwnedFileError(
                path: path, reason: "its directory \(name) cannot be examined: \(SystemErrorText.reason(errno))")
        }
        guard status.st_uid == 0 else {
            throw RootOwnedFileError(path: path, reason: "its directory \(name) is not owned by root")
        }
        let sticky = status.st_mode & S_ISVTX != 0
        guard status.st_mode & 0o022 == 0 || sticky else {
            throw RootOwnedFileError(
                path: path, reason: "its directory \(name) may be written by others than root; run 'chmod go-w \(name)'"
            )
        }
    }

    /// Why `component` of `directory` (`name` from `/`) did not open: a symbolic link is named
    /// as such (`O_NOFOLLOW` reports one as ELOOP, or as ENOTDIR with `O_DIRECTORY`).
    private static func reason(opening component: String, in directory: Int32, _ name: String, _ error: Int32) -> String
    {
        var status = stat()
        if fstatat(directory, component, &status, AT_SYMLINK_NOFOLLOW) == 0, status.st_mode & S_IFMT == S_IFLNK {
            return "\(name) is a symbolic link, which the agent does not follow; name the file it points to"
        }
        return "\(name) cannot be opened: \(SystemErrorText.reason(error))"
    }
}

/// Why a file the agent would trust was refused; names the file.
public struct RootOwnedFileError: Error, Hashable, Sendable, CustomStringConvertible {
    public let path: String
    /// What is wrong with it, said of the file ("is not owned by root; run …").
    public let reason: String

    public var description: String { "\(path) \(reason)" }
}
