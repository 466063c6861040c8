import AccessoryCore
import BusService
import FoundationEssentials
import Glibc

/// Where one call's (or the agent's start's) time goes: each step with how long it took since
/// the step before, counted from the call's arrival on the bus (the process's entry into main).
/// Logged at debug priority as one line, which the lab's benchmarks read (`bench/README.md`,
/// "The join's trace", "The agent's start"); it names steps, never a value.
final class CallTrace: Sendable {
    private let what: String
    /// The word for the beginning in the line: "arrived" for a call, "began" for the start.
    private let beginning: String
    private let began: ContinuousClock.Instant
    /// The beginning by the wall clock, in microseconds since 1970: the benchmarks set it
    /// against the time they started the client, which is the client's own part.
    private let beganMicroseconds: Int64
    private let steps = Locked<[(name: String, ended: ContinuousClock.Instant)]>([])

    convenience init(_ what: String, of call: MethodCall) {
        self.init(what, since: call.received, beginning: "arrived")
    }

    init(_ what: String, since began: ContinuousClock.Instant, beginning: String = "began") {
        self.what = what
        self.beginning = beginning
        self.began = began
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let since = ContinuousClock.now - began
        beganMicroseconds =
            Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
            - since.components.seconds * 1_000_000 - since.components.attoseconds / 1_000_000_000_000
    }

    /// Marks the end of the step `name`; a step marked again keeps its first end.
    func ended(_ name: String) {
        let now = ContinuousClock.now
        steps.withLock { steps in
            if !steps.contains(where: { $0.name == name }) { steps.append((name, now)) }
        }
    }

    /// The join's steps in the backend, named for what ended when it reports the next one.
    func ended(before step: JoinStep) {
        switch step {
        case .scanning: ended("profile checked")
        case .checkpoint: ended("access point looked up")
        case .adding: ended("checkpoint taken")
        case .associating: ended("request answered")
        case .configuringAddress: ended("associated")
        }
    }

    /// The line: `join trace: arrived 1733520000123456 us; polkit 41.2 ms, …; total 120.5 ms`.
    func log(_ outcome: String) {
        let line = steps.withLock { steps in
            var previous = began
            var parts: [String] = []
            for step in steps {
                parts.append("\(step.name) \(Self.milliseconds(step.ended - previous)) ms")
                previous = step.ended
            }
            let total = Self.milliseconds((steps.last?.ended ?? began) - began)
            return parts.joined(separator: ", ") + "; total \(total) ms"
        }
        Journal.log(.debug, "\(what) trace: \(beginning) \(beganMicroseconds) us; \(line); \(outcome)")
    }

    private static func milliseconds(_ duration: Duration) -> String {
        let tenths = (duration.components.seconds * 10_000 + duration.components.attoseconds / 100_000_000_000_000)
        return "\(tenths / 10).\(tenths % 10)"
    }
}
