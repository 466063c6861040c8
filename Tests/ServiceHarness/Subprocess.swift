import Foundation

/// Failures of the harness itself: a service that would not start is a test failure with
/// the reason, never a skip.
public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Runs a program to completion and returns its standard output; throws with its standard
/// error when it exits non-zero.
@discardableResult
public func run(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120
) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read before waiting so a full pipe cannot block the child.
    let out = output.fileHandleForReading.readDataToEndOfFile()
    let err = errors.fileHandleForReading.readDataToEndOfFile()
    closePipes(output, errors)
    // Its output ended, so it has ended or is about to.
    guard let ended = waitForEnd(of: process, within: timeout) else {
        kill(process.processIdentifier, SIGKILL)
        waitForEnd(of: process, within: 5)
        throw HarnessError("\(executable) \(arguments.joined(separator: " ")) did not finish within \(Int(timeout)) s")
    }
    guard ended == .exited(0) else {
        throw HarnessError(
            "\(executable) \(arguments.joined(separator: " ")) \(ended): \(String(decoding: err, as: UTF8.self))")
    }
    return String(decoding: out, as: UTF8.self)
}

/// How a child process ended: its exit status, or the signal that killed it.
public enum Termination: Sendable, Hashable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    /// The signal that ended the process, if one did.
    public var signal: Int32? {
        if case .signalled(let number) = self { number } else { nil }
    }

    /// As Foundation's `terminationStatus`: the exit status, or the signal's number.
    public var rawStatus: Int32 {
        switch self {
        case .exited(let status): status
        case .signalled(let number): number
        }
    }

    /// The status a shell would show: 128 plus the signal's number for a killed process.
    public var status: Int32 {
        switch self {
        case .exited(let status): status
        case .signalled(let number): 128 + number
        }
    }

    public var description: String {
        switch self {
        case .exited(let status): "exited with status \(status)"
        case .signalled(let number): "killed by signal \(number)"
        }
    }
}

/// Waits up to `timeout` for `process` to end; `nil` while it runs. Every child a test starts
/// is waited for here, never with `waitUntilExit` alone: Foundation notices a child's exit on a
/// thread of its own and reaps it there, and with a whole suite running at once under a
/// sanitizer it has been seen to miss the exit, so the child stayed a zombie and
/// `waitUntilExit` blocked for ever (a run hung so). A child that has been a zombie for `grace`
/// seconds while Foundation still thinks it runs is reaped here. Never sooner: a child reaped
/// before Foundation sees it keeps Foundation's `Process` and its pipes alive for good
/// (LeakSanitizer counted thousands when this reaped at once).
@discardableResult
public func waitForEnd(of process: Process, within timeout: TimeInterval, grace: TimeInterval = 3) -> Termination? {
    let pid = process.processIdentifier
    var deadline = Date() + timeout
    var zombieSince: Date?
    while Date() < deadline {
        if !process.isRunning {
            // Foundation keeps the process and its pipes until someone waits for it.
            process.waitUntilExit()
            return process.terminationReason == .uncaughtSignal
                ? .signalled(process.terminationStatus) : .exited(process.terminationStatus)
        }
        if let since = zombieSince {
            var status: Int32 = 0
            if Date().timeIntervalSince(since) >= grace, waitpid(pid, &status, WNOHANG) == pid {
                return (status & 0x7f) == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
            }
        } else if hasEnded(pid) {
            zombieSince = Date()
            deadline = max(deadline, Date() + grace + 1)
        }
        usleep(10_000)
    }
    return nil
}

/// Whether the child `pid` has ended and waits to be reaped; it is left for its owner to reap.
private func hasEnded(_ pid: pid_t) -> Bool {
    var info = siginfo_t()
    return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_signo == SIGCHLD
}

/// Closes both ends of pipes a finished child used: Foundation's Process leaves them open,
/// and a test process that runs hundreds of children runs out of descriptors.
public func closePipes(_ pipes: Pipe...) {
    for pipe in pipes {
        try? pipe.fileHandleForReading.close()
        try? pipe.fileHandleForWriting.close()
    }
}

