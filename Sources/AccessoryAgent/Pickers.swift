import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials

/// The picker agents: their registration (`RegisterPickerAgent`), which one picks for a
/// session, the request for the person's choice, and the choice as it arrives.
///
/// A part of the agent with no state of its own: the registrations are the agent's
/// `PickerAgentRegistry`. Its methods run on the agent (`isolated Agent`).
final class Pickers {
    /// Who picks for a session: the picker agent of its client, else the kiosk policy, else the
    /// picker agent of its client's logind session. A sandboxed application's session never
    /// has a picker of its own (it cannot register one; checked here all the same): the
    /// person picks in the desktop session's picker, registered by a host process, or the
    /// kiosk policy picks.
    func frontEnd(for host: SessionHost, in agent: isolated Agent) async throws(CallFailure) -> PickerFrontEnd {
        if host.isHostClient, let own = agent.pickerAgents.own(of: host.client) {
            host.pick(with: own)
            return .agent
        }
        if let policy = agent.kiosk?.policy(forProfile: host.session.profile.id, uid: host.uid, userName: host.userName)
        {
            host.pick(with: policy)
            Journal.info("session \(host.path): the kiosk policy picks")
            return .kiosk(policy)
        }
        if let picker = await pickerAgent(for: host, in: agent) {
            host.pick(with: picker)
            return .agent
        }
        throw CallFailure(
            AccessorySessionError.pickerRestricted(
                reason:
                    "no picker agent serves this client and no kiosk policy names profile \(host.session.profile.id) for it; "
                    + "run 'accessoryctl pick', or add the profile to /etc/accessory-setup/kiosk.json"))
    }

    /// A message to a picker agent, on the connection every call to it takes, so they keep their order.
    func send(
        _ picker: PickerAgentRegistration, _ method: AgentBus.PickerAgent1.Method, _ arguments: [DBusValue],
        in agent: isolated Agent
    ) {
        agent.clients.send(
            destination: picker.connection, path: picker.path, interface: AgentBus.Interface.pickerAgent.name,
            method: method.name, arguments)
    }

    func presentPicker(_ items: [PickerDisplayItem], for host: SessionHost, in agent: isolated Agent) async {
        guard let picker = host.pickerAgent else {
            let path = host.path
            Task {
                await agent.sessionSurface.feed(
                    .pickerDismissed(.pickerRestricted(reason: "no picker agent serves this client")), toSession: path,
                    in: agent)
            }
            return
        }
        let profile = host.session.profile
        let asksPassphrase: Bool = if case .prompt? = profile.hotspot?.passphrase { true } else { false }
        var proofHint: String?
        let asksProof: Bool
        if case .prompt(let hint)? = profile.provisioning?.proofOfPossession {
            (asksProof, proofHint) = (true, hint)
        } else {
            asksProof = false
        }
        let request = PickerAgentRequest(
            profile: profile.id, vendor: profile.vendor, user: host.uid, application: host.owner.application,
            items: items.map {
                PickerAgentRequest.Item(
                    name: $0.name, productImage: $0.productImage, rename: $0.setupOptions.contains(.rename))
            },
            asksPassphrase: asksPassphrase, asksProofOfPossession: asksProof, proofOfPossessionHint: proofHint,
            share: host.session.pickerSharedNetwork.flatMap { shared in
                profile.provisioningExposure.map { exposure in
                    let network: SSID? = if case .ssid(let ssid) = shared { ssid } else { nil }
                    return PickerAgentRequest.Share(network: network, exposure: exposure)
                }
            }
        ).dbusValue
        let clients = agent.clients
        let path = host.path
        let answerTime = agent.configuration.limits.pickerAnswerTime
        // The request goes out before anything else this picker sends (its entries come from
        // the discovery started after it): a picker agent hears RequestChoice first.
        let (queued, markQueued) = AsyncStream.makeStream(of: Never.self)
        host.awaitChoice(
            in: Task {
                defer { markQueued.finish() }
                let reply: Result<[DBusValue], BusError>
                do throws(BusError) {
                    reply = .success(
                        try await clients.call(
                            destination: picker.connection, path: picker.path,
                            interface: AgentBus.Interface.pickerAgent.name,
                            method: AgentBus.PickerAgent1.Method.requestChoice.name, [.objectPath(path), request],
                            timeout: answerTime,
                            queued: { markQueued.finish() }))
                } catch {
                    reply = .failure(error)
                }
                guard !Task.isCancelled, let host = agent.sessions[path] else { return }
                await self.choiceArrived(reply, for: host, from: picker, in: agent)
            })
        for await _ in queued {}
    }

