import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials
import Glibc

/// An application's own Wi-Fi configurations, the counterpart of
/// `NEHotspotConfigurationManager`'s `apply`, `getConfiguredSSIDs` and `removeConfiguration`:
/// NetworkManager profiles tagged with their owner (the caller's uid, and a sandboxed
/// application's id), which only that owner sees (docs/dbus-api.md, `ApplyConfiguration`).
///
/// A part of the agent with no state of its own but the certificates it stores: its methods run
/// on the agent (`isolated Agent`), whose callers, joins and radios it uses.
final class Configurations {
    /// Where certificates passed by descriptor are kept for NetworkManager: root's alone.
    let certificateDirectory: URL
    private let limits: AgentLimits
    private let radios: Radios

    init(stateDirectory: URL, limits: AgentLimits, radios: Radios) {
        certificateDirectory = stateDirectory.appendingPathComponent("certificates")
        self.limits = limits
        self.radios = radios
    }
    /// `ApplyConfiguration`: validates, checks the caller's limit, asks polkit with the SSID in
    /// the prompt, reads the certificates, and joins; returns `JoinAccessory`'s reply.
    func apply(
        _ call: MethodCall, _ arguments: CallArguments, in agent: isolated Agent
    ) async throws(CallFailure) -> DBusValue {
        let caller = try await agent.callers.caller(call)
        try caller.requireIdentified(AgentBus.Manager1.Method.applyConfiguration.name)
        var request = try ConfigurationRequest(
            arguments[0].members ?? [:], options: arguments.options(1), call: call)
        defer { request.closeDescriptors() }
        let owner = Self.owner(of: caller)
        try await checkLimit(caller, replacing: request.ssidOrPrefix, owner: owner, in: agent)
        // polkit (a person may take minutes over its dialog) and the client's descriptors come
        // before the device is claimed, so that neither holds off another user's join.
        try await agent.callers.require(
            .configureHotspot, call, uid: caller.uid,
            details: [
                "ssid": DisplayText.sanitized(request.displayName),
                "application": await agent.callers.applicationName(of: call) ?? "a program of yours",
            ])
        // After polkit, so that no application learns silently which networks are stored.
        try await Self.refuseOthersNetworks(request, caller: caller, radios)
        let contents = try await Self.readCertificates(request, limits)
        await agent.joins.adopted(in: agent)
        let claim = try agent.joins.table.claim(request.device)
        defer { agent.joins.table.release(claim) }

        let certificates = try storeCertificates(contents, in: &request)
        let configuration = try request.configuration()
        var options = JoinOptions(device: request.device)
        options.owner = owner
        options.permittedUser = caller.uid == 0 ? nil : Callers.userName(of: caller.uid)
        options.restoreAfter = request.restoreAfter
        options.cleaningUp = agent.joins.ownConnections(in: agent)
        options.bindToClient = configuration.joinOnce && request.bindToCaller
        let joined: JoinedHotspot
        do {
            let client = try await radios.hotspots()
            Journal.info("apply: \(request.displayName) for \(caller.logDescription) (\(call.sender))")
            joined = try await client.join(configuration, options: options)
        } catch {
            if case .networkManagerUnavailable = error { await radios.reset(networkManager: true) }
            Journal.notice("apply: \(request.displayName) for \(caller.logDescription) failed: \(error)")
            certificates?.remove()
            throw CallFailure(error)
        }
        agent.joins.table.remember(joined, of: nil)
        agent.joins.table.add(
            ActiveJoin(
                device: joined.device, uid: caller.uid, application: caller.ownerApplication, client: call.sender,
                sessionPath: nil, recordID: nil, ssid: joined.ssid, connectionUUID: joined.connectionUUID.lowercased(),
                joinOnce: configuration.joinOnce, endsWithClient: options.bindToClient))
        Journal.notice("apply: \(joined.ssid) joined on \(joined.device) for \(caller.logDescription)")
        if options.bindToClient, !(await agent.bus.hasOwner(call.sender)), let join = agent.joins.table[joined.device] {
            await agent.joins.end(join, because: "its client left during the join", in: agent)
            throw CallFailure(AccessorySessionError.connectionFailed(reason: "the client left the bus during the join"))
        }
        if configuration.lifetimeInDays != nil { agent.joins.schedulePurge(in: agent) }
        return Joins.reply(joined, to: caller)
    }

