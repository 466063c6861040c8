import Foundation
import ServiceHarness
import Testing

/// The built `accessory-picker` under Xvfb, registered as the picker agent of logind session c1
/// (python-dbusmock's `logind`, which answers c1 for every process) with the built agent, which
/// stands on python-dbusmock's NetworkManager, BlueZ and polkit on a private system bus. The
/// client that shows the picker is the GIO test client (`agent_client.py pick`) run as `nobody`
/// in a bubblewrap sandbox with a `/.flatpak-info` naming `org.example.AcmePlug` (`Sandbox`), over
/// an installed profile whose `applications` name it: the agent establishes the application from
/// the client's connection and puts it in `RequestChoice`'s request. The picker's
/// `XDG_DATA_HOME`, `XDG_DATA_DIRS` and `HOME` are temporary directories, where the test puts the
/// application's desktop file and icon.
final class ApplicationPicker: @unchecked Sendable {
    static let application = "org.example.AcmePlug"
    static let vendor = "Acme Devices"
    static let profileID = "com.example.acme"
    static let items = """
        [{"name": "Acme plug", "productImage": "images/smart-plug.svg", "descriptor": {"ssidPrefix": "Acme-Setup-"}}]
        """
    /// The application's own profile: only it (and host processes) may open it.
    static let profile = """
        {"schemaVersion": 1, "id": "\(profileID)", "vendor": "\(vendor)", "applications": ["\(application)"],
         "supports": ["wifi"], "hotspot": {"security": "open", "passphrase": {"source": "none"}}, "handoff": "none",
         "items": \(items)}
        """

    /// Where the application's desktop file is.
    enum DesktopFile: String, CaseIterable, Sendable {
        /// Exported by a Flatpak installation of the user (`$XDG_DATA_HOME/flatpak/exports/share`),
        /// which `XDG_DATA_DIRS` does not name: the picker looks there itself.
        case userFlatpakExport
        /// In a directory of `XDG_DATA_DIRS`, as a session with Flatpak's profile has it.
        case dataDirs
        /// Nowhere.
        case none
    }

    /// Who shows the picker.
    enum Client: Sendable {
        /// The application in its sandbox.
        case sandboxed
        /// A process of the same user on the host.
        case host
    }

    let bus: PrivateSystemBus
    let networkManager: NetworkManagerMock
    let bluez: BlueZMock
    let polkit: PolkitMock
    let logind: LogindMock
    let agent: AgentProcess
    let display: HeadlessDisplay
    let picker: ServiceProcess
    let scratch: ScratchDirectory
    /// The uid the clients run as, and whose logind session c1 is.
    let user: UInt32
    /// The sandboxes of the clients started, kept while the test runs.
    private var sandboxes: [Sandbox] = []

