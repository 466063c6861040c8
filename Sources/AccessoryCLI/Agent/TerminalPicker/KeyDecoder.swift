/// Turns the bytes a terminal in raw mode sends into keys. Pure: an escape sequence or a UTF-8
/// character cut off at the end of a read waits for the next one, and `flush()` after a pause
/// reads a lone ESC as the Esc key.
struct KeyDecoder {
    private var pending: [UInt8] = []

    /// Whether bytes wait for more (the caller then flushes after a short pause).
    var isWaiting: Bool { !pending.isEmpty }

    mutating func keys(_ bytes: [UInt8]) -> [PickerModel.Key] {
        var input = pending + bytes
        pending = []
        var keys: [PickerModel.Key] = []
        while !input.isEmpty {
            let (key, used) = Self.decode(input)
            guard used > 0 else {
                pending = input
                break
            }
            if let key { keys.append(key) }
            input.removeFirst(used)
        }
        return keys
    }

    /// What waits is complete after a pause: a lone ESC is the Esc key; anything else is dropped.
    mutating func flush() -> [PickerModel.Key] {
        defer { pending = [] }
        return pending.first == 0x1B ? [.escape] : []
    }

    /// The key at the start of `bytes` and how many bytes it took; 0 bytes when it is cut off.
    private static func decode(_ bytes: [UInt8]) -> (PickerModel.Key?, Int) {
        let first = bytes[0]
        switch first {
        case 0x1B:
            guard bytes.count > 1 else { return (nil, 0) }
            guard bytes[1] == UInt8(ascii: "[") || bytes[1] == UInt8(ascii: "O") else {
                // ESC ESC, or Alt with a key: the Esc key, then the rest on its own.
                return (.escape, 1)
            }
            var end = 2
            while end < bytes.count, !(0x40...0x7E).contains(bytes[end]) { end += 1 }
            guard end < bytes.count else { return (nil, 0) }
            let parameters = String(decoding: bytes[2..<end], as: UTF8.self)
            let key: PickerModel.Key? =
                switch (bytes[end], parameters) {
                case (UInt8(ascii: "A"), _): .up
                case (UInt8(ascii: "B"), _): .down
                case (UInt8(ascii: "H"), _), (UInt8(ascii: "~"), "1"), (UInt8(ascii: "~"), "7"): .home
                case (UInt8(ascii: "F"), _), (UInt8(ascii: "~"), "4"), (UInt8(ascii: "~"), "8"): .end
                default: nil
                }
            return (key, end + 1)
        case 0x03: return (.interrupt, 1)
        case 0x0D, 0x0A: return (.enter, 1)
        case 0x7F, 0x08: return (.backspace, 1)
        case 0x10: return (.up, 1)
        case 0x0E: return (.down, 1)
        case 0x00..<0x20: return (nil, 1)
        case 0x20..<0x80: return (.character(Character(Unicode.Scalar(first))), 1)
        default:
            let length = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1
            guard length > 1 else { return (nil, 1) }
            guard bytes.count >= length else { return (nil, 0) }
            let text = String(decoding: bytes[0..<length], as: UTF8.self)
            guard let scalar = text.unicodeScalars.first, scalar != "\u{FFFD}", !scalar.isUnsafeOnTerminal else {
                return (nil, length)
            }
            return (.character(Character(scalar)), length)
        }
    }
}
