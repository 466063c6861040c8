import AccessoryCore
import DBusValues

/// What a join answers (`Manager1.JoinAccessory`, `Session1.JoinAccessoryHotspot`,
/// `Manager1.ApplyConfiguration`; docs/dbus-api.md): the agent writes it, its clients read it.
/// Read, every field is optional, so that a client reads an older or newer agent's reply.
public struct JoinReply: Sendable, Hashable {
    public var device: String?
    /// The SSID, escaped where it is not UTF-8 (`SSID.notation`).
    public var ssid: String?
    /// The NetworkManager profile made for the join, by name and UUID.
    public var connection: String?
    public var connectionUUID: String?
    public var bssid: String?
    public var ipv4Address: String?
    /// The profile that was active before, which leaving brings back; the host's callers only.
    public var previousConnection: String?
    /// The other Wi-Fi device, which stays on its network (`keptConnection`, the host's callers
    /// only) through the join.
    public var keptDevice: String?
    public var keptConnection: String?
    /// When NetworkManager restores the previous network by itself, in seconds since 1970.
    public var restoreDeadline: UInt64?
    /// The join was held for the record already, and is handed back.
    public var alreadyJoined = false

    public init(
        device: String?, ssid: String?, connection: String?, connectionUUID: String?, bssid: String? = nil,
        ipv4Address: String? = nil, previousConnection: String? = nil, keptDevice: String? = nil,
        keptConnection: String? = nil, restoreDeadline: UInt64? = nil, alreadyJoined: Bool = false
    ) {
        self.device = device
        self.ssid = ssid
        self.connection = connection
        self.connectionUUID = connectionUUID
        self.bssid = bssid
        self.ipv4Address = ipv4Address
        self.previousConnection = previousConnection
        self.keptDevice = keptDevice
        self.keptConnection = keptConnection
        self.restoreDeadline = restoreDeadline
        self.alreadyJoined = alreadyJoined
    }

    /// Reads the reply; what is missing or of another type is `nil`.
    public init(_ value: DBusValue?) {
        device = value?.field("device")?.string
        ssid = value?.field("ssid")?.string
        connection = value?.field("connection")?.string
        connectionUUID = value?.field("connectionUUID")?.string
        bssid = value?.field("bssid")?.string
        ipv4Address = value?.field("ipv4Address")?.string
        previousConnection = value?.field("previousConnection")?.string
        keptDevice = value?.field("keptDevice")?.string
        keptConnection = value?.field("keptConnection")?.string
        restoreDeadline = value?.field("restoreDeadline")?.int.flatMap(UInt64.init(exactly:))
        alreadyJoined = value?.field("alreadyJoined")?.bool ?? false
    }

    /// The `a{sv}` on the wire, with only the fields that are set.
    public var dbusValue: DBusValue {
        var fields = ReplyFields()
        fields.add("device", device)
        fields.add("ssid", ssid)
        fields.add("connection", connection)
        fields.add("connectionUUID", connectionUUID)
        fields.add("bssid", bssid)
        fields.add("ipv4Address", ipv4Address)
        fields.add("previousConnection", previousConnection)
        fields.add("keptDevice", keptDevice)
        fields.add("keptConnection", keptConnection)
        if let restoreDeadline { fields.entries.append(("restoreDeadline", .uint64(restoreDeadline))) }
        if alreadyJoined { fields.entries.append(("alreadyJoined", .boolean(true))) }
        return .vardict(fields.entries)
    }
}

/// What `Leave` answers: the agent writes it, its clients read it.
public struct LeaveReply: Sendable, Hashable {
    public var device: String?
    public var ssid: String?
    /// Whether the join's profile was deleted (a join-once profile, or one the join replaced).
    public var deleted = false
    /// The join had ended before the call (the hotspot went away); leaving cleaned up after it.
    public var alreadyEnded = false
    /// The profile brought back, or the one that did not come back.
    public var restored: String?
    public var notRestored: String?

    public init(
        device: String?, ssid: String?, deleted: Bool, alreadyEnded: Bool, restored: String?, notRestored: String?
    ) {
        self.device = device
        self.ssid = ssid
        self.deleted = deleted
        self.alreadyEnded = alreadyEnded
        self.restored = restored
        self.notRestored = notRestored
    }

    /// Reads the reply; what is missing or of another type is `nil` (or `false`).
    public init(_ value: DBusValue?) {
        device = value?.field("device")?.string
        ssid = value?.field("ssid")?.string
        deleted = value?.field("deleted")?.bool ?? false
        alreadyEnded = value?.field("alreadyEnded")?.bool ?? false
        restored = value?.field("restored")?.string
        notRestored = value?.field("notRestored")?.string
    }

    public var dbusValue: DBusValue {
        var fields = ReplyFields()
        fields.add("device", device)
        fields.entries.append(("deleted", .boolean(deleted)))
        fields.entries.append(("alreadyEnded", .boolean(alreadyEnded)))
        fields.add("ssid", ssid)
        fields.add("restored", restored)
        fields.add("notRestored", notRestored)
        return .vardict(fields.entries)
    }
}

