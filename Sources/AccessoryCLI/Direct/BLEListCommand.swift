import AccessoryCore
import BlueZBackend

/// `accessoryctl ble list`
enum BLEListCommand {
    static let command = Command(
        path: ["ble", "list"],
        summary: "List the Bluetooth LE devices advertising nearby",
        discussion: """
            Scans over Bluetooth LE through BlueZ for a few seconds and lists each device heard,
            strongest first: address, name, signal, advertised services and the company ids of
            its manufacturer data. With --json, manufacturer data is given as hex keyed by
            company id (0x004C) and service data as hex keyed by service UUID. Discovery is
            always stopped afterwards.
            """,
        options: [
            BluetoothCommand.timeoutOption("How long to scan (default: 5)"),
            BluetoothCommand.adapterOption,
            .flag("json", help: "Print the devices as JSON"),
        ],
        examples: [
            "\(AccessoryCtl.name) ble list",
            "\(AccessoryCtl.name) ble list --timeout 10 --json",
        ],
        run: run)

    private struct Output: Encodable {
        var devices: [BLEAdvertisement]
    }

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        let timeout = arguments.seconds("timeout") ?? .seconds(5)
        return await BluetoothCommand.run(console) { client throws(BluetoothError) in
            let progress = HotspotCommand.progress(console)
            progress?("Scanning…")
            let devices = try await BluetoothCommand.scan(
                client, [], adapter: arguments.value("adapter"), timeout: timeout
            ) { count in
                progress?("Scanning… \(count) device\(count == 1 ? "" : "s")")
            }
            HotspotCommand.clearProgress(console)
            if arguments.flag("json") {
                console.printJSON(Output(devices: devices))
                return .success
            }
            guard !devices.isEmpty else {
                console.print("No Bluetooth LE device was heard.")
                return .success
            }
            var rows = [["ADDRESS", "NAME", "RSSI", "SERVICES", "COMPANIES"]]
            for device in devices {
                rows.append([
                    device.address.description, device.name ?? "-", device.rssi.map { "\($0) dBm" } ?? "-",
                    device.serviceUUIDs.isEmpty ? "-" : device.serviceUUIDs.map(\.string).joined(separator: ","),
                    device.manufacturerData.isEmpty
                        ? "-" : device.manufacturerData.keys.sorted().map(\.description).joined(separator: ","),
                ])
            }
            console.printTable(rows)
            return .success
        }
    }
}
