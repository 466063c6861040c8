import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials

/// `Manager1` (`AgentBus.Interface.manager`), method by method (docs/dbus-api.md): opening
/// sessions, the records outside a session, the event subscriptions.
///
/// A part of the agent with no state of its own; its methods run on the agent
/// (`isolated Agent`).
final class ManagerSurface {
    func call(_ call: MethodCall, in agent: isolated Agent) async throws(CallFailure) -> [DBusValue] {
        let arguments = CallArguments(call.arguments)
        switch AgentBus.Manager1.Method(rawValue: call.member) {
        case .openSession:
            let profile = try arguments.string(0, "profile")
            return [
                .objectPath(try await openSession(call, profile: profile, options: arguments.options(1), in: agent))
            ]
        case .openSessionWithProfile:
            return [.objectPath(try await openSessionWithProfile(call, options: arguments.options(1), in: agent))]
        case .registerPickerAgent:
            guard case .objectPath(let path)? = call.arguments.first else {
                throw .invalidArguments("agent", "expected an object path")
            }
            try await agent.pickers.register(call, path: path, options: arguments.options(1), in: agent)
            return []
        case .unregisterPickerAgent:
            guard case .objectPath(let path)? = call.arguments.first else {
                throw .invalidArguments("agent", "expected an object path")
            }
            try await agent.pickers.unregister(call, path: path, in: agent)
            return []
        case .listAccessories:
            return [BusCoding.records(try await listAccessories(call, options: arguments.options(0), in: agent))]
        case .getAccessory:
            let (record, _) = try await agent.callersRecord(
                call, id: try arguments.string(0, "accessory"), action: .manageOthers)
            return [BusCoding.record(record)]
        case .joinAccessory:
            let (record, caller) = try await agent.callersRecord(call, id: try arguments.string(0, "accessory"))
            return [
                try await agent.joins.join(
                    call, record: record, uid: caller.uid, host: nil, options: arguments.options(1), in: agent)
            ]
        case .provisionAccessory:
            let (record, caller) = try await agent.callersRecord(call, id: try arguments.string(0, "accessory"))
            return [
                try await agent.provisioning.provision(
                    call, record: record, uid: caller.uid, host: nil, options: arguments.options(1), in: agent)
            ]
        case .leave:
            return [try await agent.joins.leave(call, host: nil, options: arguments.options(0), in: agent)]
        case .applyConfiguration:
            return [try await agent.configurations.apply(call, arguments, in: agent)]
        case .getConfiguredSSIDs:
            return [.strings(try await agent.configurations.configuredSSIDs(call, in: agent))]
        case .removeConfiguration:
            try await agent.configurations.remove(call, ssid: try arguments.string(0, "ssid"), in: agent)
            return []
        case .removeAccessory, .renameAccessory, .finishAuthorization, .failAuthorization:
            try await changeRecord(call, arguments, in: agent)
            return []
        case .subscribe:
            try await subscribe(call, in: agent)
            return []
        case .unsubscribe:
            guard agent.subscribers.remove(call.sender) else {
                throw CallFailure(AgentError.noSuchPickerAgent(path: "the event subscription of \(call.sender)"))
            }
            return []
        case .reportConnection:
            let action = try arguments.string(0, "action")
            try await agent.joins.reportConnection(call, action: action, connection: arguments.options(1), in: agent)
            return []
        case .reload:
            let caller = try await agent.callers.caller(call)
            try caller.requireHost(
                AgentBus.Manager1.Method.reload.name,
                because: "configuring the agent is the administrator's, on the host")
            try await agent.callers.require(.configureKiosk, call, uid: caller.uid)
            try agent.reload()
            return []
        default:
            throw Self.unknownMethod(call)
        }
    }

    private static func unknownMethod(_ call: MethodCall) -> CallFailure {
        CallFailure(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "Manager1 has no method \(call.member)")
    }

