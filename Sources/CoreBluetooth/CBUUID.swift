import FoundationEssentials

/// A Bluetooth UUID as CoreBluetooth's `CBUUID` writes it: the one CoreBluetooth type Apple's
/// AccessorySetupKit code needs (`ASDiscoveryDescriptor.bluetoothServiceUUID`), so that its
/// `import CoreBluetooth` and `CBUUID(string:)` lines build here unchanged. The text is read
/// when the descriptor is used: a malformed one is refused then, naming the descriptor's field,
/// where Apple's framework would stop the app.
public final class CBUUID: Hashable, Sendable, CustomStringConvertible {
    /// The text the UUID was made from: 4, 8 or 36 hex digits and dashes.
    public let uuidString: String

    public init(string: String) {
        uuidString = string
    }

    public convenience init(nsuuid: UUID) {
        self.init(string: nsuuid.uuidString)
    }

    public static func == (lhs: CBUUID, rhs: CBUUID) -> Bool {
        lhs.uuidString.lowercased() == rhs.uuidString.lowercased()
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(uuidString.lowercased()) }

    public var description: String { uuidString }
}
