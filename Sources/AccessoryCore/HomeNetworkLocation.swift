import FoundationEssentials

/// A DNS-SD service an accessory publishes once it is on the home network, by which the agent
/// finds it there (Avahi): one of a profile's `homeNetwork.services`.
public struct PublishedService: Hashable, Sendable {
    /// The service type, `_wled._tcp`: an underscore, 1–15 letters, digits or hyphens, then
    /// `._tcp` or `._udp` (RFC 6763 §7).
    public var type: String
    /// A pattern the instance name matches (`*` any run, `?` one character, case ignored), or
    /// `nil` for any instance.
    public var instance: String?

    /// How many a profile may declare: each is a browse the agent keeps open.
    public static let maximumPerProfile = 8

    public init(type: String, instance: String? = nil) {
        self.type = type
        self.instance = instance
    }

    /// Whether `type` is a DNS-SD service type as RFC 6763 §7 writes one.
    public static func isValidType(_ type: String) -> Bool {
        let labels = type.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count == 2, labels[1] == "_tcp" || labels[1] == "_udp" else { return false }
        let name = labels[0].utf8.dropFirst()
        return labels[0].hasPrefix("_") && (1...15).contains(name.count) && name.first != UInt8(ascii: "-")
            && name.last != UInt8(ascii: "-")
            && name.allSatisfy {
                $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A)
            }
    }

    /// Whether `service` is of this type and its instance name matches the pattern.
    public func admits(_ service: ResolvedService) -> Bool {
        service.type == type && (instance.map { Self.glob($0, matches: service.name) } ?? true)
    }

    /// `*` and `?` matching, case ignored.
    static func glob(_ pattern: String, matches name: String) -> Bool {
        let pattern = Array(pattern.lowercased()), name = Array(name.lowercased())
        var (p, n) = (0, 0)
        var star: (p: Int, n: Int)?
        while n < name.count {
            if p < pattern.count, pattern[p] == "?" || pattern[p] == name[n] {
                p += 1
                n += 1
            } else if p < pattern.count, pattern[p] == "*" {
                star = (p, n)
                p += 1
            } else if let last = star {
                p = last.p + 1
                n = last.n + 1
                star = (last.p, last.n + 1)
            } else {
                return false
            }
        }
        return pattern[p...].allSatisfy { $0 == "*" }
    }
}

/// A service instance resolved on the home network: its DNS-SD name, type and domain, and the
/// host, addresses, port and TXT record it resolved to.
public struct ResolvedService: Hashable, Sendable {
    public var name: String
    public var type: String
    public var domain: String
    public var hostname: String
    public var addresses: [String]
    public var port: UInt16
    /// TXT `key=value` strings, keys lowercased; a key without `=` has an empty value.
    public var txt: [String: String]

    public init(
        name: String, type: String, domain: String = "local", hostname: String, addresses: [String], port: UInt16,
        txt: [String: String] = [:]
    ) {
        self.name = name
        self.type = type
        self.domain = domain
        self.hostname = hostname
        self.addresses = addresses
        self.port = port
        self.txt = txt
    }

    /// Reads TXT strings (`key=value`, RFC 6763 §6.3), keeping the first of a repeated key.
    public static func txtRecord(_ strings: [[UInt8]]) -> [String: String] {
        var record: [String: String] = [:]
        for string in strings where !string.isEmpty && string.first != UInt8(ascii: "=") {
            let split = string.firstIndex(of: UInt8(ascii: "=")) ?? string.endIndex
            let key = String(decoding: string[..<split], as: UTF8.self).lowercased()
            let value = split == string.endIndex ? "" : String(decoding: string[(split + 1)...], as: UTF8.self)
            if record[key] == nil { record[key] = value }
        }
        return record
    }

    /// The MAC addresses the service names: in a TXT value (`mac=`, `id=`, …), its instance name
    /// or its host name, as 12 hex digits with or without `:` or `-` between the pairs.
    var namedMACAddresses: Set<UInt64> {
        var found = Set<UInt64>()
        for text in Array(txt.values) + [name, hostname] {
            found.formUnion(Self.macAddresses(in: text))
        }
        return found
    }

