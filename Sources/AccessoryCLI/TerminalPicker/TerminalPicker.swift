import AccessoryCore
import AgentInterface
import BusService
import FoundationEssentials
import Glibc
import GLibRuntime
import Synchronization

/// The picker of `accessoryctl pick` on a terminal: a picker agent for this process's own
/// sessions (as `pkttyagent --process` is) that shows the agent's entries live and answers
/// `RequestChoice` with what the person chose. `PickerModel` decides, `PickerScreen` draws,
/// `RawTerminal` holds the terminal; this file only moves calls and keys between them.
final class TerminalPicker: Sendable {
    private enum Input: Sendable {
        case call(MethodCall)
        case terminal(RawTerminal.Input)
        case close
    }

    private let inputs: AsyncStream<Input>.Continuation
    private let driver: Task<Secret?, Never>
    private let forwarder: Task<Void, Never>

    private init(inputs: AsyncStream<Input>.Continuation, driver: Task<Secret?, Never>, forwarder: Task<Void, Never>) {
        self.inputs = inputs
        self.driver = driver
        self.forwarder = forwarder
    }

    /// Whether this process can show the picker: standard input and output are a terminal.
    static var canShow: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    /// Exports the picker agent on the client's connection and registers it with the agent.
    /// The terminal is taken only when the agent first asks for a choice.
    static func register(on client: AgentClient) async throws(AgentFailure) -> TerminalPicker {
        let object = try await PickerAgentObject.export(on: client)
        let (stream, continuation) = AsyncStream.makeStream(of: Input.self)
        let forwarder = Task {
            for await call in client.bus.incomingCalls where call.interface == AgentBus.Interface.pickerAgent.name {
                continuation.yield(.call(call))
            }
        }
        let driver = Task {
            var driver = Driver(client: client, object: object)
            await driver.run(stream, continuation)
            return driver.passphrase
        }
        let picker = TerminalPicker(inputs: continuation, driver: driver, forwarder: forwarder)
        do {
            _ = try await client.manager("RegisterPickerAgent", [.objectPath(PickerAgentObject.path), .vardict([])])
        } catch {
            await picker.close()
            throw error
        }
        return picker
    }

    /// Gives the terminal back, as it was, and waits until it is; a choice still open is
    /// answered as cancelled. Returns the passphrase typed for the accessory chosen, for a
    /// join that follows the pick.
    @discardableResult
    func close() async -> Secret? {
        forwarder.cancel()
        inputs.yield(.close)
        inputs.finish()
        return await driver.value
    }

    /// The one writer of the model: calls, keys and redraws happen here in turn.
    private struct Driver {
        let client: AgentClient
        let object: ExportedObject
        var model = PickerModel()
        var decoder = KeyDecoder()
        var terminal: RawTerminal?
        var pending: MethodCall?
        /// A `ConfirmPasskey` waiting for the person's y or n.
        var confirmation: MethodCall?
        var session: String?
        var passphrase: Secret?

        init(client: AgentClient, object: ExportedObject) {
            self.client = client
            self.object = object
        }

        mutating func run(_ inputs: AsyncStream<Input>, _ continuation: AsyncStream<Input>.Continuation) async {
            defer {
                terminal?.close()
                pending?.reply(errorName: Self.cancelled, message: "the picker was closed")
                confirmation?.reply(errorName: Self.cancelled, message: "the picker was closed")
                withExtendedLifetime(object) {}
            }
            for await input in inputs {
                switch input {
                case .call(let call):
                    handle(call, continuation)
                case .terminal(.bytes(let bytes)):
                    for key in decoder.keys(bytes) { press(key) }
                case .terminal(.pause):
                    for key in decoder.flush() { press(key) }
                case .terminal(.resize):
                    break
                case .close:
                    return
                }
                draw()
            }
        }

