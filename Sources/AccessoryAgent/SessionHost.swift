import AccessoryCore
import BusService
import FoundationEssentials

/// One session the agent serves: the core's `AccessorySession` value and what carrying out
/// its effects needs (the client, the exported object, the running tasks). Lives on the agent.
final class SessionHost {
    let path: String
    /// The client's unique bus name; only it may call the session, and it alone gets its signals.
    let client: String
    let uid: UInt32
    let userName: String?
    private(set) var session: AccessorySession
    let object: ExportedObject
    private var discovery: Task<Void, Never>?
    private var timers: [AccessorySession.Timer: Task<Void, Never>] = [:]
    /// The picker agent's `RequestChoice` call, while one is open.
    private var choice: Task<Void, Never>?
    /// The picked accessory's running setup step (pairing, bridging, the hotspot handoff).
    private var setup: Task<Void, Never>?
    /// Who picks for the session, once `ShowPicker` found one.
    private(set) var pickerAgent: PickerAgentRegistration?
    private(set) var kioskPolicy: KioskPolicy.Policy?

    init(
        path: String, client: String, uid: UInt32, userName: String?, session: AccessorySession, object: ExportedObject
    ) {
        self.path = path
        self.client = client
        self.uid = uid
        self.userName = userName
        self.session = session
        self.object = object
    }

    var owner: AccessoryOwner { session.owner }

    /// Whether the client is a host process; else a sandboxed application (an unidentified
    /// caller opens no session).
    var isHostClient: Bool { owner.application == nil }

    /// Hands `input` to the session's state machine; the effects are the caller's to carry out.
    func handle(_ input: AccessorySession.Input) throws(AccessorySessionError) -> [AccessorySession.Effect] {
        try session.handle(input, at: Date())
    }

    /// The picker agent picks for the session.
    func pick(with agent: PickerAgentRegistration) {
        pickerAgent = agent
    }

    /// The kiosk policy picks for the session.
    func pick(with policy: KioskPolicy.Policy) {
        kioskPolicy = policy
    }

    /// The picker agent is gone, unregistered, or refused to the session.
    func losePickerAgent() {
        pickerAgent = nil
    }

    /// Discovery runs as `task`, instead of any that ran before.
    func discover(with task: Task<Void, Never>) {
        discovery?.cancel()
        discovery = task
    }

    func stopDiscovery() {
        discovery?.cancel()
        discovery = nil
    }

    /// `timer` fires at the end of `task`, instead of any earlier start of it.
    func start(_ timer: AccessorySession.Timer, as task: Task<Void, Never>) {
        timers[timer]?.cancel()
        timers[timer] = task
    }

    /// `timer`'s task ended by firing.
    func fired(_ timer: AccessorySession.Timer) {
        timers[timer] = nil
    }

    func cancel(_ timer: AccessorySession.Timer) {
        timers.removeValue(forKey: timer)?.cancel()
    }

    /// The picker agent's answer is awaited in `task`.
    func awaitChoice(in task: Task<Void, Never>) {
        choice = task
    }

    /// The picker agent answered (or failed to).
    func choiceArrived() {
        choice = nil
    }

    /// The picker closes without waiting for its answer.
    func cancelChoice() {
        choice?.cancel()
        choice = nil
    }

    /// Whether the picker agent has been asked to choose and not answered yet.
    var hasOpenPicker: Bool { choice != nil }

    /// The picked accessory's setup step runs as `task`.
    func setUp(in task: Task<Void, Never>) {
        setup = task
    }

    func cancelSetUp() {
        setup?.cancel()
        setup = nil
    }

    /// Stops every task the session runs.
    func cancelTasks() {
        discovery?.cancel()
        discovery = nil
        timers.values.forEach { $0.cancel() }
        timers = [:]
        choice?.cancel()
        choice = nil
        setup?.cancel()
        setup = nil
    }

    var stateName: String {
        switch session.phase {
        case .inactive: "inactive"
        case .active: "active"
        case .picking: "picking"
        case .settingUp: "settingUp"
        case .invalidated: "invalidated"
        }
    }
}

/// A picker front end registered with `RegisterPickerAgent`.
struct PickerAgentRegistration: Hashable, Sendable {
    /// The unique bus name of the connection that registered it.
    let connection: String
    let path: String
    /// The logind session it serves; `nil`: the sessions its own connection opens.
    let logindSession: LogindSession?
}

/// A logind session as logind described it when a picker agent registered for it.
struct LogindSession: Hashable, Sendable {
    /// Its id (`XDG_SESSION_ID`), as the picker agent gave it.
    let id: String
    /// Its object path, the id escaped as logind escapes it (`2` is `…/session/_32`).
    let path: String
    /// The user whose session it is.
    let user: UInt32
}

/// A join the agent made and must end: on `Leave`, when the agent stops (join-once), or when
/// its session or client goes (`endsWithClient`).
struct ActiveJoin: Sendable {
    let device: String
    let uid: UInt32
    /// The application of the record's owner (`nil`: a host process's record).
    let application: String?
    let client: String
    let sessionPath: String?
    /// The record joined; `nil` for an application's own configuration (`ApplyConfiguration`).
    let recordID: UUID?
    let ssid: SSID
    /// The NetworkManager profile the join made, lowercased.
    let connectionUUID: String
    let joinOnce: Bool
    /// Ends when `client` leaves the bus: a session's join-once connection, or a
    /// `JoinAccessory` with `bindToCaller`.
    let endsWithClient: Bool
}
