import AccessoryCore
import CGLib
import CGLibShim
import CNetworkManager
import Foundation
import GLibRuntime

extension NetworkManagerClient {
    // MARK: Join

    public func join(_ configuration: HotspotConfiguration, options: JoinOptions) async throws(HotspotError) -> JoinedHotspot {
        let device = try wifiDevice(named: options.device)
        let interface = LibNM.interface(device.pointer)
        try await removeExpiredProfiles()

        options.progress?(.scanning)
        let (ssid, accessPoint) = try await target(of: configuration, on: device)
        if LibNM.state(device.pointer) == .activated, LibNM.wifiDevice(device.pointer).ssid == ssid {
            throw .alreadyAssociated(ssid)
        }
        if checkpointPaths(covering: device).count > 0 { throw .pending(device: interface) }
        let previous = nm_device_get_active_connection(device.pointer).flatMap { active -> (uuid: String, id: String)? in
            guard let uuid = string(nm_active_connection_get_uuid(active)) else { return nil }
            return (uuid, string(nm_active_connection_get_id(active)) ?? uuid)
        }

        options.progress?(.checkpoint)
        let checkpoint = try await createCheckpoint(on: device, restoreAfter: options.restoreAfter)
        var profile = try WirelessProfile(configuration, ssid: ssid, options: options)
        profile.userData[ProfileTag.previousConnection] = previous?.uuid
        profile.userData[ProfileTag.checkpoint] = checkpoint
        let undo = { [profile] () async in await self.undoJoin(uuid: profile.uuid, checkpoint: checkpoint, previous: previous?.uuid) }

        let active: GObjectRef
        do throws(HotspotError) {
            let connection = try LibNM.connection(profile)
            try LibNM.verify(connection)
            options.progress?(.adding)
            active = try await activate(
                connection, on: device, accessPoint: accessPoint, joinOnce: configuration.joinOnce, bind: options.bindToClient)
        } catch {
            await undo()
            throw error
        }

        options.progress?(.associating)
        let outcome = await waitForActivation(of: active, on: device, timeout: options.timeout, progress: options.progress)
        guard let outcome else {
            await undo()
            throw .timedOut(ssid, seconds: Int(options.timeout.components.seconds))
        }
        if let error = outcome.error(for: ssid) {
            await undo()
            throw error
        }
        let deadline = options.restoreAfter.flatMap { checkpoint == nil ? nil : Date() + TimeInterval($0.components.seconds) }
        return JoinedHotspot(
            device: interface, ssid: ssid,
            bssid: nm_device_wifi_get_active_access_point(device.pointer).flatMap { LibNM.scanEntry($0)?.bssid },
            connectionID: profile.id, connectionUUID: profile.uuid, ipv4Address: ipv4Address(of: active),
            previousConnection: previous?.id, restoreDeadline: deadline)
    }

    /// The SSID to join and the access point to join it through: the named SSID, or the
    /// strongest access point whose SSID has the prefix (Apple's rule). Scans when nothing
    /// fits in the cached results or they are stale.
    private func target(of configuration: HotspotConfiguration, on device: GObjectRef) async throws(HotspotError) -> (SSID, String?) {
        func best() -> (SSID, String)? {
            let candidates = LibNM.accessPoints(of: device.pointer).compactMap { ap -> (entry: WiFiScanEntry, path: String)? in
                guard let entry = LibNM.scanEntry(ap), let ssid = entry.ssid else { return nil }
                switch configuration.target {
                case .ssid(let wanted): guard ssid == wanted else { return nil }
                case .ssidPrefix(let prefix): guard ssid.hasPrefix(prefix) else { return nil }
                }
                return (entry, LibNM.path(ap))
            }
            return candidates.max { $0.entry.strength < $1.entry.strength }.map { ($0.entry.ssid!, $0.path) }
        }
        let lastScan = nm_device_wifi_get_last_scan(device.pointer)
        let stale = lastScan < 0 || nm_utils_get_timestamp_msec() - lastScan > 30_000
        if !stale, let found = best() { return found }
        // An access point that has just come up, or a scan NetworkManager refused, can miss
        // one scan; a few are tried before giving up.
        let probe: [SSID]
        if case .ssid(let ssid) = configuration.target { probe = [ssid] } else { probe = [] }
        for _ in 0..<Self.scanAttempts {
            try await scan(device, ssids: probe)
            if let found = best() { return found }
        }
        switch configuration.target {
        case .ssid(let ssid):
            // A hidden network may answer only the association's own probe.
            if configuration.hidden { return (ssid, nil) }
            throw .notFound("named \(ssid)")
        case .ssidPrefix(let prefix):
            throw .notFound("whose SSID starts with \(prefix)")
        }
    }

