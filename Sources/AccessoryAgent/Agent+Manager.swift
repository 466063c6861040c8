import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials
import Glibc

/// `Manager1` (`AgentBus.Interface.manager`), method by method (docs/dbus-api.md).
extension Agent {
    func managerCall(_ call: MethodCall) async throws(CallFailure) -> [DBusValue] {
        let arguments = CallArguments(call.arguments)
        switch AgentBus.Manager1.Method(rawValue: call.member) {
        case .openSession:
            let profile = try arguments.string(0, "profile")
            return [.objectPath(try await openSession(call, profile: profile, options: arguments.options(1)))]
        case .openSessionWithProfile:
            return [.objectPath(try await openSessionWithProfile(call, options: arguments.options(1)))]
        case .registerPickerAgent:
            guard case .objectPath(let path)? = call.arguments.first else {
                throw .invalidArguments("agent", "expected an object path")
            }
            try await registerPickerAgent(call, path: path, options: arguments.options(1))
            return []
        case .unregisterPickerAgent:
            guard case .objectPath(let path)? = call.arguments.first else {
                throw .invalidArguments("agent", "expected an object path")
            }
            try await unregisterPickerAgent(call, path: path)
            return []
        case .listAccessories:
            return [BusCoding.records(try await listAccessories(call, options: arguments.options(0)))]
        case .getAccessory:
            let (record, _) = try await callersRecord(
                call, id: try arguments.string(0, "accessory"), action: .manageOthers)
            return [BusCoding.record(record)]
        case .joinAccessory:
            let (record, caller) = try await callersRecord(call, id: try arguments.string(0, "accessory"))
            return [
                try await joins.join(
                    call, record: record, uid: caller.uid, host: nil, options: arguments.options(1), in: self)
            ]
        case .provisionAccessory:
            let (record, caller) = try await callersRecord(call, id: try arguments.string(0, "accessory"))
            return [
                try await provisioning.provision(
                    call, record: record, uid: caller.uid, host: nil, options: arguments.options(1), in: self)
            ]
        case .leave:
            return [try await joins.leave(call, host: nil, options: arguments.options(0), in: self)]
        case .applyConfiguration:
            return [try await configurations.apply(call, arguments, in: self)]
        case .getConfiguredSSIDs:
            return [.strings(try await configurations.configuredSSIDs(call, in: self))]
        case .removeConfiguration:
            try await configurations.remove(call, ssid: try arguments.string(0, "ssid"), in: self)
            return []
        case .removeAccessory, .renameAccessory, .finishAuthorization, .failAuthorization:
            try await changeRecord(call, arguments)
            return []
        case .subscribe:
            try await subscribe(call)
            return []
        case .unsubscribe:
            guard subscribers.remove(call.sender) else {
                throw CallFailure(AgentError.noSuchPickerAgent(path: "the event subscription of \(call.sender)"))
            }
            return []
        case .reportConnection:
            let action = try arguments.string(0, "action")
            try await joins.reportConnection(call, action: action, connection: arguments.options(1), in: self)
            return []
        case .reload:
            let caller = try await callers.caller(call)
            try caller.requireHost(
                AgentBus.Manager1.Method.reload.name,
                because: "configuring the agent is the administrator's, on the host")
            try await callers.require(.configureKiosk, call, uid: caller.uid)
            try reload()
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
    private func changeRecord(_ call: MethodCall, _ arguments: CallArguments) async throws(CallFailure) {
        switch AgentBus.Manager1.Method(rawValue: call.member) {
        case .removeAccessory:
            let id = try arguments.string(0, "accessory")
            let (record, _) = try await callersRecord(call, id: id, action: .manageOthers)
            // A join of it a predecessor left up is held first, so that the removal ends it.
            await joins.adopted(in: self)
            try await applyOutsideSession(record, .removeAccessory(record.id))
        case .renameAccessory:
            let id = try arguments.string(0, "accessory")
            let (record, _) = try await callersRecord(call, id: id, action: .manageOthers)
            let rename = try Self.renameOptions(arguments.options(2))
            let name = try arguments.string(1, "name")
            try await applyOutsideSession(record, .renameAccessory(record.id, name: name, options: rename))
        case .finishAuthorization:
            let (record, caller) = try await callersRecord(call, id: try arguments.string(0, "accessory"))
            try await callers.require(.authorize, call, uid: caller.uid)
            let settings = try Self.read { () throws(AccessorySessionError) in
                try AccessorySession.accessorySettings(arguments[1].jsonValue, at: "settings")
            }
            try await applyOutsideSession(record, .finishAuthorization(record.id, settings))
        case .failAuthorization:
            let (record, _) = try await callersRecord(call, id: try arguments.string(0, "accessory"))
            try await applyOutsideSession(record, .failAuthorization(record.id))
        default:
            throw Self.unknownMethod(call)
        }
    }

    /// `Subscribe`: one subscription per connection, dropped if the connection left meanwhile.
    private func subscribe(_ call: MethodCall) async throws(CallFailure) {
        guard !subscribers.contains(call.sender) else {
            throw CallFailure(AgentError.pickerAgentAlreadyRegistered(scope: "events of \(call.sender)"))
        }
        let caller = try await callers.caller(call)
        subscribers.add(caller)
        guard await bus.hasOwner(call.sender) else {
            _ = subscribers.remove(call.sender)
            return
        }
        Journal.info("events: \(call.sender) subscribed")
    }

    static func read<T>(_ body: () throws(AccessorySessionError) -> T) throws(CallFailure) -> T {
        do {
            return try body()
        } catch {
            throw CallFailure(error)
        }
    }

    // MARK: Sessions

    /// Profiles are read only once polkit allowed the session: a caller it refuses makes the
    /// agent read no file. An unidentified caller is refused before polkit is asked.
    private func openSession(_ call: MethodCall, profile id: String, options: [String: DBusValue])
        async throws(CallFailure) -> String
    {
        let options = try CallOptions(options, known: ["application"])
        let claimed = try options.string("application", expected: "an application id")
        let caller = try await callers.caller(call)
        try caller.requireIdentified(AgentBus.Manager1.Method.openSession.name)
        try checkSessionLimits(caller)
        try await callers.require(.openSession, call, uid: caller.uid)
        let profile =
            id.isEmpty ? try profile(naming: caller.ownerApplication ?? claimed) : try loadProfile(id, for: caller)
        return try await openSession(call, profile: profile, caller: caller)
    }

    /// Profile `id` as `caller` may open it. A host process opens any installed profile. A
    /// sandboxed application opens only one whose `applications` name it: for any other, and
    /// for one installed but refused, it gets exactly the `NoSuchProfile` of a profile that
    /// does not exist, so that it learns nothing of what else is installed. (An id that is
    /// not a profile id at all is refused as such for everyone: that says nothing of what is
    /// installed.)
    private func loadProfile(_ id: String, for caller: Caller) throws(CallFailure) -> AccessoryProfile {
        guard let application = caller.ownerApplication, AccessoryProfile.isReverseDNS(id) else {
            return try loadProfile(id)
        }
        guard let profile = try? loadProfile(id), profile.admits(application: application) else {
            throw CallFailure(AgentError.noSuchProfile(id))
        }
        return profile
    }

    private func openSessionWithProfile(_ call: MethodCall, options: [String: DBusValue]) async throws(CallFailure)
        -> String
    {
        guard case .handle(let index)? = call.arguments.first, let descriptor = call.takeFileDescriptor(at: Int(index))
        else {
            throw .invalidArguments("profile", "expected a file descriptor the caller opened")
        }
        defer { ClientDescriptors.close([descriptor]) }
        _ = try CallOptions(options, known: [])
        let caller = try await callers.caller(call)
        // Before polkit: an administrator's password typed for an application's own profile
        // would let the application decide what the person is asked to set up.
        try caller.requireHost(
            AgentBus.Manager1.Method.openSessionWithProfile.name,
            because: "an application opens the installed profiles that name it, never one it passes itself")
        let uid = caller.uid
        try checkSessionLimits(caller)
        try await callers.require(.useClientProfile, call, uid: uid)
        try await callers.require(.openSession, call, uid: uid)
        let limits = configuration.limits
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
        try requireOwnID(ofClientProfile: profile.id)
        return try await openSession(call, profile: profile, caller: caller)
    }

    /// Refuses a client's profile that takes the id of an installed profile or of one the kiosk
    /// policy names: records, joins and the kiosk policy's choice (with its root-only
    /// passphrase) go by the profile id, and would then follow the client's descriptors.
    private func requireOwnID(ofClientProfile id: String) throws(CallFailure) {
        let installed: Bool
        do {
            _ = try loadProfile(id)
            installed = true
        } catch {
            // A `<id>.json` installed but refused is installed all the same.
            installed = error.name != AgentError.noSuchProfile(id).dbusName
        }
        let kiosk = kiosk?.policies.contains { $0.profiles.contains(id) } ?? false
        guard !installed && !kiosk else {
            throw .invalidArguments(
                "profile",
                "its id '\(id)' is \(installed ? "an installed profile's" : "named by the kiosk policy"); a client's profile takes an id of its own"
            )
        }
    }

    private func checkSessionLimits(_ caller: Caller) throws(CallFailure) {
        try sessions.checkLimits(
            client: caller.connection, uid: caller.uid, application: caller.ownerApplication, configuration.limits)
    }

    /// The session's owner is the caller's user, application and the profile: a sandboxed
    /// application's session sees and makes records of its own application alone.
    private func openSession(_ call: MethodCall, profile: AccessoryProfile, caller: Caller) async throws(CallFailure)
        -> String
    {
        let uid = caller.uid
        // Checked again: other calls may have opened sessions while polkit answered.
        try checkSessionLimits(caller)
        let path = sessions.nextPath()
        let owner = AccessoryOwner(uid: uid, profileID: profile.id, application: caller.ownerApplication)
        let session = AccessorySession(profile: profile, owner: owner, accessories: records.all)
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
            try await bus.export(object, to: calls, as: .session)
        } catch {
            throw CallFailure(
                AccessorySessionError.activationFailed(reason: "the session could not be put on the bus: \(error)"))
        }
        let host = SessionHost(
            path: path, client: call.sender, uid: uid, userName: Callers.userName(of: uid), session: session,
            object: object)
        do {
            try checkSessionLimits(caller)
        } catch {
            await bus.unexport(object)
            throw error
        }
        sessions.add(host)
        Journal.info("session \(path) opened by \(call.sender) (\(owner.logDescription)) over profile \(profile.id)")
        // A client that left while polkit or the bus answered was not seen leaving by the session.
        guard await bus.hasOwner(call.sender) else {
            Journal.info("session \(path): its client \(call.sender) left before it was opened")
            await invalidate(host, error: nil)
            throw CallFailure(AccessorySessionError.invalidated)
        }
        return path
    }

    // MARK: Picker agents

    /// Only a host process registers a picker agent: a picker is where the person consents, and
    /// an application that picked for itself would consent for the person.
    private func registerPickerAgent(_ call: MethodCall, path: String, options: [String: DBusValue])
        async throws(CallFailure)
    {
        let caller = try await callers.caller(call)
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
            guard let session = await lookUpLogindSession(sessionID), uid == 0 || session.user == uid else {
                throw CallFailure(AgentError.notAuthorized(action: "picker agent of logind session \(sessionID)"))
            }
            logindSession = session
        }
        let registration = PickerAgentRegistration(connection: call.sender, path: path, logindSession: logindSession)
        try pickerAgents.register(registration)
        guard await bus.hasOwner(call.sender) else {
            pickerAgents.unregister(registration)
            throw CallFailure(AgentError.noSuchPickerAgent(path: path))
        }
        Journal.info(
            "picker agent \(path) of \(call.sender) (uid \(uid)) registered for \(logindSession.map { "logind session \($0.id) of uid \($0.user)" } ?? "its own sessions")"
        )
    }

