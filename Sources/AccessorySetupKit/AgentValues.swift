import AccessoryCore
import AgentInterface
import BusService
import DBusValues
import FoundationEssentials

/// Why an accessory session failed, with Apple's `ASError.Code`.
public struct ASError: Error, Sendable, Hashable, CustomStringConvertible {
    public typealias Code = AccessorySessionError.Code

    public var code: Code
    /// The D-Bus error name (`AgentBus.errorName("DiscoveryTimeout")`).
    public var name: String
    public var message: String
    /// The request field an `invalidRequest` is about.
    public var field: String?

    /// The error the agent named `name`; `nil` when it is not one of Apple's.
    public init?(name: String, message: String, field: String? = nil) {
        guard let code = Code.allCases.first(where: { $0.dbusName == name }) else { return nil }
        self.code = code
        self.name = name
        self.message = message
        self.field = field
    }

    /// Reads an error dictionary (`PickerDidDismiss`, `Event`); `nil` for the empty one.
    init?(dictionary value: DBusValue?) {
        guard let error = ErrorReply(value) else { return nil }
        if let known = ASError(name: error.name, message: error.message, field: error.field) {
            self = known
        } else {
            self.init(code: .unknown, name: error.name, message: error.message, field: error.field)
        }
    }

    /// An error the agent named `name`, of Apple's `code` (`unknown` for the agent's own names).
    public init(code: Code, name: String, message: String, field: String? = nil) {
        self.code = code
        self.name = name
        self.message = message
        self.field = field
    }

    public var description: String { message }
}

/// What a session tells its client, as the agent's signals say it (`ASAccessoryEvent` in Apple's
/// shape).
public struct AgentEvent: Sendable, Hashable {
    public typealias EventType = AccessoryEventType

    public var eventType: EventType
    /// The accessory added, changed or removed.
    public var accessory: AccessoryDetails?
    /// Why the picker was dismissed or the setup failed.
    public var error: ASError?
    /// The accessories an `activated` event starts with, or a `migrationComplete` adopted.
    public var migrated: [AccessoryDetails] = []
    /// What an `accessoryDiscovered` event found (with `filterDiscoveryResults`).
    public var discoveredAccessory: DiscoveredEntry?
    /// The session's object path.
    public var session: String

    /// A `Session1` signal as an event; `nil` for a signal that is not one.
    init?(signal: BusSignal) {
        guard let type = AccessoryEventType.allCases.first(where: { $0 != .unknown && $0.signalName == signal.member })
        else { return nil }
        eventType = type
        session = signal.path
        let first = signal.arguments.first
        switch type {
        case .accessoryAdded, .accessoryChanged, .accessoryRemoved: accessory = first.flatMap(AccessoryDetails.init)
        case .pickerDidDismiss, .pickerSetupFailed: error = ASError(dictionary: first)
        case .activated, .migrationComplete: migrated = AccessoryDetails.list(first)
        case .accessoryDiscovered: discoveredAccessory = first.flatMap(DiscoveredEntry.init)
        default: break
        }
    }

    /// A `Manager1.Event` signal (subscribers'); `nil` for one that does not read as an event.
    init?(managerEvent arguments: [DBusValue]) {
        guard arguments.count == 4 else { return nil }
        session = arguments[0].string ?? ""
        eventType = arguments[1].uint32.flatMap { AccessoryEventType(rawValue: Int($0)) } ?? .unknown
        accessory = AccessoryDetails(arguments[2])
        error = ASError(dictionary: arguments[3])
    }
}

/// What `JoinAccessory` answered: where the machine is now, and what it will go back to.
public struct HotspotJoinReport: Sendable, Hashable {
    public var ssid: String?
    public var device: String?
    /// The NetworkManager profile made for the join.
    public var connection: String?
    public var ipv4Address: String?
    /// The profile that was active before, which `leave` brings back.
    public var previousConnection: String?
    /// The other Wi-Fi device, which stays on its network (`keptConnection`) through the join.
    public var keptDevice: String?
    public var keptConnection: String?
    /// The whole answer, for printing as it came.
    public var json: JSONValue

    package init(_ value: DBusValue?) {
        let reply = JoinReply(value)
        ssid = reply.ssid
        device = reply.device
        connection = reply.connection
        ipv4Address = reply.ipv4Address
        previousConnection = reply.previousConnection
        keptDevice = reply.keptDevice
        keptConnection = reply.keptConnection
        json = .object((value?.members ?? [:]).mapValues(\.jsonValue))
    }
}

/// What `Leave` answered.
public struct HotspotLeaveReport: Sendable, Hashable {
    public var ssid: String?
    public var device: String?
    /// The profile brought back, or the one that did not come back.
    public var restored: String?
    public var notRestored: String?
    public var json: JSONValue

    init(_ value: DBusValue?) {
        let reply = LeaveReply(value)
        ssid = reply.ssid
        device = reply.device
        restored = reply.restored
        notRestored = reply.notRestored
        json = .object((value?.members ?? [:]).mapValues(\.jsonValue))
    }
}