    static let scanAttempts = 3

    private func activate(
        _ connection: GObjectRef, on device: GObjectRef, accessPoint: String?, joinOnce: Bool, bind: Bool
    ) async throws(HotspotError) -> GObjectRef {
        do throws(GLibError) {
            let client = self.client
            if joinOnce {
                // Volatile: never written to disk, and deleted by NetworkManager when it goes down.
                let builder = cglib_vardict_builder_new()
                cglib_vardict_add_string(builder, "persist", "volatile")
                if bind { cglib_vardict_add_string(builder, "bind-activation", "dbus-client") }
                let options = UncheckedSendable(cglib_vardict_builder_end(builder))
                return try await gAsync("add and activate the profile") { cancellable, callback, data in
                    nm_client_add_and_activate_connection2(
                        client.pointer, connection.pointer, device.pointer, accessPoint, options.value, cancellable, callback, data)
                } finish: { _, result, error in
                    nm_client_add_and_activate_connection2_finish(client.pointer, result, nil, error).map(GObjectRef.init(adopting:))
                }
            }
            let settings = UncheckedSendable(nm_connection_to_dbus(connection.pointer, NM_CONNECTION_SERIALIZE_ALL))
            let remote = try await gAsync("add the profile") { cancellable, callback, data in
                nm_client_add_connection2(
                    client.pointer, settings.value, NM_SETTINGS_ADD_CONNECTION2_FLAG_TO_DISK, nil, 1, cancellable, callback, data)
            } finish: { _, result, error in
                nm_client_add_connection2_finish(client.pointer, result, nil, error).map(GObjectRef.init(adopting:))
            }
            return try await gAsync("activate the profile") { cancellable, callback, data in
                nm_client_activate_connection_async(client.pointer, remote.pointer, device.pointer, accessPoint, cancellable, callback, data)
            } finish: { _, result, error in
                nm_client_activate_connection_finish(client.pointer, result, error).map(GObjectRef.init(adopting:))
            }
        } catch {
            throw LibNM.hotspotError(error)
        }
    }

    /// Waits until the activation succeeds or fails; `nil` when `timeout` passes first.
    private func waitForActivation(
        of active: GObjectRef, on device: GObjectRef, timeout: Duration, progress: (@Sendable (JoinStep) -> Void)?
    ) async -> ActivationOutcome? {
        var reported: JoinStep = .associating
        func outcome(removed: Bool = false) -> ActivationOutcome? {
            let state = ActiveConnectionState(rawValue: nm_active_connection_get_state(active.pointer).rawValue)
            if state == .activated && !removed { return .activated }
            if state == .deactivated || removed {
                return .failed(
                    device: DeviceStateReason(rawValue: nm_device_get_state_reason(device.pointer).rawValue),
                    connection: ActiveConnectionStateReason(rawValue: nm_active_connection_get_state_reason(active.pointer).rawValue))
            }
            if LibNM.state(device.pointer) == .ipConfig && reported != .configuringAddress {
                reported = .configuringAddress
                progress?(.configuringAddress)
            }
            return nil
        }
        if let settled = outcome() { return settled }
        return await waitForSignal(timeout: timeout) { fire in
            let check = { (_: OpaquePointer?) in if let settled = outcome() { fire(settled) } }
            return [
                active.connect("notify::state", check),
                active.connect("notify::state-reason", check),
                device.connect("notify::state", check),
                client.connect("active-connection-removed") { removed in
                    if removed == active.pointer, let settled = outcome(removed: true) { fire(settled) }
                },
            ]
        }
    }

    private func ipv4Address(of active: GObjectRef) -> String? {
        guard let config = nm_active_connection_get_ip4_config(active.pointer) else { return nil }
        return elements(of: nm_ip_config_get_addresses(config)).first.flatMap { string(nm_ip_address_get_address($0)) }
    }

