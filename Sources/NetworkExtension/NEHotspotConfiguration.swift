import AccessoryCore
import AccessorySetupKit
import AgentInterface
import DBusValues
import Foundation
import Glibc

/// Apple's `NEHotspotConfiguration`: a network of the application's own (not an accessory's)
/// for `NEHotspotConfigurationManager.apply`. The agent validates it and names the field it
/// refuses.
public final class NEHotspotConfiguration: @unchecked Sendable {
    /// Not in Apple's API, which reads the security from the initializer used.
    public enum Security: String, Sendable {
        case open, owe, wep, wpa2, wpa3, enterprise
    }

    /// The SSID; empty when the configuration names a prefix.
    public let ssid: String
    /// The SSID prefix; empty when the configuration names an SSID (Apple's `SSIDPrefix`).
    public let ssidPrefix: String
    public var passphrase: Secret?
    /// `nil`: the agent's default (`wpa2` with a passphrase, `enterprise` with EAP settings).
    public var security: Security?
    public var eapSettings: NEHotspotEAPSettings?
    /// Never stored; ends with the process (its bus connection).
    public var joinOnce = false
    /// 1 to 365; `nil`: the configuration stays until removed.
    public var lifeTimeInDays: NSNumber?
    public var hidden = false

    /// An open network.
    public init(ssid: String) {
        self.ssid = ssid
        ssidPrefix = ""
    }

    /// A WPA2 (or with `isWEP`, WEP) network.
    public convenience init(ssid: String, passphrase: String, isWEP: Bool) {
        self.init(ssid: ssid)
        self.passphrase = Secret(passphrase)
        security = isWEP ? .wep : .wpa2
    }

    /// A WPA2/WPA3 enterprise network.
    public convenience init(ssid: String, eapSettings: NEHotspotEAPSettings) {
        self.init(ssid: ssid)
        self.eapSettings = eapSettings
        security = .enterprise
    }

    /// The open network with the strongest signal whose SSID starts with `ssidPrefix`.
    public init(ssidPrefix: String) {
        ssid = ""
        self.ssidPrefix = ssidPrefix
    }

    public convenience init(ssidPrefix: String, passphrase: String, isWEP: Bool) {
        self.init(ssidPrefix: ssidPrefix)
        self.passphrase = Secret(passphrase)
        security = isWEP ? .wep : .wpa2
    }

    /// The `configuration` argument of `ApplyConfiguration`, with the descriptors it names.
    func dbusValue() throws(AgentCallError) -> (DBusValue, [Int32]) {
        var values: [(String, DBusValue)] = []
        if !ssid.isEmpty { values.append(("ssid", .string(ssid))) }
        if !ssidPrefix.isEmpty { values.append(("ssidPrefix", .string(ssidPrefix))) }
        if let passphrase { values.append(("passphrase", .string(passphrase.reveal()))) }
        if let security { values.append(("security", .string(security.rawValue))) }
        if joinOnce { values.append(("joinOnce", .boolean(true))) }
        if let days = lifeTimeInDays?.intValue { values.append(("lifeTimeInDays", .int32(Int32(clamping: days)))) }
        if hidden { values.append(("hidden", .boolean(true))) }
        var descriptors: [Int32] = []
        if let eapSettings {
            let eap = try eapSettings.dbusValue(firstHandle: 0)
            values.append(("eap", eap.value))
            descriptors = eap.descriptors
        }
        return (.vardict(values), descriptors)
    }
}

/// Apple's `NEHotspotEAPSettings`. Certificates are PEM files the application reads as its
/// user and passes to the agent as open descriptors (Apple takes keychain references).
public struct NEHotspotEAPSettings: Sendable {
    public enum EAPType: Int, Sendable {
        case tls = 13, ttls = 21, peap = 25, fast = 43
    }

    public var supportedEAPTypes: [EAPType]
    public var username: String?
    public var password: Secret?
    public var outerIdentity: String?
    /// `pap`, `chap`, `mschap`, `mschapv2` or `eap`.
    public var ttlsInnerAuthenticationType: String?
    public var trustedServerNames: [String] = []
    public var tlsClientCertificateRequired = false
    /// `1.0`, `1.1` or `1.2`.
    public var preferredTLSVersion: String?
    /// The CA certificates (one PEM file) that may sign the server's.
    public var trustedServerCertificateFile: String?
    /// The client certificate and its private key, for EAP-TLS (Apple's `setIdentity`).
    public var clientCertificateFile: String?
    public var privateKeyFile: String?
    public var privateKeyPassword: Secret?

    public init(supportedEAPTypes: [EAPType]) {
        self.supportedEAPTypes = supportedEAPTypes
    }

