/// A D-Bus value in Swift, copied out of or into a `GVariant` by GLibRuntime
/// (`DBusValue+GVariant.swift`); what the backends hand to the layers above instead of a
/// `GVariant`, and what the agent's contract (AgentInterface) is written in.
public enum DBusValue: Sendable, Hashable {
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
    /// A Unix file descriptor, as its index in the message's descriptor list (`h`).
    case handle(Int32)
    case bytes([UInt8])
    /// An array of another element type; `elementType` is its D-Bus signature.
    case array([DBusValue], elementType: String)
    /// A dictionary, in the order the message holds it; `entryType` is like `{sv}`.
    case dictionary([Entry], entryType: String)
    case tuple([DBusValue])
    /// Only for building: a value wrapped in a variant.
    case variant(Box)

    public struct Entry: Sendable, Hashable {
        public var key: DBusValue
        public var value: DBusValue
        public init(key: DBusValue, value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// Boxes the recursive variant case.
    public final class Box: Sendable, Hashable {
        public let value: DBusValue
        public init(_ value: DBusValue) { self.value = value }
        public static func == (lhs: Box, rhs: Box) -> Bool { lhs.value == rhs.value }
        public func hash(into hasher: inout Hasher) { hasher.combine(value) }
    }

    /// An `a{sv}` dictionary.
    public static func vardict(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(entries.map { Entry(key: .string($0.0), value: .variant(Box($0.1))) }, entryType: "{sv}")
    }

    public static func strings(_ values: [String]) -> DBusValue {
        .array(values.map(DBusValue.string), elementType: "s")
    }

    public var string: String? {
        switch self {
        case .string(let value), .objectPath(let value): value
        default: nil
        }
    }

    public var bool: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }

    public var int: Int? {
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

    public var bytes: [UInt8]? {
        switch self {
        case .bytes(let value): value
        case .array(let values, _) where values.isEmpty: []
        default: nil
        }
    }

    public var elements: [DBusValue] {
        switch self {
        case .array(let values, _), .tuple(let values): values
        case .bytes(let bytes): bytes.map(DBusValue.byte)
        default: []
        }
    }

    public var entries: [Entry] {
        if case .dictionary(let entries, _) = self { return entries }
        return []
    }

    /// The value of a string key in a dictionary.
    public subscript(key: String) -> DBusValue? {
        entries.first { $0.key.string == key }?.value
    }
}
