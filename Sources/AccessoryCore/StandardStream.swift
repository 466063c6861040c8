import Glibc

/// Standard output and standard error, written whole with `write(2)`.
///
/// A failed write (a full disk, or a closed pipe where `SIGPIPE` is ignored) is dropped: a
/// message that cannot be shown is no reason to stop.
public enum StandardStream: Int32, Sendable {
    case output = 1
    case error = 2

    public func write(_ text: String) {
        var text = text
        _ = text.withUTF8 { writeAll(UnsafeRawBufferPointer($0), to: rawValue) }
    }
}

/// Writes all of `bytes` to `descriptor`, through short writes and `EINTR`: 0 when done, else
/// the `errno` of the write that failed (`EIO` for one that wrote nothing).
func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
    var offset = 0
    while offset < bytes.count {
        let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 && errno == EINTR { continue }
        if written < 0 { return errno }
        if written == 0 { return EIO }
        offset += written
    }
    return 0
}
