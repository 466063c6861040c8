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
        let run = try await services.runScript(
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

    /// Custom filtering (`filterDiscoveryResults`): the client hears both Shelly BLU devices
    /// with their manufacturer data, admits the one whose data says so, and only that one is
    /// shown, so the kiosk policy picks it.
    @Test func aFilteringClientAdmitsOneOfTwoDevicesByItsAdvertisedData() async throws {
        let user = try systemUser("nobody")
        let services = try AgentServices(
            kiosk: kioskPolicy(profiles: ["cloud.shelly.blu"], users: [user]), startAgent: false)
        try services.agent.installShippedProfile("shelly-blu.json")
        try services.agent.start()
        try services.polkit.allow(["io.accessorysetup.open-session"])
        try services.bluez.addDevice("02:00:00:00:0B:01", name: "SBBT-2C", manufacturerData: [0x0BA9: [0x01, 0x10]])
        try services.bluez.addDevice("02:00:00:00:0B:02", name: "SBMO-003Z", manufacturerData: [0x0BA9: [0x02, 0x20]])
        let run = try await services.runScript(
            AgentPaths.exampleClient,
            [
                "cloud.shelly.blu", "--profiles", services.agent.profileDirectory.path, "--discovery-timeout",
                "unbounded", "--admit", "manufacturerData:0x0BA9=02",
            ], uid: user)
        #expect(run.status == 0, "\(run)")
        let discovered = run.lines.filter { $0.hasPrefix("AccessoryDiscovered: ") }
        #expect(discovered.count == 2, "\(run)")
        #expect(
            discovered.contains {
                $0.contains("bluetoothAddress 02:00:00:00:0B:01") && $0.contains("manufacturerData 0x0BA9=0110")
                    && $0.contains("rssi -60") && $0.hasSuffix(": not admitted")
            }, "\(run)")
        #expect(
            discovered.contains {
                $0.contains("bluetoothAddress 02:00:00:00:0B:02") && $0.contains("manufacturerData 0x0BA9=0220")
                    && $0.hasSuffix(": admitted")
            }, "\(run)")
        let records = try services.storedRecords()
        #expect(records.map(\.bluetoothIdentifier?.description) == ["02:00:00:00:0B:02"], "\(run)")
    }

    @Test func finishPickerDiscoveryWithNothingAdmittedEndsWithDiscoveryTimeout() async throws {
        let services = try AgentServices(
            kiosk: kioskPolicy(profiles: ["org.example.plug"], users: [0]))
        let run = try await services.runScript(
            AgentPaths.exampleClient,
            [
                "org.example.plug", "--profiles", services.agent.profileDirectory.path, "--discovery-timeout",
                "unbounded", "--admit", "bssid=02:00:00:00:00:99", "--finish-discovery", "2",
            ])
        #expect(run.status == 1, "\(run)")
        #expect(
            run.lines.filter { $0.hasPrefix("AccessoryDiscovered: ") && $0.contains("ssid Acme-Setup-") }.count == 2)
        #expect(run.lines.contains("FinishPickerDiscovery"), "\(run)")
        #expect(run.lines.contains { $0.hasPrefix("PickerDidDismiss: io.accessorysetup.Error.DiscoveryTimeout") })
        #expect(try services.storedRecords().isEmpty)
    }

    @Test func pickSaysWhyNothingWasAddedAndExits1() async throws {
        let services = try AgentServices()
        let profiles = services.agent.profileDirectory.path

        let restricted = try await services.runScript(
            AgentPaths.exampleClient, ["ge.wled.softap", "--profiles", profiles])
        #expect(restricted.status == 1, "\(restricted)")
        #expect(restricted.err.contains("io.accessorysetup.Error.PickerRestricted"), "\(restricted)")
        #expect(!restricted.out.contains("added:"))

        let both = #"[{"name": "Both", "descriptor": {"ssid": "WLED-AP", "ssidPrefix": "WLED"}}]"#
        let invalid = try await services.runScript(AgentPaths.exampleClient, ["ge.wled.softap", "--items", both])
        #expect(invalid.status == 1, "\(invalid)")
        #expect(invalid.err.contains("io.accessorysetup.Error.InvalidRequest: items[0].descriptor.ss"), "\(invalid)")

        let unknown = try await services.runScript(AgentPaths.exampleClient, ["org.example.nothing", "--items", both])
        #expect(unknown.status == 1, "\(unknown)")
        #expect(unknown.err.contains("io.accessorysetup.Error.NoSuchProfile"), "\(unknown)")

        let usage = try await services.runScript(AgentPaths.exampleClient, ["ge.wled.softap", "--items", "{}"])
        #expect(usage.status == 64, "\(usage)")
        #expect(usage.err.contains("--items"), "\(usage)")
        #expect(try services.storedRecords().isEmpty)
    }
}
