import AccessoryCore
import BusService
import DBusValues
import Foundation
import ServiceHarness
import Synchronization
import Testing

enum AgentPaths {
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let packageRoot = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()
    static let pickerAgentXML = packageRoot.appendingPathComponent("dbus/io.accessorysetup.PickerAgent1.xml")
    static let exampleClient = packageRoot.appendingPathComponent("examples/pick.py").path
    /// The GIO client the tests run as another user.
    static let testClient = testsDirectory.appendingPathComponent("Clients/agent_client.py").path
}

/// A test profile over the open `Acme-Setup-` hotspots, apart from the shipped ones.
let plugProfile = """
    {
      "schemaVersion": 1,
      "id": "org.example.plug",
      "vendor": "Example",
      "supports": ["wifi"],
      "hotspot": { "security": "open", "passphrase": { "source": "none" } },
      "handoff": "joinHotspot",
      "items": [ { "name": "Acme plug", "setupOptions": ["rename"], "descriptor": { "ssidPrefix": "Acme-Setup-" } } ]
    }
    """

/// A kiosk policy that picks for `profiles` and the users `users` (uids) with `choose`.
func kioskPolicy(profiles: [String], users: [UInt32], choose: String = "firstMatch") -> String {
    let profileList = profiles.map { "\"\($0)\"" }.joined(separator: ", ")
    let userList = users.map(String.init).joined(separator: ", ")
    return """
        {"schemaVersion": 1, "policies": [
          {"profiles": [\(profileList)], "users": [\(userList)], "choose": "\(choose)"}
        ]}
        """
}

/// The agent and what it stands on, on one private system bus: python-dbusmock's
/// NetworkManager (the project's template: `wlan0` on `HomeNet`, with `WLED-AP`, two
/// `Acme-Setup-` hotspots and an unrelated network in range), BlueZ (`hci0`) and polkitd
/// (denying everything until told otherwise), and the built `accessory-agent` with the WLED
/// profile and the test plug profile installed.
final class AgentServices: @unchecked Sendable {
    let bus: PrivateSystemBus
    let networkManager: NetworkManagerMock
    let bluez: BlueZMock
    let polkit: PolkitMock
    let agent: AgentProcess
    let device: String
    /// The access point of `Acme-Setup-4F2A`.
    let plugAccessPoint: String

    static let wledBSSID = "02:00:00:00:00:20"
    static let plugBSSID = "02:00:00:00:00:31"

    /// Starts everything; the agent last, with `kiosk` as its kiosk policy when given, on
    /// `hotspots`' machine when given.
    init(kiosk: String? = nil, startAgent: Bool = true, hotspots: SetupHotspots? = nil) throws {
        bus = try PrivateSystemBus()
        networkManager = try NetworkManagerMock(on: bus)
        bluez = try BlueZMock(on: bus)
        polkit = try PolkitMock(on: bus)
        try bluez.addAdapter()
        device = try networkManager.addWiFiDeviceOnHomeNet()
        try networkManager.addAccessPoint(
            device, name: "wled", ssid: "WLED-AP", bssid: Self.wledBSSID, strength: 60, security: .wpa2)
        plugAccessPoint = try networkManager.addAccessPoint(
            device, name: "plug1", ssid: "Acme-Setup-4F2A", bssid: Self.plugBSSID, strength: 50)
        try networkManager.addAccessPoint(
            device, name: "plug2", ssid: "Acme-Setup-9B1C", bssid: "02:00:00:00:00:32", strength: 80)
        try networkManager.addAccessPoint(
            device, name: "other", ssid: "Other-Net", bssid: "02:00:00:00:00:40", strength: 95, security: .wpa2)
        agent = try AgentProcess(bus: bus, on: hotspots)
        try agent.installShippedProfile("wled.json")
        try agent.installProfile(plugProfile, name: "org.example.plug")
        if let kiosk { try agent.writeKioskPolicy(kiosk) }
        if startAgent { try agent.start() }
    }

    deinit {
        agent.stop()
        polkit.stop()
        bluez.stop()
        networkManager.stop()
        bus.stop()
    }

