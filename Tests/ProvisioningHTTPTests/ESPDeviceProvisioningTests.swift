import AccessoryCore
import Foundation
import ProvisioningCrypto
import ProvisioningHTTP
import ServiceHarness
import Testing

/// The client, over HTTP and libcrypto, against the ESP32-style device simulator
/// (`lab/accessories/esp_prov_device.py`, Python's protobuf, cryptography and pysrp).
@Suite(.serialized) struct ESPDeviceProvisioningTests {
    static let pop = "abcd1234"
    static let home = "home-passphrase"

    func client(_ device: ESPProvisioningDevice) throws(ProvisioningError) -> ProvisioningClient {
        ProvisioningClient(
            transport: HTTPProvisioningTransport(
                host: "127.0.0.1", port: device.port,
                timeout: .seconds(60)),
            crypto: try OpenSSLProvisioningCrypto())
    }

    /// The whole flow: version, session, scan, credentials, apply, status until a verdict.
    func provision(
        _ device: ESPProvisioningDevice, _ security: ProvisioningSecurity, ssid: String = "HomeNet",
        passphrase: String = home
    ) async throws(ProvisioningError) -> WiFiConnection {
        let client = try client(device)
        let version = try await client.version()
        try await client.establishSession(security, version: version)
        let networks = try await client.scan()
        #expect(networks.contains { $0.ssid == Array("HomeNet".utf8) })
        try await client.sendCredentials(WiFiCredentials(ssid: Array(ssid.utf8), passphrase: Secret(passphrase)))
        try await client.apply()
        return try await client.waitForConnection(
            ssid: Array(ssid.utf8), every: .milliseconds(50),
            timeout: .seconds(60))
    }

    @Test(arguments: [
        (0, nil as String?, 1),
        (1, pop, 1),
        (1, nil, 1),
        (2, pop, 1),
        (2, pop, 0),
    ])
    func provisionsWithEverySecurityScheme(scheme: Int, pop: String?, patch: Int) async throws {
        let device = try ESPProvisioningDevice(
            security: scheme, proofOfPossession: pop, patchVersion: patch,
            connectingPolls: 2)
        let security: ProvisioningSecurity =
            switch scheme {
            case 0: .sec0
            case 1: .sec1(proofOfPossession: pop.map(Secret.init))
            default: .sec2(username: "wifiprov", proofOfPossession: Secret(pop!))
            }
        let connection = try await provision(device, security)
        #expect(connection.ssid == Array("HomeNet".utf8))
        #expect(connection.ipv4Address == "192.168.1.42")
        #expect(connection.authMode == .wpa2PSK)
        #expect(device.log.contains("verdict: connected"), "\(device.log)")
        #expect(!device.log.contains(Self.pop) && !device.log.contains(Self.home), "the device log shows a secret")
    }

