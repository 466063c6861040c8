import Foundation
import ServiceHarness
import Testing

/// The harness's own child process: how it starts a program, what the program gets, and how it
/// is waited for.
@Suite struct ChildProcessTests {
    @Test func exitStatusAndSignal() throws {
        #expect(try ChildProcess("/bin/sh", ["-c", "exit 3"]).wait() == .exited(3))
        #expect(try ChildProcess("/bin/sh", ["-c", "kill -KILL $$"]).wait() == .signalled(SIGKILL))
    }

    @Test func theEnvironmentIsExactlyTheOneGiven() throws {
        let env = try ChildProcess("/usr/bin/env", environment: ["ONLY": "this"], standardOutput: .pipe)
        #expect(String(decoding: env.readOutput().output, as: UTF8.self) == "ONLY=this\n")
        #expect(env.wait() == .exited(0))
    }

    /// More than a pipe holds on both streams: read together, neither blocks the child.
    @Test func bothPipesAreReadToTheirEnds() throws {
        let script = "head -c 300000 /dev/zero; head -c 200000 /dev/zero >&2; head -c 100000 /dev/zero"
        let process = try ChildProcess("/bin/sh", ["-c", script], standardOutput: .pipe, standardError: .pipe)
        let (output, error) = process.readOutput()
        #expect(output.count == 400_000)
        #expect(error.count == 200_000)
        #expect(process.wait(within: 30) == .exited(0))
    }

    @Test func standardErrorCanGoWhereOutputGoes() throws {
        let process = try ChildProcess(
            "/bin/sh", ["-c", "echo out; echo err >&2"], standardOutput: .pipe, standardError: .output)
        #expect(String(decoding: process.readOutput().output, as: UTF8.self) == "out\nerr\n")
        process.wait()
    }

    @Test func standardInputFromAPipe() throws {
        let process = try ChildProcess("/bin/cat", standardInput: .pipe, standardOutput: .pipe)
        try process.write(Data("typed\n".utf8))
        process.closeInput()
        #expect(String(decoding: process.readOutput().output, as: UTF8.self) == "typed\n")
        #expect(process.wait() == .exited(0))
    }

    @Test func outputIntoAFile() throws {
        let scratch = try ScratchDirectory("child-process")
        let log = scratch.url.appendingPathComponent("log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        let process = try ChildProcess(
            "/bin/sh", ["-c", "echo one; echo two >&2"], standardOutput: .file(handle), standardError: .file(handle))
        try handle.close()
        #expect(process.wait() == .exited(0))
        #expect(try String(contentsOf: log, encoding: .utf8) == "one\ntwo\n")
    }

    /// The child has its three standard descriptors and no other, however many the test
    /// process holds (the pipes of other children, a bus connection).
    @Test func theChildGetsNoOtherDescriptor() throws {
        let held = open("/dev/null", O_RDONLY)
        defer { close(held) }
        let process = try ChildProcess(
            "/bin/sh", ["-c", "ls /proc/$$/fd"], standardOutput: .pipe, standardError: .pipe)
        let listed = String(decoding: process.readOutput().output, as: UTF8.self)
        #expect(listed.split(separator: "\n").sorted() == ["0", "1", "2"])
        #expect(process.wait() == .exited(0))
    }

    /// Signals the spawning thread blocks are not blocked in the child, and none is ignored.
    @Test func theChildStartsWithNoSignalBlockedOrIgnored() throws {
        var blocked = sigset_t(), previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        sigaddset(&blocked, SIGUSR1)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let process = try ChildProcess(
            "/bin/grep", ["-E", "^Sig(Blk|Ign):", "/proc/self/status"], standardOutput: .pipe)
        let status = String(decoding: process.readOutput().output, as: UTF8.self)
        #expect(process.wait() == .exited(0))
        let masks = status.split(separator: "\n").map { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
        // glibc's posix_spawn leaves its own two signals (32 and 33, below SIGRTMIN) ignored.
        let glibcs: UInt64 = 1 << 31 | 1 << 32
        #expect(masks == [0, 0] || masks == [0, glibcs], "\(status)")
    }

    @Test func waitingWithinADeadlineThenTerminating() throws {
        let process = try ChildProcess("/bin/sleep", ["60"])
        #expect(process.isRunning)
        #expect(process.wait(within: 0.2) == nil)
        process.terminate()
        #expect(process.wait(within: 30) == .signalled(SIGTERM))
        #expect(!process.isRunning)
        #expect(process.termination == .signalled(SIGTERM))
        // Reaped: the pid may be another's by now, and no signal goes to it.
        process.send(SIGKILL)
    }

    /// Reaped once: every thread that waits sees the same end.
    @Test func waitersOnSeveralThreadsSeeOneEnd() async throws {
        let process = try ChildProcess("/bin/sh", ["-c", "sleep 0.3; exit 7"])
        let ends = await withTaskGroup(of: Termination?.self) { group in
            for _ in 0..<4 { group.addTask { await offThePool { process.wait(within: 30) } } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(ends == Array(repeating: .exited(7), count: 4))
    }

    @Test func aProgramThatCannotStartIsAnError() {
        #expect {
            try ChildProcess("/nonexistent/program")
        } throws: { error in
            "\(error)".contains("/nonexistent/program") && "\(error)".contains("No such file or directory")
        }
    }
}
