import AccessoryCore
import CNetworkManager

/// `NMDeviceState`, kept open to values NetworkManager adds later.
struct DeviceState: RawRepresentable, Hashable, Sendable {
    let rawValue: UInt32

    static let unmanaged = DeviceState(rawValue: NM_DEVICE_STATE_UNMANAGED.rawValue)
    static let disconnected = DeviceState(rawValue: NM_DEVICE_STATE_DISCONNECTED.rawValue)
    static let config = DeviceState(rawValue: NM_DEVICE_STATE_CONFIG.rawValue)
    static let needAuth = DeviceState(rawValue: NM_DEVICE_STATE_NEED_AUTH.rawValue)
    static let ipConfig = DeviceState(rawValue: NM_DEVICE_STATE_IP_CONFIG.rawValue)
    static let activated = DeviceState(rawValue: NM_DEVICE_STATE_ACTIVATED.rawValue)
    static let failed = DeviceState(rawValue: NM_DEVICE_STATE_FAILED.rawValue)

    /// The name `nmcli` prints.
    var name: String {
        switch rawValue {
        case 0: "unknown"
        case 10: "unmanaged"
        case 20: "unavailable"
        case 30: "disconnected"
        case 40: "prepare"
        case 50: "config"
        case 60: "need-auth"
        case 70: "ip-config"
        case 80: "ip-check"
        case 90: "secondaries"
        case 100: "activated"
        case 110: "deactivating"
        case 120: "failed"
        default: "state \(rawValue)"
        }
    }
}

/// `NMDeviceStateReason`: why a device changed state.
struct DeviceStateReason: RawRepresentable, Hashable, Sendable {
    let rawValue: UInt32

    static let ipConfigUnavailable = Self(rawValue: NM_DEVICE_STATE_REASON_IP_CONFIG_UNAVAILABLE.rawValue)
    static let ipConfigExpired = Self(rawValue: NM_DEVICE_STATE_REASON_IP_CONFIG_EXPIRED.rawValue)
    static let noSecrets = Self(rawValue: NM_DEVICE_STATE_REASON_NO_SECRETS.rawValue)
    static let supplicantDisconnect = Self(rawValue: NM_DEVICE_STATE_REASON_SUPPLICANT_DISCONNECT.rawValue)
    static let supplicantTimeout = Self(rawValue: NM_DEVICE_STATE_REASON_SUPPLICANT_TIMEOUT.rawValue)
    static let dhcpStartFailed = Self(rawValue: NM_DEVICE_STATE_REASON_DHCP_START_FAILED.rawValue)
    static let dhcpError = Self(rawValue: NM_DEVICE_STATE_REASON_DHCP_ERROR.rawValue)
    static let dhcpFailed = Self(rawValue: NM_DEVICE_STATE_REASON_DHCP_FAILED.rawValue)
    static let ssidNotFound = Self(rawValue: NM_DEVICE_STATE_REASON_SSID_NOT_FOUND.rawValue)

    /// How a link the hotspot had accepted fails when a handshake was lost: dropped asking for
    /// secrets, or up without carrying anything until DHCP gave up.
    static let lostLink: Set<Self> = [.noSecrets, .supplicantDisconnect, .ipConfigUnavailable, .dhcpFailed]

    var name: String {
        switch rawValue {
        case 4: "the configuration failed"
        case 5: "no IP configuration could be obtained"
        case 6: "the IP configuration expired"
        case 7: "secrets were required but not provided"
        case 8: "the supplicant disconnected"
        case 9: "the supplicant's configuration failed"
        case 10: "the supplicant failed"
        case 11: "the supplicant timed out"
        case 15, 16, 17: "DHCP failed"
        case 36: "the device was removed"
        case 37: "the machine went to sleep"
        case 38: "the connection was removed"
        case 39: "the user disconnected"
        case 40: "the link went down"
        case 53: "the network was not found"
        case 60: "a new activation replaced it"
        default: "NetworkManager device state reason \(rawValue)"
        }
    }
}

/// `NMActiveConnectionState`.
struct ActiveConnectionState: RawRepresentable, Hashable, Sendable {
    let rawValue: UInt32

    static let activated = Self(rawValue: NM_ACTIVE_CONNECTION_STATE_ACTIVATED.rawValue)
    static let deactivated = Self(rawValue: NM_ACTIVE_CONNECTION_STATE_DEACTIVATED.rawValue)
}

/// `NMActiveConnectionStateReason`.
struct ActiveConnectionStateReason: RawRepresentable, Hashable, Sendable {
    let rawValue: UInt32

    static let ipConfigInvalid = Self(rawValue: NM_ACTIVE_CONNECTION_STATE_REASON_IP_CONFIG_INVALID.rawValue)
    static let connectTimeout = Self(rawValue: NM_ACTIVE_CONNECTION_STATE_REASON_CONNECT_TIMEOUT.rawValue)
    static let noSecrets = Self(rawValue: NM_ACTIVE_CONNECTION_STATE_REASON_NO_SECRETS.rawValue)
    static let loginFailed = Self(rawValue: NM_ACTIVE_CONNECTION_STATE_REASON_LOGIN_FAILED.rawValue)

    var name: String {
        switch rawValue {
        case 2: "the user disconnected"
        case 3: "the device disconnected"
        case 4: "the service stopped"
        case 5: "the IP configuration was invalid"
        case 6: "the connection attempt timed out"
        case 9: "secrets were required but not provided"
        case 10: "the login failed"
        case 11: "the connection was removed"
        default: "NetworkManager active connection state reason \(rawValue)"
        }
    }
}

/// How an activation ended, from the active connection's and the device's state reasons.
enum ActivationOutcome: Equatable, Sendable {
    case activated
    case failed(device: DeviceStateReason, connection: ActiveConnectionStateReason)
    /// NetworkManager left the bus (stopped or restarted) before the activation settled.
    case networkManagerGone

    /// The typed error for a failed activation of `ssid`. NetworkManager's reasons that speak of
    /// secrets mean a refused passphrase only where the join gave one (`secured`); an open or
    /// OWE hotspot that drops the station has turned it away for some other reason.
    static func error(
        device: DeviceStateReason, connection: ActiveConnectionStateReason, joining ssid: SSID, secured: Bool
    ) -> HotspotError {
        switch device {
        case .noSecrets, .supplicantDisconnect:
            return secured
                ? .wrongPassphrase(ssid) : .activationFailed(ssid, reason: "the hotspot dropped the connection")
        case .supplicantTimeout: return .associationTimeout(ssid)
        case .ssidNotFound: return .notFound("named \(ssid)")
        case .ipConfigUnavailable, .ipConfigExpired, .dhcpStartFailed, .dhcpError, .dhcpFailed:
            return .addressingFailed(ssid)
        default: break
        }
        switch connection {
        case .noSecrets, .loginFailed:
            return secured
                ? .wrongPassphrase(ssid) : .activationFailed(ssid, reason: "the hotspot dropped the connection")
        case .connectTimeout: return .associationTimeout(ssid)
        case .ipConfigInvalid: return .addressingFailed(ssid)
        default: break
        }
        let reason = device.rawValue > 1 ? device.name : connection.name
        return .activationFailed(ssid, reason: reason)
    }
}