    private func unregisterPickerAgent(_ call: MethodCall, path: String) async throws(CallFailure) {
        guard let registration = pickerAgents.registration(of: call.sender, path: path) else {
            throw CallFailure(AgentError.noSuchPickerAgent(path: path))
        }
        pickerAgents.unregister(registration)
        for host in sessions.all where host.pickerAgent == registration {
            host.losePickerAgent()
            await feed(.pickerDismissed(.pickerRestricted(reason: "the picker was unregistered")), to: host)
        }
        Journal.info("picker agent \(path) of \(call.sender) unregistered")
    }

    /// The logind session `id`: its object path and user, from logind on the system bus.
    private func lookUpLogindSession(_ id: String) async -> LogindSession? {
        let reply = try? await bus.call(
            destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
            interface: "org.freedesktop.login1.Manager",
            method: "GetSession", [.string(id)], timeout: .seconds(5))
        guard case .objectPath(let path)? = reply?.first else { return nil }
        let user = try? await bus.call(
            destination: "org.freedesktop.login1", path: path, interface: "org.freedesktop.DBus.Properties",
            method: "Get", [.string("org.freedesktop.login1.Session"), .string("User")], timeout: .seconds(5))
        guard let uid = user?.first?.elements.first?.uint32 else { return nil }
        return LogindSession(id: id, path: path, user: uid)
    }

