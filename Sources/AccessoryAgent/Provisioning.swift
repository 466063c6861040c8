import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials
import GLibRuntime
import ProvisioningHTTP

/// Giving an accessory the home network (`ProvisionAccessory`): ESP-IDF's unified provisioning
/// over the accessory's setup hotspot or Bluetooth LE, or Improv Wi-Fi over Bluetooth LE, as
/// the accessory's profile says.
///
/// A part of the agent: it holds the provisionings under way, each cancelled when its client
/// leaves the bus or its session ends; its methods run on the agent (`isolated Agent`).
final class Provisioning {
    private var underWay = ProvisioningTable()

    /// Cancels the provisionings of `client`, or of the session at `sessionPath`.
    func cancel(client: String? = nil, sessionPath: String? = nil) {
        underWay.cancel(client: client, sessionPath: sessionPath)
    }
    /// Provisions `record`, which the caller (running as `uid`) is authorized for, and answers
    /// with the device's verdict; each step is signalled to the caller as it happens.
    func provision(
        _ call: MethodCall, record: AccessoryRecord, uid: UInt32, host: SessionHost?, options: [String: DBusValue],
        in agent: isolated Agent
    ) async throws(CallFailure) -> DBusValue {
        var request = try Self.provisioningRequest(options)
        // A session's own profile (a client's, passed with OpenSessionWithProfile) is the one
        // its records follow; outside one, the installed profile.
        let profile: AccessoryProfile
        if let host { profile = host.session.profile } else { profile = try agent.loadProfile(record.owner.profileID) }
        let method = try Self.provisioningMethod(of: profile, record)
        if request.proofOfPossession == nil, case .espIDF(let setup) = method {
            request.proofOfPossession = suppliedProofOfPossession(for: record.id, host: host, setup, in: agent)
        }
        try refuseUnencryptedUnderKioskPolicy(profile, uid: uid, in: agent)
        try await agent.callers.require(.provision, call, uid: uid)
        let joined = agent.joins.all.first { $0.recordID == record.id }
        if let address = method.hotspotAddress {
            guard let joined else {
                throw CallFailure(
                    AccessorySessionError.invalidRequest(
                        field: "accessory",
                        reason: "its setup hotspot is not joined, and it is provisioned over it: join it first "
                            + "(JoinAccessoryHotspot)"))
            }
            try await Self.requireOnHotspot(address, joinedOn: joined.device, agent.radios)
        }
        let credentials: WiFiCredentials
        if let given = request.credentials {
            credentials = given
        } else {
            credentials = try await sharedNetwork(
                request.ssid, device: joined?.device, for: record,
                exposure: profile.provisioningExposure ?? .unencrypted,
                call, uid: uid, in: agent)
        }
        let claim = try underWay.claim(
            record.id, uid: uid, client: call.sender, sessionPath: host?.path,
            limit: agent.configuration.limits.provisioningsPerUser)
        defer { underWay.release(claim) }
        // polkit's prompts and the checks above took their time: a caller that left meanwhile,
        // or whose session ended, had nothing to cancel then, and is given nothing now.
        if let host, !agent.sessions.isOpen(host) { throw CallFailure(AccessorySessionError.invalidated) }
        guard await agent.bus.hasOwner(call.sender) else { throw CallFailure(ProvisioningError.cancelled) }

        let path = host?.path ?? AgentBus.managerPath
        let interface = host == nil ? AgentBus.Interface.manager.name : AgentBus.Interface.session.name
        let progress: @Sendable (String, [(String, DBusValue)]) -> Void = { [bus = agent.bus] step, details in
            bus.emit(
                path: path, interface: interface, signal: AgentBus.Session1.Signal.provisioningProgress.name,
                [.string(record.id.uuidString.lowercased()), .string(step), .vardict(details)], destination: call.sender
            )
        }
        let ssid = (try? SSID(bytes: credentials.ssid))?.notation ?? Hex.string(credentials.ssid)
        Journal.info("provision: record \(record.id) of uid \(uid) is given '\(ssid)' (\(call.sender))")
        let radios = agent.radios
        let work = Task { () async -> Result<ProvisioningReply, CallFailure> in
            do throws(CallFailure) {
                return .success(
                    try await Provisioning.run(
                        method, record: record, credentials: credentials, request: request, on: joined?.device,
                        radios, progress))
            } catch {
                return .failure(error)
            }
        }
        underWay.attach(work, to: claim)
        do throws(CallFailure) {
            var reply = try await work.value.get()
            reply.ssid = ssid
            Journal.notice("provision: record \(record.id) joined '\(ssid)'")
            await recordNetwork(credentials.ssid, reply: reply, of: record.id, in: agent)
            agent.locations.start(record, profile: profile, in: agent)
            if !profile.homeServices.isEmpty {
                reply.seekSeconds = UInt32(profile.homeNetworkWithin.components.seconds)
            }
            return reply.dbusValue
        } catch {
            Journal.notice("provision: record \(record.id) was not given '\(ssid)': \(error.message)")
            throw error
        }
    }

