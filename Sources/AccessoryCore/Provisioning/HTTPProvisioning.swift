import FoundationEssentials

/// A vendor's own HTTP setup API, as a profile declares it (`provisioning` with `"protocol":
/// "http"`): the requests that give the accessory the home network, one after the other, on
/// its setup hotspot; how each answer says success or names a failure; and how the device's
/// joining is confirmed afterwards. The format is in `profiles/README.md` ("Adding a vendor").
public struct HTTPProvisioning: Hashable, Sendable {
    /// `HOST:PORT` of the device's server on its hotspot.
    public var address: String
    public var steps: [Step]
    /// Whether the device restarts, or leaves its hotspot, once it has the network: an
    /// answer that stops after the network's step is then expected, not a failure.
    public var reboots: Bool
    public var confirm: Confirmation?

    public init(address: String, steps: [Step], reboots: Bool, confirm: Confirmation?) {
        self.address = address
        self.steps = steps
        self.reboots = reboots
        self.confirm = confirm
    }

    /// The step whose request carries the passphrase.
    public var networkStep: Int? { steps.firstIndex { $0.request.mentions(.passphrase) } }

    /// One request and how its answer is read.
    public struct Step: Hashable, Sendable {
        /// Names the step in progress signals and errors (`deviceInfo`, `setNetwork`).
        public var name: String
        public var request: Request
        /// Every condition must hold for the answer to be success; none: any 2xx status.
        public var success: [Condition]
        /// Checked before `success`: the first that matches is the device's verdict.
        public var failures: [Failure]
        /// Values taken from the answer (a JSON pointer each), usable as placeholders in the
        /// later steps' requests (`{mac}`) and reported (`mac`, `ipv4Address`).
        public var captures: [String: String]

        public init(
            name: String, request: Request, success: [Condition] = [], failures: [Failure] = [],
            captures: [String: String] = [:]
        ) {
            self.name = name
            self.request = request
            self.success = success
            self.failures = failures
            self.captures = captures
        }
    }

    /// Asked again and again after the network's step until the device says it joined, names
    /// a failure, or `within` passes.
    public struct Confirmation: Hashable, Sendable {
        public var request: Request
        /// All must hold: the device is on the home network.
        public var connected: [Condition]
        public var failures: [Failure]
        /// A JSON pointer to the address the device has there.
        public var address: String?
        /// The text the address follows in an answer that is not JSON (an HTML page's link).
        public var addressAfter: String?
        public var within: Duration

        public init(
            request: Request, connected: [Condition], failures: [Failure] = [], address: String? = nil,
            addressAfter: String? = nil, within: Duration
        ) {
            self.request = request
            self.connected = connected
            self.failures = failures
            self.address = address
            self.addressAfter = addressAfter
            self.within = within
        }
    }

    /// A request, its strings templates: `{ssid}`, `{passphrase}` and earlier captures.
    public struct Request: Hashable, Sendable {
        public enum Method: String, Hashable, Sendable, CaseIterable { case GET, POST }

        public enum Body: Hashable, Sendable {
            case empty
            /// `application/x-www-form-urlencoded`, in the order given.
            case form([(name: String, value: String)])
            /// `application/json`.
            case json(JSONValue)

            public static func == (lhs: Body, rhs: Body) -> Bool {
                switch (lhs, rhs) {
                case (.empty, .empty): true
                case (.form(let left), .form(let right)):
                    left.map(\.name) == right.map(\.name) && left.map(\.value) == right.map(\.value)
                case (.json(let left), .json(let right)): left == right
                default: false
                }
            }

            public func hash(into hasher: inout Hasher) {
                switch self {
                case .empty: hasher.combine(0)
                case .form(let fields):
                    for field in fields {
                        hasher.combine(field.name)
                        hasher.combine(field.value)
                    }
                case .json(let value): hasher.combine(value)
                }
            }
        }

        public var method: Method
        /// Starts with `/`; fixed text.
        public var path: String
        /// Added to the path as `?name=value&…`, each value a template, percent-encoded.
        public var query: [(name: String, value: String)]
        public var body: Body

        public init(method: Method, path: String, query: [(name: String, value: String)] = [], body: Body = .empty) {
            self.method = method
            self.path = path
            self.query = query
            self.body = body
        }

