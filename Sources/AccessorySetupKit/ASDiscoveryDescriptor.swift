import AccessoryCore
import CoreBluetooth
import FoundationEssentials

/// Apple's `ASBluetoothCompanyIdentifier`: a company identifier, 0 for none.
public typealias ASBluetoothCompanyIdentifier = UInt16

/// What to look for when discovering an accessory (Apple's `ASDiscoveryDescriptor`), set up
/// property by property as on iOS. A descriptor whose fields break a rule (`ssid` and
/// `ssidPrefix` both set, a blob without its mask, …) is refused when a picker is shown with
/// it, with an `invalidRequest` naming the field, where Apple's framework stops the app.
public final class ASDiscoveryDescriptor: @unchecked Sendable {
    public typealias Range = BluetoothRange

    /// The accessory hotspot's exact SSID, as UTF-8. Never together with `ssidPrefix`.
    public var ssid: String?
    /// SSIDs starting with this, as UTF-8.
    public var ssidPrefix: String?
    public var bluetoothServiceUUID: CBUUID?
    public var bluetoothCompanyIdentifier: ASBluetoothCompanyIdentifier = 0
    public var bluetoothNameSubstring: String?
    public var bluetoothNameSubstringCompareOptions: NameCompareOptions = []
    /// Compared under `bluetoothManufacturerDataMask`, of the same length, with the bytes after
    /// the company identifier.
    public var bluetoothManufacturerDataBlob: Data?
    public var bluetoothManufacturerDataMask: Data?
    /// Compared under `bluetoothServiceDataMask` with the data of `bluetoothServiceUUID`.
    public var bluetoothServiceDataBlob: Data?
    public var bluetoothServiceDataMask: Data?
    public var bluetoothRange: Range = .default
    public var supportedOptions: ASAccessory.SupportOptions = []

    /// Not in Apple's API: an exact SSID that is not UTF-8 (any bytes, up to 32). It takes the
    /// place of `ssid`.
    public var ssidBytes: SSID?
    /// Not in Apple's API: an SSID prefix that is not UTF-8. It takes the place of `ssidPrefix`.
    public var ssidPrefixBytes: SSID?
    /// Not in Apple's API (Android's): the access point's BSSID, compared under `bssidMask`.
    public var bssid: MACAddress?
    public var bssidMask: MACAddress?
    /// Not in Apple's API (Android's): the weakest Wi-Fi signal accepted, 0–100.
    public var minimumSignalStrength: Int?

    public init() {}

    /// The descriptor `descriptor` describes.
    public convenience init(_ descriptor: DiscoveryDescriptor) {
        self.init()
        if let ssid = descriptor.ssid {
            if let text = String(validating: ssid.bytes, as: UTF8.self) { self.ssid = text } else { ssidBytes = ssid }
        }
        if let prefix = descriptor.ssidPrefix {
            if let text = String(validating: prefix.bytes, as: UTF8.self) {
                ssidPrefix = text
            } else {
                ssidPrefixBytes = prefix
            }
        }
        bluetoothServiceUUID = descriptor.bluetoothServiceUUID.map { CBUUID(string: $0.string) }
        bluetoothCompanyIdentifier = descriptor.bluetoothCompanyIdentifier?.rawValue ?? 0
        bluetoothNameSubstring = descriptor.bluetoothNameSubstring
        bluetoothNameSubstringCompareOptions = descriptor.bluetoothNameSubstringCompareOptions
        bluetoothManufacturerDataBlob = descriptor.bluetoothManufacturerData.map { Data($0.blob) }
        bluetoothManufacturerDataMask = descriptor.bluetoothManufacturerData.map { Data($0.mask) }
        bluetoothServiceDataBlob = descriptor.bluetoothServiceData.map { Data($0.blob) }
        bluetoothServiceDataMask = descriptor.bluetoothServiceData.map { Data($0.mask) }
        bluetoothRange = descriptor.bluetoothRange
        supportedOptions = descriptor.supportedOptions
        bssid = descriptor.bssid
        bssidMask = descriptor.bssidMask
        minimumSignalStrength = descriptor.minimumSignalStrength
    }

    /// The descriptor as the agent reads it; the first broken rule as an `invalidRequest`
    /// naming its field (`descriptor.ssid`, …).
    public func discoveryDescriptor() throws(ASError) -> DiscoveryDescriptor {
        var descriptor = DiscoveryDescriptor()
        descriptor.ssid = try Self.ssid(ssidBytes, ssid, field: "ssid")
        descriptor.ssidPrefix = try Self.ssid(ssidPrefixBytes, ssidPrefix, field: "ssidPrefix")
        if let text = bluetoothServiceUUID?.uuidString {
            do {
                descriptor.bluetoothServiceUUID = try BluetoothUUID(text)
            } catch {
                throw .invalidRequest("descriptor.bluetoothServiceUUID", "'\(text)' is not a Bluetooth UUID: \(error)")
            }
        }
        if bluetoothCompanyIdentifier != 0 {
            descriptor.bluetoothCompanyIdentifier = BluetoothCompanyIdentifier(rawValue: bluetoothCompanyIdentifier)
        }
        descriptor.bluetoothNameSubstring = bluetoothNameSubstring
        descriptor.bluetoothNameSubstringCompareOptions = bluetoothNameSubstringCompareOptions
        descriptor.bluetoothManufacturerData = try Self.masked(
            bluetoothManufacturerDataBlob, bluetoothManufacturerDataMask, field: "bluetoothManufacturerData")
        descriptor.bluetoothServiceData = try Self.masked(
            bluetoothServiceDataBlob, bluetoothServiceDataMask, field: "bluetoothServiceData")
        descriptor.bluetoothRange = bluetoothRange
        descriptor.supportedOptions = supportedOptions
        descriptor.bssid = bssid
        descriptor.bssidMask = bssidMask
        descriptor.minimumSignalStrength = minimumSignalStrength
        do {
            try descriptor.validate()
        } catch {
            // `noIdentifier` is about the descriptor as a whole.
            let field = error == .noIdentifier ? "descriptor" : "descriptor.\(error.field)"
            throw .invalidRequest(field, error.message)
        }
        return descriptor
    }

    private static func ssid(_ bytes: SSID?, _ text: String?, field: String) throws(ASError) -> SSID? {
        if let bytes {
            guard text == nil else {
                throw .invalidRequest("descriptor.\(field)", "is set both as text and as bytes; keep one")
            }
            return bytes
        }
        guard let text else { return nil }
        do {
            return try SSID(bytes: Array(text.utf8))
        } catch {
            throw .invalidRequest("descriptor.\(field)", "'\(text)' is not an SSID: \(error)")
        }
    }

    private static func masked(_ blob: Data?, _ mask: Data?, field: String) throws(ASError) -> MaskedData? {
        switch (blob, mask) {
        case (nil, nil): return nil
        case (nil, _): throw .invalidRequest("descriptor.\(field)Mask", "is set without \(field)Blob")
        case (_, nil): throw .invalidRequest("descriptor.\(field)Blob", "is set without \(field)Mask")
        case (let blob?, let mask?):
            do {
                return try MaskedData(blob: Array(blob), mask: Array(mask))
            } catch {
                throw .invalidRequest("descriptor.\(field)Blob", "\(error)")
            }
        }
    }
}

extension ASError {
    /// A request the library refuses before it reaches the agent, as the agent would.
    static func invalidRequest(_ field: String, _ reason: String) -> ASError {
        ASError(
            code: .invalidRequest, name: AccessorySessionError.Code.invalidRequest.dbusName,
            message: "\(field) \(reason)", field: field)
    }
}
