import Foundation
import Testing

@testable import AccessoryCore

/// Both matchers, so every behaviour is checked on the indexed one and the reference one.
enum MatcherKind: String, CaseIterable, Sendable {
    case indexed, linear

    func make(_ descriptors: [DiscoveryDescriptor]) -> any AccessoryMatching {
        switch self {
        case .indexed: AccessoryMatcher(descriptors: descriptors)
        case .linear: LinearAccessoryMatcher(descriptors: descriptors)
        }
    }
}

private func mac(_ text: String) -> MACAddress { try! MACAddress(text) }

private func descriptor(
    ssid: String? = nil, prefix: String? = nil, bssid: String? = nil, mask: String? = nil, minimum: Int? = nil,
    service: BluetoothUUID? = nil, company: UInt16? = nil, name: String? = nil, caseInsensitive: Bool = false,
    manufacturer: (blob: [UInt8], mask: [UInt8])? = nil, serviceData: (blob: [UInt8], mask: [UInt8])? = nil,
    range: BluetoothRange = .default
) -> DiscoveryDescriptor {
    var d = DiscoveryDescriptor()
    d.ssid = ssid.map { try! SSID(notation: $0) }
    d.ssidPrefix = prefix.map { try! SSID(notation: $0) }
    d.bssid = bssid.map(mac)
    d.bssidMask = mask.map(mac)
    d.minimumSignalStrength = minimum
    d.bluetoothServiceUUID = service
    d.bluetoothCompanyIdentifier = company.map(BluetoothCompanyIdentifier.init(rawValue:))
    d.bluetoothNameSubstring = name
    d.bluetoothNameSubstringCompareOptions = caseInsensitive ? .caseInsensitive : []
    d.bluetoothManufacturerData = manufacturer.map { try! MaskedData(blob: $0.blob, mask: $0.mask) }
    d.bluetoothServiceData = serviceData.map { try! MaskedData(blob: $0.blob, mask: $0.mask) }
    d.bluetoothRange = range
    return d
}

private func ap(_ ssid: String?, _ bssid: String = "02:00:00:00:00:01", strength: Int = 50) -> WiFiScanEntry {
    WiFiScanEntry(ssid: ssid.map { try! SSID(notation: $0) }, bssid: mac(bssid), strength: strength, frequency: 2412)
}

private let heartRate = BluetoothUUID(assigned: 0x180D)
private let improv = BluetoothUUID(assigned: 0x4677)
private let allterco: UInt16 = 0x0BA9

@Suite("AccessoryMatcher")
struct AccessoryMatcherTests {
    @Test("an exact SSID matches only that SSID", arguments: MatcherKind.allCases)
    func exactSSID(kind: MatcherKind) {
        let matcher = kind.make([descriptor(ssid: "WLED-AP")])
        #expect(matcher.firstMatch(for: ap("WLED-AP")) == 0)
        #expect(matcher.firstMatch(for: ap("WLED-AP2")) == nil)
        #expect(matcher.firstMatch(for: ap("WLED-A")) == nil)
        #expect(matcher.firstMatch(for: ap("wled-ap")) == nil)
    }

    @Test("a prefix matches SSIDs starting with its bytes", arguments: MatcherKind.allCases)
    func prefix(kind: MatcherKind) {
        let matcher = kind.make([descriptor(prefix: "PROV_")])
        #expect(matcher.firstMatch(for: ap("PROV_261FCC")) == 0)
        #expect(matcher.firstMatch(for: ap("PROV_")) == 0)
        #expect(matcher.firstMatch(for: ap("PROV")) == nil)
        #expect(matcher.firstMatch(for: ap("prov_261FCC")) == nil)
        #expect(matcher.firstMatch(for: ap("XPROV_1")) == nil)
    }

    @Test("a prefix compares bytes, also of SSIDs that are not UTF-8", arguments: MatcherKind.allCases)
    func prefixOnBytes(kind: MatcherKind) {
        let matcher = kind.make([descriptor(prefix: "hex:43616ffe"), descriptor(prefix: "hex:c3")])
        #expect(matcher.firstMatch(for: ap("hex:43616ffe")) == 0)
        #expect(matcher.firstMatch(for: ap("hex:43616ffe00")) == 0)
        #expect(matcher.firstMatch(for: ap("Cao")) == nil)  // 43 61 6f: one byte short
        #expect(matcher.firstMatch(for: ap("hex:43616f66")) == nil)
        #expect(matcher.firstMatch(for: ap("é")) == 1)  // c3 a9 starts with c3
        #expect(matcher.firstMatch(for: ap("Café")) == nil)
    }

