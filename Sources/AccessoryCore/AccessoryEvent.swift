/// `ASAccessoryEventType`, with Apple's raw values.
public enum AccessoryEventType: Int, Hashable, Sendable, CaseIterable {
    /// Apple's placeholder for an uninitialized event; never sent.
    case unknown = 0
    case activated = 10
    case invalidated = 11
    case migrationComplete = 20
    case accessoryAdded = 30
    case accessoryRemoved = 31
    case accessoryChanged = 32
    /// Apple's header leaves this value out of its documentation; 33 is what the SDK bindings
    /// (NativeScript's typings, RoboVM's) carry.
    case accessoryDiscovered = 33
    case pickerDidPresent = 40
    case pickerDidDismiss = 50
    case pickerSetupBridging = 60
    case pickerSetupFailed = 70
    case pickerSetupPairing = 80
    case pickerSetupRename = 90

    /// Apple's name (`pickerDidPresent`); the D-Bus signal is the same with its first letter raised.
    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .activated: "activated"
        case .invalidated: "invalidated"
        case .migrationComplete: "migrationComplete"
        case .accessoryAdded: "accessoryAdded"
        case .accessoryRemoved: "accessoryRemoved"
        case .accessoryChanged: "accessoryChanged"
        case .accessoryDiscovered: "accessoryDiscovered"
        case .pickerDidPresent: "pickerDidPresent"
        case .pickerDidDismiss: "pickerDidDismiss"
        case .pickerSetupBridging: "pickerSetupBridging"
        case .pickerSetupFailed: "pickerSetupFailed"
        case .pickerSetupPairing: "pickerSetupPairing"
        case .pickerSetupRename: "pickerSetupRename"
        }
    }

    /// The agent's `Session1` signal that carries the event (`PickerDidPresent`).
    public var signalName: String { name.prefix(1).uppercased() + name.dropFirst() }
}

/// What a session tells its client: the counterpart of `ASAccessoryEvent`, each case with the
/// accessory or error it carries.
public enum AccessoryEvent: Hashable, Sendable {
    /// The first event of a session, with the accessories this client is already authorized for.
    case activated([AccessoryRecord])
    /// The last event of a session; `nil` when the client invalidated it itself.
    case invalidated(AccessorySessionError?)
    /// The accessories adopted from `MigrationDisplayItem`s.
    case migrationComplete([AccessoryRecord])
    case accessoryAdded(AccessoryRecord)
    case accessoryRemoved(AccessoryRecord)
    case accessoryChanged(AccessoryRecord)
    /// Sent instead of showing the device when the picker filters discovery results.
    case accessoryDiscovered(PickerEntry)
    case pickerDidPresent
    /// `nil` after a pick; otherwise why the picker ended without one.
    case pickerDidDismiss(AccessorySessionError?)
    case pickerSetupBridging
    case pickerSetupFailed(AccessorySessionError)
    case pickerSetupPairing
    /// The person gave the picked accessory a name of their own.
    case pickerSetupRename

    public var type: AccessoryEventType {
        switch self {
        case .activated: .activated
        case .invalidated: .invalidated
        case .migrationComplete: .migrationComplete
        case .accessoryAdded: .accessoryAdded
        case .accessoryRemoved: .accessoryRemoved
        case .accessoryChanged: .accessoryChanged
        case .accessoryDiscovered: .accessoryDiscovered
        case .pickerDidPresent: .pickerDidPresent
        case .pickerDidDismiss: .pickerDidDismiss
        case .pickerSetupBridging: .pickerSetupBridging
        case .pickerSetupFailed: .pickerSetupFailed
        case .pickerSetupPairing: .pickerSetupPairing
        case .pickerSetupRename: .pickerSetupRename
        }
    }

    /// The accessory of an `accessory…` event.
    public var accessory: AccessoryRecord? {
        switch self {
        case .accessoryAdded(let record), .accessoryRemoved(let record), .accessoryChanged(let record): record
        default: nil
        }
    }

    public var error: AccessorySessionError? {
        switch self {
        case .invalidated(let error), .pickerDidDismiss(let error): error
        case .pickerSetupFailed(let error): error
        default: nil
        }
    }
}
