import Dispatch
import Foundation
import Synchronization

/// SIGINT and SIGTERM for `accessoryctl`: instead of killing the process half-way through a
/// join, a signal cancels the running command, whose cleanup then runs to completion (no
/// profile or checkpoint left, the previous network back), and the process exits with 128 plus
/// the signal's number. While input is being read nothing has happened yet, so there a signal
/// ends the process at once, with the terminal's echo restored if a prompt had turned it off.
public final class Interruption: Sendable {
    private struct State {
        var signal: Int32?
        var onSignal: (@Sendable () -> Void)?
        /// Set while input is read: the terminal settings to put back, or `nil` when the input
        /// is not a terminal.
        var reading: termios??
    }

    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private let shared = Shared()
    /// Kept for the life of the handling; a released source stops delivering.
    private let sources: Mutex<[any DispatchSourceSignal]>

    /// The one instance of the process, once `AccessoryCtl.main` installed it.
    static let current = Mutex<Interruption?>(nil)

    init(signals: [Int32] = [SIGINT, SIGTERM]) {
        let shared = self.shared
        // A queue of its own, which always gets a thread: the global queues share a pool as wide
        // as the cores, and a command blocked reading the passphrase can hold it, so that the
        // handler would never run.
        let queue = DispatchQueue(label: "accessoryctl.signals")
        sources = Mutex(signals.map { number in
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                let (first, reading, onSignal) = shared.state.withLock { state in
                    let first = state.signal == nil
                    if first { state.signal = number }
                    return (first, state.reading, state.onSignal)
                }
                if let reading {
                    if var saved = reading { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
                    // _exit, not exit: the reading thread is blocked inside stdio holding its
                    // locks, and there is nothing to flush or tear down yet.
                    _ = "\n".withCString { Glibc.write(STDERR_FILENO, $0, 1) }
                    _exit(128 + number)
                }
                if first { onSignal?() }
            }
            source.resume()
            return source
        })
    }

    /// The signal that arrived first, if any.
    var received: Int32? { shared.state.withLock { $0.signal } }

    /// Calls `action` on the first signal (at once if one has already arrived).
    func onSignal(_ action: @escaping @Sendable () -> Void) {
        let arrived = shared.state.withLock { state in
            state.onSignal = action
            return state.signal != nil
        }
        if arrived { action() }
    }

    /// Runs `body`, which reads input, with signals ending the process at once; `terminal` is
    /// the terminal setting to restore first, if `body` changed it.
    static func whileReadingInput<T>(restoring terminal: termios? = nil, _ body: () throws -> T) rethrows -> T {
        let interruption = current.withLock { $0 }
        interruption?.shared.state.withLock { $0.reading = .some(terminal) }
        defer { interruption?.shared.state.withLock { $0.reading = nil } }
        return try body()
    }

    deinit {
        sources.withLock { $0.forEach { $0.cancel() } }
    }
}
