import FoundationEssentials

/// How long the picker discovers and what the client sees of it: `ASPickerDisplaySettings`.
public struct PickerDisplaySettings: Hashable, Sendable {
    /// `ASPickerDisplaySettings.DiscoveryTimeout`.
    public enum DiscoveryTimeout: Hashable, Sendable {
        case duration(Duration)
        /// Discovery runs until the client calls `finishPickerDiscovery` (or the person ends it).
        case unbounded

        /// Apple's default: 30 seconds.
        public static let `default` = DiscoveryTimeout.duration(.seconds(30))
        /// Apple's `.short`, `.medium` and `.long` (about 1, 2 and 5 minutes).
        public static let short = DiscoveryTimeout.duration(.seconds(60))
        public static let medium = DiscoveryTimeout.duration(.seconds(120))
        public static let long = DiscoveryTimeout.duration(.seconds(300))
        /// The longest bounded timeout a client may ask for; longer is `unbounded`.
        public static let maximum = Duration.seconds(3600)
    }

    /// `ASPickerDisplaySettings.Options`, with Apple's raw values.
    public struct Options: OptionSet, Hashable, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// Matches go to the client as `accessoryDiscovered` events; only what it passes to
        /// `updatePicker` is shown.
        public static let filterDiscoveryResults = Options(rawValue: 1)
    }

    /// The network the client will ask to give the picked accessory (`shareNetwork`), so that
    /// the picker says so, in the words polkit's dialog will use, before the person confirms.
    public enum SharedNetwork: Hashable, Sendable {
        /// The network this computer is on.
        case current
        case ssid(SSID)
    }

    public var discoveryTimeout: DiscoveryTimeout
    public var options: Options
    public var sharedNetwork: SharedNetwork?
    /// How long the picker of a `confirmAuthorization` item waits, once the accessory is added,
    /// for the client to finish or fail its authorization. Apple's picker has no such bound; a
    /// system service must not wait on a client forever.
    public var authorizationTimeout: Duration

    /// The default `authorizationTimeout`: two minutes.
    public static let defaultAuthorizationTimeout = Duration.seconds(120)

    public init(
        discoveryTimeout: DiscoveryTimeout = .default, options: Options = [],
        authorizationTimeout: Duration = defaultAuthorizationTimeout, sharedNetwork: SharedNetwork? = nil
    ) {
        self.discoveryTimeout = discoveryTimeout
        self.options = options
        self.authorizationTimeout = authorizationTimeout
        self.sharedNetwork = sharedNetwork
    }
}

/// An accessory set up before this agent, to adopt into the records: `ASMigrationDisplayItem`.
/// At least one of `hotspotSSID` and `peripheralAddress` is set.
public struct MigrationDisplayItem: Hashable, Sendable {
    public var item: PickerDisplayItem
    /// The full SSID of an existing NetworkManager profile; `item.descriptor` must match it.
    public var hotspotSSID: SSID?
    /// The address of a device BlueZ knows; `item.descriptor` must match its advertisement.
    public var peripheralAddress: MACAddress?

    public init(item: PickerDisplayItem, hotspotSSID: SSID? = nil, peripheralAddress: MACAddress? = nil) {
        self.item = item
        self.hotspotSSID = hotspotSSID
        self.peripheralAddress = peripheralAddress
    }
}

/// What the agent found on the system for one migration item.
public struct MigrationLookup: Hashable, Sendable {
    /// Whether NetworkManager has a profile for the item's `hotspotSSID`.
    public var hasHotspotProfile: Bool
    /// The item's peripheral as BlueZ describes it, when BlueZ knows the device.
    public var peripheral: BLEAdvertisement?

    public init(hasHotspotProfile: Bool, peripheral: BLEAdvertisement? = nil) {
        self.hasHotspotProfile = hasHotspotProfile
        self.peripheral = peripheral
    }
}

/// A discovered device the client lets the picker show, named its own way:
/// `ASDiscoveredDisplayItem`.
public struct DiscoveredDisplayItem: Hashable, Sendable {
    /// The `PickerEntry.id` of the `accessoryDiscovered` event.
    public var entryID: Int
    public var name: String
    public var productImage: String?

    public init(entryID: Int, name: String, productImage: String? = nil) {
        self.entryID = entryID
        self.name = name
        self.productImage = productImage
    }
}

/// What the client learned while finishing an accessory's setup: `ASAccessorySettings`.
public struct AccessorySettings: Hashable, Sendable {
    /// The accessory's hotspot; a descriptor of the profile must match it.
    public var ssid: SSID?
    /// The 6-byte classic-transport identifier for bridging.
    public var bluetoothTransportBridgingIdentifier: MACAddress?

    public init(ssid: SSID? = nil, bluetoothTransportBridgingIdentifier: MACAddress? = nil) {
        self.ssid = ssid
        self.bluetoothTransportBridgingIdentifier = bluetoothTransportBridgingIdentifier
    }
}

/// `ASAccessory.RenameOptions`, with Apple's raw values.
public struct RenameOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The accessory's hotspot takes the new name as its SSID too.
    public static let ssid = RenameOptions(rawValue: 1)
}

/// Where a passphrase for the picked accessory's hotspot comes from.
public enum SuppliedPassphrase: Hashable, Sendable {
    /// Typed by the person into the picker.
    case secret(Secret)
    /// A root-only file the kiosk policy names; read when joining.
    case file(path: String)
}

/// Who chooses for a picker: a registered picker agent (a person), or the kiosk policy.
public enum PickerFrontEnd: Hashable, Sendable {
    case agent
    case kiosk(KioskPolicy.Policy)
}

/// A picker front end's answer.
public struct PickerChoice: Hashable, Sendable {
    public var entryID: Int
    /// The name the person gave the accessory, where its item offers `rename`.
    public var name: String?
    public var passphrase: SuppliedPassphrase?
    /// The proof of possession the person typed, where the profile says it is printed on the device.
    public var proofOfPossession: Secret?

    public init(
        entryID: Int, name: String? = nil, passphrase: SuppliedPassphrase? = nil, proofOfPossession: Secret? = nil
    ) {
        self.entryID = entryID
        self.name = name
        self.passphrase = passphrase
        self.proofOfPossession = proofOfPossession
    }
}
