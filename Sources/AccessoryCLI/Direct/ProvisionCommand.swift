import AccessoryCore
import AccessorySetupKit
import BlueZBackend
import NetworkManagerBackend
import ProvisioningCrypto
import ProvisioningHTTP

/// `accessoryctl provision`: gives an ESP-IDF device the home network over its SoftAP or over
/// Bluetooth LE, with ESP-IDF's unified provisioning (protocomm security 0, 1 or 2); with an
/// accessory id, any recorded accessory through the agent, as its profile says.
enum ProvisionCommand {
    static let command = Command(
        path: ["provision"],
        summary: "Give an accessory the home network: a recorded one through the agent, or an ESP-IDF device directly",
        discussion: """
            With an accessory id (as 'accessoryctl list' prints it), gives that accessory a
            Wi-Fi network through the agent, as its profile says (ESP-IDF, Improv Wi-Fi, or
            the vendor's own HTTP setup API: Shelly, Tasmota, WLED, ESPHome): joins its setup
            hotspot where it has one, gives it the network, confirms it, and leaves the hotspot,
            each step printed as it happens. This is how an accessory set up before learns a
            changed home passphrase (put it back in setup mode first). The network is the
            one named with --ssid and a passphrase from --passphrase-file, else one this
            computer stores, which polkit confirms with you, naming it, before its passphrase
            is sent.

            Without an id, speaks ESP-IDF's unified provisioning over HTTP to a device whose setup hotspot this
            machine has joined (see 'join'), or with --bluetooth over Bluetooth LE GATT (the
            endpoints found by their user descriptions): reads its version and security scheme, opens a
            session (security 0; 1 with X25519 and the proof of possession; 2 with SRP-6a),
            lets the device scan, sends it the SSID and passphrase of the network it should
            join, and waits for its verdict: connected, a wrong passphrase, or a network it
            cannot find. The proof of possession and the passphrase come from files or standard
            input and are never printed.
            """,
        options: [
            .value("address", "HOST[:PORT]", help: "The device (default: 192.168.4.1:80, its SoftAP address)"),
            .value("bluetooth", "ADDRESS", help: "Provision over Bluetooth LE: the device's Bluetooth address"),
            BluetoothCommand.adapterOption,
            .number(
                "security", "0|1|2", NumberRange(0...2, "scheme"),
                help: "The security scheme to insist on (default: the one the device announces)"),
            .value("pop-file", "FILE", help: "Read the proof of possession from FILE (one line)"),
            .flag("pop-stdin", help: "Read the proof of possession from standard input"),
            .value("username", "NAME", help: "The security 2 username (default: wifiprov)"),
            .value("ssid", "SSID", help: "The network the device should join (default: the one this machine is on)"),
            .value("passphrase-file", "FILE", help: "Read the network's passphrase from FILE (one line)"),
            .flag("passphrase-stdin", help: "Read the network's passphrase from standard input"),
            .flag("open", help: "The network is open: send no passphrase"),
            .value(
                "device", "IFACE",
                help: "The Wi-Fi interface joined to the device's hotspot: the connection goes through it alone"),
            .number(
                "timeout", "SECONDS",
                NumberRange(
                    lowerBound: 1, upperBound: 600, isFractional: true,
                    unit: "seconds"),
                help: "How long the device may take to join (default: 60)"),
            .flag("json", help: "Print the result as JSON"),
        ],
        positionals: PositionalSpec(
            name: "ID", minimum: 0, maximum: 1, help: "An accessory's id, to give it a network through the agent",
            leadsWithAccessoryID: true),
        examples: [
            "\(AccessoryCtl.name) provision 6f1c2a4e-8d0b-4c1e-9a57-0b1d2c3e4f50   # through the agent, as its profile says",
            "\(AccessoryCtl.name) provision 6f1c2a4e-8d0b-4c1e-9a57-0b1d2c3e4f50 --ssid HomeNet --passphrase-file /root/home.pass",
            "\(AccessoryCtl.name) provision --security 2 --pop-file /root/plug.pop --ssid HomeNet "
                + "--passphrase-file /root/home.pass",
            "\(AccessoryCtl.name) provision --address 192.168.4.1:80 --pop-file /root/plug.pop --ssid HomeNet "
                + "--passphrase-stdin --json",
            "\(AccessoryCtl.name) provision --bluetooth 24:0A:C4:26:1F:CC --pop-file /root/plug.pop --ssid HomeNet "
                + "--passphrase-file /root/home.pass",
            "\(AccessoryCtl.name) provision --pop-file /root/plug.pop     # the network this machine is on, its stored passphrase",
        ],
        run: run)

