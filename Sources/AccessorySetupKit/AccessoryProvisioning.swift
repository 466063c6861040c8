import AccessoryCore
import AgentInterface
import BusService
import DBusValues

/// What network to give an accessory (`ProvisionAccessory`'s options).
public struct AccessoryProvisioningOptions: Sendable {
    /// The network; with no `passphrase` and not `open`, the profile the machine stores for it
    /// (polkit: `share-network`). `nil` too: the network the machine is on.
    public var ssid: SSID?
    public var passphrase: Secret?
    public var open = false
    /// As printed on the device or its box.
    public var proofOfPossession: Secret?
    /// How long the device may take to join, in seconds (1–600; the agent's default is 60).
    public var timeout: Int?

    public init(
        ssid: SSID? = nil, passphrase: Secret? = nil, open: Bool = false, proofOfPossession: Secret? = nil,
        timeout: Int? = nil
    ) {
        self.ssid = ssid
        self.passphrase = passphrase
        self.open = open
        self.proofOfPossession = proofOfPossession
        self.timeout = timeout
    }

    var dbusValue: DBusValue {
        var options: [(String, DBusValue)] = []
        if let ssid { options.append(("ssid", .string(ssid.notation))) }
        if let passphrase { options.append(("passphrase", .string(passphrase.reveal()))) }
        if open { options.append(("open", .boolean(true))) }
        if let proofOfPossession { options.append(("proofOfPossession", .string(proofOfPossession.reveal()))) }
        if let timeout { options.append(("timeout", .uint32(UInt32(clamping: timeout)))) }
        return .vardict(options)
    }
}

/// A step of a provisioning, as the agent signals it (`ProvisioningProgress`).
public struct AccessoryProvisioningStep: Sendable, Hashable {
    /// `connecting`, `session`, `scanned`, `awaitingAuthorization`, `joining`, … (docs/dbus-api.md).
    public var name: String
    public var details: [String: JSONValue]
}

/// What `ProvisionAccessory` answered: where the device joined.
public struct AccessoryProvisioningReport: Sendable, Hashable {
    /// The network given.
    public var ssid: String?
    /// `espIDF`, `improvWiFi` or `http` (a vendor's own setup API).
    public var provisioningProtocol: String?
    /// `false` when the device took the network but left its hotspot before saying it joined
    /// (a vendor's setup that restarts the device); `nil` where the protocol itself confirms.
    public var confirmed: Bool?
    /// The device's MAC address as it reported it (a vendor's setup).
    public var macAddress: String?
    /// How long the agent's search for it on the home network may take, per its profile
    /// (`homeNetwork.within`); `nil` when the profile names no service to find it by.
    public var seekSeconds: Int?
    /// The device's address on the network (ESP-IDF).
    public var ipv4Address: String?
    /// Where the device's own setup goes on (Improv).
    public var url: String?
    /// The whole answer, for printing as it came.
    public var json: JSONValue

    init(_ value: DBusValue?) {
        let reply = ProvisioningReply(value)
        ssid = reply.ssid
        provisioningProtocol = reply.provisioningProtocol
        ipv4Address = reply.ipv4Address
        url = reply.url
        confirmed = reply.confirmed
        macAddress = reply.macAddress
        seekSeconds = reply.seekSeconds.map(Int.init)
        json = .object((value?.members ?? [:]).mapValues(\.jsonValue))
    }
}

extension AgentConnection {
    /// Gives the accessory a Wi-Fi network (polkit: `provision`; a stored network:
    /// `share-network`) and returns the device's verdict; `progress` hears each step first.
    public func provisionAccessory(
        id: String, options: AccessoryProvisioningOptions = .init(),
        progress: @escaping @Sendable (AccessoryProvisioningStep) -> Void = { _ in }
    ) async throws(AgentCallError) -> AccessoryProvisioningReport {
        let signals = await signals(.manager)
        let listener = Task {
            for await signal in signals where signal.member == AgentBus.Manager1.Signal.provisioningProgress.name {
                let arguments = signal.arguments
                guard arguments.count == 3, arguments[0].string == id, let name = arguments[1].string else { continue }
                progress(
                    AccessoryProvisioningStep(name: name, details: (arguments[2].members ?? [:]).mapValues(\.jsonValue))
                )
            }
        }
        defer { listener.cancel() }
        let reply = try await manager(.provisionAccessory, [.string(id), options.dbusValue], timeout: .seconds(900))
        // Signals sent before the reply are delivered before it; give the listener its turn.
        await Task.yield()
        return AccessoryProvisioningReport(reply.first)
    }
}
