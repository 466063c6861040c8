import AccessoryCore

/// The agent's name on the system bus, its objects, interfaces, errors and polkit actions: the
/// one place these are spelled (docs/dbus-api.md). The introspection XML is `dbus/*.xml`,
/// embedded at build time.
public enum AgentBus {
    /// The well-known name the agent owns.
    public static let name = "io.accessorysetup"
    /// The manager object (`io.accessorysetup.Manager1`).
    public static let managerPath = "/io/accessorysetup"
    /// The prefix of every error the agent replies with.
    public static let errorPrefix = "io.accessorysetup.Error."
    /// The object through which the agent answers BlueZ's pairing requests (`org.bluez.Agent1`).
    public static let pairingAgentPath = "/io/accessorysetup/bluez/agent"
    /// The `org.bluez.Agent1` object `accessoryctl handoff` registers while it pairs.
    public static let commandPairingAgentPath = "/io/accessorysetup/accessoryctl/pairing"

    /// The object of the session numbered `number`.
    public static func sessionPath(_ number: Int) -> String { "\(managerPath)/session/\(number)" }

    /// The object a picker front end exports its `PickerAgent1` at (`gtk`, or a process id).
    public static func pickerAgentPath(_ name: String) -> String { "\(managerPath)/picker/\(name)" }

    /// The D-Bus error name of an agent error named `name` (`WrongPassphrase`).
    public static func errorName(_ name: String) -> String { errorPrefix + name }

    /// The agent's interfaces.
    public enum Interface: String, Sendable, CaseIterable {
        case manager = "io.accessorysetup.Manager1"
        case session = "io.accessorysetup.Session1"
        /// Implemented by picker front ends, called by the agent.
        case pickerAgent = "io.accessorysetup.PickerAgent1"

        public var name: String { rawValue }

        /// The introspection XML, from `dbus/<name>.xml`.
        public var introspectionXML: String { InterfaceDocuments.documents["\(rawValue).xml"] ?? "" }
    }
}

/// The agent's polkit actions (packaging/polkit/io.accessorysetup.policy).
public enum PolkitAction: String, Sendable, CaseIterable {
    case openSession = "io.accessorysetup.open-session"
    case authorize = "io.accessorysetup.authorize"
    case join = "io.accessorysetup.join"
    case useClientProfile = "io.accessorysetup.use-client-profile"
    case manageOthers = "io.accessorysetup.manage-others"
    case configureKiosk = "io.accessorysetup.configure-kiosk"
    /// An application's own Wi-Fi configuration (`ApplyConfiguration`); the prompt names the SSID.
    case configureHotspot = "io.accessorysetup.configure-hotspot"
    /// Giving an accessory a Wi-Fi network to join (`ProvisionAccessory`).
    case provision = "io.accessorysetup.provision"
    /// Giving an accessory the passphrase of a network stored for the caller alone (a profile
    /// whose `connection.permissions` name only them): the caller's own password, each time.
    case shareNetwork = "io.accessorysetup.share-network"
    /// Giving an accessory the passphrase of a system profile (or one several users share),
    /// which NetworkManager shows only an administrator: an administrator's password, each time.
    case shareSystemNetwork = "io.accessorysetup.share-system-network"
}

extension NamedError {
    /// The D-Bus error name the agent replies with (`io.accessorysetup.Error.WrongPassphrase`).
    public var dbusName: String { AgentBus.errorName(errorName) }
}

extension AgentError.Code {
    public var dbusName: String { AgentBus.errorName(errorName) }
}

extension AccessorySessionError.Code {
    public var dbusName: String { AgentBus.errorName(errorName) }
}