    /// A kiosk policy naming the profile and the caller may refuse that the home network's
    /// passphrase travels without encryption (`unencryptedProvisioning: false`): refused before
    /// polkit is asked or anything is sent.
    private func refuseUnencryptedUnderKioskPolicy(
        _ profile: AccessoryProfile, uid: UInt32, in agent: isolated Agent
    ) throws(CallFailure) {
        guard let exposure = profile.provisioningExposure, exposure != .encrypted,
            let policy = agent.kiosk?.policy(forProfile: profile.id, uid: uid, userName: Callers.userName(of: uid)),
            !policy.allowsUnencryptedProvisioning
        else { return }
        Journal.notice("provision: refused for uid \(uid): \(profile.id) may send the passphrase unencrypted")
        throw CallFailure(
            AccessorySessionError.invalidRequest(
                field: "accessory",
                reason: "the kiosk policy (\(agent.configuration.kioskPolicyPath)) refuses to send the home network's "
                    + "passphrase without encryption, and profile \(profile.id) would send it so"))
    }

    /// Over a setup hotspot the agent speaks only to an address on that hotspot's own network:
    /// a profile naming any other (a client's own, passed with `OpenSessionWithProfile`) would
    /// have the agent, as root, connect wherever it says, and send there the network it gives.
    private static func requireOnHotspot(_ address: String, joinedOn device: String, _ radios: Radios)
        async throws(CallFailure)
    {
        guard let host = Radios.provisioningHost(address) else {
            throw CallFailure(
                AccessorySessionError.invalidRequest(
                    field: "provisioning.address",
                    reason: "'\(address)' is not an IPv4 address with an optional port, as 192.168.4.1:80"))
        }
        let subnets: [IPv4Subnet]
        do {
            subnets = try await radios.hotspots().ipv4Subnets(device: device)
        } catch {
            throw CallFailure(error)
        }
        guard subnets.contains(where: { $0.contains(host) }) else {
            let networks = subnets.isEmpty ? "no IPv4 address yet" : subnets.map(\.description).joined(separator: ", ")
            Journal.warning("provision: refused \(address): not on the hotspot joined on \(device) (\(networks))")
            throw CallFailure(
                AccessorySessionError.invalidRequest(
                    field: "provisioning.address",
                    reason: "\(host) is not on the setup hotspot joined on \(device) (\(networks)); the agent "
                        + "provisions an accessory only at an address of its own network"))
        }
    }

    /// Records where the accessory now is, from the device's answer, and tells its owner's
    /// sessions (`AccessoryChanged`) and subscribers. A store that refuses leaves the record as
    /// it was: the provisioning itself succeeded, and the caller has the answer.
    private func recordNetwork(
        _ ssid: [UInt8], reply: ProvisioningReply, of id: UUID, in agent: isolated Agent
    ) async {
        guard let ssid = try? SSID(bytes: ssid) else { return }
        let network = AccessoryNetwork(
            ssid: ssid, ipv4Address: reply.ipv4Address, url: reply.url,
            macAddress: reply.macAddress.flatMap { try? MACAddress($0) }, joined: Date())
        do throws(CallFailure) {
            guard let changed = try agent.records.setNetwork(network, of: id) else { return }
            await agent.broadcast(.changed(changed), except: nil)
        } catch {
            Journal.warning("provision: record \(id): where it is now was not stored: \(error.message)")
        }
    }

    /// The proof of possession the person typed in the picker that picked the record (the
    /// caller's session, else the one that picked it), else the vendor's published default.
    private func suppliedProofOfPossession(
        for id: UUID, host: SessionHost?, _ setup: ProvisioningSetup, in agent: isolated Agent
    ) -> Secret? {
        let picking = host.map { [$0] } ?? agent.sessions.all
        if let typed = picking.lazy.compactMap({ $0.session.suppliedProofOfPossession(for: id) }).first {
            return typed
        }
        if case .fixed(let secret)? = setup.proofOfPossession { return secret }
        return nil
    }

