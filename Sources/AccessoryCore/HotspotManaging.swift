import FoundationEssentials

/// Joining, leaving and forgetting accessory hotspots: the `NEHotspotConfigurationManager`
/// counterpart. The NetworkManager backend implements it. The agent joins, leaves, forgets,
/// lists and rescans through it alone (its Wi-Fi discovery also watches access points, on the
/// backend's client), as do `accessoryctl`'s direct Wi-Fi commands (`provision` also reads a
/// stored home network from the backend's client).
public protocol HotspotManaging: Sendable {
    func wifiDevices() async throws(HotspotError) -> [WiFiDevice]
    /// The access points a device hears; with `rescan`, after a fresh scan that also probes
    /// for the hidden networks `probing` names (at most `ScanProbe.limit` of them: the first).
    func accessPoints(device: String?, rescan: Bool, probing: [SSID]) async throws(HotspotError) -> [WiFiScanEntry]
    /// Joins the hotspot and returns once the connection is up, or throws why it is not.
    /// A failed join leaves no profile behind and the device back on its previous network.
    func join(_ configuration: HotspotConfiguration, options: JoinOptions) async throws(HotspotError) -> JoinedHotspot
    /// Leaves the accessory hotspot and brings the previous connection back. With `recorded`,
    /// only that join's connection is ended, and the previous one comes back only where its
    /// user may use it: the profile's own tags, which its user may edit, decide neither.
    func leave(device: String?, recorded: RecordedJoin?) async throws(HotspotError) -> LeftHotspot
    /// Removes the profiles this project made for `ssid`; returns what was removed.
    func forget(ssid: SSID) async throws(HotspotError) -> [ConfiguredHotspot]
    /// Removes the profiles of this project with these UUIDs, leaving those in use first;
    /// returns what was removed.
    func forget(connectionUUIDs: Set<String>) async throws(HotspotError) -> [ConfiguredHotspot]
    /// The profiles this project made, never the user's own. Leftovers of joins that ended
    /// without the project are cleaned up first: all of them, or with `cleaningUp`, only those
    /// with one of these UUIDs.
    func configuredHotspots(cleaningUp: Set<String>?) async throws(HotspotError) -> [ConfiguredHotspot]
    /// Removes this project's stored profiles whose `lifetimeInDays` ended by `now`, and nothing
    /// else; one in use (or whose join is still being ended) stays, for a later call.
    func removeExpiredHotspots(at now: Date) async throws(HotspotError) -> ExpiredHotspots
    /// The SSIDs of the Wi-Fi profiles stored in NetworkManager that are not this project's and
    /// that `user` may use: system profiles, and those whose `connection.permissions` name the
    /// user (another user's stay unseen); with no `user`, system profiles alone.
    func personalHotspotSSIDs(usableBy user: String?) async throws(HotspotError) -> Set<SSID>
    /// Whose secret each Wi-Fi profile NetworkManager stores for an SSID of `target` is (this
    /// project's profiles included): what an application's configuration must not take over.
    func profileHolders(of target: HotspotConfiguration.Target) async throws(HotspotError)
        -> [StoredNetwork.SecretHolder]
    /// The Wi-Fi network `device` is on (while it is joined to an accessory, the one the join
    /// returns to), or with `ssid` the stored profile for that SSID (the active one first), with
    /// the passphrase NetworkManager keeps: what an accessory is given as "the home network".
    /// With `user`, only a profile that user may use (system-wide, or naming them in
    /// `connection.permissions`); `nil`: any (root's own use). Reading secrets takes root.
    func storedNetwork(ssid: SSID?, device: String?, permitting user: String?) async throws(HotspotError)
        -> StoredNetwork
    /// The IPv4 networks `device` is on now, from its current IP configuration: none while it
    /// has none.
    func ipv4Subnets(device: String) async throws(HotspotError) -> [IPv4Subnet]
    /// Why the last connection of a device joined on ended, as NetworkManager said when it
    /// did; `nil` while one is up, or when it gave no reason.
    func disconnectReason(device: String) async -> String?
}

