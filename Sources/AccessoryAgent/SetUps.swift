import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials
import GLibRuntime

/// Setting a picked accessory up over Bluetooth (pairing, bridging, the hotspot handoff) and
/// looking up what migration items adopt.
///
/// A part of the agent with no state of its own; its methods run on the agent
/// (`isolated Agent`).
final class SetUps {
    func lookUpMigrations(_ items: [MigrationDisplayItem], for host: SessionHost, in agent: isolated Agent) {
        let path = host.path
        let owner = host.owner
        let use = BondUse(host)
        Task {
            let lookups = await self.lookUp(items, for: owner, use, in: agent)
            await agent.sessionSurface.feed(.migrationsLookedUp(lookups), toSession: path, in: agent)
        }
    }

    /// Starts a setup step of the picked accessory; the picker shows it.
    func startSetUp(
        _ step: AccessorySession.SetupStep, _ entry: PickerEntry, for host: SessionHost, in agent: isolated Agent
    ) {
        if let picker = host.pickerAgent {
            agent.pickers.send(
                picker, .setupProgress, [.objectPath(host.path), .string(step.rawValue), BusCoding.emptyDictionary],
                in: agent)
        }
        let path = host.path
        let handoff = host.session.profile.bluetoothHandoff
        let use = BondUse(host)
        host.setUp(
            in: Task {
                guard step == .hotspotHandoff else {
                    await agent.sessionSurface.feed(
                        .setupFinished(step, await self.setUp(step, entry, for: use, in: agent)), toSession: path,
                        in: agent)
                    return
                }
                switch await self.revealHotspot(entry, handoff, for: use, in: agent) {
                case .success(let hotspot):
                    await self.handOver(hotspot, of: entry, handoff, for: use, toSession: path, in: agent)
                case .failure(let failure):
                    await agent.sessionSurface.feed(.setupFinished(step, failure), toSession: path, in: agent)
                }
            })
    }

    /// What of each migration item's accessory is there to adopt: a hotspot profile the agent
    /// made for the same owner (never one made for another owner, which anyone else could have
    /// tagged as this project's), or the person's own NetworkManager profile of the SSID (a
    /// system profile or one restricted to them, not this project's); and the Bluetooth device
    /// as BlueZ knows it, unless it is paired for someone else (`requireBond`). The profile
    /// itself is only looked at: it stays the person's.
    private func lookUp(
        _ items: [MigrationDisplayItem], for owner: AccessoryOwner, _ use: BondUse, in agent: isolated Agent
    ) async
        -> [MigrationLookup]
    {
        let own = agent.joins.ownConnections(for: owner, in: agent)
        let hotspots = try? await agent.radios.hotspots()
        let configured =
            ((try? await hotspots?.configuredHotspots(cleaningUp: agent.joins.ownConnections(in: agent))) ?? [])
            .filter { own.contains($0.connectionUUID.lowercased()) }
        let user = Callers.userName(of: owner.uid)
        let personal = (try? await hotspots?.personalHotspotSSIDs(usableBy: user)) ?? []
        var lookups: [MigrationLookup] = []
        for item in items {
            let hasProfile =
                item.hotspotSSID.map { ssid in personal.contains(ssid) || configured.contains { $0.ssid == ssid } }
                ?? false
            var peripheral: BLEAdvertisement?
            if let address = item.peripheralAddress {
                do {
                    peripheral = try await agent.radios.bluetooth().knownDevice(address)
                    try await agent.pairing.requireBond(of: address, for: use, in: agent)
                } catch {
                    Journal.notice("migration: \(address) is not adopted: \(error)")
                    peripheral = nil
                }
            }
            lookups.append(MigrationLookup(hasHotspotProfile: hasProfile, peripheral: peripheral))
        }
        return lookups
    }

    private func setUp(
        _ step: AccessorySession.SetupStep, _ entry: PickerEntry, for use: BondUse, in agent: isolated Agent
    ) async
        -> AccessorySessionError?
    {
        guard let address = entry.bluetooth?.address else { return nil }
        do {
            let bluetooth = try await agent.radios.bluetooth()
            switch step {
            case .pairing: try await agent.pairing.pair(address, for: use, in: agent)
            case .bridging:
                try await agent.pairing.requireBond(of: address, for: use, in: agent)
                try await bluetooth.connectProfiles(address)
            case .hotspotHandoff: return nil
            }
            return nil
        } catch {
            return .accessoryFailed("\(step.rawValue) \(address) failed: \(error)")
        }
    }

    /// The picked accessory's hotspot handoff: it switches its hotspot on and reveals it.
    private func revealHotspot(
        _ entry: PickerEntry, _ handoff: BluetoothHandoff?, for use: BondUse, in agent: isolated Agent
    ) async -> Result<
        RevealedHotspot, AccessorySessionError
    > {
        guard let address = entry.bluetooth?.address, let handoff else {
            return .failure(
                .invalidRequest(field: "entry", reason: "the picked entry has no Bluetooth device to hand off from"))
        }
        do {
            let bluetooth = try await agent.radios.bluetooth()
            try await agent.pairing.requireBond(of: address, for: use, in: agent)
            Journal.info("handoff: \(address) is switching its hotspot on")
            let hotspot = try await bluetooth.revealHotspot(
                address, handoff: handoff,
                pair: { address throws(BluetoothError) in
                    try await agent.pairThroughAgent(address, for: use)
                })
            Journal.notice("handoff: \(address) revealed its hotspot \(hotspot.ssid)")
            return .success(hotspot)
        } catch {
            Journal.notice("handoff: \(address) failed: \(error)")
            return .failure(.accessoryFailed("the hotspot handoff of \(address) failed: \(error)"))
        }
    }

    /// Gives a revealed hotspot to the session whose handoff step waits for it. When none does
    /// any more (the picker was cancelled or its client left while the accessory answered), the
    /// accessory switches the hotspot off again: nothing would ever join or leave it.
    private func handOver(
        _ hotspot: RevealedHotspot, of entry: PickerEntry, _ handoff: BluetoothHandoff?, for use: BondUse,
        toSession path: String, in agent: isolated Agent
    ) async {
        if let host = agent.sessions[path] {
            // Both at once, so that no dismissal comes between the hotspot and the step's end.
            if let effects = try? host.handle(.hotspotRevealed(hotspot))
                + host.handle(.setupFinished(.hotspotHandoff, nil))
            {
                await agent.sessionSurface.perform(effects, for: host, in: agent)
                return
            }
        }
        guard let address = entry.bluetooth?.address, let handoff else { return }
        Journal.notice("handoff: the picker of \(address) ended meanwhile; its hotspot is switched off again")
        // Not in the setup's task, which the picker's end cancelled.
        await runToCompletion { await agent.switchHotspotOff(address, handoff, owner: use.owner) }
    }

    func cancelPairing(_ address: MACAddress, in agent: isolated Agent) async {
        try? await agent.radios.bluetooth().cancelPairing(address)
    }
}
