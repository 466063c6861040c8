import Foundation
import Testing

@testable import AccessoryCore

@Suite("MACAddress")
struct MACAddressTests {
    @Test(
        "parses six groups separated by ':' or '-', in either case",
        arguments: [
            "24:0A:C4:1A:2B:3C", "24:0a:c4:1a:2b:3c", "24-0A-C4-1A-2B-3C", "24-0a-C4-1a-2B-3c",
        ])
    func parses(text: String) throws {
        let address = try MACAddress(text)
        #expect(address.rawValue == 0x240A_C41A_2B3C)
        #expect(address.octets == [0x24, 0x0A, 0xC4, 0x1A, 0x2B, 0x3C])
    }

    @Test(
        "refuses anything but six pairs of hex digits",
        arguments: [
            "24:0A:C4:1A:2B",  // five groups
            "24:0A:C4:1A:2B:3C:4D",  // seven groups
            "24:0A:C4:1A:2B:3G",  // not hex
            "240:A:C4:1A:2B:3C",  // three-digit group
            "24:0A:C4:1A:2B:3C0",  // three-digit last group
            "2:0A:C4:1A:2B:3C",  // one-digit group
            "24:0A:C4-1A:2B:3C",  // mixed separators
            "24:0A:C4:1A:2B:",  // empty group
            "240AC41A2B3C",  // no separators
            "24.0A.C4.1A.2B.3C",  // other separator
            "",
            " 24:0A:C4:1A:2B:3C",
        ])
    func refuses(text: String) {
        let expected = IdentifierError.invalidMACAddress(
            "'\(text)' is not six pairs of hex digits separated by ':' (like 24:0A:C4:1A:2B:3C)")
        #expect(throws: expected) { try MACAddress(text) }
    }

    @Test("description is upper-case octets separated by ':'")
    func description() throws {
        #expect(try MACAddress("a4:cf:12:6b:00:01").description == "A4:CF:12:6B:00:01")
        #expect(try MACAddress("0a-0b-0c-0d-0e-0f").description == "0A:0B:0C:0D:0E:0F")
    }

    @Test("rawValue keeps only the low 48 bits")
    func rawValueTruncated() {
        #expect(MACAddress(rawValue: .max).rawValue == 0xFFFF_FFFF_FFFF)
        #expect(MACAddress(rawValue: .max).description == "FF:FF:FF:FF:FF:FF")
    }

    @Test("octets must number six")
    func octets() throws {
        #expect(try MACAddress(octets: [1, 2, 3, 4, 5, 6]).description == "01:02:03:04:05:06")
        #expect(throws: IdentifierError.invalidMACAddress("has 5 octets, not 6")) {
            try MACAddress(octets: [1, 2, 3, 4, 5])
        }
        #expect(throws: IdentifierError.invalidMACAddress("has 7 octets, not 6")) {
            try MACAddress(octets: [1, 2, 3, 4, 5, 6, 7])
        }
    }

    @Test("& masks the address bit by bit")
    func masking() throws {
        let address = try MACAddress("A4:CF:12:6B:00:01")
        let oui = try MACAddress("FF:FF:FF:00:00:00")
        #expect(address & oui == (try MACAddress("A4:CF:12:00:00:00")))
        #expect((address & oui) == (try MACAddress("A4:CF:12:99:88:77") & oui))
        #expect((address & (try MACAddress("0F:F0:00:00:00:FF"))) == (try MACAddress("04:C0:00:00:00:01")))
    }

    @Test("addresses order by value")
    func ordering() throws {
        #expect(try MACAddress("00:00:00:00:00:01") < MACAddress("00:00:00:00:01:00"))
        #expect(try MACAddress("01:00:00:00:00:00") > MACAddress("00:FF:FF:FF:FF:FF"))
    }

    @Test("Codable writes the upper-case form and reads either")
    func codable() throws {
        let address = try MACAddress("a4:cf:12:6b:00:01")
        let data = try JSONEncoder().encode([address])
        #expect(String(decoding: data, as: UTF8.self) == "[\"A4:CF:12:6B:00:01\"]")
        #expect(try JSONDecoder().decode([MACAddress].self, from: data) == [address])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([MACAddress].self, from: Data("[\"A4:CF:12\"]".utf8))
        }
    }
}

