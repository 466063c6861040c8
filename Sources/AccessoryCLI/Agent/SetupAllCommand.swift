import AccessoryCore
import AccessorySetupKit
import AgentInterface
import FoundationEssentials
import Glibc

/// `accessoryctl setup-all`: a kiosk's batch, every accessory of a profile set up in turn.
enum SetupAllCommand {
    static let command = Command(
        path: ["setup-all"],
        summary: "Set up every accessory of a profile in range, one after another (through the agent)",
        discussion: """
            For a kiosk or an installer station with a shelf of accessories: picks one accessory
            of the installed profile PROFILE after another, unattended (the kiosk policy of
            /etc/accessory-setup/kiosk.json chooses, so it must name PROFILE and you), and for
            each joins its hotspot where it has one, gives it the Wi-Fi network (as 'pick
            --provision' does: the network named with --ssid, else the one this computer is on),
            leaves, and keeps the record. An accessory that fails is reported and not tried
            again in this run; the next one follows. Only the device's own refusal removes its
            record; any other failure (the agent's or NetworkManager's, or a verdict that never
            came, when the device may already hold the network) keeps it for the next run. It ends when discovery finds none left (--timeout), or
            after --maximum accessories. Accessories already set up are never offered again, so
            running it again, or after the agent stopped mid-way, sets up only what is left: an
            accessory recorded but not yet given the network (the agent stopped in its setup) is
            finished first. Prints a line per accessory as it is done, a progress bar on a
            terminal, and a table of results at the end; --json prints the results as JSON.
            Exits 0 when every accessory found was set up, 1 when one failed.
            """,
        options: [
            .number(
                "maximum", "N", NumberRange(1...1000, "accessories"),
                help: "Set up at most N accessories (default: every one found)"),
            .number(
                "timeout", "SECONDS", NumberRange(1...3600, "seconds"),
                help: "Give up discovering the next accessory after this (default 30)"),
        ]
            + ProvisionThroughAgent.networkOptionSpecs(proofOfPossession: "the accessories share") + [
                .flag("json", help: "Print the results as JSON")
            ],
        positionals: PositionalSpec(name: "PROFILE", minimum: 1, maximum: 1, help: "The id of an installed profile"),
        examples: [
            "\(AccessoryCtl.name) setup-all com.espressif.provisioning.softap --pop-file shelf.pop",
            "\(AccessoryCtl.name) setup-all ge.wled.softap --maximum 10 --ssid HomeNet --passphrase-file home.pass --json",
        ],
        run: run)

    /// What became of one accessory.
    struct Result {
        var accessory: AccessoryDetails
        var outcome: Swift.Result<AccessoryProvisioningReport, AgentFailure>
        /// Whether it had been recorded by an earlier, interrupted batch.
        var resumed: Bool

        var json: JSONValue {
            var fields: [String: JSONValue] = ["accessory": accessory.json, "resumed": .bool(resumed)]
            switch outcome {
            case .success(let report):
                fields["result"] = .string("setUp")
                fields["provisioned"] = report.json
            case .failure(let error):
                fields["result"] = .string("failed")
                fields["error"] = .object(["name": .string(error.name ?? ""), "message": .string(error.message)])
            }
            return .object(fields)
        }
    }

