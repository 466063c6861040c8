import AccessoryCore
import AccessorySetupKit
import AgentInterface
import FoundationEssentials
import Glibc
import Synchronization

/// The picker of `accessoryctl pick` on a terminal: a picker agent for this process's own
/// sessions (as `pkttyagent --process` is) that shows the agent's entries live and answers
/// `RequestChoice` with what the person chose. `PickerModel` decides, `PickerScreen` draws,
/// `RawTerminal` holds the terminal; this file only moves calls and keys between them.
final class TerminalPicker: Sendable {
    private enum Input: Sendable {
        case call(PickerAgentCall)
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

    /// The object a picker agent of this process answers at.
    static let path = AgentBus.pickerAgentPath("\(getpid())")

    /// Exports the picker agent on the client's connection and registers it with the agent.
    /// The terminal is taken only when the agent first asks for a choice.
    static func register(on client: AgentConnection) async throws(AgentFailure) -> TerminalPicker {
        let service = try await PickerAgentService.register(on: client, path: path)
        let (stream, continuation) = AsyncStream.makeStream(of: Input.self)
        let forwarder = Task {
            for await call in service.calls { continuation.yield(.call(call)) }
        }
        let driver = Task {
            var driver = Driver(client: client, service: service)
            await driver.run(stream, continuation)
            return driver.passphrase
        }
        return TerminalPicker(inputs: continuation, driver: driver, forwarder: forwarder)
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
        let client: AgentConnection
        let service: PickerAgentService
        var model = PickerModel()
        var decoder = KeyDecoder()
        var terminal: RawTerminal?
        var pending: PickerAgentCall?
        /// A `ConfirmPasskey` waiting for the person's y or n.
        var confirmation: PickerAgentCall?
        var session: String?
        var passphrase: Secret?

        init(client: AgentConnection, service: PickerAgentService) {
            self.client = client
            self.service = service
        }

        mutating func run(_ inputs: AsyncStream<Input>, _ continuation: AsyncStream<Input>.Continuation) async {
            defer {
                terminal?.close()
                pending?.cancel("the picker was closed")
                confirmation?.cancel("the picker was closed")
                service.stop()
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

        private mutating func handle(_ call: PickerAgentCall, _ continuation: AsyncStream<Input>.Continuation) {
            switch call.method {
            case .requestChoice(let request):
                pending?.cancel("a newer picker replaced it")
                pending = call
                session = call.session
                // The application's desktop file is read here, before the terminal is taken.
                model.requested(request, application: request.requestingApplication())
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
                    call.cancel("no terminal to show the picker on")
                }
            case .updateEntries(let changed, let removed):
                model.update(changed, removed: removed)
                call.reply()
            case .setupProgress(let step, let error, let passkey):
                model.progress(step, message: error?.message, passkey: passkey)
                call.reply()
            case .confirmPasskey(let passkey):
                confirmation?.cancel("a newer comparison replaced it")
                confirmation = nil
                guard call.session == session, model.confirming(passkey) else {
                    call.cancel("this picker is not setting up an accessory of that session")
                    return
                }
                confirmation = call
            case .cancel(let error):
                end(call, error?.message)
            case .release:
                end(call, nil)
            case .unknown:
                call.refuseUnknown()
            }
        }

        /// The agent closed the picker, or let go of the picker agent.
        private mutating func end(_ call: PickerAgentCall, _ message: String?) {
            model.ended(message ?? "the agent closed the picker")
            pending?.cancel("the picker was closed")
            pending = nil
            confirmation?.cancel("the picker was closed")
            confirmation = nil
            call.reply()
        }

        private mutating func press(_ key: PickerModel.Key) {
            switch model.handle(key) {
            case .choose(let entry, let name, let passphrase)?:
                self.passphrase = passphrase
                pending?.choose(entry: entry, name: name, passphrase: passphrase)
                pending = nil
            case .confirm(let matches)?:
                if matches {
                    confirmation?.reply()
                } else {
                    confirmation?.cancel("the person saw another number on the accessory")
                }
                confirmation = nil
            case .cancel?:
                confirmation?.cancel("the person left the picker")
                confirmation = nil
                if let call = pending {
                    call.cancel("the person cancelled the picker")
                    pending = nil
                } else if let session {
                    // The choice was sent already: ending the session is the way out.
                    let client = self.client
                    Task { try? await client.invalidateSession(session) }
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
