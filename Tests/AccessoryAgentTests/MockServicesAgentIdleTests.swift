import BusService
import Foundation
import ServiceHarness
import Testing

/// The agent at rest: the built agent on a private bus with python-dbusmock's NetworkManager,
/// BlueZ and polkitd.
@Suite("Agent at rest (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentIdleTests {
    /// Names of the agent's threads, as `ps -L` shows them.
    private func threadNames(_ pid: Int32) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").map { thread in
            try String(contentsOfFile: "/proc/\(pid)/task/\(thread)/comm", encoding: .utf8)
                .trimmingCharacters(in: .newlines)
        }
    }

    /// Starts the agent with `idleExit` and opens a session. The agent is idle from its start,
    /// and a loaded machine may take longer than that to make the call: then the agent has
    /// exited, and is started again, as D-Bus activation would.
    private func openSession(_ client: AgentClient, agent: AgentProcess, idleExit: Int) async throws -> ClientSession {
        for _ in 0..<10 {
            if !agent.isRunning { try agent.start(arguments: ["--idle-exit", "\(idleExit)"]) }
            do {
                return try await client.openSession("org.example.plug")
            } catch let error as BusError
                where ["org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NoReply"].contains(
                    error.name)
            {
                // Gone before the call, or while it waited in the agent's queue.
                let deadline = ContinuousClock.now + .seconds(30)
                while agent.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            }
        }
        throw HarnessError("the agent exited before each of 10 calls to open a session:\n\(agent.log)")
    }

    /// With an idle exit, an open session keeps the agent however long it lasts; once the last
    /// one has ended, the agent exits by itself.
    @Test func anIdleExitWaitsForTheLastSessionToEnd() async throws {
        let services = try AgentServices(startAgent: false)
        let client = try await services.client()
        let session = try await openSession(client, agent: services.agent, idleExit: 3)
        try await Task.sleep(for: .seconds(8))
        #expect(services.agent.isRunning, "a session is open: \(services.agent.log)")

        try await session.call("Invalidate")
        let deadline = ContinuousClock.now + .seconds(60)
        while services.agent.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(!services.agent.isRunning, "idle, the agent exits: \(services.agent.log)")
        #expect(services.agent.log.contains("stopping: idle for"), "\(services.agent.log)")
        await client.close()

        // The start's trace, for the benchmark of a start by D-Bus activation: each step from
        // the process's entry into main to its bus name, in order, each with its time.
        let trace = try #require(services.agent.log.split(separator: "\n").first { $0.contains("start trace: ") })
        let steps = trace.matches(of: /, ([a-z ]+) [0-9]+\.[0-9] ms|; ([a-z ]+) [0-9]+\.[0-9] ms/).map {
            String($0.output.1 ?? $0.output.2 ?? "")
        }
        #expect(
            steps == [
                "records read", "bus connected", "second connection", "manager exported", "bonds and kiosk policy read",
                "name owned", "total",
            ], "\(trace)")
        #expect(trace.hasPrefix("<7>start trace: began ") && trace.hasSuffix("; serving"), "\(trace)")
    }

    /// Its tasks, and their sleeps, run on a GLib thread of its own, so libdispatch's worker
    /// pool, whose monitor would wake the agent every second for as long as it lives, never
    /// starts. (The pool's threads are named after their queues, `com.apple.root.<QoS>-qos`,
    /// cut to 15 bytes, and stay a few seconds after their last job.)
    @Test func theAgentWorksWithoutLibdispatchsWorkerPool() async throws {
        let services = try AgentServices()
        let pid = try #require(services.agent.processIdentifier)
        let client = try await services.client()
        // A discovery (rescans between sleeps) that ends by its timer (a sleep).
        let (picker, _, signals) = try await showPickerThatTimesOut(client)
        #expect(signals.last?.arguments.first?["name"]?.string == "io.accessorysetup.Error.DiscoveryTimeout")
        _ = try await client.listAccessories()

        let names = try threadNames(pid)
        #expect(names.contains("tasks"), "\(names)")
        #expect(!names.contains { $0.hasSuffix("-qos") }, "\(names)")
        withExtendedLifetime(picker) {}
        await client.close()
    }
}