    /// How often the batch goes on after the agent went away (stopped, crashed, restarted).
    static let agentLossLimit = 5
    /// How long the batch waits for the agent to be back.
    static let agentReturnTimeout = Duration.seconds(120)

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        let options: AccessoryProvisioningOptions
        do {
            options = try ProvisionThroughAgent.networkOptions(arguments, console)
        } catch {
            return RecordCommands.usage(error.message, console)
        }
        let profile = arguments.positionals[0]
        let json = arguments.flag("json")
        return await AgentCommand.run(console) { client throws(AgentFailure) in
            var batch = Batch(
                profile: profile, options: options, maximum: arguments.integer("maximum"),
                timeout: arguments.integer("timeout") ?? 30, client: client,
                progress: HotspotCommand.progress(console), console: console, json: json)
            try await batch.run()
            HotspotCommand.clearProgress(console)
            if json {
                console.printJSON(JSONValue.array(batch.results.map(\.json)))
            } else if batch.results.isEmpty {
                console.print("No accessory of \(profile) was left to set up.")
            } else {
                console.printTable(table(batch.results))
            }
            return batch.results.contains { if case .failure = $0.outcome { true } else { false } }
                ? .failure : .success
        }
    }

    static func table(_ results: [Result]) -> [[String]] {
        [["ACCESSORY", "HOTSPOT/BLUETOOTH", "RESULT", "DETAIL"]]
            + results.map { result in
                let identity = result.accessory.ssid ?? result.accessory.bluetoothIdentifier ?? "-"
                switch result.outcome {
                case .success(let report):
                    let where_ = [
                        report.ssid.map { "joined '\($0)'" }, report.ipv4Address.map { "at \($0)" }, report.url,
                    ]
                    .compactMap { $0 }.joined(separator: " ")
                    return [result.accessory.displayName, identity, "set up", where_]
                case .failure(let error):
                    return [
                        result.accessory.displayName, identity, "failed", error.name.map(shortName) ?? error.message,
                    ]
                }
            }
    }

    /// `io.accessorysetup.Error.ProvisioningWrongProofOfPossession` → `ProvisioningWrongProofOfPossession`.
    static func shortName(_ name: String) -> String { String(name.split(separator: ".").last ?? Substring(name)) }

    /// One run of the batch.
    struct Batch {
        let profile: String
        let options: AccessoryProvisioningOptions
        let maximum: Int?
        let timeout: Int
        let client: AgentConnection
        let progress: (@Sendable (String) -> Void)?
        let console: Console
        let json: Bool
        private(set) var results: [Result] = []
        /// The hotspots and Bluetooth addresses of the accessories that failed: not picked again.
        private var failed: Set<String> = []

        init(
            profile: String, options: AccessoryProvisioningOptions, maximum: Int?, timeout: Int,
            client: AgentConnection, progress: (@Sendable (String) -> Void)?, console: Console, json: Bool
        ) {
            self.profile = profile
            self.options = options
            self.maximum = maximum
            self.timeout = timeout
            self.client = client
            self.progress = progress
            self.console = console
            self.json = json
        }

        private var isFull: Bool { maximum.map { results.count >= $0 } ?? false }

        mutating func run() async throws(AgentFailure) {
            var losses = 0
            while !isFull {
                do throws(AgentFailure) {
                    // What an interrupted batch recorded and did not finish comes first.
                    let unfinished = try await client.accessories(profile: profile).filter { accessory in
                        accessory.state == "authorized" && accessory.network == nil
                            && !failed.contains(Self.key(of: accessory))
                    }
                    if let accessory = unfinished.first {
                        await setUp(accessory, resumed: true)
                        continue
                    }
                    guard let accessory = try await pickNext() else { return }
                    await setUp(accessory, resumed: false)
                } catch  where Self.agentWentAway(error) && losses < SetupAllCommand.agentLossLimit {
                    losses += 1
                    say("The agent went away (\(error.message)); going on once it is back…")
                    try await waitForAgent()
                }
            }
        }

        /// Asks the agent every second (a call D-Bus activation starts it for) until it answers,
        /// for up to `agentReturnTimeout`.
        private func waitForAgent() async throws(AgentFailure) {
            let deadline = ContinuousClock.now + SetupAllCommand.agentReturnTimeout
            while true {
                try? await Task.sleep(for: .seconds(1))
                do throws(AgentFailure) {
                    _ = try await client.accessories(profile: profile)
                    return
                } catch  where Self.agentWentAway(error) && ContinuousClock.now < deadline {
                    continue
                }
            }
        }

        /// Shows the kiosk's picker for the profile, admitting every accessory discovered but
        /// those that failed; the one it picks, or `nil` once discovery found none.
        private func pickNext() async throws(AgentFailure) -> AccessoryDetails? {
            report("discovering…")
            // Watched from before the session opens, and only for the agent that opened it: an
            // earlier one, leaving on its idle exit as the call started this one, does not count.
            let leaving = await client.agentsLeaving()
            let session = try await client.openSession(profile: profile)
            defer { Task { try? await session.invalidate() } }
            let events = session.events()
            guard let agent = await client.agentOwner() else { throw Self.agentLeft }
            try await session.activate()
            var settings = PickerDisplaySettings()
            settings.discoveryTimeout = .duration(.seconds(timeout))
            settings.options = [.filterDiscoveryResults]
            let items = try await session.items()
            try await session.showPicker(items: items, settings: settings)
            let (merged, continuation) = AsyncStream.makeStream(of: AgentEvent?.self)
            let watchers = [
                Task {
                    for await event in events { continuation.yield(event) }
                },
                Task {
                    for await left in leaving where left == agent {
                        continuation.yield(nil)
                        return
                    }
                },
            ]
            defer { watchers.forEach { $0.cancel() } }
            var admitted: [DiscoveredDisplayItem] = []
            for await event in merged {
                guard let event else { throw Self.agentLeft }
                switch event.eventType {
                case .accessoryDiscovered:
                    guard let found = event.discoveredAccessory, !failed.contains(Self.key(of: found)) else { continue }
                    // Under its item's name, as the picker would have shown it.
                    let name = items.indices.contains(found.item) ? items[found.item]["name"]?.string : nil
                    admitted.append(
                        DiscoveredDisplayItem(
                            entryID: Int(found.entry), name: name ?? found.ssid ?? found.bluetoothName ?? "Accessory"))
                    // The kiosk may have picked one already, closing the picker: what the
                    // next events say decides.
                    try? await session.updatePicker(showing: admitted)
                case .accessoryAdded:
                    if let accessory = event.accessory { return accessory }
                case .pickerDidDismiss:
                    if let error = event.error, error.code != .discoveryTimeout {
                        throw AgentFailure(name: error.name, message: error.message)
                    }
                    return nil
                default:
                    continue
                }
            }
            return nil
        }

        /// Joins, provisions and leaves. The device's own refusal removes the record, so the
        /// accessory stays as it was; any failure keeps it from being tried again in this run.
        private mutating func setUp(_ accessory: AccessoryDetails, resumed: Bool) async {
            let number = results.count + 1
            let name = accessory.displayName
            report("\(name): setting up…")
            let progress = self.progress
            let total = maximum
            let done = results.count
            let outcome = await ProvisionThroughAgent.provision(accessory, passphrase: nil, options, on: client) {
                line in
                progress?(Self.bar(done: done, of: total) + " \(name): \(line.text)")
            }
            var result = Result(accessory: accessory, outcome: outcome.provisioned, resumed: resumed)
            switch outcome.provisioned {
            case .success(let report):
                let address = report.ipv4Address.map { " at \($0)" } ?? report.url.map { ", \($0)" } ?? ""
                let verdict =
                    report.confirmed == false
                    ? "given '\(report.ssid ?? "?")', restarting to join it"
                    : "joined '\(report.ssid ?? "?")'\(address)"
                say("[\(number)] \(name): set up, \(verdict)\(resumed ? " (resumed)" : "")")
            case .failure(let error) where Self.agentWentAway(error):
                // Not the accessory's doing: its record stays, and the next round finishes it.
                say("[\(number)] \(name): interrupted: \(error.message)")
                return
            case .failure(let error) where Self.deviceRefused(error):
                failed.insert(Self.key(of: accessory))
                // The device itself did not take the network: its record goes, with the
                // profiles made for it, and the accessory stays as it was.
                try? await client.removeAccessory(id: accessory.id)
                say("[\(number)] \(name): failed: \(error.message)")
                result.outcome = .failure(error)
            case .failure(let error):
                // Not the device's verdict (the agent's or NetworkManager's error, or none came):
                // the device may hold the network already. Its record stays, for the next run to
                // finish; this run does not try it again.
                failed.insert(Self.key(of: accessory))
                say("[\(number)] \(name): not finished, kept for the next run: \(error.message)")
                result.outcome = .failure(error)
            }
            results.append(result)
        }

        private func report(_ text: String) {
            progress?(Self.bar(done: results.count, of: maximum) + " " + text)
        }

        private func say(_ line: String) {
            if progress != nil { HotspotCommand.clearProgress(console) }
            if json { console.error("\(line)") } else { console.print("\(line)") }
        }

        /// `[####------] 2/5` with a maximum, `[2 done]` without.
        static func bar(done: Int, of total: Int?) -> String {
            guard let total, total > 0 else { return "[\(done) done]" }
            let width = 20, filled = min(width, done * width / total)
            return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
                + "] \(done)/\(total)"
        }

        /// Units of one product share a setup SSID (every WLED is WLED-AP): a unit is its
        /// hotspot's BSSID, else its SSID, else its Bluetooth address.
        static func key(of accessory: AccessoryDetails) -> String {
            accessory.hotspotBSSID.map { "bssid:\($0)" } ?? accessory.ssid.map { "wifi:\($0)" }
                ?? "bt:\(accessory.bluetoothIdentifier ?? accessory.id)"
        }

        static func key(of found: DiscoveredEntry) -> String {
            found.bssid.map { "bssid:\($0)" } ?? found.ssid.map { "wifi:\($0)" }
                ?? "bt:\(found.bluetoothIdentifier ?? "\(found.entry)")"
        }

        /// Whether the error is the device's own verdict that it did not take the network (it
        /// refused the session before anything was sent, or tried the network and gave up).
        static func deviceRefused(_ error: AgentFailure) -> Bool {
            guard let name = error.name, name.hasPrefix("io.accessorysetup.Error.") else { return false }
            return [
                "ProvisioningWrongProofOfPossession", "ProvisioningProofOfPossessionRequired",
                "ProvisioningSecurityMismatch", "ProvisioningUnsupportedSecurity", "ProvisioningSecurityBelowMinimum",
                "ProvisioningDeviceNotVerified", "ProvisioningConnectionFailed", "ProvisioningWrongPassphrase",
                "ProvisioningNetworkNotFound", "ProvisioningAuthenticationRequired", "ProvisioningDeviceRefused",
                "ProvisioningNotOnHomeNetwork", "ImprovUnableToConnect", "ImprovNotAuthorized", "NotImprovDevice",
            ].contains(String(name.dropFirst("io.accessorysetup.Error.".count)))
        }

        /// The session's agent left the bus (stopped, or crashed): one of `agentWentAway`'s.
        static let agentLeft = AgentFailure(
            name: "org.freedesktop.DBus.Error.NoReply", message: "the agent left the bus")

        /// Whether the agent left the bus (stopped, crashed): the batch goes on once it is back.
        static func agentWentAway(_ error: AgentFailure) -> Bool {
            guard let name = error.name else { return false }
            return [
                "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.ServiceUnknown",
                "org.freedesktop.DBus.Error.NameHasNoOwner", "org.freedesktop.DBus.Error.UnknownObject",
                "org.freedesktop.DBus.Error.Disconnected", "io.accessorysetup.Error.Invalidated",
            ].contains(name)
        }
    }
}
