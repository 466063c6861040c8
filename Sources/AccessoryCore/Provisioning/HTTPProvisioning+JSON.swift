import FoundationEssentials

extension HTTPProvisioning {
    static let maximumSteps = 8
    static let defaultConfirmSeconds = 60

    /// Reads `provisioning` with `"protocol": "http"`, reporting every fault with its field.
    init?(reading object: JSONObjectReader) {
        let before = object.diagnostics.issues.count
        object.rejectUnknownKeys(["protocol", "address", "steps", "reboots", "confirm"])
        let address = object.string("address", required: true)
        if let address, !Self.isIPv4AndPort(address) {
            object.report(
                "address",
                "'\(address)' is not an IPv4 address and port, like 192.168.33.1:80: the agent speaks only to an "
                    + "address on the hotspot's own network, never to a name")
        }
        let listed = object.array("steps", required: true, allowEmpty: false)
        if let listed, listed.count > Self.maximumSteps {
            object.report("steps", "lists \(listed.count) steps; at most \(Self.maximumSteps)")
        }
        var known = Set(Placeholder.allCases.map(\.name))
        var names: Set<String> = []
        var steps: [Step] = []
        for (value, field) in listed ?? [] {
            guard let reader = JSONObjectReader(value, at: field, diagnostics: object.diagnostics),
                let step = Step(reading: reader, placeholders: known)
            else { continue }
            if !names.insert(step.name).inserted { reader.report("name", "'\(step.name)' names an earlier step too") }
            known.formUnion(step.captures.keys)
            steps.append(step)
        }
        let reboots = object.bool("reboots") ?? false
        let confirm = object.object("confirm").flatMap { Confirmation(reading: $0, placeholders: known) }
        if listed != nil, object.diagnostics.issues.count == before {
            let carrying = steps.indices.filter { steps[$0].request.mentions(.passphrase) }
            if carrying.count != 1 {
                object.report(
                    "steps",
                    carrying.isEmpty
                        ? "no step sends {passphrase}: one must give the device the network"
                        : "steps \(carrying.map { steps[$0].name }.joined(separator: " and ")) all send {passphrase}; "
                            + "exactly one may")
            }
            if !steps.contains(where: { $0.request.mentions(.ssid) }) {
                object.report("steps", "no step sends {ssid}: one must name the network")
            }
        }
        guard object.diagnostics.issues.count == before, let address else { return nil }
        self.init(address: address, steps: steps, reboots: reboots, confirm: confirm)
    }

    /// An IPv4 address in dotted decimal (`IPv4Address`) and a port from 1 to 65535.
    static func isIPv4AndPort(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isNumber),
            let port = Int(parts[1]), (1...65535).contains(port)
        else { return false }
        return IPv4Address(parts[0]) != nil
    }
}

extension HTTPProvisioning.Step {
    init?(reading object: JSONObjectReader, placeholders: Set<String>) {
        let before = object.diagnostics.issues.count
        object.rejectUnknownKeys(["name", "method", "path", "query", "form", "json", "success", "failures", "capture"])
        let name = object.string("name", required: true)
        if let name, !HTTPProvisioning.isName(name) {
            object.report(
                "name", "'\(name)' is not a name of letters and digits starting with a letter, like setNetwork")
        }
        let request = HTTPProvisioning.Request(reading: object, placeholders: placeholders)
        let success = HTTPProvisioning.conditions("success", object, required: false)
        let failures = HTTPProvisioning.failures(object)
        var captures: [String: String] = [:]
        if let capture = object.object("capture") {
            for key in capture.keys {
                if !HTTPProvisioning.isName(key) || HTTPProvisioning.Placeholder(rawValue: key) != nil {
                    capture.report(key, "is not a name of letters and digits other than ssid and passphrase")
                    continue
                }
                guard let pointer = capture.string(key, required: true) else { continue }
                guard pointer.hasPrefix("/") else {
                    capture.report(key, "'\(pointer)' is not a JSON pointer, like /mac")
                    continue
                }
                captures[key] = pointer
            }
        }
        guard object.diagnostics.issues.count == before, let name, let request else { return nil }
        self.init(name: name, request: request, success: success ?? [], failures: failures, captures: captures)
    }
}

