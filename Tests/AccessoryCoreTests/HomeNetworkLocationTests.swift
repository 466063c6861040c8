import Foundation
import Testing

@testable import AccessoryCore

@Suite("Home network location (DNS-SD)")
struct HomeNetworkLocationTests {
    static let owner = AccessoryOwner(uid: 1000, profileID: "ge.wled.softap")

    static func record(
        bssid: String? = nil, bluetooth: String? = nil, reported: String? = nil, url: String? = nil
    ) throws -> AccessoryRecord {
        var descriptor = DiscoveryDescriptor()
        descriptor.ssid = try SSID("WLED-AP")
        var record = AccessoryRecord(
            displayName: "Kitchen", state: .authorized, ssid: try SSID("WLED-AP"),
            hotspotBSSID: try bssid.map { try MACAddress($0) },
            bluetoothIdentifier: try bluetooth.map { try MACAddress($0) },
            descriptor: descriptor, owner: owner)
        if reported != nil || url != nil {
            record.network = AccessoryNetwork(
                ssid: try SSID("HomeNet"), ipv4Address: reported, url: url, joined: Date())
        }
        return record
    }

    static func service(
        _ name: String, type: String = "_wled._tcp", address: String = "192.168.1.50", txt: [String: String] = [:],
        host: String? = nil, port: UInt16 = 80
    ) -> ResolvedService {
        ResolvedService(
            name: name, type: type, hostname: host ?? "\(name).local", addresses: [address], port: port, txt: txt)
    }

    static let wled = [PublishedService(type: "_wled._tcp")]

    @Test(
        "service types are checked as RFC 6763 writes them",
        arguments: [
            ("_wled._tcp", true), ("_esphomelib._tcp", true), ("_hap._udp", true), ("_a-b._tcp", true),
            ("wled._tcp", false), ("_wled", false), ("_wled._sctp", false), ("_._tcp", false),
            ("_fifteen-letter1._tcp", true), ("_sixteen-letters._tcp", true), ("_sixteen-letterss._tcp", false),
            ("_-x._tcp", false), ("_x-._tcp", false), ("_wl ed._tcp", false), ("_wled._tcp.local", false),
        ])
    func serviceTypes(type: String, valid: Bool) {
        #expect(PublishedService.isValidType(type) == valid)
    }

    @Test("instance patterns match with * and ?, case ignored")
    func instancePatterns() {
        #expect(PublishedService.glob("shelly*", matches: "ShellyPlus1-08B61F0A1B2C"))
        #expect(PublishedService.glob("tasmota-??????-*", matches: "tasmota-0A1B2C-1234"))
        #expect(!PublishedService.glob("tasmota-??????-*", matches: "tasmota-0A1B-1234"))
        #expect(PublishedService.glob("*", matches: ""))
        #expect(!PublishedService.glob("shelly*", matches: "wled-shelly"))
        #expect(PublishedService.glob("*kitchen*", matches: "WLED Kitchen Strip"))
    }

    @Test("TXT strings are read as keys and values; a repeated key keeps its first value")
    func txtRecord() {
        let txt = ResolvedService.txtRecord([
            Array("MAC=08b61f0a1b2c".utf8), Array("gen=2".utf8), Array("gen=3".utf8),
            Array("flag".utf8), Array("=nokey".utf8), [],
        ])
        #expect(txt == ["mac": "08b61f0a1b2c", "gen": "2", "flag": ""])
    }