/// A network the machine knows, with the passphrase NetworkManager stores for it.
public struct StoredNetwork: Sendable {
    public var ssid: SSID
    /// The profile it comes from.
    public var connectionID: String
    /// The WPA or WEP key; `nil` for an open network or one whose secret NetworkManager does
    /// not keep (an agent-owned secret, 802.1X).
    public var passphrase: Secret?
    /// `802-11-wireless-security.key-mgmt`; `nil` for an open network.
    public var keyManagement: String?
    /// Whose secret the passphrase is, by NetworkManager's own rule for reading it back.
    public var holder: SecretHolder

    /// Whom NetworkManager lets read a profile's secrets (`GetSecrets`): the one user a
    /// profile is restricted to (`connection.permissions` naming that user alone, polkit's
    /// `settings.modify.own`), else an administrator (`settings.modify.system`): a system
    /// profile, or one several users share.
    public enum SecretHolder: Hashable, Sendable {
        case user(String)
        case system

        /// The holder of a profile whose `connection.permissions` name `users`.
        public init(permittedUsers users: [String]) {
            self = users.count == 1 ? .user(users[0]) : .system
        }
    }

    public init(
        ssid: SSID, connectionID: String, passphrase: Secret?, keyManagement: String?, holder: SecretHolder = .system
    ) {
        self.ssid = ssid
        self.connectionID = connectionID
        self.passphrase = passphrase
        self.keyManagement = keyManagement
        self.holder = holder
    }

    /// The credentials an accessory is given, or why this network cannot be given: its secret
    /// is not NetworkManager's to read (an agent's), or it is not a network a device joins
    /// with a passphrase (802.1X).
    public func credentials() throws(HotspotError) -> WiFiCredentials {
        switch keyManagement {
        case nil, "owe":
            break
        case "wpa-psk", "sae", "none":
            guard passphrase != nil else {
                throw .notStored("\(ssid) with a passphrase NetworkManager keeps (it is an agent's)")
            }
        default:
            throw .notStored("\(ssid) that a device can join: it uses \(keyManagement ?? "?")")
        }
        return WiFiCredentials(ssid: ssid.bytes, passphrase: passphrase ?? Secret(""))
    }
}

/// What NetworkManager's dispatcher reported of an accessory's hotspot connection.
public struct HotspotConnectionReport: Hashable, Sendable {
    public enum State: String, Hashable, Sendable {
        case up, down
    }

    public var state: State
    /// The interface the connection was on.
    public var device: String?
    /// Why it went down, where NetworkManager says ("the network was not found").
    public var reason: String?

    public init(state: State, device: String? = nil, reason: String? = nil) {
        self.state = state
        self.device = device
        self.reason = reason
    }
}

extension HotspotManaging {
    /// The access points a device hears; with `rescan`, after a fresh scan.
    public func accessPoints(device: String?, rescan: Bool) async throws(HotspotError) -> [WiFiScanEntry] {
        try await accessPoints(device: device, rescan: rescan, probing: [])
    }

    public func configuredHotspots() async throws(HotspotError) -> [ConfiguredHotspot] {
        try await configuredHotspots(cleaningUp: nil)
    }

    /// Leaves whichever accessory hotspot this project joined on `device`, as root's own tools do.
    public func leave(device: String?) async throws(HotspotError) -> LeftHotspot {
        try await leave(device: device, recorded: nil)
    }
}

/// What the agent recorded of a join it made, for leaving it.
public struct RecordedJoin: Hashable, Sendable {
    /// The NetworkManager profile the join made.
    public var connectionUUID: String
    /// The user it was made for, by name; `nil`: root, for whom any network may come back.
    public var user: String?

    public init(connectionUUID: String, user: String?) {
        self.connectionUUID = connectionUUID.lowercased()
        self.user = user
    }
}

/// A Wi-Fi interface as NetworkManager sees it.
public struct WiFiDevice: Hashable, Sendable, Codable {
    public var interface: String
    /// NetworkManager's device state, as `nmcli` names it (`disconnected`, `activated`, …).
    public var state: String
    public var hardwareAddress: String?
    /// The profile active on the device, if any.
    public var connection: String?
    /// That profile's UUID, as NetworkManager writes it.
    public var connectionUUID: String?
    /// The SSID of the access point the device is associated with.
    public var ssid: SSID?

