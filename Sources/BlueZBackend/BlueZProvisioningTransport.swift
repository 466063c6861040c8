import AccessoryCore
import FoundationEssentials
import GLibRuntime

/// ESP-IDF provisioning over Bluetooth LE: each protocomm endpoint is a characteristic named
/// by its Characteristic User Description (0x2901), as ESP-IDF tells clients to find them; a
/// request is written with a response, and the answer read back from the same characteristic.
public final class BlueZProvisioningTransport: ProvisioningTransport {
    /// The Characteristic User Description descriptor.
    public static let userDescriptionUUID = BluetoothUUID(assigned: 0x2901)

    private let client: BlueZClient
    private let device: GATTDevice
    private let endpoints: [ProvisioningEndpoint: GATTCharacteristic]
    private let timeout: Duration

    /// The endpoints the device names, by name.
    public var endpointNames: [String] { endpoints.keys.map(\.rawValue).sorted() }

    private init(
        client: BlueZClient, device: GATTDevice, endpoints: [ProvisioningEndpoint: GATTCharacteristic],
        timeout: Duration
    ) {
        self.client = client
        self.device = device
        self.endpoints = endpoints
        self.timeout = timeout
    }

    /// Connects to the device and finds its endpoints. A device without `proto-ver` and
    /// `prov-session` is no provisioning device.
    public static func open(
        _ address: MACAddress, client: BlueZClient, adapter: String? = nil, timeout: Duration = .seconds(20)
    ) async throws(ProvisioningError) -> BlueZProvisioningTransport {
        let device: GATTDevice
        do { device = try await client.connect(address, adapter: adapter, timeout: timeout) } catch {
            throw .transport(endpoint: "connect", error.description)
        }
        var endpoints: [ProvisioningEndpoint: GATTCharacteristic] = [:]
        for service in device.services {
            for characteristic in service.characteristics {
                guard let name = try? await client.userDescription(of: characteristic, timeout: timeout) else {
                    continue
                }
                endpoints[ProvisioningEndpoint(rawValue: name)] = characteristic
            }
        }
        guard endpoints[.version] != nil, endpoints[.session] != nil else {
            await client.disconnectQuietly(device)
            throw .transport(
                endpoint: "connect",
                "\(address) names no proto-ver and prov-session characteristics: it is not an ESP-IDF provisioning device"
            )
        }
        return BlueZProvisioningTransport(client: client, device: device, endpoints: endpoints, timeout: timeout)
    }

    public func send(endpoint: ProvisioningEndpoint, _ body: [UInt8]) async throws(ProvisioningError) -> [UInt8] {
        guard let characteristic = endpoints[endpoint] else {
            throw .transport(endpoint: endpoint.rawValue, "the device has no characteristic named \(endpoint)")
        }
        do {
            try await client.write(characteristic, body, type: .request, timeout: timeout)
        } catch .failed, .notPermitted {
            // protocomm turns a request away by failing it, as it closes the HTTP connection.
            throw .connectionClosed(endpoint: endpoint.rawValue)
        } catch .cancelled {
            throw .cancelled
        } catch {
            throw .transport(endpoint: endpoint.rawValue, error.description)
        }
        do {
            return try await client.read(characteristic, timeout: timeout)
        } catch .cancelled {
            throw .cancelled
        } catch {
            throw .transport(endpoint: endpoint.rawValue, error.description)
        }
    }

    /// Ends the Bluetooth link.
    public func close() async {
        await client.disconnectQuietly(device)
    }
}

extension BlueZClient {
    /// The text of a characteristic's User Description descriptor, if it has one.
    func userDescription(of characteristic: GATTCharacteristic, timeout: Duration) async throws(BluetoothError)
        -> String?
    {
        let descriptor = paths(with: Self.descriptorInterface).first { path in
            property(path, Self.descriptorInterface, "Characteristic")?.string == characteristic.handle
                && (try? BluetoothUUID(property(path, Self.descriptorInterface, "UUID")?.string ?? ""))
                    == BlueZProvisioningTransport.userDescriptionUUID
        }
        guard let descriptor else { return nil }
        let reply = try await call(descriptor, Self.descriptorInterface, "ReadValue", [.vardict([])], timeout: timeout)
        return reply.elements.first?.bytes.flatMap { String(validating: $0, as: UTF8.self) }
    }

    func disconnectQuietly(_ device: GATTDevice) async {
        await runToCompletion { try? await self.disconnect(device) }
    }
}
