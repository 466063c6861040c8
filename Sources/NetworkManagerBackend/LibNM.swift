import AccessoryCore
import CGLib
import CGLibShim
import CNetworkManager
import FoundationEssentials
import GLibRuntime

/// Every C call of this backend into libnm, and the GLib calls that serve its objects: the
/// client files speak Swift. Every function here runs on the GLib thread of the `NMClient` the
/// objects belong to. The synchronous ones borrow the pointers they are given and return
/// borrowed pointers; the asynchronous ones take `GObjectRef`s, which keep the objects alive
/// until the call finishes, and return owned references. Errors leave as `HotspotError`
/// unless the caller maps them its own way.
enum LibNM {
    // MARK: Client

    /// A new `NMClient` bound to the calling thread's main context, on the system bus or `bus`.
    /// It does not fetch NetworkManager's permissions, which nothing here reads: fetching them
    /// has NetworkManager ask polkit about every one of its actions for each new client.
    static func newClient(bus: GObjectRef?) throws(GLibError) -> GObjectRef {
        let client = OpaquePointer(
            try withGError("connect to NetworkManager") {
                cglib_initable_new_with_uint_and_object(
                    nm_client_get_type(),
                    NM_CLIENT_INSTANCE_FLAGS, NM_CLIENT_INSTANCE_FLAGS_NO_AUTO_FETCH_PERMISSIONS.rawValue,
                    bus == nil ? nil : NM_CLIENT_DBUS_CONNECTION, bus?.raw, nil, $0)
            })
        return GObjectRef(adopting: client)
    }

    /// Whether NetworkManager is on the bus; libnm drops every object when it leaves.
    static func isRunning(_ client: OpaquePointer) -> Bool {
        nm_client_get_nm_running(client) != 0
    }

    /// Whether NetworkManager is still starting (its `Startup`): right after a restart it is on
    /// the bus well before it has loaded its profiles and devices and exported them.
    static func isStartingUp(_ client: OpaquePointer) -> Bool {
        nm_client_get_startup(client) != 0
    }

    /// The object that lives as long as libnm still needs the client's main context.
    static func contextBusyWatcher(of client: OpaquePointer) -> GObjectRef {
        GObjectRef(retaining: OpaquePointer(nm_client_get_context_busy_watcher(client)))
    }

    static func isWirelessEnabled(_ client: OpaquePointer) -> Bool {
        nm_client_wireless_get_enabled(client) != 0
    }

    static func devices(of client: OpaquePointer) -> [OpaquePointer] {
        elements(of: nm_client_get_devices(client))
    }

    static func wifiDevices(of client: OpaquePointer) -> [OpaquePointer] {
        devices(of: client).filter { $0.isA(nm_device_wifi_get_type()) }
    }

    /// Every stored profile (`NMRemoteConnection`), the person's own included.
    static func connections(of client: OpaquePointer) -> [OpaquePointer] {
        elements(of: nm_client_get_connections(client))
    }

    static func remoteConnection(uuid: String, in client: OpaquePointer) -> OpaquePointer? {
        nm_client_get_connection_by_uuid(client, uuid)
    }

    static func activeConnections(of client: OpaquePointer) -> [OpaquePointer] {
        elements(of: nm_client_get_active_connections(client))
    }

    static func checkpoints(of client: OpaquePointer) -> [OpaquePointer] {
        elements(of: nm_client_get_checkpoints(client))
    }

    /// Milliseconds of `CLOCK_BOOTTIME`, the clock of `LastScan` and (in seconds) `LastSeen`.
    static func timestampMilliseconds() -> Int {
        Int(nm_utils_get_timestamp_msec())
    }

    // MARK: Devices

    static func interface(_ device: OpaquePointer) -> String {
        string(nm_device_get_iface(device)) ?? "?"
    }

    static func state(_ device: OpaquePointer) -> DeviceState {
        DeviceState(rawValue: nm_device_get_state(device).rawValue)
    }

    static func stateReason(_ device: OpaquePointer) -> DeviceStateReason {
        DeviceStateReason(rawValue: nm_device_get_state_reason(device).rawValue)
    }

    /// Whether the device carries the default route: NetworkManager's primary connection is on
    /// it, or (with no primary connection known) its active connection is a default one.
    static func carriesDefaultRoute(_ device: OpaquePointer, client: OpaquePointer) -> Bool {
        guard let active = activeConnection(of: device) else { return false }
        if let primary = nm_client_get_primary_connection(client) { return primary == active }
        return nm_active_connection_get_default(active) != 0 || nm_active_connection_get_default6(active) != 0
    }