    public init(
        interface: String, state: String, hardwareAddress: String? = nil, connection: String? = nil,
        connectionUUID: String? = nil, ssid: SSID? = nil
    ) {
        self.interface = interface
        self.state = state
        self.hardwareAddress = hardwareAddress
        self.connection = connection
        self.connectionUUID = connectionUUID
        self.ssid = ssid
    }
}

/// How to join.
public struct JoinOptions: Sendable {
    /// The interface to join on; the first Wi-Fi device when `nil`.
    public var device: String?
    /// How long association and addressing may take before the join is abandoned.
    public var timeout: Duration = .seconds(45)
    /// If nobody leaves the hotspot within this time of the join being up (a crash, a closed
    /// lid), NetworkManager itself restores the previous network (a checkpoint rollback); a join
    /// whose process dies before it is up is rolled back within this time of its death.
    /// Whole seconds, at least one. `nil`: never, and no checkpoint.
    public var restoreAfter: Duration? = .seconds(900)
    /// End a join-once connection when the joining D-Bus client leaves the bus.
    public var bindToClient = false
    /// The authorization record the connection belongs to, exported to dispatcher scripts.
    public var recordID: UUID?
    /// The owner of an application's configuration (`NEHotspotConfigurationManager.apply`),
    /// recorded in the profile: `1000`, or `1000/org.example.App` for a sandboxed application.
    public var owner: String?
    /// The user the profile belongs to (`connection.permissions`): no other user sees or uses
    /// it in NetworkManager; `nil`: a system profile, as for root's joins.
    public var permittedUser: String?
    /// Leftovers of this project's joins are cleaned up before joining: all of them, or with
    /// a set, only those with one of these UUIDs (the agent's own).
    public var cleaningUp: Set<String>?
    /// Called with each step of the join, for progress output.
    public var progress: (@Sendable (JoinStep) -> Void)?

    public init(device: String? = nil) {
        self.device = device
    }
}

/// The steps a join goes through.
public enum JoinStep: String, Sendable, Hashable {
    case scanning, checkpoint, adding, associating, configuringAddress
}

/// A hotspot the device is now connected to.
public struct JoinedHotspot: Hashable, Sendable, Codable {
    public var device: String
    public var ssid: SSID
    public var bssid: MACAddress?
    public var connectionID: String
    public var connectionUUID: String
    public var ipv4Address: String?
    /// The profile that was active before, which leaving brings back.
    public var previousConnection: String?
    /// When NetworkManager restores the previous network by itself if nobody leaves.
    public var restoreDeadline: Date?
    /// With no device named and another Wi-Fi device carrying the default route: that device,
    /// and the connection it keeps up through the join.
    public var keptDevice: String?
    public var keptConnection: String?

    public init(
        device: String, ssid: SSID, bssid: MACAddress?, connectionID: String, connectionUUID: String,
        ipv4Address: String?, previousConnection: String?, restoreDeadline: Date?, keptDevice: String? = nil,
        keptConnection: String? = nil
    ) {
        self.device = device
        self.ssid = ssid
        self.bssid = bssid
        self.connectionID = connectionID
        self.connectionUUID = connectionUUID
        self.ipv4Address = ipv4Address
        self.previousConnection = previousConnection
        self.restoreDeadline = restoreDeadline
        self.keptDevice = keptDevice
        self.keptConnection = keptConnection
    }
}

/// What leaving did.
public struct LeftHotspot: Hashable, Sendable, Codable {
    public var device: String
    public var ssid: SSID?
    /// Whether the accessory profile was deleted (join-once profiles are).
    public var deleted: Bool
    /// The previous connection that was brought back, if there was one.
    public var restored: String?
    /// The previous connection when it did not come back (its network out of range, say).
    public var notRestored: String?
    /// The accessory connection had already gone down (the hotspot went away, say), so
    /// leaving only cleaned up after it.
    public var alreadyEnded: Bool

    public init(
        device: String, ssid: SSID?, deleted: Bool, restored: String?, notRestored: String? = nil,
        alreadyEnded: Bool = false
    ) {
        self.device = device
        self.ssid = ssid
        self.deleted = deleted
        self.restored = restored
        self.notRestored = notRestored
        self.alreadyEnded = alreadyEnded
    }
}

/// What removing the expired profiles did: those removed, and those kept because they are in use.
public struct ExpiredHotspots: Hashable, Sendable, Codable {
    public var removed: [ConfiguredHotspot] = []
    public var inUse: [ConfiguredHotspot] = []

