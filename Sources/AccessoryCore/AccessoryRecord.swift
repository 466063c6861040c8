import FoundationEssentials

/// `ASAccessory.AccessoryState`, with Apple's raw values.
public enum AccessoryState: Int, Hashable, Sendable, CaseIterable {
    /// Invalid, or no longer authorized.
    case unauthorized = 0
    /// Picked, but the client has not finished authorization yet.
    case awaitingAuthorization = 10
    case authorized = 20

    public var name: String {
        switch self {
        case .unauthorized: "unauthorized"
        case .awaitingAuthorization: "awaitingAuthorization"
        case .authorized: "authorized"
        }
    }
}

extension AccessoryState: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let state = Self.allCases.first(where: { $0.name == name }) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown accessory state '\(name)'")
        }
        self = state
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}

/// The client an authorization belongs to: a user, the application of that user (a sandboxed
/// one's Flatpak id; `nil` for a process on the host), and the profile it set the accessory up
/// with. Records are kept apart by all three, as AccessorySetupKit keeps each app's apart.
public struct AccessoryOwner: Hashable, Sendable, Codable {
    public var uid: UInt32
    public var profileID: String
    /// The Flatpak application id of a sandboxed client; `nil` for a host process.
    public var application: String?

    public init(uid: UInt32, profileID: String, application: String? = nil) {
        self.uid = uid
        self.profileID = profileID
        self.application = application
    }
}

/// One accessory a person picked and what the agent knows of it: the counterpart of `ASAccessory`.
public struct AccessoryRecord: Hashable, Sendable, Codable, Identifiable {
    public var id: UUID
    public var displayName: String
    public var state: AccessoryState
    /// The accessory's hotspot, to join it later.
    public var ssid: SSID?
    /// The hotspot the accessory was found under, once the owner renamed it (`RenameAccessory`
    /// with the `ssid` option); `nil` while it was never renamed.
    public var foundSSID: SSID?
    /// The access point the accessory's hotspot was picked at (its MAC address).
    public var hotspotBSSID: MACAddress?
    /// The accessory's Bluetooth address as BlueZ reports it.
    public var bluetoothIdentifier: MACAddress?
    /// The 6-byte classic-transport identifier for bridging (`bluetoothTransportBridgingIdentifier`).
    public var bluetoothTransportBridgingIdentifier: MACAddress?
    /// The descriptor that matched when the accessory was picked.
    public var descriptor: DiscoveryDescriptor
    public var owner: AccessoryOwner
    public var created: Date
    public var changed: Date
    /// The NetworkManager profiles the agent made for the accessory, by UUID, the most recent
    /// last (at most `maximumConnectionUUIDs`): the only ones it removes with the record or
    /// believes the dispatcher about, whatever another client of NetworkManager writes in a
    /// profile's `user` setting.
    public var connectionUUIDs: [String] = []
    /// The network the accessory was given through the agent, and where it said it is on it.
    public var network: AccessoryNetwork?
    /// Where the accessory lives on the home network, as DNS-SD last resolved it.
    public var location: AccessoryLocation?

    public static let maximumConnectionUUIDs = 16

    public init(
        id: UUID = UUID(), displayName: String, state: AccessoryState, ssid: SSID? = nil,
        hotspotBSSID: MACAddress? = nil, bluetoothIdentifier: MACAddress? = nil,
        bluetoothTransportBridgingIdentifier: MACAddress? = nil,
        descriptor: DiscoveryDescriptor, owner: AccessoryOwner, created: Date = Date(), changed: Date? = nil
    ) {
        self.id = id
        self.displayName = displayName
        self.state = state
        self.ssid = ssid
        self.hotspotBSSID = hotspotBSSID
        self.bluetoothIdentifier = bluetoothIdentifier
        self.bluetoothTransportBridgingIdentifier = bluetoothTransportBridgingIdentifier
        self.descriptor = descriptor
        self.owner = owner
        self.created = created
        self.changed = changed ?? created
    }

