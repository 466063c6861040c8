import Foundation

/// python-dbusmock's BlueZ (`bluez5`) on a private bus, with the project's template
/// (`templates/bluez_accessory.py`): recorded discovery, advertising devices and an Improv device.
public final class BlueZMock: @unchecked Sendable {
    public let bus: PrivateSystemBus
    private let mock: ServiceProcess
    /// Whether the bus was started for this mock, and so is stopped with it.
    private let ownsBus: Bool

    public static let template = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("templates/bluez_accessory.py").path

    /// Starts the mock on `shared`, a bus shared with other services, or on a bus of its own.
    public init(on shared: PrivateSystemBus? = nil) throws {
        ownsBus = shared == nil
        let bus = try shared ?? PrivateSystemBus()
        self.bus = bus
        mock = try bus.startMock(
            "BlueZ", owning: "org.bluez", arguments: ["--template", Self.template], logName: "dbusmock-bluez.log")
    }

    /// Every D-Bus call the mock received.
    public var log: String { mock.log }

    @discardableResult
    public func mockCall(_ method: String, _ arguments: [String]) throws -> String {
        try call("/", "org.bluez.Mock", method, arguments)
    }

    @discardableResult
    public func call(_ path: String, _ interface: String, _ method: String, _ arguments: [String]) throws -> String {
        try run(
            "/usr/bin/gdbus",
            [
                "call", "--system", "--dest", "org.bluez", "--object-path", path, "--method", "\(interface).\(method)",
            ] + arguments, environment: bus.environment)
    }

    /// Adds a powered adapter that records its discovery calls; returns its path.
    @discardableResult
    public func addAdapter(_ name: String = "hci0") throws -> String {
        try Self.string(mockCall("AddAccessoryAdapter", [quoted(name), quoted("accessory-test")]))
    }

    public func setAdapterPower(_ name: String = "hci0", powered: Bool, powerState: String) throws {
        try mockCall("SetAdapterPower", [quoted(name), powered ? "true" : "false", quoted(powerState)])
    }

    /// The discovery calls an adapter received and the filters it was given.
    public struct AdapterLog: Decodable, Sendable {
        public var calls: [String]
        public var filters: [Filter]

        public struct Filter: Decodable, Sendable, Equatable {
            public var UUIDs: [String]?
            public var Transport: String?
            public var RSSI: Int?

            public init(UUIDs: [String]?, Transport: String?, RSSI: Int?) {
                self.UUIDs = UUIDs
                self.Transport = Transport
                self.RSSI = RSSI
            }
        }
    }

    public func adapterLog(_ name: String = "hci0") throws -> AdapterLog {
        try JSONDecoder().decode(
            AdapterLog.self, from: Data(Self.string(mockCall("GetAdapterLog", [quoted(name)])).utf8))
    }

    /// A device announced with its advertisement; an empty name means none. Returns its path.
    @discardableResult
    public func addDevice(
        _ address: String, adapter: String = "hci0", addressType: String = "public", name: String = "", rssi: Int = -60,
        uuids: [String] = [], manufacturerData: [UInt16: [UInt8]] = [:], serviceData: [String: [UInt8]] = [:]
    ) throws -> String {
        try Self.string(
            mockCall(
                "AddAdvertisingDevice",
                [
                    quoted(adapter), quoted(address), quoted(addressType), quoted(name), "int16 \(rssi)",
                    "@as [" + uuids.map(quoted).joined(separator: ", ") + "]",
                    Self.table(manufacturerData.map { ("uint16 \($0.key)", $0.value) }, type: "a{qay}"),
                    Self.table(serviceData.map { (quoted($0.key), $0.value) }, type: "a{say}"),
                ]))
    }

    public func updateAdvertisement(
        _ path: String, rssi: Int, manufacturerData: [UInt16: [UInt8]] = [:], serviceData: [String: [UInt8]] = [:]
    ) throws {
        try mockCall(
            "UpdateAdvertisement",
            [
                quoted(path), "int16 \(rssi)",
                Self.table(manufacturerData.map { ("uint16 \($0.key)", $0.value) }, type: "a{qay}"),
                Self.table(serviceData.map { (quoted($0.key), $0.value) }, type: "a{say}"),
            ])
    }