    /// The picker agent for a session: the one its client's own connection registered, else the
    /// one of the logind session the client's process is in (pinned while logind is asked),
    /// where that session is the client's own user's: a process another user started in it
    /// (`su`, a setuid program) is not answered by this person's picker.
    func pickerAgent(for host: SessionHost) async -> PickerAgentRegistration? {
        if host.isHostClient, let own = pickerAgents.own(of: host.client) { return own }
        let sessionAgents = pickerAgents.forLogindSessions
        guard !sessionAgents.isEmpty, let path = await bus.logindSessionPath(of: host.client) else { return nil }
        guard let agent = sessionAgents.first(where: { $0.logindSession?.path == path }) else { return nil }
        guard agent.logindSession?.user == host.uid else {
            Journal.notice(
                "session \(host.path): the client of uid \(host.uid) is in logind session \(path) of another user; its picker is not asked"
            )
            return nil
        }
        return agent
    }

    // MARK: Records outside a session

    private func listAccessories(_ call: MethodCall, options: [String: DBusValue]) async throws(CallFailure)
        -> [AccessoryRecord]
    {
        let caller = try await callers.caller(call)
        let reader = try CallOptions(options, known: ["profile", "user"])
        let uid = try reader.uint32("user", expected: "a uint32 user id") ?? caller.uid
        let profile = try reader.string("profile", expected: "a profile id")
        if uid != caller.uid {
            try caller.requireHost("options.user naming another user", because: Self.ownRecordsOnly)
            try await callers.require(.manageOthers, call, uid: caller.uid)
            return records.owned(uid: uid, profile: profile)
        }
        return records.owned(uid: uid, profile: profile).filter { caller.sees($0.owner) }
    }

