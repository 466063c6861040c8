import AccessoryCore
import FoundationEssentials
import Glibc

/// Where a command writes: standard output and standard error, or buffers in tests.
public struct Console: Sendable {
    public var writeOut: @Sendable (String) -> Void
    public var writeError: @Sendable (String) -> Void
    /// Whether standard output is a terminal (progress lines and colour only there).
    public var isTerminal: Bool

    public init(
        isTerminal: Bool, writeOut: @escaping @Sendable (String) -> Void,
        writeError: @escaping @Sendable (String) -> Void
    ) {
        self.isTerminal = isTerminal
        self.writeOut = writeOut
        self.writeError = writeError
    }

    public static var standard: Console {
        Console(
            isTerminal: isatty(STDOUT_FILENO) == 1,
            writeOut: { StandardStream.output.write($0) },
            writeError: { StandardStream.error.write($0) })
    }

    /// Writes one line to standard output; every value interpolated into it is made terminal-safe.
    public func print(_ line: TerminalText = "") { writeOut(line.text + "\n") }

    /// Writes one line to standard error; every value interpolated into it is made terminal-safe.
    public func error(_ line: TerminalText) { writeError(line.text + "\n") }

    /// Writes rows as left-aligned columns, each cell made terminal-safe.
    public func printTable(_ rows: [[String]]) {
        table(rows).forEach { writeOut($0 + "\n") }
    }

    /// Writes `value` as one line of JSON with sorted keys, escaped as `printJSON` does.
    public func printJSONLine(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            writeOut(jsonTerminalSafe(String(decoding: try encoder.encode(value), as: UTF8.self)) + "\n")
        } catch {
            self.error("\(AccessoryCtl.name): error: cannot encode the output as JSON: \(error)")
        }
    }

    /// Writes `value` as pretty JSON with sorted keys, with every control and format character
    /// inside its strings escaped as `\uXXXX` (the encoder leaves DEL, C1 and `Cf` raw).
    public func printJSON(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        do {
            writeOut(jsonTerminalSafe(String(decoding: try encoder.encode(value), as: UTF8.self)) + "\n")
        } catch {
            self.error("\(AccessoryCtl.name): error: cannot encode the output as JSON: \(error)")
        }
    }
}

/// A line for the terminal. Its literal parts are the program's own; everything interpolated
/// into it (names, SSIDs, URLs, error messages, paths) goes through `terminalSafe`, so a
/// string from a device or a file cannot reach the terminal raw through `Console`.
public struct TerminalText: ExpressibleByStringInterpolation, Sendable {
    public private(set) var text: String

    /// Text the program wrote itself, such as help generated from the command table.
    init(trusted text: String) { self.text = text }

    public init(stringLiteral value: String) { text = value }

    public init(stringInterpolation: StringInterpolation) { text = stringInterpolation.text }

    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity)
        }

        public mutating func appendLiteral(_ literal: String) { text += literal }

        public mutating func appendInterpolation(_ value: some Any) { text += terminalSafe(String(describing: value)) }

        public mutating func appendInterpolation(_ value: TerminalText) { text += value.text }
    }
}

/// JSON text with what `terminalSafe` escapes written as JSON escapes (`\u001b`, `\u202e`,
/// surrogate pairs above U+FFFF). Raw ones can only be inside strings (the encoder's own
/// layout is spaces and newlines, and it escapes C0 itself), so the document means the same.
func jsonTerminalSafe(_ json: String) -> String {
    var result = ""
    for scalar in json.unicodeScalars {
        guard scalar != "\n", scalar.isUnsafeOnTerminal else {
            result.unicodeScalars.append(scalar)
            continue
        }
        for unit in String(scalar).utf16 {
            let hex = String(unit, radix: 16)
            result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }
    }
    return result
}

/// Left-aligned columns separated by two spaces; each cell made terminal-safe first.
func table(_ rows: [[String]]) -> [String] {
    let rows = rows.map { $0.map(terminalSafe) }
    guard let columns = rows.map(\.count).max() else { return [] }
    let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
    return rows.map { row in
        row.enumerated().map { index, cell in
            index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
        }.joined(separator: "  ")
    }
}
