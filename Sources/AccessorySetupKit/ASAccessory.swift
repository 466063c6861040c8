import AccessoryCore
import AgentInterface
import FoundationEssentials

/// An accessory the person authorized for the application (Apple's `ASAccessory`).
open class ASAccessory: @unchecked Sendable {
    public typealias AccessoryState = AccessoryCore.AccessoryState
    public typealias SupportOptions = AccessorySupportOptions
    public typealias RenameOptions = AccessoryCore.RenameOptions

    /// What the agent said of the accessory, with what Apple's API has no place for (its
    /// record's id, its network and where it lives there); `nil` for one only discovered.
    public let details: AccessoryDetails?
    public let state: AccessoryState
    public let displayName: String
    /// The hotspot's SSID, escaped where it is not UTF-8.
    public let ssid: String?
    /// A UUID that stands for the device, stable for it as CoreBluetooth's are: what an
    /// `ASMigrationDisplayItem.peripheralIdentifier` takes. `bluetoothAddress` is its address.
    public let bluetoothIdentifier: UUID?
    public let bluetoothTransportBridgingIdentifier: Data?
    /// The descriptor the accessory matched.
    public let descriptor: ASDiscoveryDescriptor

    /// Not in Apple's API: the device's Bluetooth address, as BlueZ names it.
    public let bluetoothAddress: MACAddress?
    /// Not in Apple's API: the record's id, stable for the accessory's life; empty for one
    /// only discovered.
    public var id: String { details?.id ?? "" }

    public init(_ details: AccessoryDetails) {
        self.details = details
        state = AccessoryState.allCases.first { $0.name == details.state } ?? .unauthorized
        displayName = details.displayName
        ssid = details.ssid
        bluetoothAddress = details.bluetoothIdentifier.flatMap { try? MACAddress($0) }
        bluetoothIdentifier = bluetoothAddress?.peripheralIdentifier
        bluetoothTransportBridgingIdentifier = details.bluetoothTransportBridgingIdentifier
            .flatMap { try? MACAddress($0) }
            .map { address in Data((0..<6).reversed().map { UInt8(truncatingIfNeeded: address.rawValue >> ($0 * 8)) }) }
        let recorded = try? JSONDecoder().decode(
            DiscoveryDescriptor.self, from: JSONEncoder().encode(details.descriptor))
        descriptor = ASDiscoveryDescriptor(recorded ?? DiscoveryDescriptor())
    }

    fileprivate init(discovered entry: DiscoveredEntry) {
        details = nil
        state = .unauthorized
        displayName = entry.bluetoothName ?? entry.ssid ?? ""
        ssid = entry.ssid
        bluetoothAddress = entry.bluetoothIdentifier.flatMap { try? MACAddress($0) }
        bluetoothIdentifier = bluetoothAddress?.peripheralIdentifier
        bluetoothTransportBridgingIdentifier = nil
        descriptor = ASDiscoveryDescriptor()
    }
}

/// What discovery found, for an application that filters discovery itself (Apple's
/// `ASDiscoveredAccessory`), in an `accessoryDiscovered` event's `accessory`.
public final class ASDiscoveredAccessory: ASAccessory, @unchecked Sendable {
    /// Everything the agent sent of it.
    public let entry: DiscoveredEntry

    /// The advertisement, under CoreBluetooth's keys: `kCBAdvDataLocalName` (`String`),
    /// `kCBAdvDataManufacturerData` (`Data`: the company identifier, little-endian, then its
    /// bytes), `kCBAdvDataServiceUUIDs` (`[String]`), `kCBAdvDataServiceData`
    /// (`[String: Data]`), `kCBAdvDataTxPowerLevel` (`Int`); `nil` for a Wi-Fi accessory.
    public var bluetoothAdvertisementData: [String: Any]? {
        guard entry.bluetoothIdentifier != nil else { return nil }
        var data: [String: Any] = [:]
        if let name = entry.bluetoothName { data["kCBAdvDataLocalName"] = name }
        if let (company, bytes) = entry.manufacturerData.min(by: { $0.key < $1.key }) {
            data["kCBAdvDataManufacturerData"] = Data([UInt8(company & 0xFF), UInt8(company >> 8)] + bytes)
        }
        if !entry.serviceUUIDs.isEmpty { data["kCBAdvDataServiceUUIDs"] = entry.serviceUUIDs }
        if !entry.serviceData.isEmpty { data["kCBAdvDataServiceData"] = entry.serviceData.mapValues { Data($0) } }
        if let power = entry.txPower { data["kCBAdvDataTxPowerLevel"] = power }
        return data
    }

    /// In dBm (Apple's is an `NSNumber`).
    public var bluetoothRSSI: Int? { entry.bluetoothRSSI }

    public init(_ entry: DiscoveredEntry) {
        self.entry = entry
        super.init(discovered: entry)
    }
}

/// What a session tells its application (Apple's `ASAccessoryEvent`).
public final class ASAccessoryEvent: @unchecked Sendable {
    public let eventType: ASAccessoryEventType
    /// The accessory added, changed, removed or (an `ASDiscoveredAccessory`) discovered.
    public let accessory: ASAccessory?
    /// Why the picker was dismissed, the setup failed or the session ended.
    public let error: (any Error)?

    init(eventType: ASAccessoryEventType, accessory: ASAccessory? = nil, error: (any Error)? = nil) {
        self.eventType = eventType
        self.accessory = accessory
        self.error = error
    }

    convenience init(_ event: AgentEvent) {
        let accessory: ASAccessory? =
            event.discoveredAccessory.map(ASDiscoveredAccessory.init) ?? event.accessory.map(ASAccessory.init)
        self.init(eventType: event.eventType, accessory: accessory, error: event.error)
    }
}

public typealias ASAccessoryEventType = AccessoryEventType
