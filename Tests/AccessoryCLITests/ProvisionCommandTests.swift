import AccessoryCLI
import Foundation
import ServiceHarness
import Testing

/// `accessoryctl provision`, the built binary against the ESP32-style device simulator.
@Suite(.serialized) struct ProvisionCommandTests {
    static let pop = "abcd1234"
    static let home = "home-passphrase"

    func provision(_ device: ESPProvisioningDevice, _ arguments: [String], input: String? = nil) async throws -> Run {
        try await accessoryctlProcess(
            ["provision", "--address", "127.0.0.1:\(device.port)"] + arguments, input: input,
            deadline: .seconds(60))
    }

    @Test func security2WithFilesEndsWithTheDevicesVerdict() async throws {
        let device = try ESPProvisioningDevice(security: 2, proofOfPossession: Self.pop)
        let run = try await provision(
            device,
            [
                "--security", "2", "--pop-file", try device.writeFile("pop", Self.pop), "--ssid", "HomeNet",
                "--passphrase-file", try device.writeFile("pass", Self.home),
            ])
        #expect(run.code == .success, "\(run.err)")
        #expect(run.out == "The device joined 'HomeNet' (address 192.168.1.42, wpa2-psk, channel 6).\n")
        for step in [
            "security 2 (patch 1)", "Opening a security 2 session as 'wifiprov'", "Session established.",
            "The device sees 6 networks; 'HomeNet' at -48 dBm", "Sending the credentials for 'HomeNet'",
            "The device is joining 'HomeNet'",
        ] {
            #expect(run.err.contains(step), "\(step) is missing from:\n\(run.err)")
        }
        #expect(!(run.out + run.err).contains(Self.pop) && !(run.out + run.err).contains(Self.home))
    }

