import AccessoryCore
import AgentInterface
import BlueZBackend
import BluetoothPairing
import BusService
import Dispatch
import FoundationEssentials
import Glibc
import NetworkManagerBackend
import ProvisioningHTTP

/// `accessoryctl handoff`: a profile's setup of one accessory, run directly on BlueZ and
/// NetworkManager (root): the Bluetooth-to-Wi-Fi handoff or the join of a setup hotspot, then,
/// where the profile says so, ESP-IDF provisioning with the home network.
enum HandoffCommand {
    static let command = Command(
        path: ["handoff"],
        summary: "Run a profile's setup of one accessory: its hotspot handoff, then provisioning",
        discussion: """
            Runs what the profile declares for one accessory. With handoff bluetoothToWiFi (a
            camera, say), TARGET is its Bluetooth address: connects over Bluetooth LE, pairs
            where the profile requires it (printing a code the accessory asks to have typed on
            it), switches the accessory's hotspot on, waits until it reports it ready, reads the
            SSID and passphrase it reveals, disconnects, and joins that hotspot as 'join --ssid'
            does. With handoff joinHotspot, TARGET is the setup hotspot's SSID, joined with the
            profile's security (and --passphrase-file where the profile asks for one).

            Where the profile has a provisioning section, the accessory is then given the home
            network with ESP-IDF's unified provisioning, over the joined hotspot or, for a
            Bluetooth provisioning profile, over Bluetooth LE to TARGET: the network this
            machine is on with the passphrase NetworkManager stores, or --home-ssid with
            --home-passphrase-file. Each step is printed, and the command ends with the
            device's own verdict; the hotspot is left and switched off afterwards.

            Without provisioning the hotspot stays joined: 'accessoryctl leave' brings the
            previous network back, and 'handoff TARGET --profile FILE --switch-off' switches
            the accessory's hotspot off. A failed join switches it off at once. No passphrase
            or proof of possession is ever printed.
            """,
        options: [
            .value("profile", "FILE", help: "The accessory's profile", required: true),
            .flag("switch-off", help: "Only switch the accessory's hotspot off (after 'leave')"),
            .value("passphrase-file", "FILE", help: "The setup hotspot's passphrase, where the profile asks for one"),
            .flag("passphrase-stdin", help: "Read the setup hotspot's passphrase from standard input"),
            .value("pop-file", "FILE", help: "Provisioning: read the proof of possession from FILE"),
            .flag("pop-stdin", help: "Provisioning: read the proof of possession from standard input"),
            .value(
                "home-ssid", "SSID",
                help: "Provisioning: the network to give the device (default: the one this machine is on)"),
            .value("home-passphrase-file", "FILE", help: "Provisioning: read that network's passphrase from FILE"),
            .flag("home-passphrase-stdin", help: "Provisioning: read that network's passphrase from standard input"),
            BluetoothCommand.adapterOption,
            HotspotCommand.deviceOption,
            BluetoothCommand.timeoutOption(
                "How long each Bluetooth step, the join and the provisioning may take (default: 60)"),
            .number(
                "restore-after", "SECONDS", NumberRange(0...86_400, "seconds"),
                help: "Restore the previous network this long after the join is up (default 900, 0: never)"),
            .flag("json", help: "Print the result as JSON"),
        ],
        positionals: PositionalSpec(
            name: "TARGET", minimum: 1, maximum: 1,
            help: "The accessory's Bluetooth address, or its setup hotspot's SSID"),
        examples: [
            "\(AccessoryCtl.name) handoff D4:D9:19:AA:BB:CC --profile /usr/share/accessory-setup/profiles/gopro.json",
            "\(AccessoryCtl.name) leave && \(AccessoryCtl.name) handoff D4:D9:19:AA:BB:CC --profile gopro.json --switch-off",
            "\(AccessoryCtl.name) handoff PROV_261FCC --profile esp-idf-provisioning-softap.json --pop-file /root/plug.pop",
        ],
        usage:
            "TARGET --profile FILE [--switch-off] [--pop-file FILE] [--home-ssid SSID --home-passphrase-file FILE] [OPTIONS]",
        run: run)

    /// What `--json` prints.
    struct Report: Encodable {
        var target: String
        var profile: String
        var joined: JoinedHotspot?
        var provisioned: ProvisionCommand.Report?
    }

