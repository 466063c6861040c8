import AccessoryCore
import FoundationEssentials
import GLibRuntime

extension NetworkManagerClient {
    // MARK: Join

    public func join(_ configuration: HotspotConfiguration, options: JoinOptions) async throws(HotspotError)
        -> JoinedHotspot
    {
        let (device, kept) = try joinDevice(named: options.device)
        let interface = LibNM.interface(device.pointer)
        try await removeStaleProfiles(among: options.cleaningUp)
        let prepared = try checkBeforeScan(configuration, options: options, on: device)
        options.progress?(.scanning)
        let (ssid, accessPoint) = try await target(of: configuration, on: device)
        // Again, since a scan gives other calls their turn: another join may be in place by now.
        if let refused = refusal(joining: ssid, on: device) { throw refused }
        let (profile, connection): (WirelessProfile, GObjectRef)
        if let prepared {
            (profile, connection) = prepared
        } else {
            (profile, connection) = try prepareProfile(configuration, ssid: ssid, options: options)
        }
        let previous = previousConnection(on: device)
        if let previous { try LibNM.setUserData(connection, ProfileTag.previousConnection, previous.uuid) }

        // Taken only now, though asking for it while the access point is looked up would save
        // its round trip when a scan runs: a command killed during the scan would leave a
        // checkpoint no profile names, refusing every join on the device until it expired.
        options.progress?(.checkpoint)
        let rollbackSeconds = Self.rollbackSeconds(options.restoreAfter)
        let checkpoint = try await createCheckpoint(on: device, rollbackAfter: rollbackSeconds)
        let attempt = JoinAttempt(
            device: interface, profileUUID: profile.uuid, checkpoint: checkpoint, previous: previous?.uuid)
        // From here on every way out but success undoes the join, whatever the task's state.
        do throws(HotspotError) {
            let postponing: Task<Void, Never>? =
                if let checkpoint, let rollbackSeconds {
                    Task { await self.postponeRollback(of: checkpoint, by: rollbackSeconds) }
                } else {
                    nil
                }
            defer { postponing?.cancel() }
            if let checkpoint { try LibNM.setUserData(connection, ProfileTag.checkpoint, checkpoint.tag) }
            let active = try await activateUntilUp(
                connection, profile, joining: ssid, through: accessPoint, on: device,
                configuration: configuration, options: options)
            if !configuration.joinOnce && checkpoint == nil { await removeProfiles(replacedBy: profile) }
            var restoreDeadline: Date?
            if let checkpoint, let seconds = rollbackSeconds {
                postponing?.cancel()
                try await LibNM.adjustRollbackTimeout(checkpoint: checkpoint.path, seconds: seconds, client: client)
                restoreDeadline = Date() + TimeInterval(seconds)
            }
            return JoinedHotspot(
                device: interface, ssid: ssid,
                bssid: LibNM.activeAccessPoint(of: device.pointer).flatMap { LibNM.scanEntry($0)?.bssid },
                connectionID: profile.id, connectionUUID: profile.uuid,
                ipv4Address: LibNM.ipv4Address(ofActive: active.pointer), previousConnection: previous?.id,
                restoreDeadline: restoreDeadline, keptDevice: kept.map(LibNM.interface),
                keptConnection: kept.flatMap(LibNM.activeConnection).flatMap(LibNM.activeID))
        } catch {
            await runToCompletion { await self.undo(attempt) }
            throw error
        }
    }

    /// The device a join takes, and the one it leaves on its network, if another. Named: that
    /// one. Otherwise, with more than one Wi-Fi device that can connect, one that does not carry
    /// the default route (NetworkManager's primary connection, or an active connection that is
    /// the default), an idle one first, so that the network the machine is on stays up on the
    /// other while an accessory is set up; else the first, as with one device.
    func joinDevice(named name: String?) throws(HotspotError) -> (GObjectRef, kept: OpaquePointer?) {
        if name != nil { return (try wifiDevice(named: name), nil) }
        let first = try wifiDevice(named: nil)
        let usable = wifiDevicePointers().filter { LibNM.state($0).rawValue >= DeviceState.disconnected.rawValue }
        guard usable.count > 1 else { return (first, nil) }
        let carrying = usable.filter { LibNM.carriesDefaultRoute($0, client: client.pointer) }
        let connected = usable.filter { LibNM.activeConnection(of: $0) != nil }
        let idle = usable.filter { !connected.contains($0) }
        guard let chosen = idle.first ?? connected.first(where: { !carrying.contains($0) }),
            let kept = carrying.first ?? connected.first(where: { $0 != chosen })
        else { return (first, nil) }
        return (GObjectRef(retaining: chosen), kept)
    }

    /// Everything about the join that can be refused, checked before NetworkManager is asked for
    /// anything, so that a refusal leaves nothing behind to undo, and before any scan, so that it
    /// does not wait on the radio: a prefix's settings with the prefix standing in for the SSID.
    /// The profile of a named SSID, ready; `nil` for a prefix.
    private func checkBeforeScan(
        _ configuration: HotspotConfiguration, options: JoinOptions, on device: GObjectRef
    ) throws(HotspotError) -> (WirelessProfile, GObjectRef)? {
        switch configuration.target {
        case .ssid(let ssid):
            if let refused = refusal(joining: ssid, on: device) { throw refused }
            return try prepareProfile(configuration, ssid: ssid, options: options)
        case .ssidPrefix(let prefix):
            _ = try prepareProfile(configuration, ssid: prefix, options: options)
            return nil
        }
    }

