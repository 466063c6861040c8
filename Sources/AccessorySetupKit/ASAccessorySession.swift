import AccessoryCore
import BusService
import FoundationEssentials

/// Apple's discovery descriptor and picker item, as the core has them.
public typealias ASDiscoveryDescriptor = DiscoveryDescriptor
public typealias ASPickerDisplayItem = PickerDisplayItem
public typealias ASPickerDisplaySettings = PickerDisplaySettings

/// Apple's `ASAccessorySession`, over the agent: an application's session with the accessories
/// of one installed profile (on iOS, the app's `Info.plist`). Code written for iOS ports call
/// by call: `activate` with an event handler, `showPicker(for:)`, `finishAuthorization`,
/// `removeAccessory`, `renameAccessory`, `invalidate`; the person picks in the desktop's picker.
///
///     let session = ASAccessorySession(profile: "ge.wled.softap")
///     try await session.activate { event in
///         if event.eventType == .accessoryAdded, let accessory = event.accessory { … }
///     }
///     try await session.showPicker()
public final class ASAccessorySession: Sendable {
    private let profile: String
    private let bus: BusAddress
    private let state = Locked<(session: AgentSession?, events: Task<Void, Never>?)>((nil, nil))
    private let settings = Locked<ASPickerDisplaySettings?>(nil)

    /// How the next picker behaves (Apple's `pickerDisplaySettings`): its discovery timeout,
    /// and `filterDiscoveryResults` to filter what discovery finds in the application.
    public var pickerDisplaySettings: ASPickerDisplaySettings? {
        get { settings.withLock { $0 } }
        set { settings.withLock { $0 = newValue } }
    }

    /// A session over the installed profile `profile`, on the system bus unless `bus` says other.
    public init(profile: String, bus: BusAddress = .system) {
        self.profile = profile
        self.bus = bus
    }

    private var session: AgentSession {
        get throws(AgentCallError) {
            guard let session = state.withLock({ $0.session }) else {
                throw AgentCallError(
                    name: nil, message: "the session is not activated: call activate(eventHandler:) first")
            }
            return session
        }
    }

    /// Opens the session and delivers its events, in order, to `eventHandler`: `activated` first.
    public func activate(eventHandler: @escaping @Sendable (ASAccessoryEvent) -> Void) async throws(AgentCallError) {
        guard state.withLock({ $0.session == nil }) else {
            throw AgentCallError(name: nil, message: "the session is activated already")
        }
        let connection = try await AgentConnection.connect(bus)
        let session: AgentSession
        do {
            session = try await connection.openSession(profile: profile)
        } catch {
            await connection.close()
            throw error
        }
        let events = session.events()
        let task = Task {
            for await event in events {
                eventHandler(event)
                if event.eventType == .invalidated { return }
            }
        }
        state.withLock { $0 = (session, task) }
        try await session.activate()
    }

    /// The accessories of this profile the person already authorized.
    public var accessories: [ASAccessory] {
        get async throws(AgentCallError) { try await session.accessories() }
    }

    /// Shows the picker for the profile's own items.
    public func showPicker() async throws(AgentCallError) {
        let session = try session
        try await session.showPicker(items: try await session.items())
    }

    /// Shows the picker for `items` (each with a descriptor the profile allows), with the
    /// session's `pickerDisplaySettings`.
    public func showPicker(for items: [ASPickerDisplayItem]) async throws(AgentCallError) {
        guard let settings = pickerDisplaySettings else { return try await session.showPicker(for: items) }
        try await session.showPicker(for: items, settings: settings)
    }

    /// With `filterDiscoveryResults`: shows the accessories the application accepts, from its
    /// `accessoryDiscovered` events, under its names.
    public func updatePicker(showing items: [ASDiscoveredDisplayItem]) async throws(AgentCallError) {
        try await session.updatePicker(showing: items)
    }

    /// Ends discovery of a picker shown with an unbounded discovery timeout.
    public func finishPickerDiscovery() async throws(AgentCallError) {
        try await session.finishPickerDiscovery()
    }

    public func finishAuthorization(
        for accessory: ASAccessory, ssid: String? = nil, bluetoothTransportBridgingIdentifier: String? = nil
    ) async throws(AgentCallError) {
        try await session.finishAuthorization(
            id: accessory.id, ssid: ssid, bluetoothTransportBridgingIdentifier: bluetoothTransportBridgingIdentifier)
    }

    public func failAuthorization(for accessory: ASAccessory) async throws(AgentCallError) {
        try await session.failAuthorization(id: accessory.id)
    }

