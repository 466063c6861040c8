import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials

/// Joining accessory hotspots for clients, leaving them, and the dispatcher hook's intake.
extension Agent {
    /// Joins the hotspot of `record`, which the caller (running as `uid`) is authorized for.
    func join(
        _ call: MethodCall, record: AccessoryRecord, uid: UInt32, host: SessionHost?, options: [String: DBusValue]
    ) async throws(CallFailure) -> DBusValue {
        let trace = CallTrace("join", of: call)
        var request = try joinRequest(options, record: record, uid: uid, inSession: host != nil)
        trace.ended("caller and record")
        // polkit first: a person may take minutes over its dialog, and the device is not held
        // off from another user's join meanwhile.
        try await callers.require(.join, call, uid: uid)
        trace.ended("polkit")
        await joinsAdopted()
        trace.ended("adopted joins")
        if let held = try await heldJoin(of: record, call, host: host, bindToCaller: request.bindToCaller) {
            return held
        }
        let claim = try joins.claim(request.options.device)
        defer { joins.release(claim) }
        trace.ended("device claimed")

        var session = try joiningSession(record, host: host)
        // A Bluetooth handoff's hotspot: still on since the pick, or switched on again.
        let use = BondUse(
            owner: record.owner.uid,
            caller: .init(sender: call.sender, uid: uid, interactive: call.allowsInteractiveAuthorization))
        if request.passphrase == nil, let hotspot = try await handedOffHotspot(record, session.profile, for: use) {
            session.adopt(hotspot, for: record.id)
        }
        if request.passphrase == nil && !request.withoutSecurity {
            let supplied = session.suppliedPassphrase(for: record.id)
            request.passphrase = try Self.secret(of: supplied)
            if case .file = supplied {
                // The kiosk policy's passphrase is root's. NetworkManager gives a profile's
                // secrets to the one user it is restricted to; a system profile's only to an
                // administrator.
                request.options.permittedUser = nil
            }
        }
        let configuration = try Self.read { () throws(AccessorySessionError) in
            try session.hotspotConfiguration(
                for: record.id, passphrase: request.passphrase, withoutSecurity: request.withoutSecurity)
        }
        trace.ended("configuration")
        request.options.progress = { trace.ended(before: $0) }
        let joined: JoinedHotspot
        do {
            joined = try await connect(configuration, request.options, record: record, uid: uid, caller: call.sender)
        } catch {
            trace.log("failed")
            throw error
        }
        trace.ended("up")
        try await hold(
            joined, configuration, of: record, uid: uid, caller: call.sender, host: host,
            bindToCaller: request.bindToCaller)
        Journal.notice("join: \(joined.ssid) joined on \(joined.device) for record \(record.id)")
        if configuration.lifetimeInDays != nil { schedulePurge() }
        let reply = Self.reply(joined, to: try await callers.caller(call))
        trace.ended("held")
        trace.log("joined")
        return reply
    }

    /// The join the agent already holds for `record`, handed back to this call (and bound to it
    /// from now on) while its connection is still up: one a predecessor left up, adopted at
    /// start, or one this caller's earlier call made. A kiosk batch resumed after a crash joins
    /// again, and that is not the device's failure. A held join whose connection went down is
    /// ended, and the call joins afresh.
    private func heldJoin(of record: AccessoryRecord, _ call: MethodCall, host: SessionHost?, bindToCaller: Bool)
        async throws(CallFailure) -> DBusValue?
    {
        guard let held = joins.all.first(where: { $0.recordID == record.id }) else { return nil }
        let device = try? await radios.hotspots().wifiDevices().first { $0.interface == held.device }
        guard let device, device.connectionUUID?.lowercased() == held.connectionUUID else {
            await endJoin(held, because: "its connection is no longer up, and record \(record.id) is joined again")
            return nil
        }
        joins.add(
            ActiveJoin(
                device: held.device, uid: held.uid, application: held.application, client: call.sender,
                sessionPath: host?.path, recordID: record.id, ssid: held.ssid, connectionUUID: held.connectionUUID,
                joinOnce: held.joinOnce, endsWithClient: bindToCaller))
        Journal.notice("join: \(held.ssid) on \(held.device) is already joined for record \(record.id); handed back")
        let joined = JoinedHotspot(
            device: held.device, ssid: held.ssid, bssid: nil, connectionID: device.connection ?? "",
            connectionUUID: held.connectionUUID, ipv4Address: nil, previousConnection: nil, restoreDeadline: nil)
        return Self.reply(joined, to: try await callers.caller(call), alreadyJoined: true)
    }

