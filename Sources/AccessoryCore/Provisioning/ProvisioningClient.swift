/// Carries one protocomm request to an endpoint and brings back the answer: HTTP on the
/// SoftAP, or GATT. A device that refuses closes the connection: `connectionClosed`.
public protocol ProvisioningTransport: Sendable {
    func send(endpoint: ProvisioningEndpoint, _ body: [UInt8]) async throws(ProvisioningError) -> [UInt8]
}

/// The protocomm endpoint names, as in the HTTP path and the GATT user descriptions.
public struct ProvisioningEndpoint: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let version = ProvisioningEndpoint(rawValue: "proto-ver")
    public static let session = ProvisioningEndpoint(rawValue: "prov-session")
    public static let scan = ProvisioningEndpoint(rawValue: "prov-scan")
    public static let config = ProvisioningEndpoint(rawValue: "prov-config")

    public var description: String { rawValue }
}

/// ESP-IDF unified provisioning, client side: version, secure session, the device's scan,
/// the home network's credentials, apply, and the device's verdict. One client is one
/// provisioning: everything the device answers is held to `limits`, and the whole run, from
/// its first request, to one deadline.
public actor ProvisioningClient {
    private let transport: any ProvisioningTransport
    private let crypto: any ProvisioningCrypto
    private let limits: ProvisioningLimits
    private var session: ProvisioningSession?
    /// The end of the whole provisioning, set by its first request (`limits.time`).
    private var deadline: ContinuousClock.Instant?

    public init(
        transport: any ProvisioningTransport, crypto: any ProvisioningCrypto,
        limits: ProvisioningLimits = ProvisioningLimits()
    ) {
        self.transport = transport
        self.crypto = crypto
        self.limits = limits
    }

    /// `proto-ver`. The device refuses an empty body, so this sends `---` as esp_prov does.
    public func version() async throws(ProvisioningError) -> ProvisioningVersion {
        try ProvisioningVersion(parsing: try await send(.version, Array("---".utf8)))
    }

    /// Runs the handshake. `version` is what `proto-ver` said; a scheme it announces (`sec_ver`)
    /// must match. Firmware that announces none gets the scheme asked for, as esp_prov does.
    public func establishSession(_ security: ProvisioningSecurity, version: ProvisioningVersion)
        async throws(ProvisioningError)
    {
        if let announced = version.securityScheme, announced != security.scheme.rawValue {
            guard let device = SecurityScheme(rawValue: announced) else { throw .unsupportedSecurity(announced) }
            throw .securityMismatch(requested: security.scheme, device: device)
        }
        if case .sec1(nil) = security, !version.acceptsNoProofOfPossession { throw .proofOfPossessionRequired }
        let session = ProvisioningSession(
            security: security, securityPatchVersion: version.securityPatchVersion,
            crypto: crypto)
        self.session = nil
        var request: [UInt8]? = try session.start()
        while let body = request {
            let answer: [UInt8]
            do {
                answer = try await send(.session, body)
            } catch .connectionClosed where session.awaitsProofCheck {
                throw .wrongProofOfPossession(security.scheme)
            }
            request = try session.receive(answer)
        }
        self.session = session
    }

    /// The networks the device sees, read `batch` at a time (4 fits BLE's 256-byte values).
    public func scan(batch: UInt32 = 4) async throws(ProvisioningError) -> [WiFiScanResult] {
        let start = try await scanExchange(
            .startCommand(
                blocking: true, passive: false, groupChannels: 5,
                periodMilliseconds: 120), step: "the scan start")
        guard case .startResponse = start else { throw unexpected("scan start") }
        let status = try await scanExchange(.statusCommand, step: "the scan status")
        guard case .statusResponse(_, let count) = status else { throw unexpected("scan status") }
        guard count <= limits.scanResults else {
            throw .malformedMessage(
                "scan status answer", "it counts \(count) networks, more than the \(limits.scanResults) a device holds")
        }
        let batch = max(batch, 1)
        var results: [WiFiScanResult] = []
        while results.count < Int(count) {
            let next = min(batch, count - UInt32(results.count))
            let answer = try await scanExchange(
                .resultCommand(startIndex: UInt32(results.count), count: next),
                step: "the scan results")
            guard case .resultResponse(let entries) = answer, !entries.isEmpty else { throw unexpected("scan results") }
            guard entries.count <= Int(next) else {
                throw .malformedMessage(
                    "scan results answer", "it holds \(entries.count) networks where \(next) were asked for")
            }
            results += entries
        }
        return results
    }

    /// `CmdSetConfig`, after checking what the device would refuse.
    public func sendCredentials(_ credentials: WiFiCredentials) async throws(ProvisioningError) {
        try credentials.validate()
        guard case .setConfigResponse(let status) = try await configExchange(.setConfigCommand(credentials)) else {
            throw unexpected("set config")
        }
        guard status == .success else { throw .deviceStatus(step: "the Wi-Fi credentials", status) }
    }

    /// `CmdApplyConfig`: the device starts joining.
    public func apply() async throws(ProvisioningError) {
        guard case .applyResponse(let status) = try await configExchange(.applyCommand) else {
            throw unexpected("apply config")
        }
        guard status == .success else { throw .deviceStatus(step: "the apply request", status) }
    }

    /// `CmdGetStatus`.
    public func status() async throws(ProvisioningError) -> WiFiStationState {
        guard case .getStatusResponse(let status, let state) = try await configExchange(.getStatusCommand) else {
            throw unexpected("get status")
        }
        guard status == .success else { throw .deviceStatus(step: "the status request", status) }
        return state
    }

    /// Polls the status until the device is connected, or throws its reason for failing.
    public func waitForConnection(
        ssid: [UInt8], every interval: Duration, timeout: Duration,
        progress: @Sendable (WiFiStationState) -> Void = { _ in }
    ) async throws(ProvisioningError) -> WiFiConnection {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let state = try await status()
            progress(state)
            switch state {
            case .connected(let connection): return connection
            case .failed(let reason): throw .connectionFailed(ssid: ssid, reason)
            case .disconnected: throw .disconnected
            case .connecting, .other: break
            }
            guard clock.now + interval < deadline else {
                throw .timedOut("waiting for the device to join the network", seconds: Int(timeout.components.seconds))
            }
            do { try await Task.sleep(for: interval) } catch { throw .cancelled }
        }
    }

    private func exchange(_ endpoint: ProvisioningEndpoint, _ plaintext: [UInt8]) async throws(ProvisioningError)
        -> [UInt8]
    {
        guard let session else { throw .sessionNotEstablished }
        let answer = try await send(endpoint, try session.encrypt(plaintext))
        return try session.decrypt(answer)
    }

    /// One request, within the whole provisioning's deadline (the first request sets it), and
    /// an answer of at most `limits.messageBytes`. A transport ends a request it is cancelled in.
    private func send(_ endpoint: ProvisioningEndpoint, _ body: [UInt8]) async throws(ProvisioningError) -> [UInt8] {
        let clock = ContinuousClock()
        let deadline = self.deadline ?? clock.now + limits.time
        self.deadline = deadline
        let transport = self.transport
        let answer = await withTaskGroup(of: Result<[UInt8], ProvisioningError>?.self) { group in
            group.addTask {
                do throws(ProvisioningError) {
                    return .success(try await transport.send(endpoint: endpoint, body))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: clock)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let answer else {
            if Task.isCancelled { throw .cancelled }
            throw .timedOut("provisioning the device", seconds: Int(limits.time.components.seconds))
        }
        let bytes = try answer.get()
        guard bytes.count <= limits.messageBytes else {
            throw .malformedMessage(
                "\(endpoint) answer", "it is \(bytes.count) bytes, more than the \(limits.messageBytes) allowed")
        }
        return bytes
    }

    private func configExchange(_ message: WiFiConfigMessage) async throws(ProvisioningError) -> WiFiConfigMessage {
        try WiFiConfigMessage(decoding: try await exchange(.config, message.encoded()))
    }

    private func scanExchange(_ message: WiFiScanMessage, step: String) async throws(ProvisioningError)
        -> WiFiScanMessage
    {
        let (answer, status) = try WiFiScanMessage.decode(try await exchange(.scan, message.encoded()))
        guard status == .success else { throw .deviceStatus(step: step, status) }
        return answer
    }

    private func unexpected(_ step: String) -> ProvisioningError {
        .malformedMessage("\(step) answer", "it is a different message than the one asked for")
    }
}
