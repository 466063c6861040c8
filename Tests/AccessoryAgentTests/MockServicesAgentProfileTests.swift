import BusService
import Foundation
import ServiceHarness
import Testing

/// Installed profiles as the built agent finds them, on a private bus with python-dbusmock's
/// NetworkManager, BlueZ and polkitd: what it read is kept only while the file stays as it was.
@Suite("Agent profiles (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentProfileTests {
    @Test func aProfileChangedOnDiskIsReadAgainWhereverItIs() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        let named = services.agent.profileDirectory.appendingPathComponent("org.example.plug.json")
        _ = try await client.openSession("org.example.plug")

        // Rewritten in place, with as many bytes.
        let unsupported = plugProfile.replacingOccurrences(of: #""schemaVersion": 1"#, with: #""schemaVersion": 9"#)
        #expect(unsupported.utf8.count == plugProfile.utf8.count)
        try Data(unsupported.utf8).write(to: named)
        let refused = await expectBusError("io.accessorysetup.Error.InvalidProfile") {
            _ = try await client.openSession("org.example.plug")
        }
        #expect(refused?.contains("schemaVersion") == true, "\(refused ?? "")")

        // Mended, under a name of its own: found by listing the directory.
        try FileManager.default.removeItem(at: named)
        try services.agent.installProfile(plugProfile, name: "acme-plug")
        _ = try await client.openSession("org.example.plug")

        // Removed.
        try FileManager.default.removeItem(at: services.agent.profileDirectory.appendingPathComponent("acme-plug.json"))
        _ = await expectBusError("io.accessorysetup.Error.NoSuchProfile") {
            _ = try await client.openSession("org.example.plug")
        }
        #expect(services.agent.isRunning)
        await client.close()
    }

    /// `Reload` (`systemctl reload accessory-setup`) reads unchanged profiles again as well, and
    /// checks their product images again.
    @Test func reloadChecksTheProductImagesOfAnUnchangedProfileAgain() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        _ = try await client.openSession("ge.wled.softap")
        try FileManager.default.removeItem(
            at: services.agent.profileDirectory.appendingPathComponent("images/led-controller.svg"))

        try await client.manager("Reload", [])
        // Its file is not named after its id (wled.json), so the refusal is logged and the
        // profile is not found.
        _ = await expectBusError("io.accessorysetup.Error.NoSuchProfile") {
            _ = try await client.openSession("ge.wled.softap")
        }
        let refusal = services.agent.log.split(separator: "\n").first {
            $0.contains("wled.json is installed but refused")
        }
        #expect(refusal?.contains("led-controller.svg") == true, "\(services.agent.log)")
        await client.close()
    }

    /// A `Reload` whose kiosk policy is refused still reads the profiles again.
    @Test func aReloadWithARefusedKioskPolicyStillReadsTheProfilesAgain() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        _ = try await client.openSession("ge.wled.softap")
        try FileManager.default.removeItem(
            at: services.agent.profileDirectory.appendingPathComponent("images/led-controller.svg"))
        try services.agent.writeKioskPolicy("{")

        _ = await expectBusError("io.accessorysetup.Error.InvalidKioskPolicy") {
            try await client.manager("Reload", [])
        }
        _ = await expectBusError("io.accessorysetup.Error.NoSuchProfile") {
            _ = try await client.openSession("ge.wled.softap")
        }
        await client.close()
    }
}
