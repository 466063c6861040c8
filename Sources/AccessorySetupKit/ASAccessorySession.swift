import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import Dispatch
import FoundationEssentials
import Glibc

/// An application's session with its accessories (Apple's `ASAccessorySession`), over the
/// agent: Apple's code runs on it as written for iOS.
///
///     let session = ASAccessorySession()
///     session.activate(on: DispatchQueue.main) { event in … }
///     session.showPicker(for: items) { error in … }
///
/// Events and completion handlers run on the queue given to `activate(on:eventHandler:)`.
/// Every call is also `async`. All sessions and hotspot calls of a process share one bus
/// connection.
public final class ASAccessorySession: @unchecked Sendable {
    private struct State {
        var queue = DispatchQueue.main
        var handler: UncheckedHandler?
        var activation: Task<AgentSession, any Error>?
        var accessories: [ASAccessory] = []
        var settings: ASPickerDisplaySettings?
        var invalidated = false
    }

    private let profile: String?
    private let bus: BusAddress
    private let state = Locked(State())

    /// A session over the installed profile that names this application (on iOS, the app's
    /// `Info.plist`): in a Flatpak sandbox, the application the sandbox names; on the host, the
    /// desktop entry it was launched from (`GIO_LAUNCHED_DESKTOP_FILE`).
    public convenience init() {
        self.init(bus: .system)
    }

    /// Not in Apple's API: a session over the installed profile `profile`, for a program
    /// that is no desktop application, or on another bus than the system bus.
    public init(profile: String? = nil, bus: BusAddress) {
        self.profile = profile
        self.bus = bus
    }

    public convenience init(profile: String) {
        self.init(profile: profile, bus: .system)
    }

    /// The accessories of this session the person authorized, kept current from its events.
    public var accessories: [ASAccessory] { state.withLock { $0.accessories } }

    /// How the next picker behaves; `nil` for Apple's defaults.
    public var pickerDisplaySettings: ASPickerDisplaySettings? {
        get { state.withLock { $0.settings } }
        set { state.withLock { $0.settings = newValue } }
    }

    /// Opens the session and delivers its events, in order, on `queue`: `activated` first,
    /// `invalidated` last (with the `error` that ended it, when one did). Activating twice
    /// does nothing.
    public func activate(on queue: DispatchQueue = .main, eventHandler: @escaping (ASAccessoryEvent) -> Void) {
        let handler = UncheckedHandler(eventHandler)
        let profile = profile
        let bus = bus
        let activation = state.withLock { state -> Task<AgentSession, any Error>? in
            guard state.activation == nil, !state.invalidated else { return nil }
            state.queue = queue
            state.handler = handler
            // Calls wait for the activation's reply: the agent takes no other call before it.
            let task = Task { () async throws -> AgentSession in
                let connection = try await AgentConnection.shared(bus)
                let session =
                    if let profile {
                        try await connection.openSession(profile: profile)
                    } else {
                        try await connection.openSession(profile: "", application: Self.desktopApplication())
                    }
                try await session.activate()
                return session
            }
            state.activation = task
            return task
        }
        guard let activation else { return }
        Task {
            do {
                // An agent that leaves the bus (it stopped, or crashed) takes the session with
                // it and sends no `Invalidated`. Watched from before the session opens, and
                // only for the agent that opened it: an earlier one, leaving as the call
                // started this one, does not count.
                let leaving = try await AgentConnection.shared(bus).agentsLeaving()
                let session = try await activation.value
                guard let agent = await session.connection.agentOwner() else {
                    return endSession(Self.agentLeft, handler: handler, queue: queue)
                }
                let agentLeft = await withTaskGroup(of: Bool.self) { group in
                    group.addTask {
                        // The session's signals since its opening, `Activated` first.
                        for await event in session.events() {
                            self.deliver(ASAccessoryEvent(event), updating: event, to: handler, on: queue)
                            if event.eventType == .invalidated { break }
                        }
                        return false
                    }
                    group.addTask {
                        for await left in leaving where left == agent { return true }
                        return false
                    }
                    let first = await group.next() ?? false
                    group.cancelAll()
                    return first
                }
                if agentLeft { endSession(Self.agentLeft, handler: handler, queue: queue) }
            } catch {
                endSession(Self.asError(error), handler: handler, queue: queue)
            }
        }
    }

    private static let agentLeft = ASError(
        code: .invalidated, name: AccessorySessionError.Code.invalidated.dbusName,
        message: "the agent (\(AgentBus.name)) left the bus, and the session with it")

