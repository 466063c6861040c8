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
