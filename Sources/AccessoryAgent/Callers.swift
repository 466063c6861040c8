import AccessoryCore
import BusService

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
