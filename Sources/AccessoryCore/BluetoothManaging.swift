import FoundationEssentials

/// Pairs with the accessory at an address, when a handoff needs it to be paired.
public typealias BluetoothPairer = @Sendable (MACAddress) async throws(BluetoothError) -> Void

/// Bluetooth LE as the agent and `accessoryctl`'s direct commands use it: discovery, pairing,
/// bringing up an accessory's classic profiles, the Bluetooth-to-Wi-Fi hotspot handoff and
/// Improv. The BlueZ backend implements it. `adapter` `nil` is the first adapter.
public protocol BluetoothManaging: Sendable {
    /// Starts LE discovery for `descriptors` (every device when empty) and streams what they
    /// match. Ending the stream stops the discovery.
    func discover(_ descriptors: [DiscoveryDescriptor], adapter: String?) async throws(BluetoothError)
        -> AsyncStream<BLEDiscoveryEvent>
    /// Ends every discovery this client started; their streams finish.
    func stopDiscovery() async
    /// The device already known at `address`, as an advertisement; `nil` when none is.
    func knownDevice(_ address: MACAddress) async -> BLEAdvertisement?
    func isPaired(_ address: MACAddress) async -> Bool
    /// The backend's name for the device at `address` (BlueZ's object path), looking for the
    /// device when it is not known yet: a pairing agent pairs with it by this name.
    func devicePath(of address: MACAddress, adapter: String?, timeout: Duration) async throws(BluetoothError) -> String
    /// Abandons a pairing in progress.
    func cancelPairing(_ address: MACAddress) async throws(BluetoothError)
    /// Forgets the device, its bond with it: what BlueZ knows of it goes (`RemoveDevice`). A
    /// device not known is left as it is.
    func removeDevice(_ address: MACAddress) async throws(BluetoothError)
    /// Brings up the device's classic profiles, for transport bridging.
    func connectProfiles(_ address: MACAddress, adapter: String?, timeout: Duration) async throws(BluetoothError)
    /// Has the accessory switch its hotspot on and reveal it; `pair` pairs with the accessory
    /// where its handoff requires pairing.
    func revealHotspot(
        _ address: MACAddress, handoff: BluetoothHandoff, adapter: String?, timeout: Duration, pair: BluetoothPairer?,
        progress: @escaping @Sendable (HotspotHandoffStep) -> Void
    ) async throws(HotspotHandoffError) -> RevealedHotspot
    /// Has the accessory switch its hotspot off; nothing for a handoff without `switchOff`.
    func switchHotspotOff(
        _ address: MACAddress, handoff: BluetoothHandoff, adapter: String?, timeout: Duration, pair: BluetoothPairer?,
        progress: @escaping @Sendable (HotspotHandoffStep) -> Void
    ) async throws(HotspotHandoffError)
    /// Asks an Improv device to identify itself (a blink, a sound).
    func improvIdentify(_ address: MACAddress, adapter: String?, timeout: Duration) async throws(ImprovError)
    /// Gives an Improv device a network; returns the URL it answers with, if any.
    func improvProvision(
        _ address: MACAddress, ssid: SSID, passphrase: Secret, adapter: String?, timeout: Duration,
        authorizationTimeout: Duration, progress: @escaping @Sendable (ImprovProgress) -> Void
    ) async throws(ImprovError) -> String?
}

/// The agent's defaults: the first adapter, and its timeouts.
extension BluetoothManaging {
    public func discover(_ descriptors: [DiscoveryDescriptor]) async throws(BluetoothError)
        -> AsyncStream<BLEDiscoveryEvent>
    {
        try await discover(descriptors, adapter: nil)
    }

    public func devicePath(of address: MACAddress) async throws(BluetoothError) -> String {
        try await devicePath(of: address, adapter: nil, timeout: .seconds(20))
    }

    public func connectProfiles(_ address: MACAddress) async throws(BluetoothError) {
        try await connectProfiles(address, adapter: nil, timeout: .seconds(30))
    }

    public func revealHotspot(
        _ address: MACAddress, handoff: BluetoothHandoff, pair: @escaping BluetoothPairer
    ) async throws(HotspotHandoffError) -> RevealedHotspot {
        try await revealHotspot(
            address, handoff: handoff, adapter: nil, timeout: .seconds(20), pair: pair, progress: { _ in })
    }

    public func switchHotspotOff(
        _ address: MACAddress, handoff: BluetoothHandoff, pair: @escaping BluetoothPairer
    ) async throws(HotspotHandoffError) {
        try await switchHotspotOff(
            address, handoff: handoff, adapter: nil, timeout: .seconds(20), pair: pair, progress: { _ in })
    }
}