    /// The join's options, read in the order they are checked.
    private func joinRequest(
        _ options: [String: DBusValue], record: AccessoryRecord, uid: UInt32, inSession: Bool
    ) throws(CallFailure) -> JoinRequest {
        let reader = try CallOptions(
            options,
            known: ["device", "passphrase", "restoreAfter", "withoutSecurity"] + (inSession ? [] : ["bindToCaller"]))
        let passphrase = try reader.string("passphrase", expected: "a string").map(Secret.init)
        let withoutSecurity = try reader.bool("withoutSecurity") ?? false
        let bindToCaller = try reader.bool("bindToCaller") ?? inSession
        var joinOptions = JoinOptions()
        joinOptions.recordID = record.id
        joinOptions.cleaningUp = ownConnections
        joinOptions.permittedUser = uid == 0 ? nil : Callers.userName(of: uid)
        joinOptions.device = try reader.string("device", expected: "an interface name") {
            !$0.isEmpty && $0.utf8.count <= 15
        }
        if let seconds = try reader.uint32("restoreAfter", expected: "uint32 seconds") {
            joinOptions.restoreAfter = seconds == 0 ? nil : .seconds(Int(seconds))
        }
        return JoinRequest(
            options: joinOptions, passphrase: passphrase, withoutSecurity: withoutSecurity, bindToCaller: bindToCaller)
    }

    /// The session whose rules the join follows: the caller's own, else the one the accessory
    /// was picked in, else one of the record's owner made for the join alone.
    private func joiningSession(_ record: AccessoryRecord, host: SessionHost?) throws(CallFailure) -> AccessorySession {
        if let host { return host.session }
        if let picking = sessions.all.first(where: { $0.session.suppliedPassphrase(for: record.id) != nil }) {
            // The session the accessory was picked in holds what the picker, the kiosk policy
            // or the accessory itself (a hotspot handoff) supplied for it.
            return picking.session
        }
        var session = AccessorySession(
            profile: try loadProfile(record.owner.profileID), owner: record.owner, accessories: records.all)
        _ = try? session.handle(.activate, at: Date())
        return session
    }

    /// The passphrase a session holds for an accessory: given in the picker, or read from the
    /// file the kiosk policy names.
    private static func secret(of supplied: SuppliedPassphrase?) throws(CallFailure) -> Secret? {
        switch supplied {
        case nil:
            return nil
        case .secret(let secret):
            return secret
        case .file(let path):
            do {
                return try KioskPolicy.readPassphrase(path: path)
            } catch {
                throw CallFailure(
                    AccessorySessionError.invalidRequest(field: "passphrase", reason: "the kiosk policy's \(error)"))
            }
        }
    }

    /// Has NetworkManager join; a failed join switches a handed-off hotspot off again.
    private func connect(
        _ configuration: HotspotConfiguration, _ options: JoinOptions, record: AccessoryRecord, uid: UInt32,
        caller: String
    ) async throws(CallFailure) -> JoinedHotspot {
        let ssid = record.ssid.map { "\($0)" } ?? "?"
        do {
            let client = try await radios.hotspots()
            let application = record.owner.application.map { ", application \($0)" } ?? ""
            Journal.info("join: \(ssid) for record \(record.id) of uid \(uid)\(application) (\(caller))")
            return try await client.join(configuration, options: options)
        } catch {
            if case .networkManagerUnavailable = error { await radios.reset(networkManager: true) }
            Journal.notice("join: \(ssid) for record \(record.id) failed: \(error)")
            await switchHotspotOff(record.id)
            throw CallFailure(error)
        }
    }

    /// Holds the join until it is left or ends. The session or the client it would end with may
    /// have gone while NetworkManager connected: then nothing would ever end the join, so it
    /// ends now and the call fails.
    private func hold(
        _ joined: JoinedHotspot, _ configuration: HotspotConfiguration, of record: AccessoryRecord, uid: UInt32,
        caller: String, host: SessionHost?, bindToCaller: Bool
    ) async throws(CallFailure) {
        joins.add(
            ActiveJoin(
                device: joined.device, uid: uid, application: record.owner.application, client: caller,
                sessionPath: host?.path, recordID: record.id,
                ssid: joined.ssid, connectionUUID: joined.connectionUUID.lowercased(), joinOnce: configuration.joinOnce,
                endsWithClient: bindToCaller && configuration.joinOnce))
        recordConnection(joined, of: record.id)
        guard let join = joins[joined.device], join.endsWithClient else { return }
        let sessionGone = host.map { !sessions.isOpen($0) } ?? false
        let clientGone = sessionGone ? false : !(await bus.hasOwner(caller))
        guard sessionGone || clientGone else { return }
        let reason = sessionGone ? "its session ended during the join" : "its client left during the join"
        await endJoin(join, because: reason)
        throw CallFailure(
            sessionGone
                ? AccessorySessionError.invalidated
                : AccessorySessionError.connectionFailed(
                    reason: "the client left the bus during the join"))
    }

