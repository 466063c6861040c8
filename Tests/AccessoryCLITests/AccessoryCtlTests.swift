import AccessoryCLI
import Foundation
import ServiceHarness
import Testing

/// Dispatch, usage errors and exit codes of the command table.
@Suite struct AccessoryCtlTests {
    @Test func noArgumentsIsAUsageErrorWithTheOverviewOnStandardError() async {
        let run = await accessoryctl([])
        #expect(run.code == .usage)
        #expect(run.out.isEmpty)
        #expect(run.err.contains("Commands:"))
    }

    @Test func unknownCommand() async {
        let run = await accessoryctl("frobnicate")
        #expect(run.code == .usage)
        #expect(run.err.contains("unknown command 'frobnicate'"))
    }

    @Test func unknownCommandOfAGroupListsTheGroupsCommands() async {
        let run = await accessoryctl("profile", "check", "p.json")
        #expect(run.code == .usage)
        #expect(run.err.hasPrefix("accessoryctl: error: unknown command 'profile check'\n"), "\(run.err)")
        #expect(run.err.contains("profile validate"))
    }

    @Test(arguments: ["--bogus", "-v", "--json"])
    func optionBeforeAnyCommand(option: String) async {
        let run = await accessoryctl(option, "list")
        #expect(run.code == .usage)
        #expect(
            run.err.hasPrefix(
                "accessoryctl: error: unknown option '\(option)': a command's options go after the command\n"))
    }

    @Test func groupWithoutCommandListsItsCommands() async {
        let run = await accessoryctl("profile")
        #expect(run.code == .usage)
        #expect(run.err.contains("'profile' needs a command"))
        #expect(run.err.contains("profile validate"))
    }

    @Test(arguments: [
        (["match", "--scan", "x.json"], "'--profile FILE' is required"),
        (["match", "--profile", "p.json"], "'--scan FILE' is required"),
        (["match", "--profile"], "'--profile' needs a value (FILE)"),
        (["match", "--profile", "p", "--scan", "s", "--scan", "t"], "'--scan' is given more than once"),
        (["match", "--profile", "p", "--scan", "s", "--colour"], "unknown option '--colour'"),
        (["match", "--profile", "p", "--scan", "s", "-x"], "unknown option '-x'"),
        (["match", "--profile", "p", "--scan", "s", "--json=yes"], "'--json' takes no value"),
        (["match", "--profile", "p", "--scan", "s", "extra"], "unexpected argument 'extra'"),
        (["profile", "validate"], "missing FILE"),
        (["completion", "bash", "zsh"], "unexpected argument 'zsh'"),
        (["show", "WLED"], "'WLED' is not an accessory id: ids are UUIDs, as 'accessoryctl list' prints them"),
        (["remove", "6f1c2a4e-8d0b-4c1e-9a57"], "'6f1c2a4e-8d0b-4c1e-9a57' is not an accessory id"),
        (["rename", "lamp", "Desk lamp"], "'lamp' is not an accessory id"),
        (["authorize", "1", "--fail"], "'1' is not an accessory id"),
        (["join", "WLED-AP"], "'WLED-AP' is not an accessory id"),
    ])
    func usageErrorsExit64WithTheSynopsis(arguments: [String], message: String) async {
        let run = await accessoryctl(arguments)
        #expect(run.code == .usage)
        #expect(run.err.contains("accessoryctl: error: \(message)"), "stderr was: \(run.err)")
        #expect(run.err.contains("Usage: accessoryctl"))
        #expect(run.out.isEmpty)
    }

    @Test func optionValueMayFollowAnEqualsSign() async {
        let run = await accessoryctl("match", "--profile=\(Paths.profile("wled.json"))", "--scan=\(Paths.demoScan)")
        #expect(run.code == .success)
        #expect(run.out.contains("WLED-AP"))
    }

    @Test func helpForAnUnknownCommandIsAUsageError() async {
        let run = await accessoryctl("help", "nothing")
        #expect(run.code == .usage)
        #expect(run.err.contains("no such command"))
    }

    @Test func version() async {
        let run = await accessoryctl("--version")
        #expect(run.code == .success)
        #expect(run.out == "accessoryctl \(AccessoryCtl.version)\n")
    }

    @Test func bashCompletionCoversEveryCommandAndOption() async {
        let run = await accessoryctl("completion", "bash")
        #expect(run.code == .success)
        #expect(run.out.contains("complete -F _accessoryctl accessoryctl"))
        for command in AccessoryCtl.commands {
            #expect(run.out.contains("\"\(command.name)\") opts="))
            for option in command.options { #expect(run.out.contains("--\(option.name)")) }
        }
        #expect(run.out.contains("\"profile\") words=\"validate\""))
    }

    @Test func zshAndFishCompletionsCoverEveryCommandAndOption() async {
        for shell in ["zsh", "fish"] {
            let run = await accessoryctl("completion", shell)
            #expect(run.code == .success)
            #expect(
                run.out.hasPrefix(shell == "zsh" ? "#compdef accessoryctl\n" : "# fish completion for accessoryctl"))
            for command in AccessoryCtl.commands {
                #expect(run.out.contains("'\(command.name)'"), "\(shell): \(command.name)")
                #expect(run.out.contains(command.summary.prefix { $0 != "'" }), "\(shell): \(command.name)'s summary")
                for option in command.options {
                    #expect(run.out.contains(shell == "zsh" ? "'--\(option.name):" : "-l \(option.name) "))
                }
            }
        }
    }

    @Test func completionForAnotherShellIsRefused() async {
        let run = await accessoryctl("completion", "tcsh")
        #expect(run.code == .usage)
        #expect(run.err.contains("no completion for 'tcsh'; the shells: bash, zsh, fish"))
    }

    /// The built executable, not only the library: exit status and streams as a shell sees them.
    @Test func executableExitStatus() throws {
        let binary = try #require(Self.executable(), "accessoryctl was not built next to the test bundle")
        for (arguments, status) in [
            (["--version"], Int32(0)), (["bogus"], 64), (["profile", "validate", "/nonexistent.json"], 1),
        ] {
            let process = try ChildProcess(binary.path, arguments)
            #expect(
                process.wait(within: 60) == .exited(status),
                "accessoryctl \(arguments.joined(separator: " "))")
        }
    }

    /// Output goes out through `write(2)` on the standard descriptors, whole, as a pipe reads it.
    @Test func executableWritesToItsStandardStreams() throws {
        let binary = try #require(Self.executable(), "accessoryctl was not built next to the test bundle")
        for (arguments, out, err) in [
            (["--version"], "accessoryctl \(AccessoryCtl.version)\n", ""),
            (
                ["bogus"], "",
                "accessoryctl: error: unknown command 'bogus'\nRun 'accessoryctl --help' for the list of commands.\n"
            ),
        ] {
            let process = try ChildProcess(binary.path, arguments, standardOutput: .pipe, standardError: .pipe)
            let (printed, complained) = process.readOutput()
            process.wait(within: 60)
            #expect(String(decoding: printed, as: UTF8.self) == out)
            #expect(String(decoding: complained, as: UTF8.self) == err)
        }
    }

    static func executable() -> URL? {
        let candidates = [
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("accessoryctl"),
            Bundle.main.bundleURL.appendingPathComponent("accessoryctl"),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
                "accessoryctl"),
            Paths.packageRoot.appendingPathComponent(".build/debug/accessoryctl"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}
