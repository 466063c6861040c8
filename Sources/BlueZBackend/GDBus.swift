import CGLib
import CGLibShim
import FoundationEssentials
import GLibRuntime

/// The GDBus calls: connecting, calling methods, subscribing to signals, and converting
/// `GVariant`s. Every function runs on the GLib thread the connection's callbacks belong to.
enum GDBus {
    static let bluez = "org.bluez"

    /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS` is honoured) or the bus at `address`.
    static func connect(address: String?) throws(GLibError) -> GObjectRef {
        if let address { return try GDBusConnection.open(address: address) }
        return GObjectRef(adopting: try withGError("connect to the system bus") { g_bus_get_sync(G_BUS_TYPE_SYSTEM, nil, $0) })
    }

    /// Calls a method on `org.bluez`; D-Bus itself ends the call after `timeout`.
    static func call(
        isolation: isolated (any Actor)? = #isolation,
        _ connection: GObjectRef, path: String, interface: String, method: String,
        _ arguments: [DBusValue] = [], timeout: Duration
    ) async throws(GLibError) -> DBusValue {
        let parameters = UncheckedSendable(DBusValue.tuple(arguments).newVariant())
        let milliseconds = timeout.saturatingMilliseconds(as: Int32.self)
        let reply = try await gAsync("\(interface).\(method)") { cancellable, callback, data in
            g_dbus_connection_call(
                connection.pointer, bluez, path, interface, method, parameters.value, nil,
                G_DBUS_CALL_FLAGS_NONE, milliseconds, cancellable, callback, data)
        } finish: { source, result, error in
            g_dbus_connection_call_finish(OpaquePointer(source), result, error).map(UncheckedSendable.init)
        }
        defer { g_variant_unref(reply.value) }
        return DBusValue(copying: reply.value)
    }

    /// A signal subscription. Sendable only so a deinit can hand it to the GLib thread, the
    /// one place it is used.
    final class Subscription: @unchecked Sendable {
        private let connection: GObjectRef
        private var id: guint

        init(connection: GObjectRef, id: guint) {
            self.connection = connection
            self.id = id
        }

        func cancel() {
            guard id != 0 else { return }
            g_dbus_connection_signal_unsubscribe(connection.pointer, id)
            id = 0
        }

        deinit { cancel() }
    }

    private final class HandlerBox {
        let handler: (String, String, DBusValue) -> Void
        init(_ handler: @escaping (String, String, DBusValue) -> Void) { self.handler = handler }
    }

    /// Subscribes to signals of `interface` sent by `org.bluez`, on the caller's main context.
    static func subscribe(
        _ connection: GObjectRef, interface: String, member: String?,
        _ handler: @escaping (_ path: String, _ member: String, _ arguments: DBusValue) -> Void
    ) -> Subscription {
        let box = Unmanaged.passRetained(HandlerBox(handler)).toOpaque()
        let id = g_dbus_connection_signal_subscribe(
            connection.pointer, bluez, interface, member, nil, nil, G_DBUS_SIGNAL_FLAGS_NONE,
            { _, _, path, _, member, parameters, data in
                let box = Unmanaged<HandlerBox>.fromOpaque(data!).takeUnretainedValue()
                box.handler(GLibRuntime.string(path) ?? "", GLibRuntime.string(member) ?? "", parameters.map(DBusValue.init(copying:)) ?? .tuple([]))
            }, box, { data in Unmanaged<HandlerBox>.fromOpaque(data!).release() })
        return Subscription(connection: connection, id: id)
    }
}
