import AccessoryCore
import DBusValues
import FoundationEssentials

/// The dictionaries of the D-Bus API (docs/dbus-api.md, "Conventions").
public enum BusCoding {
    public static let emptyDictionary = DBusValue.vardict([])

    public static func dictionaries(_ values: [DBusValue]) -> DBusValue { .array(values, elementType: "a{sv}") }

    /// An accessory dictionary (`AccessoryDetails`), with what the dispatcher reported of its
    /// hotspot connection.
    public static func record(_ record: AccessoryRecord, connection: HotspotConnectionReport? = nil) -> DBusValue {
        AccessoryDetails(record, connection: connection).dbusValue
    }

    /// A profile item, with the keys `ShowPicker` reads.
    public static func item(_ item: PickerDisplayItem) -> DBusValue { .vardict(entries(of: item)) }

    /// A migration item (`ASMigrationDisplayItem`): a profile item with the accessory to adopt.
    public static func migrationItem(_ migration: MigrationDisplayItem) -> DBusValue {
        var entries = entries(of: migration.item)
        if let ssid = migration.hotspotSSID { entries.append(("hotspotSSID", .string(ssid.notation))) }
        if let address = migration.peripheralAddress {
            entries.append(("peripheralAddress", .string(address.description)))
        }
        return .vardict(entries)
    }

    private static func entries(of item: PickerDisplayItem) -> [(String, DBusValue)] {
        var entries: [(String, DBusValue)] = [
            ("name", .string(item.name)),
            ("descriptor", value(json: encodedJSON(item.descriptor))),
            (
                "setupOptions",
                .strings(
                    PickerDisplayItem.SetupOptions.names.filter { item.setupOptions.contains($0.value) }.map(\.key))
            ),
        ]
        if let image = item.productImage { entries.append(("productImage", .string(image))) }
        return entries
    }

    public static func records(_ records: [AccessoryRecord]) -> DBusValue { dictionaries(records.map { record($0) }) }

    /// An error dictionary; empty for no error.
    public static func error(_ error: AccessorySessionError?) -> DBusValue {
        error.map { ErrorReply($0).dbusValue } ?? emptyDictionary
    }

    /// A picker entry, as `AccessoryDiscovered` and `PickerAgent1.UpdateEntries` carry it.
    public static func entry(_ entry: PickerEntry) -> DBusValue { PickerAgentEntry(entry).dbusValue }

    /// A `Session1.AccessoryDiscovered` entry (`DiscoveredEntry`).
    public static func discovered(_ entry: PickerEntry) -> DBusValue { DiscoveredEntry(entry).dbusValue }

    /// `value` as JSON, decoded straight back: the encoder's output needs none of
    /// `JSONValue.parse`'s diagnostics.
    public static func encodedJSON(_ value: some Encodable) -> JSONValue {
        guard let data = try? JSONEncoder().encode(value),
            let json = try? JSONDecoder().decode(JSONValue.self, from: data)
        else { return .object([:]) }
        return json
    }

    /// A JSON value as D-Bus: objects become `a{sv}`, whole numbers `x`, others `d`.
    public static func value(json: JSONValue) -> DBusValue {
        switch json {
        case .null: return .vardict([])
        case .bool(let flag): return .boolean(flag)
        case .number(let number):
            if let whole = Int64(exactly: number) { return .int64(whole) }
            return .double(number)
        case .string(let text): return .string(text)
        // Each element goes into a variant as it is sent (`DBusValue`'s conversion wraps them).
        case .array(let elements): return .array(elements.map { value(json: $0) }, elementType: "v")
        case .object(let members):
            return .vardict(members.sorted { $0.key < $1.key }.map { ($0.key, value(json: $0.value)) })
        }
    }
}

extension DBusValue {
    /// This value as JSON, for the core's readers and for printing: dictionaries with string
    /// (or integer) keys become objects, integers numbers, byte arrays arrays of numbers.
    public var jsonValue: JSONValue {
        switch self {
        case .boolean(let flag): return .bool(flag)
        case .string(let text), .objectPath(let text): return .string(text)
        case .double(let number): return .number(number)
        case .bytes(let bytes): return .array(bytes.map { .number(Double($0)) })
        case .variant(let box): return box.value.jsonValue
        case .array(let elements, _), .tuple(let elements): return .array(elements.map(\.jsonValue))
        case .dictionary(let entries, _):
            var members: [String: JSONValue] = [:]
            for entry in entries {
                guard let key = entry.key.string ?? entry.key.int.map(String.init) else { continue }
                members[key] = entry.value.jsonValue
            }
            return .object(members)
        default:
            return int.map { .number(Double($0)) } ?? .null
        }
    }

    /// The dictionary's string keys and values; `nil` when this is not a dictionary.
    public var members: [String: DBusValue]? {
        guard case .dictionary(let entries, _) = self else { return nil }
        var members: [String: DBusValue] = [:]
        for entry in entries { if let key = entry.key.string { members[key] = entry.value } }
        return members
    }

    public var uint32: UInt32? {
        if case .uint32(let value) = self { return value }
        return nil
    }
}