    @Test("MAC addresses are found in text with or without separators, and not inside longer hex runs")
    func macAddressesInText() {
        #expect(ResolvedService.macAddresses(in: "08b61f0a1b2c") == [0x08b6_1f0a_1b2c])
        #expect(ResolvedService.macAddresses(in: "shellyplus1-08B61F0A1B2C") == [0x08b6_1f0a_1b2c])
        #expect(
            ResolvedService.macAddresses(in: "08:B6:1F:0A:1B:2C and 08-b6-1f-0a-1b-2d") == [
                0x08b6_1f0a_1b2c, 0x08b6_1f0a_1b2d,
            ])
        #expect(ResolvedService.macAddresses(in: "0123456789abcdef").isEmpty)
        #expect(ResolvedService.macAddresses(in: "tasmota-0A1B2C-1234").isEmpty)
    }

    @Test("the address the device reported finds it among others of the type")
    func byReportedAddress() throws {
        let record = try Self.record(reported: "192.168.1.51")
        let found = AccessoryLocator.locate(
            record, among: [Self.service("wled-a"), Self.service("wled-b", address: "192.168.1.51")],
            declared: Self.wled, claimed: [])
        #expect(found?.service.name == "wled-b")
        #expect(found?.evidence == .reportedAddress)
        // Improv reports a URL: its host is the address.
        let improv = try Self.record(url: "http://192.168.1.51/")
        #expect(
            AccessoryLocator.locate(
                improv, among: [Self.service("wled-b", address: "192.168.1.51")], declared: Self.wled,
                claimed: [])?.evidence == .reportedAddress)
    }

    @Test("a service naming a MAC address the accessory was set up under, elsewhere, is an impostor, not it")
    func byMACAddressIsAnImpostor() throws {
        // ESP32: SoftAP is the base + 1; the station (in the TXT record) is the base.
        let record = try Self.record(bssid: "08:B6:1F:0A:1B:2D", reported: "192.168.1.50")
        let services = [
            Self.service("wled-other", address: "192.168.1.61", txt: ["mac": "08b61f0a1b40"]),
            Self.service("wled-kitchen", address: "192.168.1.60", txt: ["mac": "08b61f0a1b2c"]),
        ]
        #expect(AccessoryLocator.locate(record, among: services, declared: Self.wled, claimed: []) == nil)
        #expect(
            AccessoryLocator.impostors(of: record, among: services, declared: Self.wled).map(\.name) == ["wled-kitchen"]
        )
        let bluetooth = try Self.record(bluetooth: "08:B6:1F:0A:1B:2E")
        #expect(
            AccessoryLocator.impostors(of: bluetooth, among: services, declared: Self.wled).map(\.name)
                == ["wled-kitchen"])
        let far = try Self.record(bssid: "08:B6:1F:0A:1B:31")
        #expect(AccessoryLocator.impostors(of: far, among: services, declared: Self.wled).isEmpty)
        // At the address the device reported it is the accessory, not an impostor.
        let there = try Self.record(bssid: "08:B6:1F:0A:1B:2D", reported: "192.168.1.60")
        #expect(
            AccessoryLocator.locate(there, among: services, declared: Self.wled, claimed: [])?.service.name
                == "wled-kitchen")
        #expect(AccessoryLocator.impostors(of: there, among: services, declared: Self.wled).isEmpty)
    }

    @Test("a device that reported no address is located by nothing it announces")
    func withoutAReportedAddressNothingLocates() throws {
        let record = try Self.record(bssid: "08:B6:1F:0A:1B:2D")
        let patterned = [PublishedService(type: "_shelly._tcp", instance: "shelly*")]
        let one = Self.service("shellyplus1-aa", type: "_shelly._tcp", txt: ["mac": "08b61f0a1b2c"])
        #expect(AccessoryLocator.locate(record, among: [one], declared: patterned, claimed: []) == nil)
    }

    @Test("a device that reported only its MAC address on its hotspot is the one service naming it")
    func byTheMACAddressItReported() throws {
        var record = try Self.record(bssid: "0A:00:00:00:00:01")
        record.network = AccessoryNetwork(
            ssid: try SSID("HomeNet"), macAddress: try MACAddress("A0:B7:65:A1:B2:C3"), joined: Date())
        let it = Self.service("wled-a1b2c3", address: "192.168.1.70", txt: ["mac": "a0b765a1b2c3"])
        let other = Self.service("wled-kitchen", address: "192.168.1.71", txt: ["mac": "a0b765ffffff"])
        #expect(
            AccessoryLocator.locate(record, among: [other, it], declared: Self.wled, claimed: [])?.evidence
                == .reportedMACAddress)
        #expect(AccessoryLocator.locate(record, among: [other, it], declared: Self.wled, claimed: [])?.service == it)
        // Two hosts naming it: one at least lies, and neither is taken.
        let liar = Self.service("wled-liar", address: "192.168.1.99", txt: ["mac": "a0b765a1b2c3"])
        #expect(AccessoryLocator.locate(record, among: [it, liar], declared: Self.wled, claimed: []) == nil)
        // Held by another record, it is not this one's.
        #expect(
            AccessoryLocator.locate(
                record, among: [it], declared: Self.wled, claimed: [AccessoryLocator.key(of: it)]) == nil)
        // Its hotspot's BSSID is no evidence of its own.
        let byBSSID = Self.service("wled-x", address: "192.168.1.72", txt: ["mac": "0a0000000001"])
        #expect(AccessoryLocator.locate(record, among: [byBSSID], declared: Self.wled, claimed: []) == nil)
    }

    @Test("a located instance whose host takes a new address, host and port unchanged, is followed")
    func aMovedHostIsFollowed() throws {
        var record = try Self.record(reported: "192.168.1.50")
        let first = Self.service("wled-kitchen", address: "192.168.1.50")
        record.location = AccessoryLocation(first, seen: Date())
        let moved = Self.service("wled-kitchen", address: "192.168.1.77")
        #expect(
            AccessoryLocator.locate(record, among: [moved], declared: Self.wled, claimed: [])?.evidence
                == .knownHostMoved)
        #expect(AccessoryLocator.impostors(of: record, among: [moved], declared: Self.wled).isEmpty)
        // Another host, or another port, announcing the instance elsewhere is not it.
        let otherHost = Self.service("wled-kitchen", address: "192.168.1.78", host: "evil.local")
        let otherPort = Self.service("wled-kitchen", address: "192.168.1.79", port: 8080)
        for service in [otherHost, otherPort] {
            #expect(AccessoryLocator.locate(record, among: [service], declared: Self.wled, claimed: []) == nil)
            #expect(
                AccessoryLocator.impostors(of: record, among: [service], declared: Self.wled).map(\.name)
                    == ["wled-kitchen"])
        }
    }

    @Test("services of other types, or other records' instances, are not it")
    func othersAreNot() throws {
        let record = try Self.record(reported: "192.168.1.50")
        let other = Self.service("printer", type: "_ipp._tcp")
        #expect(AccessoryLocator.locate(record, among: [other], declared: Self.wled, claimed: []) == nil)
        let claimed = Self.service("wled-a")
        #expect(
            AccessoryLocator.locate(
                record, among: [claimed], declared: Self.wled, claimed: [AccessoryLocator.key(of: claimed)])
                == nil)
    }

    @Test(
        "a located record's instance announced by another host at another address is an impostor; at the reported one it is followed"
    )
    func knownInstanceElsewhereIsAnImpostor() throws {
        var record = try Self.record(reported: "192.168.1.50")
        record.location = AccessoryLocation(Self.service("wled-a"), seen: Date())
        let elsewhere = Self.service("wled-a", address: "192.168.1.77", host: "wled-a-2.local")
        #expect(AccessoryLocator.locate(record, among: [elsewhere], declared: Self.wled, claimed: []) == nil)
        #expect(AccessoryLocator.impostors(of: record, among: [elsewhere], declared: Self.wled) == [elsewhere])
        let newPort = Self.service("wled-a", port: 8080)
        let found = AccessoryLocator.locate(
            record, among: [Self.service("wled-b"), newPort, elsewhere], declared: Self.wled, claimed: [])
        #expect(found?.service == newPort)
        #expect(found?.evidence == .knownInstance)
        #expect(record.location?.differs(from: newPort) == true)
        #expect(record.location?.differs(from: Self.service("wled-a")) == false)
    }

    @Test("a record with a location is stored and read back; one without reads as before")
    func recordCoding() throws {
        var record = try Self.record(bssid: "08:B6:1F:0A:1B:2D", reported: "192.168.1.50")
        record.location = AccessoryLocation(Self.service("wled-a"), seen: Date(timeIntervalSince1970: 1_800_000_000))
        let decoded = try JSONDecoder().decode(AccessoryRecord.self, from: JSONEncoder().encode(record))
        #expect(decoded == record)
        var old = try JSONSerialization.jsonObject(with: JSONEncoder().encode(record)) as! [String: Any]
        old["location"] = nil
        old["hotspotBSSID"] = nil
        let earlier = try JSONDecoder().decode(AccessoryRecord.self, from: JSONSerialization.data(withJSONObject: old))
        #expect(earlier.location == nil && earlier.hotspotBSSID == nil)
    }
}