    /// The network the machine stores that the accessory is given: `ssid`'s profile, else the
    /// one the machine is on (while joined to the accessory, the one it returns to). Only a
    /// profile the caller may use, and only once polkit allows sharing it by NetworkManager's
    /// own rule for reading its secret: a profile restricted to the caller alone asks the
    /// caller (share-network), any other an administrator (share-system-network). Neither is
    /// kept: every accessory and every network asks again, naming both, the application and
    /// whether the passphrase crosses the air unencrypted. A network that is not stored is
    /// said so only after polkit, so that nobody learns silently which networks are.
    private func sharedNetwork(
        _ ssid: SSID?, device: String?, for record: AccessoryRecord, exposure: NetworkShareConsent.Exposure,
        _ call: MethodCall, uid: UInt32, in agent: isolated Agent
    ) async throws(CallFailure) -> WiFiCredentials {
        let user = uid == 0 ? nil : Callers.userName(of: uid) ?? "#\(uid)"
        let lookup: Result<StoredNetwork, HotspotError>
        do {
            lookup = .success(
                try await agent.radios.hotspots().storedNetwork(ssid: ssid, device: device, permitting: user))
        } catch .notStored(let what) {
            lookup = .failure(.notStored(what))
        } catch {
            throw CallFailure(error)
        }
        let network = try? lookup.get()
        let action: PolkitAction
        if let network, network.holder != .user(user ?? "") {
            action = .shareSystemNetwork
        } else {
            action = .shareNetwork
        }
        let consent = NetworkShareConsent(
            recordID: record.id, accessory: record.displayName, network: network?.ssid ?? ssid,
            application: await agent.callers.applicationName(of: call), exposure: exposure)
        try await agent.callers.require(action, call, uid: uid, details: consent.details)
        let shared: StoredNetwork
        do { shared = try lookup.get() } catch { throw CallFailure(error) }
        Journal.notice(
            "provision: record \(record.id) of uid \(uid) is given the stored network '\(shared.ssid)' "
                + "(profile '\(shared.connectionID)', \(action.rawValue))")
        do {
            return try shared.credentials()
        } catch {
            throw CallFailure(error)
        }
    }

    /// Runs the provisioning the profile names, signalling its steps; over a setup hotspot,
    /// through `hotspotInterface` alone.
    private static func run(
        _ method: ProvisioningMethod, record: AccessoryRecord, credentials: WiFiCredentials,
        request: ProvisioningRequest, on hotspotInterface: String?, _ radios: Radios,
        _ progress: @escaping @Sendable (String, [(String, DBusValue)]) -> Void
    ) async throws(CallFailure) -> ProvisioningReply {
        switch method {
        case .espIDF(let setup):
            progress("connecting", [("transport", .string(setup.transport.rawValue))])
            do throws(ProvisioningError) {
                let (client, close) = try await radios.provisioningClient(
                    setup, hotspotInterface: hotspotInterface, bluetooth: record.bluetoothIdentifier)
                let outcome: Result<ProvisioningOutcome, ProvisioningError>
                do throws(ProvisioningError) {
                    let authentication = ProvisioningAuthentication(
                        security: setup.security, proofOfPossession: request.proofOfPossession,
                        username: setup.username, minimumSecurity: setup.minimumSecurity)
                    outcome = .success(
                        try await client.provision(
                            credentials, authentication: authentication, timeout: request.deviceTimeout
                        ) {
                            let (step, details) = Self.signalled($0)
                            progress(step, details)
                        })
                } catch {
                    outcome = .failure(error)
                }
                await close()
                let done = try outcome.get()
                return ProvisioningReply(
                    provisioningProtocol: "espIDF", version: done.version.version, security: UInt32(done.scheme),
                    ipv4Address: done.connection.ipv4Address, channel: done.connection.channel)
            } catch {
                throw CallFailure(error)
            }
        case .http(let setup):
            guard let (host, port) = HTTPProvisioningTransport.parseAddress(setup.address) else {
                throw CallFailure(
                    ProvisioningError.transport(endpoint: "connect", "'\(setup.address)' is not HOST:PORT"))
            }
            let client = HTTPSetupClient(host: host, port: port, interface: hotspotInterface)
            do throws(ProvisioningError) {
                let outcome = try await setup.run(
                    credentials, within: request.timeout,
                    send: { request, timeout throws(HTTPSetupFailure) in
                        try await client.send(request, timeout: timeout)
                    }
                ) { step in
                    switch step {
                    case .request(let name): progress("request", [("step", .string(name))])
                    case .sendingCredentials(let name): progress("sendingCredentials", [("step", .string(name))])
                    case .confirming: progress("confirming", [])
                    case .deviceLeft: progress("deviceLeft", [])
                    }
                }
                return ProvisioningReply(
                    provisioningProtocol: "http", ipv4Address: outcome.ipv4Address, confirmed: outcome.confirmed,
                    macAddress: outcome.captured["mac"].flatMap(MACAddress.init(looseText:))?.description)
            } catch {
                throw CallFailure(error)
            }
        case .improv(let address):
            do throws(ImprovError) {
                let bluetooth: any BluetoothManaging
                do { bluetooth = try await radios.bluetooth() } catch { throw .bluetooth(error) }
                let ssid: SSID
                do { ssid = try SSID(bytes: credentials.ssid) } catch { throw .invalidRequest("\(error)") }
                let url = try await bluetooth.improvProvision(
                    address, ssid: ssid, passphrase: credentials.passphrase, adapter: nil,
                    timeout: request.deviceTimeout,
                    authorizationTimeout: .seconds(120)
                ) { step in
                    switch step {
                    case .connecting: progress("connecting", [("transport", .string("bluetooth"))])
                    case .awaitingAuthorization: progress("awaitingAuthorization", [])
                    case .authorized: progress("authorized", [])
                    case .sendingCredentials: progress("sendingCredentials", [])
                    case .provisioning: progress("joining", [])
                    case .provisioned: break
                    }
                }
                return ProvisioningReply(provisioningProtocol: "improvWiFi", url: url)
            } catch {
                throw CallFailure(error)
            }
        }
    }

