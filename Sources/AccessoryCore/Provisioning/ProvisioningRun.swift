/// What giving a device the home network needs besides the network: how to authenticate.
public struct ProvisioningAuthentication: Sendable {
    /// The scheme to insist on; `nil`: the one the device announces.
    public var security: Int?
    public var proofOfPossession: Secret?
    /// The security 2 username.
    public var username: String
    /// The least scheme accepted; from 1 up a proof of possession is required as well. `0`:
    /// whatever the device runs.
    public var minimumSecurity: Int

    public init(
        security: Int? = nil, proofOfPossession: Secret? = nil, username: String? = nil, minimumSecurity: Int = 0
    ) {
        self.security = security
        self.minimumSecurity = minimumSecurity
        self.proofOfPossession = proofOfPossession
        self.username = username ?? ProvisioningSecurity.defaultUsername
    }
}

/// One step of provisioning, as it happens: what `accessoryctl provision` prints and the
/// agent signals to its client.
public enum ProvisioningStep: Sendable {
    case askingVersion
    /// The device's version, and the scheme the session will use.
    case version(ProvisioningVersion, scheme: Int)
    /// Security 0 sends the passphrase in the clear; `proofIgnored`: one was given and is not sent.
    case unencrypted(proofIgnored: Bool)
    case openingSession(scheme: Int, username: String)
    case sessionEstablished
    case scanning
    /// The device's scan: how many networks it heard, and the strongest access point of the
    /// network it is given, if it heard that.
    case scanned(networks: Int, home: WiFiScanResult?)
    case sendingCredentials
    /// The device applied them and is joining; `attemptsLeft` once it says.
    case joining(attemptsLeft: UInt32?)
}

/// How provisioning ended well: the device's version, the scheme used, and where it joined.
public struct ProvisioningOutcome: Sendable {
    public var version: ProvisioningVersion
    public var scheme: Int
    public var connection: WiFiConnection
}

extension ProvisioningClient {
    /// The whole exchange: version, session, the device's scan when it offers one, the
    /// credentials, apply, and the device's verdict within `timeout`.
    public func provision(
        _ credentials: WiFiCredentials, authentication: ProvisioningAuthentication, timeout: Duration,
        progress: @escaping @Sendable (ProvisioningStep) -> Void
    ) async throws(ProvisioningError) -> ProvisioningOutcome {
        try credentials.validate()
        progress(.askingVersion)
        let version = try await version()
        let scheme = authentication.security ?? version.impliedScheme
        progress(.version(version, scheme: scheme))
        // Before any session, so that a look-alike offering less learns nothing.
        if scheme < authentication.minimumSecurity {
            throw .securityBelowMinimum(device: scheme, minimum: authentication.minimumSecurity)
        }
        if authentication.minimumSecurity > 0 && authentication.proofOfPossession == nil {
            throw .proofOfPossessionRequired
        }
        let security: ProvisioningSecurity
        switch scheme {
        case 0: security = .sec0
        case 1: security = .sec1(proofOfPossession: authentication.proofOfPossession)
        case 2:
            guard let pop = authentication.proofOfPossession else { throw .proofOfPossessionRequired }
            security = .sec2(username: authentication.username, proofOfPossession: pop)
        default: throw .unsupportedSecurity(scheme)
        }
        if scheme == 0 { progress(.unencrypted(proofIgnored: authentication.proofOfPossession != nil)) }
        progress(.openingSession(scheme: scheme, username: authentication.username))
        try await establishSession(security, version: version)
        progress(.sessionEstablished)
        if version.capabilities.contains("wifi_scan") {
            progress(.scanning)
            let networks = try await scan()
            let home = networks.filter { $0.ssid == credentials.ssid }.max { $0.rssi < $1.rssi }
            progress(.scanned(networks: networks.count, home: home))
        }
        progress(.sendingCredentials)
        try await sendCredentials(credentials)
        try await apply()
        progress(.joining(attemptsLeft: nil))
        let connection = try await waitForConnection(ssid: credentials.ssid, every: .seconds(1), timeout: timeout) {
            if case .connecting(let remaining?) = $0 { progress(.joining(attemptsLeft: remaining)) }
        }
        return ProvisioningOutcome(version: version, scheme: scheme, connection: connection)
    }
}
