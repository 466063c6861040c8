import Foundation

/// python-dbusmock's NetworkManager on a private bus, with the project's template
/// (`templates/networkmanager_accessory.py`), driven through its `org.freedesktop.DBus.Mock` calls.
public final class NetworkManagerMock: @unchecked Sendable {
    public let bus: PrivateSystemBus
    private let mock: ServiceProcess
    /// Whether the bus was started for this mock, and so is stopped with it.
    private let ownsBus: Bool

    public static let template = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("templates/networkmanager_accessory.py").path

    /// Starts the mock on `shared`, a bus shared with other services, or on a bus of its own.
    public init(on shared: PrivateSystemBus? = nil, version: String = "1.42.4") throws {
        ownsBus = shared == nil
        let bus = try shared ?? PrivateSystemBus()
        self.bus = bus
        mock = try bus.startMock(
            "NetworkManager", owning: "org.freedesktop.NetworkManager",
            arguments: ["--template", Self.template, "-p", "{\"Version\": \"\(version)\"}"], logName: "dbusmock.log")
    }

    /// The mock's log: every D-Bus call it received.
    public var log: String { mock.log }

    /// Calls a method of the mock's control interface; arguments in GVariant text form.
    @discardableResult
    public func mockCall(_ method: String, _ arguments: [String]) throws -> String {
        try run(
            "/usr/bin/gdbus",
            [
                "call", "--system", "--dest", "org.freedesktop.NetworkManager", "--object-path", "/org/freedesktop",
                "--method", "org.freedesktop.DBus.Mock.\(method)",
            ] + arguments, environment: bus.environment)
    }

    /// Adds a Wi-Fi device (NetworkManager state 30, disconnected, by default); returns its path.
    @discardableResult
    public func addWiFiDevice(_ interface: String, state: UInt32 = 30) throws -> String {
        try objectPath(mockCall("AddAccessoryWiFiDevice", ["'\(interface)'", "'\(interface)'", "'\(state)'"]))
    }

    /// The security an access point advertises, as NetworkManager's AP flags and WPA / RSN flags.
    public enum Security: Sendable {
        case open, wep, wpa2, wpa3, transition, owe, enterprise

        var flags: (privacy: UInt32, wpa: UInt32, rsn: UInt32) {
            // NM_802_11_AP_SEC_*: PAIR_CCMP 0x8, GROUP_CCMP 0x80, KEY_MGMT_PSK 0x100,
            // KEY_MGMT_802_1X 0x200, KEY_MGMT_SAE 0x400, KEY_MGMT_OWE 0x800.
            switch self {
            case .open: (0, 0, 0)
            case .wep: (1, 0, 0)
            case .wpa2: (1, 0, 0x188)
            case .wpa3: (1, 0, 0x488)
            case .transition: (1, 0, 0x588)
            case .owe: (1, 0, 0x888)
            case .enterprise: (1, 0x288, 0x288)
            }
        }
    }

    /// Adds an access point in range of `device`; returns its path.
    @discardableResult
    public func addAccessPoint(
        _ device: String, name: String, ssid: [UInt8], bssid: String, frequency: UInt32 = 2412,
        strength: UInt8 = 70, security: Security = .open
    ) throws -> String {
        try objectPath(
            mockCall(
                "AddAccessPointWithFlags",
                accessPointArguments(device, name, ssid, bssid, frequency, strength, security)))
    }

    @discardableResult
    public func addAccessPoint(
        _ device: String, name: String, ssid: String, bssid: String, frequency: UInt32 = 2412,
        strength: UInt8 = 70, security: Security = .open
    ) throws -> String {
        try addAccessPoint(
            device, name: name, ssid: Array(ssid.utf8), bssid: bssid, frequency: frequency, strength: strength,
            security: security)
    }

    /// An access point that appears only when a scan probes for its SSID.
    public func addHiddenAccessPoint(
        _ device: String, name: String, ssid: String, bssid: String, security: Security = .open
    ) throws {
        try mockCall(
            "AddHiddenAccessPoint", accessPointArguments(device, name, Array(ssid.utf8), bssid, 2437, 60, security))
    }

    public func removeAccessPoint(_ device: String, _ accessPoint: String) throws {
        try mockCall("RemoveAccessPoint", ["'\(device)'", "'\(accessPoint)'"])
    }

