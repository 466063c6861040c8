import Foundation

/// python-dbusmock's `polkitd` template on a shared private bus: `CheckAuthorization` answers
/// yes for the actions `allow(_:)` names and no for every other (its default), whoever asks.
public final class PolkitMock: @unchecked Sendable {
    public let bus: PrivateSystemBus
    private let mock: ServiceProcess

    public init(on bus: PrivateSystemBus) throws {
        self.bus = bus
        mock = try bus.startMock(
            "polkitd", owning: "org.freedesktop.PolicyKit1", arguments: ["--template", "polkitd"],
            logName: "dbusmock-polkitd.log")
    }

    /// Every D-Bus call the mock received, one line each.
    public var log: String { mock.log }

    /// From now on exactly these actions are allowed.
    public func allow(_ actions: [String]) throws {
        try mockCall("SetAllowed", [Self.list(actions)])
    }

    /// From now on checks of these actions are answered only by `releaseHangingChecks()`, as
    /// while a person looks at an authentication dialog.
    public func hold(_ actions: [String]) throws {
        try mockCall("SimulateHangActions", [Self.list(actions)])
    }

    /// Whether a check is being held.
    public func holdsChecks() throws -> Bool {
        try mockCall("HaveHangingCalls", []).contains("true")
    }

    /// Answers the checks held so far.
    public func releaseHeldChecks() throws {
        try mockCall("ReleaseHangingCalls", [])
    }

    private static func list(_ actions: [String]) -> String {
        "@as [" + actions.map { "'\($0)'" }.joined(separator: ", ") + "]"
    }

    @discardableResult
    private func mockCall(_ method: String, _ arguments: [String]) throws -> String {
        try run(
            "/usr/bin/gdbus",
            [
                "call", "--system", "--dest", "org.freedesktop.PolicyKit1",
                "--object-path", "/org/freedesktop/PolicyKit1/Authority",
                "--method", "org.freedesktop.DBus.Mock.\(method)",
            ] + arguments, environment: bus.environment)
    }

    public func stop() { mock.stop() }
}

/// python-dbusmock's `logind` template on a shared private bus, with one session and
/// `GetSessionByPID` (which the template lacks) answering that session for every process.
/// Its object path escapes the id as logind does (session `2` is `…/session/_32`), which the
/// template does not.
public final class LogindMock: @unchecked Sendable {
    public let bus: PrivateSystemBus
    private let mock: ServiceProcess

    public init(on bus: PrivateSystemBus, session: String, uid: UInt32, user: String) throws {
        self.bus = bus
        mock = try bus.startMock(
            "logind", owning: "org.freedesktop.login1", arguments: ["--template", "logind"],
            logName: "dbusmock-logind.log")
        let path = Self.objectPath(ofSession: session)
        let escaped = String(path.split(separator: "/").last!)
        try mockCall("AddSession", ["'\(escaped)'", "'seat0'", "uint32 \(uid)", "'\(user)'", "true"])
        try mockCall(
            "AddMethod",
            [
                "'org.freedesktop.login1.Manager'", "'GetSessionByPID'", "'u'", "'o'", "'ret = \"\(path)\"'",
            ])
        // The template's GetSession does not escape: this one knows the one session.
        try mockCall(
            "AddMethod",
            [
                "'org.freedesktop.login1.Manager'", "'GetSession'", "'s'", "'o'",
                "'ret = \"\(path)\" if args[0] == \"\(session)\" else \"/org/freedesktop/login1/session/none\"'",
            ])
    }

    /// The object path logind gives session `id`: each byte that is not an ASCII letter or
    /// digit, and a leading digit, as `_` and two hex digits (`sd_bus_path_encode`).
    public static func objectPath(ofSession id: String) -> String {
        let component = id.utf8.enumerated().map { index, byte -> String in
            let letter = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            let digit = (0x30...0x39).contains(byte)
            return letter || (digit && index > 0) ? String(UnicodeScalar(byte)) : String(format: "_%02x", byte)
        }
        return "/org/freedesktop/login1/session/" + component.joined()
    }

    /// Every D-Bus call the mock received, one line each.
    public var log: String { mock.log }

    @discardableResult
    func mockCall(_ method: String, _ arguments: [String]) throws -> String {
        try run(
            "/usr/bin/gdbus",
            [
                "call", "--system", "--dest", "org.freedesktop.login1", "--object-path", "/org/freedesktop/login1",
                "--method", "org.freedesktop.DBus.Mock.\(method)",
            ] + arguments, environment: bus.environment)
    }

    public func stop() { mock.stop() }
}
