import AccessoryCore
import AccessorySetupKit
import AgentInterface

/// `pick --provision`: the accessory picked is given a Wi-Fi network through the agent.
enum ProvisionThroughAgent {
    /// The provisioning `pick` was asked for; `nil` without `--provision`.
    static func options(_ arguments: ParsedArguments, _ console: Console) throws(UsageError)
        -> AccessoryProvisioningOptions?
    {
        let given =
            ["ssid", "passphrase-file", "pop-file"].filter { arguments.value($0) != nil }
            + (arguments.flag("open") ? ["open"] : [])
        guard arguments.flag("provision") else {
            if let first = given.first { throw UsageError("--\(first) goes with --provision") }
            return nil
        }
        return try networkOptions(arguments, console)
    }

    /// The options `networkOptions` reads, each help text after `lead` (as "With --provision: ");
    /// `proofOfPossession` says whose proof of possession `--pop-file` holds.
    static func networkOptionSpecs(lead: String = "", proofOfPossession: String) -> [OptionSpec] {
        func help(_ text: String) -> String {
            lead.isEmpty ? text.prefix(1).uppercased() + text.dropFirst() : lead + text
        }
        return [
            .value("ssid", "SSID", help: help("the network to give (default: the one this computer is on)")),
            .value("passphrase-file", "FILE", help: help("the network's passphrase, from FILE (one line)")),
            .flag("open", help: help("the network named with --ssid is open")),
            .value("pop-file", "FILE", help: help("the proof of possession \(proofOfPossession), from FILE")),
        ]
    }

    /// The network given (--ssid, --passphrase-file or --open) and the proof of possession
    /// (--pop-file), as `pick --provision` and `setup-all` read them.
    static func networkOptions(_ arguments: ParsedArguments, _ console: Console) throws(UsageError)
        -> AccessoryProvisioningOptions
    {
        var options = AccessoryProvisioningOptions()
        if let text = arguments.value("ssid") {
            do { options.ssid = try SSID(notation: text) } catch { throw UsageError("--ssid: \(error)") }
        }
        options.passphrase = try HotspotCommand.secret(
            arguments, option: "passphrase", what: "passphrase", prompt: "Passphrase: ", console)
        options.open = arguments.flag("open")
        if options.open && options.passphrase != nil { throw UsageError("--open takes no passphrase") }
        if (options.open || options.passphrase != nil) && options.ssid == nil {
            throw UsageError("with --passphrase-file or --open, name the network with --ssid")
        }
        options.proofOfPossession = try HotspotCommand.secret(
            arguments, option: "pop", what: "proof of possession", prompt: "Proof of possession: ", console)
        return options
    }

    /// What a provisioning did: the join of the accessory's hotspot, if it had one, and the
    /// device's verdict.
    struct Outcome {
        var joined: HotspotJoinReport?
        var provisioned: Result<AccessoryProvisioningReport, AgentFailure>
        /// Where the agent found a device that took the network without saying it joined.
        var found: AccessoryDetails.Location?
    }

    /// Joins the accessory's hotspot where it has one, gives it the network, and leaves the
    /// hotspot again, whatever the outcome; `say` hears a line for a person at each step.
    static func provision(
        _ added: AccessoryDetails, passphrase: Secret?, _ options: AccessoryProvisioningOptions,
        on client: AgentConnection,
        say: @escaping @Sendable (TerminalText) -> Void
    ) async -> Outcome {
        var joined: HotspotJoinReport?
        if added.ssid != nil {
            do throws(AgentFailure) {
                joined = try await client.joinAccessory(
                    id: added.id, options: AccessoryJoinOptions(passphrase: passphrase))
            } catch {
                return Outcome(provisioned: .failure(error))
            }
            let keptOn = joined?.keptConnection ?? "its network"
            let kept: TerminalText = joined?.keptDevice.map { "; \($0) stays on '\(keptOn)'" } ?? ""
            say("Joined \(joined?.ssid ?? "?") on \(joined?.device ?? "?")\(kept).")
        }
        let provisioned: Result<AccessoryProvisioningReport, AgentFailure>
        do throws(AgentFailure) {
            let network = options.ssid.map { "'\($0)'" } ?? "the network this computer is on"
            say("Giving \(added.displayName) \(network) through the agent…")
            provisioned = .success(
                try await client.provisionAccessory(id: added.id, options: options) { step in
                    if let line = Self.line(step) { say(line) }
                })
        } catch {
            provisioned = .failure(error)
        }
        if let joined {
            say("Leaving \(joined.ssid ?? "the hotspot")…")
            let left = try? await client.leave(device: joined.device)
            let back: TerminalText = left?.restored.map { ", back on '\($0)'" } ?? ""
            say("Left \(joined.ssid ?? "the hotspot")\(back).")
        }
        var outcome = Outcome(joined: joined, provisioned: provisioned)
        // A device that left to join without saying it had is taken at its word only once it
        // is seen there: never reported a success on the strength of what was sent.
        if case .success(let report) = provisioned, report.confirmed == false, let seconds = report.seekSeconds {
            say("Looking for it on the home network (up to \(seconds) s)…")
            switch await seek(added.id, within: .seconds(seconds), on: client) {
            case .success(let location): outcome.found = location
            case .failure(let error): outcome.provisioned = .failure(error)
            }
        }
        return outcome
    }

