import Testing

@testable import AccessoryCore

private func ssid(_ text: String) -> HotspotConfiguration.Target { .ssid(try! SSID(notation: text)) }
private func prefix(_ text: String) -> HotspotConfiguration.Target { .ssidPrefix(try! SSID(notation: text)) }

/// EAP settings that pass validation for the given types.
private func validEAP(_ types: [EAPSettings.EAPType] = [.peap]) -> EAPSettings {
    var settings = EAPSettings(supportedEAPTypes: types)
    settings.username = "alice"
    settings.password = Secret("correct horse")
    settings.clientCertificatePath = "/etc/certs/client.pem"
    settings.privateKeyPath = "/etc/certs/client.key"
    return settings
}

/// The case name of an error, to compare errors whose message is free text.
private func caseName(_ error: HotspotConfigurationError) -> String {
    switch error {
    case .invalid: "invalid"
    case .invalidSSID: "invalidSSID"
    case .invalidWPAPassphrase: "invalidWPAPassphrase"
    case .invalidWEPPassphrase: "invalidWEPPassphrase"
    case .invalidEAPSettings: "invalidEAPSettings"
    case .joinOnceNotSupported: "joinOnceNotSupported"
    case .invalidSSIDPrefix: "invalidSSIDPrefix"
    }
}

