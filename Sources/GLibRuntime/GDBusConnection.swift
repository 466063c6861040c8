import CGLib
import DBusValues
import Glibc

/// GDBus connections: opening one, calling methods on it, subscribing to its signals. The
/// one place in the project that calls and subscribes through GDBus.
///
/// A connection made by `open` is not the process's shared one and is never freed, nor its
/// socket closed, until it is closed: its worker thread holds a reference of its own.
public enum GDBusConnection {
    /// Opens and authenticates a message bus connection to `address`.
    public static func open(address: String) throws(GLibError) -> GObjectRef {
        let flags = GDBusConnectionFlags(
            G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        return GObjectRef(
            adopting: try withGError("connect to \(address)") {
                g_dbus_connection_new_for_address_sync(address, flags, nil, nil, $0)
            })
    }

    /// Closes a connection made by `open`, so its socket and memory are released.
    public static func close(_ connection: GObjectRef) {
        _ = g_dbus_connection_close_sync(connection.pointer, nil, nil)
    }
}

// MARK: Method calls

extension GDBusConnection {
    /// Calls `method` and returns the reply's arguments as a tuple.
    ///
    /// D-Bus ends the call after `timeout`; cancelling the task ends it at once. `fileDescriptors`
    /// go with the message, for `h` arguments that index them, and stay the caller's to close.
    /// `queued` runs once the call is in the connection's outgoing queue. Call it from the actor
    /// on the connection's GLib thread: the reply arrives on that thread's default main context.
    public static func call(
        isolation: isolated (any Actor)? = #isolation,
        _ connection: GObjectRef, destination: String?, path: String, interface: String, method: String,
        _ arguments: [DBusValue] = [], timeout: Duration, flags: GDBusCallFlags = G_DBUS_CALL_FLAGS_NONE,
        fileDescriptors: [Int32] = [], queued: (@Sendable () -> Void)? = nil
    ) async throws(GLibError) -> DBusValue {
        try await perform(
            connection, destination: destination, path: path, interface: interface, method: method, arguments,
            timeout: timeout, flags: flags, fileDescriptors: fileDescriptors, receivingDescriptors: false,
            queued: queued
        ).reply
    }

    /// As `call`, and the descriptors that came with the reply, in the order its `h` values
    /// index them: they are the caller's to close.
    public static func callReceivingDescriptors(
        isolation: isolated (any Actor)? = #isolation,
        _ connection: GObjectRef, destination: String?, path: String, interface: String, method: String,
        _ arguments: [DBusValue] = [], timeout: Duration, flags: GDBusCallFlags = G_DBUS_CALL_FLAGS_NONE
    ) async throws(GLibError) -> (reply: DBusValue, descriptors: [Int32]) {
        try await perform(
            connection, destination: destination, path: path, interface: interface, method: method, arguments,
            timeout: timeout, flags: flags, fileDescriptors: [], receivingDescriptors: true, queued: nil)
    }

    private static func perform(
        isolation: isolated (any Actor)? = #isolation,
        _ connection: GObjectRef, destination: String?, path: String, interface: String, method: String,
        _ arguments: [DBusValue], timeout: Duration, flags: GDBusCallFlags, fileDescriptors: [Int32],
        receivingDescriptors: Bool, queued: (@Sendable () -> Void)?
    ) async throws(GLibError) -> (reply: DBusValue, descriptors: [Int32]) {
        let descriptors = UncheckedSendable(try fdList(fileDescriptors))
        defer { if let list = descriptors.value { g_object_unref(gpointer(list)) } }
        let parameters = UncheckedSendable(DBusValue.tuple(arguments).newVariant())
        let milliseconds = timeout.saturatingMilliseconds(as: Int32.self)
        let reply = try await gAsync("\(interface).\(method)") { cancellable, callback, data in
            g_dbus_connection_call_with_unix_fd_list(
                connection.pointer, destination, path, interface, method, parameters.value, nil,
                flags, milliseconds, descriptors.value, cancellable, callback, data)
            queued?()
        } finish: { source, result, error -> UncheckedSendable<(OpaquePointer, [Int32])>? in
            // Without a list to take them, the reply's descriptors are closed with the message.
            var received: UnsafeMutablePointer<GUnixFDList>?
            let variant =
                receivingDescriptors
                ? g_dbus_connection_call_with_unix_fd_list_finish(OpaquePointer(source), &received, result, error)
                : g_dbus_connection_call_with_unix_fd_list_finish(OpaquePointer(source), nil, result, error)
            let taken = received.map(takeDescriptors) ?? []
            guard let variant else {
                taken.forEach { _ = Glibc.close($0) }
                return nil
            }
            return UncheckedSendable((variant, taken))
        }
        defer { g_variant_unref(reply.value.0) }
        return (DBusValue(copying: reply.value.0), reply.value.1)
    }

