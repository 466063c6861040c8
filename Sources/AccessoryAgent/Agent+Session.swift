import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials
import GLibRuntime

/// `Session1` (`AgentBus.Interface.session`), and carrying out the session's effects in order.
extension Agent {
    func sessionCall(_ call: MethodCall) async throws(CallFailure) -> [DBusValue] {
        guard let host = sessions[call.path] else {
            throw CallFailure(AccessorySessionError.invalidated)
        }
        guard call.sender == host.client else { throw .accessDenied }
        let arguments = CallArguments(call.arguments)
        switch AgentBus.Session1.Method(rawValue: call.member) {
        case .activate:
            try await apply(.activate, to: host)
        case .showPicker:
            try await showPicker(call, arguments, host: host)
        case .updatePicker:
            try checkItemCount(arguments[0])
            let items = try Self.read { () throws(AccessorySessionError) in
                try arguments[0].elements.enumerated().map { index, item throws(AccessorySessionError) in
                    try AccessorySession.discoveredDisplayItem(item.jsonValue, at: "items[\(index)]")
                }
            }
            try await apply(.updatePicker(items), to: host)
        case .finishPickerDiscovery:
            try await apply(.finishPickerDiscovery, to: host)
        case .finishAuthorization:
            let id = try arguments.accessory(0)
            try await callers.require(.authorize, call, uid: host.uid)
            let settings = try Self.read { () throws(AccessorySessionError) in
                try AccessorySession.accessorySettings(arguments[1].jsonValue, at: "settings")
            }
            try await apply(.finishAuthorization(id, settings), to: host)
        case .failAuthorization:
            try await apply(.failAuthorization(try arguments.accessory(0)), to: host)
        case .updateAuthorization:
            let id = try arguments.accessory(0)
            try await callers.require(.authorize, call, uid: host.uid)
            let descriptor = try Self.read { () throws(AccessorySessionError) in
                try AccessorySession.discoveryDescriptor(arguments[1].jsonValue, at: "descriptor")
            }
            try await apply(.updateAuthorization(id, descriptor), to: host)
        case .removeAccessory:
            let id = try arguments.accessory(0)
            await joins.adopted(in: self)
            try await apply(.removeAccessory(id), to: host)
        case .renameAccessory:
            try await renameAccessory(arguments, host: host)
        case .joinAccessoryHotspot:
            let record = try sessionRecord(try arguments.accessory(0), of: host)
            return [
                try await joins.join(
                    call, record: record, uid: host.uid, host: host, options: arguments.options(1), in: self)
            ]
        case .provisionAccessory:
            let record = try sessionRecord(try arguments.accessory(0), of: host)
            return [
                try await provisioning.provision(
                    call, record: record, uid: host.uid, host: host, options: arguments.options(1), in: self)
            ]
        case .leave:
            return [try await joins.leave(call, host: host, options: [:], in: self)]
        case .invalidate:
            await invalidate(host, error: nil)
        default:
            throw CallFailure(
                name: "org.freedesktop.DBus.Error.UnknownMethod", message: "Session1 has no method \(call.member)")
        }
        return []
    }