    /// Why the device cannot join `ssid` now: it is on it already, or another accessory's join
    /// holds it.
    private func refusal(joining ssid: SSID, on device: GObjectRef) -> HotspotError? {
        if LibNM.state(device.pointer) == .activated, LibNM.wifiDevice(device.pointer).ssid == ssid {
            return .alreadyAssociated(ssid)
        }
        return accessoryConnection(on: device.pointer) != nil ? .pending(device: LibNM.interface(device.pointer)) : nil
    }

    /// The profile for joining `ssid`, and the connection holding it, checked locally.
    private func prepareProfile(
        _ configuration: HotspotConfiguration, ssid: SSID, options: JoinOptions
    ) throws(HotspotError) -> (WirelessProfile, GObjectRef) {
        let profile = WirelessProfile(configuration, ssid: ssid, options: options)
        let connection = try LibNM.connection(profile)
        try LibNM.verify(connection)
        return (profile, connection)
    }

    /// The connection the device is on before the join, by UUID and name: the one leaving
    /// brings back.
    private func previousConnection(on device: GObjectRef) -> (uuid: String, id: String)? {
        LibNM.activeConnection(of: device.pointer).flatMap { active -> (uuid: String, id: String)? in
            guard let uuid = LibNM.activeUUID(active) else { return nil }
            return (uuid, LibNM.activeID(active) ?? uuid)
        }
    }

    /// Adds and activates the profile, and waits until it is up; an activation that fails, times
    /// out or loses NetworkManager is thrown as the join's error.
    private func activateUntilUp(
        _ connection: GObjectRef, _ profile: WirelessProfile, joining ssid: SSID, through accessPoint: String?,
        on device: GObjectRef, configuration: HotspotConfiguration, options: JoinOptions
    ) async throws(HotspotError) -> GObjectRef {
        // The device's reason for failing, caught as it fails: by the time the wait looks,
        // NetworkManager may have moved the device on to disconnected and reset its reason.
        let reasons = FailureReason(recording: device)
        defer { reasons.stop() }
        recordConnectionEnds(on: device)
        options.progress?(.adding)
        let activationStarted = LibNM.timestampMilliseconds() / 1000
        var active = try await activate(
            connection, on: device, accessPoint: accessPoint, joinOnce: configuration.joinOnce,
            bind: options.bindToClient)
        options.progress?(.associating)
        var settled = await waitForActivation(
            of: active, on: device, failure: reasons, timeout: options.timeout, progress: options.progress)
        if let again = try await retryAfterLostHandshake(
            settled, profile: profile, reasons: reasons, on: device, options: options)
        {
            (active, settled) = again
        }
        try await throwUnlessActivated(
            settled, joining: ssid, secured: configuration.security.hasCredentials, seenInScan: accessPoint != nil,
            heardAfter: activationStarted, reasons: reasons, on: device, timeout: options.timeout)
        return active
    }

    /// A link that came up (the hotspot accepted the key) and then failed lost a handshake on a
    /// busy channel: it dropped with NetworkManager asking for secrets nobody gives, or it
    /// stayed up with the two ends' keys out of step, carrying nothing, until DHCP gave up. The
    /// profile is activated once more, as NetworkManager's autoconnect would, and waited for: a
    /// new association makes new keys. Not for an activation bound to its client, which a plain
    /// activation cannot bind again. `nil` when the first activation's outcome stands.
    private func retryAfterLostHandshake(
        _ settled: SignalWait<ActivationOutcome>, profile: WirelessProfile, reasons: FailureReason,
        on device: GObjectRef, options: JoinOptions
    ) async throws(HotspotError) -> (GObjectRef, SignalWait<ActivationOutcome>)? {
        guard case .fired(.failed(let deviceReason, _)) = settled, reasons.linkCameUp, !options.bindToClient,
            DeviceStateReason.lostLink.contains(deviceReason),
            let again = try await activate(existing: profile.uuid, on: device)
        else { return nil }
        reasons.reset()
        options.progress?(.associating)
        let settledAgain = await waitForActivation(
            of: again, on: device, failure: reasons, timeout: options.timeout, progress: options.progress)
        return (again, settledAgain)
    }

    /// Returns when the activation came up; otherwise throws the join's error for how it ended.
    private func throwUnlessActivated(
        _ settled: SignalWait<ActivationOutcome>, joining ssid: SSID, secured: Bool, seenInScan: Bool,
        heardAfter started: Int, reasons: FailureReason, on device: GObjectRef, timeout: Duration
    ) async throws(HotspotError) {
        switch settled {
        case .fired(.activated):
            return
        case .fired(.networkManagerGone):
            throw .networkManagerRestarted
        case .fired(.failed(let deviceReason, let connectionReason)):
            // NetworkManager stopping takes its devices down (unmanaged, reason "removed") a
            // moment before it leaves the bus.
            if LibNM.state(device.pointer) == .unmanaged, await networkManagerLeaves(within: .seconds(5)) {
                throw .networkManagerRestarted
            }
            throw await failure(
                device: deviceReason, connection: connectionReason, joining: ssid, secured: secured,
                linkCameUp: reasons.linkCameUp, seenInScan: seenInScan, heardAfter: started, on: device)
        case .timedOut:
            throw .timedOut(ssid, seconds: Int(timeout.components.seconds))
        case .cancelled:
            throw .cancelled
        }
    }

