import AccessoryCore
import AgentInterface
import BusService
import Glibc

/// A refusal or failure from the agent or the bus: the D-Bus error name, where there is one,
/// and a message a person can act on.
public struct AgentCallError: Error, Sendable, CustomStringConvertible {
    public let name: String?
    public let message: String

    public init(name: String?, message: String) {
        self.name = name
        self.message = message
    }

    static let notRunningNames: Set<String> = [
        "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
    ]

    init(_ error: BusError) {
        if let name = error.name, Self.notRunningNames.contains(name) {
            // In a Flatpak sandbox the bus proxy answers the same for a name the manifest does
            // not grant as for one nobody owns.
            let sandboxed = access("/.flatpak-info", F_OK) == 0
            self.init(
                name: name,
                message: sandboxed
                    ? "the agent (\(AgentBus.name)) cannot be reached from this sandbox: the application's "
                        + "Flatpak manifest must grant --system-talk-name=\(AgentBus.name) in finish-args, "
                        + "and the accessory-setup package must be installed on the host"
                    : "the agent (\(AgentBus.name)) is not running and cannot be started; "
                        + "install the accessory-setup package, or use the direct commands as root")
        } else {
            self.init(name: error.name, message: error.message)
        }
    }

    /// The agent is not on the bus, nor can the bus start it.
    public var isNotRunning: Bool { name.map(Self.notRunningNames.contains) ?? false }

    /// polkit, or the session's restrictions, refused the call.
    public var isNotAuthorized: Bool {
        name == AgentError.Code.notAuthorized.dbusName || name == AccessorySessionError.Code.userRestricted.dbusName
    }

    /// No installed profile has the id, or, to a sandboxed application, none that names it.
    public var isNoSuchProfile: Bool { name == AgentError.Code.noSuchProfile.dbusName }

    /// Whether the agent answered with the error `code` names.
    public func `is`(_ error: some NamedError) -> Bool { name == error.dbusName }

    /// Apple's `ASError`, when the agent answered with one of its codes.
    public var accessoryError: ASError? {
        guard let name else { return nil }
        return ASError(name: name, message: message)
    }

    public var description: String { message }
}
