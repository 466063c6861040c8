import AccessoryCore
import AccessorySetupKit
import AgentInterface

/// A refusal or failure from the agent, as the commands through it report it.
typealias AgentFailure = AgentCallError

extension AgentCallError {
    /// The exit status `accessoryctl` gives it.
    var exitCode: ExitCode { isNotAuthorized ? .notAuthorized : .failure }
}

/// What the commands through the agent share: connecting, reporting its errors with the right
/// exit status, and printing accessories.
enum AgentCommand {
    static func run(_ console: Console, _ body: (AgentConnection) async throws(AgentFailure) -> ExitCode) async
        -> ExitCode
    {
        do {
            let client = try await AgentConnection.connect()
            defer { Task { await client.close() } }
            return try await body(client)
        } catch {
            return report(error, console)
        }
    }

    static func report(_ error: AgentFailure, _ console: Console) -> ExitCode {
        let lines = error.message.split(separator: "\n", omittingEmptySubsequences: false)
        console.error("\(AccessoryCtl.name): error: \(lines.first ?? "")")
        lines.dropFirst().forEach { console.error("  \($0)") }
        return error.exitCode
    }

    /// An accessory in one line: name, state, what identifies it, id.
    static func describe(_ accessory: AccessoryDetails) -> TerminalText {
        let identity = [accessory.ssid, accessory.bluetoothIdentifier].compactMap { $0 }
        let shown = identity.isEmpty ? "" : " (\(identity.joined(separator: ", ")))"
        return "\(accessory.displayName)\(shown) \(accessory.state) \(accessory.id)"
    }

    /// The accessories as rows; APPLICATION is the sandboxed application a record belongs to,
    /// `host` for one a process on the host made.
    static func table(_ accessories: [AccessoryDetails]) -> [[String]] {
        [["ID", "NAME", "STATE", "PROFILE", "APPLICATION", "HOTSPOT", "BLUETOOTH"]]
            + accessories.map { accessory in
                [
                    accessory.id, accessory.displayName, accessory.state, accessory.profile,
                    accessory.application ?? "host", accessory.ssid ?? "-", accessory.bluetoothIdentifier ?? "-",
                ]
            }
    }
}
