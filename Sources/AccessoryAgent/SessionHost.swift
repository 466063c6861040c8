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
    var session: AccessorySession
    let object: ExportedObject
    var discovery: Task<Void, Never>?
    var timers: [AccessorySession.Timer: Task<Void, Never>] = [:]
    /// The picker agent's `RequestChoice` call, while one is open.
    var choice: Task<Void, Never>?
    /// The picked accessory's running setup step (pairing, bridging, the hotspot handoff).
    var setup: Task<Void, Never>?
    var pickerAgent: PickerAgentRegistration?
    var kioskPolicy: KioskPolicy.Policy?

    init(path: String, client: String, uid: UInt32, userName: String?, session: AccessorySession, object: ExportedObject) {
        self.path = path
        self.client = client
        self.uid = uid
        self.userName = userName
        self.session = session
        self.object = object
    }

    var owner: AccessoryOwner { session.owner }

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
    let logindSession: String?
}

/// A join the agent made and must end: on `Leave`, when the agent stops (join-once), or when
/// its session or client goes (`endsWithClient`).
struct ActiveJoin: Sendable {
    let device: String
    let uid: UInt32
    let client: String
    let sessionPath: String?
    let recordID: UUID
    let ssid: SSID
    /// The NetworkManager profile the join made, lowercased.
    let connectionUUID: String
    let joinOnce: Bool
    /// Ends when `client` leaves the bus: a session's join-once connection, or a
    /// `JoinAccessory` with `bindToCaller`.
    let endsWithClient: Bool
}