    /// The device's active (or activating) connection.
    static func activeConnection(of device: OpaquePointer) -> OpaquePointer? {
        nm_device_get_active_connection(device)
    }

    static func wifiDevice(_ device: OpaquePointer) -> WiFiDevice {
        let active = activeConnection(of: device)
        // The associated AP's SSID, else the active profile's (a hidden AP may not report one).
        let apSSID = activeAccessPoint(of: device).flatMap { try? SSID(bytes: bytes(of: nm_access_point_get_ssid($0))) }
        let profileSSID = active.flatMap(connection(ofActive:)).flatMap(profile).flatMap { try? SSID(bytes: $0.ssid) }
        return WiFiDevice(
            interface: interface(device), state: state(device).name,
            hardwareAddress: string(nm_device_get_hw_address(device)),
            connection: active.flatMap(activeID), connectionUUID: active.flatMap(activeUUID),
            ssid: apSSID ?? profileSSID)
    }

    static func accessPoints(of device: OpaquePointer) -> [OpaquePointer] {
        elements(of: nm_device_wifi_get_access_points(device))
    }

    static func activeAccessPoint(of device: OpaquePointer) -> OpaquePointer? {
        nm_device_wifi_get_active_access_point(device)
    }

    /// When the device's last scan finished, in milliseconds of `CLOCK_BOOTTIME`; -1 for never.
    static func lastScan(of device: OpaquePointer) -> Int {
        Int(nm_device_wifi_get_last_scan(device))
    }

    /// Asks for a scan, probing for `ssids`; returns once NetworkManager accepted the request.
    static func requestScan(
        isolation: isolated (any Actor)? = #isolation, _ device: GObjectRef, ssids: [SSID]
    ) async throws(HotspotError) {
        let builder = cglib_vardict_builder_new()
        if !ssids.isEmpty {
            let values = ssids.map { ssid in
                ssid.bytes.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
            }
            values.withUnsafeBufferPointer {
                cglib_vardict_add_bytestring_array(builder, "ssids", $0.baseAddress, gsize($0.count))
            }
            values.forEach { g_bytes_unref($0) }
        }
        let options = UncheckedSendable(cglib_vardict_builder_end(builder))
        _ = try await call("request a Wi-Fi scan") { cancellable, callback, data in
            nm_device_wifi_request_scan_options_async(device.pointer, options.value, cancellable, callback, data)
        } finish: { source, result, error in
            nm_device_wifi_request_scan_finish(OpaquePointer(source), result, error) != 0 ? true : nil
        }
    }

    // MARK: Access points

    static func scanEntry(_ ap: OpaquePointer) -> WiFiScanEntry? {
        guard let bssid = try? MACAddress(string(nm_access_point_get_bssid(ap)) ?? "") else { return nil }
        let ssid = try? SSID(bytes: bytes(of: nm_access_point_get_ssid(ap)))
        return WiFiScanEntry(
            ssid: ssid, bssid: bssid, strength: Int(nm_access_point_get_strength(ap)),
            frequency: Int(nm_access_point_get_frequency(ap)), security: security(ap))
    }

    /// The security an AP offers, from its privacy flag and WPA / RSN flags.
    static func security(_ ap: OpaquePointer) -> WiFiSecurity {
        let privacy = nm_access_point_get_flags(ap).rawValue & NM_802_11_AP_FLAGS_PRIVACY.rawValue != 0
        let wpa = nm_access_point_get_wpa_flags(ap).rawValue
        let rsn = nm_access_point_get_rsn_flags(ap).rawValue
        let both = wpa | rsn
        let owe = NM_802_11_AP_SEC_KEY_MGMT_OWE.rawValue | NM_802_11_AP_SEC_KEY_MGMT_OWE_TM.rawValue
        let enterprise = NM_802_11_AP_SEC_KEY_MGMT_802_1X.rawValue | NM_802_11_AP_SEC_KEY_MGMT_EAP_SUITE_B_192.rawValue
        var security: WiFiSecurity = []
        if both & NM_802_11_AP_SEC_KEY_MGMT_PSK.rawValue != 0 { security.insert(.psk) }
        if both & NM_802_11_AP_SEC_KEY_MGMT_SAE.rawValue != 0 { security.insert(.sae) }
        if both & owe != 0 { security.insert(.owe) }
        if both & enterprise != 0 { security.insert(.enterprise) }
        if privacy && wpa == 0 && rsn == 0 { security.insert(.wep) }
        return security
    }