    /// The reason the device gave when it failed, and whether its link came up first (it
    /// reached ip-config, which it does once the hotspot accepted the key), recorded from its
    /// `state-changed` signal until `stop()`.
    private final class FailureReason {
        private(set) var device: DeviceStateReason?
        private(set) var linkCameUp = false
        private var recorder: SignalConnection?

        init(recording wifi: GObjectRef) {
            recorder = wifi.connect("state-changed") { [unowned self] (new: UInt32, _: UInt32, reason: UInt32) in
                if new == DeviceState.failed.rawValue { device = DeviceStateReason(rawValue: reason) }
                if (DeviceState.ipConfig.rawValue...DeviceState.activated.rawValue).contains(new) { linkCameUp = true }
            }
        }

        /// Forgets what was recorded, for another activation.
        func reset() {
            device = nil
            linkCameUp = false
        }

        func stop() {
            recorder?.disconnect()
            recorder = nil
        }
    }

    /// Why each device's last connection ended, from its `state-changed` signal: the reason of
    /// its step out of an activation (prepare to activated) into deactivating, failed,
    /// disconnected or unavailable. Caught as it happens, since NetworkManager moves a failed
    /// device on to disconnected and resets its reason before a dispatcher script runs.
    final class ConnectionEnds {
        private(set) var reasons: [String: DeviceStateReason] = [:]
        private var recorders: [String: SignalConnection] = [:]

        func record(_ device: GObjectRef) {
            let interface = LibNM.interface(device.pointer)
            guard recorders[interface] == nil else { return }
            recorders[interface] = device.connect("state-changed") {
                [unowned self] (new: UInt32, old: UInt32, reason: UInt32) in
                if new == DeviceState.activated.rawValue { reasons[interface] = nil }
                guard (40...100).contains(old), [20, 30, 110, 120].contains(new) else { return }
                reasons[interface] = reason > 1 ? DeviceStateReason(rawValue: reason) : nil
            }
        }

        deinit { recorders.values.forEach { $0.disconnect() } }
    }

    private func recordConnectionEnds(on device: GObjectRef) { connectionEnds.record(device) }

    /// What undoing a join needs, by name and UUID, so that it still works after NetworkManager
    /// restarted and every libnm object of the join is gone.
    private struct JoinAttempt: Sendable {
        var device: String
        var profileUUID: String
        var checkpoint: Checkpoint?
        var previous: String?
    }

    /// Why a failed activation failed, in terms of the join: a secured hotspot that is still in
    /// range after turning the join away most likely refused the passphrase, whatever reason
    /// NetworkManager gave (1.42 fails a refused WPA3-SAE password with SSID_NOT_FOUND after
    /// "association took too long"). In range means heard after `heardAfter` (seconds of
    /// CLOCK_BOOTTIME, as `LastSeen`): wpa_supplicant scans for the hotspot while it tries, and
    /// NetworkManager often refuses a new scan by now, or answers it with a scan of its own
    /// for the network it activates next. A link that came up had its passphrase accepted,
    /// whatever NetworkManager says of secrets when it drops.
    private func failure(
        device: DeviceStateReason, connection: ActiveConnectionStateReason, joining ssid: SSID, secured: Bool,
        linkCameUp: Bool, seenInScan: Bool, heardAfter started: Int, on wifi: GObjectRef
    ) async -> HotspotError {
        let error = ActivationOutcome.error(device: device, connection: connection, joining: ssid, secured: secured)
        if linkCameUp, case .wrongPassphrase = error {
            return .activationFailed(
                ssid, reason: "the connection dropped after the hotspot had accepted the passphrase")
        }
        guard case .notFound = error, seenInScan else { return error }
        func heard(after second: Int) -> Bool {
            LibNM.accessPoints(of: wifi.pointer).contains { ap in
                LibNM.lastSeen(ap) > second && LibNM.scanEntry(ap)?.ssid == ssid
            }
        }
        var inRange = heard(after: started)
        if !inRange {
            let scanned = LibNM.timestampMilliseconds() / 1000
            try? await scan(wifi, ssids: [ssid])
            inRange = heard(after: scanned - 1)
        }
        guard inRange else { return error }
        return secured
            ? .authenticationRejected(ssid) : .activationFailed(ssid, reason: "the hotspot turned the connection away")
    }

