import AccessoryCore
import Foundation

/// Where a command writes: standard output and standard error, or buffers in tests.
public struct Console: Sendable {
    public var writeOut: @Sendable (String) -> Void
    public var writeError: @Sendable (String) -> Void
    /// Whether standard output is a terminal (progress lines and colour only there).
    public var isTerminal: Bool

    public init(isTerminal: Bool, writeOut: @escaping @Sendable (String) -> Void, writeError: @escaping @Sendable (String) -> Void) {
        self.isTerminal = isTerminal
        self.writeOut = writeOut
        self.writeError = writeError
    }

    public static var standard: Console {
        Console(
            isTerminal: isatty(STDOUT_FILENO) == 1,
            writeOut: { FileHandle.standardOutput.write(Data($0.utf8)) },
            writeError: { FileHandle.standardError.write(Data($0.utf8)) })
    }

    public func print(_ line: String = "") { writeOut(line + "\n") }

    public func error(_ line: String) { writeError(line + "\n") }

    /// Writes `value` as pretty JSON with sorted keys.
    public func printJSON(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        do {
            print(String(decoding: try encoder.encode(value), as: UTF8.self))
        } catch {
            self.error("\(AccessoryCtl.name): error: cannot encode the output as JSON: \(error)")
        }
    }
}

/// Text safe to print on a terminal: control characters become `\xNN`.
func terminalSafe(_ text: String) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
        if scalar.properties.generalCategory == .control {
            for byte in String(scalar).utf8 { result += "\\x" + Hex.string([byte]) }
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}

/// Left-aligned columns separated by two spaces.
func table(_ rows: [[String]]) -> [String] {
    guard let columns = rows.map(\.count).max() else { return [] }
    let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
    return rows.map { row in
        row.enumerated().map { index, cell in
            index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
        }.joined(separator: "  ")
    }
}
