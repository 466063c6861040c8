import AccessoryCore
import CGLib
import DBusValues
import FoundationEssentials
import GLibRuntime
import Synchronization

/// Which bus to connect to.
public enum BusAddress: Sendable, Hashable, CustomStringConvertible {
    /// The system bus; `DBUS_SYSTEM_BUS_ADDRESS` is honoured.
    case system
    case session
    case address(String)

    public var description: String {
        switch self {
        case .system: "the system bus"
        case .session: "the session bus"
        case .address(let address): address
        }
    }
}

/// A failed bus operation: a D-Bus error the peer replied with, or the bus's own.
public struct BusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The D-Bus error name, when a peer or the bus daemon replied with one.
    public let name: String?
    public let message: String
    public let isCancelled: Bool
    public let isTimeout: Bool

    public init(name: String?, message: String, isCancelled: Bool = false, isTimeout: Bool = false) {
        self.name = name
        self.message = message
        self.isCancelled = isCancelled
        self.isTimeout = isTimeout
    }

    init(_ error: GLibError) {
        let timedOut = error.domain == "g-io-error-quark" && error.code == Int32(G_IO_ERROR_TIMED_OUT.rawValue)
        let noReply = error.remoteName == "org.freedesktop.DBus.Error.NoReply"
        self.init(
            name: error.remoteName, message: error.message, isCancelled: error.isCancelled,
            isTimeout: timedOut || noReply)
    }

    public var description: String { name.map { "\($0): \(message)" } ?? message }
}

