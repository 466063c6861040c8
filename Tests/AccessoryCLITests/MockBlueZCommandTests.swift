import AccessoryCLI
import Foundation
import ServiceHarness
import Testing

/// The Bluetooth commands of the built `accessoryctl` against python-dbusmock's BlueZ (with
/// the project's template) on a private system bus.
@Suite(.serialized) final class MockBlueZCommandTests {
    let mock: BlueZMock
    let improv: String
    let passphraseFile: TemporaryFile

    init() throws {
        mock = try BlueZMock()
        try mock.addAdapter()
        try mock.addDevice(
            "A4:C1:38:00:11:22", addressType: "random", name: "Shelly BLU", rssi: -48, uuids: ["fcd2"],
            manufacturerData: [0x0BA9: [0x01, 0x02, 0x03]],
            serviceData: ["0000fcd2-0000-1000-8000-00805f9b34fb": [0x40, 0x00, 0x2a]])
        improv = try mock.addImprovDevice("24:0A:C4:12:34:56", name: "Improv Plug", state: 2)
        passphraseFile = try TemporaryFile("home-secret-42\n", name: "home.pass")
    }

    deinit { mock.stop() }

    func accessoryctl(_ arguments: String...) async throws -> Run {
        try await accessoryctlProcess(arguments, environment: mock.bus.environment)
    }

    @Test func bleListJSONShowsManufacturerAndServiceDataAsHex() async throws {
        let run = try await accessoryctl("ble", "list", "--timeout", "0.5", "--json")
        #expect(run.code == .success, "\(run.err)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(
            devices.compactMap { $0["address"] as? String } == ["A4:C1:38:00:11:22", "24:0A:C4:12:34:56"],
            "strongest first")
        let shelly = devices[0]
        #expect(shelly["name"] as? String == "Shelly BLU")
        #expect(shelly["addressType"] as? String == "random")
        #expect(shelly["rssi"] as? Int == -48)
        #expect(shelly["manufacturerData"] as? [String: String] == ["0x0BA9": "010203"])
        #expect(shelly["serviceData"] as? [String: String] == ["0000fcd2-0000-1000-8000-00805f9b34fb": "40002a"])
        #expect(
            devices[1]["serviceData"] as? [String: String] == ["00004677-0000-1000-8000-00805f9b34fb": "020700000000"])
        #expect(
            try mock.adapterLog().calls == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"],
            "discovery is stopped on exit")
    }

    @Test func bleListTable() async throws {
        let run = try await accessoryctl("ble", "list", "--timeout", "0.3")
        #expect(run.code == .success, "\(run.err)")
        #expect(run.outLines.first?.hasPrefix("ADDRESS") == true)
        #expect(run.outLines.count == 3)
        #expect(run.outLines[1].contains("Shelly BLU") && run.outLines[1].contains("0x0BA9"))
    }

    @Test func bleListWithoutAdapterOrWithABadTimeout() async throws {
        try mock.setAdapterPower(powered: false, powerState: "off")
        let off = try await accessoryctl("ble", "list", "--timeout", "0.3")
        #expect(off.code == .failure)
        #expect(off.err.contains("is off; turn it on with 'bluetoothctl power on'"))
        #expect(try await accessoryctl("ble", "list", "--timeout", "soon").code == .usage)
    }

    @Test func improvIdentify() async throws {
        let run = try await accessoryctl("improv", "identify", "24:0A:C4:12:34:56")
        #expect(run.code == .success, "\(run.err)")
        #expect(run.out == "24:0A:C4:12:34:56 was asked to identify itself.\n")
        #expect(try mock.improvLog(improv).commands == [0x02])
        #expect(try await accessoryctl("improv", "identify", "not-an-address").code == .usage)
    }

    @Test func improvProvisionPrintsTheURLAndNeverThePassphrase() async throws {
        let run = try await accessoryctl(
            "improv", "provision", "24:0A:C4:12:34:56", "--ssid", "HomeNet", "--passphrase-file", passphraseFile.path)
        #expect(run.code == .success, "\(run.err)")
        #expect(run.out == "http://192.168.1.50/setup\n")
        #expect(run.err.contains("Sending the Wi-Fi settings for HomeNet"))
        #expect(run.err.contains("The device joined HomeNet."))
        #expect(!(run.out + run.err).contains("home-secret-42"))
        let log = try mock.improvLog(improv)
        #expect(log.ssid == "HomeNet")
        #expect(log.password == "home-secret-42")
    }

    @Test func improvProvisionWithAWrongChecksumFailsClearly() async throws {
        try mock.setImprov(improv, mode: .badChecksum)
        let run = try await accessoryctl(
            "improv", "provision", "24:0A:C4:12:34:56", "--ssid", "HomeNet", "--passphrase-file", passphraseFile.path,
            "--timeout", "5")
        #expect(run.code == .failure)
        #expect(run.err.contains("the device's response has a wrong checksum"))
    }

    @Test func matchLiveFindsTheImprovDevice() async throws {
        let run = try await accessoryctl(
            "match", "--profile", Paths.profile("improv-wifi.json"), "--live", "--timeout", "0.5", "--json")
        #expect(run.code == .success, "\(run.err)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let matches = try #require(json["matches"] as? [[String: Any]])
        #expect(matches.count == 1)
        #expect(matches.first?["item"] as? String == "Improv Wi-Fi device")
        #expect((matches.first?["bluetooth"] as? [String: Any])?["address"] as? String == "24:0A:C4:12:34:56")
        let filter = try #require(try mock.adapterLog().filters.first)
        // No UUID filter: the Improv advertisement carries 4677 as service data only, which a
        // BlueZ UUID filter would drop.
        #expect(filter.UUIDs == nil)
        #expect(filter.Transport == "le")
    }

    @Test func matchNeedsScanOrLive() async throws {
        let run = try await accessoryctl("match", "--profile", Paths.profile("improv-wifi.json"))
        #expect(run.code == .usage)
        #expect(run.err.contains("'--scan FILE' is required, or --live"))
    }
}