    /// BlueZ forgets the device (`Adapter1.RemoveDevice`, so `InterfacesRemoved`).
    public func removeDevice(_ path: String, adapter: String = "hci0") throws {
        try call("/org/bluez/\(adapter)", "org.bluez.Adapter1", "RemoveDevice", [quoted(path)])
    }

    /// An Improv device in `state` (1: authorization required, 2: authorized); returns its path.
    @discardableResult
    public func addImprovDevice(
        _ address: String, name: String = "Improv Plug", state: UInt8 = 2, capabilities: UInt8 = 0b111,
        adapter: String = "hci0"
    ) throws -> String {
        try Self.string(
            mockCall(
                "AddImprovDevice",
                [quoted(adapter), quoted(address), quoted(name), "byte \(state)", "byte \(capabilities)"]))
    }

    /// An Improv device BlueZ does not know yet: it is heard `after` the adapter's next
    /// `StartDiscovery`, and only if the adapter is still discovering then. Returns its future path.
    @discardableResult
    public func addImprovDeviceHeardLater(
        _ address: String, after delay: Duration, name: String = "Improv Plug", state: UInt8 = 2,
        adapter: String = "hci0"
    ) throws -> String {
        let milliseconds = delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
        return try Self.string(
            mockCall(
                "AddImprovDeviceHeardLater",
                [
                    quoted(adapter), quoted(address), quoted(name), "byte \(state)", "byte 7", "uint32 \(milliseconds)",
                ]))
    }

    public enum ImprovMode: String, Sendable {
        case normal, badChecksum = "bad-checksum", unknownRPC = "unknown-rpc", silent
    }

    public func setImprov(
        _ path: String, mode: ImprovMode? = nil, authorizeAfterMilliseconds: UInt32? = nil, failConnect: Bool? = nil,
        url: String? = nil
    ) throws {
        var options: [String] = []
        if let mode { options.append("'mode': <'\(mode.rawValue)'>") }
        if let authorizeAfterMilliseconds {
            options.append("'authorize_after_ms': <uint32 \(authorizeAfterMilliseconds)>")
        }
        if let failConnect { options.append("'fail_connect': <\(failConnect)>") }
        if let url { options.append("'url': <\(quoted(url))>") }
        try mockCall("SetImprovBehaviour", [quoted(path), "{" + options.joined(separator: ", ") + "}"])
    }

    /// The person presses the Improv device's button: its state becomes authorized.
    public func authorizeImprovDevice(_ path: String) throws {
        try mockCall("AuthorizeImprovDevice", [quoted(path)])
    }

    /// What the Improv device received.
    public struct ImprovLog: Decodable, Sendable {
        public var commands: [UInt8]
        public var packets: [[UInt8]]
        public var writeTypes: [String]
        public var ssid: String?
        public var password: String?
        public var state: UInt8
    }

    public func improvLog(_ path: String) throws -> ImprovLog {
        try JSONDecoder().decode(ImprovLog.self, from: Data(Self.string(mockCall("GetImprovLog", [quoted(path)])).utf8))
    }

    /// A device with one GATT service, described as the template's `AddGATTDevice` reads it.
    public struct GATTDeviceSpec: Encodable, Sendable {
        public struct Characteristic: Encodable, Sendable {
            public var uuid: String
            public var flags: [String]
            public var value: String
            /// The text of a User Description descriptor (0x2901), if it has one.
            public var description: String?
            /// Another service than the spec's to put the characteristic in.
            public var service: String?

            public init(
                _ uuid: String, flags: [String], value: [UInt8] = [], description: String? = nil, service: String? = nil
            ) {
                self.uuid = uuid
                self.flags = flags
                self.value = value.map { String(format: "%02x", $0) }.joined()
                self.description = description
                self.service = service
            }
        }