    /// A step's name and details on the bus.
    private static func signalled(_ step: ProvisioningStep) -> (String, [(String, DBusValue)]) {
        switch step {
        case .askingVersion:
            return ("version", [])
        case .version(let version, let scheme):
            return (
                "session",
                [
                    ("version", .string(version.version)), ("security", .uint32(UInt32(scheme))),
                    ("capabilities", .strings(version.capabilities)),
                ]
            )
        case .unencrypted:
            return ("unencrypted", [])
        case .openingSession(let scheme, _):
            return ("openingSession", [("security", .uint32(UInt32(scheme)))])
        case .sessionEstablished:
            return ("sessionEstablished", [])
        case .scanning:
            return ("scanning", [])
        case .scanned(let networks, let home):
            var details: [(String, DBusValue)] = [("networks", .uint32(UInt32(networks)))]
            if let home { details += [("rssi", .int32(home.rssi)), ("channel", .uint32(home.channel))] }
            return ("scanned", details)
        case .sendingCredentials:
            return ("sendingCredentials", [])
        case .joining(let attempts):
            return ("joining", attempts.map { [("attemptsLeft", .uint32($0))] } ?? [])
        }
    }

    /// How the profile has its accessories given a network, or why it has none.
    private static func provisioningMethod(
        of profile: AccessoryProfile, _ record: AccessoryRecord
    ) throws(CallFailure) -> ProvisioningMethod {
        if profile.handoff == .improvWiFi {
            guard profile.allowsUnencryptedProvisioning else {
                throw CallFailure(
                    AccessorySessionError.invalidRequest(
                        field: "accessory",
                        reason: "it is given the network over Improv Wi-Fi, which sends the passphrase without "
                            + "encryption, and its profile \(profile.id) does not accept that (unencryptedProvisioning)"
                    ))
            }
            guard let address = record.bluetoothIdentifier else {
                throw CallFailure(
                    AccessorySessionError.invalidRequest(
                        field: "accessory", reason: "it has no Bluetooth address to give the network over (Improv)"))
            }
            return .improv(address)
        }
        if let setup = profile.httpProvisioning { return .http(setup) }
        guard let setup = profile.provisioning else {
            throw CallFailure(
                AccessorySessionError.invalidRequest(
                    field: "accessory",
                    reason: "its profile \(profile.id) says of no way to give it a network (no provisioning section)"))
        }
        if setup.transport == .bluetooth && record.bluetoothIdentifier == nil {
            throw CallFailure(
                AccessorySessionError.invalidRequest(
                    field: "accessory",
                    reason: "it has no Bluetooth address, and its profile provisions over Bluetooth LE"))
        }
        return .espIDF(setup)
    }

