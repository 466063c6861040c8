import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials

/// Joining accessory hotspots for clients, leaving them, and the dispatcher hook's intake.
///
/// A part of the agent: it holds the joins (`JoinTable`), the hotspots accessories handed off
/// and keep on, the adoption of the joins a predecessor left up, and the purge of expired
/// profiles; its methods run on the agent (`isolated Agent`).
final class Joins {
    /// The joins held, the devices being joined, and the connections recent joins made.
    let table = JoinTable()
    /// The hotspots accessories revealed in a Bluetooth handoff and still keep on.
    let handedOff = HandedOffHotspots()
    /// Takes over the joins a predecessor left up; awaited before any join, leave or removal.
    private var adoption: Task<Void, Never>?
    /// Waits for the next accessory profile to expire.
    private var purge: Task<Void, Never>?
    private let radios: Radios

    init(radios: Radios) { self.radios = radios }

    /// Every join held, in no particular order.
    var all: [ActiveJoin] { table.all }

    var isEmpty: Bool { table.isEmpty }

    /// Starts taking over the joins a predecessor left up, once.
    func startAdoption(in agent: isolated Agent) {
        if adoption == nil { adoption = Task { await self.adoptJoinsLeftUp(in: agent) } }
    }

    /// Waits until the joins a predecessor left up are taken over, starting that if need be.
    func adopted(in agent: isolated Agent) async {
        startAdoption(in: agent)
        await adoption?.value
    }

    /// Waits for an adoption under way, if one is; one never started is left for the next agent.
    nonisolated(nonsending) func adoptionEnded() async {
        await adoption?.value
    }

    /// Restarts the purge after something may have added a profile with a lifetime.
    func schedulePurge(in agent: isolated Agent) {
        purge?.cancel()
        purge = Task { await self.keepProfilesPurged(in: agent) }
    }