    /// When the AP was last heard, in seconds of `CLOCK_BOOTTIME`.
    static func lastSeen(_ ap: OpaquePointer) -> Int {
        Int(nm_access_point_get_last_seen(ap))
    }

    /// The D-Bus object path of any libnm object: what names an access point or a checkpoint.
    static func path(_ object: OpaquePointer) -> String {
        string(nm_object_get_path(object)) ?? ""
    }

    // MARK: Active connections

    static func activeUUID(_ active: OpaquePointer) -> String? {
        string(nm_active_connection_get_uuid(active))
    }

    static func activeID(_ active: OpaquePointer) -> String? {
        string(nm_active_connection_get_id(active))
    }

    static func activeState(_ active: OpaquePointer) -> ActiveConnectionState {
        ActiveConnectionState(rawValue: nm_active_connection_get_state(active).rawValue)
    }

    static func activeStateReason(_ active: OpaquePointer) -> ActiveConnectionStateReason {
        ActiveConnectionStateReason(rawValue: nm_active_connection_get_state_reason(active).rawValue)
    }

    /// The stored profile the active connection activates.
    static func connection(ofActive active: OpaquePointer) -> OpaquePointer? {
        nm_active_connection_get_connection(active)
    }

    /// The first IPv4 address the active connection was given.
    static func ipv4Address(ofActive active: OpaquePointer) -> String? {
        guard let config = nm_active_connection_get_ip4_config(active) else { return nil }
        return elements(of: nm_ip_config_get_addresses(config)).first.flatMap { string(nm_ip_address_get_address($0)) }
    }

    /// The addresses of the device's current IPv4 configuration, with their prefixes.
    static func ipv4Subnets(of device: OpaquePointer) -> [IPv4Subnet] {
        guard let config = nm_device_get_ip4_config(device) else { return [] }
        return elements(of: nm_ip_config_get_addresses(config)).compactMap { entry in
            string(nm_ip_address_get_address(entry)).flatMap(IPv4Address.init).flatMap {
                IPv4Subnet(address: $0, prefixLength: Int(nm_ip_address_get_prefix(entry)))
            }
        }
    }

    // MARK: Activation

    /// Adds `connection` as a profile and activates it on `device` in one request: kept in
    /// memory only when `inMemory`, written to disk otherwise; with `bind`, NetworkManager
    /// ends it when this client leaves the bus.
    static func addAndActivate(
        isolation: isolated (any Actor)? = #isolation, _ connection: GObjectRef, client: GObjectRef,
        on device: GObjectRef, accessPoint: String?, inMemory: Bool, bind: Bool
    ) async throws(HotspotError) -> GObjectRef {
        let builder = cglib_vardict_builder_new()
        cglib_vardict_add_string(builder, "persist", inMemory ? "memory" : "disk")
        if bind { cglib_vardict_add_string(builder, "bind-activation", "dbus-client") }
        let options = UncheckedSendable(cglib_vardict_builder_end(builder))
        return try await call("add and activate the profile") { cancellable, callback, data in
            nm_client_add_and_activate_connection2(
                client.pointer, connection.pointer, device.pointer, accessPoint, options.value,
                cancellable, callback, data)
        } finish: { _, result, error in
            nm_client_add_and_activate_connection2_finish(client.pointer, result, nil, error)
                .map(GObjectRef.init(adopting:))
        }
    }

    /// Activates the stored profile `remote` on `device`.
    static func activate(
        isolation: isolated (any Actor)? = #isolation, _ remote: GObjectRef, client: GObjectRef, on device: GObjectRef
    ) async throws(HotspotError) -> GObjectRef {
        try await call("activate the profile") { cancellable, callback, data in
            nm_client_activate_connection_async(
                client.pointer, remote.pointer, device.pointer, nil, cancellable, callback, data)
        } finish: { _, result, error in
            nm_client_activate_connection_finish(client.pointer, result, error).map(GObjectRef.init(adopting:))
        }
    }

    static func deactivate(
        isolation: isolated (any Actor)? = #isolation, _ active: GObjectRef, client: GObjectRef
    ) async throws(HotspotError) {
        _ = try await call("deactivate the connection") { cancellable, callback, data in
            nm_client_deactivate_connection_async(client.pointer, active.pointer, cancellable, callback, data)
        } finish: { _, result, error in
            nm_client_deactivate_connection_finish(client.pointer, result, error) != 0 ? true : nil
        }
    }