    init(desktopFile: DesktopFile) throws {
        scratch = try ScratchDirectory("application-picker")
        let dataHome = scratch.url.appendingPathComponent("data-home")
        let dataDir = scratch.url.appendingPathComponent("data-dirs")
        let share: URL? =
            switch desktopFile {
            case .userFlatpakExport: dataHome.appendingPathComponent("flatpak/exports/share")
            case .dataDirs: dataDir
            case .none: nil
            }
        if let share { try TestApplication.install(Self.application, name: "Acme Plug", in: share) }

        user = try Sandbox.systemUser("nobody")
        bus = try PrivateSystemBus()
        try Sandbox.check(as: user, bus: bus)
        networkManager = try NetworkManagerMock(on: bus)
        bluez = try BlueZMock(on: bus)
        polkit = try PolkitMock(on: bus)
        try polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.authorize"])
        logind = try LogindMock(on: bus, session: "c1", uid: user, user: "nobody")
        try bluez.addAdapter()
        let device = try networkManager.addWiFiDeviceOnHomeNet()
        try networkManager.addAccessPoint(
            device, name: "plug1", ssid: "Acme-Setup-4F2A", bssid: "02:00:00:00:00:31", strength: 50)
        try networkManager.addAccessPoint(
            device, name: "plug2", ssid: "Acme-Setup-9B1C", bssid: "02:00:00:00:00:32", strength: 80)
        try networkManager.addAccessPoint(
            device, name: "other", ssid: "Other-Net", bssid: "02:00:00:00:00:40", strength: 95, security: .wpa2)
        agent = try AgentProcess(bus: bus)
        try agent.installProfile(Self.profile, name: Self.profileID)
        try FileManager.default.copyItem(
            at: PickerServices.packageRoot.appendingPathComponent("profiles/images"),
            to: agent.profileDirectory.appendingPathComponent("images"))
        try agent.start()

        display = try HeadlessDisplay()
        let environment = display.environment.merging([
            "XDG_DATA_HOME": dataHome.path, "XDG_DATA_DIRS": "\(dataDir.path):/usr/local/share:/usr/share",
            "HOME": scratch.path("home"),
        ]) { $1 }
        let executable = try AgentProcess.builtProduct("accessory-picker").path
        picker = try ServiceProcess(
            name: "accessory-picker", executable: executable,
            arguments: ["--bus", bus.address, "--session", "c1", "--profiles", agent.profileDirectory.path],
            environment: environment, logFile: scratch.url.appendingPathComponent("picker.log"))
        let picker = self.picker
        try picker.wait(for: "the picker's registration", timeout: 90) {
            picker.log.contains("registered as the picker of logind session c1") || !picker.isRunning
        }
        guard picker.isRunning else { throw HarnessError("accessory-picker exited:\n\(picker.log)") }
    }

    deinit {
        picker.stop()
        display.stop()
        agent.stop()
        logind.stop()
        polkit.stop()
        bluez.stop()
        networkManager.stop()
        bus.stop()
    }

    /// Starts the test client as `nobody` (in the application's sandbox, or on the host): it
    /// opens a session over the application's profile and shows the picker for its item, then
    /// prints the session's events until `PickerDidDismiss`.
    func startClient(_ client: Client) throws -> (process: ChildProcess, output: URL) {
        let output = scratch.url.appendingPathComponent("client-\(UUID().uuidString).log")
        let arguments = ["pick", Self.profileID, Self.items]
        switch client {
        case .sandboxed:
            let sandbox = try Sandbox(application: Self.application)
            sandboxes.append(sandbox)
            return (try sandbox.startClient(arguments, as: user, bus: bus, log: output), output)
        case .host:
            return (try Sandbox.startHostClient(arguments, as: user, bus: bus, log: output), output)
        }
    }

    /// Waits for the client to end; returns its exit status, its output, and the error name its
    /// `PickerDidDismiss` carried (empty when it carried none).
    func finish(_ client: (process: ChildProcess, output: URL)) -> (status: Int32, output: String, dismissal: String?) {
        var ended = client.process.wait(within: 40)
        if ended == nil {
            client.process.terminate()
            ended = client.process.wait(within: 10)
        }
        let output = (try? String(contentsOf: client.output, encoding: .utf8)) ?? ""
        let events = output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let dismissed = events.first { $0["event"] as? String == "PickerDidDismiss" }
        let error = (dismissed?["args"] as? [[String: Any]])?.first
        return (ended?.status ?? -1, output, dismissed.map { _ in error?["name"] as? String ?? "" })
    }

    /// Runs the AT-SPI driver's `look` (read what is above the list, take a screenshot, press
    /// Cancel); returns its JSON lines and whether it passed.
    func look(screenshot: String? = nil) throws -> (lines: [[String: Any]], passed: Bool, text: String) {
        let process = try ChildProcess(
            "/usr/bin/python3",
            [
                PickerServices.testsDirectory.appendingPathComponent("drive_picker.py").path,
                String(picker.processIdentifier), "look", "--rows", "2", "--title", Self.vendor,
            ] + (screenshot.map { ["--shots", scratch.url.path, "--shot-name", $0] } ?? []),
            environment: ProcessInfo.processInfo.environment.merging(display.environment) { $1 }
                .merging(["PYTHONDONTWRITEBYTECODE": "1"]) { $1 },
            standardOutput: .pipe, standardError: .output)
        let data = process.readOutput().output
        let ended = process.wait(within: 60)
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return (lines, ended == .exited(0), text)
    }
}