@Suite("BluetoothUUID")
struct BluetoothUUIDTests {
    @Test(
        "16-, 32- and 128-bit forms in either case",
        arguments: [
            ("180d", "0000180d-0000-1000-8000-00805f9b34fb"),
            ("180D", "0000180d-0000-1000-8000-00805f9b34fb"),
            ("0000180d", "0000180d-0000-1000-8000-00805f9b34fb"),
            ("1234ABCD", "1234abcd-0000-1000-8000-00805f9b34fb"),
            ("0000180d-0000-1000-8000-00805f9b34fb", "0000180d-0000-1000-8000-00805f9b34fb"),
            ("021A9004-0382-4AEA-BFF4-6B3F1C5ADFB4", "021a9004-0382-4aea-bff4-6b3f1c5adfb4"),
        ])
    func parses(text: String, expected: String) throws {
        let uuid = try BluetoothUUID(text)
        #expect(uuid.string == expected)
        #expect(uuid.description == expected)
    }

    @Test("the short and the long form are the same UUID")
    func shortEqualsLong() throws {
        #expect(try BluetoothUUID("180d") == BluetoothUUID("0000180D-0000-1000-8000-00805F9B34FB"))
        #expect(try BluetoothUUID("180d") == BluetoothUUID(assigned: 0x180D))
        #expect(BluetoothUUID(assigned: 0x4677).string == "00004677-0000-1000-8000-00805f9b34fb")
    }

    @Test(
        "malformed UUIDs are refused",
        arguments: [
            "", "180", "180g", "18 0d", "0180d", "0000180g", "000180d", "0000180d0",
            "0000180d00001000800000805f9b34fb",  // 128 bits without dashes
            "0000180d-0000-1000-8000-00805f9b34f",  // one digit short
            "0000180d-0000-1000-8000-00805f9b34fbb",  // one digit long
            "0000180d-0000-1000-8000-00805f9b34fg",  // not hex
            "{0000180d-0000-1000-8000-00805f9b34fb}",
        ])
    func refuses(text: String) {
        #expect(
            throws: IdentifierError.invalidBluetoothUUID(
                "'\(text)' is not a 16-bit (180d), 32-bit or 128-bit Bluetooth UUID")
        ) {
            try BluetoothUUID(text)
        }
    }

    @Test("Codable writes the lower-case 128-bit form")
    func codable() throws {
        let uuid = try BluetoothUUID("180D")
        let data = try JSONEncoder().encode([uuid])
        #expect(String(decoding: data, as: UTF8.self) == "[\"0000180d-0000-1000-8000-00805f9b34fb\"]")
        #expect(try JSONDecoder().decode([BluetoothUUID].self, from: Data("[\"180d\"]".utf8)) == [uuid])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([BluetoothUUID].self, from: Data("[\"18\"]".utf8))
        }
    }
}

@Suite("BluetoothCompanyIdentifier")
struct BluetoothCompanyIdentifierTests {
    @Test(
        "decimal and 0x hex",
        arguments: [
            ("0", UInt16(0)), ("2985", 0x0BA9), ("65535", 0xFFFF),
            ("0x0BA9", 0x0BA9), ("0x0ba9", 0x0BA9), ("0XBA9", 0x0BA9), ("0x4C", 0x004C), ("0xFFFF", 0xFFFF), ("0x0", 0),
        ])
    func parses(text: String, expected: UInt16) throws {
        #expect(try BluetoothCompanyIdentifier(text).rawValue == expected)
    }

