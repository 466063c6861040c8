import AccessoryCore
import BlueZBackend
import BusService
import FoundationEssentials
import GLibRuntime

/// The agent pairs through a `BluetoothPairingAgent` on its own bus connection: BlueZ asks the
/// agent of the connection that calls `Device1.Pair`, and a passkey the accessory wants typed
/// on it goes to the picker of the session setting that accessory up.
extension Agent {
    static let pairingAgentPath = "/io/accessorysetup/bluez/agent"

    /// Pairs with the device through the agent's own connection, so that BlueZ asks the
    /// pairing agent; a device already paired is left as it is.
    func pairThroughAgent(_ address: MACAddress) async throws(BluetoothError) {
        let bluetooth = try await radios.bluetooth()
        let path = try await bluetooth.devicePath(of: address)
        if await bluetooth.isPaired(address) { return }
        let pairingAgent = self.pairingAgent ?? BluetoothPairingAgent(
            bus: bus, path: Self.pairingAgentPath,
            show: { [weak self] code, address in
                Journal.notice("pairing: \(address) asks the person to type a code on it")
                Task { await self?.showPasskey(code, for: address) }
            },
            warn: { Journal.warning($0) })
        self.pairingAgent = pairingAgent
        Journal.info("pairing: \(address)")
        try await pairingAgent.pair(address, devicePath: path)
        Journal.notice("pairing: \(address) paired")
    }

    /// Tells the picker of the session setting up `address` which code to type on the accessory.
    private func showPasskey(_ code: String, for address: MACAddress) {
        for host in sessions.values {
            guard let agent = host.pickerAgent, host.session.settingUpBluetoothAddress == address else { continue }
            send(agent, "SetupProgress", [.objectPath(host.path), .string("pairing"), .vardict([("passkey", .string(code))])])
        }
    }
}
