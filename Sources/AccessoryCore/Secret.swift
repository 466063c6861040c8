/// A passphrase or password. It prints as `<redacted>` wherever it is interpolated, logged or
/// dumped; only `reveal()` gives the text, for the one place that hands it to NetworkManager.
public struct Secret: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let value: String

    public init(_ value: String) { self.value = value }

    public func reveal() -> String { value }

    public var isEmpty: Bool { value.isEmpty }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: []) }
}
