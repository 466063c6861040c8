import AccessoryCore
import Foundation
import ServiceHarness
import Testing

@testable import NetworkManagerBackend

/// Every kind of profile through the real NetworkManager daemon, confined to a network
/// namespace with private state: added, read back field by field (secrets too), deleted;
/// NetworkManager's own rejections come back as typed errors; nothing is left behind.
@Suite(.serialized) final class RealNetworkManagerProfileTests {
    let daemon: IsolatedNetworkManager

    init() throws {
        daemon = try IsolatedNetworkManager()
    }

    deinit { daemon.stop() }

    func client() async throws -> NetworkManagerClient {
        try await NetworkManagerClient.connect(busAddress: daemon.bus.address)
    }

    static func profile(_ configuration: HotspotConfiguration) throws -> WirelessProfile {
        guard case .ssid(let ssid) = configuration.target else { throw HarnessError("an exact SSID is needed") }
        var options = JoinOptions()
        options.recordID = UUID(uuidString: "6f1c2a58-0d7e-4c57-9a1e-3c1b8f0e2d11")
        return WirelessProfile(configuration, ssid: ssid, options: options)
    }

    /// Every security kind, as `accessoryctl join` would hand them over.
    static func kinds(certificates: URL) throws -> [(name: String, configuration: HotspotConfiguration)] {
        var tls = EAPSettings(supportedEAPTypes: [.tls])
        tls.username = "plug@example.org"
        tls.clientCertificatePath = certificates.appendingPathComponent("client.pem").path
        tls.privateKeyPath = certificates.appendingPathComponent("client.key").path
        tls.privateKeyPassword = Secret("key-pass")
        tls.trustedServerCertificatePaths = [certificates.appendingPathComponent("ca.pem").path]
        tls.trustedServerNames = ["radius.example.org"]
        var ttls = EAPSettings(supportedEAPTypes: [.ttls])
        ttls.username = "installer"
        ttls.password = Secret("ttls-pass")
        ttls.outerIdentity = "anonymous"
        ttls.ttlsInnerAuthenticationType = .mschapv2
        var peap = EAPSettings(supportedEAPTypes: [.peap])
        peap.username = "installer"
        peap.password = Secret("peap-pass")
        peap.preferredTLSVersion = .v1_1
        return [
            ("open", try HotspotConfiguration(target: .ssid(SSID("Open-Setup")))),
            ("hidden", try HotspotConfiguration(target: .ssid(SSID("Quiet-Setup")), hidden: true)),
            (
                "wep",
                try HotspotConfiguration(
                    target: .ssid(SSID("Wep-Setup")), security: .wep(Secret("0123456789abcdef0123456789")))
            ),
            (
                "wpa2",
                try HotspotConfiguration(
                    target: .ssid(SSID("Wpa-Setup")), security: .wpa2Personal(Secret("plug-pass-1")), lifetimeInDays: 30
                )
            ),
            (
                "wpa2-hex",
                try HotspotConfiguration(
                    target: .ssid(SSID("Hex-Setup")),
                    security: .wpa2Personal(Secret(String(repeating: "ab", count: 32))))
            ),
            (
                "sae",
                try HotspotConfiguration(target: .ssid(SSID("Sae-Setup")), security: .wpa3Personal(Secret("sae pass")))
            ),
            ("owe", try HotspotConfiguration(target: .ssid(SSID("Owe-Setup")), security: .owe)),
            ("utf8", try HotspotConfiguration(target: .ssid(SSID("Caf\u{e9}-\u{1F50C}")))),
            ("non-utf8", try HotspotConfiguration(target: .ssid(SSID(bytes: [0x43, 0xFE, 0x00, 0x01])))),
            ("eap-tls", try HotspotConfiguration(target: .ssid(SSID("Tls-Setup")), security: .enterprise(tls))),
            ("eap-ttls", try HotspotConfiguration(target: .ssid(SSID("Ttls-Setup")), security: .enterprise(ttls))),
            ("eap-peap", try HotspotConfiguration(target: .ssid(SSID("Peap-Setup")), security: .enterprise(peap))),
        ]
    }

