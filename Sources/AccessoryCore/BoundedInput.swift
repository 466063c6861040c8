import FoundationEssentials
import Glibc

/// Reads a file or a stream up to a size limit, the one way every input of this project is read.
///
/// It reads at most `limit + 1` bytes, so an oversized file or an endless stream (`/dev/zero`, a
/// pipe that never closes after `limit` bytes) is refused at once instead of filling memory.
public enum BoundedInput {
    /// Profiles and recorded scans. The shipped profiles are a few KiB; a scan of a crowded hall
    /// (a thousand access points and five thousand advertisements at about 400 bytes each) is
    /// near 2.5 MB. 8 MiB keeps room above both while a wrong path, such as a disk image, is
    /// refused before it is parsed into memory many times its size.
    public static let documentLimit = 8 << 20

    /// Passphrases: WPA allows at most 63 characters and EAP passwords are short, so 4 KiB is
    /// plenty for any real one, with its newline.
    public static let passphraseLimit = 4 << 10

    /// The contents of the file at `path`, or an error naming it.
    public static func read(path: String, limit: Int) throws(BoundedInputError) -> Data {
        let data = try withFile(at: path) { descriptor throws(BoundedInputError) in
            try read(descriptor: descriptor, name: path, atMost: limit + 1)
        }
        guard data.count <= limit else { throw .tooLarge(name: path, limit: limit) }
        return data
    }

    /// The first `count` bytes of the file at `path` (fewer when it is shorter).
    public static func head(path: String, count: Int) throws(BoundedInputError) -> Data {
        try withFile(at: path) { descriptor throws(BoundedInputError) in
            try read(descriptor: descriptor, name: path, atMost: count)
        }
    }

    /// Everything the open file `descriptor` gives until its end, which it leaves open; `name`
    /// says what it is in errors ("standard input").
    public static func read(descriptor: Int32, name: String, limit: Int) throws(BoundedInputError) -> Data {
        let data = try read(descriptor: descriptor, name: name, atMost: limit + 1)
        guard data.count <= limit else { throw .tooLarge(name: name, limit: limit) }
        return data
    }

    private static func withFile(
        at path: String, _ body: (Int32) throws(BoundedInputError) -> Data
    ) throws(BoundedInputError) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(name: path, reason: SystemErrorText.reason(errno)) }
        defer { close(descriptor) }
        return try body(descriptor)
    }

    private static func read(descriptor: Int32, name: String, atMost count: Int) throws(BoundedInputError) -> Data {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: min(64 << 10, count))
        while data.count < count {
            let wanted = min(chunk.count, count - data.count)
            let got = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, wanted) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw .unreadable(name: name, reason: SystemErrorText.reason(errno)) }
            if got == 0 { break }
            data.append(contentsOf: chunk[..<got])
        }
        return data
    }
}

/// An input that could not be read, or was larger than its limit.
public enum BoundedInputError: Error, Hashable, Sendable, CustomStringConvertible {
    case unreadable(name: String, reason: String)
    case tooLarge(name: String, limit: Int)

    /// Why, without the name: `cannot be read: …` or `is larger than 8 MiB …`.
    public var reason: String {
        switch self {
        case .unreadable(_, let reason): "cannot be read: \(reason)"
        case .tooLarge(_, let limit): "is larger than \(Self.size(limit)), the limit for this input"
        }
    }

    public var description: String {
        switch self {
        case .unreadable(let name, _), .tooLarge(let name, _): "\(name) \(reason)"
        }
    }

    private static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}
