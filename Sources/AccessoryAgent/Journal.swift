import AccessoryCore
import FoundationEssentials

/// The agent's log: one line per state change and per authorization decision, on standard
/// error with the `<N>` priority prefix journald reads (sd-daemon(3)). Never given a secret.
public enum Journal {
    public enum Priority: Int, Sendable {
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7
    }

    private static let lock = Locked(())

    /// Writes one line: every control or format character of `message` (a newline, ESC, a
    /// bidi override a client put in a name) is escaped, so no client can forge a line or
    /// disguise one.
    public static func log(_ priority: Priority, _ message: String) {
        let line = terminalSafe(message)
        lock.withLock { _ in
            StandardStream.error.write("<\(priority.rawValue)>\(line)\n")
        }
    }

    public static func error(_ message: String) { log(.error, message) }
    public static func warning(_ message: String) { log(.warning, message) }
    public static func notice(_ message: String) { log(.notice, message) }
    public static func info(_ message: String) { log(.info, message) }
}
