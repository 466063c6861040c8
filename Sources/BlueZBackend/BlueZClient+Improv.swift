import AccessoryCore
import FoundationEssentials
import GLibRuntime

/// Improv Wi-Fi over BLE, on the GATT calls of the client.
extension BlueZClient {
    struct ImprovSession: Sendable {
        var device: GATTDevice
        var state: GATTCharacteristic
        var error: GATTCharacteristic
        var command: GATTCharacteristic
        var result: GATTCharacteristic
        var capabilities: ImprovCapabilities?
        var observer: UInt64
        /// The key of the session's inbox.
        var inbox: UInt64
    }

    /// Makes the device identify itself (blink, beep).
    public func improvIdentify(_ address: MACAddress, adapter: String? = nil, timeout: Duration = .seconds(20))
        async throws(ImprovError)
    {
        try await withImprov(address, adapter: adapter, timeout: timeout) { client, session throws(ImprovError) in
            if let capabilities = session.capabilities, !capabilities.contains(.identify) {
                throw .unsupported("identify")
            }
            _ = try await client.rpc(
                session, .identify, frame: Improv.frame(.identify), expectsResult: false, timeout: timeout)
        }
    }

    public func improvDeviceInfo(_ address: MACAddress, adapter: String? = nil, timeout: Duration = .seconds(20))
        async throws(ImprovError) -> ImprovDeviceInfo
    {
        try await withImprov(address, adapter: adapter, timeout: timeout) { client, session throws(ImprovError) in
            if let capabilities = session.capabilities, !capabilities.contains(.deviceInfo) {
                throw .unsupported("device info")
            }
            let result = try await client.rpc(
                session, .deviceInfo, frame: Improv.frame(.deviceInfo), expectsResult: true, timeout: timeout)
            return try ImprovDeviceInfo(result!)
        }
    }

    /// The networks the device itself hears.
    public func improvScan(_ address: MACAddress, adapter: String? = nil, timeout: Duration = .seconds(30))
        async throws(ImprovError) -> [ImprovNetwork]
    {
        try await withImprov(address, adapter: adapter, timeout: timeout) { client, session throws(ImprovError) in
            if let capabilities = session.capabilities, !capabilities.contains(.scanWiFi) {
                throw .unsupported("Wi-Fi scan")
            }
            let result = try await client.rpc(
                session, .scanWiFi, frame: Improv.frame(.scanWiFi), expectsResult: true, timeout: timeout)
            return try ImprovNetwork.list(result!)
        }
    }