    /// One provisioning: where the device is, how to authenticate, what network to give it.
    struct Request {
        var host: String
        var port: Int
        var bluetooth: MACAddress?
        var adapter: String?
        var security: Int?
        var proofOfPossession: Secret?
        var username: String
        /// `nil`: the network this machine is on (or `ssid`), read from NetworkManager.
        var credentials: WiFiCredentials?
        var ssid: SSID?
        var device: String?
        var timeout: Duration
    }

    /// What `--json` prints.
    struct Report: Encodable {
        var address: String
        var version: String?
        var security: Int?
        var ssid: String
        /// `connected`, `failed` (the device's verdict), or `error`.
        var state: String
        var reason: String?
        var ipv4Address: String?
        var error: String?
        /// For a person: the device's address, security and channel on the network.
        var details: String?

        private enum CodingKeys: String, CodingKey {
            case address, version, security, ssid, state, reason, ipv4Address, error
        }
    }

    private static func parse(_ arguments: ParsedArguments, _ console: Console) throws(UsageError) -> Request {
        let address = arguments.value("address") ?? "\(HTTPProvisioningTransport.defaultHost)"
        guard let (host, port) = HTTPProvisioningTransport.parseAddress(address) else {
            throw UsageError("--address: '\(address)' is not HOST[:PORT]")
        }
        var bluetooth: MACAddress?
        if let text = arguments.value("bluetooth") {
            if arguments.value("address") != nil { throw UsageError("give --address or --bluetooth, not both") }
            do { bluetooth = try MACAddress(text) } catch { throw UsageError("--bluetooth: \(error)") }
        } else if arguments.value("adapter") != nil {
            throw UsageError("--adapter goes with --bluetooth")
        }
        var ssid: SSID?
        if let text = arguments.value("ssid") {
            do { ssid = try SSID(notation: text) } catch { throw UsageError("--ssid: \(error)") }
        }
        if arguments.flag("pop-stdin") && arguments.flag("passphrase-stdin") {
            throw UsageError("only one of --pop-stdin and --passphrase-stdin can read standard input")
        }
        let pop = try HotspotCommand.secret(
            arguments, option: "pop", what: "proof of possession",
            prompt: "Proof of possession: ", console)
        let passphrase = try HotspotCommand.passphrase(arguments, console)
        if arguments.flag("open") && passphrase != nil {
            throw UsageError("--open takes no passphrase")
        }
        var credentials: WiFiCredentials?
        if passphrase != nil || arguments.flag("open") {
            guard let ssid else { throw UsageError("with a passphrase or --open, name the network with --ssid") }
            credentials = WiFiCredentials(ssid: ssid.bytes, passphrase: passphrase ?? Secret(""))
        }
        let security = arguments.integer("security")
        if security == 0 && pop != nil { throw UsageError("security 0 takes no proof of possession") }
        if security == 2 && pop == nil {
            throw UsageError("security 2 needs the proof of possession: give --pop-file or --pop-stdin")
        }
        return Request(
            host: host, port: port, bluetooth: bluetooth, adapter: arguments.value("adapter"), security: security,
            proofOfPossession: pop,
            username: arguments.value("username") ?? ProvisioningSecurity.defaultUsername,
            credentials: credentials, ssid: ssid, device: arguments.value("device"),
            timeout: arguments.seconds("timeout") ?? .seconds(60))
    }

