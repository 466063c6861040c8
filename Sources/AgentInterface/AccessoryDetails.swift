import AccessoryCore
import DBusValues
import FoundationEssentials

/// The accessory dictionary of the D-Bus API (`GetAccessory`, `ListAccessories`, the
/// `Session1` and `Manager1.Event` signals), written by the agent from a record and read by its
/// clients: `accessoryctl`, the desktop's windows, and `ASAccessory` in Apple's shape.
public struct AccessoryDetails: Sendable, Hashable, Identifiable {
    /// The record's id, stable for the accessory's life (lower-case UUID text).
    public var id: String
    public var displayName: String
    /// `AccessoryState`'s name: `authorized`, `awaitingAuthorization`, `unauthorized`.
    public var state: String
    /// Apple's raw value of the state.
    public var stateCode: UInt32?
    /// The installed profile the accessory was picked under (Apple: the app's bundle).
    public var profile: String
    /// The user the record belongs to.
    public var user: UInt32?
    /// The sandboxed application the record belongs to (its Flatpak id, as the agent
    /// established it); `nil` for a record of a process on the host. A host process of the user
    /// sees every application's records; an application, its own only.
    public var application: String?
    /// The hotspot's SSID, escaped where it is not UTF-8.
    public var ssid: String?
    /// The BSSID of the hotspot it was picked by: units of a product share an SSID, not this.
    public var hotspotBSSID: String?
    public var bluetoothIdentifier: String?
    public var bluetoothTransportBridgingIdentifier: String?
    /// The descriptor the accessory matched, as JSON (docs/dbus-api.md, "Conventions").
    public var descriptor: JSONValue
    /// When the record was made and last changed, in seconds since 1970.
    public var created: UInt64?
    public var changed: UInt64?
    /// The network the accessory was given through the agent, and where it said it is there.
    public var network: Network?
    /// Where the accessory lives on the home network, as DNS-SD found it there.
    public var location: Location?
    /// In an `accessoryChanged` event from NetworkManager's dispatcher: its hotspot connection
    /// went up or down.
    public var connection: Connection?
    /// The whole dictionary, for printing as it came (keys this version does not know
    /// included).
    public var json: JSONValue { received ?? dbusValue.jsonValue }
    /// The dictionary as it was read; `nil` for one made here from a record, which the agent
    /// encodes once, as it sends it.
    private var received: JSONValue?

    /// The dictionary of `record`, with what the dispatcher reported of its hotspot connection.
    public init(_ record: AccessoryRecord, connection: HotspotConnectionReport? = nil) {
        id = record.id.uuidString.lowercased()
        displayName = record.displayName
        state = record.state.name
        stateCode = UInt32(record.state.rawValue)
        profile = record.owner.profileID
        user = record.owner.uid
        application = record.owner.application
        ssid = record.ssid?.notation
        hotspotBSSID = record.hotspotBSSID?.description
        bluetoothIdentifier = record.bluetoothIdentifier?.description
        bluetoothTransportBridgingIdentifier = record.bluetoothTransportBridgingIdentifier?.description
        descriptor = BusCoding.encodedJSON(record.descriptor)
        created = Self.seconds(record.created)
        changed = Self.seconds(record.changed)
        network = record.network.map { network in
            Network(
                ssid: network.ssid.notation, joined: Self.seconds(network.joined), ipv4Address: network.ipv4Address,
                url: network.url, macAddress: network.macAddress?.description)
        }
        location = record.location.map { location in
            Location(
                service: location.service, instance: location.instance, hostname: location.hostname,
                addresses: location.addresses, port: location.port, seen: Self.seconds(location.seen))
        }
        self.connection = connection.map {
            Connection(state: $0.state.rawValue, device: $0.device, reason: $0.reason)
        }
    }

    /// Reads an accessory dictionary; `nil` when it carries no `id` (the empty dictionary).
    public init?(_ value: DBusValue) {
        guard let fields = value.members, let id = fields["id"]?.string else { return nil }
        self.id = id
        displayName = fields["displayName"]?.string ?? ""
        state = fields["state"]?.string ?? ""
        stateCode = fields["stateCode"]?.uint32
        profile = fields["profile"]?.string ?? ""
        user = fields["user"]?.uint32
        application = fields["application"]?.string
        ssid = fields["ssid"]?.string
        hotspotBSSID = fields["hotspotBSSID"]?.string
        bluetoothIdentifier = fields["bluetoothIdentifier"]?.string
        bluetoothTransportBridgingIdentifier = fields["bluetoothTransportBridgingIdentifier"]?.string
        descriptor = fields["descriptor"]?.jsonValue ?? .object([:])
        created = fields["created"]?.int.flatMap(UInt64.init(exactly:))
        changed = fields["changed"]?.int.flatMap(UInt64.init(exactly:))
        network = fields["network"].flatMap(Network.init)
        location = fields["location"].flatMap(Location.init)
        connection = fields["connection"].flatMap(Connection.init)
        received = value.jsonValue
    }

