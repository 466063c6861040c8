import AccessoryCore
import FoundationEssentials
import GLibRuntime
import Glibc
import Synchronization

/// SIGINT and SIGTERM for `accessoryctl`: instead of killing the process half-way through a
/// join, a signal cancels the running command, whose cleanup then runs to completion (no
/// profile or checkpoint left, the previous network back), and the process exits with 128 plus
/// the signal's number. While input is being read nothing has happened yet, so there a signal
/// ends the process at once, with the terminal's echo restored if a prompt had turned it off.
///
/// The handler is a plain `sigaction` one that writes the signal's number into a pipe, read by
/// a thread of its own. Dispatch signal sources are not used: on Linux they read a `signalfd`,
/// which sees a signal only if every thread blocks it, and the main thread does not; a signal
/// the kernel hands to it is then lost or swallowed.
enum Interruption {
    /// What the handler reads and writes: only lock-free atomics and memory set up before the
    /// handler is installed, which is what a signal handler may touch.
    private static let firstSignal = Atomic<Int32>(0)
    private static let wakeUp = Atomic<Int32>(-1)
    private static let reading = Atomic<Int>(Reading.no.rawValue)
    /// Written only before `reading` says it holds something, read only after.
    nonisolated(unsafe) private static let savedTerminal = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    private static let installed = Locked(false)
    private static let action = Locked<(@Sendable () -> Void)?>(nil)

    private enum Reading: Int {
        case no, withoutTerminal, withTerminal
    }

    /// Installs the handler for `signals`, once per process; later calls do nothing.
    static func install(signals: [Int32] = [SIGINT, SIGTERM]) {
        let first = installed.withLock { installed in
            defer { installed = true }
            return !installed
        }
        guard first else { return }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            // Without the pipe the default action stays: the process ends without cleanup.
            return
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        wakeUp.store(ends[1], ordering: .sequentiallyConsistent)
        let reader = ends[0]
        GLibThread.detach(name: "accessoryctl.signals") {
            var byte: UInt8 = 0
            while true {
                let count = read(reader, &byte, 1)
                if count == 1 {
                    action.withLock { $0 }?()
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }

        for number in signals {
            var handling = sigaction()
            handling.__sigaction_handler.sa_handler = { number in
                let savedErrno = errno
                defer { errno = savedErrno }
                let isFirst = Interruption.firstSignal.compareExchange(
                    expected: 0, desired: number, ordering: .sequentiallyConsistent
                ).exchanged
                Interruption.endIfReading(signal: number)
                if isFirst {
                    var byte = UInt8(truncatingIfNeeded: number)
                    _ = write(Interruption.wakeUp.load(ordering: .sequentiallyConsistent), &byte, 1)
                }
            }
            sigemptyset(&handling.sa_mask)
            handling.sa_flags = SA_RESTART
            sigaction(number, &handling, nil)
        }
    }

    /// The signal that arrived first, if any.
    static var received: Int32? {
        let number = firstSignal.load(ordering: .sequentiallyConsistent)
        return number == 0 ? nil : number
    }

    /// Calls `action` on the first signal (at once if one has already arrived), on the signal
    /// thread.
    static func onSignal(_ newAction: @escaping @Sendable () -> Void) {
        action.withLock { $0 = newAction }
        if received != nil { newAction() }
    }

    /// Runs `body`, which reads input, with signals ending the process at once; `terminal` is
    /// the terminal setting to restore first, if `body` changed it.
    static func whileReadingInput<T>(restoring terminal: termios? = nil, _ body: () throws -> T) rethrows -> T {
        if let terminal { savedTerminal.pointee = terminal }
        reading.store(
            (terminal == nil ? Reading.withoutTerminal : .withTerminal).rawValue, ordering: .sequentiallyConsistent)
        defer { reading.store(Reading.no.rawValue, ordering: .sequentiallyConsistent) }
        // A signal that came just before reading began would otherwise only cancel a task that
        // is about to block in read(2).
        if let number = received { endIfReading(signal: number) }
        return try body()
    }

    /// Ends the process if input is being read. Async-signal-safe: called from the handler.
    private static func endIfReading(signal number: Int32) {
        switch Reading(rawValue: reading.load(ordering: .sequentiallyConsistent)) {
        case .withTerminal?:
            tcsetattr(STDIN_FILENO, TCSANOW, savedTerminal)
        case .withoutTerminal?:
            break
        case .no?, nil:
            return
        }
        // _exit, not exit: the reading thread may be blocked inside stdio holding its locks, and
        // there is nothing to flush or tear down yet.
        var newline = UInt8(ascii: "\n")
        _ = write(STDERR_FILENO, &newline, 1)
        _exit(128 + number)
    }
}