    @Test func theVersionSaysWhatTheDeviceRuns() async throws {
        let device = try ESPProvisioningDevice(security: 2, proofOfPossession: Self.pop, patchVersion: 1)
        let version = try await client(device).version()
        #expect(
            version
                == ProvisioningVersion(
                    version: "v1.1", securityScheme: 2, securityPatchVersion: 1,
                    capabilities: ["wifi_scan"]))
    }

    /// esp_prov's reading of firmware that does not announce `sec_ver`: `no_sec` means 0,
    /// anything else 1, and security 2 is used when asked for explicitly.
    @Test(arguments: ["no-sec-ver", "bare"])
    func anExplicitSchemeIsUsedWhenTheDeviceDoesNotAnnounceOne(format: String) async throws {
        let device = try ESPProvisioningDevice(
            security: 2, proofOfPossession: Self.pop, patchVersion: 0,
            versionFormat: format)
        let version = try await client(device).version()
        #expect(version.securityScheme == nil)
        let connection = try await provision(device, .sec2(username: "wifiprov", proofOfPossession: Secret(Self.pop)))
        #expect(connection.ipv4Address == "192.168.1.42")
    }

    @Test func theDeviceScanIsReadInBatches() async throws {
        let device = try ESPProvisioningDevice(security: 1, proofOfPossession: Self.pop)
        let client = try client(device)
        let version = try await client.version()
        try await client.establishSession(.sec1(proofOfPossession: Secret(Self.pop)), version: version)
        let networks = try await client.scan(batch: 4)
        #expect(
            networks.map { String(decoding: $0.ssid, as: UTF8.self) }
                == ["HomeNet"] + (0..<5).map { "Neighbour-\($0)" })
        #expect(networks[0].rssi == -48)
        #expect(networks[0].channel == 6)
    }

    @Test(arguments: [1, 2])
    func aWrongProofOfPossessionIsNamedAsSuch(scheme: Int) async throws {
        let device = try ESPProvisioningDevice(security: scheme, proofOfPossession: Self.pop)
        let security: ProvisioningSecurity =
            scheme == 1
            ? .sec1(proofOfPossession: Secret("wrong-pop"))
            : .sec2(username: "wifiprov", proofOfPossession: Secret("wrong-pop"))
        let error = await #expect(throws: ProvisioningError.self) { _ = try await provision(device, security) }
        #expect(error == .wrongProofOfPossession(scheme == 1 ? .sec1 : .sec2))
        #expect(error?.description.contains("proof of possession") == true)
        // The refused request is not sent again: a resent request would open a second session.
        #expect(device.log.contains(scheme == 1 ? "key mismatch" : "incorrect username"), "\(device.log)")
        #expect(!device.log.contains("asked, this device runs"), "\(device.log)")
        #expect(!device.log.contains("session established"), "\(device.log)")
    }

    @Test func aWrongSecurity2UsernameIsRefusedLikeAWrongProof() async throws {
        let device = try ESPProvisioningDevice(security: 2, proofOfPossession: Self.pop)
        let error = await #expect(throws: ProvisioningError.self) {
            _ = try await provision(device, .sec2(username: "someone", proofOfPossession: Secret(Self.pop)))
        }
        #expect(error == .wrongProofOfPossession(.sec2))
    }

    @Test func aNewSessionWorksAfterARefusedOne() async throws {
        let device = try ESPProvisioningDevice(security: 1, proofOfPossession: Self.pop)
        await #expect(throws: ProvisioningError.wrongProofOfPossession(.sec1)) {
            _ = try await provision(device, .sec1(proofOfPossession: Secret("wrong-pop")))
        }
        _ = try await provision(device, .sec1(proofOfPossession: Secret(Self.pop)))
    }

    @Test(arguments: [
        ("HomeNet", "wrong-passphrase", WiFiFailureReason.authError),
        ("OtherNet", home, WiFiFailureReason.networkNotFound),
    ])
    func theDevicesFailureReasonIsReported(ssid: String, passphrase: String, reason: WiFiFailureReason) async throws {
        let device = try ESPProvisioningDevice(security: 2, proofOfPossession: Self.pop)
        let error = await #expect(throws: ProvisioningError.self) {
            _ = try await provision(
                device, .sec2(username: "wifiprov", proofOfPossession: Secret(Self.pop)),
                ssid: ssid, passphrase: passphrase)
        }
        #expect(error == .connectionFailed(ssid: Array(ssid.utf8), reason))
        #expect(!"\(String(describing: error))".contains(passphrase))
    }

    @Test func aProofOfPossessionIsAskedForBeforeTalkingSecurity() async throws {
        let device = try ESPProvisioningDevice(security: 1, proofOfPossession: Self.pop)
        let client = try client(device)
        let version = try await client.version()
        await #expect(throws: ProvisioningError.proofOfPossessionRequired) {
            try await client.establishSession(.sec1(proofOfPossession: nil), version: version)
        }
        await #expect(throws: ProvisioningError.securityMismatch(requested: .sec2, device: .sec1)) {
            try await client.establishSession(
                .sec2(username: "wifiprov", proofOfPossession: Secret(Self.pop)),
                version: version)
        }
        await #expect(throws: ProvisioningError.sessionNotEstablished) { _ = try await client.status() }
    }

    @Test func cancellingWhileTheDeviceJoinsEndsTheWaitAsCancelled() async throws {
        let device = try ESPProvisioningDevice(security: 1, proofOfPossession: Self.pop, connectingPolls: 100_000)
        let client = try client(device)
        try await client.establishSession(
            .sec1(proofOfPossession: Secret(Self.pop)),
            version: try await client.version())
        try await client.sendCredentials(WiFiCredentials(ssid: Array("HomeNet".utf8), passphrase: Secret(Self.home)))
        try await client.apply()
        let waiting = Task {
            try await client.waitForConnection(
                ssid: Array("HomeNet".utf8), every: .milliseconds(20),
                timeout: .seconds(60))
        }
        try await Task.sleep(for: .milliseconds(300))
        waiting.cancel()
        let result = await waiting.result
        guard case .failure(let error) = result else {
            Issue.record("the wait went on to \(result)")
            return
        }
        #expect(
            error as? ProvisioningError == .cancelled,
            "a device that never joins ends the wait only by its cancellation, before the 60 s timeout: \(error)")
    }

    @Test func nothingListeningIsATransportErrorNotAHang() async throws {
        let device = try ESPProvisioningDevice(security: 0, proofOfPossession: nil)
        let port = device.port
        device.stop()
        let transport = HTTPProvisioningTransport(host: "127.0.0.1", port: port, timeout: .seconds(30))
        let error = await #expect(throws: ProvisioningError.self) {
            _ = try await transport.send(endpoint: .version, Array("---".utf8))
        }
        guard case .transport(let endpoint, let reason) = error else {
            Issue.record("\(String(describing: error)) is not a transport error")
            return
        }
        #expect(endpoint == "proto-ver")
        #expect(reason.contains("127.0.0.1:\(port)"), "\(reason)")
    }

    @Test func addressesAreParsed() {
        #expect(HTTPProvisioningTransport.parseAddress("192.168.4.1")! == ("192.168.4.1", 80))
        #expect(HTTPProvisioningTransport.parseAddress("192.168.4.1:8080")! == ("192.168.4.1", 8080))
        #expect(HTTPProvisioningTransport.parseAddress("[fe80::1]:81")! == ("fe80::1", 81))
        #expect(HTTPProvisioningTransport.parseAddress("esp32.local")! == ("esp32.local", 80))
        for bad in ["", ":80", "host:0", "host:65536", "host:x", "a b", "[fe80::1", "fe80::1", "host/path"] {
            #expect(HTTPProvisioningTransport.parseAddress(bad) == nil, "\(bad)")
        }
    }
}