    /// Adds Wi-Fi device `name` on the home network the tests come back to: HomeNet (WPA2, the
    /// strongest in range), its saved profile active. Returns the device's path.
    @discardableResult
    public func addWiFiDeviceOnHomeNet(_ name: String = "wlan0") throws -> String {
        let device = try addWiFiDevice(name)
        let home = try addAccessPoint(
            device, name: "home", ssid: "HomeNet", bssid: "02:00:00:00:00:01", strength: 90, security: .wpa2)
        try connectHomeNetwork(device, accessPoint: home, ssid: "HomeNet")
        return device
    }

    /// A saved profile for `ssid` (its id is the SSID), active on `device`: the network the machine was on.
    public func connectHomeNetwork(_ device: String, accessPoint: String, ssid: String) throws {
        let connection = try objectPath(
            mockCall("AddWiFiConnection", ["'\(device)'", "'home'", "'\(ssid)'", "'wpa-psk'"]))
        try mockCall(
            "AddActiveConnection",
            ["['\(device)']", "'\(connection)'", "'\(accessPoint)'", "'home_active'", "uint32 2"])
    }

    /// Makes joins of `ssid` fail with these NetworkManager state reasons.
    public func failActivations(of ssid: String, deviceReason: UInt32, connectionReason: UInt32 = 0) throws {
        try mockCall(
            "SetActivationFailure", [bytes(Array(ssid.utf8)), "uint32 \(deviceReason)", "uint32 \(connectionReason)"])
    }

    /// Deleting a profile of `ssid` fails because NetworkManager removed it meanwhile, as 1.42
    /// does with an in-memory profile once the checkpoint covering it is destroyed.
    public func raceDeletes(of ssid: String) throws {
        try mockCall("SetDeleteRace", [bytes(Array(ssid.utf8))])
    }

    /// The next checkpoint destroy fails with NetworkManager's "does not exist", as when another
    /// call destroyed it first.
    public func raceCheckpointDestroy() throws {
        try mockCall("SetCheckpointDestroyRace", [])
    }

    /// The next activation of a stored profile of `ssid` fails with these reasons, the one
    /// after succeeds.
    public func failNextActivation(of ssid: String, deviceReason: UInt32, connectionReason: UInt32 = 0) throws {
        try mockCall(
            "SetNextActivationFailure",
            [bytes(Array(ssid.utf8)), "uint32 \(deviceReason)", "uint32 \(connectionReason)"])
    }

    /// Activations of `ssid` fail as NetworkManager 1.42 fails a refused WPA3-SAE password
    /// (SSID_NOT_FOUND), the access point heard during the attempts, and scans refused afterwards.
    public func rejectActivationsInRange(of ssid: String) throws {
        try mockCall("SetActivationRejectedInRange", [bytes(Array(ssid.utf8))])
    }

    /// An activation of `ssid` is ended by NetworkManager stopping: the device goes unmanaged
    /// (reason "removed"), then the mock leaves the bus for good.
    public func stopDuringActivation(of ssid: String) throws {
        try mockCall("SetActivationEndedByStop", [bytes(Array(ssid.utf8))])
    }

    /// Activations of `ssid` come up to ip-config (the hotspot accepted the key), then fail with
    /// these reasons: by default, dropped with NetworkManager asking for secrets nobody gives
    /// (NO_SECRETS), as when a handshake is lost on a busy channel. With `once`, only the next
    /// activation does.
    public func dropLinkDuringActivation(
        of ssid: String, once: Bool, deviceReason: UInt32 = 7, connectionReason: UInt32 = 9
    ) throws {
        try mockCall(
            "SetActivationLinkDrop",
            [bytes(Array(ssid.utf8)), once ? "true" : "false", "uint32 \(deviceReason)", "uint32 \(connectionReason)"])
    }

    public func stallActivations(of ssid: String) throws {
        try mockCall("SetActivationStall", [bytes(Array(ssid.utf8))])
    }

    /// Gives the device of each join of `ssid` this IPv4 configuration (`address/prefix`), as
    /// the access point's DHCP server would; joins of other SSIDs get none.
    /// The defaults are `SetupHotspots`' network as its machine's first interface has it.
    public func giveIPv4(
        to ssid: String, address: String = SetupHotspots.machineAddress(0), prefix: Int = 24,
        gateway: String = SetupHotspots.deviceAddress
    ) throws {
        try mockCall(
            "SetActivationIPv4", [bytes(Array(ssid.utf8)), "'\(address)'", "uint32 \(prefix)", "'\(gateway)'"])
    }

