import CGLib
import CGLibShim
import Foundation
import GLibRuntime

/// A D-Bus value copied out of (or into) a `GVariant`. Variants are unwrapped when read.
enum DBusValue: Sendable, Hashable {
    case boolean(Bool)
    case byte(UInt8)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case bytes([UInt8])
    /// An array of another element type; `elementType` is its D-Bus signature.
    case array([DBusValue], elementType: String)
    /// A dictionary, in the order the message holds it; `entryType` is like `{sv}`.
    case dictionary([Entry], entryType: String)
    case tuple([DBusValue])
    /// Only for building: a value wrapped in a variant.
    case variant(Box)

    struct Entry: Sendable, Hashable {
        var key: DBusValue
        var value: DBusValue
    }

    /// Boxes the recursive variant case.
    final class Box: Sendable, Hashable {
        let value: DBusValue
        init(_ value: DBusValue) { self.value = value }
        static func == (lhs: Box, rhs: Box) -> Bool { lhs.value == rhs.value }
        func hash(into hasher: inout Hasher) { hasher.combine(value) }
    }

    /// An `a{sv}` dictionary.
    static func vardict(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(entries.map { Entry(key: .string($0.0), value: .variant(Box($0.1))) }, entryType: "{sv}")
    }

    static func strings(_ values: [String]) -> DBusValue { .array(values.map(DBusValue.string), elementType: "s") }

    var string: String? {
        switch self {
        case .string(let value), .objectPath(let value): value
        default: nil
        }
    }

    var bool: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }

    var int: Int? {
        switch self {
        case .byte(let v): Int(v)
        case .int16(let v): Int(v)
        case .uint16(let v): Int(v)
        case .int32(let v): Int(v)
        case .uint32(let v): Int(v)
        case .int64(let v): Int(v)
        case .uint64(let v): Int(exactly: v)
        default: nil
        }
    }

    var bytes: [UInt8]? {
        switch self {
        case .bytes(let value): value
        case .array(let values, _) where values.isEmpty: []
        default: nil
        }
    }

    var elements: [DBusValue] {
        switch self {
        case .array(let values, _), .tuple(let values): values
        case .bytes(let bytes): bytes.map(DBusValue.byte)
        default: []
        }
    }

    var entries: [Entry] {
        if case .dictionary(let entries, _) = self { return entries }
        return []
    }

    /// The value of a string key in a dictionary.
    subscript(key: String) -> DBusValue? {
        entries.first { $0.key.string == key }?.value
    }
}

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
        let parameters = UncheckedSendable(variant(.tuple(arguments)))
        let milliseconds = timeout.saturatingMilliseconds(as: Int32.self)
        let reply = try await gAsync("\(interface).\(method)") { cancellable, callback, data in
            g_dbus_connection_call(
                connection.pointer, bluez, path, interface, method, parameters.value, nil,
                G_DBUS_CALL_FLAGS_NONE, milliseconds, cancellable, callback, data)
        } finish: { source, result, error in
            g_dbus_connection_call_finish(OpaquePointer(source), result, error).map(UncheckedSendable.init)
        }
        defer { g_variant_unref(reply.value) }
        return value(reply.value)
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
                box.handler(GLibRuntime.string(path) ?? "", GLibRuntime.string(member) ?? "", parameters.map(GDBus.value) ?? .tuple([]))
            }, box, { data in Unmanaged<HandlerBox>.fromOpaque(data!).release() })
        return Subscription(connection: connection, id: id)
    }

    // MARK: GVariant

    /// Copies a `GVariant` into Swift, unwrapping variants; the caller keeps its reference.
    static func value(_ variant: OpaquePointer) -> DBusValue {
        let type = String(cString: g_variant_get_type_string(variant))
        switch type {
        case "b": return .boolean(g_variant_get_boolean(variant) != 0)
        case "y": return .byte(g_variant_get_byte(variant))
        case "n": return .int16(g_variant_get_int16(variant))
        case "q": return .uint16(g_variant_get_uint16(variant))
        case "i": return .int32(g_variant_get_int32(variant))
        case "u": return .uint32(g_variant_get_uint32(variant))
        case "x": return .int64(Int64(g_variant_get_int64(variant)))
        case "t": return .uint64(UInt64(g_variant_get_uint64(variant)))
        case "d": return .double(g_variant_get_double(variant))
        case "s", "g": return .string(String(cString: g_variant_get_string(variant, nil)))
        case "o": return .objectPath(String(cString: g_variant_get_string(variant, nil)))
        case "v":
            let inner = g_variant_get_variant(variant)!
            defer { g_variant_unref(inner) }
            return value(inner)
        case "ay":
            var size: gsize = 0
            guard let data = cglib_variant_get_bytes(variant, &size) else { return .bytes([]) }
            return .bytes(Array(UnsafeBufferPointer(start: data, count: Int(size))))
        default:
            let children = (0..<g_variant_n_children(variant)).map { index -> DBusValue in
                let child = g_variant_get_child_value(variant, index)!
                defer { g_variant_unref(child) }
                return value(child)
            }
            if type.hasPrefix("a{") {
                let entries = children.compactMap { entry -> DBusValue.Entry? in
                    guard case .tuple(let pair) = entry, pair.count == 2 else { return nil }
                    return DBusValue.Entry(key: pair[0], value: pair[1])
                }
                return .dictionary(entries, entryType: String(type.dropFirst()))
            }
            if type.hasPrefix("a") { return .array(children, elementType: String(type.dropFirst())) }
            // Tuples and dict entries.
            return .tuple(children)
        }
    }

    /// A new floating `GVariant` for `value`.
    static func variant(_ value: DBusValue) -> OpaquePointer {
        switch value {
        case .boolean(let v): return g_variant_new_boolean(v ? 1 : 0)
        case .byte(let v): return g_variant_new_byte(v)
        case .int16(let v): return g_variant_new_int16(v)
        case .uint16(let v): return g_variant_new_uint16(v)
        case .int32(let v): return g_variant_new_int32(v)
        case .uint32(let v): return g_variant_new_uint32(v)
        case .int64(let v): return g_variant_new_int64(gint64(v))
        case .uint64(let v): return g_variant_new_uint64(guint64(v))
        case .double(let v): return g_variant_new_double(v)
        case .string(let v): return g_variant_new_string(v)
        case .objectPath(let v): return g_variant_new_object_path(v)
        case .bytes(let v): return v.withUnsafeBufferPointer { cglib_variant_new_bytes($0.baseAddress, gsize($0.count)) }
        case .variant(let box): return g_variant_new_variant(variant(box.value))
        case .tuple(let values):
            let children: [OpaquePointer?] = values.map(variant)
            return children.withUnsafeBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
        case .array(let values, let elementType):
            let children: [OpaquePointer?] = values.map(variant)
            return children.withUnsafeBufferPointer { cglib_variant_new_array(elementType, $0.baseAddress, gsize($0.count)) }
        case .dictionary(let entries, let entryType):
            let children: [OpaquePointer?] = entries.map { g_variant_new_dict_entry(variant($0.key), variant($0.value)) }
            return children.withUnsafeBufferPointer { cglib_variant_new_array(entryType, $0.baseAddress, gsize($0.count)) }
        }
    }
}
