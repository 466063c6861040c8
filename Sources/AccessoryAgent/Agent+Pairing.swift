import AccessoryCore
import AgentInterface
import BluetoothPairing
import BusService
import FoundationEssentials
import GLibRuntime

/// The agent pairs through a `BluetoothPairingAgent` on its own bus connection: BlueZ asks the
/// agent of the connection that calls `Device1.Pair`, and a passkey the accessory wants typed
/// on it goes to the picker of the session setting that accessory up.
extension Agent {
    static let pairingAgentPath = AgentBus.pairingAgentPath

    /// Pairs with the device through the agent's own connection, so that BlueZ asks the
    /// pairing agent; a device already paired is left as it is.
    func pairThroughAgent(_ address: MACAddress) async throws(BluetoothError) {
        let bluetooth = try await radios.bluetooth()
        let path = try await bluetooth.devicePath(of: address)
        if await bluetooth.isPaired(address) { return }
        let pairingAgent = bluetoothPairingAgent
        Journal.info("pairing: \(address)")
        try await pairingAgent.pair(address, devicePath: path)
        Journal.notice("pairing: \(address) paired")
    }

    /// A pairing agent whose questions go to the picker of the session pairing the accessory.
    func makePairingAgent() -> BluetoothPairingAgent {
        BluetoothPairingAgent(
            bus: bus, path: Self.pairingAgentPath,
            show: { [weak self] code, address in
                Journal.notice("pairing: \(address) asks the person to type a code on it")
                Task { await self?.showPasskey(code, for: address) }
            },
            confirm: { [weak self] code, address in
                await self?.confirmPasskey(code, for: address) ?? false
            },
            warn: { Journal.warning($0) })
    }

    /// Asks the person, through the picker of the session setting up `address`, whether the
    /// accessory shows `code`. A pick made by the kiosk policy has no person to ask: the
    /// comparison is refused, as consent cannot be skipped.
    private func confirmPasskey(_ code: String, for address: MACAddress) async -> Bool {
        guard let host = sessions.all.first(where: { $0.session.settingUpBluetoothAddress == address }) else {
            Journal.notice("pairing: \(address) shows a number to confirm, and no session is setting it up; refused")
            return false
        }
        guard let agent = host.pickerAgent else {
            Journal.notice(
                "pairing: \(address) shows a number to confirm, and no person picks for session \(host.path); refused")
            return false
        }
        Journal.notice("pairing: \(address) shows a number; the picker asks the person to compare it")
        do {
            try await clients.call(
                destination: agent.connection, path: agent.path, interface: AgentBus.Interface.pickerAgent.name,
                method: "ConfirmPasskey", [.objectPath(host.path), .string(code)], timeout: .seconds(60))
            Journal.notice("pairing: the person confirmed the number \(address) shows")
            return true
        } catch {
            Journal.notice("pairing: the number \(address) shows was not confirmed: \(error)")
            return false
        }
    }

    /// Tells the picker of the session setting up `address` which code to type on the accessory.
    private func showPasskey(_ code: String, for address: MACAddress) {
        for host in sessions.all {
            guard let agent = host.pickerAgent, host.session.settingUpBluetoothAddress == address else { continue }
            send(
                agent, "SetupProgress",
                [.objectPath(host.path), .string("pairing"), .vardict([("passkey", .string(code))])])
        }
    }
}