    /// PEM files NetworkManager can load, a throwaway CA and client certificate, in the
    /// daemon's private directory, which goes with it.
    func makeCertificates() throws -> URL {
        let url = daemon.keyfileDirectory.deletingLastPathComponent().appendingPathComponent("certificates")
        try makeTestCertificates(in: url.path)
        return url
    }

    @Test(arguments: [
        "open", "hidden", "wep", "wpa2", "wpa2-hex", "sae", "owe", "utf8", "non-utf8", "eap-tls", "eap-ttls",
        "eap-peap",
    ])
    func profileRoundTrip(kind: String) async throws {
        // Only the TLS kind reads its certificate files.
        let certificates = kind == "eap-tls" ? try makeCertificates() : daemon.keyfileDirectory
        let configuration = try #require(try Self.kinds(certificates: certificates).first { $0.name == kind })
            .configuration
        let profile = try Self.profile(configuration)
        let client = try await client()

        try await client.add(profile, persistence: configuration.joinOnce ? .memory : .disk)
        #expect(daemon.keyfiles() == ["\(profile.id).nmconnection"], "one keyfile for the stored profile")
        let stored = try #require(try await client.storedProfile(uuid: profile.uuid), "NetworkManager has the profile")

        #expect(stored.profile == profile, "every field, secrets included, reads back as written")
        #expect(stored.autoconnect == false)
        #expect(stored.ipv4NeverDefault)
        #expect(stored.ipv6NeverDefault)
        #expect(stored.unsaved == false)
        #expect(stored.filename == daemon.keyfileDirectory.appendingPathComponent("\(profile.id).nmconnection").path)

        #expect(try await client.deleteProfile(uuid: profile.uuid))
        #expect(try await client.storedProfile(uuid: profile.uuid) == nil)
        #expect(daemon.keyfiles().isEmpty, "the keyfile is gone")
    }

    @Test func inMemoryProfileNeverReachesTheKeyfileDirectory() async throws {
        let profile = try Self.profile(
            try HotspotConfiguration(target: .ssid(SSID("Mem-Setup")), security: .wpa2Personal(Secret("memory-pass"))))
        let client = try await client()
        try await client.add(profile, persistence: .memory)
        let stored = try #require(try await client.storedProfile(uuid: profile.uuid))
        #expect(stored.unsaved)
        #expect(stored.profile.psk == Secret("memory-pass"))
        #expect(daemon.keyfiles().isEmpty)
        #expect(try await client.deleteProfile(uuid: profile.uuid))
        #expect(await client.allProfileUUIDs().isEmpty)
    }