    // MARK: Checkpoints

    /// When NetworkManager created the checkpoint, in milliseconds of `CLOCK_BOOTTIME`.
    static func created(_ checkpoint: OpaquePointer) -> Int {
        Int(nm_checkpoint_get_created(checkpoint))
    }

    static func devices(ofCheckpoint checkpoint: OpaquePointer) -> [OpaquePointer] {
        elements(of: nm_checkpoint_get_devices(checkpoint))
    }

    /// A checkpoint of `device` that NetworkManager rolls back by itself after `seconds`,
    /// deleting the profiles added since. NetworkManager's error is left to the caller to type.
    static func createCheckpoint(
        isolation: isolated (any Actor)? = #isolation, of device: GObjectRef, client: GObjectRef, seconds: UInt32
    ) async throws(GLibError) -> GObjectRef {
        let devices = UncheckedSendable(cglib_ptr_array_new()!)
        g_ptr_array_add(devices.value, device.raw)
        defer { g_ptr_array_unref(devices.value) }
        return try await gAsync("create a checkpoint") { cancellable, callback, data in
            nm_client_checkpoint_create(
                client.pointer, devices.value, seconds, NM_CHECKPOINT_CREATE_FLAG_DELETE_NEW_CONNECTIONS,
                cancellable, callback, data)
        } finish: { _, result, error in
            nm_client_checkpoint_create_finish(client.pointer, result, error).map(GObjectRef.init(adopting:))
        }
    }

    static func rollback(
        isolation: isolated (any Actor)? = #isolation, checkpoint path: String, client: GObjectRef
    ) async throws(HotspotError) {
        _ = try await call("roll back to the checkpoint") { cancellable, callback, data in
            nm_client_checkpoint_rollback(client.pointer, path, cancellable, callback, data)
        } finish: { _, result, error in
            nm_client_checkpoint_rollback_finish(client.pointer, result, error).map { table in
                g_hash_table_unref(table)
                return true
            }
        }
    }

    /// Sets the checkpoint's rollback to `seconds` from now.
    static func adjustRollbackTimeout(
        isolation: isolated (any Actor)? = #isolation, checkpoint path: String, seconds: UInt32, client: GObjectRef
    ) async throws(HotspotError) {
        _ = try await call("adjust the checkpoint's rollback timeout") { cancellable, callback, data in
            nm_client_checkpoint_adjust_rollback_timeout(client.pointer, path, seconds, cancellable, callback, data)
        } finish: { _, result, error in
            nm_client_checkpoint_adjust_rollback_timeout_finish(client.pointer, result, error) != 0 ? true : nil
        }
    }

    static func destroy(
        isolation: isolated (any Actor)? = #isolation, checkpoint path: String, client: GObjectRef
    ) async throws(HotspotError) {
        _ = try await call("destroy the checkpoint") { cancellable, callback, data in
            nm_client_checkpoint_destroy(client.pointer, path, cancellable, callback, data)
        } finish: { _, result, error in
            nm_client_checkpoint_destroy_finish(client.pointer, result, error) != 0 ? true : nil
        }
    }

    // MARK: Stored profiles

    static func connectionUUID(_ connection: OpaquePointer) -> String? {
        string(nm_connection_get_uuid(connection))
    }

    static func connectionID(_ connection: OpaquePointer) -> String? {
        string(nm_connection_get_id(connection))
    }

    /// Stores `connection` as a new profile, on disk or in memory only.
    static func add(
        isolation: isolated (any Actor)? = #isolation, _ connection: GObjectRef, client: GObjectRef, toDisk: Bool
    ) async throws(HotspotError) {
        let flags = toDisk ? NM_SETTINGS_ADD_CONNECTION2_FLAG_TO_DISK : NM_SETTINGS_ADD_CONNECTION2_FLAG_IN_MEMORY
        let settings = UncheckedSendable(nm_connection_to_dbus(connection.pointer, NM_CONNECTION_SERIALIZE_ALL))
        _ = try await call("add the profile") { cancellable, callback, data in
            nm_client_add_connection2(client.pointer, settings.value, flags, nil, 1, cancellable, callback, data)
        } finish: { _, result, error in
            nm_client_add_connection2_finish(client.pointer, result, nil, error).map(GObjectRef.init(adopting:))
        }
    }