    @Test("a BSSID with an OUI mask matches every address of that OUI", arguments: MatcherKind.allCases)
    func bssidMask(kind: MatcherKind) {
        let matcher = kind.make([
            descriptor(bssid: "A4:CF:12:00:00:00", mask: "FF:FF:FF:00:00:00"),
            descriptor(bssid: "7C:DF:A1:26:1F:CD"),
        ])
        #expect(matcher.firstMatch(for: ap("x", "A4:CF:12:6B:00:01")) == 0)
        #expect(matcher.firstMatch(for: ap(nil, "A4:CF:12:FF:FF:FF")) == 0)
        #expect(matcher.firstMatch(for: ap("x", "A4:CF:13:6B:00:01")) == nil)
        #expect(matcher.firstMatch(for: ap("x", "7C:DF:A1:26:1F:CD")) == 1)
        #expect(matcher.firstMatch(for: ap("x", "7C:DF:A1:26:1F:CE")) == nil)
    }

    @Test("the signal floor refuses weaker access points", arguments: MatcherKind.allCases)
    func minimumSignalStrength(kind: MatcherKind) {
        let matcher = kind.make([descriptor(ssid: "WLED-AP", minimum: 50), descriptor(prefix: "WLED", minimum: 20)])
        #expect(matcher.firstMatch(for: ap("WLED-AP", strength: 50)) == 0)
        #expect(matcher.firstMatch(for: ap("WLED-AP", strength: 100)) == 0)
        #expect(matcher.firstMatch(for: ap("WLED-AP", strength: 49)) == 1)
        #expect(matcher.firstMatch(for: ap("WLED-AP", strength: 19)) == nil)
    }

    @Test("a hidden access point never matches an SSID or prefix descriptor", arguments: MatcherKind.allCases)
    func hiddenAccessPoint(kind: MatcherKind) {
        let onlySSIDs = kind.make([descriptor(ssid: "Hidden"), descriptor(prefix: "H")])
        #expect(onlySSIDs.firstMatch(for: ap(nil, "3C:A6:2F:10:20:31")) == nil)

        let withBSSID = kind.make([
            descriptor(ssid: "Hidden", bssid: "3C:A6:2F:10:20:31"),
            descriptor(bssid: "3C:A6:2F:10:20:31"),
        ])
        #expect(withBSSID.firstMatch(for: ap(nil, "3C:A6:2F:10:20:31")) == 1)
    }