    /// `ShowPicker`. The item and record limits come before anything is read, polkit's
    /// authorize for migration items before the front end is chosen, and the limit of open
    /// pickers on the picker agent last.
    private func showPicker(
        _ call: MethodCall, _ arguments: CallArguments, host: SessionHost
    ) async throws(CallFailure) {
        try checkItemCount(arguments[0])
        try records.checkRoom(
            uid: host.uid, application: host.owner.application, limit: configuration.limits.recordsPerUser)
        let items = try Self.read { () throws(AccessorySessionError) in
            try arguments[0].elements.enumerated().map { index, item throws(AccessorySessionError) in
                try AccessorySession.pickerRequestItem(item.jsonValue, at: "items[\(index)]")
            }
        }
        let settings = try Self.read { () throws(AccessorySessionError) in
            try AccessorySession.pickerDisplaySettings(arguments[1].jsonValue, at: "settings")
        }
        // Migration items alone need nobody to pick; what they adopt is recorded as a pick is.
        let picks = items.contains { if case .display = $0 { true } else { false } }
        if items.contains(where: { if case .migration = $0 { true } else { false } }) {
            // A migration item records without anyone picking, on polkit's authorize alone
            // (granted without a prompt in the active session): an application would consent
            // for the person, so a sandboxed one shows display items only.
            if let application = host.owner.application {
                throw .refused(
                    "migration items are refused to the sandboxed application \(application): they record accessories "
                        + "without the person picking; show the accessories as display items")
            }
            try await callers.require(.authorize, call, uid: host.uid)
        }
        let frontEnd = picks ? try await frontEnd(for: host) : .agent
        // Counted from the check until the picker agent has been asked (a ShowPicker of the same
        // user running meanwhile sees this one), then as a session waiting on its answer.
        let counted = picks && host.pickerAgent != nil
        if counted {
            let limit = configuration.limits.pickerRequestsPerUser
            let advice = "close the pickers you no longer need"
            guard sessions.openPickers(of: host.uid, besides: host) + showingPickers.count(of: host.uid) < limit else {
                throw CallFailure(
                    AgentError.limitExceeded(
                        what: "pickers of this user waiting on a picker agent's answer", limit: limit, advice: advice))
            }
            if let application = host.owner.application {
                try ApplicationShare.check(
                    sessions.openPickers(of: host.uid, application: application, besides: host)
                        + showingPickers.count(of: host.uid, application: application),
                    of: limit, what: "pickers waiting on a picker agent's answer", advice: advice)
            }
            showingPickers.add(host.uid, application: host.owner.application)
        }
        defer { if counted { showingPickers.remove(host.uid, application: host.owner.application) } }
        if picks, let agent = host.pickerAgent {
            let limit = configuration.limits.pickersPerPickerAgent
            guard sessions.openPickers(on: agent, besides: host) < limit else {
                host.losePickerAgent()
                throw CallFailure(
                    AgentError.limitExceeded(
                        what: "pickers open at once in one desktop session", limit: limit,
                        advice: "wait until the person has answered one"))
            }
        }
        try await apply(.showPicker(items, settings, frontEnd), to: host)
    }

    /// The record `id` of the session's client.
    private func sessionRecord(_ id: UUID, of host: SessionHost) throws(CallFailure) -> AccessoryRecord {
        guard let record = host.session.accessories.first(where: { $0.id == id }) else {
            throw CallFailure(
                AccessorySessionError.invalidRequest(
                    field: "accessory", reason: "no accessory \(id) belongs to this session's client"))
        }
        return record
    }

    private func renameAccessory(_ arguments: CallArguments, host: SessionHost) async throws(CallFailure) {
        let id = try arguments.accessory(0)
        guard let name = arguments[1].string else {
            throw CallFailure(AccessorySessionError.invalidRequest(field: "name", reason: "expected a string"))
        }
        let options = try Self.renameOptions(arguments.options(2))
        try await apply(.renameAccessory(id, name: name, options: options), to: host)
    }

    /// `RenameAccessory`'s options: `ssid` (boolean) alone.
    static func renameOptions(_ options: [String: DBusValue]) throws(CallFailure) -> RenameOptions {
        try CallOptions(options, known: ["ssid"]).bool("ssid") == true ? [.ssid] : []
    }

    private func checkItemCount(_ items: DBusValue) throws(CallFailure) {
        let limit = configuration.limits.itemsPerCall
        guard items.elements.count <= limit else {
            throw CallFailure(
                AgentError.limitExceeded(
                    what: "items in one call", limit: limit, advice: "show fewer items, or update the picker in steps"))
        }
    }

