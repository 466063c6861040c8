import FoundationEssentials

/// How an accessory found over Bluetooth LE reveals its setup hotspot over GATT, switches it
/// on and off, and reports its state: a profile's `bluetoothHandoff` section, read for
/// `handoff: bluetoothToWiFi`. Each characteristic is looked for in `service` first, then in
/// the device's other services (GoPro keeps its command characteristics in another one).
public struct BluetoothHandoff: Hashable, Sendable {
    /// A value written, with a response, to a characteristic.
    public struct Write: Hashable, Sendable {
        public var characteristic: BluetoothUUID
        public var value: [UInt8]

        public init(characteristic: BluetoothUUID, value: [UInt8]) {
            self.characteristic = characteristic
            self.value = value
        }
    }

    /// The characteristic through which the accessory reports its hotspot's state, and the
    /// values (prefixes) that mean ready and failed.
    public struct StateReport: Hashable, Sendable {
        public var characteristic: BluetoothUUID
        public var ready: [[UInt8]]
        public var failed: [[UInt8]]

        public init(characteristic: BluetoothUUID, ready: [[UInt8]], failed: [[UInt8]] = []) {
            self.characteristic = characteristic
            self.ready = ready
            self.failed = failed
        }

        public enum Verdict: Hashable, Sendable { case ready, failed }

        /// What a reported value means; `nil` while the hotspot is still on its way.
        public func verdict(_ value: [UInt8]) -> Verdict? {
            if ready.contains(where: value.starts(with:)) { return .ready }
            if failed.contains(where: value.starts(with:)) { return .failed }
            return nil
        }
    }

    public enum Pairing: String, Hashable, Sendable, CaseIterable {
        /// The accessory answers only over an encrypted, paired link.
        case required
        case none
    }

    public static let defaultReadyTimeout: Duration = .seconds(30)

    public var service: BluetoothUUID
    public var pairing: Pairing
    public var ssid: BluetoothUUID
    public var passphrase: BluetoothUUID?
    /// One byte naming the hotspot's security (`HotspotSecurityCode`); without it the
    /// profile's `hotspot.security` holds.
    public var security: BluetoothUUID?
    public var switchOn: Write?
    public var switchOff: Write?
    public var state: StateReport?
    public var readyTimeout: Duration

    public init(
        service: BluetoothUUID, pairing: Pairing, ssid: BluetoothUUID, passphrase: BluetoothUUID? = nil,
        security: BluetoothUUID? = nil, switchOn: Write? = nil, switchOff: Write? = nil, state: StateReport? = nil,
        readyTimeout: Duration = Self.defaultReadyTimeout
    ) {
        self.service = service
        self.pairing = pairing
        self.ssid = ssid
        self.passphrase = passphrase
        self.security = security
        self.switchOn = switchOn
        self.switchOff = switchOff
        self.state = state
        self.readyTimeout = readyTimeout
    }
}

/// The one-byte security codes of the open hotspot handoff profile (`docs/hotspot-handoff.md`).
public enum HotspotSecurityCode {
    public static let codes: [UInt8: HotspotPolicy.Security] = [
        0x00: .open, 0x01: .wpa2Personal, 0x02: .wpa3Personal, 0x03: .owe,
    ]

    public static func security(_ value: [UInt8]) throws(HotspotHandoffError) -> HotspotPolicy.Security {
        guard value.count == 1, let security = codes[value[0]] else { throw .unknownSecurity(value) }
        return security
    }
}

/// A hotspot an accessory revealed over Bluetooth.
public struct RevealedHotspot: Hashable, Sendable {
    public var ssid: SSID
    public var passphrase: Secret?
    /// The security the accessory named, if its profile has a security characteristic.
    public var security: HotspotPolicy.Security?

    public init(ssid: SSID, passphrase: Secret?, security: HotspotPolicy.Security?) {
        self.ssid = ssid
        self.passphrase = passphrase
        self.security = security
    }

    /// Reads the values the accessory gave: the SSID as bytes, the passphrase as UTF-8 with
    /// trailing NULs (C strings) dropped.
    public init(ssid: [UInt8], passphrase: [UInt8]?, security: [UInt8]?) throws(HotspotHandoffError) {
        do {
            self.ssid = try SSID(bytes: ssid)
        } catch {
            throw .invalidSSID(error.description)
        }
        if let passphrase {
            let trimmed = passphrase.reversed().drop { $0 == 0 }.reversed()
            guard let text = String(validating: Array(trimmed), as: UTF8.self) else {
                throw .invalidPassphrase("it is not UTF-8 text")
            }
            self.passphrase = Secret(text)
        } else {
            self.passphrase = nil
        }
        self.security = try security.map { value throws(HotspotHandoffError) in try HotspotSecurityCode.security(value)
        }
    }

    /// The configuration to join the revealed hotspot with, under the profile's policy; the
    /// security the accessory named wins over the profile's.
    public func configuration(policy: HotspotPolicy) throws(HotspotHandoffError) -> HotspotConfiguration {
        var policy = policy
        if let security { policy.security = security }
        do {
            return try policy.configuration(
                for: .ssid(ssid), passphrase: policy.security.needsPassphrase ? passphrase : nil)
        } catch {
            throw .invalidPassphrase(error.message)
        }
    }
}

/// The steps of a Bluetooth-to-Wi-Fi handoff, for progress output.
public enum HotspotHandoffStep: String, Hashable, Sendable {
    case connecting, pairing, switchingOn, waitingForHotspot, reading, disconnecting, joining, switchingOff
}

/// Why a Bluetooth-to-Wi-Fi handoff failed.
public enum HotspotHandoffError: Error, Hashable, Sendable, CustomStringConvertible {
    case bluetooth(BluetoothError)
    /// The accessory has no handoff service, or lacks a characteristic its profile names.
    case notHandoffDevice(MACAddress, missing: BluetoothUUID)
    /// The accessory reported its hotspot failed, with the value it reported.
    case hotspotFailed([UInt8])
    case hotspotNotReady(seconds: Int)
    case invalidSSID(String)
    case invalidPassphrase(String)
    case unknownSecurity([UInt8])
    case join(HotspotError)

    public var description: String {
        switch self {
        case .bluetooth(let error):
            error.description
        case .notHandoffDevice(let address, let missing):
            "\(address) does not offer this profile's hotspot handoff: it has no \(missing)"
        case .hotspotFailed(let value):
            "the accessory reported that its hotspot failed to start (state \(Hex.string(value)))"
        case .hotspotNotReady(let seconds):
            "the accessory's hotspot was not ready within \(seconds) s"
        case .invalidSSID(let reason):
            "the accessory revealed an unusable SSID: \(reason)"
        case .invalidPassphrase(let reason):
            "the accessory revealed an unusable passphrase: \(reason)"
        case .unknownSecurity(let value):
            "the accessory named an unknown hotspot security (\(Hex.string(value)))"
        case .join(let error):
            "joining the accessory's hotspot failed: \(error)"
        }
    }
}
