import Glibc

/// Standard output and standard error, written whole with `write(2)`.
///
/// A failed write (a closed pipe, a full disk) is dropped: a message that cannot be shown is no
/// reason to stop, and nothing here raises `SIGPIPE`'s default action for the caller.
public enum StandardStream: Int32, Sendable {
    case output = 1
    case error = 2

    public func write(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(rawValue, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
