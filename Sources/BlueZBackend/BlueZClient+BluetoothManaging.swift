import AccessoryCore
import FoundationEssentials

/// The agent's view of the client: the calls it makes, with the defaults it uses (the default
/// adapter and timeouts). `knownDevice`, `isPaired` and `cancelPairing` conform as they are.
extension BlueZClient: BluetoothManaging {
    public func discover(
        _ descriptors: [DiscoveryDescriptor]
    ) async throws(BluetoothError) -> AsyncStream<BLEDiscoveryEvent> {
        try await discover(descriptors, adapter: nil)
    }

    public func devicePath(of address: MACAddress) async throws(BluetoothError) -> String {
        try await devicePath(of: address, adapter: nil, timeout: .seconds(20))
    }

    public func connectProfiles(_ address: MACAddress) async throws(BluetoothError) {
        try await connectProfiles(address, adapter: nil, timeout: .seconds(30))
    }

    public func revealHotspot(
        _ address: MACAddress, handoff: BluetoothHandoff, pair: @escaping Pairer
    ) async throws(HotspotHandoffError) -> RevealedHotspot {
        try await revealHotspot(
            address, handoff: handoff, adapter: nil, timeout: .seconds(20), pair: pair, progress: { _ in })
    }

    public func switchHotspotOff(
        _ address: MACAddress, handoff: BluetoothHandoff, pair: @escaping Pairer
    ) async throws(HotspotHandoffError) {
        try await switchHotspotOff(
            address, handoff: handoff, adapter: nil, timeout: .seconds(20), pair: pair, progress: { _ in })
    }
}
