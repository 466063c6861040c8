import AccessoryCore
import FoundationEssentials

/// Finding accessories on the home network after provisioning: DNS-SD through Avahi, by the
/// service types their profiles declare (`homeNetwork.services`), matched to records by
/// `AccessoryLocator`. A record gains where it lives (`location`), and its owner hears of it
/// (`AccessoryChanged`) then. Only a service at the address the device itself reported is it;
/// one that merely claims to be (by name, TXT or MAC address) is logged, never adopted.
///
/// A part of the agent: it holds what is declared, sought and heard, and the browse; its
/// methods run on the agent (`isolated Agent`), whose records it reads and has stored.
final class Locations {
    /// How long a provisioned accessory is sought before the agent gives up (it stays watched:
    /// a later announcement still locates it while the agent runs).
    static let locateWindow = Duration.seconds(600)
    /// A browse's length: short while an accessory is sought, so that one whose first resolve
    /// failed (the machine still on its hotspot) is resolved again soon; long after.
    static let seekingRound = Duration.seconds(20)
    static let watchingRound = Duration.seconds(300)
    /// How many services one round keeps: past it, the round's oldest answers are dropped.
    static let heardLimit = 512

    private let radios: Radios
    private var declared: [UUID: [PublishedService]] = [:]
    /// Provisioned and not found yet, each until its deadline: while any is, the agent does not
    /// exit idle and browses in short rounds.
    private var sought: [UUID: ContinuousClock.Instant] = [:]
    /// The services resolved in this round, by type and instance name.
    private var heard: [String: ResolvedService] = [:]
    /// The browse of the declared types, restarted when they change.
    private var watch: (types: Set<String>, task: Task<Void, Never>)?

    init(radios: Radios) { self.radios = radios }

    var isSeeking: Bool { !sought.isEmpty }

    private var types: Set<String> { Set(declared.values.flatMap { $0.map(\.type) }) }

    /// Looks for `record` on the home network, by the services `profile` declares.
    func start(_ record: AccessoryRecord, profile: AccessoryProfile, in agent: isolated Agent) {
        guard !profile.homeServices.isEmpty else { return }
        declare(profile.homeServices, for: record.id, seekUntil: .now + Self.locateWindow)
        Journal.info(
            "locate: record \(record.id) is sought as \(profile.homeServices.map(\.type).joined(separator: ", "))")
        refreshWatch(in: agent)
    }

    /// At start: the records given a network or located before are watched again, by their
    /// installed profiles' services. None is sought (which would hold off the idle exit): a
    /// device never found would otherwise keep every start of the agent up for the window.
    func resume(in agent: isolated Agent) {
        for record in agent.records.all where record.network != nil || record.location != nil {
            guard let profile = try? agent.loadProfile(record.owner.profileID) else { continue }
            declare(profile.homeServices, for: record.id, seekUntil: nil)
        }
        refreshWatch(in: agent)
    }

    /// A removed record is looked for no more.
    func forget(_ id: UUID, in agent: isolated Agent) {
        forget(id)
        refreshWatch(in: agent)
    }

    /// Stops the browse, for good.
    func stop() {
        watch?.task.cancel()
        watch = nil
    }

    private func declare(_ services: [PublishedService], for id: UUID, seekUntil deadline: ContinuousClock.Instant?) {
        guard !services.isEmpty else { return forget(id) }
        declared[id] = services
        if let deadline { sought[id] = deadline }
    }

    private func forget(_ id: UUID) {
        declared[id] = nil
        sought[id] = nil
    }

    /// (Re)starts the browse when the declared types changed; stops it when none is left.
    private func refreshWatch(in agent: isolated Agent) {
        let types = types
        guard types != watch?.types else { return }
        stop()
        guard !types.isEmpty else { return }
        let radios = radios
        // Holds the agent for one round at a time, never between rounds, so that an agent let
        // go of without `stop()` ends its browse rather than keeping itself alive through it.
        let task = Task { [weak agent] in
            var reportedUnavailable = false
            while !Task.isCancelled, let current = agent {
                let round = await Locations.roundLength(in: current)
                do throws(HomeServiceError) {
                    let services = try await radios.homeServices().browse(types, for: round)
                    reportedUnavailable = false
                    await Locations.startRound(in: current)
                    for await service in services { await Locations.hearing(service, in: current) }
                } catch {
                    await radios.reset(homeServices: true)
                    if !reportedUnavailable { Journal.warning("locate: \(error)") }
                    reportedUnavailable = true
                    try? await Task.sleep(for: Locations.seekingRound)
                }
                await Locations.endRound(in: current)
            }
        }
        watch = (types, task)
    }

    /// A browse's length: short while an accessory is sought.
    private static func roundLength(in agent: isolated Agent) -> Duration {
        agent.locations.isSeeking ? seekingRound : watchingRound
    }

    private static func startRound(in agent: isolated Agent) {
        agent.locations.heard.removeAll()
    }

    private static func hearing(_ service: ResolvedService, in agent: isolated Agent) async {
        await agent.locations.heard(service, in: agent)
    }

    private static func endRound(in agent: isolated Agent) {
        agent.locations.expireSought()
    }

    /// Drops what is sought past its deadline.
    private func expireSought(now: ContinuousClock.Instant = .now) {
        for (id, deadline) in sought where deadline <= now {
            sought[id] = nil
            Journal.notice("locate: record \(id) was not found on the home network within \(Self.locateWindow)")
        }
    }

    /// A service was resolved: each watched record it may be is matched against all heard.
    private func heard(_ service: ResolvedService, in agent: isolated Agent) async {
        if heard.count >= Self.heardLimit { heard.removeAll() }
        heard[AccessoryLocator.key(of: service)] = service
        let candidates = Array(heard.values)
        for (id, declared) in declared {
            guard let record = agent.records.record(id) else {
                forget(id)
                continue
            }
            for impostor in AccessoryLocator.impostors(of: record, among: [service], declared: declared) {
                Journal.notice(
                    "locate: record \(id): \(impostor.name) (\(impostor.type)) at "
                        + "\(impostor.addresses.joined(separator: ", ")) presents itself as the accessory, which "
                        + "reported another address; not adopted")
            }
            let claimed = Set(
                agent.records.all.compactMap { other in
                    other.id == id ? nil : other.location.map(AccessoryLocator.key(of:))
                })
            guard
                let (match, evidence) = AccessoryLocator.locate(
                    record, among: candidates, declared: declared, claimed: claimed)
            else { continue }
            sought[id] = nil
            if let location = record.location, location.isInstance(match), !location.differs(from: match) { continue }
            let location = AccessoryLocation(match, seen: Date())
            do throws(CallFailure) {
                guard let changed = try agent.records.setLocation(location, of: id) else { continue }
                Journal.notice(
                    "locate: record \(id) is \(match.name) (\(match.type)) at \(match.hostname), "
                        + "\(match.addresses.joined(separator: ", ")) port \(match.port), by \(evidence.rawValue)")
                await agent.broadcast(.changed(changed), except: nil)
            } catch {
                Journal.warning("locate: record \(id): where it lives was not stored: \(error.message)")
            }
        }
    }
}