    /// Whether the hotspot is no longer the one the accessory was found under. A passphrase the
    /// owner did not give with the join (the profile's fixed one, the kiosk policy's, the
    /// picker's, one the accessory revealed) is never offered to it.
    public var hotspotWasRenamed: Bool { foundSSID != nil && foundSSID != ssid }

    /// Whether `entry` is this accessory heard again: the same Bluetooth address, or an access
    /// point named as its hotspot is now or was when it was found. Only an authorization the
    /// owner still holds (authorized or awaiting authorization) claims a device, as
    /// AccessorySetupKit's picker leaves out what the app already added. Wi-Fi accessories are
    /// told apart by their hotspot's SSID, and units sharing one (every WLED is WLED-AP) by its
    /// BSSID, so that an added unit does not hide its siblings.
    public func isHeard(in entry: PickerEntry) -> Bool {
        guard state != .unauthorized else { return false }
        if let address = entry.bluetooth?.address, address == bluetoothIdentifier { return true }
        guard let wifi = entry.wifi, let ssid = wifi.ssid, ssid == self.ssid || ssid == foundSSID else { return false }
        // Units of one product share a setup SSID: the record's is the one at its BSSID.
        if let hotspotBSSID, ssid == self.ssid { return wifi.bssid == hotspotBSSID }
        return true
    }

    /// Adds a profile the agent made, keeping the most recent `maximumConnectionUUIDs`.
    public mutating func addConnection(_ uuid: String) {
        connectionUUIDs.removeAll { $0 == uuid }
        connectionUUIDs.append(uuid)
        connectionUUIDs.removeFirst(max(0, connectionUUIDs.count - Self.maximumConnectionUUIDs))
    }

    private enum CodingKeys: String, CodingKey {
        case id, displayName, state, ssid, foundSSID, hotspotBSSID, bluetoothIdentifier
        case bluetoothTransportBridgingIdentifier, descriptor, owner, created, changed, connectionUUIDs, network
        case location
    }

    /// Reads a stored record; the fields added since the first store format may be missing.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        displayName = try container.decode(String.self, forKey: .displayName)
        state = try container.decode(AccessoryState.self, forKey: .state)
        ssid = try container.decodeIfPresent(SSID.self, forKey: .ssid)
        foundSSID = try container.decodeIfPresent(SSID.self, forKey: .foundSSID)
        hotspotBSSID = try container.decodeIfPresent(MACAddress.self, forKey: .hotspotBSSID)
        bluetoothIdentifier = try container.decodeIfPresent(MACAddress.self, forKey: .bluetoothIdentifier)
        bluetoothTransportBridgingIdentifier = try container.decodeIfPresent(
            MACAddress.self, forKey: .bluetoothTransportBridgingIdentifier)
        descriptor = try container.decode(DiscoveryDescriptor.self, forKey: .descriptor)
        owner = try container.decode(AccessoryOwner.self, forKey: .owner)
        created = try container.decode(Date.self, forKey: .created)
        changed = try container.decode(Date.self, forKey: .changed)
        connectionUUIDs = try container.decodeIfPresent([String].self, forKey: .connectionUUIDs) ?? []
        network = try container.decodeIfPresent(AccessoryNetwork.self, forKey: .network)
        location = try container.decodeIfPresent(AccessoryLocation.self, forKey: .location)
    }
}

/// The network an accessory was given (`ProvisionAccessory`), with what the device said of
/// where it is: its address there (ESP-IDF), or the URL its own setup goes on at (Improv).
public struct AccessoryNetwork: Hashable, Sendable, Codable {
    public var ssid: SSID
    public var ipv4Address: String?
    public var url: String?
    /// The MAC address the device reported on its setup hotspot (a vendor's setup API), by
    /// which its announcement is known when it reported no address.
    public var macAddress: MACAddress?
    /// When the device reported it had joined.
    public var joined: Date

    public init(
        ssid: SSID, ipv4Address: String? = nil, url: String? = nil, macAddress: MACAddress? = nil, joined: Date
    ) {
        self.ssid = ssid
        self.ipv4Address = ipv4Address
        self.url = url
        self.macAddress = macAddress
        self.joined = joined
    }
}
