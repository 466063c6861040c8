import AccessoryCore
import AccessorySetupKit

/// `leave` of a join the agent holds.
extension LeaveCommand {
    /// Leaves through the agent when it holds a join of the caller; `nil` when it does not (or
    /// is not running), for the direct way to take over.
    static func leaveThroughAgent(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode? {
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
}
