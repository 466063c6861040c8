import Testing

@testable import AccessoryCore

@Suite("Hex")
struct HexTests {
    @Test("parses pairs of hex digits into bytes")
    func parsesBytes() throws {
        #expect(try Hex.bytes("00ff10a5") == [0x00, 0xFF, 0x10, 0xA5])
    }

    @Test("the empty text is no bytes")
    func emptyText() throws {
        #expect(try Hex.bytes("") == [])
    }

    @Test("either case parses to the same bytes", arguments: ["abcdef", "ABCDEF", "AbCdEf", "aBcDeF"])
    func caseInsensitive(text: String) throws {
        #expect(try Hex.bytes(text) == [0xAB, 0xCD, 0xEF])
    }

    @Test(
        "an odd number of digits is refused with the count",
        arguments: [
            ("a", 1), ("abc", 3), ("0123456", 7),
        ])
    func oddLength(text: String, count: Int) {
        #expect(throws: Hex.ParseError.oddLength(count)) { try Hex.bytes(text) }
    }

    @Test(
        "a character that is not a hex digit is refused with its offset",
        arguments: [
            ("g0", Character("g"), 0),
            ("0g", Character("g"), 1),
            ("00 1", Character(" "), 2),
            ("0x12", Character("x"), 1),
            ("abé0", Character("é"), 2),
            ("12-34", Character("-"), 2),
        ])
    func invalidCharacter(text: String, character: Character, offset: Int) {
        #expect(throws: Hex.ParseError.invalidCharacter(character, offset: offset)) { try Hex.bytes(text) }
    }

    @Test("an invalid character is reported even when the count is also odd")
    func invalidCharacterBeforeOddLength() {
        #expect(throws: Hex.ParseError.invalidCharacter("z", offset: 2)) { try Hex.bytes("abz") }
    }

    @Test("error descriptions name the count and the 1-based position")
    func errorDescriptions() {
        #expect(
            Hex.ParseError.oddLength(3).description
                == "has 3 hex digits; two digits make a byte, so the count must be even")
        #expect(Hex.ParseError.invalidCharacter("g", offset: 1).description == "'g' at position 2 is not a hex digit")
    }

    @Test("string writes two lower-case digits a byte")
    func string() {
        #expect(Hex.string([0x00, 0x0F, 0xA0, 0xFF]) == "000fa0ff")
        #expect(Hex.string([]) == "")
    }

    @Test("every byte value round-trips through string and bytes")
    func roundTrip() throws {
        let all = (0...255).map { UInt8($0) }
        let text = Hex.string(all)
        #expect(text.count == 512)
        #expect(try Hex.bytes(text) == all)
        #expect(try Hex.bytes(text.uppercased()) == all)
    }

    @Test(
        "isHexDigits accepts only hex digits",
        arguments: [
            ("0123456789abcdefABCDEF", true), ("", true), ("12g4", false), ("12 4", false), ("é", false),
            ("0x1", false),
        ])
    func isHexDigits(text: String, expected: Bool) {
        #expect(Hex.isHexDigits(text) == expected)
    }
}
