import AccessoryCore
import Foundation
import ServiceHarness
import Testing

@testable import NetworkManagerBackend

/// Devices, access points and scans against python-dbusmock's NetworkManager on a private bus.
@Suite(.serialized) struct MockNetworkManagerScanTests {
    @Test func listsEveryAccessPointWithItsSecurity() async throws {
        let mock = try NetworkManagerMock()
        let device = try mock.addWiFiDevice("wlan0")
        let kinds: [(String, NetworkManagerMock.Security, WiFiSecurity)] = [
            ("Open", .open, []), ("Wep", .wep, [.wep]), ("Wpa2", .wpa2, [.psk]), ("Wpa3", .wpa3, [.sae]),
            ("Mixed", .transition, [.psk, .sae]), ("Owe", .owe, [.owe]), ("Corp", .enterprise, [.enterprise]),
        ]
        for (index, kind) in kinds.enumerated() {
            try mock.addAccessPoint(
                device, name: kind.0, ssid: "Acme-\(kind.0)", bssid: "02:00:00:00:00:0\(index)",
                frequency: 2412 + UInt32(index) * 5, strength: UInt8(40 + index), security: kind.1)
        }
        let client = try await NetworkManagerClient.connect(busAddress: mock.bus.address)
        let devices = try await client.wifiDevices()
        #expect(devices.map(\.interface) == ["wlan0"])
        #expect(devices.first?.state == "disconnected")

        let entries = try await client.accessPoints(device: nil, rescan: false).sorted { $0.bssid < $1.bssid }
        #expect(entries.count == kinds.count)
        for (entry, (index, kind)) in zip(entries, kinds.enumerated()) {
            #expect(entry.ssid == (try SSID("Acme-\(kind.0)")))
            #expect(entry.bssid == (try MACAddress("02:00:00:00:00:0\(index)")))
            #expect(entry.frequency == 2412 + index * 5)
            #expect(entry.strength == 40 + index)
            #expect(entry.security == kind.2, "security of \(kind.0)")
        }
    }

    @Test func nonUTF8SSIDsAreKeptAsBytes() async throws {
        let mock = try NetworkManagerMock()
        let device = try mock.addWiFiDevice("wlan0")
        try mock.addAccessPoint(device, name: "odd", ssid: [0x43, 0x61, 0xFE, 0x00], bssid: "02:00:00:00:00:01")
        let client = try await NetworkManagerClient.connect(busAddress: mock.bus.address)
        let entries = try await client.accessPoints(device: "wlan0", rescan: false)
        #expect(entries.first?.ssid?.bytes == [0x43, 0x61, 0xFE, 0x00])
        #expect(entries.first?.ssid?.escaped == "Ca\\xfe\\x00")
    }

    @Test func rescanWaitsForLastScanAndFindsNothingNewInAnEmptyRoom() async throws {
        let mock = try NetworkManagerMock()
        try mock.addWiFiDevice("wlan0")
        let client = try await NetworkManagerClient.connect(busAddress: mock.bus.address)
        let entries = try await client.accessPoints(device: nil, rescan: true)
        #expect(entries.isEmpty)
        #expect(try mock.scanRequests() == [[]], "one scan, probing for no SSID in particular")
    }

    /// A hidden access point answers only a probe for its SSID: the rescan's request carries it
    /// (the mock lists the access point once a scan probed for it, as NetworkManager does).
    @Test func rescanProbingForAHiddenSSIDFindsItsAccessPoint() async throws {
        let mock = try NetworkManagerMock()
        let device = try mock.addWiFiDevice("wlan0")
        try mock.addHiddenAccessPoint(device, name: "quiet", ssid: "Quiet-Setup", bssid: "02:00:00:00:00:30")
        let client = try await NetworkManagerClient.connect(busAddress: mock.bus.address)
        #expect(try await client.accessPoints(device: nil, rescan: true).isEmpty, "a broadcast scan does not find it")
        let quiet = try SSID("Quiet-Setup")
        let entries = try await client.accessPoints(device: nil, rescan: true, probing: [quiet, quiet])
        #expect(entries.map(\.ssid) == [quiet])
        #expect(try mock.scanRequests() == [[], [quiet.bytes]], "one probe for it, not two")
    }

    /// One scan probes for at most `ScanProbe.limit` SSIDs (wpa_supplicant's 16 less the
    /// wildcard): the first of them; NetworkManager would refuse more than 32 outright.
    @Test func aRescanProbesForAtMostOneScansWorthOfSSIDs() async throws {
        let mock = try NetworkManagerMock()
        try mock.addWiFiDevice("wlan0")
        let client = try await NetworkManagerClient.connect(busAddress: mock.bus.address)
        let ssids = try (0..<40).map { try SSID("Quiet-\($0)") }
        _ = try await client.accessPoints(device: nil, rescan: true, probing: ssids)
        #expect(try mock.scanRequests() == [ssids.prefix(ScanProbe.limit).map(\.bytes)])
    }

