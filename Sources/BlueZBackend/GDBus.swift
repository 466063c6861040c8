import CGLib
import DBusValues
import FoundationEssentials
import GLibRuntime

/// The GDBus calls of the backend, all to `org.bluez`: connecting, calling methods and
/// subscribing to signals. Every function runs on the GLib thread the connection's callbacks
/// belong to.
enum GDBus {
    static let bluez = "org.bluez"

    /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS` is honoured) or the bus at `address`.
    static func connect(address: String?) throws(GLibError) -> GObjectRef {
        if let address { return try GDBusConnection.open(address: address) }
        return GObjectRef(
            adopting: try withGError("connect to the system bus") {
                g_bus_get_sync(G_BUS_TYPE_SYSTEM, nil, $0)
            })
    }

    /// Calls a method on `org.bluez`; D-Bus itself ends the call after `timeout`.
    static func call(
        isolation: isolated (any Actor)? = #isolation,
        _ connection: GObjectRef, path: String, interface: String, method: String,
        _ arguments: [DBusValue] = [], timeout: Duration
    ) async throws(GLibError) -> DBusValue {
        try await GDBusConnection.call(
            connection, destination: bluez, path: path, interface: interface, method: method, arguments,
            timeout: timeout)
    }

    /// Subscribes to signals of `interface` sent by `org.bluez`, on the caller's main context.
    static func subscribe(
        _ connection: GObjectRef, interface: String, member: String?,
        _ handler: @escaping (_ path: String, _ member: String, _ arguments: DBusValue) -> Void
    ) -> GDBusConnection.Subscription {
        GDBusConnection.subscribe(connection, sender: bluez, interface: interface, member: member) { signal in
            handler(signal.path, signal.member, signal.arguments)
        }
    }
}
