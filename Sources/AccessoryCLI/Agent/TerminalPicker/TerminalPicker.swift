import AccessoryCore
import AccessorySetupKit
import AgentInterface
import FoundationEssentials
import Glibc
import Synchronization

/// The picker of `accessoryctl pick` on a terminal: a picker agent for this process's own
/// sessions (as `pkttyagent --process` is) that shows the agent's entries live and answers
/// `RequestChoice` with what the person chose. `accessoryctl picker-agent` registers it for a
/// logind session instead (as `pkttyagent` is for polkit) and serves one request after
/// another. `PickerModel` decides, `PickerScreen` draws, `RawTerminal` holds the terminal; this
/// file only moves calls and keys between them.
final class TerminalPicker: Sendable {
    private enum Input: Sendable {
        case call(PickerAgentCall)
        case terminal(RawTerminal.Input)
        case close
    }

    /// How the picker serves the agent's requests.
    enum Serving: Sendable {
        /// `pick`: the requests of this process's own session, until `close()`; a newer request
        /// replaces the one shown.
        case ownSession
        /// `picker-agent`: one request at a time, each on the terminal until its picker ends, a
        /// second refused meanwhile (`PickerAlreadyActive`); then the terminal is given back and
        /// `report` gets a line saying how it ended.
        case eachRequest(report: @Sendable (String) -> Void)
    }

    private let inputs: AsyncStream<Input>.Continuation
    private let driver: Task<TypedSecrets, Never>
    private let forwarder: Task<Void, Never>
    private let service: PickerAgentService
    private let logindSession: String?

    private init(
        inputs: AsyncStream<Input>.Continuation, driver: Task<TypedSecrets, Never>, forwarder: Task<Void, Never>,
        service: PickerAgentService, logindSession: String?
    ) {
        self.inputs = inputs
        self.driver = driver
        self.forwarder = forwarder
        self.service = service
        self.logindSession = logindSession
    }

    /// Whether this process can show the picker: standard input and output are a terminal.
    static var canShow: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    /// The object a picker agent of this process answers at.
    static let path = AgentBus.pickerAgentPath("\(getpid())")

    /// Exports the picker agent on the client's connection and registers it with the agent:
    /// for the sessions this process opens, or for those opened from `logindSession`. The
    /// terminal is taken only when the agent asks for a choice.
    static func register(
        on client: AgentConnection, logindSession: String? = nil, serving: Serving = .ownSession
    ) async throws(AgentFailure) -> TerminalPicker {
        let service = try await PickerAgentService.register(on: client, path: path, logindSession: logindSession)
        let (stream, continuation) = AsyncStream.makeStream(of: Input.self)
        let forwarder = Task {
            for await call in service.calls { continuation.yield(.call(call)) }
        }
        let driver = Task {
            var driver = Driver(client: client, service: service, serving: serving)
            await driver.run(stream, continuation)
            return TypedSecrets(passphrase: driver.passphrase, proofOfPossession: driver.proofOfPossession)
        }
        return TerminalPicker(
            inputs: continuation, driver: driver, forwarder: forwarder, service: service,
            logindSession: logindSession)
    }

    /// Registers the picker agent again, with the agent that came back after it stopped.
    func registerAgain() async throws(AgentFailure) {
        try await service.register(logindSession: logindSession, timeout: .seconds(25))
    }

    /// Unregisters the picker agent: the agent asks it for nothing more.
    func unregister() async throws(AgentFailure) {
        try await service.unregister()
    }

    /// What the person typed for the accessory chosen, for a join or provisioning that follows
    /// the pick.
    struct TypedSecrets {
        var passphrase: Secret?
        var proofOfPossession: Secret?
    }

    /// Gives the terminal back, as it was, and waits until it is; a choice still open is
    /// answered as cancelled. Returns what was typed for the accessory chosen.
    @discardableResult
    func close() async -> TypedSecrets {
        forwarder.cancel()
        inputs.yield(.close)
        inputs.finish()
        return await driver.value
    }

    /// The one writer of the model: calls, keys and redraws happen here in turn.
    private struct Driver {
        let client: AgentConnection
        let service: PickerAgentService
        let serving: Serving
        var model = PickerModel()
        var decoder = KeyDecoder()
        var terminal: RawTerminal?
        var pending: PickerAgentCall?
        /// A `ConfirmPasskey` waiting for the person's y or n.
        var confirmation: PickerAgentCall?
        var session: String?
        var passphrase: Secret?
        var proofOfPossession: Secret?
        /// `picker-agent`: the session whose entries the model holds, which may come before its
        /// `RequestChoice`; and the accessory chosen, for the line after the picker.
        var entriesSession: String?
        var chosen: String?

