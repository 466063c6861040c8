import AccessoryCore
import Foundation
import ServiceHarness
import Testing

@testable import NetworkManagerBackend

/// Profiles built from configurations, with libnm's own checks and no daemon: every
/// configuration the core accepts must become a profile libnm accepts, so that a join can
/// refuse bad input before it asks NetworkManager for anything.
struct WirelessProfileTests {
    static func personal(_ security: HotspotSecurity) throws -> HotspotConfiguration {
        try HotspotConfiguration(target: .ssid(SSID("Acme-Setup")), security: security)
    }

    static func enterprise(_ build: (inout EAPSettings) -> Void) throws -> HotspotConfiguration {
        var settings = EAPSettings(supportedEAPTypes: [.ttls])
        settings.username = "user"
        settings.password = Secret("password")
        build(&settings)
        return try HotspotConfiguration(target: .ssid(SSID("Corp-Setup")), security: .enterprise(settings))
    }

    /// Candidates at the edges of what the core allows; the test uses those the core accepts.
    static func candidates(certificates: CertificateDirectory) -> [(String, () throws -> HotspotConfiguration)] {
        [
            ("open", { try personal(.open) }),
            ("owe", { try personal(.owe) }),
            ("WPA2, 8 characters", { try personal(.wpa2Personal(Secret("12345678"))) }),
            ("WPA2, 63 characters", { try personal(.wpa2Personal(Secret(String(repeating: "p", count: 63)))) }),
            ("WPA2, 64 hex digits", { try personal(.wpa2Personal(Secret(String(repeating: "ab", count: 32)))) }),
            ("WPA3, 1 character", { try personal(.wpa3Personal(Secret("x"))) }),
            ("WPA3, 63 characters", { try personal(.wpa3Personal(Secret(String(repeating: "s", count: 63)))) }),
            ("WPA3, 64 characters", { try personal(.wpa3Personal(Secret(String(repeating: "s", count: 64)))) }),
            ("WPA3, 200 characters", { try personal(.wpa3Personal(Secret(String(repeating: "s", count: 200)))) }),
            ("WPA3, not ASCII", { try personal(.wpa3Personal(Secret("pässwörd-ß"))) }),
            ("WEP, 10 hex digits", { try personal(.wep(Secret("0123456789"))) }),
            ("WEP, 26 hex digits", { try personal(.wep(Secret("0123456789abcdef0123456789"))) }),
            (
                "EAP-TTLS, longest user name and password",
                {
                    try enterprise {
                        $0.username = String(repeating: "u", count: 253)
                        $0.password = Secret(String(repeating: "p", count: 64))
                    }
                }
            ),
            ("EAP, one CA certificate", { try enterprise { $0.trustedServerCertificatePaths = [certificates.ca] } }),
            (
                "EAP, two CA certificates",
                { try enterprise { $0.trustedServerCertificatePaths = [certificates.ca, certificates.ca] } }
            ),
            (
                "EAP, ten CA certificates",
                {
                    try enterprise { $0.trustedServerCertificatePaths = Array(repeating: certificates.ca, count: 10) }
                }
            ),
            (
                "EAP-TLS",
                {
                    var settings = EAPSettings(supportedEAPTypes: [.tls])
                    settings.clientCertificatePath = certificates.client
                    settings.privateKeyPath = certificates.key
                    settings.privateKeyPassword = Secret("key-pass")
                    settings.trustedServerCertificatePaths = [certificates.ca]
                    return try HotspotConfiguration(target: .ssid(SSID("Corp-Setup")), security: .enterprise(settings))
                }
            ),
        ]
    }

    @Test func everyConfigurationTheCoreAcceptsBecomesAProfileLibNMAccepts() throws {
        let certificates = try CertificateDirectory()
        var accepted = 0
        for (name, make) in Self.candidates(certificates: certificates) {
            guard let configuration = try? make() else { continue }
            accepted += 1
            let ssid: SSID = if case .ssid(let ssid) = configuration.target { ssid } else { try SSID("?") }
            do throws(HotspotError) {
                let profile = WirelessProfile(configuration, ssid: ssid, options: JoinOptions())
                try LibNM.verify(try LibNM.connection(profile))
            } catch {
                Issue.record("\(name): the core accepts it, the backend refuses it: \(error)")
            }
        }
        #expect(accepted >= 15, "the candidates the core accepts are the point of this test")
    }

    @Test func secretsInAProfileNeverPrint() throws {
        let passphrase = "hunter2-passphrase"
        var settings = EAPSettings(supportedEAPTypes: [.ttls])
        settings.username = "user"
        settings.password = Secret("eap-\(passphrase)")
        settings.privateKeyPassword = Secret("key-\(passphrase)")
        let configurations = [
            try Self.personal(.wpa2Personal(Secret(passphrase))),
            try Self.personal(.wpa3Personal(Secret(passphrase))),
            try Self.personal(.wep(Secret("0123456789"))),
            try HotspotConfiguration(target: .ssid(SSID("Corp-Setup")), security: .enterprise(settings)),
        ]
        for configuration in configurations {
            let profile = WirelessProfile(configuration, ssid: try SSID("Acme-Setup"), options: JoinOptions())
            var dumped = ""
            dump(profile, to: &dumped)
            for text in ["\(profile)", String(reflecting: profile), dumped] {
                #expect(!text.contains(passphrase), "\(text)")
                #expect(!text.contains("0123456789"), "\(text)")
            }
        }
    }
}

/// A throwaway CA and client certificate that libnm can load.
final class CertificateDirectory {
    let directory: ScratchDirectory
    var ca: String { directory.path("ca.pem") }
    var client: String { directory.path("client.pem") }
    var key: String { directory.path("client.key") }

    init() throws {
        directory = try ScratchDirectory("certificates")
        try makeTestCertificates(in: directory.url.path)
    }
}