    /// The SSID to join and the access point to join it through: the named SSID, or the
    /// strongest access point whose SSID has the prefix (Apple's rule). Scans when nothing
    /// fits in the cached results or they are stale.
    private func target(of configuration: HotspotConfiguration, on device: GObjectRef) async throws(HotspotError) -> (
        SSID, String?
    ) {
        // Every access point of the target, the one picked (if one was) or not.
        func named() -> [(entry: WiFiScanEntry, path: String)] {
            LibNM.accessPoints(of: device.pointer).compactMap { ap -> (entry: WiFiScanEntry, path: String)? in
                guard let entry = LibNM.scanEntry(ap), let ssid = entry.ssid else { return nil }
                switch configuration.target {
                case .ssid(let wanted): guard ssid == wanted else { return nil }
                case .ssidPrefix(let prefix): guard ssid.hasPrefix(prefix) else { return nil }
                }
                return (entry, LibNM.path(ap))
            }
        }
        func best() -> (SSID, String)? {
            named().filter { configuration.bssid == nil || $0.entry.bssid == configuration.bssid }
                .max { $0.entry.strength < $1.entry.strength }.map { ($0.entry.ssid!, $0.path) }
        }
        let lastScan = LibNM.lastScan(of: device.pointer)
        let stale = lastScan < 0 || LibNM.timestampMilliseconds() - lastScan > 30_000
        if !stale, let found = best() { return found }
        // An access point that has just come up, or a scan NetworkManager refused, can miss
        // one scan; a few are tried before giving up.
        let probe: [SSID]
        if case .ssid(let ssid) = configuration.target { probe = [ssid] } else { probe = [] }
        for _ in 0..<Self.scanAttempts {
            try await scan(device, ssids: probe)
            if let found = best() { return found }
        }
        if let bssid = configuration.bssid, let other = named().first {
            throw .pickedAccessPointNotFound(
                other.entry.ssid!, bssid: bssid, others: Set(named().map(\.entry.bssid)).sorted())
        }
        switch configuration.target {
        case .ssid(let ssid):
            // A hidden network may answer only the association's own probe.
            if configuration.hidden { return (ssid, nil) }
            throw .notFound("named \(ssid)\(configuration.bssid.map { " at \($0)" } ?? "")")
        case .ssidPrefix(let prefix):
            throw .notFound("whose SSID starts with \(prefix)")
        }
    }

    static let scanAttempts = 3

    /// Adds the profile and activates it in one request: kept in memory only for a join-once
    /// profile (deleted by whoever ends the join), written to disk otherwise.
    private func activate(
        _ connection: GObjectRef, on device: GObjectRef, accessPoint: String?, joinOnce: Bool, bind: Bool
    ) async throws(HotspotError) -> GObjectRef {
        try await LibNM.addAndActivate(
            connection, client: client, on: device, accessPoint: accessPoint, inMemory: joinOnce, bind: bind)
    }

    /// Waits until the activation succeeds or fails, or NetworkManager goes away.
    private func waitForActivation(
        of active: GObjectRef, on device: GObjectRef, failure: FailureReason, timeout: Duration,
        progress: (@Sendable (JoinStep) -> Void)?
    ) async -> SignalWait<ActivationOutcome> {
        var reported: JoinStep = .associating
        let client = self.client
        func outcome(removed: Bool = false) -> ActivationOutcome? {
            // libnm drops every object when NetworkManager leaves the bus.
            let gone = !LibNM.isRunning(client.pointer) || !LibNM.devices(of: client.pointer).contains(device.pointer)
            if gone { return .networkManagerGone }
            let state = LibNM.activeState(active.pointer)
            if state == .activated && !removed { return .activated }
            if state == .deactivated || removed {
                return .failed(
                    device: failure.device ?? LibNM.stateReason(device.pointer),
                    connection: LibNM.activeStateReason(active.pointer))
            }
            if LibNM.state(device.pointer) == .ipConfig && reported != .configuringAddress {
                reported = .configuringAddress
                progress?(.configuringAddress)
            }
            return nil
        }
        if let settled = outcome() { return .fired(settled) }
        return await waitForSignal(timeout: timeout) { fire in
            let check = { (_: OpaquePointer?) in if let settled = outcome() { fire(settled) } }
            return [
                active.connect("notify::state", check),
                active.connect("notify::state-reason", check),
                device.connect("notify::state", check),
                client.connect("notify::nm-running", check),
                client.connect("active-connection-removed") { removed in
                    if removed == active.pointer, let settled = outcome(removed: true) { fire(settled) }
                },
            ]
        }
    }

    /// After a failed join: no profile left, and the device back where it was. Each step is
    /// tried whatever became of the one before; when NetworkManager restarted, they wait for
    /// it to come back, since its checkpoints went with it but the profile did not.
    private func undo(_ attempt: JoinAttempt) async {
        guard await networkManagerIsBack(device: attempt.device) else { return }
        if let checkpoint = attempt.checkpoint, let path = liveCheckpointPath(checkpoint) {
            // NetworkManager puts the device back on its previous connection and deletes the
            // profiles added since the checkpoint.
            _ = try? await rollback(path)
        }
        if let connection = LibNM.remoteConnection(uuid: attempt.profileUUID, in: client.pointer) {
            try? await delete(GObjectRef(retaining: connection))
        }
        if let previous = attempt.previous, let device = try? wifiDevice(named: attempt.device) {
            _ = await bringBack(previous, on: device)
        }
    }

