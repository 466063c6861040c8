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
    /// pairing agent, and records the bond as `use.owner`'s. A device already paired is left
    /// as it is, and used only as `requireBond` allows.
    func pairThroughAgent(_ address: MACAddress, for use: BondUse) async throws(BluetoothError) {
        let bluetooth = try await radios.bluetooth()
        let path = try await bluetooth.devicePath(of: address)
        if await bluetooth.isPaired(address) {
            try await requireBond(of: address, for: use)
            return
        }
        let pairingAgent = bluetoothPairingAgent
        Journal.info("pairing: \(address)")
        try await pairingAgent.pair(address, devicePath: path)
        bonds.record(address, for: use.owner)
        Journal.notice("pairing: \(address) paired for user \(use.owner)")
    }

    /// Refuses a device BlueZ has paired for a user other than `use.owner`, or outside the
    /// agent, unless polkit lets the caller manage other users' accessories: a bond answers
    /// whoever connects, so reusing it would hand one user's accessory (and the hotspot
    /// passphrase it reveals) to another. A device not paired is left to pair.
    func requireBond(of address: MACAddress, for use: BondUse) async throws(BluetoothError) {
        let bluetooth = try await radios.bluetooth()
        guard await bluetooth.isPaired(address) else {
            bonds.forget(address)
            return
        }
        let owner = bonds.owner(of: address)
        if owner == use.owner { return }
        let whose = owner.map { "user \($0)" } ?? "nobody the agent knows (it was paired outside it)"
        if let caller = use.caller,
            await polkit.check(.manageOthers, sender: caller.sender, uid: caller.uid, interactive: caller.interactive)
        {
            Journal.notice("pairing: \(address), paired for \(whose), is used for user \(use.owner) (manage-others)")
            return
        }
        Journal.notice("pairing: \(address) is paired for \(whose), not user \(use.owner); refused")
        throw .notAuthorized(
            "\(address) is paired with this machine for another user, or outside accessory-setup; using that "
                + "bond for you needs an administrator (polkit's \(PolkitAction.manageOthers.rawValue)), "
                + "or the accessory's owner removes it")
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
                method: AgentBus.PickerAgent1.Method.confirmPasskey.name, [.objectPath(host.path), .string(code)],
                timeout: .seconds(60))
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
                agent, .setupProgress,
                [.objectPath(host.path), .string("pairing"), .vardict([("passkey", .string(code))])])
        }
    }
}

/// Whose accessory a Bluetooth device is used for, and who asked: polkit is asked about the
/// caller where the device is paired for someone else.
struct BondUse: Sendable {
    struct Caller: Sendable {
        var sender: String
        var uid: UInt32
        var interactive: Bool
    }

    /// The user whose accessory it is.
    var owner: UInt32
    /// `nil` where nobody asked (a hotspot switched off as a join ends): nothing is allowed then.
    var caller: Caller?

    init(owner: UInt32, caller: Caller? = nil) {
        self.owner = owner
        self.caller = caller
    }

    /// A session's: its owner's, asked by its client.
    init(_ host: SessionHost) {
        self.init(owner: host.uid, caller: Caller(sender: host.client, uid: host.uid, interactive: true))
    }
}