    /// A new client connection to the agent's bus.
    func client() async throws -> AgentClient {
        try await AgentClient(bus: BusConnection.connect(.address(bus.address), threadName: "test-client"))
    }

    /// What the agent's store holds now, read with the core's store.
    func storedRecords() throws -> [AccessoryRecord] {
        try AccessoryStore(url: agent.storeURL).load()
    }

    /// Files in the agent's state directory.
    func stateFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: agent.stateDirectory.path)) ?? []).sorted()
    }

    /// Runs the GIO test client (`Clients/agent_client.py`) as `uid`, with no groups.
    func runClient(uid: UInt32, _ arguments: [String], timeout: TimeInterval = 40) async throws -> ScriptRun {
        try await runScript(AgentPaths.testClient, arguments, uid: uid, timeout: timeout)
    }

    /// Runs a Python script with `/usr/bin/python3` against the agent's bus, as `uid` when given
    /// (through `setpriv`), and returns what it printed and how it exited.
    func runScript(
        _ script: String, _ arguments: [String], uid: UInt32? = nil, timeout: TimeInterval = 40
    ) async throws -> ScriptRun {
        try await runProgram("/usr/bin/python3", [script] + arguments, uid: uid, timeout: timeout)
    }

    /// The arguments that run `program` as `uid` with no groups, through `setpriv`.
    static func asUser(_ uid: UInt32, _ program: String, _ arguments: [String]) -> [String] {
        ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", program] + arguments
    }

    /// Runs `program` against the agent's bus (as its system bus), as `uid` when given, and
    /// returns what it printed and how it exited; it is killed after `timeout` seconds. The wait
    /// is on a thread of its own (`offThePool`).
    func runProgram(
        _ program: String, _ arguments: [String], uid: UInt32? = nil, timeout: TimeInterval = 40
    ) async throws -> ScriptRun {
        try await offThePool { try self.runProgramBlocking(program, arguments, uid: uid, timeout: timeout) }
    }

    private func runProgramBlocking(
        _ program: String, _ arguments: [String], uid: UInt32?, timeout: TimeInterval
    ) throws -> ScriptRun {
        var environment = ProcessInfo.processInfo.environment.merging(bus.environment) { $1 }
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        let process =
            if let uid {
                try ChildProcess(
                    "/usr/bin/setpriv", Self.asUser(uid, program, arguments), environment: environment,
                    standardOutput: .pipe, standardError: .pipe)
            } else {
                try ChildProcess(
                    program, arguments, environment: environment, standardOutput: .pipe, standardError: .pipe)
            }
        let finished = Atomic(false)
        Thread.detachNewThread {
            let deadline = Date() + timeout
            while !finished.load(ordering: .acquiring) && Date() < deadline { usleep(50_000) }
            if !finished.load(ordering: .acquiring) { process.send(SIGKILL) }
        }
        let (out, err) = process.readOutput()
        let ended = process.wait(within: timeout + 10) ?? .signalled(SIGKILL)
        finished.store(true, ordering: .releasing)
        return ScriptRun(
            status: ended.rawStatus, killed: ended.signal != nil,
            out: String(decoding: out, as: UTF8.self), err: String(decoding: err, as: UTF8.self))
    }
}

/// What a script printed and how it ended.
struct ScriptRun: CustomStringConvertible {
    var status: Int32
    var killed: Bool
    var out: String
    var err: String

    var lines: [String] { out.split(separator: "\n").map(String.init) }

    /// The JSON objects the test client printed, one a line.
    var objects: [[String: Any]] {
        lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    var description: String { "status \(status)\(killed ? " (killed)" : "")\nstdout:\n\(out)\nstderr:\n\(err)" }
}

/// A client of the agent over its own connection.
final class AgentClient: Sendable {
    let bus: BusConnection

    init(bus: BusConnection) {
        self.bus = bus
    }

    static let manager = "/io/accessorysetup"

