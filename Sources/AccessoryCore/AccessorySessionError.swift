/// Why a session request failed or a picker ended: the counterpart of `ASError`, with Apple's
/// codes. Apple's `success` (0) is not an error and has no case.
public enum AccessorySessionError: Error, Hashable, Sendable, CustomStringConvertible {
    case unknown(reason: String)
    /// The session could not start (its profile or records could not be loaded).
    case activationFailed(reason: String)
    /// Setting up the picked accessory failed (pairing, bridging, joining its hotspot).
    case connectionFailed(reason: String)
    /// Discovery found nothing the picker could show in time.
    case discoveryTimeout
    /// The picker front end the request needs is not there (Apple: no device discovery extension).
    case extensionNotFound
    /// The session was invalidated; open a new one.
    case invalidated
    /// The request is malformed or outside the session's profile; `field` names the culprit.
    case invalidRequest(field: String, reason: String)
    case pickerAlreadyActive
    /// No picker may be shown to this client now (no picker front end for its seat, say).
    case pickerRestricted(reason: String)
    case userCancelled
    /// The person or the administrator does not allow this.
    case userRestricted(reason: String)

    /// `ASError.Code`, with Apple's raw values.
    public enum Code: Int, Hashable, Sendable, CaseIterable {
        case unknown = 1
        case activationFailed = 100
        case connectionFailed = 150
        case discoveryTimeout = 200
        case extensionNotFound = 300
        case invalidated = 400
        case invalidRequest = 450
        case pickerAlreadyActive = 500
        case pickerRestricted = 550
        case userCancelled = 700
        case userRestricted = 750

        /// Apple's name of the code (`pickerAlreadyActive`).
        public var name: String {
            switch self {
            case .unknown: "unknown"
            case .activationFailed: "activationFailed"
            case .connectionFailed: "connectionFailed"
            case .discoveryTimeout: "discoveryTimeout"
            case .extensionNotFound: "extensionNotFound"
            case .invalidated: "invalidated"
            case .invalidRequest: "invalidRequest"
            case .pickerAlreadyActive: "pickerAlreadyActive"
            case .pickerRestricted: "pickerRestricted"
            case .userCancelled: "userCancelled"
            case .userRestricted: "userRestricted"
            }
        }

        /// `PickerAlreadyActive`: Apple's name with its first letter raised.
        public var errorName: String { name.prefix(1).uppercased() + name.dropFirst() }
    }

    public var code: Code {
        switch self {
        case .unknown: .unknown
        case .activationFailed: .activationFailed
        case .connectionFailed: .connectionFailed
        case .discoveryTimeout: .discoveryTimeout
        case .extensionNotFound: .extensionNotFound
        case .invalidated: .invalidated
        case .invalidRequest: .invalidRequest
        case .pickerAlreadyActive: .pickerAlreadyActive
        case .pickerRestricted: .pickerRestricted
        case .userCancelled: .userCancelled
        case .userRestricted: .userRestricted
        }
    }

    public var errorName: String { code.errorName }

    /// The request field an `invalidRequest` is about (`items[0].descriptor.ssid`).
    public var field: String? {
        if case .invalidRequest(let field, _) = self { return field }
        return nil
    }

    public var description: String {
        switch self {
        case .unknown(let reason):
            "the request failed: \(reason)"
        case .activationFailed(let reason):
            "the session could not be activated: \(reason)"
        case .connectionFailed(let reason):
            "setting up the accessory failed: \(reason)"
        case .discoveryTimeout:
            "no matching accessory was found in time; check it is powered on, in setup mode and nearby"
        case .extensionNotFound:
            "no picker front end is available for this request"
        case .invalidated:
            "the session has ended; open a new one"
        case .invalidRequest(let field, let reason):
            "\(field): \(reason)"
        case .pickerAlreadyActive:
            "a picker is already shown for this session; wait for it to be dismissed"
        case .pickerRestricted(let reason):
            "the picker cannot be shown: \(reason)"
        case .userCancelled:
            "the picker was cancelled"
        case .userRestricted(let reason):
            "not allowed: \(reason)"
        }
    }
}

extension AccessorySessionError {
    /// The accessory itself failed a setup step (pairing, bridging, the hotspot handoff).
    public static func accessoryFailed(_ reason: String) -> AccessorySessionError {
        .connectionFailed(reason: "\(reason); bring it closer, check it is in setup mode and try again")
    }

    /// The client called `failAuthorization` while the picker waited for its confirmation.
    public static let applicationFailedAuthorization = AccessorySessionError.connectionFailed(
        reason: "the application could not finish setting up the accessory and failed its authorization")

    /// The record was removed while the picker waited for the client's confirmation.
    public static let removedBeforeAuthorization = AccessorySessionError.connectionFailed(
        reason: "the accessory was removed before the application finished its authorization")

    /// The client neither finished nor failed the authorization within `timeout`.
    public static func authorizationTimedOut(_ timeout: Duration) -> AccessorySessionError {
        .connectionFailed(
            reason:
                "the application did not finish the accessory's authorization within \(timeout.components.seconds) s "
                + "(ShowPicker's authorizationTimeout); set the accessory up again")
    }
}