    /// Who picks for a session: the picker agent of its client, else the kiosk policy, else the
    /// picker agent of its client's logind session. A sandboxed application's session never
    /// has a picker of its own (it cannot register one; checked here all the same): the
    /// person picks in the desktop session's picker, registered by a host process, or the
    /// kiosk policy picks.
    private func frontEnd(for host: SessionHost) async throws(CallFailure) -> PickerFrontEnd {
        if host.isHostClient, let own = pickerAgents.own(of: host.client) {
            host.pick(with: own)
            return .agent
        }
        if let policy = kiosk?.policy(forProfile: host.session.profile.id, uid: host.uid, userName: host.userName) {
            host.pick(with: policy)
            Journal.info("session \(host.path): the kiosk policy picks")
            return .kiosk(policy)
        }
        if let agent = await pickerAgent(for: host) {
            host.pick(with: agent)
            return .agent
        }
        throw CallFailure(
            AccessorySessionError.pickerRestricted(
                reason:
                    "no picker agent serves this client and no kiosk policy names profile \(host.session.profile.id) for it; "
                    + "run 'accessoryctl pick', or add the profile to /etc/accessory-setup/kiosk.json"))
    }

    /// A client's request: refused with the session's error, else carried out.
    private func apply(_ input: AccessorySession.Input, to host: SessionHost) async throws(CallFailure) {
        let effects: [AccessorySession.Effect]
        do {
            effects = try host.handle(input)
        } catch {
            throw CallFailure(error)
        }
        await perform(effects, for: host)
    }

    /// `feed` for the session at `path`, if it is still open.
    func feed(_ input: AccessorySession.Input, toSession path: String) async {
        guard let host = sessions[path] else { return }
        await feed(input, to: host)
    }

    /// A report from a backend, a timer or a picker agent; a refusal is only logged.
    func feed(_ input: AccessorySession.Input, to host: SessionHost) async {
        guard sessions.isOpen(host) else { return }
        do {
            let effects = try host.handle(input)
            await perform(effects, for: host)
        } catch {
            Journal.debugLog("session \(host.path): \(error)")
        }
    }

    /// Ends a session: `nil` when its client asked or left. Its join-once connection ends too.
    func invalidate(_ host: SessionHost, error: AccessorySessionError?) async {
        guard sessions.isOpen(host) else { return }
        do {
            let effects = try host.handle(.invalidate(error))
            await perform(effects, for: host)
        } catch {
            Journal.debugLog("session \(host.path): \(error)")
        }
        host.cancelTasks()
        provisioning.cancel(sessionPath: host.path)
        sessions.remove(host)
        activity.mark()
        await bus.unexport(host.object)
        for join in joins.all where join.sessionPath == host.path && join.endsWithClient {
            await joins.end(join, because: "its session ended", in: self)
        }
        Journal.info("session \(host.path) ended (\(host.owner.logDescription))")
    }

    // MARK: Effects

    /// Carries out the session's effects in order, then publishes its state. An effect that
    /// ends the session (a record it could not store) or finds it ended stops the rest.
    private func perform(_ effects: [AccessorySession.Effect], for host: SessionHost) async {
        for (index, effect) in effects.enumerated() {
            guard await perform(effect, at: index, of: effects, for: host) else { return }
        }
        host.object.setProperties([
            AgentBus.Session1.Property.state.name: .string(host.stateName),
            AgentBus.Session1.Property.accessories.name: BusCoding.records(host.session.accessories),
        ])
    }