    /// Makes joins of `ssid` fail as its access point goes out of range during the join.
    public func vanishDuringActivation(of ssid: String, accessPoint: String) throws {
        try mockCall("SetActivationVanish", [bytes(Array(ssid.utf8)), "objectpath '\(accessPoint)'"])
    }

    /// The device's connection goes down by itself, as when its access point goes away; with a
    /// `reason` (an `NMDeviceStateReason`), the device fails with it first.
    public func dropActiveConnection(on device: String, reason: UInt32 = 0) throws {
        let active = try objectPath(property(device, "org.freedesktop.NetworkManager.Device", "ActiveConnection"))
        try mockCall("DropActiveConnection", ["objectpath '\(active)'", "uint32 \(reason)"])
    }

    /// A checkpoint of `device` made through NetworkManager's own API, as nmstate or Cockpit
    /// make them; returns its path.
    @discardableResult
    public func createCheckpoint(of device: String, rollbackTimeout: UInt32 = 0) throws -> String {
        try objectPath(
            run(
                "/usr/bin/gdbus",
                [
                    "call", "--system", "--dest", "org.freedesktop.NetworkManager", "--object-path",
                    "/org/freedesktop/NetworkManager",
                    "--method", "org.freedesktop.NetworkManager.CheckpointCreate", "['\(device)']",
                    "uint32 \(rollbackTimeout)", "uint32 0",
                ], environment: bus.environment))
    }

    /// The checkpoints NetworkManager holds, by object path.
    public func checkpointPaths() throws -> [String] {
        Self.objectPaths(
            in: try property("/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager", "Checkpoints"))
    }

    /// The SSIDs each scan request probed for, oldest first (an empty list: a scan of everything).
    public func scanRequests() throws -> [[[UInt8]]] {
        // "([['4142'], []],)"
        let reply = try mockCall("GetScanRequests", [])
        guard let open = reply.firstIndex(of: "["), let close = reply.lastIndex(of: "]") else {
            throw HarnessError("unexpected reply '\(reply)'")
        }
        let body = reply[reply.index(after: open)..<close]
        return body.split(separator: "]", omittingEmptySubsequences: true).compactMap { group in
            guard group.contains("[") else { return nil }
            return group.split(separator: "'").enumerated().filter { $0.offset % 2 == 1 }.map { hex in
                stride(from: 0, to: hex.element.count, by: 2).map { offset in
                    let start = hex.element.index(hex.element.startIndex, offsetBy: offset)
                    return UInt8(hex.element[start..<hex.element.index(start, offsetBy: 2)], radix: 16)!
                }
            }
        }
    }

