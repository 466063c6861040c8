import FoundationEssentials

/// Improv Wi-Fi over BLE (improv-wifi.com/ble): UUIDs, frames and their checksum, result parsing.
public enum Improv {
    public static let serviceUUID = try! BluetoothUUID("00467768-6228-2272-4663-277478268000")
    public static let stateUUID = try! BluetoothUUID("00467768-6228-2272-4663-277478268001")
    public static let errorUUID = try! BluetoothUUID("00467768-6228-2272-4663-277478268002")
    public static let rpcCommandUUID = try! BluetoothUUID("00467768-6228-2272-4663-277478268003")
    public static let rpcResultUUID = try! BluetoothUUID("00467768-6228-2272-4663-277478268004")
    public static let capabilitiesUUID = try! BluetoothUUID("00467768-6228-2272-4663-277478268005")
    /// The service data UUID `4677` carrying state and capabilities in advertisements (spec 2.0).
    public static let serviceDataUUID = BluetoothUUID(assigned: 0x4677)
    /// The spec asks clients to split writes into packets of this size.
    public static let packetSize = 20

    /// The sum of the bytes, keeping the low byte.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt8 {
        bytes.reduce(0) { $0 &+ $1 }
    }

    /// `[command, length, data…, checksum]`.
    public static func frame(_ command: ImprovCommand, data: [UInt8] = []) throws(ImprovError) -> [UInt8] {
        guard data.count <= 255 else {
            throw .invalidRequest("the RPC data is \(data.count) bytes; at most 255 fit in a frame")
        }
        let body = [command.rawValue, UInt8(data.count)] + data
        return body + [checksum(body)]
    }

    /// The "send Wi-Fi settings" frame: `[ssid length][ssid][passphrase length][passphrase]`.
    public static func wifiSettingsFrame(ssid: SSID, passphrase: Secret) throws(ImprovError) -> [UInt8] {
        let secret = Array(passphrase.reveal().utf8)
        guard secret.count <= 255 - 2 - ssid.count else {
            throw .invalidRequest("the passphrase is \(secret.count) bytes; with the SSID it must fit in 253")
        }
        return try frame(.sendWiFiSettings, data: [UInt8(ssid.count)] + ssid.bytes + [UInt8(secret.count)] + secret)
    }

    /// A frame cut into packets of at most `size` bytes, written one after the other.
    public static func packets(_ frame: [UInt8], size: Int = packetSize) -> [[UInt8]] {
        stride(from: 0, to: frame.count, by: size).map { Array(frame[$0..<min($0 + size, frame.count)]) }
    }

    /// Parses a complete RPC result frame, checking its length and checksum.
    public static func parseResult(_ frame: [UInt8]) throws(ImprovError) -> ImprovRPCResult {
        guard frame.count >= 3 else { throw .malformedResponse("an RPC result of \(frame.count) bytes is too short") }
        let length = Int(frame[1])
        guard frame.count == length + 3 else {
            throw .malformedResponse("the RPC result says \(length) data bytes but carries \(frame.count - 3)")
        }
        let expected = checksum(frame.dropLast())
        guard frame[frame.count - 1] == expected else {
            throw .badChecksum(expected: expected, received: frame[frame.count - 1])
        }
        var strings: [[UInt8]] = []
        var index = 2
        let end = 2 + length
        while index < end {
            let count = Int(frame[index])
            index += 1
            guard index + count <= end else {
                throw .malformedResponse("string \(strings.count + 1) of the RPC result runs past its end")
            }
            strings.append(Array(frame[index..<index + count]))
            index += count
        }
        return ImprovRPCResult(command: ImprovCommand(rawValue: frame[0]), strings: strings)
    }
}

/// An Improv RPC command id, open to ids later versions add.
public struct ImprovCommand: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let sendWiFiSettings = ImprovCommand(rawValue: 0x01)
    public static let identify = ImprovCommand(rawValue: 0x02)
    public static let deviceInfo = ImprovCommand(rawValue: 0x03)
    public static let scanWiFi = ImprovCommand(rawValue: 0x04)

    public var description: String {
        switch self {
        case .sendWiFiSettings: "send Wi-Fi settings"
        case .identify: "identify"
        case .deviceInfo: "device info"
        case .scanWiFi: "Wi-Fi scan"
        default: "RPC 0x" + Hex.string([rawValue])
        }
    }
}

