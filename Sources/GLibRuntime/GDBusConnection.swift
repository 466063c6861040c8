import CGLib

/// Connections to a D-Bus bus given by address (a private test bus, say).
///
/// A connection made this way is not the process's shared one and is never freed, nor its
/// socket closed, until it is closed: its worker thread holds a reference of its own.
public enum GDBusConnection {
    /// Opens and authenticates a message bus connection to `address`.
    public static func open(address: String) throws(GLibError) -> GObjectRef {
        let flags = GDBusConnectionFlags(
            G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        return GObjectRef(adopting: try withGError("connect to \(address)") {
            g_dbus_connection_new_for_address_sync(address, flags, nil, nil, $0)
        })
    }

    /// Closes a connection made by `open`, so its socket and memory are released.
    public static func close(_ connection: GObjectRef) {
        _ = g_dbus_connection_close_sync(connection.pointer, nil, nil)
    }
}