    static func macAddresses(in text: String) -> [UInt64] {
        let digits = Array(text.utf8)
        var found: [UInt64] = []
        var start = 0
        while start < digits.count {
            var (value, count, index) = (UInt64(0), 0, start)
            while index < digits.count, count < 12 {
                let byte = digits[index]
                if let digit = Hex.nibble(byte) {
                    value = value << 4 | UInt64(digit)
                    count += 1
                } else if !((byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")) && count > 0 && count % 2 == 0) {
                    break
                }
                index += 1
            }
            let bounded = index == digits.count || Hex.nibble(digits[index]) == nil
            let preceded = start == 0 || Hex.nibble(digits[start - 1]) == nil
            if count == 12, bounded, preceded {
                found.append(value)
                start = index
            } else {
                start += 1
            }
        }
        return found
    }
}

/// Where an accessory lives on the home network, as DNS-SD last resolved it.
public struct AccessoryLocation: Hashable, Sendable, Codable {
    /// The service type it was found by, `_wled._tcp`.
    public var service: String
    /// Its DNS-SD instance name, which stays when its address changes.
    public var instance: String
    public var hostname: String
    public var addresses: [String]
    public var port: UInt16
    /// When it was last resolved with these values.
    public var seen: Date

    public init(_ service: ResolvedService, seen: Date) {
        self.service = service.type
        instance = service.name
        hostname = service.hostname
        addresses = service.addresses
        port = service.port
        self.seen = seen
    }

    /// Whether `service` is the instance this location was resolved from.
    public func isInstance(_ service: ResolvedService) -> Bool {
        service.type == self.service && service.name == instance
    }

    /// Whether `service` says where the accessory is otherwise than this location.
    public func differs(from service: ResolvedService) -> Bool {
        hostname != service.hostname || Set(addresses) != Set(service.addresses) || port != service.port
    }
}

/// Tells which service on the home network is an accessory: one at the address the device itself
/// reported when it joined the network (ESP-IDF's, the host of the URL Improv reported, a
/// vendor's confirmation), or, for a device that reported none, the one naming the MAC address it
/// reported on its hotspot; once located, the same instance on the same host and port when that
/// host announces a new address. Anything else on the network can announce any name, TXT record
/// or instance, so a service that only says it is the accessory (its former instance elsewhere,
/// a MAC address it was set up under) is an impostor to log, never its location.
public enum AccessoryLocator {
    /// What makes a service an accessory's.
    public enum Evidence: String, Sendable {
        /// The instance the record was located at before, still at the address it reported.
        case knownInstance
        /// The instance it was located at before, on the same host and port, whose host
        /// announced a new address (a DHCP lease changed): the standard way a device moves.
        case knownHostMoved
        /// Another instance at the address the device reported.
        case reportedAddress
        /// The one service naming the MAC address the device reported on its setup hotspot, for
        /// a device that reported no address (it restarted onto the home network first).
        case reportedMACAddress
    }

    /// How far apart two MAC addresses of one ESP32 may be: station, SoftAP, Bluetooth and
    /// Ethernet are the base plus 0 to 3 (ESP-IDF, "Miscellaneous System APIs", MAC Address).
    static let derivedMACSpread: UInt64 = 3

    /// The address the device reported, if it did.
    static func reportedAddress(of record: AccessoryRecord) -> String? {
        record.network?.ipv4Address ?? record.network?.url.flatMap { URL(string: $0)?.host }
    }

    /// The service among `services` that is `record`'s accessory, and why; `nil` when the device
    /// reported no address, or none of the declared services is there. `claimed` are the
    /// instances (`type` and `name`) other records hold.
    public static func locate(
        _ record: AccessoryRecord, among services: [ResolvedService], declared: [PublishedService],
        claimed: Set<String>
    ) -> (service: ResolvedService, evidence: Evidence)? {
        guard let reported = reportedAddress(of: record) else {
            return locateByMAC(record, among: services, declared: declared, claimed: claimed)
        }
        let there = services.filter { service in
            service.addresses.contains(reported) && !claimed.contains(key(of: service))
                && declared.contains { $0.admits(service) }
        }
        if let location = record.location, let known = there.first(where: location.isInstance) {
            return (known, .knownInstance)
        }
        if let found = there.first { return (found, .reportedAddress) }
        return moved(record, among: services, declared: declared, claimed: claimed).map { ($0, .knownHostMoved) }
    }

