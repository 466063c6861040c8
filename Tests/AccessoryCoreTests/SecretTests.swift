import Testing

@testable import AccessoryCore

private let passphrase = "hunter2-wled1234"

@Suite("Secret")
struct SecretTests {
    @Test("reveal gives the text back; isEmpty reflects it")
    func reveal() {
        #expect(Secret(passphrase).reveal() == passphrase)
        #expect(!Secret(passphrase).isEmpty)
        #expect(Secret("").isEmpty)
    }

    @Test("description, debugDescription and interpolation print <redacted>")
    func printing() {
        let secret = Secret(passphrase)
        #expect(secret.description == "<redacted>")
        #expect(secret.debugDescription == "<redacted>")
        #expect("\(secret)" == "<redacted>")
        #expect(String(describing: secret) == "<redacted>")
        #expect(String(reflecting: secret) == "<redacted>")
        #expect("\([secret])" == "[<redacted>]")
        #expect("\(Optional(secret) as Any)" == "Optional(<redacted>)")
    }

    @Test("dump does not show the value")
    func dumped() {
        var output = ""
        dump(Secret(passphrase), to: &output)
        #expect(!output.contains(passphrase))
        #expect(output.contains("<redacted>"))
        #expect(Mirror(reflecting: Secret(passphrase)).children.isEmpty)
    }

    @Test("secrets compare by value")
    func equality() {
        #expect(Secret("a") == Secret("a"))
        #expect(Secret("a") != Secret("b"))
    }

    @Test(
        "a configuration holding a passphrase never prints it",
        arguments: [
            HotspotSecurity.wpa2Personal(Secret(passphrase)),
            .wpa3Personal(Secret(passphrase)),
            .wep(Secret("0123456789")),
        ])
    func configurationNeverPrintsPassphrase(security: HotspotSecurity) throws {
        let configuration = try HotspotConfiguration(target: .ssid(SSID("WLED-AP")), security: security, joinOnce: true)
        let secret: String =
            switch security {
            case .wpa2Personal(let s), .wpa3Personal(let s), .wep(let s): s.reveal()
            default: ""
            }
        var dumped = ""
        dump(configuration, to: &dumped)
        let printed = [
            dumped,
            String(describing: configuration),
            String(reflecting: configuration),
            "\(configuration)",
            String(describing: security),
        ]
        for text in printed {
            #expect(!text.contains(secret), "printed the passphrase: \(text)")
        }
        #expect(dumped.contains("WLED-AP"))  // the dump is real, only the passphrase is hidden
        #expect(String(describing: configuration).contains("<redacted>"))
    }

    @Test("EAP settings never print the password or the private key password")
    func eapSettingsNeverPrintPasswords() throws {
        var settings = EAPSettings(supportedEAPTypes: [.peap])
        settings.username = "alice"
        settings.password = Secret(passphrase)
        settings.privateKeyPassword = Secret("key-password-42")
        let configuration = try HotspotConfiguration(target: .ssid(SSID("Corp")), security: .enterprise(settings))
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [dumped, String(describing: configuration), String(reflecting: settings)] {
            #expect(!text.contains(passphrase))
            #expect(!text.contains("key-password-42"))
        }
        #expect(dumped.contains("alice"))
    }

    @Test("a policy with a fixed passphrase never prints it")
    func policyNeverPrintsPassphrase() {
        let policy = HotspotPolicy(security: .wpa2Personal, passphrase: .fixed(Secret(passphrase)))
        var dumped = ""
        dump(policy, to: &dumped)
        #expect(!dumped.contains(passphrase))
        #expect(!String(describing: policy).contains(passphrase))
    }
}