    /// Stops the purge, for good.
    func stop() {
        purge?.cancel()
    }
    /// Joins the hotspot of `record`, which the caller (running as `uid`) is authorized for.
    func join(
        _ call: MethodCall, record: AccessoryRecord, uid: UInt32, host: SessionHost?, options: [String: DBusValue],
        in agent: isolated Agent
    ) async throws(CallFailure) -> DBusValue {
        let trace = CallTrace("join", of: call)
        var request = try joinRequest(options, record: record, uid: uid, inSession: host != nil, in: agent)
        trace.ended("caller and record")
        // polkit first: a person may take minutes over its dialog, and the device is not held
        // off from another user's join meanwhile.
        try await agent.callers.require(.join, call, uid: uid)
        trace.ended("polkit")
        await adopted(in: agent)
        trace.ended("adopted joins")
        if let held = try await heldJoin(of: record, call, host: host, bindToCaller: request.bindToCaller, in: agent) {
            return held
        }
        let claim = try table.claim(request.options.device)
        defer { table.release(claim) }
        trace.ended("device claimed")

        var session = try joiningSession(record, host: host, in: agent)
        // A Bluetooth handoff's hotspot: still on since the pick, or switched on again.
        let use = BondUse(
            owner: record.owner.uid,
            caller: .init(sender: call.sender, uid: uid, interactive: call.allowsInteractiveAuthorization))
        if request.passphrase == nil,
            let hotspot = try await handedOffHotspot(record, session.profile, for: use, in: agent)
        {
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
        let configuration = try Agent.read { () throws(AccessorySessionError) in
            try session.hotspotConfiguration(
                for: record.id, passphrase: request.passphrase, withoutSecurity: request.withoutSecurity)
        }
        trace.ended("configuration")
        request.options.progress = { trace.ended(before: $0) }
        let joined: JoinedHotspot
        do {
            joined = try await connect(
                configuration, request.options, record: record, uid: uid, caller: call.sender, in: agent)
        } catch {
            trace.log("failed")
            throw error
        }
        trace.ended("up")
        try await hold(
            joined, configuration, of: record, uid: uid, caller: call.sender, host: host,
            bindToCaller: request.bindToCaller, in: agent)
        Journal.notice("join: \(joined.ssid) joined on \(joined.device) for record \(record.id)")
        if configuration.lifetimeInDays != nil { schedulePurge(in: agent) }
        let reply = Self.reply(joined, to: try await agent.callers.caller(call))
        trace.ended("held")
        trace.log("joined")
        return reply
    }

    /// The join the agent already holds for `record`, handed back to this call (and bound to it
    /// from now on) while its connection is still up: one a predecessor left up, adopted at
    /// start, or one this caller's earlier call made. A kiosk batch resumed after a crash joins
    /// again, and that is not the device's failure. A held join whose connection went down is
    /// ended, and the call joins afresh.
    private func heldJoin(
        of record: AccessoryRecord, _ call: MethodCall, host: SessionHost?, bindToCaller: Bool, in agent: isolated Agent
    ) async throws(CallFailure) -> DBusValue? {
        guard let held = table.all.first(where: { $0.recordID == record.id }) else { return nil }
        let device = try? await radios.hotspots().wifiDevices().first { $0.interface == held.device }
        guard let device, device.connectionUUID?.lowercased() == held.connectionUUID else {
            await end(
                held, because: "its connection is no longer up, and record \(record.id) is joined again", in: agent)
            return nil
        }
        table.add(
            ActiveJoin(
                device: held.device, uid: held.uid, application: held.application, client: call.sender,
                sessionPath: host?.path, recordID: record.id, ssid: held.ssid, connectionUUID: held.connectionUUID,
                joinOnce: held.joinOnce, endsWithClient: bindToCaller))
        Journal.notice("join: \(held.ssid) on \(held.device) is already joined for record \(record.id); handed back")
        let joined = JoinedHotspot(
            device: held.device, ssid: held.ssid, bssid: nil, connectionID: device.connection ?? "",
            connectionUUID: held.connectionUUID, ipv4Address: nil, previousConnection: nil, restoreDeadline: nil)
        return Self.reply(joined, to: try await agent.callers.caller(call), alreadyJoined: true)
    }

    /// The join's options, read in the order they are checked.
    private func joinRequest(
        _ options: [String: DBusValue], record: AccessoryRecord, uid: UInt32, inSession: Bool, in agent: isolated Agent
    ) throws(CallFailure) -> JoinRequest {
        let reader = try CallOptions(
            options,
            known: ["device", "passphrase", "restoreAfter", "withoutSecurity"] + (inSession ? [] : ["bindToCaller"]))
        let passphrase = try reader.string("passphrase", expected: "a string").map(Secret.init)
        let withoutSecurity = try reader.bool("withoutSecurity") ?? false
        let bindToCaller = try reader.bool("bindToCaller") ?? inSession
        var joinOptions = JoinOptions()
        joinOptions.recordID = record.id
        joinOptions.cleaningUp = ownConnections(in: agent)
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
    private func joiningSession(
        _ record: AccessoryRecord, host: SessionHost?, in agent: isolated Agent
    ) throws(CallFailure) -> AccessorySession {
        if let host { return host.session }
        if let picking = agent.sessions.all.first(where: { $0.session.suppliedPassphrase(for: record.id) != nil }) {
            // The session the accessory was picked in holds what the picker, the kiosk policy
            // or the accessory itself (a hotspot handoff) supplied for it.
            return picking.session
        }
        var session = AccessorySession(
            profile: try agent.loadProfile(record.owner.profileID), owner: record.owner, accessories: agent.records.all)
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
        caller: String, in agent: isolated Agent
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
            await switchHotspotOff(record.id, in: agent)
            throw CallFailure(error)
        }
    }

    /// Holds the join until it is left or ends. The session or the client it would end with may
    /// have gone while NetworkManager connected: then nothing would ever end the join, so it
    /// ends now and the call fails.
    private func hold(
        _ joined: JoinedHotspot, _ configuration: HotspotConfiguration, of record: AccessoryRecord, uid: UInt32,
        caller: String, host: SessionHost?, bindToCaller: Bool, in agent: isolated Agent
    ) async throws(CallFailure) {
        table.add(
            ActiveJoin(
                device: joined.device, uid: uid, application: record.owner.application, client: caller,
                sessionPath: host?.path, recordID: record.id,
                ssid: joined.ssid, connectionUUID: joined.connectionUUID.lowercased(), joinOnce: configuration.joinOnce,
                endsWithClient: bindToCaller && configuration.joinOnce))
        recordConnection(joined, of: record.id, in: agent)
        guard let join = table[joined.device], join.endsWithClient else { return }
        let sessionGone = host.map { !agent.sessions.isOpen($0) } ?? false
        let clientGone = sessionGone ? false : !(await agent.bus.hasOwner(caller))
        guard sessionGone || clientGone else { return }
        let reason = sessionGone ? "its session ended during the join" : "its client left during the join"
        await end(join, because: reason, in: agent)
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
    func leave(
        _ call: MethodCall, host: SessionHost?, options: [String: DBusValue], in agent: isolated Agent
    ) async throws(CallFailure) -> DBusValue {
        let caller = try await agent.callers.caller(call)
        let reader = try CallOptions(options, known: ["device", "user"])
        let device = try reader.string("device", expected: "an interface name")
        let uid = try await agent.callers.user(namedIn: reader, by: caller, call)
        let othersUser = uid != caller.uid
        await adopted(in: agent)
        guard
            let join = table.joinToLeave(
                uid: uid, device: device, sessionPath: host?.path,
                where: {
                    othersUser || caller.sees(AccessoryOwner(uid: $0.uid, profileID: "", application: $0.application))
                })
        else {
            throw CallFailure(HotspotError.notJoined(device: device ?? "any device"))
        }
        // No longer ours while NetworkManager takes it down, so that the dispatcher's "down"
        // for it is not taken for an unexpected end.
        _ = table.remove(on: join.device)
        let left: LeftHotspot
        do {
            left = try await radios.hotspots().leave(device: join.device, recorded: Self.recorded(join))
        } catch {
            table.restore(join)
            throw CallFailure(error)
        }
        Journal.notice("leave: \(join.ssid) left on \(join.device); \(Self.restoration(left))")
        if let recordID = join.recordID { await switchHotspotOff(recordID, in: agent) }
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
    /// where NetworkManager's own permissions prove its owner (`Configurations.owner(of:)`).
    private func adoptJoinsLeftUp(in agent: isolated Agent) async {
        let made = agent.records.all.flatMap { record in record.connectionUUIDs.map { ($0, record) } }
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
                table[device.interface] == nil
            else { continue }
            let record = byConnection[uuid]
            guard let owner = record?.owner ?? Configurations.owner(of: hotspot) else { continue }
            table.add(
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

    /// The joins bound to `peer` outside a session end (a session's end with it).
    func peerVanished(_ peer: String, in agent: isolated Agent) async {
        for join in table.all where join.client == peer && join.endsWithClient && join.sessionPath == nil {
            await end(join, because: "its client left the bus", in: agent)
        }
    }

    /// Ends a join the agent made, bringing the previous network back.
    func end(_ join: ActiveJoin, because reason: String, in agent: isolated Agent) async {
        guard table.remove(on: join.device) != nil else { return }
        agent.activity.mark()
        do {
            let left = try await radios.hotspots().leave(device: join.device, recorded: Self.recorded(join))
            Journal.notice("leave: \(join.ssid) on \(join.device) ended because \(reason); \(Self.restoration(left))")
        } catch {
            Journal.warning("leave: \(join.ssid) on \(join.device) could not be ended (\(reason)): \(error)")
        }
        if let recordID = join.recordID { await switchHotspotOff(recordID, in: agent) }
    }

    /// The hotspot a `bluetoothToWiFi` accessory revealed and still keeps on, or, once it was
    /// switched off, the one it reveals when asked again; `nil` for other accessories.
    private func handedOffHotspot(
        _ record: AccessoryRecord, _ profile: AccessoryProfile, for use: BondUse, in agent: isolated Agent
    ) async throws(CallFailure) -> RevealedHotspot? {
        guard profile.handoff == .bluetoothToWiFi, let handoff = profile.bluetoothHandoff,
            let address = record.bluetoothIdentifier
        else { return nil }
        if let hotspot = handedOff.hotspot(for: record.id) { return hotspot }
        do {
            try await agent.pairing.requireBond(of: address, for: use, in: agent)
            Journal.info("handoff: \(address) is switching its hotspot on again for record \(record.id)")
            let hotspot = try await radios.bluetooth().revealHotspot(
                address, handoff: handoff,
                pair: { address throws(BluetoothError) in
                    try await agent.pairThroughAgent(address, for: use)
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
    func switchHotspotOff(_ recordID: UUID, in agent: isolated Agent) async {
        handedOff.drop(recordID)
        guard let record = agent.records.record(recordID), let address = record.bluetoothIdentifier,
            let profile = try? agent.loadProfile(record.owner.profileID), profile.handoff == .bluetoothToWiFi,
            let handoff = profile.bluetoothHandoff, handoff.switchOff != nil
        else { return }
        await switchHotspotOff(address, handoff, for: BondUse(owner: record.owner.uid), in: agent)
    }

    /// Has the accessory at `address` switch its hotspot off; a failure is only logged.
    func switchHotspotOff(
        _ address: MACAddress, _ handoff: BluetoothHandoff, for use: BondUse, in agent: isolated Agent
    ) async {
        do {
            try await agent.pairing.requireBond(of: address, for: use, in: agent)
            try await radios.bluetooth().switchHotspotOff(
                address, handoff: handoff,
                pair: { address throws(BluetoothError) in
                    try await agent.pairThroughAgent(address, for: use)
                })
            Journal.notice("handoff: \(address) switched its hotspot off")
        } catch {
            Journal.warning("handoff: \(address) could not switch its hotspot off: \(error)")
        }
    }

    /// Purges what expired (stored profiles past their lifetime, leftovers of joins that ended
    /// without the project) and sleeps until the next profile expires: nothing polls.
    private func keepProfilesPurged(in agent: isolated Agent) async {
        while !Task.isCancelled {
            let configured: [ConfiguredHotspot]
            do {
                configured = try await radios.hotspots().configuredHotspots(cleaningUp: ownConnections(in: agent))
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
    func reportConnection(
        _ call: MethodCall, action: String, connection: [String: DBusValue], in agent: isolated Agent
    ) async throws(CallFailure) {
        guard try await agent.callers.uid(of: call) == 0 else {
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
        let made = table.madeConnection(uuid)
        let record = agent.records.all.first { $0.connectionUUIDs.contains(uuid) || $0.id == made?.recordID }
        guard record != nil || made != nil else { return }
        let name = made?.id ?? "Accessory \(record?.ssid?.escaped ?? "?")"
        let join = table.join(connectionUUID: uuid)
        let report = await Self.connectionReport(
            action, device: join?.device ?? connection["interface"]?.string, radios)
        let why = report?.reason.map { ": \($0)" } ?? ""
        Journal.notice(
            "dispatcher: accessory connection '\(name)' \(action)\(why)\(record.map { " (record \($0.id))" } ?? "")")
        if let record, let report { Self.emitConnectionEvent(record, report, in: agent) }
        // An accessory connection that went down while the agent still holds the join ended
        // unexpectedly (the accessory switched its hotspot off, say): bring the previous
        // network back now rather than at the restore deadline.
        if action == "down", let join {
            await end(join, because: "the accessory connection went down\(why)", in: agent)
        }
    }

    /// What an `up` or `down` report tells the owner; other actions (DHCP renewals and such)
    /// are not the accessory's news. The device is the join's where the agent holds one, else
    /// the hook's, and counts only when NetworkManager has such a Wi-Fi device.
    private static func connectionReport(
        _ action: String, device: String?, _ radios: Radios
    ) async -> HotspotConnectionReport? {
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
    private static func emitConnectionEvent(
        _ record: AccessoryRecord, _ report: HotspotConnectionReport, in agent: isolated Agent
    ) {
        let accessory = BusCoding.record(record, connection: report)
        for host in agent.sessions.all where host.owner == record.owner {
            agent.bus.emit(
                path: host.path, interface: AgentBus.Interface.session.name,
                signal: AgentBus.Session1.Signal.accessoryChanged.name, [accessory],
                destination: host.client)
        }
        agent.notifySubscribers(.accessoryChanged, accessory, of: record.owner)
    }

    /// Forgets the NetworkManager profiles the agent made for a removed record, and those only:
    /// another owner's profile or join of the same SSID stays.
    nonisolated(nonsending) func forgetProfiles(of record: AccessoryRecord) async {
        let made = Set(record.connectionUUIDs + table.madeConnectionUUIDs(of: [record.id]))
        guard !made.isEmpty else { return }
        do {
            let forgotten = try await radios.hotspots().forget(connectionUUIDs: made)
            Journal.info(
                "record \(record.id): forgot \(forgotten.count) of the \(made.count) NetworkManager profiles it made")
        } catch {
            Journal.warning("record \(record.id): the NetworkManager profiles it made could not be forgotten: \(error)")
        }
    }

    /// Remembers the profile a join made for a record: in the record, so that it is known after
    /// a restart, and among the recent ones, so that a join-once profile's end is recognised.
    func recordConnection(_ joined: JoinedHotspot, of recordID: UUID, in agent: isolated Agent) {
        let uuid = joined.connectionUUID.lowercased()
        table.remember(joined, of: recordID)
        do {
            try agent.records.addConnection(uuid, to: recordID)
        } catch {
            Journal.warning(
                "record \(recordID): the profile \(uuid) it joined with is known until the agent stops only: \(error.message)"
            )
        }
    }

    /// The NetworkManager profiles the agent made, lowercased: the only ones it cleans up,
    /// forgets, or believes the dispatcher about.
    func ownConnections(in agent: isolated Agent) -> Set<String> {
        Set(agent.records.connectionUUIDs + table.madeConnectionUUIDs())
    }

    /// The profiles the agent made for the records a session of `owner` may adopt: all of its
    /// user's for a host process's session, its application's own for a sandboxed one's.
    func ownConnections(for owner: AccessoryOwner, in agent: isolated Agent) -> Set<String> {
        let owned = agent.records.owned(uid: owner.uid).filter {
            owner.application == nil || $0.owner.application == owner.application
        }
        let ids = Set(owned.map(\.id))
        return Set(owned.flatMap(\.connectionUUIDs) + table.madeConnectionUUIDs(of: ids))
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
