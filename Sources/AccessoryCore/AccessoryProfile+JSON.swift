import FoundationEssentials

extension AccessoryProfile {
    /// Reads and validates a profile file, reporting every fault at once.
    public static func load(contentsOf url: URL) throws(ProfileError) -> AccessoryProfile {
        let data: Data
        do {
            data = try BoundedInput.read(path: url.path, limit: BoundedInput.documentLimit)
        } catch {
            throw .unreadable(path: url.path, reason: error.reason)
        }
        return try parse(data, path: url.path, imageDirectory: url.deletingLastPathComponent())
    }

    /// Reads and validates a profile; `path` names it in errors. With `imageDirectory` (the
    /// profile file's directory) the items' product images are checked there too.
    public static func parse(_ data: Data, path: String, imageDirectory: URL? = nil) throws(ProfileError)
        -> AccessoryProfile
    {
        let document: JSONValue
        do {
            document = try JSONValue.parse(data)
        } catch {
            throw .invalid(path: path, issues: [error])
        }
        let diagnostics = FieldDiagnostics()
        guard let object = JSONObjectReader(document, at: "", diagnostics: diagnostics),
            let profile = AccessoryProfile(reading: object, imageDirectory: imageDirectory)
        else {
            throw .invalid(path: path, issues: diagnostics.issues)
        }
        return profile
    }

    static let keys = [
        "schemaVersion", "id", "vendor", "applications", "supports", "bluetooth", "hotspot", "handoff",
        "bluetoothHandoff", "provisioning", "unencryptedProvisioning", "homeNetwork", "items", "sources",
    ]

    private init?(reading object: JSONObjectReader, imageDirectory: URL?) {
        object.rejectUnknownKeys(Self.keys)
        if let version = object.integer("schemaVersion", in: 1...Int.max, required: true), version != Self.schemaVersion
        {
            object.report("schemaVersion", "is \(version); this version reads schema \(Self.schemaVersion)")
        }
        let id = object.string("id", required: true)
        if let id, !Self.isReverseDNS(id) {
            object.report(
                "id",
                "'\(id)' is not a reverse-DNS name (letters, digits, '-' in at least two labels separated by '.', like org.example.plug)"
            )
        }
        let vendor = object.string("vendor", required: true)
        let applications = Self.readApplications(object)
        let transports = object.choices(
            "supports", from: ["wifi": Transport.wifi, "bluetooth": .bluetooth], required: true, allowEmpty: false)
        let supports = Set(transports ?? [])
        let bluetooth = Self.readBluetooth(object, supports: supports, known: transports != nil)
        let handoff = object.choice("handoff", from: Self.handoffNames, required: true)
        let hotspot = object.object("hotspot").flatMap(HotspotPolicy.init(reading:))
        let bluetoothHandoff = object.object("bluetoothHandoff").flatMap(BluetoothHandoff.init(reading:))
        let provisioningObject = object.object("provisioning")
        let isHTTP = provisioningObject.map {
            $0.choice("protocol", from: ["espIDF": false, "http": true], required: true)
        }
        let provisioning = isHTTP == false ? provisioningObject.flatMap(ProvisioningSetup.init(reading:)) : nil
        let httpProvisioning = isHTTP == true ? provisioningObject.flatMap(HTTPProvisioning.init(reading:)) : nil
        let unencryptedProvisioning = object.bool("unencryptedProvisioning") ?? false
        if let httpProvisioning {
            Self.checkHTTPProvisioning(
                httpProvisioning, handoff: handoff, hotspot: hotspot, unencrypted: unencryptedProvisioning, object)
        }
        if let provisioning, provisioning.minimumSecurity == 0, !unencryptedProvisioning {
            object.report(
                "provisioning.minimumSecurity",
                "0 sends the home network's passphrase without encryption; say so with \"unencryptedProvisioning\": true"
            )
        }
        let homeNetwork = object.object("homeNetwork")
        let homeServices = homeNetwork.map(Self.readHomeServices) ?? []
        let homeNetworkWithin = homeNetwork?.integer("within", in: 10...600).map { Duration.seconds($0) }
        let items = object.array("items", required: true, allowEmpty: false)?.compactMap { value, field in
            let item = JSONObjectReader(value, at: field, diagnostics: object.diagnostics).flatMap {
                PickerDisplayItem(
                    reading: $0, supports: transports == nil ? nil : supports, declared: bluetooth,
                    imageDirectory: imageDirectory)
            }
            // Discovery probes for a hidden hotspot's SSID; a prefix cannot be probed for.
            if hotspot?.hidden == true, item?.descriptor.ssidPrefix != nil {
                object.diagnostics.report(
                    "\(field).descriptor.ssidPrefix",
                    "the hotspot is hidden, and a hidden hotspot answers only a probe for its whole SSID; give ssid")
            }
            return item
        }
        let sources = object.array("sources")?.compactMap { value, field in
            JSONObjectReader(value, at: field, diagnostics: object.diagnostics).flatMap(SourceReference.init(reading:))
        }
        if let handoff, transports != nil {
            Self.checkHandoff(handoff, supports: supports, hasHotspot: object.has("hotspot"), object)
        }
        if object.has("hotspot") && transports != nil && !supports.contains(.wifi) {
            object.report("hotspot", "a hotspot needs \"wifi\" in supports")
        }
        if let handoff {
            Self.checkBluetoothHandoff(bluetoothHandoff, handoff: handoff, hotspot: hotspot, object)
            if let provisioning, transports != nil {
                Self.checkProvisioning(provisioning, handoff: handoff, supports: supports, object)
            }
        }

        guard object.diagnostics.issues.isEmpty, let id, let vendor, let handoff, let items, let bluetooth else {
            return nil
        }
        self.init(
            id: id, vendor: vendor, applications: applications, supports: supports, bluetooth: bluetooth,
            hotspot: hotspot, handoff: handoff, bluetoothHandoff: bluetoothHandoff, provisioning: provisioning,
            httpProvisioning: httpProvisioning, allowsUnencryptedProvisioning: unencryptedProvisioning,
            homeServices: homeServices, items: items,
            sources: sources ?? [])
        if let homeNetworkWithin { self.homeNetworkWithin = homeNetworkWithin }
    }

