import AccessoryCLI
import Foundation
import ServiceHarness
import Testing

/// `accessoryctl pick --provision`, run as a process against the built agent on a private
/// system bus with python-dbusmock's NetworkManager (HomeNet, and an Acme plug's open setup
/// hotspot in range) and polkitd, and the ESP32-style provisioning device simulator on
/// 127.0.0.1 as the plug's SoftAP server.
@Suite(.serialized) final class MockServicesAgentProvisionCommandTests {
    let services: ESPPlugAgent

    init() throws {
        services = try ESPPlugAgent(plugs: ["Acme-Setup-4F2A"])
    }

    func accessoryctl(_ arguments: [String]) async throws -> Run {
        try await accessoryctlProcess(arguments, environment: services.bus.environment, deadline: .seconds(90))
    }

    /// `pick --provision` of the plug, given HomeNet, with `proofOfPossession` in a file.
    func pickAndProvision(proofOfPossession: String, json: Bool = false) async throws -> Run {
        try await accessoryctl(
            [
                "pick", "org.example.espprov", "--select", "Acme-Setup-4F2A", "--timeout", "20", "--provision",
                "--ssid", "HomeNet", "--passphrase-file", try services.device.writeFile("home.pass", "home-passphrase"),
                "--pop-file", try services.device.writeFile("plug.pop", proofOfPossession),
            ] + (json ? ["--json"] : []))
    }

    @Test func pickProvisionPicksJoinsGivesTheNetworkAndLeaves() async throws {
        let run = try await pickAndProvision(proofOfPossession: ESPPlugAgent.proofOfPossession)
        #expect(run.code == .success, "\(run.err)\n\(services.agent.log)")
        #expect(run.out.hasSuffix("Acme plug joined 'HomeNet' at 192.168.1.42.\n"), "\(run.out)")
        for line in [
            "Joined Acme-Setup-4F2A on wlan0.", "Giving Acme plug 'HomeNet' through the agent…",
            "Connecting to the device on its hotspot…", "Session established.", "The device sees 6 networks.",
            "The device is joining the network…", "Left Acme-Setup-4F2A, back on 'HomeNet'.",
        ] {
            #expect(run.err.contains(line), "\(line) is missing from:\n\(run.err)")
        }
        #expect(!(run.out + run.err + services.agent.log).contains(ESPPlugAgent.proofOfPossession))
        #expect(!(run.out + run.err + services.agent.log).contains("home-passphrase"))
        #expect(try services.networkManager.activeConnectionID(on: services.wifi) == "HomeNet")
    }

    /// With a second Wi-Fi radio the join takes it, says so, and the home network stays up on
    /// the first through the join, the provisioning and the leave.
    @Test func aSecondRadioTakesTheSetupAndTheHomeNetworkStaysUp() async throws {
        let second = try services.networkManager.addWiFiDevice("wlan1")
        try services.addPlug("Acme-Setup-4F2A", index: 1, device: second, sameAs: 0)
        let run = try await pickAndProvision(proofOfPossession: ESPPlugAgent.proofOfPossession)
        #expect(run.code == .success, "\(run.err)\n\(services.agent.log)")
        #expect(run.err.contains("Joined Acme-Setup-4F2A on wlan1; wlan0 stays on 'HomeNet'."), "\(run.err)")
        #expect(run.err.contains("Left Acme-Setup-4F2A."), "nothing to bring back on wlan1: \(run.err)")
        #expect(try services.networkManager.activeConnectionID(on: services.wifi) == "HomeNet")
        // Nothing took the home connection down meanwhile.
        let homeDown = services.networkManager.log.split(separator: "\n").filter {
            $0.contains("DeactivateConnection") && $0.contains("home_active")
        }
        #expect(homeDown.isEmpty, "\(homeDown)")
        #expect(
            services.networkManager.log.contains("DeactivateConnection"), "the accessory's connection was taken down")
    }

    @Test func aRefusedProofOfPossessionIsNamedAndTheHotspotLeftAllTheSame() async throws {
        let run = try await pickAndProvision(proofOfPossession: "not-the-pop", json: true)
        #expect(run.code == .failure, "\(run.err)")
        #expect(run.err.contains("error: the device refused the proof of possession"), "\(run.err)")
        #expect(run.err.contains("Left Acme-Setup-4F2A, back on 'HomeNet'."), "\(run.err)")
        #expect(try services.networkManager.activeConnectionID(on: services.wifi) == "HomeNet")
    }

    @Test func provisioningOptionsWithoutProvisionAreRefusedAsUsage() async throws {
        let alone = try await accessoryctl([
            "pick", "org.example.espprov", "--select", "Acme-Setup-4F2A", "--ssid", "HomeNet",
        ])
        #expect(alone.code == .usage)
        #expect(alone.err.contains("--ssid goes with --provision"), "\(alone.err)")
        let unnamed = try await accessoryctl([
            "pick", "org.example.espprov", "--provision", "--passphrase-file",
            try services.device.writeFile("home.pass", "home-passphrase"),
        ])
        #expect(unnamed.code == .usage)
        #expect(unnamed.err.contains("name the network with --ssid"), "\(unnamed.err)")
    }
}

