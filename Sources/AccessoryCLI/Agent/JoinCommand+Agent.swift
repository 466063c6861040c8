import AccessoryCore
import AccessorySetupKit

/// `join ID`: the accessory's hotspot through the agent.
extension JoinCommand {
    /// `join ID`: the agent's `JoinAccessory`.
    static func joinThroughAgent(_ id: String, _ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        var options = AccessoryJoinOptions()
        do {
            if let direct = directOnly.first(where: { arguments.values[$0] != nil || arguments.flag($0) }) {
                throw UsageError("--\(direct) is for a direct join with --ssid, not for an accessory id")
            }
            switch arguments.value("security") {
            case nil: break
            case "open": options.withoutSecurity = true
            case let other?:
                throw UsageError(
                    "--security \(other): with an accessory id the profile says the security; only 'open' may be given")
            }
            options.passphrase = try HotspotCommand.passphrase(arguments, console)
        } catch let error as UsageError {
            console.error("\(AccessoryCtl.name): error: \(error.message)")
            console.error("Run '\(AccessoryCtl.name) join --help' for the options.")
            return .usage
        } catch {
            console.error("\(AccessoryCtl.name): error: \(error)")
            return .failure
        }
        options.device = arguments.value("device")
        options.restoreAfter = arguments.integer("restore-after")
        return await AgentCommand.run(console) { client throws(AgentFailure) in
            let joined = try await join(id, options: options, on: client, console)
            if arguments.flag("json") {
                console.printJSON(joined.json)
            } else {
                report(joined, console)
            }
            return .success
        }
    }

    /// The agent's `JoinAccessory` for the accessory `id`, with progress on a terminal.
    static func join(
        _ id: String, options: AccessoryJoinOptions, on client: AgentConnection, _ console: Console
    ) async throws(AgentFailure) -> HotspotJoinReport {
        HotspotCommand.progress(console)?("Joining through the agent…")
        defer { HotspotCommand.clearProgress(console) }
        return try await client.joinAccessory(id: id, options: options)
    }

    /// What `JoinAccessory` answered, for a person.
    static func report(_ joined: HotspotJoinReport, _ console: Console) {
        let ssid = joined.ssid ?? "?"
        let device = joined.device ?? "?"
        let address: TerminalText = joined.ipv4Address.map { ", address \($0)" } ?? ""
        console.print(
            "Joined \(ssid) on \(device) through the agent (profile '\(joined.connection ?? "?")'\(address)).")
        if let kept = joined.keptDevice {
            console.print("\(kept) stays on '\(joined.keptConnection ?? "its network")'.")
        }
        let back: TerminalText = joined.previousConnection.map { " to return to '\($0)'" } ?? ""
        console.print("Run '\(AccessoryCtl.name) leave'\(back).")
    }
}
