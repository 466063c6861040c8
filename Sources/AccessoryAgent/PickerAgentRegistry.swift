import AccessoryCore
import FoundationEssentials

/// The picker front ends registered with `RegisterPickerAgent`: at most one per logind
/// session, and one per connection for the sessions that connection opens itself.
final class PickerAgentRegistry {
    private var agents: [PickerAgentRegistration] = []

    var isEmpty: Bool { agents.isEmpty }

    /// The agent `client` registered for the sessions it opens itself.
    func own(of client: String) -> PickerAgentRegistration? {
        agents.first { $0.connection == client && $0.logindSession == nil }
    }

    /// The agents registered for a logind session.
    var forLogindSessions: [PickerAgentRegistration] {
        agents.filter { $0.logindSession != nil }
    }

    /// The agent `connection` registered at `path`.
    func registration(of connection: String, path: String) -> PickerAgentRegistration? {
        agents.first { $0.connection == connection && $0.path == path }
    }

    /// Adds `registration`, refused when its scope (its logind session, or its connection's
    /// own sessions) has an agent already.
    func register(_ registration: PickerAgentRegistration) throws(CallFailure) {
        let taken = agents.contains { existing in
            registration.logindSession == nil
                ? existing.logindSession == nil && existing.connection == registration.connection
                : existing.logindSession?.path == registration.logindSession?.path
        }
        guard !taken else {
            throw CallFailure(
                AgentError.pickerAgentAlreadyRegistered(
                    scope: registration.logindSession.map { "logind session \($0.id)" } ?? registration.connection))
        }
        agents.append(registration)
    }

    func unregister(_ registration: PickerAgentRegistration) {
        agents.removeAll { $0 == registration }
    }

    /// Removes the agents of a connection that left the bus; returns them.
    func removeAll(of connection: String) -> [PickerAgentRegistration] {
        let gone = agents.filter { $0.connection == connection }
        agents.removeAll { $0.connection == connection }
        return gone
    }

    /// Removes every agent, as the agent stops; returns them, to be released.
    func removeAll() -> [PickerAgentRegistration] {
        defer { agents = [] }
        return agents
    }
}

/// The connections subscribed to the manager's `Event` signal, with who each is: a host
/// process of root hears every session's events, one of another user the events of that
/// user's sessions, a sandboxed application those of its own application's sessions only, an
/// unidentified caller none.
final class EventSubscribers {
    private var callers: [String: Caller] = [:]

    var isEmpty: Bool { callers.isEmpty }

    func contains(_ peer: String) -> Bool {
        callers[peer] != nil
    }

    func add(_ caller: Caller) {
        callers[caller.connection] = caller
    }

    /// Ends the subscription of `peer`; whether it had one.
    func remove(_ peer: String) -> Bool {
        callers.removeValue(forKey: peer) != nil
    }

    /// The subscribers that may hear the events of a session of `owner`.
    func recipients(forSessionOf owner: AccessoryOwner) -> [String] {
        callers.compactMap { peer, subscriber in
            (subscriber.isHost && subscriber.uid == 0) || subscriber.sees(owner) ? peer : nil
        }
    }
}