    /// The join's reply. A sandboxed application's names none of its user's other connections
    /// (`previousConnection`, `keptConnection`): they are the person's, not the application's.
    /// `alreadyJoined`: the join was held for the record already, and is handed back.
    static func reply(_ joined: JoinedHotspot, to caller: Caller, alreadyJoined: Bool = false) -> DBusValue {
        JoinReply(
            device: joined.device, ssid: joined.ssid.notation, connection: joined.connectionID,
            connectionUUID: joined.connectionUUID, bssid: joined.bssid?.description, ipv4Address: joined.ipv4Address,
            previousConnection: caller.isHost ? joined.previousConnection : nil, keptDevice: joined.keptDevice,
            keptConnection: caller.isHost ? joined.keptConnection : nil,
            restoreDeadline: joined.restoreDeadline.map { UInt64(max(0, $0.timeIntervalSince1970)) },
            alreadyJoined: alreadyJoined
        ).dbusValue
    }

    /// Leaves the caller's join (or, with `user` and polkit's manage-others, another user's). A
    /// sandboxed application leaves only the joins of its own application's records, and names
    /// no other user.
    func leave(_ call: MethodCall, host: SessionHost?, options: [String: DBusValue]) async throws(CallFailure)
        -> DBusValue
    {
        let caller = try await callers.caller(call)
        let reader = try CallOptions(options, known: ["device", "user"])
        let uid = try reader.uint32("user", expected: "a uint32 user id") ?? caller.uid
        let device = try reader.string("device", expected: "an interface name")
        if uid != caller.uid {
            try caller.requireHost("options.user naming another user", because: Self.ownRecordsOnly)
            try await callers.require(.manageOthers, call, uid: caller.uid)
        }
        let othersUser = uid != caller.uid
        await joinsAdopted()
        guard
            let join = joins.joinToLeave(
                uid: uid, device: device, sessionPath: host?.path,
                where: {
                    othersUser || caller.sees(AccessoryOwner(uid: $0.uid, profileID: "", application: $0.application))
                })
        else {
            throw CallFailure(HotspotError.notJoined(device: device ?? "any device"))
        }
        // No longer ours while NetworkManager takes it down, so that the dispatcher's "down"
        // for it is not taken for an unexpected end.
        _ = joins.remove(on: join.device)
        let left: LeftHotspot
        do {
            left = try await radios.hotspots().leave(device: join.device, recorded: Self.recorded(join))
        } catch {
            joins.restore(join)
            throw CallFailure(error)
        }
        Journal.notice("leave: \(join.ssid) left on \(join.device); \(Self.restoration(left))")
        if let recordID = join.recordID { await switchHotspotOff(recordID) }
        return LeaveReply(
            device: left.device, ssid: left.ssid?.notation, deleted: left.deleted, alreadyEnded: left.alreadyEnded,
            restored: left.restored, notRestored: left.notRestored
        ).dbusValue
    }

    static func restoration(_ left: LeftHotspot) -> String {
        if let restored = left.restored { return "\(restored) restored" }
        if let notRestored = left.notRestored { return "\(notRestored) did not come back" }
        return "nothing to restore"
    }

    /// Takes over the joins a predecessor left up, as a restart does during a package upgrade:
    /// NetworkManager keeps a join that is not join-once, and without this its owner could not
    /// leave it, nor the agent end it. A record's join counts only where the record says the
    /// agent made the connection, with the record's owner; an application's configuration only
    /// where NetworkManager's own permissions prove its owner (`configurationOwner(of:)`).
    func adoptJoinsLeftUp() async {
        let made = records.all.flatMap { record in record.connectionUUIDs.map { ($0, record) } }
        let byConnection = Dictionary(made, uniquingKeysWith: { first, _ in first })
        let devices: [WiFiDevice]
        let configured: [ConfiguredHotspot]
        do {
            let client = try await radios.hotspots()
            devices = try await client.wifiDevices()
            configured = try await client.configuredHotspots(cleaningUp: [])
        } catch {
            Journal.warning("join: the joins left up before this start could not be looked for: \(error)")
            return
        }
        for device in devices {
            guard let uuid = device.connectionUUID?.lowercased(),
                let hotspot = configured.first(where: { $0.connectionUUID.lowercased() == uuid }),
                joins[device.interface] == nil
            else { continue }
            let record = byConnection[uuid]
            guard let owner = record?.owner ?? Self.configurationOwner(of: hotspot) else { continue }
            joins.add(
                ActiveJoin(
                    device: device.interface, uid: owner.uid, application: owner.application, client: "",
                    sessionPath: nil, recordID: record?.id, ssid: hotspot.ssid, connectionUUID: uuid,
                    joinOnce: hotspot.joinOnce, endsWithClient: false))
            let what = record.map { "record \($0.id)" } ?? "a configuration"
            Journal.notice(
                "join: \(hotspot.ssid) on \(device.interface), joined for \(what) before this start, "
                    + "is held again for uid \(owner.uid)")
        }
    }

