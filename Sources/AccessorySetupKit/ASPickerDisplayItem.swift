import AccessoryCore
import AgentInterface
import DBusValues
import FoundationEssentials

/// One kind of accessory the picker may show (Apple's `ASPickerDisplayItem`).
open class ASPickerDisplayItem: @unchecked Sendable {
    public typealias SetupOptions = PickerDisplayItem.SetupOptions

    public let name: String
    /// Where Apple has a `UIImage`: the path of a PNG or JPEG the picker shows, absolute or
    /// relative to the session's profile; `nil` for none.
    public let productImage: String?
    public let descriptor: ASDiscoveryDescriptor
    public var setupOptions: SetupOptions = []
    /// Apple's `renameOptions`: what a rename in the picker renames besides the accessory.
    public var renameOptions: ASAccessory.RenameOptions = []

    public init(name: String, productImage: String?, descriptor: ASDiscoveryDescriptor) {
        self.name = name
        self.productImage = productImage
        self.descriptor = descriptor
    }

    /// The item as `ShowPicker` takes it.
    func dbusValue() throws(ASError) -> DBusValue {
        BusCoding.item(try pickerDisplayItem())
    }

    func pickerDisplayItem() throws(ASError) -> PickerDisplayItem {
        PickerDisplayItem(
            name: name, productImage: productImage, descriptor: try descriptor.discoveryDescriptor(),
            setupOptions: setupOptions)
    }
}

/// An accessory set up before, to adopt into the person's accessories without discovering it
/// (Apple's `ASMigrationDisplayItem`). Set `hotspotSSID` (a NetworkManager profile of that
/// full SSID must exist), `peripheralIdentifier` (a device BlueZ knows), or both.
public final class ASMigrationDisplayItem: ASPickerDisplayItem, @unchecked Sendable {
    public var hotspotSSID: String?
    /// The peripheral as `ASAccessory.bluetoothIdentifier` names it. Not in Apple's API:
    /// `peripheralAddress`, its BlueZ address, takes the place of this.
    public var peripheralIdentifier: UUID?
    public var peripheralAddress: MACAddress?

    override func dbusValue() throws(ASError) -> DBusValue {
        var migration = MigrationDisplayItem(item: try pickerDisplayItem())
        if let hotspotSSID {
            do {
                migration.hotspotSSID = try SSID(bytes: Array(hotspotSSID.utf8))
            } catch {
                throw .invalidRequest("hotspotSSID", "'\(hotspotSSID)' is not an SSID: \(error)")
            }
        }
        if let address = peripheralAddress {
            migration.peripheralAddress = address
        } else if let identifier = peripheralIdentifier {
            guard let address = MACAddress(peripheralIdentifier: identifier) else {
                throw .invalidRequest(
                    "peripheralIdentifier",
                    "\(identifier) is no peripheral this machine named (ASAccessory.bluetoothIdentifier gives one)")
            }
            migration.peripheralAddress = address
        }
        guard migration.hotspotSSID != nil || migration.peripheralAddress != nil else {
            throw .invalidRequest("hotspotSSID", "and peripheralIdentifier are both unset; a migration item needs one")
        }
        return BusCoding.migrationItem(migration)
    }
}

/// A discovered accessory the application lets the picker show, under its own name (Apple's
/// `ASDiscoveredDisplayItem`), with `filterDiscoveryResults`.
public final class ASDiscoveredDisplayItem: @unchecked Sendable {
    public let name: String
    public let productImage: String?
    public let accessory: ASDiscoveredAccessory

    public init(name: String, productImage: String?, accessory: ASDiscoveredAccessory) {
        self.name = name
        self.productImage = productImage
        self.accessory = accessory
    }

    var discoveredDisplayItem: DiscoveredDisplayItem {
        DiscoveredDisplayItem(entryID: Int(accessory.entry.entry), name: name, productImage: productImage)
    }
}

/// How the next picker behaves (Apple's `ASPickerDisplaySettings`).
public final class ASPickerDisplaySettings: @unchecked Sendable {
    public typealias DiscoveryTimeout = PickerDisplaySettings.DiscoveryTimeout
    public typealias Options = PickerDisplaySettings.Options

    /// A new settings object with the defaults: a discovery timeout of 30 seconds, no options.
    public class var `default`: ASPickerDisplaySettings { ASPickerDisplaySettings() }

    public var discoveryTimeout: DiscoveryTimeout
    public var options: Options
    /// Not in Apple's API: how long the application has to finish a `confirmAuthorization` setup.
    public var authorizationTimeout: Duration
    /// Not in Apple's API: the network the picker says the accessory will be given.
    public var sharedNetwork: PickerDisplaySettings.SharedNetwork?

    public init() {
        let defaults = PickerDisplaySettings()
        discoveryTimeout = defaults.discoveryTimeout
        options = defaults.options
        authorizationTimeout = defaults.authorizationTimeout
        sharedNetwork = defaults.sharedNetwork
    }

    var pickerDisplaySettings: PickerDisplaySettings {
        PickerDisplaySettings(
            discoveryTimeout: discoveryTimeout, options: options, authorizationTimeout: authorizationTimeout,
            sharedNetwork: sharedNetwork)
    }
}

/// What the application learned while finishing an accessory's setup (Apple's
/// `ASAccessorySettings`), for `finishAuthorization(for:settings:)`.
public final class ASAccessorySettings: @unchecked Sendable {
    /// A new settings object with nothing set.
    public class var `default`: ASAccessorySettings { ASAccessorySettings() }

    /// The accessory's hotspot, when the picker did not find it by one.
    public var ssid: String?
    /// The 6-byte classic-transport identifier for bridging.
    public var bluetoothTransportBridgingIdentifier: Data?

    public init() {}
}

extension MACAddress {
    /// The first bytes of a peripheral identifier: a version 8 UUID (RFC 9562) whose last six
    /// bytes are the device's address, so that a device keeps its identifier, as CoreBluetooth's
    /// do, and an identifier leads back to its device.
    private static let identifierPrefix = "4C494E55-5842-8000-8000-"

    /// The UUID `ASAccessory.bluetoothIdentifier` gives this address.
    var peripheralIdentifier: UUID {
        let hex = String(rawValue, radix: 16, uppercase: true)
        return UUID(uuidString: Self.identifierPrefix + String(repeating: "0", count: 12 - hex.count) + hex)!
    }

    /// The address a `peripheralIdentifier` names; `nil` for any other UUID.
    init?(peripheralIdentifier: UUID) {
        let text = peripheralIdentifier.uuidString.uppercased()
        guard text.hasPrefix(Self.identifierPrefix), let value = UInt64(text.dropFirst(24), radix: 16) else {
            return nil
        }
        self.init(rawValue: value)
    }
}
