import AccessoryCLI
import AccessoryCore
import Foundation
import ServiceHarness
import Testing

/// `accessoryctl setup-all`, run as a process against the built agent on a private system bus
/// with python-dbusmock's NetworkManager (HomeNet, and two Acme plugs' open setup hotspots in
/// range) and polkitd, the kiosk policy picking for root, and the ESP32-style provisioning
/// device simulator on 127.0.0.1 as each plug's SoftAP server.
@Suite(.serialized) final class MockServicesAgentSetupAllCommandTests {
    let bus: PrivateSystemBus
    let networkManager: NetworkManagerMock
    let polkit: PolkitMock
    let agent: AgentProcess
    let device: ESPProvisioningDevice
    let wifi: String
    static let pop = "abcd1234"
    static let plugs = ["Acme-Setup-4F2A", "Acme-Setup-9B1C"]

    init() throws {
        device = try ESPProvisioningDevice(security: 1, proofOfPossession: Self.pop)
        bus = try PrivateSystemBus()
        networkManager = try NetworkManagerMock(on: bus)
        polkit = try PolkitMock(on: bus)
        wifi = try networkManager.addWiFiDevice("wlan0")
        let home = try networkManager.addAccessPoint(
            wifi, name: "home", ssid: "HomeNet", bssid: "02:00:00:00:00:01", strength: 90, security: .wpa2)
        try networkManager.connectHomeNetwork(wifi, accessPoint: home, ssid: "HomeNet")
        try networkManager.addAccessPoint(
            wifi, name: "plug0", ssid: Self.plugs[0], bssid: "02:00:00:00:00:30", strength: 50)
        for plug in Self.plugs { try networkManager.giveIPv4(to: plug) }
        agent = try AgentProcess(bus: bus)
        try agent.installProfile(
            """
            {"schemaVersion": 1, "id": "org.example.espprov", "vendor": "Example", "supports": ["wifi"],
             "hotspot": {"security": "open", "passphrase": {"source": "none"}}, "handoff": "joinHotspot",
             "provisioning": {"protocol": "espIDF", "transport": "softAP", "address": "127.0.0.1:\(device.port)"},
             "items": [{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-"}}]}
            """, name: "org.example.espprov")
        try agent.writeKioskPolicy(
            #"{"schemaVersion": 1, "policies": [{"profiles": ["org.example.espprov"], "users": [0], "choose": "firstMatch"}]}"#
        )
        try agent.start()
    }

    deinit {
        agent.stop()
        polkit.stop()
        networkManager.stop()
        bus.stop()
        device.stop()
    }

    func setupAll(proofOfPossession: String, json: Bool, extra: [String] = ["--timeout", "5"]) throws
        -> RunningAccessoryctl
    {
        try RunningAccessoryctl(
            ["setup-all", "org.example.espprov"] + extra + [
                "--ssid", "HomeNet", "--passphrase-file",
                try device.writeFile("home.pass", "home-passphrase"), "--pop-file",
                try device.writeFile("shelf.pop", proofOfPossession),
            ] + (json ? ["--json"] : []), environment: bus.environment, deadline: .seconds(300))
    }

    /// Switches on plug `index` of `plugs`: its setup hotspot comes into range.
    func addPlug(_ index: Int) throws {
        try networkManager.addAccessPoint(
            wifi, name: "plug\(index)", ssid: Self.plugs[index], bssid: "02:00:00:00:00:3\(index)",
            strength: UInt8(50 - index))
    }

    func records() throws -> [AccessoryRecord] { try AccessoryStore(url: agent.storeURL).load() }

    /// The agent is killed while the batch looks for the next plug, once the first is set up
    /// and the home network is back, and started again: the batch goes on, sets up the second
    /// plug (switched on meanwhile), and the first is not given the network again.
    @Test func everyPlugIsSetUpOnceAndTheBatchOutlivesTheAgent() async throws {
        // Discovery waits long enough for the kill to find the batch discovering under load;
        // with --maximum 2 the batch ends once both are set up.
        let batch = try setupAll(
            proofOfPossession: Self.pop, json: true, extra: ["--timeout", "120", "--maximum", "2"])
        let first = try await poll(timeout: .seconds(120)) {
            try self.records().first { $0.network != nil }
        }
        let done = try #require(first, "no plug was set up: \(agent.log)")
        let discovering = try await poll(timeout: .seconds(60)) {
            self.agent.log.components(separatedBy: "discovery started").count == 3 ? true : nil
        }
        #expect(discovering == true, "the batch did not look for the next plug: \(agent.log)")
        try agent.kill()
        try addPlug(1)
        try agent.start()
        let run = await batch.finish()
        #expect(run.code == .success, "\(run.out)\n\(run.err)\n\(agent.log)")
        #expect(run.err.contains("The agent went away"), "\(run.err)")
        let results = try #require(
            try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [[String: Any]], "\(run.out)")
        let ssids = results.compactMap { ($0["accessory"] as? [String: Any])?["ssid"] as? String }
        #expect(ssids.sorted() == Self.plugs, "\(run.out)")
        #expect(results.allSatisfy { $0["result"] as? String == "setUp" }, "\(run.out)")
        let stored = try records()
        #expect(Set(stored.compactMap { $0.network == nil ? nil : $0.ssid?.description }) == Set(Self.plugs))
        // The first plug's record still holds the network of its one setup.
        #expect(stored.first { $0.id == done.id }?.network == done.network)
        #expect(try networkManager.activeConnectionID(on: wifi) == "HomeNet")
    }

    /// A plug that turns the proof of possession away fails with the device's verdict, is not
    /// tried again nor kept, and the batch ends with a table saying so.
    @Test func aPlugThatFailsIsReportedOnceAndNotKept() async throws {
        try addPlug(1)
        let batch = try setupAll(proofOfPossession: "not-the-pop", json: false)
        let run = await batch.finish()
        #expect(run.code == .failure, "\(run.err)\n\(agent.log)")
        let failures = run.outLines.filter { $0.contains("ProvisioningWrongProofOfPossession") }
        #expect(failures.count == 2, "\(run.out)")
        for ssid in Self.plugs {
            #expect(failures.filter { $0.contains(ssid) }.count == 1, "\(run.out)")
        }
        // A line for each as it failed, then the table.
        #expect(run.outLines.filter { $0.hasPrefix("[") && $0.contains(": failed: the device refused") }.count == 2)
        let table = run.outLines.drop { !$0.hasPrefix("ACCESSORY") }
        #expect(table.count == 3 && table.dropFirst().allSatisfy { $0.contains(" failed ") }, "\(run.out)")
        #expect(try records().isEmpty)
        #expect(!(run.out + run.err + agent.log).contains("not-the-pop"))
    }
}
