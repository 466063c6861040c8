import AccessoryCore
import FoundationEssentials

/// Finding accessories on the home network after provisioning: DNS-SD through Avahi, by the
/// service types their profiles declare (`homeNetwork.services`), matched to records by
/// `AccessoryLocator`. A record gains where it lives (`location`), and its owner hears of it
/// (`AccessoryChanged`) then. Only a service at the address the device itself reported is it;
/// one that merely claims to be (by name, TXT or MAC address) is logged, never adopted.
extension Agent {
    /// How long a provisioned accessory is sought before the agent gives up (it stays watched:
    /// a later announcement still locates it while the agent runs).
    static let locateWindow = Duration.seconds(600)
    /// A browse's length: short while an accessory is sought, so that one whose first resolve
    /// failed (the machine still on its hotspot) is resolved again soon; long after.
    static let seekingRound = Duration.seconds(20)
    static let watchingRound = Duration.seconds(300)

    /// Looks for `record` on the home network, by the services `profile` declares.
    func startLocating(_ record: AccessoryRecord, profile: AccessoryProfile) {
        guard !profile.homeServices.isEmpty else { return }
        locations.declare(profile.homeServices, for: record.id, seekUntil: .now + Self.locateWindow)
        Journal.info(
            "locate: record \(record.id) is sought as \(profile.homeServices.map(\.type).joined(separator: ", "))")
        refreshLocationWatch()
    }

    /// At start: the records given a network or located before are watched again, by their
    /// installed profiles' services. None is sought (which would hold off the idle exit): a
    /// device never found would otherwise keep every start of the agent up for the window.
    func resumeLocating() {
        for record in records.all where record.network != nil || record.location != nil {
            guard let profile = try? loadProfile(record.owner.profileID) else { continue }
            locations.declare(profile.homeServices, for: record.id, seekUntil: nil)
        }
        refreshLocationWatch()
    }

    /// (Re)starts the browse when the declared types changed; stops it when none is left.
    func refreshLocationWatch() {
        let types = locations.types
        guard types != locations.watch?.types else { return }
        locations.watch?.task.cancel()
        locations.watch = nil
        guard !types.isEmpty else { return }
        let radios = self.radios
        let task = Task { [weak self] in
            var reportedUnavailable = false
            while !Task.isCancelled, let self {
                let round = await self.locations.isSeeking ? Self.seekingRound : Self.watchingRound
                do throws(HomeServiceError) {
                    let services = try await radios.homeServices().browse(types, for: round)
                    reportedUnavailable = false
                    await self.startLocationRound()
                    for await service in services { await self.heard(service) }
                } catch {
                    await radios.reset(homeServices: true)
                    if !reportedUnavailable { Journal.warning("locate: \(error)") }
                    reportedUnavailable = true
                    try? await Task.sleep(for: Self.seekingRound)
                }
                await self.expireSought()
            }
        }
        locations.watch = (types, task)
    }

    private func startLocationRound() { locations.startRound() }

    private func expireSought() {
        for id in locations.expire() {
            Journal.notice("locate: record \(id) was not found on the home network within \(Self.locateWindow)")
        }
    }

    /// A service was resolved: each watched record it may be is matched against all heard.
    private func heard(_ service: ResolvedService) async {
        locations.hear(service)
        let candidates = Array(locations.heard.values)
        for (id, declared) in locations.declared {
            guard let record = records.record(id) else {
                locations.forget(id)
                continue
            }
            for impostor in AccessoryLocator.impostors(of: record, among: [service], declared: declared) {
                Journal.notice(
                    "locate: record \(id): \(impostor.name) (\(impostor.type)) at "
                        + "\(impostor.addresses.joined(separator: ", ")) presents itself as the accessory, which "
                        + "reported another address; not adopted")
            }
            let claimed = Set(
                records.all.compactMap { other in
                    other.id == id ? nil : other.location.map(AccessoryLocator.key(of:))
                })
            guard
                let (match, evidence) = AccessoryLocator.locate(
                    record, among: candidates, declared: declared, claimed: claimed)
            else { continue }
            locations.found(id)
            if let location = record.location, location.isInstance(match), !location.differs(from: match) { continue }
            let location = AccessoryLocation(match, seen: Date())
            do throws(CallFailure) {
                guard let changed = try records.setLocation(location, of: id) else { continue }
                Journal.notice(
                    "locate: record \(id) is \(match.name) (\(match.type)) at \(match.hostname), "
                        + "\(match.addresses.joined(separator: ", ")) port \(match.port), by \(evidence.rawValue)")
                await broadcast(.changed(changed), except: nil)
            } catch {
                Journal.warning("locate: record \(id): where it lives was not stored: \(error.message)")
            }
        }
    }
}