extension GraphicalPickerTests {
    @Suite(
        "The graphical picker names the sandboxed application that asks (real agent, mock services, bwrap)", .serialized
    )
    struct ApplicationPickerTests {
        static let heading = "Acme Plug wants to set up an accessory"
        static let cancelled = "io.accessorysetup.Error.UserCancelled"

        /// What the test saw, for a failure's message.
        private func context(
            _ run: (lines: [[String: Any]], passed: Bool, text: String), _ picker: ApplicationPicker,
            _ client: (status: Int32, output: String, dismissal: String?)
        ) -> String {
            """
            driver:
            \(run.text)
            picker:
            \(picker.picker.log)
            agent:
            \(picker.agent.log)
            client (status \(client.status)):
            \(client.output)
            """
        }

        @Test(
            "the heading names the application from its desktop file, with its icon named for a screen reader",
            arguments: [ApplicationPicker.DesktopFile.userFlatpakExport, .dataDirs])
        func namesTheApplication(_ desktopFile: ApplicationPicker.DesktopFile) throws {
            let picker = try ApplicationPicker(desktopFile: desktopFile)
            let client = try picker.startClient(.sandboxed)
            let run = try picker.look(screenshot: "application")
            let result = picker.finish(client)
            let context = context(run, picker, result)
            #expect(run.passed, "\(context)")
            let headings = run.lines.compactMap { $0["headings"] as? [[String: String]] }.first
            #expect(headings == [["name": Self.heading, "text": Self.heading]], "\(context)")
            let images = run.lines.compactMap { $0["imagesAbove"] as? [String] }.first
            #expect(images == ["Acme Plug"], "\(context)")
            #expect(
                picker.picker.log.contains(
                    "showing the picker of \(ApplicationPicker.profileID) for \(ApplicationPicker.application)"),
                "\(context)")
            // The Cancel the driver pressed reached the application as its picker's dismissal.
            #expect(result.dismissal == Self.cancelled, "\(context)")
            #expect(result.status == 0, "\(context)")
            #expect(throws: Never.self) { try PickerServices.checkScreenshot("application", in: picker.scratch) }
        }

        @Test("without a desktop file the heading names the application id")
        func namesTheIdWithoutADesktopFile() throws {
            let picker = try ApplicationPicker(desktopFile: .none)
            let client = try picker.startClient(.sandboxed)
            let run = try picker.look()
            let result = picker.finish(client)
            let context = context(run, picker, result)
            #expect(run.passed, "\(context)")
            let heading = "org.example.AcmePlug wants to set up an accessory"
            let headings = run.lines.compactMap { $0["headings"] as? [[String: String]] }.first
            #expect(headings == [["name": heading, "text": heading]], "\(context)")
            let images = run.lines.compactMap { $0["imagesAbove"] as? [String] }.first
            #expect(images == ["org.example.AcmePlug"], "\(context)")
            #expect(result.dismissal == Self.cancelled, "\(context)")
        }

        @Test("a client on the host gets the picker as before, with no heading")
        func noHeadingForAClientOnTheHost() throws {
            let picker = try ApplicationPicker(desktopFile: .dataDirs)
            let client = try picker.startClient(.host)
            let run = try picker.look()
            let result = picker.finish(client)
            let context = context(run, picker, result)
            #expect(run.passed, "\(context)")
            #expect(run.lines.compactMap { $0["headings"] as? [[String: String]] }.first == [], "\(context)")
            let labels = run.lines.compactMap { $0["labels"] as? [String] }.first ?? []
            #expect(labels.contains("Choose the accessory to set up."), "\(context)")
            #expect(!labels.contains { $0.contains("wants to set up an accessory") }, "\(context)")
            #expect(run.lines.compactMap { $0["imagesAbove"] as? [String] }.first == [], "\(context)")
            #expect(result.dismissal == Self.cancelled, "\(context)")
        }
    }
}
