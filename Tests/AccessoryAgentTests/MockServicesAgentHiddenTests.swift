import BusService
import Foundation
import ServiceHarness
import Testing

/// A profile whose setup hotspot is hidden: the agent's discovery probes for its items' exact
/// SSIDs, so the hotspot (which the mock NetworkManager lists only after a scan probed for it,
/// as a hidden access point answers only such a probe) reaches the picker and can be picked.
@Suite("Agent picker over a hidden hotspot (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentHiddenTests {
    static let quietProfile = """
        {
          "schemaVersion": 1,
          "id": "org.example.quiet",
          "vendor": "Example",
          "supports": ["wifi"],
          "hotspot": { "security": "open", "passphrase": { "source": "none" }, "hidden": true },
          "handoff": "joinHotspot",
          "items": [ { "name": "Quiet plug", "descriptor": { "ssid": "Quiet-Setup-4004" } } ]
        }
        """
    static let quiet = Array("Quiet-Setup-4004".utf8)

    @Test func aHiddenHotspotIsProbedForAndPicked() async throws {
        let services = try AgentServices(startAgent: false)
        try services.agent.installProfile(Self.quietProfile, name: "org.example.quiet")
        try services.agent.start()
        try services.networkManager.addHiddenAccessPoint(
            services.device, name: "quiet", ssid: "Quiet-Setup-4004", bssid: "02:00:00:00:00:50")
        let client = try await services.client()
        let picker = try await TestPicker(on: client.bus, behaviour: .choose(ssid: "Quiet-Setup-4004"))
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let session = try await client.openSession("org.example.quiet")
        _ = try await session.activate()
        let item = pickerItem("Quiet plug", [("ssid", "Quiet-Setup-4004")])
        try await session.showPicker([item], settings: .vardict([("discoveryTimeout", .uint32(30))]))
        let signals = try await session.waitForDismiss()
        #expect(signals.map(\.member) == ["Activated", "PickerDidPresent", "AccessoryAdded", "PickerDidDismiss"])
        let added = try #require(signals.first { $0.member == "AccessoryAdded" }?.arguments.first)
        #expect(added["ssid"]?.string == "Quiet-Setup-4004")
        let probes = try services.networkManager.scanRequests()
        #expect(probes.contains([Self.quiet]), "no scan probed for the hidden SSID: \(probes)")
        #expect(probes.allSatisfy { $0.isEmpty || $0 == [Self.quiet] })
        _ = picker
        await client.close()
    }

    /// More hidden SSIDs than one scan takes are probed for in turns: no request carries more
    /// than 15, and two requests in a row cover all 20.
    @Test func twentyHiddenSSIDsAreProbedForFifteenAScan() async throws {
        let names = (0..<20).map { String(format: "Quiet-%02d", $0) }
        let items = names.map { #"{ "name": "Quiet \#($0)", "descriptor": { "ssid": "\#($0)" } }"# }
        let profile = Self.quietProfile.replacingOccurrences(
            of: #"[ { "name": "Quiet plug", "descriptor": { "ssid": "Quiet-Setup-4004" } } ]"#,
            with: "[" + items.joined(separator: ", ") + "]")
        let services = try AgentServices(startAgent: false)
        try services.agent.installProfile(profile, name: "org.example.quiet")
        try services.agent.start()
        let client = try await services.client()
        let picker = try await TestPicker(on: client.bus, behaviour: .wait)
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let session = try await client.openSession("org.example.quiet")
        _ = try await session.activate()
        try await session.showPicker(
            names.map { pickerItem("Quiet \($0)", [("ssid", $0)]) },
            settings: .vardict([("discoveryTimeout", .uint32(60))]))
        let probes = try await poll(timeout: .seconds(30)) {
            let probing = try services.networkManager.scanRequests().filter { !$0.isEmpty }
            return probing.count >= 2 ? probing : nil
        }
        let requests = try #require(probes, "fewer than two scans probed for the hidden SSIDs")
        #expect(requests.allSatisfy { $0.count == 15 }, "\(requests.map(\.count))")
        #expect(Set(requests[0] + requests[1]) == Set(names.map { Array($0.utf8) }))
        try await session.call("Invalidate")
        _ = picker
        await client.close()
    }

    /// Without `hidden` in the profile, nothing is probed for: the scans stay broadcast scans,
    /// which do not tell anyone nearby which SSIDs the machine looks for.
    @Test func aBroadcastHotspotsProfileProbesForNothing() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        let picker = try await TestPicker(on: client.bus, behaviour: .wait)
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let session = try await client.openSession("org.example.plug")
        _ = try await session.activate()
        try await session.showPicker(
            [pickerItem("Acme plug", [("ssid", "Acme-Setup-4F2A")])],
            settings: .vardict([("discoveryTimeout", .uint32(60))]))
        try await picker.waitForEntries(["Acme-Setup-4F2A"])
        try await waitForScans(services, atLeast: 2)
        #expect(try services.networkManager.scanRequests().allSatisfy(\.isEmpty))
        try await session.call("Invalidate")
        await client.close()
    }

    private func waitForScans(_ services: AgentServices, atLeast count: Int) async throws {
        let scans = try await poll(timeout: .seconds(20)) {
            let requests = try services.networkManager.scanRequests()
            return requests.count >= count ? requests : nil
        }
        if scans == nil { throw HarnessError("fewer than \(count) scans were requested") }
    }
}