    /// Refuses a configuration for an SSID that a system profile, or another user's, is for:
    /// an application may not put a twin of the machine's own networks beside them, nor join
    /// one by its name. Root's configurations are the system's own.
    private static func refuseOthersNetworks(
        _ request: ConfigurationRequest, caller: Caller, _ radios: Radios
    ) async throws(CallFailure) {
        guard caller.uid != 0 else { return }
        let user = Callers.userName(of: caller.uid) ?? "#\(caller.uid)"
        let target = request.target
        let holders: [StoredNetwork.SecretHolder]
        do { holders = try await radios.hotspots().profileHolders(of: target) } catch { throw CallFailure(error) }
        guard holders.contains(where: { $0 != .user(user) }) else { return }
        let ssid: SSID
        switch target {
        case .ssid(let named), .ssidPrefix(let named): ssid = named
        }
        Journal.notice(
            "apply: \(request.displayName) of \(caller.logDescription) refused: a system or another user's profile")
        throw CallFailure(HotspotError.systemConfiguration(ssid))
    }

    /// `GetConfiguredSSIDs`: the SSIDs of the caller's configurations, in the profile notation.
    func configuredSSIDs(_ call: MethodCall, in agent: isolated Agent) async throws(CallFailure) -> [String] {
        let caller = try await agent.callers.caller(call)
        let owned = try await configurations(of: caller, in: agent)
        sweepCertificates(in: agent)
        return Array(Set(owned.map(\.ssid.notation))).sorted()
    }

    /// `RemoveConfiguration`: deletes the caller's configurations for `ssid`, leaving the
    /// network first where the device is on it. Another owner's count as not there.
    func remove(_ call: MethodCall, ssid text: String, in agent: isolated Agent) async throws(CallFailure) {
        let ssid: SSID
        do {
            ssid = try SSID(notation: text)
        } catch {
            throw CallFailure(HotspotError.invalidConfiguration(.invalidSSID(error.description)))
        }
        let caller = try await agent.callers.caller(call)
        let owned = try await configurations(of: caller, in: agent).filter { $0.ssid == ssid }
        guard !owned.isEmpty else {
            throw CallFailure(
                name: HotspotError.notStored("").dbusName,
                message: "no configuration of this caller is stored for \(ssid.escaped)")
        }
        let uuids = Set(owned.map { $0.connectionUUID.lowercased() })
        // No longer held while NetworkManager takes it down: the dispatcher's "down" is expected.
        for join in agent.joins.all where uuids.contains(join.connectionUUID) {
            _ = agent.joins.table.remove(on: join.device)
        }
        do {
            let forgotten = try await radios.hotspots().forget(connectionUUIDs: uuids)
            Journal.notice(
                "remove: \(ssid.escaped) of \(caller.logDescription): \(forgotten.count) profile(s) deleted")
        } catch {
            throw CallFailure(error)
        }
        let root = certificateDirectory.path + "/"
        for path in owned.flatMap({ $0.certificatePaths ?? [] }) where path.hasPrefix(root) {
            StoredCertificates(directory: URL(fileURLWithPath: path).deletingLastPathComponent()).remove()
        }
    }

    /// The owner tag of `caller`'s configurations: `1000`, or `1000/org.example.App`.
    static func owner(of caller: Caller) -> String {
        caller.ownerApplication.map { "\(caller.uid)/\($0)" } ?? "\(caller.uid)"
    }

