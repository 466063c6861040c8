import AccessoryCore
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
    /// How much the agent holds for its clients.
    public var limits = AgentLimits()
    /// The unit's runtime directory (`RuntimeDirectory=`), where the package's prerm leaves
    /// `upgrading` before it stops the agent for an upgrade; `nil` outside the unit.
    public var runtimeDirectory: URL? = ProcessInfo.processInfo.environment["RUNTIME_DIRECTORY"].map {
        URL(fileURLWithPath: $0)
    }

    /// Whether the agent is being stopped for an upgrade of its package: its joins then stay up
    /// for the next agent to hold, as after a crash.
    var isStoppingForUpgrade: Bool {
        guard let runtimeDirectory else { return false }
        return FileManager.default.fileExists(atPath: runtimeDirectory.appendingPathComponent("upgrading").path)
    }

    public static let version = Release.version

    public init(
        stateDirectory: URL = URL(
            fileURLWithPath: ProcessInfo.processInfo.environment["STATE_DIRECTORY"] ?? "/var/lib/accessory-setup"),
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

/// How much of the agent one client can make it hold (docs/dbus-api.md, "Limits"). A call past
/// a limit is refused with `AgentError.limitExceeded` (`LimitsExceeded`), or the bus's
/// `org.freedesktop.DBus.Error.LimitsExceeded` for arguments too large to read.
public struct AgentLimits: Sendable {
    /// Open sessions of one bus connection.
    public var sessionsPerConnection = 8
    /// Open sessions of one user, over all their connections.
    public var sessionsPerUser = 128
    /// Pickers one picker agent (a desktop session's, or a client's own) shows at once.
    public var pickersPerPickerAgent = 4
    /// Pickers of one user's sessions that picker agents were asked to show (`RequestChoice`)
    /// and have not answered, over all picker agents; `ShowPicker` is refused past it.
    public var pickerRequestsPerUser = 16
    /// Method calls the agent answers at once for one user other than root, and for all users
    /// together; a call past either is refused before anything else is done for it.
    public var callsPerUser = 32
    public var callsInFlight = 256
    /// Bytes of any one string in a method call's arguments (options included), checked before
    /// anything else is done for the call: longer than any name, path or secret the agent takes.
    public var stringBytes = 4096
    /// How long a picker agent may take to answer `RequestChoice` (a person choosing); past it
    /// the picker ends with `PickerRestricted`.
    public var pickerAnswerTime = Duration.seconds(900)
    /// polkit checks of one user's calls outstanding at once (an interactive one can wait
    /// minutes on a person); a call that would ask polkit past it is refused.
    public var polkitChecksPerUser = 8
    /// Accessory records one user keeps; `ShowPicker` is refused past it.
    public var recordsPerUser = 256
    /// Items of one `ShowPicker` or `UpdatePicker`, and items of a client's profile.
    public var itemsPerCall = 64
    /// The arguments of one method call, in bytes, checked before they are read.
    public var argumentBytes = 1 << 20
    /// A client's profile (`OpenSessionWithProfile`): its size, and how long it may take to arrive.
    public var clientProfileBytes = 1 << 20
    public var clientProfileTime = Duration.seconds(5)
    /// Wi-Fi configurations one user keeps through `ApplyConfiguration`, all applications together.
    public var configurationsPerUser = 32
    /// A certificate or key passed to `ApplyConfiguration` by descriptor: its size; it must
    /// arrive within `clientProfileTime`.
    public var certificateBytes = 64 << 10
    /// Accessories one user gives a network at once (`ProvisionAccessory`), each holding a
    /// connection to its device.
    public var provisioningsPerUser = 4

    public init() {}
}
