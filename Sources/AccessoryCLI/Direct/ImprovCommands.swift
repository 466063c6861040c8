import AccessoryCore
import BlueZBackend

/// `accessoryctl improv identify` and `accessoryctl improv provision`
enum ImprovIdentifyCommand {
    static let command = Command(
        path: ["improv", "identify"],
        summary: "Make an Improv Wi-Fi device identify itself",
        discussion: """
            Connects to the device over Bluetooth LE and sends Improv's identify RPC: the device
            blinks or beeps, so a person can tell which one it is. Works before authorization.
            """,
        options: [
            BluetoothCommand.timeoutOption("How long connecting and the RPC may take (default: 20)"),
            BluetoothCommand.adapterOption,
        ],
        positionals: PositionalSpec(name: "ADDRESS", minimum: 1, maximum: 1, help: "The device's Bluetooth address"),
        examples: ["\(AccessoryCtl.name) improv identify 24:0A:C4:12:34:56"],
        run: run)

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        let address: MACAddress
        let timeout = arguments.seconds("timeout") ?? .seconds(20)
        do {
            address = try BluetoothCommand.address(arguments)
        } catch {
            console.error("\(AccessoryCtl.name): error: \(error.message)")
            return .usage
        }
        return await BluetoothCommand.run(console) { client throws(BluetoothError) in
            do throws(ImprovError) {
                try await client.improvIdentify(address, adapter: arguments.value("adapter"), timeout: timeout)
            } catch {
                return BluetoothCommand.report(error, console)
            }
            console.print("\(address) was asked to identify itself.")
            return .success
        }
    }
}

enum ImprovProvisionCommand {
    static let command = Command(
        path: ["improv", "provision"],
        summary: "Send Wi-Fi credentials to an Improv Wi-Fi device over Bluetooth LE",
        discussion: """
            Connects to the device, waits for its authorization when it asks for one (press the
            button on the device), sends the SSID and passphrase with Improv's "send Wi-Fi
            settings" RPC and waits until the device has joined the network. Prints the URL the
            device gives to finish its setup, if any. The passphrase comes from a file or
            standard input and is never printed.
            """,
        options: [
            .value("ssid", "SSID", help: "The network the device should join", required: true),
            .value("passphrase-file", "FILE", help: "Read the passphrase from FILE (one line)"),
            .flag("passphrase-stdin", help: "Read the passphrase from standard input"),
            BluetoothCommand.timeoutOption("How long joining may take, after authorization (default: 60)"),
            BluetoothCommand.adapterOption,
        ],
        positionals: PositionalSpec(name: "ADDRESS", minimum: 1, maximum: 1, help: "The device's Bluetooth address"),
        examples: [
            "\(AccessoryCtl.name) improv provision 24:0A:C4:12:34:56 --ssid HomeNet --passphrase-file /root/home.pass",
            "pass show home-wifi | \(AccessoryCtl.name) improv provision 24:0A:C4:12:34:56 --ssid HomeNet --passphrase-stdin",
        ],
        run: run)

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        let address: MACAddress
        let timeout = arguments.seconds("timeout") ?? .seconds(60)
        let ssid: SSID
        let passphrase: Secret
        do throws(UsageError) {
            address = try BluetoothCommand.address(arguments)
            do { ssid = try SSID(notation: arguments.value("ssid")!) } catch { throw UsageError("--ssid: \(error)") }
            guard let secret = try HotspotCommand.passphrase(arguments, console) else {
                throw UsageError("give the passphrase with --passphrase-file or --passphrase-stdin")
            }
            passphrase = secret
        } catch {
            console.error("\(AccessoryCtl.name): error: \(error.message)")
            return .usage
        }
        return await BluetoothCommand.run(console) { client throws(BluetoothError) in
            let url: String?
            do throws(ImprovError) {
                url = try await client.improvProvision(
                    address, ssid: ssid, passphrase: passphrase, adapter: arguments.value("adapter"), timeout: timeout,
                    authorizationTimeout: .seconds(120)
                ) { step in
                    let text: TerminalText =
                        switch step {
                        case .connecting: "Connecting to \(address)…"
                        case .awaitingAuthorization:
                            "The device asks for authorization: press its button (or do what its manual says)…"
                        case .authorized: "Authorized."
                        case .sendingCredentials: "Sending the Wi-Fi settings for \(ssid)…"
                        case .provisioning: "The device is joining \(ssid)…"
                        case .provisioned: "The device joined \(ssid)."
                        }
                    console.error(text)
                }
            } catch {
                return BluetoothCommand.report(error, console)
            }
            if let url {
                console.print("\(url)")
            } else {
                console.print("Provisioned; the device gave no URL.")
            }
            return .success
        }
    }
}
