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
    let process = try ChildProcess(
        executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
        standardOutput: .pipe, standardError: .pipe)
    // Read before waiting so a full pipe cannot block the child.
    let (out, err) = process.readOutput()
    // Its output ended, so it has ended or is about to.
    guard let ended = process.wait(within: timeout) else {
        process.send(SIGKILL)
        process.wait(within: 5)
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

/// A long-running service process, stopped (SIGTERM, then SIGKILL) by `stop()` or deinit.
public final class ServiceProcess: Sendable {
    public let name: String
    public let logFile: URL
    private let process: ChildProcess

    public init(
        name: String, executable: String, arguments: [String], environment: [String: String] = [:], logFile: URL
    ) throws {
        self.name = name
        self.logFile = logFile
        guard FileManager.default.createFile(atPath: logFile.path, contents: nil) else {
            throw HarnessError("cannot create the log file \(logFile.path)")
        }
        let log = try FileHandle(forWritingTo: logFile)
        defer { try? log.close() }
        do {
            // Python services write their log as they go, so a service that is slow to start
            // shows how far it got.
            process = try ChildProcess(
                executable, arguments,
                environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }
                    .merging(["PYTHONUNBUFFERED": "1"]) { given, _ in given },
                standardOutput: .file(log), standardError: .file(log))
        } catch {
            throw HarnessError("cannot start \(name) (\(executable)): \(error)")
        }
    }

    public var isRunning: Bool { process.isRunning }

    /// The process id, for signals the test sends it.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Sends `number` to the process, if it still runs.
    public func send(_ number: Int32) { process.send(number) }

    /// Waits up to `timeout` for the process to end; `nil` if it still runs then.
    public func waitForExit(timeout: TimeInterval) -> Termination? { process.wait(within: timeout) }

    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Waits until `condition` holds, returning as soon as it does; throws with the service's log
    /// if it exits or times out. The bound is generous: with every suite starting its services
    /// at once under a sanitizer, two cores have been seen to take over a minute to bring up
    /// one python-dbusmock.
    public func wait(for what: String, timeout: TimeInterval = 180, until condition: () -> Bool) throws {
        let deadline = Date() + timeout
        while Date() < deadline {
            if condition() { return }
            if let ended = process.termination {
                throw HarnessError("\(name) \(ended) before \(what):\n\(log)")
            }
            usleep(20_000)
        }
        throw HarnessError("\(name) did not reach \(what) within \(Int(timeout)) s:\n\(log)")
    }

    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        if process.wait(within: 5) == nil {
            process.send(SIGKILL)
            process.wait(within: 10)
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