/// The current-state characteristic.
public struct ImprovState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let authorizationRequired = ImprovState(rawValue: 0x01)
    public static let authorized = ImprovState(rawValue: 0x02)
    public static let provisioning = ImprovState(rawValue: 0x03)
    public static let provisioned = ImprovState(rawValue: 0x04)

    public var description: String {
        switch self {
        case .authorizationRequired: "authorization required"
        case .authorized: "authorized"
        case .provisioning: "provisioning"
        case .provisioned: "provisioned"
        default: "state 0x" + Hex.string([rawValue])
        }
    }
}

/// The error-state characteristic; `none` clears an earlier error.
public struct ImprovErrorState: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let none = ImprovErrorState(rawValue: 0x00)
    public static let invalidRPC = ImprovErrorState(rawValue: 0x01)
    public static let unknownRPC = ImprovErrorState(rawValue: 0x02)
    public static let unableToConnect = ImprovErrorState(rawValue: 0x03)
    public static let notAuthorized = ImprovErrorState(rawValue: 0x04)
    public static let unknown = ImprovErrorState(rawValue: 0xFF)

    /// The error to throw for it; `nil` for `none`.
    public func error(for command: ImprovCommand) -> ImprovError? {
        switch self {
        case .none: nil
        case .invalidRPC: .invalidRPC(command)
        case .unknownRPC: .unknownRPC(command)
        case .unableToConnect: .unableToConnect
        case .notAuthorized: .notAuthorized
        default: .deviceError(rawValue)
        }
    }
}

/// The capabilities characteristic (and byte 2 of the service data).
public struct ImprovCapabilities: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let identify = ImprovCapabilities(rawValue: 1 << 0)
    public static let deviceInfo = ImprovCapabilities(rawValue: 1 << 1)
    public static let scanWiFi = ImprovCapabilities(rawValue: 1 << 2)
}

/// An RPC result: the command it answers and its strings, as bytes.
public struct ImprovRPCResult: Hashable, Sendable {
    public var command: ImprovCommand
    public var strings: [[UInt8]]

    public init(command: ImprovCommand, strings: [[UInt8]]) {
        self.command = command
        self.strings = strings
    }

    /// The strings decoded as UTF-8 (invalid bytes replaced).
    public var texts: [String] { strings.map { String(decoding: $0, as: UTF8.self) } }
}

/// Gathers RPC result notifications, which may arrive split, into complete frames.
public struct ImprovResultAssembler: Sendable {
    private var buffer: [UInt8] = []

    public init() {}

    /// Adds a notified value; returns the result once a whole frame is in. A value larger than
    /// GATT allows (`ImprovExchange.valueBytes`) is refused.
    public mutating func append(_ chunk: [UInt8]) throws(ImprovError) -> ImprovRPCResult? {
        guard chunk.count <= ImprovExchange.valueBytes else {
            buffer.removeAll()
            throw .malformedResponse(
                "a result value of \(chunk.count) bytes is over GATT's \(ImprovExchange.valueBytes)")
        }
        buffer += chunk
        guard buffer.count >= 2, buffer.count >= Int(buffer[1]) + 3 else { return nil }
        let frame = Array(buffer.prefix(Int(buffer[1]) + 3))
        buffer.removeAll()
        return try Improv.parseResult(frame)
    }
}

/// The device info RPC's answer.
public struct ImprovDeviceInfo: Hashable, Sendable, Codable {
    public var firmware: String
    public var version: String
    public var chip: String
    public var name: String

    public init(firmware: String, version: String, chip: String, name: String) {
        self.firmware = firmware
        self.version = version
        self.chip = chip
        self.name = name
    }

    public init(_ result: ImprovRPCResult) throws(ImprovError) {
        let texts = result.texts
        guard texts.count >= 4 else { throw .malformedResponse("device info has \(texts.count) strings, not 4") }
        self.init(firmware: texts[0], version: texts[1], chip: texts[2], name: texts[3])
    }
}

/// One network of the device's Wi-Fi scan RPC.
public struct ImprovNetwork: Hashable, Sendable {
    public var ssid: SSID
    public var rssi: Int?
    /// `WEP`, `WPA`, `WPA2` or `NO`.
    public var authentication: String

    public init(ssid: SSID, rssi: Int?, authentication: String) {
        self.ssid = ssid
        self.rssi = rssi
        self.authentication = authentication
    }

    /// The triples (SSID, RSSI, authentication) of a scan result.
    public static func list(_ result: ImprovRPCResult) throws(ImprovError) -> [ImprovNetwork] {
        guard result.strings.count % 3 == 0 else {
            throw .malformedResponse("a Wi-Fi scan result has \(result.strings.count) strings, not a multiple of 3")
        }
        var networks: [ImprovNetwork] = []
        for index in stride(from: 0, to: result.strings.count, by: 3) {
            guard let ssid = try? SSID(bytes: result.strings[index]) else {
                throw .malformedResponse("network \(index / 3 + 1) of the scan result has an SSID over 32 bytes")
            }
            let texts = result.texts
            networks.append(ImprovNetwork(ssid: ssid, rssi: Int(texts[index + 1]), authentication: texts[index + 2]))
        }
        return networks
    }
}

