import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials

/// A picker front end's side of `PickerAgent1` (`AgentBus.Interface.pickerAgent`): the object exported on the
/// client's connection, registered with the agent, and the agent's calls to it, typed.
public final class PickerAgentService: Sendable {
    /// The agent's calls, in order, until the connection closes or `stop` is called.
    public let calls: AsyncStream<PickerAgentCall>
    /// The object's path.
    public let path: String
    private let connection: AgentConnection
    private let object: ExportedObject
    private let forwarder: Task<Void, Never>

    private init(
        calls: AsyncStream<PickerAgentCall>, path: String, connection: AgentConnection, object: ExportedObject,
        forwarder: Task<Void, Never>
    ) {
        self.calls = calls
        self.path = path
        self.connection = connection
        self.object = object
        self.forwarder = forwarder
    }

    /// Exports the picker agent at `path` on `connection` and registers it with the agent: for
    /// every session opened from the logind session `logindSession`, or for this connection's
    /// own sessions.
    public static func register(
        on connection: AgentConnection, path: String, logindSession: String? = nil
    ) async throws(AgentCallError) -> PickerAgentService {
        let service = try await export(on: connection, path: path)
        do {
            try await service.register(logindSession: logindSession)
        } catch {
            service.stop()
            throw error
        }
        return service
    }

    /// Exports the picker agent at `path`, to be registered with `register`.
    public static func export(on connection: AgentConnection, path: String) async throws(AgentCallError)
        -> PickerAgentService
    {
        let bus = connection.bus
        let object: ExportedObject
        let incoming: AsyncStream<MethodCall>
        do {
            object = try ExportedObject(
                path: path, interface: AgentBus.Interface.pickerAgent.name,
                xml: AgentBus.Interface.pickerAgent.introspectionXML)
            incoming = try await bus.export(object)
        } catch {
            throw AgentCallError(name: nil, message: "cannot offer the picker on the bus: \(error)")
        }
        let (calls, continuation) = AsyncStream.makeStream(of: PickerAgentCall.self)
        let forwarder = Task {
            for await call in incoming { continuation.yield(PickerAgentCall(call)) }
            continuation.finish()
        }
        return PickerAgentService(
            calls: calls, path: path, connection: connection, object: object, forwarder: forwarder)
    }

    /// Registers the exported object with the agent (again, when the agent came back): for every
    /// session opened from the logind session `logindSession`, or for this connection's own.
    public func register(logindSession: String?, timeout: Duration = .seconds(120)) async throws(AgentCallError) {
        let options: [(String, DBusValue)] = logindSession.map { [("session", .string($0))] } ?? []
        _ = try await connection.manager(
            .registerPickerAgent, [.objectPath(path), .vardict(options)], timeout: timeout)
    }

    /// Unregisters the object with the agent, which then asks it for nothing more.
    public func unregister(timeout: Duration = .seconds(25)) async throws(AgentCallError) {
        _ = try await connection.manager(
            .unregisterPickerAgent, [.objectPath(path)], timeout: timeout, autoStart: false)
    }

    /// Stops taking calls; the object goes with the connection.
    public func stop() {
        forwarder.cancel()
        withExtendedLifetime(object) {}
    }
}

/// One call of the agent to a picker agent, with its typed arguments and the replies it takes.
public struct PickerAgentCall: Sendable {
    public enum Method: Sendable {
        /// Show the picker for `request`; answer with `choose` or `cancel`.
        case requestChoice(PickerAgentRequest)
        /// Entries found or changed, and ids gone. No reply.
        case updateEntries([PickerAgentEntry], removed: [UInt32])
        /// How the setup of the chosen accessory goes (`done` at the end), with the failure when
        /// it failed and the code to type on the accessory when it asks for one. No reply.
        case setupProgress(step: String, error: ASError?, passkey: String?)
        /// Numeric comparison: answer `reply()` when the person saw `passkey` on the accessory,
        /// `cancel` when not.
        case confirmPasskey(String)
        /// The agent closed the picker of the session. No reply.
        case cancel(ASError?)
        /// The agent no longer uses this picker agent. No reply.
        case release
        case unknown(String)
    }

    public let method: Method
    /// The session the call is about (empty for `release`).
    public let session: String
    private let call: MethodCall

    init(_ call: MethodCall) {
        self.call = call
        let arguments = call.arguments
        func argument(_ index: Int) -> DBusValue? { arguments.indices.contains(index) ? arguments[index] : nil }
        session = argument(0)?.string ?? ""
        switch AgentBus.PickerAgent1.Method(rawValue: call.member) {
        case .requestChoice:
            method = .requestChoice(PickerAgentRequest(argument(1) ?? .vardict([])))
        case .updateEntries:
            method = .updateEntries(
                (argument(1)?.elements ?? []).compactMap(PickerAgentEntry.init),
                removed: (argument(2)?.elements ?? []).compactMap(\.uint32))
        case .setupProgress:
            method = .setupProgress(
                step: argument(1)?.string ?? "", error: ASError(dictionary: argument(2)),
                passkey: argument(2)?.members?["passkey"]?.string)
        case .confirmPasskey:
            method = .confirmPasskey(argument(1)?.string ?? "")
        case .cancel:
            method = .cancel(ASError(dictionary: argument(1)))
        case .release:
            method = .release
        default:
            method = .unknown(call.member)
        }
    }

    /// The bus name of the caller (the agent).
    public var sender: String { call.sender }

    /// Answers `RequestChoice` with the entry chosen and what the person typed: a new `name`,
    /// a `passphrase`.
    public func choose(entry: UInt32, name: String? = nil, passphrase: Secret? = nil, proofOfPossession: Secret? = nil)
    {
        call.reply(
            PickerAgentChoice(entry: entry, name: name, passphrase: passphrase, proofOfPossession: proofOfPossession)
                .dbusValues)
    }

    /// Answers with no value: an update taken, a comparison confirmed.
    public func reply() { call.reply() }

    /// Answers that the person cancelled (`UserCancelled`).
    public func cancel(_ message: String) {
        call.reply(errorName: AccessorySessionError.Code.userCancelled.dbusName, message: message)
    }

    /// Refuses the call's arguments (`org.freedesktop.DBus.Error.InvalidArgs`).
    public func refuse(_ message: String) {
        call.reply(errorName: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }

    /// Answers `RequestChoice` that this picker shows another picker already
    /// (`PickerAlreadyActive`).
    public func refuseBusy(_ message: String) {
        call.reply(errorName: AccessorySessionError.Code.pickerAlreadyActive.dbusName, message: message)
    }

    /// Answers that this picker does not know the method.
    public func refuseUnknown() {
        call.reply(errorName: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(call.member)")
    }

    public var isAnswered: Bool { call.isAnswered }
}