    /// One effect; whether the session is still there for the next.
    private func perform(
        _ effect: AccessorySession.Effect, at index: Int, of effects: [AccessorySession.Effect], for host: SessionHost
    ) async -> Bool {
        switch effect {
        case .emit(let event):
            emit(event, for: host)
        case .save(let record):
            return await save(record, for: host)
        case .delete(let record):
            do {
                try removeRecord(record)
            } catch {
                await invalidate(host, error: .unknown(reason: error.message))
                return false
            }
        case .startDiscovery(let descriptors):
            startDiscovery(descriptors, for: host)
        case .stopDiscovery:
            host.stopDiscovery()
            Journal.info("session \(host.path): discovery stopped")
        case .startTimer(let timer, let after):
            start(timer, after: after, for: host)
        case .cancelTimer(let timer):
            host.cancel(timer)
        case .presentPicker(let items):
            await presentPicker(items, for: host)
            // The session may have ended while the request went out; then nothing is started.
            return sessions.isOpen(host)
        case .updatePicker(let shown, let removed):
            if let agent = host.pickerAgent {
                send(
                    agent, .updateEntries,
                    [
                        .objectPath(host.path), BusCoding.dictionaries(shown.map(BusCoding.entry)),
                        .array(removed.map { .uint32(UInt32($0)) }, elementType: "u"),
                    ])
                let names = shown.compactMap { $0.wifi?.ssid.map { "\($0)" } ?? $0.bluetooth?.name }
                Journal.log(
                    .debug,
                    "discovery trace: session \(host.path): \(shown.count) entries sent to the picker"
                        + (names.isEmpty ? "" : " (\(names.joined(separator: ", ")))"))
            }
        case .dismissPicker:
            dismissPicker(for: host, error: Self.dismissal(after: index, in: effects))
        case .lookUpMigrations(let items):
            lookUpMigrations(items, for: host)
        case .setUp(let step, let entry):
            startSetUp(step, entry, for: host)
        case .awaitAuthorization:
            if let agent = host.pickerAgent {
                send(
                    agent, .setupProgress,
                    [.objectPath(host.path), .string("authorization"), BusCoding.emptyDictionary])
            }
        case .cancelSetUp(_, let entry):
            // A handoff cancelled after the accessory switched its hotspot on switches it off.
            host.cancelSetUp()
            if let address = entry.bluetooth?.address {
                Task { await self.cancelPairing(address) }
            }
        }
        return true
    }

    /// Stores a record the session changed; a refusal ends the session. Whether it goes on.
    private func save(_ record: AccessoryRecord, for host: SessionHost) async -> Bool {
        do {
            try records.save(record)
        } catch {
            await invalidate(host, error: .unknown(reason: error.message))
            return false
        }
        if let hotspot = host.session.revealedHotspot(for: record.id) { joins.handedOff.keep(hotspot, for: record.id) }
        Journal.info(
            "record \(record.id) of \(record.owner.logDescription) saved: \(record.state.name), '\(record.displayName)'"
        )
        await broadcast(.changed(record), except: host.path)
        return true
    }

    private func startDiscovery(_ descriptors: [DiscoveryDescriptor], for host: SessionHost) {
        let radios = self.radios
        let path = host.path
        let probing = ScanProbe.ssids(for: descriptors, of: host.session.profile)
        host.discover(
            with: Task {
                await radios.discover(descriptors, probing: probing) { input in
                    await self.feed(input, toSession: path)
                }
            })
        Journal.info(
            "session \(host.path): discovery started for \(descriptors.count) descriptors"
                + (probing.isEmpty ? "" : ", probing for \(probing.count) hidden SSIDs"))
    }

    private func start(_ timer: AccessorySession.Timer, after: Duration, for host: SessionHost) {
        let path = host.path
        host.start(
            timer,
            as: Task {
                try? await Task.sleep(for: after)
                guard !Task.isCancelled else { return }
                self.sessions[path]?.fired(timer)
                await self.feed(.timerFired(timer), toSession: path)
            })
    }

    /// Closes the picker. After a pick the setup is done; otherwise the picker is cancelled with
    /// `error`, which the client's PickerDidDismiss carries (timeout, invalidated, …).
    private func dismissPicker(for host: SessionHost, error: AccessorySessionError?) {
        host.cancelChoice()
        guard let agent = host.pickerAgent else { return }
        if let error {
            send(agent, .cancel, [.objectPath(host.path), BusCoding.error(error)])
        } else {
            send(agent, .setupProgress, [.objectPath(host.path), .string("done"), BusCoding.emptyDictionary])
        }
    }

    private func lookUpMigrations(_ items: [MigrationDisplayItem], for host: SessionHost) {
        let path = host.path
        let owner = host.owner
        let use = BondUse(host)
        Task {
            let lookups = await self.lookUp(items, for: owner, use)
            await self.feed(.migrationsLookedUp(lookups), toSession: path)
        }
    }