    @Test func security1ReadsThePassphraseFromStandardInputAndPrintsJSON() async throws {
        let device = try ESPProvisioningDevice(security: 1, proofOfPossession: Self.pop)
        let run = try await provision(
            device,
            [
                "--pop-file", try device.writeFile("pop", Self.pop), "--ssid", "HomeNet", "--passphrase-stdin",
                "--json",
            ], input: Self.home + "\n")
        #expect(run.code == .success, "\(run.err)")
        let report = try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any]
        #expect(report?["state"] as? String == "connected")
        #expect(report?["security"] as? Int == 1)
        #expect(report?["ipv4Address"] as? String == "192.168.1.42")
        #expect(report?["address"] as? String == "127.0.0.1:\(device.port)")
    }

    @Test func security0WarnsThatThePassphraseTravelsInTheClear() async throws {
        let device = try ESPProvisioningDevice(security: 0, proofOfPossession: nil)
        let passphrase = try device.writeFile("pass", Self.home)
        let run = try await provision(device, ["--ssid", "HomeNet", "--passphrase-file", passphrase])
        #expect(run.code == .success, "\(run.err)")
        #expect(run.err.contains("Warning: security 0 sends the passphrase unencrypted"), "\(run.err)")
    }

    /// Two setup hotspots with the same addresses (two radios on overlapping subnets, in
    /// network namespaces of the test's own): the routes lead to the first; with `--device`
    /// naming the second, only the second device hears anything, whatever the routes say.
    @Test func theDeviceOptionSendsThroughThatInterfaceAlone() async throws {
        let hotspots = try SetupHotspots(separateDevices: true)
        let devices = try hotspots.interfaces.indices.map {
            try ESPProvisioningDevice(security: 0, proofOfPossession: nil, on: hotspots, behind: $0)
        }
        let arguments = [
            "provision", "--address", SetupHotspots.deviceAddress, "--ssid", "HomeNet", "--passphrase-file",
            try devices[1].writeFile("pass", Self.home),
        ]
        let bound = try await accessoryctlProcess(
            arguments + ["--device", hotspots.interfaces[1]], deadline: .seconds(60), namespace: hotspots.machine)
        #expect(bound.code == .success, "\(bound.err)")
        #expect(devices[1].log.contains("verdict: connected"), "\(devices[1].log)")
        #expect(!devices[0].log.contains("session"), "the device the routes lead to was spoken to:\n\(devices[0].log)")

        // What the routes alone do, so that the test can tell the two apart.
        let routed = try await accessoryctlProcess(arguments, deadline: .seconds(60), namespace: hotspots.machine)
        #expect(routed.code == .success, "\(routed.err)")
        #expect(devices[0].log.contains("verdict: connected"), "\(devices[0].log)")

        let missing = try await accessoryctlProcess(
            arguments + ["--device", "wlan-none"], deadline: .seconds(60), namespace: hotspots.machine)
        #expect(missing.code == .failure)
        #expect(
            missing.err.contains("cannot reach 192.168.4.1:80 through wlan-none (cannot bind to the interface"),
            "\(missing.err)")
    }

    /// libcrypto is loaded only once provisioning needs it: one that cannot be loaded (here a
    /// file that is no library, found first through LD_LIBRARY_PATH) is named, with the fix.
    @Test func aLibcryptoThatCannotBeLoadedIsNamed() async throws {
        let device = try ESPProvisioningDevice(security: 1, proofOfPossession: Self.pop)
        let broken = URL(fileURLWithPath: try device.writeFile("libcrypto.so.3", "not a library"))
        let run = try await accessoryctlProcess(
            [
                "provision", "--address", "127.0.0.1:\(device.port)", "--pop-file",
                try device.writeFile("pop", Self.pop),
                "--ssid", "HomeNet", "--passphrase-file", try device.writeFile("pass", Self.home),
            ],
            environment: ["LD_LIBRARY_PATH": broken.deletingLastPathComponent().path], deadline: .seconds(60))
        #expect(run.code == .failure)
        #expect(
            run.err.contains("error: a cryptographic operation failed: libcrypto.so.3 cannot be loaded ("), "\(run.err)"
        )
        #expect(run.err.contains("); install libssl3"), "\(run.err)")
    }

    @Test func aWrongProofOfPossessionFailsNamingIt() async throws {
        let device = try ESPProvisioningDevice(security: 1, proofOfPossession: Self.pop)
        let run = try await provision(
            device,
            [
                "--pop-stdin", "--ssid", "HomeNet", "--passphrase-file", try device.writeFile("pass", Self.home),
            ], input: "wrong-pop\n")
        #expect(run.code == .failure)
        #expect(run.err.contains("error: the device refused the proof of possession"), "\(run.err)")
        #expect(!run.err.contains("wrong-pop"))
    }

    @Test func aWrongHomePassphraseIsTheDevicesAuthenticationError() async throws {
        let device = try ESPProvisioningDevice(security: 2, proofOfPossession: Self.pop)
        let run = try await provision(
            device,
            [
                "--pop-file", try device.writeFile("pop", Self.pop), "--ssid", "HomeNet",
                "--passphrase-file", try device.writeFile("pass", "not-the-passphrase"), "--json",
            ])
        #expect(run.code == .failure)
        #expect(run.err.contains("could not join 'HomeNet': the passphrase is wrong"), "\(run.err)")
        let report = try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any]
        #expect(report?["state"] as? String == "failed")
        #expect(report?["reason"] as? String == "authError")
        #expect(!run.out.contains("not-the-passphrase") && !run.err.contains("not-the-passphrase"))
    }

    @Test(arguments: [
        (["--ssid", "HomeNet", "--passphrase-stdin", "--pop-stdin"], "only one of --pop-stdin and --passphrase-stdin"),
        (["--passphrase-file", "/dev/null"], "with a passphrase or --open, name the network with --ssid"),
        (["--ssid", "HomeNet", "--open", "--security", "2"], "security 2 needs the proof of possession"),
        (["--ssid", "HomeNet", "--open", "--address", "host:99999"], "--address: 'host:99999' is not HOST[:PORT]"),
        (["--ssid", "HomeNet", "--open", "--security", "3"], "--security"),
        (["--open"], "--ssid"),
        (["--ssid", String(repeating: "s", count: 32), "--open"], "ssid is 32 bytes; ESP-IDF devices take at most 31"),
    ])
    func badUsageIsRefusedBeforeAnythingIsSent(arguments: [String], message: String) async {
        let run = await accessoryctl(["provision"] + arguments)
        #expect(run.code == .usage)
        #expect(run.err.contains(message), "\(run.err)")
    }
}
