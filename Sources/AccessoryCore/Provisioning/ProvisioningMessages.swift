/// `Status` of protocomm's constants: what the device says of a request.
public struct ProvisioningStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let success = ProvisioningStatus(rawValue: 0)
    public static let invalidSecScheme = ProvisioningStatus(rawValue: 1)
    public static let invalidProto = ProvisioningStatus(rawValue: 2)
    public static let tooManySessions = ProvisioningStatus(rawValue: 3)
    public static let invalidArgument = ProvisioningStatus(rawValue: 4)
    public static let internalError = ProvisioningStatus(rawValue: 5)
    public static let cryptoError = ProvisioningStatus(rawValue: 6)
    public static let invalidSession = ProvisioningStatus(rawValue: 7)

    public var description: String {
        switch self {
        case .success: "success"
        case .invalidSecScheme: "invalid security scheme"
        case .invalidProto: "invalid message"
        case .tooManySessions: "too many sessions"
        case .invalidArgument: "invalid argument"
        case .internalError: "internal error"
        case .cryptoError: "cryptography error"
        case .invalidSession: "invalid session"
        default: "status \(rawValue)"
        }
    }
}

/// The security scheme number (`SecSchemeVersion`).
public enum SecurityScheme: Int, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case sec0 = 0, sec1 = 1, sec2 = 2

    public var description: String { "security \(rawValue)" }
}

/// `SessionData`, the messages of the `prov-session` handshake, one case per oneof member.
public enum SessionMessage: Hashable, Sendable {
    case sec0Command
    case sec0Response(status: ProvisioningStatus)
    case sec1Command0(clientPublicKey: [UInt8])
    case sec1Response0(status: ProvisioningStatus, devicePublicKey: [UInt8], deviceRandom: [UInt8])
    case sec1Command1(clientVerifyData: [UInt8])
    case sec1Response1(status: ProvisioningStatus, deviceVerifyData: [UInt8])
    case sec2Command0(username: [UInt8], clientPublicKey: [UInt8])
    case sec2Response0(status: ProvisioningStatus, devicePublicKey: [UInt8], salt: [UInt8])
    case sec2Command1(clientProof: [UInt8])
    case sec2Response1(status: ProvisioningStatus, deviceProof: [UInt8], deviceNonce: [UInt8])

    public var scheme: SecurityScheme {
        switch self {
        case .sec0Command, .sec0Response: .sec0
        case .sec1Command0, .sec1Response0, .sec1Command1, .sec1Response1: .sec1
        case .sec2Command0, .sec2Response0, .sec2Command1, .sec2Response1: .sec2
        }
    }

    /// The message type (`msg`), which is also the oneof field number less 20.
    private var messageType: Int {
        switch self {
        case .sec0Command, .sec1Command0, .sec2Command0: 0
        case .sec0Response, .sec1Response0, .sec2Response0: 1
        case .sec1Command1, .sec2Command1: 2
        case .sec1Response1, .sec2Response1: 3
        }
    }

    public func encoded() -> [UInt8] {
        var writer = ProtobufWriter()
        writer.uint(2, UInt64(scheme.rawValue))
        writer.message(10 + scheme.rawValue) { payload in
            payload.uint(1, UInt64(messageType))
            payload.message(20 + messageType) { body in
                switch self {
                case .sec0Command: break
                case .sec0Response(let status):
                    body.uint(1, UInt64(status.rawValue))
                case .sec1Command0(let key):
                    body.bytes(1, key)
                case .sec1Response0(let status, let key, let random):
                    body.uint(1, UInt64(status.rawValue))
                    body.bytes(2, key)
                    body.bytes(3, random)
                case .sec1Command1(let data):
                    body.bytes(2, data)
                case .sec1Response1(let status, let data):
                    body.uint(1, UInt64(status.rawValue))
                    body.bytes(3, data)
                case .sec2Command0(let username, let key):
                    body.bytes(1, username)
                    body.bytes(2, key)
                case .sec2Response0(let status, let key, let salt):
                    body.uint(1, UInt64(status.rawValue))
                    body.bytes(2, key)
                    body.bytes(3, salt)
                case .sec2Command1(let proof):
                    body.bytes(1, proof)
                case .sec2Response1(let status, let proof, let nonce):
                    body.uint(1, UInt64(status.rawValue))
                    body.bytes(2, proof)
                    body.bytes(3, nonce)
                }
            }
        }
        return writer.bytes
    }