    /// Where the handoff starts: the accessory over Bluetooth, or its setup hotspot.
    private enum Start {
        case bluetooth(MACAddress, BluetoothHandoff?)
        case hotspot(HotspotConfiguration)
    }

    private struct Plan {
        var profile: AccessoryProfile
        var start: Start
        var provisioning: ProvisionCommand.Request?
    }

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        let plan: Plan
        do {
            plan = try makePlan(arguments, console)
        } catch let error as UsageError {
            console.error("\(AccessoryCtl.name): error: \(error.message)")
            console.error("Run '\(AccessoryCtl.name) handoff --help' for the options.")
            return .usage
        } catch {
            console.error("\(AccessoryCtl.name): error: \(error)")
            return .usage
        }
        let steps = progress(arguments, console)
        if arguments.flag("switch-off") {
            return await switchOff(plan, arguments, console, steps)
        }
        var handoff = Handoff(plan: plan, arguments: arguments, console: console, steps: steps)
        return await handoff.run()
    }

    /// One handoff as it goes: the accessory's hotspot revealed over Bluetooth (or named),
    /// joined, the home network given to the accessory, then its hotspot left and switched off.
    private struct Handoff {
        let plan: Plan
        let arguments: ParsedArguments
        let console: Console
        let steps: @Sendable (HotspotHandoffStep) -> Void
        let adapter: String?
        let timeout: Duration
        var report: Report
        /// The accessory that revealed its hotspot over Bluetooth, to switch it off after.
        var revealedBy: (address: MACAddress, handoff: BluetoothHandoff, bluetooth: any BluetoothManaging)?
        /// NetworkManager, once the hotspot is joined.
        var network: (any HotspotManaging)?

        init(
            plan: Plan, arguments: ParsedArguments, console: Console,
            steps: @escaping @Sendable (HotspotHandoffStep) -> Void
        ) {
            self.plan = plan
            self.arguments = arguments
            self.console = console
            self.steps = steps
            adapter = arguments.value("adapter")
            timeout = arguments.seconds("timeout") ?? .seconds(60)
            report = Report(target: arguments.positionals[0], profile: plan.profile.id)
        }

        mutating func run() async -> ExitCode {
            var provisioning = plan.provisioning
            if var request = provisioning, request.credentials == nil {
                // Read before anything is switched on, so a missing secret costs nothing.
                do throws(HotspotError) {
                    request.credentials = try await ProvisionCommand.storedCredentials(
                        ssid: request.ssid, device: request.device, console)
                } catch {
                    return HotspotCommand.report(error, console)
                }
                provisioning = request
            }
            let configuration: HotspotConfiguration?
            do throws(HotspotHandoffError) {
                configuration = try await hotspot()
            } catch {
                HotspotCommand.clearProgress(console)
                return HandoffCommand.report(error, console)
            }
            if let configuration, let failed = await join(configuration) {
                return failed
            }
            guard let request = provisioning else {
                return finish(report, arguments, console)
            }
            return await provision(request)
        }

        /// The hotspot to join: named, or revealed by the accessory over Bluetooth; `nil` when
        /// the accessory is provisioned over Bluetooth alone.
        private mutating func hotspot() async throws(HotspotHandoffError) -> HotspotConfiguration? {
            switch plan.start {
            case .hotspot(let named):
                return named
            case .bluetooth(_, nil):
                return nil
            case .bluetooth(let address, let handoff?):
                let bluetooth = try await connectBlueZ()
                let revealed = try await bluetooth.revealHotspot(
                    address, handoff: handoff, adapter: adapter, timeout: timeout,
                    pair: pairer(bluetooth, adapter, console), progress: steps)
                revealedBy = (address, handoff, bluetooth)
                return try revealed.configuration(
                    policy: plan.profile.hotspot ?? HotspotPolicy(security: .open, passphrase: .none))
            }
        }

        /// Joins the hotspot; on failure switches it off again and returns the exit status.
        private mutating func join(_ configuration: HotspotConfiguration) async -> ExitCode? {
            steps(.joining)
            do throws(HotspotError) {
                let client = try await NetworkManagerClient.connect()
                var options = JoinOptions(device: arguments.value("device"))
                options.timeout = timeout
                if let seconds = arguments.seconds("restore-after") {
                    options.restoreAfter = seconds == .zero ? nil : seconds
                }
                report.joined = try await client.join(configuration, options: options)
                network = client
            } catch {
                HotspotCommand.clearProgress(console)
                // The accessory need not keep a hotspot nobody could join.
                await switchHotspotOff()
                return HandoffCommand.report(.join(error), console)
            }
            HotspotCommand.clearProgress(console)
            if let joined = report.joined {
                let ip = joined.ipv4Address.map { ", address \($0)" } ?? ""
                console.error(
                    "Joined \(joined.ssid.escaped) on \(joined.device) (profile '\(joined.connectionID)'\(ip)).")
            }
            return nil
        }

        /// Gives the accessory the home network (over its hotspot, through the interface joined
        /// to it alone), then leaves its hotspot and switches it off.
        private mutating func provision(_ request: ProvisionCommand.Request) async -> ExitCode {
            var request = request
            if request.bluetooth == nil, let joined = report.joined { request.device = joined.device }
            let provisioned = await ProvisionCommand.execute(request, console)
            if let joined = report.joined, let network {
                do {
                    let left = try await network.leave(device: joined.device)
                    console.error("Left \(joined.ssid.escaped)\(left.restored.map { "; back on '\($0)'" } ?? "").")
                } catch {
                    let leave = "\(AccessoryCtl.name) leave"
                    console.error(
                        "\(AccessoryCtl.name): warning: leaving \(joined.ssid.escaped) failed: \(error); run '\(leave)'"
                    )
                }
            }
            await switchHotspotOff()
            report.provisioned = provisioned
            if arguments.flag("json") {
                console.printJSON(report)
            } else if provisioned.state == "connected" {
                console.print("The device joined '\(provisioned.ssid)' (\(provisioned.details ?? "")).")
            }
            return provisioned.state == "connected" ? .success : .failure
        }

        private func switchHotspotOff() async {
            guard let (address, handoff, bluetooth) = revealedBy else { return }
            try? await bluetooth.switchHotspotOff(
                address, handoff: handoff, adapter: adapter, timeout: timeout,
                pair: pairer(bluetooth, adapter, console), progress: steps)
            HotspotCommand.clearProgress(console)
        }
    }

    // MARK: Parts

    private static func makePlan(_ arguments: ParsedArguments, _ console: Console) throws -> Plan {
        let path = arguments.value("profile")!
        let profile: AccessoryProfile
        do { profile = try AccessoryProfile.load(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw UsageError("\(error)")
        }
        let target = arguments.positionals[0]
        func address() throws -> MACAddress {
            do { return try MACAddress(target) } catch {
                throw UsageError(
                    "TARGET: profile \(profile.id) starts over Bluetooth, so TARGET is a Bluetooth address: \(error)")
            }
        }
        let start: Start
        switch profile.handoff {
        case .bluetoothToWiFi:
            start = .bluetooth(try address(), profile.bluetoothHandoff)
        case .joinHotspot:
            guard !arguments.flag("switch-off") else {
                throw UsageError("--switch-off: profile \(profile.id) has no hotspot to switch")
            }
            let ssid: SSID
            do { ssid = try SSID(notation: target) } catch { throw UsageError("TARGET: \(error)") }
            let passphrase = try HotspotCommand.passphrase(arguments, console)
            guard let policy = profile.hotspot else {
                throw UsageError("\(path): profile \(profile.id) has no hotspot")
            }
            if case .prompt(let hint) = policy.passphrase, passphrase == nil {
                throw UsageError(
                    "the hotspot's passphrase is asked for\(hint.map { " (\($0))" } ?? ""): give --passphrase-file or --passphrase-stdin"
                )
            }
            start = .hotspot(try policy.configuration(for: .ssid(ssid), passphrase: passphrase))
        case .none where profile.provisioning?.transport == .bluetooth:
            guard !arguments.flag("switch-off") else {
                throw UsageError("--switch-off: profile \(profile.id) has no hotspot to switch")
            }
            start = .bluetooth(try address(), nil)
        case .none, .improvWiFi:
            let hint = profile.handoff == .improvWiFi ? "; use 'accessoryctl improv provision'" : ""
            throw UsageError(
                "\(path): profile \(profile.id) has handoff \(profile.handoff.rawValue) and nothing to run here\(hint)")
        }
        return Plan(
            profile: profile, start: start, provisioning: try provisioningRequest(profile, start, arguments, console))
    }

    /// The provisioning the profile asks for, with the options' secrets; `nil` without one.
    private static func provisioningRequest(
        _ profile: AccessoryProfile, _ start: Start, _ arguments: ParsedArguments, _ console: Console
    ) throws -> ProvisionCommand.Request? {
        let options = ["pop-file", "pop-stdin", "home-ssid", "home-passphrase-file", "home-passphrase-stdin"]
        guard let setup = profile.provisioning, !arguments.flag("switch-off") else {
            if let given = options.first(where: { arguments.values[$0] != nil || arguments.flag($0) }) {
                throw UsageError(
                    "--\(given): profile \(profile.id) has no provisioning\(arguments.flag("switch-off") ? " to run with --switch-off" : "")"
                )
            }
            return nil
        }
        let stdinReaders = ["passphrase-stdin", "pop-stdin", "home-passphrase-stdin"].filter { arguments.flag($0) }
        if stdinReaders.count > 1 {
            throw UsageError(
                "only one of \(stdinReaders.map { "--\($0)" }.joined(separator: ", ")) can read standard input")
        }
        let pop = try HotspotCommand.secret(
            arguments, option: "pop", what: "proof of possession", prompt: "Proof of possession: ", console)
        let homePassphrase = try HotspotCommand.secret(
            arguments, option: "home-passphrase", what: "home network's passphrase",
            prompt: "Home network passphrase: ", console)
        var homeSSID: SSID?
        if let text = arguments.value("home-ssid") {
            do { homeSSID = try SSID(notation: text) } catch { throw UsageError("--home-ssid: \(error)") }
        }
        var credentials: WiFiCredentials?
        if let homePassphrase {
            guard let homeSSID else { throw UsageError("--home-passphrase-*: name the network with --home-ssid") }
            credentials = WiFiCredentials(ssid: homeSSID.bytes, passphrase: homePassphrase)
            try credentials?.validate()
        }
        if setup.security == 2 && pop == nil {
            throw UsageError(
                "profile \(profile.id) provisions with security 2, which needs the proof of possession: give --pop-file or --pop-stdin"
            )
        }
        var host = "", port = 0
        var bluetooth: MACAddress?
        switch (setup.transport, start) {
        case (.softAP, _):
            guard let (parsedHost, parsedPort) = HTTPProvisioningTransport.parseAddress(setup.address) else {
                throw UsageError("profile \(profile.id): provisioning.address '\(setup.address)' is not HOST:PORT")
            }
            (host, port) = (parsedHost, parsedPort)
        case (.bluetooth, .bluetooth(let address, _)):
            bluetooth = address
        case (.bluetooth, .hotspot):
            throw UsageError("profile \(profile.id) provisions over Bluetooth; TARGET must be a Bluetooth address")
        }
        return ProvisionCommand.Request(
            host: host, port: port, bluetooth: bluetooth, adapter: arguments.value("adapter"), security: setup.security,
            proofOfPossession: pop, username: setup.username ?? ProvisioningSecurity.defaultUsername,
            credentials: credentials,
            ssid: homeSSID, device: arguments.value("device"), timeout: arguments.seconds("timeout") ?? .seconds(60))
    }

    private static func switchOff(
        _ plan: Plan, _ arguments: ParsedArguments, _ console: Console,
        _ steps: @escaping @Sendable (HotspotHandoffStep) -> Void
    ) async -> ExitCode {
        guard case .bluetooth(let address, let handoff?) = plan.start else { return .usage }
        do throws(HotspotHandoffError) {
            let bluetooth = try await connectBlueZ()
            let adapter = arguments.value("adapter")
            try await bluetooth.switchHotspotOff(
                address, handoff: handoff, adapter: adapter, timeout: arguments.seconds("timeout") ?? .seconds(60),
                pair: pairer(bluetooth, adapter, console), progress: steps)
        } catch {
            HotspotCommand.clearProgress(console)
            return report(error, console)
        }
        HotspotCommand.clearProgress(console)
        console.print(
            handoff.switchOff == nil
                ? "Profile \(plan.profile.id) cannot switch the accessory's hotspot off; it stays as the accessory keeps it."
                : "Switched the hotspot of \(address) off.")
        return .success
    }

    private static func finish(_ report: Report, _ arguments: ParsedArguments, _ console: Console) -> ExitCode {
        if arguments.flag("json") {
            console.printJSON(report)
        } else if let joined = report.joined {
            let back: TerminalText = joined.previousConnection.map { " to return to '\($0)'" } ?? ""
            console.print(
                "Joined \(joined.ssid.escaped), the hotspot of \(report.target), on \(joined.device). Run '\(AccessoryCtl.name) leave'\(back)."
            )
        }
        return .success
    }

    /// Asks the person at the terminal whether the accessory shows `code` (Bluetooth numeric
    /// comparison); without a terminal to ask on, no.
    private static func confirmOnTerminal(_ code: String, _ address: MACAddress, _ console: Console) async -> Bool {
        guard isatty(STDIN_FILENO) == 1 else {
            console.error(
                "\(AccessoryCtl.name): \(address) shows \(code) to be confirmed, and there is no terminal to ask on; not pairing"
            )
            return false
        }
        console.writeError("Does \(address) show \(code)? Pair only if it does [y/N] ")
        let answer = await withCheckedContinuation { continuation in
            // Off the Swift pool, which answers BlueZ meanwhile.
            DispatchQueue.global().async { continuation.resume(returning: readLine(strippingNewline: true) ?? "") }
        }
        return ["y", "yes"].contains(answer.trimmingWhitespace().lowercased())
    }

    /// Pairs as a BlueZ pairing agent of the command's own, on a connection of its own for the
    /// pairing (BlueZ asks the agent of the connection that calls `Pair`): a code the accessory
    /// asks the person to type on it is printed. Without an agent BlueZ pairs as
    /// NoInputNoOutput, which such an accessory refuses.
    private static func pairer(
        _ bluetooth: any BluetoothManaging, _ adapter: String?, _ console: Console
    ) -> BluetoothPairer {
        { address throws(BluetoothError) in
            let path = try await bluetooth.devicePath(of: address, adapter: adapter, timeout: .seconds(20))
            let bus: BusConnection
            do {
                bus = try await BusConnection.connect(.system, threadName: "pairing")
            } catch {
                throw .bluezUnavailable("the system bus cannot be reached to pair: \(error)")
            }
            let agent = BluetoothPairingAgent(
                bus: bus, path: AgentBus.commandPairingAgentPath,
                show: { code, address in
                    HotspotCommand.clearProgress(console)
                    console.error("Type \(code) on \(address) to pair with it.")
                },
                confirm: { code, address in
                    HotspotCommand.clearProgress(console)
                    return await confirmOnTerminal(code, address, console)
                },
                warn: { console.error("\(AccessoryCtl.name): warning: \($0)") })
            let paired: Result<Void, BluetoothError>
            do throws(BluetoothError) {
                paired = .success(try await agent.pair(address, devicePath: path))
            } catch {
                paired = .failure(error)
            }
            await bus.close()
            try paired.get()
        }
    }

    private static func connectBlueZ() async throws(HotspotHandoffError) -> any BluetoothManaging {
        do { return try await BluetoothCommand.connect() } catch { throw .bluetooth(error) }
    }

    /// Each step on standard error: rewritten in place on a terminal, a line each otherwise
    /// (none with --json).
    private static func progress(_ arguments: ParsedArguments, _ console: Console)
        -> @Sendable (HotspotHandoffStep) -> Void
    {
        let inPlace = HotspotCommand.progress(console)
        let quiet = arguments.flag("json")
        let target = arguments.positionals[0]
        return { step in
            let text =
                switch step {
                case .pairing: "Pairing with \(target)…"
                case .connecting: "Connecting to \(target)…"
                case .switchingOn: "Switching the accessory's hotspot on…"
                case .waitingForHotspot: "Waiting for the accessory's hotspot…"
                case .reading: "Reading the hotspot's name and passphrase…"
                case .disconnecting: "Disconnecting Bluetooth…"
                case .joining: "Joining the accessory's hotspot…"
                case .switchingOff: "Switching the accessory's hotspot off…"
                }
            if let inPlace { inPlace(text) } else if !quiet { console.error("\(text)") }
        }
    }

    static func report(_ error: HotspotHandoffError, _ console: Console) -> ExitCode {
        if case .bluetooth(let error) = error { return BluetoothCommand.report(error, console) }
        if case .join(let error) = error { return HotspotCommand.report(error, console) }
        console.error("\(AccessoryCtl.name): error: \(error)")
        return .failure
    }
}