/// A connection of a D-Bus service: it owns a name, exports objects, receives their method
/// calls in order, emits signals, calls other peers, and notices peers leaving the bus.
///
/// The actor runs on a GLib thread of its own, which owns the connection; callers see only
/// Swift values (`DBusValue`, `MethodCall`), never a `GVariant`.
public actor BusConnection {
    let executor: GLibMainContextExecutor
    let connection: GObjectRef
    /// The connection's unique name (`:1.7`).
    public nonisolated let uniqueName: String
    /// Unique names of peers that left the bus, for a connection made `watchingPeers`. Ends
    /// when the connection closes.
    public nonisolated let vanishedPeers: AsyncStream<String>
    /// What runs once the connection closes: the ends of the call queues.
    private let closing = Locked<(closed: Bool, handlers: [@Sendable () -> Void])>((false, []))
    private let vanished: AsyncStream<String>.Continuation
    /// The subscription feeding `vanishedPeers`.
    private var nameOwnerChanged: GDBusConnection.Subscription?
    private var closedHandler: gulong = 0
    private var exported: [String: ExportedObject] = [:]
    /// Calls to exported objects whose arguments are larger are refused before they are read.
    private let argumentLimit: Int?

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private init(executor: GLibMainContextExecutor, connection: GObjectRef, uniqueName: String, argumentLimit: Int?) {
        self.argumentLimit = argumentLimit
        self.executor = executor
        self.connection = connection
        self.uniqueName = uniqueName
        (vanishedPeers, vanished) = AsyncStream.makeStream()
    }

    /// Connects to `address`. With `watchingPeers`, a service's connection, `vanishedPeers`
    /// reports every peer that leaves the bus; a client leaves it unset and spares the bus
    /// daemon a match rule and itself every `NameOwnerChanged` on the bus. A call to an exported
    /// object with arguments larger than `argumentLimit` bytes is refused with
    /// `org.freedesktop.DBus.Error.LimitsExceeded` before anything of it is read.
    public static func connect(
        _ address: BusAddress, threadName: String = "bus", watchingPeers: Bool = false, argumentLimit: Int? = nil
    ) async throws(BusError) -> BusConnection {
        let executor = GLibMainContextExecutor(name: threadName)
        let result = await executor.run {
            Result { () throws(GLibError) in
                let connection = try open(address)
                return (connection, GLibRuntime.string(g_dbus_connection_get_unique_name(connection.pointer)) ?? "")
            }
        }
        switch result {
        case .success(let (connection, uniqueName)):
            let bus = BusConnection(
                executor: executor, connection: connection, uniqueName: uniqueName, argumentLimit: argumentLimit)
            await bus.start(watchingPeers: watchingPeers)
            return bus
        case .failure(let error):
            executor.shutdown()
            throw BusError(name: error.remoteName, message: "cannot connect to \(address): \(error.message)")
        }
    }

    private static func open(_ address: BusAddress) throws(GLibError) -> GObjectRef {
        let resolved: String
        switch address {
        case .address(let given):
            resolved = given
        case .system, .session:
            let type = address == .system ? G_BUS_TYPE_SYSTEM : G_BUS_TYPE_SESSION
            let pointer = try withGError("find \(address)") { g_dbus_address_get_for_bus_sync(type, nil, $0) }
            defer { g_free(pointer) }
            resolved = String(cString: pointer)
        }
        return try GDBusConnection.open(address: resolved)
    }

    private func start(watchingPeers: Bool) {
        if watchingPeers { watchVanishingPeers() }
        watchClosing()
    }

    /// Reports in `vanishedPeers` every unique name that `NameOwnerChanged` says lost its owner.
    private func watchVanishingPeers() {
        let vanished = self.vanished
        nameOwnerChanged = GDBusConnection.subscribe(
            connection, sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", member: "NameOwnerChanged"
        ) { signal in
            let names = signal.arguments.elements.compactMap(\.string)
            if names.count == 3, names[0].hasPrefix(":"), names[2].isEmpty { vanished.yield(names[0]) }
        }
    }

    /// Ends the streams when the connection closes.
    private func watchClosing() {
        // `closed` passes (gboolean remote_peer_vanished, GError *error) before the user data,
        // so it needs a callback of that shape; a one-pointer handler would take the error
        // (NULL on a clean close) for its user data.
        let closing = self.closing
        let vanished = self.vanished
        let closedBox = Unmanaged.passRetained(
            HandlerBox<Void> {
                Self.runClosingHandlers(closing)
                vanished.finish()
            }
        ).toOpaque()
        let closed: @convention(c) (gpointer?, gboolean, gpointer?, gpointer?) -> Void = { _, _, _, data in
            Unmanaged<HandlerBox<Void>>.fromOpaque(data!).takeUnretainedValue().handler(())
        }
        closedHandler = g_signal_connect_data(
            connection.raw, "closed", unsafeBitCast(closed, to: GCallback.self), closedBox,
            { data, _ in Unmanaged<HandlerBox<Void>>.fromOpaque(data!).release() }, GConnectFlags(0))
    }

    /// Asks the bus for `name`, without queueing; throws when another peer owns it.
    public func requestName(_ name: String) async throws(BusError) {
        let doNotQueue: UInt32 = 4
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: "RequestName", [.string(name), .uint32(doNotQueue)], timeout: .seconds(25))
        let primaryOwner = 1, alreadyOwner = 4
        guard let result = reply.first?.int, result == primaryOwner || result == alreadyOwner else {
            throw BusError(name: nil, message: "the name \(name) is owned by another process on the bus")
        }
    }

    /// Runs `handler` once the connection closes (at once if it has).
    func onClose(_ handler: @escaping @Sendable () -> Void) {
        let closed = closing.withLock { closing in
            if !closing.closed { closing.handlers.append(handler) }
            return closing.closed
        }
        if closed { handler() }
    }

    private static func runClosingHandlers(_ closing: Locked<(closed: Bool, handlers: [@Sendable () -> Void])>) {
        let handlers = closing.withLock { closing in
            defer { closing = (true, []) }
            return closing.handlers
        }
        for handler in handlers { handler() }
    }

    /// Exports `object` at its path; `take` takes each of its method calls, on the
    /// connection's thread in the order they arrived, without blocking, or answers false once
    /// it takes no more (the call is then refused).
    func export(_ object: ExportedObject, take: @escaping @Sendable (MethodCall) -> Bool) throws(BusError) {
        let box = Unmanaged.passRetained(CallBox(take: take, object: object, argumentLimit: argumentLimit)).toOpaque()
        var vtable = GDBusInterfaceVTable()
        // Without a get_property handler GDBus hands Get and GetAll to method_call (after
        // checking the property exists and is readable), so that the caller can be checked.
        vtable.method_call = { _, sender, path, interface, member, parameters, invocation, data in
            BusConnection.receive(
                Unmanaged<CallBox>.fromOpaque(data!).takeUnretainedValue(), sender: sender, path: path,
                interface: interface, member: member, parameters: parameters, invocation: invocation)
        }
        var error: UnsafeMutablePointer<GError>?
        let id = g_dbus_connection_register_object(
            connection.pointer, object.path, object.interfaceInfo.value, &vtable, box,
            { data in Unmanaged<CallBox>.fromOpaque(data!).release() }, &error)
        guard id != 0 else {
            throw BusError(GLibError(consuming: error, operation: "export \(object.path)"))
        }
        object.attach(to: self, registration: id)
        exported[object.path] = object
    }

    /// A method call of an exported object, on the connection's thread: refused, answered here
    /// (properties), or taken by the object's exporter.
    private static func receive(
        _ box: CallBox, sender: UnsafePointer<gchar>?, path: UnsafePointer<gchar>?, interface: UnsafePointer<gchar>?,
        member: UnsafePointer<gchar>?, parameters: OpaquePointer?, invocation: OpaquePointer?
    ) {
        let sender = GLibRuntime.string(sender) ?? ""
        let interface = GLibRuntime.string(interface) ?? ""
        guard box.object.admits(sender) else {
            g_dbus_method_invocation_return_dbus_error(
                invocation, "org.freedesktop.DBus.Error.AccessDenied",
                "\(box.object.path) belongs to another client of the service")
            return
        }
        let size = g_variant_get_size(parameters)
        if let limit = box.argumentLimit, size > limit {
            g_dbus_method_invocation_return_dbus_error(
                invocation, "org.freedesktop.DBus.Error.LimitsExceeded",
                "the call's arguments are \(size) bytes; the service reads at most \(limit)")
            return
        }
        if interface == "org.freedesktop.DBus.Properties" {
            BusConnection.answerProperties(
                of: box.object, member: GLibRuntime.string(member) ?? "",
                arguments: DBusValue(copying: parameters!).elements, invocation: invocation!)
            return
        }
        let call = MethodCall(
            invocation: invocation!, sender: sender, path: GLibRuntime.string(path) ?? "",
            interface: interface, member: GLibRuntime.string(member) ?? "", parameters: parameters!)
        if !box.take(call) {
            call.reply(errorName: "org.freedesktop.DBus.Error.Failed", message: "the service is shutting down")
        }
    }

    /// `Properties.Get` and `GetAll` of an exported object, on the connection's thread.
    private static func answerProperties(
        of object: ExportedObject, member: String, arguments: [DBusValue], invocation: OpaquePointer
    ) {
        switch member {
        case "Get":
            let name = arguments.count > 1 ? arguments[1].string ?? "" : ""
            guard let value = object.property(name) else {
                g_dbus_method_invocation_return_dbus_error(
                    invocation, "org.freedesktop.DBus.Error.InvalidArgs",
                    "\(object.interface) has no property \(name) now")
                return
            }
            g_dbus_method_invocation_return_value(
                invocation, DBusValue.tuple([.variant(DBusValue.Box(value))]).newVariant())
        case "GetAll":
            let all = object.properties.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            g_dbus_method_invocation_return_value(invocation, DBusValue.tuple([.vardict(all)]).newVariant())
        default:
            g_dbus_method_invocation_return_dbus_error(
                invocation, "org.freedesktop.DBus.Error.PropertyReadOnly",
                "the properties of \(object.interface) are read-only")
        }
    }

    /// Removes `object` from the bus; calls already received are still answered.
    public func unexport(_ object: ExportedObject) {
        guard let id = object.detach() else { return }
        g_dbus_connection_unregister_object(connection.pointer, id)
        exported[object.path] = nil
    }

    /// Emits a signal, to one peer when `destination` is given, else to every subscriber.
    public nonisolated func emit(
        path: String, interface: String, signal: String, _ arguments: [DBusValue], destination: String? = nil
    ) {
        g_dbus_connection_emit_signal(
            connection.pointer, destination, path, interface, signal, DBusValue.tuple(arguments).newVariant(), nil)
    }

    /// Calls a method of another peer; D-Bus ends the call after `timeout`, and cancelling the
    /// task ends it at once. `fileDescriptors` go with the message, for `h` arguments that
    /// index them; they stay the caller's to close. `queued` runs once the call is in the
    /// connection's outgoing queue, on the connection's thread: a message sent after it (with
    /// `send`, say) reaches the peer after the call.
    @discardableResult
    public func call(
        destination: String, path: String, interface: String, method: String, _ arguments: [DBusValue] = [],
        timeout: Duration, allowInteractiveAuthorization: Bool = false, autoStart: Bool = true,
        fileDescriptors: [Int32] = [], queued: (@Sendable () -> Void)? = nil
    ) async throws(BusError) -> [DBusValue] {
        var flags = G_DBUS_CALL_FLAGS_NONE.rawValue
        if allowInteractiveAuthorization { flags |= G_DBUS_CALL_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION.rawValue }
        if !autoStart { flags |= G_DBUS_CALL_FLAGS_NO_AUTO_START.rawValue }
        do throws(GLibError) {
            return try await GDBusConnection.call(
                connection, destination: destination, path: path, interface: interface, method: method, arguments,
                timeout: timeout, flags: GDBusCallFlags(flags), fileDescriptors: fileDescriptors, queued: queued
            ).elements
        } catch {
            throw BusError(error)
        }
    }

    /// Signals matching the given fields (`nil`: any), as they arrive, until the stream is
    /// dropped. Subscribe before calling what makes them, so none is missed.
    public func signals(
        sender: String?, path: String? = nil, interface: String?, member: String? = nil
    ) -> AsyncStream<BusSignal> {
        let (stream, continuation) = AsyncStream.makeStream(of: BusSignal.self)
        let subscription = GDBusConnection.subscribe(
            connection, sender: sender, path: path, interface: interface, member: member
        ) { signal in
            continuation.yield(
                BusSignal(
                    sender: signal.sender, path: signal.path, interface: signal.interface, member: signal.member,
                    arguments: signal.arguments.elements))
        }
        let executor = self.executor
        continuation.onTermination = { _ in
            executor.invoke { subscription.cancel() }
        }
        return stream
    }

    /// The user id of the process behind a peer's unique name, as the bus daemon knows it.
    public func unixUser(of peer: String) async throws(BusError) -> UInt32 {
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: "GetConnectionUnixUser", [.string(peer)], timeout: .seconds(25))
        guard case .uint32(let uid)? = reply.first else {
            throw BusError(name: nil, message: "the bus gave no user id for \(peer)")
        }
        return uid
    }

    /// Whether `peer` is still on the bus. A unique name is never given out again, so a peer
    /// that left is never taken for a new one.
    public func hasOwner(_ peer: String) async -> Bool {
        let reply = try? await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: "NameHasOwner", [.string(peer)], timeout: .seconds(25))
        return reply?.first?.bool ?? false
    }

    /// The Unix signals `numbers` as they arrive, through GLib's signal sources on this
    /// connection's thread (SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2 and SIGWINCH only). Their
    /// default action is replaced for the life of the process.
    public func unixSignals(_ numbers: [Int32]) -> AsyncStream<Int32> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        let context = g_main_context_ref_thread_default()
        defer { g_main_context_unref(context) }
        for number in numbers {
            guard let source = g_unix_signal_source_new(number) else { continue }
            let box = Unmanaged.passRetained(HandlerBox<Void> { continuation.yield(number) }).toOpaque()
            g_source_set_callback(
                source,
                { data in
                    Unmanaged<HandlerBox<Void>>.fromOpaque(data!).takeUnretainedValue().handler(())
                    return 1
                }, box, { data in Unmanaged<HandlerBox<Void>>.fromOpaque(data!).release() })
            g_source_attach(source, context)
            g_source_unref(source)
        }
        return stream
    }

    /// Sends a method call that expects no reply (`NoReply` methods such as
    /// `PickerAgent1.UpdateEntries`), without waiting.
    public nonisolated func send(
        destination: String, path: String, interface: String, method: String, _ arguments: [DBusValue]
    ) {
        let message = g_dbus_message_new_method_call(destination, path, interface, method)!
        defer { g_object_unref(gpointer(message)) }
        g_dbus_message_set_body(message, DBusValue.tuple(arguments).newVariant())
        g_dbus_message_set_flags(message, G_DBUS_MESSAGE_FLAGS_NO_REPLY_EXPECTED)
        g_dbus_connection_send_message(connection.pointer, message, G_DBUS_SEND_MESSAGE_FLAGS_NONE, nil, nil)
    }

    /// Unexports everything, sends what is queued, and closes the connection; the streams end.
    public func close() {
        for object in exported.values { unexport(object) }
        nameOwnerChanged?.cancel()
        nameOwnerChanged = nil
        // GDBus's worker closes before it writes what is still queued: the last signals
        // (Invalidated) and calls (Release) would be lost without this flush.
        _ = g_dbus_connection_flush_sync(connection.pointer, nil, nil)
        GDBusConnection.close(connection)
        Self.runClosingHandlers(closing)
        vanished.finish()
    }

    nonisolated func emitPropertiesChanged(
        path: String, interface: String, _ changed: [(String, DBusValue)], destination: String?
    ) {
        emit(
            path: path, interface: "org.freedesktop.DBus.Properties", signal: "PropertiesChanged",
            [.string(interface), .vardict(changed), .strings([])], destination: destination)
    }

    deinit {
        let state = UncheckedSendable((connection, nameOwnerChanged, closedHandler))
        executor.invoke {
            let (connection, nameOwnerChanged, closedHandler) = state.value
            nameOwnerChanged?.cancel()
            if closedHandler != 0 { g_signal_handler_disconnect(connection.raw, closedHandler) }
        }
        if !executor.isOnContextThread { executor.shutdown() }
    }
}

/// A signal received by a subscription.
public struct BusSignal: Sendable, Hashable {
    public let sender: String
    public let path: String
    public let interface: String
    public let member: String
    public let arguments: [DBusValue]
}

/// A Swift closure handed to a C callback as its user data.
private final class HandlerBox<Value> {
    let handler: (Value) -> Void
    init(_ handler: @escaping (Value) -> Void) { self.handler = handler }
}

private final class CallBox {
    let take: @Sendable (MethodCall) -> Bool
    let object: ExportedObject
    let argumentLimit: Int?
    init(take: @escaping @Sendable (MethodCall) -> Bool, object: ExportedObject, argumentLimit: Int?) {
        self.take = take
        self.object = object
        self.argumentLimit = argumentLimit
    }
}
