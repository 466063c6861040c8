/// The security an access point offers, from NetworkManager's AP flags and WPA / RSN flags.
/// Empty means an open network.
public struct WiFiSecurity: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let wep = WiFiSecurity(rawValue: 1 << 0)
    /// WPA or WPA2 personal (`wpa-psk`).
    public static let psk = WiFiSecurity(rawValue: 1 << 1)
    /// WPA3 personal (`sae`).
    public static let sae = WiFiSecurity(rawValue: 1 << 2)
    /// Enhanced open (`owe`).
    public static let owe = WiFiSecurity(rawValue: 1 << 3)
    /// 802.1X (`wpa-eap`).
    public static let enterprise = WiFiSecurity(rawValue: 1 << 4)

    /// Names as NetworkManager's `key-mgmt` spells them (`none` for WEP).
    public static let names: KeyValuePairs<String, WiFiSecurity> = [
        "wep": .wep, "wpa-psk": .psk, "sae": .sae, "owe": .owe, "wpa-eap": .enterprise,
    ]

    public var names: [String] {
        Self.names.filter { contains($0.value) }.map(\.key)
    }
}

extension WiFiSecurity: CustomStringConvertible {
    public var description: String { isEmpty ? "open" : names.joined(separator: " ") }
}

/// One access point heard in a Wi-Fi scan.
public struct WiFiScanEntry: Hashable, Sendable {
    /// `nil` for a hidden network, which broadcasts no SSID.
    public var ssid: SSID?
    public var bssid: MACAddress
    /// NetworkManager's signal strength, in percent.
    public var strength: Int
    /// In MHz.
    public var frequency: Int
    public var security: WiFiSecurity

    public init(ssid: SSID?, bssid: MACAddress, strength: Int, frequency: Int, security: WiFiSecurity = []) {
        self.ssid = ssid
        self.bssid = bssid
        self.strength = strength
        self.frequency = frequency
        self.security = security
    }
}

/// Whether a Bluetooth LE address is the device's public address or a random one.
public enum BluetoothAddressType: String, Hashable, Sendable, CaseIterable {
    case `public`
    case random
}

/// One Bluetooth LE device as its advertisements (and scan responses) describe it.
public struct BLEAdvertisement: Hashable, Sendable {
    public var address: MACAddress
    public var addressType: BluetoothAddressType
    public var name: String?
    /// In dBm.
    public var rssi: Int?
    /// In dBm.
    public var txPower: Int?
    public var serviceUUIDs: [BluetoothUUID]
    public var manufacturerData: [BluetoothCompanyIdentifier: [UInt8]]
    public var serviceData: [BluetoothUUID: [UInt8]]

    public init(
        address: MACAddress, addressType: BluetoothAddressType = .public, name: String? = nil,
        rssi: Int? = nil, txPower: Int? = nil, serviceUUIDs: [BluetoothUUID] = [],
        manufacturerData: [BluetoothCompanyIdentifier: [UInt8]] = [:], serviceData: [BluetoothUUID: [UInt8]] = [:]
    ) {
        self.address = address
        self.addressType = addressType
        self.name = name
        self.rssi = rssi
        self.txPower = txPower
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
    }

    /// Whether the device names the service in its UUID list or carries service data for it.
    public func advertises(_ service: BluetoothUUID) -> Bool {
        serviceData[service] != nil || serviceUUIDs.contains(service)
    }
}

extension DiscoveryDescriptor {
    /// Whether an access point fits every Wi-Fi field of the descriptor. A descriptor without
    /// a Wi-Fi identifier matches no access point.
    public func matches(_ entry: WiFiScanEntry) -> Bool {
        guard hasWiFiIdentifier else { return false }
        if let ssid, entry.ssid != ssid { return false }
        if let ssidPrefix {
            guard let entrySSID = entry.ssid, entrySSID.hasPrefix(ssidPrefix) else { return false }
        }
        if let bssid {
            let mask = bssidMask ?? MACAddress(rawValue: .max)
            if entry.bssid & mask != bssid & mask { return false }
        }
        if let minimumSignalStrength, entry.strength < minimumSignalStrength { return false }
        return true
    }

    /// Whether an advertisement fits every Bluetooth field of the descriptor. A descriptor
    /// without a Bluetooth identifier matches no advertisement.
    public func matches(_ advertisement: BLEAdvertisement) -> Bool {
        guard hasBluetoothIdentifier else { return false }
        if let service = bluetoothServiceUUID, !advertisement.advertises(service) { return false }
        if let company = bluetoothCompanyIdentifier {
            guard let data = advertisement.manufacturerData[company] else { return false }
            if let pattern = bluetoothManufacturerData, !pattern.matches(data) { return false }
        }
        if let pattern = bluetoothServiceData {
            guard let service = bluetoothServiceUUID, let data = advertisement.serviceData[service],
                pattern.matches(data)
            else { return false }
        }
        if let substring = bluetoothNameSubstring {
            guard let name = advertisement.name,
                Self.name(name, contains: substring, options: bluetoothNameSubstringCompareOptions)
            else { return false }
        }
        if bluetoothRange == .immediate {
            guard let rssi = advertisement.rssi, rssi >= BluetoothRange.immediateRSSIThreshold else { return false }
        }
        return true
    }

    private static func name(_ name: String, contains substring: String, options: NameCompareOptions) -> Bool {
        if options.contains(.caseInsensitive) {
            return name.lowercased().contains(substring.lowercased())
        }
        return name.contains(substring)
    }
}
