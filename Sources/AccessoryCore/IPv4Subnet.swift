/// An IPv4 address, read from its dotted-quad notation only: no names, no shortened forms
/// (`127.1`) and no octal, which `inet_aton` would take.
public struct IPv4Address: Hashable, Sendable, CustomStringConvertible {
    /// The address in host order.
    public let value: UInt32

    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                part == "0" || !part.hasPrefix("0"), let octet = UInt8(part)
            else { return nil }
            value = value << 8 | UInt32(octet)
        }
        self.value = value
    }

    public init(value: UInt32) {
        self.value = value
    }

    public var description: String {
        [24, 16, 8, 0].map { String(value >> UInt32($0) & 0xff) }.joined(separator: ".")
    }
}

/// An address a device holds with the length of its network's prefix (`192.168.4.2/24`): the
/// network it reaches directly.
public struct IPv4Subnet: Hashable, Sendable, CustomStringConvertible {
    public let address: IPv4Address
    public let prefixLength: Int

    public init?(address: IPv4Address, prefixLength: Int) {
        guard (0...32).contains(prefixLength) else { return nil }
        self.address = address
        self.prefixLength = prefixLength
    }

    private var mask: UInt32 { prefixLength == 0 ? 0 : UInt32.max << UInt32(32 - prefixLength) }

    public func contains(_ other: IPv4Address) -> Bool {
        other.value & mask == address.value & mask
    }

    /// The network, as `192.168.4.0/24`.
    public var description: String {
        "\(IPv4Address(value: address.value & mask))/\(prefixLength)"
    }
}
