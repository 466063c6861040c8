import AccessoryCore
import AgentInterface
import BusService
import GLibRuntime
import Glibc

/// Who calls: the user (from the bus daemon) and the application (from the connection's
/// process, `ApplicationIdentity`), never what the caller says of itself.
///
/// The rules, as AccessorySetupKit keeps each app's accessories apart:
/// - A host process is its user: it sees and acts on all of that user's records, whichever
///   application made them, and keeps every rule the agent had before applications.
/// - A sandboxed application sees and acts on the records of its own (user, application) only;
///   every other record counts as not there. It opens only installed profiles whose
///   `applications` name it, registers no picker agent, passes no profile of its own, and
///   names no other user: the person's consent comes from the desktop session's picker or the
///   kiosk policy, never from the application asking for it.
/// - An unidentified caller is the most restricted: it sees no record and opens nothing.
struct Caller: Sendable {
    /// The connection's unique name.
    let connection: String
    let uid: UInt32
    let application: ApplicationIdentity

    var isHost: Bool { application == .host }

    /// The application its sessions and records belong to: a sandboxed one's id; `nil` for a
    /// host process.
    var ownerApplication: String? {
        if case .sandboxed(let id) = application { return id }
        return nil
    }

    /// Whether the caller sees, and may act on, a record of `owner` without polkit's
    /// manage-others.
    func sees(_ owner: AccessoryOwner) -> Bool {
        switch application {
        case .host: owner.uid == uid
        case .sandboxed(let id): owner.uid == uid && owner.application == id
        case .unidentified: false
        }
    }

    /// Refuses with `NotAuthorized` anyone but a host process: `what` is what it asked for,
    /// `why` why a sandboxed application may not. Polkit is not asked.
    func requireHost(_ what: String, because why: String) throws(CallFailure) {
        switch application {
        case .host:
            return
        case .sandboxed(let id):
            throw .refused("\(what) is refused to the sandboxed application \(id): \(why)")
        case .unidentified:
            throw .refused(
                "\(what) is refused: the agent could not establish which application this connection belongs to "
                    + "(the agent's journal says why)")
        }
    }

    /// Refuses with `NotAuthorized` a caller whose application could not be established.
    func requireIdentified(_ what: String) throws(CallFailure) {
        if case .unidentified = application { try requireHost(what, because: "") }
    }

    /// For the journal: `uid 1000` or `uid 1000, application org.example.AcmePlug`.
    var logDescription: String {
        switch application {
        case .host: "uid \(uid)"
        case .sandboxed(let id): "uid \(uid), application \(id)"
        case .unidentified: "uid \(uid), unidentified application"
        }
    }
}

extension AccessoryOwner {
    /// For the journal: `uid 1000` or `uid 1000, application org.example.AcmePlug`.
    var logDescription: String {
        application.map { "uid \(uid), application \($0)" } ?? "uid \(uid)"
    }
}

/// The application of each connection that called, looked up once (the lookup reads the
/// caller's `/.flatpak-info`, off the agent's thread) and kept until the connection leaves the
/// bus: at most one entry per connection on the bus.
struct ApplicationIdentities {
    private var lookups: [String: Task<ApplicationIdentity, Never>] = [:]

    var count: Int { lookups.count }

    subscript(peer: String) -> Task<ApplicationIdentity, Never>? { lookups[peer] }

    mutating func add(_ lookup: Task<ApplicationIdentity, Never>, for peer: String) {
        lookups[peer] = lookup
    }

    /// Forgets `peer`'s, if it is still `lookup` (`nil`: whichever).
    mutating func forget(_ peer: String, ifStill lookup: Task<ApplicationIdentity, Never>? = nil) {
        guard lookup == nil || lookups[peer] == lookup else { return }
        lookups[peer] = nil
    }
}

/// The agent's part that knows who calls: each caller's uid (asked of the bus daemon once per
/// call), its application (looked up once per connection), polkit's answers, and what each
/// user holds of the agent (calls in flight, polkit checks outstanding) against the limits.
///
/// The agent's actor owns it, and it is isolated to that actor: its asynchronous methods run on
/// the caller's executor (`nonisolated(nonsending)`), so that its state is written in the
/// agent's one order of calls, and by this type's file alone.
final class Callers {
    private let bus: BusConnection
    private let polkit: Polkit
    private let limits: AgentLimits
    /// The application of each connection that called, until it leaves the bus.
    private var identities = ApplicationIdentities()
    /// polkit checks outstanding, by the user whose call asked (`AgentLimits.polkitChecksPerUser`).
    private var polkitChecks = UserCounts()
    /// Method calls being answered, by the caller's user (`AgentLimits.callsPerUser`, `callsInFlight`).
    private var callsInFlight = UserCounts()

    init(bus: BusConnection, polkit: Polkit, limits: AgentLimits) {
        self.bus = bus
        self.polkit = polkit
        self.limits = limits
    }

