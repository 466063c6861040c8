import Foundation
import Testing

@testable import AccessoryCore

@Suite("SSID")
struct SSIDTests {
    @Test("an SSID is the UTF-8 bytes of its text")
    func textIsUTF8Bytes() throws {
        let ssid = try SSID("WLED-AP")
        #expect(ssid.bytes == Array("WLED-AP".utf8))
        #expect(ssid.count == 7)
        #expect(ssid.utf8String == "WLED-AP")
    }

    @Test("an empty SSID is refused")
    func empty() {
        #expect(throws: SSIDError.empty) { try SSID("") }
        #expect(throws: SSIDError.empty) { try SSID(bytes: []) }
        #expect(throws: SSIDError.empty) { try SSID(notation: "") }
        #expect(throws: SSIDError.empty) { try SSID(notation: "hex:") }
    }

    @Test("32 bytes is the longest SSID")
    func thirtyTwoBytes() throws {
        let ssid = try SSID(String(repeating: "a", count: 32))
        #expect(ssid.count == 32)
        #expect(SSID.maximumLength == 32)
    }

    @Test("33 bytes is refused with the byte count")
    func thirtyThreeBytes() {
        #expect(throws: SSIDError.tooLong(byteCount: 33)) { try SSID(String(repeating: "a", count: 33)) }
        #expect(throws: SSIDError.tooLong(byteCount: 33)) { try SSID(bytes: [UInt8](repeating: 0, count: 33)) }
        #expect(throws: SSIDError.tooLong(byteCount: 33)) {
            try SSID(notation: "hex:" + String(repeating: "00", count: 33))
        }
    }

    @Test("multibyte characters are counted in UTF-8 bytes, not characters")
    func multibyteCountedInBytes() throws {
        let eleven = String(repeating: "é", count: 11)
        #expect(eleven.count == 11)
        #expect(try SSID(eleven).count == 22)

        let sixteen = String(repeating: "é", count: 16)
        #expect(try SSID(sixteen).count == 32)

        let seventeen = String(repeating: "é", count: 17)
        #expect(seventeen.count == 17)
        #expect(throws: SSIDError.tooLong(byteCount: 34)) { try SSID(seventeen) }
    }

    @Test("tooLong explains that bytes, not characters, are counted")
    func tooLongDescription() {
        #expect(
            SSIDError.tooLong(byteCount: 34).description
                == "is 34 bytes long; an SSID has at most 32 bytes (UTF-8 bytes, not characters)")
        #expect(SSIDError.empty.description == "must not be empty")
    }

    @Test("hex: notation gives arbitrary bytes, and notation gives it back")
    func hexNotationRoundTrip() throws {
        let ssid = try SSID(notation: "hex:414300ff")
        #expect(ssid.bytes == [0x41, 0x43, 0x00, 0xFF])
        #expect(ssid.utf8String == nil)
        #expect(ssid.notation == "hex:414300ff")
        #expect(try SSID(notation: ssid.notation) == ssid)
    }

    @Test("hex: notation accepts upper-case digits and writes lower case")
    func hexNotationUpperCase() throws {
        let ssid = try SSID(notation: "hex:C0FFEE")
        #expect(ssid.bytes == [0xC0, 0xFF, 0xEE])
        #expect(ssid.notation == "hex:c0ffee")
    }

    @Test(
        "invalid hex after hex: is refused with the hex error",
        arguments: [
            ("hex:41g3", SSIDError.invalidHex(.invalidCharacter("g", offset: 2))),
            ("hex:414", SSIDError.invalidHex(.oddLength(3))),
            ("hex: 41", SSIDError.invalidHex(.invalidCharacter(" ", offset: 0))),
        ])
    func invalidHex(notation: String, expected: SSIDError) {
        #expect(throws: expected) { try SSID(notation: notation) }
    }

    @Test("invalidHex's description names the hex: prefix and the hex fault")
    func invalidHexDescription() {
        #expect(
            SSIDError.invalidHex(.oddLength(3)).description
                == "is not valid after 'hex:': has 3 hex digits; two digits make a byte, so the count must be even")
    }

    @Test("notation of UTF-8 text is the text itself")
    func notationOfText() throws {
        #expect(try SSID("Café ☕").notation == "Café ☕")
        #expect(try SSID(notation: "Café ☕").bytes == Array("Café ☕".utf8))
    }

    @Test("text that starts with hex: is written in hex form so it reads back the same")
    func notationOfTextStartingWithHexPrefix() throws {
        let ssid = try SSID("hex:41")
        #expect(ssid.bytes == Array("hex:41".utf8))
        #expect(ssid.notation == "hex:" + Hex.string(Array("hex:41".utf8)))
        #expect(ssid.notation == "hex:6865783a3431")
        #expect(try SSID(notation: ssid.notation) == ssid)
    }

    @Test(
        "a prefix is compared on bytes",
        arguments: [
            ("hex:43616ffe", "hex:4361", true),
            ("hex:43616ffe", "Ca", true),
            ("hex:43616ffe", "hex:43616ffe", true),
            ("hex:43616ffe", "hex:43616ffe00", false),
            ("hex:43616ffe", "ca", false),
            ("Café", "Caf", true),
            ("Café", "hex:436166c3", true),
            ("Café", "Cafe", false),
        ])
    func hasPrefix(ssid: String, prefix: String, expected: Bool) throws {
        #expect(try SSID(notation: ssid).hasPrefix(SSID(notation: prefix)) == expected)
    }

    @Test("escaped shows printable UTF-8 text as it is")
    func escapedPlainText() throws {
        #expect(try SSID("Café ☕ net").escaped == "Café ☕ net")
    }

    @Test(
        "escaped writes bytes that are not UTF-8 as \\xNN",
        arguments: [
            ("hex:43616ffe", "Cao\\xfe"),
            ("hex:ff", "\\xff"),
            ("hex:c3", "\\xc3"),
            ("hex:41c328", "A\\xc3("),
            ("hex:00ff7f", "\\x00\\xff\\x7f"),
            ("hex:5cff", "\\\\\\xff"),
        ])
    func escapedInvalidUTF8(notation: String, expected: String) throws {
        #expect(try SSID(notation: notation).escaped == expected)
    }

    @Test(
        "escaped writes control characters of valid UTF-8 as \\xNN of their bytes",
        arguments: [
            ("hex:410042", "A\\x00B"),
            ("hex:0a", "\\x0a"),
            ("hex:41097f", "A\\x09\\x7f"),
            ("hex:c280", "\\xc2\\x80"),
        ])
    func escapedControlCharacters(notation: String, expected: String) throws {
        #expect(try SSID(notation: notation).escaped == expected)
    }

    @Test(
        "escaped writes characters that disguise text on a terminal as \\xNN of their bytes",
        arguments: [
            ("hex:e280ae41", "\\xe2\\x80\\xaeA"),
            ("hex:41e2808b42", "A\\xe2\\x80\\x8bB"),
            ("hex:e280a8", "\\xe2\\x80\\xa8"),
            ("hex:e281a6", "\\xe2\\x81\\xa6"),
        ])
    func escapedFormatCharacters(notation: String, expected: String) throws {
        #expect(try SSID(notation: notation).escaped == expected)
    }

    @Test("escaped doubles a backslash")
    func escapedBackslash() throws {
        #expect(try SSID("a\\b").escaped == "a\\\\b")
        #expect(try SSID("\\").escaped == "\\\\")
    }

    @Test("description is the escaped form")
    func descriptionIsEscaped() throws {
        let ssid = try SSID(notation: "hex:41ff5c")
        #expect(ssid.description == "A\\xff\\\\")
        #expect("\(ssid)" == ssid.escaped)
    }

    @Test("SSIDs order by their bytes")
    func ordering() throws {
        #expect(try SSID("A") < SSID("B"))
        #expect(try SSID("A") < SSID("AA"))
        #expect(try SSID("Z") < SSID(notation: "hex:ff"))
        #expect(!(try SSID("B") < SSID("A")))
    }

    @Test(
        "Codable writes the notation and reads it back",
        arguments: ["WLED-AP", "hex:43616ffe", "hex:6865783a3431", "Café"])
    func codableRoundTrip(notation: String) throws {
        let ssid = try SSID(notation: notation)
        let data = try JSONEncoder().encode([ssid])
        #expect(try JSONDecoder().decode([String].self, from: data) == [ssid.notation])
        #expect(try JSONDecoder().decode([SSID].self, from: data) == [ssid])
    }

    @Test(
        "decoding an invalid SSID throws dataCorrupted",
        arguments: ["[\"\"]", "[\"hex:zz\"]", "[\"\(String(repeating: "x", count: 33))\"]", "[5]"])
    func decodingInvalid(json: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([SSID].self, from: Data(json.utf8)) }
    }
}
