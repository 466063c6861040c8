import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials

/// `Session1` (`AgentBus.Interface.session`), and carrying out each session's effects in order.
///
/// A part of the agent with no state of its own: the sessions are the agent's `SessionTable`,
/// written by its own methods. Its methods run on the agent (`isolated Agent`).
final class SessionSurface {
    func call(_ call: MethodCall, in agent: isolated Agent) async throws(CallFailure) -> [DBusValue] {
        guard let host = agent.sessions[call.path] else {
            throw CallFailure(AccessorySessionError.invalidated)
        }
        guard call.sender == host.client else { throw .accessDenied }
        let arguments = CallArguments(call.arguments)
        switch AgentBus.Session1.Method(rawValue: call.member) {
        case .activate:
            try await apply(.activate, to: host, in: agent)
        case .showPicker:
            try await showPicker(call, arguments, host: host, in: agent)
        case .updatePicker:
            try checkItemCount(arguments[0], in: agent)
            let items = try Agent.read { () throws(AccessorySessionError) in
                try arguments[0].elements.enumerated().map { index, item throws(AccessorySessionError) in
                    try AccessorySession.discoveredDisplayItem(item.jsonValue, at: "items[\(index)]")
                }
            }
            try await apply(.updatePicker(items), to: host, in: agent)
        case .finishPickerDiscovery:
            try await apply(.finishPickerDiscovery, to: host, in: agent)
        case .finishAuthorization:
            let id = try arguments.accessory(0)
            try await agent.callers.require(.authorize, call, uid: host.uid)
            let settings = try Agent.read { () throws(AccessorySessionError) in
                try AccessorySession.accessorySettings(arguments[1].jsonValue, at: "settings")
            }
            try await apply(.finishAuthorization(id, settings), to: host, in: agent)
        case .failAuthorization:
            try await apply(.failAuthorization(try arguments.accessory(0)), to: host, in: agent)
        case .updateAuthorization:
            let id = try arguments.accessory(0)
            try await agent.callers.require(.authorize, call, uid: host.uid)
            let descriptor = try Agent.read { () throws(AccessorySessionError) in
                try AccessorySession.discoveryDescriptor(arguments[1].jsonValue, at: "descriptor")
            }
            try await apply(.updateAuthorization(id, descriptor), to: host, in: agent)
        case .removeAccessory:
            let id = try arguments.accessory(0)
            await agent.joins.adopted(in: agent)
            try await apply(.removeAccessory(id), to: host, in: agent)
        case .renameAccessory:
            try await renameAccessory(arguments, host: host, in: agent)
        case .joinAccessoryHotspot:
            let record = try Self.sessionRecord(try arguments.accessory(0), of: host)
            return [
                try await agent.joins.join(
                    call, record: record, uid: host.uid, host: host, options: arguments.options(1), in: agent)
            ]
        case .provisionAccessory:
            let record = try Self.sessionRecord(try arguments.accessory(0), of: host)
            return [
                try await agent.provisioning.provision(
                    call, record: record, uid: host.uid, host: host, options: arguments.options(1), in: agent)
            ]
        case .leave:
            return [try await agent.joins.leave(call, host: host, options: [:], in: agent)]
        case .invalidate:
            await invalidate(host, error: nil, in: agent)
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
        _ call: MethodCall, _ arguments: CallArguments, host: SessionHost, in agent: isolated Agent
    ) async throws(CallFailure) {
        try checkItemCount(arguments[0], in: agent)
        try agent.records.checkRoom(
            uid: host.uid, application: host.owner.application, limit: agent.configuration.limits.recordsPerUser)
        let items = try Agent.read { () throws(AccessorySessionError) in
            try arguments[0].elements.enumerated().map { index, item throws(AccessorySessionError) in
                try AccessorySession.pickerRequestItem(item.jsonValue, at: "items[\(index)]")
            }
        }
        let settings = try Agent.read { () throws(AccessorySessionError) in
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
            try await agent.callers.require(.authorize, call, uid: host.uid)
        }
        let frontEnd = picks ? try await agent.pickers.frontEnd(for: host, in: agent) : .agent
        // Counted from the check until the picker agent has been asked (a ShowPicker of the same
        // user running meanwhile sees this one), then as a session waiting on its answer.
        let counted = picks && host.pickerAgent != nil
        if counted {
            let limit = agent.configuration.limits.pickerRequestsPerUser
            let advice = "close the pickers you no longer need"
            guard
                agent.sessions.openPickers(of: host.uid, besides: host) + agent.showingPickers.count(of: host.uid)
                    < limit
            else {
                throw CallFailure(
                    AgentError.limitExceeded(
                        what: "pickers of this user waiting on a picker agent's answer", limit: limit, advice: advice))
            }
            if let application = host.owner.application {
                try ApplicationShare.check(
                    agent.sessions.openPickers(of: host.uid, application: application, besides: host)
                        + agent.showingPickers.count(of: host.uid, application: application),
                    of: limit, what: "pickers waiting on a picker agent's answer", advice: advice)
            }
            agent.showingPickers.add(host.uid, application: host.owner.application)
        }
        defer { if counted { agent.showingPickers.remove(host.uid, application: host.owner.application) } }
        if picks, let picker = host.pickerAgent {
            let limit = agent.configuration.limits.pickersPerPickerAgent
            guard agent.sessions.openPickers(on: picker, besides: host) < limit else {
                host.losePickerAgent()
                throw CallFailure(
                    AgentError.limitExceeded(
                        what: "pickers open at once in one desktop session", limit: limit,
                        advice: "wait until the person has answered one"))
            }
        }
        try await apply(.showPicker(items, settings, frontEnd), to: host, in: agent)
    }

    /// The record `id` of the session's client.
    private static func sessionRecord(_ id: UUID, of host: SessionHost) throws(CallFailure) -> AccessoryRecord {
        guard let record = host.session.accessories.first(where: { $0.id == id }) else {
            throw CallFailure(
                AccessorySessionError.invalidRequest(
                    field: "accessory", reason: "no accessory \(id) belongs to this session's client"))
        }
        return record
    }

    private func renameAccessory(_ arguments: CallArguments, host: SessionHost, in agent: isolated Agent)
        async throws(CallFailure)
    {
        let id = try arguments.accessory(0)
        guard let name = arguments[1].string else {
            throw CallFailure(AccessorySessionError.invalidRequest(field: "name", reason: "expected a string"))
        }
        let options = try Self.renameOptions(arguments.options(2))
        try await apply(.renameAccessory(id, name: name, options: options), to: host, in: agent)
    }

    /// `RenameAccessory`'s options: `ssid` (boolean) alone.
    static func renameOptions(_ options: [String: DBusValue]) throws(CallFailure) -> RenameOptions {
        try CallOptions(options, known: ["ssid"]).bool("ssid") == true ? [.ssid] : []
    }

    private func checkItemCount(_ items: DBusValue, in agent: isolated Agent) throws(CallFailure) {
        let limit = agent.configuration.limits.itemsPerCall
        guard items.elements.count <= limit else {
            throw CallFailure(
                AgentError.limitExceeded(
                    what: "items in one call", limit: limit, advice: "show fewer items, or update the picker in steps"))
        }
    }

    /// A client's request: refused with the session's error, else carried out.
    private func apply(_ input: AccessorySession.Input, to host: SessionHost, in agent: isolated Agent)
        async throws(CallFailure)
    {
        let effects: [AccessorySession.Effect]
        do {
            effects = try host.handle(input)
        } catch {
            throw CallFailure(error)
        }
        await perform(effects, for: host, in: agent)
    }

    /// `feed` for the session at `path`, if it is still open.
    func feed(_ input: AccessorySession.Input, toSession path: String, in agent: isolated Agent) async {
        guard let host = agent.sessions[path] else { return }
        await feed(input, to: host, in: agent)
    }

    /// A report from a backend, a timer or a picker agent; a refusal is only logged.
    func feed(_ input: AccessorySession.Input, to host: SessionHost, in agent: isolated Agent) async {
        guard agent.sessions.isOpen(host) else { return }
        do {
            let effects = try host.handle(input)
            await perform(effects, for: host, in: agent)
        } catch {
            Journal.debugLog("session \(host.path): \(error)")
        }
    }

    /// The sessions `peer` opened end.
    func peerVanished(_ peer: String, in agent: isolated Agent) async {
        for host in agent.sessions.all where host.client == peer {
            Journal.info("session \(host.path): its client \(peer) left the bus")
            await invalidate(host, error: nil, in: agent)
        }
    }

    /// Ends a session: `nil` when its client asked or left. Its join-once connection ends too.
    func invalidate(_ host: SessionHost, error: AccessorySessionError?, in agent: isolated Agent) async {
        guard agent.sessions.isOpen(host) else { return }
        do {
            let effects = try host.handle(.invalidate(error))
            await perform(effects, for: host, in: agent)
        } catch {
            Journal.debugLog("session \(host.path): \(error)")
        }
        host.cancelTasks()
        agent.provisioning.cancel(sessionPath: host.path)
        agent.sessions.remove(host)
        agent.activity.mark()
        await agent.bus.unexport(host.object)
        for join in agent.joins.all where join.sessionPath == host.path && join.endsWithClient {
            await agent.joins.end(join, because: "its session ended", in: agent)
        }
        Journal.info("session \(host.path) ended (\(host.owner.logDescription))")
    }

    // MARK: Effects

    /// Carries out the session's effects in order, then publishes its state. An effect that
    /// ends the session (a record it could not store) or finds it ended stops the rest.
    func perform(_ effects: [AccessorySession.Effect], for host: SessionHost, in agent: isolated Agent) async {
        for (index, effect) in effects.enumerated() {
            guard await perform(effect, at: index, of: effects, for: host, in: agent) else { return }
        }
        host.object.setProperties([
            AgentBus.Session1.Property.state.name: .string(host.stateName),
            AgentBus.Session1.Property.accessories.name: BusCoding.records(host.session.accessories),
        ])
    }

    /// One effect; whether the session is still there for the next.
    func perform(
        _ effect: AccessorySession.Effect, at index: Int, of effects: [AccessorySession.Effect], for host: SessionHost,
        in agent: isolated Agent
    ) async -> Bool {
        switch effect {
        case .emit(let event):
            emit(event, for: host, in: agent)
        case .save(let record):
            return await save(record, for: host, in: agent)
        case .delete(let record):
            do {
                try agent.removeRecord(record)
            } catch {
                await invalidate(host, error: .unknown(reason: error.message), in: agent)
                return false
            }
        case .startDiscovery(let descriptors):
            startDiscovery(descriptors, for: host, in: agent)
        case .stopDiscovery:
            host.stopDiscovery()
            Journal.info("session \(host.path): discovery stopped")
        case .startTimer(let timer, let after):
            start(timer, after: after, for: host, in: agent)
        case .cancelTimer(let timer):
            host.cancel(timer)
        case .presentPicker(let items):
            await agent.pickers.presentPicker(items, for: host, in: agent)
            // The session may have ended while the request went out; then nothing is started.
            return agent.sessions.isOpen(host)
        case .updatePicker(let shown, let removed):
            if let picker = host.pickerAgent {
                agent.pickers.send(
                    picker, .updateEntries,
                    [
                        .objectPath(host.path), BusCoding.dictionaries(shown.map(BusCoding.entry)),
                        .array(removed.map { .uint32(UInt32($0)) }, elementType: "u"),
                    ], in: agent)
                let names = shown.compactMap { $0.wifi?.ssid.map { "\($0)" } ?? $0.bluetooth?.name }
                Journal.log(
                    .debug,
                    "discovery trace: session \(host.path): \(shown.count) entries sent to the picker"
                        + (names.isEmpty ? "" : " (\(names.joined(separator: ", ")))"))
            }
        case .dismissPicker:
            dismissPicker(for: host, error: Self.dismissal(after: index, in: effects), in: agent)
        case .lookUpMigrations(let items):
            agent.setUps.lookUpMigrations(items, for: host, in: agent)
        case .setUp(let step, let entry):
            agent.setUps.startSetUp(step, entry, for: host, in: agent)
        case .awaitAuthorization:
            if let picker = host.pickerAgent {
                agent.pickers.send(
                    picker, .setupProgress,
                    [.objectPath(host.path), .string("authorization"), BusCoding.emptyDictionary], in: agent)
            }
        case .cancelSetUp(_, let entry):
            // A handoff cancelled after the accessory switched its hotspot on switches it off.
            host.cancelSetUp()
            if let address = entry.bluetooth?.address {
                Task { await agent.setUps.cancelPairing(address, in: agent) }
            }
        }
        return true
    }

    /// Stores a record the session changed; a refusal ends the session. Whether it goes on.
    private func save(_ record: AccessoryRecord, for host: SessionHost, in agent: isolated Agent) async -> Bool {
        do {
            try agent.records.save(record)
        } catch {
            await invalidate(host, error: .unknown(reason: error.message), in: agent)
            return false
        }
        if let hotspot = host.session.revealedHotspot(for: record.id) {
            agent.joins.handedOff.keep(hotspot, for: record.id)
        }
        Journal.info(
            "record \(record.id) of \(record.owner.logDescription) saved: \(record.state.name), '\(record.displayName)'"
        )
        await agent.broadcast(.changed(record), except: host.path)
        return true
    }

    private func startDiscovery(_ descriptors: [DiscoveryDescriptor], for host: SessionHost, in agent: isolated Agent) {
        let radios = agent.radios
        let path = host.path
        let probing = ScanProbe.ssids(for: descriptors, of: host.session.profile)
        host.discover(
            with: Task {
                await radios.discover(descriptors, probing: probing) { input in
                    await agent.feed(input, toSession: path)
                }
            })
        Journal.info(
            "session \(host.path): discovery started for \(descriptors.count) descriptors"
                + (probing.isEmpty ? "" : ", probing for \(probing.count) hidden SSIDs"))
    }

    private func start(
        _ timer: AccessorySession.Timer, after: Duration, for host: SessionHost, in agent: isolated Agent
    ) {
        let path = host.path
        host.start(
            timer,
            as: Task {
                try? await Task.sleep(for: after)
                guard !Task.isCancelled else { return }
                agent.sessions[path]?.fired(timer)
                await self.feed(.timerFired(timer), toSession: path, in: agent)
            })
    }

    /// Closes the picker. After a pick the setup is done; otherwise the picker is cancelled with
    /// `error`, which the client's PickerDidDismiss carries (timeout, invalidated, …).
    private func dismissPicker(for host: SessionHost, error: AccessorySessionError?, in agent: isolated Agent) {
        host.cancelChoice()
        guard let picker = host.pickerAgent else { return }
        if let error {
            agent.pickers.send(picker, .cancel, [.objectPath(host.path), BusCoding.error(error)], in: agent)
        } else {
            agent.pickers.send(
                picker, .setupProgress, [.objectPath(host.path), .string("done"), BusCoding.emptyDictionary], in: agent)
        }
    }

    /// The error of the `pickerDidDismiss` that follows a `dismissPicker` effect; `nil` after a pick.
    private static func dismissal(after index: Int, in effects: [AccessorySession.Effect]) -> AccessorySessionError? {
        for effect in effects[index...] {
            if case .emit(.pickerDidDismiss(let error)) = effect { return error }
        }
        return nil
    }

    /// Sends the event to the session's client, and to subscribers that may see it.
    private func emit(_ event: AccessoryEvent, for host: SessionHost, in agent: isolated Agent) {
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
        agent.bus.emit(
            path: host.path, interface: AgentBus.Interface.session.name, signal: event.type.signalName, arguments,
            destination: host.client)
        agent.notifySubscribers(
            event.type, event.accessory.map { BusCoding.record($0) } ?? BusCoding.emptyDictionary, of: host.owner,
            session: host.path, error: BusCoding.error(event.error))
        let detail =
            event.accessory.map { " \($0.id) '\($0.displayName)'" } ?? event.error.map { " \($0.dbusName)" } ?? ""
        Journal.info("session \(host.path): \(event.type.name)\(detail)")
    }
}

extension Journal {
    static func debugLog(_ message: String) { log(.debug, message) }
}
