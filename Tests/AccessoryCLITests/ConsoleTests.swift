import AccessoryCore
import Foundation
import Testing

@testable import AccessoryCLI

@Suite struct ConsoleTests {
    @Test(arguments: [
        ("plain Café ☕", "plain Café ☕"),
        ("a\u{1B}[31mb", "a\\x1b[31mb"),
        ("tab\there\nline", "tab\\x09here\\x0aline"),
        ("del\u{7F}", "del\\x7f"),
        ("csi\u{9B}2J", "csi\\xc2\\x9b2J"),
        ("gnp\u{202E}.exe", "gnp\\xe2\\x80\\xae.exe"),
        ("isolate\u{2066}x\u{2069}", "isolate\\xe2\\x81\\xa6x\\xe2\\x81\\xa9"),
        ("zero\u{200B}width", "zero\\xe2\\x80\\x8bwidth"),
        ("line\u{2028}sep", "line\\xe2\\x80\\xa8sep"),
        ("tag\u{E0041}", "tag\\xf3\\xa0\\x81\\x81"),
    ])
    func terminalSafeEscapesControlsAndDisguises(text: String, expected: String) {
        #expect(terminalSafe(text) == expected)
        #expect(terminalSafe(terminalSafe(text)) == expected, "escaping twice changes nothing")
    }

    @Test func interpolatedValuesAreEscapedAndLiteralsAreNot() {
        let name = "Evil\u{1B}[2J"
        let line: TerminalText = "\u{1B}[1mbold\u{1B}[0m \(name) \(42)"
        #expect(line.text == "\u{1B}[1mbold\u{1B}[0m Evil\\x1b[2J 42")
        let nested: TerminalText = "<\(line)>"
        #expect(nested.text == "<\(line.text)>", "already-safe text is not escaped again")
    }

    @Test func tableCellsAreEscaped() {
        #expect(table([["A", "B"], ["x\u{1B}", "y\u{202E}"]]) == ["A      B", "x\\x1b  y\\xe2\\x80\\xae"])
    }

    @Test func jsonKeepsItsMeaningWithoutRawControls() throws {
        let value = ["name": "a\u{1B}b\u{7F}c\u{9B}d\u{202E}e\u{2028}f\u{E0041}g\n"]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let raw = String(decoding: try encoder.encode(value), as: UTF8.self)
        let safe = jsonTerminalSafe(raw)
        #expect(!safe.unicodeScalars.contains { $0 != "\n" && $0.isUnsafeOnTerminal }, "\(safe.debugDescription)")
        #expect(safe.contains("\\u007f") && safe.contains("\\u009b") && safe.contains("\\u202e"))
        #expect(safe.contains("\\udb40\\udc41"), "a surrogate pair above U+FFFF")
        let decoded = try JSONDecoder().decode([String: String].self, from: Data(safe.utf8))
        #expect(decoded == value)
    }
}