    public init(removed: [ConfiguredHotspot] = [], inUse: [ConfiguredHotspot] = []) {
        self.removed = removed
        self.inUse = inUse
    }
}

/// A NetworkManager profile this project made for an accessory hotspot.
public struct ConfiguredHotspot: Hashable, Sendable, Codable {
    public var ssid: SSID
    public var connectionID: String
    public var connectionUUID: String
    public var joinOnce: Bool
    public var expires: Date?
    public var recordID: UUID?
    public var active: Bool
    /// The owner tag of an application's configuration (`JoinOptions.owner`); `nil` for others.
    public var owner: String?
    /// `connection.permissions`' users; `nil` for a system profile.
    public var permittedUsers: [String]?
    /// The certificate and key files an enterprise profile names; `nil` for none.
    public var certificatePaths: [String]?

    public init(
        ssid: SSID, connectionID: String, connectionUUID: String, joinOnce: Bool, expires: Date?, recordID: UUID?,
        active: Bool, owner: String? = nil, permittedUsers: [String]? = nil, certificatePaths: [String]? = nil
    ) {
        self.certificatePaths = certificatePaths
        self.owner = owner
        self.permittedUsers = permittedUsers
        self.ssid = ssid
        self.connectionID = connectionID
        self.connectionUUID = connectionUUID
        self.joinOnce = joinOnce
        self.expires = expires
        self.recordID = recordID
        self.active = active
    }
}

/// Why joining, leaving or listing failed. Cases with a counterpart in
/// `NEHotspotConfigurationError` carry its name and raw value as `code`.
public enum HotspotError: Error, Hashable, Sendable, CustomStringConvertible {
    /// NetworkManager (or the configuration) refused the configuration.
    case invalidConfiguration(HotspotConfigurationError)
    case alreadyAssociated(SSID)
    /// Another accessory join is still in place on the device.
    case pending(device: String)
    case notAuthorized(String)
    case networkManagerUnavailable(String)
    case noWiFiDevice(String?)
    case wifiDisabled
    /// No access point with the SSID (or prefix) was found.
    case notFound(String)
    /// The access point picked (`bssid`) is not in range, and only others of its name are:
    /// nothing was joined, so nothing reaches a look-alike.
    case pickedAccessPointNotFound(SSID, bssid: MACAddress, others: [MACAddress])
    /// The hotspot refused the passphrase (NetworkManager: no secrets, supplicant disconnect).
    case wrongPassphrase(SSID)
    /// A secured hotspot that stayed in range turned the connection away without saying why
    /// (WPA3-SAE refusing a password shows this way): most likely a wrong passphrase.
    case authenticationRejected(SSID)
    case associationTimeout(SSID)
    /// Associated, but no address was obtained (DHCP failed).
    case addressingFailed(SSID)
    /// The connection failed for another reason NetworkManager gave.
    case activationFailed(SSID, reason: String)
    /// The join did not settle within the timeout.
    case timedOut(SSID, seconds: Int)
    case notJoined(device: String)
    case cancelled
    /// NetworkManager would not take a checkpoint of the device (another tool may hold one),
    /// so it could not promise to restore the previous network by itself.
    case checkpointRefused(device: String, reason: String)
    /// NetworkManager stopped or restarted while the join was in progress.
    case networkManagerRestarted
    /// NetworkManager holds no profile for the network named (to read its passphrase from).
    case notStored(String)
    /// Another user's or a system profile is for this SSID: an application's configuration
    /// may not stand beside it (`NEHotspotConfigurationError.systemConfiguration`).
    case systemConfiguration(SSID)
    case `internal`(String)

    /// A stable number: `NEHotspotConfigurationError`'s raw value where it has one, else 100 and up.
    public var code: Int {
        switch self {
        case .invalidConfiguration(let error): error.code
        case .alreadyAssociated: 13
        case .pending: 9
        case .notAuthorized: 7
        case .internal: 8
        case .networkManagerUnavailable: 100
        case .noWiFiDevice: 101
        case .wifiDisabled: 102
        case .notFound, .pickedAccessPointNotFound: 103
        case .wrongPassphrase: 104
        case .associationTimeout: 105
        case .addressingFailed: 106
        case .activationFailed: 107
        case .timedOut: 108
        case .notJoined: 109
        case .cancelled: 110
        case .authenticationRejected: 111
        case .checkpointRefused: 112
        case .networkManagerRestarted: 113
        case .notStored: 114
        case .systemConfiguration: 10
        }
    }

