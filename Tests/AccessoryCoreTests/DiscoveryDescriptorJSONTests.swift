import Foundation
import Testing

@testable import AccessoryCore

private let base = "items[0].descriptor"

/// Reads `json` as a descriptor at `items[0].descriptor`.
private func read(_ json: String, at path: String = base) throws -> (
    descriptor: DiscoveryDescriptor?, issues: [FieldIssue]
) {
    let value = try JSONValue.parse(Data(json.utf8))
    let diagnostics = FieldDiagnostics()
    let reader = try #require(JSONObjectReader(value, at: path, diagnostics: diagnostics))
    let descriptor = DiscoveryDescriptor(reading: reader)
    return (descriptor, diagnostics.issues)
}

/// A descriptor with one fault: the field (below `items[0].descriptor`) and the exact message.
struct DescriptorFault: Sendable, CustomTestStringConvertible {
    var json: String
    var field: String
    var message: String
    var testDescription: String { json }

    init(_ json: String, _ field: String, _ message: String) {
        self.json = json
        self.field = field
        self.message = message
    }
}

private let uuidFault = "is not a 16-bit (180d), 32-bit or 128-bit Bluetooth UUID"
private let companyFault = "is not a number from 0 to 65535 or 0x0000 to 0xFFFF"
private let macFault = "is not six pairs of hex digits separated by ':' (like 24:0A:C4:1A:2B:3C)"

