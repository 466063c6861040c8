import DBusValues

/// The `a{sv}` options of a method call, read key by key: a key the method does not define is
/// refused, and a value of the wrong type names its field (`options.device`).
struct CallOptions {
    private let options: [String: DBusValue]
    /// What field names start with: `options`, or a dictionary argument's name.
    private let prefix: String

    /// Refuses any key outside `known`.
    init(_ options: [String: DBusValue], known: [String], prefix: String = "options") throws(CallFailure) {
        if let unknown = options.keys.sorted().first(where: { !known.contains($0) }) {
            let defined = known.isEmpty ? "none are defined" : "known: \(known.sorted().joined(separator: ", "))"
            throw .invalidArguments(
                "\(prefix).\(unknown)", "is not a known \(prefix == "options" ? "option" : "key") (\(defined))")
        }
        self.options = options
        self.prefix = prefix
    }

    /// The value under `key` as it came, if given.
    subscript(key: String) -> DBusValue? { options[key] }

    /// The integer under `key`, of any D-Bus integer type.
    func integer(_ key: String, expected: String) throws(CallFailure) -> Int? {
        try read(key, expected) { $0.int }
    }

    /// The strings under `key` (`as`).
    func strings(_ key: String) throws(CallFailure) -> [String]? {
        try read(key, "an array of strings") { value in
            guard case .array(let elements, _) = value else { return nil }
            let strings = elements.compactMap(\.string)
            return strings.count == elements.count ? strings : nil
        }
    }

    /// The string under `key`, if given; `valid` may refuse it. `expected` says what it must be.
    func string(_ key: String, expected: String, valid: (String) -> Bool = { _ in true }) throws(CallFailure) -> String?
    {
        try read(key, expected) { $0.string.flatMap { valid($0) ? $0 : nil } }
    }

    func uint32(_ key: String, expected: String) throws(CallFailure) -> UInt32? {
        try read(key, expected) { $0.uint32 }
    }

    func bool(_ key: String) throws(CallFailure) -> Bool? {
        try read(key, "a boolean") { $0.bool }
    }

    private func read<Value>(_ key: String, _ expected: String, _ convert: (DBusValue) -> Value?) throws(CallFailure)
        -> Value?
    {
        guard let value = options[key] else { return nil }
        guard let converted = convert(value) else {
            throw .invalidArguments("\(prefix).\(key)", "expected \(expected)")
        }
        return converted
    }
}