    /// The configurations `caller` sees: those whose owner (`owner(of:)`) the
    /// caller sees (`Caller.sees`).
    func configurations(of caller: Caller, in agent: isolated Agent) async throws(CallFailure) -> [ConfiguredHotspot] {
        let all: [ConfiguredHotspot]
        do {
            all = try await radios.hotspots().configuredHotspots(cleaningUp: agent.joins.ownConnections(in: agent))
        } catch {
            if case .networkManagerUnavailable = error { await radios.reset(networkManager: true) }
            throw CallFailure(error)
        }
        return all.filter { hotspot in Self.owner(of: hotspot).map(caller.sees) ?? false }
    }

    /// The owner of an application's configuration: a profile of this project with an owner tag
    /// and no record, whose `connection.permissions` are exactly that owner's user (none for
    /// root's); `nil` for any other. The tag alone proves nothing, since any client of
    /// NetworkManager may write it; NetworkManager lets a user write only profiles that name
    /// that user, so a profile restricted to the owner alone is the owner's or the
    /// administrator's.
    static func owner(of hotspot: ConfiguredHotspot) -> AccessoryOwner? {
        guard hotspot.recordID == nil, let tag = hotspot.owner, let owner = owner(tag: tag) else { return nil }
        let permitted = owner.uid == 0 ? nil : Callers.userName(of: owner.uid).map { [$0] }
        guard owner.uid == 0 || permitted != nil, hotspot.permittedUsers == permitted else { return nil }
        return owner
    }

    private static func owner(tag: String) -> AccessoryOwner? {
        let parts = tag.split(separator: "/", maxSplits: 1).map(String.init)
        guard let uid = parts.first.flatMap(UInt32.init) else { return nil }
        return AccessoryOwner(uid: uid, profileID: "", application: parts.count == 2 ? parts[1] : nil)
    }

    /// Refuses a new configuration past the user's limit; one replacing the owner's own for the
    /// same SSID adds none.
    private func checkLimit(
        _ caller: Caller, replacing target: String, owner: String, in agent: isolated Agent
    ) async throws(CallFailure) {
        let limit = limits.configurationsPerUser
        let hostView = Caller(connection: caller.connection, uid: caller.uid, application: .host)
        let users = try await configurations(of: hostView, in: agent)
        guard !users.contains(where: { $0.owner == owner && $0.ssid.notation == target }) else { return }
        let advice = "remove one with RemoveConfiguration ('accessoryctl forget --ssid SSID') first"
        guard users.count < limit else {
            throw CallFailure(
                AgentError.limitExceeded(what: "Wi-Fi configurations of one user", limit: limit, advice: advice))
        }
        if let application = caller.ownerApplication {
            try ApplicationShare.check(
                users.count { Self.owner(of: $0)?.application == application }, of: limit,
                what: "Wi-Fi configurations", advice: advice)
        }
    }

    // MARK: Certificates

