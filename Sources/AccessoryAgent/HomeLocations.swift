import AccessoryCore
import FoundationEssentials

/// The records the agent looks for on the home network (DNS-SD, through Avahi): the services
/// each one's profile declares, those still sought since they were provisioned (until a
/// deadline), and the services heard in the current browse.
struct HomeLocations {
    private(set) var declared: [UUID: [PublishedService]] = [:]
    /// Provisioned and not found yet, each until its deadline: while any is, the agent does not
    /// exit idle and browses in short rounds.
    private(set) var sought: [UUID: ContinuousClock.Instant] = [:]
    /// The services resolved in this round, by type and instance name.
    private(set) var heard: [String: ResolvedService] = [:]
    /// The browse of the declared types, restarted when they change.
    var watch: (types: Set<String>, task: Task<Void, Never>)?

    /// How many services one round keeps: past it, the round's oldest answers are dropped.
    static let heardLimit = 512

    var types: Set<String> { Set(declared.values.flatMap { $0.map(\.type) }) }

    var isSeeking: Bool { !sought.isEmpty }

    mutating func declare(_ services: [PublishedService], for id: UUID, seekUntil deadline: ContinuousClock.Instant?) {
        guard !services.isEmpty else { return forget(id) }
        declared[id] = services
        if let deadline { sought[id] = deadline }
    }

    mutating func forget(_ id: UUID) {
        declared[id] = nil
        sought[id] = nil
    }

    mutating func found(_ id: UUID) { sought[id] = nil }

    /// Drops what is sought past its deadline; returns those records.
    mutating func expire(now: ContinuousClock.Instant = .now) -> [UUID] {
        let late = sought.filter { $0.value <= now }.map(\.key)
        late.forEach { sought[$0] = nil }
        return late
    }

    mutating func hear(_ service: ResolvedService) {
        if heard.count >= Self.heardLimit { heard.removeAll() }
        heard[AccessoryLocator.key(of: service)] = service
    }

    mutating func startRound() { heard.removeAll() }
}
