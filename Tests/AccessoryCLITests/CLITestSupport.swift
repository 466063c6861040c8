import AccessoryCLI
import AccessoryCore
import Foundation
import ServiceHarness
import Testing

/// What one run of `accessoryctl` printed and how it ended.
struct Run {
    var code: ExitCode
    var out: String
    var err: String
    /// The signal that ended the process, if one did (a trap shows as SIGTRAP or SIGILL).
    var signal: Int32? = nil
    /// Whether the process was killed for running past its deadline.
    var timedOut = false

    var outLines: [String] { out.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
}

/// Runs a command line in-process with captured output.
func accessoryctl(_ arguments: String...) async -> Run {
    await accessoryctl(arguments)
}

func accessoryctl(_ arguments: [String]) async -> Run {
    final class Buffers: Sendable {
        let out = Locked("")
        let err = Locked("")
    }
    let buffers = Buffers()
    let console = Console(
        isTerminal: false,
        writeOut: { text in buffers.out.withLock { $0 += text } },
        writeError: { text in buffers.err.withLock { $0 += text } })
    let code = await AccessoryCtl.run(arguments, console: console)
    return Run(code: code, out: buffers.out.withLock { $0 }, err: buffers.err.withLock { $0 })
}

enum Paths {
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let packageRoot = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()
    static let profiles = packageRoot.appendingPathComponent("profiles")
    static let demoScan = packageRoot.appendingPathComponent("examples/scans/demo.json").path
    static let fixtures = testsDirectory.appendingPathComponent("Fixtures")
    static let snapshots = testsDirectory.appendingPathComponent("Snapshots")

    static func profile(_ name: String) -> String { profiles.appendingPathComponent(name).path }
    static func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name).path }

    static var shippedProfiles: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: profiles.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map(profile)
    }
}

/// A temporary file holding `text`, removed when the test's scope ends.
final class TemporaryFile {
    let path: String

    init(_ text: String, name: String = "file.json") throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "accessoryctl-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    deinit {
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }
}

/// Runs the built `accessoryctl` executable, as a shell would, with `environment` added.
///
/// Standard input is `input`, or the file at `inputFile` (`< /dev/zero`), or empty. With a
/// `deadline`, a process still running then is killed and the run says it timed out.
func accessoryctlProcess(
    _ arguments: [String], environment: [String: String] = [:], input: String? = nil, inputFile: String? = nil,
    deadline: Duration? = nil, uid: UInt32? = nil, namespace: String? = nil
) async throws -> Run {
    try await RunningAccessoryctl(
        arguments, environment: environment, input: input, inputFile: inputFile, deadline: deadline, uid: uid,
        namespace: namespace
    ).finish()
}

/// The built `accessoryctl` started in the background, for tests that act while it runs.
final class RunningAccessoryctl: Sendable {
    let process: ChildProcess
    private final class Flag: Sendable { let value = Locked(false) }
    private let timedOut = Flag()

    init(
        _ arguments: [String], environment: [String: String] = [:], input: String? = nil, inputFile: String? = nil,
        deadline: Duration? = nil, uid: UInt32? = nil, namespace: String? = nil
    ) throws {
        let binary = try #require(AccessoryCtlTests.executable(), "accessoryctl was not built next to the test bundle")
        let command: [String]
        if let namespace {
            // In a network namespace of the test's (SetupHotspots), as root.
            command = SetupHotspots.inNamespace(namespace, [binary.path] + arguments)
        } else if let uid {
            // As another user, with no supplementary groups.
            command =
                ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", binary.path] + arguments
        } else {
            command = [binary.path] + arguments
        }
        let standardInput: ChildProcess.Redirect
        var inputDescriptor: Int32 = -1
        if let inputFile {
            inputDescriptor = open(inputFile, O_RDONLY | O_CLOEXEC)
            guard inputDescriptor >= 0 else {
                throw HarnessError("cannot open \(inputFile): \(String(cString: strerror(errno)))")
            }
            standardInput = .descriptor(inputDescriptor)
        } else {
            standardInput = input == nil ? .null : .pipe
        }
        defer { if inputDescriptor >= 0 { close(inputDescriptor) } }
        process = try ChildProcess(
            command[0], Array(command.dropFirst()),
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            standardInput: standardInput, standardOutput: .pipe, standardError: .pipe)
        if let deadline {
            let process = self.process, timedOut = self.timedOut
            let (seconds, attoseconds) = deadline.components
            let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
                guard process.isRunning else { return }
                timedOut.value.withLock { $0 = true }
                process.send(SIGKILL)
            }
        }
        if let input {
            try process.write(Data(input.utf8))
            process.closeInput()
        }
    }

    func signal(_ number: Int32) { process.send(number) }

    /// Waits for the process to end, on a thread of its own (`offThePool`), and returns what it
    /// printed.
    func finish() async -> Run {
        await offThePool { self.finishBlocking() }
    }

    private func finishBlocking() -> Run {
        let (out, err) = process.readOutput()
        // Its output ended, so it has ended or is about to; one that closed its output and goes
        // on is killed and counted as timed out.
        let ended: Termination
        if let end = process.wait(within: 120) {
            ended = end
        } else {
            timedOut.value.withLock { $0 = true }
            process.send(SIGKILL)
            ended = process.wait(within: 10) ?? .signalled(SIGKILL)
        }
        return Run(
            code: ExitCode(rawValue: ended.rawStatus), out: String(decoding: out, as: UTF8.self),
            err: String(decoding: err, as: UTF8.self), signal: ended.signal, timedOut: timedOut.value.withLock { $0 })
    }
}