    /// A vendor's HTTP setup runs on the setup hotspot the agent joins; over an open hotspot,
    /// or one whose passphrase the vendor publishes, the passphrase crosses the air readable,
    /// and the profile must say it accepts that.
    private static func checkHTTPProvisioning(
        _ setup: HTTPProvisioning, handoff: Handoff?, hotspot: HotspotPolicy?, unencrypted: Bool,
        _ object: JSONObjectReader
    ) {
        if let handoff, handoff != .joinHotspot, handoff != .bluetoothToWiFi {
            object.report("provisioning.protocol", "http runs on the accessory's setup hotspot; handoff must join it")
        }
        if hotspot == nil && handoff == .joinHotspot {
            object.report("provisioning.protocol", "http runs on the accessory's setup hotspot; give hotspot")
        }
        switch hotspot?.passphrase {
        case .prompt?, .handoff?: break
        case .none?, .fixed?, nil:
            if !unencrypted {
                object.report(
                    "provisioning.protocol",
                    "http over a hotspot that is open or whose passphrase is published sends the home network's "
                        + "passphrase readable by anyone nearby; say so with \"unencryptedProvisioning\": true")
            }
        }
    }

    /// `homeNetwork`: `{"services": [{"type": "_wled._tcp", "instance": "wled-*"}]}`.
    private static func readHomeServices(_ object: JSONObjectReader) -> [PublishedService] {
        object.rejectUnknownKeys(["services", "within"])
        let listed = object.array("services", required: true, allowEmpty: false)
        if let listed, listed.count > PublishedService.maximumPerProfile {
            // Each is a browse the agent keeps open for the profile's records.
            object.report("services", "lists \(listed.count) services; at most \(PublishedService.maximumPerProfile)")
        }
        let services = listed?.compactMap { value, field in
            JSONObjectReader(value, at: field, diagnostics: object.diagnostics).flatMap { service in
                service.rejectUnknownKeys(["type", "instance"])
                let type = service.string("type", required: true)
                if let type, !PublishedService.isValidType(type) {
                    service.report(
                        "type",
                        "'\(type)' is not a DNS-SD service type: an underscore, 1 to 15 letters, digits or '-', "
                            + "then ._tcp or ._udp, like _wled._tcp")
                }
                let instance = service.string("instance")
                return type.map { PublishedService(type: $0, instance: instance) }
            }
        }
        return services ?? []
    }

    static let handoffNames: KeyValuePairs<String, Handoff> = [
        "none": .none, "joinHotspot": .joinHotspot, "bluetoothToWiFi": .bluetoothToWiFi, "improvWiFi": .improvWiFi,
    ]