    /// The record operations outside a session: on the caller's records, and on another
    /// user's with polkit's manage-others for removing and renaming.
    private func changeRecord(_ call: MethodCall, _ arguments: CallArguments, in agent: isolated Agent)
        async throws(CallFailure)
    {
        switch AgentBus.Manager1.Method(rawValue: call.member) {
        case .removeAccessory:
            let id = try arguments.string(0, "accessory")
            let (record, _) = try await agent.callersRecord(call, id: id, action: .manageOthers)
            // A join of it a predecessor left up is held first, so that the removal ends it.
            await agent.joins.adopted(in: agent)
            try await applyOutsideSession(record, .removeAccessory(record.id), in: agent)
        case .renameAccessory:
            let id = try arguments.string(0, "accessory")
            let (record, _) = try await agent.callersRecord(call, id: id, action: .manageOthers)
            let rename = try SessionSurface.renameOptions(arguments.options(2))
            let name = try arguments.string(1, "name")
            try await applyOutsideSession(record, .renameAccessory(record.id, name: name, options: rename), in: agent)
        case .finishAuthorization:
            let (record, caller) = try await agent.callersRecord(call, id: try arguments.string(0, "accessory"))
            try await agent.callers.require(.authorize, call, uid: caller.uid)
            let settings = try Agent.read { () throws(AccessorySessionError) in
                try AccessorySession.accessorySettings(arguments[1].jsonValue, at: "settings")
            }
            try await applyOutsideSession(record, .finishAuthorization(record.id, settings), in: agent)
        case .failAuthorization:
            let (record, _) = try await agent.callersRecord(call, id: try arguments.string(0, "accessory"))
            try await applyOutsideSession(record, .failAuthorization(record.id), in: agent)
        default:
            throw Self.unknownMethod(call)
        }
    }

    /// `Subscribe`: one subscription per connection, dropped if the connection left meanwhile.
    private func subscribe(_ call: MethodCall, in agent: isolated Agent) async throws(CallFailure) {
        guard !agent.subscribers.contains(call.sender) else {
            throw CallFailure(AgentError.pickerAgentAlreadyRegistered(scope: "events of \(call.sender)"))
        }
        let caller = try await agent.callers.caller(call)
        agent.subscribers.add(caller)
        guard await agent.bus.hasOwner(call.sender) else {
            _ = agent.subscribers.remove(call.sender)
            return
        }
        Journal.info("events: \(call.sender) subscribed")
    }

    // MARK: Sessions

    /// Profiles are read only once polkit allowed the session: a caller it refuses makes the
    /// agent read no file. An unidentified caller is refused before polkit is asked.
    private func openSession(
        _ call: MethodCall, profile id: String, options: [String: DBusValue], in agent: isolated Agent
    )
        async throws(CallFailure) -> String
    {
        let options = try CallOptions(options, known: ["application"])
        let claimed = try options.string("application", expected: "an application id")
        let caller = try await agent.callers.caller(call)
        try caller.requireIdentified(AgentBus.Manager1.Method.openSession.name)
        try checkSessionLimits(caller, in: agent)
        try await agent.callers.require(.openSession, call, uid: caller.uid)
        let profile =
            id.isEmpty
            ? try agent.profile(naming: caller.ownerApplication ?? claimed) : try profile(id, for: caller, in: agent)
        return try await openSession(call, profile: profile, caller: caller, in: agent)
    }

    /// Profile `id` as `caller` may open it. A host process opens any installed profile. A
    /// sandboxed application opens only one whose `applications` name it: for any other, and
    /// for one installed but refused, it gets exactly the `NoSuchProfile` of a profile that
    /// does not exist, so that it learns nothing of what else is installed. (An id that is
    /// not a profile id at all is refused as such for everyone: that says nothing of what is
    /// installed.)
    private func profile(_ id: String, for caller: Caller, in agent: isolated Agent) throws(CallFailure)
        -> AccessoryProfile
    {
        guard let application = caller.ownerApplication, AccessoryProfile.isReverseDNS(id) else {
            return try agent.loadProfile(id)
        }
        guard let profile = try? agent.loadProfile(id), profile.admits(application: application) else {
            throw CallFailure(AgentError.noSuchProfile(id))
        }
        return profile
    }