        private mutating func handle(_ call: MethodCall, _ continuation: AsyncStream<Input>.Continuation) {
            let arguments = call.arguments
            switch call.member {
            case "RequestChoice":
                pending?.reply(errorName: Self.cancelled, message: "a newer picker replaced it")
                pending = call
                session = arguments.first?.string
                model.requested(PickerAgentRequest(arguments.count > 1 ? arguments[1] : .vardict([])))
                if terminal == nil, let opened = RawTerminal.open() {
                    terminal = opened
                    let keys = opened.inputs()
                    Task {
                        for await input in keys { continuation.yield(.terminal(input)) }
                    }
                }
                if terminal == nil {
                    // Standard input stopped being a terminal after the picker was registered.
                    pending = nil
                    call.reply(errorName: Self.cancelled, message: "no terminal to show the picker on")
                }
            case "UpdateEntries":
                let changed = (arguments.count > 1 ? arguments[1].elements : []).compactMap(PickerAgentEntry.init)
                let removed = (arguments.count > 2 ? arguments[2].elements : []).compactMap(\.uint32)
                model.update(changed, removed: removed)
                call.reply()
            case "SetupProgress":
                let step = arguments.count > 1 ? arguments[1].string ?? "" : ""
                let details = arguments.count > 2 ? arguments[2] : nil
                let error = AgentCommand.errorMessage(details)
                model.progress(step, message: error?.message, passkey: details?.members?["passkey"]?.string)
                call.reply()
            case "ConfirmPasskey":
                confirmation?.reply(errorName: Self.cancelled, message: "a newer comparison replaced it")
                confirmation = nil
                guard arguments.first?.string == session, model.confirming(arguments.count > 1 ? arguments[1].string ?? "" : "") else {
                    call.reply(errorName: Self.cancelled, message: "this picker is not setting up an accessory of that session")
                    return
                }
                confirmation = call
            case "Cancel", "Release":
                let message = AgentCommand.errorMessage(arguments.count > 1 ? arguments[1] : nil)?.message
                model.ended(message ?? "the agent closed the picker")
                pending?.reply(errorName: Self.cancelled, message: "the picker was closed")
                pending = nil
                confirmation?.reply(errorName: Self.cancelled, message: "the picker was closed")
                confirmation = nil
                call.reply()
            default:
                call.reply(errorName: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(call.member)")
            }
        }

        private mutating func press(_ key: PickerModel.Key) {
            switch model.handle(key) {
            case .choose(let entry, let name, let passphrase)?:
                var answer: [(String, DBusValue)] = []
                if let name { answer.append(("name", .string(name))) }
                if let passphrase { answer.append(("passphrase", .string(passphrase.reveal()))) }
                self.passphrase = passphrase
                pending?.reply([.uint32(entry), .vardict(answer)])
                pending = nil
            case .confirm(let matches)?:
                if matches {
                    confirmation?.reply()
                } else {
                    confirmation?.reply(errorName: Self.cancelled, message: "the person saw another number on the accessory")
                }
                confirmation = nil
            case .cancel?:
                confirmation?.reply(errorName: Self.cancelled, message: "the person left the picker")
                confirmation = nil
                if let call = pending {
                    call.reply(errorName: Self.cancelled, message: "the person cancelled the picker")
                    pending = nil
                } else if let session {
                    // The choice was sent already: ending the session is the way out.
                    let client = self.client
                    Task { _ = try? await client.session(session, "Invalidate") }
                }
            case nil:
                break
            }
        }

        private func draw() {
            guard let terminal else { return }
            if model.isClosed {
                terminal.close()
                return
            }
            let size = terminal.size
            let screen = PickerScreen(width: size.width, height: size.height, color: Self.color, unicode: Self.unicode)
            terminal.draw(screen.frame(model))
        }

        static let cancelled = AccessorySessionError.Code.userCancelled.dbusName

        /// Colour unless `NO_COLOR` is set to anything (no-color.org) or the terminal is dumb.
        static var color: Bool {
            let environment = ProcessInfo.processInfo.environment
            return (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
        }

        /// Whether the locale's character set is UTF-8 (`LC_ALL`, then `LC_CTYPE`, then `LANG`).
        static var unicode: Bool {
            let environment = ProcessInfo.processInfo.environment
            let locale = ["LC_ALL", "LC_CTYPE", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty } ?? ""
            return locale.lowercased().filter { $0 != "-" }.contains("utf8")
        }
    }
}

/// The object a picker agent of this process answers at, exported on the client's connection.
enum PickerAgentObject {
    static let path = AgentBus.pickerAgentPath("\(getpid())")

    static func export(on client: AgentClient) async throws(AgentFailure) -> ExportedObject {
        do {
            let object = try ExportedObject(
                path: path, interface: AgentBus.Interface.pickerAgent.name,
                xml: AgentBus.Interface.pickerAgent.introspectionXML)
            try await client.bus.export(object)
            return object
        } catch {
            throw AgentFailure(name: nil, message: "cannot offer the picker on the bus: \(error)")
        }
    }
}
