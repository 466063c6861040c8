import FoundationEssentials

/// One fault in an input file, located by a field path such as `items[2].descriptor.ssid`.
public struct FieldIssue: Hashable, Sendable, Codable, CustomStringConvertible {
    public var field: String
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { "\(field): \(message)" }
}

/// A parsed JSON document that keeps every value, so a reader can report all faults at once.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Parses a whole document; the error says where the syntax breaks and how, or which key
    /// is given twice.
    public static func parse(_ data: Data) throws(FieldIssue) -> JSONValue {
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            // The decoder gives no position on Linux, and a string it refuses only while decoding
            // (a raw line break, a bad escape) surfaces as a type mismatch.
            let detail = JSONSyntaxFault.first(in: data).map(String.init(describing:)) ?? Self.reason(error)
            throw FieldIssue(field: "(document)", message: "is not valid JSON: \(detail)")
        }
        if let duplicate = JSONSyntaxFault.firstDuplicateKey(in: data) {
            throw FieldIssue(field: duplicate.field ?? "(document)", message: duplicate.problem)
        }
        return value
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): context.debugDescription
        default: "\(error)"
        }
    }
}

extension JSONValue: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .number(let number):
            if let whole = Int64(exactly: number) { try container.encode(whole) } else { try container.encode(number) }
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .object(let members): try container.encode(members)
        }
    }
}

extension FieldIssue: Error {}

/// Collects the faults found while reading a document.
public final class FieldDiagnostics {
    public private(set) var issues: [FieldIssue] = []

    public init() {}

    public func report(_ field: String, _ message: String) {
        issues.append(FieldIssue(field: field, message: message))
    }
}

/// Reads the members of one JSON object, recording a fault for each member that is missing,
/// of the wrong type or invalid, and for each member the schema does not know.
///
/// Every accessor returns `nil` after recording its fault, so a reader can go on and find
/// the next one.
public struct JSONObjectReader {
    public let path: String
    public let diagnostics: FieldDiagnostics
    private let members: [String: JSONValue]

    /// Reads `value` as an object at `path`; records a fault and returns `nil` for anything else.
    public init?(_ value: JSONValue, at path: String, diagnostics: FieldDiagnostics) {
        guard case .object(let members) = value else {
            diagnostics.report(path.isEmpty ? "(document)" : path, "expected an object, found \(value.kindName)")
            return nil
        }
        self.path = path
        self.members = members
        self.diagnostics = diagnostics
    }

    public func field(_ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    /// The member names, sorted.
    public var keys: [String] { members.keys.sorted() }

    public func has(_ key: String) -> Bool {
        if case .some(.null) = members[key] { return false }
        return members[key] != nil
    }

    /// Records each member that is not one of `known`.
    public func rejectUnknownKeys(_ known: [String]) {
        for key in members.keys.sorted() where !known.contains(key) {
            diagnostics.report(field(key), "is not a known key (known: \(known.joined(separator: ", ")))")
        }
    }

    public func report(_ key: String, _ message: String) {
        diagnostics.report(field(key), message)
    }

    public func value(_ key: String, required: Bool = false) -> JSONValue? {
        guard let value = members[key], value != .null else {
            if required { report(key, "is required") }
            return nil
        }
        return value
    }

    public func string(_ key: String, required: Bool = false, allowEmpty: Bool = false) -> String? {
        guard let value = value(key, required: required) else { return nil }
        guard case .string(let text) = value else {
            report(key, "expected a string, found \(value.kindName)")
            return nil
        }
        if !allowEmpty && text.isEmpty {
            report(key, "must not be empty")
            return nil
        }
        return text
    }

    public func bool(_ key: String) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else {
            report(key, "expected true or false, found \(value.kindName)")
            return nil
        }
        return flag
    }

    public func integer(_ key: String, in range: ClosedRange<Int>, required: Bool = false) -> Int? {
        guard let value = value(key, required: required) else { return nil }
        return Self.integer(value, in: range, field: field(key), diagnostics: diagnostics)
    }