    /// Starts a setup step of the picked accessory; the picker shows it.
    private func startSetUp(_ step: AccessorySession.SetupStep, _ entry: PickerEntry, for host: SessionHost) {
        if let agent = host.pickerAgent {
            send(agent, .setupProgress, [.objectPath(host.path), .string(step.rawValue), BusCoding.emptyDictionary])
        }
        let path = host.path
        let handoff = host.session.profile.bluetoothHandoff
        let use = BondUse(host)
        host.setUp(
            in: Task {
                guard step == .hotspotHandoff else {
                    await self.feed(.setupFinished(step, await self.setUp(step, entry, for: use)), toSession: path)
                    return
                }
                switch await self.revealHotspot(entry, handoff, for: use) {
                case .success(let hotspot): await self.handOver(hotspot, of: entry, handoff, for: use, toSession: path)
                case .failure(let failure): await self.feed(.setupFinished(step, failure), toSession: path)
                }
            })
    }

    /// The error of the `pickerDidDismiss` that follows a `dismissPicker` effect; `nil` after a pick.
    private static func dismissal(after index: Int, in effects: [AccessorySession.Effect]) -> AccessorySessionError? {
        for effect in effects[index...] {
            if case .emit(.pickerDidDismiss(let error)) = effect { return error }
        }
        return nil
    }

    /// Sends the event to the session's client, and to subscribers that may see it.
    private func emit(_ event: AccessoryEvent, for host: SessionHost) {
        let arguments: [DBusValue] =
            switch event {
            case .activated(let records), .migrationComplete(let records): [BusCoding.records(records)]
            case .accessoryAdded(let record), .accessoryRemoved(let record), .accessoryChanged(let record):
                [BusCoding.record(record)]
            case .accessoryDiscovered(let entry): [BusCoding.discovered(entry)]
            case .invalidated(let error), .pickerDidDismiss(let error): [BusCoding.error(error)]
            case .pickerSetupFailed(let error): [BusCoding.error(error)]
            case .pickerDidPresent, .pickerSetupBridging, .pickerSetupPairing, .pickerSetupRename: []
            }
        bus.emit(
            path: host.path, interface: AgentBus.Interface.session.name, signal: event.type.signalName, arguments,
            destination: host.client)
        notifySubscribers(
            event.type, event.accessory.map { BusCoding.record($0) } ?? BusCoding.emptyDictionary, of: host.owner,
            session: host.path, error: BusCoding.error(event.error))
        let detail =
            event.accessory.map { " \($0.id) '\($0.displayName)'" } ?? event.error.map { " \($0.dbusName)" } ?? ""
        Journal.info("session \(host.path): \(event.type.name)\(detail)")
    }

    // MARK: The picker agent

    /// A message to a picker agent, on the connection every call to it takes, so they keep their order.
    func send(_ agent: PickerAgentRegistration, _ method: AgentBus.PickerAgent1.Method, _ arguments: [DBusValue]) {
        clients.send(
            destination: agent.connection, path: agent.path, interface: AgentBus.Interface.pickerAgent.name,
            method: method.name, arguments)
    }