    /// Ends the session with `error`, unless it has ended already.
    private func endSession(_ error: any Error, handler: UncheckedHandler, queue: DispatchQueue) {
        let ended = state.withLock { state in
            defer { state.invalidated = true }
            return state.invalidated
        }
        guard !ended else { return }
        deliver(ASAccessoryEvent(eventType: .invalidated, error: error), updating: nil, to: handler, on: queue)
    }

    /// Keeps `accessories` current, then hands the event to the application.
    private func deliver(
        _ event: ASAccessoryEvent, updating source: AgentEvent?, to handler: UncheckedHandler, on queue: DispatchQueue
    ) {
        state.withLock { state in
            guard let source else { return }
            switch source.eventType {
            case .activated: state.accessories = source.migrated.map(ASAccessory.init)
            case .migrationComplete: state.accessories += source.migrated.map(ASAccessory.init)
            case .accessoryAdded, .accessoryChanged:
                guard let accessory = event.accessory else { return }
                state.accessories.removeAll { $0.id == accessory.id }
                state.accessories.append(accessory)
            case .accessoryRemoved:
                guard let accessory = event.accessory else { return }
                state.accessories.removeAll { $0.id == accessory.id }
            case .invalidated: state.invalidated = true
            default: break
            }
        }
        queue.async { handler.body(event) }
    }

    /// Ends the session; `invalidated` is the handler's last event.
    public func invalidate() {
        let (activation, handler, queue) = state.withLock { state in
            (state.invalidated ? nil : state.activation, state.handler, state.queue)
        }
        guard let activation, let handler else {
            state.withLock { $0.invalidated = true }
            return
        }
        Task {
            do {
                try await activation.value.invalidate()
            } catch {
                // The agent is gone, or the session with it: the application still hears the end.
                endSession(Self.asError(error), handler: handler, queue: queue)
            }
        }
    }

    // MARK: The picker

    /// Shows the picker for `items` (migration items too), with `pickerDisplaySettings`.
    public func showPicker(for items: [ASPickerDisplayItem]) async throws {
        try await showPicker(encoded: try items.map { item throws(ASError) in try item.dbusValue() })
    }

    public func showPicker(for items: [ASPickerDisplayItem], completionHandler: @escaping ((any Error)?) -> Void) {
        // Read now, as Apple's does: the application may change its items once the call returns.
        let encoded: [DBusValue]
        do {
            encoded = try items.map { item throws(ASError) in try item.dbusValue() }
        } catch {
            return perform(completionHandler) { throw error }
        }
        perform(completionHandler) { try await self.showPicker(encoded: encoded) }
    }

    private func showPicker(encoded items: [DBusValue]) async throws {
        let settings = pickerDisplaySettings?.pickerDisplaySettings ?? PickerDisplaySettings()
        try await call { try await $0.showPicker(items: items, settings: settings) }
    }

    /// Shows the picker for the profile's own items (Apple's picker of a discovery extension).
    public func showPicker() async throws {
        try await call { session in try await session.showPicker(items: try await session.items()) }
    }

    public func showPicker(completionHandler: @escaping ((any Error)?) -> Void) {
        perform(completionHandler) { try await self.showPicker() }
    }

    /// With `filterDiscoveryResults`: shows the discovered accessories the application accepts.
    public func updatePicker(showing items: [ASDiscoveredDisplayItem]) async throws {
        let shown = items.map(\.discoveredDisplayItem)
        try await call { try await $0.updatePicker(showing: shown) }
    }

    public func updatePicker(
        showing items: [ASDiscoveredDisplayItem], completionHandler: @escaping ((any Error)?) -> Void
    ) {
        perform(completionHandler) { try await self.updatePicker(showing: items) }
    }

    /// Ends discovery of a picker shown with an unbounded discovery timeout.
    public func finishPickerDiscovery() async throws {
        try await call { try await $0.finishPickerDiscovery() }
    }

    public func finishPickerDiscovery(completionHandler: @escaping ((any Error)?) -> Void) {
        perform(completionHandler) { try await self.finishPickerDiscovery() }
    }

    // MARK: The accessories

    public func removeAccessory(_ accessory: ASAccessory) async throws {
        let id = accessory.id
        try await call { try await $0.removeAccessory(id: id) }
    }

    public func removeAccessory(_ accessory: ASAccessory, completionHandler: @escaping ((any Error)?) -> Void) {
        perform(completionHandler) { try await self.removeAccessory(accessory) }
    }

    /// Apple's rename sheet, where the person types the new name, is not on this desktop: this
    /// fails with `invalidRequest`, and `renameAccessory(_:to:options:)` takes the name.
    public func renameAccessory(_ accessory: ASAccessory, options: ASAccessory.RenameOptions = []) async throws {
        throw ASError.invalidRequest(
            "name", "is not asked for on this desktop: pass it with renameAccessory(_:to:options:)")
    }

