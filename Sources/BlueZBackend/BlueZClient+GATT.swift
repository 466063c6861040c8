import AccessoryCore
import FoundationEssentials
import GLibRuntime

extension BlueZClient {
    /// The path of the device with `address`, looking for it with LE discovery for up to
    /// `timeout` when BlueZ does not know it yet.
    func devicePath(_ address: MACAddress, adapter name: String?, timeout: Duration) async throws(BluetoothError)
        -> String
    {
        let adapter = try usableAdapter(name)
        let find = { () -> String? in
            self.paths(with: Self.deviceInterface).first { path in
                self.property(path, Self.deviceInterface, "Adapter")?.string == adapter
                    && (try? MACAddress(self.property(path, Self.deviceInterface, "Address")?.string ?? "")) == address
            }
        }
        if let path = find() { return path }
        // Discovery runs as long as its stream lives, so the stream is kept until the wait ends,
        // and this discovery alone is stopped on every way out (endDiscovery cannot be cancelled).
        let discovery = try await startDiscovery([], adapter: name)
        let found: Result<Bool, BluetoothError>
        do throws(BluetoothError) {
            found = .success(try await wait(timeout: timeout) { find() != nil })
        } catch {
            found = .failure(error)
        }
        await endDiscovery(discovery.id)
        withExtendedLifetime(discovery.events) {}
        guard try found.get(), let path = find() else { throw .deviceNotFound(address) }
        return path
    }

    /// Connects to a device and waits until BlueZ has resolved its GATT services. A link whose
    /// services are still unresolved after half of `timeout` is dropped and made once more:
    /// BlueZ now and then leaves a link's services unresolved (the lab's emulated controllers
    /// once did for 20 s), and a new link resolves them, as Home Assistant's aiohomekit found.
    public func connect(_ address: MACAddress, adapter: String? = nil, timeout: Duration = .seconds(20))
        async throws(BluetoothError) -> GATTDevice
    {
        let path = try await devicePath(address, adapter: adapter, timeout: timeout)
        let deadline = ContinuousClock.now + timeout
        for patience in [timeout / 2, timeout] {
            if try await link(path, until: deadline, resolvedWithin: patience) {
                return GATTDevice(address: address, services: services(of: path), handle: path)
            }
        }
        throw .timedOut("resolving the GATT services of \(address)", seconds: Int(timeout.components.seconds))
    }

    /// Makes a link to the device unless there is one, and waits for its services up to
    /// `patience` (and no later than `deadline`). A link that fails or stays unresolved is
    /// dropped again.
    private func link(
        _ path: String, until deadline: ContinuousClock.Instant, resolvedWithin patience: Duration
    ) async throws(BluetoothError) -> Bool {
        func left() -> Duration { max(.zero, deadline - .now) }
        let resolved: Bool
        do throws(BluetoothError) {
            if property(path, Self.deviceInterface, "Connected")?.bool != true {
                let budget = left()
                do {
                    _ = try await call(path, Self.deviceInterface, "Connect", timeout: budget)
                } catch .failed(let message) where message.hasPrefix("AlreadyConnected") {
                    // Connected meanwhile by someone else: fine.
                } catch .timedOut where budget < patience {
                    // What was left of the whole connection's time ran out (a slow first link
                    // can leave the second almost none): the link goes, and `connect` says so.
                    await runToCompletion { _ = try? await self.call(path, Self.deviceInterface, "Disconnect") }
                    return false
                }
            }
            resolved = try await wait(timeout: min(patience, left())) {
                self.property(path, Self.deviceInterface, "ServicesResolved")?.bool == true
            }
        } catch {
            await runToCompletion { _ = try? await self.call(path, Self.deviceInterface, "Disconnect") }
            throw error
        }
        if !resolved { await runToCompletion { _ = try? await self.call(path, Self.deviceInterface, "Disconnect") } }
        return resolved
    }

    /// The device with its services read again, once `complete` holds for them or `timeout`
    /// passed: BlueZ batches its signals per object, so `ServicesResolved` can come before the
    /// last GATT objects do.
    func settled(
        _ device: GATTDevice, timeout: Duration = .seconds(3), until complete: @escaping ([GATTService]) -> Bool
    ) async -> GATTDevice {
        let path = device.handle
        _ = try? await wait(timeout: timeout) { complete(self.services(of: path)) }
        return GATTDevice(address: device.address, services: services(of: path), handle: path)
    }

