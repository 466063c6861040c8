import AccessoryCore
import CGLib
import CGLibShim
import CNetworkManager
import FoundationEssentials
import GLibRuntime

/// The C calls into libnm that turn its objects into Swift values and back. Every function
/// here runs on the GLib thread of the `NMClient` the objects belong to, and borrows the
/// pointers it is given.
enum LibNM {
    // MARK: Access points and devices

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
        var security: WiFiSecurity = []
        if both & NM_802_11_AP_SEC_KEY_MGMT_PSK.rawValue != 0 { security.insert(.psk) }
        if both & NM_802_11_AP_SEC_KEY_MGMT_SAE.rawValue != 0 { security.insert(.sae) }
        if both & (NM_802_11_AP_SEC_KEY_MGMT_OWE.rawValue | NM_802_11_AP_SEC_KEY_MGMT_OWE_TM.rawValue) != 0 { security.insert(.owe) }
        if both & (NM_802_11_AP_SEC_KEY_MGMT_802_1X.rawValue | NM_802_11_AP_SEC_KEY_MGMT_EAP_SUITE_B_192.rawValue) != 0 {
            security.insert(.enterprise)
        }
        if privacy && wpa == 0 && rsn == 0 { security.insert(.wep) }
        return security
    }

    static func accessPoints(of device: OpaquePointer) -> [OpaquePointer] {
        elements(of: nm_device_wifi_get_access_points(device))
    }

    static func interface(_ device: OpaquePointer) -> String {
        string(nm_device_get_iface(device)) ?? "?"
    }

    static func state(_ device: OpaquePointer) -> DeviceState {
        DeviceState(rawValue: nm_device_get_state(device).rawValue)
    }

    static func wifiDevice(_ device: OpaquePointer) -> WiFiDevice {
        let active = nm_device_get_active_connection(device)
        // The associated AP's SSID, else the active profile's (a hidden AP may not report one).
        let apSSID = nm_device_wifi_get_active_access_point(device).flatMap { try? SSID(bytes: bytes(of: nm_access_point_get_ssid($0))) }
        let profileSSID = active.flatMap(nm_active_connection_get_connection).flatMap(profile).flatMap { try? SSID(bytes: $0.ssid) }
        return WiFiDevice(
            interface: interface(device), state: state(device).name,
            hardwareAddress: string(nm_device_get_hw_address(device)),
            connection: active.flatMap { string(nm_active_connection_get_id($0)) },
            ssid: apSSID ?? profileSSID)
    }

    static func path(_ object: OpaquePointer) -> String {
        string(nm_object_get_path(object)) ?? ""
    }

    // MARK: Profiles

    /// A new `NMConnection` holding `profile`; the caller owns it.
    static func connection(_ profile: WirelessProfile) throws(HotspotError) -> GObjectRef {
        let connection = GObjectRef(adopting: nm_simple_connection_new())

        let general = nm_setting_connection_new()!
        GObjectProperty.set(general, NM_SETTING_CONNECTION_ID, profile.id)
        GObjectProperty.set(general, NM_SETTING_CONNECTION_UUID, profile.uuid)
        GObjectProperty.set(general, NM_SETTING_CONNECTION_TYPE, NM_SETTING_WIRELESS_SETTING_NAME)
        // Never fight the person's own networks for the radio.
        GObjectProperty.set(general, NM_SETTING_CONNECTION_AUTOCONNECT, false)
        for user in profile.permittedUsers { _ = nm_setting_connection_add_permission(general, "user", user, nil) }
        nm_connection_add_setting(connection.pointer, general)

        let wireless = nm_setting_wireless_new()!
        let ssid = profile.ssid.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        GObjectProperty.set(wireless, NM_SETTING_WIRELESS_SSID, boxed: ssid!)
        g_bytes_unref(ssid)
        GObjectProperty.set(wireless, NM_SETTING_WIRELESS_MODE, NM_SETTING_WIRELESS_MODE_INFRA)
        GObjectProperty.set(wireless, NM_SETTING_WIRELESS_HIDDEN, profile.hidden)
        nm_connection_add_setting(connection.pointer, wireless)

        if let keyManagement = profile.keyManagement {
            let security = nm_setting_wireless_security_new()!
            GObjectProperty.set(security, NM_SETTING_WIRELESS_SECURITY_KEY_MGMT, keyManagement)
            if let psk = profile.psk {
                GObjectProperty.set(security, NM_SETTING_WIRELESS_SECURITY_PSK, psk.reveal())
                // Said outright: NetworkManager holds the secret (in its root-only store), and
                // no user's secret agent is ever asked for it.
                _ = nm_setting_set_secret_flags(security, NM_SETTING_WIRELESS_SECURITY_PSK, NM_SETTING_SECRET_FLAG_NONE, nil)
            }
            if let key = profile.wepKey {
                GObjectProperty.set(security, NM_SETTING_WIRELESS_SECURITY_WEP_KEY_TYPE, NM_WEP_KEY_TYPE_KEY.rawValue)
                GObjectProperty.set(security, NM_SETTING_WIRELESS_SECURITY_AUTH_ALG, "open")
                nm_setting_wireless_security_set_wep_key(security, 0, key.reveal())
            }
            nm_connection_add_setting(connection.pointer, security)
        }
        if let eap = profile.eap {
            nm_connection_add_setting(connection.pointer, try setting8021x(eap))
        }

        // The person's internet stays where it is: the accessory never gets the default route.
        for ip in [nm_setting_ip4_config_new()!, nm_setting_ip6_config_new()!] {
            GObjectProperty.set(ip, NM_SETTING_IP_CONFIG_METHOD, "auto")
            GObjectProperty.set(ip, NM_SETTING_IP_CONFIG_NEVER_DEFAULT, true)
            nm_connection_add_setting(connection.pointer, ip)
        }

        if !profile.userData.isEmpty {
            let user = nm_setting_user_new()!
            for (key, value) in profile.userData.sorted(by: { $0.key < $1.key }) {
                do throws(GLibError) {
                    try withGErrorChecked("set user data \(key)") { nm_setting_user_set_data(user, key, value, $0) }
                } catch {
                    g_object_unref(gpointer(user))
                    throw .internal(error.message)
                }
            }
            nm_connection_add_setting(connection.pointer, user)
        }
        return connection
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
        for case let (property, value?) in strings { GObjectProperty.set(setting, property, value) }
        GObjectProperty.set(setting, NM_SETTING_802_1X_PHASE1_AUTH_FLAGS, eap.phase1AuthFlags)
        do throws(GLibError) {
            let scheme = NM_SETTING_802_1X_CK_SCHEME_PATH
            if let path = eap.caCertificatePath {
                try withGErrorChecked("CA certificate") { nm_setting_802_1x_set_ca_cert(typed, path, scheme, nil, $0) }
            }
            if let path = eap.clientCertificatePath {
                try withGErrorChecked("client certificate") { nm_setting_802_1x_set_client_cert(typed, path, scheme, nil, $0) }
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

    /// Reads back the fields of a connection, with the secrets it holds.
    static func profile(_ connection: OpaquePointer) -> WirelessProfile? {
        guard let wireless = nm_connection_get_setting_wireless(connection) else { return nil }
        var profile = WirelessProfile(
            id: string(nm_connection_get_id(connection)) ?? "", uuid: string(nm_connection_get_uuid(connection)) ?? "",
            ssid: bytes(of: nm_setting_wireless_get_ssid(wireless)),
            hidden: nm_setting_wireless_get_hidden(wireless) != 0)
        if let general = nm_connection_get_setting_connection(connection) {
            for index in 0..<nm_setting_connection_get_num_permissions(general) {
                var type: UnsafePointer<CChar>?, item: UnsafePointer<CChar>?
                if nm_setting_connection_get_permission(general, index, &type, &item, nil) != 0, string(type) == "user",
                   let user = string(item) {
                    profile.permittedUsers.append(user)
                }
            }
        }
        if let security = nm_connection_get_setting_wireless_security(connection) {
            profile.keyManagement = string(nm_setting_wireless_security_get_key_mgmt(security))
            profile.psk = string(nm_setting_wireless_security_get_psk(security)).map(Secret.init)
            profile.wepKey = string(nm_setting_wireless_security_get_wep_key(security, 0)).map(Secret.init)
        }
        if let setting = nm_connection_get_setting_802_1x(connection) {
            var eap = WirelessProfile.EAPProfile(
                methods: (0..<nm_setting_802_1x_get_num_eap_methods(setting)).compactMap { string(nm_setting_802_1x_get_eap_method(setting, $0)) })
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
            profile.eap = eap
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

    /// Checks a connection as the daemon would, locally, for errors that name the property.
    static func verify(_ connection: GObjectRef) throws(HotspotError) {
        do throws(GLibError) {
            try withGErrorChecked("verify the profile") { nm_connection_verify(connection.pointer, $0) }
            try withGErrorChecked("verify the profile's secrets") { nm_connection_verify_secrets(connection.pointer, $0) }
        } catch {
            throw hotspotError(error)
        }
    }

    // MARK: Errors

    /// NetworkManager's error, typed: a refused property becomes the matching configuration
    /// error, a refused permission `notAuthorized`.
    static func hotspotError(_ error: GLibError) -> HotspotError {
        if error.isCancelled { return .cancelled }
        let remote = error.remoteName ?? ""
        if remote.hasSuffix(".PermissionDenied") || (error.domain == "nm-manager-error-quark" && error.code == Int32(NM_MANAGER_ERROR_PERMISSION_DENIED.rawValue)) {
            return .notAuthorized(error.message)
        }
        if remote.hasSuffix(".InvalidProperty") || remote.hasSuffix(".MissingProperty")
            || (error.domain == "nm-connection-error-quark") {
            // "802-11-wireless-security.psk: property is invalid"
            let property = String(error.message.prefix { $0 != ":" })
            let reason = error.message.dropFirst(property.count + 1).trimmingWhitespace()
            let message = reason.isEmpty ? error.message : reason
            switch property {
            case "802-11-wireless.ssid": return .invalidConfiguration(.invalidSSID(message))
            case "802-11-wireless-security.psk": return .invalidConfiguration(.invalidWPAPassphrase(message))
            case let p where p.hasPrefix("802-11-wireless-security.wep-key"): return .invalidConfiguration(.invalidWEPPassphrase(message))
            case let p where p.hasPrefix("802-1x."): return .invalidConfiguration(.invalidEAPSettings(field: String(p.dropFirst(7)), message))
            default: return .invalidConfiguration(.invalid(field: property, message))
            }
        }
        if remote == "org.freedesktop.DBus.Error.ServiceUnknown" || remote == "org.freedesktop.DBus.Error.NameHasNoOwner" {
            return .networkManagerUnavailable(error.message)
        }
        return .internal(error.message)
    }
}