    /// A property of an object, in GVariant text form.
    public func property(_ path: String, _ interface: String, _ name: String) throws -> String {
        try run(
            "/usr/bin/gdbus",
            [
                "call", "--system", "--dest", "org.freedesktop.NetworkManager", "--object-path", path,
                "--method", "org.freedesktop.DBus.Properties.Get", interface, name,
            ], environment: bus.environment
        ).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The profiles NetworkManager holds, by object path.
    public func connectionPaths() throws -> [String] {
        let text = try property(
            "/org/freedesktop/NetworkManager/Settings", "org.freedesktop.NetworkManager.Settings", "Connections")
        return Self.objectPaths(in: text)
    }

    /// Every profile's settings, in GVariant text form (secrets are not among them).
    public func connectionSettings() throws -> [String] {
        try connectionPaths().map { path in
            try run(
                "/usr/bin/gdbus",
                [
                    "call", "--system", "--dest", "org.freedesktop.NetworkManager", "--object-path", path,
                    "--method", "org.freedesktop.NetworkManager.Settings.Connection.GetSettings",
                ], environment: bus.environment)
        }
    }

    /// Adds a Wi-Fi profile for `ssid` as any client NetworkManager lets add one could: tagged as
    /// this project's in its `user` setting (`userData`, GVariant text of each value; none: the
    /// person's own profile), for `permittedUser` alone when given, WPA2 with `psk` when given
    /// (a secret GetSettings leaves out and GetSecrets gives). Returns its UUID.
    @discardableResult
    public func addTaggedProfile(
        id: String, ssid: String, userData: [String: String], permittedUser: String? = nil, psk: String? = nil
    ) throws -> String {
        let uuid = UUID().uuidString.lowercased()
        let permissions = permittedUser.map { ", 'permissions': <['user:\($0):']>" } ?? ""
        let data = userData.sorted { $0.key < $1.key }.map { "'\($0.key)': '\($0.value)'" }.joined(separator: ", ")
        let user = userData.isEmpty ? "" : ", 'user': {'data': <{\(data)}>}"
        let security = psk.map { ", '802-11-wireless-security': {'key-mgmt': <'wpa-psk'>, 'psk': <'\($0)'>}" } ?? ""
        let settings = """
            {'connection': {'id': <'\(id)'>, 'uuid': <'\(uuid)'>, 'type': <'802-11-wireless'>\(permissions)}, \
            '802-11-wireless': {'ssid': <\(bytes(Array(ssid.utf8)))>}\(user)\(security)}
            """
        try run(
            "/usr/bin/gdbus",
            [
                "call", "--system", "--dest", "org.freedesktop.NetworkManager",
                "--object-path", "/org/freedesktop/NetworkManager/Settings",
                "--method", "org.freedesktop.NetworkManager.Settings.AddConnection", settings,
            ], environment: bus.environment)
        return uuid
    }

    /// Sets `key` of the `user` setting of the profile `id` to `value` (the others kept), as its
    /// user may through NetworkManager (`Update`).
    public func setUserData(ofProfile id: String, _ key: String, to value: String) throws {
        let script = """
            import sys, dbus
            bus = dbus.SystemBus()
            settings = bus.get_object('org.freedesktop.NetworkManager', '/org/freedesktop/NetworkManager/Settings')
            for path in settings.ListConnections(dbus_interface='org.freedesktop.NetworkManager.Settings'):
                connection = bus.get_object('org.freedesktop.NetworkManager', path)
                current = connection.GetSettings(dbus_interface='org.freedesktop.NetworkManager.Settings.Connection')
                if str(current['connection']['id']) != sys.argv[1]:
                    continue
                data = dict(current.get('user', {}).get('data', {}))
                data[sys.argv[2]] = sys.argv[3]
                connection.Update({'connection': current['connection'],
                                   'user': {'data': dbus.Dictionary(data, signature='ss')}},
                                  dbus_interface='org.freedesktop.NetworkManager.Settings.Connection')
                sys.exit(0)
            sys.exit('no profile ' + sys.argv[1])
            """
        try run("/usr/bin/python3", ["-c", script, id, key, value], environment: bus.environment)
    }

    public func activeConnectionPaths() throws -> [String] {
        Self.objectPaths(
            in: try property("/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager", "ActiveConnections"))
    }

    /// The id of the profile active on `device`, or `nil`.
    public func activeConnectionID(on device: String) throws -> String? {
        // A failed activation's object goes away on its own; read again if it went between the
        // two calls (the device then names another, or none).
        for attempt in 1...3 {
            let active = try objectPath(property(device, "org.freedesktop.NetworkManager.Device", "ActiveConnection"))
            guard active != "/" else { return nil }
            do {
                let id = try property(active, "org.freedesktop.NetworkManager.Connection.Active", "Id")
                return id.split(separator: "'").dropFirst().first.map(String.init)
            } catch _ where attempt < 3 {
                usleep(100_000)
            }
        }
        return nil
    }

    /// The id of the profile active on `device` once it is activated (state 2), or `nil`.
    public func activatedConnectionID(on device: String) throws -> String? {
        let active = try objectPath(property(device, "org.freedesktop.NetworkManager.Device", "ActiveConnection"))
        guard active != "/",
            try property(active, "org.freedesktop.NetworkManager.Connection.Active", "State").contains("<uint32 2>")
        else { return nil }
        return try activeConnectionID(on: device)
    }

    public func stop() {
        mock.stop()
        if ownsBus { bus.stop() }
    }

    private func accessPointArguments(
        _ device: String, _ name: String, _ ssid: [UInt8], _ bssid: String, _ frequency: UInt32, _ strength: UInt8,
        _ security: Security
    ) -> [String] {
        let flags = security.flags
        return [
            "'\(device)'", "'\(name)'", bytes(ssid), "'\(bssid)'", "uint32 \(frequency)", "byte \(strength)",
            "uint32 \(flags.privacy)", "uint32 \(flags.wpa)", "uint32 \(flags.rsn)",
        ]
    }

    private func bytes(_ value: [UInt8]) -> String {
        "[" + value.map { "byte \($0)" }.joined(separator: ", ") + "]"
    }

    private func objectPath(_ reply: String) throws -> String {
        guard let path = Self.objectPaths(in: reply).first else { throw HarnessError("no object path in '\(reply)'") }
        return path
    }

    static func objectPaths(in text: String) -> [String] {
        text.split(separator: "'").filter { $0.hasPrefix("/") }.map(String.init)
    }
}