    /// Options that only a direct provisioning takes.
    static let directOnly = ["address", "bluetooth", "adapter", "security", "username", "device", "timeout"]

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        if let id = arguments.positionals.first {
            return await provisionThroughAgent(id, arguments, console)
        }
        var request: Request
        do {
            request = try parse(arguments, console)
            try request.credentials?.validate()
        } catch let error as UsageError {
            console.error("\(AccessoryCtl.name): error: \(error.message)")
            return .usage
        } catch {
            console.error("\(AccessoryCtl.name): error: \(error)")
            return .usage
        }
        if request.credentials == nil {
            do throws(HotspotError) {
                request.credentials = try await storedCredentials(ssid: request.ssid, device: request.device, console)
            } catch {
                return HotspotCommand.report(error, console)
            }
        }
        let report = await execute(request, console)
        if arguments.flag("json") {
            console.printJSON(report)
        } else if report.state == "connected" {
            console.print("The device joined '\(report.ssid)' (\(report.details ?? "")).")
        }
        return report.state == "connected" ? .success : .failure
    }

    /// Provisions the device and says how it went; an error is printed as it happens.
    static func execute(_ request: Request, _ console: Console) async -> Report {
        let ssid = (request.credentials?.ssid).flatMap { try? SSID(bytes: $0) }?.escaped ?? "?"
        let host = request.host.contains(":") ? "[\(request.host)]" : request.host
        let address = request.bluetooth?.description ?? "\(host):\(request.port)"
        var report = Report(address: address, ssid: ssid, state: "error")
        do throws(ProvisioningError) {
            let connection = try await provision(request, address: address, ssid: ssid, report: &report, console)
            report.state = "connected"
            report.ipv4Address = connection.ipv4Address
            report.details = "address \(connection.ipv4Address), \(connection.authMode), channel \(connection.channel)"
        } catch {
            if case .connectionFailed(_, let reason) = error {
                report.state = "failed"
                report.reason =
                    reason == .authError
                    ? "authError"
                    : reason == .networkNotFound
                        ? "networkNotFound"
                        : "\(reason.rawValue)"
            }
            report.error = error.description
            console.error("\(AccessoryCtl.name): error: \(error)")
        }
        return report
    }

    /// The network this machine is on (or `ssid`), with the passphrase NetworkManager stores.
    static func storedCredentials(ssid: SSID?, device: String?, _ console: Console) async throws(HotspotError)
        -> WiFiCredentials
    {
        let network = try await NetworkManagerClient.connect().storedNetwork(
            ssid: ssid, device: device, permitting: nil)
        let credentials = try network.credentials()
        console.error(
            "Giving the device '\(network.ssid)' with the passphrase of NetworkManager's profile '\(network.connectionID)'."
        )
        return credentials
    }

    private static func provision(
        _ request: Request, address: String, ssid: String, report: inout Report, _ console: Console
    ) async throws(ProvisioningError) -> WiFiConnection {
        guard let bluetooth = request.bluetooth else {
            let transport = HTTPProvisioningTransport(host: request.host, port: request.port, interface: request.device)
            return try await provision(request, over: transport, address: address, ssid: ssid, report: &report, console)
        }
        console.error("Connecting to \(bluetooth) over Bluetooth LE…")
        let bluez: BlueZClient
        do { bluez = try await BlueZClient.connect() } catch {
            throw .transport(endpoint: "connect", error.description)
        }
        let transport = try await BlueZProvisioningTransport.open(bluetooth, client: bluez, adapter: request.adapter)
        let outcome: Result<WiFiConnection, ProvisioningError>
        do throws(ProvisioningError) {
            outcome = .success(
                try await provision(request, over: transport, address: address, ssid: ssid, report: &report, console))
        } catch {
            outcome = .failure(error)
        }
        await transport.close()
        return try outcome.get()
    }

    private static func provision(
        _ request: Request, over transport: any ProvisioningTransport, address: String, ssid: String,
        report: inout Report,
        _ console: Console
    ) async throws(ProvisioningError) -> WiFiConnection {
        guard let credentials = request.credentials else {
            throw .invalidCredentials(field: "ssid", "no network to give the device")
        }
        let client = ProvisioningClient(transport: transport, crypto: try OpenSSLProvisioningCrypto())
        let outcome = try await client.provision(
            credentials,
            authentication: ProvisioningAuthentication(
                security: request.security, proofOfPossession: request.proofOfPossession, username: request.username),
            timeout: request.timeout
        ) { step in
            for line in Self.lines(step, address: address, ssid: ssid) { console.error(line) }
        }
        report.version = outcome.version.version
        report.security = outcome.scheme
        return outcome.connection
    }

    /// What a person reads of a step, on standard error.
    static func lines(_ step: ProvisioningStep, address: String, ssid: String) -> [TerminalText] {
        switch step {
        case .askingVersion:
            return ["Asking \(address) for its provisioning version…"]
        case .version(let version, _):
            let patch = version.impliedScheme == 2 ? " (patch \(version.securityPatchVersion))" : ""
            let capabilities = version.capabilities.isEmpty ? "none" : version.capabilities.joined(separator: ", ")
            let announced =
                version.securityScheme.map { "security \($0)\(patch)" }
                ?? "no security scheme announced (\(version.impliedScheme) by its capabilities)"
            return ["The device speaks \(version.version), \(announced); capabilities: \(capabilities)."]
        case .unencrypted(let proofIgnored):
            return (proofIgnored ? ["Security 0 takes no proof of possession; it is not sent."] : [])
                + ["Warning: security 0 sends the passphrase unencrypted; anyone on the hotspot can read it."]
        case .openingSession(let scheme, let username):
            return [
                scheme == 2
                    ? "Opening a security 2 session as '\(username)'…" : "Opening a security \(scheme) session…"
            ]
        case .sessionEstablished:
            return ["Session established."]
        case .scanning:
            return ["Asking the device to scan…"]
        case .scanned(let networks, let home?):
            return ["The device sees \(networks) networks; '\(ssid)' at \(home.rssi) dBm on channel \(home.channel)."]
        case .scanned(let networks, nil):
            return ["The device sees \(networks) networks, not '\(ssid)'; sending it anyway (it may be hidden)."]
        case .sendingCredentials:
            return ["Sending the credentials for '\(ssid)'…"]
        case .joining(nil):
            return ["The device is joining '\(ssid)'…"]
        case .joining(let remaining?):
            return ["Still joining; \(remaining) attempts left."]
        }
    }
}

extension ProvisionCommand {
    /// `provision ID`: the recorded accessory, through the agent (`ProvisionAccessory`).
    static func provisionThroughAgent(_ id: String, _ arguments: ParsedArguments, _ console: Console) async -> ExitCode
    {
        let options: AccessoryProvisioningOptions
        do throws(UsageError) {
            if let direct = directOnly.first(where: { arguments.values[$0] != nil || arguments.flag($0) }) {
                throw UsageError("--\(direct) is for a direct provisioning, not for an accessory id")
            }
            options = try ProvisionThroughAgent.networkOptions(arguments, console)
        } catch {
            console.error("\(AccessoryCtl.name): error: \(error.message)")
            console.error("Run '\(AccessoryCtl.name) provision --help' for the options.")
            return .usage
        }
        return await AgentCommand.run(console) { client throws(AgentFailure) in
            let accessory = try await client.accessory(id: id)
            return try await ProvisionThroughAgent.run(
                accessory, passphrase: nil, options, json: arguments.flag("json"), on: client, console)
        }
    }
}
