/// Why provisioning an ESP-IDF device failed. `code` is stable; `errorName` names it on the
/// agent's bus.
public enum ProvisioningError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The device turned the proof of possession (security 1) or the username and password
    /// (security 2) away.
    case wrongProofOfPossession(SecurityScheme)
    /// The device wants a proof of possession, or its profile does (`minimumSecurity` 1 or
    /// more), and none was given.
    case proofOfPossessionRequired
    /// The device runs another security scheme than the one asked for.
    case securityMismatch(requested: SecurityScheme, device: SecurityScheme)
    case unsupportedSecurity(Int)
    /// The device offers a weaker scheme than its profile accepts (`minimumSecurity`): nothing
    /// was sent.
    case securityBelowMinimum(device: Int, minimum: Int)
    /// The device answered a step with a status other than success.
    case deviceStatus(step: String, ProvisioningStatus)
    /// The device's answer to the handshake does not prove it knows the session key.
    case deviceNotVerified(SecurityScheme)
    case malformedMessage(String, String)
    case malformedVersion(String)
    case invalidCredentials(field: String, String)
    /// The device tried the network and gave up with this reason.
    case connectionFailed(ssid: [UInt8], WiFiFailureReason)
    /// The device reports it is disconnected and not trying.
    case disconnected
    case sessionNotEstablished
    case decryptionFailed
    case crypto(String)
    /// The HTTP or BLE exchange failed; `endpoint` is the protocomm endpoint.
    case transport(endpoint: String, String)
    /// The device closed the connection instead of answering, which is how protocomm refuses.
    case connectionClosed(endpoint: String)
    case timedOut(String, seconds: Int)
    /// The task provisioning was cancelled (Ctrl-C, SIGTERM, a closed session).
    case cancelled
    /// The device's setup API wants a login (a Shelly with authentication on): nothing was sent.
    case deviceAuthenticationRequired(step: String)
    /// The device's setup API turned a request away, in its own words if it gave any.
    case deviceRefused(step: String, String)
    /// The device took the network but was not seen on it within the time its profile allows.
    case notOnHomeNetwork(ssid: [UInt8], seconds: Int)

    public var code: Int {
        switch self {
        case .wrongProofOfPossession: 400
        case .proofOfPossessionRequired: 401
        case .securityMismatch: 402
        case .unsupportedSecurity: 403
        case .deviceStatus: 404
        case .deviceNotVerified: 405
        case .malformedMessage: 406
        case .malformedVersion: 407
        case .invalidCredentials: 408
        case .connectionFailed: 409
        case .disconnected: 410
        case .sessionNotEstablished: 411
        case .decryptionFailed: 412
        case .crypto: 413
        case .transport: 414
        case .connectionClosed: 415
        case .timedOut: 416
        case .cancelled: 417
        case .securityBelowMinimum: 418
        case .deviceAuthenticationRequired: 419
        case .deviceRefused: 420
        case .notOnHomeNetwork: 421
        }
    }

    public var errorName: String {
        let name =
            switch self {
            case .wrongProofOfPossession: "ProvisioningWrongProofOfPossession"
            case .proofOfPossessionRequired: "ProvisioningProofOfPossessionRequired"
            case .securityMismatch: "ProvisioningSecurityMismatch"
            case .unsupportedSecurity: "ProvisioningUnsupportedSecurity"
            case .securityBelowMinimum: "ProvisioningSecurityBelowMinimum"
            case .deviceStatus: "ProvisioningDeviceStatus"
            case .deviceNotVerified: "ProvisioningDeviceNotVerified"
            case .malformedMessage, .malformedVersion: "ProvisioningMalformedMessage"
            case .invalidCredentials: "ProvisioningInvalidCredentials"
            case .connectionFailed(_, let reason):
                reason == .authError
                    ? "ProvisioningWrongPassphrase"
                    : reason == .networkNotFound ? "ProvisioningNetworkNotFound" : "ProvisioningConnectionFailed"
            case .disconnected: "ProvisioningConnectionFailed"
            case .sessionNotEstablished: "ProvisioningSessionNotEstablished"
            case .decryptionFailed: "ProvisioningDecryptionFailed"
            case .crypto: "ProvisioningCryptoFailed"
            case .transport, .connectionClosed: "ProvisioningTransportFailed"
            case .timedOut: "TimedOut"
            case .cancelled: "Cancelled"
            case .deviceAuthenticationRequired: "ProvisioningAuthenticationRequired"
            case .deviceRefused: "ProvisioningDeviceRefused"
            case .notOnHomeNetwork: "ProvisioningNotOnHomeNetwork"
            }
        return name
    }

    public var description: String {
        switch self {
        case .wrongProofOfPossession(.sec2):
            "the device refused the username and proof of possession (security 2); check both, as printed on "
                + "the device or its box"
        case .wrongProofOfPossession:
            "the device refused the proof of possession; check the code printed on the device or its box"
        case .proofOfPossessionRequired:
            "the device asks for a proof of possession; give it with --pop-file or --pop-stdin"
        case .securityMismatch(let requested, let device):
            "\(requested) was asked for but the device uses \(device); use --security \(device.rawValue)"
        case .unsupportedSecurity(let version):
            "the device uses security scheme \(version), which this client does not know (it knows 0, 1 and 2)"
        case .securityBelowMinimum(let device, let minimum):
            "the device offers security \(device), and its profile accepts security \(minimum) at least "
                + "(minimumSecurity): it may not be the device you picked, and nothing was sent"
        case .deviceStatus(let step, let status):
            "the device answered \(step) with '\(status)' (status \(status.rawValue))"
        case .deviceNotVerified(let scheme):
            "the device's answer to the \(scheme) handshake does not check out: it does not know the session "
                + "key, so it may not be the device you meant"
        case .malformedMessage(let message, let reason):
            "the \(message) is malformed: \(reason)"
        case .malformedVersion(let reason):
            "the device's proto-ver answer is not understood: \(reason)"
        case .invalidCredentials(let field, let reason):
            "the home network's \(field) \(reason)"
        case .connectionFailed(let ssid, let reason):
            switch reason {
            case .authError:
                "the device could not join '\(Self.display(ssid))': the passphrase is wrong "
                    + "(the device reports an authentication error)"
            case .networkNotFound:
                "the device could not join '\(Self.display(ssid))': it cannot find that network "
                    + "(the device reports network not found); check the SSID and that it is in range"
            default:
                "the device could not join '\(Self.display(ssid))' (\(reason))"
            }
        case .disconnected:
            "the device reports it is disconnected and not trying to join; send the network again"
        case .sessionNotEstablished:
            "no secure session with the device yet; the handshake must finish first"
        case .decryptionFailed:
            "a message from the device did not decrypt; the session is out of step, start again"
        case .crypto(let reason):
            "a cryptographic operation failed: \(reason)"
        case .transport(let endpoint, let reason):
            "talking to the device's \(endpoint) endpoint failed: \(reason)"
        case .connectionClosed(let endpoint):
            "the device closed the connection instead of answering on \(endpoint)"
        case .timedOut(let what, let seconds):
            "\(what) did not finish within \(seconds) s"
        case .cancelled:
            "provisioning was interrupted; the device may hold the credentials sent so far"
        case .deviceAuthenticationRequired(let step):
            "the device asks for its login at \(step) (its web interface is password-protected): switch the "
                + "protection off on the device, or reset it to factory settings; nothing was sent"
        case .deviceRefused(let step, let reason):
            "the device refused \(step): \(reason)"
        case .notOnHomeNetwork(let ssid, let seconds):
            "the device took '\(Self.display(ssid))' but was not seen on it within \(seconds) s: check the "
                + "passphrase and that the network reaches where the device is, then set it up again"
        }
    }

    private static func display(_ ssid: [UInt8]) -> String {
        (try? SSID(bytes: ssid))?.escaped ?? "hex:" + Hex.string(ssid)
    }
}
