import AccessoryCore
import AgentInterface
import FoundationEssentials

/// The open sessions, by object path, and the limits on how many one connection or one user
/// may hold open.
final class SessionTable {
    private var hosts: [String: SessionHost] = [:]
    /// Sessions opened since the agent started: the number in the next one's path.
    private var opened = 0

    subscript(path: String) -> SessionHost? { hosts[path] }

    /// Every open session, in no particular order; a copy, so ending sessions while going
    /// through it is safe.
    var all: [SessionHost] { Array(hosts.values) }

    var isEmpty: Bool { hosts.isEmpty }

    /// Whether `host` is still the session open at its path.
    func isOpen(_ host: SessionHost) -> Bool {
        hosts[host.path] === host
    }

    /// Refuses a session past the limits of its connection or its user.
    func checkLimits(client: String, uid: UInt32, application: String?, _ limits: AgentLimits) throws(CallFailure) {
        if hosts.values.count(where: { $0.client == client }) >= limits.sessionsPerConnection {
            throw CallFailure(
                AgentError.limitExceeded(
                    what: "open sessions on this connection", limit: limits.sessionsPerConnection,
                    advice: "invalidate the sessions you no longer use"))
        }
        if hosts.values.count(where: { $0.uid == uid }) >= limits.sessionsPerUser {
            throw CallFailure(
                AgentError.limitExceeded(
                    what: "open sessions as this user", limit: limits.sessionsPerUser,
                    advice: "close the programs of yours that keep sessions open"))
        }
        if let application {
            try ApplicationShare.check(
                hosts.values.count { $0.uid == uid && $0.owner.application == application }, of: limits.sessionsPerUser,
                what: "open sessions", advice: "close the sessions the application no longer uses")
        }
    }

    /// How many sessions other than `host` have a picker open on `agent`.
    func openPickers(on agent: PickerAgentRegistration, besides host: SessionHost) -> Int {
        hosts.values.count { $0 !== host && $0.pickerAgent == agent && $0.hasOpenPicker }
    }

    /// How many sessions of `uid` other than `host` wait on a picker agent's answer.
    func openPickers(of uid: UInt32, besides host: SessionHost) -> Int {
        hosts.values.count { $0 !== host && $0.uid == uid && $0.hasOpenPicker }
    }

    /// How many of them are `application`'s.
    func openPickers(of uid: UInt32, application: String, besides host: SessionHost) -> Int {
        hosts.values.count { $0 !== host && $0.uid == uid && $0.owner.application == application && $0.hasOpenPicker }
    }

    /// The object path for the next session.
    func nextPath() -> String {
        opened += 1
        return AgentBus.sessionPath(opened)
    }

    func add(_ host: SessionHost) {
        hosts[host.path] = host
    }

    func remove(_ host: SessionHost) {
        hosts[host.path] = nil
    }
}
