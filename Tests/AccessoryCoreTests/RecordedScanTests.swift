import Foundation
import Testing

@testable import AccessoryCore

private func parse(_ json: String) throws -> RecordedScan {
    try RecordedScan.parse(Data(json.utf8), path: "scan.json")
}

/// The faults of a scan that must not parse.
private func issues(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> [FieldIssue] {
    do {
        let scan = try RecordedScan.parse(Data(json.utf8), path: "scan.json")
        Issue.record("expected faults, the scan parsed: \(scan)", sourceLocation: sourceLocation)
        return []
    } catch {
        #expect(error.path == "scan.json", sourceLocation: sourceLocation)
        return error.issues
    }
}

private let validScan = #"""
    {
      "schemaVersion": 1,
      "wifi": [
        { "ssid": "WLED-AP", "bssid": "a4:cf:12:6b:00:01", "strength": 64, "frequency": 2412, "security": ["wpa-psk", "sae"] },
        { "ssid": "hex:43616ffe", "bssid": "02-11-22-33-44-55", "strength": 0, "frequency": 5180 },
        { "bssid": "3C:A6:2F:10:20:31", "strength": 100, "frequency": 1, "security": [] }
      ],
      "bluetooth": [
        {
          "address": "7C:C6:B6:65:43:21", "addressType": "random", "name": "SBBT-002C", "rssi": -70, "txPower": 4,
          "serviceUUIDs": ["180d", "021a9004-0382-4aea-bff4-6b3f1c5adfb4"],
          "manufacturerData": { "0x0BA9": "0100C8a1", "76": "1005" },
          "serviceData": { "4677": "010300000000" }
        },
        { "address": "D8:3B:DA:12:34:56" }
      ]
    }
    """#

@Suite("RecordedScan")
struct RecordedScanTests {
    @Test("a valid scan reads every Wi-Fi and Bluetooth field")
    func valid() throws {
        let scan = try parse(validScan)
        #expect(scan.wifi.count == 3)
        #expect(
            scan.wifi[0]
                == WiFiScanEntry(
                    ssid: try SSID("WLED-AP"), bssid: try MACAddress("A4:CF:12:6B:00:01"), strength: 64,
                    frequency: 2412, security: [.psk, .sae]))
        #expect(scan.wifi[1].ssid?.bytes == [0x43, 0x61, 0x6F, 0xFE])
        #expect(scan.wifi[1].bssid == (try MACAddress("02:11:22:33:44:55")))
        #expect(scan.wifi[1].security == [])
        #expect(scan.wifi[1].strength == 0)

        #expect(scan.bluetooth.count == 2)
        let shelly = scan.bluetooth[0]
        #expect(shelly.address == (try MACAddress("7C:C6:B6:65:43:21")))
        #expect(shelly.addressType == .random)
        #expect(shelly.name == "SBBT-002C")
        #expect(shelly.rssi == -70)
        #expect(shelly.txPower == 4)
        #expect(
            shelly.serviceUUIDs == [
                BluetoothUUID(assigned: 0x180D), try BluetoothUUID("021a9004-0382-4aea-bff4-6b3f1c5adfb4"),
            ])
        #expect(
            shelly.manufacturerData == [
                BluetoothCompanyIdentifier(rawValue: 0x0BA9): [0x01, 0x00, 0xC8, 0xA1],
                BluetoothCompanyIdentifier(rawValue: 76): [0x10, 0x05],
            ])
        #expect(shelly.serviceData == [BluetoothUUID(assigned: 0x4677): [0x01, 0x03, 0x00, 0x00, 0x00, 0x00]])

        let bare = scan.bluetooth[1]
        #expect(bare == BLEAdvertisement(address: try MACAddress("D8:3B:DA:12:34:56")))
        #expect(bare.addressType == .public)
    }

    @Test("an access point without an SSID is a hidden network")
    func hiddenAccessPoint() throws {
        let scan = try parse(validScan)
        #expect(scan.wifi[2].ssid == nil)
        #expect(scan.wifi[2].strength == 100)
        let explicitNull = try parse(
            #"{"schemaVersion": 1, "wifi": [{"ssid": null, "bssid": "02:00:00:00:00:01", "strength": 5, "frequency": 2412}]}"#
        )
        #expect(explicitNull.wifi.first?.ssid == nil)
    }

    @Test("wifi and bluetooth are optional")
    func emptyScan() throws {
        #expect(try parse(#"{"schemaVersion": 1}"#) == RecordedScan())
        #expect(try parse(#"{"schemaVersion": 1, "wifi": [], "bluetooth": []}"#) == RecordedScan())
    }

    @Test(
        "a manufacturer data key may be 0x hex or decimal; both name the same company",
        arguments: ["0x0BA9", "0x0ba9", "2985"])
    func manufacturerKeys(key: String) throws {
        let scan = try parse(
            #"{"schemaVersion": 1, "bluetooth": [{"address": "02:00:00:00:00:01", "manufacturerData": {"\#(key)": "ff"}}]}"#
        )
        #expect(scan.bluetooth.first?.manufacturerData == [BluetoothCompanyIdentifier(rawValue: 0x0BA9): [0xFF]])
    }

    static let faults: [(json: String, field: String, message: String)] = [
        (
            #"{"ssid": "a", "bssid": "02:00:00:00:01", "strength": 5, "frequency": 2412}"#, "wifi[0].bssid",
            "'02:00:00:00:01' is not six pairs of hex digits separated by ':' (like 24:0A:C4:1A:2B:3C)"
        ),
        (#"{"ssid": "a", "strength": 5, "frequency": 2412}"#, "wifi[0].bssid", "is required"),
        (
            #"{"ssid": "a", "bssid": "02:00:00:00:00:01", "strength": 101, "frequency": 2412}"#, "wifi[0].strength",
            "is 101; it must be from 0 to 100"
        ),
        (
            #"{"ssid": "a", "bssid": "02:00:00:00:00:01", "strength": -1, "frequency": 2412}"#, "wifi[0].strength",
            "is -1; it must be from 0 to 100"
        ),
        (#"{"ssid": "a", "bssid": "02:00:00:00:00:01", "frequency": 2412}"#, "wifi[0].strength", "is required"),
        (#"{"ssid": "a", "bssid": "02:00:00:00:00:01", "strength": 5}"#, "wifi[0].frequency", "is required"),
        (
            #"{"ssid": "a", "bssid": "02:00:00:00:00:01", "strength": 5, "frequency": 0}"#, "wifi[0].frequency",
            "is 0; it must be from 1 to 100000"
        ),
        (
            #"{"ssid": "a", "bssid": "02:00:00:00:00:01", "strength": 5, "frequency": 2412, "security": ["wpa-psk", "wpa9"]}"#,
            "wifi[0].security[1]", #"expected one of "wep", "wpa-psk", "sae", "owe", "wpa-eap""#
        ),
        (
            #"{"ssid": "", "bssid": "02:00:00:00:00:01", "strength": 5, "frequency": 2412}"#, "wifi[0].ssid",
            "must not be empty"
        ),
        (
            #"{"ssid": "a", "bssid": "02:00:00:00:00:01", "strength": 5, "frequency": 2412, "channel": 1}"#,
            "wifi[0].channel",
            "is not a known key (known: ssid, bssid, strength, frequency, security)"
        ),
    ]

    @Test("a Wi-Fi entry fault names its field", arguments: faults)
    func wifiFault(json: String, field: String, message: String) {
        #expect(issues(#"{"schemaVersion": 1, "wifi": [\#(json)]}"#) == [FieldIssue(field: field, message: message)])
    }

    static let bluetoothFaults: [(json: String, field: String, message: String)] = [
        (
            #"{"address": "nope"}"#, "bluetooth[0].address",
            "'nope' is not six pairs of hex digits separated by ':' (like 24:0A:C4:1A:2B:3C)"
        ),
        (#"{"name": "x"}"#, "bluetooth[0].address", "is required"),
        (
            #"{"address": "02:00:00:00:00:01", "addressType": "static"}"#, "bluetooth[0].addressType",
            #""static" is not one of "public", "random""#
        ),
        (#"{"address": "02:00:00:00:00:01", "rssi": 21}"#, "bluetooth[0].rssi", "is 21; it must be from -127 to 20"),
        (
            #"{"address": "02:00:00:00:00:01", "txPower": 128}"#, "bluetooth[0].txPower",
            "is 128; it must be from -127 to 127"
        ),
        (
            #"{"address": "02:00:00:00:00:01", "serviceUUIDs": ["180d", 6157]}"#, "bluetooth[0].serviceUUIDs[1]",
            "expected a UUID string, found a number"
        ),
        (
            #"{"address": "02:00:00:00:00:01", "serviceUUIDs": ["18"]}"#, "bluetooth[0].serviceUUIDs[0]",
            "'18' is not a 16-bit (180d), 32-bit or 128-bit Bluetooth UUID"
        ),
        (
            #"{"address": "02:00:00:00:00:01", "manufacturerData": {"Allterco": "01"}}"#,
            "bluetooth[0].manufacturerData.Allterco",
            "is not a valid key: 'Allterco' is not a number from 0 to 65535 or 0x0000 to 0xFFFF"
        ),
        (
            #"{"address": "02:00:00:00:00:01", "manufacturerData": {"0x10000": "01"}}"#,
            "bluetooth[0].manufacturerData.0x10000",
            "is not a valid key: '0x10000' is not a number from 0 to 65535 or 0x0000 to 0xFFFF"
        ),
        (
            #"{"address": "02:00:00:00:00:01", "manufacturerData": {"0x0BA9": "010"}}"#,
            "bluetooth[0].manufacturerData.0x0BA9",
            "has 3 hex digits; two digits make a byte, so the count must be even"
        ),
        (
            #"{"address": "02:00:00:00:00:01", "manufacturerData": {"0x0BA9": 1}}"#,
            "bluetooth[0].manufacturerData.0x0BA9",
            "expected a string, found a number"
        ),
        (
            #"{"address": "02:00:00:00:00:01", "manufacturerData": ["01"]}"#, "bluetooth[0].manufacturerData",
            "expected an object, found an array"
        ),
        (
            #"{"address": "02:00:00:00:00:01", "serviceData": {"4677": "0g"}}"#, "bluetooth[0].serviceData.4677",
            "'g' at position 2 is not a hex digit"
        ),
        (
            #"{"address": "02:00:00:00:00:01", "serviceData": {"46": "01"}}"#, "bluetooth[0].serviceData.46",
            "is not a valid key: '46' is not a 16-bit (180d), 32-bit or 128-bit Bluetooth UUID"
        ),
        (
            #"{"address": "02:00:00:00:00:01", "colour": "blue"}"#, "bluetooth[0].colour",
            "is not a known key (known: address, addressType, name, rssi, txPower, serviceUUIDs, manufacturerData, serviceData)"
        ),
    ]

    @Test("a Bluetooth advertisement fault names its field", arguments: bluetoothFaults)
    func bluetoothFault(json: String, field: String, message: String) {
        #expect(
            issues(#"{"schemaVersion": 1, "bluetooth": [\#(json)]}"#) == [FieldIssue(field: field, message: message)])
    }

    @Test(
        "document faults",
        arguments: [
            (#"{"wifi": []}"#, "schemaVersion", "is required"),
            (#"{"schemaVersion": 2}"#, "schemaVersion", "is 2; this version reads schema 1"),
            (#"{"schemaVersion": 1, "ble": []}"#, "ble", "is not a known key (known: schemaVersion, wifi, bluetooth)"),
            (#"{"schemaVersion": 1, "wifi": {}}"#, "wifi", "expected an array, found an object"),
            (#"{"schemaVersion": 1, "wifi": [7]}"#, "wifi[0]", "expected an object, found a number"),
            ("[]", "(document)", "expected an object, found an array"),
        ])
    func documentFault(json: String, field: String, message: String) {
        #expect(issues(json) == [FieldIssue(field: field, message: message)])
    }

    @Test("invalid JSON is one (document) fault")
    func invalidJSON() {
        let found = issues(#"{"schemaVersion": 1, "wifi": ["#)
        #expect(found.map(\.field) == ["(document)"])
        #expect(found.first?.message.hasPrefix("is not valid JSON") == true)
    }

    @Test("every fault of a scan is reported together, each with its field path")
    func allFaultsTogether() {
        let json = #"""
            {
              "schemaVersion": 1,
              "wifi": [
                { "ssid": "ok", "bssid": "02:00:00:00:00:01", "strength": 50, "frequency": 2412 },
                { "ssid": "a", "bssid": "zz:00:00:00:00:01", "strength": 101, "frequency": 2412 },
                { "ssid": "b", "bssid": "02:00:00:00:00:03", "strength": 10 },
                { "ssid": "c", "bssid": "02:00:00:00:00:04", "strength": 10, "frequency": 2412, "security": ["wpa4"] }
              ],
              "bluetooth": [
                { "address": "02:00:00:00:00:05", "manufacturerData": { "0xBA9G": "01", "0x0BA9": "abc" } },
                { "address": "02:00:00:00:00:06", "serviceData": { "4677": "0" }, "flags": 6 }
              ]
            }
            """#
        #expect(
            issues(json).map(\.field) == [
                "wifi[1].bssid",
                "wifi[1].strength",
                "wifi[2].frequency",
                "wifi[3].security[0]",
                "bluetooth[0].manufacturerData.0x0BA9",
                "bluetooth[0].manufacturerData.0xBA9G",
                "bluetooth[1].flags",
                "bluetooth[1].serviceData.4677",
            ])
    }

    @Test("RecordedScanError prints path: field: message lines")
    func errorDescription() {
        let error = RecordedScanError(
            path: "s.json",
            issues: [
                FieldIssue(field: "wifi[1].strength", message: "is 101; it must be from 0 to 100"),
                FieldIssue(field: "schemaVersion", message: "is required"),
            ])
        #expect(
            error.description
                == "s.json: wifi[1].strength: is 101; it must be from 0 to 100\ns.json: schemaVersion: is required")
    }

    static let demoURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("examples/scans/demo.json")

    @Test("the shipped demo scan parses")
    func demoScan() throws {
        let scan = try RecordedScan.load(contentsOf: Self.demoURL)
        #expect(scan.wifi.count == 8)
        #expect(scan.bluetooth.count == 4)
        #expect(scan.wifi.contains { $0.ssid == nil })
        #expect(scan.wifi.contains { $0.ssid?.utf8String == nil && $0.ssid != nil })
        let shelly = try #require(scan.bluetooth.first { $0.name == "SBBT-002C" })
        #expect(shelly.manufacturerData[BluetoothCompanyIdentifier(rawValue: 0x0BA9)] == [0x01, 0x00, 0xC8, 0xA1])
        let kitchen = try #require(scan.bluetooth.first { $0.name == "kitchen-light" })
        #expect(kitchen.serviceData[BluetoothUUID(assigned: 0x4677)] == [0x01, 0x03, 0x00, 0x00, 0x00, 0x00])
        #expect(scan.bluetooth.contains { $0.addressType == .random && $0.name == nil })
    }

    @Test("loading a missing file is one (file) fault")
    func loadMissing() {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "no-such-scan-\(UUID().uuidString).json")
        do {
            _ = try RecordedScan.load(contentsOf: url)
            Issue.record("loaded a missing file")
        } catch {
            #expect(error.path == url.path)
            #expect(error.issues.map(\.field) == ["(file)"])
        }
    }

    @Test("an advertisement encodes manufacturer data keyed by 0x company id and hex values")
    func encodeAdvertisement() throws {
        let advertisement = BLEAdvertisement(
            address: try MACAddress("7c:c6:b6:65:43:21"), addressType: .random, name: "SBBT-002C", rssi: -70,
            serviceUUIDs: [BluetoothUUID(assigned: 0x180D)],
            manufacturerData: [BluetoothCompanyIdentifier(rawValue: 0x0BA9): [0x01, 0x00, 0xC8, 0xA1]],
            serviceData: [BluetoothUUID(assigned: 0x4677): [0xFF]])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(advertisement), as: UTF8.self)
        #expect(
            text
                == #"{"address":"7C:C6:B6:65:43:21","addressType":"random","manufacturerData":{"0x0BA9":"0100c8a1"},"name":"SBBT-002C","rssi":-70,"serviceData":{"00004677-0000-1000-8000-00805f9b34fb":"ff"},"serviceUUIDs":["0000180d-0000-1000-8000-00805f9b34fb"]}"#
        )
    }

    @Test("what a scan encodes, it reads back")
    func encodeThenParse() throws {
        let scan = try parse(validScan)
        let encoder = JSONEncoder()
        let wifi = try scan.wifi.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        let bluetooth = try scan.bluetooth.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        let document =
            #"{"schemaVersion": 1, "wifi": [\#(wifi.joined(separator: ","))], "bluetooth": [\#(bluetooth.joined(separator: ","))]}"#
        #expect(try parse(document) == scan)
    }

    @Test("Wi-Fi security prints NetworkManager's names, open when empty")
    func securityNames() {
        #expect(WiFiSecurity().description == "open")
        #expect(WiFiSecurity([.psk, .sae]).description == "wpa-psk sae")
        #expect(WiFiSecurity([.wep, .owe, .enterprise]).names == ["wep", "owe", "wpa-eap"])
    }
}