    private func choiceArrived(
        _ reply: Result<[DBusValue], BusError>, for host: SessionHost, from picker: PickerAgentRegistration,
        in agent: isolated Agent
    ) async {
        host.choiceArrived()
        switch reply {
        case .failure(let error) where error.name == AccessorySessionError.userCancelled.dbusName:
            Journal.info("session \(host.path): the person cancelled the picker")
            await agent.sessionSurface.feed(.pickerDismissed(.userCancelled), to: host, in: agent)
        case .failure(let error):
            Journal.warning("session \(host.path): the picker agent failed: \(error)")
            await agent.sessionSurface.feed(
                .pickerDismissed(.pickerRestricted(reason: "the picker failed: \(error.message)")), to: host, in: agent)
        case .success(let values):
            guard let answer = PickerAgentChoice(values) else {
                await agent.sessionSurface.feed(
                    .pickerDismissed(.pickerRestricted(reason: "the picker answered without an entry")), to: host,
                    in: agent)
                return
            }
            let choice = PickerChoice(
                entryID: Int(answer.entry), name: answer.name,
                passphrase: answer.passphrase.map(SuppliedPassphrase.secret),
                proofOfPossession: answer.proofOfPossession)
            Journal.log(.debug, "discovery trace: session \(host.path): the picker chose entry \(answer.entry)")
            // The pick is the person's consent; polkit decides whether it may be recorded.
            let allowed = await agent.polkit.check(.authorize, sender: host.client, uid: host.uid, interactive: true)
            Journal.log(.debug, "discovery trace: session \(host.path): polkit answered the pick")
            guard allowed else {
                let reason = "polkit refused \(PolkitAction.authorize.rawValue)"
                let refusal = AccessorySessionError.userRestricted(reason: reason)
                send(picker, .cancel, [.objectPath(host.path), BusCoding.error(refusal)], in: agent)
                await agent.sessionSurface.feed(.pickerDismissed(refusal), to: host, in: agent)
                return
            }
            do {
                let effects = try host.handle(.picked(choice))
                await agent.sessionSurface.perform(effects, for: host, in: agent)
            } catch {
                Journal.warning("session \(host.path): the picker's answer was refused: \(error)")
                if let picker = host.pickerAgent {
                    send(
                        picker, .setupProgress, [.objectPath(host.path), .string("failed"), BusCoding.error(error)],
                        in: agent)
                }
                await agent.sessionSurface.feed(
                    .pickerDismissed(.pickerRestricted(reason: "the picker's answer was refused: \(error)")), to: host,
                    in: agent)
            }
        }
    }

    /// The agent stops: every picker agent registered is released (`Release`).
    func releaseAll(in agent: isolated Agent) {
        for picker in agent.pickerAgents.removeAll() { send(picker, .release, [], in: agent) }
    }

    /// The picker agents `peer` registered go; the pickers they showed are dismissed.
    func peerVanished(_ peer: String, in agent: isolated Agent) async {
        let gone = agent.pickerAgents.removeAll(of: peer)
        guard !gone.isEmpty else { return }
        agent.activity.mark()
        Journal.info("picker agent of \(peer) left the bus")
        for host in agent.sessions.all where host.pickerAgent.map(gone.contains) == true {
            host.losePickerAgent()
            await agent.sessionSurface.feed(
                .pickerDismissed(.pickerRestricted(reason: "the picker left the bus")), to: host, in: agent)
        }
    }

    // MARK: Registration

