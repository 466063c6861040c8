import AccessoryCore
import Foundation
import ServiceHarness
import Testing

@testable import BlueZBackend

/// GATT and Improv Wi-Fi against the project's BlueZ template on a private bus.
@Suite(.serialized) final class MockBlueZImprovTests {
    let mock: BlueZMock
    let device: String
    let address: MACAddress

    init() throws {
        mock = try BlueZMock()
        try mock.addAdapter()
        address = try MACAddress("24:0A:C4:12:34:56")
        device = try mock.addImprovDevice(address.description, name: "Improv Plug")
    }

    deinit { mock.stop() }

    func client() async throws -> BlueZClient {
        try await BlueZClient.connect(busAddress: mock.bus.address)
    }

    @Test func gattConnectReadWriteNotifyDisconnect() async throws {
        let client = try await client()
        let gatt = try await client.connect(address)
        let service = try #require(gatt.service(Improv.serviceUUID))
        #expect(
            service.characteristics.map(\.uuid) == [
                Improv.stateUUID, Improv.errorUUID, Improv.rpcCommandUUID, Improv.rpcResultUUID,
                Improv.capabilitiesUUID,
            ])
        let capabilities = try #require(service.characteristic(Improv.capabilitiesUUID))
        #expect(try await client.read(capabilities) == [0b111])

        let error = try #require(service.characteristic(Improv.errorUUID))
        let notifications = EventCollector(try await client.notifications(error))
        let command = try #require(service.characteristic(Improv.rpcCommandUUID))
        try await client.write(command, [0x42, 0x00, 0x42], type: .command)
        #expect(await notifications.next() == [0x02], "an unknown command is notified as error 2")
        #expect(try mock.improvLog(device).writeTypes == ["command"])
        await client.stopNotifications(error)
        #expect(await notifications.next(timeout: .milliseconds(200)) == nil)

