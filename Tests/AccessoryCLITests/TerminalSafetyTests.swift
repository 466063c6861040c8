import AccessoryCLI
import Foundation
import ServiceHarness
import Testing

/// Characters that must never reach a terminal raw from outside: ESC, a C1 control (CSI, which
/// some terminals take as ESC [), a right-to-left override and a line separator.
private let dangerous: [Unicode.Scalar] = ["\u{1B}", "\u{9B}", "\u{202E}", "\u{2028}", "\u{07}"]

private func expectNoRawControls(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let found = text.unicodeScalars.filter(dangerous.contains)
    #expect(
        found.isEmpty, "raw \(found.map { String($0.value, radix: 16) }) in: \(text.debugDescription)",
        sourceLocation: sourceLocation)
}

/// Strings from profile files and recorded scans, printed by commands that need no service.
@Suite struct FileTerminalSafetyTests {
    /// A profile whose id, unknown key and hotspot security hold escape sequences.
    static let hostileProfile = """
        {
          "schemaVersion": 1,
          "id": "evil\\u001b[2J\\u202e.id",
          "vendor": "Evil",
          "supports": ["wifi"],
          "\\u001b]0;owned\\u0007": 1,
          "hotspot": { "security": "\\u001b[31mwpa\\u009b", "passphrase": { "source": "none" } },
          "handoff": "joinHotspot",
          "items": [{ "name": "Evil\\u001b[5mplug", "descriptor": { "ssidPrefix": "Evil" } }]
        }
        """

    /// A valid profile whose vendor holds an escape sequence and format characters (in an item's
    /// name both are refused, as in the names an app shows).
    static let profileWithEscapesInValues = """
        {
          "schemaVersion": 1,
          "id": "org.example.plug",
          "vendor": "Evil\\u001b[2J\\u202e\\u200b",
          "supports": ["wifi"],
          "hotspot": { "security": "open", "passphrase": { "source": "none" } },
          "handoff": "joinHotspot",
          "items": [{ "name": "Evil plug", "descriptor": { "ssidPrefix": "Evil" } }]
        }
        """

    /// A scan whose matching SSID holds ESC, a C1 control and format characters.
    static let scanWithControls = """
        {
          "schemaVersion": 1,
          "wifi": [{ "ssid": "Evil\\u001b[31mAP\\u009b\\u202e\\u200b", "bssid": "02:00:00:00:00:01", "strength": 50,
                     "frequency": 2412, "security": [] }],
          "bluetooth": []
        }
        """

    static let invalidScan = """
        { "schemaVersion": 1, "wifi": [{ "ssid": "x", "bssid": "\\u001b[2J\\u009b", "strength": 1,
          "frequency": 2412, "security": ["\\u001b[31m"] }] }
        """

