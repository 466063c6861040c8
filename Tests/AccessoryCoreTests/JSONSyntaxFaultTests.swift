import Foundation
import Testing

@testable import AccessoryCore

private func decoderAccepts(_ bytes: [UInt8]) -> Bool {
    (try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))) != nil
}

@Suite struct JSONSyntaxFaultTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var document: String
        var line: Int
        var column: Int
        var problem: String

        var testDescription: String { document.debugDescription }
    }

    @Test(
        "the first fault is named where it is",
        arguments: [
            Case(document: "", line: 1, column: 1, problem: "the document is empty"),
            Case(document: " \n\t", line: 2, column: 2, problem: "the document is empty"),
            Case(
                document: "{\n  \"id\": \"a\"\n  \"vendor\": \"b\"\n}", line: 3, column: 3,
                problem: "expected ',' or '}', found '\"'"),
            Case(
                document: "{\n  \"id\": \"a\",\n  vendor: 1\n}", line: 3, column: 3,
                problem: "expected a key in double quotes, found 'v'"),
            Case(document: "{\"a\" 1}", line: 1, column: 6, problem: "expected ':' after the key, found '1'"),
            Case(document: "{\"a\": \"x\ny\"}", line: 1, column: 9, problem: "a line break inside a string"),
            Case(document: "{\"a\": \"\t\"}", line: 1, column: 8, problem: "a tab inside a string"),
            Case(document: "[\"\u{01}\"]", line: 1, column: 3, problem: "the control character U+01 inside a string"),
            Case(document: #"["\q"]"#, line: 1, column: 3, problem: #"'\q' is not an escape JSON knows"#),
            Case(
                document: #"["\u12G4"]"#, line: 1, column: 3,
                problem: #"'\u' is not followed by four hexadecimal digits"#),
            Case(document: #"["ab"#, line: 1, column: 2, problem: "a string that never ends"),
            Case(
                document: "[1, 2", line: 1, column: 6, problem: "the document ends inside an array: ',' or ']' expected"
            ),
            Case(
                document: "{\"a\": [1]", line: 1, column: 10,
                problem: "the document ends inside an object: ',' or '}' expected"),
            Case(document: "{\"a\": ", line: 1, column: 7, problem: "the document ends where a value is expected"),
            Case(document: "[1 2]", line: 1, column: 4, problem: "expected ',' or ']', found '2'"),
            Case(document: "[01]", line: 1, column: 2, problem: "a number with a leading zero"),
            Case(document: "[-]", line: 1, column: 3, problem: "a '-' not followed by a digit"),
            Case(document: "[1.]", line: 1, column: 4, problem: "a '.' not followed by a digit"),
            Case(document: "[1e]", line: 1, column: 4, problem: "an exponent without digits"),
            Case(document: "[True]", line: 1, column: 2, problem: "expected a value, found 'T'"),
            Case(
                document: "[nul]", line: 1, column: 2,
                problem: "expected a value (true, false and null are written in lower case"),
            Case(document: "['a']", line: 1, column: 2, problem: "expected a value, found '''"),
            Case(
                document: "{} {}", line: 1, column: 4, problem: "text after the end of the document, starting with '{'"),
            Case(document: "[,]", line: 1, column: 2, problem: "expected a value, found ','"),
            Case(
                document: "{\"é\": \"ü\", x}", line: 1, column: 12,
                problem: "expected a key in double quotes, found 'x'"),
            Case(
                document: String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
                line: 1, column: 513, problem: "nested deeper than 512 levels"),
        ])
    func fault(_ fault: Case) throws {
        let bytes = Array(fault.document.utf8)
        let found = try #require(JSONSyntaxFault.first(in: bytes))
        #expect((found.line, found.column) == (fault.line, fault.column), "\(found)")
        #expect(found.problem.hasPrefix(fault.problem), "\(found)")
        #expect(!decoderAccepts(bytes), "the decoder refuses what the fault names")
    }

    @Test func bytesThatAreNotUTF8AreFoundInsideAString() throws {
        let found = try #require(JSONSyntaxFault.first(in: Array("[\"ok ".utf8) + [0xC3, 0x28] + Array("\"]".utf8)))
        #expect(found == JSONSyntaxFault(line: 1, column: 6, problem: "bytes that are not UTF-8 inside a string"))
    }

    @Test func aUTF8ByteOrderMarkIsSkippedAsTheDecoderSkipsIt() throws {
        let marked: [UInt8] = [0xEF, 0xBB, 0xBF]
        #expect(JSONSyntaxFault.first(in: marked + Array("{\"a\": 1}".utf8)) == nil)
        #expect(decoderAccepts(marked + Array("{\"a\": 1}".utf8)))
        let found = try #require(JSONSyntaxFault.first(in: marked + Array("{\"a\" 1}".utf8)))
        #expect((found.line, found.column) == (1, 6), "\(found)")
    }

    @Test(
        "UTF-16 and UTF-32, which the decoder reads too, keep its own message",
        arguments: [
            [0xFF, 0xFE, 0x7B, 0x00, 0x7D, 0x00] as [UInt8], [0x7B, 0x00, 0x7D, 0x00], [0x00, 0x00, 0x00, 0x7B],
        ])
    func otherEncodingsAreNotLocated(_ bytes: [UInt8]) {
        #expect(JSONSyntaxFault.first(in: bytes) == nil)
    }

    @Test(
        "what the decoder accepts has no fault",
        arguments: [
            "{}", "[]", " [ ] ", "0", "-0.5e+10", "\"\\u00e9\\n\"", "[true, false, null]",
            "{\"a\": [1, {\"b\": \"c\"}]}", "[1, 2,]", "{\"a\": 1,}",
            String(repeating: "[", count: 512) + String(repeating: "]", count: 512),
        ])
    func noFault(_ document: String) {
        #expect(JSONSyntaxFault.first(in: Array(document.utf8)) == nil)
        #expect(decoderAccepts(Array(document.utf8)), "the decoder accepts it too")
    }

    /// A document with every construct of the grammar, as a profile uses them and beyond.
    static let everyConstruct = #"""
        {"id": "org.example.é", "n": [0, -12.5e+3, 7E-2, 1.0],
         "s": "a\"b\\c\/\u00e9\n", "flags": [true, false, null],
         "nested": {"a": [], "b": {}, "c": [{"d": [1]}]}}
        """#

    /// Every one-byte deletion, and a few insertions at every offset, of that document: the
    /// locator finds a fault exactly when the decoder refuses the document.
    @Test func agreesWithTheDecoderOnEveryOneByteEdit() throws {
        let document = Array(Self.everyConstruct.utf8)
        try #require(decoderAccepts(document))
        var disagreements: [String] = []
        func check(_ edited: [UInt8], _ what: String) {
            let fault = JSONSyntaxFault.first(in: edited)
            if (fault == nil) != decoderAccepts(edited) {
                disagreements.append(
                    "\(what): decoder \(decoderAccepts(edited) ? "accepts" : "refuses"), fault \(fault.map(String.init(describing:)) ?? "none")"
                )
            }
        }
        for offset in document.indices {
            var deleted = document
            deleted.remove(at: offset)
            check(deleted, "byte \(offset) deleted")
            for inserted in Array(",\"{}[]:x\n\\0-".utf8) {
                var edited = document
                edited.insert(inserted, at: offset)
                check(edited, "'\(UnicodeScalar(inserted))' inserted at \(offset)")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
    }

    @Test(
        "a key given twice in one object is named by its field and both places",
        arguments: [
            (#"{"a": 1, "a": 2}"#, "a", "line 1, column 2 and line 1, column 10"),
            (
                "{\"items\": [{\"n\": 1}, {\"n\": 2,\n  \"n\": 3}]}", "items[1].n",
                "line 1, column 23 and line 2, column 3"
            ),
            (#"{"d": {"x": {"s": 1}, "s": {}, "s": []}}"#, "d.s", "line 1, column 23 and line 1, column 32"),
            // The same key however it is written: escaped, or in another Unicode normalization form.
            (#"{"ssid": "A", "\u0073sid": "B"}"#, "ssid", "line 1, column 2 and line 1, column 15"),
            ("{\"caf\u{E9}\": 1, \"cafe\u{301}\": 2}", "caf\u{E9}", "line 1, column 2 and line 1, column 13"),
        ])
    func duplicateKey(document: String, field: String, places: String) throws {
        let bytes = Array(document.utf8)
        #expect(decoderAccepts(bytes), "the decoder keeps one of the two values without a word")
        #expect(JSONSyntaxFault.first(in: bytes) == nil, "not a fault of the grammar")
        let found = try #require(JSONSyntaxFault.firstDuplicateKey(in: bytes))
        #expect(found.field == field)
        #expect(found.problem.hasPrefix("is given twice in one object (\(places)); JSON readers differ"), "\(found)")
        #expect(throws: FieldIssue(field: field, message: found.problem)) { _ = try JSONValue.parse(Data(bytes)) }
    }

    @Test(
        "the same key in different objects, or at different depths, is no duplicate",
        arguments: [
            #"{"a": {"a": 1}, "b": {"a": 2}}"#, #"[{"a": 1}, {"a": 2}]"#, #"{"a": 1, "A": 2, "a ": 3}"#,
        ])
    func distinctKeys(document: String) throws {
        #expect(JSONSyntaxFault.firstDuplicateKey(in: Array(document.utf8)) == nil)
        _ = try JSONValue.parse(Data(document.utf8))
    }

    @Test func aFaultOfTheGrammarAfterADuplicateKeyIsStillTheOneReported() throws {
        let document = Array(#"{"a": 1, "a": 2, "b" 3}"#.utf8)
        let found = try #require(JSONSyntaxFault.first(in: document))
        #expect(found.problem == "expected ':' after the key, found '3'")
        #expect(JSONSyntaxFault.firstDuplicateKey(in: document) == nil)
    }

    @Test func aProfileWithAFaultSaysWhereItIs() throws {
        let document = "{\n  \"schemaVersion\": 1,\n  \"id\": \"org.example.x\"\n  \"vendor\": \"Example\"\n}"
        #expect(
            throws: FieldIssue(
                field: "(document)", message: "is not valid JSON: line 4, column 3: expected ',' or '}', found '\"'")
        ) {
            _ = try JSONValue.parse(Data(document.utf8))
        }
    }
}