    /// The call's options, each checked.
    private static func provisioningRequest(_ options: [String: DBusValue]) throws(CallFailure) -> ProvisioningRequest {
        let reader = try CallOptions(options, known: ["ssid", "passphrase", "open", "proofOfPossession", "timeout"])
        var ssid: SSID?
        if let text = try reader.string("ssid", expected: "an SSID (text, or hex: and the bytes)") {
            do { ssid = try SSID(notation: text) } catch {
                throw .invalidArguments("options.ssid", "\(error)")
            }
        }
        let passphrase = try reader.string("passphrase", expected: "a string").map(Secret.init)
        let open = try reader.bool("open") ?? false
        if open && passphrase != nil { throw .invalidArguments("options.open", "an open network takes no passphrase") }
        var credentials: WiFiCredentials?
        if passphrase != nil || open {
            guard let ssid else {
                throw .invalidArguments("options.ssid", "name the network the passphrase (or open) is for")
            }
            let given = WiFiCredentials(ssid: ssid.bytes, passphrase: passphrase ?? Secret(""))
            do throws(ProvisioningError) { try given.validate() } catch {
                throw .invalidArguments(open ? "options.ssid" : "options.passphrase", error.description)
            }
            credentials = given
        }
        let pop = try reader.string("proofOfPossession", expected: "a string") { !$0.isEmpty && $0.utf8.count <= 256 }
        let seconds = try reader.uint32("timeout", expected: "uint32 seconds")
        if let seconds, !(1...600).contains(seconds) {
            throw .invalidArguments("options.timeout", "\(seconds) is not from 1 to 600 seconds")
        }
        return ProvisioningRequest(
            ssid: ssid, credentials: credentials, proofOfPossession: pop.map(Secret.init),
            timeout: seconds.map { .seconds(Int($0)) })
    }
}

/// How an accessory is given a network.
enum ProvisioningMethod: Sendable {
    case espIDF(ProvisioningSetup)
    /// Improv Wi-Fi over Bluetooth LE, at the accessory's address.
    case improv(MACAddress)
    /// The vendor's own HTTP setup API, on the accessory's hotspot.
    case http(HTTPProvisioning)

    /// The address spoken to on the accessory's setup hotspot, for the methods that run there.
    var hotspotAddress: String? {
        switch self {
        case .espIDF(let setup): setup.transport == .softAP ? setup.address : nil
        case .http(let setup): setup.address
        case .improv: nil
        }
    }
}

/// `ProvisionAccessory`'s options.
struct ProvisioningRequest: Sendable {
    /// The network named; with no credentials, a stored one's.
    var ssid: SSID?
    /// Given by the caller: the network's SSID and passphrase (empty: open).
    var credentials: WiFiCredentials?
    var proofOfPossession: Secret?
    /// How long the whole provisioning may take, as the caller bounded it: `nil` for the
    /// protocol's own bound (`deviceTimeout` for ESP-IDF and Improv; a vendor's HTTP setup, its
    /// profile's requests and confirmation).
    var timeout: Duration?

    /// How long a device speaking ESP-IDF provisioning or Improv may take to join.
    var deviceTimeout: Duration { timeout ?? .seconds(60) }
}

/// The provisionings under way, one per record: each a task `Provisioning` cancels when its client
/// leaves the bus or its session ends.
struct ProvisioningTable {
    struct Entry {
        var uid: UInt32
        var client: String
        var sessionPath: String?
        var cancel: (@Sendable () -> Void)?
        /// Cancelled before its task was attached: the task is cancelled as it is.
        var cancelled = false
    }

    private var entries: [UUID: Entry] = [:]

    /// Claims `recordID` for a provisioning: refused while one runs for it (`Pending`), or
    /// while `uid` runs `limit` already.
    mutating func claim(
        _ recordID: UUID, uid: UInt32, client: String, sessionPath: String?, limit: Int
    ) throws(CallFailure) -> UUID {
        guard entries[recordID] == nil else {
            throw CallFailure(
                name: AgentBus.errorName("Pending"), message: "the accessory is being given a network already")
        }
        guard entries.values.filter({ $0.uid == uid }).count < limit else {
            throw CallFailure(
                AgentError.limitExceeded(
                    what: "accessories given a network at once by one user", limit: limit,
                    advice: "wait until one has finished"))
        }
        entries[recordID] = Entry(uid: uid, client: client, sessionPath: sessionPath)
        return recordID
    }

    mutating func attach<Success, Failure>(_ task: Task<Success, Failure>, to claim: UUID) {
        entries[claim]?.cancel = { task.cancel() }
        if entries[claim]?.cancelled == true { task.cancel() }
    }

    mutating func release(_ claim: UUID) {
        entries[claim] = nil
    }

    /// Cancels the provisionings of `client`, or of the session at `sessionPath`, and those
    /// claimed for them whose task is not attached yet.
    mutating func cancel(client: String? = nil, sessionPath: String? = nil) {
        for (claim, entry) in entries
        where (client != nil && entry.client == client) || (sessionPath != nil && entry.sessionPath == sessionPath) {
            entries[claim]?.cancelled = true
            entry.cancel?()
        }
    }
}