    /// Calls a `Manager1` method.
    @discardableResult
    func manager(_ method: String, _ arguments: [DBusValue] = []) async throws(BusError) -> [DBusValue] {
        try await bus.call(
            destination: AgentProcess.busName, path: Self.manager, interface: "io.accessorysetup.Manager1",
            method: method, arguments, timeout: .seconds(30))
    }

    /// Opens a session over `profile` and starts recording its signals (before `Activate`).
    func openSession(_ profile: String) async throws -> ClientSession {
        let reply = try await manager("OpenSession", [.string(profile), .vardict([])])
        let path = try #require(reply.first?.string, "OpenSession returned \(reply)")
        let recorder = SignalRecorder(
            await bus.signals(sender: nil, path: path, interface: "io.accessorysetup.Session1"))
        return ClientSession(client: self, path: path, signals: recorder)
    }

    /// Records the `Manager1.Event` signals this connection receives after `Subscribe`.
    func subscribe() async throws -> SignalRecorder {
        let recorder = SignalRecorder(
            await bus.signals(
                sender: nil, path: Self.manager, interface: "io.accessorysetup.Manager1", member: "Event"))
        try await manager("Subscribe")
        return recorder
    }

    /// The caller's records, as `ListAccessories` returns them.
    func listAccessories(_ options: DBusValue = .vardict([])) async throws -> [DBusValue] {
        try await manager("ListAccessories", [options]).first?.elements ?? []
    }

    func close() async { await bus.close() }
}

/// A waiting picker agent registered by `client`, and a session whose picker looks for a plug
/// that is nowhere: its discovery (rescans between sleeps) ends by its 1 s timer. Returns the
/// picker agent (to keep while the test runs), the session and its signals up to the dismissal.
func showPickerThatTimesOut(_ client: AgentClient) async throws -> (TestPicker, ClientSession, [BusSignal]) {
    let picker = try await TestPicker(on: client.bus, behaviour: .wait)
    try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
    let session = try await client.openSession("org.example.plug")
    _ = try await session.activate()
    let nowhere = pickerItem("Acme plug", [("ssidPrefix", "Acme-Setup-ZZ")])
    try await session.showPicker([nowhere], settings: .vardict([("discoveryTimeout", .uint32(1))]))
    return (picker, session, try await session.waitForDismiss())
}

/// A session the test opened, and the signals it received.
final class ClientSession: Sendable {
    let client: AgentClient
    let path: String
    let signals: SignalRecorder

    init(client: AgentClient, path: String, signals: SignalRecorder) {
        self.client = client
        self.path = path
        self.signals = signals
    }

    @discardableResult
    func call(_ method: String, _ arguments: [DBusValue] = []) async throws(BusError) -> [DBusValue] {
        try await client.bus.call(
            destination: AgentProcess.busName, path: path, interface: "io.accessorysetup.Session1",
            method: method, arguments, timeout: .seconds(30))
    }

    /// Activates and waits for `Activated`; returns its accessories.
    func activate() async throws -> [DBusValue] {
        try await call("Activate")
        let activated = try await signals.wait(for: "Activated") { $0.contains { $0.member == "Activated" } }
        return activated.first { $0.member == "Activated" }?.arguments.first?.elements ?? []
    }

    /// Shows a picker for `items` with `settings`.
    func showPicker(_ items: [DBusValue], settings: DBusValue = .vardict([])) async throws(BusError) {
        try await call("ShowPicker", [.array(items, elementType: "a{sv}"), settings])
    }

    /// Waits until the picker is dismissed; returns every signal so far.
    func waitForDismiss(timeout: Duration = .seconds(30)) async throws -> [BusSignal] {
        try await signals.wait(for: "PickerDidDismiss", timeout: timeout) {
            $0.contains { $0.member == "PickerDidDismiss" }
        }
    }
}

/// A picker item as the D-Bus API takes it: `name` and a `descriptor` of string fields.
func pickerItem(_ name: String, _ descriptor: [(String, String)], setupOptions: [String] = []) -> DBusValue {
    var entries: [(String, DBusValue)] = [
        ("name", .string(name)), ("descriptor", .vardict(descriptor.map { ($0.0, .string($0.1)) })),
    ]
    if !setupOptions.isEmpty { entries.append(("setupOptions", .strings(setupOptions))) }
    return .vardict(entries)
}

let wledItem = pickerItem("WLED controller (WLED-AP)", [("ssid", "WLED-AP")])
let plugItem = pickerItem("Acme plug", [("ssidPrefix", "Acme-Setup-")], setupOptions: ["rename"])

/// Collects the signals of a subscription as they arrive.
final class SignalRecorder: Sendable {
    private let received: Received
    private let task: Task<Void, Never>

