import FoundationEssentials

/// What a client may discover and how its accessories are set up: the counterpart of the
/// AccessorySetupKit keys in `Info.plist` plus the app's picker items. The file format is
/// documented in `profiles/README.md`.
public struct AccessoryProfile: Hashable, Sendable {
    public static let schemaVersion = 1

    public enum Transport: String, Hashable, Sendable, CaseIterable {
        case wifi, bluetooth
    }

    /// The Bluetooth values descriptors may use (`NSAccessorySetupBluetooth*`).
    public struct BluetoothDeclarations: Hashable, Sendable {
        public var services: [BluetoothUUID] = []
        public var names: [String] = []
        public var companyIdentifiers: [BluetoothCompanyIdentifier] = []

        public init(
            services: [BluetoothUUID] = [], names: [String] = [], companyIdentifiers: [BluetoothCompanyIdentifier] = []
        ) {
            self.services = services
            self.names = names
            self.companyIdentifiers = companyIdentifiers
        }
    }

    /// What happens after a person picks an accessory.
    public enum Handoff: String, Hashable, Sendable, CaseIterable {
        /// Discovery and authorization only.
        case none
        /// Join the accessory's setup hotspot, then return to the previous network.
        case joinHotspot
        /// Discover over Bluetooth LE, learn the hotspot over GATT, join it.
        case bluetoothToWiFi
        /// Give the accessory the home network over Bluetooth LE with Improv Wi-Fi.
        case improvWiFi
    }

    public var id: String
    public var vendor: String
    /// The sandboxed applications (Flatpak ids) that may open a session over the profile, as an
    /// app's own `Info.plist` is its alone; empty: none, only processes on the host. A host
    /// process may open any installed profile.
    public var applications: [String]
    public var supports: Set<Transport>
    public var bluetooth: BluetoothDeclarations
    public var hotspot: HotspotPolicy?
    public var handoff: Handoff
    /// How the hotspot is revealed over GATT; present exactly when `handoff` is `bluetoothToWiFi`.
    public var bluetoothHandoff: BluetoothHandoff?
    /// How the accessory is given the home network with ESP-IDF's provisioning, if the profile says.
    public var provisioning: ProvisioningSetup?
    /// How the accessory is given the home network through its vendor's HTTP setup API, if the
    /// profile says (`provisioning` with `"protocol": "http"`).
    public var httpProvisioning: HTTPProvisioning?
    /// Whether the profile's accessories may be given a network's passphrase without
    /// encryption (`unencryptedProvisioning`): Improv Wi-Fi always sends it in the clear, ESP-IDF
    /// does under security 0. Without it the agent refuses both before anything is sent.
    public var allowsUnencryptedProvisioning: Bool
    /// How the passphrase of the network an accessory is given travels to it: Improv sends it
    /// as it is; ESP-IDF's session encrypts it unless the profile accepts security 0; a vendor's
    /// plain HTTP is encrypted only by the hotspot's own passphrase, and one the vendor publishes
    /// (or none) protects nothing. `nil`: the profile gives its accessories no network.
    public var provisioningExposure: NetworkShareConsent.Exposure? {
        if handoff == .improvWiFi { return .unencrypted }
        if httpProvisioning != nil {
            switch hotspot?.passphrase {
            case .prompt?, .handoff?: return .encrypted
            case .none?, .fixed?, nil: return .unencrypted
            }
        }
        guard let provisioning else { return nil }
        return provisioning.minimumSecurity == 0 ? .unencryptedIfOffered : .encrypted
    }

    /// The DNS-SD services the accessory publishes once on the home network (`homeNetwork`).
    public var homeServices: [PublishedService]
    /// How long a device that took the network without saying it joined may take to be found
    /// there before a client reports it missing (`homeNetwork.within`).
    public var homeNetworkWithin: Duration = Self.defaultHomeNetworkWithin
    public static let defaultHomeNetworkWithin = Duration.seconds(120)
    public var items: [PickerDisplayItem]
    public var sources: [SourceReference]

    public init(
        id: String, vendor: String, applications: [String] = [], supports: Set<Transport>,
        bluetooth: BluetoothDeclarations = .init(), hotspot: HotspotPolicy? = nil, handoff: Handoff,
        bluetoothHandoff: BluetoothHandoff? = nil, provisioning: ProvisioningSetup? = nil,
        httpProvisioning: HTTPProvisioning? = nil, allowsUnencryptedProvisioning: Bool = false,
        homeServices: [PublishedService] = [],
        items: [PickerDisplayItem], sources: [SourceReference] = []
    ) {
        self.id = id
        self.vendor = vendor
        self.applications = applications
        self.supports = supports
        self.bluetooth = bluetooth
        self.hotspot = hotspot
        self.handoff = handoff
        self.bluetoothHandoff = bluetoothHandoff
        self.provisioning = provisioning
        self.httpProvisioning = httpProvisioning
        self.allowsUnencryptedProvisioning = allowsUnencryptedProvisioning
        self.homeServices = homeServices
        self.items = items
        self.sources = sources
    }

