import FoundationEssentials
import Glibc

/// What went wrong in a system call or a file operation, in the C library's words.
public enum SystemErrorText {
    /// `strerror(code)` in lower case, to follow "cannot be read: ".
    public static func reason(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    /// The POSIX reason under a file-system error (FoundationEssentials reports them as a
    /// `CocoaError` whose underlying error is a `POSIXError`), else the error's own text.
    public static func reason(of error: any Error) -> String {
        if let error = error as? POSIXError { return reason(error.code.rawValue) }
        if let error = error as? CocoaError, let posix = error.underlying as? POSIXError {
            return reason(posix.code.rawValue)
        }
        return "\(error)"
    }
}