    private final class Received: Sendable {
        let signals = Locked<[BusSignal]>([])
    }

    init(_ stream: AsyncStream<BusSignal>) {
        let received = Received()
        self.received = received
        task = Task {
            for await signal in stream { received.signals.withLock { $0.append(signal) } }
        }
    }

    deinit { task.cancel() }

    var all: [BusSignal] { received.signals.withLock { $0 } }

    /// The members received, in order, leaving out property changes.
    var members: [String] { all.map(\.member) }

    /// Waits until `condition` holds for what was received; fails the test with what was
    /// received when it does not within `timeout`.
    @discardableResult
    func wait(
        for what: String, timeout: Duration = .seconds(30), until condition: ([BusSignal]) -> Bool
    ) async throws -> [BusSignal] {
        if let received = try await poll(
            timeout: timeout,
            {
                let now = all; return condition(now) ? now : nil
            })
        {
            return received
        }
        throw HarnessError("no \(what) within \(timeout); received: \(members)")
    }

    /// Waits `duration` and returns what arrived meanwhile, for checking that nothing does.
    func quiet(for duration: Duration) async throws -> [BusSignal] {
        let before = all.count
        try await Task.sleep(for: duration)
        return Array(all.dropFirst(before))
    }
}

/// A picker front end of the test: it implements `io.accessorysetup.PickerAgent1` on a client
/// connection, records every call the agent makes, and answers `RequestChoice` from the
/// entries it received through `UpdateEntries`.
final class TestPicker: Sendable {
    enum Behaviour: Sendable {
        /// Choose the entry whose SSID is this, once it is shown.
        case choose(ssid: String, name: String? = nil)
        /// Choose the entry of this Bluetooth address, once it is shown.
        case chooseDevice(address: String)
        /// Never answer; the picker stays open.
        case wait
        /// Answer with `UserCancelled` once an entry is shown.
        case cancel
    }

    struct Call: Sendable {
        var member: String
        var arguments: [DBusValue]
        /// The unique name of the connection the call came from.
        var sender = ""
    }

    static let path = "/io/accessorysetup/test/picker"

    let bus: BusConnection
    private let state: State
    private let task: Task<Void, Never>

    /// How the person answers `ConfirmPasskey`: the number matches, or it does not.
    enum Comparison: Sendable {
        case matches, differs
    }

    private final class State: Sendable {
        let calls = Locked<[Call]>([])
        /// Entries shown now, by id.
        /// The entries shown, by session: entry ids are a session's own.
        let entries = Locked<[String: [UInt32: DBusValue]]>([:])
    }