    /// After a failed join: no profile left, and the device back where it was.
    private func undoJoin(uuid: String, checkpoint: String?, previous: String?) async {
        if let connection = nm_client_get_connection_by_uuid(client.pointer, uuid) {
            try? await delete(GObjectRef(retaining: connection))
        }
        if let checkpoint {
            try? await rollback(checkpoint)
        } else if let previous {
            try? await activate(uuid: previous)
        }
    }

    // MARK: Leave, forget, list

    public func leave(device name: String?) async throws(HotspotError) -> LeftHotspot {
        let devices = try name.map { name throws(HotspotError) in [try wifiDevice(named: name).pointer] } ?? wifiDevicePointers()
        guard let (device, active, profile) = devices.lazy.compactMap(accessoryConnection(on:)).first else {
            throw .notJoined(device: name ?? devices.first.map(LibNM.interface) ?? "any Wi-Fi device")
        }
        let previousUUID = profile.userData[ProfileTag.previousConnection]
        let previousID = previousUUID.flatMap { nm_client_get_connection_by_uuid(client.pointer, $0) }.flatMap { string(nm_connection_get_id($0)) }
        if let checkpoint = profile.userData[ProfileTag.checkpoint], checkpointPaths(covering: device).contains(checkpoint) {
            // NetworkManager puts the device back as it was: the accessory connection goes
            // down and the previous one comes back.
            try await rollback(checkpoint)
        } else {
            try await deactivate(active)
            if let previousUUID { try await activate(uuid: previousUUID) }
        }
        if profile.isJoinOnce, let connection = nm_client_get_connection_by_uuid(client.pointer, profile.uuid) {
            // A volatile profile is deleted by NetworkManager as its connection goes down, and
            // may be gone by the time this request arrives; that is the outcome wanted.
            try? await delete(GObjectRef(retaining: connection))
        }
        return LeftHotspot(
            device: LibNM.interface(device.pointer), ssid: try? SSID(bytes: profile.ssid),
            deleted: profile.isJoinOnce, restored: previousID)
    }

    public func forget(ssid: SSID) async throws(HotspotError) -> [ConfiguredHotspot] {
        let forgotten = try await configuredHotspots().filter { $0.ssid == ssid }
        for hotspot in forgotten where hotspot.active {
            for device in wifiDevicePointers() {
                if let (_, _, profile) = accessoryConnection(on: device), profile.uuid == hotspot.connectionUUID {
                    _ = try await leave(device: LibNM.interface(device))
                }
            }
        }
        for hotspot in forgotten {
            if let connection = nm_client_get_connection_by_uuid(client.pointer, hotspot.connectionUUID) {
                try await delete(GObjectRef(retaining: connection))
            }
        }
        return forgotten
    }

    public func configuredHotspots() async throws(HotspotError) -> [ConfiguredHotspot] {
        try await removeExpiredProfiles()
        let activeUUIDs = activeConnectionUUIDs()
        return ourProfiles().compactMap { _, profile in
            guard let ssid = try? SSID(bytes: profile.ssid) else { return nil }
            return ConfiguredHotspot(
                ssid: ssid, connectionID: profile.id, connectionUUID: profile.uuid, joinOnce: profile.isJoinOnce,
                expires: profile.expires, recordID: profile.recordID, active: activeUUIDs.contains(profile.uuid))
        }.sorted { ($0.ssid, $0.connectionUUID) < ($1.ssid, $1.connectionUUID) }
    }

    /// Persistent profiles past their `lifetimeInDays` that are not in use.
    private func removeExpiredProfiles(now: Date = Date()) async throws(HotspotError) {
        let activeUUIDs = activeConnectionUUIDs()
        for (connection, profile) in ourProfiles() where !activeUUIDs.contains(profile.uuid) {
            if let expires = profile.expires, expires <= now { try await delete(connection) }
        }
    }

    /// The UUIDs of the profiles active on any device.
    private func activeConnectionUUIDs() -> Set<String> {
        Set(elements(of: nm_client_get_active_connections(client.pointer)).compactMap { string(nm_active_connection_get_uuid($0)) })
    }

    private func ourProfiles() -> [(GObjectRef, WirelessProfile)] {
        elements(of: nm_client_get_connections(client.pointer)).compactMap { connection in
            guard let profile = LibNM.profile(connection), profile.isOurs else { return nil }
            return (GObjectRef(retaining: connection), profile)
        }
    }

