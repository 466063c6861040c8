import AccessoryCore
import BlueZBackend
import FoundationEssentials

/// What the Bluetooth commands share: connecting to BlueZ, reporting its errors, parsing
/// addresses and timeouts.
enum BluetoothCommand {
    /// Runs `body` with BlueZ, as the core's `BluetoothManaging`, turning a `BluetoothError`
    /// into a message and exit status.
    static func run(_ console: Console, _ body: (any BluetoothManaging) async throws(BluetoothError) -> ExitCode) async
        -> ExitCode
    {
        do {
            return try await body(try await connect())
        } catch {
            return report(error, console)
        }
    }

    /// BlueZ on the system bus.
    static func connect() async throws(BluetoothError) -> any BluetoothManaging {
        try await BlueZClient.connect()
    }

    static func report(_ error: BluetoothError, _ console: Console) -> ExitCode {
        console.error("\(AccessoryCtl.name): error: \(error)")
        if case .notAuthorized = error { return .notAuthorized }
        return .failure
    }

    static func report(_ error: ImprovError, _ console: Console) -> ExitCode {
        if case .bluetooth(let error) = error { return report(error, console) }
        console.error("\(AccessoryCtl.name): error: \(error)")
        return .failure
    }

    /// `--timeout SECONDS` of the Bluetooth commands: fractions allowed, at most an hour.
    static func timeoutOption(_ help: String) -> OptionSpec {
        let range = NumberRange(lowerBound: 0.1, upperBound: 3600, isFractional: true, unit: "seconds")
        return .number("timeout", "SECONDS", range, help: help)
    }

    static func address(_ arguments: ParsedArguments) throws(UsageError) -> MACAddress {
        let text = arguments.positionals.first ?? ""
        do { return try MACAddress(text) } catch { throw UsageError("ADDRESS: \(error)") }
    }

    /// LE discovery for `timeout`; the latest advertisement of each device still in range.
    static func scan(
        _ client: any BluetoothManaging, _ descriptors: [DiscoveryDescriptor], adapter: String?, timeout: Duration,
        seen: (@Sendable (Int) -> Void)? = nil
    ) async throws(BluetoothError) -> [BLEAdvertisement] {
        let events = try await client.discover(descriptors, adapter: adapter)
        let stopper = Task {
            try? await Task.sleep(for: timeout)
            await client.stopDiscovery()
        }
        var devices: [MACAddress: BLEAdvertisement] = [:]
        for await event in events {
            switch event {
            case .found(let advertisement), .updated(let advertisement): devices[advertisement.address] = advertisement
            case .lost(let address): devices[address] = nil
            }
            seen?(devices.count)
        }
        stopper.cancel()
        await client.stopDiscovery()
        return devices.values.sorted { ($0.rssi ?? .min, $1.address) > ($1.rssi ?? .min, $0.address) }
    }

    static let adapterOption = OptionSpec.value(
        "adapter", "NAME", help: "The Bluetooth adapter (default: the first one, such as hci0)")
}
