import AccessoryCore
import FoundationEssentials
import Glibc
import NetworkManagerBackend

/// What the Wi-Fi commands share: connecting to NetworkManager, reporting its errors with
/// the right exit status, and reading secrets without them touching the command line.
enum HotspotCommand {
    /// Runs `body` with NetworkManager, as the core's `HotspotManaging`, turning a `HotspotError`
    /// into a message and an exit status (77 when NetworkManager refused for lack of authorization).
    static func run(_ console: Console, _ body: (any HotspotManaging) async throws(HotspotError) -> ExitCode) async
        -> ExitCode
    {
        do {
            let client = try await NetworkManagerClient.connect()
            return try await body(client)
        } catch {
            return report(error, console)
        }
    }

    static func report(_ error: HotspotError, _ console: Console) -> ExitCode {
        console.error("\(AccessoryCtl.name): error: \(error)")
        if case .notAuthorized = error {
            console.error("Run it as root; the agent will let users join accessories they are authorized for.")
            return .notAuthorized
        }
        return .failure
    }

    /// The passphrase from `--passphrase-file` or `--passphrase-stdin`, without its final
    /// newline; `nil` when neither was given.
    static func passphrase(_ arguments: ParsedArguments, _ console: Console) throws(UsageError) -> Secret? {
        try secret(arguments, option: "passphrase", what: "passphrase", prompt: "Passphrase: ", console)
    }

    /// A secret from `--OPTION-file` or `--OPTION-stdin`, without its final newline; `nil` when
    /// neither was given. `what` names it in errors.
    static func secret(
        _ arguments: ParsedArguments, option: String, what: String, prompt: String, _ console: Console
    ) throws(UsageError) -> Secret? {
        let file = arguments.value("\(option)-file")
        let stdin = arguments.flag("\(option)-stdin")
        switch (file, stdin) {
        case (nil, false):
            return nil
        case (_?, true):
            throw UsageError("give --\(option)-file or --\(option)-stdin, not both")
        case (let path?, false):
            let data: Data
            do { data = try BoundedInput.read(path: path, limit: BoundedInput.passphraseLimit) } catch {
                guard case .tooLarge = error else { throw UsageError("cannot read the \(what) file \(path)") }
                throw UsageError("the \(what) file \(error)")
            }
            guard let text = String(data: data, encoding: .utf8) else {
                throw UsageError("cannot read the \(what) file \(path): it is not UTF-8 text")
            }
            return Secret(chompingNewline(text))
        case (nil, true):
            return Secret(chompingNewline(try readStandardInput(prompt: prompt, what: what, console)))
        }
    }

    /// All of standard input, up to `BoundedInput.passphraseLimit`; on a terminal, one line typed
    /// without echo (the terminal's line discipline bounds it to 4095 bytes).
    private static func readStandardInput(prompt: String, what: String, _ console: Console) throws(UsageError)
        -> String
    {
        guard isatty(STDIN_FILENO) == 1 else {
            let data: Data
            do {
                let limit = BoundedInput.passphraseLimit
                data = try Interruption.whileReadingInput {
                    try BoundedInput.read(descriptor: STDIN_FILENO, name: "standard input", limit: limit)
                }
            } catch {
                throw UsageError("the \(what) on \(error)")
            }
            return String(decoding: data, as: UTF8.self)
        }
        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        return Interruption.whileReadingInput(restoring: saved) {
            tcsetattr(STDIN_FILENO, TCSANOW, &silent)
            defer {
                tcsetattr(STDIN_FILENO, TCSANOW, &saved)
                console.writeError("\n")
            }
            console.writeError(prompt)
            return readLine(strippingNewline: true) ?? ""
        }
    }

    private static func chompingNewline(_ text: String) -> String {
        text.hasSuffix("\r\n") ? String(text.dropLast(2)) : text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    /// A progress line on standard error, rewritten in place, only on a terminal; cut to the
    /// terminal's width, since a line that wraps is no longer rewritten in place.
    static func progress(_ console: Console) -> (@Sendable (String) -> Void)? {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        return { text in
            var window = winsize()
            let width =
                ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &window) == 0 && window.ws_col > 1 ? Int(window.ws_col) : 80
            console.writeError("\r\u{1B}[K" + terminalSafe(String(text.prefix(width - 1))))
        }
    }

    static func clearProgress(_ console: Console) {
        if isatty(STDERR_FILENO) == 1 { console.writeError("\r\u{1B}[K") }
    }

    static let deviceOption = OptionSpec.value(
        "device", "IFACE", help: "The Wi-Fi interface (default: the first one NetworkManager manages)")
}
