/// What to look for when discovering an accessory: the counterpart of `ASDiscoveryDescriptor`,
/// with Android's BSSID mask and signal floor added.
///
/// A descriptor is plain data; `validate()` checks the rules between its fields. Apple's
/// framework crashes on a bad descriptor; here each broken rule is a typed error naming the field.
public struct DiscoveryDescriptor: Hashable, Sendable {
    /// The exact SSID of the accessory's setup hotspot.
    public var ssid: SSID?
    /// SSIDs starting with these bytes. Never together with `ssid`.
    public var ssidPrefix: SSID?
    /// The access point's BSSID, compared under `bssidMask` when it is set.
    public var bssid: MACAddress?
    /// Bits of `bssid` to compare (`FF:FF:FF:00:00:00` compares the OUI).
    public var bssidMask: MACAddress?
    /// The weakest Wi-Fi signal accepted, in NetworkManager's percent (0–100).
    public var minimumSignalStrength: Int?

    public var bluetoothServiceUUID: BluetoothUUID?
    public var bluetoothCompanyIdentifier: BluetoothCompanyIdentifier?
    public var bluetoothNameSubstring: String?
    public var bluetoothNameSubstringCompareOptions: NameCompareOptions = []
    /// Matched against the manufacturer data of `bluetoothCompanyIdentifier`.
    public var bluetoothManufacturerData: MaskedData?
    /// Matched against the service data of `bluetoothServiceUUID`.
    public var bluetoothServiceData: MaskedData?
    public var bluetoothRange: BluetoothRange = .default
    public var supportedOptions: AccessorySupportOptions = []

    public init() {}

    public var hasWiFiIdentifier: Bool { ssid != nil || ssidPrefix != nil || bssid != nil }
    public var hasBluetoothIdentifier: Bool { bluetoothServiceUUID != nil || bluetoothCompanyIdentifier != nil }

    /// Every rule the descriptor breaks, in the order of its fields.
    public var validationErrors: [DiscoveryDescriptorError] {
        var errors: [DiscoveryDescriptorError] = []
        if ssid != nil && ssidPrefix != nil { errors.append(.ssidAndSSIDPrefixBothSet) }
        if bssidMask != nil && bssid == nil { errors.append(.bssidMaskWithoutBSSID) }
        if minimumSignalStrength != nil && !hasWiFiIdentifier { errors.append(.signalFloorWithoutWiFiIdentifier) }
        if let strength = minimumSignalStrength, !(0...100).contains(strength) {
            errors.append(.signalStrengthOutOfRange(strength))
        }
        if bluetoothNameSubstring != nil && !hasBluetoothIdentifier { errors.append(.nameSubstringWithoutIdentifier) }
        if bluetoothNameSubstring?.isEmpty == true { errors.append(.emptyNameSubstring) }
        if bluetoothManufacturerData != nil && bluetoothCompanyIdentifier == nil {
            errors.append(.manufacturerDataWithoutCompanyIdentifier)
        }
        if bluetoothServiceData != nil && bluetoothServiceUUID == nil { errors.append(.serviceDataWithoutServiceUUID) }
        if bluetoothRange != .default && !hasBluetoothIdentifier { errors.append(.rangeWithoutBluetoothIdentifier) }
        if !supportedOptions.isEmpty && !hasBluetoothIdentifier {
            errors.append(.supportedOptionsWithoutBluetoothIdentifier)
        }
        if !hasWiFiIdentifier && !hasBluetoothIdentifier { errors.append(.noIdentifier) }
        return errors
    }

    /// Throws the first broken rule; `validationErrors` lists them all.
    public func validate() throws(DiscoveryDescriptorError) {
        if let error = validationErrors.first { throw error }
    }
}

/// `NSString.CompareOptions` as far as name matching uses them.
public struct NameCompareOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// `NSString.CompareOptions.caseInsensitive`.
    public static let caseInsensitive = NameCompareOptions(rawValue: 1)
}