    /// `applications`: Flatpak application ids, each valid as flatpak checks them, without repeats.
    private static func readApplications(_ object: JSONObjectReader) -> [String] {
        var applications: [String] = []
        for (value, field) in object.array("applications") ?? [] {
            guard case .string(let id) = value else {
                object.diagnostics.report(field, "expected a Flatpak application id, found \(value.kindName)")
                continue
            }
            if let problem = ApplicationID.problem(id) {
                object.diagnostics.report(
                    field, "'\(id)' is not a Flatpak application id (\(problem)); ids are like org.example.AcmePlug")
            } else if applications.contains(id) {
                object.diagnostics.report(field, "'\(id)' is listed twice")
            } else {
                applications.append(id)
            }
        }
        return applications
    }

    private static func readBluetooth(_ object: JSONObjectReader, supports: Set<Transport>, known: Bool)
        -> BluetoothDeclarations?
    {
        guard let section = object.object("bluetooth") else {
            if object.has("bluetooth") { return nil }
            return BluetoothDeclarations()
        }
        if known && !supports.contains(.bluetooth) {
            object.report("bluetooth", "declares Bluetooth values, but \"bluetooth\" is not in supports")
        }
        section.rejectUnknownKeys(["services", "names", "companyIdentifiers"])
        let diagnostics = section.diagnostics
        let before = diagnostics.issues.count
        var declarations = BluetoothDeclarations()
        declarations.services = section.parsedElements("services", expected: "a UUID string", BluetoothUUID.init) ?? []
        for (value, field) in section.array("names") ?? [] {
            guard case .string(let name) = value, !name.isEmpty else {
                diagnostics.report(field, "expected a non-empty string")
                continue
            }
            declarations.names.append(name)
        }
        for (value, field) in section.array("companyIdentifiers") ?? [] {
            if let company = DiscoveryDescriptor.companyIdentifier(value, field: field, diagnostics: diagnostics) {
                declarations.companyIdentifiers.append(company)
            }
        }
        return diagnostics.issues.count == before ? declarations : nil
    }

    private static func checkHandoff(
        _ handoff: Handoff, supports: Set<Transport>, hasHotspot: Bool, _ object: JSONObjectReader
    ) {
        let needs: (wifi: Bool, bluetooth: Bool, hotspot: Bool) =
            switch handoff {
            case .none: (false, false, false)
            case .joinHotspot: (true, false, true)
            case .bluetoothToWiFi: (true, true, true)
            case .improvWiFi: (false, true, false)
            }
        if needs.wifi && !supports.contains(.wifi) {
            object.report("handoff", "\(handoff.rawValue) needs \"wifi\" in supports")
        }
        if needs.bluetooth && !supports.contains(.bluetooth) {
            object.report("handoff", "\(handoff.rawValue) needs \"bluetooth\" in supports")
        }
        if needs.hotspot && !hasHotspot {
            object.report(
                "hotspot", "is required by handoff \(handoff.rawValue): say how the accessory's hotspot is secured")
        }
    }

    /// `bluetoothHandoff` belongs to `bluetoothToWiFi` alone, and reveals a passphrase when the
    /// hotspot's passphrase comes from the handoff.
    private static func checkBluetoothHandoff(
        _ bluetoothHandoff: BluetoothHandoff?, handoff: Handoff, hotspot: HotspotPolicy?, _ object: JSONObjectReader
    ) {
        let present = object.has("bluetoothHandoff")
        if handoff == .bluetoothToWiFi && !present {
            object.report(
                "bluetoothHandoff",
                "is required by handoff bluetoothToWiFi: name the GATT service and characteristics that reveal the hotspot"
            )
        } else if handoff != .bluetoothToWiFi && present {
            object.report("bluetoothHandoff", "applies only to handoff bluetoothToWiFi, not \(handoff.rawValue)")
        }
        if let bluetoothHandoff, let hotspot, case .handoff = hotspot.passphrase, bluetoothHandoff.passphrase == nil {
            object.report("bluetoothHandoff.passphrase", "is required: hotspot.passphrase.source is \"handoff\"")
        }
    }