    /// Whether NetworkManager leaves the bus within `timeout`.
    private func networkManagerLeaves(within timeout: Duration) async -> Bool {
        let client = self.client
        let gone = { !LibNM.isRunning(client.pointer) }
        if gone() { return true }
        return await waitForSignal(timeout: timeout) { fire in
            [client.connect("notify::nm-running") { _ in if gone() { fire(true) } }]
        } == .fired(true)
    }

    /// Whether NetworkManager is on the bus, done starting, with `device` known, waiting up to
    /// `timeout` for it to come back after a restart. A restarted NetworkManager takes its bus
    /// name seconds before it has exported the profiles it kept (a join-once profile among them)
    /// and its devices; until its startup ends, what libnm lists is not all there is.
    private func networkManagerIsBack(device name: String, timeout: Duration = .seconds(30)) async -> Bool {
        let client = self.client
        let ready = {
            LibNM.isRunning(client.pointer) && !LibNM.isStartingUp(client.pointer)
                && (try? self.wifiDevice(named: name)) != nil
        }
        if ready() { return true }
        return await waitForSignal(timeout: timeout) { fire in
            [
                client.connect("notify::nm-running") { _ in if ready() { fire(true) } },
                client.connect("notify::startup") { _ in if ready() { fire(true) } },
                client.connect("device-added") { _ in if ready() { fire(true) } },
            ]
        } == .fired(true)
    }

    // MARK: Leave, forget, list

    /// With `recorded` (the agent ending its own join, often because NetworkManager restarted
    /// under it: the restart takes the connection and the checkpoint, not the join-once
    /// profile), the leave waits for NetworkManager to be back with the device, and is tried once
    /// more when NetworkManager leaves the bus half-way through it.
    public func leave(device name: String?, recorded: RecordedJoin?) async throws(HotspotError) -> LeftHotspot {
        guard let recorded, let name else { return try await leaveOnce(device: name, recorded: recorded) }
        let restartWait = Duration.seconds(60)
        _ = await networkManagerIsBack(device: name, timeout: restartWait)
        do {
            return try await leaveOnce(device: name, recorded: recorded)
        } catch {
            let client = self.client.pointer
            guard !LibNM.isRunning(client) || LibNM.isStartingUp(client) || (try? wifiDevice(named: name)) == nil,
                await networkManagerIsBack(device: name, timeout: restartWait)
            else { throw error }
            return try await leaveOnce(device: name, recorded: recorded)
        }
    }

    private func leaveOnce(device name: String?, recorded: RecordedJoin?) async throws(HotspotError) -> LeftHotspot {
        let devices =
            try name.map { name throws(HotspotError) in [try wifiDevice(named: name).pointer] } ?? wifiDevicePointers()
        let isRecorded = { (profile: WirelessProfile) in
            recorded.map { $0.connectionUUID == profile.uuid.lowercased() } ?? true
        }
        for device in devices {
            if let (active, profile) = accessoryConnection(on: device), isRecorded(profile) {
                return try await end(profile, on: GObjectRef(retaining: device), active: active, recorded: recorded)
            }
        }
        // A join whose connection went down by itself, as when the hotspot went away: its
        // checkpoint (or its join-once profile) is still there, and leaving cleans up after it.
        // What is active is read from the devices just looked at, not from NetworkManager's list
        // of active connections: the two are separate properties, and right after a drop libnm
        // may have updated one and not yet the other.
        let activeUUIDs = Set(
            wifiDevicePointers().compactMap { LibNM.activeConnection(of: $0).flatMap(LibNM.activeUUID) })
        let inactive = ourProfiles().map(\.1).filter { !activeUUIDs.contains($0.uuid) && isRecorded($0) }
        for device in devices {
            let stale = inactive.first { profile in
                liveCheckpoint(of: profile).map { covers($0, device) } ?? profile.isJoinOnce
            }
            if let stale {
                return try await end(stale, on: GObjectRef(retaining: device), active: nil, recorded: recorded)
            }
        }
        throw .notJoined(device: name ?? devices.first.map(LibNM.interface) ?? "any Wi-Fi device")
    }