    /// The oneof member for message type `type`. Protocomm dispatches on the type, and encoders
    /// leave an empty member out (esp-protocomm does), so an absent member is an empty message.
    static func member(
        type: UInt64, count: Int, present: (type: Int, bytes: [UInt8])?, offset: Int, _ reader: ProtobufReader
    ) throws(ProvisioningError) -> (type: Int, bytes: [UInt8]) {
        guard type < UInt64(count) else { throw reader.malformed("its message type \(type) is unknown") }
        if let present, present.type != Int(type) {
            throw reader.malformed("its type \(type) does not match its field \(present.type + offset)")
        }
        return (Int(type), present?.bytes ?? [])
    }

    public init(decoding data: some Collection<UInt8>) throws(ProvisioningError) {
        var reader = ProtobufReader(data, message: "session message")
        var version: UInt64 = 0
        var payload: (scheme: Int, bytes: [UInt8])?
        while let (field, value) = try reader.next() {
            switch field {
            case 2: version = try value.varint(reader, field: field)
            case 10, 11, 12: payload = (field - 10, try value.bytes(reader, field: field))
            default: continue
            }
        }
        guard let payload, let scheme = SecurityScheme(rawValue: payload.scheme) else {
            throw reader.malformed("it carries no security payload")
        }
        guard version == UInt64(scheme.rawValue) else {
            throw reader.malformed("it says security \(version) but carries a security \(scheme.rawValue) payload")
        }
        var inner = ProtobufReader(payload.bytes, message: "\(scheme) message")
        var type: UInt64 = 0
        var member: (type: Int, bytes: [UInt8])?
        while let (field, value) = try inner.next() {
            switch field {
            case 1: type = try value.varint(inner, field: field)
            case 20...23: member = (field - 20, try value.bytes(inner, field: field))
            default: continue
            }
        }
        let body = try Self.member(type: type, count: scheme == .sec0 ? 2 : 4, present: member, offset: 20, inner)
        var fields = ProtobufReader(body.bytes, message: "\(scheme) message \(body.type)")
        var status = ProvisioningStatus.success
        var byField: [Int: [UInt8]] = [:]
        while let (field, value) = try fields.next() {
            if field == 1, case .varint = value {
                status = ProvisioningStatus(rawValue: try value.uint32(fields, field: field))
            } else if case .bytes(let bytes) = value {
                byField[field] = Array(bytes)
            }
        }
        let bytes = { (field: Int) in byField[field] ?? [] }
        switch (scheme, body.type) {
        case (.sec0, 0): self = .sec0Command
        case (.sec0, _): self = .sec0Response(status: status)
        case (.sec1, 0): self = .sec1Command0(clientPublicKey: bytes(1))
        case (.sec1, 1): self = .sec1Response0(status: status, devicePublicKey: bytes(2), deviceRandom: bytes(3))
        case (.sec1, 2): self = .sec1Command1(clientVerifyData: bytes(2))
        case (.sec1, _): self = .sec1Response1(status: status, deviceVerifyData: bytes(3))
        case (.sec2, 0): self = .sec2Command0(username: bytes(1), clientPublicKey: bytes(2))
        case (.sec2, 1): self = .sec2Response0(status: status, devicePublicKey: bytes(2), salt: bytes(3))
        case (.sec2, 2): self = .sec2Command1(clientProof: bytes(1))
        case (.sec2, _): self = .sec2Response1(status: status, deviceProof: bytes(2), deviceNonce: bytes(3))
        }
    }
}

/// `WifiAuthMode`: the security of a network the device sees or joined.
public struct WiFiAuthMode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let open = WiFiAuthMode(rawValue: 0)
    public static let wep = WiFiAuthMode(rawValue: 1)
    public static let wpaPSK = WiFiAuthMode(rawValue: 2)
    public static let wpa2PSK = WiFiAuthMode(rawValue: 3)
    public static let wpaWPA2PSK = WiFiAuthMode(rawValue: 4)
    public static let wpa2Enterprise = WiFiAuthMode(rawValue: 5)
    public static let wpa3PSK = WiFiAuthMode(rawValue: 6)
    public static let wpa2WPA3PSK = WiFiAuthMode(rawValue: 7)

    public var description: String {
        switch self {
        case .open: "open"
        case .wep: "wep"
        case .wpaPSK: "wpa-psk"
        case .wpa2PSK: "wpa2-psk"
        case .wpaWPA2PSK: "wpa/wpa2-psk"
        case .wpa2Enterprise: "wpa2-enterprise"
        case .wpa3PSK: "wpa3-psk"
        case .wpa2WPA3PSK: "wpa2/wpa3-psk"
        default: "auth mode \(rawValue)"
        }
    }
}