        public static func == (lhs: Request, rhs: Request) -> Bool {
            lhs.method == rhs.method && lhs.path == rhs.path && lhs.query.map(\.name) == rhs.query.map(\.name)
                && lhs.query.map(\.value) == rhs.query.map(\.value) && lhs.body == rhs.body
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(method)
            hasher.combine(path)
            for field in query {
                hasher.combine(field.name)
                hasher.combine(field.value)
            }
            hasher.combine(body)
        }

        /// Every template string of the request.
        var templates: [String] {
            var all = query.map(\.value)
            switch body {
            case .empty: break
            case .form(let fields): all += fields.map(\.value)
            case .json(let value): all += value.strings
            }
            return all
        }

        func mentions(_ placeholder: Placeholder) -> Bool {
            templates.contains { $0.contains("{\(placeholder.name)}") }
        }
    }

    /// What a template may name besides captures.
    enum Placeholder: String, CaseIterable {
        case ssid, passphrase
        var name: String { rawValue }
    }

    /// A test of an answer.
    public enum Condition: Hashable, Sendable {
        /// The status is one of these.
        case status([Int])
        /// The JSON answer's value at the pointer equals this.
        case equals(pointer: String, JSONValue)
        /// The JSON answer has (or has not) a value at the pointer.
        case exists(pointer: String, Bool)
        /// The body contains this text.
        case bodyContains(String)
    }

    /// A failure the device can name, and what it means.
    public struct Failure: Hashable, Sendable {
        public enum Kind: String, Hashable, Sendable, CaseIterable {
            case wrongPassphrase, networkNotFound, authenticationRequired, refused
        }

        public var when: [Condition]
        public var kind: Kind
        /// A JSON pointer to the device's own words, shown sanitized and cut short.
        public var detail: String?
        /// What the failure means, in the profile's words, where the answer has none to point at.
        public var message: String?

        public init(when: [Condition], kind: Kind, detail: String? = nil, message: String? = nil) {
            self.when = when
            self.kind = kind
            self.detail = detail
            self.message = message
        }
    }
}

/// One answer of the device: its status and body.
public struct HTTPAnswer: Sendable {
    public var status: Int
    public var body: [UInt8]

    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }

    /// The body as JSON, if it is.
    public var json: JSONValue? { try? JSONValue.parse(Data(body)) }
}

/// A request with its placeholders filled, ready to send.
public struct RenderedHTTPRequest: Sendable {
    public var method: String
    /// The path and query, percent-encoded.
    public var target: String
    public var contentType: String?
    public var body: [UInt8]
}

extension HTTPProvisioning.Request {
    /// The request with `values` in its templates (`ssid`, `passphrase`, captures), each
    /// encoded as its place needs: percent-encoded bytes in a query or form, a JSON string in
    /// JSON (where it must be UTF-8 text).
    public func render(_ values: [String: [UInt8]]) throws(ProvisioningError) -> RenderedHTTPRequest {
        var target = path
        if !query.isEmpty {
            let encoded = try query.map { field throws(ProvisioningError) in
                Self.formEncoded(Array(field.name.utf8)) + "=" + Self.formEncoded(try Self.fill(field.value, values))
            }
            target += (path.contains("?") ? "&" : "?") + encoded.joined(separator: "&")
        }
        switch body {
        case .empty:
            return RenderedHTTPRequest(method: method.rawValue, target: target, contentType: nil, body: [])
        case .form(let fields):
            let encoded = try fields.map { field throws(ProvisioningError) in
                Self.formEncoded(Array(field.name.utf8)) + "=" + Self.formEncoded(try Self.fill(field.value, values))
            }
            return RenderedHTTPRequest(
                method: method.rawValue, target: target, contentType: "application/x-www-form-urlencoded",
                body: Array(encoded.joined(separator: "&").utf8))
        case .json(let template):
            let filled = try Self.fill(template, values)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            guard let data = try? encoder.encode(filled) else {
                throw .malformedMessage("request body", "it cannot be written as JSON")
            }
            return RenderedHTTPRequest(
                method: method.rawValue, target: target, contentType: "application/json", body: Array(data))
        }
    }