    /// Sends Wi-Fi settings and returns the redirect URL the device gives, if any. When the
    /// device requires authorization, reports `awaitingAuthorization` and waits for it.
    public func improvProvision(
        _ address: MACAddress, ssid: SSID, passphrase: Secret, adapter: String? = nil,
        timeout: Duration = .seconds(60), authorizationTimeout: Duration = .seconds(120),
        progress: @escaping @Sendable (ImprovProgress) -> Void = { _ in }
    ) async throws(ImprovError) -> String? {
        let frame = try Improv.wifiSettingsFrame(ssid: ssid, passphrase: passphrase)
        progress(.connecting)
        return try await withImprov(address, adapter: adapter, timeout: timeout) {
            client, session throws(ImprovError) in
            let state = ImprovState(rawValue: try await client.readImprov(session.state).first ?? 0)
            if state == .authorizationRequired {
                progress(.awaitingAuthorization)
                let id = session.inbox
                let authorized = try await client.improvWait(timeout: authorizationTimeout) {
                    client.improvInboxes[id].map { $0.authorized || $0.outcome != nil } ?? false
                }
                if case .failure(let error)? = client.improvInboxes[id]?.outcome { throw error }
                guard authorized else {
                    throw .timedOut(
                        "waiting for authorization on the device", seconds: Int(authorizationTimeout.components.seconds)
                    )
                }
                progress(.authorized)
            } else if state == .provisioned {
                throw .unexpectedResponse("the device is already provisioned")
            }
            progress(.sendingCredentials)
            let result = try await client.rpc(
                session, .sendWiFiSettings, frame: frame, expectsResult: true, timeout: timeout, provisioning: progress)
            progress(.provisioned)
            return result?.texts.first.flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    // MARK: Session

    private func withImprov<T: Sendable>(
        _ address: MACAddress, adapter: String?, timeout: Duration,
        _ body: (isolated BlueZClient, ImprovSession) async throws(ImprovError) -> T
    ) async throws(ImprovError) -> T {
        let session = try await openImprov(address, adapter: adapter, timeout: timeout)
        let outcome: Result<T, ImprovError>
        do throws(ImprovError) {
            outcome = .success(try await body(self, session))
        } catch {
            outcome = .failure(error)
        }
        observers[session.observer] = nil
        improvInboxes[session.inbox] = nil
        // Whatever became of the body, even in a cancelled task: notifications off, link down.
        await runToCompletion {
            for characteristic in [session.state, session.error, session.result] {
                _ = try? await self.call(characteristic.handle, Self.characteristicInterface, "StopNotify")
            }
            try? await self.disconnect(session.device)
        }
        return try outcome.get()
    }

    private func openImprov(_ address: MACAddress, adapter: String?, timeout: Duration) async throws(ImprovError)
        -> ImprovSession
    {
        let device: GATTDevice
        do { device = try await connect(address, adapter: adapter, timeout: timeout) } catch { throw .bluetooth(error) }
        guard let service = device.service(Improv.serviceUUID),
            let state = service.characteristic(Improv.stateUUID), let error = service.characteristic(Improv.errorUUID),
            let command = service.characteristic(Improv.rpcCommandUUID),
            let result = service.characteristic(Improv.rpcResultUUID)
        else {
            await runToCompletion { try? await self.disconnect(device) }
            throw .notImprovDevice(address)
        }
        let paths = (state: state.handle, error: error.handle, result: result.handle)
        nextID += 1
        let id = nextID
        improvInboxes[id] = ImprovExchange()
        let observer = observe { client, change in
            guard case .changed(let path, Self.characteristicInterface, let properties) = change,
                let value = properties["Value"]?.bytes
            else { return }
            switch path {
            case paths.state: client.improvInboxes[id]?.receive(value, from: .state)
            case paths.error: client.improvInboxes[id]?.receive(value, from: .error)
            case paths.result: client.improvInboxes[id]?.receive(value, from: .result)
            default: break
            }
        }
        var session = ImprovSession(
            device: device, state: state, error: error, command: command, result: result, observer: observer, inbox: id)
        do {
            for characteristic in [state, error, result] {
                _ = try await call(characteristic.handle, Self.characteristicInterface, "StartNotify", timeout: timeout)
            }
            if let characteristic = service.characteristic(Improv.capabilitiesUUID) {
                session.capabilities = ImprovCapabilities(
                    rawValue: try await read(characteristic, timeout: timeout).first ?? 0)
            }
        } catch {
            observers[observer] = nil
            improvInboxes[id] = nil
            try? await disconnect(device)
            throw .bluetooth(error)
        }
        return session
    }

    func readImprov(_ characteristic: GATTCharacteristic) async throws(ImprovError) -> [UInt8] {
        do { return try await read(characteristic) } catch { throw .bluetooth(error) }
    }

    /// `wait` with its cancellation as an Improv error.
    private func improvWait(timeout: Duration, until condition: @escaping () -> Bool) async throws(ImprovError) -> Bool
    {
        do { return try await wait(timeout: timeout, until: condition) } catch { throw .bluetooth(error) }
    }

    /// Writes an RPC frame in packets and waits for its result or an error. Without an expected
    /// result, waits a moment for an error only. With `provisioning`, the state `provisioned`
    /// also ends the wait, and the state changes are reported to it.
    func rpc(
        _ session: ImprovSession, _ command: ImprovCommand, frame: [UInt8], expectsResult: Bool,
        timeout: Duration, provisioning: (@Sendable (ImprovProgress) -> Void)? = nil
    ) async throws(ImprovError) -> ImprovRPCResult? {
        let id = session.inbox
        improvInboxes[id, default: ImprovExchange()].start(command)
        for packet in Improv.packets(frame) {
            do { try await write(session.command, packet, type: .request, timeout: timeout) } catch {
                throw .bluetooth(error)
            }
        }
        let window = expectsResult ? timeout : min(timeout, .seconds(1))
        let settled = try await improvWait(timeout: window) {
            self.settle(id, command, provisioning)
                || (provisioning != nil && self.improvInboxes[id]?.provisioned == true)
                // Without a result to wait for, the device's "no error" settles it too.
                || (!expectsResult && self.improvInboxes[id]?.errorNotified == true)
        }
        if let result = improvInboxes[id]?.outcome { return try result.get() }
        if settled {
            // Provisioned without a result yet: the URL may follow the state.
            if try await improvWait(timeout: .seconds(2), until: { self.settle(id, command, nil) }),
                let result = improvInboxes[id]?.outcome
            {
                return try result.get()
            }
            return nil
        }
        guard !expectsResult else { throw .timedOut("the \(command) RPC", seconds: Int(timeout.components.seconds)) }
        return nil
    }

    /// Takes in the session's notifications; true once the RPC has a result or an error.
    private func settle(_ id: UInt64, _ command: ImprovCommand, _ provisioning: (@Sendable (ImprovProgress) -> Void)?)
        -> Bool
    {
        improvInboxes[id]?.settle(provisioning) ?? false
    }
}
