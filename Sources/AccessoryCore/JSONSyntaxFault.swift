import FoundationEssentials

/// Where a JSON document first breaks the grammar, and how: the line and column a person
/// editing the file needs, which swift-foundation's decoder does not give on Linux (it says
/// only "The given data was not valid JSON."). The decoder stays the parser: this is asked
/// where it refused a document, and where it accepted one, for what it lets pass: a key given
/// twice in one object, of which swift-foundation keeps the first value and other readers
/// (Python's `json`, `jq`) the last.
///
/// It accepts what the decoder accepts beyond RFC 8259 (a comma before a closing bracket), so
/// that the fault it names is the one the decoder stopped at.
struct JSONSyntaxFault: Hashable, Sendable, CustomStringConvertible {
    /// 1-based; a line ends at a line feed.
    var line: Int
    /// 1-based, in characters (Unicode scalars) from the start of the line.
    var column: Int
    var problem: String
    /// For a key given twice, the member it names (`items[0].descriptor.ssid`).
    var field: String?

    var description: String { "line \(line), column \(column): \(problem)" }

    /// The nesting the decoder allows.
    static let maximumDepth = 512

    /// The first fault in `bytes`, or nil when none is found by the grammar (the decoder may
    /// still refuse the document, for a number out of range for example).
    static func first(in bytes: some Collection<UInt8>) -> JSONSyntaxFault? {
        scan(bytes).fault
    }

    /// The first key given twice in one object, in a document without a fault of the grammar.
    static func firstDuplicateKey(in bytes: some Collection<UInt8>) -> JSONSyntaxFault? {
        let scanned = scan(bytes)
        return scanned.fault == nil ? scanned.duplicateKey : nil
    }

