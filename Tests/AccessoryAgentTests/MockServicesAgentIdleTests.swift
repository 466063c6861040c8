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

    /// With an idle exit, an open session keeps the agent however long it lasts; once the last
    /// one has ended, the agent exits by itself.
    @Test func anIdleExitWaitsForTheLastSessionToEnd() async throws {
        let services = try AgentServices(startAgent: false)
        // Idle from its start: long enough for the session to be opened on a loaded machine.
        try services.agent.start(arguments: ["--idle-exit", "10"])
        let client = try await services.client()
        let session = try await client.openSession("org.example.plug")
        try await Task.sleep(for: .seconds(12))
        #expect(services.agent.isRunning, "a session is open: \(services.agent.log)")

        try await session.call("Invalidate")
        let deadline = ContinuousClock.now + .seconds(60)
        while services.agent.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(!services.agent.isRunning, "idle, the agent exits: \(services.agent.log)")
        #expect(services.agent.log.contains("stopping: idle for"), "\(services.agent.log)")
        await client.close()
    }

    /// Its tasks, and their sleeps, run on a GLib thread of its own, so libdispatch's worker
    /// pool, whose monitor would wake the agent every second for as long as it lives, never
    /// starts. (The pool's threads are named after their queues, `com.apple.root.<QoS>-qos`,
    /// cut to 15 bytes, and stay a few seconds after their last job.)
    @Test func theAgentWorksWithoutLibdispatchsWorkerPool() async throws {
        let services = try AgentServices()
        let pid = try #require(services.agent.processIdentifier)
        let client = try await services.client()
        let picker = try await TestPicker(on: client.bus, behaviour: .wait)
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let session = try await client.openSession("org.example.plug")
        _ = try await session.activate()
        // A discovery (rescans between sleeps) that ends by its timer (a sleep).
        let nowhere = pickerItem("Acme plug", [("ssidPrefix", "Acme-Setup-ZZ")])
        try await session.showPicker([nowhere], settings: .vardict([("discoveryTimeout", .uint32(1))]))
        let signals = try await session.waitForDismiss()
        #expect(signals.last?.arguments.first?["name"]?.string == "io.accessorysetup.Error.DiscoveryTimeout")
        _ = try await client.listAccessories()

        let names = try threadNames(pid)
        #expect(names.contains("tasks"), "\(names)")
        #expect(!names.contains { $0.hasSuffix("-qos") }, "\(names)")
        withExtendedLifetime(picker) {}
        await client.close()
    }
}