    /// Why a sandboxed application may not name another user, whatever polkit would say.
    static let ownRecordsOnly = "an application sees and acts on its own accessories only"

    /// The record `id` if the caller sees it (`Caller.sees`); another user's, for a host
    /// process, only with `action` allowed by polkit. Any other counts as not there: a
    /// sandboxed application gets the same `NoSuchAccessory` for another application's record,
    /// a host record, another user's and one that does not exist, and polkit is not asked.
    func callersRecord(
        _ call: MethodCall, id text: String, action: PolkitAction? = nil
    ) async throws(CallFailure) -> (AccessoryRecord, Caller) {
        let caller = try await callers.caller(call)
        guard let id = UUID(uuidString: text), let record = records.record(id) else {
            throw CallFailure(AgentError.noSuchAccessory(text))
        }
        if !caller.sees(record.owner) {
            guard caller.isHost, let action else { throw CallFailure(AgentError.noSuchAccessory(text)) }
            let allowed = await polkit.check(
                action, sender: call.sender, uid: caller.uid, interactive: call.allowsInteractiveAuthorization)
            guard allowed else { throw CallFailure(AgentError.noSuchAccessory(text)) }
        }
        return (record, caller)
    }

    /// Applies a record operation through a session of the record's owner that lives only for
    /// it, so the rules are the session's; live sessions of that owner hear of the change.
    private func applyOutsideSession(_ record: AccessoryRecord, _ input: AccessorySession.Input)
        async throws(CallFailure)
    {
        let profile: AccessoryProfile
        if let live = sessions.all.first(where: { $0.owner == record.owner }) {
            profile = live.session.profile
        } else if case .removeAccessory = input, (try? loadProfile(record.owner.profileID)) == nil {
            // A record whose profile was uninstalled can still be removed.
            try removeRecord(record)
            return
        } else {
            profile = try loadProfile(record.owner.profileID)
        }
        var session = AccessorySession(profile: profile, owner: record.owner, accessories: records.all)
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
                try records.save(changed)
                Journal.info(
                    "record \(changed.id) of \(changed.owner.logDescription) changed: \(changed.state.name), '\(changed.displayName)'"
                )
                await broadcast(.changed(changed), except: nil)
            case .delete(let removed):
                try removeRecord(removed)
            default:
                break
            }
        }
    }

    func removeRecord(_ record: AccessoryRecord) throws(CallFailure) {
        let record = try records.remove(record)
        Journal.info("record \(record.id) of \(record.owner.logDescription) removed")
        locations.forget(record.id, in: self)
        // Its join ends first, the previous network back: nothing would leave it later, and the
        // agent stopping must not end a join of a record that is gone.
        let held = joins.all.filter { $0.recordID == record.id }
        Task {
            for join in held { await self.joins.end(join, because: "its record was removed", in: self) }
            await self.joins.forgetProfiles(of: record)
            await self.pairing.forgetBond(of: record, in: self)
        }
        Task { await self.broadcast(.removed(record), except: nil) }
    }

    /// A record changed or removed: its owner's other open sessions hear it as their input. A
    /// change made outside the owner's sessions (through Manager1, by provisioning or the home
    /// network's browse) that no session of theirs hears still reaches the subscribers, as an
    /// event of the manager's path, as a dispatcher report does.
    func broadcast(_ change: RecordChange, except: String?) async {
        let owner = change.record.owner
        let hosts = sessions.all.filter { $0.owner == owner && $0.path != except }
        for host in hosts { await feed(change.input, to: host) }
        guard except == nil, hosts.isEmpty else { return }
        notifySubscribers(change.eventType, BusCoding.record(change.record), of: owner)
    }

    /// `Event` to the connections that subscribed and may see `owner`'s events; `session` is
    /// the manager's path for an event of no session.
    func notifySubscribers(
        _ type: AccessoryEventType, _ accessory: DBusValue, of owner: AccessoryOwner,
        session: String = AgentBus.managerPath, error: DBusValue = BusCoding.emptyDictionary
    ) {
        let event: [DBusValue] = [.objectPath(session), .uint32(UInt32(type.rawValue)), accessory, error]
        for subscriber in subscribers.recipients(forSessionOf: owner) {
            bus.emit(
                path: AgentBus.managerPath, interface: AgentBus.Interface.manager.name,
                signal: AgentBus.Manager1.Signal.event.name, event,
                destination: subscriber)
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

/// What became of a record, for its owner's sessions and the subscribers.
enum RecordChange {
    case changed(AccessoryRecord)
    case removed(AccessoryRecord)

    var record: AccessoryRecord {
        switch self {
        case .changed(let record), .removed(let record): record
        }
    }

    var input: AccessorySession.Input {
        switch self {
        case .changed(let record): .recordChanged(record)
        case .removed(let record): .recordRemoved(record.id)
        }
    }

    var eventType: AccessoryEventType {
        switch self {
        case .changed: .accessoryChanged
        case .removed: .accessoryRemoved
        }
    }
}