    /// Ends the join of `profile`: its connection down, the previous one back, its checkpoint
    /// destroyed last (so that a crash half-way still leaves NetworkManager to restore), then a
    /// join-once profile deleted, or the stored profiles it replaces.
    /// With `recorded`, the previous connection its profile names comes back only if the join's
    /// user may use it (a system profile, or one whose `connection.permissions` name them): the
    /// tag is the profile's user's to edit, and root would otherwise bring up any profile.
    private func end(_ profile: WirelessProfile, on device: GObjectRef, active: GObjectRef?, recorded: RecordedJoin?)
        async throws(HotspotError) -> LeftHotspot
    {
        ending.insert(profile.uuid)
        defer { ending.remove(profile.uuid) }
        var previousUUID = profile.userData[ProfileTag.previousConnection]
        var previous = previousUUID.flatMap { LibNM.remoteConnection(uuid: $0, in: client.pointer) }
        if let user = recorded?.user, let connection = previous {
            let permitted = LibNM.permittedUsers(of: connection)
            if !permitted.isEmpty && !permitted.contains(user) {
                previous = nil
                previousUUID = nil
            }
        }
        var active = active
        if let connection = active {
            do {
                try await deactivate(connection)
            } catch {
                // It went down between the look and the call, as a hotspot switched off does.
                let current = accessoryConnection(on: device.pointer)?.0
                guard current?.pointer != connection.pointer else { throw error }
                active = nil
            }
        }
        let restored = if let previousUUID, previous != nil { await bringBack(previousUUID, on: device) } else { false }
        let previousID = previous.flatMap(LibNM.connectionID)
        if let checkpoint = liveCheckpoint(of: profile) { try await destroy(checkpoint) }
        if !profile.isJoinOnce {
            await removeProfiles(replacedBy: profile)
        } else if let connection = LibNM.remoteConnection(uuid: profile.uuid, in: client.pointer) {
            try await delete(GObjectRef(retaining: connection))
        }
        return LeftHotspot(
            device: LibNM.interface(device.pointer), ssid: try? SSID(bytes: profile.ssid), deleted: profile.isJoinOnce,
            restored: restored ? previousID : nil, notRestored: restored ? nil : previousID, alreadyEnded: active == nil
        )
    }

    /// Waits until the device is back on the connection `uuid`, activating it again when an
    /// attempt fails for a reason other than its network being gone: one handshake lost on a
    /// busy channel makes NetworkManager ask for secrets no agent gives, fail with `no-secrets`
    /// and block the profile from connecting by itself, leaving the machine off its network.
    /// Whether the device came back.
    private func bringBack(_ uuid: String, on device: GObjectRef) async -> Bool {
        var active = LibNM.activeConnection(of: device.pointer).flatMap { current in
            LibNM.activeUUID(current) == uuid ? GObjectRef(retaining: current) : nil
        }
        for _ in 0..<Self.restoreAttempts {
            let reasons = FailureReason(recording: device)
            defer { reasons.stop() }
            if active == nil { active = try? await activate(existing: uuid, on: device) }
            guard let current = active else { return false }
            let settled = await waitForActivation(
                of: current, on: device, failure: reasons, timeout: Self.restoreTimeout, progress: nil)
            switch settled {
            case .fired(.activated): return true
            case .fired(.failed(let reason, _)) where reason != .ssidNotFound: active = nil
            default: return false
            }
        }
        return false
    }

    static let restoreAttempts = 3
    static let restoreTimeout = Duration.seconds(30)

    public func forget(ssid: SSID) async throws(HotspotError) -> [ConfiguredHotspot] {
        try await forget(try await configuredHotspots().filter { $0.ssid == ssid })
    }

    public func forget(connectionUUIDs: Set<String>) async throws(HotspotError) -> [ConfiguredHotspot] {
        let uuids = Set(connectionUUIDs.map { $0.lowercased() })
        return try await forget(
            try await configuredHotspots(cleaningUp: uuids).filter { uuids.contains($0.connectionUUID.lowercased()) })
    }

    private func forget(_ forgotten: [ConfiguredHotspot]) async throws(HotspotError) -> [ConfiguredHotspot] {
        for hotspot in forgotten where hotspot.active {
            for device in wifiDevicePointers() {
                if let (_, profile) = accessoryConnection(on: device), profile.uuid == hotspot.connectionUUID {
                    _ = try await leave(device: LibNM.interface(device))
                }
            }
        }
        for hotspot in forgotten {
            if let connection = LibNM.remoteConnection(uuid: hotspot.connectionUUID, in: client.pointer) {
                try await delete(GObjectRef(retaining: connection))
            }
        }
        return forgotten
    }

    public func configuredHotspots(cleaningUp: Set<String>?) async throws(HotspotError) -> [ConfiguredHotspot] {
        try await removeStaleProfiles(among: cleaningUp)
        let activeUUIDs = activeConnectionUUIDs()
        return ourProfiles().compactMap { _, profile in configured(profile, active: activeUUIDs) }
            .sorted { ($0.ssid, $0.connectionUUID) < ($1.ssid, $1.connectionUUID) }
    }

    private func configured(_ profile: WirelessProfile, active: Set<String>) -> ConfiguredHotspot? {
        guard let ssid = try? SSID(bytes: profile.ssid) else { return nil }
        return ConfiguredHotspot(
            ssid: ssid, connectionID: profile.id, connectionUUID: profile.uuid, joinOnce: profile.isJoinOnce,
            expires: profile.expires, recordID: profile.recordID, active: active.contains(profile.uuid),
            owner: profile.owner, permittedUsers: profile.permittedUsers.isEmpty ? nil : profile.permittedUsers,
            certificatePaths: profile.certificatePaths.isEmpty ? nil : profile.certificatePaths)
    }

    public func removeExpiredHotspots(at now: Date) async throws(HotspotError) -> ExpiredHotspots {
        let active = activeConnectionUUIDs()
        var expired = ExpiredHotspots()
        for (connection, profile) in ourProfiles() {
            guard let expires = profile.expires, expires <= now, let hotspot = configured(profile, active: active)
            else { continue }
            // In use, or its join is still being ended (its checkpoint restores the previous
            // network first): a later run removes it.
            if hotspot.active || ending.contains(profile.uuid) || liveCheckpoint(of: profile) != nil {
                expired.inUse.append(hotspot)
                continue
            }
            try await delete(connection)
            expired.removed.append(hotspot)
        }
        return expired
    }