    /// `template` with each `{name}` replaced by its value's bytes.
    static func fill(_ template: String, _ values: [String: [UInt8]]) throws(ProvisioningError) -> [UInt8] {
        var result: [UInt8] = []
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            result += Array(rest[..<open].utf8)
            guard let close = rest[open...].firstIndex(of: "}") else {
                result += Array(rest[open...].utf8)
                return result
            }
            let name = String(rest[rest.index(after: open)..<close])
            guard let value = values[name] else {
                throw .malformedMessage("request", "the device's answers gave no value for {\(name)}")
            }
            result += value
            rest = rest[rest.index(after: close)...]
        }
        return result + Array(rest.utf8)
    }

    private static func fill(_ template: JSONValue, _ values: [String: [UInt8]]) throws(ProvisioningError)
        -> JSONValue
    {
        switch template {
        case .string(let text):
            let bytes = try fill(text, values)
            guard let filled = String(validating: bytes, as: UTF8.self) else {
                throw .invalidCredentials(
                    field: "ssid", "is not UTF-8 text, and this device's setup API takes it as JSON text")
            }
            return .string(filled)
        case .array(let elements):
            var filled: [JSONValue] = []
            for element in elements { filled.append(try fill(element, values)) }
            return .array(filled)
        case .object(let members):
            var filled: [String: JSONValue] = [:]
            for (key, value) in members { filled[key] = try fill(value, values) }
            return .object(filled)
        default:
            return template
        }
    }

    /// `application/x-www-form-urlencoded` as browsers write it: unreserved bytes as they
    /// are, a space as `+`, every other byte `%XX`.
    static func formEncoded(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "*"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                text += "+"
            default:
                text += "%" + Hex.string([byte]).uppercased()
            }
        }
        return text
    }
}

extension HTTPProvisioning.Condition {
    /// Whether `answer` meets the condition; a pointer into an answer that is not JSON does not.
    public func holds(for answer: HTTPAnswer, json: JSONValue?) -> Bool {
        switch self {
        case .status(let codes): return codes.contains(answer.status)
        case .equals(let pointer, let expected): return json?.at(pointer: pointer) == expected
        case .exists(let pointer, let present): return json.map { ($0.at(pointer: pointer) != nil) == present } ?? false
        case .bodyContains(let text): return answer.body.firstRange(of: Array(text.utf8)) != nil
        }
    }
}

extension HTTPProvisioning.Failure {
    /// The device's verdict as an error, for `step`; `credentials` are what it was given. The
    /// device's own words never carry the passphrase on: a device echoing it back (as a field
    /// it refuses) would otherwise put it on a screen and in the journal.
    public func error(step: String, credentials: WiFiCredentials, json: JSONValue?) -> ProvisioningError {
        switch kind {
        case .wrongPassphrase: return .connectionFailed(ssid: credentials.ssid, .authError)
        case .networkNotFound: return .connectionFailed(ssid: credentials.ssid, .networkNotFound)
        case .authenticationRequired: return .deviceAuthenticationRequired(step: step)
        case .refused:
            let passphrase = credentials.passphrase.reveal()
            let words = detail.flatMap { json?.at(pointer: $0) }.map { said in
                // Taken out before the words are cut short, so that no part of it is left.
                let text = said.scalarText ?? said.kindName
                return DisplayText.sanitized(
                    passphrase.isEmpty ? text : text.replacing(passphrase, with: "<passphrase>"), maximumLength: 120)
            }
            return .deviceRefused(step: step, words.map { "it says: \($0)" } ?? message ?? "it names no reason")
        }
    }
}

extension JSONValue {
    /// The value at an RFC 6901 pointer (`/result/sta_ip`, `/nw/ins/0`); `""` is the whole.
    public func at(pointer: String) -> JSONValue? {
        guard !pointer.isEmpty else { return self }
        guard pointer.hasPrefix("/") else { return nil }
        var current = self
        for raw in pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let token = String(raw.replacing("~1", with: "/").replacing("~0", with: "~"))
            switch current {
            case .object(let members):
                guard let next = members[token] else { return nil }
                current = next
            case .array(let elements):
                guard let index = Int(token), elements.indices.contains(index) else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }

    /// Every string in the value, at any depth.
    var strings: [String] {
        switch self {
        case .string(let text): [text]
        case .array(let elements): elements.flatMap(\.strings)
        case .object(let members): members.values.flatMap(\.strings)
        default: []
        }
    }

    /// A scalar as text (a string as it is, a whole number without a fraction); `nil` for
    /// objects, arrays and null.
    public var scalarText: String? {
        switch self {
        case .string(let text): text
        case .number(let number): Int64(exactly: number).map(String.init) ?? String(number)
        case .bool(let flag): String(flag)
        default: nil
        }
    }
}