/// Polls `condition` every 20 ms until it holds; fails the test after `timeout`.
func waitUntil(_ what: Comment, timeout: Duration = .seconds(20), _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting until \(what)")
            return
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// The built agent on a private system bus with python-dbusmock's NetworkManager (`wlan0` on
/// HomeNet) and polkitd, the `org.example.espprov` profile (an open setup hotspot joined, then
/// ESP-IDF provisioning over it), and the ESP32-style provisioning device simulator as the
/// SoftAP server of every plug, behind the agent's `wlan0` (`SetupHotspots`).
final class ESPPlugAgent {
    static let profileID = "org.example.espprov"
    static let proofOfPossession = "abcd1234"

    let bus: PrivateSystemBus
    let networkManager: NetworkManagerMock
    let polkit: PolkitMock
    let agent: AgentProcess
    let device: ESPProvisioningDevice
    let wifi: String

    /// With `plugs` (their SSIDs) in range, and `kioskPolicy`'s text in force if given.
    init(plugs: [String], kioskPolicy: String? = nil, connectingSeconds: Int = 0) throws {
        device = try ESPProvisioningDevice(
            security: 1, proofOfPossession: Self.proofOfPossession, connectingSeconds: connectingSeconds,
            on: SetupHotspots())
        bus = try PrivateSystemBus()
        networkManager = try NetworkManagerMock(on: bus)
        polkit = try PolkitMock(on: bus)
        wifi = try networkManager.addWiFiDeviceOnHomeNet()
        agent = try AgentProcess(bus: bus, on: device.hotspots)
        for (index, ssid) in plugs.enumerated() { try addPlug(ssid, index: index) }
        try agent.installProfile(
            """
            {"schemaVersion": 1, "id": "\(Self.profileID)", "vendor": "Example", "supports": ["wifi"],
             "hotspot": {"security": "open", "passphrase": {"source": "none"}}, "handoff": "joinHotspot",
             "provisioning": {"protocol": "espIDF", "transport": "softAP", "address": "\(device.address)"},
             "items": [{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-"}}]}
            """, name: Self.profileID)
        if let kioskPolicy { try agent.writeKioskPolicy(kioskPolicy) }
        try agent.start()
    }

    deinit {
        agent.stop()
        polkit.stop()
        networkManager.stop()
        bus.stop()
        device.stop()
    }

    /// Switches a plug on: its setup hotspot `ssid` comes into range of `device` (`wlan0` if
    /// `nil`) as access point number `index` (0–9, each used once).
    /// The plug `ssid`, in range of `device`; `sameAs` another index: the same plug (its BSSID)
    /// heard by a second radio.
    func addPlug(_ ssid: String, index: Int, device: String? = nil, sameAs: Int? = nil) throws {
        try networkManager.addAccessPoint(
            device ?? wifi, name: "plug\(index)", ssid: ssid, bssid: "02:00:00:00:00:3\(sameAs ?? index)",
            strength: UInt8(50 - index))
        try networkManager.giveIPv4(to: ssid)
    }
}
