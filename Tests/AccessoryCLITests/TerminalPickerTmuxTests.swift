import AccessoryCLI
import Foundation
import ServiceHarness
import Testing

/// The agent on a private bus with python-dbusmock's NetworkManager (the project's template):
/// `wlan0` hears the plug `Acme-Setup-4F2A`, the camera `Acme-Cam-77` (WPA2) and an unrelated
/// network. Two test profiles: the plug (open hotspot) and the camera (rename offered, the
/// passphrase asked for). This is the smallest starter of the agent; `AgentProcess` on the
/// agent-tests branch will replace it.
final class PickerServices: AgentLogging, @unchecked Sendable {
    let networkManager: NetworkManagerMock
    let device: String
    private let directory: ScratchDirectory
    private let agent: ServiceProcess

    static let plugProfile = """
        {"schemaVersion": 1, "id": "org.example.plug", "vendor": "Example", "supports": ["wifi"],
         "hotspot": {"security": "open", "passphrase": {"source": "none"}}, "handoff": "joinHotspot",
         "items": [{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-"}}]}
        """
    static let cameraProfile = """
        {"schemaVersion": 1, "id": "org.example.cam", "vendor": "Example", "supports": ["wifi"],
         "hotspot": {"security": "wpa2Personal", "passphrase": {"source": "prompt", "hint": "on the label"}},
         "handoff": "joinHotspot",
         "items": [{"name": "Acme camera", "setupOptions": ["rename"], "descriptor": {"ssidPrefix": "Acme-Cam-"}}]}
        """

    /// `extraProfiles`: more profiles to install, by id; the agent on `hotspots`' machine when
    /// given.
    init(extraProfiles: [String: String] = [:], hotspots: SetupHotspots? = nil) throws {
        networkManager = try NetworkManagerMock()
        device = try networkManager.addWiFiDevice("wlan0")
        try networkManager.addAccessPoint(
            device, name: "plug1", ssid: "Acme-Setup-4F2A", bssid: "02:00:00:00:00:31", strength: 50)
        try networkManager.addAccessPoint(
            device, name: "cam", ssid: "Acme-Cam-77", bssid: "02:00:00:00:00:41", strength: 60, security: .wpa2)
        try networkManager.addAccessPoint(
            device, name: "other", ssid: "Other-Net", bssid: "02:00:00:00:00:40", strength: 95, security: .wpa2)
        directory = try ScratchDirectory("picker-agent")
        let profiles = directory.url.appendingPathComponent("profiles")
        try FileManager.default.createDirectory(at: profiles, withIntermediateDirectories: true)
        try Data(Self.plugProfile.utf8).write(to: profiles.appendingPathComponent("org.example.plug.json"))
        try Data(Self.cameraProfile.utf8).write(to: profiles.appendingPathComponent("org.example.cam.json"))
        for (id, profile) in extraProfiles {
            try Data(profile.utf8).write(to: profiles.appendingPathComponent("\(id).json"))
        }
        let ctl = try #require(AccessoryCtlTests.executable(), "accessoryctl was not built next to the test bundle")
        let executable = ctl.deletingLastPathComponent().appendingPathComponent("accessory-agent").path
        let bus = networkManager.bus
        let command = [
            executable, "--bus", bus.address, "--state-directory", directory.path("state"), "--profiles",
            profiles.path, "--kiosk-policy", directory.path("kiosk.json"),
        ]
        let launched = hotspots.map { SetupHotspots.inNamespace($0.machine, command) } ?? command
        agent = try ServiceProcess(
            name: "accessory-agent", executable: launched[0], arguments: Array(launched.dropFirst()),
            environment: bus.environment, logFile: directory.url.appendingPathComponent("agent.log"))
        try agent.wait(for: "owning io.accessorysetup") { bus.hasOwner("io.accessorysetup") }
    }

    var agentLog: String { agent.log }

    var environment: [String: String] { networkManager.bus.environment }

    deinit {
        agent.stop()
        networkManager.stop()
    }
}

