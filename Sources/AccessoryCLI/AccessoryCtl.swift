import AccessoryCore

/// `accessoryctl`: the command table and the dispatch over it.
public enum AccessoryCtl {
    public static let name = "accessoryctl"
    public static let version = Release.version

    /// Every command, in the order `--help` lists them. Later commands join this table.
    public static let commands: [Command] = [
        ProfileValidateCommand.command,
        MatchCommand.command,
        PickCommand.command,
        SetupAllCommand.command,
        PickerAgentCommand.command,
        RecordCommands.list,
        RecordCommands.show,
        JoinCommand.command,
        LeaveCommand.command,
        RecordCommands.remove,
        RecordCommands.rename,
        RecordCommands.authorize,
        MigrateCommand.command,
        MonitorCommand.command,
        WiFiListCommand.command,
        ForgetCommand.command,
        ConfiguredCommand.command,
        ExpireCommand.command,
        BLEListCommand.command,
        ImprovIdentifyCommand.command,
        ImprovProvisionCommand.command,
        ProvisionCommand.command,
        HandoffCommand.command,
        CompletionCommand.command,
    ]

    /// What a command line comes to before anything asynchronous starts: help, the version
    /// and usage errors are answered at once; a command is parsed, ready to run.
    public enum Invocation: Sendable {
        case finished(ExitCode)
        case command(Command, ParsedArguments)
    }

    /// Runs one command line as the `accessoryctl` process does: SIGINT and SIGTERM cancel the
    /// command, which cleans up before the process exits with 128 plus the signal's number (a
    /// command that serves until it is stopped, `picker-agent`, with its own status).
    public static func main(_ arguments: [String], console: Console) async -> ExitCode {
        switch resolve(arguments, console: console) {
        case .finished(let code): code
        case .command(let command, let parsed): await main(command, parsed, console: console)
        }
    }

    /// Runs a resolved command as `main(_:console:)` does.
    public static func main(_ command: Command, _ parsed: ParsedArguments, console: Console) async -> ExitCode {
        Interruption.install()
        let task = Task { await command.run(parsed, console) }
        Interruption.onSignal { task.cancel() }
        let code = await task.value
        if command.servesUntilStopped { return code }
        return Interruption.received.map { ExitCode(rawValue: 128 + $0) } ?? code
    }

    /// Runs one command line (without the program name) and returns how it ended.
    public static func run(_ arguments: [String], console: Console) async -> ExitCode {
        switch resolve(arguments, console: console) {
        case .finished(let code): code
        case .command(let command, let parsed): await command.run(parsed, console)
        }
    }

    /// Answers what needs no command (help, the version, a usage error), or finds and parses
    /// the command; synchronous, so `accessoryctl --version` starts no thread.
    public static func resolve(_ arguments: [String], console: Console) -> Invocation {
        guard let first = arguments.first else {
            console.error(TerminalText(trusted: Help.overview()))
            return .finished(.usage)
        }
        switch first {
        case "-h", "--help":
            console.print(TerminalText(trusted: Help.overview()))
            return .finished(.success)
        case "help":
            return .finished(help(for: Array(arguments.dropFirst()), console: console))
        case "--version":
            console.print("\(name) \(version)")
            return .finished(.success)
        default:
            break
        }

        guard let command = command(matching: arguments) else {
            let words = arguments.prefix { !$0.hasPrefix("-") }
            if !words.isEmpty, let group = Help.group(words.map { $0 }) {
                console.error("\(name): error: '\(words.joined(separator: " "))' needs a command")
                console.error("")
                console.error(TerminalText(trusted: group))
                return .finished(.usage)
            }
            if first.hasPrefix("-") {
                console.error("\(name): error: unknown option '\(first)': a command's options go after the command")
            } else if let second = words.dropFirst().first, let group = Help.group([first]) {
                console.error("\(name): error: unknown command '\(first) \(second)'")
                console.error("")
                console.error(TerminalText(trusted: group))
                return .finished(.usage)
            } else {
                console.error("\(name): error: unknown command '\(first)'")
            }
            console.error("Run '\(name) --help' for the list of commands.")
            return .finished(.usage)
        }
        let rest = Array(arguments.dropFirst(command.path.count))
        if rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "--help" || $0 == "-h" }) {
            console.print(TerminalText(trusted: Help.command(command)))
            return .finished(.success)
        }
        do {
            return .command(command, try command.parse(rest))
        } catch {
            console.error("\(name): error: \(error.message)")
            console.error("Usage: \(command.synopsis)")
            console.error("Run '\(name) \(command.name) --help' for more.")
            return .finished(.usage)
        }
    }

    /// The command whose path is the longest run of leading words.
    static func command(matching arguments: [String]) -> Command? {
        commands
            .filter { arguments.starts(with: $0.path) }
            .max { $0.path.count < $1.path.count }
    }

    private static func help(for words: [String], console: Console) -> ExitCode {
        if words.isEmpty {
            console.print(TerminalText(trusted: Help.overview()))
        } else if let command = command(matching: words), command.path.count == words.count {
            console.print(TerminalText(trusted: Help.command(command)))
        } else if let group = Help.group(words) {
            console.print(TerminalText(trusted: group))
        } else {
            console.error("\(name): error: no help for '\(words.joined(separator: " "))': there is no such command")
            return .usage
        }
        return .success
    }
}