    @Test func accessPointsAppearingAndVanishingAreStreamed() async throws {
        let mock = try NetworkManagerMock()
        let device = try mock.addWiFiDevice("wlan0")
        let early = try mock.addAccessPoint(device, name: "early", ssid: "Acme-Early", bssid: "02:00:00:00:00:08")
        let client = try await NetworkManagerClient.connect(busAddress: mock.bus.address)
        let watch = try await client.watchAccessPoints(device: nil)
        #expect(watch.listed.mapValues(\.ssid) == [early: try SSID("Acme-Early")])
        let ap = try mock.addAccessPoint(
            device, name: "late", ssid: "Acme-Late", bssid: "02:00:00:00:00:09", strength: 55)
        try mock.removeAccessPoint(device, ap)
        var iterator = watch.events.makeAsyncIterator()
        let first = await iterator.next()
        let second = await iterator.next()
        guard case .appeared(let entry, let id)? = first else {
            Issue.record("expected an appearing access point, got \(String(describing: first))")
            return
        }
        #expect(id == ap)
        #expect(entry.ssid == (try SSID("Acme-Late")))
        #expect(entry.strength == 55)
        #expect(second == .vanished(id: ap))
    }

    /// An accessory back in setup mode under a new SSID on the same radio is listed twice until
    /// its old name goes; the events tell the two apart.
    @Test func oneRadioUnderTwoSSIDsIsTwoAccessPoints() async throws {
        let mock = try NetworkManagerMock()
        let device = try mock.addWiFiDevice("wlan0")
        let old = try mock.addAccessPoint(device, name: "old", ssid: "Acme-Home", bssid: "02:00:00:00:00:0a")
        let client = try await NetworkManagerClient.connect(busAddress: mock.bus.address)
        let watch = try await client.watchAccessPoints(device: nil)
        let new = try mock.addAccessPoint(device, name: "new", ssid: "Acme-Setup-0A", bssid: "02:00:00:00:00:0a")
        try mock.removeAccessPoint(device, old)
        var iterator = watch.events.makeAsyncIterator()
        let first = await iterator.next(), second = await iterator.next()
        #expect(Array(watch.listed.keys) == [old])
        guard case .appeared(let entry, let id)? = first else {
            Issue.record("expected an appearing access point, got \(String(describing: first))")
            return
        }
        #expect(id == new && id != old)
        #expect(entry.ssid == (try SSID("Acme-Setup-0A")))
        #expect(entry.bssid == (try MACAddress("02:00:00:00:00:0a")))
        #expect(second == .vanished(id: old), "the old name going is not the new one going")
    }

    @Test func unknownDeviceAndNoDevice() async throws {
        let mock = try NetworkManagerMock()
        let client = try await NetworkManagerClient.connect(busAddress: mock.bus.address)
        await #expect(throws: HotspotError.noWiFiDevice(nil)) {
            try await client.accessPoints(device: nil, rescan: false)
        }
        try mock.addWiFiDevice("wlan0")
        await #expect(throws: HotspotError.noWiFiDevice("wlan9")) {
            try await client.accessPoints(device: "wlan9", rescan: false)
        }
    }

    @Test func noNetworkManagerOnTheBus() async throws {
        let bus = try PrivateSystemBus()
        await #expect {
            _ = try await NetworkManagerClient.connect(busAddress: bus.address)
        } throws: { error in
            guard case HotspotError.networkManagerUnavailable = error else { return false }
            return true
        }
    }
}

/// A client made for a bus address closes its connection when released: GDBus never frees a
/// private connection that is not closed, and a test process that leaked one socket per test
/// ran out of descriptors.
@Suite(.serialized) struct NetworkManagerClientLifetimeTests {
    @Test func releasingClientsLeaksNoFileDescriptors() async throws {
        let mock = try NetworkManagerMock()
        try mock.addWiFiDevice("wlan0")
        func openDescriptors() -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        }
        // The first client brings GLib's own one-time descriptors (its worker thread, its wakeups).
        _ = try await NetworkManagerClient.connect(busAddress: mock.bus.address).wifiDevices()
        let before = openDescriptors()
        for _ in 0..<60 {
            let client = try await NetworkManagerClient.connect(busAddress: mock.bus.address)
            #expect(try await client.wifiDevices().count == 1)
        }
        // Other tests run alongside and hold descriptors of their own for a while; one leaked per
        // client would be 60.
        #expect(openDescriptors() <= before + 20, "before: \(before), after: \(openDescriptors())")
    }
}