/// `accessoryctl pick --provision` for an Improv device whose item asks the application to
/// confirm it (confirmAuthorization): the device is given the network while the picker waits,
/// its button pressed meanwhile, and the accessory is then confirmed, as an app would.
@Suite(.serialized) final class MockServicesImprovProvisionCommandTests {
    let bus: PrivateSystemBus
    let networkManager: NetworkManagerMock
    let bluez: BlueZMock
    let polkit: PolkitMock
    let agent: AgentProcess
    let scratch: ScratchDirectory

    init() throws {
        bus = try PrivateSystemBus()
        networkManager = try NetworkManagerMock(on: bus)
        bluez = try BlueZMock(on: bus)
        polkit = try PolkitMock(on: bus)
        try bluez.addAdapter()
        try networkManager.addWiFiDeviceOnHomeNet()
        agent = try AgentProcess(bus: bus)
        try agent.installShippedProfile("improv-wifi.json")
        try agent.start()
        scratch = try ScratchDirectory("improv-provision")
    }

    deinit {
        agent.stop()
        polkit.stop()
        bluez.stop()
        networkManager.stop()
        bus.stop()
    }

    /// `pick --provision` of the Improv device at `address`, given HomeNet.
    func pickAndProvision(_ address: String) async throws -> Run {
        let passphrase = scratch.url.appendingPathComponent("home.pass")
        try Data("home-passphrase\n".utf8).write(to: passphrase)
        return try await accessoryctlProcess(
            [
                "pick", "com.improv-wifi.ble", "--select", address, "--timeout", "20", "--provision", "--ssid",
                "HomeNet", "--passphrase-file", passphrase.path,
            ], environment: bus.environment, deadline: .seconds(90))
    }

    @Test func theDeviceIsProvisionedWhileThePickerWaitsThenConfirmed() async throws {
        let device = try bluez.addImprovDevice("24:0A:C4:00:00:0A", state: 1)
        try bluez.setImprov(device, authorizeAfterMilliseconds: 500, url: "http://10.0.0.10/welcome")
        let run = try await pickAndProvision("24:0A:C4:00:00:0A")
        #expect(run.code == .success, "\(run.out)\n\(run.err)\n\(agent.log)")
        let events = run.out.split(separator: "\n").map { String($0.split(separator: " ").first ?? "") }
        #expect(
            // Changed twice: where it now is (the network it was given), then authorized.
            events.prefix(6) == [
                "activated", "pickerDidPresent", "accessoryAdded", "accessoryChanged", "accessoryChanged",
                "pickerDidDismiss",
            ],
            "\(run.out)")
        #expect(run.out.contains("awaitingAuthorization"), "\(run.out)")
        #expect(
            run.out.hasSuffix(
                "Improv Wi-Fi device (press its button to authorize) joined 'HomeNet'; it goes on at "
                    + "http://10.0.0.10/welcome.\n"), "\(run.out)")
        #expect(run.err.contains("The device asks for authorization: press its button"), "\(run.err)")
        let log = try bluez.improvLog(device)
        #expect(log.ssid == "HomeNet" && log.password == "home-passphrase")
        let listed = try await accessoryctlProcess(
            ["list", "--json"], environment: bus.environment, deadline: .seconds(30))
        let records = try JSONSerialization.jsonObject(with: Data(listed.out.utf8)) as? [[String: Any]]
        #expect(records?.first?["state"] as? String == "authorized", "\(listed.out)")
        #expect(!(run.out + run.err + agent.log).contains("home-passphrase"))
    }

    @Test func aFailedProvisioningFailsTheAuthorizationAndNamesTheDevicesVerdict() async throws {
        let device = try bluez.addImprovDevice("24:0A:C4:00:00:0B", state: 1)
        try bluez.setImprov(device, authorizeAfterMilliseconds: 500, failConnect: true)
        let run = try await pickAndProvision("24:0A:C4:00:00:0B")
        #expect(run.code == .failure, "\(run.out)\n\(run.err)")
        #expect(run.err.contains("error: the device could not join the network with these settings"), "\(run.err)")
        let listed = try await accessoryctlProcess(
            ["list", "--json"], environment: bus.environment, deadline: .seconds(30))
        let records = try JSONSerialization.jsonObject(with: Data(listed.out.utf8)) as? [Any]
        #expect(records?.isEmpty == true, "no record stays: \(listed.out)")
    }
}