    /// What the agent knows of its own join, for leaving it: its connection, and the user whose
    /// networks alone may come back after it.
    static func recorded(_ join: ActiveJoin) -> RecordedJoin {
        RecordedJoin(
            connectionUUID: join.connectionUUID,
            user: join.uid == 0 ? nil : Callers.userName(of: join.uid) ?? "#\(join.uid)")
    }

    /// Ends a join the agent made, bringing the previous network back.
    func endJoin(_ join: ActiveJoin, because reason: String) async {
        guard joins.remove(on: join.device) != nil else { return }
        activity.mark()
        do {
            let left = try await radios.hotspots().leave(device: join.device, recorded: Self.recorded(join))
            Journal.notice("leave: \(join.ssid) on \(join.device) ended because \(reason); \(Self.restoration(left))")
        } catch {
            Journal.warning("leave: \(join.ssid) on \(join.device) could not be ended (\(reason)): \(error)")
        }
        if let recordID = join.recordID { await switchHotspotOff(recordID) }
    }

    /// The hotspot a `bluetoothToWiFi` accessory revealed and still keeps on, or, once it was
    /// switched off, the one it reveals when asked again; `nil` for other accessories.
    private func handedOffHotspot(_ record: AccessoryRecord, _ profile: AccessoryProfile, for use: BondUse)
        async throws(CallFailure) -> RevealedHotspot?
    {
        guard profile.handoff == .bluetoothToWiFi, let handoff = profile.bluetoothHandoff,
            let address = record.bluetoothIdentifier
        else { return nil }
        if let hotspot = handedOff.hotspot(for: record.id) { return hotspot }
        do {
            try await requireBond(of: address, for: use)
            Journal.info("handoff: \(address) is switching its hotspot on again for record \(record.id)")
            let hotspot = try await radios.bluetooth().revealHotspot(
                address, handoff: handoff,
                pair: { address throws(BluetoothError) in
                    try await self.pairThroughAgent(address, for: use)
                })
            handedOff.keep(hotspot, for: record.id)
            return hotspot
        } catch {
            throw CallFailure(
                AccessorySessionError.accessoryFailed("the hotspot handoff of \(address) failed: \(error)"))
        }
    }

    /// Switches the hotspot of an accessory that revealed it in a Bluetooth handoff off again,
    /// where its profile can; a failure is only logged (the accessory times it out itself).
    /// Called as a join ends: the revealed passphrase is dropped whatever happens to the hotspot
    /// (a later join asks the accessory again).
    func switchHotspotOff(_ recordID: UUID) async {
        handedOff.drop(recordID)
        guard let record = records.record(recordID), let address = record.bluetoothIdentifier,
            let profile = try? loadProfile(record.owner.profileID), profile.handoff == .bluetoothToWiFi,
            let handoff = profile.bluetoothHandoff, handoff.switchOff != nil
        else { return }
        await switchHotspotOff(address, handoff, for: BondUse(owner: record.owner.uid))
    }

    /// Has the accessory at `address` switch its hotspot off; a failure is only logged.
    func switchHotspotOff(_ address: MACAddress, _ handoff: BluetoothHandoff, for use: BondUse) async {
        do {
            try await requireBond(of: address, for: use)
            try await radios.bluetooth().switchHotspotOff(
                address, handoff: handoff,
                pair: { address throws(BluetoothError) in
                    try await self.pairThroughAgent(address, for: use)
                })
            Journal.notice("handoff: \(address) switched its hotspot off")
        } catch {
            Journal.warning("handoff: \(address) could not switch its hotspot off: \(error)")
        }
    }