extension HTTPProvisioning.Confirmation {
    init?(reading object: JSONObjectReader, placeholders: Set<String>) {
        let before = object.diagnostics.issues.count
        object.rejectUnknownKeys([
            "method", "path", "query", "form", "json", "connected", "failures", "address", "addressAfter", "within",
        ])
        let request = HTTPProvisioning.Request(reading: object, placeholders: placeholders)
        if let request, request.mentions(.passphrase) {
            object.report("(request)", "a confirmation never sends {passphrase} again")
        }
        let connected = HTTPProvisioning.conditions("connected", object, required: true)
        let failures = HTTPProvisioning.failures(object)
        let address = object.string("address")
        if let address, !address.hasPrefix("/") { object.report("address", "'\(address)' is not a JSON pointer") }
        let addressAfter = object.string("addressAfter")
        if addressAfter?.isEmpty == true { object.report("addressAfter", "name the text the address follows") }
        if address != nil && addressAfter != nil {
            object.report(
                "addressAfter", "name the address by a JSON pointer (address) or by the text it follows, not both")
        }
        let seconds = object.integer("within", in: 5...600) ?? HTTPProvisioning.defaultConfirmSeconds
        guard object.diagnostics.issues.count == before, let request, let connected else { return nil }
        self.init(
            request: request, connected: connected, failures: failures, address: address, addressAfter: addressAfter,
            within: .seconds(seconds))
    }
}

extension HTTPProvisioning.Request {
    /// The request members of a step or confirmation: `method`, `path`, `query`, `form`, `json`.
    init?(reading object: JSONObjectReader, placeholders: Set<String>) {
        let before = object.diagnostics.issues.count
        let method = object.choice("method", from: ["GET": Method.GET, "POST": .POST], required: true)
        let path = object.string("path", required: true)
        if let path, !Self.isPath(path) {
            object.report(
                "path", "'\(path)' is not an absolute path of printable ASCII without spaces or '#', like /rpc")
        }
        let query = Self.fields("query", object, placeholders: placeholders)
        let form = Self.fields("form", object, placeholders: placeholders)
        var body = Body.empty
        if let form { body = .form(form) }
        if let json = object.value("json") {
            if form != nil { object.report("json", "a request has one body: form or json, not both") }
            for text in json.strings { Self.checkTemplate(text, field: object.field("json"), object, placeholders) }
            body = .json(json)
        }
        if method == .GET, body != .empty { object.report("method", "GET sends no body; use query, or POST") }
        guard object.diagnostics.issues.count == before, let method, let path else { return nil }
        self.init(method: method, path: path, query: query ?? [], body: body)
    }

    private static func fields(_ key: String, _ object: JSONObjectReader, placeholders: Set<String>) -> [(
        name: String, value: String
    )]? {
        guard let members = object.object(key) else { return nil }
        var fields: [(name: String, value: String)] = []
        for name in members.keys {
            guard let value = members.string(name, required: true, allowEmpty: true) else { continue }
            checkTemplate(value, field: members.field(name), object, placeholders)
            fields.append((name, value))
        }
        return fields
    }

    private static func checkTemplate(
        _ text: String, field: String, _ object: JSONObjectReader, _ placeholders: Set<String>
    ) {
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else {
                object.diagnostics.report(field, "'{' without '}': a placeholder is written {ssid}")
                return
            }
            let name = String(rest[rest.index(after: open)..<close])
            if !placeholders.contains(name) {
                object.diagnostics.report(
                    field,
                    "{\(name)} is not a placeholder here (known: \(placeholders.sorted().map { "{\($0)}" }.joined(separator: ", ")))"
                )
            }
            rest = rest[rest.index(after: close)...]
        }
    }

    static func isPath(_ text: String) -> Bool {
        text.hasPrefix("/") && text.utf8.count <= 256
            && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") }
    }
}

