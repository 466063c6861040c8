import AccessoryCore
import CGLib
import CNetworkManager
import GLibRuntime

/// Profile storage without activation: what the tests against the real daemon exercise, and
/// what adopting an existing profile will use.
extension NetworkManagerClient {
    enum Persistence {
        case disk, memory

        var flags: NMSettingsAddConnection2Flags {
            self == .disk ? NM_SETTINGS_ADD_CONNECTION2_FLAG_TO_DISK : NM_SETTINGS_ADD_CONNECTION2_FLAG_IN_MEMORY
        }
    }

    /// Adds a profile. With `verifyLocally` false the daemon alone judges it.
    func add(_ profile: WirelessProfile, persistence: Persistence, verifyLocally: Bool = true) async throws(HotspotError) {
        let connection = try LibNM.connection(profile)
        if verifyLocally { try LibNM.verify(connection) }
        let client = self.client
        let settings = UncheckedSendable(nm_connection_to_dbus(connection.pointer, NM_CONNECTION_SERIALIZE_ALL))
        _ = try await call("add the profile") { cancellable, callback, data in
            nm_client_add_connection2(client.pointer, settings.value, persistence.flags, nil, 1, cancellable, callback, data)
        } finish: { _, result, error in
            nm_client_add_connection2_finish(client.pointer, result, nil, error).map(GObjectRef.init(adopting:))
        }
    }

    /// A stored profile read back with its secrets, as NetworkManager holds it.
    func storedProfile(uuid: String) async throws(HotspotError) -> StoredProfile? {
        guard let remote = nm_client_get_connection_by_uuid(client.pointer, uuid) else { return nil }
        let reference = GObjectRef(retaining: remote)
        let copy = GObjectRef(adopting: nm_simple_connection_new_clone(remote))
        for setting in [NM_SETTING_WIRELESS_SECURITY_SETTING_NAME, NM_SETTING_802_1X_SETTING_NAME]
        where nm_connection_get_setting_by_name(copy.pointer, setting) != nil {
            do throws(GLibError) {
                let secrets: UncheckedSendable<OpaquePointer>
                do {
                    secrets = try await gAsync("read the secrets of \(setting)") { cancellable, callback, data in
                    nm_remote_connection_get_secrets_async(reference.pointer, setting, cancellable, callback, data)
                    } finish: { source, result, error in
                        nm_remote_connection_get_secrets_finish(OpaquePointer(source), result, error).map(UncheckedSendable.init)
                    }
                } catch where error.remoteName?.hasSuffix(".AgentManager.NoSecrets") == true {
                    continue  // the setting stores no secret (OWE, or 802.1X with only certificates)
                }
                defer { g_variant_unref(secrets.value) }
                try withGErrorChecked("apply the secrets") { nm_connection_update_secrets(copy.pointer, setting, secrets.value, $0) }
            } catch {
                throw LibNM.hotspotError(error)
            }
        }
        guard let profile = LibNM.profile(copy.pointer) else { return nil }
        let general = nm_connection_get_setting_connection(copy.pointer)
        return StoredProfile(
            profile: profile,
            unsaved: nm_remote_connection_get_unsaved(remote) != 0,
            filename: string(nm_remote_connection_get_filename(remote)),
            autoconnect: general.map { nm_setting_connection_get_autoconnect($0) != 0 } ?? true,
            ipv4NeverDefault: nm_connection_get_setting_ip4_config(copy.pointer).map { nm_setting_ip_config_get_never_default($0) != 0 } ?? false,
            ipv6NeverDefault: nm_connection_get_setting_ip6_config(copy.pointer).map { nm_setting_ip_config_get_never_default($0) != 0 } ?? false)
    }

    /// Deletes a profile by UUID; `false` when there is none.
    @discardableResult
    func deleteProfile(uuid: String) async throws(HotspotError) -> Bool {
        guard let remote = nm_client_get_connection_by_uuid(client.pointer, uuid) else { return false }
        try await delete(GObjectRef(retaining: remote))
        return true
    }

    /// The UUIDs of every profile NetworkManager holds, the person's own included.
    func allProfileUUIDs() -> [String] {
        elements(of: nm_client_get_connections(client.pointer)).compactMap { string(nm_connection_get_uuid($0)) }
    }
}

/// A profile as NetworkManager stored it.
struct StoredProfile: Sendable {
    var profile: WirelessProfile
    var unsaved: Bool
    var filename: String?
    var autoconnect: Bool
    var ipv4NeverDefault: Bool
    var ipv6NeverDefault: Bool
}

/// A network the machine knows, with the passphrase NetworkManager stores for it: what an
/// accessory is given when it is provisioned with "the home network".
public struct StoredNetwork: Sendable {
    public var ssid: SSID
    /// The profile it comes from.
    public var connectionID: String
    /// The WPA or WEP key; `nil` for an open network or one whose secret NetworkManager does
    /// not keep (an agent-owned secret, 802.1X).
    public var passphrase: Secret?
    /// `802-11-wireless-security.key-mgmt`; `nil` for an open network.
    public var keyManagement: String?
}

extension NetworkManagerClient {
    /// The Wi-Fi network `device` is on (while it is joined to an accessory, the one the join
    /// will return to), or with `ssid` the person's profile for that SSID (the active one
    /// first), with its stored passphrase. Reading secrets takes root (or polkit's
    /// `settings.modify.system`); without it NetworkManager refuses: `notAuthorized`.
    public func storedNetwork(ssid: SSID?, device: String?) async throws(HotspotError) -> StoredNetwork {
        let uuid: String
        if let ssid {
            let active = activeConnectionUUIDs()
            let candidates = elements(of: nm_client_get_connections(client.pointer)).compactMap { connection -> (String, Bool)? in
                guard let profile = LibNM.profile(connection), profile.ssid == ssid.bytes, !profile.uuid.isEmpty,
                      profile.userData[ProfileTag.managed] == nil
                else { return nil }
                return (profile.uuid, active.contains(profile.uuid))
            }
            guard let chosen = candidates.first(where: { $0.1 }) ?? candidates.first else {
                throw .notStored(ssid.escaped)
            }
            uuid = chosen.0
        } else {
            let pointer = try wifiDevice(named: device)
            guard let active = nm_device_get_active_connection(pointer.pointer),
                  let activeUUID = string(nm_active_connection_get_uuid(active))
            else {
                throw .notStored("the network \(LibNM.interface(pointer.pointer)) is on (it is on none)")
            }
            // Joined to an accessory: its profile names the network it left.
            let joined = nm_client_get_connection_by_uuid(client.pointer, activeUUID).flatMap(LibNM.profile)
            if let joined, joined.userData[ProfileTag.managed] != nil {
                guard let previous = joined.userData[ProfileTag.previousConnection] else {
                    throw .notStored("the network \(LibNM.interface(pointer.pointer)) was on before joining the accessory (it was on none)")
                }
                uuid = previous
            } else {
                uuid = activeUUID
            }
        }
        guard let stored = try await storedProfile(uuid: uuid), let ssid = try? SSID(bytes: stored.profile.ssid) else {
            throw .notStored(ssid?.escaped ?? uuid)
        }
        return StoredNetwork(
            ssid: ssid, connectionID: stored.profile.id, passphrase: stored.profile.psk ?? stored.profile.wepKey,
            keyManagement: stored.profile.keyManagement)
    }
}
