import FoundationEssentials
import Glibc

/// The agent's unattended picker for kiosks and installer stations, read from
/// `/etc/accessory-setup/kiosk.json` (format in `docs/kiosk-policy.md`): for the profiles and
/// users a policy names, the agent picks by a rule instead of asking a person.
public struct KioskPolicy: Hashable, Sendable {
    public static let schemaVersion = 1
    public static let defaultPath = "/etc/accessory-setup/kiosk.json"

    /// Who a policy applies to: a uid, or a user name the agent resolves for the caller.
    public enum User: Hashable, Sendable {
        case uid(UInt32)
        case name(String)
    }

    /// How the kiosk chooses among the picker's entries.
    public enum Rule: Hashable, Sendable {
        /// The entry heard first, as soon as there is one.
        case firstMatch
        /// The entry with the strongest signal, `settle` after the first one was heard, so that
        /// both radios have reported.
        case strongestSignal(settle: Duration)
        /// The first entry whose SSID matches a shell glob (`fnmatch(3)` without flags: `*` any
        /// run of bytes, `?` one byte, `[…]` a set), as soon as there is one.
        case ssidPattern(String)
    }

    public struct Policy: Hashable, Sendable {
        public var profiles: [String]
        public var users: [User]
        public var rule: Rule
        /// A root-only file holding the passphrase for accessories whose profile asks for one.
        public var passphraseFile: String?
        /// Whether the home network's passphrase may go to these accessories without
        /// encryption (`unencryptedProvisioning`, by default as their profile says): `false`
        /// refuses Improv and a vendor's plain HTTP over an open hotspot before anything is sent.
        public var allowsUnencryptedProvisioning: Bool

        public init(
            profiles: [String], users: [User], rule: Rule, passphraseFile: String? = nil,
            allowsUnencryptedProvisioning: Bool = true
        ) {
            self.profiles = profiles
            self.users = users
            self.rule = rule
            self.passphraseFile = passphraseFile
            self.allowsUnencryptedProvisioning = allowsUnencryptedProvisioning
        }

        /// The entry the rule chooses now, if any. Entries are taken in the order they were
        /// first heard (by id); among equal signals the earlier one wins.
        public func choose(from entries: [PickerEntry]) -> PickerEntry? {
            let ordered = entries.sorted { $0.id < $1.id }
            switch rule {
            case .firstMatch:
                return ordered.first
            case .strongestSignal:
                // `max(by:)` keeps the first of equal elements.
                return ordered.max { ($0.signalStrength ?? -1) < ($1.signalStrength ?? -1) }
            case .ssidPattern(let pattern):
                return ordered.first { entry in entry.wifi?.ssid.map { Self.ssid($0, matches: pattern) } == true }
            }
        }

        /// The answer the kiosk gives for `entry`.
        func choice(of entry: PickerEntry) -> PickerChoice {
            PickerChoice(entryID: entry.id, passphrase: passphraseFile.map { .file(path: $0) })
        }

        static func ssid(_ ssid: SSID, matches pattern: String) -> Bool {
            guard !ssid.bytes.contains(0), let text = ssid.utf8String else { return false }
            return fnmatch(pattern, text, 0) == 0
        }
    }

    public var policies: [Policy]

    public init(policies: [Policy]) {
        self.policies = policies
    }

    /// The first policy, in file order, naming both the profile and the user.
    public func policy(forProfile profileID: String, uid: UInt32, userName: String?) -> Policy? {
        policies.first { policy in
            policy.profiles.contains(profileID)
                && policy.users.contains { user in
                    switch user {
                    case .uid(let value): value == uid
                    case .name(let name): name == userName
                    }
                }
        }
    }
}

// MARK: - Reading

extension KioskPolicy {
    /// `strongestSignal`'s default wait and the range a file may set.
    public static let defaultSettle = Duration.seconds(5)
    static let settleSecondsRange = 0...300

