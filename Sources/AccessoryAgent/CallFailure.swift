import AccessoryCore
import AgentInterface
import FoundationEssentials
import GLibRuntime

/// An error a method call is answered with: a D-Bus error name and a message a person can act on.
struct CallFailure: Error, Sendable {
    let name: String
    let message: String

    init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    init(_ error: AgentError) { self.init(name: error.dbusName, message: error.description) }
    init(_ error: AccessorySessionError) { self.init(name: error.dbusName, message: error.description) }
    init(_ error: HotspotError) { self.init(name: error.dbusName, message: error.description) }
    init(_ error: ProvisioningError) { self.init(name: error.dbusName, message: error.description) }
    init(_ error: ImprovError) { self.init(name: error.dbusName, message: error.description) }

    static func invalidArguments(_ field: String, _ reason: String) -> CallFailure {
        CallFailure(AgentError.invalidArguments(field: field, reason: reason))
    }

    /// `NotAuthorized` whatever polkit would say; `message` says why.
    static func refused(_ message: String) -> CallFailure {
        CallFailure(name: AgentError.notAuthorized(action: "").dbusName, message: message)
    }

    static let accessDenied = CallFailure(
        name: "org.freedesktop.DBus.Error.AccessDenied",
        message: "only the connection that opened the session may call it")
}
