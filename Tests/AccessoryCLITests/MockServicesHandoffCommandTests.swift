import AccessoryCLI
import Foundation
import ServiceHarness
import Testing

/// `accessoryctl handoff` against python-dbusmock's BlueZ and NetworkManager on one private
/// system bus: a camera-like accessory that reveals its hotspot over a paired link.
@Suite(.serialized) final class MockServicesHandoffCommandTests {
    static let service = "b5f90001-aa8d-11e3-9046-0002a5d5c51b"
    static let ssid = "b5f90002-aa8d-11e3-9046-0002a5d5c51b"
    static let passphrase = "b5f90003-aa8d-11e3-9046-0002a5d5c51b"
    static let command = "b5f90072-aa8d-11e3-9046-0002a5d5c51b"
    static let response = "b5f90073-aa8d-11e3-9046-0002a5d5c51b"
    static let address = "D4:D9:19:AA:BB:CC"

    let networkManager: NetworkManagerMock
    let bluez: BlueZMock
    let wifi: String
    let camera: String
    let profile: TemporaryFile

    init() throws {
        networkManager = try NetworkManagerMock()
        bluez = try BlueZMock(on: networkManager.bus)
        try bluez.addAdapter()
        wifi = try networkManager.addWiFiDevice("wlan0")
        let home = try networkManager.addAccessPoint(
            wifi, name: "home", ssid: "HomeNet", bssid: "3C:A6:2F:10:20:30", frequency: 5180, strength: 82,
            security: .wpa2)
        try networkManager.connectHomeNetwork(wifi, accessPoint: home, ssid: "HomeNet")
        try networkManager.addAccessPoint(
            wifi, name: "cam", ssid: "GP24501234", bssid: "D6:D9:19:AA:BB:CD", frequency: 2437, strength: 70,
            security: .wpa2)
        camera = try bluez.addGATTDevice(
            Self.address, name: "GoPro 1234",
            spec: .init(
                service: Self.service, advertised: ["0000fea6-0000-1000-8000-00805f9b34fb"],
                characteristics: [
                    .init(Self.ssid, flags: ["encrypt-read"], value: Array("GP24501234".utf8)),
                    .init(Self.passphrase, flags: ["encrypt-read"], value: Array("camera-pass-1234".utf8)),
                    .init(Self.command, flags: ["encrypt-write"]),
                    .init(Self.response, flags: ["encrypt-notify"]),
                ],
                answers: [
                    .init(
                        write: [0x03, 0x17, 0x01, 0x01], characteristic: Self.response, value: [0x02, 0x17, 0x00],
                        delayMs: 100),
                    .init(
                        write: [0x03, 0x17, 0x01, 0x00], characteristic: Self.response, value: [0x02, 0x17, 0x00],
                        delayMs: 100),
                ]))
        profile = try TemporaryFile(
            #"""
            {
              "schemaVersion": 1, "id": "org.example.camera", "vendor": "Example", "supports": ["bluetooth", "wifi"],
              "bluetooth": { "services": ["fea6"] },
              "hotspot": { "security": "wpa2Personal", "passphrase": { "source": "handoff" } },
              "handoff": "bluetoothToWiFi",
              "bluetoothHandoff": {
                "service": "\#(Self.service)", "pairing": "required",
                "ssid": "\#(Self.ssid)", "passphrase": "\#(Self.passphrase)",
                "switchOn": { "characteristic": "\#(Self.command)", "value": "03170101" },
                "switchOff": { "characteristic": "\#(Self.command)", "value": "03170100" },
                "state": { "characteristic": "\#(Self.response)", "ready": ["021700"], "failed": ["0217"] }
              },
              "items": [{ "name": "Camera", "descriptor": { "bluetoothServiceUUID": "fea6" } }]
            }
            """#, name: "camera.json")
    }

    deinit {
        bluez.stop()
        networkManager.stop()
    }

    func accessoryctl(_ arguments: String...) async throws -> Run {
        try await accessoryctlProcess(arguments, environment: networkManager.bus.environment)
    }

    @Test func handoffPairsSwitchesOnJoinsAndSwitchesOffAfterLeave() async throws {
        let run = try await accessoryctl("handoff", Self.address, "--profile", profile.path, "--json")
        #expect(run.code == .success, "\(run.err)")
        struct Report: Decodable {
            struct Joined: Decodable { var ssid: String; var device: String; var previousConnection: String? }
            var target: String
            var profile: String
            var joined: Joined
        }
        let report = try JSONDecoder().decode(Report.self, from: Data(run.out.utf8))
        #expect(report.target == Self.address && report.profile == "org.example.camera")
        #expect(
            report.joined.ssid == "GP24501234" && report.joined.device == "wlan0"
                && report.joined.previousConnection == "HomeNet")
        #expect(networkManager.log.contains("camera-pass-1234"), "the revealed passphrase did not reach NetworkManager")
        #expect(!run.out.contains("camera-pass-1234") && !run.err.contains("camera-pass-1234"))
        var log = try bluez.gattLog(camera)
        #expect(log.paired && !log.connected)
        #expect(log.writes == [[Self.command, "03170101"]])

        #expect(try await accessoryctl("leave").code == .success)
        let off = try await accessoryctl("handoff", Self.address, "--profile", profile.path, "--switch-off")
        #expect(off.code == .success, "\(off.err)")
        #expect(off.out == "Switched the hotspot of \(Self.address) off.\n")
        log = try bluez.gattLog(camera)
        #expect(log.writes.last == [Self.command, "03170100"] && !log.connected)
    }

    /// The command pairs as a BlueZ pairing agent of its own: a passkey the accessory wants
    /// typed on it is printed, and a code it wants typed into this machine is refused.
    @Test func aPasskeyToTypeOnTheAccessoryIsPrinted() async throws {
        try bluez.setPairing(camera, passkey: 4242)
        let run = try await accessoryctl("handoff", Self.address, "--profile", profile.path)
        #expect(run.code == .success, "\(run.err)")
        #expect(run.err.contains("Type 004242 on \(Self.address) to pair with it.\n"), "\(run.err)")
        let log = try bluez.gattLog(camera)
        #expect(log.agentCalls == [["DisplayPasskey", "accepted"]])
        #expect(log.paired && log.writes == [[Self.command, "03170101"]])
        #expect(
            bluez.log.contains("RegisterAgent \"/io/accessorysetup/accessoryctl/pairing\" \"DisplayYesNo\""),
            "\(bluez.log)")
    }

    /// On a terminal the steps show in place on one line; the code to type takes a line of its
    /// own, with nothing of the progress line left on it, and the steps go on below it.
    @Test func onATerminalThePasskeyHasALineOfItsOwn() throws {
        try bluez.setPairing(camera, passkey: 4242)
        let pane = try TmuxPane(
            ["handoff", Self.address, "--profile", profile.path], environment: networkManager.bus.environment)
        let screen = try pane.waitFor("[tty ")
        let lines = screen.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.contains("[exit 0]"), "\(screen)")
        let code = try #require(lines.firstIndex(of: "Type 004242 on \(Self.address) to pair with it."), "\(screen)")
        let joined = try #require(
            lines.firstIndex { $0.hasPrefix("Joined GP24501234, the hotspot of \(Self.address), on wlan0.") },
            "\(screen)")
        #expect(code < joined, "\(screen)")
        #expect(lines[..<code].allSatisfy { !$0.contains("Type ") }, "\(screen)")
        #expect(lines.filter { $0.contains("004242") }.count == 1, "\(screen)")
        // What the command wrote is its screen's lines up to the shell's own: no half-cleared
        // step is left beside another.
        let written = lines[..<(try #require(lines.firstIndex(of: "[exit 0]")))].filter { !$0.isEmpty }
        #expect(written.last?.hasPrefix("Joined ") == true, "\(screen)")
        #expect(written.count <= 3, "\(screen)")
    }

    @Test func aCodeToTypeIntoThisMachineIsRefusedAndNothingIsSwitchedOn() async throws {
        try bluez.setPairing(camera)
        let run = try await accessoryctl("handoff", Self.address, "--profile", profile.path)
        #expect(run.code == .failure)
        #expect(
            run.err.contains(
                """
                accessoryctl: error: not supported: \(Self.address) asked for a code to be typed into this machine \
                (RequestPasskey), which accessory-setup cannot ask for; pair it once with 'bluetoothctl pair \(Self.address)'
                """), "\(run.err)")
        let log = try bluez.gattLog(camera)
        #expect(log.agentCalls == [["RequestPasskey", "org.bluez.Error.Rejected"]])
        #expect(!log.paired && log.writes.isEmpty)
        #expect(try networkManager.activeConnectionID(on: wifi) == "HomeNet")
    }

    @Test func aFailedJoinSwitchesTheHotspotOffAndSaysWhy() async throws {
        try networkManager.failActivations(of: "GP24501234", deviceReason: 7, connectionReason: 9)
        let run = try await accessoryctl("handoff", Self.address, "--profile", profile.path)
        #expect(run.code == .failure)
        #expect(run.err.contains("accessoryctl: error: GP24501234 refused the passphrase"), "\(run.err)")
        #expect(run.err.contains("Switching the accessory's hotspot off…"))
        #expect(try bluez.gattLog(camera).writes == [[Self.command, "03170101"], [Self.command, "03170100"]])
        #expect(try networkManager.activeConnectionID(on: wifi) == "HomeNet")
    }

    @Test func aProfileOfAnotherHandoffIsAUsageError() async throws {
        let other = try TemporaryFile(
            #"""
            { "schemaVersion": 1, "id": "org.example.plug", "vendor": "Example", "supports": ["wifi"],
              "hotspot": { "security": "open", "passphrase": { "source": "none" } }, "handoff": "joinHotspot",
              "items": [{ "name": "Plug", "descriptor": { "ssidPrefix": "plug-" } }] }
            """#, name: "plug.json")
        let run = try await accessoryctl("handoff", Self.address, "--profile", other.path, "--switch-off")
        #expect(run.code == .usage)
        #expect(
            run.err.hasPrefix("accessoryctl: error: --switch-off: profile org.example.plug has no hotspot to switch\n"))
        let pop = try await accessoryctl("handoff", "plug-1", "--profile", other.path, "--pop-file", "/dev/null")
        #expect(
            pop.code == .usage
                && pop.err.hasPrefix("accessoryctl: error: --pop-file: profile org.example.plug has no provisioning\n"))
        let notAnAddress = try await accessoryctl("handoff", "GP24501234", "--profile", profile.path)
        #expect(notAnAddress.code == .usage)
        #expect(
            notAnAddress.err.hasPrefix(
                "accessoryctl: error: TARGET: profile org.example.camera starts over Bluetooth, so TARGET is a Bluetooth address: "
            ))
    }

    /// A SoftAP profile with provisioning: the setup hotspot joined, the home network given over
    /// it with ESP-IDF provisioning (the simulator, where the profile says the device is), the
    /// device's verdict printed, and the hotspot left. The command runs on the machine of
    /// `SetupHotspots`, whose `wlan0` leads to the device: the provisioning goes through the
    /// interface joined to the hotspot alone.
    @Test func aSoftAPProfileIsJoinedProvisionedAndLeft() async throws {
        let hotspots = try SetupHotspots()
        let device = try ESPProvisioningDevice(security: 1, proofOfPossession: "abcd1234", on: hotspots)
        defer { device.stop() }
        try networkManager.addAccessPoint(
            wifi, name: "prov", ssid: "PROV_261FCC", bssid: "7C:DF:A1:26:1F:CD", frequency: 2437, strength: 71)
        let softAP = try TemporaryFile(
            #"""
            { "schemaVersion": 1, "id": "org.example.esp", "vendor": "Example", "supports": ["wifi"],
              "hotspot": { "security": "open", "passphrase": { "source": "none" } }, "handoff": "joinHotspot",
              "provisioning": { "protocol": "espIDF", "transport": "softAP", "address": "\#(device.address)" },
              "items": [{ "name": "ESP32", "descriptor": { "ssidPrefix": "PROV_" } }] }
            """#, name: "esp.json")
        let run = try await accessoryctlProcess(
            [
                "handoff", "PROV_261FCC", "--profile", softAP.path, "--pop-file",
                try device.writeFile("pop", "abcd1234"), "--home-ssid", "HomeNet", "--home-passphrase-file",
                try device.writeFile("home", "home-passphrase"),
            ], environment: networkManager.bus.environment, namespace: hotspots.machine)
        #expect(run.code == .success, "\(run.err)")
        #expect(run.out == "The device joined 'HomeNet' (address 192.168.1.42, wpa2-psk, channel 6).\n")
        for step in [
            "Joining the accessory's hotspot…", "Joined PROV_261FCC on wlan0", "Opening a security 1 session",
            "The device is joining 'HomeNet'", "Left PROV_261FCC; back on 'HomeNet'.",
        ] {
            #expect(run.err.contains(step), "\(step) is missing from:\n\(run.err)")
        }
        #expect(try networkManager.activeConnectionID(on: wifi) == "HomeNet")
        #expect(!(run.out + run.err).contains("abcd1234") && !(run.out + run.err).contains("home-passphrase"))
    }
}