    /// The `eap` dictionary; each file is opened (read-only) and passed as a descriptor,
    /// numbered from `firstHandle`. The caller closes the descriptors after the call.
    func dbusValue(firstHandle: Int32) throws(AgentCallError) -> (value: DBusValue, descriptors: [Int32]) {
        var values: [(String, DBusValue)] = [
            ("supportedEAPTypes", .array(supportedEAPTypes.map { .uint32(UInt32($0.rawValue)) }, elementType: "u"))
        ]
        if let username { values.append(("username", .string(username))) }
        if let password { values.append(("password", .string(password.reveal()))) }
        if let outerIdentity { values.append(("outerIdentity", .string(outerIdentity))) }
        if let ttlsInnerAuthenticationType {
            values.append(("ttlsInnerAuthenticationType", .string(ttlsInnerAuthenticationType)))
        }
        if !trustedServerNames.isEmpty { values.append(("trustedServerNames", .strings(trustedServerNames))) }
        if tlsClientCertificateRequired { values.append(("tlsClientCertificateRequired", .boolean(true))) }
        if let preferredTLSVersion { values.append(("preferredTLSVersion", .string(preferredTLSVersion))) }
        if let privateKeyPassword { values.append(("privateKeyPassword", .string(privateKeyPassword.reveal()))) }
        var descriptors: [Int32] = []
        let files = [
            ("trustedServerCertificate", trustedServerCertificateFile), ("clientCertificate", clientCertificateFile),
            ("privateKey", privateKeyFile),
        ]
        for case (let key, let path?) in files {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                for opened in descriptors { close(opened) }
                throw AgentCallError(
                    name: nil, message: "cannot open \(path) (\(key)): \(SystemErrorText.reason(errno))")
            }
            values.append((key, .handle(firstHandle + Int32(descriptors.count))))
            descriptors.append(descriptor)
        }
        return (.vardict(values), descriptors)
    }
}

/// Apple's `NEHotspotConfigurationError`, recovered from the agent's D-Bus error name; the
/// cases with no counterpart here (5, 6, 11, 14, 16, 17) are never produced.
public enum NEHotspotConfigurationError: Int, Sendable, Error {
    case invalid = 0, invalidSSID, invalidWPAPassphrase, invalidWEPPassphrase, invalidEAPSettings
    case invalidHS20Settings, invalidHS20DomainName, userDenied, `internal`, pending, systemConfiguration
    case unknown, joinOnceNotSupported, alreadyAssociated, applicationIsNotInForeground, invalidSSIDPrefix
    case userUnauthorized, systemDenied

    /// The case the agent's error `name` stands for; `nil` for the agent's own errors (a
    /// wrong passphrase, a network out of range), which Apple's API does not tell apart.
    public init?(dbusName name: String) {
        let byName: [String: NEHotspotConfigurationError] = [
            "InvalidConfiguration": .invalid, "InvalidSSID": .invalidSSID,
            "InvalidWPAPassphrase": .invalidWPAPassphrase, "InvalidWEPPassphrase": .invalidWEPPassphrase,
            "InvalidEAPSettings": .invalidEAPSettings, "NotAuthorized": .userDenied, "Internal": .internal,
            "Pending": .pending, "SystemConfiguration": .systemConfiguration,
            "JoinOnceNotSupported": .joinOnceNotSupported,
            "AlreadyAssociated": .alreadyAssociated, "InvalidSSIDPrefix": .invalidSSIDPrefix,
        ]
        guard name.hasPrefix(AgentBus.errorPrefix),
            let error = byName[String(name.dropFirst(AgentBus.errorPrefix.count))]
        else { return nil }
        self = error
    }
}

/// Apple's error domain of `NEHotspotConfigurationManager`'s errors.
public let NEHotspotConfigurationErrorDomain = "NEHotspotConfigurationErrorDomain"

extension AgentCallError {
    /// Apple's `NEHotspotConfigurationError`, when the agent answered with one of its cases.
    public var hotspotConfigurationError: NEHotspotConfigurationError? {
        name.flatMap(NEHotspotConfigurationError.init(dbusName:))
    }

    /// The error as Apple's manager gives it: in `NEHotspotConfigurationErrorDomain`, with
    /// Apple's code (`unknown` for the agent's own errors), the agent's message as its
    /// description and its D-Bus error name under `AgentErrorName`.
    var hotspotError: NSError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message]
        if let name { info["AgentErrorName"] = name }
        return NSError(
            domain: NEHotspotConfigurationErrorDomain, code: (hotspotConfigurationError ?? .unknown).rawValue,
            userInfo: info)
    }
}

extension AgentConnection {
    /// Applies the application's own configuration and joins it (polkit: `configure-hotspot`,
    /// whose prompt names the network).
    func applyConfiguration(
        _ configuration: NEHotspotConfiguration, device: String? = nil
    ) async throws(AgentCallError) -> HotspotJoinReport {
        let (value, descriptors) = try configuration.dbusValue()
        defer { for descriptor in descriptors { Glibc.close(descriptor) } }
        let options = DBusValue.vardict(device.map { [("device", .string($0))] } ?? [])
        return HotspotJoinReport(
            try await manager(.applyConfiguration, [value, options], fileDescriptors: descriptors).first)
    }
}