extension HTTPProvisioning {
    static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII else {
            return false
        }
        return text.count <= 32
            && text.unicodeScalars.allSatisfy { $0.isASCII && $0.properties.isAlphabetic || ("0"..."9").contains($0) }
    }

    static let failureKinds: KeyValuePairs<String, Failure.Kind> = [
        "wrongPassphrase": .wrongPassphrase, "networkNotFound": .networkNotFound,
        "authenticationRequired": .authenticationRequired, "refused": .refused,
    ]

    static func failures(_ object: JSONObjectReader) -> [Failure] {
        let listed = object.array("failures") ?? []
        return listed.compactMap { value, field in
            guard let reader = JSONObjectReader(value, at: field, diagnostics: object.diagnostics) else { return nil }
            reader.rejectUnknownKeys(["when", "error", "detail", "message"])
            let when = conditions("when", reader, required: true)
            let kind = reader.choice("error", from: failureKinds, required: true)
            let detail = reader.string("detail")
            if let detail, !detail.hasPrefix("/") { reader.report("detail", "'\(detail)' is not a JSON pointer") }
            let message = reader.string("message").map { DisplayText.sanitized($0, maximumLength: 200) }
            if kind != .refused, detail != nil || message != nil {
                reader.report("error", "detail and message go with refused; the other failures say what they mean")
            }
            guard let when, let kind else { return nil }
            return Failure(when: when, kind: kind, detail: detail, message: message)
        }
    }

    /// An array of conditions, each `{"status": 200}` (or a list), `{"pointer": P, "equals": V}`,
    /// `{"pointer": P, "exists": B}` or `{"bodyContains": T}`.
    static func conditions(_ key: String, _ object: JSONObjectReader, required: Bool) -> [Condition]? {
        guard let listed = object.array(key, required: required, allowEmpty: false) else { return nil }
        let before = object.diagnostics.issues.count
        let conditions = listed.compactMap { value, field -> Condition? in
            guard let reader = JSONObjectReader(value, at: field, diagnostics: object.diagnostics) else { return nil }
            return condition(reader)
        }
        return object.diagnostics.issues.count == before ? conditions : nil
    }

    private static func condition(_ object: JSONObjectReader) -> Condition? {
        let kinds = ["status", "pointer", "bodyContains"].filter(object.has)
        guard kinds.count == 1 else {
            object.report("(condition)", "names exactly one of status, pointer (with equals or exists), bodyContains")
            return nil
        }
        switch kinds[0] {
        case "status":
            object.rejectUnknownKeys(["status"])
            let value = object.value("status", required: true)
            let codes: [JSONValue]
            if case .array(let listed)? = value { codes = listed } else { codes = value.map { [$0] } ?? [] }
            let parsed = codes.compactMap {
                JSONObjectReader.integer(
                    $0, in: 100...599, field: object.field("status"), diagnostics: object.diagnostics)
            }
            guard !parsed.isEmpty, parsed.count == codes.count else { return nil }
            return .status(parsed)
        case "bodyContains":
            object.rejectUnknownKeys(["bodyContains"])
            return object.string("bodyContains", required: true).map(Condition.bodyContains)
        default:
            object.rejectUnknownKeys(["pointer", "equals", "exists"])
            guard let pointer = object.string("pointer", required: true, allowEmpty: true) else { return nil }
            guard pointer.isEmpty || pointer.hasPrefix("/") else {
                object.report("pointer", "'\(pointer)' is not a JSON pointer, like /result/status")
                return nil
            }
            switch (object.has("equals"), object.bool("exists")) {
            case (true, nil):
                guard let expected = object.value("equals") else {
                    object.report("equals", "null cannot be compared; use \"exists\": false")
                    return nil
                }
                return .equals(pointer: pointer, expected)
            case (false, let exists?):
                return .exists(pointer: pointer, exists)
            default:
                object.report("pointer", "takes exactly one of equals or exists")
                return nil
            }
        }
    }
}