    private static func scan(_ bytes: some Collection<UInt8>) -> (
        fault: JSONSyntaxFault?, duplicateKey: JSONSyntaxFault?
    ) {
        let bytes = Array(bytes)
        // The decoder also reads UTF-16 and UTF-32 (told by a byte order mark or by the zero
        // bytes of the first characters); those keep its own message.
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) || bytes.prefix(4).contains(0) {
            return (nil, nil)
        }
        let start = bytes.starts(with: utf8ByteOrderMark) ? utf8ByteOrderMark.count : 0
        var scanner = Scanner(bytes: bytes, start: start)
        let fault = scanner.firstFault().map { scanner.locate($0.offset, $0.problem) }
        return (fault, scanner.duplicateKey)
    }

    private static let utf8ByteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    private struct Scanner {
        let bytes: [UInt8]
        /// Where the text starts, after a byte order mark.
        let start: Int
        var index: Int

        init(bytes: [UInt8], start: Int) {
            self.bytes = bytes
            self.start = start
            index = start
        }

        typealias Fault = (offset: Int, problem: String)

        private enum Container {
            case array, object

            var close: UInt8 { self == .array ? UInt8(ascii: "]") : UInt8(ascii: "}") }
            var name: String { self == .array ? "an array" : "an object" }
        }

        /// An open array or object, and where in it the scanner is.
        private struct Frame {
            var container: Container
            /// An object's keys so far, with the offset of each.
            var keys: [String: Int] = [:]
            /// The member or element being read: its key, or its index in an array.
            var key: String?
            var index = 0
        }

        private var frames: [Frame] = []
        /// The first key given twice in one object, which the scan goes past.
        private(set) var duplicateKey: JSONSyntaxFault?

        private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func firstFault() -> Fault? {
            skipWhitespace()
            if current == nil { return (index, "the document is empty") }
            while true {
                // A value is expected here.
                skipWhitespace()
                guard let byte = current else { return (index, "the document ends where a value is expected") }
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let container: Container = byte == UInt8(ascii: "{") ? .object : .array
                    frames.append(Frame(container: container))
                    if frames.count > JSONSyntaxFault.maximumDepth {
                        return (index, "nested deeper than \(JSONSyntaxFault.maximumDepth) levels")
                    }
                    index += 1
                    skipWhitespace()
                    if current == container.close {
                        index += 1
                        frames.removeLast()
                    } else if container == .object, let fault = member() {
                        return fault
                    } else {
                        continue
                    }
                case UInt8(ascii: "\""):
                    if let fault = string() { return fault }
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    if let fault = number() { return fault }
                case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                    if let fault = literal() { return fault }
                default:
                    return (index, "expected a value, found \(shown(byte))")
                }
                // A value ended: what follows closes containers, or separates values.
                while true {
                    skipWhitespace()
                    guard let container = frames.last?.container else {
                        return current.map { (index, "text after the end of the document, starting with \(shown($0))") }
                    }
                    if current == container.close {
                        index += 1
                        frames.removeLast()
                        continue
                    }
                    guard current == UInt8(ascii: ",") else {
                        let expected = "',' or '\(UnicodeScalar(container.close))'"
                        return (
                            index,
                            current.map { "expected \(expected), found \(shown($0))" }
                                ?? "the document ends inside \(container.name): \(expected) expected"
                        )
                    }
                    index += 1
                    skipWhitespace()
                    // The decoder accepts a comma before the closing bracket; the loop closes it.
                    if current == container.close { continue }
                    if container == .object, let fault = member() { return fault }
                    if container == .array { frames[frames.count - 1].index += 1 }
                    break
                }
            }
        }

        /// A key and its colon; the scanner is left where the member's value starts.
        private mutating func member() -> Fault? {
            guard current == UInt8(ascii: "\"") else {
                return (
                    index,
                    current.map { "expected a key in double quotes, found \(shown($0))" }
                        ?? "the document ends where a key is expected"
                )
            }
            let opening = index
            if let fault = string() { return fault }
            let key = keyText(opening..<index)
            if let first = frames[frames.count - 1].keys[key] {
                if duplicateKey == nil {
                    let (one, two) = (locate(first, ""), locate(opening, ""))
                    duplicateKey = JSONSyntaxFault(
                        line: two.line, column: two.column,
                        problem:
                            "is given twice in one object (line \(one.line), column \(one.column) and line \(two.line), "
                            + "column \(two.column)); JSON readers differ in which one they keep, so give it once",
                        field: path(appending: key))
                }
            } else {
                frames[frames.count - 1].keys[key] = opening
            }
            frames[frames.count - 1].key = key
            skipWhitespace()
            guard current == UInt8(ascii: ":") else {
                return (
                    index,
                    current.map { "expected ':' after the key, found \(shown($0))" }
                        ?? "the document ends where ':' is expected"
                )
            }
            index += 1
            return nil
        }

        /// The text of the key in `range` (quotes included), as the decoder compares keys.
        private func keyText(_ range: Range<Int>) -> String {
            let content = bytes[(range.lowerBound + 1)..<(range.upperBound - 1)]
            guard content.contains(UInt8(ascii: "\\")),
                let decoded = try? JSONDecoder().decode(String.self, from: Data(bytes[range]))
            else { return String(decoding: content, as: UTF8.self) }
            return decoded
        }

        /// The field path of `key` in the innermost open object, as `JSONObjectReader` names it.
        private func path(appending key: String) -> String {
            var path = ""
            for frame in frames.dropLast() {
                switch frame.container {
                case .object: path = path.isEmpty ? frame.key ?? "" : "\(path).\(frame.key ?? "")"
                case .array: path += "[\(frame.index)]"
                }
            }
            return path.isEmpty ? key : "\(path).\(key)"
        }

        private mutating func string() -> Fault? {
            let opening = index
            index += 1
            var contentStart = index
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    if let fault = utf8(contentStart..<index) { return fault }
                    index += 1
                    return nil
                case UInt8(ascii: "\\"):
                    if let fault = utf8(contentStart..<index) { return fault }
                    index += 1
                    switch current {
                    case UInt8(ascii: "u"):
                        let digits = bytes[(index + 1)...].prefix(4)
                        guard digits.count == 4, Hex.isHexDigits(String(decoding: digits, as: UTF8.self)) else {
                            return (index - 1, "'\\u' is not followed by four hexadecimal digits")
                        }
                        index += 5
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 1
                    case nil:
                        break
                    case let escaped?:
                        return (
                            index - 1,
                            "'\\\(shownInline(escaped))' is not an escape JSON knows (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)"
                        )
                    }
                    contentStart = index
                case 0..<0x20:
                    let name =
                        byte == 0x0A
                        ? "a line break"
                        : byte == 0x09 ? "a tab" : "the control character U+\(Hex.string([byte]).uppercased())"
                    return (index, "\(name) inside a string: write it escaped (\\n, \\t, \\u00XX)")
                default:
                    index += 1
                }
            }
            return (opening, "a string that never ends: its closing '\"' is missing")
        }

        private func utf8(_ range: Range<Int>) -> Fault? {
            var decoder = UTF8()
            var iterator = bytes[range].makeIterator()
            var offset = range.lowerBound
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar): offset += UTF8.width(scalar)
                case .emptyInput: return nil
                case .error: return (offset, "bytes that are not UTF-8 inside a string")
                }
            }
        }

        private mutating func number() -> Fault? {
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, Self.isDigit(first) else {
                return (index, "a '-' not followed by a digit")
            }
            index += 1
            if first == UInt8(ascii: "0"), let next = current, Self.isDigit(next) {
                return (index - 1, "a number with a leading zero")
            }
            skipDigits()
            if current == UInt8(ascii: ".") {
                index += 1
                guard let digit = current, Self.isDigit(digit) else { return (index, "a '.' not followed by a digit") }
                skipDigits()
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard let digit = current, Self.isDigit(digit) else { return (index, "an exponent without digits") }
                skipDigits()
            }
            return nil
        }

        private mutating func literal() -> Fault? {
            for word in ["true", "false", "null"] where bytes[index...].starts(with: word.utf8) {
                index += word.utf8.count
                return nil
            }
            return (
                index, "expected a value (true, false and null are written in lower case, strings in double quotes)"
            )
        }

        private mutating func skipDigits() {
            while let byte = current, Self.isDigit(byte) { index += 1 }
        }

        private mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

        /// A byte as a person reads it in the message: a printable character quoted, anything
        /// else by its code.
        private func shown(_ byte: UInt8) -> String {
            (0x21..<0x7F).contains(byte) ? "'\(shownInline(byte))'" : "byte 0x\(Hex.string([byte]))"
        }

        private func shownInline(_ byte: UInt8) -> String {
            (0x21..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "\\x\(Hex.string([byte]))"
        }

        func locate(_ offset: Int, _ problem: String) -> JSONSyntaxFault {
            let lineStart = bytes[..<offset].lastIndex(of: 0x0A).map { $0 + 1 } ?? start
            let line = bytes[..<offset].count { $0 == 0x0A } + 1
            // Each character starts with a byte that is not a UTF-8 continuation byte.
            let column = bytes[lineStart..<offset].count { $0 & 0xC0 != 0x80 } + 1
            return JSONSyntaxFault(line: line, column: column, problem: problem)
        }
    }
}