    public func personalHotspotSSIDs(usableBy user: String?) async throws(HotspotError) -> Set<SSID> {
        Set(
            LibNM.connections(of: client.pointer).compactMap { connection in
                guard let profile = LibNM.profile(connection), !profile.isOurs,
                    profile.permittedUsers.isEmpty || user.map(profile.permittedUsers.contains) == true
                else { return nil }
                return try? SSID(bytes: profile.ssid)
            })
    }

    public func profileHolders(of target: HotspotConfiguration.Target) async throws(HotspotError)
        -> [StoredNetwork.SecretHolder]
    {
        LibNM.connections(of: client.pointer).compactMap { connection in
            guard let profile = LibNM.profile(connection), let ssid = try? SSID(bytes: profile.ssid) else { return nil }
            switch target {
            case .ssid(let wanted): guard ssid == wanted else { return nil }
            case .ssidPrefix(let prefix): guard ssid.hasPrefix(prefix) else { return nil }
            }
            return StoredNetwork.SecretHolder(permittedUsers: profile.permittedUsers)
        }
    }

    /// Cleans up after joins that ended without this project: the checkpoints of profiles no
    /// longer in use, join-once profiles whose connection went down, and persistent profiles
    /// past their `lifetimeInDays`.
    private func removeStaleProfiles(among uuids: Set<String>?, now: Date = Date()) async throws(HotspotError) {
        let activeUUIDs = activeConnectionUUIDs()
        let candidates = ourProfiles().filter { uuids?.contains($0.1.uuid.lowercased()) ?? true }
        for (connection, profile) in candidates
        where !activeUUIDs.contains(profile.uuid) && !ending.contains(profile.uuid) {
            if let checkpoint = liveCheckpoint(of: profile) { try await destroy(checkpoint) }
            let expired = profile.expires.map { $0 <= now } ?? false
            if profile.isJoinOnce || expired { try await delete(connection) }
        }
    }

    /// A stored join replaces the profiles of ours stored before for its SSID, its user and its
    /// owner (an application's configuration replaces only its own), as a
    /// new configuration replaces the one for the same SSID with Apple's: one stored profile (and
    /// one "Accessory <SSID>" name) per hotspot and user, however often it is joined; another
    /// user's profile of the same SSID (other `connection.permissions`) stays. Join-once profiles are
    /// left to their own joins, and a profile in use on another device to that device. Only once
    /// the join can no longer be undone: when it is up without a checkpoint, else when it is
    /// left. A failed join, or one NetworkManager rolls back, keeps what was stored.
    private func removeProfiles(replacedBy kept: WirelessProfile) async {
        let active = activeConnectionUUIDs()
        let replaced = ourProfiles().filter { _, profile in
            profile.uuid != kept.uuid && profile.ssid == kept.ssid && profile.permittedUsers == kept.permittedUsers
                && profile.owner == kept.owner && !profile.isJoinOnce && !active.contains(profile.uuid)
        }
        for (connection, _) in replaced { try? await delete(connection) }
    }

    /// The UUIDs of the profiles active on any device.
    func activeConnectionUUIDs() -> Set<String> {
        Set(LibNM.activeConnections(of: client.pointer).compactMap(LibNM.activeUUID))
    }

    private func ourProfiles() -> [(GObjectRef, WirelessProfile)] {
        LibNM.connections(of: client.pointer).compactMap { connection in
            guard let profile = LibNM.profile(connection), profile.isOurs else { return nil }
            return (GObjectRef(retaining: connection), profile)
        }
    }

    /// The device's active (or activating) connection when it is one of this project's profiles.
    private func accessoryConnection(on device: OpaquePointer) -> (GObjectRef, WirelessProfile)? {
        guard let active = LibNM.activeConnection(of: device),
            let connection = LibNM.connection(ofActive: active),
            let profile = LibNM.profile(connection), profile.isOurs
        else { return nil }
        return (GObjectRef(retaining: active), profile)
    }

    // MARK: Checkpoints

    /// A checkpoint this project took, as recorded in its profile: the object path and the
    /// time NetworkManager created it, since paths are numbered anew when NetworkManager
    /// restarts and an old path may name another tool's checkpoint by then.
    struct Checkpoint: Hashable, Sendable {
        var path: String
        var created: Int

        var tag: String { "\(path) \(created)" }

        init(path: String, created: Int) {
            self.path = path
            self.created = created
        }

        init?(tag: String) {
            let parts = tag.split(separator: " ")
            guard parts.count == 2, let created = Int(parts[1]) else { return nil }
            self.init(path: String(parts[0]), created: created)
        }
    }

    /// The checkpoint `profile` records, if NetworkManager still holds that very one.
    private func liveCheckpoint(of profile: WirelessProfile) -> OpaquePointer? {
        profile.userData[ProfileTag.checkpoint].flatMap(Checkpoint.init(tag:)).flatMap(liveCheckpoint)
    }