    @Test(
        "a descriptor without a Wi-Fi identifier matches no access point, and one without a Bluetooth identifier no advertisement",
        arguments: MatcherKind.allCases)
    func crossTransport(kind: MatcherKind) {
        let matcher = kind.make([descriptor(service: heartRate), descriptor(ssid: "Lamp")])
        #expect(matcher.firstMatch(for: ap("Lamp")) == 1)
        #expect(
            matcher.firstMatch(for: BLEAdvertisement(address: mac("11:22:33:44:55:66"), serviceUUIDs: [heartRate])) == 0
        )
        let onlyWiFi = kind.make([descriptor(ssid: "Lamp")])
        #expect(onlyWiFi.firstMatch(for: BLEAdvertisement(address: mac("11:22:33:44:55:66"), name: "Lamp")) == nil)
    }

    @Test("a service UUID matches when listed or present only as a service-data key", arguments: MatcherKind.allCases)
    func serviceUUID(kind: MatcherKind) {
        let matcher = kind.make([descriptor(service: improv)])
        let address = mac("D8:3B:DA:12:34:56")
        #expect(matcher.firstMatch(for: BLEAdvertisement(address: address, serviceUUIDs: [heartRate, improv])) == 0)
        #expect(matcher.firstMatch(for: BLEAdvertisement(address: address, serviceData: [improv: [0x01]])) == 0)
        #expect(
            matcher.firstMatch(
                for: BLEAdvertisement(address: address, serviceUUIDs: [heartRate], serviceData: [heartRate: [1]]))
                == nil)
        #expect(matcher.firstMatch(for: BLEAdvertisement(address: address)) == nil)
    }

    @Test("a company identifier with a manufacturer blob and mask", arguments: MatcherKind.allCases)
    func companyAndManufacturerData(kind: MatcherKind) {
        let matcher = kind.make([
            descriptor(company: allterco, manufacturer: ([0x01, 0xC0], [0xFF, 0xF0])),
            descriptor(company: allterco),
        ])
        func advertisement(_ data: [UInt16: [UInt8]]) -> BLEAdvertisement {
            BLEAdvertisement(
                address: mac("7C:C6:B6:65:43:21"),
                manufacturerData: Dictionary(
                    uniqueKeysWithValues: data.map { (BluetoothCompanyIdentifier(rawValue: $0.key), $0.value) }))
        }
        #expect(matcher.firstMatch(for: advertisement([allterco: [0x01, 0xC8, 0xA1]])) == 0)
        #expect(matcher.firstMatch(for: advertisement([allterco: [0x01, 0xCF]])) == 0)
        #expect(matcher.firstMatch(for: advertisement([allterco: [0x01, 0xD0]])) == 1)  // mask bits differ
        #expect(matcher.firstMatch(for: advertisement([allterco: [0x01]])) == 1)  // shorter than the blob
        #expect(matcher.firstMatch(for: advertisement([0x004C: [0x01, 0xC8]])) == nil)  // other company
        #expect(matcher.firstMatch(for: advertisement([0x004C: [0x01, 0xC8], allterco: [0x01, 0xC0]])) == 0)
    }

    @Test("service data blob and mask are matched against the service's data", arguments: MatcherKind.allCases)
    func serviceData(kind: MatcherKind) {
        let matcher = kind.make([
            descriptor(service: improv, serviceData: ([0x01], [0xFF])),
            descriptor(service: improv, serviceData: ([0x02], [0x0F])),
        ])
        let address = mac("D8:3B:DA:12:34:56")
        #expect(matcher.firstMatch(for: BLEAdvertisement(address: address, serviceData: [improv: [0x01, 0x03]])) == 0)
        #expect(matcher.firstMatch(for: BLEAdvertisement(address: address, serviceData: [improv: [0xF2]])) == 1)
        #expect(matcher.firstMatch(for: BLEAdvertisement(address: address, serviceData: [improv: [0x03]])) == nil)
        #expect(matcher.firstMatch(for: BLEAdvertisement(address: address, serviceData: [improv: []])) == nil)
        // The service is listed, but carries no data: the pattern cannot match.
        #expect(matcher.firstMatch(for: BLEAdvertisement(address: address, serviceUUIDs: [improv])) == nil)
        // Data of another service does not count.
        #expect(
            matcher.firstMatch(
                for: BLEAdvertisement(address: address, serviceUUIDs: [improv], serviceData: [heartRate: [0x01]]))
                == nil)
    }

    @Test("a name substring is case-sensitive unless caseInsensitive is set", arguments: MatcherKind.allCases)
    func nameSubstring(kind: MatcherKind) {
        let sensitive = kind.make([descriptor(service: heartRate, name: "Lamp")])
        let insensitive = kind.make([descriptor(service: heartRate, name: "Lamp", caseInsensitive: true)])
        func advertisement(_ name: String?) -> BLEAdvertisement {
            BLEAdvertisement(address: mac("11:22:33:44:55:66"), name: name, serviceUUIDs: [heartRate])
        }
        #expect(sensitive.firstMatch(for: advertisement("Kitchen Lamp 2")) == 0)
        #expect(sensitive.firstMatch(for: advertisement("kitchen lamp")) == nil)
        #expect(sensitive.firstMatch(for: advertisement("LAMP")) == nil)
        #expect(sensitive.firstMatch(for: advertisement(nil)) == nil)
        #expect(insensitive.firstMatch(for: advertisement("kitchen lamp")) == 0)
        #expect(insensitive.firstMatch(for: advertisement("LAMP")) == 0)
        #expect(insensitive.firstMatch(for: advertisement("Lam")) == nil)
        #expect(insensitive.firstMatch(for: advertisement(nil)) == nil)
    }

    @Test("immediate range needs an RSSI of -50 dBm or stronger", arguments: MatcherKind.allCases)
    func immediateRange(kind: MatcherKind) {
        let immediate = kind.make([descriptor(service: heartRate, range: .immediate)])
        let anyRange = kind.make([descriptor(service: heartRate)])
        func advertisement(_ rssi: Int?) -> BLEAdvertisement {
            BLEAdvertisement(address: mac("11:22:33:44:55:66"), rssi: rssi, serviceUUIDs: [heartRate])
        }
        #expect(immediate.firstMatch(for: advertisement(-50)) == 0)
        #expect(immediate.firstMatch(for: advertisement(-30)) == 0)
        #expect(immediate.firstMatch(for: advertisement(-51)) == nil)
        #expect(immediate.firstMatch(for: advertisement(nil)) == nil)
        #expect(anyRange.firstMatch(for: advertisement(nil)) == 0)
        #expect(anyRange.firstMatch(for: advertisement(-100)) == 0)
    }

    @Test("when several items match, the first wins, whatever index found it", arguments: MatcherKind.allCases)
    func firstItemWins(kind: MatcherKind) {
        let wifi = kind.make([
            descriptor(ssid: "Other"),
            descriptor(bssid: "A4:CF:12:00:00:00", mask: "FF:FF:FF:00:00:00"),  // found by the BSSID index
            descriptor(prefix: "WLED"),  // by the prefix trie
            descriptor(ssid: "WLED-AP"),  // by the SSID table
            descriptor(prefix: "W"),
        ])
        #expect(wifi.firstMatch(for: ap("WLED-AP", "A4:CF:12:6B:00:01")) == 1)
        #expect(wifi.firstMatch(for: ap("WLED-AP", "02:00:00:00:00:01")) == 2)
        #expect(wifi.firstMatch(for: ap("Wx", "02:00:00:00:00:01")) == 4)

        let reversed = kind.make([descriptor(ssid: "WLED-AP"), descriptor(prefix: "W"), descriptor(prefix: "WLED")])
        #expect(reversed.firstMatch(for: ap("WLED-AP")) == 0)
        #expect(reversed.firstMatch(for: ap("WLED-B")) == 1)

        let bluetooth = kind.make([
            descriptor(service: improv, name: "nomatch"),
            descriptor(company: allterco),
            descriptor(service: heartRate),
            descriptor(service: improv),
        ])
        let both = BLEAdvertisement(
            address: mac("11:22:33:44:55:66"), serviceUUIDs: [heartRate],
            manufacturerData: [BluetoothCompanyIdentifier(rawValue: allterco): [1]], serviceData: [improv: [1]])
        #expect(bluetooth.firstMatch(for: both) == 1)
        var withoutCompany = both
        withoutCompany.manufacturerData = [:]
        #expect(bluetooth.firstMatch(for: withoutCompany) == 2)
    }

    @Test("one match per BSSID: the strongest entry of the first item is kept", arguments: MatcherKind.allCases)
    func oneMatchPerBSSID(kind: MatcherKind) {
        let matcher = kind.make([descriptor(ssid: "WLED-AP")])
        let weak = ap("WLED-AP", "A4:CF:12:6B:00:01", strength: 58)
        let strong = ap("WLED-AP", "A4:CF:12:6B:00:01", strength: 64)
        #expect(
            matcher.matches(wifi: [weak, strong], bluetooth: []) == [
                AccessoryMatch(itemIndex: 0, device: .wifi(strong))
            ])
        #expect(
            matcher.matches(wifi: [strong, weak], bluetooth: []) == [
                AccessoryMatch(itemIndex: 0, device: .wifi(strong))
            ])
    }

    @Test(
        "for one BSSID matched by several items, the earliest item is kept even if weaker",
        arguments: MatcherKind.allCases)
    func oneMatchPerBSSIDEarliestItem(kind: MatcherKind) {
        let matcher = kind.make([descriptor(ssid: "A"), descriptor(ssid: "B")])
        let first = ap("A", "02:00:00:00:00:07", strength: 30)
        let second = ap("B", "02:00:00:00:00:07", strength: 90)
        #expect(
            matcher.matches(wifi: [second, first], bluetooth: []) == [
                AccessoryMatch(itemIndex: 0, device: .wifi(first))
            ])
        #expect(
            matcher.matches(wifi: [first, second], bluetooth: []) == [
                AccessoryMatch(itemIndex: 0, device: .wifi(first))
            ])
    }

    @Test("two BSSIDs with the same SSID are two matches", arguments: MatcherKind.allCases)
    func twoBSSIDsSameSSID(kind: MatcherKind) {
        let matcher = kind.make([descriptor(ssid: "WLED-AP")])
        let one = ap("WLED-AP", "A4:CF:12:6B:00:01", strength: 40)
        let two = ap("WLED-AP", "A4:CF:12:6B:00:02", strength: 70)
        #expect(
            matcher.matches(wifi: [one, two], bluetooth: []) == [
                AccessoryMatch(itemIndex: 0, device: .wifi(two)),
                AccessoryMatch(itemIndex: 0, device: .wifi(one)),
            ])
    }

    @Test(
        "one match per Bluetooth device: the strongest advertisement is kept, no RSSI is weakest",
        arguments: MatcherKind.allCases)
    func oneMatchPerBluetoothDevice(kind: MatcherKind) {
        let matcher = kind.make([descriptor(service: heartRate)])
        let unknown = BLEAdvertisement(address: mac("11:22:33:44:55:66"), rssi: nil, serviceUUIDs: [heartRate])
        let weak = BLEAdvertisement(address: mac("11:22:33:44:55:66"), rssi: -90, serviceUUIDs: [heartRate])
        let strong = BLEAdvertisement(address: mac("11:22:33:44:55:66"), rssi: -40, serviceUUIDs: [heartRate])
        #expect(
            matcher.matches(wifi: [], bluetooth: [unknown, weak, strong]) == [
                AccessoryMatch(itemIndex: 0, device: .bluetooth(strong))
            ])
        #expect(
            matcher.matches(wifi: [], bluetooth: [strong, unknown, weak]) == [
                AccessoryMatch(itemIndex: 0, device: .bluetooth(strong))
            ])
        #expect(
            matcher.matches(wifi: [], bluetooth: [unknown, weak]) == [
                AccessoryMatch(itemIndex: 0, device: .bluetooth(weak))
            ])
        // The same address of another type is another device.
        var random = strong
        random.addressType = .random
        #expect(matcher.matches(wifi: [], bluetooth: [strong, random]).count == 2)
    }

    @Test(
        "matches lists Wi-Fi first, each kind strongest first, then by address; unmatched devices are left out",
        arguments: MatcherKind.allCases)
    func ordering(kind: MatcherKind) {
        let matcher = kind.make([descriptor(prefix: "WLED"), descriptor(service: heartRate), descriptor(ssid: "Setup")])
        let wifi = [
            ap("WLED-1", "02:00:00:00:00:03", strength: 40),
            ap("HomeNet", "02:00:00:00:00:09", strength: 99),
            ap("Setup", "02:00:00:00:00:02", strength: 80),
            ap("WLED-2", "02:00:00:00:00:05", strength: 40),
            ap("WLED-3", "02:00:00:00:00:04", strength: 40),
        ]
        let bluetooth = [
            BLEAdvertisement(address: mac("11:00:00:00:00:01"), rssi: nil, serviceUUIDs: [heartRate]),
            BLEAdvertisement(address: mac("11:00:00:00:00:02"), rssi: -70, serviceUUIDs: [heartRate]),
            BLEAdvertisement(address: mac("11:00:00:00:00:03"), rssi: -20, serviceUUIDs: [improv]),
            BLEAdvertisement(address: mac("11:00:00:00:00:04"), rssi: -45, serviceUUIDs: [heartRate]),
        ]
        let result = matcher.matches(wifi: wifi, bluetooth: bluetooth)
        #expect(
            result == [
                AccessoryMatch(itemIndex: 2, device: .wifi(wifi[2])),
                AccessoryMatch(itemIndex: 0, device: .wifi(wifi[0])),
                AccessoryMatch(itemIndex: 0, device: .wifi(wifi[4])),
                AccessoryMatch(itemIndex: 0, device: .wifi(wifi[3])),
                AccessoryMatch(itemIndex: 1, device: .bluetooth(bluetooth[3])),
                AccessoryMatch(itemIndex: 1, device: .bluetooth(bluetooth[1])),
                AccessoryMatch(itemIndex: 1, device: .bluetooth(bluetooth[0])),
            ])
    }

    @Test("no descriptors match nothing", arguments: MatcherKind.allCases)
    func noDescriptors(kind: MatcherKind) {
        let matcher = kind.make([])
        #expect(matcher.firstMatch(for: ap("x")) == nil)
        #expect(
            matcher.matches(wifi: [ap("x")], bluetooth: [BLEAdvertisement(address: mac("11:22:33:44:55:66"))]) == [])
    }
}

