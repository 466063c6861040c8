import AccessoryCore
import FoundationEssentials
import GLibRuntime

/// The accessory's side of a Bluetooth-to-Wi-Fi handoff, on the GATT calls of the client.
extension BlueZClient {
    /// The characteristics a profile's handoff names, found on a connected device.
    struct HandoffLink: Sendable {
        var device: GATTDevice
        var ssid: GATTCharacteristic
        var passphrase: GATTCharacteristic?
        var security: GATTCharacteristic?
        var switchOn: GATTCharacteristic?
        var switchOff: GATTCharacteristic?
        var state: GATTCharacteristic?
    }

    /// Connects (pairing first where the profile requires it), switches the accessory's
    /// hotspot on, waits until the accessory reports it ready, reads the hotspot it reveals
    /// and disconnects. A failure after the hotspot was switched on switches it off again.
    /// `pair` pairs instead of this client (the agent pairs over its own connection, where its
    /// pairing agent answers BlueZ).
    public func revealHotspot(
        _ address: MACAddress, handoff: BluetoothHandoff, adapter: String? = nil, timeout: Duration = .seconds(20),
        pair: Pairer? = nil, progress: @escaping @Sendable (HotspotHandoffStep) -> Void = { _ in }
    ) async throws(HotspotHandoffError) -> RevealedHotspot {
        let link = try await openHandoff(
            address, handoff: handoff, adapter: adapter, timeout: timeout, pair: pair, progress: progress)
        nextID += 1
        let reports = nextID
        handoffReports[reports] = []
        var observer: UInt64?
        var switchedOn = false
        let outcome: Result<RevealedHotspot, HotspotHandoffError>
        do throws(HotspotHandoffError) {
            if let state = link.state, state.flags.contains(where: Self.notifyingFlags.contains) {
                observer = try await subscribe(state, into: reports, timeout: timeout)
            }
            let ready = try await alreadyReady(link, handoff)
            if !ready, let write = handoff.switchOn, let characteristic = link.switchOn {
                progress(.switchingOn)
                switchedOn = true
                try await gatt { () throws(BluetoothError) in
                    try await self.write(characteristic, write.value, timeout: timeout)
                }
            }
            if !ready, handoff.state != nil {
                progress(.waitingForHotspot)
                try await waitUntilReady(link, handoff, reports: reports)
            }
            progress(.reading)
            outcome = .success(try await readHotspot(link, timeout: timeout))
        } catch {
            outcome = .failure(error)
        }
        if let observer { observers[observer] = nil }
        handoffReports[reports] = nil
        if case .failure = outcome, switchedOn, let write = handoff.switchOff, let characteristic = link.switchOff {
            progress(.switchingOff)
            await runToCompletion { try? await self.write(characteristic, write.value, timeout: timeout) }
        }
        progress(.disconnecting)
        await closeHandoff(link)
        return try outcome.get()
    }

    /// Switches the accessory's hotspot off (after leaving it, or when joining it failed).
    /// Does nothing for a profile without `switchOff`.
    public func switchHotspotOff(
        _ address: MACAddress, handoff: BluetoothHandoff, adapter: String? = nil, timeout: Duration = .seconds(20),
        pair: Pairer? = nil, progress: @escaping @Sendable (HotspotHandoffStep) -> Void = { _ in }
    ) async throws(HotspotHandoffError) {
        guard let write = handoff.switchOff else { return }
        let link = try await openHandoff(
            address, handoff: handoff, adapter: adapter, timeout: timeout, pair: pair, progress: progress)
        progress(.switchingOff)
        let outcome: Result<Void, HotspotHandoffError>
        do throws(HotspotHandoffError) {
            guard let characteristic = link.switchOff else {
                throw .notHandoffDevice(address, missing: write.characteristic)
            }
            outcome = .success(
                try await gatt { () throws(BluetoothError) in
                    try await self.write(characteristic, write.value, timeout: timeout)
                })
        } catch {
            outcome = .failure(error)
        }
        progress(.disconnecting)
        await closeHandoff(link)
        try outcome.get()
    }

    // MARK: Steps

    /// Pairs with a device some other way than `pair(_:)`.
    public typealias Pairer = BluetoothPairer

    private static let notifyingFlags: Set<String> = ["notify", "indicate", "encrypt-notify", "encrypt-indicate"]