    public func renameAccessory(
        _ accessory: ASAccessory, options: ASAccessory.RenameOptions = [],
        completionHandler: @escaping ((any Error)?) -> Void
    ) {
        perform(completionHandler) { try await self.renameAccessory(accessory, options: options) }
    }

    /// Not in Apple's API: renames the accessory to `name`; with `.ssid`, its hotspot too.
    public func renameAccessory(_ accessory: ASAccessory, to name: String, options: ASAccessory.RenameOptions = [])
        async throws
    {
        let id = accessory.id
        try await call { try await $0.renameAccessory(id: id, to: name, ssid: options.contains(.ssid)) }
    }

    public func renameAccessory(
        _ accessory: ASAccessory, to name: String, options: ASAccessory.RenameOptions = [],
        completionHandler: @escaping ((any Error)?) -> Void
    ) {
        perform(completionHandler) { try await self.renameAccessory(accessory, to: name, options: options) }
    }

    /// Finishes the setup of an accessory picked from a `confirmAuthorization` item.
    public func finishAuthorization(for accessory: ASAccessory, settings: ASAccessorySettings) async throws {
        let (id, ssid, bridging) = Self.authorization(accessory, settings)
        try await call {
            try await $0.finishAuthorization(id: id, ssid: ssid, bluetoothTransportBridgingIdentifier: bridging)
        }
    }

    public func finishAuthorization(
        for accessory: ASAccessory, settings: ASAccessorySettings, completionHandler: @escaping ((any Error)?) -> Void
    ) {
        perform(completionHandler) { try await self.finishAuthorization(for: accessory, settings: settings) }
    }

    public func failAuthorization(for accessory: ASAccessory) async throws {
        let id = accessory.id
        try await call { try await $0.failAuthorization(id: id) }
    }

    public func failAuthorization(for accessory: ASAccessory, completionHandler: @escaping ((any Error)?) -> Void) {
        perform(completionHandler) { try await self.failAuthorization(for: accessory) }
    }

    private static func authorization(_ accessory: ASAccessory, _ settings: ASAccessorySettings)
        -> (String, String?, String?)
    {
        let bridging = settings.bluetoothTransportBridgingIdentifier.map { bytes in
            bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
                .joined(separator: ":")
        }
        return (accessory.id, settings.ssid, bridging)
    }

    // MARK: Calls

    /// Runs `body` on the activated session, with the agent's refusal as an `ASError`.
    private func call(_ body: @Sendable (AgentSession) async throws -> Void) async throws {
        let activation = state.withLock { $0.invalidated ? nil : $0.activation }
        guard let activation else {
            throw ASError(
                code: .invalidated, name: AccessorySessionError.Code.invalidated.dbusName,
                message: "the session is not active: call activate(on:eventHandler:) first, and not after invalidate()")
        }
        do {
            try await body(try await activation.value)
        } catch {
            throw Self.asError(error)
        }
    }

    /// Runs `body` in a task and hands its outcome to `completionHandler` on the session's queue.
    private func perform(
        _ completionHandler: @escaping ((any Error)?) -> Void, _ body: @escaping @Sendable () async throws -> Void
    ) {
        let handler = UncheckedCompletion(completionHandler)
        let queue = state.withLock { $0.queue }
        Task {
            do {
                try await body()
                queue.async { handler.body(nil) }
            } catch {
                queue.async { handler.body(error) }
            }
        }
    }

    /// The agent's refusal as Apple's error, where it has one of Apple's codes.
    static func asError(_ error: any Error) -> any Error {
        guard let error = error as? AgentCallError, let name = error.name else { return error }
        return ASError(name: name, message: error.message)
            ?? ASError(code: .unknown, name: name, message: error.message)
    }

    /// The desktop entry this process was launched from, as GLib's launcher says.
    static func desktopApplication() -> String? {
        guard let path = getenv("GIO_LAUNCHED_DESKTOP_FILE").map({ String(cString: $0) }) else { return nil }
        let file = path.split(separator: "/").last.map(String.init) ?? path
        return file.hasSuffix(".desktop") ? String(file.dropLast(".desktop".count)) : file
    }
}

/// An application's handler, called on the queue it named only.
private struct UncheckedHandler: @unchecked Sendable {
    let body: (ASAccessoryEvent) -> Void
    init(_ body: @escaping (ASAccessoryEvent) -> Void) { self.body = body }
}

private struct UncheckedCompletion: @unchecked Sendable {
    let body: ((any Error)?) -> Void
    init(_ body: @escaping ((any Error)?) -> Void) { self.body = body }
}
