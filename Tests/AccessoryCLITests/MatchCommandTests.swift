import AccessoryCLI
import Foundation
import Testing

@Suite struct MatchCommandTests {
    private var allProfiles: [String] { Paths.shippedProfiles.flatMap { ["--profile", $0] } }

    /// The shipped profiles against the shipped scan: the README's demonstration.
    @Test func demoScanMatchesOneDevicePerAccessory() async {
        let run = await accessoryctl(["match"] + allProfiles + ["--scan", Paths.demoScan])
        #expect(run.code == .success, "\(run.err)")
        let lines = run.outLines
        #expect(lines.first?.hasPrefix("ITEM") == true)
        let devices = lines.dropFirst().map { line in
            line.split(separator: "  ").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        #expect(
            devices.map { $0[3] } == [
                "PROV_261FCC", "WLED-AP", "shellyplug-s-C8C9A3A5B6C7", "tasmota-1A2B3C-4567",
                "PROV_261FCC", "kitchen-light", "SBBT-002C",
            ])
        #expect(devices.map { $0[2] } == ["Wi-Fi", "Wi-Fi", "Wi-Fi", "Wi-Fi", "Bluetooth", "Bluetooth", "Bluetooth"])
        #expect(!run.out.contains("HomeNet"))
    }

    @Test func jsonOutputCarriesTheDeviceData() async throws {
        let run = await accessoryctl(["match", "--json"] + allProfiles + ["--scan", Paths.demoScan])
        #expect(run.code == .success)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let matches = try #require(object["matches"] as? [[String: Any]])
        #expect(matches.count == 7)
        let wled = try #require(matches.first { $0["profile"] as? String == "ge.wled.softap" })
        let entry = try #require(wled["wifi"] as? [String: Any])
        #expect(entry["ssid"] as? String == "WLED-AP")
        #expect(entry["bssid"] as? String == "A4:CF:12:6B:00:01")
        #expect(entry["strength"] as? Int == 64, "the stronger of the two sightings of one BSSID")
        #expect(entry["security"] as? [String] == ["wpa-psk"])
        let shelly = try #require(matches.first { $0["profile"] as? String == "cloud.shelly.blu" })
        let advertisement = try #require(shelly["bluetooth"] as? [String: Any])
        #expect(advertisement["manufacturerData"] as? [String: String] == ["0x0BA9": "0100c8a1"])
        let improv = try #require(matches.first { $0["profile"] as? String == "com.improv-wifi.ble" })
        #expect(improv["item"] as? String == "Improv Wi-Fi device (press its button to authorize)")
        #expect(
            (improv["bluetooth"] as? [String: Any])?["serviceData"] as? [String: String]
                == ["00004677-0000-1000-8000-00805f9b34fb": "010300000000"])
    }

    @Test func noMatchIsNotAFailure() async {
        let run = await accessoryctl(
            "match", "--profile", Paths.profile("wled.json"), "--scan", Paths.fixture("empty-scan.json"))
        #expect(run.code == .success)
        #expect(run.out == "No accessory in the scan (0 access points, 0 Bluetooth devices) matches.\n")
    }

    @Test func badScanReportsEveryFault() async {
        let path = Paths.fixture("bad-scan.json")
        let run = await accessoryctl("match", "--profile", Paths.profile("wled.json"), "--scan", path)
        #expect(run.code == .failure)
        #expect(run.out.isEmpty)
        let fields = run.err.split(separator: "\n").map { String($0.dropFirst(path.count + 2).prefix { $0 != ":" }) }
        #expect(
            fields == [
                "wifi[1].ssid", "wifi[1].bssid", "wifi[1].strength", "wifi[1].security[0]",
                "bluetooth[0].manufacturerData.apple", "bluetooth[0].serviceData.180d",
            ])
    }

    @Test func invalidProfileIsReportedAndNothingIsMatched() async {
        let run = await accessoryctl("match", "--profile", Paths.fixture("many-faults.json"), "--scan", Paths.demoScan)
        #expect(run.code == .failure)
        #expect(run.out.isEmpty)
        #expect(
            run.err.contains(
                "many-faults.json: items[0].descriptor.ssidPrefix: ssid and ssidPrefix are mutually exclusive"))
    }

    /// (A name with a format character is refused: `TerminalSafetyTests`.)
    @Test func nonUTF8SSIDsArePrintedEscaped() async throws {
        let profile = try TemporaryFile(
            """
            {"schemaVersion": 1, "id": "org.example.odd", "vendor": "Example", "supports": ["wifi"],
             "handoff": "none", "items": [{"name": "Odd", "descriptor": {"ssidPrefix": "hex:43616f"}}]}
            """)
        let run = await accessoryctl("match", "--profile", profile.path, "--scan", Paths.demoScan)
        #expect(run.code == .success)
        #expect(run.out.contains("Cao\\xfe"), "\(run.out)")
    }
}
