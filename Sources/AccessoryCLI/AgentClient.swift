import AccessoryCore
import AgentInterface
import BusService
import FoundationEssentials
import GLibRuntime

/// A refusal or failure from the agent, with the exit status it gives `accessoryctl`.
struct AgentFailure: Error, CustomStringConvertible {
    /// The D-Bus error name, when the agent (or the bus) replied with one.
    let name: String?
    let message: String

    init(name: String?, message: String) {
        self.name = name
        self.message = message
    }

    init(_ error: BusError) {
        let unknown = ["org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"]
        if let name = error.name, unknown.contains(name) {
            self.init(name: name, message: "the agent (\(AgentBus.name)) is not running and cannot be started; "
                + "install the accessory-setup package, or use the direct commands as root")
        } else {
            self.init(name: error.name, message: error.message)
        }
    }

    /// The agent is not on the bus (nor activatable).
    var isNotRunning: Bool {
        name == "org.freedesktop.DBus.Error.ServiceUnknown" || name == "org.freedesktop.DBus.Error.NameHasNoOwner"
    }

    var isNotAuthorized: Bool { name == AgentError.Code.notAuthorized.dbusName || name == AccessorySessionError.Code.userRestricted.dbusName }

    var exitCode: ExitCode { isNotAuthorized ? .notAuthorized : .failure }

    var description: String { message }
}

/// `accessoryctl`'s connection to the agent on the system bus (`DBUS_SYSTEM_BUS_ADDRESS` is
/// honoured). Calls may start the agent by D-Bus activation, and may ask polkit interactively.
final class AgentClient: Sendable {
    let bus: BusConnection
    static let manager = AgentBus.managerPath

    private init(bus: BusConnection) {
        self.bus = bus
    }

    static func connect() async throws(AgentFailure) -> AgentClient {
        do {
            return AgentClient(bus: try await BusConnection.connect(.system, threadName: "agent-client"))
        } catch {
            throw AgentFailure(name: error.name, message: "cannot reach the system bus: \(error.message)")
        }
    }

    /// `autoStart: false` asks only an agent that is running (a question whose answer is "no"
    /// when it is not, such as whether it holds a join).
    func call(
        _ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(120),
        fileDescriptors: [Int32] = [], autoStart: Bool = true
    ) async throws(AgentFailure) -> [DBusValue] {
        do {
            return try await bus.call(
                destination: AgentBus.name, path: path, interface: interface, method: method, arguments,
                timeout: timeout, allowInteractiveAuthorization: true, autoStart: autoStart, fileDescriptors: fileDescriptors)
        } catch {
            throw AgentFailure(error)
        }
    }

    func manager(
        _ method: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(120), fileDescriptors: [Int32] = [],
        autoStart: Bool = true
    ) async throws(AgentFailure) -> [DBusValue] {
        try await call(
            Self.manager, AgentBus.Interface.manager.name, method, arguments, timeout: timeout, fileDescriptors: fileDescriptors,
            autoStart: autoStart)
    }

    func session(_ path: String, _ method: String, _ arguments: [DBusValue] = []) async throws(AgentFailure) -> [DBusValue] {
        try await call(path, AgentBus.Interface.session.name, method, arguments)
    }

    /// A property of a session.
    func sessionProperty(_ path: String, _ name: String) async throws(AgentFailure) -> DBusValue {
        let reply = try await call(path, "org.freedesktop.DBus.Properties", "Get", [.string(AgentBus.Interface.session.name), .string(name)])
        return reply.first ?? .tuple([])
    }

    /// The agent's signals of `interface`, from now on.
    func signals(interface: String) async -> AsyncStream<BusSignal> {
        await bus.signals(sender: AgentBus.name, interface: interface)
    }

    func close() async { await bus.close() }
}

/// What the commands through the agent share: connecting, reporting its errors with the right
/// exit status, and printing accessories.
enum AgentCommand {
    static func run(_ console: Console, _ body: (AgentClient) async throws(AgentFailure) -> ExitCode) async -> ExitCode {
        do {
            let client = try await AgentClient.connect()
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

    /// An accessory dictionary in one line: name, state, what identifies it, id.
    static func describe(_ accessory: DBusValue) -> TerminalText {
        let fields = accessory.members ?? [:]
        let name = fields["displayName"]?.string ?? "?"
        let state = fields["state"]?.string ?? "?"
        var identity: [String] = []
        if let ssid = fields["ssid"]?.string { identity.append(ssid) }
        if let address = fields["bluetoothIdentifier"]?.string { identity.append(address) }
        let id = fields["id"]?.string ?? "?"
        let shown = identity.isEmpty ? "" : " (\(identity.joined(separator: ", ")))"
        return "\(name)\(shown) \(state) \(id)"
    }

    static func table(_ accessories: [DBusValue]) -> [[String]] {
        [["ID", "NAME", "STATE", "PROFILE", "HOTSPOT", "BLUETOOTH"]] + accessories.map { accessory in
            let fields = accessory.members ?? [:]
            return ["id", "displayName", "state", "profile", "ssid", "bluetoothIdentifier"].map { fields[$0]?.string ?? "-" }
        }
    }

    /// An error dictionary's message, or `nil` for the empty one.
    static func errorMessage(_ error: DBusValue?) -> (name: String, message: String)? {
        guard let fields = error?.members, let name = fields["name"]?.string else { return nil }
        return (name, fields["message"]?.string ?? name)
    }
}