/// Services whose agent's log a failure shows.
protocol AgentLogging {
    var agentLog: String { get }
}

/// `accessoryctl` run by a shell in a detached tmux session of its own (its own server
/// socket), read with `capture-pane` and driven with `send-keys`. After the command the shell
/// prints `[exit N]`, then `[tty …]` with which of the terminal's `isig`, `icanon` and `echo`
/// settings are on.
final class TmuxPane: @unchecked Sendable {
    private let socket = "accessory-picker-\(UUID().uuidString.prefix(8))"
    private let tmux = "/usr/bin/tmux"
    static let utf8 = ["LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"]

    convenience init(_ arguments: [String], environment: [String: String], width: Int = 100, height: Int = 30) throws {
        let ctl = try #require(AccessoryCtlTests.executable(), "accessoryctl was not built next to the test bundle")
        let assignments = Self.utf8.merging(environment) { $1 }.sorted { $0.key < $1.key }
            .map { "\($0.key)=\(Self.quote($0.value))" }
        // The runner's own NO_COLOR (swift test may run with one) is not the pane's.
        let unset = environment["NO_COLOR"] == nil ? ["-u", "NO_COLOR"] : []
        let settings = "stty -a | tr ' ;' '\\n\\n' | grep -x -e isig -e icanon -e echo | tr '\\n' ' '"
        let invocation = ["env"] + unset + assignments + [Self.quote(ctl.path)] + arguments.map(Self.quote)
        let command =
            invocation.joined(separator: " ")
            + "; echo \"[exit $?]\"; echo \"[tty $(\(settings))]\""
            + "; sleep 600"
        try self.init(shellCommand: command, width: width, height: height)
    }

    /// A pane running `command` (a `sh -c` command line) as it is.
    init(shellCommand command: String, width: Int = 100, height: Int = 30) throws {
        try Self.startServer([
            tmux, "-L", socket, "-u", "new-session", "-d", "-x", "\(width)", "-y", "\(height)", command,
        ])
    }

    /// Runs the tmux command that starts the server. The server keeps every descriptor the
    /// client had, so the client gets /dev/null and no other descriptor (`ChildProcess`), none
    /// that a reader would wait on for ever; and its signals unblocked, so the pane's processes
    /// get SIGWINCH and SIGINT as on any terminal.
    private static func startServer(_ arguments: [String]) throws {
        let client = try ChildProcess(
            arguments[0], Array(arguments.dropFirst()),
            environment: ProcessInfo.processInfo.environment.merging(utf8) { $1 })
        guard let ended = client.wait(within: 120) else {
            client.send(SIGKILL)
            client.wait(within: 5)
            throw HarnessError("\(arguments.joined(separator: " ")) did not finish within 120 s")
        }
        guard ended == .exited(0) else { throw HarnessError("\(arguments.joined(separator: " ")) \(ended)") }
    }

    /// The visible screen, wrapped lines joined (so a line wider than the pane shows as one);
    /// with `attributes`, the SGR sequences of colour and reverse video too.
    func screen(attributes: Bool = false) throws -> String {
        try run(tmux, ["-L", socket, "capture-pane", "-p", "-J"] + (attributes ? ["-e"] : []), environment: Self.utf8)
    }

    /// Sends tmux key names (`Down`, `Enter`, `Escape`, `C-c`), or text typed as it is.
    func send(_ keys: String..., literally: Bool = false) throws {
        try run(tmux, ["-L", socket, "send-keys"] + (literally ? ["-l"] : []) + keys, environment: Self.utf8)
    }

    /// Waits until the screen contains `text` and returns it; fails with the screen it saw and
    /// the agent's log.
    @discardableResult
    func waitFor(_ text: String, timeout: TimeInterval = 30, services: (any AgentLogging)? = nil) throws -> String {
        let deadline = Date() + timeout
        var last = ""
        while Date() < deadline {
            last = try screen()
            if last.contains(text) { return last }
            usleep(100_000)
        }
        throw HarnessError(
            """
            the screen did not show '\(text)' within \(Int(timeout)) s; it shows:
            \(last)
            agent log:
            \(services?.agentLog ?? "")
            """)
    }

