import AccessoryCore
import Testing

/// The Improv Wi-Fi codec, against the examples of the spec (improv-wifi.com/ble).
@Suite struct ImprovTests {
    @Test func commandFramesCarryLengthAndChecksum() throws {
        #expect(try Improv.frame(.identify) == [0x02, 0x00, 0x02])
        #expect(try Improv.frame(.deviceInfo) == [0x03, 0x00, 0x03])
        #expect(try Improv.frame(.scanWiFi) == [0x04, 0x00, 0x04])
        #expect(Improv.checksum([0xFF, 0x02]) == 0x01, "only the low byte of the sum is kept")
    }

    @Test func wifiSettingsFrameMatchesTheSpecExample() throws {
        let frame = try Improv.wifiSettingsFrame(ssid: try SSID("MyWirelessAP"), passphrase: Secret("mysecurepassword"))
        let data = [0x0C] + Array("MyWirelessAP".utf8) + [0x10] + Array("mysecurepassword".utf8)
        #expect(frame.prefix(2) == [0x01, 0x1E])
        #expect(Array(frame.dropFirst(2).dropLast()) == data)
        #expect(frame.last == Improv.checksum(frame.dropLast()))
        #expect(frame.count == 33)
    }

    @Test func tooLongCredentialsAreRefused() throws {
        let ssid = try SSID(String(repeating: "s", count: 32))
        #expect(throws: ImprovError.self) {
            _ = try Improv.wifiSettingsFrame(ssid: ssid, passphrase: Secret(String(repeating: "p", count: 222)))
        }
        #expect(
            try Improv.wifiSettingsFrame(ssid: ssid, passphrase: Secret(String(repeating: "p", count: 221))).count
                == 258)
    }

    @Test func framesAreSplitIntoPacketsOf20Bytes() {
        let frame = (0..<45).map(UInt8.init)
        let packets = Improv.packets(frame)
        #expect(packets.map(\.count) == [20, 20, 5])
        #expect(packets.flatMap { $0 } == frame)
        #expect(Improv.packets([1, 0, 1]) == [[1, 0, 1]])
    }

    static func result(_ command: UInt8, _ strings: [String], checksumDelta: UInt8 = 0) -> [UInt8] {
        let data = strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
        let body = [command, UInt8(data.count)] + data
        return body + [Improv.checksum(body) &+ checksumDelta]
    }

    @Test func resultsParseIntoStrings() throws {
        let result = try Improv.parseResult(Self.result(0x01, ["http://192.168.1.5/"]))
        #expect(result.command == .sendWiFiSettings)
        #expect(result.texts == ["http://192.168.1.5/"])
        #expect(try Improv.parseResult(Self.result(0x01, [])).strings.isEmpty)
        let info = try ImprovDeviceInfo(
            Improv.parseResult(Self.result(0x03, ["ESPHome", "2021.11.0", "ESP32-C3", "Temperature Monitor"])))
        #expect(
            info
                == ImprovDeviceInfo(
                    firmware: "ESPHome", version: "2021.11.0", chip: "ESP32-C3", name: "Temperature Monitor"))
        let networks = try ImprovNetwork.list(
            Improv.parseResult(Self.result(0x04, ["MyWirelessNetwork", "-60", "WPA2", "Other", "-52", "WEP"])))
        #expect(
            networks == [
                ImprovNetwork(ssid: try SSID("MyWirelessNetwork"), rssi: -60, authentication: "WPA2"),
                ImprovNetwork(ssid: try SSID("Other"), rssi: -52, authentication: "WEP"),
            ])
    }

    @Test func aWrongChecksumIsReportedWithBothValues() {
        let frame = Self.result(0x03, ["a", "b", "c", "d"], checksumDelta: 1)
        let good = frame.last! &- 1
        #expect(throws: ImprovError.badChecksum(expected: good, received: frame.last!)) {
            try Improv.parseResult(frame)
        }
    }

    @Test func malformedResultsAreRefused() {
        #expect(throws: ImprovError.self) { try Improv.parseResult([0x01]) }
        #expect(throws: ImprovError.self) { try Improv.parseResult([0x01, 0x05, 0x00, 0x06]) }
        // A string length running past the data.
        let body: [UInt8] = [0x01, 0x02, 0x05, 0x41]
        #expect(throws: ImprovError.self) { try Improv.parseResult(body + [Improv.checksum(body)]) }
        #expect(throws: ImprovError.self) {
            try ImprovDeviceInfo(ImprovRPCResult(command: .deviceInfo, strings: [[0x41]]))
        }
        #expect(throws: ImprovError.self) {
            try ImprovNetwork.list(ImprovRPCResult(command: .scanWiFi, strings: [[0x41]]))
        }
    }

    @Test func splitResultsAreReassembled() throws {
        let frame = Self.result(0x03, ["ESPHome", "2021.11.0", "ESP32-C3", "Temperature Monitor"])
        var assembler = ImprovResultAssembler()
        let packets = Improv.packets(frame)
        for packet in packets.dropLast() { #expect(try assembler.append(packet) == nil) }
        #expect(try assembler.append(packets.last!)?.texts.last == "Temperature Monitor")
    }

    @Test func statesErrorsAndCapabilities() {
        #expect(ImprovState(rawValue: 1) == .authorizationRequired)
        #expect(ImprovState(rawValue: 9).description == "state 0x09")
        #expect(ImprovErrorState.none.error(for: .identify) == nil)
        #expect(ImprovErrorState(rawValue: 1).error(for: .identify) == .invalidRPC(.identify))
        #expect(ImprovErrorState(rawValue: 2).error(for: .scanWiFi) == .unknownRPC(.scanWiFi))
        #expect(ImprovErrorState(rawValue: 3).error(for: .sendWiFiSettings) == .unableToConnect)
        #expect(ImprovErrorState(rawValue: 4).error(for: .sendWiFiSettings) == .notAuthorized)
        #expect(ImprovErrorState(rawValue: 0xFF).error(for: .identify) == .deviceError(0xFF))
        #expect(ImprovCapabilities(rawValue: 0b101) == [.identify, .scanWiFi])
        let advertisement = BLEAdvertisement(
            address: MACAddress(rawValue: 1), serviceUUIDs: [Improv.serviceUUID],
            serviceData: [BluetoothUUID(assigned: 0x4677): [0x01, 0x03, 0, 0, 0, 0]])
        #expect(ImprovAdvertisement(advertisement)?.state == .authorizationRequired)
        #expect(ImprovAdvertisement(advertisement)?.capabilities == [.identify, .deviceInfo])
    }

    @Test func errorsHaveStableCodesAndNoSecret() throws {
        #expect(ImprovError.unknownRPC(.identify).code == 301)
        #expect(ImprovError.unknownRPC(.identify).errorName == "ImprovUnknownRPC")
        #expect(ImprovError.bluetooth(.adapterPoweredOff("hci0")).code == BluetoothError.adapterPoweredOff("hci0").code)
        #expect(!"\(Secret("hunter22"))".contains("hunter22"))
    }
}