    public func removeAccessory(_ accessory: ASAccessory) async throws(AgentCallError) {
        try await session.removeAccessory(id: accessory.id)
    }

    /// Renames the accessory; with `ssid`, its hotspot too (Apple's `RenameOptions.ssid`).
    public func renameAccessory(_ accessory: ASAccessory, to name: String, ssid: Bool = false)
        async throws(AgentCallError)
    {
        try await session.renameAccessory(id: accessory.id, to: name, ssid: ssid)
    }

    /// Ends the session; `invalidated` is the handler's last event.
    public func invalidate() async {
        guard let (session, events) = state.withLock({ state in state.session.map { ($0, state.events) } }) else {
            return
        }
        do {
            try await session.invalidate()
            // The agent sends `Invalidated` before its reply, on this connection: the handler
            // has it, or is about to. A second is a bound, not a wait.
            let deadline = Task {
                try? await Task.sleep(for: .seconds(1))
                events?.cancel()
            }
            await events?.value
            deadline.cancel()
        } catch {
            events?.cancel()
        }
        await session.connection.close()
        state.withLock { $0 = (nil, nil) }
    }
}

/// Apple's `NEHotspotConfigurationManager` for accessory hotspots: joins through the agent,
/// which brings the previous network back when the join ends.
public final class NEHotspotConfigurationManager: Sendable {
    public static let shared = NEHotspotConfigurationManager()

    private let bus: BusAddress
    private let joinOnceConnections = Locked<[AgentConnection]>([])

    /// A manager on the system bus unless `bus` says other.
    public init(bus: BusAddress = .system) {
        self.bus = bus
    }

    /// Joins the accessory's hotspot with `passphrase` (polkit: `join`).
    public func joinAccessoryHotspot(_ accessory: ASAccessory, passphrase: String) async throws(AgentCallError)
        -> HotspotJoinReport
    {
        try await join(accessory, AccessoryJoinOptions(passphrase: Secret(passphrase)))
    }

    /// Joins the accessory's hotspot with the passphrase its profile fixes, or the one the
    /// person typed in the picker (not in Apple's API, where the app holds the passphrase).
    public func joinAccessoryHotspot(_ accessory: ASAccessory) async throws(AgentCallError) -> HotspotJoinReport {
        try await join(accessory, AccessoryJoinOptions())
    }

    /// Joins the accessory's open hotspot.
    public func joinAccessoryHotspotWithoutSecurity(_ accessory: ASAccessory) async throws(AgentCallError)
        -> HotspotJoinReport
    {
        try await join(accessory, AccessoryJoinOptions(withoutSecurity: true))
    }

    /// Leaves the hotspot joined through the agent and brings the previous network back.
    public func leaveAccessoryHotspot(device: String? = nil) async throws(AgentCallError) -> HotspotLeaveReport {
        let connection = try await AgentConnection.connect(bus)
        defer { Task { await connection.close() } }
        return try await connection.leave(device: device)
    }

    /// Applies the application's own configuration and joins it, returning once joined
    /// (polkit: `configure-hotspot`); `AgentCallError.hotspotConfigurationError` gives Apple's code.
    @discardableResult
    public func apply(_ configuration: NEHotspotConfiguration) async throws(AgentCallError) -> HotspotJoinReport {
        let connection = try await AgentConnection.connect(bus)
        do {
            let report = try await connection.applyConfiguration(configuration)
            // A join-once configuration lasts as long as the connection that applied it: kept
            // until the process ends, as Apple's ends with the app.
            if configuration.joinOnce {
                joinOnceConnections.withLock { $0.append(connection) }
            } else {
                await connection.close()
            }
            return report
        } catch {
            await connection.close()
            throw error
        }
    }

    /// The SSIDs of this application's configurations.
    public func getConfiguredSSIDs() async throws(AgentCallError) -> [String] {
        let connection = try await AgentConnection.connect(bus)
        defer { Task { await connection.close() } }
        return try await connection.configuredSSIDs()
    }

    /// Removes this application's configurations for `ssid`, leaving the network first.
    public func removeConfiguration(forSSID ssid: String) async throws(AgentCallError) {
        let connection = try await AgentConnection.connect(bus)
        defer { Task { await connection.close() } }
        try await connection.removeConfiguration(ssid: ssid)
    }

    private func join(_ accessory: ASAccessory, _ options: AccessoryJoinOptions) async throws(AgentCallError)
        -> HotspotJoinReport
    {
        let connection = try await AgentConnection.connect(bus)
        defer { Task { await connection.close() } }
        return try await connection.joinAccessory(id: accessory.id, options: options)
    }
}
