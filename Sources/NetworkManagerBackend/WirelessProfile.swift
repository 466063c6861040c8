import AccessoryCore
import FoundationEssentials

/// The fields of a NetworkManager Wi-Fi profile that this project sets, as plain values;
/// the secrets as `Secret`s, so that no print or dump of a profile shows them.
///
/// `HotspotConfiguration` is validated; this is not, so that tests can hand NetworkManager a
/// profile it must refuse (a 33-byte SSID, a 7-character PSK) and see its rejection mapped.
struct WirelessProfile: Hashable, Sendable {
    var id: String
    var uuid: String
    var ssid: [UInt8]
    var hidden = false
    /// `802-11-wireless.bssid`: the only access point the profile associates with.
    var bssid: MACAddress?
    /// `802-11-wireless-security.key-mgmt`; `nil` for an open network (no security setting).
    var keyManagement: String?
    var psk: Secret?
    var wepKey: Secret?
    var eap: EAPProfile?
    var userData: [String: String] = [:]
    /// `connection.permissions`: only these users see the profile and may use it; none: every
    /// user (a system profile). Its secrets stay NetworkManager's own (`psk-flags` none: kept
    /// in its root-only store, no user's secret agent asked).
    var permittedUsers: [String] = []

    struct EAPProfile: Hashable, Sendable {
        var methods: [String]
        var identity: String?
        var password: Secret?
        var anonymousIdentity: String?
        var phase2Auth: String?
        var phase2AuthEAP: String?
        var caCertificatePath: String?
        var clientCertificatePath: String?
        var privateKeyPath: String?
        var privateKeyPassword: Secret?
        var domainSuffixMatch: String?
        var phase1AuthFlags: UInt32 = 0
    }
}

/// Keys of the profile's `user` setting that mark it as this project's. NetworkManager's
/// dispatcher exports them as `CONNECTION_USER_ACCESSORY_055SETUP__…`.
enum ProfileTag {
    static let managed = "accessory-setup.managed"
    static let recordID = "accessory-setup.record-id"
    static let joinOnce = "accessory-setup.join-once"
    static let expires = "accessory-setup.expires"
    static let previousConnection = "accessory-setup.previous-connection"
    static let checkpoint = "accessory-setup.checkpoint"
    /// The owner of an application's configuration (`JoinOptions.owner`).
    static let owner = "accessory-setup.owner"
}

extension WirelessProfile {
    /// The profile for joining `configuration`, tagged as this project's.
    init(_ configuration: HotspotConfiguration, ssid: SSID, options: JoinOptions, now: Date = Date()) {
        self.init(
            id: "Accessory \(ssid.escaped)", uuid: UUID().uuidString.lowercased(), ssid: ssid.bytes,
            hidden: configuration.hidden)
        bssid = configuration.bssid
        switch configuration.security {
        case .open:
            break
        case .owe:
            keyManagement = "owe"
        case .wep(let key):
            keyManagement = "none"
            wepKey = key
        case .wpa2Personal(let passphrase):
            keyManagement = "wpa-psk"
            psk = passphrase
        case .wpa3Personal(let password):
            keyManagement = "sae"
            psk = password
        case .enterprise(let settings):
            keyManagement = "wpa-eap"
            eap = EAPProfile(settings)
        }
        userData[ProfileTag.managed] = "1"
        userData[ProfileTag.joinOnce] = configuration.joinOnce ? "1" : "0"
        if let days = configuration.lifetimeInDays {
            userData[ProfileTag.expires] = String(Int(now.timeIntervalSince1970) + days * 86_400)
        }
        if let record = options.recordID {
            userData[ProfileTag.recordID] = record.uuidString.lowercased()
        }
        if let owner = options.owner { userData[ProfileTag.owner] = owner }
        permittedUsers = options.permittedUser.map { [$0] } ?? []
    }

    var isOurs: Bool { userData[ProfileTag.managed] == "1" }
    var isJoinOnce: Bool { userData[ProfileTag.joinOnce] == "1" }
    var expires: Date? {
        userData[ProfileTag.expires].flatMap(Int.init).map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }
    var recordID: UUID? { userData[ProfileTag.recordID].flatMap(UUID.init(uuidString:)) }
    var owner: String? { userData[ProfileTag.owner] }
    var certificatePaths: [String] {
        [eap?.caCertificatePath, eap?.clientCertificatePath, eap?.privateKeyPath].compactMap { $0 }
    }
}

extension WirelessProfile.EAPProfile {
    init(_ settings: EAPSettings) {
        methods = settings.supportedEAPTypes.map {
            switch $0 {
            case .tls: "tls"
            case .ttls: "ttls"
            case .peap: "peap"
            case .fast: "fast"
            }
        }
        identity = settings.username
        password = settings.password
        anonymousIdentity = settings.outerIdentity
        if settings.supportedEAPTypes.contains(.ttls) {
            if settings.ttlsInnerAuthenticationType == .eap {
                phase2AuthEAP = "mschapv2"
            } else {
                phase2Auth = settings.ttlsInnerAuthenticationType.rawValue
            }
        } else if settings.supportedEAPTypes.contains(.peap) {
            phase2Auth = "mschapv2"
        }
        caCertificatePath = settings.trustedServerCertificatePaths.first
        clientCertificatePath = settings.clientCertificatePath
        privateKeyPath = settings.privateKeyPath
        privateKeyPassword = settings.privateKeyPassword
        domainSuffixMatch =
            settings.trustedServerNames.isEmpty ? nil : settings.trustedServerNames.joined(separator: ";")
        // Apple's preferred TLS version becomes the lowest one allowed.
        switch settings.preferredTLSVersion {
        case .v1_0: phase1AuthFlags = 0
        case .v1_1: phase1AuthFlags = 0x1
        case .v1_2: phase1AuthFlags = 0x1 | 0x2
        }
    }
}
