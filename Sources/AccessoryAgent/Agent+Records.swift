import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials

/// The records as every part changes them: whose a record is, its removal, and telling its
/// owner's sessions and the subscribers of a change.
extension Agent {
    static func read<T>(_ body: () throws(AccessorySessionError) -> T) throws(CallFailure) -> T {
        do {
            return try body()
        } catch {
            throw CallFailure(error)
        }
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
        for host in hosts { await sessionSurface.feed(change.input, to: host, in: self) }
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
