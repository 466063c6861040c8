import AccessoryCore
import DBusValues

/// What `Session1.AccessoryDiscovered` carries, for a client that filters discovery itself
/// (Apple's `ASDiscoveredAccessory` wraps it): the picker's entry, and what the client decides
/// on, the access point's fields and the advertisement's raw data. The agent writes it from
/// the core's entry; clients read it.
public struct DiscoveredEntry: Sendable, Hashable {
    /// What a picker shows of it.
    public var picker: PickerAgentEntry
    /// In MHz.
    public var frequency: Int?
    /// `wep`, `wpa-psk`, `sae`, `owe`, `wpa-eap` (NetworkManager's names); none for an open network.
    public var security: [String]
    /// `public` or `random`.
    public var bluetoothAddressType: String?
    public var txPower: Int?
    public var serviceUUIDs: [String]
    /// Company identifier to the bytes after it.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Service UUID (lower-case, 36 characters) to its data.
    public var serviceData: [String: [UInt8]]

    /// The agent's id of the entry, which `updatePicker(showing:)` names.
    public var entry: UInt32 { picker.id }
    /// The index of the picker item whose descriptor matched.
    public var item: Int { picker.item }
    public var ssid: String? { picker.ssid }
    public var bssid: String? { picker.bssid }
    /// Wi-Fi quality on NetworkManager's 0–100 scale.
    public var signal: Int? { picker.signal }
    public var bluetoothIdentifier: String? { picker.bluetoothAddress }
    public var bluetoothName: String? { picker.bluetoothName }
    /// In dBm.
    public var bluetoothRSSI: Int? { picker.rssi }

    /// The core's entry as the agent sends it.
    public init(_ entry: PickerEntry) {
        picker = PickerAgentEntry(entry)
        frequency = entry.wifi?.frequency
        security = entry.wifi?.security.names ?? []
        bluetoothAddressType = entry.bluetooth?.addressType.rawValue
        txPower = entry.bluetooth?.txPower
        serviceUUIDs = entry.bluetooth?.serviceUUIDs.map(\.string) ?? []
        manufacturerData = Dictionary(
            uniqueKeysWithValues: (entry.bluetooth?.manufacturerData ?? [:]).map { ($0.key.rawValue, $0.value) })
        serviceData = Dictionary(
            uniqueKeysWithValues: (entry.bluetooth?.serviceData ?? [:]).map { ($0.key.string, $0.value) })
    }

    /// Reads an entry off the bus; `nil` without the `entry` id.
    public init?(_ value: DBusValue) {
        guard let picker = PickerAgentEntry(value) else { return nil }
        self.picker = picker
        frequency = value.field("frequency")?.int
        security = value.field("security")?.elements.compactMap(\.string) ?? []
        bluetoothAddressType = value.field("bluetoothAddressType")?.string
        txPower = value.field("txPower")?.int
        serviceUUIDs = value.field("serviceUUIDs")?.elements.compactMap(\.string) ?? []
        var manufacturer: [UInt16: [UInt8]] = [:]
        for entry in value.field("manufacturerData")?.entries ?? [] {
            if let company = entry.key.int.flatMap(UInt16.init(exactly:)), let bytes = entry.value.bytes {
                manufacturer[company] = bytes
            }
        }
        manufacturerData = manufacturer
        var service: [String: [UInt8]] = [:]
        for entry in value.field("serviceData")?.entries ?? [] {
            if let uuid = entry.key.string, let bytes = entry.value.bytes { service[uuid] = bytes }
        }
        serviceData = service
    }

    /// The `a{sv}` the agent sends: the picker entry's fields, then the access point's and the
    /// advertisement's.
    public var dbusValue: DBusValue {
        var fields = picker.fields
        if let frequency {
            fields.append(("frequency", .uint32(UInt32(clamping: frequency))))
            fields.append(("security", .strings(security)))
        }
        if let bluetoothAddressType {
            fields.append(("bluetoothAddressType", .string(bluetoothAddressType)))
            if let txPower { fields.append(("txPower", .int32(Int32(clamping: txPower)))) }
            fields.append(("serviceUUIDs", .strings(serviceUUIDs)))
            let manufacturer = manufacturerData.sorted { $0.key < $1.key }.map {
                DBusValue.Entry(key: .uint16($0.key), value: .bytes($0.value))
            }
            fields.append(("manufacturerData", .dictionary(manufacturer, entryType: "{qay}")))
            let service = serviceData.sorted { $0.key < $1.key }.map {
                DBusValue.Entry(key: .string($0.key), value: .bytes($0.value))
            }
            fields.append(("serviceData", .dictionary(service, entryType: "{say}")))
        }
        return .vardict(fields)
    }
}