    /// The name the agent's D-Bus error carries (`WrongPassphrase`).
    public var errorName: String {
        let name =
            switch self {
            case .invalidConfiguration(let error): error.errorName
            case .alreadyAssociated: "AlreadyAssociated"
            case .pending: "Pending"
            case .notAuthorized: "NotAuthorized"
            case .networkManagerUnavailable: "NetworkManagerUnavailable"
            case .noWiFiDevice: "NoWiFiDevice"
            case .wifiDisabled: "WiFiDisabled"
            case .notFound, .pickedAccessPointNotFound: "NotFound"
            case .wrongPassphrase: "WrongPassphrase"
            case .associationTimeout: "AssociationTimeout"
            case .addressingFailed: "AddressingFailed"
            case .activationFailed: "ActivationFailed"
            case .timedOut: "TimedOut"
            case .notJoined: "NotJoined"
            case .cancelled: "Cancelled"
            case .authenticationRejected: "AuthenticationRejected"
            case .checkpointRefused: "CheckpointRefused"
            case .networkManagerRestarted: "NetworkManagerRestarted"
            case .notStored: "NotStored"
            case .systemConfiguration: "SystemConfiguration"
            case .internal: "Internal"
            }
        return name
    }

    public var description: String {
        switch self {
        case .invalidConfiguration(let error):
            "the configuration was refused: \(error)"
        case .alreadyAssociated(let ssid):
            "already connected to \(ssid)"
        case .pending(let device):
            "an accessory join is already in place on \(device); run 'accessoryctl leave' first"
        case .notAuthorized(let reason):
            "not authorized: \(reason)"
        case .networkManagerUnavailable(let reason):
            "NetworkManager is not reachable (\(reason)); is it running?"
        case .noWiFiDevice(let name?):
            "there is no Wi-Fi device named \(name) that NetworkManager manages"
        case .noWiFiDevice(nil):
            "NetworkManager manages no Wi-Fi device"
        case .wifiDisabled:
            "Wi-Fi is switched off; turn it on with 'nmcli radio wifi on'"
        case .notFound(let what):
            "no access point \(what) is in range"
        case .systemConfiguration(let ssid):
            "\(ssid) is a network of this computer's or of another user's, so an application may not configure it"
        case .pickedAccessPointNotFound(let ssid, let bssid, let others):
            "the access point picked, \(ssid) at \(bssid), is not in range; only other access points named "
                + "\(ssid) are (\(others.map(\.description).joined(separator: ", "))), and an accessory is joined "
                + "only where it was picked: bring it closer, or pick it again"
        case .wrongPassphrase(let ssid):
            "\(ssid) refused the passphrase; check it and try again"
        case .associationTimeout(let ssid):
            "\(ssid) did not accept the association in time; move closer or check the accessory is in setup mode"
        case .addressingFailed(let ssid):
            "joined \(ssid) but got no IP address from it (DHCP failed)"
        case .activationFailed(let ssid, let reason):
            "could not connect to \(ssid): \(reason)"
        case .timedOut(let ssid, let seconds):
            "connecting to \(ssid) did not finish within \(seconds) s"
        case .notJoined(let device):
            "\(device) is not connected to an accessory hotspot"
        case .cancelled:
            "cancelled"
        case .authenticationRejected(let ssid):
            "\(ssid) rejected the connection; the passphrase is most likely wrong"
        case .checkpointRefused(let device, let reason):
            "NetworkManager would not save the state of \(device) (\(reason)); another tool may be changing the "
                + "network. Try again later, or join with --restore-after 0 to go without the automatic restore"
        case .networkManagerRestarted:
            "NetworkManager stopped during the join; nothing of the join was kept"
        case .notStored(let what):
            "NetworkManager stores no Wi-Fi profile for \(what); name the network with --ssid and give its passphrase"
        case .internal(let reason):
            "NetworkManager failed: \(reason)"
        }
    }
}