    /// Exports the picker on `bus` and serves it; registering it is the test's to do.
    init(on bus: BusConnection, behaviour: Behaviour, comparison: Comparison = .differs) async throws {
        self.bus = bus
        let xml = try String(contentsOf: AgentPaths.pickerAgentXML, encoding: .utf8)
        let calls = try await bus.export(
            ExportedObject(path: Self.path, interface: "io.accessorysetup.PickerAgent1", xml: xml))
        let state = State()
        self.state = state
        task = Task {
            var pending: MethodCall?
            // Earlier requests of other sessions, still open: a picker agent may show several.
            var held: [MethodCall] = []
            for await call in calls {
                state.calls.withLock {
                    $0.append(Call(member: call.member, arguments: call.arguments, sender: call.sender))
                }
                switch call.member {
                case "RequestChoice":
                    if let previous = pending { held.append(previous) }
                    pending = call
                    // A new request starts with nothing shown, also for a session asking again.
                    if let session = call.arguments.first?.string {
                        state.entries.withLock { $0[session] = nil }
                    }
                case "UpdateEntries":
                    state.entries.withLock { entries in
                        // (session, entries, removed)
                        let session = call.arguments.first?.string ?? ""
                        for entry in call.arguments.count > 1 ? call.arguments[1].elements : [] {
                            if let id = entry["entry"]?.int { entries[session, default: [:]][UInt32(id)] = entry }
                        }
                        for removed in call.arguments.count > 2 ? call.arguments[2].elements : [] {
                            if let id = removed.int { entries[session]?[UInt32(id)] = nil }
                        }
                    }
                case "ConfirmPasskey":
                    switch comparison {
                    case .matches: call.reply()
                    case .differs:
                        call.reply(errorName: "io.accessorysetup.Error.UserCancelled", message: "another number")
                    }
                case "Cancel":
                    let session = call.arguments.first?.string
                    if pending?.arguments.first?.string == session {
                        pending?.reply(
                            errorName: "io.accessorysetup.Error.UserCancelled", message: "the agent cancelled")
                        pending = nil
                    }
                    for request in held where request.arguments.first?.string == session {
                        request.reply(
                            errorName: "io.accessorysetup.Error.UserCancelled", message: "the agent cancelled")
                    }
                    held.removeAll { $0.arguments.first?.string == session }
                default:
                    break
                }
                guard let request = pending else { continue }
                let shown = state.entries.withLock { $0[request.arguments.first?.string ?? ""] ?? [:] }
                switch behaviour {
                case .wait:
                    break
                case .cancel where !shown.isEmpty:
                    request.reply(errorName: "io.accessorysetup.Error.UserCancelled", message: "the person cancelled")
                    pending = nil
                case .choose(let ssid, let name):
                    guard let (id, _) = shown.first(where: { $0.value["ssid"]?.string == ssid }) else { break }
                    let answer: DBusValue = .vardict(name.map { [("name", .string($0))] } ?? [])
                    request.reply([.uint32(id), answer])
                    pending = nil
                case .chooseDevice(let address):
                    guard let (id, _) = shown.first(where: { $0.value["bluetoothAddress"]?.string == address }) else {
                        break
                    }
                    request.reply([.uint32(id), .vardict([])])
                    pending = nil
                default:
                    break
                }
            }
        }
    }

    deinit { task.cancel() }

    var calls: [Call] { state.calls.withLock { $0 } }
    var members: [String] { calls.map(\.member) }
    var entries: [DBusValue] { state.entries.withLock { $0.values.flatMap(\.values) } }

    /// The SSIDs of the entries shown now.
    var shownSSIDs: Set<String> { Set(entries.compactMap { $0["ssid"]?.string }) }

    /// Waits until the entries shown are those of `ssids`.
    func waitForEntries(_ ssids: Set<String>, timeout: Duration = .seconds(30)) async throws {
        if try await poll(timeout: timeout, { shownSSIDs == ssids ? true : nil }) != nil { return }
        throw HarnessError("the picker never showed \(ssids.sorted()); it shows \(shownSSIDs.sorted())")
    }

    /// Waits until the agent has called `member`; returns every call so far.
    @discardableResult
    func wait(for member: String, timeout: Duration = .seconds(30)) async throws -> [Call] {
        if let now = try await poll(
            timeout: timeout,
            {
                let now = calls; return now.contains { $0.member == member } ? now : nil
            })
        {
            return now
        }
        throw HarnessError("the picker agent got no \(member) within \(timeout); it got: \(members)")
    }
}

/// Runs `body`, expecting it to fail with the D-Bus error `name`; returns the error's message.
@discardableResult
func expectBusError(
    _ name: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async -> String? {
    do {
        try await body()
        Issue.record("expected \(name), but the call succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as BusError {
        #expect(error.name == name, "\(error)", sourceLocation: sourceLocation)
        return error.message
    } catch {
        Issue.record("expected \(name), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