    /// Reads the request's certificate descriptors, bounded in size and time, off the agent's
    /// thread.
    private static func readCertificates(
        _ request: ConfigurationRequest, _ limits: AgentLimits
    ) async throws(CallFailure) -> [(ConfigurationRequest.Certificate, Data)] {
        var contents: [(ConfigurationRequest.Certificate, Data)] = []
        for (kind, descriptor) in request.certificateDescriptors.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let field = "configuration.eap.\(kind.rawValue)"
            switch await ClientInput.read(
                descriptor, limit: limits.certificateBytes, within: limits.clientProfileTime, name: field)
            {
            case .success(let data) where !data.isEmpty:
                contents.append((kind, data))
            case .success:
                throw CallFailure(
                    HotspotError.invalidConfiguration(.invalidEAPSettings(field: kind.rawValue, "is empty")))
            case .failure(.timedOut):
                throw CallFailure(
                    AgentError.timedOut(what: field, seconds: Int(limits.clientProfileTime.components.seconds)))
            case .failure(.input(let error)):
                throw CallFailure(
                    HotspotError.invalidConfiguration(.invalidEAPSettings(field: kind.rawValue, error.reason)))
            }
        }
        return contents
    }

    /// Writes what `readCertificates` read into a directory of its own, mode 0700, each file
    /// 0600, where NetworkManager reads it, and points the request there; `nil` when the
    /// configuration has no certificate.
    private func storeCertificates(
        _ contents: [(ConfigurationRequest.Certificate, Data)], in request: inout ConfigurationRequest
    ) throws(CallFailure) -> StoredCertificates? {
        guard !contents.isEmpty else { return nil }
        let stored = StoredCertificates(
            directory: certificateDirectory.appendingPathComponent(UUID().uuidString.lowercased()))
        do {
            try stored.write(contents)
        } catch {
            stored.remove()
            throw CallFailure(HotspotError.internal("the certificates could not be stored: \(error)"))
        }
        for (kind, _) in contents { request.setPath(stored.path(of: kind), for: kind) }
        return stored
    }

    /// Removes the certificate directories no profile of this project names any more (their
    /// configuration was removed, or deleted outside the agent). A directory younger than a
    /// minute may belong to a configuration being applied now.
    private func sweepCertificates(in agent: isolated Agent) {
        let root = certificateDirectory.path
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else { return }
        Task {
            guard
                let configured = try? await radios.hotspots().configuredHotspots(
                    cleaningUp: agent.joins.ownConnections(in: agent))
            else {
                return
            }
            let used = configured.flatMap { $0.certificatePaths ?? [] }
            for name in names {
                let path = "\(root)/\(name)"
                guard !used.contains(where: { $0.hasPrefix(path + "/") }) else { continue }
                var status = stat()
                guard lstat(path, &status) == 0, time(nil) - status.st_mtim.tv_sec > 60 else { continue }
                StoredCertificates(directory: URL(fileURLWithPath: path)).remove()
            }
        }
    }
}

/// An `ApplyConfiguration` call's arguments, read in the order they are checked.
struct ConfigurationRequest {
    /// A certificate or key passed by descriptor, by its key in `eap`.
    enum Certificate: String, CaseIterable {
        case trustedServerCertificate, clientCertificate, privateKey
    }

    private(set) var target: HotspotConfiguration.Target
    private var security: SecurityKind
    private var passphrase: Secret?
    private var eap: EAPSettings?
    private var joinOnce: Bool
    private var lifetimeInDays: Int?
    private var hidden: Bool
    let device: String?
    let restoreAfter: Duration?
    let bindToCaller: Bool
    private(set) var certificateDescriptors: [Certificate: Int32] = [:]

    private enum SecurityKind: String {
        case open, owe, wep, wpa2, wpa3, enterprise
    }

    static let keys = [
        "ssid", "ssidPrefix", "passphrase", "security", "joinOnce", "lifeTimeInDays", "hidden", "eap",
    ]
    static let eapKeys =
        [
            "supportedEAPTypes", "username", "password", "outerIdentity", "ttlsInnerAuthenticationType",
            "trustedServerNames", "tlsClientCertificateRequired", "preferredTLSVersion", "privateKeyPassword",
        ] + Certificate.allCases.map(\.rawValue)