/// `WifiConnectFailedReason`: why the device could not join the network it was given.
public struct WiFiFailureReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The handshake failed: almost always a wrong passphrase.
    public static let authError = WiFiFailureReason(rawValue: 0)
    public static let networkNotFound = WiFiFailureReason(rawValue: 1)

    public var description: String {
        switch self {
        case .authError: "authentication error"
        case .networkNotFound: "network not found"
        default: "reason \(rawValue)"
        }
    }
}

/// `WifiConnectedState`: the network the device joined.
public struct WiFiConnection: Hashable, Sendable {
    public var ipv4Address: String
    public var authMode: WiFiAuthMode
    public var ssid: [UInt8]
    public var bssid: [UInt8]
    public var channel: Int32

    public init(ipv4Address: String, authMode: WiFiAuthMode, ssid: [UInt8], bssid: [UInt8], channel: Int32) {
        self.ipv4Address = ipv4Address
        self.authMode = authMode
        self.ssid = ssid
        self.bssid = bssid
        self.channel = channel
    }
}

/// The device's station state (`WifiStationState` with its oneof), read from `sta_state`
/// first: firmware may send an empty `connected` member while it is still connecting.
public enum WiFiStationState: Hashable, Sendable {
    case connected(WiFiConnection)
    /// `attemptsRemaining` when the device counts its attempts (`attempt_failed`).
    case connecting(attemptsRemaining: UInt32?)
    case disconnected
    case failed(WiFiFailureReason)
    /// A state this client does not know.
    case other(UInt32)
}

/// The network a device is to join (`CmdSetConfig`).
public struct WiFiCredentials: Hashable, Sendable {
    public var ssid: [UInt8]
    public var passphrase: Secret
    public var bssid: [UInt8]
    public var channel: Int32

    public init(ssid: [UInt8], passphrase: Secret, bssid: [UInt8] = [], channel: Int32 = 0) {
        self.ssid = ssid
        self.passphrase = passphrase
        self.bssid = bssid
        self.channel = channel
    }

    /// Checks what the device's own handler refuses with `InvalidArgument`, naming the field.
    public func validate() throws(ProvisioningError) {
        if ssid.isEmpty { throw .invalidCredentials(field: "ssid", "is empty") }
        if ssid.count >= 32 {
            throw .invalidCredentials(field: "ssid", "is \(ssid.count) bytes; ESP-IDF devices take at most 31")
        }
        let secret = passphrase.reveal().utf8.count
        if secret >= 64 {
            throw .invalidCredentials(field: "passphrase", "is \(secret) bytes; ESP-IDF devices take at most 63")
        }
        if secret > 0 && secret < 8 {
            throw .invalidCredentials(field: "passphrase", "is \(secret) bytes; a WPA passphrase has 8 to 63")
        }
        if !bssid.isEmpty && bssid.count != 6 {
            throw .invalidCredentials(field: "bssid", "is \(bssid.count) bytes, not 6")
        }
    }
}

/// `WiFiConfigPayload`, the messages of the `prov-config` endpoint.
public enum WiFiConfigMessage: Hashable, Sendable {
    case getStatusCommand
    case getStatusResponse(status: ProvisioningStatus, state: WiFiStationState)
    case setConfigCommand(WiFiCredentials)
    case setConfigResponse(status: ProvisioningStatus)
    case applyCommand
    case applyResponse(status: ProvisioningStatus)

    private var messageType: Int {
        switch self {
        case .getStatusCommand: 0
        case .getStatusResponse: 1
        case .setConfigCommand: 2
        case .setConfigResponse: 3
        case .applyCommand: 4
        case .applyResponse: 5
        }
    }

    public func encoded() -> [UInt8] {
        var writer = ProtobufWriter()
        writer.uint(1, UInt64(messageType))
        writer.message(10 + messageType) { body in
            switch self {
            case .getStatusCommand, .applyCommand: break
            case .setConfigResponse(let status), .applyResponse(let status):
                body.uint(1, UInt64(status.rawValue))
            case .setConfigCommand(let credentials):
                body.bytes(1, credentials.ssid)
                body.bytes(2, Array(credentials.passphrase.reveal().utf8))
                body.bytes(3, credentials.bssid)
                body.int32(4, credentials.channel)
            case .getStatusResponse(let status, let state):
                body.uint(1, UInt64(status.rawValue))
                switch state {
                case .connected(let connection):
                    body.message(11) { connected in
                        connected.bytes(1, Array(connection.ipv4Address.utf8))
                        connected.uint(2, UInt64(connection.authMode.rawValue))
                        connected.bytes(3, connection.ssid)
                        connected.bytes(4, connection.bssid)
                        connected.int32(5, connection.channel)
                    }
                case .connecting(let remaining):
                    body.uint(2, 1)
                    if let remaining { body.message(12) { $0.uint(1, UInt64(remaining)) } }
                case .disconnected:
                    body.uint(2, 2)
                case .failed(let reason):
                    body.uint(2, 3)
                    body.member(10, UInt64(reason.rawValue))
                case .other(let value):
                    body.uint(2, UInt64(value))
                }
            }
        }
        return writer.bytes
    }