    /// Provisioning over the SoftAP needs a handoff that joins the hotspot; over Bluetooth, a
    /// Bluetooth profile whose handoff leaves the link to it.
    private static func checkProvisioning(
        _ provisioning: ProvisioningSetup, handoff: Handoff, supports: Set<Transport>, _ object: JSONObjectReader
    ) {
        switch provisioning.transport {
        case .softAP where handoff != .joinHotspot && handoff != .bluetoothToWiFi:
            object.report(
                "provisioning.transport",
                "softAP needs a handoff that joins the hotspot (joinHotspot or bluetoothToWiFi), not \(handoff.rawValue)"
            )
        case .bluetooth where !supports.contains(.bluetooth):
            object.report("provisioning.transport", "bluetooth needs \"bluetooth\" in supports")
        case .bluetooth where handoff != .none:
            object.report(
                "provisioning.transport",
                "bluetooth provisions over the accessory's own link; its handoff must be none, not \(handoff.rawValue)")
        default:
            break
        }
    }

    /// Whether `text` is a reverse-DNS name, as profile ids are: `org.example.plug`, two or more
    /// labels of letters, digits and `-`.
    public static func isReverseDNS(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2
            && labels.allSatisfy { label in
                !label.isEmpty
                    && label.unicodeScalars.allSatisfy {
                        $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-")
                    }
            }
    }
}

extension PickerDisplayItem {
    /// Reads an item and checks its descriptor against what the profile supports and declares.
    /// `supports` is `nil` when the profile's own `supports` was unreadable; with
    /// `imageDirectory`, the product image must be a valid image there.
    init?(
        reading object: JSONObjectReader, supports: Set<AccessoryProfile.Transport>?,
        declared: AccessoryProfile.BluetoothDeclarations?, imageDirectory: URL? = nil
    ) {
        let before = object.diagnostics.issues.count
        object.rejectUnknownKeys(["name", "productImage", "setupOptions", "descriptor"])
        // Checked as the agent checks the names an app shows, which become the records' names.
        let name = object.string("name", required: true).flatMap { name in
            guard let problem = AccessorySession.nameProblem(name) else { return name }
            object.report("name", problem)
            return nil
        }
        let productImage = object.string("productImage")
        if let productImage, let imageDirectory, let problem = ProductImage.problem(productImage, in: imageDirectory) {
            object.report("productImage", problem)
        }
        let options = object.choices("setupOptions", from: SetupOptions.names)
        let descriptor = object.object("descriptor", required: true).map(DiscoveryDescriptor.read)
        if let descriptor, let supports {
            Self.check(
                descriptor.descriptor, against: supports, declared: declared, at: object.field("descriptor"),
                object.diagnostics)
        }
        guard object.diagnostics.issues.count == before, let name, let descriptor else { return nil }
        self.init(
            name: name, productImage: productImage, descriptor: descriptor.descriptor,
            setupOptions: SetupOptions(options ?? []))
    }

    private static func check(
        _ descriptor: DiscoveryDescriptor, against supports: Set<AccessoryProfile.Transport>,
        declared: AccessoryProfile.BluetoothDeclarations?, at path: String, _ diagnostics: FieldDiagnostics
    ) {
        if descriptor.hasWiFiIdentifier && !supports.contains(.wifi) {
            diagnostics.report(path, "uses Wi-Fi identifiers, but \"wifi\" is not in the profile's supports")
        }
        if descriptor.hasBluetoothIdentifier && !supports.contains(.bluetooth) {
            diagnostics.report(path, "uses Bluetooth identifiers, but \"bluetooth\" is not in the profile's supports")
        }
        guard let declared, supports.contains(.bluetooth) else { return }
        if let service = descriptor.bluetoothServiceUUID, !declared.services.contains(service) {
            diagnostics.report(
                "\(path).bluetoothServiceUUID", "service \(service) is not declared in bluetooth.services")
        }
        if let company = descriptor.bluetoothCompanyIdentifier, !declared.companyIdentifiers.contains(company) {
            diagnostics.report(
                "\(path).bluetoothCompanyIdentifier",
                "company \(company) is not declared in bluetooth.companyIdentifiers")
        }
        if let name = descriptor.bluetoothNameSubstring, !declared.names.contains(name) {
            diagnostics.report("\(path).bluetoothNameSubstring", "name '\(name)' is not declared in bluetooth.names")
        }
    }
}

extension HotspotPolicy {
    static let securityNames: KeyValuePairs<String, Security> = [
        "open": .open, "wep": .wep, "wpa2Personal": .wpa2Personal, "wpa3Personal": .wpa3Personal, "owe": .owe,
    ]

