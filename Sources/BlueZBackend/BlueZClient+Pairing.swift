import AccessoryCore
import FoundationEssentials
import GLibRuntime

extension BlueZClient {
    /// The device BlueZ already knows at `address`, as an advertisement; `nil` when it knows none.
    public func knownDevice(_ address: MACAddress) -> BLEAdvertisement? {
        paths(with: Self.deviceInterface).lazy.compactMap { self.advertisement($0, adapter: nil) }.first {
            $0.address == address
        }
    }

    /// The object path of the device with `address`, looking for it when BlueZ does not know it yet.
    public func devicePath(of address: MACAddress, adapter: String? = nil, timeout: Duration = .seconds(20))
        async throws(BluetoothError) -> String
    {
        try await devicePath(address, adapter: adapter, timeout: timeout)
    }

    /// Whether BlueZ has the device paired.
    public func isPaired(_ address: MACAddress) -> Bool {
        paths(with: Self.deviceInterface).contains { path in
            advertisement(path, adapter: nil)?.address == address
                && property(path, Self.deviceInterface, "Paired")?.bool == true
        }
    }

    /// Pairs with the device (`Device1.Pair`), finding it first if BlueZ does not know it yet.
    /// A device already paired is left as it is.
    public func pair(_ address: MACAddress, adapter: String? = nil, timeout: Duration = .seconds(60))
        async throws(BluetoothError)
    {
        let path = try await devicePath(address, adapter: adapter, timeout: .seconds(20))
        guard property(path, Self.deviceInterface, "Paired")?.bool != true else { return }
        do {
            _ = try await call(path, Self.deviceInterface, "Pair", timeout: timeout)
        } catch .failed(let message) where message.hasPrefix("AlreadyExists") {
            // Paired meanwhile.
        }
    }

    /// Abandons a pairing in progress (`Device1.CancelPairing`).
    public func cancelPairing(_ address: MACAddress) async throws(BluetoothError) {
        guard
            let path = paths(with: Self.deviceInterface).first(where: {
                advertisement($0, adapter: nil)?.address == address
            })
        else {
            return
        }
        _ = try await call(path, Self.deviceInterface, "CancelPairing")
    }

    /// Forgets the device and its bond: `Adapter1.RemoveDevice` on the adapter that knows it.
    public func removeDevice(_ address: MACAddress) async throws(BluetoothError) {
        let known = paths(with: Self.deviceInterface).filter { advertisement($0, adapter: nil)?.address == address }
        for path in known {
            guard let adapter = property(path, Self.deviceInterface, "Adapter")?.string else { continue }
            _ = try await call(adapter, Self.adapterInterface, "RemoveDevice", [.objectPath(path)])
        }
    }

    /// Brings up the device's classic profiles (`Device1.Connect`), for transport bridging.
    public func connectProfiles(_ address: MACAddress, adapter: String? = nil, timeout: Duration = .seconds(30))
        async throws(BluetoothError)
    {
        let path = try await devicePath(address, adapter: adapter, timeout: .seconds(20))
        do {
            _ = try await call(path, Self.deviceInterface, "Connect", timeout: timeout)
        } catch .failed(let message) where message.hasPrefix("AlreadyConnected") {
            // Connected already.
        }
    }
}