    public init(decoding data: some Collection<UInt8>) throws(ProvisioningError) {
        var reader = ProtobufReader(data, message: "Wi-Fi config message")
        var type: UInt64 = 0
        var member: (type: Int, bytes: [UInt8])?
        while let (field, value) = try reader.next() {
            switch field {
            case 1: type = try value.varint(reader, field: field)
            case 10...15: member = (field - 10, try value.bytes(reader, field: field))
            default: continue
            }
        }
        let body = try SessionMessage.member(type: type, count: 6, present: member, offset: 10, reader)
        var fields = ProtobufReader(body.bytes, message: "Wi-Fi config message \(body.type)")
        var numbers: [Int: UInt64] = [:]
        var byField: [Int: [UInt8]] = [:]
        while let (field, value) = try fields.next() {
            switch value {
            case .varint(let number): numbers[field] = number
            case .bytes(let bytes): byField[field] = Array(bytes)
            case .fixed: continue
            }
        }
        let status = ProvisioningStatus(rawValue: UInt32(truncatingIfNeeded: numbers[1] ?? 0))
        switch body.type {
        case 0: self = .getStatusCommand
        case 1:
            self = .getStatusResponse(status: status, state: try Self.state(numbers, byField, fields))
        case 2:
            let credentials = WiFiCredentials(
                ssid: byField[1] ?? [], passphrase: Secret(String(decoding: byField[2] ?? [], as: UTF8.self)),
                bssid: byField[3] ?? [], channel: Int32(truncatingIfNeeded: numbers[4] ?? 0))
            self = .setConfigCommand(credentials)
        case 3: self = .setConfigResponse(status: status)
        case 4: self = .applyCommand
        default: self = .applyResponse(status: status)
        }
    }

    private static func state(
        _ numbers: [Int: UInt64], _ byField: [Int: [UInt8]], _ reader: ProtobufReader
    ) throws(ProvisioningError) -> WiFiStationState {
        switch numbers[2] ?? 0 {
        case 0:
            var connected = ProtobufReader(byField[11] ?? [], message: "connected state")
            var numbers: [Int: UInt64] = [:]
            var bytes: [Int: [UInt8]] = [:]
            while let (field, value) = try connected.next() {
                switch value {
                case .varint(let number): numbers[field] = number
                case .bytes(let value): bytes[field] = Array(value)
                case .fixed: continue
                }
            }
            return .connected(
                WiFiConnection(
                    ipv4Address: String(decoding: bytes[1] ?? [], as: UTF8.self),
                    authMode: WiFiAuthMode(rawValue: UInt32(truncatingIfNeeded: numbers[2] ?? 0)),
                    ssid: bytes[3] ?? [], bssid: bytes[4] ?? [], channel: Int32(truncatingIfNeeded: numbers[5] ?? 0)))
        case 1:
            guard let attempt = byField[12] else { return .connecting(attemptsRemaining: nil) }
            var failed = ProtobufReader(attempt, message: "attempt-failed state")
            var remaining: UInt32 = 0
            while let (field, value) = try failed.next() {
                if field == 1 { remaining = try value.uint32(failed, field: field) }
            }
            return .connecting(attemptsRemaining: remaining)
        case 2:
            return .disconnected
        case 3:
            return .failed(WiFiFailureReason(rawValue: UInt32(truncatingIfNeeded: numbers[10] ?? 0)))
        case let value:
            return .other(UInt32(truncatingIfNeeded: value))
        }
    }
}

/// One network of the device's own scan (`WiFiScanResult`).
public struct WiFiScanResult: Hashable, Sendable {
    public var ssid: [UInt8]
    public var channel: UInt32
    public var rssi: Int32
    public var bssid: [UInt8]
    public var auth: WiFiAuthMode

    public init(ssid: [UInt8], channel: UInt32, rssi: Int32, bssid: [UInt8], auth: WiFiAuthMode) {
        self.ssid = ssid
        self.channel = channel
        self.rssi = rssi
        self.bssid = bssid
        self.auth = auth
    }
}

