import AccessoryCore
import NetworkManagerBackend

/// `accessoryctl leave`
enum LeaveCommand {
    static let command = Command(
        path: ["leave"],
        summary: "Leave the accessory hotspot and return to the previous network",
        discussion: """
            Takes the device off the accessory hotspot it joined with 'accessoryctl join' and
            brings back the connection it had before. A join-once profile is deleted; a stored
            one is kept until 'accessoryctl forget'.
            """,
        options: [HotspotCommand.deviceOption, .flag("json", help: "Print the result as JSON")],
        examples: ["\(AccessoryCtl.name) leave", "\(AccessoryCtl.name) leave --device wlan1"],
        run: run)

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        await HotspotCommand.run(console) { client throws(HotspotError) in
            let left = try await client.leave(device: arguments.value("device"))
            if arguments.flag("json") {
                console.printJSON(left)
                return .success
            }
            let name = left.ssid?.escaped ?? "the accessory hotspot"
            let back: TerminalText = left.restored.map { "; back on '\($0)'" } ?? ""
            let deleted: TerminalText = left.deleted ? " and deleted its profile" : ""
            if left.alreadyEnded {
                console.print("The connection to \(name) on \(left.device) had already ended; cleaned up after it\(deleted)\(back).")
            } else {
                console.print("Left \(name) on \(left.device)\(deleted)\(back).")
            }
            return .success
        }
    }
}