/// What an Improv device says in its service data `4677`.
public struct ImprovAdvertisement: Hashable, Sendable {
    public var state: ImprovState
    public var capabilities: ImprovCapabilities

    public init?(_ advertisement: BLEAdvertisement) {
        guard let data = advertisement.serviceData[Improv.serviceDataUUID], data.count >= 2 else { return nil }
        state = ImprovState(rawValue: data[0])
        capabilities = ImprovCapabilities(rawValue: data[1])
    }
}

/// Steps of provisioning, for progress output.
public enum ImprovProgress: Hashable, Sendable {
    case connecting
    /// The person has to press the device's button (or whatever it asks for).
    case awaitingAuthorization
    case authorized
    case sendingCredentials
    case provisioning
    case provisioned
}

/// Why an Improv exchange failed.
public enum ImprovError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The device reported error 0x01: it found the RPC packet malformed.
    case invalidRPC(ImprovCommand)
    /// The device reported error 0x02: it does not know the command.
    case unknownRPC(ImprovCommand)
    /// Error 0x03: the device could not join the network with the settings sent.
    case unableToConnect
    /// Error 0x04: the device is not authorized for the command.
    case notAuthorized
    /// Another error value (0xFF: unknown error).
    case deviceError(UInt8)
    case badChecksum(expected: UInt8, received: UInt8)
    case malformedResponse(String)
    case unexpectedResponse(String)
    /// The request cannot be framed (too long).
    case invalidRequest(String)
    case notImprovDevice(MACAddress)
    case unsupported(String)
    case timedOut(String, seconds: Int)
    case bluetooth(BluetoothError)

    public var code: Int {
        switch self {
        case .invalidRPC: 300
        case .unknownRPC: 301
        case .unableToConnect: 302
        case .notAuthorized: 303
        case .deviceError: 304
        case .badChecksum: 305
        case .malformedResponse: 306
        case .unexpectedResponse: 307
        case .invalidRequest: 308
        case .notImprovDevice: 309
        case .unsupported: 310
        case .timedOut: 311
        case .bluetooth(let error): error.code
        }
    }

    public var errorName: String {
        let name =
            switch self {
            case .invalidRPC: "ImprovInvalidRPC"
            case .unknownRPC: "ImprovUnknownRPC"
            case .unableToConnect: "ImprovUnableToConnect"
            case .notAuthorized: "ImprovNotAuthorized"
            case .deviceError: "ImprovDeviceError"
            case .badChecksum: "ImprovBadChecksum"
            case .malformedResponse: "ImprovMalformedResponse"
            case .unexpectedResponse: "ImprovUnexpectedResponse"
            case .invalidRequest: "ImprovInvalidRequest"
            case .notImprovDevice: "NotImprovDevice"
            case .unsupported: "ImprovUnsupported"
            case .timedOut: "TimedOut"
            case .bluetooth(let error): error.errorName
            }
        return name
    }

    public var description: String {
        switch self {
        case .invalidRPC(let command):
            "the device found the \(command) request invalid (Improv error 0x01)"
        case .unknownRPC(let command):
            "the device does not know the \(command) command (Improv error 0x02); its firmware may be older"
        case .unableToConnect:
            "the device could not join the network with these settings (Improv error 0x03); check the SSID and passphrase"
        case .notAuthorized:
            "the device is not authorized (Improv error 0x04); press its button and try again"
        case .deviceError(let value):
            "the device reported Improv error 0x\(Hex.string([value]))"
        case .badChecksum(let expected, let received):
            "the device's response has a wrong checksum (0x\(Hex.string([received])), expected 0x\(Hex.string([expected])))"
        case .malformedResponse(let reason):
            "the device's response is malformed: \(reason)"
        case .unexpectedResponse(let reason):
            "unexpected response from the device: \(reason)"
        case .invalidRequest(let reason):
            "cannot send this: \(reason)"
        case .notImprovDevice(let address):
            "\(address) has no Improv Wi-Fi service"
        case .unsupported(let what):
            "the device does not support \(what)"
        case .timedOut(let what, let seconds):
            "\(what) did not finish within \(seconds) s"
        case .bluetooth(let error):
            error.description
        }
    }
}
