/// Why a request to the agent's manager failed, outside any session: profiles, polkit, picker
/// agent registration, records looked up by id. Session requests fail with
/// `AccessorySessionError`, joins with `HotspotError`.
public enum AgentError: Error, Hashable, Sendable, CustomStringConvertible {
    /// polkit refused `action` (a polkit action id, or what was refused).
    case notAuthorized(action: String)
    /// No installed profile has this id.
    case noSuchProfile(String)
    /// A client-supplied profile file was refused; every fault names its field.
    case invalidProfile(ProfileError)
    /// The caller has no accessory record with this id (another user's records count as none).
    case noSuchAccessory(String)
    /// A picker agent is already registered for this logind session or process.
    case pickerAgentAlreadyRegistered(scope: String)
    /// The caller registered no picker agent at this object path.
    case noSuchPickerAgent(path: String)
    /// A method argument is malformed; `field` names it.
    case invalidArguments(field: String, reason: String)
    /// The kiosk policy file was refused; the agent keeps the policy it had.
    case invalidKioskPolicy(KioskPolicyError)
    /// The caller asked for more than the agent holds for one client (`what`, such as "open
    /// sessions on this connection"); `advice` says how to stay within it.
    case limitExceeded(what: String, limit: Int, advice: String)
    /// The client took longer than `seconds` to hand over what the call needs (a profile).
    case timedOut(what: String, seconds: Int)

    public enum Code: String, Hashable, Sendable, CaseIterable {
        case notAuthorized = "NotAuthorized"
        case noSuchProfile = "NoSuchProfile"
        case invalidProfile = "InvalidProfile"
        case noSuchAccessory = "NoSuchAccessory"
        case pickerAgentAlreadyRegistered = "AlreadyExists"
        case noSuchPickerAgent = "DoesNotExist"
        case invalidArguments = "InvalidArguments"
        case invalidKioskPolicy = "InvalidKioskPolicy"
        case limitExceeded = "LimitsExceeded"
        case timedOut = "TimedOut"

        public var errorName: String { rawValue }
    }

    public var code: Code {
        switch self {
        case .notAuthorized: .notAuthorized
        case .noSuchProfile: .noSuchProfile
        case .invalidProfile: .invalidProfile
        case .noSuchAccessory: .noSuchAccessory
        case .pickerAgentAlreadyRegistered: .pickerAgentAlreadyRegistered
        case .noSuchPickerAgent: .noSuchPickerAgent
        case .invalidArguments: .invalidArguments
        case .invalidKioskPolicy: .invalidKioskPolicy
        case .limitExceeded: .limitExceeded
        case .timedOut: .timedOut
        }
    }

    public var errorName: String { code.errorName }

    public var description: String {
        switch self {
        case .notAuthorized(let action):
            "not authorized by polkit for \(action); ask an administrator, or run from an active local session"
        case .noSuchProfile(let id):
            "no installed profile has the id '\(id)'; profiles are installed in /etc/accessory-setup/profiles "
                + "or /usr/share/accessory-setup/profiles"
        case .invalidProfile(let error):
            "the profile was refused:\n\(error)"
        case .noSuchAccessory(let id):
            "you have no accessory with the id '\(id)'; 'accessoryctl list' shows yours"
        case .pickerAgentAlreadyRegistered(let scope):
            "a picker agent is already registered for \(scope); unregister it first"
        case .noSuchPickerAgent(let path):
            "no picker agent of yours is registered at \(path)"
        case .invalidArguments(let field, let reason):
            "\(field): \(reason)"
        case .invalidKioskPolicy(let error):
            "the kiosk policy was refused and the previous one is kept:\n\(error)"
        case .limitExceeded(let what, let limit, let advice):
            "at most \(limit) \(what) are allowed; \(advice)"
        case .timedOut(let what, let seconds):
            "\(what) did not arrive within \(seconds) s; write it whole and close the descriptor you pass"
        }
    }
}
