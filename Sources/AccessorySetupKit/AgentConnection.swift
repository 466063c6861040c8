import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials

/// A connection to the agent (`AgentBus.name` on the system bus; `DBUS_SYSTEM_BUS_ADDRESS`
/// is honoured): its `Manager1` methods with typed arguments and answers. Calls may start the
/// agent by D-Bus activation and may let polkit ask the person.
public final class AgentConnection: Sendable {
    let bus: BusConnection

    private init(bus: BusConnection) {
        self.bus = bus
    }

    /// Connects to `address` (the system bus unless a test gives another).
    public static func connect(_ address: BusAddress = .system) async throws(AgentCallError) -> AgentConnection {
        do {
            return AgentConnection(bus: try await BusConnection.connect(address, threadName: "agent-client"))
        } catch {
            // BusConnection's message names the address already.
            throw AgentCallError(name: error.name, message: error.message)
        }
    }

    public func close() async { await bus.close() }

    private static let sharedConnections = Locked<[BusAddress: Task<AgentConnection, any Error>]>([:])

    /// The process's one connection to the agent on `address`, made on first use and kept
    /// until the process ends: Apple's classes (`ASAccessorySession`,
    /// `NEHotspotConfigurationManager`) all call over it. A connection that fails is not kept.
    package static func shared(_ address: BusAddress = .system) async throws(AgentCallError) -> AgentConnection {
        let task = sharedConnections.withLock { connections in
            if let task = connections[address] { return task }
            let task = Task { () async throws -> AgentConnection in
                do {
                    return try await connect(address)
                } catch {
                    _ = sharedConnections.withLock { $0.removeValue(forKey: address) }
                    throw error
                }
            }
            connections[address] = task
            return task
        }
        do {
            return try await task.value
        } catch let error as AgentCallError {
            throw error
        } catch {
            throw AgentCallError(name: nil, message: "\(error)")
        }
    }

    /// `autoStart: false` asks only an agent that is running (a question whose answer is "no"
    /// when it is not, such as whether it holds a join).
    func call(
        _ path: String, _ interface: AgentBus.Interface, _ method: String, _ arguments: [DBusValue] = [],
        timeout: Duration = .seconds(120), fileDescriptors: [Int32] = [], autoStart: Bool = true
    ) async throws(AgentCallError) -> [DBusValue] {
        do {
            return try await bus.call(
                destination: AgentBus.name, path: path, interface: interface.name, method: method, arguments,
                timeout: timeout, allowInteractiveAuthorization: true, autoStart: autoStart,
                fileDescriptors: fileDescriptors)
        } catch {
            throw AgentCallError(error)
        }
    }

    package func manager(
        _ method: AgentBus.Manager1.Method, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(120),
        fileDescriptors: [Int32] = [],
        autoStart: Bool = true
    ) async throws(AgentCallError) -> [DBusValue] {
        try await call(
            AgentBus.managerPath, .manager, method.name, arguments, timeout: timeout,
            fileDescriptors: fileDescriptors, autoStart: autoStart)
    }

    /// Yields each time the agent comes onto the bus (started again after it stopped).
    public func agentArrivals() async -> AsyncStream<Void> {
        await agentOwnerChanges { _, new in new.isEmpty ? nil : () }
    }

    /// Yields the unique name of each agent that leaves the bus.
    package func agentsLeaving() async -> AsyncStream<String> {
        await agentOwnerChanges { old, _ in old.isEmpty ? nil : old }
    }