    private func openHandoff(
        _ address: MACAddress, handoff: BluetoothHandoff, adapter: String?, timeout: Duration, pair: Pairer?,
        progress: @Sendable (HotspotHandoffStep) -> Void
    ) async throws(HotspotHandoffError) -> HandoffLink {
        if handoff.pairing == .required && !isPaired(address) {
            progress(.pairing)
            try await gatt { () throws(BluetoothError) in
                if let pair {
                    try await pair(address)
                } else {
                    try await self.pair(address, adapter: adapter, timeout: max(timeout, .seconds(60)))
                }
            }
        }
        progress(.connecting)
        let connected = try await gatt { () throws(BluetoothError) in
            try await self.connect(address, adapter: adapter, timeout: timeout)
        }
        let wanted = [
            handoff.ssid, handoff.passphrase, handoff.security, handoff.switchOn?.characteristic,
            handoff.switchOff?.characteristic, handoff.state?.characteristic,
        ].compactMap { $0 }
        let device = await settled(connected) { services in
            wanted.allSatisfy { uuid in services.contains { $0.characteristic(uuid) != nil } }
        }
        do throws(HotspotHandoffError) {
            guard let service = device.service(handoff.service) else {
                throw .notHandoffDevice(address, missing: handoff.service)
            }
            // The handoff's own service first; a vendor may keep its control point elsewhere.
            func find(_ uuid: BluetoothUUID) throws(HotspotHandoffError) -> GATTCharacteristic {
                guard
                    let characteristic = service.characteristic(uuid)
                        ?? device.services.lazy.compactMap({ $0.characteristic(uuid) }).first
                else { throw .notHandoffDevice(address, missing: uuid) }
                return characteristic
            }
            func find(_ uuid: BluetoothUUID?) throws(HotspotHandoffError) -> GATTCharacteristic? {
                guard let uuid else { return nil }
                return try find(uuid) as GATTCharacteristic
            }
            return HandoffLink(
                device: device, ssid: try find(handoff.ssid), passphrase: try find(handoff.passphrase),
                security: try find(handoff.security), switchOn: try find(handoff.switchOn?.characteristic),
                switchOff: try find(handoff.switchOff?.characteristic), state: try find(handoff.state?.characteristic))
        } catch {
            await runToCompletion { try? await self.disconnect(device) }
            throw error
        }
    }

    /// Notifications off (where they were on) and the link down, whatever came before.
    private func closeHandoff(_ link: HandoffLink) async {
        await runToCompletion {
            if let state = link.state, state.flags.contains(where: Self.notifyingFlags.contains) {
                _ = try? await self.call(state.handle, Self.characteristicInterface, "StopNotify")
            }
            try? await self.disconnect(link.device)
        }
    }

    /// Turns on the state's notifications and keeps each value it reports.
    private func subscribe(_ state: GATTCharacteristic, into reports: UInt64, timeout: Duration)
        async throws(HotspotHandoffError) -> UInt64
    {
        let path = state.handle
        let observer = observe { client, change in
            if case .changed(path, Self.characteristicInterface, let properties) = change,
                let value = properties["Value"]?.bytes, value.count <= ImprovExchange.valueBytes,
                client.handoffReports[reports].map({ $0.count < BlueZClient.notificationsBuffered }) == true
            {
                client.handoffReports[reports]?.append(value)
            }
        }
        do {
            _ = try await call(path, Self.characteristicInterface, "StartNotify", timeout: timeout)
        } catch {
            observers[observer] = nil
            throw .bluetooth(error)
        }
        return observer
    }

    /// Whether a readable state says the hotspot is on already, so it need not be switched on.
    private func alreadyReady(_ link: HandoffLink, _ handoff: BluetoothHandoff) async throws(HotspotHandoffError)
        -> Bool
    {
        guard let report = handoff.state, let state = link.state, state.flags.contains(where: { $0.hasSuffix("read") })
        else {
            return false
        }
        let value = try await gatt { () throws(BluetoothError) in try await self.read(state) }
        return report.verdict(value) == .ready
    }

    private func waitUntilReady(_ link: HandoffLink, _ handoff: BluetoothHandoff, reports: UInt64)
        async throws(HotspotHandoffError)
    {
        guard let report = handoff.state, let state = link.state else { return }
        if state.flags.contains(where: Self.notifyingFlags.contains) {
            _ = try await gatt { () throws(BluetoothError) in
                try await self.wait(timeout: handoff.readyTimeout) { self.handoffVerdict(reports, report) != nil }
            }
        } else {
            // Only readable: ask again until it answers.
            let deadline = ContinuousClock.now + handoff.readyTimeout
            while handoffVerdict(reports, report) == nil && ContinuousClock.now < deadline {
                let value = try await gatt { () throws(BluetoothError) in try await self.read(state) }
                handoffReports[reports]?.append(value)
                if handoffVerdict(reports, report) == nil {
                    do { try await Task.sleep(for: .milliseconds(500)) } catch { throw .bluetooth(.cancelled) }
                }
            }
        }
        switch handoffVerdict(reports, report) {
        case (.ready, _)?: return
        case (.failed, let value)?: throw .hotspotFailed(value)
        case nil: throw .hotspotNotReady(seconds: Int(handoff.readyTimeout.components.seconds))
        }
    }

    /// The first state value reported that settles the wait, and what it means.
    private func handoffVerdict(
        _ reports: UInt64, _ report: BluetoothHandoff.StateReport
    ) -> (BluetoothHandoff.StateReport.Verdict, [UInt8])? {
        for value in handoffReports[reports] ?? [] {
            if let verdict = report.verdict(value) { return (verdict, value) }
        }
        return nil
    }

    private func readHotspot(_ link: HandoffLink, timeout: Duration) async throws(HotspotHandoffError)
        -> RevealedHotspot
    {
        func value(_ characteristic: GATTCharacteristic?) async throws(HotspotHandoffError) -> [UInt8]? {
            guard let characteristic else { return nil }
            return try await gatt { () throws(BluetoothError) in try await self.read(characteristic, timeout: timeout) }
        }
        return try RevealedHotspot(
            ssid: try await value(link.ssid) ?? [], passphrase: try await value(link.passphrase),
            security: try await value(link.security))
    }

    /// A GATT step with its Bluetooth error as a handoff error.
    private func gatt<T>(_ body: () async throws(BluetoothError) -> T) async throws(HotspotHandoffError) -> T {
        do { return try await body() } catch { throw .bluetooth(error) }
    }
}