    /// Deletes the stored profile `remote`.
    static func delete(isolation: isolated (any Actor)? = #isolation, _ remote: GObjectRef) async throws(HotspotError) {
        _ = try await call("delete the profile") { cancellable, callback, data in
            nm_remote_connection_delete_async(remote.pointer, cancellable, callback, data)
        } finish: { source, result, error in
            nm_remote_connection_delete_finish(OpaquePointer(source), result, error) != 0 ? true : nil
        }
    }

    /// A copy of a stored profile the caller owns, to read its secrets into.
    static func clone(_ remote: OpaquePointer) -> GObjectRef {
        GObjectRef(adopting: nm_simple_connection_new_clone(remote))
    }

    /// The settings whose secrets a stored profile may hold.
    static let secretSettingNames = [NM_SETTING_WIRELESS_SECURITY_SETTING_NAME, NM_SETTING_802_1X_SETTING_NAME]

    static func hasSetting(_ connection: OpaquePointer, named name: String) -> Bool {
        nm_connection_get_setting_by_name(connection, name) != nil
    }

    /// Reads the secrets of the setting `name` of the stored profile `remote` into `copy`. A
    /// setting that stores no secret (OWE, or 802.1X with only certificates) is left as it is.
    static func readSecrets(
        isolation: isolated (any Actor)? = #isolation,
        of remote: GObjectRef, setting name: String, into copy: GObjectRef
    ) async throws(HotspotError) {
        do throws(GLibError) {
            let secrets: UncheckedSendable<OpaquePointer>
            do {
                secrets = try await gAsync("read the secrets of \(name)") { cancellable, callback, data in
                    nm_remote_connection_get_secrets_async(remote.pointer, name, cancellable, callback, data)
                } finish: { source, result, error in
                    nm_remote_connection_get_secrets_finish(OpaquePointer(source), result, error)
                        .map(UncheckedSendable.init)
                }
            } catch let error where error.remoteName?.hasSuffix(".AgentManager.NoSecrets") == true {
                return
            }
            defer { g_variant_unref(secrets.value) }
            try withGErrorChecked("apply the secrets") {
                nm_connection_update_secrets(copy.pointer, name, secrets.value, $0)
            }
        } catch {
            throw hotspotError(error)
        }
    }

    /// The stored profile `remote` as NetworkManager holds it, its fields read from `copy`
    /// (which holds its secrets).
    static func storedProfile(_ remote: OpaquePointer, copy: OpaquePointer) -> StoredProfile? {
        guard let profile = profile(copy) else { return nil }
        let general = nm_connection_get_setting_connection(copy)
        let ipv4 = nm_connection_get_setting_ip4_config(copy)
        let ipv6 = nm_connection_get_setting_ip6_config(copy)
        return StoredProfile(
            profile: profile,
            unsaved: nm_remote_connection_get_unsaved(remote) != 0,
            filename: string(nm_remote_connection_get_filename(remote)),
            autoconnect: general.map { nm_setting_connection_get_autoconnect($0) != 0 } ?? true,
            ipv4NeverDefault: ipv4.map { nm_setting_ip_config_get_never_default($0) != 0 } ?? false,
            ipv6NeverDefault: ipv6.map { nm_setting_ip_config_get_never_default($0) != 0 } ?? false)
    }

    // MARK: Building profiles

    /// A new `NMConnection` holding `profile`; the caller owns it.
    static func connection(_ profile: WirelessProfile) throws(HotspotError) -> GObjectRef {
        let connection = GObjectRef(adopting: nm_simple_connection_new())
        nm_connection_add_setting(connection.pointer, generalSetting(profile))
        nm_connection_add_setting(connection.pointer, wirelessSetting(profile))
        if let keyManagement = profile.keyManagement {
            nm_connection_add_setting(connection.pointer, securitySetting(profile, keyManagement: keyManagement))
        }
        if let eap = profile.eap {
            nm_connection_add_setting(connection.pointer, try setting8021x(eap))
        }
        // The person's internet stays where it is: the accessory never gets the default route,
        // nor becomes the machine's DNS resolver.
        for ip in [nm_setting_ip4_config_new()!, nm_setting_ip6_config_new()!] {
            GObjectProperty.set(ip, NM_SETTING_IP_CONFIG_METHOD, "auto")
            GObjectProperty.set(ip, NM_SETTING_IP_CONFIG_NEVER_DEFAULT, true)
            GObjectProperty.set(ip, NM_SETTING_IP_CONFIG_IGNORE_AUTO_DNS, true)
            nm_connection_add_setting(connection.pointer, ip)
        }
        if !profile.userData.isEmpty {
            nm_connection_add_setting(connection.pointer, try userSetting(profile.userData))
        }
        return connection
    }