    /// The unique name of the agent on the bus now; `nil` when none is.
    package func agentOwner() async -> String? {
        let reply = try? await bus.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: "GetNameOwner", [.string(AgentBus.name)], timeout: .seconds(25))
        return reply?.first?.string
    }

    /// What `select` makes of each change of the agent's name's owner (the old and the new
    /// unique name, empty for none), where it makes anything.
    private func agentOwnerChanges<Change: Sendable>(
        _ select: @escaping @Sendable (_ old: String, _ new: String) -> Change?
    ) async -> AsyncStream<Change> {
        let owners = await bus.signals(
            sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "NameOwnerChanged")
        return AsyncStream { continuation in
            let task = Task {
                for await signal in owners {
                    let arguments = signal.arguments.compactMap(\.string)
                    if arguments.count == 3, arguments[0] == AgentBus.name,
                        let change = select(arguments[1], arguments[2])
                    {
                        continuation.yield(change)
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// SIGTERM, SIGINT and the like, as a stream, for a front end that stops on them.
    public func unixSignals(_ numbers: [Int32]) async -> AsyncStream<Int32> {
        await bus.unixSignals(numbers)
    }

    /// The agent's signals of `interface`, from now on.
    func signals(_ interface: AgentBus.Interface) async -> AsyncStream<BusSignal> {
        await bus.signals(sender: AgentBus.name, interface: interface.name)
    }

    // MARK: Sessions

    /// Opens a session over the installed profile `profile` (polkit: `open-session`); with an
    /// empty `profile`, over the one installed profile that names the caller's application: a
    /// sandboxed one's, or else `application`.
    public func openSession(profile: String, application: String? = nil) async throws(AgentCallError)
        -> AgentSession
    {
        let events = await signals(.session)
        let options = DBusValue.vardict(application.map { [("application", .string($0))] } ?? [])
        let path = try await manager(.openSession, [.string(profile), options]).first?.string ?? ""
        return AgentSession(connection: self, path: path, signals: events)
    }

    /// Opens a session over a profile the client reads from `descriptor` (polkit:
    /// `use-client-profile`); the descriptor stays the caller's to close.
    public func openSession(profileFile descriptor: Int32) async throws(AgentCallError) -> AgentSession {
        let events = await signals(.session)
        let path =
            try await manager(
                .openSessionWithProfile, [.handle(0), .vardict([])], fileDescriptors: [descriptor]
            ).first?.string ?? ""
        return AgentSession(connection: self, path: path, signals: events)
    }

    /// Ends the session at `path`, one this connection opened (a picker's way out once its
    /// choice was sent).
    public func invalidateSession(_ path: String) async throws(AgentCallError) {
        _ = try await call(path, .session, AgentBus.Session1.Method.invalidate.name)
    }

    // MARK: Records

    /// The caller's accessories; another user's with `user` (polkit: `manage-others`).
    public func accessories(profile: String? = nil, user: UInt32? = nil) async throws(AgentCallError)
        -> [AccessoryDetails]
    {
        var options: [(String, DBusValue)] = []
        if let profile { options.append(("profile", .string(profile))) }
        if let user { options.append(("user", .uint32(user))) }
        return AccessoryDetails.list(try await manager(.listAccessories, [.vardict(options)]).first)
    }

    public func accessory(id: String) async throws(AgentCallError) -> AccessoryDetails {
        guard let accessory = AccessoryDetails(try await manager(.getAccessory, [.string(id)]).first ?? .vardict([]))
        else {
            throw AgentCallError(name: nil, message: "the agent's answer for \(id) carries no accessory")
        }
        return accessory
    }

    public func removeAccessory(id: String) async throws(AgentCallError) {
        _ = try await manager(.removeAccessory, [.string(id)])
    }

    /// Renames the accessory; with `ssid`, its hotspot too (Apple's `RenameOptions.ssid`).
    public func renameAccessory(id: String, to name: String, ssid: Bool = false) async throws(AgentCallError) {
        _ = try await manager(.renameAccessory, [.string(id), .string(name), renameOptions(ssid: ssid)])
    }

    /// Authorizes an accessory waiting in `awaitingAuthorization`, with what the app learned.
    public func finishAuthorization(
        id: String, ssid: String? = nil, bluetoothTransportBridgingIdentifier: String? = nil
    ) async throws(AgentCallError) {
        let settings = authorizationSettings(ssid, bluetoothTransportBridgingIdentifier)
        _ = try await manager(.finishAuthorization, [.string(id), settings])
    }

    public func failAuthorization(id: String) async throws(AgentCallError) {
        _ = try await manager(.failAuthorization, [.string(id)])
    }

    // MARK: Hotspots

    /// Joins the accessory's hotspot (polkit: `join`).
    public func joinAccessory(id: String, options: AccessoryJoinOptions = .init()) async throws(AgentCallError)
        -> HotspotJoinReport
    {
        HotspotJoinReport(try await manager(.joinAccessory, [.string(id), options.dbusValue]).first)
    }

    /// Joins the accessory's hotspot with `passphrase` where the profile has none (polkit: `join`).
    public func joinAccessory(id: String, passphrase: Secret?) async throws(AgentCallError) -> HotspotJoinReport {
        try await joinAccessory(id: id, options: AccessoryJoinOptions(passphrase: passphrase))
    }

    /// Ends the caller's join on `device` (any device: `nil`) and brings the previous network
    /// back. `autoStart: false` asks only a running agent.
    public func leave(device: String? = nil, autoStart: Bool = true) async throws(AgentCallError) -> HotspotLeaveReport
    {
        let options = DBusValue.vardict(device.map { [("device", .string($0))] } ?? [])
        return HotspotLeaveReport(try await manager(.leave, [options], autoStart: autoStart).first)
    }

    // MARK: Events

    /// Every session's events, for a subscriber (root, or polkit: `manage-others`).
    public func subscribe() async throws(AgentCallError) -> AsyncStream<AgentEvent> {
        let signals = await signals(.manager)
        _ = try await manager(.subscribe)
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals where signal.member == AgentBus.Manager1.Signal.event.name {
                    if let event = AgentEvent(managerEvent: signal.arguments) { continuation.yield(event) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// How to join an accessory's hotspot (`JoinAccessory`'s options).
public struct AccessoryJoinOptions: Sendable {
    /// The passphrase, where the profile neither fixes nor asked for one.
    public var passphrase: Secret?
    /// Join an open hotspot (Apple's `joinAccessoryHotspotWithoutSecurity`).
    public var withoutSecurity = false
    /// The Wi-Fi device; `nil`: the agent's choice.
    public var device: String?
    /// Bring the previous network back after this many seconds (0: never).
    public var restoreAfter: Int?

    public init(
        passphrase: Secret? = nil, withoutSecurity: Bool = false, device: String? = nil, restoreAfter: Int? = nil
    ) {
        self.passphrase = passphrase
        self.withoutSecurity = withoutSecurity
        self.device = device
        self.restoreAfter = restoreAfter
    }

    var dbusValue: DBusValue {
        var options: [(String, DBusValue)] = []
        if withoutSecurity { options.append(("withoutSecurity", .boolean(true))) }
        if let passphrase { options.append(("passphrase", .string(passphrase.reveal()))) }
        if let device { options.append(("device", .string(device))) }
        if let restoreAfter { options.append(("restoreAfter", .uint32(UInt32(clamping: restoreAfter)))) }
        return .vardict(options)
    }
}

/// One session with the agent (`Session1`), which only its connection may use.
public struct AgentSession: Sendable {
    public let connection: AgentConnection
    /// The session's object path.
    public let path: String
    let signals: AsyncStream<BusSignal>

    func call(_ method: AgentBus.Session1.Method, _ arguments: [DBusValue] = []) async throws(AgentCallError)
        -> [DBusValue]
    {
        try await connection.call(path, .session, method.name, arguments)
    }

    /// The session's events, from its opening on, for one consumer.
    public func events() -> AsyncStream<AgentEvent> {
        let path = path
        let signals = signals
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals where signal.path == path {
                    if let event = AgentEvent(signal: signal) { continuation.yield(event) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    public func activate() async throws(AgentCallError) { _ = try await call(.activate) }

    /// The profile's items, as the agent sends them.
    public func items() async throws(AgentCallError) -> [DBusValue] {
        try await property(.items).elements
    }

    /// The accessories of this session's profile the caller has.
    public func accessories() async throws(AgentCallError) -> [AccessoryDetails] {
        AccessoryDetails.list(try await property(.accessories))
    }

    private func property(_ property: AgentBus.Session1.Property) async throws(AgentCallError) -> DBusValue {
        let reply = try await connection.callProperties(
            path, "Get", [.string(AgentBus.Interface.session.name), .string(property.name)])
        return reply.first ?? .tuple([])
    }

    /// Shows the picker for `items` (a profile's items, or migration items), discovering for
    /// `discoveryTimeout` seconds where given.
    /// With `sharing`, the picker says, before the person confirms, that the accessory will be
    /// given that network (`ProvisionAccessory` afterwards).
    public func showPicker(
        items: [DBusValue], discoveryTimeout: Int? = nil, sharing: PickerDisplaySettings.SharedNetwork? = nil
    ) async throws(AgentCallError) {
        var settings: [(String, DBusValue)] = discoveryTimeout.map { [("discoveryTimeout", .uint32(UInt32($0)))] } ?? []
        if let sharing { settings.append(Self.shareNetwork(sharing)) }
        _ = try await call(.showPicker, [.array(items, elementType: "a{sv}"), .vardict(settings)])
    }

    /// `ShowPicker`'s `shareNetwork` setting: the SSID, or empty for the network this computer is on.
    private static func shareNetwork(_ shared: PickerDisplaySettings.SharedNetwork) -> (String, DBusValue) {
        switch shared {
        case .current: ("shareNetwork", .string(""))
        case .ssid(let ssid): ("shareNetwork", .string(ssid.notation))
        }
    }

    /// Shows the picker for items built in the client (Apple's `ASPickerDisplayItem`s).
    public func showPicker(for items: [PickerDisplayItem], discoveryTimeout: Int? = nil) async throws(AgentCallError) {
        try await showPicker(items: items.map(BusCoding.item), discoveryTimeout: discoveryTimeout)
    }

    /// Shows the picker for items built in the client, with Apple's display settings.
    public func showPicker(for items: [PickerDisplayItem], settings: PickerDisplaySettings) async throws(AgentCallError)
    {
        try await showPicker(items: items.map { BusCoding.item($0) }, settings: settings)
    }

    /// Shows the picker for `items` with Apple's display settings (`filterDiscoveryResults`).
    public func showPicker(items: [DBusValue], settings: PickerDisplaySettings) async throws(AgentCallError) {
        var encoded: [(String, DBusValue)] = [
            ("authorizationTimeout", .uint32(UInt32(clamping: settings.authorizationTimeout.components.seconds)))
        ]
        switch settings.discoveryTimeout {
        case .duration(let timeout):
            encoded.append(("discoveryTimeout", .uint32(UInt32(clamping: timeout.components.seconds))))
        case .unbounded:
            encoded.append(("discoveryTimeout", .string("unbounded")))
        }
        if settings.options.contains(.filterDiscoveryResults) {
            encoded.append(("options", .strings(["filterDiscoveryResults"])))
        }
        if let shared = settings.sharedNetwork { encoded.append(Self.shareNetwork(shared)) }
        _ = try await call(.showPicker, [.array(items, elementType: "a{sv}"), .vardict(encoded)])
    }

    /// With `filterDiscoveryResults`: shows these discovered entries under the client's names.
    public func updatePicker(showing items: [DiscoveredDisplayItem]) async throws(AgentCallError) {
        let encoded = items.map { item in
            var fields: [(String, DBusValue)] = [
                ("entry", .uint32(UInt32(clamping: item.entryID))), ("name", .string(item.name)),
            ]
            if let image = item.productImage { fields.append(("productImage", .string(image))) }
            return DBusValue.vardict(fields)
        }
        _ = try await call(.updatePicker, [.array(encoded, elementType: "a{sv}")])
    }

    /// Ends discovery of an `unbounded` picker: it stays for the person to choose, or ends
    /// with `discoveryTimeout` when it shows nothing.
    public func finishPickerDiscovery() async throws(AgentCallError) { _ = try await call(.finishPickerDiscovery) }

    public func finishAuthorization(
        id: String, ssid: String? = nil, bluetoothTransportBridgingIdentifier: String? = nil
    ) async throws(AgentCallError) {
        let settings = authorizationSettings(ssid, bluetoothTransportBridgingIdentifier)
        _ = try await call(.finishAuthorization, [.string(id), settings])
    }

    public func failAuthorization(id: String) async throws(AgentCallError) {
        _ = try await call(.failAuthorization, [.string(id)])
    }

    public func removeAccessory(id: String) async throws(AgentCallError) {
        _ = try await call(.removeAccessory, [.string(id)])
    }

    public func renameAccessory(id: String, to name: String, ssid: Bool = false) async throws(AgentCallError) {
        _ = try await call(.renameAccessory, [.string(id), .string(name), renameOptions(ssid: ssid)])
    }

    public func joinAccessoryHotspot(id: String, passphrase: Secret? = nil) async throws(AgentCallError)
        -> HotspotJoinReport
    {
        let options = AccessoryJoinOptions(passphrase: passphrase)
        return HotspotJoinReport(try await call(.joinAccessoryHotspot, [.string(id), options.dbusValue]).first)
    }

    public func invalidate() async throws(AgentCallError) { _ = try await call(.invalidate) }
}

extension AgentConnection {
    func callProperties(_ path: String, _ method: String, _ arguments: [DBusValue]) async throws(AgentCallError)
        -> [DBusValue]
    {
        do {
            return try await bus.call(
                destination: AgentBus.name, path: path, interface: "org.freedesktop.DBus.Properties", method: method,
                arguments, timeout: .seconds(120), allowInteractiveAuthorization: true)
        } catch {
            throw AgentCallError(error)
        }
    }
}

/// `FinishAuthorization`'s settings: what the application learned of the accessory.
private func authorizationSettings(_ ssid: String?, _ bridging: String?) -> DBusValue {
    var settings: [(String, DBusValue)] = []
    if let ssid { settings.append(("ssid", .string(ssid))) }
    if let bridging { settings.append(("bluetoothTransportBridgingIdentifier", .string(bridging))) }
    return .vardict(settings)
}

/// `RenameAccessory`'s options (Apple's `RenameOptions`).
private func renameOptions(ssid: Bool) -> DBusValue {
    .vardict(ssid ? [("ssid", .boolean(true))] : [])
}

extension AgentConnection {
    /// The SSIDs of the caller's own configurations (`ApplyConfiguration`).
    public func configuredSSIDs() async throws(AgentCallError) -> [String] {
        (try await manager(.getConfiguredSSIDs).first?.elements ?? []).compactMap(\.string)
    }

    /// Removes the caller's own configurations for `ssid`, leaving the network first.
    public func removeConfiguration(ssid: String) async throws(AgentCallError) {
        _ = try await manager(.removeConfiguration, [.string(ssid)])
    }
}