// MARK: - Randomized equivalence with the reference matcher

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny deterministic generator, so a failure reproduces.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func pick<T>(_ choices: [T]) -> T { choices[Int(next() % UInt64(choices.count))] }

    mutating func chance(_ percent: UInt64) -> Bool { next() % 100 < percent }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    mutating func bytes(_ count: ClosedRange<Int>, from alphabet: [UInt8]) -> [UInt8] {
        (0..<int(count)).map { _ in pick(alphabet) }
    }
}

/// Builds random descriptors and scans from small alphabets, so that collisions between
/// descriptors are frequent, while extra conditions (signal floors, data patterns, names,
/// range) keep a fair share of the scan unmatched.
struct RandomScanWorld {
    static let ssidBytes: [UInt8] = [0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x2D, 0xC3, 0xA9, 0xFF]
    static let ouis: [UInt64] = [0xA4CF12, 0x7CDFA1, 0x3CA62F, 0x84F3EB, 0xC8C9A3, 0x021122, 0xD83BDA, 0x5E0A11]
    static let tails: [UInt64] = [0x00, 0x01, 0x02, 0xFF]
    static let bssidMasks: [MACAddress?] = [
        nil, MACAddress(rawValue: 0xFFFF_FFFF_FFFF), MACAddress(rawValue: 0xFFFF_FFFF_FF00),
        MACAddress(rawValue: 0xFFFF_FF00_00FF),
    ]
    static let ouiMask = MACAddress(rawValue: 0xFFFF_FF00_0000)
    static let services = [0x180D, 0x180F, 0x4677, 0xFE59].map { BluetoothUUID(assigned: UInt16($0)) }
    static let companies = [0x0BA9, 0x004C, 0x02E5].map { BluetoothCompanyIdentifier(rawValue: UInt16($0)) }
    static let dataBytes: [UInt8] = [0x00, 0x01, 0x02, 0xFF]
    static let maskBytes: [UInt8] = [0xFF, 0x0F, 0x03, 0x00]
    static let advertisedNames: [String?] = [nil, "lamp", "Lamp-2", "LAMP", "plug", "PLUG-S", "bulb"]
    static let nameSubstrings = ["am", "La", "lamp", "P", "ug", "b"]