    /// Reads and validates everything but the certificates' contents; a fault names its field
    /// (`configuration.passphrase`) with `NEHotspotConfigurationError`'s name.
    init(_ values: [String: DBusValue], options: [String: DBusValue], call: MethodCall) throws(CallFailure) {
        let reader = try CallOptions(values, known: Self.keys, prefix: "configuration")
        let optionReader = try CallOptions(options, known: ["device", "restoreAfter", "bindToCaller"])
        device = try optionReader.string("device", expected: "an interface name") { !$0.isEmpty && $0.utf8.count <= 15 }
        let seconds = try optionReader.uint32("restoreAfter", expected: "uint32 seconds") ?? 0
        restoreAfter = seconds == 0 ? nil : .seconds(Int(seconds))
        bindToCaller = try optionReader.bool("bindToCaller") ?? true
        let ssid = try reader.string("ssid", expected: "a string")
        let ssidPrefix = try reader.string("ssidPrefix", expected: "a string")
        do throws(HotspotConfigurationError) {
            target = try HotspotConfiguration.target(ssid: ssid, ssidPrefix: ssidPrefix)
        } catch {
            throw Self.refusal(error)
        }
        passphrase = try reader.string("passphrase", expected: "a string").map(Secret.init)
        joinOnce = try reader.bool("joinOnce") ?? false
        lifetimeInDays = try reader.integer("lifeTimeInDays", expected: "an integer number of days")
        hidden = try reader.bool("hidden") ?? false
        if let eapValue = reader["eap"] {
            guard let members = eapValue.members else {
                throw .invalidArguments("configuration.eap", "expected a dictionary (a{sv})")
            }
            let (settings, descriptors) = try Self.eapSettings(members, call: call)
            eap = settings
            certificateDescriptors = descriptors
        }
        do throws(CallFailure) {
            let kind = try reader.string("security", expected: "open, owe, wep, wpa2, wpa3 or enterprise") {
                SecurityKind(rawValue: $0) != nil
            }
            security =
                kind.flatMap(SecurityKind.init) ?? (eap != nil ? .enterprise : passphrase == nil ? .open : .wpa2)
            _ = try configuration()
        } catch {
            // The request owns the descriptors it took from the call: a refused one closes them,
            // or each refusal would keep some open in the agent.
            for descriptor in certificateDescriptors.values { close(descriptor) }
            throw error
        }
    }

    /// The SSID or prefix as the caller gave it, for matching a configuration it replaces.
    var ssidOrPrefix: String {
        switch target {
        case .ssid(let ssid), .ssidPrefix(let ssid): ssid.notation
        }
    }

    /// The network for people: in polkit's prompt and the journal, escaped (no control
    /// characters, no terminal sequences), a prefix followed by an ellipsis.
    var displayName: String {
        switch target {
        case .ssid(let ssid): ssid.escaped
        case .ssidPrefix(let prefix): "\(prefix.escaped)…"
        }
    }

    mutating func setPath(_ path: String, for certificate: Certificate) {
        switch certificate {
        case .trustedServerCertificate: eap?.trustedServerCertificatePaths = [path]
        case .clientCertificate: eap?.clientCertificatePath = path
        case .privateKey: eap?.privateKeyPath = path
        }
    }

    func closeDescriptors() {
        for descriptor in certificateDescriptors.values { close(descriptor) }
    }

    /// The validated configuration. Before the certificates are read, their paths are
    /// placeholders that only show which were given.
    func configuration() throws(CallFailure) -> HotspotConfiguration {
        let security: HotspotSecurity
        switch self.security {
        case .open, .owe:
            guard passphrase == nil else {
                throw Self.refusal(.invalid(field: "passphrase", "a network of security \(self.security) takes none"))
            }
            security = self.security == .open ? .open : .owe
        case .wep, .wpa2, .wpa3:
            guard let passphrase else {
                throw Self.refusal(
                    self.security == .wep
                        ? .invalidWEPPassphrase("a WEP network needs a key") : .invalidWPAPassphrase("is missing"))
            }
            security =
                self.security == .wep
                ? .wep(passphrase) : self.security == .wpa2 ? .wpa2Personal(passphrase) : .wpa3Personal(passphrase)
        case .enterprise:
            guard var eap else { throw Self.refusal(.invalidEAPSettings(field: "supportedEAPTypes", "give eap")) }
            if eap.password == nil { eap.password = passphrase }
            security = .enterprise(eap)
        }
        do {
            return try HotspotConfiguration(
                target: target, security: security, joinOnce: joinOnce, lifetimeInDays: lifetimeInDays, hidden: hidden)
        } catch {
            throw Self.refusal(error)
        }
    }

    /// The refusal of a configuration, named as `NEHotspotConfigurationError`'s case and the
    /// field as the caller spelt it.
    private static func refusal(_ error: HotspotConfigurationError) -> CallFailure {
        let field = error.field == "lifetimeInDays" ? "lifeTimeInDays" : error.field
        return CallFailure(
            name: HotspotError.invalidConfiguration(error).dbusName, message: "configuration.\(field): \(error.message)"
        )
    }