/// `WiFiScanPayload`, the messages of the `prov-scan` endpoint.
public enum WiFiScanMessage: Hashable, Sendable {
    case startCommand(blocking: Bool, passive: Bool, groupChannels: UInt32, periodMilliseconds: UInt32)
    case startResponse
    case statusCommand
    case statusResponse(finished: Bool, resultCount: UInt32)
    case resultCommand(startIndex: UInt32, count: UInt32)
    case resultResponse([WiFiScanResult])

    private var messageType: Int {
        switch self {
        case .startCommand: 0
        case .startResponse: 1
        case .statusCommand: 2
        case .statusResponse: 3
        case .resultCommand: 4
        case .resultResponse: 5
        }
    }

    /// The payload with the device's `status` (left at success in commands).
    public func encoded(status: ProvisioningStatus = .success) -> [UInt8] {
        var writer = ProtobufWriter()
        writer.uint(1, UInt64(messageType))
        writer.uint(2, UInt64(status.rawValue))
        writer.message(10 + messageType) { body in
            switch self {
            case .startResponse, .statusCommand: break
            case .startCommand(let blocking, let passive, let group, let period):
                body.bool(1, blocking)
                body.bool(2, passive)
                body.uint(3, UInt64(group))
                body.uint(4, UInt64(period))
            case .statusResponse(let finished, let count):
                body.bool(1, finished)
                body.uint(2, UInt64(count))
            case .resultCommand(let start, let count):
                body.uint(1, UInt64(start))
                body.uint(2, UInt64(count))
            case .resultResponse(let entries):
                for entry in entries {
                    body.message(1) { result in
                        result.bytes(1, entry.ssid)
                        result.uint(2, UInt64(entry.channel))
                        result.int32(3, entry.rssi)
                        result.bytes(4, entry.bssid)
                        result.uint(5, UInt64(entry.auth.rawValue))
                    }
                }
            }
        }
        return writer.bytes
    }

    /// The message and the device's `status`.
    public static func decode(
        _ data: some Collection<UInt8>
    ) throws(ProvisioningError) -> (message: WiFiScanMessage, status: ProvisioningStatus) {
        var reader = ProtobufReader(data, message: "Wi-Fi scan message")
        var type: UInt64 = 0
        var status = ProvisioningStatus.success
        var member: (type: Int, bytes: [UInt8])?
        while let (field, value) = try reader.next() {
            switch field {
            case 1: type = try value.varint(reader, field: field)
            case 2: status = ProvisioningStatus(rawValue: try value.uint32(reader, field: field))
            case 10...15: member = (field - 10, try value.bytes(reader, field: field))
            default: continue
            }
        }
        let body = try SessionMessage.member(type: type, count: 6, present: member, offset: 10, reader)
        var fields = ProtobufReader(body.bytes, message: "Wi-Fi scan message \(body.type)")
        var numbers: [Int: UInt64] = [:]
        var entries: [WiFiScanResult] = []
        while let (field, value) = try fields.next() {
            switch value {
            case .varint(let number): numbers[field] = number
            case .bytes(let bytes) where body.type == 5 && field == 1: entries.append(try scanResult(bytes))
            default: continue
            }
        }
        let number = { (field: Int) in UInt32(truncatingIfNeeded: numbers[field] ?? 0) }
        let message: WiFiScanMessage =
            switch body.type {
            case 0:
                .startCommand(
                    blocking: number(1) != 0, passive: number(2) != 0, groupChannels: number(3),
                    periodMilliseconds: number(4))
            case 1: .startResponse
            case 2: .statusCommand
            case 3: .statusResponse(finished: number(1) != 0, resultCount: number(2))
            case 4: .resultCommand(startIndex: number(1), count: number(2))
            default: .resultResponse(entries)
            }
        return (message, status)
    }

    private static func scanResult(_ bytes: ArraySlice<UInt8>) throws(ProvisioningError) -> WiFiScanResult {
        var reader = ProtobufReader(bytes, message: "scan result")
        var result = WiFiScanResult(ssid: [], channel: 0, rssi: 0, bssid: [], auth: .open)
        while let (field, value) = try reader.next() {
            switch field {
            case 1: result.ssid = try value.bytes(reader, field: field)
            case 2: result.channel = try value.uint32(reader, field: field)
            case 3: result.rssi = try value.int32(reader, field: field)
            case 4: result.bssid = try value.bytes(reader, field: field)
            case 5: result.auth = WiFiAuthMode(rawValue: try value.uint32(reader, field: field))
            default: continue
            }
        }
        return result
    }
}
