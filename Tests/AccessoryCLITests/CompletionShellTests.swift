import Foundation
import Testing

@testable import AccessoryCLI

/// The completion scripts as a person meets them: typed into zsh and fish in tmux with Tab,
/// the scripts loaded the way the package installs them (zsh's from `fpath` by `compinit`,
/// fish's from a `vendor_completions.d` directory on `XDG_DATA_DIRS`, for a command on PATH).
@Suite("accessoryctl's zsh and fish completions, typed in tmux", .serialized)
struct CompletionShellTests {
    /// A directory holding the script of `shell` where that shell looks for it.
    private static func installed(_ shell: String) async throws -> URL {
        let run = await accessoryctl("completion", shell)
        #expect(run.code == .success, "\(run.err)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("completion-\(UUID().uuidString)")
        let file =
            shell == "zsh"
            ? directory.appendingPathComponent("_accessoryctl")
            : directory.appendingPathComponent("fish/vendor_completions.d/accessoryctl.fish")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try run.out.write(to: file, atomically: true, encoding: .utf8)
        return directory
    }

    /// Types `keys` after the prompt, then Tab, and waits until the screen shows `expected`.
    @discardableResult
    private static func complete(
        _ pane: TmuxPane, _ keys: String, tabs: Int = 1, showing expected: String
    ) throws -> String {
        try pane.send("C-u")
        try pane.send(keys, literally: true)
        for _ in 0..<tabs {
            try pane.send("Tab")
            usleep(300_000)
        }
        return try pane.waitFor(expected, timeout: 15)
    }

    private static func which(_ shell: String) throws -> String {
        let path = "/usr/bin/\(shell)"
        try #require(
            FileManager.default.isExecutableFile(atPath: path),
            "\(path) is missing: scripts/setup.sh installs zsh and fish for these tests")
        return path
    }

    @Test func zshCompletesCommandsGroupsAndOptionsWithTheirHelp() async throws {
        let zsh = try Self.which("zsh")
        let directory = try await Self.installed("zsh")
        defer { try? FileManager.default.removeItem(at: directory) }
        let pane = try TmuxPane(
            shellCommand:
                "env -i TERM=xterm-256color LANG=C.UTF-8 HOME=\(directory.path) PATH=/usr/bin:/bin PS1='zsh> ' \(zsh) -f",
            width: 140, height: 40)
        try pane.waitFor("zsh>")
        try pane.send("fpath=(\(directory.path) $fpath); autoload -U compinit; compinit -u; clear", literally: true)
        try pane.send("Enter")
        try pane.waitFor("zsh>")

        try Self.complete(pane, "accessoryctl bl", showing: "accessoryctl ble ")
        try Self.complete(pane, "accessoryctl ble l", showing: "accessoryctl ble list ")
        try Self.complete(pane, "accessoryctl ble list --ti", showing: "accessoryctl ble list --timeout")
        let options = try Self.complete(pane, "accessoryctl pick ge.wled.softap --", showing: "--no-picker")
        #expect(options.contains("Leave the choice to the kiosk policy or a desktop picker"))
        #expect(options.contains("--select"))
        #expect(!options.contains("--ssid-prefix"), "join's options offered for pick:\n\(options)")
        let commands = try Self.complete(pane, "accessoryctl ", showing: "provision")
        #expect(commands.contains("Find an accessory of a profile and authorize it"))
        #expect(commands.contains("commands: identify, provision"))
    }

    @Test func fishCompletesCommandsGroupsAndOptionsWithTheirHelp() async throws {
        let fish = try Self.which("fish")
        let directory = try await Self.installed("fish")
        defer { try? FileManager.default.removeItem(at: directory) }
        // fish loads a command's completions once the command is on PATH, as the package's is.
        let ctl = try #require(AccessoryCtlTests.executable(), "accessoryctl was not built next to the test bundle")
        let prompt = "function fish_prompt; echo 'fish> '; end; set -g fish_greeting"
        let pane = try TmuxPane(
            shellCommand:
                "env -i TERM=xterm-256color LANG=C.UTF-8 HOME=\(directory.path) "
                + "PATH=\(ctl.deletingLastPathComponent().path):/usr/bin:/bin XDG_DATA_DIRS=\(directory.path):/usr/share "
                + "\(fish) --private --init-command \(TmuxPane.quote(prompt))",
            width: 140, height: 40)
        try pane.waitFor("fish>")

        try Self.complete(pane, "accessoryctl bl", showing: "accessoryctl ble ")
        try Self.complete(pane, "accessoryctl ble l", showing: "accessoryctl ble list ")
        try Self.complete(pane, "accessoryctl ble list --ti", showing: "accessoryctl ble list --timeout")
        let options = try Self.complete(pane, "accessoryctl pick ge.wled.softap --", showing: "--no-picker")
        #expect(options.contains("Leave the choice to the kiosk policy"))
        #expect(!options.contains("--ssid-prefix"), "join's options offered for pick:\n\(options)")
        let groups = try Self.complete(pane, "accessoryctl improv ", showing: "identify")
        #expect(groups.contains("Make an Improv Wi-Fi device identify itself"))
    }
}