    var random: SplitMix64

    mutating func bssid() -> MACAddress {
        let oui = random.pick(Self.ouis)
        let tail = (0..<3).reduce(UInt64(0)) { value, _ in value << 8 | random.pick(Self.tails) }
        return MACAddress(rawValue: oui << 24 | tail)
    }

    mutating func ssid(_ length: ClosedRange<Int>) -> SSID {
        try! SSID(bytes: random.bytes(length, from: Self.ssidBytes))
    }

    mutating func pattern() -> MaskedData {
        let blob = random.bytes(1...2, from: Self.dataBytes)
        let mask = (0..<blob.count).map { _ in random.pick(Self.maskBytes) }
        return try! MaskedData(blob: blob, mask: mask)
    }

    mutating func descriptor() -> DiscoveryDescriptor {
        var d = DiscoveryDescriptor()
        let kind = random.int(0...9)
        let wifi = kind < 4 || kind >= 8
        let bluetooth = kind >= 4
        if wifi {
            switch random.int(0...19) {
            case 0...9: d.ssid = ssid(1...3)
            case 10...16: d.ssidPrefix = ssid(2...4)
            default:
                d.bssid = bssid()
                d.bssidMask = random.pick(Self.bssidMasks)
            }
            if d.bssid == nil && random.chance(15) {
                d.bssid = bssid()
                d.bssidMask = random.chance(50) ? Self.ouiMask : random.pick(Self.bssidMasks)
            }
            if random.chance(40) { d.minimumSignalStrength = random.pick([20, 50, 80, 95]) }
        }
        if bluetooth {
            switch random.int(0...9) {
            case 0...3: d.bluetoothServiceUUID = random.pick(Self.services)
            case 4...7: d.bluetoothCompanyIdentifier = random.pick(Self.companies)
            default:
                d.bluetoothServiceUUID = random.pick(Self.services)
                d.bluetoothCompanyIdentifier = random.pick(Self.companies)
            }
            if d.bluetoothServiceUUID != nil && random.chance(50) { d.bluetoothServiceData = pattern() }
            if d.bluetoothCompanyIdentifier != nil && random.chance(50) { d.bluetoothManufacturerData = pattern() }
            if random.chance(50) {
                d.bluetoothNameSubstring = random.pick(Self.nameSubstrings)
                if random.chance(50) { d.bluetoothNameSubstringCompareOptions = .caseInsensitive }
            }
            if random.chance(30) { d.bluetoothRange = .immediate }
        }
        return d
    }

