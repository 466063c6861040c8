/// What one ESP-IDF device can make the client hold. A device past a limit ends the run with
/// `ProvisioningError.malformedMessage` (`ProvisioningMalformedMessage`, naming the limit) or,
/// past the time, `ProvisioningError.timedOut` (`TimedOut`).
public struct ProvisioningLimits: Sendable {
    /// Networks one scan may hold: ESP-IDF's `CONFIG_WIFI_PROV_SCAN_MAX_ENTRIES` is at most 255.
    public var scanResults: UInt32 = 255
    /// The bytes of one answer: the largest ESP-IDF sends (security 2's 384-byte SRP key, a scan
    /// batch) is well under it.
    public var messageBytes = 16 << 10
    /// The whole provisioning, from the first request to the device's verdict: the join's own
    /// wait (at most 10 minutes through the agent) and the steps before it.
    public var time = Duration.seconds(900)

    public init() {}
}