    /// Purges what expired (stored profiles past their lifetime, leftovers of joins that ended
    /// without the project) and sleeps until the next profile expires: nothing polls.
    func keepProfilesPurged() async {
        while !Task.isCancelled {
            let configured: [ConfiguredHotspot]
            do {
                configured = try await radios.hotspots().configuredHotspots(cleaningUp: ownConnections)
            } catch {
                Journal.warning("purge: NetworkManager's profiles could not be checked: \(error)")
                await radios.reset(networkManager: true)
                return
            }
            guard let next = configured.compactMap(\.expires).filter({ $0 > Date() }).min() else { return }
            Journal.info("purge: the next accessory profile expires at \(next)")
            let wait = max(1, min(next.timeIntervalSinceNow + 1, 86_400))
            try? await Task.sleep(for: .seconds(wait))
        }
    }

    /// The dispatcher hook's report. Nothing in it is believed: only a connection the agent
    /// made counts (by the UUIDs it recorded, not by tags anyone may write in a profile), and
    /// its name and record are the agent's own.
    func reportConnection(_ call: MethodCall, action: String, connection: [String: DBusValue]) async throws(CallFailure)
    {
        guard try await callers.uid(of: call) == 0 else {
            // No polkit action covers it: only the dispatcher hook, run by NetworkManager as root, calls it.
            throw CallFailure(
                name: AgentError.notAuthorized(action: "").dbusName,
                message: "ReportConnection is for NetworkManager's dispatcher hook and may be called by root only")
        }
        let actions = [
            "up", "down", "pre-down", "pre-up", "connectivity-change", "dhcp4-change", "dhcp6-change", "reapply",
        ]
        guard actions.contains(action) else { throw .invalidArguments("action", "is not a dispatcher action") }
        guard let uuid = connection["uuid"]?.string?.lowercased(), UUID(uuidString: uuid) != nil else {
            throw .invalidArguments("connection.uuid", "expected a connection UUID")
        }
        let made = joins.madeConnection(uuid)
        let record = records.all.first { $0.connectionUUIDs.contains(uuid) || $0.id == made?.recordID }
        guard record != nil || made != nil else { return }
        let name = made?.id ?? "Accessory \(record?.ssid?.escaped ?? "?")"
        let join = joins.join(connectionUUID: uuid)
        let report = await connectionReport(action, device: join?.device ?? connection["interface"]?.string)
        let why = report?.reason.map { ": \($0)" } ?? ""
        Journal.notice(
            "dispatcher: accessory connection '\(name)' \(action)\(why)\(record.map { " (record \($0.id))" } ?? "")")
        if let record, let report { emitConnectionEvent(record, report) }
        // An accessory connection that went down while the agent still holds the join ended
        // unexpectedly (the accessory switched its hotspot off, say): bring the previous
        // network back now rather than at the restore deadline.
        if action == "down", let join {
            await endJoin(join, because: "the accessory connection went down\(why)")
        }
    }

    /// What an `up` or `down` report tells the owner; other actions (DHCP renewals and such)
    /// are not the accessory's news. The device is the join's where the agent holds one, else
    /// the hook's, and counts only when NetworkManager has such a Wi-Fi device.
    private func connectionReport(_ action: String, device: String?) async -> HotspotConnectionReport? {
        let state: HotspotConnectionReport.State
        switch action {
        case "up": state = .up
        case "down": state = .down
        default: return nil
        }
        guard let hotspots = try? await radios.hotspots(), let device,
            (try? await hotspots.wifiDevices())?.contains(where: { $0.interface == device }) == true
        else { return HotspotConnectionReport(state: state) }
        let reason = state == .down ? await hotspots.disconnectReason(device: device) : nil
        return HotspotConnectionReport(state: state, device: device, reason: reason)
    }

    /// `AccessoryChanged` with the report, to the owner's sessions, and `Event` to the
    /// subscribers who may see the owner's events, with the manager's path for the session.
    private func emitConnectionEvent(_ record: AccessoryRecord, _ report: HotspotConnectionReport) {
        let accessory = BusCoding.record(record, connection: report)
        for host in sessions.all where host.owner == record.owner {
            bus.emit(
                path: host.path, interface: AgentBus.Interface.session.name,
                signal: AgentBus.Session1.Signal.accessoryChanged.name, [accessory],
                destination: host.client)
        }
        notifySubscribers(.accessoryChanged, accessory, of: record.owner)
    }
}

/// What a join call asks for, from its options.
private struct JoinRequest {
    var options: JoinOptions
    /// The caller's passphrase; else the one the session holds for the accessory, if any.
    var passphrase: Secret?
    var withoutSecurity: Bool
    /// Whether the join ends when the caller leaves the bus.
    var bindToCaller: Bool
}