    /// Reads and checks the policy file, reporting every fault at once.
    public static func load(contentsOf url: URL) throws(KioskPolicyError) -> KioskPolicy {
        let data: Data
        do {
            data = try BoundedInput.read(path: url.path, limit: BoundedInput.documentLimit)
        } catch {
            throw .unreadable(path: url.path, reason: error.reason)
        }
        return try parse(data, path: url.path)
    }

    /// Reads and checks a policy; `path` names it in errors.
    public static func parse(_ data: Data, path: String) throws(KioskPolicyError) -> KioskPolicy {
        let document: JSONValue
        do {
            document = try JSONValue.parse(data)
        } catch {
            throw .invalid(path: path, issues: [error])
        }
        let diagnostics = FieldDiagnostics()
        guard let object = JSONObjectReader(document, at: "", diagnostics: diagnostics) else {
            throw .invalid(path: path, issues: diagnostics.issues)
        }
        object.rejectUnknownKeys(["schemaVersion", "policies"])
        if let version = object.integer("schemaVersion", in: 1...Int.max, required: true), version != schemaVersion {
            object.report("schemaVersion", "is \(version); this version reads schema \(schemaVersion)")
        }
        let policies = object.array("policies", required: true)?.compactMap { value, field in
            JSONObjectReader(value, at: field, diagnostics: diagnostics).flatMap(Policy.init(reading:))
        }
        guard diagnostics.issues.isEmpty, let policies else { throw .invalid(path: path, issues: diagnostics.issues) }
        return KioskPolicy(policies: policies)
    }

    /// Reads the policy as the agent does: a file only root can have written
    /// (`RootOwnedFile`), refused naming the path otherwise.
    public static func loadRootOwned(path: String) throws(KioskPolicyError) -> KioskPolicy {
        let data: Data
        do {
            data = try RootOwnedFile.read(path: path, limit: BoundedInput.documentLimit, access: .readableByOthers)
        } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
        return try parse(data, path: path)
    }

    /// Reads a passphrase file a policy names: a regular file of root's that no one else may
    /// read or write, in directories only root can change (`RootOwnedFile`), holding the
    /// passphrase and at most one final newline.
    public static func readPassphrase(path: String) throws(KioskPolicyError) -> Secret {
        let data: Data
        do {
            data = try RootOwnedFile.read(path: path, limit: BoundedInput.passphraseLimit, access: .rootOnly)
        } catch {
            throw .unsafePassphraseFile(path: path, reason: error.reason)
        }
        guard var text = String(data: data, encoding: .utf8) else {
            throw .unsafePassphraseFile(path: path, reason: "is not UTF-8 text")
        }
        if text.hasSuffix("\n") { text.removeLast() }
        guard !text.isEmpty else { throw .unsafePassphraseFile(path: path, reason: "is empty") }
        return Secret(text)
    }
}

extension KioskPolicy.Policy {
    private enum RuleName: String { case firstMatch, strongestSignal, ssidPattern }

    static let keys = [
        "profiles", "users", "choose", "settleSeconds", "ssidPattern", "passphraseFile", "unencryptedProvisioning",
    ]

