import Foundation
import Glibc
import ServiceHarnessShim

/// A child process started with `posix_spawn`, for the tests. Foundation's `Process` is not
/// used: its `run()` on Linux overreads `readdir`'s buffer while it looks for the highest open
/// descriptor and can crash the test process (swiftlang/swift-corelibs-foundation#5472), and it
/// reaps its children on a thread of its own.
///
/// The child gets its standard streams as asked and no other descriptor, an empty signal mask
/// and every signal's default disposition. It is reaped once, by whichever call first sees it
/// ended, and how it ended is kept; no signal is sent to it once it is reaped.
/// Unchecked: `lock` guards every mutable property.
public final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    public enum Redirect: Sendable {
        /// The test process's own.
        case inherit
        /// `/dev/null`.
        case null
        /// A pipe whose other end the parent holds: `readOutput` reads standard output and
        /// error, `write` writes standard input.
        case pipe
        /// A descriptor of the caller's, which stays the caller's to close.
        case descriptor(Int32)
        /// For standard error: wherever standard output goes.
        case output

        /// An open file of the caller's, a log say.
        public static func file(_ handle: FileHandle) -> Redirect { .descriptor(handle.fileDescriptor) }
    }

    public let executable: String
    public let arguments: [String]
    public let processIdentifier: pid_t

    private let lock = NSLock()
    private var ended: Termination?
    /// The parent's ends of the pipes; -1 for none or once closed.
    private var input: Int32 = -1
    private var output: Int32 = -1
    private var error: Int32 = -1

    /// Starts `executable` (a path, not looked up in `PATH`) with `arguments` and exactly
    /// `environment`.
    public init(
        _ executable: String, _ arguments: [String] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        standardInput: Redirect = .null, standardOutput: Redirect = .null, standardError: Redirect = .null
    ) throws {
        self.executable = executable
        self.arguments = arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Descriptors to close in the parent once the child has its copies.
        var childEnds: [Int32] = []
        var parentEnds: [Int32] = [-1, -1, -1]
        func fail(_ what: String, _ code: Int32) -> HarnessError {
            for descriptor in childEnds + parentEnds where descriptor >= 0 { close(descriptor) }
            return HarnessError("cannot start \(executable): \(what): \(String(cString: strerror(code)))")
        }
        for (target, redirect) in [standardInput, standardOutput, standardError].enumerated() {
            let target = Int32(target)
            switch redirect {
            case .inherit:
                break
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard harness_pipe_cloexec(&ends) == 0 else { throw fail("pipe2", errno) }
                let (parent, child) = target == 0 ? (ends[1], ends[0]) : (ends[0], ends[1])
                parentEnds[Int(target)] = parent
                childEnds.append(child)
                posix_spawn_file_actions_adddup2(&actions, child, target)
            case .descriptor(let descriptor) where descriptor < 3 && descriptor != target:
                // A standard descriptor may be replaced before it is copied: copy it aside first.
                let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 3)
                guard copy >= 0 else { throw fail("descriptor \(descriptor)", errno) }
                childEnds.append(copy)
                posix_spawn_file_actions_adddup2(&actions, copy, target)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            case .output:
                precondition(target == 2, "only standard error can go where standard output goes")
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
            }
        }
        harness_spawn_file_actions_addclosefrom(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var pid: pid_t = 0
        let code = Self.withCStrings([executable] + arguments) { argv in
            Self.withCStrings(environment.map { "\($0.key)=\($0.value)" }) { envp in
                posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            }
        }
        guard code == 0 else { throw fail("posix_spawn", code) }
        for descriptor in childEnds { close(descriptor) }
        processIdentifier = pid
        (input, output, error) = (parentEnds[0], parentEnds[1], parentEnds[2])
    }

    deinit {
        for descriptor in [input, output, error] where descriptor >= 0 { close(descriptor) }
        _ = reap()
    }

    /// How the child ended; `nil` while it runs.
    public var termination: Termination? { lock.withLock { reap() } }

    public var isRunning: Bool { termination == nil }

    /// Sends `signal` to the child, unless it has been reaped (its pid may be another's by then).
    public func send(_ signal: Int32) {
        lock.withLock {
            if reap() == nil { _ = kill(processIdentifier, signal) }
        }
    }

    /// Sends SIGTERM.
    public func terminate() { send(SIGTERM) }

    /// Waits up to `timeout` seconds for the child to end and reaps it; `nil` if it still runs.
    @discardableResult
    public func wait(within timeout: TimeInterval) -> Termination? {
        let deadline = Date() + timeout
        var pause: useconds_t = 1_000
        while true {
            if let ended = termination { return ended }
            guard Date() < deadline else { return nil }
            usleep(pause)
            pause = min(pause * 2, 10_000)
        }
    }

    /// Waits for the child to end however long it takes.
    @discardableResult
    public func wait() -> Termination {
        while true {
            if let ended = wait(within: 3600) { return ended }
        }
    }

    /// Reads the standard output and error pipes (those that are pipes) together to their ends,
    /// so that neither fills while the other is read, and closes them.
    public func readOutput() -> (output: Data, error: Data) {
        let descriptors = lock.withLock {
            defer { (output, error) = (-1, -1) }
            return [output, error]
        }
        var data = [Data(), Data()]
        var open = descriptors.map { $0 >= 0 }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while open.contains(true) {
            var polled = descriptors.indices.filter { open[$0] }.map {
                pollfd(fd: descriptors[$0], events: Int16(POLLIN), revents: 0)
            }
            guard poll(&polled, nfds_t(polled.count), -1) >= 0 || errno == EINTR else { break }
            for entry in polled where entry.revents != 0 {
                let index = descriptors.firstIndex(of: entry.fd)!
                let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    data[index].append(contentsOf: buffer[0..<count])
                } else if count == 0 || errno != EINTR && errno != EAGAIN {
                    open[index] = false
                }
            }
        }
        for descriptor in descriptors where descriptor >= 0 { close(descriptor) }
        return (data[0], data[1])
    }

    /// Writes `data` to the child's standard input pipe.
    public func write(_ data: Data) throws {
        let descriptor = lock.withLock { input }
        guard descriptor >= 0 else { throw HarnessError("\(executable): no standard input pipe to write to") }
        var written = 0
        while written < data.count {
            let count = data.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw HarnessError("\(executable): writing its input: \(String(cString: strerror(errno)))")
            }
            written += count
        }
    }

    /// Closes the child's standard input pipe: it reads the end of its input.
    public func closeInput() {
        let descriptor = lock.withLock {
            defer { input = -1 }
            return input
        }
        if descriptor >= 0 { close(descriptor) }
    }

    /// Reaps the child if it has ended; the caller holds `lock` (or is `deinit`).
    private func reap() -> Termination? {
        if let ended { return ended }
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(processIdentifier, &status, WNOHANG) } while result < 0 && errno == EINTR
        if result == processIdentifier {
            ended = (status & 0x7f) == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
        } else if result < 0 {
            // Reaped by someone else (ECHILD): ended, how is not known.
            ended = .exited(-1)
        }
        return ended
    }

    /// Calls `body` with `strings` as a C array of C strings ending in a null pointer.
    private static func withCStrings<Result>(
        _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Result
    ) -> Result {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