/// `ASDiscoveryDescriptor.Range`.
public enum BluetoothRange: Int, Hashable, Sendable, CaseIterable {
    case `default` = 0
    /// Right next to the device: an RSSI of `immediateRSSIThreshold` or stronger.
    case immediate = 10

    /// Apple publishes no figure; −50 dBm is about an arm's length for a typical LE radio.
    public static let immediateRSSIThreshold = -50
}

/// `ASAccessory.SupportOptions`, with Apple's raw values.
public struct AccessorySupportOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let bluetoothPairingLE = AccessorySupportOptions(rawValue: 2)
    public static let bluetoothTransportBridging = AccessorySupportOptions(rawValue: 4)
    public static let bluetoothHID = AccessorySupportOptions(rawValue: 8)
}

/// A rule between a descriptor's fields that it breaks.
public enum DiscoveryDescriptorError: Error, Hashable, Sendable, CustomStringConvertible {
    case ssidAndSSIDPrefixBothSet
    case bssidMaskWithoutBSSID
    case signalFloorWithoutWiFiIdentifier
    case signalStrengthOutOfRange(Int)
    case nameSubstringWithoutIdentifier
    case emptyNameSubstring
    case manufacturerDataWithoutCompanyIdentifier
    case serviceDataWithoutServiceUUID
    case rangeWithoutBluetoothIdentifier
    case supportedOptionsWithoutBluetoothIdentifier
    case noIdentifier

    /// The descriptor key the error is about, as written in profiles.
    public var field: String {
        switch self {
        case .ssidAndSSIDPrefixBothSet: "ssidPrefix"
        case .bssidMaskWithoutBSSID: "bssidMask"
        case .signalFloorWithoutWiFiIdentifier, .signalStrengthOutOfRange: "minimumSignalStrength"
        case .nameSubstringWithoutIdentifier, .emptyNameSubstring: "bluetoothNameSubstring"
        case .manufacturerDataWithoutCompanyIdentifier: "bluetoothManufacturerDataBlob"
        case .serviceDataWithoutServiceUUID: "bluetoothServiceDataBlob"
        case .rangeWithoutBluetoothIdentifier: "bluetoothRange"
        case .supportedOptionsWithoutBluetoothIdentifier: "supportedOptions"
        case .noIdentifier: "(descriptor)"
        }
    }

    public var message: String {
        switch self {
        case .ssidAndSSIDPrefixBothSet:
            "ssid and ssidPrefix are mutually exclusive; keep the exact ssid or the prefix, not both"
        case .bssidMaskWithoutBSSID:
            "a BSSID mask needs a bssid to compare with"
        case .signalFloorWithoutWiFiIdentifier:
            "a minimum signal strength needs a Wi-Fi identifier (ssid, ssidPrefix or bssid)"
        case .signalStrengthOutOfRange(let value):
            "is \(value); signal strength is a percentage from 0 to 100"
        case .nameSubstringWithoutIdentifier:
            "a name substring needs a bluetoothServiceUUID or a bluetoothCompanyIdentifier too"
        case .emptyNameSubstring:
            "must not be empty"
        case .manufacturerDataWithoutCompanyIdentifier:
            "manufacturer data needs a bluetoothCompanyIdentifier (the data is looked up by company)"
        case .serviceDataWithoutServiceUUID:
            "service data needs a bluetoothServiceUUID (the data is looked up by service)"
        case .rangeWithoutBluetoothIdentifier:
            "a Bluetooth range needs a bluetoothServiceUUID or a bluetoothCompanyIdentifier"
        case .supportedOptionsWithoutBluetoothIdentifier:
            "Bluetooth options need a bluetoothServiceUUID or a bluetoothCompanyIdentifier"
        case .noIdentifier:
            "a descriptor needs a Wi-Fi identifier (ssid, ssidPrefix, bssid) or a Bluetooth one (bluetoothServiceUUID, bluetoothCompanyIdentifier)"
        }
    }

    public var description: String { "\(field): \(message)" }
}