    /// The process the pane's shell runs (`accessoryctl`, which `env` became).
    func commandProcessID() throws -> Int32 {
        let shell = try run(tmux, ["-L", socket, "display-message", "-p", "#{pane_pid}"], environment: Self.utf8)
        let child = try run("/usr/bin/pgrep", ["-P", shell.trimmingCharacters(in: .whitespacesAndNewlines)])
        guard let pid = Int32(child.split(separator: "\n").first ?? "") else {
            throw HarnessError("no process under the pane's shell: '\(child)'")
        }
        return pid
    }

    deinit { _ = try? run(tmux, ["-L", socket, "kill-server"], environment: Self.utf8) }

    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// The agent on a private bus with python-dbusmock's NetworkManager (`wlan0` hears
/// `Acme-Setup-4F2A` and `Acme-Setup-9B1C`), polkit (allowing `open-session` and `authorize`) and
/// logind (session c1, of `nobody`, for every process), and the profile of the sandboxed
/// application `org.example.AcmePlug` (its `applications` name it), whose desktop file is in a
/// directory of the pane's `XDG_DATA_DIRS`. Clients run as `nobody` in a bubblewrap sandbox
/// (`Sandbox`) with a `/.flatpak-info` naming the application.
final class SessionPickerServices: AgentLogging, @unchecked Sendable {
    static let application = "org.example.AcmePlug"
    static let profileID = "com.example.acme"
    static let items = #"[{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-"}}]"#
    static let profile = """
        {"schemaVersion": 1, "id": "\(profileID)", "vendor": "Acme Devices", "applications": ["\(application)"],
         "supports": ["wifi"], "hotspot": {"security": "open", "passphrase": {"source": "none"}}, "handoff": "none",
         "items": \(items)}
        """

    let bus: PrivateSystemBus
    let networkManager: NetworkManagerMock
    let polkit: PolkitMock
    let logind: LogindMock
    let agent: AgentProcess
    let scratch: ScratchDirectory
    let user: UInt32
    /// The sandboxes of the clients started, kept while the test runs.
    private var sandboxes: [Sandbox] = []

    init() throws {
        scratch = try ScratchDirectory("terminal-application")
        try TestApplication.install(
            Self.application, name: "Acme Plug", in: scratch.url.appendingPathComponent("data-dirs"))
        user = try Sandbox.systemUser("nobody")
        bus = try PrivateSystemBus()
        try Sandbox.check(as: user, bus: bus)
        networkManager = try NetworkManagerMock(on: bus)
        polkit = try PolkitMock(on: bus)
        try polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.authorize"])
        logind = try LogindMock(on: bus, session: "c1", uid: user, user: "nobody")
        let device = try networkManager.addWiFiDevice("wlan0")
        try networkManager.addAccessPoint(
            device, name: "plug1", ssid: "Acme-Setup-4F2A", bssid: "02:00:00:00:00:31", strength: 50)
        try networkManager.addAccessPoint(
            device, name: "plug2", ssid: "Acme-Setup-9B1C", bssid: "02:00:00:00:00:32", strength: 80)
        agent = try AgentProcess(bus: bus)
        try agent.installProfile(Self.profile, name: Self.profileID)
        try agent.start()
    }

    deinit {
        agent.stop()
        logind.stop()
        polkit.stop()
        networkManager.stop()
        bus.stop()
    }

    var agentLog: String { agent.log }

    /// The pane's: the private bus as the system bus, the application's desktop file in
    /// `XDG_DATA_DIRS`, no session of the runner's own.
    var paneEnvironment: [String: String] {
        bus.environment.merging([
            "XDG_DATA_DIRS": "\(scratch.path("data-dirs")):/usr/local/share:/usr/share",
            "XDG_DATA_HOME": scratch.path("data-home"), "HOME": scratch.path("home"), "XDG_SESSION_ID": "",
        ]) { $1 }
    }