    private static func generalSetting(_ profile: WirelessProfile) -> OpaquePointer {
        let general = nm_setting_connection_new()!
        GObjectProperty.set(general, NM_SETTING_CONNECTION_ID, profile.id)
        GObjectProperty.set(general, NM_SETTING_CONNECTION_UUID, profile.uuid)
        GObjectProperty.set(general, NM_SETTING_CONNECTION_TYPE, NM_SETTING_WIRELESS_SETTING_NAME)
        // Never fight the person's own networks for the radio.
        GObjectProperty.set(general, NM_SETTING_CONNECTION_AUTOCONNECT, false)
        for user in profile.permittedUsers { _ = nm_setting_connection_add_permission(general, "user", user, nil) }
        return general
    }

    private static func wirelessSetting(_ profile: WirelessProfile) -> OpaquePointer {
        let wireless = nm_setting_wireless_new()!
        let ssid = profile.ssid.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        GObjectProperty.set(wireless, NM_SETTING_WIRELESS_SSID, boxed: ssid!)
        g_bytes_unref(ssid)
        GObjectProperty.set(wireless, NM_SETTING_WIRELESS_MODE, NM_SETTING_WIRELESS_MODE_INFRA)
        GObjectProperty.set(wireless, NM_SETTING_WIRELESS_HIDDEN, profile.hidden)
        if let bssid = profile.bssid { GObjectProperty.set(wireless, NM_SETTING_WIRELESS_BSSID, bssid.description) }
        return wireless
    }

    private static func securitySetting(_ profile: WirelessProfile, keyManagement: String) -> OpaquePointer {
        let security = nm_setting_wireless_security_new()!
        GObjectProperty.set(security, NM_SETTING_WIRELESS_SECURITY_KEY_MGMT, keyManagement)
        if let psk = profile.psk {
            GObjectProperty.set(security, NM_SETTING_WIRELESS_SECURITY_PSK, psk.reveal())
            // Said outright: NetworkManager holds the secret (in its root-only store), and
            // no user's secret agent is ever asked for it.
            _ = nm_setting_set_secret_flags(
                security, NM_SETTING_WIRELESS_SECURITY_PSK, NM_SETTING_SECRET_FLAG_NONE, nil)
        }
        if let key = profile.wepKey {
            GObjectProperty.set(security, NM_SETTING_WIRELESS_SECURITY_WEP_KEY_TYPE, NM_WEP_KEY_TYPE_KEY.rawValue)
            GObjectProperty.set(security, NM_SETTING_WIRELESS_SECURITY_AUTH_ALG, "open")
            nm_setting_wireless_security_set_wep_key(security, 0, key.reveal())
        }
        return security
    }

    private static func setting8021x(_ eap: WirelessProfile.EAPProfile) throws(HotspotError) -> OpaquePointer {
        let setting = nm_setting_802_1x_new()!
        let typed = setting
        for method in eap.methods { _ = nm_setting_802_1x_add_eap_method(typed, method) }
        let strings: [(String, String?)] = [
            (NM_SETTING_802_1X_IDENTITY, eap.identity),
            (NM_SETTING_802_1X_PASSWORD, eap.password?.reveal()),
            (NM_SETTING_802_1X_ANONYMOUS_IDENTITY, eap.anonymousIdentity),
            (NM_SETTING_802_1X_PHASE2_AUTH, eap.phase2Auth),
            (NM_SETTING_802_1X_PHASE2_AUTHEAP, eap.phase2AuthEAP),
            (NM_SETTING_802_1X_DOMAIN_SUFFIX_MATCH, eap.domainSuffixMatch),
        ]
        for case (let property, let value?) in strings { GObjectProperty.set(setting, property, value) }
        GObjectProperty.set(setting, NM_SETTING_802_1X_PHASE1_AUTH_FLAGS, eap.phase1AuthFlags)
        do throws(GLibError) {
            let scheme = NM_SETTING_802_1X_CK_SCHEME_PATH
            if let path = eap.caCertificatePath {
                try withGErrorChecked("CA certificate") { nm_setting_802_1x_set_ca_cert(typed, path, scheme, nil, $0) }
            }
            if let path = eap.clientCertificatePath {
                try withGErrorChecked("client certificate") {
                    nm_setting_802_1x_set_client_cert(typed, path, scheme, nil, $0)
                }
            }
            if let path = eap.privateKeyPath {
                try withGErrorChecked("private key") {
                    nm_setting_802_1x_set_private_key(typed, path, eap.privateKeyPassword?.reveal(), scheme, nil, $0)
                }
            }
        } catch {
            g_object_unref(gpointer(setting))
            throw .invalidConfiguration(.invalidEAPSettings(field: "certificates", error.message))
        }
        return setting
    }

