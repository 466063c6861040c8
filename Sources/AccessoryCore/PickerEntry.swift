/// One device the picker shows: what a session's descriptors matched of one accessory, heard over
/// Wi-Fi, Bluetooth LE or both.
public struct PickerEntry: Hashable, Sendable, Identifiable {
    /// Stable for the life of the session, also when the device is heard again or over the
    /// other radio.
    public var id: Int
    /// The index of the picker item whose descriptor matched (the first one, if several did).
    public var itemIndex: Int
    /// The item's name, or the one the client gave with `updatePicker`.
    public var name: String
    public var productImage: String?
    public var wifi: WiFiScanEntry?
    public var bluetooth: BLEAdvertisement?

    public init(
        id: Int, itemIndex: Int, name: String, productImage: String? = nil,
        wifi: WiFiScanEntry? = nil, bluetooth: BLEAdvertisement? = nil
    ) {
        self.id = id
        self.itemIndex = itemIndex
        self.name = name
        self.productImage = productImage
        self.wifi = wifi
        self.bluetooth = bluetooth
    }

    /// The stronger of the two radios on NetworkManager's 0–100 scale.
    public var signalStrength: Int? {
        let bluetoothStrength = bluetooth?.rssi.map(Self.strength(dBm:))
        switch (wifi?.strength, bluetoothStrength) {
        case (let a?, let b?): return max(a, b)
        case (let a?, nil): return a
        case (nil, let b): return b
        }
    }

    /// NetworkManager's conversion of a level in dBm to a quality (`nm-wifi-utils.c`, level to quality):
    /// −40 dBm and stronger is 100, −100 dBm and weaker is 0, linear between.
    public static func strength(dBm: Int) -> Int {
        let clamped = min(max(dBm, -100), -40)
        return 100 - (100 * abs(clamped + 40)) / 60
    }
}

/// Turns a session's matches into picker entries, one per device, and keeps their ids stable.
///
/// Access points are one device per BSSID and advertisers one per address (as
/// `AccessoryMatching.matches` reports them). An access point and an advertiser are the same
/// device when the advertised name is the SSID, or when both addresses are public, share the
/// OUI and lie at most 3 apart: ESP-IDF derives the SoftAP address (base + 1) and the Bluetooth
/// address (base + 2) from one base address, as many vendors do.
struct PickerEntryTable: Sendable {
    private enum DeviceKey: Hashable {
        case wifi(MACAddress)
        case bluetooth(MACAddress, BluetoothAddressType)
    }

    private var ids: [DeviceKey: Int] = [:]
    private var nextID = 1

    /// The entries for `matches` (Wi-Fi first, as the matcher orders them), named after `items`.
    mutating func entries(for matches: [AccessoryMatch], items: [PickerDisplayItem]) -> [PickerEntry] {
        var entries: [PickerEntry] = []
        var keys: [[DeviceKey]] = []
        for match in matches {
            switch match.device {
            case .wifi(let accessPoint):
                entries.append(PickerEntry(id: 0, itemIndex: match.itemIndex, name: "", wifi: accessPoint))
                keys.append([.wifi(accessPoint.bssid)])
            case .bluetooth(let advertisement):
                let key = DeviceKey.bluetooth(advertisement.address, advertisement.addressType)
                if let index = entries.firstIndex(where: {
                    $0.bluetooth == nil && $0.wifi.map { Self.sameDevice($0, advertisement) } == true
                }) {
                    entries[index].bluetooth = advertisement
                    entries[index].itemIndex = min(entries[index].itemIndex, match.itemIndex)
                    keys[index].append(key)
                } else {
                    entries.append(PickerEntry(id: 0, itemIndex: match.itemIndex, name: "", bluetooth: advertisement))
                    keys.append([key])
                }
            }
        }
        for index in entries.indices {
            let known = ids
            let id = keys[index].lazy.compactMap { known[$0] }.first ?? takeID()
            for key in keys[index] { ids[key] = id }
            entries[index].id = id
            let item = items[entries[index].itemIndex]
            entries[index].name = item.name
            entries[index].productImage = item.productImage
        }
        return entries
    }

    private mutating func takeID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    static func sameDevice(_ accessPoint: WiFiScanEntry, _ advertisement: BLEAdvertisement) -> Bool {
        if let name = advertisement.name, let ssid = accessPoint.ssid?.utf8String, name == ssid { return true }
        guard advertisement.addressType == .public else { return false }
        let wifi = accessPoint.bssid.rawValue, bluetooth = advertisement.address.rawValue
        return wifi >> 24 == bluetooth >> 24 && (wifi > bluetooth ? wifi - bluetooth : bluetooth - wifi) <= 3
    }
}