    /// Whether the sandboxed application `id` may open a session over the profile.
    public func admits(application id: String) -> Bool {
        applications.contains(id)
    }
}

/// How an accessory's setup hotspot is secured and where its passphrase comes from.
public struct HotspotPolicy: Hashable, Sendable {
    public enum Security: String, Hashable, Sendable, CaseIterable {
        case open, wep, wpa2Personal, wpa3Personal, owe

        var needsPassphrase: Bool { self != .open && self != .owe }
    }

    public enum PassphraseSource: Hashable, Sendable {
        case none
        /// A default the vendor publishes.
        case fixed(Secret)
        /// Asked of the person, for example a code printed on the label.
        case prompt(hint: String?)
        /// Learned from the accessory during the Bluetooth handoff.
        case handoff
    }

    public var security: Security
    public var passphrase: PassphraseSource
    public var joinOnce: Bool
    public var lifetimeInDays: Int?
    public var hidden: Bool

    public init(
        security: Security, passphrase: PassphraseSource, joinOnce: Bool = true, lifetimeInDays: Int? = nil,
        hidden: Bool = false
    ) {
        self.security = security
        self.passphrase = passphrase
        self.joinOnce = joinOnce
        self.lifetimeInDays = lifetimeInDays
        self.hidden = hidden
    }

    /// The configuration to join `target` with, once the passphrase is known.
    public func configuration(for target: HotspotConfiguration.Target, passphrase: Secret?)
        throws(HotspotConfigurationError) -> HotspotConfiguration
    {
        let secret = passphrase ?? Secret("")
        let security: HotspotSecurity
        switch self.security {
        case .open: security = .open
        case .owe: security = .owe
        case .wep: security = .wep(secret)
        case .wpa2Personal: security = .wpa2Personal(secret)
        case .wpa3Personal: security = .wpa3Personal(secret)
        }
        return try HotspotConfiguration(
            target: target, security: security, joinOnce: joinOnce, lifetimeInDays: lifetimeInDays, hidden: hidden)
    }
}

/// How an accessory is given the home network with ESP-IDF's unified provisioning: over its
/// setup hotspot (HTTP, once joined) or over Bluetooth LE (GATT). A profile's `provisioning`.
public struct ProvisioningSetup: Hashable, Sendable {
    public enum Transport: String, Hashable, Sendable, CaseIterable {
        /// HTTP on the accessory's setup hotspot, joined first.
        case softAP
        /// GATT, endpoints named by their user descriptions.
        case bluetooth
    }

    public static let defaultAddress = "192.168.4.1:80"
    public static let defaultMinimumSecurity = 1

    public var transport: Transport
    /// `HOST:PORT` of the HTTP server on the hotspot (SoftAP only).
    public var address: String
    /// The protocomm security scheme to insist on; `nil`: the one the device announces.
    public var security: Int?
    /// The least scheme the agent accepts from a device (`minimumSecurity`, by default 1): a
    /// device announcing less is refused before anything is sent. From 1 up a proof of
    /// possession is required too, without which any device nearby could run the session.
    public var minimumSecurity: Int
    /// The security 2 username; `nil`: ESP-IDF's default.
    public var username: String?
    /// Where the proof of possession comes from; `nil`: from the application, if the device
    /// asks for one.
    public var proofOfPossession: ProofOfPossessionSource?

    /// Where an accessory's proof of possession comes from.
    public enum ProofOfPossessionSource: Hashable, Sendable {
        /// Printed on the device or its box: the picker asks the person, showing the hint.
        case prompt(hint: String?)
        /// A default the vendor publishes (`abcd1234` in ESP-IDF's examples).
        case fixed(Secret)
    }

    public init(
        transport: Transport, address: String = Self.defaultAddress, security: Int? = nil,
        minimumSecurity: Int = Self.defaultMinimumSecurity, username: String? = nil,
        proofOfPossession: ProofOfPossessionSource? = nil
    ) {
        self.transport = transport
        self.address = address
        self.security = security
        self.minimumSecurity = minimumSecurity
        self.username = username
        self.proofOfPossession = proofOfPossession
    }
}

/// Where a fact in a profile comes from.
public struct SourceReference: Hashable, Sendable {
    public var fact: String
    public var reference: String

    public init(fact: String, reference: String) {
        self.fact = fact
        self.reference = reference
    }
}

/// Why a profile file was refused: every fault found, each naming its field.
public enum ProfileError: Error, Hashable, Sendable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case invalid(path: String, issues: [FieldIssue])

    public var path: String {
        switch self {
        case .unreadable(let path, _), .invalid(let path, _): path
        }
    }

    /// The faults as `field: message`; an unreadable file is one fault about the whole file.
    public var issues: [FieldIssue] {
        switch self {
        case .unreadable(_, let reason): [FieldIssue(field: "(file)", message: reason)]
        case .invalid(_, let issues): issues
        }
    }

    /// One line per fault: `FILE: field: message`.
    public var description: String {
        issues.map { "\(path): \($0)" }.joined(separator: "\n")
    }
}