    private func openSessionWithProfile(_ call: MethodCall, options: [String: DBusValue], in agent: isolated Agent)
        async throws(CallFailure)
        -> String
    {
        guard case .handle(let index)? = call.arguments.first, let descriptor = call.takeFileDescriptor(at: Int(index))
        else {
            throw .invalidArguments("profile", "expected a file descriptor the caller opened")
        }
        defer { ClientDescriptors.close([descriptor]) }
        _ = try CallOptions(options, known: [])
        let caller = try await agent.callers.caller(call)
        // Before polkit: an administrator's password typed for an application's own profile
        // would let the application decide what the person is asked to set up.
        try caller.requireHost(
            AgentBus.Manager1.Method.openSessionWithProfile.name,
            because: "an application opens the installed profiles that name it, never one it passes itself")
        let uid = caller.uid
        try checkSessionLimits(caller, in: agent)
        try await agent.callers.require(.useClientProfile, call, uid: uid)
        try await agent.callers.require(.openSession, call, uid: uid)
        let limits = agent.configuration.limits
        let read = await ClientInput.read(
            descriptor, limit: limits.clientProfileBytes, within: limits.clientProfileTime)
        let profile: AccessoryProfile
        do {
            switch read {
            case .success(let data):
                profile = try AccessoryProfile.parse(data, path: "the client's profile").withoutProductImages
            case .failure(.timedOut):
                throw CallFailure(
                    AgentError.timedOut(
                        what: "the client's profile", seconds: Int(limits.clientProfileTime.components.seconds)))
            case .failure(.input(let error)):
                throw ProfileError.unreadable(path: "the client's profile", reason: error.reason)
            }
        } catch let error as ProfileError {
            throw CallFailure(AgentError.invalidProfile(error))
        } catch let error as CallFailure {
            throw error
        } catch {
            throw CallFailure(AgentError.invalidProfile(.unreadable(path: "the client's profile", reason: "\(error)")))
        }
        guard profile.items.count <= limits.itemsPerCall else {
            throw CallFailure(
                AgentError.limitExceeded(
                    what: "items in one profile", limit: limits.itemsPerCall,
                    advice: "split the profile, or show fewer items at a time"))
        }
        try requireOwnID(ofClientProfile: profile.id, in: agent)
        return try await openSession(call, profile: profile, caller: caller, in: agent)
    }

    /// Refuses a client's profile that takes the id of an installed profile or of one the kiosk
    /// policy names: records, joins and the kiosk policy's choice (with its root-only
    /// passphrase) go by the profile id, and would then follow the client's descriptors.
    private func requireOwnID(ofClientProfile id: String, in agent: isolated Agent) throws(CallFailure) {
        let installed: Bool
        do {
            _ = try agent.loadProfile(id)
            installed = true
        } catch {
            // A `<id>.json` installed but refused is installed all the same.
            installed = error.name != AgentError.noSuchProfile(id).dbusName
        }
        let named = agent.kiosk?.policies.contains { $0.profiles.contains(id) } ?? false
        guard !installed && !named else {
            throw .invalidArguments(
                "profile",
                "its id '\(id)' is \(installed ? "an installed profile's" : "named by the kiosk policy"); a client's profile takes an id of its own"
            )
        }
    }

    private func checkSessionLimits(_ caller: Caller, in agent: isolated Agent) throws(CallFailure) {
        try agent.sessions.checkLimits(
            client: caller.connection, uid: caller.uid, application: caller.ownerApplication, agent.configuration.limits
        )
    }