    init?(reading object: JSONObjectReader) {
        let before = object.diagnostics.issues.count
        if object.has("passphrase") {
            object.report(
                "passphrase",
                "secrets are never written in the policy; put it in a root-only file and name it in passphraseFile")
        }
        object.rejectUnknownKeys(Self.keys + (object.has("passphrase") ? ["passphrase"] : []))
        let profiles = Self.profiles(object)
        let users = Self.users(object)
        let names: KeyValuePairs<String, RuleName> = [
            "firstMatch": .firstMatch, "strongestSignal": .strongestSignal, "ssidPattern": .ssidPattern,
        ]
        let ruleName = object.choice("choose", from: names, required: true)
        let settle = object.integer("settleSeconds", in: KioskPolicy.settleSecondsRange)
        let pattern = object.string("ssidPattern")
        if settle != nil && ruleName != nil && ruleName != .strongestSignal {
            object.report("settleSeconds", "applies only to \"choose\": \"strongestSignal\"")
        }
        if pattern != nil && ruleName != nil && ruleName != .ssidPattern {
            object.report("ssidPattern", "applies only to \"choose\": \"ssidPattern\"")
        }
        if ruleName == .ssidPattern && !object.has("ssidPattern") {
            object.report("ssidPattern", "is required by \"choose\": \"ssidPattern\" (a glob such as \"WLED-*\")")
        }
        let passphraseFile = object.string("passphraseFile")
        if let passphraseFile, !Self.isPlainAbsolutePath(passphraseFile) {
            object.report(
                "passphraseFile", "'\(passphraseFile)' is not an absolute path without '.' or '..' components")
        }
        let unencrypted = object.bool("unencryptedProvisioning") ?? true
        guard object.diagnostics.issues.count == before, let profiles, let users, let ruleName else { return nil }
        let rule: KioskPolicy.Rule =
            switch ruleName {
            case .firstMatch: .firstMatch
            case .strongestSignal: .strongestSignal(settle: settle.map { .seconds($0) } ?? KioskPolicy.defaultSettle)
            case .ssidPattern: .ssidPattern(pattern ?? "")
            }
        self.init(
            profiles: profiles, users: users, rule: rule, passphraseFile: passphraseFile,
            allowsUnencryptedProvisioning: unencrypted)
    }

    private static func profiles(_ object: JSONObjectReader) -> [String]? {
        guard let elements = object.array("profiles", required: true, allowEmpty: false) else { return nil }
        var profiles: [String] = []
        for (value, field) in elements {
            guard case .string(let id) = value, AccessoryProfile.isReverseDNS(id) else {
                object.diagnostics.report(field, "expected a profile id (a reverse-DNS name such as ge.wled.softap)")
                continue
            }
            profiles.append(id)
        }
        return profiles.count == elements.count ? profiles : nil
    }

    private static func users(_ object: JSONObjectReader) -> [KioskPolicy.User]? {
        guard let elements = object.array("users", required: true, allowEmpty: false) else { return nil }
        var users: [KioskPolicy.User] = []
        for (value, field) in elements {
            switch value {
            case .number:
                let uids = 0...Int(UInt32.max - 1)
                if let uid = JSONObjectReader.integer(value, in: uids, field: field, diagnostics: object.diagnostics) {
                    users.append(.uid(UInt32(uid)))
                }
            case .string(let name) where isUserName(name):
                users.append(.name(name))
            default:
                object.diagnostics.report(field, "expected a user name or a uid")
            }
        }
        return users.count == elements.count ? users : nil
    }

    /// A name as `useradd` accepts it by default: a letter or `_`, then letters, digits, `_`, `-`,
    /// at most 32 bytes, optionally ending in `$`.
    static func isUserName(_ name: String) -> Bool {
        let scalars = Array(name.unicodeScalars)
        guard let first = scalars.first, name.utf8.count <= 32, first.isASCII,
            first.properties.isAlphabetic || first == "_"
        else { return false }
        return scalars.dropFirst().enumerated().allSatisfy { offset, scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
                    || scalar == "-" || (scalar == "$" && offset == scalars.count - 2))
        }
    }

    static func isPlainAbsolutePath(_ path: String) -> Bool {
        path.hasPrefix("/") && !path.split(separator: "/").contains { $0 == "." || $0 == ".." }
    }
}

/// Why the kiosk policy, or a passphrase file it names, was refused.
public enum KioskPolicyError: Error, Hashable, Sendable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    /// Every fault found, each naming its field.
    case invalid(path: String, issues: [FieldIssue])
    case unsafePassphraseFile(path: String, reason: String)

    /// One line per fault: `FILE: field: message`.
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "\(path): \(reason)"
        case .invalid(let path, let issues): issues.map { "\(path): \($0)" }.joined(separator: "\n")
        case .unsafePassphraseFile(let path, let reason): "the kiosk passphrase file \(path) \(reason)"
        }
    }
}