    /// Starts the test client in the application's sandbox: it opens a session over the
    /// application's profile, shows the picker, and prints the events until `PickerDidDismiss`.
    func startClient() throws -> (process: ChildProcess, output: URL) {
        let sandbox = try Sandbox(application: Self.application)
        sandboxes.append(sandbox)
        let output = scratch.url.appendingPathComponent("client-\(UUID().uuidString).log")
        return (try sandbox.startClient(["pick", Self.profileID, Self.items], as: user, bus: bus, log: output), output)
    }

    /// Waits for a client to end; its status, output, the accessory its `AccessoryAdded`
    /// carried, and the error of its `PickerDidDismiss` (name "" for none).
    func finish(_ client: (process: ChildProcess, output: URL)) -> (
        status: Int32, output: String, added: [String: Any]?, dismissal: (name: String, message: String)?
    ) {
        var ended = client.process.wait(within: 40)
        if ended == nil {
            client.process.terminate()
            ended = client.process.wait(within: 10)
        }
        let output = (try? String(contentsOf: client.output, encoding: .utf8)) ?? ""
        let events = output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        func arguments(_ event: String) -> [String: Any]? {
            guard let found = events.first(where: { $0["event"] as? String == event }) else { return nil }
            return (found["args"] as? [[String: Any]])?.first ?? [:]
        }
        let dismissed = arguments("PickerDidDismiss").map {
            ($0["name"] as? String ?? "", $0["message"] as? String ?? "")
        }
        return (ended?.status ?? -1, output + "\nagent:\n\(agentLog)", arguments("AccessoryAdded"), dismissed)
    }
}

/// The terminal picker of `accessoryctl pick`, driven by keys in tmux against the agent.
@Suite(.serialized) struct TerminalPickerTmuxTests {
    /// The picker's screen, wrapped lines joined, with the trailing blank ones dropped.
    private func lines(_ screen: String) -> [String] {
        var lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeLast() }
        return lines
    }