    private func liveCheckpoint(_ checkpoint: Checkpoint) -> OpaquePointer? {
        LibNM.checkpoints(of: client.pointer).first {
            LibNM.path($0) == checkpoint.path && LibNM.created($0) == checkpoint.created
        }
    }

    private func liveCheckpointPath(_ checkpoint: Checkpoint) -> String? {
        liveCheckpoint(checkpoint).map(LibNM.path)
    }

    private func covers(_ checkpoint: OpaquePointer, _ device: OpaquePointer) -> Bool {
        LibNM.devices(ofCheckpoint: checkpoint).contains(device)
    }

    /// A checkpoint of the device, so that NetworkManager restores it by itself, deleting the
    /// profiles added since, if nobody ends the join first (a crash, a kill): `seconds` after it
    /// is taken, pushed out while the join comes up (`postponeRollback`) and set again once it
    /// is up. `nil` when the caller asked for no automatic restore; a refusal is an error.
    private func createCheckpoint(on device: GObjectRef, rollbackAfter seconds: UInt32?) async throws(HotspotError)
        -> Checkpoint?
    {
        guard let seconds else { return nil }
        do throws(GLibError) {
            let checkpoint = try await LibNM.createCheckpoint(of: device, client: client, seconds: seconds)
            return Checkpoint(path: LibNM.path(checkpoint.pointer), created: LibNM.created(checkpoint.pointer))
        } catch let error where error.isCancelled {
            throw .cancelled
        } catch {
            throw .checkpointRefused(device: LibNM.interface(device.pointer), reason: error.message)
        }
    }

    /// `restoreAfter` in NetworkManager's whole seconds; `nil` for no checkpoint.
    private static func rollbackSeconds(_ restoreAfter: Duration?) -> UInt32? {
        restoreAfter.map { UInt32(clamping: max($0, .seconds(1)).components.seconds) }
    }

    /// While the join comes up, pushes the checkpoint's rollback `seconds` from now every third
    /// of them, so that NetworkManager never rolls back a join that is still coming up (a slow
    /// association, a long timeout), yet rolls back within `seconds` the join of a process that
    /// died on the way. Runs until its task is cancelled, once the join is up or undone.
    private func postponeRollback(of checkpoint: Checkpoint, by seconds: UInt32) async {
        while true {
            do { try await Task.sleep(for: .seconds(seconds) / 3) } catch { return }
            // Refused only when the checkpoint is gone, and the join then fails on its own.
            try? await LibNM.adjustRollbackTimeout(checkpoint: checkpoint.path, seconds: seconds, client: client)
        }
    }

    private func rollback(_ path: String) async throws(HotspotError) {
        try await LibNM.rollback(checkpoint: path, client: client)
    }

    /// Destroys the checkpoint. One gone meanwhile counts as destroyed: a leave and a listing's
    /// clean-up may both find it live, and the second then hears "does not exist" from
    /// NetworkManager before libnm has dropped it.
    private func destroy(_ checkpoint: OpaquePointer) async throws(HotspotError) {
        let client = self.client
        let path = LibNM.path(checkpoint)
        do throws(HotspotError) {
            try await LibNM.destroy(checkpoint: path, client: client)
        } catch {
            let gone = await vanishes(announcedBy: "notify::checkpoints") {
                !LibNM.checkpoints(of: client.pointer).contains { LibNM.path($0) == path }
            }
            if !gone { throw error }
        }
    }

    // MARK: NetworkManager calls

    private func deactivate(_ active: GObjectRef) async throws(HotspotError) {
        try await LibNM.deactivate(active, client: client)
    }

    /// Activates the stored profile `uuid` on the device; `nil` when there is no such profile.
    private func activate(existing uuid: String, on device: GObjectRef) async throws(HotspotError) -> GObjectRef? {
        guard let connection = LibNM.remoteConnection(uuid: uuid, in: client.pointer) else { return nil }
        return try await LibNM.activate(GObjectRef(retaining: connection), client: client, on: device)
    }

    /// Deletes the profile. One NetworkManager deletes by itself meanwhile counts as deleted: an
    /// in-memory profile goes once nothing holds it (its connection down, the checkpoint that
    /// covered it destroyed), and then a delete of ours fails with "connection was deleted".
    func delete(_ connection: GObjectRef) async throws(HotspotError) {
        let client = self.client
        let uuid = LibNM.connectionUUID(connection.pointer)
        do throws(HotspotError) {
            try await LibNM.delete(connection)
        } catch {
            guard let uuid else { throw error }
            let gone = await vanishes(announcedBy: "connection-removed") {
                LibNM.remoteConnection(uuid: uuid, in: client.pointer) == nil
            }
            if !gone { throw error }
        }
    }

    /// Whether `gone` holds now or turns true within 2 s, checked as the client's `signal`
    /// fires: how long libnm takes to hear of an object NetworkManager removed.
    private func vanishes(announcedBy signal: String, _ gone: @escaping () -> Bool) async -> Bool {
        if gone() { return true }
        return await waitForSignal(timeout: .seconds(2)) { fire in
            [client.connect(signal) { (_: OpaquePointer?) in if gone() { fire(true) } }]
        } == .fired(true)
    }
}
