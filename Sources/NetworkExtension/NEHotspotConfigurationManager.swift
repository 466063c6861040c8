import AccessoryCore
import AccessorySetupKit
import BusService
import Dispatch
import Foundation

/// Apple's `NEHotspotConfigurationManager`, over the agent, which brings the previous network
/// back when an accessory's hotspot is left. Completion handlers run on the main queue; every
/// call is also `async`. Errors are `NSError`s in `NEHotspotConfigurationErrorDomain`.
public final class NEHotspotConfigurationManager: Sendable {
    public static let shared = NEHotspotConfigurationManager()

    private let bus: BusAddress

    /// Not in Apple's API: a manager on another bus than the system bus.
    public init(bus: BusAddress = .system) {
        self.bus = bus
    }

    /// Applies the application's own configuration and joins it (polkit: `configure-hotspot`).
    /// A `joinOnce` configuration lasts as long as the process.
    public func apply(_ configuration: NEHotspotConfiguration) async throws {
        try await call { _ = try await $0.applyConfiguration(configuration) }
    }

    public func apply(_ configuration: NEHotspotConfiguration, completionHandler: (((any Error)?) -> Void)? = nil) {
        let configuration = UncheckedValue(configuration)
        perform(completionHandler) { try await self.apply(configuration.value) }
    }

    /// The SSIDs of this application's configurations.
    public func getConfiguredSSIDs() async -> [String] {
        (try? await AgentConnection.shared(bus).configuredSSIDs()) ?? []
    }

    public func getConfiguredSSIDs(completionHandler: @escaping ([String]) -> Void) {
        let handler = UncheckedValue(completionHandler)
        Task {
            let ssids = await getConfiguredSSIDs()
            DispatchQueue.main.async { handler.value(ssids) }
        }
    }

    /// Removes this application's configurations for `ssid`, leaving the network first.
    public func removeConfiguration(forSSID ssid: String) {
        let bus = bus
        Task { try? await AgentConnection.shared(bus).removeConfiguration(ssid: ssid) }
    }

    /// Joins the accessory's hotspot with `passphrase` (polkit: `join`).
    public func joinAccessoryHotspot(_ accessory: ASAccessory, passphrase: String) async throws {
        let id = accessory.id
        try await call {
            _ = try await $0.joinAccessory(id: id, options: AccessoryJoinOptions(passphrase: Secret(passphrase)))
        }
    }

    public func joinAccessoryHotspot(
        _ accessory: ASAccessory, passphrase: String, completionHandler: (((any Error)?) -> Void)? = nil
    ) {
        let accessory = UncheckedValue(accessory)
        perform(completionHandler) { try await self.joinAccessoryHotspot(accessory.value, passphrase: passphrase) }
    }

    /// Joins the accessory's open hotspot.
    public func joinAccessoryHotspotWithoutSecurity(_ accessory: ASAccessory) async throws {
        let id = accessory.id
        try await call { _ = try await $0.joinAccessory(id: id, options: AccessoryJoinOptions(withoutSecurity: true)) }
    }

    public func joinAccessoryHotspotWithoutSecurity(
        _ accessory: ASAccessory, completionHandler: (((any Error)?) -> Void)? = nil
    ) {
        let accessory = UncheckedValue(accessory)
        perform(completionHandler) { try await self.joinAccessoryHotspotWithoutSecurity(accessory.value) }
    }

    /// Not in Apple's API: joins the accessory's hotspot with the passphrase its profile fixes,
    /// or the one the person typed in the picker, and says where the machine is now.
    @discardableResult
    public func joinAccessoryHotspot(_ accessory: ASAccessory) async throws -> HotspotJoinReport {
        let id = accessory.id
        var report: HotspotJoinReport?
        try await call { report = try await $0.joinAccessory(id: id) }
        return report!
    }

    /// Not in Apple's API: leaves the hotspot joined through the agent and brings the previous
    /// network back.
    @discardableResult
    public func leaveAccessoryHotspot(device: String? = nil) async throws -> HotspotLeaveReport {
        var report: HotspotLeaveReport?
        try await call { report = try await $0.leave(device: device) }
        return report!
    }

    private func call(_ body: (AgentConnection) async throws -> Void) async throws {
        do {
            try await body(try await AgentConnection.shared(bus))
        } catch let error as AgentCallError {
            throw error.hotspotError
        }
    }

    private func perform(
        _ completionHandler: (((any Error)?) -> Void)?, _ body: @escaping @Sendable () async throws -> Void
    ) {
        let handler = UncheckedValue(completionHandler)
        Task {
            var failure: (any Error)?
            do { try await body() } catch { failure = error }
            let error = UncheckedValue(failure)
            DispatchQueue.main.async { handler.value?(error.value) }
        }
    }
}

/// A value handed to the main queue or a task, used there only.
private struct UncheckedValue<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
