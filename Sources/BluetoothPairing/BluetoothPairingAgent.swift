import AccessoryCore
import BlueZBackend
import BusService
import DBusValues
import FoundationEssentials

/// A BlueZ pairing agent (`org.bluez.Agent1`, capability `DisplayYesNo`) exported on a bus
/// connection, pairing over that same connection: BlueZ asks the agent of the connection that
/// called `Device1.Pair`. Just Works is accepted for the device being paired (the person picked
/// it), a code the accessory asks the person to type on it goes to `show`, a number both sides
/// show (numeric comparison) goes to `confirm` and pairs only if the person confirms it, and a
/// code the accessory would want typed into this machine is refused, as is any question about
/// another device or from anyone but BlueZ.
///
/// The agent and `accessoryctl handoff` each pair through one of these; whoever owns the
/// connection routes the `org.bluez.Agent1` calls at `path` to `answer(_:)`.
public actor BluetoothPairingAgent {
    static let interfaceXML = """
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

    public nonisolated let path: String
    private let bus: BusConnection
    private let show: @Sendable (_ code: String, _ address: MACAddress) -> Void
    private let confirm: @Sendable (_ code: String, _ address: MACAddress) async -> Bool
    private let warn: @Sendable (String) -> Void
    private var exported: ExportedObject?
    /// BlueZ's device paths being paired now; questions about others are refused.
    private var pairing: [String: MACAddress] = [:]
    /// What a device being paired asked for and was refused, by device path: the pairing's
    /// failure says it rather than BlueZ's bare `AuthenticationRejected`.
    private var refused: [String: String] = [:]
    /// The number a device being paired showed and the person did not confirm, by device path.
    private var unconfirmed: [String: String] = [:]

    /// `show` gets the code to type on the accessory; `confirm`, the number the accessory
    /// shows, answering whether the person saw the same (without a person to ask: no);
    /// `warn`, what went wrong but did not stop the pairing.
    public init(
        bus: BusConnection, path: String, show: @escaping @Sendable (_ code: String, _ address: MACAddress) -> Void,
        confirm: @escaping @Sendable (_ code: String, _ address: MACAddress) async -> Bool,
        warn: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.bus = bus
        self.path = path
        self.show = show
        self.confirm = confirm
        self.warn = warn
    }

    /// Pairs with the device at BlueZ's `devicePath`, registering the agent with BlueZ first.
    public func pair(_ address: MACAddress, devicePath: String, timeout: Duration = .seconds(60))
        async throws(BluetoothError)
    {
        do {
            try await register()
        } catch {
            // BlueZ then pairs as NoInputNoOutput: Just Works still succeeds.
            warn("pairing: the pairing agent could not be registered with BlueZ: \(error)")
        }
        pairing[devicePath] = address
        defer {
            pairing[devicePath] = nil
            refused[devicePath] = nil
            unconfirmed[devicePath] = nil
        }
        do {
            try await bus.call(
                destination: "org.bluez", path: devicePath, interface: "org.bluez.Device1", method: "Pair",
                timeout: timeout)
        } catch let error where error.name == "org.bluez.Error.AlreadyExists" {
            // Paired meanwhile.
        } catch let error where error.isTimeout {
            throw .timedOut("pairing with \(address)", seconds: Int(timeout.components.seconds))
        } catch {
            if let code = unconfirmed[devicePath] {
                throw .notAuthorized("the person did not confirm that \(address) shows \(code); nothing was paired")
            }
            if let question = refused[devicePath] {
                throw .notSupported(
                    """
                    \(address) asked for a code to be typed into this machine (\(question)), which accessory-setup \
                    cannot ask for; pair it once with 'bluetoothctl pair \(address)' and try again
                    """)
            }
            throw BluetoothError(bluezErrorName: error.name, message: error.message)
        }
    }

    private func register() async throws(BusError) {
        guard exported == nil else { return }
        let object = try ExportedObject(path: path, interface: "org.bluez.Agent1", xml: Self.interfaceXML)
        let calls = try await bus.export(object)
        Task { for await call in calls { await self.answer(call) } }
        do {
            try await bus.call(
                destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1",
                method: "RegisterAgent",
                [.objectPath(path), .string("DisplayYesNo")], timeout: .seconds(10))
        } catch let error where error.name == "org.bluez.Error.AlreadyExists" {
            // Registered before BlueZ restarted, say.
        } catch {
            await bus.unexport(object)
            throw error
        }
        exported = object
    }

    /// Answers one of BlueZ's questions.
    public func answer(_ call: MethodCall) async {
        do throws(Refusal) {
            call.reply(try await reply(to: call))
        } catch {
            call.reply(errorName: error.name, message: error.message)
        }
    }

    private func reply(to call: MethodCall) async throws(Refusal) -> [DBusValue] {
        let rejected = { (why: String) in Refusal(name: "org.bluez.Error.Rejected", message: why) }
        let bluez = try? await bus.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: "GetNameOwner", [.string("org.bluez")], timeout: .seconds(5)
        ).first?.string
        guard call.sender == bluez else { throw rejected("only BlueZ may ask the pairing agent") }
        switch call.member {
        case "Release":
            if let exported { await bus.unexport(exported) }
            exported = nil
            return []
        case "Cancel":
            return []
        default:
            break
        }
        guard let path = call.arguments.first?.string, let address = pairing[path] else {
            throw rejected("accessory-setup is not pairing with that device")
        }
        switch call.member {
        case "RequestAuthorization", "AuthorizeService":
            // Just Works: the person chose this accessory.
            return []
        case "RequestConfirmation":
            // Numeric comparison: only the person can tell that both sides show the same number.
            let code = Self.passkeyDigits(call.arguments.count > 1 ? call.arguments[1].int ?? 0 : 0)
            guard await confirm(code, address) else {
                unconfirmed[path] = code
                throw rejected("the person did not confirm the number \(address) shows")
            }
            return []
        case "DisplayPasskey", "DisplayPinCode":
            let code =
                call.member == "DisplayPasskey"
                ? Self.passkeyDigits(call.arguments.count > 1 ? call.arguments[1].int ?? 0 : 0)
                : call.arguments.count > 1 ? call.arguments[1].string ?? "" : ""
            show(code, address)
            return []
        default:
            refused[path] = call.member
            throw rejected("\(address) wants a code typed into this machine, which accessory-setup cannot ask for")
        }
    }

    /// An answer BlueZ gets as a D-Bus error.
    private struct Refusal: Error {
        let name: String
        let message: String
    }

    /// A BlueZ passkey (0 to 999999) as the six digits the accessory shows.
    static func passkeyDigits(_ passkey: Int) -> String {
        let digits = String(passkey)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }
}
