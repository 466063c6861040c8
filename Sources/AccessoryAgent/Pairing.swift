import AccessoryCore
import AgentInterface
import BluetoothPairing
import BusService
import FoundationEssentials
import GLibRuntime

/// The agent pairs through a `BluetoothPairingAgent` on its own bus connection: BlueZ asks the
/// agent of the connection that calls `Device1.Pair`, and a passkey the accessory wants typed
/// on it goes to the picker of the session setting that accessory up.
///
/// A part of the agent: it holds the bonds the agent made (`BondBook`) and the pairing agent;
/// its methods run on the agent (`isolated Agent`), whose sessions' pickers it asks.
final class Pairing {
    private var bonds: BondBook
    /// The BlueZ pairing agent on the agent's connection, from the first pairing on.
    private var pairingAgent: BluetoothPairingAgent?
    private let radios: Radios
    private let polkit: Polkit

    init(bonds: BondBook, radios: Radios, polkit: Polkit) {
        self.bonds = bonds
        self.radios = radios
        self.polkit = polkit
    }
    /// Pairs with the device through the agent's own connection, so that BlueZ asks the
    /// pairing agent, and records the bond as `use.owner`'s. A device already paired is left
    /// as it is, and used only as `requireBond` allows.
    func pair(_ address: MACAddress, for use: BondUse, in agent: isolated Agent) async throws(BluetoothError) {
        let bluetooth = try await radios.bluetooth()
        let path = try await bluetooth.devicePath(of: address)
        if await bluetooth.isPaired(address) {
            try await requireBond(of: address, for: use, in: agent)
            return
        }
        let pairingAgent = pairingAgent(in: agent)
        Journal.info("pairing: \(address)")
        try await pairingAgent.pair(address, devicePath: path)
        bonds.record(address, for: use.owner)
        Journal.notice("pairing: \(address) paired for user \(use.owner)")
    }

    /// Refuses a device BlueZ has paired for a user other than `use.owner`, or outside the
    /// agent, unless polkit lets the caller manage other users' accessories: a bond answers
    /// whoever connects, so reusing it would hand one user's accessory (and the hotspot
    /// passphrase it reveals) to another. A device not paired is left to pair.
    func requireBond(of address: MACAddress, for use: BondUse, in agent: isolated Agent) async throws(BluetoothError) {
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

    /// The pairing agent, made on the first pairing, whose questions go to the picker of the
    /// session pairing the accessory.
    private func pairingAgent(in agent: isolated Agent) -> BluetoothPairingAgent {
        if let pairingAgent { return pairingAgent }
        let made = BluetoothPairingAgent(
            bus: agent.bus, path: AgentBus.pairingAgentPath,
            show: { [weak agent] code, address in
                Journal.notice("pairing: \(address) asks the person to type a code on it")
                Task { await agent?.showPasskey(code, for: address) }
            },
            confirm: { [weak agent] code, address in
                await agent?.confirmPasskey(code, for: address) ?? false
            },
            warn: { Journal.warning($0) })
        pairingAgent = made
        return made
    }

    /// Unpairs a removed record's accessory, as Apple's removal does, where the agent paired it
    /// for the record's owner and no other record of theirs uses it; a bond of another user's,
    /// or made outside the agent, stays.
    func forgetBond(of record: AccessoryRecord, in agent: isolated Agent) async {
        guard let address = record.bluetoothIdentifier, bonds.owner(of: address) == record.owner.uid,
            !agent.records.all.contains(where: { $0.owner.uid == record.owner.uid && $0.bluetoothIdentifier == address }
            )
        else { return }
        do {
            try await radios.bluetooth().removeDevice(address)
            bonds.forget(address)
            Journal.notice("pairing: \(address) unpaired with record \(record.id), the last of uid \(record.owner.uid)")
        } catch {
            Journal.warning("pairing: \(address) could not be unpaired with record \(record.id): \(error)")
        }
    }

    /// Asks the person, through the picker of the session setting up `address`, whether the
    /// accessory shows `code`. A pick made by the kiosk policy has no person to ask: the
    /// comparison is refused, as consent cannot be skipped.
    func confirmPasskey(_ code: String, for address: MACAddress, in agent: isolated Agent) async -> Bool {
        guard let host = agent.sessions.all.first(where: { $0.session.settingUpBluetoothAddress == address }) else {
            Journal.notice("pairing: \(address) shows a number to confirm, and no session is setting it up; refused")
            return false
        }
        guard let picker = host.pickerAgent else {
            Journal.notice(
                "pairing: \(address) shows a number to confirm, and no person picks for session \(host.path); refused")
            return false
        }
        Journal.notice("pairing: \(address) shows a number; the picker asks the person to compare it")
        do {
            try await agent.clients.call(
                destination: picker.connection, path: picker.path, interface: AgentBus.Interface.pickerAgent.name,
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
    func showPasskey(_ code: String, for address: MACAddress, in agent: isolated Agent) {
        for host in agent.sessions.all {
            guard let picker = host.pickerAgent, host.session.settingUpBluetoothAddress == address else { continue }
            agent.pickers.send(
                picker, .setupProgress,
                [.objectPath(host.path), .string("pairing"), .vardict([("passkey", .string(code))])], in: agent)
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