    /// Takes every descriptor out of `list` (which it then releases); they are the caller's.
    private static func takeDescriptors(_ list: UnsafeMutablePointer<GUnixFDList>) -> [Int32] {
        defer { g_object_unref(gpointer(list)) }
        var length: gint = 0
        guard let descriptors = g_unix_fd_list_steal_fds(list, &length) else { return [] }
        defer { g_free(descriptors) }
        return (0..<Int(max(0, length))).map { descriptors[$0] }
    }

    /// A `GUnixFDList` of duplicates of `descriptors`; `nil` when there are none.
    private static func fdList(_ descriptors: [Int32]) throws(GLibError) -> UnsafeMutablePointer<GUnixFDList>? {
        guard !descriptors.isEmpty else { return nil }
        let list = g_unix_fd_list_new()!
        for descriptor in descriptors {
            var error: UnsafeMutablePointer<GError>?
            if g_unix_fd_list_append(list, descriptor, &error) < 0 {
                g_object_unref(gpointer(list))
                throw GLibError(consuming: error, operation: "pass a file descriptor")
            }
        }
        return list
    }
}

// MARK: Signals

extension GDBusConnection {
    /// A signal received by a subscription; a field GDBus left out is empty.
    public struct Signal: Sendable, Hashable {
        public let sender: String
        public let path: String
        public let interface: String
        public let member: String
        /// The signal's arguments, as a tuple.
        public let arguments: DBusValue
    }

    /// A signal subscription, ended by `cancel()` or by its release. Sendable only so that it
    /// can be handed to the connection's GLib thread, the one place to use it.
    public final class Subscription: @unchecked Sendable {
        private let connection: GObjectRef
        private var id: guint

        fileprivate init(connection: GObjectRef, id: guint) {
            self.connection = connection
            self.id = id
        }

        public func cancel() {
            guard id != 0 else { return }
            g_dbus_connection_signal_unsubscribe(connection.pointer, id)
            id = 0
        }

        deinit { cancel() }
    }

    private final class HandlerBox {
        let handler: (Signal) -> Void
        init(_ handler: @escaping (Signal) -> Void) { self.handler = handler }
    }

    /// Subscribes to signals matching the given fields (`nil`: any). `handler` runs on the
    /// caller's thread-default main context, so subscribe on the connection's GLib thread.
    public static func subscribe(
        _ connection: GObjectRef, sender: String?, path: String? = nil, interface: String?, member: String?,
        _ handler: @escaping (Signal) -> Void
    ) -> Subscription {
        let box = Unmanaged.passRetained(HandlerBox(handler)).toOpaque()
        let id = g_dbus_connection_signal_subscribe(
            connection.pointer, sender, interface, member, path, nil, G_DBUS_SIGNAL_FLAGS_NONE,
            { _, sender, path, interface, member, parameters, data in
                let signal = Signal(
                    sender: GLibRuntime.string(sender) ?? "", path: GLibRuntime.string(path) ?? "",
                    interface: GLibRuntime.string(interface) ?? "", member: GLibRuntime.string(member) ?? "",
                    arguments: parameters.map(DBusValue.init(copying:)) ?? .tuple([]))
                Unmanaged<HandlerBox>.fromOpaque(data!).takeUnretainedValue().handler(signal)
            }, box, { data in Unmanaged<HandlerBox>.fromOpaque(data!).release() })
        return Subscription(connection: connection, id: id)
    }
}
