import AccessoryCLI
import Glibc

// Help, the version and usage errors are answered before the concurrency runtime starts a thread.
switch AccessoryCtl.resolve(Array(CommandLine.arguments.dropFirst()), console: .standard) {
case .finished(let code):
    exit(code.rawValue)
case .command(let command, let parsed):
    exit(await AccessoryCtl.main(command, parsed, console: .standard).rawValue)
}
