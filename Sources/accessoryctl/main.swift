import AccessoryCLI
import Glibc

/// Runs the command and exits from the thread that finishes it: top-level code belongs to the
/// main actor, and a hop back to it would wake (or start) a thread only to call `exit`.
nonisolated func runAndExit(_ command: Command, _ parsed: ParsedArguments) async -> Never {
    exit(await AccessoryCtl.main(command, parsed, console: .standard).rawValue)
}

// Help, the version and usage errors are answered before the concurrency runtime starts a thread.
switch AccessoryCtl.resolve(Array(CommandLine.arguments.dropFirst()), console: .standard) {
case .finished(let code):
    exit(code.rawValue)
case .command(let command, let parsed):
    await runAndExit(command, parsed)
}
