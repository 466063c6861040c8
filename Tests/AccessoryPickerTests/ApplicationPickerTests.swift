import Foundation
import ServiceHarness
import Testing

/// The built `accessory-picker` under Xvfb, registered with a stand-in for the agent
/// (`StandInAgent`) that asks it to show a request naming a sandboxed application, as the agent
/// does for a Flatpak client. The picker's `XDG_DATA_HOME`, `XDG_DATA_DIRS` and `HOME` are
/// temporary directories, where the test puts the application's desktop file and icon.
final class ApplicationPicker: @unchecked Sendable {
    static let application = "org.example.AcmePlug"
    static let vendor = "Acme Devices"
    static let entries = """
        [{"entry": 1, "item": 0, "name": "Acme plug", "productImage": "images/smart-plug.svg",
          "ssid": "Acme-Setup-4F2A", "bssid": "02:00:00:00:00:31", "signal": 50},
         {"entry": 2, "item": 0, "name": "Acme plug", "productImage": "images/smart-plug.svg",
          "ssid": "Acme-Setup-9B1C", "bssid": "02:00:00:00:00:32", "signal": 80}]
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

    let bus: PrivateSystemBus
    let agent: StandInAgent
    let display: HeadlessDisplay
    let picker: ServiceProcess
    let scratch: ScratchDirectory

    init(application: String?, desktopFile: DesktopFile) throws {
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
        let profiles = scratch.url.appendingPathComponent("profiles")
        try FileManager.default.createDirectory(at: profiles, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: PickerServices.packageRoot.appendingPathComponent("profiles/images"),
            to: profiles.appendingPathComponent("images"))

        bus = try PrivateSystemBus()
        let application = application.map { #", "application": "\#($0)""# } ?? ""
        let request = """
            {"profile": "com.example.acme", "vendor": "\(Self.vendor)"\(application),
             "items": [{"name": "Acme plug", "productImage": "images/smart-plug.svg", "rename": false}],
             "passphrase": false}
            """
        agent = try StandInAgent(
            bus: bus, request: request, entries: Self.entries, logFile: scratch.url.appendingPathComponent("agent.log"))
        display = try HeadlessDisplay()
        let environment = display.environment.merging([
            "XDG_DATA_HOME": dataHome.path, "XDG_DATA_DIRS": "\(dataDir.path):/usr/local/share:/usr/share",
            "HOME": scratch.path("home"),
        ]) { $1 }
        let executable = try AgentProcess.builtProduct("accessory-picker").path
        picker = try ServiceProcess(
            name: "accessory-picker", executable: executable,
            arguments: ["--bus", bus.address, "--session", "c1", "--profiles", profiles.path],
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
        bus.stop()
    }

    /// Runs the AT-SPI driver's `look`; returns its JSON lines and whether it passed.
    func look(screenshot: String? = nil) throws -> (lines: [[String: Any]], passed: Bool, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments =
            [
                PickerServices.testsDirectory.appendingPathComponent("drive_picker.py").path,
                String(picker.processIdentifier), "look", "--rows", "2", "--title", Self.vendor,
            ] + (screenshot.map { ["--shots", scratch.url.path, "--shot-name", $0] } ?? [])
        process.environment = ProcessInfo.processInfo.environment.merging(display.environment) { $1 }
            .merging(["PYTHONDONTWRITEBYTECODE": "1"]) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        let ended = waitForEnd(of: process, within: 60)
        closePipes(pipe)
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return (lines, ended == .exited(0), text)
    }

    /// Whether the stand-in agent heard the person cancel.
    func waitForCancel() -> Bool {
        let deadline = Date() + 10
        while Date() < deadline {
            if agent.log.contains(#""cancelled": "io.accessorysetup.Error.UserCancelled""#) { return true }
            usleep(50_000)
        }
        return false
    }
}

@Suite("The graphical picker names the sandboxed application that asks", .serialized)
struct ApplicationPickerTests {
    static let heading = "Acme Plug wants to set up an accessory"

    @Test(
        "the heading names the application from its desktop file, with its icon named for a screen reader",
        arguments: [ApplicationPicker.DesktopFile.userFlatpakExport, .dataDirs])
    func namesTheApplication(_ desktopFile: ApplicationPicker.DesktopFile) throws {
        let picker = try ApplicationPicker(application: ApplicationPicker.application, desktopFile: desktopFile)
        let run = try picker.look(screenshot: "application")
        let context = "driver:\n\(run.text)\npicker:\n\(picker.picker.log)\nagent:\n\(picker.agent.log)"
        #expect(run.passed, "\(context)")
        let headings = run.lines.compactMap { $0["headings"] as? [[String: String]] }.first
        #expect(headings == [["name": Self.heading, "text": Self.heading]], "\(context)")
        let images = run.lines.compactMap { $0["imagesAbove"] as? [String] }.first
        #expect(images == ["Acme Plug"], "\(context)")
        #expect(picker.waitForCancel(), "the Cancel did not reach the agent:\n\(picker.agent.log)")
        #expect(throws: Never.self) { try PickerServices.checkScreenshot("application", in: picker.scratch) }
    }

    @Test("without a desktop file the heading names the application id")
    func namesTheIdWithoutADesktopFile() throws {
        let picker = try ApplicationPicker(application: ApplicationPicker.application, desktopFile: .none)
        let run = try picker.look()
        let context = "driver:\n\(run.text)\npicker:\n\(picker.picker.log)\nagent:\n\(picker.agent.log)"
        #expect(run.passed, "\(context)")
        let heading = "org.example.AcmePlug wants to set up an accessory"
        let headings = run.lines.compactMap { $0["headings"] as? [[String: String]] }.first
        #expect(headings == [["name": heading, "text": heading]], "\(context)")
        let images = run.lines.compactMap { $0["imagesAbove"] as? [String] }.first
        #expect(images == ["org.example.AcmePlug"], "\(context)")
    }

    @Test("a client on the host gets the picker as before, with no heading")
    func noHeadingForAClientOnTheHost() throws {
        let picker = try ApplicationPicker(application: nil, desktopFile: .dataDirs)
        let run = try picker.look()
        let context = "driver:\n\(run.text)\npicker:\n\(picker.picker.log)\nagent:\n\(picker.agent.log)"
        #expect(run.passed, "\(context)")
        #expect(run.lines.compactMap { $0["headings"] as? [[String: String]] }.first == [], "\(context)")
        let labels = run.lines.compactMap { $0["labels"] as? [String] }.first ?? []
        #expect(labels.contains("Choose the accessory to set up."), "\(context)")
        #expect(!labels.contains { $0.contains("wants to set up an accessory") }, "\(context)")
        #expect(run.lines.compactMap { $0["imagesAbove"] as? [String] }.first == [], "\(context)")
    }
}