        try await client.disconnect(gatt)
        #expect(
            try mock.call(device, "org.freedesktop.DBus.Properties", "Get", ["org.bluez.Device1", "Connected"])
                .contains("false"))
    }

    @Test func bluezErrorsAreTyped() async throws {
        let client = try await client()
        let gatt = try await client.connect(address)
        let capabilities = try #require(gatt.service(Improv.serviceUUID)?.characteristic(Improv.capabilitiesUUID))
        await #expect(throws: BluetoothError.notPermitted("Writing is not permitted")) {
            try await client.write(capabilities, [1])
        }
        for (name, expected) in [
            ("org.bluez.Error.NotAuthorized", BluetoothError.notAuthorized("Operation is not permitted")),
            ("org.bluez.Error.InProgress", .inProgress("Operation is not permitted")),
            ("org.bluez.Error.Failed", .failed("Failed: Operation is not permitted")),
        ] {
            try mock.failCharacteristic(capabilities.handle, with: name)
            await #expect(throws: expected) { _ = try await client.read(capabilities) }
        }
        await #expect(throws: BluetoothError.deviceNotFound(try MACAddress("02:00:00:00:00:99"))) {
            _ = try await client.connect(try MACAddress("02:00:00:00:00:99"), timeout: .milliseconds(300))
        }
    }

    @Test func identifyAndDeviceInfoAndScan() async throws {
        let client = try await client()
        try await client.improvIdentify(address)
        let info = try await client.improvDeviceInfo(address)
        #expect(
            info
                == ImprovDeviceInfo(
                    firmware: "MockFirmware", version: "2024.6.0", chip: "ESP32-C3", name: "Improv Plug"))
        let networks = try await client.improvScan(address)
        #expect(networks.map(\.ssid.escaped) == ["HomeNet", "Cafe Libre"])
        #expect(networks.map(\.rssi) == [-52, -80])
        #expect(networks.map(\.authentication) == ["WPA2", "NO"])
        let log = try mock.improvLog(device)
        #expect(log.commands == [0x02, 0x03, 0x04])
        #expect(log.packets.first == [0x02, 0x00, 0x02])
    }

    @Test func provisionWaitsForAuthorizationThenReturnsTheRedirectURL() async throws {
        let locked = try mock.addImprovDevice("24:0A:C4:00:00:07", name: "Locked Plug", state: 1)
        try mock.setImprov(locked, url: "http://10.0.0.7/welcome")
        let client = try await client()
        let steps = Locked<[ImprovProgress]>([])
        let passphrase = "correct horse battery staple"
        // The button is pressed once the client says it waits for it, not after a fixed delay
        // that a slow run (a sanitizer build) can outlast before the client reads the state.
        let mock = mock
        let url = try await client.improvProvision(
            try MACAddress("24:0A:C4:00:00:07"), ssid: try SSID("HomeNet-5G"), passphrase: Secret(passphrase),
            authorizationTimeout: .seconds(20)
        ) { step in
            steps.withLock { $0.append(step) }
            if step == .awaitingAuthorization { Task.detached { try mock.authorizeImprovDevice(locked) } }
        }
        #expect(url == "http://10.0.0.7/welcome")
        #expect(
            steps.withLock { $0 } == [
                .connecting, .awaitingAuthorization, .authorized, .sendingCredentials, .provisioning, .provisioned,
            ])
        let log = try mock.improvLog(locked)
        #expect(log.ssid == "HomeNet-5G")
        #expect(log.password == passphrase)
        #expect(log.state == 4)
        // 1 + 1 + 1 + 10 + 1 + 28 + 1 = 43 bytes, in packets of 20.
        #expect(log.packets.map(\.count) == [20, 20, 3])
        #expect(log.writeTypes == ["request", "request", "request"])
    }

    @Test func authorizationThatNeverComesTimesOut() async throws {
        let locked = try mock.addImprovDevice("24:0A:C4:00:00:08", state: 1)
        let client = try await client()
        await #expect(throws: ImprovError.timedOut("waiting for authorization on the device", seconds: 1)) {
            _ = try await client.improvProvision(
                try MACAddress("24:0A:C4:00:00:08"), ssid: try SSID("HomeNet"), passphrase: Secret("secret12"),
                authorizationTimeout: .seconds(1))
        }
        #expect(try mock.improvLog(locked).commands.isEmpty)
    }

    @Test func wrongChecksumIsAClearError() async throws {
        try mock.setImprov(device, mode: .badChecksum)
        let client = try await client()
        await #expect {
            _ = try await client.improvDeviceInfo(address, timeout: .seconds(30))
        } throws: { error in
            guard case ImprovError.badChecksum = error else { return false }
            return (error as? ImprovError)?.description.contains("wrong checksum") == true
        }
    }

    @Test func unknownRPCIsAClearError() async throws {
        try mock.setImprov(device, mode: .unknownRPC)
        let client = try await client()
        await #expect(throws: ImprovError.unknownRPC(.identify)) { try await client.improvIdentify(self.address) }
        await #expect(throws: ImprovError.unknownRPC(.sendWiFiSettings)) {
            _ = try await client.improvProvision(
                self.address, ssid: try SSID("HomeNet"), passphrase: Secret("secret12"))
        }
    }

    @Test func unableToConnectIsReported() async throws {
        try mock.setImprov(device, failConnect: true)
        let client = try await client()
        await #expect(throws: ImprovError.unableToConnect) {
            _ = try await client.improvProvision(
                self.address, ssid: try SSID("HomeNet"), passphrase: Secret("wrong-one"))
        }
    }

    @Test func provisionFindsADeviceBlueZHasNotHeardYet() async throws {
        let later = try mock.addImprovDeviceHeardLater("24:0A:C4:00:00:09", after: .milliseconds(600))
        let client = try await client()
        let url = try await client.improvProvision(
            try MACAddress("24:0A:C4:00:00:09"), ssid: try SSID("HomeNet"), passphrase: Secret("secret12"),
            timeout: .seconds(10))
        #expect(url == "http://192.168.1.50/setup")
        #expect(try mock.improvLog(later).ssid == "HomeNet")
        #expect(try mock.adapterLog().calls == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
        #expect(await client.adapters().first?.discovering == false)
    }

    @Test func aDeviceNeverHeardStopsTheDiscoveryItStarted() async throws {
        let client = try await client()
        await #expect(throws: BluetoothError.deviceNotFound(try MACAddress("02:00:00:00:00:98"))) {
            _ = try await client.connect(try MACAddress("02:00:00:00:00:98"), timeout: .milliseconds(500))
        }
        #expect(try mock.adapterLog().calls == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
        #expect(await client.adapters().first?.discovering == false)
    }

    @Test func aSilentDeviceTimesOutAfterTheWaitAskedFor() async throws {
        try mock.setImprov(device, mode: .silent)
        let client = try await client()
        await #expect(throws: ImprovError.timedOut("the device info RPC", seconds: 1)) {
            _ = try await client.improvDeviceInfo(self.address, timeout: .seconds(1))
        }
    }

    @Test func aDeviceWithoutImprovIsRefused() async throws {
        try mock.addDevice("02:00:00:00:00:05", name: "Heart", uuids: ["180d"])
        let client = try await client()
        await #expect(throws: ImprovError.notImprovDevice(try MACAddress("02:00:00:00:00:05"))) {
            try await client.improvIdentify(try MACAddress("02:00:00:00:00:05"))
        }
    }

    /// Cancelling a provisioning that waits for the person to press the device's button still
    /// turns its notifications off and disconnects, and says it was cancelled.
    @Test func cancelledProvisioningStillCleansUp() async throws {
        let locked = try mock.addImprovDevice("24:0A:C4:00:00:08", name: "Locked Plug", state: 1)
        try mock.setImprov(locked, authorizeAfterMilliseconds: 600_000)
        let client = try await client()
        let steps = Locked<[ImprovProgress]>([])
        let provisioning = Task {
            try await client.improvProvision(
                try MACAddress("24:0A:C4:00:00:08"), ssid: try SSID("HomeNet"), passphrase: Secret("home-pass")
            ) {
                step in steps.withLock { $0.append(step) }
            }
        }
        _ = try await poll(timeout: .seconds(20)) {
            steps.withLock { $0.contains(.awaitingAuthorization) } ? true : nil
        }
        provisioning.cancel()
        await #expect(throws: ImprovError.bluetooth(.cancelled)) { try await provisioning.value }
        let objects = try mock.call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", [])
        let device = try #require(objects.range(of: "'\(locked)': {"), "the device is still known")
        let deviceProperties = objects[device.upperBound...].prefix { $0 != "}" }
        #expect(deviceProperties.contains("'Connected': <false>"), "\(deviceProperties)")
        #expect(!objects.contains("'Notifying': <true>"), "every notification was stopped")
    }
}