    /// The dictionary, as the agent sends it.
    public var dbusValue: DBusValue {
        var entries: [(String, DBusValue)] = [
            ("id", .string(id)), ("displayName", .string(displayName)), ("state", .string(state)),
        ]
        if let stateCode { entries.append(("stateCode", .uint32(stateCode))) }
        entries.append(("profile", .string(profile)))
        if let user { entries.append(("user", .uint32(user))) }
        entries.append(("descriptor", BusCoding.value(json: descriptor)))
        if let created { entries.append(("created", .uint64(created))) }
        if let changed { entries.append(("changed", .uint64(changed))) }
        if let application { entries.append(("application", .string(application))) }
        if let ssid { entries.append(("ssid", .string(ssid))) }
        if let hotspotBSSID { entries.append(("hotspotBSSID", .string(hotspotBSSID))) }
        if let bluetoothIdentifier { entries.append(("bluetoothIdentifier", .string(bluetoothIdentifier))) }
        if let bluetoothTransportBridgingIdentifier {
            entries.append(("bluetoothTransportBridgingIdentifier", .string(bluetoothTransportBridgingIdentifier)))
        }
        if let network { entries.append(("network", network.dbusValue)) }
        if let location { entries.append(("location", location.dbusValue)) }
        if let connection { entries.append(("connection", connection.dbusValue)) }
        return .vardict(entries)
    }

    private static func seconds(_ date: Date) -> UInt64 { UInt64(max(0, date.timeIntervalSince1970)) }

    /// A list of accessory dictionaries (`aa{sv}`), those without an `id` left out.
    public static func list(_ value: DBusValue?) -> [AccessoryDetails] {
        (value?.elements ?? []).compactMap(AccessoryDetails.init)
    }

    /// The network the accessory was given (`ProvisionAccessory`).
    public struct Network: Sendable, Hashable {
        public var ssid: String
        /// When, in seconds since 1970.
        public var joined: UInt64?
        /// Its address there, as the device reported it (ESP-IDF).
        public var ipv4Address: String?
        /// Where its own setup goes on (Improv).
        public var url: String?
        /// The MAC address it reported on its setup hotspot (a vendor's setup API).
        public var macAddress: String?

        var dbusValue: DBusValue {
            var fields: [(String, DBusValue)] = [("ssid", .string(ssid))]
            if let joined { fields.append(("joined", .uint64(joined))) }
            if let ipv4Address { fields.append(("ipv4Address", .string(ipv4Address))) }
            if let url { fields.append(("url", .string(url))) }
            if let macAddress { fields.append(("macAddress", .string(macAddress))) }
            return .vardict(fields)
        }
    }

    /// Where the accessory lives on the home network: the DNS-SD service it was found by.
    public struct Location: Sendable, Hashable {
        /// The service type, `_wled._tcp`.
        public var service: String
        public var instance: String
        public var hostname: String
        public var addresses: [String]
        public var port: UInt16
        /// When it was last seen there, in seconds since 1970.
        public var seen: UInt64?

        var dbusValue: DBusValue {
            var fields: [(String, DBusValue)] = [
                ("service", .string(service)), ("instance", .string(instance)), ("hostname", .string(hostname)),
                ("addresses", .strings(addresses)), ("port", .uint16(port)),
            ]
            if let seen { fields.append(("seen", .uint64(seen))) }
            return .vardict(fields)
        }

        /// As `--json` prints it.
        public var json: JSONValue {
            .object([
                "service": .string(service), "instance": .string(instance), "hostname": .string(hostname),
                "addresses": .array(addresses.map(JSONValue.string)), "port": .number(Double(port)),
            ])
        }
    }

    /// What NetworkManager's dispatcher reported of the accessory's hotspot connection.
    public struct Connection: Sendable, Hashable {
        /// `up` or `down`.
        public var state: String
        public var device: String?
        /// Why it went down, where NetworkManager says.
        public var reason: String?

        var dbusValue: DBusValue {
            var fields: [(String, DBusValue)] = [("state", .string(state))]
            if let device { fields.append(("device", .string(device))) }
            if let reason { fields.append(("reason", .string(reason))) }
            return .vardict(fields)
        }

        /// `hotspot connection down on wlan0: the network was not found`.
        public var summary: String {
            "hotspot connection \(state)" + (device.map { " on \($0)" } ?? "") + (reason.map { ": \($0)" } ?? "")
        }
    }
}

// The readers sit in extensions so that each type keeps its memberwise initializer.
extension AccessoryDetails.Network {
    init?(_ value: DBusValue) {
        guard let fields = value.members, let ssid = fields["ssid"]?.string else { return nil }
        self.ssid = ssid
        joined = fields["joined"]?.int.flatMap(UInt64.init(exactly:))
        ipv4Address = fields["ipv4Address"]?.string
        url = fields["url"]?.string
        macAddress = fields["macAddress"]?.string
    }
}

extension AccessoryDetails.Location {
    init?(_ value: DBusValue) {
        guard let fields = value.members, let service = fields["service"]?.string,
            let instance = fields["instance"]?.string, let hostname = fields["hostname"]?.string
        else { return nil }
        self.service = service
        self.instance = instance
        self.hostname = hostname
        addresses = fields["addresses"]?.elements.compactMap(\.string) ?? []
        port = fields["port"]?.int.flatMap(UInt16.init(exactly:)) ?? 0
        seen = fields["seen"]?.int.flatMap(UInt64.init(exactly:))
    }
}

extension AccessoryDetails.Connection {
    init?(_ value: DBusValue) {
        guard let fields = value.members, let state = fields["state"]?.string else { return nil }
        self.state = state
        device = fields["device"]?.string
        reason = fields["reason"]?.string
    }
}