    @Test func profileValidateEscapesWhatTheFileHolds() async throws {
        let file = try TemporaryFile(Self.hostileProfile, name: "evil.json")
        let run = await accessoryctl("profile", "validate", file.path)
        #expect(run.code == .failure)
        expectNoRawControls(run.out + run.err)
        #expect(run.out.contains("\\x1b[2J"), "\(run.out)")
        #expect(run.out.contains("\\x1b[31mwpa\\xc2\\x9b"), "\(run.out)")
        #expect(run.out.contains("\\x1b]0;owned\\x07"), "\(run.out)")
        #expect(
            run.out.contains("items[0].name: must not contain control, format or bidirectional characters"),
            "\(run.out)")
    }

    /// A file name is outside text too: a glob can pick up a file named by someone else.
    @Test func profileValidateEscapesTheFileName() async throws {
        let file = try TemporaryFile(Self.profileWithEscapesInValues, name: "ok\u{1B}[2J\u{202E}.json")
        let run = await accessoryctl("profile", "validate", file.path)
        #expect(run.code == .success, "\(run.out)")
        expectNoRawControls(run.out + run.err)
        #expect(run.out.hasSuffix("ok\\x1b[2J\\xe2\\x80\\xae.json: valid (org.example.plug, 1 item)\n"), "\(run.out)")
    }

    @Test func matchEscapesProfileErrorsOnStandardError() async throws {
        let file = try TemporaryFile(Self.hostileProfile, name: "evil.json")
        let run = await accessoryctl("match", "--profile", file.path, "--scan", Paths.demoScan)
        #expect(run.code == .failure)
        expectNoRawControls(run.out + run.err)
        #expect(run.err.contains("\\x1b[31mwpa"), "\(run.err)")
    }

    @Test func matchEscapesScanErrorsOnStandardError() async throws {
        let scan = try TemporaryFile(Self.invalidScan, name: "scan.json")
        let run = await accessoryctl("match", "--profile", Paths.profile("wled.json"), "--scan", scan.path)
        #expect(run.code == .failure)
        expectNoRawControls(run.out + run.err)
        #expect(run.err.contains("\\x1b[2J"), "\(run.err)")
    }

    @Test func matchTableEscapesSSIDsItemsAndProfiles() async throws {
        let profile = try TemporaryFile(Self.profileWithEscapesInValues, name: "ok.json")
        let scan = try TemporaryFile(Self.scanWithControls, name: "scan.json")
        let run = await accessoryctl("match", "--profile", profile.path, "--scan", scan.path)
        #expect(run.code == .success, "\(run.err)")
        #expect(run.outLines.count == 2, "\(run.out)")
        expectNoRawControls(run.out + run.err)
        #expect(run.out.contains("Evil\\x1b[31mAP"), "\(run.out)")
        #expect(run.out.contains("AP\\xc2\\x9b\\xe2\\x80\\xae\\xe2\\x80\\x8b"), "\(run.out)")
    }

    @Test func matchJSONEscapesEveryControlAndFormatCharacter() async throws {
        let profile = try TemporaryFile(Self.profileWithEscapesInValues, name: "ok.json")
        let scan = try TemporaryFile(Self.scanWithControls, name: "scan.json")
        let run = await accessoryctl("match", "--profile", profile.path, "--scan", scan.path, "--json")
        #expect(run.code == .success, "\(run.err)")
        expectNoRawControls(run.out)
        struct Output: Decodable {
            struct Match: Decodable {
                struct AccessPoint: Decodable { var ssid: String }
                var wifi: AccessPoint
            }
            var matches: [Match]
        }
        let output = try JSONDecoder().decode(Output.self, from: Data(run.out.utf8))
        #expect(
            output.matches.map(\.wifi.ssid) == ["Evil\u{1B}[31mAP\u{9B}\u{202E}\u{200B}"],
            "escaped in JSON, not altered")
    }
}

/// Strings a Bluetooth device sends: its name and its Improv redirect URL.
@Suite(.serialized) final class BluetoothTerminalSafetyTests {
    let mock: BlueZMock
    let improv: String
    let passphraseFile: TemporaryFile
    static let hostileName = "Evil\u{1B}[31mPlug\u{202E}gnp.exe"

    init() throws {
        mock = try BlueZMock()
        try mock.addAdapter()
        improv = try mock.addImprovDevice("24:0A:C4:12:34:56", name: Self.hostileName, state: 2)
        passphraseFile = try TemporaryFile("home-secret-42\n", name: "home.pass")
    }

    deinit { mock.stop() }

    func accessoryctl(_ arguments: String...) async throws -> Run {
        try await accessoryctlProcess(arguments, environment: mock.bus.environment, deadline: .seconds(120))
    }

    @Test func bleListEscapesTheDeviceName() async throws {
        let run = try await accessoryctl("ble", "list", "--timeout", "0.5")
        #expect(run.code == .success, "\(run.err)")
        expectNoRawControls(run.out + run.err)
        #expect(run.out.contains("Evil\\x1b[31mPlug\\xe2\\x80\\xaegnp.exe"), "\(run.out)")
    }

    @Test func bleListJSONEscapesTheDeviceNameLosslessly() async throws {
        let run = try await accessoryctl("ble", "list", "--timeout", "0.5", "--json")
        #expect(run.code == .success, "\(run.err)")
        expectNoRawControls(run.out)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.first?["name"] as? String == Self.hostileName)
    }

    @Test func improvProvisionEscapesTheRedirectURL() async throws {
        try mock.setImprov(improv, url: "http://192.168.1.50/\u{1B}]8;;http://evil/\u{07}setup\u{9B}2J\u{1B}[2J")
        let run = try await accessoryctl(
            "improv", "provision", "24:0A:C4:12:34:56", "--ssid", "HomeNet", "--passphrase-file", passphraseFile.path)
        #expect(run.code == .success, "\(run.err)")
        expectNoRawControls(run.out + run.err)
        #expect(run.out == "http://192.168.1.50/\\x1b]8;;http://evil/\\x07setup\\xc2\\x9b2J\\x1b[2J\n")
    }
}
