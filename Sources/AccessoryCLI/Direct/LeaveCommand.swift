import AccessoryCore
import AccessorySetupKit
import GLibRuntime
import NetworkManagerBackend

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
                console.print(
                    "The connection to \(name) on \(left.device) had already ended; cleaned up after it\(deleted)\(back)."
                )
            } else {
                console.print("Left \(name) on \(left.device)\(deleted)\(back).")
            }
            return .success
        }
    }

    /// What became of the previous connection, to end the sentence with.
    static func back(restored: String?, notRestored: String?) -> TerminalText {
        if let restored { return "; back on '\(restored)'" }
        if let notRestored {
            return "; '\(notRestored)' did not come back: is its network in range? ('nmcli connection up' tries again)"
        }
        return ""
    }
}