    /// The `user` setting holding `userData`, its keys in order.
    private static func userSetting(_ userData: [String: String]) throws(HotspotError) -> OpaquePointer {
        let user = nm_setting_user_new()!
        for (key, value) in userData.sorted(by: { $0.key < $1.key }) {
            do throws(GLibError) {
                try withGErrorChecked("set user data \(key)") { nm_setting_user_set_data(user, key, value, $0) }
            } catch {
                g_object_unref(gpointer(user))
                throw .internal(error.message)
            }
        }
        return user
    }

    /// Sets one key of the `user` setting of a connection built by `connection(_:)`.
    static func setUserData(_ connection: GObjectRef, _ key: String, _ value: String) throws(HotspotError) {
        guard let user = nm_connection_get_setting_by_name(connection.pointer, NM_SETTING_USER_SETTING_NAME) else {
            throw .internal("the profile has no user setting to record \(key) in")
        }
        do throws(GLibError) {
            try withGErrorChecked("set user data \(key)") { nm_setting_user_set_data(user, key, value, $0) }
        } catch {
            throw .internal(error.message)
        }
    }

    /// Checks a connection as the daemon would, locally, for errors that name the property.
    static func verify(_ connection: GObjectRef) throws(HotspotError) {
        do throws(GLibError) {
            try withGErrorChecked("verify the profile") { nm_connection_verify(connection.pointer, $0) }
            try withGErrorChecked("verify the profile's secrets") {
                nm_connection_verify_secrets(connection.pointer, $0)
            }
        } catch {
            throw hotspotError(error)
        }
    }

    // MARK: Reading profiles

    /// Reads back the fields of a connection, with the secrets it holds.
    static func profile(_ connection: OpaquePointer) -> WirelessProfile? {
        guard let wireless = nm_connection_get_setting_wireless(connection) else { return nil }
        var profile = WirelessProfile(
            id: connectionID(connection) ?? "", uuid: connectionUUID(connection) ?? "",
            ssid: bytes(of: nm_setting_wireless_get_ssid(wireless)),
            hidden: nm_setting_wireless_get_hidden(wireless) != 0)
        profile.bssid = string(nm_setting_wireless_get_bssid(wireless)).flatMap { try? MACAddress($0) }
        if let general = nm_connection_get_setting_connection(connection) {
            profile.permittedUsers = permittedUsers(general)
        }
        if let security = nm_connection_get_setting_wireless_security(connection) {
            profile.keyManagement = string(nm_setting_wireless_security_get_key_mgmt(security))
            profile.psk = string(nm_setting_wireless_security_get_psk(security)).map(Secret.init)
            profile.wepKey = string(nm_setting_wireless_security_get_wep_key(security, 0)).map(Secret.init)
        }
        if let setting = nm_connection_get_setting_802_1x(connection) {
            profile.eap = eapProfile(setting)
        }
        if let user = nm_connection_get_setting_by_name(connection, NM_SETTING_USER_SETTING_NAME) {
            var count: guint = 0
            let keys = nm_setting_user_get_keys(user, &count)
            for index in 0..<Int(count) {
                guard let key = string(keys?[index]) else { continue }
                profile.userData[key] = string(nm_setting_user_get_data(user, key))
            }
        }
        return profile
    }

    /// The users of `connection`'s `connection.permissions`; none: a system profile.
    static func permittedUsers(of connection: OpaquePointer) -> [String] {
        nm_connection_get_setting_connection(connection).map { permittedUsers($0) } ?? []
    }

    /// The users of `connection.permissions`, in order.
    private static func permittedUsers(_ general: OpaquePointer) -> [String] {
        (0..<nm_setting_connection_get_num_permissions(general)).compactMap { index in
            var type: UnsafePointer<CChar>?, item: UnsafePointer<CChar>?
            guard nm_setting_connection_get_permission(general, index, &type, &item, nil) != 0, string(type) == "user"
            else { return nil }
            return string(item)
        }
    }