    mutating func entry() -> WiFiScanEntry {
        WiFiScanEntry(
            ssid: random.chance(10) ? nil : ssid(1...6), bssid: bssid(),
            strength: random.int(0...100), frequency: random.pick([2412, 2437, 5180]))
    }

    mutating func advertisement() -> BLEAdvertisement {
        // A small address pool, so several advertisements come from one device; the type follows
        // from the address, so one address is always one device.
        let address = MACAddress(rawValue: 0x1122_3344_5500 | UInt64(random.int(0...59)))
        var advertisement = BLEAdvertisement(
            address: address, addressType: address.rawValue & 1 == 0 ? .public : .random,
            name: random.pick(Self.advertisedNames), rssi: random.chance(15) ? nil : random.int(-100 ... -30))
        for service in Self.services {
            if random.chance(12) { advertisement.serviceUUIDs.append(service) }
            if random.chance(8) { advertisement.serviceData[service] = random.bytes(0...3, from: Self.dataBytes) }
        }
        for company in Self.companies where random.chance(12) {
            advertisement.manufacturerData[company] = random.bytes(0...3, from: Self.dataBytes)
        }
        return advertisement
    }
}

@Suite("AccessoryMatcher equivalence")
struct AccessoryMatcherEquivalenceTests {
    @Test(
        "the indexed matcher agrees with the linear one on random descriptors and scans",
        arguments: [UInt64(1), 0x5EED_CAFE, 20_250_601])
    func randomizedEquivalence(seed: UInt64) {
        var world = RandomScanWorld(random: SplitMix64(seed: seed))
        let descriptors = (0..<2_000).map { _ in world.descriptor() }
        let wifi = (0..<500).map { _ in world.entry() }
        let bluetooth = (0..<200).map { _ in world.advertisement() }

        let indexed = AccessoryMatcher(descriptors: descriptors)
        let linear = LinearAccessoryMatcher(descriptors: descriptors)

        var wifiDisagreements: [String] = []
        var wifiMatched = 0
        var matchedItems: Set<Int> = []
        for entry in wifi {
            let expected = linear.firstMatch(for: entry)
            let found = indexed.firstMatch(for: entry)
            if found != expected {
                wifiDisagreements.append(
                    "\(entry.ssid?.escaped ?? "(hidden)") \(entry.bssid) \(entry.strength)%: indexed \(found.map(String.init) ?? "nil"), linear \(expected.map(String.init) ?? "nil")"
                )
            }
            if let expected { wifiMatched += 1; matchedItems.insert(expected) }
        }
        var bluetoothDisagreements: [String] = []
        var bluetoothMatched = 0
        for advertisement in bluetooth {
            let expected = linear.firstMatch(for: advertisement)
            let found = indexed.firstMatch(for: advertisement)
            if found != expected {
                bluetoothDisagreements.append(
                    "\(advertisement.address) \(advertisement.name ?? "-"): indexed \(found.map(String.init) ?? "nil"), linear \(expected.map(String.init) ?? "nil")"
                )
            }
            if let expected { bluetoothMatched += 1; matchedItems.insert(expected) }
        }
        #expect(
            wifiDisagreements.isEmpty,
            "\(wifiDisagreements.count) Wi-Fi disagreements, first: \(wifiDisagreements.prefix(5))")
        #expect(
            bluetoothDisagreements.isEmpty,
            "\(bluetoothDisagreements.count) Bluetooth disagreements, first: \(bluetoothDisagreements.prefix(5))")

        let indexedMatches = indexed.matches(wifi: wifi, bluetooth: bluetooth)
        #expect(indexedMatches == linear.matches(wifi: wifi, bluetooth: bluetooth))

        // Not vacuous: many entries match, a fair share do not, and the matches spread over many items.
        #expect(
            wifiMatched >= 150 && wifi.count - wifiMatched >= 20,
            "Wi-Fi entries matched: \(wifiMatched) of \(wifi.count)")
        #expect(
            bluetoothMatched >= 40 && bluetooth.count - bluetoothMatched >= 20,
            "advertisements matched: \(bluetoothMatched) of \(bluetooth.count)")
        #expect(matchedItems.count >= 100, "distinct items matched: \(matchedItems.count)")
        #expect(matchedItems.contains { $0 >= 1_000 }, "no item beyond the first thousand matched")
        #expect(indexedMatches.count >= 200)
    }
}