/// The simulator against esp-protocomm from PyPI, an independent security 1 client, so the
/// simulator is not only a mirror of our own client.
@Suite(.serialized) struct ESPDeviceCrossCheckTests {
    struct Outcome: Decodable { var outcome: String; var detail: String }

    func runPeer(_ device: ESPProvisioningDevice, pop: String, ssid: String, passphrase: String) throws -> Outcome {
        guard FileManager.default.isExecutableFile(atPath: ESPProvisioningDevice.peersPython) else {
            throw HarnessError(
                "\(ESPProvisioningDevice.peersPython) is missing: run scripts/setup.sh, which installs "
                    + "esp-protocomm from PyPI into .build/python-peers")
        }
        let client = ESPProvisioningDevice.repository.appendingPathComponent("lab/accessories/esp_protocomm_client.py")
        let output = try run(
            ESPProvisioningDevice.peersPython,
            [
                client.path, "--port", "\(device.port)", "--pop-file", try device.writeFile("client.pop", pop),
                "--ssid", ssid, "--passphrase-file", try device.writeFile("client.pass", passphrase),
            ])
        return try JSONDecoder().decode(Outcome.self, from: Data(output.utf8))
    }

    @Test func espProtocommProvisionsTheSimulator() throws {
        let device = try ESPProvisioningDevice(security: 1, proofOfPossession: "abcd1234")
        let outcome = try runPeer(device, pop: "abcd1234", ssid: "HomeNet", passphrase: "home-passphrase")
        #expect(outcome.outcome == "connected", "\(outcome.detail)\n\(device.log)")
    }

    @Test func espProtocommSeesTheSimulatorRefuseAWrongProofOfPossession() throws {
        let device = try ESPProvisioningDevice(security: 1, proofOfPossession: "abcd1234")
        let outcome = try runPeer(device, pop: "wrong-pop", ssid: "HomeNet", passphrase: "home-passphrase")
        #expect(outcome.outcome == "wrong-pop", "\(outcome.detail)\n\(device.log)")
    }

    @Test(arguments: [
        ("HomeNet", "wrong-passphrase", "incorrect password"),
        (
            "OtherNet", "home-passphrase",
            "incorrect SSID"
        ),
    ])
    func espProtocommReadsTheSimulatorsFailureReasons(ssid: String, passphrase: String, expected: String) throws {
        let device = try ESPProvisioningDevice(security: 1, proofOfPossession: "abcd1234")
        let outcome = try runPeer(device, pop: "abcd1234", ssid: ssid, passphrase: passphrase)
        #expect(outcome.outcome == "failed")
        #expect(outcome.detail == "connection failed: \(expected)", "\(device.log)")
    }
}