    private static func eapProfile(_ setting: OpaquePointer) -> WirelessProfile.EAPProfile {
        let methods = (0..<nm_setting_802_1x_get_num_eap_methods(setting)).compactMap {
            string(nm_setting_802_1x_get_eap_method(setting, $0))
        }
        var eap = WirelessProfile.EAPProfile(methods: methods)
        eap.identity = string(nm_setting_802_1x_get_identity(setting))
        eap.password = string(nm_setting_802_1x_get_password(setting)).map(Secret.init)
        eap.anonymousIdentity = string(nm_setting_802_1x_get_anonymous_identity(setting))
        eap.phase2Auth = string(nm_setting_802_1x_get_phase2_auth(setting))
        eap.phase2AuthEAP = string(nm_setting_802_1x_get_phase2_autheap(setting))
        eap.caCertificatePath = string(nm_setting_802_1x_get_ca_cert_path(setting))
        eap.clientCertificatePath = string(nm_setting_802_1x_get_client_cert_path(setting))
        eap.privateKeyPath = string(nm_setting_802_1x_get_private_key_path(setting))
        eap.privateKeyPassword = string(nm_setting_802_1x_get_private_key_password(setting)).map(Secret.init)
        eap.domainSuffixMatch = string(nm_setting_802_1x_get_domain_suffix_match(setting))
        eap.phase1AuthFlags = nm_setting_802_1x_get_phase1_auth_flags(setting).rawValue
        return eap
    }

    // MARK: Calls and errors

    /// `gAsync` with NetworkManager's errors typed.
    private static func call<T: Sendable>(
        isolation: isolated (any Actor)? = #isolation,
        _ operation: String,
        start: (
            _ cancellable: UnsafeMutablePointer<GCancellable>, _ callback: GAsyncReadyCallback, _ userData: gpointer
        ) -> Void,
        finish:
            @escaping (
                _ source: UnsafeMutablePointer<GObject>?, _ result: OpaquePointer?,
                _ error: UnsafeMutablePointer<UnsafeMutablePointer<GError>?>
            ) -> T?
    ) async throws(HotspotError) -> T {
        do {
            return try await gAsync(operation, start: start, finish: finish)
        } catch {
            throw hotspotError(error)
        }
    }

    /// NetworkManager's error, typed: a refused property becomes the matching configuration
    /// error, a refused permission `notAuthorized`.
    static func hotspotError(_ error: GLibError) -> HotspotError {
        if error.isCancelled { return .cancelled }
        let remote = error.remoteName ?? ""
        let permissionDenied = Int32(NM_MANAGER_ERROR_PERMISSION_DENIED.rawValue)
        if remote.hasSuffix(".PermissionDenied")
            || (error.domain == "nm-manager-error-quark" && error.code == permissionDenied)
        {
            return .notAuthorized(error.message)
        }
        if remote.hasSuffix(".InvalidProperty") || remote.hasSuffix(".MissingProperty")
            || (error.domain == "nm-connection-error-quark")
        {
            return invalidConfiguration(error.message)
        }
        if remote == "org.freedesktop.DBus.Error.ServiceUnknown"
            || remote == "org.freedesktop.DBus.Error.NameHasNoOwner"
        {
            return .networkManagerUnavailable(error.message)
        }
        return .internal(error.message)
    }

    /// The configuration error for a message naming a property and what is wrong with it:
    /// "802-11-wireless-security.psk: property is invalid".
    private static func invalidConfiguration(_ text: String) -> HotspotError {
        let property = String(text.prefix { $0 != ":" })
        let reason = text.dropFirst(property.count + 1).trimmingWhitespace()
        let message = reason.isEmpty ? text : reason
        switch property {
        case "802-11-wireless.ssid": return .invalidConfiguration(.invalidSSID(message))
        case "802-11-wireless-security.psk": return .invalidConfiguration(.invalidWPAPassphrase(message))
        case let p where p.hasPrefix("802-11-wireless-security.wep-key"):
            return .invalidConfiguration(.invalidWEPPassphrase(message))
        case let p where p.hasPrefix("802-1x."):
            return .invalidConfiguration(.invalidEAPSettings(field: String(p.dropFirst(7)), message))
        default: return .invalidConfiguration(.invalid(field: property, message))
        }
    }
}