        init(client: AgentConnection, service: PickerAgentService, serving: Serving) {
            self.client = client
            self.service = service
            self.serving = serving
        }

        /// Whether each request is served in turn (`picker-agent`).
        var servesEachRequest: Bool { if case .eachRequest = serving { true } else { false } }

        /// Whether `call` is of the picker shown (`picker-agent` serves one session at a time).
        private func isShown(_ call: PickerAgentCall) -> Bool {
            !servesEachRequest || call.session == session
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
                if servesEachRequest {
                    if let open = session {
                        call.refuseBusy("this terminal shows the picker of \(open); it shows one at a time")
                        return
                    }
                    if entriesSession != call.session { startOver(for: call.session) }
                } else {
                    pending?.cancel("a newer picker replaced it")
                }
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
                    if servesEachRequest { startOver(for: nil) }
                }
            case .updateEntries(let changed, let removed):
                if servesEachRequest && session == nil && entriesSession != call.session {
                    // Entries that come before their session's request.
                    startOver(for: call.session)
                }
                if !servesEachRequest || call.session == (session ?? entriesSession) {
                    model.update(changed, removed: removed)
                }
                call.reply()
            case .setupProgress(let step, let error, let passkey):
                if isShown(call) { model.progress(step, message: error?.message, passkey: passkey) }
                call.reply()
            case .confirmPasskey(let passkey):
                confirmation?.cancel("a newer comparison replaced it")
                confirmation = nil
                guard call.session == session, model.confirming(passkey) else {
                    call.cancel("this picker is not setting up an accessory of that session")
                    return
                }
                confirmation = call
            case .cancel where !isShown(call):
                // Another session's picker, never shown here: drop the entries it sent.
                if session == nil && call.session == entriesSession { startOver(for: nil) }
                call.reply()
            case .release where servesEachRequest && session == nil:
                startOver(for: nil)
                call.reply()
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
            case .choose(let entry, let name, let passphrase, let proofOfPossession)?:
                self.passphrase = passphrase
                self.proofOfPossession = proofOfPossession
                let picked = model.entries.first { $0.id == entry }
                chosen = [name ?? picked?.name, picked.map { "(\($0.identity))" }].compactMap { $0 }.joined(
                    separator: " ")
                pending?.choose(entry: entry, name: name, passphrase: passphrase, proofOfPossession: proofOfPossession)
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
                } else if let session, !servesEachRequest {
                    // The choice was sent already: ending the session is the way out.
                    let client = self.client
                    Task { try? await client.invalidateSession(session) }
                }
            case nil:
                break
            }
        }

        private mutating func draw() {
            guard let terminal else { return }
            if model.isClosed {
                terminal.close()
                if case .eachRequest(let report) = serving, case .closed(let outcome) = model.stage {
                    report(line(outcome))
                    self.terminal = nil
                    startOver(for: nil)
                }
                return
            }
            let size = terminal.size
            let screen = PickerScreen(width: size.width, height: size.height, color: Self.color, unicode: Self.unicode)
            terminal.draw(screen.frame(model))
        }

        /// `picker-agent`: forgets the picker that ended (or the entries of another session) and
        /// waits for the next request, the model holding `entriesSession`'s entries.
        private mutating func startOver(for entriesSession: String?) {
            model = PickerModel()
            decoder = KeyDecoder()
            pending = nil
            confirmation = nil
            session = nil
            chosen = nil
            passphrase = nil
            proofOfPossession = nil
            self.entriesSession = entriesSession
        }

        /// `picker-agent`: how the picker ended, after it is off the screen.
        private func line(_ outcome: PickerModel.Outcome) -> String {
            let asker =
                model.application.map { "\($0.name) (\($0.id))" } ?? model.request.map { "profile \($0.profile)" }
                ?? (session ?? "the agent")
            return switch outcome {
            case .done: "\(asker): \(chosen ?? "the accessory") is set up."
            case .cancelled: "\(asker): the picker was cancelled."
            case .failed(let message): "\(asker): \(message)."
            }
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
