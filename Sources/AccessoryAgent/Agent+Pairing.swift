import AccessoryCore
import BlueZBackend
import BusService
import FoundationEssentials
import GLibRuntime

/// The agent's BlueZ pairing agent (`org.bluez.Agent1`, capability `DisplayOnly`). BlueZ asks
/// the agent of the connection that called `Device1.Pair`, so the agent pairs over its own bus
/// connection with this agent registered there: Just Works is accepted for the accessory the
/// person picked, a passkey the accessory asks the person to type is shown by the picker, and
/// a code the accessory would want typed into this machine is refused. BlueZ's questions about
/// any other device, or from anyone but BlueZ, are refused.
extension Agent {
    static let pairingAgentPath = "/io/accessorysetup/bluez/agent"
    static let pairingAgentXML = """
        <node>
          <interface name="org.bluez.Agent1">
            <method name="Release"/>
            <method name="RequestPinCode"><arg type="o" direction="in"/><arg type="s" direction="out"/></method>
            <method name="DisplayPinCode"><arg type="o" direction="in"/><arg type="s" direction="in"/></method>
            <method name="RequestPasskey"><arg type="o" direction="in"/><arg type="u" direction="out"/></method>
            <method name="DisplayPasskey"><arg type="o" direction="in"/><arg type="u" direction="in"/><arg type="q" direction="in"/></method>
            <method name="RequestConfirmation"><arg type="o" direction="in"/><arg type="u" direction="in"/></method>
            <method name="RequestAuthorization"><arg type="o" direction="in"/></method>
            <method name="AuthorizeService"><arg type="o" direction="in"/><arg type="s" direction="in"/></method>
            <method name="Cancel"/>
          </interface>
        </node>
        """

    /// Pairs with the device through the agent's own connection, so that BlueZ asks the
    /// pairing agent; a device already paired is left as it is.
    func pairThroughAgent(_ address: MACAddress) async throws(BluetoothError) {
        let bluetooth = try await radios.bluetooth()
        let path = try await bluetooth.devicePath(of: address)
        if await bluetooth.isPaired(address) { return }
        do {
            try await registerPairingAgent()
        } catch {
            // BlueZ then pairs as NoInputNoOutput: Just Works still succeeds.
            Journal.warning("pairing: the pairing agent could not be registered with BlueZ: \(error)")
        }
        pairingDevices[path] = address
        defer { pairingDevices[path] = nil }
        Journal.info("pairing: \(address)")
        do {
            try await bus.call(destination: "org.bluez", path: path, interface: "org.bluez.Device1", method: "Pair", timeout: .seconds(60))
        } catch where error.name == "org.bluez.Error.AlreadyExists" {
            // Paired meanwhile.
        } catch where error.isTimeout {
            throw .timedOut("pairing with \(address)", seconds: 60)
        } catch {
            throw BluetoothError(bluezErrorName: error.name, message: error.message)
        }
        Journal.notice("pairing: \(address) paired")
    }

    private func registerPairingAgent() async throws(BusError) {
        guard pairingAgent == nil else { return }
        let object = try ExportedObject(path: Self.pairingAgentPath, interface: "org.bluez.Agent1", xml: Self.pairingAgentXML)
        try await bus.export(object)
        do {
            try await bus.call(
                destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1", method: "RegisterAgent",
                [.objectPath(Self.pairingAgentPath), .string("DisplayOnly")], timeout: .seconds(10))
        } catch where error.name == "org.bluez.Error.AlreadyExists" {
            // Registered before BlueZ restarted, say.
        } catch {
            await bus.unexport(object)
            throw error
        }
        pairingAgent = object
    }

    /// BlueZ's questions to the pairing agent.
    func pairingAgentCall(_ call: MethodCall) async throws(CallFailure) -> [DBusValue] {
        let rejected = { (why: String) in CallFailure(name: "org.bluez.Error.Rejected", message: why) }
        let bluez = try? await bus.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: "GetNameOwner", [.string("org.bluez")], timeout: .seconds(5)).first?.string
        guard call.sender == bluez else { throw rejected("only BlueZ may ask the pairing agent") }
        switch call.member {
        case "Release":
            if let object = pairingAgent { await bus.unexport(object) }
            pairingAgent = nil
            return []
        case "Cancel":
            Journal.info("pairing: BlueZ cancelled its question")
            return []
        default:
            break
        }
        guard let path = call.arguments.first?.string, let address = pairingDevices[path] else {
            throw rejected("accessory-setup is not pairing with that device")
        }
        switch call.member {
        case "RequestAuthorization", "RequestConfirmation", "AuthorizeService":
            // Just Works (or a confirmation BlueZ asks for it): the person picked this accessory.
            return []
        case "DisplayPasskey", "DisplayPinCode":
            let code = call.member == "DisplayPasskey"
                ? Self.passkeyDigits(call.arguments.count > 1 ? call.arguments[1].int ?? 0 : 0)
                : call.arguments.count > 1 ? call.arguments[1].string ?? "" : ""
            Journal.notice("pairing: \(address) asks the person to type a code on it")
            showPasskey(code, for: address)
            return []
        default:
            throw rejected("\(address) wants a code typed into this machine, which accessory-setup cannot ask for")
        }
    }

    /// Tells the picker of the session setting up `address` which code to type on the accessory.
    private func showPasskey(_ code: String, for address: MACAddress) {
        for host in sessions.values {
            guard let agent = host.pickerAgent, host.session.settingUpBluetoothAddress == address else { continue }
            send(agent, "SetupProgress", [.objectPath(host.path), .string("pairing"), .vardict([("passkey", .string(code))])])
        }
    }

    /// A BlueZ passkey (0 to 999999) as the six digits the accessory shows.
    static func passkeyDigits(_ passkey: Int) -> String {
        let digits = String(passkey)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }
}