/// A long-running service process, stopped (SIGTERM, then SIGKILL) by `stop()` or deinit.
public final class ServiceProcess: @unchecked Sendable {
    public let name: String
    public let logFile: URL
    private let process = Process()

    public init(
        name: String, executable: String, arguments: [String], environment: [String: String] = [:], logFile: URL
    ) throws {
        self.name = name
        self.logFile = logFile
        guard FileManager.default.createFile(atPath: logFile.path, contents: nil) else {
            throw HarnessError("cannot create the log file \(logFile.path)")
        }
        let log = try FileHandle(forWritingTo: logFile)
        // Children inherit the test runner's blocked signals, and a service that blocks
        // SIGTERM cannot be stopped cleanly; this exec trampoline unblocks them first.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments =
            [
                "-c",
                "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
                executable,
            ] + arguments
        // Python services write their log as they go, so a service that is slow to start
        // shows how far it got.
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            .merging(["PYTHONUNBUFFERED": "1"]) { given, _ in given }
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw HarnessError("cannot start \(name) (\(executable)): \(error)")
        }
    }

    public var isRunning: Bool { process.isRunning }

    /// The process id, for signals the test sends it.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Sends `number` to the process, if it still runs.
    public func send(_ number: Int32) {
        if process.isRunning { kill(process.processIdentifier, number) }
    }

    /// Waits up to `timeout` for the process to end; `nil` if it still runs then.
    public func waitForExit(timeout: TimeInterval) -> Termination? {
        let end = waitForEnd(of: process, within: timeout)
        if end != nil { endedLock.withLock { ended = true } }
        return end
    }

    /// Set once the process was seen to end: `waitForEnd` may have reaped it without
    /// Foundation's knowing, and `stop` must not wait for it again.
    private var ended = false
    private let endedLock = NSLock()

    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Waits until `condition` holds, returning as soon as it does; throws with the service's log
    /// if it exits or times out. The bound is generous: with every suite starting its services
    /// at once under a sanitizer, two cores have been seen to take over a minute to bring up
    /// one python-dbusmock.
    public func wait(for what: String, timeout: TimeInterval = 180, until condition: () -> Bool) throws {
        let deadline = Date() + timeout
        while Date() < deadline {
            if condition() { return }
            guard process.isRunning else {
                throw HarnessError("\(name) exited (\(process.terminationStatus)) before \(what):\n\(log)")
            }
            usleep(20_000)
        }
        throw HarnessError("\(name) did not reach \(what) within \(Int(timeout)) s:\n\(log)")
    }

    public func stop() {
        guard process.processIdentifier != 0, !endedLock.withLock({ ended }) else { return }
        if process.isRunning { process.terminate() }
        if waitForEnd(of: process, within: 5) == nil {
            kill(process.processIdentifier, SIGKILL)
            waitForEnd(of: process, within: 10)
        }
    }

    deinit { stop() }
}

/// A directory under the system temporary directory, removed when released.
public final class ScratchDirectory: @unchecked Sendable {
    public let url: URL

    public init(_ prefix: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Writes a throwaway CA (`ca.pem`) and a client certificate (`client.pem`, its key
/// `client.key` encrypted with "key-pass") into `directory`, made with openssl.
public func makeTestCertificates(in directory: String) throws {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    try run(
        "/usr/bin/openssl",
        [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
            "-keyout", "\(directory)/ca.key", "-out", "\(directory)/ca.pem",
        ])
    try run(
        "/usr/bin/openssl",
        [
            "req", "-x509", "-newkey", "rsa:2048", "-days", "2", "-subj", "/CN=plug",
            "-passout", "pass:key-pass", "-keyout", "\(directory)/client.key", "-out", "\(directory)/client.pem",
        ])
}

/// Runs `body`, which blocks until a process ends, on a thread of its own: the cooperative
/// pool's two threads stay free for the test's own bus connections (a picker agent answering
/// the agent), which a test blocked in a process's run would otherwise starve under load.
public func offThePool<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// `offThePool` for a body that cannot fail.
public func offThePool<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}
