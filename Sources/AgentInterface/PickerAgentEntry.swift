import AccessoryCore
import DBusValues

/// One accessory a picker shows, in the form `PickerAgent1.UpdateEntries` and
/// `Session1.AccessoryDiscovered` carry it: the agent writes it, the pickers read it.
public struct PickerAgentEntry: Sendable, Hashable, Identifiable {
    /// Stable for the life of the session.
    public var id: UInt32
    /// The index of the profile item whose descriptor matched.
    public var item: Int
    public var name: String
    /// The profile's image for the item, a path relative to the profile.
    public var productImage: String?
    /// The SSID as the core writes it (escaped when it is not UTF-8).
    public var ssid: String?
    public var bssid: String?
    public var bluetoothAddress: String?
    public var bluetoothName: String?
    /// Wi-Fi quality on NetworkManager's 0–100 scale.
    public var signal: Int?
    /// Bluetooth LE signal in dBm.
    public var rssi: Int?

    public init(
        id: UInt32, item: Int, name: String, productImage: String? = nil, ssid: String? = nil, bssid: String? = nil,
        bluetoothAddress: String? = nil, bluetoothName: String? = nil, signal: Int? = nil, rssi: Int? = nil
    ) {
        self.id = id
        self.item = item
        self.name = name
        self.productImage = productImage
        self.ssid = ssid
        self.bssid = bssid
        self.bluetoothAddress = bluetoothAddress
        self.bluetoothName = bluetoothName
        self.signal = signal
        self.rssi = rssi
    }

    /// The core's entry as it goes on the bus.
    public init(_ entry: PickerEntry) {
        self.init(
            id: UInt32(clamping: entry.id), item: entry.itemIndex, name: entry.name, productImage: entry.productImage,
            ssid: entry.wifi?.ssid?.notation, bssid: entry.wifi?.bssid.description,
            bluetoothAddress: entry.bluetooth?.address.description, bluetoothName: entry.bluetooth?.name,
            signal: entry.wifi?.strength, rssi: entry.bluetooth?.rssi)
    }

    /// Reads an entry off the bus; `nil` without the `entry` id.
    public init?(_ value: DBusValue) {
        guard let id = value.field("entry")?.int.flatMap(UInt32.init(exactly:)) else { return nil }
        self.init(
            id: id, item: value.field("item")?.int ?? 0, name: value.field("name")?.string ?? "",
            productImage: value.field("productImage")?.string, ssid: value.field("ssid")?.string,
            bssid: value.field("bssid")?.string, bluetoothAddress: value.field("bluetoothAddress")?.string,
            bluetoothName: value.field("bluetoothName")?.string, signal: value.field("signal")?.int,
            rssi: value.field("rssi")?.int)
    }

    /// The `a{sv}` the agent sends.
    public var dbusValue: DBusValue { .vardict(fields) }

    var fields: [(String, DBusValue)] {
        var fields: [(String, DBusValue)] = [
            ("entry", .uint32(id)), ("item", .uint32(UInt32(clamping: item))), ("name", .string(name)),
        ]
        if let productImage { fields.append(("productImage", .string(productImage))) }
        if let ssid { fields.append(("ssid", .string(ssid))) }
        if let bssid { fields.append(("bssid", .string(bssid))) }
        if let signal { fields.append(("signal", .uint32(UInt32(clamping: signal)))) }
        if let bluetoothAddress { fields.append(("bluetoothAddress", .string(bluetoothAddress))) }
        if let rssi { fields.append(("rssi", .int32(Int32(clamping: rssi)))) }
        if let bluetoothName { fields.append(("bluetoothName", .string(bluetoothName))) }
        return fields
    }

    /// The stronger of the two radios, on the 0–100 scale.
    public var strength: Int? {
        let bluetooth = rssi.map(PickerEntry.strength(dBm:))
        switch (signal, bluetooth) {
        case (let wifi?, let bluetooth?): return max(wifi, bluetooth)
        case (let wifi?, nil): return wifi
        case (nil, let bluetooth): return bluetooth
        }
    }
}

extension DBusValue {
    /// The value of a key of an `a{sv}`, out of its variant when it is still in one (as in a
    /// value built here rather than read off the bus).
    public func field(_ key: String) -> DBusValue? {
        guard let value = self[key] else { return nil }
        if case .variant(let box) = value { return box.value }
        return value
    }
}