/// Runs `body` and returns the HotspotConfigurationError it threw, recording an issue if it
/// threw nothing or another error.
private func error(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> HotspotConfigurationError? {
    do {
        try body()
        Issue.record("expected a HotspotConfigurationError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let thrown as HotspotConfigurationError {
        return thrown
    } catch {
        Issue.record("expected a HotspotConfigurationError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

@Suite("HotspotConfiguration")
struct HotspotConfigurationTests {
    @Test(
        "error codes are NEHotspotConfigurationError's raw values",
        arguments: [
            (HotspotConfigurationError.invalid(field: "hidden", "x"), 0, "hidden"),
            (.invalidSSID("x"), 1, "ssid"),
            (.invalidWPAPassphrase("x"), 2, "passphrase"),
            (.invalidWEPPassphrase("x"), 3, "passphrase"),
            (.invalidEAPSettings(field: "username", "x"), 4, "eap.username"),
            (.joinOnceNotSupported, 12, "joinOnce"),
            (.invalidSSIDPrefix("x"), 15, "ssidPrefix"),
        ])
    func codes(error: HotspotConfigurationError, code: Int, field: String) {
        #expect(error.code == code)
        #expect(error.field == field)
        #expect(error.description == "\(field): \(error.message)")
    }

    @Test("an open network with an exact SSID keeps its settings")
    func openNetwork() throws {
        let configuration = try HotspotConfiguration(target: ssid("WLED-AP"), joinOnce: true, hidden: true)
        #expect(configuration.target == ssid("WLED-AP"))
        #expect(configuration.security == .open)
        #expect(configuration.joinOnce)
        #expect(configuration.hidden)
        #expect(configuration.lifetimeInDays == nil)
    }

    // MARK: SSID prefix

    @Test("a prefix of 2 bytes is refused with invalidSSIDPrefix (15)")
    func prefixTooShort() {
        let thrown = error { _ = try HotspotConfiguration(target: prefix("ab")) }
        #expect(thrown.map(caseName) == "invalidSSIDPrefix")
        #expect(thrown?.code == 15)
        #expect(thrown?.message == "is 2 bytes long; a prefix needs 3 to 32 bytes")
    }

    @Test(
        "a prefix of 3 bytes, or 3 bytes of a multibyte character and more, is accepted",
        arguments: ["abc", "é1", "hex:ff0001"])
    func prefixLongEnough(text: String) throws {
        let configuration = try HotspotConfiguration(target: prefix(text))
        #expect(configuration.target == prefix(text))
    }

    @Test("a 1-character prefix of 2 bytes is refused: bytes count, not characters")
    func prefixCountsBytes() {
        #expect(error { _ = try HotspotConfiguration(target: prefix("é")) }.map(caseName) == "invalidSSIDPrefix")
    }

    @Test("a hidden network cannot be joined by prefix")
    func hiddenWithPrefix() {
        #expect(
            error { _ = try HotspotConfiguration(target: prefix("PROV_"), hidden: true) }
                == .invalid(field: "hidden", "a hidden network cannot be found by prefix; give its full SSID"))
    }

    // MARK: WPA2 personal

    @Test(
        "WPA passphrases of 8 to 63 printable ASCII characters, or 64 hex digits, are accepted",
        arguments: [
            String(repeating: "a", count: 8),
            "wled1234",
            String(repeating: "Z", count: 63),
            " ~!@#$%^&*()_+{}|:\"<>?",
            String(repeating: "0123456789abcdef", count: 4),
            String(repeating: "ABCDEF0123456789", count: 4),
        ])
    func wpaAccepted(passphrase: String) throws {
        let configuration = try HotspotConfiguration(
            target: ssid("WLED-AP"), security: .wpa2Personal(Secret(passphrase)))
        #expect(configuration.security == .wpa2Personal(Secret(passphrase)))
    }

    @Test(
        "WPA passphrases of the wrong length are refused with invalidWPAPassphrase (2)",
        arguments: [
            ("", 0),
            ("1234567", 7),
            (String(repeating: "g", count: 64), 64),  // 64 characters but not hex
            (String(repeating: "0123456789abcdef", count: 4) + "0", 65),
            (String(repeating: "a", count: 65), 65),
        ])
    func wpaWrongLength(passphrase: String, count: Int) {
        let thrown = error {
            _ = try HotspotConfiguration(target: ssid("WLED-AP"), security: .wpa2Personal(Secret(passphrase)))
        }
        #expect(
            thrown
                == .invalidWPAPassphrase(
                    "has \(count) characters; a WPA passphrase has 8 to 63 printable ASCII characters, or is 64 hex digits"
                ))
        #expect(thrown?.code == 2)
    }

    @Test(
        "WPA passphrases with characters that are not printable ASCII are refused",
        arguments: [
            "pässwörd", "password\t1", "password\u{7F}", "日本語のパスワード",
        ])
    func wpaNotASCII(passphrase: String) {
        #expect(
            error { _ = try HotspotConfiguration(target: ssid("x"), security: .wpa2Personal(Secret(passphrase))) }
                == .invalidWPAPassphrase("a WPA passphrase may hold only printable ASCII characters"))
    }

    // MARK: WEP

    @Test(
        "WEP keys of 10 or 26 hex digits are accepted",
        arguments: ["0123456789", "ABCDEF0123", String(repeating: "ab", count: 13)])
    func wepAccepted(key: String) throws {
        _ = try HotspotConfiguration(target: ssid("x"), security: .wep(Secret(key)))
    }

    @Test(
        "other WEP keys are refused with invalidWEPPassphrase (3)",
        arguments: [
            "abcde",  // 5 ASCII characters
            "0123456789a",  // 11 hex digits
            "012345678",  // 9 hex digits
            "012345678g",  // 10 characters, not all hex
            String(repeating: "ab", count: 13) + "a",  // 27
            "",
        ])
    func wepRefused(key: String) {
        let thrown = error { _ = try HotspotConfiguration(target: ssid("x"), security: .wep(Secret(key))) }
        #expect(thrown == .invalidWEPPassphrase("a WEP key is 10 hex digits (64-bit) or 26 hex digits (128-bit)"))
        #expect(thrown?.code == 3)
    }

    // MARK: WPA3 and OWE

    @Test("a WPA3 password may be anything but empty")
    func wpa3() throws {
        _ = try HotspotConfiguration(target: ssid("x"), security: .wpa3Personal(Secret("k")))
        _ = try HotspotConfiguration(
            target: ssid("x"), security: .wpa3Personal(Secret(String(repeating: "é", count: 80))))
        let thrown = error { _ = try HotspotConfiguration(target: ssid("x"), security: .wpa3Personal(Secret(""))) }
        #expect(thrown == .invalidWPAPassphrase("a WPA3 password must not be empty"))
        #expect(thrown?.code == 2)
    }

    @Test("OWE needs no passphrase")
    func owe() throws {
        #expect(try HotspotConfiguration(target: ssid("x"), security: .owe).security == .owe)
    }

    // MARK: Enterprise

    @Test(
        "valid EAP settings are accepted for a stored configuration",
        arguments: [
            [EAPSettings.EAPType.peap], [.ttls], [.tls], [.fast], [.tls, .ttls],
        ])
    func eapAccepted(types: [EAPSettings.EAPType]) throws {
        _ = try HotspotConfiguration(target: ssid("Corp"), security: .enterprise(validEAP(types)), joinOnce: false)
    }

    @Test("EAP-TLS alone needs no username or password")
    func eapTLSWithoutPassword() throws {
        var settings = EAPSettings(supportedEAPTypes: [.tls])
        settings.clientCertificatePath = "/c.pem"
        settings.privateKeyPath = "/c.key"
        try settings.validate()
    }

    @Test("EAP settings without any EAP type are refused")
    func eapNoTypes() {
        var settings = validEAP()
        settings.supportedEAPTypes = []
        let thrown = error { _ = try HotspotConfiguration(target: ssid("Corp"), security: .enterprise(settings)) }
        #expect(
            thrown
                == .invalidEAPSettings(field: "supportedEAPTypes", "name at least one EAP type (tls, ttls, peap, fast)")
        )
        #expect(thrown?.code == 4)
        #expect(thrown?.field == "eap.supportedEAPTypes")
    }

    @Test("TTLS without a username, or with an empty one, is refused", arguments: [nil, ""] as [String?])
    func eapTTLSWithoutUsername(username: String?) {
        var settings = validEAP([.ttls])
        settings.username = username
        let thrown = error { try settings.validate() }
        #expect(
            thrown
                == .invalidEAPSettings(field: "username", "TTLS, PEAP and FAST need a username of 1 to 253 characters"))
        #expect(thrown?.field == "eap.username")
        #expect(thrown?.code == 4)
    }

    @Test("a username of 254 bytes is refused, 253 accepted")
    func eapUsernameLength() throws {
        var settings = validEAP([.peap])
        settings.username = String(repeating: "u", count: 253)
        try settings.validate()
        settings.username = String(repeating: "u", count: 254)
        #expect(error { try settings.validate() }.map(caseName) == "invalidEAPSettings")
    }

    @Test(
        "TTLS without a password, with an empty one or with one over 64 characters is refused",
        arguments: [
            nil, "", String(repeating: "p", count: 65),
        ] as [String?])
    func eapTTLSPassword(password: String?) {
        var settings = validEAP([.ttls])
        settings.password = password.map(Secret.init)
        let thrown = error { try settings.validate() }
        #expect(
            thrown
                == .invalidEAPSettings(field: "password", "TTLS, PEAP and FAST need a password of 1 to 64 characters"))
        #expect(thrown?.field == "eap.password")
    }

    @Test("a password of 64 characters is accepted")
    func eapPassword64() throws {
        var settings = validEAP([.ttls])
        settings.password = Secret(String(repeating: "p", count: 64))
        try settings.validate()
    }

    @Test(
        "EAP-TLS without a client certificate or its key is refused",
        arguments: [(true, false), (false, true), (false, false)])
    func eapTLSWithoutCertificate(hasCertificate: Bool, hasKey: Bool) {
        var settings = validEAP([.tls])
        if !hasCertificate { settings.clientCertificatePath = nil }
        if !hasKey { settings.privateKeyPath = nil }
        let thrown = error { try settings.validate() }
        #expect(
            thrown
                == .invalidEAPSettings(
                    field: "clientCertificatePath", "EAP-TLS needs a client certificate and its private key"))
        #expect(thrown?.field == "eap.clientCertificatePath")
    }

    @Test("a required TLS client certificate is checked for PEAP too")
    func tlsClientCertificateRequired() {
        var settings = validEAP([.peap])
        settings.clientCertificatePath = nil
        #expect(throws: Never.self) { try settings.validate() }
        settings.tlsClientCertificateRequired = true
        #expect(error { try settings.validate() }?.field == "eap.clientCertificatePath")
    }

    @Test("one CA certificate file is accepted, more are refused: NetworkManager takes one")
    func eapTrustedCertificates() throws {
        var settings = validEAP()
        settings.trustedServerCertificatePaths = ["/ca-bundle.pem"]
        try settings.validate()
        settings.trustedServerCertificatePaths.append("/ca2.pem")
        let thrown = error { try settings.validate() }
        #expect(
            thrown
                == .invalidEAPSettings(
                    field: "trustedServerCertificatePaths",
                    "NetworkManager takes one CA certificate file; put the certificates into one PEM bundle"))
    }

    @Test("an empty outer identity is refused")
    func eapOuterIdentity() throws {
        var settings = validEAP()
        settings.outerIdentity = "anonymous"
        try settings.validate()
        settings.outerIdentity = ""
        #expect(
            error { try settings.validate() }
                == .invalidEAPSettings(field: "outerIdentity", "must not be empty when given"))
    }

    @Test("an enterprise network cannot be joined once: joinOnceNotSupported (12)")
    func eapJoinOnce() {
        let thrown = error {
            _ = try HotspotConfiguration(target: ssid("Corp"), security: .enterprise(validEAP()), joinOnce: true)
        }
        #expect(thrown == .joinOnceNotSupported)
        #expect(thrown?.code == 12)
    }

    // MARK: Lifetime

    @Test("lifetimes of 1 and 365 days are accepted", arguments: [1, 30, 365])
    func lifetimeAccepted(days: Int) throws {
        #expect(try HotspotConfiguration(target: ssid("x"), lifetimeInDays: days).lifetimeInDays == days)
    }

    @Test("lifetimes outside 1...365 are refused", arguments: [0, 366, -1])
    func lifetimeOutOfRange(days: Int) {
        let thrown = error { _ = try HotspotConfiguration(target: ssid("x"), lifetimeInDays: days) }
        #expect(thrown == .invalid(field: "lifetimeInDays", "is \(days); it must be from 1 to 365"))
        #expect(thrown?.code == 0)
    }

    @Test("a lifetime with joinOnce is refused")
    func lifetimeWithJoinOnce() {
        #expect(
            error { _ = try HotspotConfiguration(target: ssid("x"), joinOnce: true, lifetimeInDays: 30) }
                == .invalid(field: "lifetimeInDays", "a join-once configuration is never stored, so it has no lifetime")
        )
    }

    // MARK: target(ssid:ssidPrefix:)

    @Test("target from an SSID or a prefix, in notation form")
    func targetFromText() throws {
        #expect(try HotspotConfiguration.target(ssid: "WLED-AP", ssidPrefix: nil) == ssid("WLED-AP"))
        #expect(try HotspotConfiguration.target(ssid: "hex:43616ffe", ssidPrefix: nil) == ssid("hex:43616ffe"))
        #expect(try HotspotConfiguration.target(ssid: nil, ssidPrefix: "PROV_") == prefix("PROV_"))
    }

    @Test("target with both an SSID and a prefix is refused")
    func targetBoth() {
        let thrown = error { _ = try HotspotConfiguration.target(ssid: "a", ssidPrefix: "abc") }
        #expect(thrown == .invalid(field: "ssidPrefix", "ssid and ssidPrefix are mutually exclusive"))
    }

    @Test("target with neither is refused with invalidSSID")
    func targetNeither() {
        #expect(
            error { _ = try HotspotConfiguration.target(ssid: nil, ssidPrefix: nil) }
                == .invalidSSID("give an SSID or an SSID prefix"))
    }

    @Test(
        "a bad SSID is invalidSSID with the SSID fault",
        arguments: [
            ("", SSIDError.empty),
            (String(repeating: "x", count: 33), .tooLong(byteCount: 33)),
            ("hex:4", .invalidHex(.oddLength(1))),
        ])
    func targetBadSSID(text: String, fault: SSIDError) {
        #expect(
            error { _ = try HotspotConfiguration.target(ssid: text, ssidPrefix: nil) }
                == .invalidSSID(fault.description))
    }

    @Test(
        "a bad prefix is invalidSSIDPrefix with the SSID fault",
        arguments: [
            ("", SSIDError.empty),
            ("hex:zz", .invalidHex(.invalidCharacter("z", offset: 0))),
        ])
    func targetBadPrefix(text: String, fault: SSIDError) {
        #expect(
            error { _ = try HotspotConfiguration.target(ssid: nil, ssidPrefix: text) }
                == .invalidSSIDPrefix(fault.description))
    }

    // target(ssid:ssidPrefix:) documents "a prefix of 3 to 32 bytes", as HotspotConfiguration.init enforces.
    @Test("target refuses a prefix shorter than 3 bytes", arguments: ["a", "ab", "é"])
    func targetShortPrefix(text: String) {
        let thrown = error { _ = try HotspotConfiguration.target(ssid: nil, ssidPrefix: text) }
        #expect(thrown.map(caseName) == "invalidSSIDPrefix")
    }

    // MARK: HotspotPolicy

    @Test(
        "a policy builds the configuration of its security with the passphrase",
        arguments: [
            (HotspotPolicy.Security.open, nil as String?, HotspotSecurity.open),
            (.owe, nil, .owe),
            (.wpa2Personal, "wled1234", .wpa2Personal(Secret("wled1234"))),
            (.wpa3Personal, "k", .wpa3Personal(Secret("k"))),
            (.wep, "0123456789", .wep(Secret("0123456789"))),
        ])
    func policyConfiguration(security: HotspotPolicy.Security, passphrase: String?, expected: HotspotSecurity) throws {
        let policy = HotspotPolicy(security: security, passphrase: .prompt(hint: nil))
        let configuration = try policy.configuration(for: ssid("WLED-AP"), passphrase: passphrase.map(Secret.init))
        #expect(configuration.security == expected)
        #expect(configuration.joinOnce)
        #expect(configuration.target == ssid("WLED-AP"))
    }

    @Test("a policy carries joinOnce, lifetime and hidden into the configuration")
    func policySettings() throws {
        let policy = HotspotPolicy(security: .open, passphrase: .none, joinOnce: false, lifetimeInDays: 7, hidden: true)
        let configuration = try policy.configuration(for: ssid("Setup"), passphrase: nil)
        #expect(!configuration.joinOnce)
        #expect(configuration.lifetimeInDays == 7)
        #expect(configuration.hidden)
    }

    @Test(
        "a policy that needs a passphrase refuses a missing or bad one",
        arguments: [
            (HotspotPolicy.Security.wpa2Personal, nil as String?, "invalidWPAPassphrase"),
            (.wpa2Personal, "short", "invalidWPAPassphrase"),
            (.wpa3Personal, nil, "invalidWPAPassphrase"),
            (.wep, nil, "invalidWEPPassphrase"),
            (.wep, "abcde", "invalidWEPPassphrase"),
        ])
    func policyBadPassphrase(security: HotspotPolicy.Security, passphrase: String?, expected: String) {
        let policy = HotspotPolicy(security: security, passphrase: .handoff)
        #expect(
            error { _ = try policy.configuration(for: ssid("x"), passphrase: passphrase.map(Secret.init)) }.map(
                caseName) == expected)
    }

    @Test("a policy refuses what the configuration refuses: a short prefix, prefix with hidden, lifetime with joinOnce")
    func policyRefusesConfiguration() {
        #expect(
            error {
                _ = try HotspotPolicy(security: .open, passphrase: .none).configuration(
                    for: prefix("ab"), passphrase: nil)
            }
            .map(caseName) == "invalidSSIDPrefix")
        #expect(
            error {
                _ = try HotspotPolicy(security: .open, passphrase: .none, hidden: true).configuration(
                    for: prefix("abc"), passphrase: nil)
            }?.field == "hidden")
        #expect(
            error {
                _ = try HotspotPolicy(security: .open, passphrase: .none, joinOnce: true, lifetimeInDays: 3)
                    .configuration(for: ssid("abc"), passphrase: nil)
            }?.field == "lifetimeInDays")
    }
}
