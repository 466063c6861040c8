import AccessoryCLI
import AccessoryCore
import Foundation
import ServiceHarness
import Testing

/// `accessoryctl pick --provision` of accessories set up through their vendor's own HTTP API,
/// from the shipped profiles, run as a process against the built agent on a private system bus
/// with python-dbusmock's NetworkManager (HomeNet, and the accessory's setup hotspot in range)
/// and polkitd, and the vendor's simulator (`lab/accessories/vendor_setup_device.py`) behind
/// the hotspot's interface in a network namespace.
@Suite(.serialized) final class MockServicesAgentVendorProvisionTests {
    let bus: PrivateSystemBus
    let networkManager: NetworkManagerMock
    let polkit: PolkitMock
    let hotspots: SetupHotspots
    var agent: AgentProcess?
    var device: VendorSetupDevice?
    let wifi: String

    init() throws {
        hotspots = try SetupHotspots()
        bus = try PrivateSystemBus()
        networkManager = try NetworkManagerMock(on: bus)
        polkit = try PolkitMock(on: bus)
        wifi = try networkManager.addWiFiDeviceOnHomeNet()
    }

    deinit {
        agent?.stop()
        polkit.stop()
        networkManager.stop()
        bus.stop()
        device?.stop()
    }

    /// Starts the agent with the shipped `profile`, its address moved to the simulator's and
    /// its confirmation shortened to `within` seconds, and the simulated `vendor` device behind
    /// the hotspot `ssid`.
    func start(
        profile file: String, vendor: String, ssid: String, within: Int = 5, leavesHotspot: Bool = false,
        auth: Bool = false, security: NetworkManagerMock.Security = .open, units: Int = 1, kioskPolicy: String? = nil,
        seekWithin: Int? = 10
    ) throws {
        let device = try VendorSetupDevice(vendor: vendor, auth: auth, leavesHotspot: leavesHotspot, on: hotspots)
        self.device = device
        let agent = try AgentProcess(bus: bus, on: hotspots)
        self.agent = agent
        try agent.installShippedProfile(file)
        let shipped = ESPProvisioningDevice.repository.appendingPathComponent("profiles/\(file)")
        var profile = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: shipped)) as? [String: Any])
        var provisioning = try #require(profile["provisioning"] as? [String: Any])
        provisioning["address"] = device.address
        if var confirm = provisioning["confirm"] as? [String: Any] {
            confirm["within"] = within
            provisioning["confirm"] = confirm
        }
        profile["provisioning"] = provisioning
        // How long a client waits for a device that restarted onto the home network to be found
        // there; without it, the profile names nothing to find it by.
        if let seekWithin, var home = profile["homeNetwork"] as? [String: Any] {
            home["within"] = seekWithin
            profile["homeNetwork"] = home
        } else if seekWithin == nil {
            profile["homeNetwork"] = nil
        }
        let text = String(decoding: try JSONSerialization.data(withJSONObject: profile), as: UTF8.self)
        try agent.installProfile(text, name: String(file.dropLast(".json".count)))
        for unit in 0..<units {
            try networkManager.addAccessPoint(
                wifi, name: "accessory\(unit)", ssid: ssid, bssid: "02:00:00:00:00:3\(unit)",
                strength: UInt8(50 - unit),
                security: security)
        }
        try networkManager.giveIPv4(to: ssid)
        if let kioskPolicy { try agent.writeKioskPolicy(kioskPolicy) }
        try agent.start()
    }

    func pickAndProvision(_ profileID: String, _ ssid: String, passphrase: String = "home-passphrase") async throws
        -> Run
    {
        let file = try #require(device).writeFile("home.given", passphrase)
        return try await accessoryctlProcess(
            [
                "pick", profileID, "--select", ssid, "--timeout", "20", "--provision", "--ssid", "HomeNet",
                "--passphrase-file", file,
            ], environment: bus.environment, deadline: .seconds(90))
    }

    /// Picks the accessory behind `ssid` without giving it a network; returns its record's id.
    func pickOnly(_ profileID: String, _ ssid: String) async throws -> String {
        let picked = try await accessoryctlProcess(
            ["pick", profileID, "--select", ssid, "--timeout", "20", "--json"], environment: bus.environment,
            deadline: .seconds(60))
        #expect(picked.code == .success, "\(picked.err)")
        let accessory = try #require(try JSONSerialization.jsonObject(with: Data(picked.out.utf8)) as? [String: Any])
        return try #require(accessory["id"] as? String, "\(picked.out)")
    }

    /// Everything a person or an administrator could read of the run.
    func everything(_ run: Run) -> String { run.out + run.err + (agent?.log ?? "") + (device?.log ?? "") }

    @Test func aShellyGen2IsGivenTheNetworkOverItsRPCAndConfirmsItsAddress() async throws {
        try start(profile: "shelly-gen2.json", vendor: "shelly-gen2", ssid: "ShellyPlus1-A8032AB12345")
        let run = try await pickAndProvision("cloud.shelly.gen2", "ShellyPlus1-A8032AB12345")
        #expect(run.code == .success, "\(run.err)\n\(agent?.log ?? "")")
        #expect(
            run.out.hasSuffix("Shelly Gen2+ device (setup access point) joined 'HomeNet' at 192.168.1.43.\n"),
            "\(run.out)")
        for line in [
            "Joined ShellyPlus1-A8032AB12345 on wlan0.", "Asking the device (deviceInfo)…",
            "Sending the network's credentials…", "Waiting for the device to say it joined…",
            "Left ShellyPlus1-A8032AB12345, back on 'HomeNet'.",
        ] {
            #expect(run.err.contains(line), "\(line) is missing from:\n\(run.err)")
        }
        let log = try #require(device).log
        #expect(log.contains("GOT ssid='HomeNet' passphrase=matches"), "\(log)")
        #expect(log.contains("REQUEST POST /rpc"), "\(log)")
        #expect(!everything(run).contains("home-passphrase"))
        #expect(try networkManager.activeConnectionID(on: wifi) == "HomeNet")
    }

    @Test func aShellyThatNeverReachesTheHomeNetworkIsReportedSoAndLeftBehind() async throws {
        try start(profile: "shelly-gen2.json", vendor: "shelly-gen2", ssid: "ShellyPlus1-A8032AB12345")
        let run = try await pickAndProvision(
            "cloud.shelly.gen2", "ShellyPlus1-A8032AB12345", passphrase: "not-the-home-passphrase")
        #expect(run.code == .failure, "\(run.out)\n\(run.err)")
        #expect(
            run.err.contains("error: the device took 'HomeNet' but was not seen on it within 5 s"), "\(run.err)")
        #expect(run.err.contains("Left ShellyPlus1-A8032AB12345, back on 'HomeNet'."), "\(run.err)")
        #expect(try #require(device).log.contains("passphrase=differs"))
        #expect(!everything(run).contains("not-the-home-passphrase"))
        #expect(try networkManager.activeConnectionID(on: wifi) == "HomeNet")
    }

    @Test func aShellyWithItsLoginOnIsNamedAndSentNothing() async throws {
        try start(profile: "shelly-gen2.json", vendor: "shelly-gen2", ssid: "ShellyPlus1-A8032AB12345", auth: true)
        let run = try await pickAndProvision("cloud.shelly.gen2", "ShellyPlus1-A8032AB12345")
        #expect(run.code == .failure, "\(run.out)\n\(run.err)")
        #expect(run.err.contains("the device asks for its login at deviceInfo"), "\(run.err)")
        #expect(try #require(device).log.contains("GOT") == false, "nothing was sent")
    }

    /// A Gen1 leaves its hotspot for the network without confirming: it is a success only once
    /// seen there, and one never announced is reported missing, never set up.
    @Test func aShellyGen1NeverSeenOnTheHomeNetworkIsReportedMissing() async throws {
        try start(profile: "shelly.json", vendor: "shelly-gen1", ssid: "shelly1-A4CF12F45678", leavesHotspot: false)
        let run = try await pickAndProvision("cloud.shelly.gen1", "shelly1-A4CF12F45678")
        #expect(run.code == .failure, "\(run.out)\n\(run.err)")
        #expect(run.err.contains("Looking for it on the home network (up to 10 s)…"), "\(run.err)")
        #expect(run.err.contains("error: it took 'HomeNet' but was not seen there within 10 s"), "\(run.err)")
        let log = try #require(device).log
        #expect(log.contains("REQUEST GET /shelly") && log.contains("REQUEST GET /settings/sta"), "\(log)")
        #expect(log.contains("GOT ssid='HomeNet' passphrase=matches"), "\(log)")
        #expect(!everything(run).contains("home-passphrase"))
        let listed = try await accessoryctlProcess(
            ["list", "--json"], environment: bus.environment, deadline: .seconds(30))
        #expect(
            listed.out.contains("\"macAddress\" : \"A8:03:2A:B1:23:45\""),
            "the MAC address it reported is kept: \(listed.out)")
    }

    @Test func tasmotaTestsTheNetworkThenSaysItJoinedOnItsNextPage() async throws {
        try start(profile: "tasmota.json", vendor: "tasmota", ssid: "tasmota-A1B2C3-1234", leavesHotspot: true)
        let run = try await pickAndProvision("com.tasmota.wifimanager", "tasmota-A1B2C3-1234")
        #expect(run.code == .success, "\(run.err)\n\(agent?.log ?? "")")
        #expect(run.out.hasSuffix("Tasmota device (Wi-Fi manager) joined 'HomeNet' at 192.168.1.43.\n"), "\(run.out)")
        #expect(run.err.contains("Waiting for the device to say it joined…"), "\(run.err)")
        #expect(try #require(device).log.contains("GOT ssid='HomeNet' passphrase=matches"))
        #expect(!everything(run).contains("home-passphrase"))
    }

    @Test func tasmotaSayingItCouldNotConnectIsTheDevicesVerdict() async throws {
        try start(profile: "tasmota.json", vendor: "tasmota", ssid: "tasmota-A1B2C3-1234")
        let run = try await pickAndProvision(
            "com.tasmota.wifimanager", "tasmota-A1B2C3-1234", passphrase: "not-the-home-passphrase")
        #expect(run.code == .failure, "\(run.out)\n\(run.err)")
        #expect(
            run.err.contains(
                "error: the device refused confirm: it could not connect to the network (Tasmota: Connect failed"),
            "\(run.err)")
        #expect(run.err.contains("Left tasmota-A1B2C3-1234, back on 'HomeNet'."), "\(run.err)")
    }

    /// A WLED restarts onto the home network without confirming; it is found there by the MAC
    /// address it reported on its hotspot, in its `_wled._tcp` TXT record, and not by a
    /// neighbour's.
    @Test func aWLEDIsGivenTheNetworkByItsJSONConfigurationAndFoundByItsMAC() async throws {
        let avahi = try AvahiResponder(on: bus)
        defer { avahi.stop() }
        try avahi.publish(
            "WLED-ffffff", type: "_wled._tcp", port: 80, hostname: "wled-ffffff.local", address: "192.168.1.45",
            txt: ["mac=a0b765ffffff"])
        try avahi.publish(
            "WLED-b12345", type: "_wled._tcp", port: 80, hostname: "wled-b12345.local", address: "192.168.1.44",
            txt: ["mac=a8032ab12345"])
        try start(
            profile: "wled.json", vendor: "wled", ssid: "WLED-AP", leavesHotspot: true, security: .wpa2, seekWithin: 60)
        let run = try await pickAndProvision("ge.wled.softap", "WLED-AP")
        #expect(run.code == .success, "\(run.err)\n\(agent?.log ?? "")\n\(avahi.log)")
        #expect(
            run.out.hasSuffix(
                "WLED controller (WLED-AP) joined 'HomeNet': found there at 192.168.1.44 (WLED-b12345, _wled._tcp).\n"),
            "\(run.out)")
        #expect(run.err.contains("Looking for it on the home network (up to 60 s)…"), "\(run.err)")
        // Its DHCP lease changes: its host announces the new address, its service unchanged,
        // and the record follows within seconds (not at the next browse, minutes later).
        try avahi.moveHost("wled-b12345.local", to: "192.168.1.47")
        let store = AccessoryStore(url: try #require(agent).storeURL)
        let moved = try await poll(timeout: .seconds(15), every: .milliseconds(200)) {
            try store.load().first { $0.location?.addresses == ["192.168.1.47"] }
        }
        #expect(moved != nil, "\(agent?.log ?? "")\n\(avahi.log)")
        #expect(agent?.log.contains("at wled-b12345.local, 192.168.1.47 port 80") == true, "\(agent?.log ?? "")")
        let log = try #require(device).log
        #expect(log.contains("REQUEST GET /json/info") && log.contains("REQUEST POST /json/cfg"), "\(log)")
        #expect(log.contains("GOT ssid='HomeNet' passphrase=matches"), "\(log)")
        try #require(device).waitForLog("LEAVING")
        #expect(!everything(run).contains("home-passphrase"))
    }

    /// Every WLED broadcasts WLED-AP: two units are two accessories, told apart by their BSSID,
    /// each set up once; a batch stopped after the first, run again, sets up only the second.
    @Test func twoWLEDsSharingWLEDAPAreEachSetUpOnceByTheirBSSID() async throws {
        try start(
            profile: "wled.json", vendor: "wled", ssid: "WLED-AP", security: .wpa2, units: 2,
            kioskPolicy:
                #"{"schemaVersion": 1, "policies": [{"profiles": ["ge.wled.softap"], "users": [0], "choose": "firstMatch"}]}"#,
            seekWithin: nil)
        let passphrase = try #require(device).writeFile("home.given", "home-passphrase")
        func setupAll(_ extra: [String]) async throws -> Run {
            try await accessoryctlProcess(
                ["setup-all", "ge.wled.softap", "--ssid", "HomeNet", "--passphrase-file", passphrase, "--json"] + extra,
                environment: bus.environment, deadline: .seconds(180))
        }
        let first = try await setupAll(["--maximum", "1", "--timeout", "20"])
        #expect(first.code == .success, "\(first.out)\n\(first.err)\n\(agent?.log ?? "")")
        let second = try await setupAll(["--timeout", "8"])
        #expect(second.code == .success, "\(second.out)\n\(second.err)\n\(agent?.log ?? "")")
        let listed = try await accessoryctlProcess(
            ["list", "--json"], environment: bus.environment, deadline: .seconds(30))
        let records = try #require(try JSONSerialization.jsonObject(with: Data(listed.out.utf8)) as? [[String: Any]])
        #expect(
            Set(records.compactMap { $0["hotspotBSSID"] as? String }) == ["02:00:00:00:00:30", "02:00:00:00:00:31"],
            "\(listed.out)")
        #expect(records.allSatisfy { ($0["network"] as? [String: Any])?["ssid"] as? String == "HomeNet" })
        let given = try #require(device).log.components(separatedBy: "GOT ssid='HomeNet' passphrase=matches").count - 1
        #expect(given == 2, "each unit is given the network once: \(device?.log ?? "")")
        #expect(try networkManager.activeConnectionID(on: wifi) == "HomeNet")
    }

    /// Two WLEDs share `WLED-AP`. A batch sets up the first, is interrupted (SIGINT) while it
    /// looks for the next, and a second unit is switched on: the batch run again offers only the
    /// new unit (the first, recorded by its BSSID, is not hidden behind the shared name nor
    /// given the network twice), and each is recorded with its own BSSID.
    @Test func twoWLEDsSharingWLEDAPAreEachSetUpOnceByTheirBSSIDAcrossAnInterruption() async throws {
        try start(
            profile: "wled.json", vendor: "wled", ssid: "WLED-AP", security: .wpa2,
            kioskPolicy:
                #"{"schemaVersion": 1, "policies": [{"profiles": ["ge.wled.softap"], "users": [0], "choose": "firstMatch"}]}"#,
            seekWithin: nil)
        let passphrase = try #require(device).writeFile("home.given", "home-passphrase")
        let arguments = ["setup-all", "ge.wled.softap", "--ssid", "HomeNet", "--passphrase-file", passphrase, "--json"]
        let records = {
            let listed = try await accessoryctlProcess(
                ["list", "--json"], environment: self.bus.environment, deadline: .seconds(30))
            return try #require(try JSONSerialization.jsonObject(with: Data(listed.out.utf8)) as? [[String: Any]])
        }
        let first = try RunningAccessoryctl(
            arguments + ["--timeout", "120"], environment: bus.environment, deadline: .seconds(180))
        let setUp = { try await records().contains { $0["network"] != nil } }
        var isSetUp = false
        let deadline = ContinuousClock.now + .seconds(90)
        while !isSetUp, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            isSetUp = try await setUp()
        }
        #expect(isSetUp, "the first unit was not set up: \(agent?.log ?? "")")
        first.signal(SIGINT)
        let interrupted = await first.finish()
        #expect(interrupted.code.rawValue == 128 + SIGINT, "\(interrupted.out)\n\(interrupted.err)")
        #expect(!interrupted.timedOut)

        try networkManager.addAccessPoint(
            wifi, name: "accessory1", ssid: "WLED-AP", bssid: "02:00:00:00:00:31", strength: 49, security: .wpa2)
        let resumed = try await accessoryctlProcess(
            arguments + ["--timeout", "8"], environment: bus.environment, deadline: .seconds(180))
        #expect(resumed.code == .success, "\(resumed.out)\n\(resumed.err)\n\(agent?.log ?? "")")
        let results = try #require(try JSONSerialization.jsonObject(with: Data(resumed.out.utf8)) as? [[String: Any]])
        #expect(
            results.compactMap { ($0["accessory"] as? [String: Any])?["hotspotBSSID"] as? String }
                == ["02:00:00:00:00:31"], "\(resumed.out)")
        let all = try await records()
        #expect(
            Set(all.compactMap { $0["hotspotBSSID"] as? String }) == ["02:00:00:00:00:30", "02:00:00:00:00:31"],
            "\(all)")
        #expect(all.allSatisfy { ($0["network"] as? [String: Any])?["ssid"] as? String == "HomeNet" })
        let given = try #require(device).log.components(separatedBy: "GOT ssid='HomeNet' passphrase=matches").count - 1
        #expect(given == 2, "each unit is given the network once: \(device?.log ?? "")")
        #expect(try networkManager.activeConnectionID(on: wifi) == "HomeNet")
    }
    /// An accessory set up before is given the network again (a changed home passphrase) by its
    /// id, through the agent: its hotspot joined, the network given and confirmed, the hotspot left.
    @Test func aRecordedShellyIsGivenTheNetworkAgainByItsID() async throws {
        try start(profile: "shelly-gen2.json", vendor: "shelly-gen2", ssid: "ShellyPlus1-A8032AB12345")
        let id = try await pickOnly("cloud.shelly.gen2", "ShellyPlus1-A8032AB12345")
        #expect(try #require(device).log.contains("GOT") == false, "picking alone gives no network")
        let file = try #require(device).writeFile("home.given", "home-passphrase")
        let run = try await accessoryctlProcess(
            ["provision", id, "--ssid", "HomeNet", "--passphrase-file", file], environment: bus.environment,
            deadline: .seconds(90))
        #expect(run.code == .success, "\(run.err)\n\(agent?.log ?? "")")
        #expect(run.out.hasSuffix("joined 'HomeNet' at 192.168.1.43.\n"), "\(run.out)")
        #expect(run.err.contains("Left ShellyPlus1-A8032AB12345, back on 'HomeNet'."), "\(run.err)")
        #expect(try #require(device).log.contains("GOT ssid='HomeNet' passphrase=matches"))
        let direct = try await accessoryctlProcess(
            ["provision", id, "--address", "192.168.4.1"], environment: bus.environment, deadline: .seconds(30))
        #expect(direct.code == .usage && direct.err.contains("--address is for a direct provisioning"), "\(direct.err)")
    }

    /// A kiosk may refuse that the home passphrase crosses the air readable: a Shelly's plain
    /// HTTP over its open hotspot is refused before anything is sent.
    @Test func aKioskPolicyRefusingUnencryptedProvisioningSendsNothing() async throws {
        try start(
            profile: "shelly-gen2.json", vendor: "shelly-gen2", ssid: "ShellyPlus1-A8032AB12345",
            kioskPolicy: #"""
                {"schemaVersion": 1, "policies": [{"profiles": ["cloud.shelly.gen2"], "users": [0],
                 "choose": "firstMatch", "unencryptedProvisioning": false}]}
                """#)
        let run = try await pickAndProvision("cloud.shelly.gen2", "ShellyPlus1-A8032AB12345")
        #expect(run.code == .failure, "\(run.out)\n\(run.err)")
        #expect(
            run.err.contains(
                "refuses to send the home network's passphrase without encryption, and profile "
                    + "cloud.shelly.gen2 would send it so"), "\(run.err)")
        #expect(try #require(device).log.contains("REQUEST") == false, "nothing reached the device")
    }

    /// An ESPHome device's fallback hotspot has its own password (`ap:` in its configuration):
    /// joined by id with it, the device is then given the network through the held join, found
    /// by the MAC address its captive portal reported (`_esphomelib._tcp` TXT `mac`).
    @Test func anESPHomeDeviceIsGivenTheNetworkThroughItsCaptivePortal() async throws {
        let avahi = try AvahiResponder(on: bus)
        defer { avahi.stop() }
        try avahi.publish(
            "esphome-kitchen", type: "_esphomelib._tcp", port: 6053, hostname: "esphome-kitchen.local",
            address: "192.168.1.46", txt: ["mac=a8032ab12345", "version=2024.10.0", "network=wifi"])
        try start(
            profile: "esphome.json", vendor: "esphome", ssid: "esphome-kitchen", leavesHotspot: true, security: .wpa2,
            seekWithin: 60)
        let id = try await pickOnly("io.esphome.captiveportal", "esphome-kitchen")
        let hotspot = try #require(device).writeFile("ap.pass", "fallback-ap-pass")
        let joined = try await accessoryctlProcess(
            ["join", id, "--passphrase-file", hotspot], environment: bus.environment, deadline: .seconds(60))
        #expect(joined.code == .success, "\(joined.err)")
        let file = try #require(device).writeFile("home.given", "home-passphrase")
        let run = try await accessoryctlProcess(
            ["provision", id, "--ssid", "HomeNet", "--passphrase-file", file], environment: bus.environment,
            deadline: .seconds(120))
        #expect(run.code == .success, "\(run.err)\n\(agent?.log ?? "")")
        #expect(
            run.out.hasSuffix(
                "joined 'HomeNet': found there at 192.168.1.46 (esphome-kitchen, _esphomelib._tcp).\n"), "\(run.out)")
        let log = try #require(device).log
        #expect(log.contains("REQUEST GET /config.json") && log.contains("REQUEST GET /wifisave"), "\(log)")
        #expect(log.contains("GOT ssid='HomeNet' passphrase=matches"), "\(log)")
        #expect(!everything(run).contains("home-passphrase") && !everything(joined).contains("fallback-ap-pass"))
        #expect(try networkManager.activeConnectionID(on: wifi) == "HomeNet")
    }
}