    /// After the command: the terminal is back in its own mode and off the alternate screen.
    private func expectTerminalRestored(_ screen: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            screen.contains("[tty isig icanon echo ]"), "the terminal was not restored:\n\(screen)",
            sourceLocation: sourceLocation)
        #expect(
            !screen.contains("Choose an accessory"), "the picker stayed on the screen:\n\(screen)",
            sourceLocation: sourceLocation)
    }

    @Test func listsAccessoriesLiveAndDownThenEnterSetsUpTheSecond() throws {
        let services = try PickerServices()
        let pane = try TmuxPane(["pick", "org.example.plug"], environment: services.environment)
        let first = try pane.waitFor("1 found", services: services)
        #expect(first.contains("Acme-Setup-4F2A"))
        #expect(!first.contains("Other-Net"), "a network the profile does not match was shown:\n\(first)")
        // A second plug comes into range while the picker is shown.
        try services.networkManager.addAccessPoint(
            services.device, name: "plug2", ssid: "Acme-Setup-9B1C", bssid: "02:00:00:00:00:32", strength: 80)
        let both = try pane.waitFor("2 found", services: services)
        let rows = lines(both).filter { $0.contains("Acme-Setup-") }
        #expect(rows.count == 2, "\(both)")
        #expect(rows.first?.hasPrefix("› 1  Acme plug  Acme-Setup-4F2A") == true, "\(both)")
        #expect(rows.last?.hasPrefix("  2  Acme plug  Acme-Setup-9B1C  ▂▄▆_") == true, "\(both)")
        let attributed = try pane.screen(attributes: true)
        let selection = attributed.split(separator: "\n").first { $0.contains("› 1") } ?? ""
        #expect(
            selection.hasPrefix("\u{1B}[0;7m") || selection.hasPrefix("\u{1B}[7m"),
            "the selection is not in reverse video: \(attributed.debugDescription)")

        try pane.send("Down")
        let moved = try pane.waitFor("› 2", services: services)
        #expect(lines(moved).contains { $0.hasPrefix("› 2  Acme plug  Acme-Setup-9B1C") }, "\(moved)")
        try pane.send("Enter")
        let end = try pane.waitFor("[tty ", services: services)
        #expect(end.contains("[exit 0]"), "\(end)\n\(services.agentLog)")
        #expect(end.contains("accessoryAdded Acme plug (Acme-Setup-9B1C) authorized"), "\(end)")
        #expect(end.contains("pickerDidDismiss"))
        expectTerminalRestored(end)
    }

    @Test func anAccessorysNumberChoosesIt() throws {
        let services = try PickerServices()
        try services.networkManager.addAccessPoint(
            services.device, name: "plug2", ssid: "Acme-Setup-9B1C", bssid: "02:00:00:00:00:32", strength: 80)
        let pane = try TmuxPane(["pick", "org.example.plug"], environment: services.environment)
        let shown = try pane.waitFor("2 found", services: services)
        let second = try #require(lines(shown).first { $0.hasPrefix("  2  ") }, "\(shown)")
        let ssid = try #require(second.split(separator: " ").first { $0.hasPrefix("Acme-Setup-") }).description
        try pane.send("2")
        try pane.waitFor("› 2", services: services)
        try pane.send("Enter")
        let end = try pane.waitFor("[tty ", services: services)
        #expect(end.contains("[exit 0]"), "\(end)")
        #expect(end.contains("accessoryAdded Acme plug (\(ssid)) authorized"), "\(end)")
        expectTerminalRestored(end)
    }

    @Test(arguments: ["Escape", "C-c"])
    func escapeOrControlCCancelsAndTheClientHearsUserCancelled(key: String) throws {
        let services = try PickerServices()
        let pane = try TmuxPane(["pick", "org.example.plug"], environment: services.environment)
        try pane.waitFor("1 found", services: services)
        try pane.send(key)
        let end = try pane.waitFor("[tty ", services: services)
        #expect(end.contains("[exit 1]"), "\(end)")
        #expect(end.contains("pickerDidDismiss io.accessorysetup.Error.UserCancelled"), "\(end)")
        #expect(end.contains("accessoryctl: error: the picker was cancelled"), "\(end)")
        #expect(!end.contains("accessoryAdded"))
        #expect(services.agentLog.contains("the person cancelled the picker"), "\(services.agentLog)")
        expectTerminalRestored(end)
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalGivesTheTerminalBack(signal: Int32) throws {
        let services = try PickerServices()
        let pane = try TmuxPane(["pick", "org.example.plug"], environment: services.environment)
        try pane.waitFor("1 found", services: services)
        kill(try pane.commandProcessID(), signal)
        let end = try pane.waitFor("[tty ", services: services)
        #expect(end.contains("[exit \(128 + signal)]"), "\(end)")
        expectTerminalRestored(end)
    }

    @Test func renameAndAHiddenPassphrase() throws {
        let services = try PickerServices()
        let pane = try TmuxPane(["pick", "org.example.cam"], environment: services.environment)
        try pane.waitFor("1 found", services: services)
        try pane.send("Enter")
        try pane.waitFor("New name:", services: services)
        try pane.send("Desk cam", literally: true)
        try pane.waitFor("New name: Desk cam", services: services)
        try pane.send("Enter")
        try pane.waitFor("Passphrase for Acme-Cam-77:", services: services)
        try pane.send("label-secret-42", literally: true)
        usleep(300_000)
        let typing = try pane.screen()
        #expect(!typing.contains("label-secret-42"), "the passphrase was shown:\n\(typing)")
        #expect(!typing.contains("*"), "the passphrase's length was shown:\n\(typing)")
        try pane.send("Enter")
        let end = try pane.waitFor("[tty ", services: services)
        #expect(end.contains("[exit 0]"), "\(end)\n\(services.agentLog)")
        #expect(end.contains("pickerSetupRename"), "\(end)")
        #expect(end.contains("accessoryAdded Desk cam (Acme-Cam-77) authorized"), "\(end)")
        #expect(!end.contains("label-secret-42"))
        #expect(!services.agentLog.contains("label-secret-42"))
        expectTerminalRestored(end)
    }

    /// The proof of possession printed on the device is typed, unseen, in the picker, and the
    /// provisioning that follows the pick gives it to the device (the ESP device simulator on
    /// the agent's setup hotspot).
    @Test func pickProvisionAsksTheProofOfPossessionInThePicker() throws {
        let device = try ESPProvisioningDevice(security: 1, proofOfPossession: "lid-code-77", on: SetupHotspots())
        defer { device.stop() }
        let profile = """
            {"schemaVersion": 1, "id": "org.example.espprov", "vendor": "Example", "supports": ["wifi"],
             "hotspot": {"security": "open", "passphrase": {"source": "none"}}, "handoff": "joinHotspot",
             "provisioning": {"protocol": "espIDF", "transport": "softAP", "address": "\(device.address)",
                              "proofOfPossession": {"source": "prompt", "hint": "The code under the plug's lid."}},
             "items": [{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-"}}]}
            """
        let services = try PickerServices(extraProfiles: ["org.example.espprov": profile], hotspots: device.hotspots)
        try services.networkManager.giveIPv4(to: "Acme-Setup-4F2A")
        let pane = try TmuxPane(
            [
                "pick", "org.example.espprov", "--provision", "--ssid", "HomeNet", "--passphrase-file",
                try device.writeFile("home.pass", "home-passphrase"),
            ], environment: services.environment)
        try pane.waitFor("1 found", services: services)
        // Before Enter the picker says what the pick will ask, in polkit's words.
        let listing = try pane.waitFor("encrypted.", services: services)
        let flowing = listing.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: " ")
        #expect(
            flowing.contains(
                "A program of yours asks to give the accessory “Acme plug” the passphrase of the Wi-Fi network "
                    + "“HomeNet”. It is sent encrypted."), "\(listing)")
        print("the picker before Enter:\n\(listing)")
        try pane.send("Enter")
        let asking = try pane.waitFor("Proof of possession:", services: services)
        #expect(asking.contains("The code under the plug's lid."), "\(asking)")
        try pane.send("lid-code-77", literally: true)
        usleep(300_000)
        let typing = try pane.screen()
        #expect(!typing.contains("lid-code-77"), "the proof of possession was shown:\n\(typing)")
        try pane.send("Enter")
        let end = try pane.waitFor("[tty ", timeout: 60, services: services)
        #expect(end.contains("[exit 0]"), "\(end)\n\(services.agentLog)")
        #expect(end.contains("Acme plug joined 'HomeNet' at 192.168.1.42."), "\(end)")
        #expect(end.contains("Session established."), "\(end)")
        #expect(!end.contains("lid-code-77") && !services.agentLog.contains("lid-code-77"))
        expectTerminalRestored(end)
    }

    @Test func pickThenJoinUsesThePassphraseTypedInThePicker() throws {
        let services = try PickerServices()
        let pane = try TmuxPane(["pick", "org.example.cam", "--join"], environment: services.environment)
        try pane.waitFor("1 found", services: services)
        try pane.send("Enter")
        try pane.waitFor("New name:", services: services)
        try pane.send("Enter")
        try pane.waitFor("Passphrase for Acme-Cam-77:", services: services)
        try pane.send("label-secret-42", literally: true)
        try pane.send("Enter")
        let end = try pane.waitFor("[tty ", services: services)
        #expect(end.contains("[exit 0]"), "\(end)\n\(services.agentLog)")
        #expect(end.contains("accessoryAdded Acme camera (Acme-Cam-77) authorized"), "\(end)")
        #expect(end.contains("Joined Acme-Cam-77 on wlan0 through the agent"), "\(end)")
        // The passphrase went to NetworkManager, and nowhere a person or a log would see it.
        #expect(
            services.networkManager.log.contains("label-secret-42"), "the typed passphrase did not reach NetworkManager"
        )
        #expect(!end.contains("label-secret-42"))
        #expect(!services.agentLog.contains("label-secret-42"))
        expectTerminalRestored(end)
    }

    @Test func aFortyColumnTerminalWithoutColour() throws {
        let services = try PickerServices()
        try services.networkManager.addAccessPoint(
            services.device, name: "plug2", ssid: "Acme-Setup-9B1C", bssid: "02:00:00:00:00:32", strength: 80)
        var environment = services.environment
        environment["NO_COLOR"] = "1"
        let pane = try TmuxPane(["pick", "org.example.plug"], environment: environment, width: 40, height: 12)
        let shown = try pane.waitFor("2 found", services: services)
        for line in lines(shown) {
            #expect(line.count <= 40, "a line wider than the terminal (wrapped):\n\(shown)")
        }
        #expect(shown.contains("Acme-Setup-4F2A") && shown.contains("Acme-Setup-9B1C"), "\(shown)")
        #expect(shown.contains("Enter: set up · Esc: cancel"), "\(shown)")
        #expect(!(try pane.screen(attributes: true)).contains("\u{1B}["), "NO_COLOR was not followed")
        try pane.send("Enter")
        let end = try pane.waitFor("[tty ", services: services)
        #expect(end.contains("[exit 0]"), "\(end)")
        expectTerminalRestored(end)
    }

    /// `accessoryctl picker-agent --session c1` in tmux, the picker agent of logind session c1
    /// with the real agent: a sandboxed application (the GIO test client as `nobody` in a
    /// bubblewrap sandbox whose `/.flatpak-info` names `org.example.AcmePlug`) shows the picker,
    /// the agent establishes the application from its connection, and the terminal names it at
    /// the top from its desktop file (in a directory of `XDG_DATA_DIRS`). A second
    /// request while the picker is shown is refused; Enter sets up the first accessory, Escape
    /// cancels; the client gets what was chosen. Ctrl-C then unregisters and exits 0.
    @Test(arguments: ["Enter", "Escape"])
    func theApplicationThatAsksIsNamedAtTheTop(key: String) throws {
        let services = try SessionPickerServices()
        let pane = try TmuxPane(["picker-agent", "--session", "c1"], environment: services.paneEnvironment)
        try pane.waitFor("Registered as the picker of logind session c1", services: services)
        let client = try services.startClient()
        let shown = try pane.waitFor("2 found", services: services)
        let screen = lines(shown)
        #expect(screen.first == "Acme Plug wants to set up an accessory", "\(shown)\n\(services.agentLog)")
        #expect(screen.dropFirst().first == "Choose an accessory to set up · Acme Devices (com.example.acme)")
        let first = try #require(screen.first { $0.hasPrefix("› 1  Acme plug  Acme-Setup-") }, "\(shown)")
        let ssid = try #require(first.split(separator: " ").first { $0.hasPrefix("Acme-Setup-") }).description
        #expect(screen.contains { $0.hasPrefix("  2  Acme plug  Acme-Setup-") }, "\(shown)")

        // One picker at a time: another request while this one is shown is refused.
        let second = services.finish(try services.startClient())
        #expect(second.dismissal?.name == "io.accessorysetup.Error.PickerRestricted", "\(second.output)")
        #expect(second.dismissal?.message.contains("one at a time") == true, "\(second.output)")
        #expect(!(try pane.screen()).contains("[exit"), "the picker agent ended")

        try pane.send(key)
        let result = services.finish(client)
        if key == "Enter" {
            let after = try pane.waitFor("is set up.", services: services)
            #expect(
                after.contains("Acme Plug (org.example.AcmePlug): Acme plug (\(ssid)) is set up."), "\(after)")
            #expect(result.status == 0, "\(result.output)")
            #expect(result.dismissal?.name == "", "\(result.output)")
            #expect(result.added?["application"] as? String == "org.example.AcmePlug", "\(result.output)")
            #expect(result.added?["ssid"] as? String == ssid, "\(result.output)")
        } else {
            let after = try pane.waitFor("the picker was cancelled.", services: services)
            #expect(after.contains("Acme Plug (org.example.AcmePlug): the picker was cancelled."), "\(after)")
            #expect(result.dismissal?.name == "io.accessorysetup.Error.UserCancelled", "\(result.output)")
            #expect(result.added == nil, "\(result.output)")
        }
        // Off the alternate screen, the terminal in its own mode again, still serving.
        let idle = try pane.screen()
        #expect(!idle.contains("Choose an accessory"), "the picker stayed on the screen:\n\(idle)")
        #expect(!idle.contains("[exit"), "the picker agent ended after one picker:\n\(idle)")

        try pane.send("C-c")
        let end = try pane.waitFor("[tty ", services: services)
        #expect(end.contains("Unregistered the picker of logind session c1."), "\(end)")
        #expect(end.contains("[exit 0]"), "\(end)")
        expectTerminalRestored(end)
        #expect(services.agentLog.contains("unregistered"), "\(services.agentLog)")
    }

    @Test func pickerAgentServesTheNextRequestAndSIGTERMUnregistersAndExitsZero() throws {
        let services = try SessionPickerServices()
        let pane = try TmuxPane(
            ["picker-agent"], environment: services.paneEnvironment.merging(["XDG_SESSION_ID": "c1"]) { $1 })
        try pane.waitFor("Registered as the picker of logind session c1", services: services)
        for round in 1...2 {
            let client = try services.startClient()
            try pane.waitFor("2 found", services: services)
            try pane.send("Escape")
            let result = services.finish(client)
            #expect(
                result.dismissal?.name == "io.accessorysetup.Error.UserCancelled", "round \(round): \(result.output)")
            // The picker is off the screen, and says so, before the next one is asked for.
            var screen = try pane.screen()
            for _ in 0..<300 where screen.components(separatedBy: "the picker was cancelled.").count <= round {
                usleep(100_000)
                screen = try pane.screen()
            }
            #expect(screen.components(separatedBy: "the picker was cancelled.").count == round + 1, "\(screen)")
        }
        kill(try pane.commandProcessID(), SIGTERM)
        let end = try pane.waitFor("[tty ", services: services)
        #expect(end.contains("[exit 0]"), "\(end)")
        #expect(end.contains("Unregistered the picker of logind session c1."), "\(end)")
        expectTerminalRestored(end)
    }

    @Test func aSecondPickerAgentForTheSessionIsRefusedWithTheAgentsReasonAndExitsOne() throws {
        let services = try SessionPickerServices()
        let first = try TmuxPane(["picker-agent", "--session", "c1"], environment: services.paneEnvironment)
        try first.waitFor("Registered as the picker of logind session c1", services: services)
        let second = try TmuxPane(["picker-agent", "--session", "c1"], environment: services.paneEnvironment)
        let end = try second.waitFor("[tty ", services: services)
        #expect(end.contains("[exit 1]"), "\(end)")
        #expect(
            end.contains("accessoryctl: error: the agent refused this terminal as the picker of logind session c1:"),
            "\(end)")
        #expect(!(try first.screen()).contains("[exit"), "the first picker agent ended")
    }

    @Test func pickerAgentWithoutASessionSaysToGiveOne() async throws {
        let run = try await accessoryctlProcess(["picker-agent"], environment: ["XDG_SESSION_ID": ""])
        #expect(run.code == .usage, "\(run)")
        #expect(
            run.err.contains("no logind session to serve: XDG_SESSION_ID is not set; give --session ID"), "\(run.err)")
    }

    @Test func withoutATerminalItSaysToUseSelectOrAKioskPolicy() async throws {
        let services = try PickerServices()
        let run = try await accessoryctlProcess(
            ["pick", "org.example.plug", "--timeout", "5"], environment: services.environment, deadline: .seconds(60))
        #expect(run.code == .failure, "\(run)")
        #expect(run.err.contains("no kiosk policy names profile org.example.plug"), "\(run.err)")
        let hint = "no terminal to show its picker on: give --select SSID|ADDRESS, or run it on a terminal"
        #expect(run.err.contains(hint), "\(run.err)")
    }
}