    /// The located instance announced unchanged (its host and port) at another address: its
    /// host took a new address. Anything else at another address is not it.
    static func moved(
        _ record: AccessoryRecord, among services: [ResolvedService], declared: [PublishedService],
        claimed: Set<String>
    ) -> ResolvedService? {
        guard let location = record.location else { return nil }
        return services.first { service in
            location.isInstance(service) && service.hostname == location.hostname && service.port == location.port
                && !claimed.contains(key(of: service)) && declared.contains { $0.admits(service) }
        }
    }

    /// Without a reported address, only the MAC address the device gave on its own hotspot
    /// links it to an announcement: a service naming it (or an address the same chip derives)
    /// is the accessory when it is the only unclaimed one that does; two naming it are one
    /// impostor at least, and neither is adopted.
    private static func locateByMAC(
        _ record: AccessoryRecord, among services: [ResolvedService], declared: [PublishedService],
        claimed: Set<String>
    ) -> (service: ResolvedService, evidence: Evidence)? {
        guard let mac = record.network?.macAddress?.rawValue else { return nil }
        let naming = services.filter { service in
            !claimed.contains(key(of: service)) && declared.contains { $0.admits(service) }
                && service.namedMACAddresses.contains { (($0 > mac) ? $0 - mac : mac - $0) <= derivedMACSpread }
        }
        if let location = record.location, let known = naming.first(where: location.isInstance) {
            return (known, .knownInstance)
        }
        if let moved = moved(record, among: services, declared: declared, claimed: claimed) {
            return (moved, .knownHostMoved)
        }
        let hosts = Set(naming.map { $0.addresses.sorted() })
        guard hosts.count == 1, let only = naming.first else { return nil }
        return (only, .reportedMACAddress)
    }

    /// The services of the declared types that present themselves as `record`'s accessory away
    /// from the address it reported: its former instance name, or a MAC address it was set up
    /// under (or one ESP32 derives from the same base). Each is logged, never adopted.
    public static func impostors(
        of record: AccessoryRecord, among services: [ResolvedService], declared: [PublishedService]
    ) -> [ResolvedService] {
        let reported = reportedAddress(of: record)
        // Known by the MAC address it reported, it is located by it (`locateByMAC`).
        if reported == nil && record.network?.macAddress != nil { return [] }
        let own = [record.hotspotBSSID, record.bluetoothIdentifier, record.bluetoothTransportBridgingIdentifier]
            .compactMap { $0?.rawValue }
        return services.filter { service in
            guard declared.contains(where: { $0.admits(service) }), reported.map(service.addresses.contains) != true
            else { return false }
            guard moved(record, among: [service], declared: declared, claimed: []) == nil else { return false }
            let formerInstance = record.location?.isInstance(service) ?? false
            let namesOwnMAC = service.namedMACAddresses.contains { named in
                own.contains { (named > $0 ? named - $0 : $0 - named) <= derivedMACSpread }
            }
            return formerInstance || namesOwnMAC
        }
    }

    /// The key `claimed` holds an instance by.
    public static func key(of service: ResolvedService) -> String { "\(service.type)\u{0}\(service.name)" }

    public static func key(of location: AccessoryLocation) -> String { "\(location.service)\u{0}\(location.instance)" }
}

/// DNS-SD on the home network, as the agent uses it: the services of some types as they are
/// resolved. Avahi's, in `AvahiBackend`.
public protocol HomeServiceBrowsing: Sendable {
    /// Services of `types` as each is resolved, for `duration`, then the stream ends; dropping
    /// the stream ends it sooner.
    func browse(_ types: Set<String>, for duration: Duration) async throws(HomeServiceError)
        -> AsyncStream<ResolvedService>
}

/// Why the home network cannot be browsed.
public enum HomeServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No mDNS responder answers on the system bus (Avahi's `org.freedesktop.Avahi`).
    case unavailable(String)

    public var description: String {
        switch self {
        case .unavailable(let reason):
            "Avahi cannot be reached on the system bus (is avahi-daemon running?): \(reason)"
        }
    }
}