    private func presentPicker(_ items: [PickerDisplayItem], for host: SessionHost) async {
        guard let agent = host.pickerAgent else {
            let path = host.path
            Task {
                await self.feed(
                    .pickerDismissed(.pickerRestricted(reason: "no picker agent serves this client")), toSession: path)
            }
            return
        }
        let profile = host.session.profile
        let asksPassphrase: Bool = if case .prompt? = profile.hotspot?.passphrase { true } else { false }
        var proofHint: String?
        let asksProof: Bool
        if case .prompt(let hint)? = profile.provisioning?.proofOfPossession {
            (asksProof, proofHint) = (true, hint)
        } else {
            asksProof = false
        }
        let request = PickerAgentRequest(
            profile: profile.id, vendor: profile.vendor, user: host.uid, application: host.owner.application,
            items: items.map {
                PickerAgentRequest.Item(
                    name: $0.name, productImage: $0.productImage, rename: $0.setupOptions.contains(.rename))
            },
            asksPassphrase: asksPassphrase, asksProofOfPossession: asksProof, proofOfPossessionHint: proofHint,
            share: host.session.pickerSharedNetwork.flatMap { shared in
                profile.provisioningExposure.map { exposure in
                    let network: SSID? = if case .ssid(let ssid) = shared { ssid } else { nil }
                    return PickerAgentRequest.Share(network: network, exposure: exposure)
                }
            }
        ).dbusValue
        let clients = self.clients
        let path = host.path
        let answerTime = configuration.limits.pickerAnswerTime
        // The request goes out before anything else this picker sends (its entries come from
        // the discovery started after it): a picker agent hears RequestChoice first.
        let (queued, markQueued) = AsyncStream.makeStream(of: Never.self)
        host.awaitChoice(
            in: Task {
                defer { markQueued.finish() }
                let reply: Result<[DBusValue], BusError>
                do throws(BusError) {
                    reply = .success(
                        try await clients.call(
                            destination: agent.connection, path: agent.path,
                            interface: AgentBus.Interface.pickerAgent.name,
                            method: AgentBus.PickerAgent1.Method.requestChoice.name, [.objectPath(path), request],
                            timeout: answerTime,
                            queued: { markQueued.finish() }))
                } catch {
                    reply = .failure(error)
                }
                guard !Task.isCancelled, let host = self.sessions[path] else { return }
                await self.choiceArrived(reply, for: host, from: agent)
            })
        for await _ in queued {}
    }

    private func choiceArrived(
        _ reply: Result<[DBusValue], BusError>, for host: SessionHost, from agent: PickerAgentRegistration
    ) async {
        host.choiceArrived()
        switch reply {
        case .failure(let error) where error.name == AccessorySessionError.userCancelled.dbusName:
            Journal.info("session \(host.path): the person cancelled the picker")
            await feed(.pickerDismissed(.userCancelled), to: host)
        case .failure(let error):
            Journal.warning("session \(host.path): the picker agent failed: \(error)")
            await feed(.pickerDismissed(.pickerRestricted(reason: "the picker failed: \(error.message)")), to: host)
        case .success(let values):
            guard let entry = values.first?.uint32 else {
                await feed(
                    .pickerDismissed(.pickerRestricted(reason: "the picker answered without an entry")), to: host)
                return
            }
            let answer = values.count > 1 ? values[1].members ?? [:] : [:]
            let passphrase = answer["passphrase"]?.string.map { SuppliedPassphrase.secret(Secret($0)) }
            let choice = PickerChoice(
                entryID: Int(entry), name: answer["name"]?.string, passphrase: passphrase,
                proofOfPossession: answer["proofOfPossession"]?.string.map(Secret.init))
            Journal.log(.debug, "discovery trace: session \(host.path): the picker chose entry \(entry)")
            // The pick is the person's consent; polkit decides whether it may be recorded.
            let allowed = await polkit.check(.authorize, sender: host.client, uid: host.uid, interactive: true)
            Journal.log(.debug, "discovery trace: session \(host.path): polkit answered the pick")
            guard allowed else {
                let reason = "polkit refused \(PolkitAction.authorize.rawValue)"
                let refusal = AccessorySessionError.userRestricted(reason: reason)
                send(agent, .cancel, [.objectPath(host.path), BusCoding.error(refusal)])
                await feed(.pickerDismissed(refusal), to: host)
                return
            }
            do {
                let effects = try host.handle(.picked(choice))
                await perform(effects, for: host)
            } catch {
                Journal.warning("session \(host.path): the picker's answer was refused: \(error)")
                if let agent = host.pickerAgent {
                    send(agent, .setupProgress, [.objectPath(host.path), .string("failed"), BusCoding.error(error)])
                }
                await feed(
                    .pickerDismissed(.pickerRestricted(reason: "the picker's answer was refused: \(error)")), to: host)
            }
        }
    }

