import Foundation

/// A stand-in for the agent on a private bus (`stand_in_agent.py`): it asks the picker agents
/// that register with it to show one request, given as it goes on the bus, so a test can show a
/// picker as the agent shows it for a sandboxed (Flatpak) application. Its log has one JSON
/// object a line: what it was asked, what it sent and what the picker answered.
public final class StandInAgent: @unchecked Sendable {
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("stand_in_agent.py").path

    private let process: ServiceProcess

    /// Starts it on `bus` with `request` (`PickerAgent1.RequestChoice`'s request as a JSON
    /// object) and `entries` (`UpdateEntries`' entries as a JSON array); waits until it owns
    /// `io.accessorysetup`.
    public init(bus: PrivateSystemBus, request: String, entries: String, logFile: URL) throws {
        process = try ServiceProcess(
            name: "stand-in agent", executable: "/usr/bin/python3", arguments: [Self.script, request, entries],
            environment: bus.environment.merging(["PYTHONDONTWRITEBYTECODE": "1"]) { $1 }, logFile: logFile)
        try process.wait(for: "owning \(AgentProcess.busName)", timeout: 60) {
            process.log.contains(#"{"owned": "\#(AgentProcess.busName)"}"#)
        }
    }

    public var log: String { process.log }

    public func stop() { process.stop() }

    deinit { stop() }
}

/// A sandboxed application as Flatpak exports it to the desktop, for the pickers' tests.
public enum TestApplication {
    /// Writes `<id>.desktop` under `share/applications` and its icon, a 64-pixel PNG drawn with
    /// ImageMagick, under `share/icons/hicolor`, as Flatpak exports them.
    public static func install(_ id: String, name: String, in share: URL) throws {
        let applications = share.appendingPathComponent("applications")
        let icons = share.appendingPathComponent("icons/hicolor/64x64/apps")
        for directory in [applications, icons] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        let entry = """
            [Desktop Entry]
            Type=Application
            Name=\(name)
            Comment=Sets up Acme smart plugs
            Exec=/usr/bin/true
            Icon=\(id)
            """
        try Data((entry + "\n").utf8).write(to: applications.appendingPathComponent("\(id).desktop"))
        // A blue rounded square with a white plug: two prongs, a body and a cord.
        try run(
            "/usr/bin/convert",
            [
                "-size", "64x64", "xc:none", "-fill", "#3584e4", "-draw", "roundrectangle 2,2 61,61 14,14",
                "-fill", "white", "-draw", "rectangle 24,12 28,24", "-draw", "rectangle 36,12 40,24",
                "-draw", "roundrectangle 18,22 46,42 6,6", "-draw", "rectangle 30,42 34,54",
                icons.appendingPathComponent("\(id).png").path,
            ])
    }
}
