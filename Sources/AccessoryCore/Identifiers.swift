import FoundationEssentials

/// A 48-bit IEEE 802 address: a Wi-Fi BSSID or a Bluetooth device address.
public struct MACAddress: Hashable, Sendable, Comparable {
    /// The address in the low 48 bits, first octet most significant.
    public let rawValue: UInt64

    public init(rawValue: UInt64) {
        self.rawValue = rawValue & 0xFFFF_FFFF_FFFF
    }

    public init(octets: [UInt8]) throws(IdentifierError) {
        guard octets.count == 6 else { throw .invalidMACAddress("has \(octets.count) octets, not 6") }
        self.init(rawValue: octets.reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// Parses six pairs of hex digits separated by `:` or `-` (`24:0A:C4:1A:2B:3C`).
    public init(_ text: String) throws(IdentifierError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        let groups = parts.count == 6 ? parts : text.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.count == 6,
            groups.allSatisfy({ $0.utf8.count == 2 && Hex.isHexDigits($0) })
        else {
            throw .invalidMACAddress(
                "'\(text)' is not six pairs of hex digits separated by ':' (like 24:0A:C4:1A:2B:3C)")
        }
        self.init(rawValue: groups.reduce(0) { $0 << 8 | UInt64($1, radix: 16)! })
    }

    /// An address as devices report it in their own answers: twelve hex digits, bare
    /// (`A8032AB12345`, as Shelly and WLED write it) or in pairs separated by `:` or `-`.
    public init?(looseText text: String) {
        if let parsed = try? MACAddress(text) {
            self = parsed
            return
        }
        guard text.utf8.count == 12, Hex.isHexDigits(Substring(text)), let value = UInt64(text, radix: 16) else {
            return nil
        }
        self.init(rawValue: value)
    }

    public var octets: [UInt8] {
        (0..<6).reversed().map { UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64($0))) }
    }

    public static func & (lhs: MACAddress, rhs: MACAddress) -> MACAddress {
        MACAddress(rawValue: lhs.rawValue & rhs.rawValue)
    }

    public static func < (lhs: MACAddress, rhs: MACAddress) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension MACAddress: CustomStringConvertible {
    /// Upper-case octets separated by `:`, as NetworkManager and BlueZ print them.
    public var description: String {
        octets.map { Hex.string([$0]).uppercased() }.joined(separator: ":")
    }
}

extension MACAddress: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do { try self.init(text) } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A Bluetooth UUID, always held in its 128-bit form.
///
/// 16- and 32-bit UUIDs are written on the Bluetooth base UUID
/// `0000xxxx-0000-1000-8000-00805f9b34fb`, as BlueZ does.
public struct BluetoothUUID: Hashable, Sendable, Comparable {
    public let uuid: UUID

    public init(_ uuid: UUID) { self.uuid = uuid }

    /// Parses `180d`, `0000180d`, or the 36-character form (either case).
    public init(_ text: String) throws(IdentifierError) {
        let lower = text.lowercased()
        let expanded: String
        switch lower.utf8.count {
        case 4 where Hex.isHexDigits(lower): expanded = "0000" + lower + Self.baseSuffix
        case 8 where Hex.isHexDigits(lower): expanded = lower + Self.baseSuffix
        default: expanded = lower
        }
        guard expanded.utf8.count == 36, let uuid = UUID(uuidString: expanded) else {
            throw .invalidBluetoothUUID("'\(text)' is not a 16-bit (180d), 32-bit or 128-bit Bluetooth UUID")
        }
        self.uuid = uuid
    }

    /// A 16-bit UUID assigned by the Bluetooth SIG, on the base UUID.
    public init(assigned value: UInt16) {
        let digits = Hex.string([UInt8(value >> 8), UInt8(value & 0xFF)])
        self.uuid = UUID(uuidString: "0000" + digits + Self.baseSuffix)!
    }

    private static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    /// Lower-case 36-character form, as BlueZ prints UUIDs.
    public var string: String { uuid.uuidString.lowercased() }

    public static func < (lhs: BluetoothUUID, rhs: BluetoothUUID) -> Bool { lhs.string < rhs.string }
}

extension BluetoothUUID: CustomStringConvertible {
    public var description: String { string }
}

extension BluetoothUUID: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do { try self.init(text) } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }
}

/// A company identifier assigned by the Bluetooth SIG, the key of manufacturer data.
public struct BluetoothCompanyIdentifier: RawRepresentable, Hashable, Sendable, Comparable {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Parses a decimal number or `0x` and up to four hex digits.
    public init(_ text: String) throws(IdentifierError) {
        let value: UInt16?
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            let digits = text.dropFirst(2)
            value = (1...4).contains(digits.count) && Hex.isHexDigits(digits) ? UInt16(digits, radix: 16) : nil
        } else {
            value = !text.isEmpty && text.allSatisfy(\.isASCIIDigitCharacter) ? UInt16(text) : nil
        }
        guard let value else {
            throw .invalidCompanyIdentifier("'\(text)' is not a number from 0 to 65535 or 0x0000 to 0xFFFF")
        }
        self.rawValue = value
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension BluetoothCompanyIdentifier: CustomStringConvertible {
    /// `0x` and four upper-case hex digits, as the Bluetooth SIG lists them.
    public var description: String {
        "0x" + Hex.string([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)]).uppercased()
    }
}

extension BluetoothCompanyIdentifier: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(UInt16.self) {
            self.init(rawValue: number)
            return
        }
        let text = try container.decode(String.self)
        do { try self.init(text) } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A byte pattern and a mask of the same length: data matches when
/// `data[i] & mask[i] == blob[i] & mask[i]` for every byte of the blob.
public struct MaskedData: Hashable, Sendable {
    public let blob: [UInt8]
    public let mask: [UInt8]

    public init(blob: [UInt8], mask: [UInt8]) throws(IdentifierError) {
        guard !blob.isEmpty else { throw .invalidMaskedData("the blob must not be empty") }
        guard blob.count == mask.count else {
            throw .invalidMaskedData(
                "the blob has \(blob.count) bytes and the mask \(mask.count); they must have the same length")
        }
        self.blob = blob
        self.mask = mask
    }

    /// Whether `data` holds the pattern from its first byte; shorter data never matches.
    public func matches(_ data: [UInt8]) -> Bool {
        guard data.count >= blob.count else { return false }
        for i in blob.indices where data[i] & mask[i] != blob[i] & mask[i] {
            return false
        }
        return true
    }
}

/// Why a text is not a valid identifier.
public enum IdentifierError: Error, Hashable, Sendable, CustomStringConvertible {
    case invalidMACAddress(String)
    case invalidBluetoothUUID(String)
    case invalidCompanyIdentifier(String)
    case invalidMaskedData(String)

    public var description: String {
        switch self {
        case .invalidMACAddress(let reason), .invalidBluetoothUUID(let reason),
            .invalidCompanyIdentifier(let reason), .invalidMaskedData(let reason):
            reason
        }
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { ("0"..."9").contains(self) }
}
