/// Flatpak application ids (`org.example.AcmePlug`): what a sandboxed client is known by, and
/// what a profile's `applications` name.
///
/// The rule is flatpak's own `flatpak_is_valid_name` (flatpak `common/flatpak-ref-utils.c`),
/// which xdg-desktop-portal applies to the `name` of a sandbox's `/.flatpak-info` too: three or
/// more elements separated by `.`, each of ASCII letters, digits, `_` and (in the last element
/// only) `-`, none starting with a digit, none empty, at most 255 bytes in all. Every such id is
/// also a valid D-Bus well-known name.
public enum ApplicationID {
    public static let maximumLength = 255

    /// Whether `text` is a valid Flatpak application id.
    public static func isValid(_ text: String) -> Bool {
        problem(text) == nil
    }

    /// Why `text` is not a valid Flatpak application id ("an element starts with '1'"); `nil` when it is.
    public static func problem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        if bytes.isEmpty { return "it is empty" }
        if bytes.count > maximumLength { return "it is longer than \(maximumLength) bytes" }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if bytes.first == UInt8(ascii: ".") { return "it starts with a period" }
        if bytes.last == UInt8(ascii: ".") { return "it ends with a period" }
        for (index, element) in elements.enumerated() {
            let last = index == elements.count - 1
            guard let first = element.first else { return "an element is empty" }
            if first == UInt8(ascii: "-") && !last { return "only the last element may contain '-'" }
            if !isNameCharacter(first, allowDash: last) || isDigit(first) {
                return "an element starts with \(describe(first))"
            }
            for byte in element.dropFirst() where !isNameCharacter(byte, allowDash: last) {
                return byte == UInt8(ascii: "-")
                    ? "only the last element may contain '-'" : "it contains \(describe(byte))"
            }
        }
        if elements.count < 3 { return "it has fewer than 3 elements" }
        return nil
    }

    private static func describe(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "the byte 0x\(Hex.string([byte]))"
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isNameCharacter(_ byte: UInt8, allowDash: Bool) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || isDigit(byte) || byte == UInt8(ascii: "_") || (allowDash && byte == UInt8(ascii: "-"))
    }
}
