import GLibRuntime

/// The `a{sv}` options of a method call, read key by key: a key the method does not define is
/// refused, and a value of the wrong type names its field (`options.device`).
struct CallOptions {
    private let options: [String: DBusValue]

    /// Refuses any key outside `known`.
    init(_ options: [String: DBusValue], known: [String]) throws(CallFailure) {
        if let unknown = options.keys.sorted().first(where: { !known.contains($0) }) {
            let defined = known.isEmpty ? "none are defined" : "known: \(known.sorted().joined(separator: ", "))"
            throw .invalidArguments("options.\(unknown)", "is not a known option (\(defined))")
        }
        self.options = options
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
        guard let converted = convert(value) else { throw .invalidArguments("options.\(key)", "expected \(expected)") }
        return converted
    }
}
