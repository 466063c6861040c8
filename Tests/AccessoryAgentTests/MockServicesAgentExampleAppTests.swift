import AccessoryCore
import Foundation
import ServiceHarness
import Testing

/// `examples/PickAccessory`, the example application in Swift over the AccessorySetupKit
/// library, built with the package and run against the built agent on a private bus with
/// python-dbusmock's NetworkManager, BlueZ and polkitd.
@Suite("Example app pick-accessory (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentExampleAppTests {
    @Test func picksAnAccessoryThroughTheLibraryAndJoinsItsHotspot() async throws {
        let app = try AgentProcess.builtProduct("pick-accessory").path
        let user = try systemUser("nobody")
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [user]))
        try services.polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.join"])

        let run = try services.runProgram(app, ["ge.wled.softap", "--join"], uid: user)
        #expect(run.status == 0, "\(run)")
        let record = try #require(try services.storedRecords().first, "\(run)")
        #expect(record.owner.uid == user)
        let accessory = "WLED controller (WLED-AP), authorized, id \(record.id.uuidString.lowercased())"
        #expect(
            run.lines == [
                "activated: 0 accessories already authorized",
                "pickerDidPresent",
                "accessoryAdded: \(accessory)",
                "pickerDidDismiss",
                "added: \(accessory)",
                "joined: WLED-AP on wlan0",
            ], "\(run)")
        #expect(run.err.isEmpty, "\(run)")
        #expect(try services.networkManager.activeConnectionID(on: services.device) == "Accessory WLED-AP")
    }

    @Test func saysWhyNothingWasAddedAndExits1() async throws {
        let app = try AgentProcess.builtProduct("pick-accessory").path
        let services = try AgentServices()

        let restricted = try services.runProgram(app, ["ge.wled.softap"])
        #expect(restricted.status == 1, "\(restricted)")
        #expect(restricted.err.contains("io.accessorysetup.Error.PickerRestricted"), "\(restricted)")
        #expect(!restricted.out.contains("added:"), "\(restricted)")

        let unknown = try services.runProgram(app, ["org.example.nothing"])
        #expect(unknown.status == 1, "\(unknown)")
        #expect(unknown.err.contains("io.accessorysetup.Error.NoSuchProfile"), "\(unknown)")

        let usage = try services.runProgram(app, [])
        #expect(usage.status == 64, "\(usage)")
        #expect(try services.storedRecords().isEmpty)
    }
}