    @Test(
        "out of range and junk are refused",
        arguments: [
            "65536", "0x10000", "-1", "", "0x", "0x0BAG", "abc", "0BA9h", " 5", "5 ", "1.0", "0b101",
        ])
    func refuses(text: String) {
        #expect(
            throws: IdentifierError.invalidCompanyIdentifier(
                "'\(text)' is not a number from 0 to 65535 or 0x0000 to 0xFFFF")
        ) {
            try BluetoothCompanyIdentifier(text)
        }
    }

    // The initialiser documents "a decimal number or `0x` and up to four hex digits":
    // a sign is neither.
    @Test("a sign before the digits is refused", arguments: ["+5", "-0", "0x+BA9", "0x-0"])
    func refusesSigns(text: String) {
        #expect(throws: IdentifierError.self) { try BluetoothCompanyIdentifier(text) }
    }

    @Test("more than four hex digits after 0x are refused", arguments: ["0x00BA9", "0x0000000001"])
    func refusesLongHex(text: String) {
        #expect(throws: IdentifierError.self) { try BluetoothCompanyIdentifier(text) }
    }

    @Test("description is 0x and four upper-case digits")
    func description() {
        #expect(BluetoothCompanyIdentifier(rawValue: 0x0BA9).description == "0x0BA9")
        #expect(BluetoothCompanyIdentifier(rawValue: 0x4C).description == "0x004C")
        #expect(BluetoothCompanyIdentifier(rawValue: 0).description == "0x0000")
    }

    @Test("Codable writes 0x form and reads numbers and strings")
    func codable() throws {
        let company = BluetoothCompanyIdentifier(rawValue: 0x0BA9)
        let data = try JSONEncoder().encode([company])
        #expect(String(decoding: data, as: UTF8.self) == "[\"0x0BA9\"]")
        #expect(try JSONDecoder().decode([BluetoothCompanyIdentifier].self, from: data) == [company])
        #expect(
            try JSONDecoder().decode([BluetoothCompanyIdentifier].self, from: Data("[2985, \"2985\"]".utf8)) == [
                company, company,
            ])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([BluetoothCompanyIdentifier].self, from: Data("[65536]".utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([BluetoothCompanyIdentifier].self, from: Data("[\"0x10000\"]".utf8))
        }
    }
}

@Suite("MaskedData")
struct MaskedDataTests {
    @Test("an empty blob is refused")
    func emptyBlob() {
        #expect(throws: IdentifierError.invalidMaskedData("the blob must not be empty")) {
            try MaskedData(blob: [], mask: [])
        }
    }

    @Test("blob and mask of different lengths are refused")
    func lengthMismatch() {
        #expect(
            throws: IdentifierError.invalidMaskedData(
                "the blob has 2 bytes and the mask 1; they must have the same length")
        ) {
            try MaskedData(blob: [1, 2], mask: [0xFF])
        }
        #expect(
            throws: IdentifierError.invalidMaskedData(
                "the blob has 1 bytes and the mask 3; they must have the same length")
        ) {
            try MaskedData(blob: [1], mask: [0xFF, 0xFF, 0xFF])
        }
    }

    @Test(
        "only the masked bits are compared",
        arguments: [
            // blob 0x12 0x34 under mask 0xF0 0xFF
            ([UInt8]([0x12, 0x34]), true),
            ([0x1F, 0x34], true),  // low nibble of byte 0 is not compared
            ([0x10, 0x34], true),
            ([0x22, 0x34], false),  // high nibble of byte 0 differs
            ([0x12, 0x35], false),  // byte 1 fully compared
            ([0x12, 0x34, 0x99], true),  // longer data matches on its prefix
            ([0x12], false),  // shorter data never matches
            ([], false),
        ])
    func masking(data: [UInt8], expected: Bool) throws {
        let pattern = try MaskedData(blob: [0x12, 0x34], mask: [0xF0, 0xFF])
        #expect(pattern.matches(data) == expected)
    }

    @Test("a zero mask matches any data at least as long as the blob")
    func zeroMask() throws {
        let pattern = try MaskedData(blob: [0xAA, 0xBB], mask: [0x00, 0x00])
        #expect(pattern.matches([0x00, 0x00]))
        #expect(pattern.matches([0x01, 0x02, 0x03]))
        #expect(!pattern.matches([0x00]))
    }

    @Test("bits set in the blob but not in the mask are ignored")
    func blobBitsOutsideMask() throws {
        let pattern = try MaskedData(blob: [0xFF], mask: [0x01])
        #expect(pattern.matches([0x01]))
        #expect(!pattern.matches([0xFE]))
    }
}
