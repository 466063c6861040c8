import FoundationEssentials

/// Bluetooth LE as the agent uses it: discovery for the picker, pairing, bringing up an
/// accessory's classic profiles, and the Bluetooth-to-Wi-Fi hotspot handoff. The BlueZ backend
/// implements it; the agent sees only this.
public protocol BluetoothManaging: Sendable {
    /// Starts LE discovery for `descriptors` (every device when empty) and streams what they
    /// match. Ending the stream stops the discovery.
    func discover(_ descriptors: [DiscoveryDescriptor]) async throws(BluetoothError) -> AsyncStream<BLEDiscoveryEvent>
    /// The device already known at `address`, as an advertisement; `nil` when none is.
    func knownDevice(_ address: MACAddress) async -> BLEAdvertisement?
    func isPaired(_ address: MACAddress) async -> Bool
    /// The backend's name for the device at `address` (BlueZ's object path), looking for the
    /// device when it is not known yet: a pairing agent pairs with it by this name.
    func devicePath(of address: MACAddress) async throws(BluetoothError) -> String
    /// Abandons a pairing in progress.
    func cancelPairing(_ address: MACAddress) async throws(BluetoothError)
    /// Brings up the device's classic profiles, for transport bridging.
    func connectProfiles(_ address: MACAddress) async throws(BluetoothError)
    /// Has the accessory switch its hotspot on and reveal it; `pair` pairs with the accessory
    /// where its handoff requires pairing.
    func revealHotspot(
        _ address: MACAddress, handoff: BluetoothHandoff,
        pair: @escaping @Sendable (MACAddress) async throws(BluetoothError) -> Void
    ) async throws(HotspotHandoffError) -> RevealedHotspot
    /// Has the accessory switch its hotspot off; nothing for a handoff without `switchOff`.
    func switchHotspotOff(
        _ address: MACAddress, handoff: BluetoothHandoff,
        pair: @escaping @Sendable (MACAddress) async throws(BluetoothError) -> Void
    ) async throws(HotspotHandoffError)
}
