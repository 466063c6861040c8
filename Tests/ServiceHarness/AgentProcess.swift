import Foundation

/// The built `accessory-agent` on a private bus, with a state directory, a profile directory
/// and a kiosk policy path of its own. Its standard error (the log, one `<N>`-prefixed line
/// each) is kept per run; it can be stopped with SIGTERM, killed with SIGKILL, and started
/// again on the same state.
public final class AgentProcess: @unchecked Sendable {
    public static let busName = "io.accessorysetup"

    public let bus: PrivateSystemBus
    public let directory: ScratchDirectory
    public let stateDirectory: URL
    public let profileDirectory: URL
    public let kioskPolicyPath: String
    public let executable: URL
    /// Where it runs: on these setup hotspots' machine, its Wi-Fi interfaces theirs, or else
    /// in the test's own network namespace.
    public let hotspots: SetupHotspots?
    private var process: ServiceProcess?
    private var runs = 0

    /// Makes the directories and starts the agent; throws with the reason (and the agent's log)
    /// when the binary is missing or it does not come to own `io.accessorysetup`.
    public init(bus: PrivateSystemBus, on hotspots: SetupHotspots? = nil) throws {
        self.bus = bus
        self.hotspots = hotspots
        directory = try ScratchDirectory("accessory-agent")
        stateDirectory = directory.url.appendingPathComponent("state")
        profileDirectory = directory.url.appendingPathComponent("profiles")
        kioskPolicyPath = directory.path("kiosk.json")
        try FileManager.default.createDirectory(at: profileDirectory, withIntermediateDirectories: true)
        executable = try Self.findExecutable()
    }

    /// The built agent beside the test runner (so a sanitizer build tests its own agent), or
    /// the package's debug build.
    public static func findExecutable() throws -> URL { try builtProduct("accessory-agent") }

    /// The package's executable `name`, as `findExecutable` looks for the agent.
    public static func builtProduct(_ name: String) throws -> URL {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name),
            packageRoot.appendingPathComponent(".build/debug/\(name)"),
        ]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw HarnessError(
                """
                \(name) is not built (looked in \(candidates.map(\.path).joined(separator: ", "))); \
                run 'swift build --build-tests' first
                """)
        }
        return found
    }

    /// The records file the agent keeps.
    public var storeURL: URL { stateDirectory.appendingPathComponent("accessories.json") }

    /// Writes a profile (JSON text) as `<name>.json` in the agent's profile directory.
    public func installProfile(_ json: String, name: String) throws {
        try Data(json.utf8).write(to: profileDirectory.appendingPathComponent("\(name).json"))
    }

    /// Copies a shipped profile (a file of `profiles/`) into the agent's profile directory,
    /// with the product images the shipped profiles share (`profiles/images/`).
    public func installShippedProfile(_ file: String) throws {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        try FileManager.default.copyItem(
            at: packageRoot.appendingPathComponent("profiles/\(file)"),
            to: profileDirectory.appendingPathComponent(file))
        let images = profileDirectory.appendingPathComponent("images")
        if !FileManager.default.fileExists(atPath: images.path) {
            try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("profiles/images"), to: images)
        }
    }

    /// Writes the kiosk policy the agent reads when it starts.
    public func writeKioskPolicy(_ json: String) throws {
        try Data(json.utf8).write(to: URL(fileURLWithPath: kioskPolicyPath))
    }

    /// Added to the environment of every later start (`RUNTIME_DIRECTORY`, as the unit sets it).
    public var environment: [String: String] = [:]

    /// Starts the agent and waits until it owns `io.accessorysetup` on the bus and has said so
    /// in its log. A previous run must have ended; its name is waited for to be released first.
    public func start(arguments extra: [String] = [], timeout: TimeInterval = 60) throws {
        precondition(process?.isRunning != true, "the agent is already running")
        let deadline = Date() + 5
        while bus.hasOwner(Self.busName) && Date() < deadline { usleep(20_000) }
        runs += 1
        let command =
            [
                executable.path, "--bus", bus.address, "--state-directory", stateDirectory.path, "--profiles",
                profileDirectory.path, "--kiosk-policy", kioskPolicyPath,
            ] + extra
        let launched = hotspots.map { SetupHotspots.inNamespace($0.machine, command) } ?? command
        let agent = try ServiceProcess(
            name: "accessory-agent", executable: launched[0], arguments: Array(launched.dropFirst()),
            environment: bus.environment.merging(environment) { $1 },
            logFile: directory.url.appendingPathComponent("agent-\(runs).log"))
        process = agent
        // The agent logs "serving" just after the bus granted the name: wait for both, so a
        // test reading the log right after finds that line.
        try agent.wait(for: "owning \(Self.busName)", timeout: timeout) {
            agent.log.contains("serving \(Self.busName)") && bus.hasOwner(Self.busName)
        }
    }

    public var isRunning: Bool { process?.isRunning == true }

    public var processIdentifier: Int32? { process?.processIdentifier }

    /// The current (or last) run's log.
    public var log: String { process?.log ?? "" }

    /// Every run's log, oldest first.
    public var logs: [String] {
        (1...max(runs, 1)).map { run in
            (try? String(contentsOf: directory.url.appendingPathComponent("agent-\(run).log"), encoding: .utf8)) ?? ""
        }
    }

    /// Stops the agent with SIGTERM and returns how it ended; one that does not end within
    /// `timeout` is killed and reported as a failure.
    @discardableResult
    public func terminate(timeout: TimeInterval = 10) throws -> Termination {
        guard let process else { throw HarnessError("the agent was never started") }
        process.send(SIGTERM)
        if let termination = process.waitForExit(timeout: timeout) { return termination }
        process.send(SIGKILL)
        _ = process.waitForExit(timeout: 5)
        throw HarnessError("the agent did not stop within \(Int(timeout)) s of SIGTERM:\n\(log)")
    }

    /// Kills the agent with SIGKILL, as a crash would end it, and waits for it to be gone.
    public func kill() throws {
        guard let process else { throw HarnessError("the agent was never started") }
        process.send(SIGKILL)
        guard process.waitForExit(timeout: 10) != nil else { throw HarnessError("the agent survived SIGKILL") }
    }

    /// Stops the agent if it runs (SIGTERM, then SIGKILL).
    public func stop() {
        process?.stop()
    }

    deinit { stop() }
}
