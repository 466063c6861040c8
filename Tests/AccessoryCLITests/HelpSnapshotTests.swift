import AccessoryCLI
import Foundation
import Testing

/// Help output is compared with the files in `Snapshots/`. After an intended change, run the
/// tests with `UPDATE_SNAPSHOTS=1` and review the diff of the snapshot files.
@Suite struct HelpSnapshotTests {
    static let cases: [(arguments: [String], snapshot: String)] = [
        (["--help"], "accessoryctl.txt"),
        (["help", "profile", "validate"], "profile-validate.txt"),
        (["match", "--help"], "match.txt"),
        (["completion", "--help"], "completion.txt"),
        (["help", "profile"], "profile.txt"),
        (["wifi", "list", "--help"], "wifi-list.txt"),
        (["join", "--help"], "join.txt"),
        (["leave", "--help"], "leave.txt"),
        (["forget", "--help"], "forget.txt"),
        (["configured", "--help"], "configured.txt"),
        (["ble", "list", "--help"], "ble-list.txt"),
        (["improv", "identify", "--help"], "improv-identify.txt"),
        (["help", "improv", "provision"], "improv-provision.txt"),
        (["help", "improv"], "improv.txt"),
        (["pick", "--help"], "pick.txt"),
        (["setup-all", "--help"], "setup-all.txt"),
        (["picker-agent", "--help"], "picker-agent.txt"),
        (["list", "--help"], "list.txt"),
        (["authorize", "--help"], "authorize.txt"),
        (["monitor", "--help"], "monitor.txt"),
        (["provision", "--help"], "provision.txt"),
        (["handoff", "--help"], "handoff.txt"),
    ]

    @Test(arguments: cases)
    func helpMatchesSnapshot(arguments: [String], snapshot: String) async throws {
        let run = await accessoryctl(arguments)
        #expect(run.code == .success)
        #expect(run.err.isEmpty)
        let url = Paths.snapshots.appendingPathComponent(snapshot)
        if ProcessInfo.processInfo.environment["UPDATE_SNAPSHOTS"] == "1" {
            try Data(run.out.utf8).write(to: url)
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(run.out == expected, "help for \(arguments) differs from \(snapshot)")
    }

    @Test func everyCommandHasHelpWithItsOptionsAndAnExample() async {
        for command in AccessoryCtl.commands {
            let run = await accessoryctl(command.path + ["--help"])
            #expect(run.code == .success)
            #expect(run.out.hasPrefix("Usage: accessoryctl \(command.name)"))
            for option in command.options {
                #expect(run.out.contains("--\(option.name)"), "help of \(command.name) lacks --\(option.name)")
            }
            #expect(run.out.contains("Examples:"), "help of \(command.name) has no example")
        }
    }

    @Test func overviewListsEveryCommand() async {
        let run = await accessoryctl("--help")
        for command in AccessoryCtl.commands {
            #expect(run.out.contains("  \(command.name)  "), "overview lacks \(command.name)")
        }
    }
}