    /// The home network an accessory is provisioned with: the person's own profile for the
    /// SSID, with the passphrase NetworkManager stores; never one this project made.
    @Test func theStoredHomeNetworkIsThePersonsProfileWithItsPassphrase() async throws {
        let client = try await client()
        var home = try Self.profile(
            try HotspotConfiguration(
                target: .ssid(SSID("HomeNet")), security: .wpa2Personal(Secret("home-secret-42")), joinOnce: false))
        home.userData = [:]
        home.id = "HomeNet"
        var ours = try Self.profile(
            try HotspotConfiguration(
                target: .ssid(SSID("HomeNet")), security: .wpa2Personal(Secret("accessory-made")), joinOnce: false))
        ours.uuid = UUID().uuidString.lowercased()
        ours.id = "Accessory HomeNet"
        try await client.add(ours, persistence: .memory)
        try await client.add(home, persistence: .memory)

        var alices = try Self.profile(
            try HotspotConfiguration(
                target: .ssid(SSID("AliceNet")), security: .wpa2Personal(Secret("alices-secret")), joinOnce: false))
        alices.userData = [:]
        alices.id = "AliceNet"
        alices.permittedUsers = ["alice"]
        try await client.add(alices, persistence: .memory)

        let network = try await client.storedNetwork(ssid: try SSID("HomeNet"), device: nil, permitting: "bob")
        #expect(network.connectionID == "HomeNet")
        #expect(network.passphrase == Secret("home-secret-42"))
        #expect(network.keyManagement == "wpa-psk")
        #expect(
            try network.credentials()
                == WiFiCredentials(ssid: Array("HomeNet".utf8), passphrase: Secret("home-secret-42")))
        await #expect(throws: HotspotError.notStored("CafeNet")) {
            _ = try await client.storedNetwork(ssid: try SSID("CafeNet"), device: nil, permitting: nil)
        }
        // Another user's profile is not theirs to give away; its owner's, and root's, it is.
        await #expect(throws: HotspotError.notStored("AliceNet")) {
            _ = try await client.storedNetwork(ssid: try SSID("AliceNet"), device: nil, permitting: "bob")
        }
        let alice = try await client.storedNetwork(ssid: try SSID("AliceNet"), device: nil, permitting: "alice")
        #expect(alice.passphrase == Secret("alices-secret"))
        #expect(
            try await client.storedNetwork(ssid: try SSID("AliceNet"), device: nil, permitting: nil).connectionID
                == "AliceNet")
        await #expect(throws: HotspotError.noWiFiDevice(nil), "the network the machine is on needs a Wi-Fi device") {
            _ = try await client.storedNetwork(ssid: nil, device: nil, permitting: nil)
        }
        for uuid in await client.allProfileUUIDs() { try await client.deleteProfile(uuid: uuid) }
    }

    /// Profiles our own types cannot even express, handed straight to NetworkManager.
    @Test(arguments: [
        (
            "ssid",
            WirelessProfile(
                id: "Accessory Long", uuid: UUID().uuidString.lowercased(), ssid: Array(repeating: 0x41, count: 33))
        ),
        ("empty", WirelessProfile(id: "Accessory Empty", uuid: UUID().uuidString.lowercased(), ssid: [])),
        (
            "psk",
            WirelessProfile(
                id: "Accessory Short", uuid: UUID().uuidString.lowercased(), ssid: Array("Short".utf8),
                keyManagement: "wpa-psk", psk: Secret("7-chars"))
        ),
        (
            "psk64",
            WirelessProfile(
                id: "Accessory NotHex", uuid: UUID().uuidString.lowercased(), ssid: Array("NotHex".utf8),
                keyManagement: "wpa-psk", psk: Secret(String(repeating: "z", count: 64)))
        ),
        (
            "wep",
            WirelessProfile(
                id: "Accessory Wep", uuid: UUID().uuidString.lowercased(), ssid: Array("Wep".utf8),
                keyManagement: "none", wepKey: Secret("0123"))
        ),
    ])
    func networkManagersRejectionsAreTyped(field: String, profile: WirelessProfile) async throws {
        let client = try await client()
        do {
            try await client.add(profile, persistence: .disk, verifyLocally: false)
            Issue.record("NetworkManager accepted \(profile.id)")
        } catch {
            switch (field, error) {
            case ("ssid", .invalidConfiguration(.invalidSSID(let message))),
                ("empty", .invalidConfiguration(.invalidSSID(let message))):
                #expect(message.contains("SSID length is out of range"), "\(message)")
            case ("psk", .invalidConfiguration(.invalidWPAPassphrase(let message))),
                ("psk64", .invalidConfiguration(.invalidWPAPassphrase(let message))):
                #expect(message.contains("property is invalid"), "\(message)")
            case ("wep", .invalidConfiguration(.invalidWEPPassphrase)):
                break
            default:
                Issue.record("\(field): unexpected error \(error)")
            }
        }
        #expect(daemon.keyfiles().isEmpty)
        #expect(await client.allProfileUUIDs().isEmpty)
    }

    @Test func localVerificationNamesTheFieldBeforeAnythingIsSent() async throws {
        let client = try await client()
        let short = WirelessProfile(
            id: "Accessory Short", uuid: UUID().uuidString.lowercased(), ssid: Array("Short".utf8),
            keyManagement: "wpa-psk", psk: Secret("7-chars"))
        await #expect(throws: HotspotError.invalidConfiguration(.invalidWPAPassphrase("property is invalid"))) {
            try await client.add(short, persistence: .disk)
        }
        #expect(daemon.keyfiles().isEmpty)
    }

    @Test func joinWithoutAWiFiDeviceSaysSo() async throws {
        let client = try await client()
        await #expect(throws: HotspotError.noWiFiDevice(nil)) {
            try await client.join(try HotspotConfiguration(target: .ssid(SSID("Any-Setup"))), options: JoinOptions())
        }
        #expect(await client.allProfileUUIDs().isEmpty)
        #expect(try await client.configuredHotspots().isEmpty)
    }
}
