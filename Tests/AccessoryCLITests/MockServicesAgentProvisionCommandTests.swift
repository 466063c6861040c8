import AccessoryCLI
import Foundation
import ServiceHarness
import Testing

/// `accessoryctl pick --provision`, run as a process against the built agent on a private
/// system bus with python-dbusmock's NetworkManager (HomeNet, and an Acme plug's open setup
/// hotspot in range) and polkitd, and the ESP32-style provisioning device simulator on
/// 127.0.0.1 as the plug's SoftAP server.
@Suite(.serialized) final class MockServicesAgentProvisionCommandTests {
    let bus: PrivateSystemBus
    let networkManager: NetworkManagerMock
    let polkit: PolkitMock
    let agent: AgentProcess
    let device: ESPProvisioningDevice
    let wifi: String
    static let pop = "abcd1234"

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
            wifi, name: "plug", ssid: "Acme-Setup-4F2A", bssid: "02:00:00:00:00:31", strength: 50)
        agent = try AgentProcess(bus: bus)
        try agent.installProfile(
            """
            {"schemaVersion": 1, "id": "org.example.espprov", "vendor": "Example", "supports": ["wifi"],
             "hotspot": {"security": "open", "passphrase": {"source": "none"}}, "handoff": "joinHotspot",
             "provisioning": {"protocol": "espIDF", "transport": "softAP", "address": "127.0.0.1:\(device.port)"},
             "items": [{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-"}}]}
            """, name: "org.example.espprov")
        try agent.start()
    }

    deinit {
        agent.stop()
        polkit.stop()
        networkManager.stop()
        bus.stop()
        device.stop()
    }

    func accessoryctl(_ arguments: [String]) throws -> Run {
        try accessoryctlProcess(arguments, environment: bus.environment, deadline: .seconds(90))
    }

    @Test func pickProvisionPicksJoinsGivesTheNetworkAndLeaves() throws {
        let run = try accessoryctl([
            "pick", "org.example.espprov", "--select", "Acme-Setup-4F2A", "--timeout", "20", "--provision",
            "--ssid", "HomeNet", "--passphrase-file", try device.writeFile("home.pass", "home-passphrase"),
            "--pop-file", try device.writeFile("plug.pop", Self.pop),
        ])
        #expect(run.code == .success, "\(run.err)\n\(agent.log)")
        #expect(run.out.hasSuffix("Acme plug joined 'HomeNet' at 192.168.1.42.\n"), "\(run.out)")
        for line in [
            "Joined Acme-Setup-4F2A on wlan0.", "Giving Acme plug 'HomeNet' through the agent…",
            "Connecting to the device on its hotspot…", "Session established.", "The device sees 6 networks.",
            "The device is joining the network…", "Left Acme-Setup-4F2A, back on 'HomeNet'.",
        ] {
            #expect(run.err.contains(line), "\(line) is missing from:\n\(run.err)")
        }
        #expect(!(run.out + run.err + agent.log).contains(Self.pop))
        #expect(!(run.out + run.err + agent.log).contains("home-passphrase"))
        #expect(try networkManager.activeConnectionID(on: wifi) == "HomeNet")
    }

    @Test func aRefusedProofOfPossessionIsNamedAndTheHotspotLeftAllTheSame() throws {
        let run = try accessoryctl([
            "pick", "org.example.espprov", "--select", "Acme-Setup-4F2A", "--timeout", "20", "--provision", "--json",
            "--ssid", "HomeNet", "--passphrase-file", try device.writeFile("home.pass", "home-passphrase"),
            "--pop-file", try device.writeFile("plug.pop", "not-the-pop"),
        ])
        #expect(run.code == .failure, "\(run.err)")
        #expect(run.err.contains("error: the device refused the proof of possession"), "\(run.err)")
        #expect(run.err.contains("Left Acme-Setup-4F2A, back on 'HomeNet'."), "\(run.err)")
        #expect(try networkManager.activeConnectionID(on: wifi) == "HomeNet")
    }

    @Test func provisioningOptionsWithoutProvisionAreRefusedAsUsage() throws {
        let alone = try accessoryctl([
            "pick", "org.example.espprov", "--select", "Acme-Setup-4F2A", "--ssid", "HomeNet",
        ])
        #expect(alone.code == .usage)
        #expect(alone.err.contains("--ssid goes with --provision"), "\(alone.err)")
        let unnamed = try accessoryctl([
            "pick", "org.example.espprov", "--provision", "--passphrase-file",
            try device.writeFile("home.pass", "home-passphrase"),
        ])
        #expect(unnamed.code == .usage)
        #expect(unnamed.err.contains("name the network with --ssid"), "\(unnamed.err)")
    }
}
