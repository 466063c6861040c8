import FoundationEssentials

/// How `accessoryctl` ends: 0 success, 1 failure, 64 bad usage (`EX_USAGE`), 77 not authorized (`EX_NOPERM`).
public struct ExitCode: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let success = ExitCode(rawValue: 0)
    public static let failure = ExitCode(rawValue: 1)
    public static let usage = ExitCode(rawValue: 64)
    public static let notAuthorized = ExitCode(rawValue: 77)
}

/// An option a command takes: a flag (`--json`) or an option with a value (`--scan FILE`).
public struct OptionSpec: Sendable {
    public var name: String
    /// The placeholder of the value; `nil` for a flag.
    public var valueName: String?
    public var help: String
    public var isRequired = false
    public var isRepeatable = false
    /// For a numeric option, the numbers it takes; the parser refuses any other value.
    public var range: NumberRange?

    public static func flag(_ name: String, help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help)
    }

    /// An option whose value is a number in `range`, such as `--timeout SECONDS`.
    public static func number(_ name: String, _ valueName: String, _ range: NumberRange, help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help, range: range)
    }

    /// The help line, with the range of a numeric option.
    var helpText: String { range.map { "\(help) [\($0)]" } ?? help }

    public static func value(
        _ name: String, _ valueName: String, help: String, required: Bool = false, repeatable: Bool = false
    ) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help, isRequired: required, isRepeatable: repeatable)
    }

    var synopsis: String {
        let text = valueName.map { "--\(name) \($0)" } ?? "--\(name)"
        let repeated = isRepeatable ? "\(text)..." : text
        return isRequired ? repeated : "[\(repeated)]"
    }
}

/// Positional arguments: a name and how many.
public struct PositionalSpec: Sendable {
    public var name: String
    public var minimum: Int
    public var maximum: Int?
    public var help: String
    /// Whether the first argument, where given, is an accessory's id; the parser refuses one
    /// that is not a UUID, so a mistyped id needs no agent to be told so.
    public var leadsWithAccessoryID = false

    public init(name: String, minimum: Int, maximum: Int?, help: String, leadsWithAccessoryID: Bool = false) {
        self.name = name
        self.minimum = minimum
        self.maximum = maximum
        self.help = help
        self.leadsWithAccessoryID = leadsWithAccessoryID
    }

    var synopsis: String {
        let many = maximum.map { $0 > 1 } ?? true
        let text = many ? "\(name)..." : name
        return minimum == 0 ? "[\(text)]" : text
    }
}

/// One row of the command table.
public struct Command: Sendable {
    /// The words that name the command (`["profile", "validate"]`).
    public var path: [String]
    public var summary: String
    public var discussion: String
    public var options: [OptionSpec]
    public var positionals: PositionalSpec?
    public var examples: [String]
    /// A hand-written synopsis of the options, for commands with many; else generated.
    public var usage: String?
    public var run: @Sendable (ParsedArguments, Console) async -> ExitCode
    /// Whether the command serves until it is stopped (`picker-agent`): SIGINT and SIGTERM are
    /// its way to end, and it exits with its own status instead of 128 plus the signal's.
    public var servesUntilStopped = false

    public init(
        path: [String], summary: String, discussion: String, options: [OptionSpec], positionals: PositionalSpec? = nil,
        examples: [String], usage: String? = nil, run: @escaping @Sendable (ParsedArguments, Console) async -> ExitCode
    ) {
        self.path = path
        self.summary = summary
        self.discussion = discussion
        self.options = options
        self.positionals = positionals
        self.examples = examples
        self.usage = usage
        self.run = run
    }

    public var name: String { path.joined(separator: " ") }

    public var synopsis: String {
        let arguments = usage.map { [$0] } ?? options.map(\.synopsis) + [positionals?.synopsis].compactMap { $0 }
        return ([AccessoryCtl.name, name] + arguments).joined(separator: " ")
    }

