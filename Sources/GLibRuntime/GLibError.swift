import CGLib

/// A `GError` copied into Swift; the `GError` itself is freed when this is made.
public struct GLibError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error domain's quark name, such as `nm-connection-error-quark`.
    public let domain: String
    public let code: Int32
    public let message: String
    /// The D-Bus error name when the error came from a remote call
    /// (`org.freedesktop.NetworkManager.Settings.Connection.InvalidProperty`).
    public let remoteName: String?

    public init(domain: String, code: Int32, message: String, remoteName: String? = nil) {
        self.domain = domain
        self.code = code
        self.message = message
        self.remoteName = remoteName
    }

    /// Takes ownership of `error` and frees it. A `nil` error (a C API that failed without
    /// saying why) becomes a generic one naming `operation`.
    public init(consuming error: UnsafeMutablePointer<GError>?, operation: String) {
        guard let error else {
            self.init(domain: "accessory-setup", code: 0, message: "\(operation) failed without a reason")
            return
        }
        defer { g_error_free(error) }
        let domain = g_quark_to_string(error.pointee.domain).map { String(cString: $0) } ?? "unknown"
        let remote = g_dbus_error_get_remote_error(error)
        defer { g_free(remote) }
        // The D-Bus error name is also kept apart, so strip it from the message.
        let copy = g_error_copy(error)!
        g_dbus_error_strip_remote_error(copy)
        let message = String(cString: copy.pointee.message)
        g_error_free(copy)
        self.init(
            domain: domain, code: error.pointee.code, message: message, remoteName: remote.map { String(cString: $0) })
    }

    public var isCancelled: Bool { domain == "g-io-error-quark" && code == Int32(G_IO_ERROR_CANCELLED.rawValue) }

    public var description: String { message }
}

/// Calls a GLib function that reports failure through a `GError **`, turning it into a throw.
public func withGError<T>(_ operation: String, _ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> T?)
    throws(GLibError) -> T
{
    var error: UnsafeMutablePointer<GError>?
    guard let result = body(&error), error == nil else {
        throw GLibError(consuming: error, operation: operation)
    }
    return result
}

/// The same for functions returning `gboolean`.
public func withGErrorChecked(
    _ operation: String, _ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> gboolean
) throws(GLibError) {
    var error: UnsafeMutablePointer<GError>?
    if body(&error) == 0 || error != nil {
        throw GLibError(consuming: error, operation: operation)
    }
}
