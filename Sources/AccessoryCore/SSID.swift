/// A Wi-Fi network name: 1 to 32 bytes, as IEEE 802.11 and NetworkManager define it.
///
/// An SSID is bytes, not text. `escaped` shows it the way `iw` does; `notation` is the
/// round-trippable form used in JSON files: the UTF-8 text, or `hex:` and two digits a byte.
public struct SSID: Hashable, Sendable, Comparable {
    public static let maximumLength = 32
    public static let hexNotationPrefix = "hex:"

    public let bytes: [UInt8]

    public init(bytes: some Sequence<UInt8>) throws(SSIDError) {
        let bytes = Array(bytes)
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count <= Self.maximumLength else { throw .tooLong(byteCount: bytes.count) }
        self.bytes = bytes
    }

    /// The SSID whose bytes are the UTF-8 encoding of `text`.
    public init(_ text: String) throws(SSIDError) {
        try self.init(bytes: text.utf8)
    }

    /// Reads the `notation` form: `hex:` followed by hex digits, or else UTF-8 text.
    public init(notation: String) throws(SSIDError) {
        guard notation.hasPrefix(Self.hexNotationPrefix) else {
            try self.init(notation)
            return
        }
        let digits = String(notation.dropFirst(Self.hexNotationPrefix.count))
        let bytes: [UInt8]
        do {
            bytes = try Hex.bytes(digits)
        } catch {
            throw .invalidHex(error)
        }
        try self.init(bytes: bytes)
    }

    public var count: Int { bytes.count }

    /// The SSID as text when its bytes are valid UTF-8.
    public var utf8String: String? {
        String(validating: bytes, as: UTF8.self)
    }

    /// The form used in JSON: UTF-8 text where that reads back to the same bytes, else `hex:…`.
    public var notation: String {
        if let text = utf8String, !text.hasPrefix(Self.hexNotationPrefix) {
            return text
        }
        return Self.hexNotationPrefix + Hex.string(bytes)
    }

    /// A printable form: UTF-8 text with control characters, invalid bytes and `\` escaped
    /// as `\xNN` and `\\`, as `iw` prints SSIDs, and so are the characters that disguise text
    /// on a terminal (`Unicode.Scalar.isUnsafeOnTerminal`).
    public var escaped: String {
        var text = ""
        if let decoded = utf8String {
            for scalar in decoded.unicodeScalars {
                if scalar == "\\" {
                    text += "\\\\"
                } else if scalar.isUnsafeOnTerminal {
                    for byte in String(scalar).utf8 { text += Self.escape(byte) }
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        } else {
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\\"): text += "\\\\"
                case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(byte))
                default: text += Self.escape(byte)
                }
            }
        }
        return text
    }

    /// Whether the SSID starts with the bytes of `prefix` (Apple's `ssidPrefix` rule, on bytes).
    public func hasPrefix(_ prefix: SSID) -> Bool {
        bytes.starts(with: prefix.bytes)
    }

    public static func < (lhs: SSID, rhs: SSID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    private static func escape(_ byte: UInt8) -> String {
        "\\x" + Hex.string([byte])
    }
}

extension SSID: CustomStringConvertible {
    public var description: String { escaped }
}

extension SSID: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(notation: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(notation)
    }
}

/// Why bytes are not an SSID.
public enum SSIDError: Error, Hashable, Sendable, CustomStringConvertible {
    case empty
    case tooLong(byteCount: Int)
    case invalidHex(Hex.ParseError)

    public var description: String {
        switch self {
        case .empty:
            "must not be empty"
        case .tooLong(let count):
            "is \(count) bytes long; an SSID has at most \(SSID.maximumLength) bytes (UTF-8 bytes, not characters)"
        case .invalidHex(let error):
            "is not valid after 'hex:': \(error)"
        }
    }
}
