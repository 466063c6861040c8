import AccessoryCore
import AccessorySetupKit
import NetworkManagerBackend
import GLibRuntime

/// `accessoryctl leave`
enum LeaveCommand {
    static let command = Command(
        path: ["leave"],
        summary: "Leave the accessory hotspot and return to the previous network",
        discussion: """
            Takes the device off the accessory hotspot it joined with 'accessoryctl join' and
            brings back the connection it had before, waiting until it is up again (and
            activating it again when an attempt fails); it says "back on" that connection only
            when it came back. A join-once profile is deleted; a stored
            one is kept until 'accessoryctl forget'. A join made through the agent is left
            through the agent; otherwise (a direct join, or no agent running) the device is
            left directly, and the command says so.
            """,
        options: [HotspotCommand.deviceOption, .flag("json", help: "Print the result as JSON")],
        examples: ["\(AccessoryCtl.name) leave", "\(AccessoryCtl.name) leave --device wlan1"],
        run: run)

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        if let code = await leaveThroughAgent(arguments, console) { return code }
        return await HotspotCommand.run(console) { client throws(HotspotError) in
            let left = try await client.leave(device: arguments.value("device"))
            if arguments.flag("json") {
                console.printJSON(left)
                return .success
            }
            let name = left.ssid?.escaped ?? "the accessory hotspot"
            let back = Self.back(restored: left.restored, notRestored: left.notRestored)
            let deleted: TerminalText = left.deleted ? " and deleted its profile" : ""
            if left.alreadyEnded {
                console.print("The connection to \(name) on \(left.device) had already ended; cleaned up after it\(deleted)\(back).")
            } else {
                console.print("Left \(name) on \(left.device)\(deleted)\(back).")
            }
            return .success
        }
    }

    /// Leaves through the agent when it holds a join of the caller; `nil` when it does not (or
    /// is not running), for the direct way to take over.
    private static func leaveThroughAgent(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode? {
        let client: AgentConnection
        do {
            client = try await AgentConnection.connect()
        } catch {
            return nil
        }
        defer { Task { await client.close() } }
        let left: HotspotLeaveReport
        do {
            // An agent that is not running holds no join, and starting it only to ask would set it
            // cleaning up after the very join this command is about to leave.
            left = try await client.leave(device: arguments.value("device"), autoStart: false)
        } catch {
            if error.isNotRunning {
                console.error("\(AccessoryCtl.name): the agent is not running; leaving directly.")
                return nil
            }
            if error.is(HotspotError.notJoined(device: "")) {
                console.error("\(AccessoryCtl.name): the agent holds no join of yours; leaving directly.")
                return nil
            }
            return AgentCommand.report(error, console)
        }
        if arguments.flag("json") {
            console.printJSON(left.json)
            return .success
        }
        let name = left.ssid ?? "the accessory hotspot"
        let back = Self.back(restored: left.restored, notRestored: left.notRestored)
        console.print("Left \(name) on \(left.device ?? "?") through the agent\(back).")
        return .success
    }

    /// What became of the previous connection, to end the sentence with.
    private static func back(restored: String?, notRestored: String?) -> TerminalText {
        if let restored { return "; back on '\(restored)'" }
        if let notRestored {
            return "; '\(notRestored)' did not come back: is its network in range? ('nmcli connection up' tries again)"
        }
        return ""
    }
}