    /// The session's owner is the caller's user, application and the profile: a sandboxed
    /// application's session sees and makes records of its own application alone.
    private func openSession(_ call: MethodCall, profile: AccessoryProfile, caller: Caller, in agent: isolated Agent)
        async throws(CallFailure)
        -> String
    {
        let uid = caller.uid
        // Checked again: other calls may have opened sessions while polkit answered.
        try checkSessionLimits(caller, in: agent)
        let path = agent.sessions.nextPath()
        let owner = AccessoryOwner(uid: uid, profileID: profile.id, application: caller.ownerApplication)
        let session = AccessorySession(profile: profile, owner: owner, accessories: agent.records.all)
        let object: ExportedObject
        do {
            object = try ExportedObject(
                path: path, interface: AgentBus.Interface.session.name,
                xml: AgentBus.Interface.session.introspectionXML,
                properties: [
                    AgentBus.Session1.Property.profile.name: .string(profile.id),
                    AgentBus.Session1.Property.state.name: .string("inactive"),
                    AgentBus.Session1.Property.accessories.name: BusCoding.records(session.accessories),
                    AgentBus.Session1.Property.items.name: BusCoding.dictionaries(profile.items.map(BusCoding.item)),
                ],
                owner: call.sender)
            try await agent.bus.export(object, to: agent.calls, as: .session)
        } catch {
            throw CallFailure(
                AccessorySessionError.activationFailed(reason: "the session could not be put on the bus: \(error)"))
        }
        let host = SessionHost(
            path: path, client: call.sender, uid: uid, userName: Callers.userName(of: uid), session: session,
            object: object)
        do {
            try checkSessionLimits(caller, in: agent)
        } catch {
            await agent.bus.unexport(object)
            throw error
        }
        agent.sessions.add(host)
        Journal.info("session \(path) opened by \(call.sender) (\(owner.logDescription)) over profile \(profile.id)")
        // A client that left while polkit or the bus answered was not seen leaving by the session.
        guard await agent.bus.hasOwner(call.sender) else {
            Journal.info("session \(path): its client \(call.sender) left before it was opened")
            await agent.sessionSurface.invalidate(host, error: nil, in: agent)
            throw CallFailure(AccessorySessionError.invalidated)
        }
        return path
    }

    // MARK: Records outside a session

    private func listAccessories(
        _ call: MethodCall, options: [String: DBusValue], in agent: isolated Agent
    ) async throws(CallFailure) -> [AccessoryRecord] {
        let caller = try await agent.callers.caller(call)
        let reader = try CallOptions(options, known: ["profile", "user"])
        let profile = try reader.string("profile", expected: "a profile id")
        let uid = try await agent.callers.user(namedIn: reader, by: caller, call)
        if uid != caller.uid { return agent.records.owned(uid: uid, profile: profile) }
        return agent.records.owned(uid: uid, profile: profile).filter { caller.sees($0.owner) }
    }

    /// Applies a record operation through a session of the record's owner that lives only for
    /// it, so the rules are the session's; live sessions of that owner hear of the change.
    private func applyOutsideSession(
        _ record: AccessoryRecord, _ input: AccessorySession.Input, in agent: isolated Agent
    )
        async throws(CallFailure)
    {
        let profile: AccessoryProfile
        if let live = agent.sessions.all.first(where: { $0.owner == record.owner }) {
            profile = live.session.profile
        } else if case .removeAccessory = input, (try? agent.loadProfile(record.owner.profileID)) == nil {
            // A record whose profile was uninstalled can still be removed.
            try agent.removeRecord(record)
            return
        } else {
            profile = try agent.loadProfile(record.owner.profileID)
        }
        var session = AccessorySession(profile: profile, owner: record.owner, accessories: agent.records.all)
        let effects: [AccessorySession.Effect]
        do {
            _ = try session.handle(.activate, at: Date())
            effects = try session.handle(input, at: Date())
        } catch {
            throw CallFailure(error)
        }
        for effect in effects {
            switch effect {
            case .save(let changed):
                try agent.records.save(changed)
                Journal.info(
                    "record \(changed.id) of \(changed.owner.logDescription) changed: \(changed.state.name), '\(changed.displayName)'"
                )
                await agent.broadcast(.changed(changed), except: nil)
            case .delete(let removed):
                try agent.removeRecord(removed)
            default:
                break
            }
        }
    }
}

extension AccessoryProfile {
    /// The profile with no item naming an image. A client's profile arrives as bytes, with no
    /// directory: an image it names can be neither checked nor found, and looked up among the
    /// installed profiles it would show another vendor's picture. The pickers show their
    /// generic icon instead.
    fileprivate var withoutProductImages: AccessoryProfile {
        var profile = self
        for index in profile.items.indices { profile.items[index].productImage = nil }
        return profile
    }
}
