import AccessoryCore
import FoundationEssentials

/// Every owner's authorization records, as `accessories.json` in the state directory holds
/// them. Read once at the start; changed only by a write the store accepted, so what the agent
/// answers from is what a restart would read.
final class RecordBook {
    private let store: AccessoryStore
    /// Every owner's records, as the store holds them.
    private(set) var all: [AccessoryRecord]

    private init(store: AccessoryStore, records: [AccessoryRecord]) {
        self.store = store
        all = records
    }

    /// The records in `directory`, which is made (root only) if missing. A corrupt file is
    /// logged and read as none; any other failure means the agent cannot serve.
    static func open(in directory: URL) throws(AgentStartError) -> RecordBook {
        let store = AccessoryStore(url: directory.appendingPathComponent("accessories.json"))
        let records: [AccessoryRecord]
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            records = try store.load()
        } catch let error as AccessoryStoreError {
            if case .corrupt = error {
                Journal.error("records: \(error); starting with none")
                records = []
            } else {
                throw AgentStartError("cannot read the records: \(error)")
            }
        } catch {
            throw AgentStartError("cannot create the state directory \(directory.path): \(error)")
        }
        return RecordBook(store: store, records: records)
    }

    var count: Int { all.count }

    func record(_ id: UUID) -> AccessoryRecord? {
        all.first { $0.id == id }
    }

    func owned(uid: UInt32, profile: String? = nil) -> [AccessoryRecord] {
        all.filter { $0.owner.uid == uid && (profile == nil || $0.owner.profileID == profile) }
    }

    /// Refuses a picker for a user who holds `limit` records already, or a sandboxed
    /// `application` of theirs that holds its share of them (`ApplicationShare`).
    func checkRoom(uid: UInt32, application: String?, limit: Int) throws(CallFailure) {
        let owned = owned(uid: uid)
        let advice = "remove the ones you no longer use ('accessoryctl remove')"
        if owned.count >= limit {
            throw CallFailure(AgentError.limitExceeded(what: "accessories", limit: limit, advice: advice))
        }
        if let application {
            try ApplicationShare.check(
                owned.count { $0.owner.application == application }, of: limit, what: "accessories", advice: advice)
        }
    }

    /// The NetworkManager profiles the records say the agent made for them, lowercased.
    var connectionUUIDs: [String] { all.flatMap(\.connectionUUIDs) }

    /// Stores a record a session changed, keeping what the agent alone knows of it (the
    /// profiles its joins made).
    func save(_ record: AccessoryRecord) throws(CallFailure) {
        var record = record
        if let stored = self.record(record.id) { record.connectionUUIDs = stored.connectionUUIDs }
        try persist {
            $0.removeAll { $0.id == record.id }; $0.append(record)
        }
    }

    /// Removes the record; returns the stored copy, which holds the profiles the agent made
    /// for it (a session's copy may not).
    func remove(_ record: AccessoryRecord) throws(CallFailure) -> AccessoryRecord {
        let record = self.record(record.id) ?? record
        try persist { $0.removeAll { $0.id == record.id } }
        return record
    }

    /// Adds a profile a join made to the record, so that it is known after a restart.
    func addConnection(_ uuid: String, to recordID: UUID) throws(CallFailure) {
        try persist { records in
            if let index = records.firstIndex(where: { $0.id == recordID }) { records[index].addConnection(uuid) }
        }
    }

    /// Records the network the accessory was given; returns the record as stored.
    func setNetwork(_ network: AccessoryNetwork, of recordID: UUID) throws(CallFailure) -> AccessoryRecord? {
        try persist { records in
            if let index = records.firstIndex(where: { $0.id == recordID }) {
                records[index].network = network
                records[index].changed = network.joined
            }
        }
        return record(recordID)
    }

    /// Sets where the accessory lives on the home network.
    func setLocation(_ location: AccessoryLocation, of recordID: UUID) throws(CallFailure) -> AccessoryRecord? {
        try persist { records in
            if let index = records.firstIndex(where: { $0.id == recordID }) {
                records[index].location = location
                records[index].changed = location.seen
            }
        }
        return record(recordID)
    }

    /// Stores the records with `change` applied; nothing changes when the store refuses.
    private func persist(_ change: (inout [AccessoryRecord]) -> Void) throws(CallFailure) {
        var updated = all
        change(&updated)
        do {
            try store.save(updated)
        } catch {
            Journal.error("records: \(error)")
            throw CallFailure(AccessorySessionError.unknown(reason: "the record could not be stored: \(error)"))
        }
        all = updated
    }
}