    /// Counts a call of `uid` until `ended(_:)`, or refuses it past the user's limit or all
    /// users' (root counts towards the total only).
    func admit(_ uid: UInt32) throws(CallFailure) {
        try callsInFlight.add(
            uid, limit: uid == 0 ? .max : limits.callsPerUser, totalLimit: limits.callsInFlight,
            what: "calls in flight", advice: "wait for the answers to the calls already made")
    }

    func ended(_ uid: UInt32) {
        callsInFlight.remove(uid)
    }

    /// A peer left the bus: its application is forgotten.
    func peerVanished(_ peer: String) {
        identities.forget(peer)
    }

    nonisolated(nonsending) func uid(of peer: String) async throws(CallFailure) -> UInt32 {
        do {
            return try await bus.unixUser(of: peer)
        } catch {
            throw CallFailure(
                name: "org.freedesktop.DBus.Error.Failed", message: "cannot tell who \(peer) is: \(error)")
        }
    }

    /// The uid of the call's sender, asked of the bus daemon once per call.
    nonisolated(nonsending) func uid(of call: MethodCall) async throws(CallFailure) -> UInt32 {
        if let known = call.senderUID.withLock({ $0 }) { return known }
        let uid = try await uid(of: call.sender)
        call.senderUID.withLock { $0 = uid }
        return uid
    }

    /// The caller: its uid from the bus daemon, its application from its connection's process.
    nonisolated(nonsending) func caller(_ call: MethodCall) async throws(CallFailure) -> Caller {
        let uid = try await uid(of: call)
        return Caller(connection: call.sender, uid: uid, application: await application(of: call.sender))
    }

    /// The caller's application as the desktop names it; `nil` for a program on the host.
    nonisolated(nonsending) func applicationName(of call: MethodCall) async -> String? {
        guard let caller = try? await caller(call), let id = caller.ownerApplication else { return nil }
        return await Task.detached { DesktopApplication.lookUp(id).name }.value
    }

    /// The application behind `peer`, looked up on its first call and kept until it leaves the
    /// bus. Calls that arrive during the lookup wait for the same one. A peer that left before
    /// or during it was not seen leaving by the cache: its entry is dropped here, so that no
    /// entry outlives its connection. An identity established was checked on the bus after
    /// the entry was made (`applicationIdentity`'s last step), so its leaving is seen by the
    /// cache; only an unidentified peer is asked about again.
    nonisolated(nonsending) func application(of peer: String) async -> ApplicationIdentity {
        if let known = identities[peer] { return await known.value }
        let bus = self.bus
        let lookup = Task {
            let identity = await bus.applicationIdentity(of: peer)
            if case .unidentified(let reason) = identity {
                Journal.warning(
                    "caller \(peer): its application cannot be established, so it may open no session and "
                        + "sees no record: \(reason)")
            } else {
                Journal.info("caller \(peer) is \(identity)")
            }
            return identity
        }
        identities.add(lookup, for: peer)
        let identity = await lookup.value
        if case .unidentified = identity, !(await bus.hasOwner(peer)) { identities.forget(peer, ifStill: lookup) }
        return identity
    }

    /// The user the call's `user` option names, else the caller's own. Another user is named
    /// only by a host process that polkit lets manage others.
    nonisolated(nonsending) func user(
        namedIn options: CallOptions, by caller: Caller, _ call: MethodCall
    ) async throws(CallFailure) -> UInt32 {
        let uid = try options.uint32("user", expected: "a uint32 user id") ?? caller.uid
        if uid != caller.uid {
            try caller.requireHost("options.user naming another user", because: Agent.ownRecordsOnly)
            try await require(.manageOthers, call, uid: caller.uid)
        }
        return uid
    }

    /// Refuses with `NotAuthorized` naming the action unless polkit allows it.
    nonisolated(nonsending) func require(
        _ action: PolkitAction, _ call: MethodCall, uid: UInt32, details: [String: String] = [:]
    ) async throws(CallFailure) {
        // Root passes without asking; anyone else's checks are counted while polkit has them.
        let application = uid == 0 ? nil : try? await caller(call).ownerApplication
        if uid != 0 {
            try polkitChecks.add(
                uid, application: application, limit: limits.polkitChecksPerUser,
                what: "polkit checks outstanding",
                advice: "answer the authentication dialogs already open, or call without interactive authorization")
        }
        defer { if uid != 0 { polkitChecks.remove(uid, application: application) } }
        guard
            await polkit.check(
                action, sender: call.sender, uid: uid, interactive: call.allowsInteractiveAuthorization,
                details: details)
        else {
            throw CallFailure(AgentError.notAuthorized(action: action.rawValue))
        }
    }

    /// The login name of `uid`, from the password database.
    static func userName(of uid: UInt32) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name
        else {
            return nil
        }
        return String(cString: name)
    }
}
