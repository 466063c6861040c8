/// Hexadecimal text for byte strings: manufacturer and service data, WEP keys, `hex:` SSIDs.
public enum Hex {
    /// Why a text is not a hexadecimal byte string.
    public enum ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        case oddLength(Int)
        case invalidCharacter(Character, offset: Int)

        public var description: String {
            switch self {
            case .oddLength(let count):
                "has \(count) hex digits; two digits make a byte, so the count must be even"
            case .invalidCharacter(let character, let offset):
                "'\(character)' at position \(offset + 1) is not a hex digit"
            }
        }
    }

    /// Parses pairs of hex digits (either case), with no prefix or separators.
    public static func bytes(_ text: String) throws(ParseError) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count / 2)
        var high: UInt8?
        var count = 0
        for scalar in text.unicodeScalars {
            guard scalar.isASCII, let nibble = nibble(UInt8(scalar.value)) else {
                throw .invalidCharacter(Character(scalar), offset: count)
            }
            count += 1
            if let h = high {
                result.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        if high != nil { throw .oddLength(count) }
        return result
    }

    /// Whether every character of `text` is a hex digit.
    public static func isHexDigits(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy { nibble($0) != nil }
    }

    /// Lower-case hex digits, two per byte.
    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        var text = ""
        for byte in bytes {
            text.unicodeScalars.append(digits[Int(byte >> 4)])
            text.unicodeScalars.append(digits[Int(byte & 0x0F)])
        }
        return text
    }

    private static let digits: [Unicode.Scalar] = Array("0123456789abcdef".unicodeScalars)

    static func nibble(_ unit: UInt8) -> UInt8? {
        switch unit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): unit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): unit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): unit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
