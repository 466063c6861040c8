import BusService
import FoundationEssentials

/// Where the agent finds its bus, its state, its profiles and its kiosk policy.
public struct AgentConfiguration: Sendable {
    /// The bus the agent serves on and owns its name on.
    public var bus: BusAddress = .system
    /// Holds `accessories.json`; root only.
    public var stateDirectory: URL
    /// Searched in order for `<id>.json`; the first holding the id wins (the administrator's
    /// directory comes before the packages').
    public var profileDirectories: [URL]
    public var kioskPolicyPath: String
    /// Exit after this long with nothing to do, to come back by D-Bus activation; `nil`: never.
    public var idleExit: Duration?
    /// NetworkManager and BlueZ are reached on this bus address; `nil`: the system bus.
    public var radioBusAddress: String?

    public static let busName = "io.accessorysetup"
    public static let managerPath = "/io/accessorysetup"
    public static let version = "0.1.0"

    /// The introspection XML of one of the agent's interfaces (`io.accessorysetup.PickerAgent1`),
    /// for front ends that implement or call it.
    public static func interfaceXML(_ interface: String) -> String? {
        InterfaceDocuments.documents["\(interface).xml"]
    }

    public init(
        stateDirectory: URL = URL(fileURLWithPath: ProcessInfo.processInfo.environment["STATE_DIRECTORY"] ?? "/var/lib/accessory-setup"),
        profileDirectories: [URL] = [
            URL(fileURLWithPath: "/etc/accessory-setup/profiles"),
            URL(fileURLWithPath: "/usr/share/accessory-setup/profiles"),
        ],
        kioskPolicyPath: String = "/etc/accessory-setup/kiosk.json",
        idleExit: Duration? = nil
    ) {
        self.stateDirectory = stateDirectory
        self.profileDirectories = profileDirectories
        self.kioskPolicyPath = kioskPolicyPath
        self.idleExit = idleExit
    }
}
