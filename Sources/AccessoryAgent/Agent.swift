import AccessoryCore
import AgentInterface
import BusService
import Glibc
import FoundationEssentials
import GLibRuntime

/// The system service: `io.accessorysetup` on the bus, the `AccessorySetupKit` of the machine.
///
/// One actor holds every session, record, picker agent and join, so that each method call,
/// backend report and timer is applied in one order; the slow parts (NetworkManager, BlueZ,
/// polkit, picker agents) are awaited without blocking the others. Method calls start in the
/// order they arrive.
public actor Agent {
    let configuration: AgentConfiguration
    let bus: BusConnection
    let manager: ExportedObject
    let polkit: Polkit
    let radios: Radios
    var records: RecordBook
    var kiosk: KioskPolicy?
    var sessions = SessionTable()
    var pickerAgents: [PickerAgentRegistration] = []
    /// Unique name → uid, for `Subscribe`.
    var subscribers: [String: UInt32] = [:]
    var joins = JoinTable()
    /// Calls being answered, for the idle exit.
    var callsInFlight = 0
    var lastActivity = ContinuousClock.now
    /// Waits for the next accessory profile to expire.
    var purge: Task<Void, Never>?
    /// The BlueZ pairing agent on the agent's connection, from the first pairing on.
    var pairingAgent: BluetoothPairingAgent?
    var profiles = ProfileCache()
    var handedOff = HandedOffHotspots()

    private init(configuration: AgentConfiguration, bus: BusConnection, manager: ExportedObject, records: RecordBook) {
        self.configuration = configuration
        self.bus = bus
        self.manager = manager
        polkit = Polkit(bus: bus)
        radios = Radios(busAddress: configuration.radioBusAddress)
        self.records = records
    }

    /// Reads the records and the kiosk policy, connects, exports the manager and owns the bus
    /// name. Throws a message for the log when the agent cannot serve.
    public static func start(_ configuration: AgentConfiguration) async throws(AgentStartError) -> Agent {
        let records = try RecordBook.open(in: configuration.stateDirectory)
        let bus: BusConnection
        let manager: ExportedObject
        do {
            bus = try await BusConnection.connect(
                configuration.bus, threadName: "agent-bus", watchingPeers: true, argumentLimit: configuration.limits.argumentBytes)
            manager = try ExportedObject(
                path: AgentBus.managerPath, interface: AgentBus.Interface.manager.name,
                xml: AgentBus.Interface.manager.introspectionXML,
                properties: ["Version": .string(AgentConfiguration.version), "KioskPolicy": .boolean(false)])
            try await bus.export(manager)
        } catch {
            throw AgentStartError("cannot serve on \(configuration.bus): \(error)")
        }
        let agent = Agent(configuration: configuration, bus: bus, manager: manager, records: records)
        _ = try? await agent.loadKioskPolicy()
        do {
            try await bus.requestName(AgentBus.name)
        } catch {
            await bus.close()
            throw AgentStartError("cannot own \(AgentBus.name): \(error)")
        }
        Journal.notice("serving \(AgentBus.name) on \(configuration.bus) with \(records.count) records")
        return agent
    }

    /// Serves until SIGTERM or SIGINT, the bus going away, or the idle exit; then ends every
    /// session (join-once connections end with them) and releases the picker agents.
    public func run() async {
        let (stops, stop) = AsyncStream.makeStream(of: String.self)
        let signals = await bus.unixSignals([SIGTERM, SIGINT, SIGHUP])
        schedulePurge()
        let tasks = [
            Task { await self.serveCalls(); stop.yield("the bus connection closed") },
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
        purge?.cancel()
    }

    private func serveCalls() async {
        for await call in bus.incomingCalls {
            callsInFlight += 1
            lastActivity = .now
            // Started at once on this actor, so calls begin in the order they came.
            Task.immediate {
                await self.answer(call)
                self.callsInFlight -= 1
                self.lastActivity = .now
            }
        }
    }

    private func answer(_ call: MethodCall) async {
        if call.interface == "org.bluez.Agent1", let pairingAgent, call.path == pairingAgent.path {
            await pairingAgent.answer(call)
            return
        }
        do throws(CallFailure) {
            let values: [DBusValue]
            switch call.interface {
            case AgentBus.Interface.manager.name: values = try await managerCall(call)
            case AgentBus.Interface.session.name: values = try await sessionCall(call)
            default: throw CallFailure(name: "org.freedesktop.DBus.Error.UnknownInterface", message: call.interface)
            }
            call.reply(values)
        } catch {
            call.reply(errorName: error.name, message: error.message)
        }
    }

    /// Whether nothing is going on: no session, picker agent, subscriber, join or call.
    var isIdle: Bool {
        sessions.isEmpty && pickerAgents.isEmpty && subscribers.isEmpty && joins.isEmpty && callsInFlight == 0
    }

    /// With an idle exit: wakes when the agent may have been idle long enough, and stops it if
    /// it was. Whatever ends the last session, join, call or subscription marks activity, so
    /// a busy agent cannot be due sooner than one idle exit from now: busy for an hour, it wakes
    /// 30 times (with the unit's 120 s); idle, once, to exit. Without an idle exit, never.
    private func watchIdle(_ stop: AsyncStream<String>.Continuation) async {
        guard let idleExit = configuration.idleExit else { return }
        while !Task.isCancelled {
            let now = ContinuousClock.now
            let due = lastActivity + idleExit
            if isIdle && now >= due {
                stop.yield("idle for \(idleExit)")
                return
            }
            try? await Task.sleep(until: isIdle ? due : max(due, now + idleExit), clock: .continuous)
        }
    }

    private func shutdown() async {
        for host in sessions.all { await invalidate(host, error: .invalidated) }
        for join in joins.all where join.joinOnce { await endJoin(join, because: "the agent is stopping") }
        for agent in pickerAgents {
            bus.send(destination: agent.connection, path: agent.path, interface: AgentBus.Interface.pickerAgent.name, method: "Release", [])
        }
        pickerAgents = []
        await bus.close()
    }

    /// A peer left the bus: its sessions end, its picker agents and subscription go.
    func peerVanished(_ peer: String) async {
        let gone = pickerAgents.filter { $0.connection == peer }
        // Sessions and joins mark it as they end; any peer may leave the bus without it.
        if subscribers.removeValue(forKey: peer) != nil || !gone.isEmpty { lastActivity = .now }
        if !gone.isEmpty {
            pickerAgents.removeAll { $0.connection == peer }
            Journal.info("picker agent of \(peer) left the bus")
            for host in sessions.all where host.pickerAgent.map(gone.contains) == true {
                host.losePickerAgent()
                await feed(.pickerDismissed(.pickerRestricted(reason: "the picker left the bus")), to: host)
            }
        }
        for host in sessions.all where host.client == peer {
            Journal.info("session \(host.path): its client \(peer) left the bus")
            await invalidate(host, error: nil)
        }
        for join in joins.all where join.client == peer && join.endsWithClient && join.sessionPath == nil {
            await endJoin(join, because: "its client left the bus")
        }
    }

    // MARK: Profiles and the kiosk policy

    /// Profile `id`, as installed (see `ProfileCache`).
    func loadProfile(_ id: String) throws(CallFailure) -> AccessoryProfile {
        try profiles.profile(id, in: configuration.profileDirectories)
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
            manager.setProperties(["KioskPolicy": .boolean(false)])
            return
        }
        do {
            kiosk = try KioskPolicy.loadRootOwned(path: path)
            Journal.notice("kiosk policy: \(path) in force")
            manager.setProperties(["KioskPolicy": .boolean(true)])
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

    // MARK: Callers

    func uid(of peer: String) async throws(CallFailure) -> UInt32 {
        do {
            return try await bus.unixUser(of: peer)
        } catch {
            throw CallFailure(name: "org.freedesktop.DBus.Error.Failed", message: "cannot tell who \(peer) is: \(error)")
        }
    }

    /// Refuses with `NotAuthorized` naming the action unless polkit allows it.
    func require(_ action: PolkitAction, _ call: MethodCall, uid: UInt32) async throws(CallFailure) {
        guard await polkit.check(action, sender: call.sender, uid: uid, interactive: call.allowsInteractiveAuthorization) else {
            throw CallFailure(AgentError.notAuthorized(action: action.rawValue))
        }
    }

    static func userName(of uid: UInt32) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name else {
            return nil
        }
        return String(cString: name)
    }
}

/// Why the agent could not start serving.
public struct AgentStartError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