    private func services(of device: String) -> [GATTService] {
        paths(with: Self.serviceInterface)
            .filter { property($0, Self.serviceInterface, "Device")?.string == device }
            .compactMap { path -> GATTService? in
                guard let uuid = try? BluetoothUUID(property(path, Self.serviceInterface, "UUID")?.string ?? "") else {
                    return nil
                }
                let characteristics = paths(with: Self.characteristicInterface)
                    .filter { property($0, Self.characteristicInterface, "Service")?.string == path }
                    .compactMap { path -> GATTCharacteristic? in
                        guard
                            let uuid = try? BluetoothUUID(
                                property(path, Self.characteristicInterface, "UUID")?.string ?? "")
                        else { return nil }
                        let flags = (property(path, Self.characteristicInterface, "Flags")?.elements ?? []).compactMap(
                            \.string)
                        return GATTCharacteristic(uuid: uuid, flags: flags, handle: path)
                    }
                return GATTService(uuid: uuid, characteristics: characteristics, handle: path)
            }
    }

    public func disconnect(_ device: GATTDevice) async throws(BluetoothError) {
        guard property(device.handle, Self.deviceInterface, "Connected")?.bool == true else { return }
        _ = try await call(device.handle, Self.deviceInterface, "Disconnect")
    }

    public func read(_ characteristic: GATTCharacteristic, timeout: Duration = .seconds(10))
        async throws(BluetoothError) -> [UInt8]
    {
        let reply = try await call(
            characteristic.handle, Self.characteristicInterface, "ReadValue", [.vardict([])], timeout: timeout)
        let value = reply.elements.first?.bytes ?? []
        guard value.count <= ImprovExchange.valueBytes else {
            throw .invalidValueLength(
                "\(characteristic.uuid) read \(value.count) bytes, over GATT's \(ImprovExchange.valueBytes)")
        }
        return value
    }

    public func write(
        _ characteristic: GATTCharacteristic, _ value: [UInt8], type: GATTWriteType = .request,
        timeout: Duration = .seconds(10)
    ) async throws(BluetoothError) {
        _ = try await call(
            characteristic.handle, Self.characteristicInterface, "WriteValue",
            [.bytes(value), .vardict([("type", .string(type.rawValue))])], timeout: timeout)
    }

    /// Turns notifications on (`StartNotify`) and streams each notified value. Ending the
    /// stream or `stopNotifications` turns them off again.
    public func notifications(_ characteristic: GATTCharacteristic, timeout: Duration = .seconds(10))
        async throws(BluetoothError) -> AsyncStream<[UInt8]>
    {
        // A device notifying faster than the reader reads, or more than GATT allows, is not held.
        let (stream, continuation) = AsyncStream.makeStream(
            of: [UInt8].self, bufferingPolicy: .bufferingNewest(Self.notificationsBuffered))
        let path = characteristic.handle
        let observer = observe { _, change in
            if case .changed(path, Self.characteristicInterface, let properties) = change,
                let value = properties["Value"]?.bytes, value.count <= ImprovExchange.valueBytes
            {
                continuation.yield(value)
            }
        }
        do {
            _ = try await call(path, Self.characteristicInterface, "StartNotify", timeout: timeout)
        } catch {
            observers[observer] = nil
            throw error
        }
        notifying[path, default: []].append((observer, continuation))
        continuation.onTermination = { [weak self] _ in
            Task { await self?.stopNotifications(characteristic) }
        }
        return stream
    }

    /// Turns notifications off and ends their streams.
    public func stopNotifications(_ characteristic: GATTCharacteristic) async {
        guard let sessions = notifying.removeValue(forKey: characteristic.handle) else { return }
        for (observer, continuation) in sessions {
            observers[observer] = nil
            continuation.finish()
        }
        let path = characteristic.handle
        await runToCompletion { _ = try? await self.call(path, Self.characteristicInterface, "StopNotify") }
    }
}
