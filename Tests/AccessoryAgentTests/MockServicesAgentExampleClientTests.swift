import Foundation
import ServiceHarness
import Testing

/// `examples/pick.py`, the example client in Python over GIO, run against the built agent on a
/// private bus with python-dbusmock's NetworkManager, BlueZ and polkitd.
@Suite("Example client examples/pick.py (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentExampleClientTests {
    @Test func pickPrintsEachEventAndTheAccessoryTheKioskPolicyAdded() async throws {
        let user = try systemUser("nobody")
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [user]))
        try services.polkit.allow(["io.accessorysetup.open-session"])
        let run = try services.runScript(
            AgentPaths.exampleClient, ["ge.wled.softap", "--profiles", services.agent.profileDirectory.path], uid: user)
        #expect(run.status == 0, "\(run)")
        let record = try #require(try services.storedRecords().first, "\(run)")
        #expect(record.owner.uid == user)
        let id = record.id.uuidString.lowercased()
        let accessory = "WLED controller (WLED-AP) (\(id), authorized) ssid WLED-AP"
        #expect(
            run.lines == [
                "session /io/accessorysetup/session/1 over ge.wled.softap",
                "Activated: 0 accessories already authorized",
                "PickerDidPresent",
                "AccessoryAdded: \(accessory)",
                "PickerDidDismiss",
                "added: \(accessory)",
            ], "\(run)")
        #expect(run.err.isEmpty, "\(run)")
    }

    @Test func pickSaysWhyNothingWasAddedAndExits1() async throws {
        let services = try AgentServices()
        let profiles = services.agent.profileDirectory.path

        let restricted = try services.runScript(AgentPaths.exampleClient, ["ge.wled.softap", "--profiles", profiles])
        #expect(restricted.status == 1, "\(restricted)")
        #expect(restricted.err.contains("io.accessorysetup.Error.PickerRestricted"), "\(restricted)")
        #expect(!restricted.out.contains("added:"))

        let both = #"[{"name": "Both", "descriptor": {"ssid": "WLED-AP", "ssidPrefix": "WLED"}}]"#
        let invalid = try services.runScript(AgentPaths.exampleClient, ["ge.wled.softap", "--items", both])
        #expect(invalid.status == 1, "\(invalid)")
        #expect(invalid.err.contains("io.accessorysetup.Error.InvalidRequest: items[0].descriptor.ss"), "\(invalid)")

        let unknown = try services.runScript(AgentPaths.exampleClient, ["org.example.nothing", "--items", both])
        #expect(unknown.status == 1, "\(unknown)")
        #expect(unknown.err.contains("io.accessorysetup.Error.NoSuchProfile"), "\(unknown)")

        let usage = try services.runScript(AgentPaths.exampleClient, ["ge.wled.softap", "--items", "{}"])
        #expect(usage.status == 64, "\(usage)")
        #expect(usage.err.contains("--items"), "\(usage)")
        #expect(try services.storedRecords().isEmpty)
    }
}