@Suite("DiscoveryDescriptor JSON")
struct DiscoveryDescriptorJSONTests {
    static let fieldFaults: [DescriptorFault] = [
        // ssid
        .init(#"{"ssid": 5}"#, "ssid", "expected a string, found a number"),
        .init(#"{"ssid": ""}"#, "ssid", "must not be empty"),
        .init(
            #"{"ssid": "\#(String(repeating: "x", count: 33))"}"#, "ssid",
            "is 33 bytes long; an SSID has at most 32 bytes (UTF-8 bytes, not characters)"),
        .init(
            #"{"ssid": "\#(String(repeating: "é", count: 17))"}"#, "ssid",
            "is 34 bytes long; an SSID has at most 32 bytes (UTF-8 bytes, not characters)"),
        .init(#"{"ssid": "hex:zz"}"#, "ssid", "is not valid after 'hex:': 'z' at position 1 is not a hex digit"),
        // ssidPrefix
        .init(#"{"ssidPrefix": true}"#, "ssidPrefix", "expected a string, found a boolean"),
        .init(
            #"{"ssidPrefix": "hex:4"}"#, "ssidPrefix",
            "is not valid after 'hex:': has 1 hex digits; two digits make a byte, so the count must be even"),
        // bssid, bssidMask
        .init(#"{"bssid": "A4:CF:12"}"#, "bssid", "'A4:CF:12' \(macFault)"),
        .init(#"{"bssid": 12}"#, "bssid", "expected a string, found a number"),
        .init(#"{"bssid": "A4:CF:12:6B:00:01", "bssidMask": "ff:ff:ff"}"#, "bssidMask", "'ff:ff:ff' \(macFault)"),
        .init(#"{"bssid": "A4:CF:12:6B:00:01", "bssidMask": []}"#, "bssidMask", "expected a string, found an array"),
        // minimumSignalStrength
        .init(
            #"{"ssid": "a", "minimumSignalStrength": 101}"#, "minimumSignalStrength", "is 101; it must be from 0 to 100"
        ),
        .init(
            #"{"ssid": "a", "minimumSignalStrength": -1}"#, "minimumSignalStrength", "is -1; it must be from 0 to 100"),
        .init(
            #"{"ssid": "a", "minimumSignalStrength": 50.5}"#, "minimumSignalStrength",
            "expected a whole number, found a number"),
        .init(
            #"{"ssid": "a", "minimumSignalStrength": "50"}"#, "minimumSignalStrength",
            "expected a whole number, found a string"),
        .init(
            #"{"ssid": "a", "minimumSignalStrength": true}"#, "minimumSignalStrength",
            "expected a whole number, found a boolean"),
        // bluetoothServiceUUID
        .init(#"{"bluetoothServiceUUID": "180"}"#, "bluetoothServiceUUID", "'180' \(uuidFault)"),
        .init(#"{"bluetoothServiceUUID": 6157}"#, "bluetoothServiceUUID", "expected a string, found a number"),
        // bluetoothCompanyIdentifier
        .init(
            #"{"bluetoothCompanyIdentifier": 65536}"#, "bluetoothCompanyIdentifier",
            "is 65536; it must be from 0 to 65535"),
        .init(
            #"{"bluetoothCompanyIdentifier": -1}"#, "bluetoothCompanyIdentifier", "is -1; it must be from 0 to 65535"),
        .init(
            #"{"bluetoothCompanyIdentifier": 1.5}"#, "bluetoothCompanyIdentifier",
            "expected a whole number, found a number"),
        .init(#"{"bluetoothCompanyIdentifier": "0x10000"}"#, "bluetoothCompanyIdentifier", "'0x10000' \(companyFault)"),
        .init(#"{"bluetoothCompanyIdentifier": "junk"}"#, "bluetoothCompanyIdentifier", "'junk' \(companyFault)"),
        .init(
            #"{"bluetoothCompanyIdentifier": true}"#, "bluetoothCompanyIdentifier",
            #"expected a number or a "0x…" string, found a boolean"#),
        .init(
            #"{"bluetoothCompanyIdentifier": [2985]}"#, "bluetoothCompanyIdentifier",
            #"expected a number or a "0x…" string, found an array"#),
        // bluetoothNameSubstring
        .init(
            #"{"bluetoothServiceUUID": "180d", "bluetoothNameSubstring": 5}"#, "bluetoothNameSubstring",
            "expected a string, found a number"),
        .init(
            #"{"bluetoothServiceUUID": "180d", "bluetoothNameSubstring": ""}"#, "bluetoothNameSubstring",
            "must not be empty"),
        // bluetoothNameSubstringCompareOptions
        .init(
            #"{"bluetoothServiceUUID": "180d", "bluetoothNameSubstringCompareOptions": "caseInsensitive"}"#,
            "bluetoothNameSubstringCompareOptions", "expected an array, found a string"),
        .init(
            #"{"bluetoothServiceUUID": "180d", "bluetoothNameSubstringCompareOptions": ["caseSensitive"]}"#,
            "bluetoothNameSubstringCompareOptions[0]", #"expected one of "caseInsensitive""#),
        .init(
            #"{"bluetoothServiceUUID": "180d", "bluetoothNameSubstringCompareOptions": ["caseInsensitive", "caseInsensitive"]}"#,
            "bluetoothNameSubstringCompareOptions[1]", #""caseInsensitive" is listed twice"#),
        // bluetoothManufacturerDataBlob / Mask
        .init(
            #"{"bluetoothCompanyIdentifier": 2985, "bluetoothManufacturerDataBlob": "0g", "bluetoothManufacturerDataMask": "ff"}"#,
            "bluetoothManufacturerDataBlob", "'g' at position 2 is not a hex digit"),
        .init(
            #"{"bluetoothCompanyIdentifier": 2985, "bluetoothManufacturerDataBlob": "01", "bluetoothManufacturerDataMask": "f"}"#,
            "bluetoothManufacturerDataMask", "has 1 hex digits; two digits make a byte, so the count must be even"),
        .init(
            #"{"bluetoothCompanyIdentifier": 2985, "bluetoothManufacturerDataBlob": "0102", "bluetoothManufacturerDataMask": "ff"}"#,
            "bluetoothManufacturerDataMask", "the blob has 2 bytes and the mask 1; they must have the same length"),
        .init(
            #"{"bluetoothCompanyIdentifier": 2985, "bluetoothManufacturerDataBlob": "", "bluetoothManufacturerDataMask": ""}"#,
            "bluetoothManufacturerDataBlob", "the blob must not be empty"),
        .init(
            #"{"bluetoothCompanyIdentifier": 2985, "bluetoothManufacturerDataBlob": 1, "bluetoothManufacturerDataMask": "ff"}"#,
            "bluetoothManufacturerDataBlob", "expected a string, found a number"),
        .init(
            #"{"bluetoothCompanyIdentifier": 2985, "bluetoothManufacturerDataBlob": "01"}"#,
            "bluetoothManufacturerDataMask",
            "is required with bluetoothManufacturerDataBlob (use all ff to compare every bit)"),
        .init(
            #"{"bluetoothCompanyIdentifier": 2985, "bluetoothManufacturerDataMask": "ff"}"#,
            "bluetoothManufacturerDataBlob", "is required with bluetoothManufacturerDataMask"),
        // bluetoothServiceDataBlob / Mask
        .init(
            #"{"bluetoothServiceUUID": "4677", "bluetoothServiceDataBlob": "01", "bluetoothServiceDataMask": "zz"}"#,
            "bluetoothServiceDataMask", "'z' at position 1 is not a hex digit"),
        .init(
            #"{"bluetoothServiceUUID": "4677", "bluetoothServiceDataBlob": "01", "bluetoothServiceDataMask": "ffff"}"#,
            "bluetoothServiceDataMask", "the blob has 1 bytes and the mask 2; they must have the same length"),
        .init(
            #"{"bluetoothServiceUUID": "4677", "bluetoothServiceDataBlob": "01"}"#,
            "bluetoothServiceDataMask", "is required with bluetoothServiceDataBlob (use all ff to compare every bit)"),
        .init(
            #"{"bluetoothServiceUUID": "4677", "bluetoothServiceDataMask": "ff"}"#,
            "bluetoothServiceDataBlob", "is required with bluetoothServiceDataMask"),
        // bluetoothRange
        .init(
            #"{"bluetoothServiceUUID": "180d", "bluetoothRange": "far"}"#, "bluetoothRange",
            #""far" is not one of "default", "immediate""#),
        .init(
            #"{"bluetoothServiceUUID": "180d", "bluetoothRange": 10}"#, "bluetoothRange",
            "expected a string, found a number"),
        // supportedOptions
        .init(
            #"{"bluetoothServiceUUID": "180d", "supportedOptions": ["wifi"]}"#, "supportedOptions[0]",
            #"expected one of "bluetoothPairingLE", "bluetoothTransportBridging", "bluetoothHID""#),
        .init(
            #"{"bluetoothServiceUUID": "180d", "supportedOptions": ["bluetoothHID", 8]}"#, "supportedOptions[1]",
            #"expected one of "bluetoothPairingLE", "bluetoothTransportBridging", "bluetoothHID""#),
        .init(
            #"{"bluetoothServiceUUID": "180d", "supportedOptions": "bluetoothHID"}"#, "supportedOptions",
            "expected an array, found a string"),
        .init(
            #"{"bluetoothServiceUUID": "180d", "supportedOptions": ["bluetoothHID", "bluetoothHID"]}"#,
            "supportedOptions[1]",
            #""bluetoothHID" is listed twice"#),
    ]

    @Test("a field of the wrong type or value is one fault at its path", arguments: fieldFaults)
    func fieldFault(fault: DescriptorFault) throws {
        let (descriptor, issues) = try read(fault.json)
        #expect(descriptor == nil)
        #expect(issues == [FieldIssue(field: "\(base).\(fault.field)", message: fault.message)])
    }

    static let ruleFaults: [DescriptorFault] = [
        .init(
            #"{"ssid": "a", "ssidPrefix": "b"}"#, "ssidPrefix",
            "ssid and ssidPrefix are mutually exclusive; keep the exact ssid or the prefix, not both"),
        .init(
            #"{"ssid": "a", "bssidMask": "ff:ff:ff:00:00:00"}"#, "bssidMask",
            "a BSSID mask needs a bssid to compare with"),
        .init(
            #"{"bluetoothServiceUUID": "180d", "minimumSignalStrength": 50}"#, "minimumSignalStrength",
            "a minimum signal strength needs a Wi-Fi identifier (ssid, ssidPrefix or bssid)"),
        .init(
            #"{"ssid": "a", "bluetoothNameSubstring": "lamp"}"#, "bluetoothNameSubstring",
            "a name substring needs a bluetoothServiceUUID or a bluetoothCompanyIdentifier too"),
        .init(
            #"{"bluetoothServiceUUID": "180d", "bluetoothManufacturerDataBlob": "01", "bluetoothManufacturerDataMask": "ff"}"#,
            "bluetoothManufacturerDataBlob",
            "manufacturer data needs a bluetoothCompanyIdentifier (the data is looked up by company)"),
        .init(
            #"{"bluetoothCompanyIdentifier": 2985, "bluetoothServiceDataBlob": "01", "bluetoothServiceDataMask": "ff"}"#,
            "bluetoothServiceDataBlob", "service data needs a bluetoothServiceUUID (the data is looked up by service)"),
        .init(
            #"{"ssid": "a", "bluetoothRange": "immediate"}"#, "bluetoothRange",
            "a Bluetooth range needs a bluetoothServiceUUID or a bluetoothCompanyIdentifier"),
        .init(
            #"{"ssid": "a", "supportedOptions": ["bluetoothPairingLE"]}"#, "supportedOptions",
            "Bluetooth options need a bluetoothServiceUUID or a bluetoothCompanyIdentifier"),
    ]

    @Test("a broken rule between fields is one fault at the field it names", arguments: ruleFaults)
    func ruleFault(fault: DescriptorFault) throws {
        let (descriptor, issues) = try read(fault.json)
        #expect(descriptor == nil)
        #expect(issues == [FieldIssue(field: "\(base).\(fault.field)", message: fault.message)])
    }

    @Test(
        "a descriptor without identifiers is a fault at the descriptor's own path",
        arguments: [
            "{}", #"{"ssid": null}"#, #"{"bluetoothNameSubstringCompareOptions": []}"#,
        ])
    func noIdentifier(json: String) throws {
        let (descriptor, issues) = try read(json)
        #expect(descriptor == nil)
        #expect(issues == [FieldIssue(field: base, message: DiscoveryDescriptorError.noIdentifier.message)])
    }

    @Test("an unknown key is a fault naming the key")
    func unknownKey() throws {
        let (descriptor, issues) = try read(#"{"ssid": "a", "ssid_prefix": "b"}"#)
        #expect(descriptor == nil)
        let known = DiscoveryDescriptor.keys.joined(separator: ", ")
        #expect(issues == [FieldIssue(field: "\(base).ssid_prefix", message: "is not a known key (known: \(known))")])
        #expect(known.hasPrefix("ssid, ssidPrefix, bssid"))
    }

    @Test(
        "a field that failed to parse does not also break the rules that need it",
        arguments: [
            // Wi-Fi identifier unreadable: no noIdentifier, no bssidMask or signal-floor rule
            (#"{"ssid": 5, "minimumSignalStrength": 50}"#, "ssid"),
            (#"{"ssidPrefix": "", "minimumSignalStrength": 50}"#, "ssidPrefix"),
            (#"{"bssid": "bad", "bssidMask": "ff:ff:ff:00:00:00", "minimumSignalStrength": 50}"#, "bssid"),
            // Bluetooth identifier unreadable: no name, range, options, data or noIdentifier rule
            (
                #"{"bluetoothCompanyIdentifier": "junk", "bluetoothNameSubstring": "x", "bluetoothManufacturerDataBlob": "01", "bluetoothManufacturerDataMask": "ff", "bluetoothRange": "immediate"}"#,
                "bluetoothCompanyIdentifier"
            ),
            (
                #"{"bluetoothServiceUUID": "bad", "bluetoothServiceDataBlob": "01", "bluetoothServiceDataMask": "ff", "supportedOptions": ["bluetoothHID"], "bluetoothNameSubstring": "x"}"#,
                "bluetoothServiceUUID"
            ),
        ])
    func noEchoOfParseFaults(json: String, field: String) throws {
        let (descriptor, issues) = try read(json)
        #expect(descriptor == nil)
        #expect(issues.map(\.field) == ["\(base).\(field)"])
        #expect(!issues.contains { $0.message.contains("needs") })
    }

    @Test("every fault of a descriptor is reported, in order")
    func severalFaults() throws {
        let json = #"""
            {
              "extra": 1,
              "ssid": "",
              "bssid": "A4:CF:12:6B:00",
              "minimumSignalStrength": 101,
              "bluetoothCompanyIdentifier": 70000,
              "bluetoothManufacturerDataBlob": "01",
              "bluetoothRange": "far",
              "supportedOptions": ["bluetoothHID", "usb"]
            }
            """#
        let (descriptor, issues) = try read(json)
        #expect(descriptor == nil)
        #expect(
            issues.map(\.field) == [
                "\(base).extra",
                "\(base).ssid",
                "\(base).bssid",
                "\(base).minimumSignalStrength",
                "\(base).bluetoothCompanyIdentifier",
                "\(base).bluetoothManufacturerDataMask",
                "\(base).bluetoothRange",
                "\(base).supportedOptions[1]",
            ])
    }

    @Test("the field path follows the reader's path; at the top it is the bare key")
    func topLevelPath() throws {
        let (_, issues) = try read(#"{"ssid": "a", "bssidMask": "x"}"#, at: "")
        #expect(issues.map(\.field) == ["bssidMask"])
    }

    @Test("a valid descriptor reads with every field")
    func readsEveryField() throws {
        let json = #"""
            {
              "ssidPrefix": "hex:43616ffe",
              "bssid": "a4:cf:12:6b:00:01",
              "bssidMask": "ff:ff:ff:00:00:00",
              "minimumSignalStrength": 0,
              "bluetoothServiceUUID": "4677",
              "bluetoothCompanyIdentifier": "0x0BA9",
              "bluetoothNameSubstring": "SBBT",
              "bluetoothNameSubstringCompareOptions": ["caseInsensitive"],
              "bluetoothManufacturerDataBlob": "0100",
              "bluetoothManufacturerDataMask": "FF0F",
              "bluetoothServiceDataBlob": "01",
              "bluetoothServiceDataMask": "ff",
              "bluetoothRange": "immediate",
              "supportedOptions": ["bluetoothPairingLE", "bluetoothHID"]
            }
            """#
        let (read, issues) = try read(json)
        #expect(issues == [])
        let d = try #require(read)
        #expect(d.ssid == nil)
        #expect(d.ssidPrefix?.bytes == [0x43, 0x61, 0x6F, 0xFE])
        #expect(d.bssid == (try MACAddress("A4:CF:12:6B:00:01")))
        #expect(d.bssidMask == (try MACAddress("FF:FF:FF:00:00:00")))
        #expect(d.minimumSignalStrength == 0)
        #expect(d.bluetoothServiceUUID == BluetoothUUID(assigned: 0x4677))
        #expect(d.bluetoothCompanyIdentifier?.rawValue == 0x0BA9)
        #expect(d.bluetoothNameSubstring == "SBBT")
        #expect(d.bluetoothNameSubstringCompareOptions == .caseInsensitive)
        #expect(d.bluetoothManufacturerData == (try MaskedData(blob: [0x01, 0x00], mask: [0xFF, 0x0F])))
        #expect(d.bluetoothServiceData == (try MaskedData(blob: [0x01], mask: [0xFF])))
        #expect(d.bluetoothRange == .immediate)
        #expect(d.supportedOptions == [.bluetoothPairingLE, .bluetoothHID])
    }

    @Test("a company identifier may be a number", arguments: [(0, UInt16(0)), (1, 1), (2985, 0x0BA9), (65535, 0xFFFF)])
    func companyIdentifierNumber(number: Int, expected: UInt16) throws {
        let (read, issues) = try read(#"{"bluetoothCompanyIdentifier": \#(number)}"#)
        #expect(issues == [])
        #expect(read?.bluetoothCompanyIdentifier?.rawValue == expected)
    }

    @Test("defaults: range default, no options")
    func defaults() throws {
        let (read, _) = try read(#"{"ssid": "WLED-AP"}"#)
        let d = try #require(read)
        #expect(d.ssid == (try SSID("WLED-AP")))
        #expect(d.bluetoothRange == .default)
        #expect(d.supportedOptions == [])
        #expect(d.bluetoothNameSubstringCompareOptions == [])
    }

    static func fullDescriptor() throws -> DiscoveryDescriptor {
        var d = DiscoveryDescriptor()
        d.ssid = try SSID(notation: "hex:43616ffe")
        d.bssid = try MACAddress("A4:CF:12:6B:00:01")
        d.bssidMask = try MACAddress("FF:FF:FF:00:00:00")
        d.minimumSignalStrength = 35
        d.bluetoothServiceUUID = try BluetoothUUID("021a9004-0382-4aea-bff4-6b3f1c5adfb4")
        d.bluetoothCompanyIdentifier = BluetoothCompanyIdentifier(rawValue: 0x0BA9)
        d.bluetoothNameSubstring = "PROV_"
        d.bluetoothNameSubstringCompareOptions = .caseInsensitive
        d.bluetoothManufacturerData = try MaskedData(blob: [0x01, 0x00, 0xC8], mask: [0xFF, 0x00, 0xF0])
        d.bluetoothServiceData = try MaskedData(blob: [0x02], mask: [0x0F])
        d.bluetoothRange = .immediate
        d.supportedOptions = [.bluetoothPairingLE, .bluetoothTransportBridging, .bluetoothHID]
        return d
    }

    @Test("Codable round trip keeps every field")
    func codableRoundTrip() throws {
        var prefixed = DiscoveryDescriptor()
        prefixed.ssidPrefix = try SSID("hex:")  // text that starts with hex:
        var minimal = DiscoveryDescriptor()
        minimal.bluetoothCompanyIdentifier = BluetoothCompanyIdentifier(rawValue: 0)
        let originals = [try Self.fullDescriptor(), prefixed, minimal]
        let data = try JSONEncoder().encode(originals)
        let decoded = try JSONDecoder().decode([DiscoveryDescriptor].self, from: data)
        #expect(decoded == originals)
    }

    @Test("encoding uses the profile's keys and spellings")
    func encodedForm() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(try Self.fullDescriptor()), as: UTF8.self)
        #expect(
            text
                == #"{"bluetoothCompanyIdentifier":"0x0BA9","bluetoothManufacturerDataBlob":"0100c8","bluetoothManufacturerDataMask":"ff00f0","bluetoothNameSubstring":"PROV_","bluetoothNameSubstringCompareOptions":["caseInsensitive"],"bluetoothRange":"immediate","bluetoothServiceDataBlob":"02","bluetoothServiceDataMask":"0f","bluetoothServiceUUID":"021a9004-0382-4aea-bff4-6b3f1c5adfb4","bssid":"A4:CF:12:6B:00:01","bssidMask":"FF:FF:FF:00:00:00","minimumSignalStrength":35,"ssid":"hex:43616ffe","supportedOptions":["bluetoothPairingLE","bluetoothTransportBridging","bluetoothHID"]}"#
        )

        var plain = DiscoveryDescriptor()
        plain.ssid = try SSID("WLED-AP")
        #expect(String(decoding: try encoder.encode(plain), as: UTF8.self) == #"{"ssid":"WLED-AP"}"#)
    }

    @Test(
        "decoding an invalid descriptor throws with its faults",
        arguments: [
            (#"{"ssid": "a", "ssidPrefix": "b"}"#, "ssid and ssidPrefix are mutually exclusive"),
            (#"{"ssid": 5}"#, "ssid: expected a string, found a number"),
            (#"{"bssid": "A4:CF:12:6B:00:01", "colour": "red"}"#, "colour: is not a known key"),
            ("{}", "a descriptor needs a Wi-Fi identifier"),
            ("[]", "expected an object, found an array"),
            (#""WLED-AP""#, "expected an object, found a string"),
        ])
    func decodingInvalid(json: String, fragment: String) throws {
        let data = Data("[\(json)]".utf8)
        do {
            _ = try JSONDecoder().decode([DiscoveryDescriptor].self, from: data)
            Issue.record("decoding \(json) did not throw")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.debugDescription.hasPrefix("invalid descriptor: "))
            #expect(context.debugDescription.contains(fragment))
        }
    }
}