    init?(reading object: JSONObjectReader) {
        let before = object.diagnostics.issues.count
        object.rejectUnknownKeys(["security", "passphrase", "joinOnce", "lifetimeInDays", "hidden"])
        let security = object.choice("security", from: Self.securityNames, required: true)
        let passphrase = object.object("passphrase", required: true).flatMap {
            Self.readPassphrase($0, security: security)
        }
        let joinOnce = object.bool("joinOnce") ?? true
        let lifetime = object.integer("lifetimeInDays", in: HotspotConfiguration.lifetimeRange)
        if lifetime != nil && joinOnce {
            object.report("lifetimeInDays", "applies only to a stored profile; set joinOnce to false or drop it")
        }
        let hidden = object.bool("hidden") ?? false
        guard object.diagnostics.issues.count == before, let security, let passphrase else { return nil }
        self.init(
            security: security, passphrase: passphrase, joinOnce: joinOnce, lifetimeInDays: lifetime, hidden: hidden)
    }

    private enum SourceKind: String { case none, fixed, prompt, handoff }

    private static func readPassphrase(_ object: JSONObjectReader, security: Security?) -> PassphraseSource? {
        let kinds: KeyValuePairs<String, SourceKind> = [
            "none": .none, "fixed": .fixed, "prompt": .prompt, "handoff": .handoff,
        ]
        let kind = object.choice("source", from: kinds, required: true)
        object.rejectUnknownKeys(
            kind == .fixed ? ["source", "value"] : kind == .prompt ? ["source", "hint"] : ["source"])
        let result: PassphraseSource?
        switch kind {
        case .none?: result = PassphraseSource.none
        // The value itself is never echoed in a fault.
        case .fixed?: result = object.string("value", required: true, allowEmpty: true).map { .fixed(Secret($0)) }
        case .prompt?: result = .prompt(hint: object.string("hint"))
        case .handoff?: result = .handoff
        case nil: result = nil
        }
        guard let security, let result else { return nil }
        switch (security.needsPassphrase, result) {
        case (false, .none), (true, .fixed), (true, .prompt), (true, .handoff):
            break
        case (false, _):
            object.report("source", "a \(security.rawValue) hotspot has no passphrase; use \"none\"")
        case (true, .none):
            object.report(
                "source", "a \(security.rawValue) hotspot needs a passphrase; use \"fixed\", \"prompt\" or \"handoff\"")
        }
        if case .fixed(let secret) = result {
            do {
                switch security {
                case .wep: try HotspotSecurity.wep(secret).validate()
                case .wpa2Personal: try HotspotSecurity.wpa2Personal(secret).validate()
                case .wpa3Personal: try HotspotSecurity.wpa3Personal(secret).validate()
                case .open, .owe: break
                }
            } catch {
                object.report("value", error.message)
            }
        }
        return result
    }
}

extension SourceReference {
    init?(reading object: JSONObjectReader) {
        object.rejectUnknownKeys(["fact", "reference"])
        guard let fact = object.string("fact", required: true),
            let reference = object.string("reference", required: true)
        else {
            return nil
        }
        self.init(fact: fact, reference: reference)
    }
}

extension BluetoothHandoff {
    init?(reading object: JSONObjectReader) {
        let before = object.diagnostics.issues.count
        object.rejectUnknownKeys(
            [
                "service", "pairing", "ssid", "passphrase", "security", "switchOn", "switchOff", "state",
                "readyTimeoutSeconds",
            ])
        let service = object.parsed("service", required: true, BluetoothUUID.init)
        let pairing = object.choice("pairing", from: ["required": Pairing.required, "none": .none], required: true)
        let ssid = object.parsed("ssid", required: true, BluetoothUUID.init)
        let passphrase = object.parsed("passphrase", BluetoothUUID.init)
        let security = object.parsed("security", BluetoothUUID.init)
        let switchOn = object.object("switchOn").flatMap(Write.init(reading:))
        let switchOff = object.object("switchOff").flatMap(Write.init(reading:))
        let state = object.object("state").flatMap(StateReport.init(reading:))
        let timeout = object.integer("readyTimeoutSeconds", in: 1...600)
        if object.has("switchOff") && !object.has("switchOn") {
            object.report("switchOff", "needs switchOn: a hotspot that is switched off must be switched on first")
        }
        guard object.diagnostics.issues.count == before, let service, let pairing, let ssid else { return nil }
        self.init(
            service: service, pairing: pairing, ssid: ssid, passphrase: passphrase, security: security,
            switchOn: switchOn,
            switchOff: switchOff, state: state, readyTimeout: timeout.map { .seconds($0) } ?? Self.defaultReadyTimeout)
    }
}

