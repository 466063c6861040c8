import AccessoryCore
import BusService
import Foundation
import GLibRuntime
import ServiceHarness
import Testing

/// The agent's records across restarts and crashes, and many sessions at once: the built agent
/// on a private bus with python-dbusmock's NetworkManager (the project's template), BlueZ and
/// polkitd.
@Suite("Agent records and load (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentRecordTests {
    @Test func recordsSurviveARestartAfterSIGTERM() async throws {
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [0]))
        let client = try await services.client()
        let session = try await client.openSession("ge.wled.softap")
        _ = try await session.activate()
        try await session.showPicker([wledItem])
        let signals = try await session.waitForDismiss()
        let added = try #require(signals.first { $0.member == "AccessoryAdded" }?.arguments.first)
        let id = try #require(added["id"]?.string)

        let termination = try services.agent.terminate()
        #expect(termination == .exited(0), "the agent stops cleanly on SIGTERM: \(services.agent.log)")
        #expect(services.agent.log.contains("stopping: SIGTERM"))
        // Its sessions ended with it, each told why.
        let ended = try await session.signals.wait(for: "Invalidated") { $0.contains { $0.member == "Invalidated" } }
        #expect(ended.last?.arguments.first?["name"]?.string == "io.accessorysetup.Error.Invalidated")

        try services.agent.start()
        #expect(services.agent.log.contains("with 1 records"))
        let again = try await services.client()
        let reopened = try await again.openSession("ge.wled.softap")
        let activated = try await reopened.activate()
        #expect(activated.compactMap { $0["id"]?.string } == [id])
        #expect(activated.first?["displayName"]?.string == "WLED controller (WLED-AP)")
        #expect(activated.first?["state"]?.string == "authorized")
        #expect(try await again.listAccessories().compactMap { $0["id"]?.string } == [id])
        await again.close()
        await client.close()
    }
}
