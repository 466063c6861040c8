import AccessoryCore
import Foundation
import ServiceHarness
import Testing

@testable import BlueZBackend

/// ESP-IDF provisioning's GATT transport against the BlueZ template: endpoints found by their
/// user descriptions, a request written and its answer read back, a refusal told apart.
@Suite(.serialized) final class MockBlueZProvisioningTransportTests {
    static let service = "021a9004-0382-4aea-bff4-6b3f1c5adfb4"
    static func endpoint(_ id: String) -> String { "021a\(id)-0382-4aea-bff4-6b3f1c5adfb4" }

    let mock: BlueZMock
    let address: MACAddress

    init() throws {
        mock = try BlueZMock()
        try mock.addAdapter()
        address = try MACAddress("24:0A:C4:26:1F:CC")
    }

    deinit { mock.stop() }

    func client() async throws -> BlueZClient {
        try await BlueZClient.connect(busAddress: mock.bus.address)
    }

    @Test func endpointsAreFoundByTheirUserDescriptionsAndAnsweredByReadingBack() async throws {
        // The UUIDs are shuffled on purpose: only the descriptions name the endpoints.
        let device = try mock.addGATTDevice(
            address.description, name: "PROV_261FCC",
            spec: .init(
                service: Self.service, advertised: [Self.service],
                characteristics: [
                    .init(Self.endpoint("ff53"), flags: ["read", "write"], description: "prov-session"),
                    .init(Self.endpoint("ff51"), flags: ["read", "write"], description: "proto-ver"),
                    .init(Self.endpoint("ff52"), flags: ["read", "write"], description: "prov-config"),
                    .init(Self.endpoint("ff54"), flags: ["read"]),
                ],
                answers: [
                    .init(
                        write: Array("---".utf8), characteristic: Self.endpoint("ff51"),
                        value: Array(#"{"prov":{"ver":"v1.1"}}"#.utf8), delayMs: 0)
                ]))
        let transport = try await BlueZProvisioningTransport.open(address, client: try await client())
        #expect(transport.endpointNames == ["proto-ver", "prov-config", "prov-session"])
        let answer = try await transport.send(endpoint: .version, Array("---".utf8))
        #expect(String(decoding: answer, as: UTF8.self) == #"{"prov":{"ver":"v1.1"}}"#)
        #expect(try mock.gattLog(device).writes == [[Self.endpoint("ff51"), "2d2d2d"]])
        await #expect(
            throws: ProvisioningError.transport(
                endpoint: "prov-scan", "the device has no characteristic named prov-scan")
        ) {
            _ = try await transport.send(endpoint: .scan, [1])
        }
        await transport.close()
        #expect(try mock.gattLog(device).connected == false)
    }

    @Test func aRefusedRequestIsAClosedConnection() async throws {
        let device = try mock.addGATTDevice(
            address.description, name: "PROV_261FCC",
            spec: .init(
                service: Self.service, advertised: [],
                characteristics: [
                    .init(Self.endpoint("ff51"), flags: ["read", "write"], description: "prov-session"),
                    .init(Self.endpoint("ff53"), flags: ["read", "write"], description: "proto-ver"),
                ]))
        let client = try await client()
        let transport = try await BlueZProvisioningTransport.open(address, client: client)
        try mock.failCharacteristic(device + "/service0020/char0021", with: "org.bluez.Error.Failed")
        await #expect(throws: ProvisioningError.connectionClosed(endpoint: "prov-session")) {
            _ = try await transport.send(endpoint: .session, [0x08, 0x01])
        }
        await transport.close()
    }

    /// A value longer than GATT allows is no value a device can hold: refused, not kept.
    @Test func aValueLargerThanGATTAllowsIsRefused() async throws {
        try mock.addGATTDevice(
            address.description, name: "Thermometer",
            spec: .init(
                service: "181a", advertised: [],
                characteristics: [.init("2a6e", flags: ["read"], value: [UInt8](repeating: 7, count: 600))]))
        let client = try await client()
        let gatt = try await client.connect(address)
        let characteristic = try #require(gatt.services.first?.characteristics.first)
        do {
            let value = try await client.read(characteristic)
            Issue.record("read \(value.count) bytes")
        } catch {
            guard case .invalidValueLength(let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(reason.contains("512"), "\(reason)")
        }
        try await client.disconnect(gatt)
    }

    @Test func aDeviceWithoutProvisioningEndpointsIsNamed() async throws {
        let device = try mock.addGATTDevice(
            address.description, name: "Thermometer",
            spec: .init(
                service: "181a", advertised: [], characteristics: [.init("2a6e", flags: ["read"], value: [0x10, 0x09])])
        )
        await #expect(
            throws: ProvisioningError.transport(
                endpoint: "connect",
                "\(address) names no proto-ver and prov-session characteristics: it is not an ESP-IDF provisioning device"
            )
        ) {
            _ = try await BlueZProvisioningTransport.open(self.address, client: try await self.client())
        }
        #expect(try mock.gattLog(device).connected == false)
    }
}