    // MARK: Migration and Bluetooth setup

    /// What of each migration item's accessory is there to adopt: a hotspot profile the agent
    /// made for the same owner (never one made for another owner, which anyone else could have
    /// tagged as this project's), or the person's own NetworkManager profile of the SSID (a
    /// system profile or one restricted to them, not this project's); and the Bluetooth device
    /// as BlueZ knows it, unless it is paired for someone else (`requireBond`). The profile
    /// itself is only looked at: it stays the person's.
    private func lookUp(_ items: [MigrationDisplayItem], for owner: AccessoryOwner, _ use: BondUse) async
        -> [MigrationLookup]
    {
        let own = joins.ownConnections(for: owner, in: self)
        let hotspots = try? await radios.hotspots()
        let configured = ((try? await hotspots?.configuredHotspots(cleaningUp: joins.ownConnections(in: self))) ?? [])
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
                    peripheral = try await radios.bluetooth().knownDevice(address)
                    try await pairing.requireBond(of: address, for: use, in: self)
                } catch {
                    Journal.notice("migration: \(address) is not adopted: \(error)")
                    peripheral = nil
                }
            }
            lookups.append(MigrationLookup(hasHotspotProfile: hasProfile, peripheral: peripheral))
        }
        return lookups
    }

    private func setUp(_ step: AccessorySession.SetupStep, _ entry: PickerEntry, for use: BondUse) async
        -> AccessorySessionError?
    {
        guard let address = entry.bluetooth?.address else { return nil }
        do {
            let bluetooth = try await radios.bluetooth()
            switch step {
            case .pairing: try await pairing.pair(address, for: use, in: self)
            case .bridging:
                try await pairing.requireBond(of: address, for: use, in: self)
                try await bluetooth.connectProfiles(address)
            case .hotspotHandoff: return nil
            }
            return nil
        } catch {
            return .accessoryFailed("\(step.rawValue) \(address) failed: \(error)")
        }
    }

    /// The picked accessory's hotspot handoff: it switches its hotspot on and reveals it.
    private func revealHotspot(_ entry: PickerEntry, _ handoff: BluetoothHandoff?, for use: BondUse) async -> Result<
        RevealedHotspot, AccessorySessionError
    > {
        guard let address = entry.bluetooth?.address, let handoff else {
            return .failure(
                .invalidRequest(field: "entry", reason: "the picked entry has no Bluetooth device to hand off from"))
        }
        do {
            let bluetooth = try await radios.bluetooth()
            try await pairing.requireBond(of: address, for: use, in: self)
            Journal.info("handoff: \(address) is switching its hotspot on")
            let hotspot = try await bluetooth.revealHotspot(
                address, handoff: handoff,
                pair: { address throws(BluetoothError) in
                    try await self.pairThroughAgent(address, for: use)
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
        toSession path: String
    ) async {
        if let host = sessions[path] {
            // Both at once, so that no dismissal comes between the hotspot and the step's end.
            if let effects = try? host.handle(.hotspotRevealed(hotspot))
                + host.handle(.setupFinished(.hotspotHandoff, nil))
            {
                await perform(effects, for: host)
                return
            }
        }
        guard let address = entry.bluetooth?.address, let handoff else { return }
        Journal.notice("handoff: the picker of \(address) ended meanwhile; its hotspot is switched off again")
        // Not in the setup's task, which the picker's end cancelled.
        await runToCompletion { await self.switchHotspotOff(address, handoff, owner: use.owner) }
    }

    private func switchHotspotOff(_ address: MACAddress, _ handoff: BluetoothHandoff, owner: UInt32) async {
        await joins.switchHotspotOff(address, handoff, for: BondUse(owner: owner), in: self)
    }

    private func cancelPairing(_ address: MACAddress) async {
        try? await radios.bluetooth().cancelPairing(address)
    }
}

extension Journal {
    static func debugLog(_ message: String) { log(.debug, message) }
}