extension BluetoothHandoff.Write {
    init?(reading object: JSONObjectReader) {
        object.rejectUnknownKeys(["characteristic", "value"])
        let characteristic = object.parsed("characteristic", required: true, BluetoothUUID.init)
        let value = object.parsed("value", required: true, Hex.bytes)
        if let value, value.isEmpty { object.report("value", "must hold at least one byte") }
        guard let characteristic, let value, !value.isEmpty else { return nil }
        self.init(characteristic: characteristic, value: value)
    }
}

extension BluetoothHandoff.StateReport {
    init?(reading object: JSONObjectReader) {
        object.rejectUnknownKeys(["characteristic", "ready", "failed"])
        let characteristic = object.parsed("characteristic", required: true, BluetoothUUID.init)
        let ready = Self.prefixes("ready", object, required: true)
        let failed = Self.prefixes("failed", object, required: false) ?? []
        for prefix in failed where ready?.contains(prefix) == true {
            object.report("failed", "\(Hex.string(prefix)) is also listed as ready")
        }
        guard let characteristic, let ready else { return nil }
        self.init(characteristic: characteristic, ready: ready, failed: failed)
    }

    private static func prefixes(_ key: String, _ object: JSONObjectReader, required: Bool) -> [[UInt8]]? {
        guard let elements = object.array(key, required: required, allowEmpty: !required) else { return nil }
        var result: [[UInt8]] = []
        var failed = false
        for (value, field) in elements {
            guard case .string(let text) = value, let bytes = try? Hex.bytes(text), !bytes.isEmpty else {
                object.diagnostics.report(field, "expected the hex bytes a state value starts with, like \"01\"")
                failed = true
                continue
            }
            result.append(bytes)
        }
        return failed ? nil : result
    }
}

extension ProvisioningSetup {
    init?(reading object: JSONObjectReader) {
        let before = object.diagnostics.issues.count
        object.rejectUnknownKeys([
            "protocol", "transport", "address", "security", "minimumSecurity", "username", "proofOfPossession",
        ])
        _ = object.choice("protocol", from: ["espIDF": true], required: true)
        let transport = object.choice(
            "transport", from: ["softAP": Transport.softAP, "bluetooth": .bluetooth], required: true)
        let address = object.string("address")
        if let address {
            if transport == .bluetooth {
                object.report("address", "applies to softAP only; a Bluetooth device is the one handed off")
            } else if !Self.isHostAndPort(address) {
                object.report("address", "'\(address)' is not HOST:PORT, like 192.168.4.1:80")
            }
        }
        let security = object.integer("security", in: 0...2)
        let minimumSecurity = object.integer("minimumSecurity", in: 0...2) ?? Self.defaultMinimumSecurity
        if let security, security < minimumSecurity {
            object.report("security", "\(security) is below minimumSecurity \(minimumSecurity)")
        }
        let username = object.string("username")
        if username != nil && security != 2 { object.report("username", "is for security 2 only") }
        let proof = object.object("proofOfPossession").flatMap(Self.readProofOfPossession)
        if proof != nil && security == 0 {
            object.report("proofOfPossession", "security 0 takes no proof of possession")
        }
        guard object.diagnostics.issues.count == before, let transport else { return nil }
        self.init(
            transport: transport, address: address ?? Self.defaultAddress, security: security,
            minimumSecurity: minimumSecurity, username: username, proofOfPossession: proof)
    }

    private static func readProofOfPossession(_ object: JSONObjectReader) -> ProofOfPossessionSource? {
        let kind = object.choice("source", from: ["prompt": true, "fixed": false], required: true)
        object.rejectUnknownKeys(kind == false ? ["source", "value"] : ["source", "hint"])
        switch kind {
        case true?: return .prompt(hint: object.string("hint"))
        // The value itself is never echoed in a fault.
        case false?: return object.string("value", required: true).map { .fixed(Secret($0)) }
        case nil: return nil
        }
    }

    /// `HOST:PORT` with a port from 1 to 65535 (IPv6 hosts in brackets).
    static func isHostAndPort(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port)
        else { return false }
        return !text[..<colon].isEmpty
    }
}
