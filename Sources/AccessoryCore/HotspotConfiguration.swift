/// How to join an accessory's Wi-Fi hotspot: the counterpart of `NEHotspotConfiguration`.
///
/// Built only through its validating initialiser, so every value of this type holds a
/// joinable configuration. Passphrases are `Secret`s and never print.
public struct HotspotConfiguration: Hashable, Sendable {
    /// The network to join: one SSID, or the strongest access point whose SSID has the prefix.
    public enum Target: Hashable, Sendable {
        case ssid(SSID)
        case ssidPrefix(SSID)
    }

    public let target: Target
    public let security: HotspotSecurity
    /// The profile lives only while connected and is never written to disk.
    public let joinOnce: Bool
    /// Days until a persistent profile expires (1–365); `nil` for never.
    public let lifetimeInDays: Int?
    /// The network does not broadcast its SSID, so joining it probes for it.
    public let hidden: Bool
    /// The one access point to join (`802-11-wireless.bssid`): the accessory a person picked,
    /// and no other that broadcasts its SSID. `nil`: any access point of the target.
    public var bssid: MACAddress?

    public static let minimumPrefixLength = 3
    public static let lifetimeRange = 1...365

    public init(
        target: Target, security: HotspotSecurity = .open, joinOnce: Bool = false,
        lifetimeInDays: Int? = nil, hidden: Bool = false
    ) throws(HotspotConfigurationError) {
        if case .ssidPrefix(let prefix) = target { try Self.checkPrefixLength(prefix) }
        if case .ssidPrefix = target, hidden {
            throw .invalid(field: "hidden", "a hidden network cannot be found by prefix; give its full SSID")
        }
        try security.validate()
        if case .enterprise = security, joinOnce { throw .joinOnceNotSupported }
        if let lifetimeInDays {
            guard Self.lifetimeRange.contains(lifetimeInDays) else {
                throw .invalid(field: "lifetimeInDays", "is \(lifetimeInDays); it must be from 1 to 365")
            }
            guard !joinOnce else {
                throw .invalid(
                    field: "lifetimeInDays", "a join-once configuration is never stored, so it has no lifetime")
            }
        }
        self.target = target
        self.security = security
        self.joinOnce = joinOnce
        self.lifetimeInDays = lifetimeInDays
        self.hidden = hidden
    }

    private static func checkPrefixLength(_ prefix: SSID) throws(HotspotConfigurationError) {
        guard prefix.count >= minimumPrefixLength else {
            throw .invalidSSIDPrefix(
                "is \(prefix.count) bytes long; a prefix needs \(minimumPrefixLength) to \(SSID.maximumLength) bytes")
        }
    }

    /// Validates text as a target: an exact SSID, or a prefix of 3 to 32 bytes.
    public static func target(ssid: String?, ssidPrefix: String?) throws(HotspotConfigurationError) -> Target {
        switch (ssid, ssidPrefix) {
        case (let ssid?, nil):
            do { return .ssid(try SSID(notation: ssid)) } catch { throw .invalidSSID(error.description) }
        case (nil, let prefix?):
            let bytes: SSID
            do { bytes = try SSID(notation: prefix) } catch { throw .invalidSSIDPrefix(error.description) }
            try checkPrefixLength(bytes)
            return .ssidPrefix(bytes)
        case (nil, nil):
            throw .invalidSSID("give an SSID or an SSID prefix")
        case (_?, _?):
            throw .invalid(field: "ssidPrefix", "ssid and ssidPrefix are mutually exclusive")
        }
    }
}

/// How a hotspot is secured, with its credentials.
public enum HotspotSecurity: Hashable, Sendable {
    case open
    /// Static WEP: a 10 or 26 hex digit key (Apple's rule).
    case wep(Secret)
    /// WPA2 personal: 8–63 printable ASCII characters, or 64 hex digits.
    case wpa2Personal(Secret)
    /// WPA3 personal (SAE): any non-empty password.
    case wpa3Personal(Secret)
    /// Enhanced open (OWE): encrypted, no passphrase.
    case owe
    case enterprise(EAPSettings)

    /// Whether joining takes a passphrase, key or credentials, which the hotspot can refuse.
    public var hasCredentials: Bool {
        switch self {
        case .open, .owe: false
        case .wep, .wpa2Personal, .wpa3Personal, .enterprise: true
        }
    }

    public func validate() throws(HotspotConfigurationError) {
        switch self {
        case .open, .owe:
            break
        case .wep(let key):
            try Self.validateWEPKey(key)
        case .wpa2Personal(let passphrase):
            try Self.validateWPAPassphrase(passphrase)
        case .wpa3Personal(let password):
            guard !password.isEmpty else { throw .invalidWPAPassphrase("a WPA3 password must not be empty") }
        case .enterprise(let settings):
            try settings.validate()
        }
    }

    static func validateWEPKey(_ key: Secret) throws(HotspotConfigurationError) {
        let text = key.reveal()
        guard [10, 26].contains(text.utf8.count), Hex.isHexDigits(text) else {
            throw .invalidWEPPassphrase("a WEP key is 10 hex digits (64-bit) or 26 hex digits (128-bit)")
        }
    }

    static func validateWPAPassphrase(_ passphrase: Secret) throws(HotspotConfigurationError) {
        let text = passphrase.reveal()
        let count = text.utf8.count
        if count == 64 && Hex.isHexDigits(text) { return }
        guard (8...63).contains(count) else {
            throw .invalidWPAPassphrase(
                "has \(count) characters; a WPA passphrase has 8 to 63 printable ASCII characters, or is 64 hex digits")
        }
        guard text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw .invalidWPAPassphrase("a WPA passphrase may hold only printable ASCII characters")
        }
    }
}