/// An error as a dictionary (`PickerAgent1.Cancel`, `SetupProgress`'s failure, a session's
/// `PickerSetupFailed`): the agent writes it, its clients read it into `ASError`.
public struct ErrorReply: Sendable, Hashable {
    /// The D-Bus error name (`io.accessorysetup.Error.DiscoveryTimeout`).
    public var name: String
    /// Apple's `ASError.Code` value.
    public var code: Int32?
    public var message: String
    /// The field of the call the error is about, where one is.
    public var field: String?

    public init(name: String, code: Int32?, message: String, field: String? = nil) {
        self.name = name
        self.code = code
        self.message = message
        self.field = field
    }

    public init(_ error: AccessorySessionError) {
        self.init(
            name: error.dbusName, code: Int32(error.code.rawValue), message: error.description, field: error.field)
    }

    /// Reads the dictionary; `nil` when it names no error (the empty dictionary is "no error").
    /// A missing message is the name.
    public init?(_ value: DBusValue?) {
        guard let name = value?.field("name")?.string else { return nil }
        self.init(
            name: name, code: value?.field("code")?.int.flatMap(Int32.init(exactly:)),
            message: value?.field("message")?.string ?? name, field: value?.field("field")?.string)
    }

    public var dbusValue: DBusValue {
        var fields = ReplyFields()
        fields.add("name", name)
        if let code { fields.entries.append(("code", .int32(code))) }
        fields.add("message", message)
        fields.add("field", field)
        return .vardict(fields.entries)
    }
}

/// What `ProvisionAccessory` answers (docs/dbus-api.md): where the device joined, as its
/// protocol reported it. The agent writes it, its clients read it; read, every field is
/// optional.
public struct ProvisioningReply: Sendable, Hashable {
    /// The network given, escaped where it is not UTF-8 (`SSID.notation`).
    public var ssid: String?
    /// `espIDF`, `improvWiFi` or `http` (a vendor's own setup API).
    public var provisioningProtocol: String?
    /// The ESP-IDF provisioning version and security scheme the device spoke.
    public var version: String?
    public var security: UInt32?
    /// The device's address on the network (ESP-IDF, a vendor's setup that reports it).
    public var ipv4Address: String?
    /// The channel the device joined on (ESP-IDF).
    public var channel: Int32?
    /// `false` when the device took the network but left its hotspot before saying it joined
    /// (a vendor's setup that restarts the device); `nil` where the protocol itself confirms.
    public var confirmed: Bool?
    /// The device's MAC address as it reported it (a vendor's setup).
    public var macAddress: String?
    /// Where the device's own setup goes on (Improv).
    public var url: String?
    /// How long the agent's search for it on the home network may take, per its profile;
    /// `nil` when the profile names no service to find it by.
    public var seekSeconds: UInt32?

    public init(
        ssid: String? = nil, provisioningProtocol: String?, version: String? = nil, security: UInt32? = nil,
        ipv4Address: String? = nil, channel: Int32? = nil, confirmed: Bool? = nil, macAddress: String? = nil,
        url: String? = nil, seekSeconds: UInt32? = nil
    ) {
        self.ssid = ssid
        self.provisioningProtocol = provisioningProtocol
        self.version = version
        self.security = security
        self.ipv4Address = ipv4Address
        self.channel = channel
        self.confirmed = confirmed
        self.macAddress = macAddress
        self.url = url
        self.seekSeconds = seekSeconds
    }

    /// Reads the reply; what is missing or of another type is `nil`.
    public init(_ value: DBusValue?) {
        ssid = value?.field("ssid")?.string
        provisioningProtocol = value?.field("protocol")?.string
        version = value?.field("version")?.string
        security = value?.field("security")?.int.flatMap(UInt32.init(exactly:))
        ipv4Address = value?.field("ipv4Address")?.string
        channel = value?.field("channel")?.int.flatMap(Int32.init(exactly:))
        confirmed = value?.field("confirmed")?.bool
        macAddress = value?.field("macAddress")?.string
        url = value?.field("url")?.string
        seekSeconds = value?.field("seekSeconds")?.int.flatMap(UInt32.init(exactly:))
    }

    /// The `a{sv}` on the wire, with only the fields that are set.
    public var dbusValue: DBusValue {
        var fields = ReplyFields()
        fields.add("ssid", ssid)
        fields.add("protocol", provisioningProtocol)
        fields.add("version", version)
        if let security { fields.entries.append(("security", .uint32(security))) }
        fields.add("ipv4Address", ipv4Address)
        if let channel { fields.entries.append(("channel", .int32(channel))) }
        if let confirmed { fields.entries.append(("confirmed", .boolean(confirmed))) }
        fields.add("macAddress", macAddress)
        fields.add("url", url)
        if let seekSeconds { fields.entries.append(("seekSeconds", .uint32(seekSeconds))) }
        return .vardict(fields.entries)
    }
}

/// An `a{sv}` reply as it is written: only the fields that are set, in order.
private struct ReplyFields {
    var entries: [(String, DBusValue)] = []

    mutating func add(_ key: String, _ value: String?) {
        if let value { entries.append((key, .string(value))) }
    }
}
