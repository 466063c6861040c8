import FoundationEssentials

/// A Bluetooth controller as BlueZ reports it.
public struct BluetoothAdapter: Hashable, Sendable, Codable {
    /// The interface name, such as `hci0`.
    public var name: String
    public var address: String
    public var powered: Bool
    /// BlueZ's `PowerState` (`on`, `off`, `off-blocked` when rfkill blocks it, …), if reported.
    public var powerState: String?
    public var discovering: Bool

    public init(name: String, address: String, powered: Bool, powerState: String?, discovering: Bool) {
        self.name = name
        self.address = address
        self.powered = powered
        self.powerState = powerState
        self.discovering = discovering
    }
}

/// A device coming into range, changing what it advertises, or going away.
public enum BLEDiscoveryEvent: Hashable, Sendable {
    case found(BLEAdvertisement)
    case updated(BLEAdvertisement)
    case lost(MACAddress)
}

/// A GATT characteristic of a connected device. `handle` names it to the backend (BlueZ's object path).
public struct GATTCharacteristic: Hashable, Sendable {
    public var uuid: BluetoothUUID
    /// BlueZ's flags: `read`, `write`, `write-without-response`, `notify`, …
    public var flags: [String]
    public var handle: String

    public init(uuid: BluetoothUUID, flags: [String], handle: String) {
        self.uuid = uuid
        self.flags = flags
        self.handle = handle
    }
}

public struct GATTService: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var characteristics: [GATTCharacteristic]
    public var handle: String

    public init(uuid: BluetoothUUID, characteristics: [GATTCharacteristic], handle: String) {
        self.uuid = uuid
        self.characteristics = characteristics
        self.handle = handle
    }

    public func characteristic(_ uuid: BluetoothUUID) -> GATTCharacteristic? {
        characteristics.first { $0.uuid == uuid }
    }
}

/// A connected device whose services are resolved.
public struct GATTDevice: Hashable, Sendable {
    public var address: MACAddress
    public var services: [GATTService]
    public var handle: String

    public init(address: MACAddress, services: [GATTService], handle: String) {
        self.address = address
        self.services = services
        self.handle = handle
    }

    public func service(_ uuid: BluetoothUUID) -> GATTService? {
        services.first { $0.uuid == uuid }
    }
}

/// How a value is written: with a response (`request`) or without (`command`).
public enum GATTWriteType: String, Hashable, Sendable {
    case request, command
}

/// Why a Bluetooth operation failed. `code` is stable; `errorName` names it on the agent's bus.
public enum BluetoothError: Error, Hashable, Sendable, CustomStringConvertible {
    case bluezUnavailable(String)
    /// No adapter, or none with this name.
    case noAdapter(String?)
    case adapterPoweredOff(String)
    /// rfkill blocks the adapter.
    case adapterBlocked(String)
    case deviceNotFound(MACAddress)
    case serviceNotFound(BluetoothUUID)
    case characteristicNotFound(BluetoothUUID)
    /// `org.bluez.Error.NotPermitted`: the characteristic does not allow the operation.
    case notPermitted(String)
    /// `org.bluez.Error.NotAuthorized`: the device wants pairing or encryption first.
    case notAuthorized(String)
    /// `org.bluez.Error.InProgress`
    case inProgress(String)
    case notSupported(String)
    case invalidValueLength(String)
    /// `org.bluez.Error.Failed` and other BlueZ errors, with BlueZ's name and message.
    case failed(String)
    case disconnected(MACAddress)
    case timedOut(String, seconds: Int)
    case cancelled

    public var code: Int {
        switch self {
        case .bluezUnavailable: 200
        case .noAdapter: 201
        case .adapterPoweredOff: 202
        case .adapterBlocked: 203
        case .deviceNotFound: 204
        case .serviceNotFound: 205
        case .characteristicNotFound: 206
        case .notPermitted: 207
        case .notAuthorized: 208
        case .inProgress: 209
        case .notSupported: 210
        case .invalidValueLength: 211
        case .failed: 212
        case .disconnected: 213
        case .timedOut: 214
        case .cancelled: 215
        }
    }

    public var errorName: String {
        let name =
            switch self {
            case .bluezUnavailable: "BluetoothUnavailable"
            case .noAdapter: "NoAdapter"
            case .adapterPoweredOff: "AdapterPoweredOff"
            case .adapterBlocked: "AdapterBlocked"
            case .deviceNotFound: "DeviceNotFound"
            case .serviceNotFound: "ServiceNotFound"
            case .characteristicNotFound: "CharacteristicNotFound"
            case .notPermitted: "NotPermitted"
            case .notAuthorized: "NotAuthorized"
            case .inProgress: "InProgress"
            case .notSupported: "NotSupported"
            case .invalidValueLength: "InvalidValueLength"
            case .failed: "BluetoothFailed"
            case .disconnected: "Disconnected"
            case .timedOut: "TimedOut"
            case .cancelled: "Cancelled"
            }
        return name
    }

    public var description: String {
        switch self {
        case .bluezUnavailable(let reason):
            "BlueZ is not reachable (\(reason)); is bluetoothd running?"
        case .noAdapter(let name?):
            "there is no Bluetooth adapter named \(name)"
        case .noAdapter(nil):
            "there is no Bluetooth adapter"
        case .adapterPoweredOff(let name):
            "the Bluetooth adapter \(name) is off; turn it on with 'bluetoothctl power on'"
        case .adapterBlocked(let name):
            "the Bluetooth adapter \(name) is blocked by rfkill; unblock it with 'rfkill unblock bluetooth'"
        case .deviceNotFound(let address):
            "no Bluetooth device \(address) is in range; check it is advertising"
        case .serviceNotFound(let uuid):
            "the device has no GATT service \(uuid)"
        case .characteristicNotFound(let uuid):
            "the device has no GATT characteristic \(uuid)"
        case .notPermitted(let reason):
            "the device does not permit this: \(reason)"
        case .notAuthorized(let reason):
            "the device wants pairing or encryption first: \(reason)"
        case .inProgress(let reason):
            "another operation is in progress on the device: \(reason)"
        case .notSupported(let reason):
            "not supported: \(reason)"
        case .invalidValueLength(let reason):
            "the device refused the value's length: \(reason)"
        case .failed(let reason):
            "Bluetooth operation failed: \(reason)"
        case .disconnected(let address):
            "\(address) disconnected"
        case .timedOut(let what, let seconds):
            "\(what) did not finish within \(seconds) s"
        case .cancelled:
            "cancelled"
        }
    }
}