    /// The device's active connection when it is one of this project's profiles.
    private func accessoryConnection(on device: OpaquePointer) -> (GObjectRef, GObjectRef, WirelessProfile)? {
        guard let active = nm_device_get_active_connection(device),
              let connection = nm_active_connection_get_connection(active),
              let profile = LibNM.profile(connection), profile.isOurs
        else { return nil }
        return (GObjectRef(retaining: device), GObjectRef(retaining: active), profile)
    }

    // MARK: NetworkManager calls

    private func checkpointPaths(covering device: GObjectRef) -> [String] {
        elements(of: nm_client_get_checkpoints(client.pointer)).filter { checkpoint in
            elements(of: nm_checkpoint_get_devices(checkpoint)).contains(device.pointer)
        }.map(LibNM.path)
    }

    /// A checkpoint of the device, so NetworkManager restores it by itself after
    /// `restoreAfter` if nobody leaves first. `nil` when NetworkManager refuses one.
    private func createCheckpoint(on device: GObjectRef, restoreAfter: Duration?) async throws(HotspotError) -> String? {
        let client = self.client
        let devices = UncheckedSendable(cglib_ptr_array_new()!)
        g_ptr_array_add(devices.value, device.raw)
        defer { g_ptr_array_unref(devices.value) }
        let seconds = UInt32(clamping: restoreAfter?.components.seconds ?? 0)
        do {
            let checkpoint = try await gAsync("create a checkpoint") { cancellable, callback, data in
                nm_client_checkpoint_create(client.pointer, devices.value, seconds, NM_CHECKPOINT_CREATE_FLAG_NONE, cancellable, callback, data)
            } finish: { _, result, error in
                nm_client_checkpoint_create_finish(client.pointer, result, error).map(GObjectRef.init(adopting:))
            }
            return LibNM.path(checkpoint.pointer)
        } catch {
            let mapped = LibNM.hotspotError(error)
            if case .cancelled = mapped { throw mapped }
            return nil
        }
    }

    private func rollback(_ checkpoint: String) async throws(HotspotError) {
        let client = self.client
        do {
            _ = try await gAsync("roll back to the checkpoint") { cancellable, callback, data in
                nm_client_checkpoint_rollback(client.pointer, checkpoint, cancellable, callback, data)
            } finish: { _, result, error in
                nm_client_checkpoint_rollback_finish(client.pointer, result, error).map { table in
                    g_hash_table_unref(table)
                    return true
                }
            }
        } catch {
            throw LibNM.hotspotError(error)
        }
    }

    private func deactivate(_ active: GObjectRef) async throws(HotspotError) {
        let client = self.client
        do {
            _ = try await gAsync("deactivate the connection") { cancellable, callback, data in
                nm_client_deactivate_connection_async(client.pointer, active.pointer, cancellable, callback, data)
            } finish: { _, result, error in
                nm_client_deactivate_connection_finish(client.pointer, result, error) != 0 ? true : nil
            }
        } catch {
            throw LibNM.hotspotError(error)
        }
    }

    private func activate(uuid: String) async throws(HotspotError) {
        guard let connection = nm_client_get_connection_by_uuid(client.pointer, uuid) else { return }
        let client = self.client
        let remote = GObjectRef(retaining: connection)
        do {
            _ = try await gAsync("activate the previous connection") { cancellable, callback, data in
                nm_client_activate_connection_async(client.pointer, remote.pointer, nil, nil, cancellable, callback, data)
            } finish: { _, result, error in
                nm_client_activate_connection_finish(client.pointer, result, error).map(GObjectRef.init(adopting:))
            }
        } catch {
            throw LibNM.hotspotError(error)
        }
    }

    func delete(_ connection: GObjectRef) async throws(HotspotError) {
        do {
            _ = try await gAsync("delete the profile") { cancellable, callback, data in
                nm_remote_connection_delete_async(connection.pointer, cancellable, callback, data)
            } finish: { source, result, error in
                nm_remote_connection_delete_finish(OpaquePointer(source), result, error) != 0 ? true : nil
            }
        } catch {
            throw LibNM.hotspotError(error)
        }
    }
}
