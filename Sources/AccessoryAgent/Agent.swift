import AccessoryCore
import AgentInterface
import BluetoothPairing
import BusService
import DBusValues
import FoundationEssentials
import Glibc

/// The system service: `AgentBus.name` on the bus, the `AccessorySetupKit` of the machine.
///
/// One actor holds every session, record, picker agent and join, so that each method call,
/// backend report and timer is applied in one order; the slow parts (NetworkManager, BlueZ,
/// polkit, picker agents) are awaited without blocking the others. Method calls start in the
/// order they arrive.
///
/// The agent is made of parts, each the only writer of its own state (docs/architecture.md):
/// `Callers`, `ManagerSurface`, `SessionSurface`, `Pickers`, `SetUps`, `Joins`,
/// `Configurations`, `Provisioning`, `Locations` and `Pairing`, over tables only their own files
/// write (`RecordBook`, `SessionTable`, `PickerAgentRegistry`, `EventSubscribers`, …). A part's
/// methods take the agent as an `isolated` parameter, so they run on it. The actor keeps the
/// start, the calls' admission and routing, the idle exit and the shutdown. NetworkManager and
/// BlueZ are reached through `Radios`, as `HotspotManaging` and `BluetoothManaging`.
public actor Agent {
    let configuration: AgentConfiguration
    let bus: BusConnection
    /// The calls of the manager and of every session, each with its object's interface, in the
    /// order the bus delivered them.
    let calls: CallQueue<ExportedInterface>
    /// Calls and messages to objects clients own (picker agents), on a connection of their own:
    /// a call that waits on a person takes none of the pending replies the bus daemon allows
    /// `bus`, which asks polkit, logind and the radios for everyone.
    let clients: BusConnection
    let manager: ExportedObject
    let polkit: Polkit
    let radios: Radios
    let records: RecordBook
    private(set) var kiosk: KioskPolicy?
    let sessions = SessionTable()
    let pickerAgents = PickerAgentRegistry()
    let subscribers = EventSubscribers()
    /// The joins, and the work kept up behind them.
    let joins: Joins
    /// Applications' own Wi-Fi configurations.
    let configurations: Configurations
    /// Bluetooth bonds: whom each was made for, and the pairing agent.
    let pairing: Pairing
    /// Giving accessories the home network.
    let provisioning = Provisioning()
    /// Finding provisioned accessories on the home network.
    let locations: Locations
    let activity = Activity()
    /// Whether the work kept up behind the calls (the adoption, the purge, the home network's
    /// browse) has started: once the first call was answered.
    private var backgroundStarted = false
    private var profiles = ProfileCache()
    /// Who calls, polkit's answers, and what each user holds against the limits.
    let callers: Callers
    /// `ShowPicker` calls between their check of `AgentLimits.pickerRequestsPerUser` and the
    /// picker agent being asked, by user.
    let showingPickers = UserCounts()
    /// The parts that answer calls and carry sessions out.
    let managerSurface = ManagerSurface()
    let sessionSurface = SessionSurface()
    let pickers = Pickers()
    let setUps = SetUps()

    private init(
        configuration: AgentConfiguration, bus: BusConnection, calls: CallQueue<ExportedInterface>,
        clients: BusConnection, manager: ExportedObject, records: sending RecordBook, bonds: BondBook
    ) {
        self.configuration = configuration
        self.bus = bus
        self.calls = calls
        self.clients = clients
        self.manager = manager
        polkit = Polkit(bus: bus)
        callers = Callers(bus: bus, polkit: polkit, limits: configuration.limits)
        radios = Radios(busAddress: configuration.radioBusAddress)
        locations = Locations(radios: radios)
        joins = Joins(radios: radios)
        configurations = Configurations(
            stateDirectory: configuration.stateDirectory, limits: configuration.limits, radios: radios)
        pairing = Pairing(bonds: bonds, radios: radios, polkit: polkit)
        self.records = records
    }

    /// Reads the records and the kiosk policy, connects, exports the manager and owns the bus
    /// name. Throws a message for the log when the agent cannot serve. Each step's time since
    /// `began` (the process's entry into main) is logged at debug as the start's trace.
    public static func start(
        _ configuration: AgentConfiguration, began: ContinuousClock.Instant = .now
    ) async throws(AgentStartError) -> Agent {
        let trace = CallTrace("start", since: began)
        let records = try RecordBook.open(in: configuration.stateDirectory)
        let recordCount = records.count
        trace.ended("records read")
        let bus: BusConnection
        let clients: BusConnection
        let manager: ExportedObject
        let calls: CallQueue<ExportedInterface>
        do {
            bus = try await BusConnection.connect(
                configuration.bus, threadName: "agent-bus", watchingPeers: true,
                argumentLimit: configuration.limits.argumentBytes)
            trace.ended("bus connected")
            clients = try await BusConnection.connect(
                configuration.bus, threadName: "agent-clients", argumentLimit: configuration.limits.argumentBytes)
            trace.ended("second connection")
            manager = try ExportedObject(
                path: AgentBus.managerPath, interface: AgentBus.Interface.manager.name,
                xml: AgentBus.Interface.manager.introspectionXML,
                properties: [
                    AgentBus.Manager1.Property.version.name: .string(AgentConfiguration.version),
                    AgentBus.Manager1.Property.kioskPolicy.name: .boolean(false),
                ])
            calls = await CallQueue(of: bus)
            try await bus.export(manager, to: calls, as: .manager)
            trace.ended("manager exported")
        } catch {
            throw AgentStartError("cannot serve on \(configuration.bus): \(error)")
        }
        let agent = Agent(
            configuration: configuration, bus: bus, calls: calls, clients: clients, manager: manager, records: records,
            bonds: BondBook.open(in: configuration.stateDirectory))
        _ = try? await agent.loadKioskPolicy()
        trace.ended("bonds and kiosk policy read")
        do {
            try await bus.requestName(AgentBus.name)
        } catch {
            await bus.close()
            throw AgentStartError("cannot own \(AgentBus.name): \(error)")
        }
        trace.ended("name owned")
        trace.log("serving")
        Journal.notice("serving \(AgentBus.name) on \(configuration.bus) with \(recordCount) records")
        return agent
    }

    /// Serves until SIGTERM or SIGINT, the bus going away, or the idle exit; then ends every
    /// session (join-once connections end with them) and releases the picker agents.
    public func run() async {
        let (stops, stop) = AsyncStream.makeStream(of: String.self)
        let signals = await bus.unixSignals([SIGTERM, SIGINT, SIGHUP])
        let tasks = [
            Task {
                await self.serveCalls(); stop.yield("the bus connection closed")
            },
            Task { for await peer in bus.vanishedPeers { await self.peerVanished(peer) } },
            Task {
                for await number in signals {
                    if number == SIGHUP {
                        try? self.reload()
                    } else {
                        stop.yield(number == SIGTERM ? "SIGTERM" : "SIGINT")
                    }
                }
            },
            Task { await self.watchIdle(stop) },
        ]
        var reason = "stopped"
        for await first in stops {
            reason = first
            break
        }
        Journal.notice("stopping: \(reason)")
        await shutdown()
        tasks.forEach { $0.cancel() }
        joins.stop()
        locations.stop()
    }

    /// Starts what the agent keeps up behind the calls, once. Not before the first call was
    /// answered: the call that started the agent by D-Bus activation needs none of it (`list`
    /// needs the records alone), and NetworkManager's and Avahi's state would load beside it on
    /// the same CPU (issue #38). A call that needs the joins waits for the adoption itself.
    private func startBackgroundWork() {
        guard !backgroundStarted else { return }
        backgroundStarted = true
        joins.startAdoption(in: self)
        joins.schedulePurge(in: self)
        locations.resume(in: self)
    }

    /// Pairs with `address` through the pairing agent: for the closures radios call back.
    func pairThroughAgent(_ address: MACAddress, for use: BondUse) async throws(BluetoothError) {
        try await pairing.pair(address, for: use, in: self)
    }

    /// A report for the session at `path`, from a callback that is not the agent's (a backend's).
    func feed(_ input: AccessorySession.Input, toSession path: String) async {
        await sessionSurface.feed(input, toSession: path, in: self)
    }

    /// Has the accessory switch its hotspot off, from a task that is not the agent's.
    func switchHotspotOff(_ address: MACAddress, _ handoff: BluetoothHandoff, owner: UInt32) async {
        await joins.switchHotspotOff(address, handoff, for: BondUse(owner: owner), in: self)
    }

    /// The pairing agent's questions, to the picker of the session setting `address` up.
    func confirmPasskey(_ code: String, for address: MACAddress) async -> Bool {
        await pairing.confirmPasskey(code, for: address, in: self)
    }

    func showPasskey(_ code: String, for address: MACAddress) {
        pairing.showPasskey(code, for: address, in: self)
    }

    private func serveCalls() async {
        for await (interface, call) in calls.calls {
            activity.callStarted()
            // Started at once on this actor, so calls begin in the order they came.
            Task.immediate {
                await self.answer(call, to: interface)
                self.activity.callEnded()
                self.startBackgroundWork()
            }
        }
    }

    private func answer(_ call: MethodCall, to interface: ExportedInterface) async {
        // Counted by the caller's user from the start, and refused past the limits (or with a
        // string longer than any the agent takes) before anything is done for it: before polkit.
        let uid: UInt32
        do throws(CallFailure) {
            uid = try await callers.uid(of: call)
            let limits = configuration.limits
            if call.descriptorCount > 0, !Self.takesDescriptors(call) {
                call.closeDescriptors()
                throw CallFailure.invalidArguments(
                    "\(call.member)", "takes no file descriptor; pass none with the call")
            }
            if let bytes = Self.longestString(in: call.arguments), bytes > limits.stringBytes {
                throw CallFailure(
                    AgentError.limitExceeded(
                        what: "bytes in one string argument", limit: limits.stringBytes,
                        advice: "no name, path, option or secret the agent takes is longer"))
            }
            try callers.admit(uid)
        } catch {
            call.reply(errorName: error.name, message: error.message)
            return
        }
        defer { callers.ended(uid) }
        do throws(CallFailure) {
            let values: [DBusValue]
            switch interface {
            case .manager: values = try await managerSurface.call(call, in: self)
            case .session: values = try await sessionSurface.call(call, in: self)
            }
            call.reply(values)
        } catch {
            call.reply(errorName: error.name, message: error.message)
        }
    }

    /// Whether `call`'s method takes descriptors: a profile (`OpenSessionWithProfile`), or
    /// certificates (`ApplyConfiguration`).
    static func takesDescriptors(_ call: MethodCall) -> Bool {
        call.interface == AgentBus.Interface.manager.name
            && [.openSessionWithProfile, .applyConfiguration].contains(AgentBus.Manager1.Method(rawValue: call.member))
    }

    /// The UTF-8 length of the longest string or object path anywhere in `values`, if any.
    static func longestString(in values: [DBusValue]) -> Int? {
        var longest: Int?
        func visit(_ value: DBusValue) {
            switch value {
            case .string(let text), .objectPath(let text): longest = max(longest ?? 0, text.utf8.count)
            case .array(let elements, _), .tuple(let elements): elements.forEach(visit)
            case .dictionary(let entries, _):
                for entry in entries {
                    visit(entry.key)
                    visit(entry.value)
                }
            case .variant(let box): visit(box.value)
            default: break
            }
        }
        values.forEach(visit)
        return longest
    }

    /// Whether nothing is going on: no session, picker agent, subscriber, join or call.
    var isIdle: Bool {
        sessions.isEmpty && pickerAgents.isEmpty && subscribers.isEmpty && joins.isEmpty && !activity.hasCallsInFlight
            && !locations.isSeeking
    }

    /// With an idle exit: wakes when the agent may have been idle long enough, and stops it if
    /// it was. Whatever ends the last session, join, call or subscription marks activity, so
    /// a busy agent cannot be due sooner than one idle exit from now: busy for an hour, it wakes
    /// 30 times (with the unit's 120 s); idle, once, to exit. Without an idle exit, never.
    private func watchIdle(_ stop: AsyncStream<String>.Continuation) async {
        guard let idleExit = configuration.idleExit else { return }
        while !Task.isCancelled {
            let now = ContinuousClock.now
            let due = activity.last + idleExit
            if isIdle && now >= due {
                stop.yield("idle for \(idleExit)")
                return
            }
            try? await Task.sleep(until: isIdle ? due : max(due, now + idleExit), clock: .continuous)
        }
    }

    private func shutdown() async {
        for host in sessions.all { await sessionSurface.invalidate(host, error: .invalidated, in: self) }
        // An adoption under way finishes, so that its join-once joins end below; one never
        // started leaves them for the next agent, as they were.
        await joins.adoptionEnded()
        let upgrading = configuration.isStoppingForUpgrade
        for join in joins.all where join.joinOnce {
            if upgrading {
                Journal.notice(
                    "stopping for an upgrade: \(join.ssid) on \(join.device) stays joined for the next agent to hold")
            } else {
                await joins.end(join, because: "the agent is stopping", in: self)
            }
        }
        pickers.releaseAll(in: self)
        await clients.close()
        await bus.close()
    }

    /// A peer left the bus: its sessions end, its picker agents and subscription go.
    func peerVanished(_ peer: String) async {
        callers.peerVanished(peer)
        // Sessions and joins mark it as they end; any peer may leave the bus without it.
        if subscribers.remove(peer) { activity.mark() }
        await pickers.peerVanished(peer, in: self)
        provisioning.cancel(client: peer)
        await sessionSurface.peerVanished(peer, in: self)
        await joins.peerVanished(peer, in: self)
    }

    // MARK: Profiles and the kiosk policy

    /// Profile `id`, as installed (see `ProfileCache`).
    func loadProfile(_ id: String) throws(CallFailure) -> AccessoryProfile {
        try profiles.profile(id, in: configuration.profileDirectories)
    }

    /// The profile of an `OpenSession` that names none: the one installed profile whose
    /// `applications` name the caller's application. A sandboxed application is the one its
    /// sandbox names, whatever it claims; a host process may say which application it is
    /// (option `application`), as it may open any profile anyway.
    func profile(naming application: String?) throws(CallFailure) -> AccessoryProfile {
        guard let application, !application.isEmpty else {
            throw .invalidArguments(
                "profile",
                "is empty, and the caller is no application the agent knows (not sandboxed, no application "
                    + "option): name the profile to open")
        }
        return try profiles.profile(naming: application, in: configuration.profileDirectories)
    }

    func loadKioskPolicy() throws(CallFailure) {
        let path = configuration.kioskPolicyPath
        guard FileManager.default.fileExists(atPath: path) else {
            if kiosk != nil {
                Journal.notice("kiosk policy: \(path) is gone; none in force")
            } else {
                Journal.info("kiosk policy: no file at \(path); none in force")
            }
            kiosk = nil
            manager.setProperties([AgentBus.Manager1.Property.kioskPolicy.name: .boolean(false)])
            return
        }
        do {
            kiosk = try KioskPolicy.loadRootOwned(path: path)
            Journal.notice("kiosk policy: \(path) in force")
            manager.setProperties([AgentBus.Manager1.Property.kioskPolicy.name: .boolean(true)])
        } catch {
            Journal.error("kiosk policy: \(error)")
            throw CallFailure(AgentError.invalidKioskPolicy(error))
        }
    }

    /// SIGHUP and `Reload`: the profiles read so far are forgotten, so that unchanged ones are
    /// read, and their product images checked, again; and the kiosk policy is read again (a
    /// refused one leaves the previous one in force).
    func reload() throws(CallFailure) {
        Journal.notice("reloading the profiles and the kiosk policy")
        profiles.forgetAll()
        try loadKioskPolicy()
    }
}

/// Why the agent could not start serving.
public struct AgentStartError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// What the idle exit goes by: the calls being answered, and when something last ended.
final class Activity {
    private var callsInFlight = 0
    /// When a call started or ended, or a session, join, picker agent or subscription ended.
    private(set) var last = ContinuousClock.now

    var hasCallsInFlight: Bool { callsInFlight > 0 }

    func callStarted() {
        callsInFlight += 1
        last = .now
    }

    func callEnded() {
        callsInFlight -= 1
        last = .now
    }

    func mark() {
        last = .now
    }
}

/// Which of the agent's interfaces an exported object serves.
enum ExportedInterface: Sendable {
    case manager, session
}