        /// Writing `write` makes `characteristic` take `value` (notified) `delayMs` later; with
        /// 0, before the write returns.
        public struct Answer: Encodable, Sendable {
            public var write: String
            public var characteristic: String
            public var value: String
            public var delayMs: Int

            public init(write: [UInt8], characteristic: String, value: [UInt8], delayMs: Int = 50) {
                self.write = write.map { String(format: "%02x", $0) }.joined()
                self.characteristic = characteristic
                self.value = value.map { String(format: "%02x", $0) }.joined()
                self.delayMs = delayMs
            }
        }

        public var service: String
        public var advertised: [String]
        public var characteristics: [Characteristic]
        public var answers: [Answer]

        public init(service: String, advertised: [String], characteristics: [Characteristic], answers: [Answer] = []) {
            self.service = service
            self.advertised = advertised
            self.characteristics = characteristics
            self.answers = answers
        }
    }

    @discardableResult
    public func addGATTDevice(_ address: String, name: String, spec: GATTDeviceSpec, adapter: String = "hci0") throws
        -> String
    {
        let json = String(decoding: try JSONEncoder().encode(spec), as: UTF8.self)
        return try Self.string(
            mockCall("AddGATTDevice", [quoted(adapter), quoted(address), quoted(name), quoted(json)]))
    }

    /// What a GATT device saw: pairing, and the writes and reads of its characteristics.
    public struct GATTLog: Decodable, Sendable {
        public var paired: Bool
        public var pairs: Int
        public var connected: Bool
        /// How often `Connect` made a link.
        public var connects: Int
        /// `[uuid, hex value]` in order.
        public var writes: [[String]]
        public var reads: [String]
        /// `[method, "accepted" or the error name]` for each question put to the pairing agent.
        public var agentCalls: [[String]]
    }

    /// Makes `Pair` on the device ask the last registered pairing agent (on `agentName`, by
    /// default the bus name that registered it): to show `passkey`, to confirm that both sides
    /// show `confirm` (numeric comparison), or, without either, for a passkey.
    public func setPairing(_ path: String, agentName: String? = nil, passkey: UInt32? = nil, confirm: UInt32? = nil)
        throws
    {
        var options: [String] = []
        if let agentName { options.append("'agentName': <\(quoted(agentName))>") }
        if let passkey { options.append("'passkey': <uint32 \(passkey)>") }
        if let confirm { options.append("'confirm': <uint32 \(confirm)>") }
        try mockCall("SetPairing", [quoted(path), "{" + options.joined(separator: ", ") + "}"])
    }

    /// The next `count` links to the device never get its services resolved.
    public func setUnresolvedLinks(_ path: String, _ count: UInt32) throws {
        try mockCall("SetUnresolvedLinks", [quoted(path), "uint32 \(count)"])
    }

    public func gattLog(_ path: String) throws -> GATTLog {
        try JSONDecoder().decode(GATTLog.self, from: Data(Self.string(mockCall("GetGATTLog", [quoted(path)])).utf8))
    }

    /// Reads and writes of the characteristic at `path` fail with `errorName` from now on.
    public func failCharacteristic(_ path: String, with errorName: String) throws {
        try mockCall("SetCharacteristicError", [quoted(path), quoted(errorName)])
    }

    public func stop() {
        mock.stop()
        if ownsBus { bus.stop() }
    }

    private func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    private static func table(_ entries: [(String, [UInt8])], type: String) -> String {
        "@\(type) {"
            + entries.map { "\($0.0): [" + $0.1.map { "byte \($0)" }.joined(separator: ", ") + "]" }.joined(
                separator: ", ") + "}"
    }

    /// The string of a one-string reply in GVariant text form: `('…',)`.
    static func string(_ reply: String) throws -> String {
        let text = reply.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("('") || text.hasPrefix("(\""), text.hasSuffix(",)") else {
            throw HarnessError("unexpected reply '\(text)'")
        }
        let quote = text.dropFirst().first!
        var body = String(text.dropFirst(2).dropLast(3))
        body = body.replacingOccurrences(of: "\\\(quote)", with: String(quote)).replacingOccurrences(
            of: "\\\\", with: "\\")
        return body
    }
}