    /// Waits for the agent to locate the accessory `id` on the home network.
    static func seek(_ id: String, within limit: Duration, on client: AgentConnection) async
        -> Result<AccessoryDetails.Location, AgentFailure>
    {
        let deadline = ContinuousClock.now + limit
        var last: AccessoryDetails?
        while ContinuousClock.now < deadline {
            do throws(AgentFailure) {
                let accessory = try await client.accessory(id: id)
                if let location = accessory.location { return .success(location) }
                last = accessory
            } catch {
                return .failure(error)
            }
            do { try await Task.sleep(for: .seconds(1)) } catch { break }
        }
        let network = last?.network?.ssid ?? "the home network"
        return .failure(
            AgentFailure(
                name: "io.accessorysetup.Error.NotFound",
                message:
                    "it took '\(network)' but was not seen there within \(limit.components.seconds) s: check the "
                    + "passphrase, and that it reaches where the device is; the agent keeps looking while it runs"))
    }

    /// Provisions with each step on standard error as it happens, then reports.
    static func run(
        _ added: AccessoryDetails, passphrase: Secret?, _ options: AccessoryProvisioningOptions, json: Bool,
        on client: AgentConnection, _ console: Console
    ) async throws(AgentFailure) -> ExitCode {
        let outcome = await provision(added, passphrase: passphrase, options, on: client) { console.error($0) }
        return try report(outcome, of: added, json: json, console)
    }

    /// The device's verdict for a person (or as JSON); a failure is thrown, for the caller to report.
    static func report(_ outcome: Outcome, of added: AccessoryDetails, json: Bool, _ console: Console)
        throws(AgentFailure) -> ExitCode
    {
        let provisioned = try outcome.provisioned.get()
        if json {
            var object: [String: JSONValue] = ["accessory": added.json, "provisioned": provisioned.json]
            if let joined = outcome.joined { object["joined"] = joined.json }
            if let found = outcome.found { object["found"] = found.json }
            console.printJSON(JSONValue.object(object))
        } else if let found = outcome.found {
            let address = found.addresses.first ?? found.hostname
            console.print(
                "\(added.displayName) joined '\(provisioned.ssid ?? "?")': found there at \(address) (\(found.instance), \(found.service))."
            )
        } else {
            let address: TerminalText = provisioned.ipv4Address.map { " at \($0)" } ?? ""
            let url: TerminalText = provisioned.url.map { "; it goes on at \($0)" } ?? ""
            if provisioned.confirmed == false {
                console.print(
                    "\(added.displayName) was given '\(provisioned.ssid ?? "?")' and restarts to join it; the agent looks for it there."
                )
            } else {
                console.print("\(added.displayName) joined '\(provisioned.ssid ?? "?")'\(address)\(url).")
            }
        }
        return .success
    }

    /// What a person reads of a step the agent reports; `nil` for the steps not worth a line.
    static func line(_ step: AccessoryProvisioningStep) -> TerminalText? {
        let details = step.details
        switch step.name {
        case "connecting":
            return details["transport"] == .string("bluetooth")
                ? "Connecting over Bluetooth LE…" : "Connecting to the device on its hotspot…"
        case "session":
            let version = details["version"].flatMap { if case .string(let text) = $0 { text } else { nil } }
            let security = details["security"].flatMap { if case .number(let value) = $0 { Int(value) } else { nil } }
            return "The device speaks \(version ?? "?"), security \(security.map(String.init) ?? "?")."
        case "unencrypted":
            return "Warning: security 0 sends the passphrase unencrypted; anyone on the hotspot can read it."
        case "sessionEstablished": return "Session established."
        case "scanning": return "Asking the device to scan…"
        case "scanned":
            let count = details["networks"].flatMap { if case .number(let value) = $0 { Int(value) } else { nil } }
            return "The device sees \(count.map(String.init) ?? "some") networks."
        case "awaitingAuthorization":
            return "The device asks for authorization: press its button (or do what its manual says)…"
        case "authorized": return "Authorized."
        case "request":
            let name = details["step"].flatMap { if case .string(let text) = $0 { text } else { nil } }
            return "Asking the device (\(DisplayText.sanitized(name ?? "?")))…"
        case "sendingCredentials": return "Sending the network's credentials…"
        case "confirming": return "Waiting for the device to say it joined…"
        case "deviceLeft": return "The device left its hotspot to join the network."
        case "joining": return "The device is joining the network…"
        default: return nil
        }
    }
}