    /// Only a host process registers a picker agent: a picker is where the person consents, and
    /// an application that picked for itself would consent for the person.
    func register(_ call: MethodCall, path: String, options: [String: DBusValue], in agent: isolated Agent)
        async throws(CallFailure)
    {
        let caller = try await agent.callers.caller(call)
        try caller.requireHost(
            AgentBus.Manager1.Method.registerPickerAgent.name,
            because:
                "an application cannot pick for itself; the person picks in the desktop session's picker, or the kiosk policy does"
        )
        let uid = caller.uid
        let sessionID = try CallOptions(options, known: ["session"]).string(
            "session", expected: "a logind session id"
        ) {
            !$0.isEmpty && $0.count <= 64 && $0.allSatisfy { $0.isLetter || $0.isNumber }
        }
        var logindSession: LogindSession?
        if let sessionID {
            // Root's too: the session is found later by the path logind gives, and must exist.
            guard let session = await lookUpLogindSession(sessionID, in: agent), uid == 0 || session.user == uid else {
                throw CallFailure(AgentError.notAuthorized(action: "picker agent of logind session \(sessionID)"))
            }
            logindSession = session
        }
        let registration = PickerAgentRegistration(connection: call.sender, path: path, logindSession: logindSession)
        try agent.pickerAgents.register(registration)
        guard await agent.bus.hasOwner(call.sender) else {
            agent.pickerAgents.unregister(registration)
            throw CallFailure(AgentError.noSuchPickerAgent(path: path))
        }
        Journal.info(
            "picker agent \(path) of \(call.sender) (uid \(uid)) registered for \(logindSession.map { "logind session \($0.id) of uid \($0.user)" } ?? "its own sessions")"
        )
    }

    func unregister(_ call: MethodCall, path: String, in agent: isolated Agent) async throws(CallFailure) {
        guard let registration = agent.pickerAgents.registration(of: call.sender, path: path) else {
            throw CallFailure(AgentError.noSuchPickerAgent(path: path))
        }
        agent.pickerAgents.unregister(registration)
        for host in agent.sessions.all where host.pickerAgent == registration {
            host.losePickerAgent()
            await agent.sessionSurface.feed(
                .pickerDismissed(.pickerRestricted(reason: "the picker was unregistered")), to: host, in: agent)
        }
        Journal.info("picker agent \(path) of \(call.sender) unregistered")
    }

    /// The logind session `id`: its object path and user, from logind on the system bus.
    private func lookUpLogindSession(_ id: String, in agent: isolated Agent) async -> LogindSession? {
        let reply = try? await agent.bus.call(
            destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
            interface: "org.freedesktop.login1.Manager",
            method: "GetSession", [.string(id)], timeout: .seconds(5))
        guard case .objectPath(let path)? = reply?.first else { return nil }
        let user = try? await agent.bus.call(
            destination: "org.freedesktop.login1", path: path, interface: "org.freedesktop.DBus.Properties",
            method: "Get", [.string("org.freedesktop.login1.Session"), .string("User")], timeout: .seconds(5))
        guard let uid = user?.first?.elements.first?.uint32 else { return nil }
        return LogindSession(id: id, path: path, user: uid)
    }

    /// The picker agent for a session: the one its client's own connection registered, else the
    /// one of the logind session the client's process is in (pinned while logind is asked),
    /// where that session is the client's own user's: a process another user started in it
    /// (`su`, a setuid program) is not answered by this person's picker.
    func pickerAgent(for host: SessionHost, in agent: isolated Agent) async -> PickerAgentRegistration? {
        if host.isHostClient, let own = agent.pickerAgents.own(of: host.client) { return own }
        let sessionAgents = agent.pickerAgents.forLogindSessions
        guard !sessionAgents.isEmpty, let path = await agent.bus.logindSessionPath(of: host.client) else { return nil }
        guard let picker = sessionAgents.first(where: { $0.logindSession?.path == path }) else { return nil }
        guard picker.logindSession?.user == host.uid else {
            Journal.notice(
                "session \(host.path): the client of uid \(host.uid) is in logind session \(path) of another user; its picker is not asked"
            )
            return nil
        }
        return picker
    }
}