    static func integer(_ value: JSONValue, in range: ClosedRange<Int>, field: String, diagnostics: FieldDiagnostics)
        -> Int?
    {
        guard case .number(let number) = value, number.rounded() == number, let integer = Int(exactly: number) else {
            diagnostics.report(field, "expected a whole number, found \(value.kindName)")
            return nil
        }
        guard range.contains(integer) else {
            diagnostics.report(field, "is \(integer); it must be from \(range.lowerBound) to \(range.upperBound)")
            return nil
        }
        return integer
    }

    public func object(_ key: String, required: Bool = false) -> JSONObjectReader? {
        guard let value = value(key, required: required) else { return nil }
        return JSONObjectReader(value, at: field(key), diagnostics: diagnostics)
    }

    /// The elements of an array member with their field paths (`key[0]`, `key[1]`, …).
    public func array(_ key: String, required: Bool = false, allowEmpty: Bool = true) -> [(
        value: JSONValue, field: String
    )]? {
        guard let value = value(key, required: required) else { return nil }
        guard case .array(let elements) = value else {
            report(key, "expected an array, found \(value.kindName)")
            return nil
        }
        if !allowEmpty && elements.isEmpty {
            report(key, "must not be empty")
            return nil
        }
        return elements.enumerated().map { (value: $0.element, field: "\(field(key))[\($0.offset)]") }
    }

    /// A string member turned into a value by `parse`, whose error text becomes the fault.
    public func parsed<T, E: Error & CustomStringConvertible>(
        _ key: String, required: Bool = false, _ parse: (String) throws(E) -> T
    ) -> T? {
        guard let text = string(key, required: required, allowEmpty: true) else { return nil }
        do {
            return try parse(text)
        } catch {
            report(key, error.description)
            return nil
        }
    }

    /// An array of strings, each turned into a value by `parse`; each element that is not a
    /// string, or that `parse` refuses, is a fault of its own (`"expected <what>, found …"`).
    public func parsedElements<T, E: Error & CustomStringConvertible>(
        _ key: String, expected what: String, _ parse: (String) throws(E) -> T
    ) -> [T]? {
        guard let elements = array(key) else { return nil }
        var result: [T] = []
        for (value, field) in elements {
            guard case .string(let text) = value else {
                diagnostics.report(field, "expected \(what), found \(value.kindName)")
                continue
            }
            do { result.append(try parse(text)) } catch { diagnostics.report(field, error.description) }
        }
        return result
    }

    /// An array of strings, each drawn from `choices`, without repeats.
    public func choices<T>(
        _ key: String, from choices: KeyValuePairs<String, T>, required: Bool = false, allowEmpty: Bool = true
    ) -> [T]? {
        guard let elements = array(key, required: required, allowEmpty: allowEmpty) else { return nil }
        var result: [T] = []
        var seen: Set<String> = []
        var failed = false
        for (value, field) in elements {
            guard case .string(let name) = value, let choice = choices.first(where: { $0.key == name }) else {
                diagnostics.report(field, "expected one of \(choices.map { "\"\($0.key)\"" }.joined(separator: ", "))")
                failed = true
                continue
            }
            if !seen.insert(name).inserted {
                diagnostics.report(field, "\"\(name)\" is listed twice")
                failed = true
            }
            result.append(choice.value)
        }
        return failed ? nil : result
    }

    /// A string member that must be one of `choices`.
    public func choice<T>(_ key: String, from choices: KeyValuePairs<String, T>, required: Bool = false) -> T? {
        guard let name = string(key, required: required) else { return nil }
        guard let choice = choices.first(where: { $0.key == name }) else {
            report(key, "\"\(name)\" is not one of \(choices.map { "\"\($0.key)\"" }.joined(separator: ", "))")
            return nil
        }
        return choice.value
    }
}
