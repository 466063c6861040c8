import AgentInterface
import BusService
import DBusValues

/// Asks polkit whether a caller may do something, with a `system-bus-name` subject, as
/// hostnamed and fwupd do. Root passes without asking; no polkit on the bus means no.
struct Polkit: Sendable {
    let bus: BusConnection

    /// Whether `sender` (running as `uid`) may perform `action`; every decision is logged.
    /// `details` reach the authentication agent, which shows them in the action's message
    /// (`$(ssid)`): plain text the agent chose, never anything a caller could use as markup.
    func check(
        _ action: PolkitAction, sender: String, uid: UInt32, interactive: Bool, details: [String: String] = [:]
    ) async -> Bool {
        if uid == 0 {
            Journal.info("polkit: \(action.rawValue) allowed for \(sender) (uid 0)")
            return true
        }
        let subject = DBusValue.tuple([.string("system-bus-name"), .vardict([("name", .string(sender))])])
        let details = DBusValue.dictionary(
            details.sorted { $0.key < $1.key }.map { DBusValue.Entry(key: .string($0.key), value: .string($0.value)) },
            entryType: "{ss}")
        let allowUserInteraction: UInt32 = 1
        do {
            let reply = try await bus.call(
                destination: "org.freedesktop.PolicyKit1", path: "/org/freedesktop/PolicyKit1/Authority",
                interface: "org.freedesktop.PolicyKit1.Authority", method: "CheckAuthorization",
                [
                    subject, .string(action.rawValue), details, .uint32(interactive ? allowUserInteraction : 0),
                    .string(""),
                ],
                timeout: interactive ? .seconds(300) : .seconds(25), allowInteractiveAuthorization: interactive)
            let result = reply.first?.elements ?? []
            let allowed = result.first?.bool ?? false
            Journal.notice("polkit: \(action.rawValue) \(allowed ? "allowed" : "refused") for \(sender) (uid \(uid))")
            return allowed
        } catch {
            Journal.warning(
                "polkit: \(action.rawValue) refused for \(sender) (uid \(uid)): polkit did not answer: \(error)")
            return false
        }
    }
}