    /// Splits `arguments` by this command's options; `--help` is handled by the caller.
    func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            guard argument.hasPrefix("--") else { throw UsageError("unknown option '\(argument)'") }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inlineValue = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
            guard let option = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '--\(name)'")
            }
            guard let valueName = option.valueName else {
                if inlineValue != nil { throw UsageError("'--\(name)' takes no value") }
                parsed.flags.insert(name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < arguments.count {
                value = arguments[index]
                index += 1
            } else {
                throw UsageError("'--\(name)' needs a value (\(valueName))")
            }
            if parsed.values[name] != nil && !option.isRepeatable {
                throw UsageError("'--\(name)' is given more than once")
            }
            if let range = option.range {
                guard let number = range.number(value) else {
                    throw UsageError("--\(name) '\(value)' is not \(range.expected)")
                }
                parsed.numbers[name] = number
            }
            parsed.values[name, default: []].append(value)
        }
        for option in options where option.isRequired && parsed.values[option.name] == nil {
            throw UsageError("'--\(option.name) \(option.valueName ?? "")' is required")
        }
        let count = parsed.positionals.count
        let positional = positionals ?? PositionalSpec(name: "", minimum: 0, maximum: 0, help: "")
        if count < positional.minimum { throw UsageError("missing \(positional.name)") }
        if let maximum = positional.maximum, count > maximum {
            throw UsageError("unexpected argument '\(parsed.positionals[maximum])'")
        }
        if positional.leadsWithAccessoryID, let id = parsed.positionals.first, UUID(uuidString: id) == nil {
            throw UsageError(
                "'\(id)' is not an accessory id: ids are UUIDs, as '\(AccessoryCtl.name) list' prints them")
        }
        return parsed
    }
}

/// The options and arguments a command was given.
public struct ParsedArguments: Sendable {
    public var flags: Set<String> = []
    public var values: [String: [String]] = [:]
    public var positionals: [String] = []
    /// The values of numeric options, each already within its option's range.
    public var numbers: [String: Double] = [:]

    public func flag(_ name: String) -> Bool { flags.contains(name) }
    public func value(_ name: String) -> String? { values[name]?.last }
    public func all(_ name: String) -> [String] { values[name] ?? [] }

    /// A whole-number option's value.
    public func integer(_ name: String) -> Int? { numbers[name].map { Int($0) } }

    /// A numeric option's value read as seconds, to the millisecond.
    public func seconds(_ name: String) -> Duration? { numbers[name].map { .milliseconds(Int(($0 * 1000).rounded())) } }
}

/// The numbers a numeric option takes. Every number on the command line goes through one of
/// these, so no command converts an unbounded number into a `Duration` or a C integer.
public struct NumberRange: Sendable, CustomStringConvertible {
    public var lowerBound: Double
    public var upperBound: Double
    /// Whether fractions such as `0.5` are taken.
    public var isFractional: Bool
    /// What the number counts: `seconds`, `days`.
    public var unit: String

    /// Whole numbers from `range.lowerBound` to `range.upperBound`.
    public init(_ range: ClosedRange<Int>, _ unit: String) {
        self.init(
            lowerBound: Double(range.lowerBound), upperBound: Double(range.upperBound), isFractional: false, unit: unit)
    }

    public init(lowerBound: Double, upperBound: Double, isFractional: Bool, unit: String) {
        self.lowerBound = lowerBound
        self.upperBound = upperBound
        self.isFractional = isFractional
        self.unit = unit
    }

    /// `text` as a number within the range, or `nil`.
    func number(_ text: String) -> Double? {
        let parsed = isFractional ? Double(text) : Int(text).map(Double.init)
        guard let parsed, parsed.isFinite, parsed >= lowerBound, parsed <= upperBound,
            text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") })
        else { return nil }
        return parsed
    }

    /// What a value must be, for usage errors: `a whole number of seconds from 1 to 3600`.
    var expected: String {
        let bounds = "from \(Self.format(lowerBound)) to \(Self.format(upperBound))"
        return "\(isFractional ? "a" : "a whole") number of \(unit) \(bounds)"
    }

    public var description: String { "\(Self.format(lowerBound))-\(Self.format(upperBound)) \(unit)" }

    private static func format(_ number: Double) -> String {
        number.rounded() == number ? String(Int(number)) : String(number)
    }
}

/// A command line that does not fit the command; exits 64.
public struct UsageError: Error, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