    private static func eapSettings(_ values: [String: DBusValue], call: MethodCall) throws(CallFailure)
        -> (EAPSettings, [Certificate: Int32])
    {
        let reader = try CallOptions(values, known: eapKeys, prefix: "configuration.eap")
        var descriptors: [Certificate: Int32] = [:]
        let types = reader["supportedEAPTypes"]?.elements.map { $0.int.flatMap(EAPSettings.EAPType.init(rawValue:)) }
        guard let types, !types.contains(where: { $0 == nil }) else {
            throw refusal(
                .invalidEAPSettings(
                    field: "supportedEAPTypes", "give an array of 13 (TLS), 21 (TTLS), 25 (PEAP), 43 (FAST)"))
        }
        var settings = EAPSettings(supportedEAPTypes: types.compactMap { $0 })
        settings.username = try reader.string("username", expected: "a string")
        settings.password = try reader.string("password", expected: "a string").map(Secret.init)
        settings.outerIdentity = try reader.string("outerIdentity", expected: "a string")
        settings.trustedServerNames = try reader.strings("trustedServerNames") ?? []
        settings.tlsClientCertificateRequired = try reader.bool("tlsClientCertificateRequired") ?? false
        settings.privateKeyPassword = try reader.string("privateKeyPassword", expected: "a string").map(Secret.init)
        if let inner = try reader.string(
            "ttlsInnerAuthenticationType", expected: "pap, chap, mschap, mschapv2 or eap",
            valid: { EAPSettings.TTLSInnerAuthentication(rawValue: $0) != nil })
        {
            settings.ttlsInnerAuthenticationType = EAPSettings.TTLSInnerAuthentication(rawValue: inner)!
        }
        if let version = try reader.string(
            "preferredTLSVersion", expected: "1.0, 1.1 or 1.2", valid: { EAPSettings.TLSVersion(rawValue: $0) != nil })
        {
            settings.preferredTLSVersion = EAPSettings.TLSVersion(rawValue: version)!
        }
        for certificate in Certificate.allCases {
            guard let value = reader[certificate.rawValue] else { continue }
            guard case .handle(let index) = value, let descriptor = call.takeFileDescriptor(at: Int(index)) else {
                for open in descriptors.values { close(open) }
                throw .invalidArguments(
                    "configuration.eap.\(certificate.rawValue)", "expected a file descriptor (h) the caller opened")
            }
            descriptors[certificate] = descriptor
            let placeholder = "/dev/fd/\(descriptor)"
            switch certificate {
            case .trustedServerCertificate: settings.trustedServerCertificatePaths = [placeholder]
            case .clientCertificate: settings.clientCertificatePath = placeholder
            case .privateKey: settings.privateKeyPath = placeholder
            }
        }
        return (settings, descriptors)
    }
}

/// Certificates of one configuration, in a directory of their own that only root reads.
struct StoredCertificates {
    let directory: URL

    func path(of certificate: ConfigurationRequest.Certificate) -> String {
        directory.appendingPathComponent("\(certificate.rawValue).pem").path
    }

    func write(_ contents: [(ConfigurationRequest.Certificate, Data)]) throws {
        let parent = directory.deletingLastPathComponent().path
        if mkdir(parent, 0o700) != 0 && errno != EEXIST { throw HotspotError.internal(SystemErrorText.reason(errno)) }
        guard mkdir(directory.path, 0o700) == 0 else { throw HotspotError.internal(SystemErrorText.reason(errno)) }
        for (certificate, data) in contents {
            let descriptor = open(path(of: certificate), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else { throw HotspotError.internal(SystemErrorText.reason(errno)) }
            defer { close(descriptor) }
            let written = data.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            guard written == data.count, fsync(descriptor) == 0 else {
                throw HotspotError.internal(SystemErrorText.reason(errno))
            }
        }
    }

    func remove() {
        for certificate in ConfigurationRequest.Certificate.allCases { unlink(path(of: certificate)) }
        rmdir(directory.path)
    }
}