/// `NEHotspotEAPSettings`, with file paths where Apple takes keychain references.
public struct EAPSettings: Hashable, Sendable {
    public enum EAPType: Int, Hashable, Sendable, CaseIterable {
        case tls = 13, ttls = 21, peap = 25, fast = 43
    }

    public enum TTLSInnerAuthentication: String, Hashable, Sendable, CaseIterable {
        case pap, chap, mschap, mschapv2, eap
    }

    public enum TLSVersion: String, Hashable, Sendable, CaseIterable {
        case v1_0 = "1.0", v1_1 = "1.1", v1_2 = "1.2"
    }

    public var supportedEAPTypes: [EAPType]
    public var username: String?
    public var password: Secret?
    public var outerIdentity: String?
    public var ttlsInnerAuthenticationType: TTLSInnerAuthentication = .eap
    public var trustedServerNames: [String] = []
    /// The PEM file of the CA certificates that may sign the server's. Apple takes up to 10;
    /// NetworkManager takes one file, which may hold several certificates.
    public var trustedServerCertificatePaths: [String] = []

    /// How many `trustedServerCertificatePaths` NetworkManager can use.
    public static let maximumTrustedServerCertificateFiles = 1
    public var tlsClientCertificateRequired = false
    /// The client certificate and its private key for EAP-TLS (`setIdentity`).
    public var clientCertificatePath: String?
    public var privateKeyPath: String?
    public var privateKeyPassword: Secret?
    public var preferredTLSVersion: TLSVersion = .v1_2

    public init(supportedEAPTypes: [EAPType]) {
        self.supportedEAPTypes = supportedEAPTypes
    }

    public func validate() throws(HotspotConfigurationError) {
        guard !supportedEAPTypes.isEmpty else {
            throw .invalidEAPSettings(field: "supportedEAPTypes", "name at least one EAP type (tls, ttls, peap, fast)")
        }
        let usesTLS = supportedEAPTypes.contains(.tls) || tlsClientCertificateRequired
        let usesPassword = supportedEAPTypes.contains { $0 != .tls }
        if usesPassword {
            guard let username, (1...253).contains(username.utf8.count) else {
                throw .invalidEAPSettings(
                    field: "username", "TTLS, PEAP and FAST need a username of 1 to 253 characters")
            }
            guard let password, (1...64).contains(password.reveal().utf8.count) else {
                throw .invalidEAPSettings(
                    field: "password", "TTLS, PEAP and FAST need a password of 1 to 64 characters")
            }
        }
        if usesTLS {
            guard clientCertificatePath != nil, privateKeyPath != nil else {
                throw .invalidEAPSettings(
                    field: "clientCertificatePath", "EAP-TLS needs a client certificate and its private key")
            }
        }
        guard trustedServerCertificatePaths.count <= Self.maximumTrustedServerCertificateFiles else {
            throw .invalidEAPSettings(
                field: "trustedServerCertificatePaths",
                "NetworkManager takes one CA certificate file; put the certificates into one PEM bundle")
        }
        if let outerIdentity, outerIdentity.isEmpty {
            throw .invalidEAPSettings(field: "outerIdentity", "must not be empty when given")
        }
    }
}

/// Why a hotspot configuration is refused, with the cases and codes of `NEHotspotConfigurationError`.
public enum HotspotConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    case invalid(field: String, String)
    case invalidSSID(String)
    case invalidWPAPassphrase(String)
    case invalidWEPPassphrase(String)
    case invalidEAPSettings(field: String, String)
    case joinOnceNotSupported
    case invalidSSIDPrefix(String)

    /// `NEHotspotConfigurationError`'s raw value.
    public var code: Int {
        switch self {
        case .invalid: 0
        case .invalidSSID: 1
        case .invalidWPAPassphrase: 2
        case .invalidWEPPassphrase: 3
        case .invalidEAPSettings: 4
        case .joinOnceNotSupported: 12
        case .invalidSSIDPrefix: 15
        }
    }

    public var field: String {
        switch self {
        case .invalid(let field, _): field
        case .invalidSSID: "ssid"
        case .invalidWPAPassphrase, .invalidWEPPassphrase: "passphrase"
        case .invalidEAPSettings(let field, _): "eap.\(field)"
        case .joinOnceNotSupported: "joinOnce"
        case .invalidSSIDPrefix: "ssidPrefix"
        }
    }

    public var message: String {
        switch self {
        case .invalid(_, let reason), .invalidSSID(let reason), .invalidWPAPassphrase(let reason),
            .invalidWEPPassphrase(let reason), .invalidEAPSettings(_, let reason), .invalidSSIDPrefix(let reason):
            reason
        case .joinOnceNotSupported:
            "an enterprise (EAP) network cannot be joined once; drop joinOnce"
        }
    }

    /// The agent's D-Bus error name for it: one per `NEHotspotConfigurationError` case, so that
    /// a client recovers the code from the name alone (`InvalidConfiguration` is `invalid`, 0).
    public var errorName: String {
        switch self {
        case .invalid: "InvalidConfiguration"
        case .invalidSSID: "InvalidSSID"
        case .invalidWPAPassphrase: "InvalidWPAPassphrase"
        case .invalidWEPPassphrase: "InvalidWEPPassphrase"
        case .invalidEAPSettings: "InvalidEAPSettings"
        case .joinOnceNotSupported: "JoinOnceNotSupported"
        case .invalidSSIDPrefix: "InvalidSSIDPrefix"
        }
    }

    public var description: String { "\(field): \(message)" }
}
