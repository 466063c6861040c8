import AccessoryCore
import BlueZBackend
import Foundation
import NetworkManagerBackend

/// `accessoryctl handoff`: the Bluetooth-to-Wi-Fi handoff of a `bluetoothToWiFi` profile, run
/// directly on BlueZ and NetworkManager (root).
enum HandoffCommand {
    static let command = Command(
        path: ["handoff"],
        summary: "Switch an accessory's hotspot on over Bluetooth LE and join it",
        discussion: """
            For a profile with handoff bluetoothToWiFi (a camera, say): connects to the
            accessory over Bluetooth LE, pairs where the profile requires it, switches its
            hotspot on and waits until the accessory reports it ready, reads the SSID and
            passphrase it reveals, disconnects, and joins that hotspot through NetworkManager
            as 'join --ssid' does. If the join fails, the hotspot is switched off again.

            Afterwards, 'accessoryctl leave' brings the previous network back, and
            'handoff ADDRESS --profile FILE --switch-off' switches the accessory's hotspot off.
            The revealed passphrase is never printed.
            """,
        options: [
            .value("profile", "FILE", help: "The accessory's profile (handoff bluetoothToWiFi)", required: true),
            .flag("switch-off", help: "Only switch the accessory's hotspot off (after 'leave')"),
            BluetoothCommand.adapterOption,
            HotspotCommand.deviceOption,
            BluetoothCommand.timeoutOption("How long each Bluetooth step and the join may take (default: 45)"),
            .number("restore-after", "SECONDS", NumberRange(0...86_400, "seconds"),
                    help: "NetworkManager restores the previous network after this (default 900, 0: never)"),
            .flag("json", help: "Print the result as JSON"),
        ],
        positionals: PositionalSpec(name: "ADDRESS", minimum: 1, maximum: 1, help: "The accessory's Bluetooth address"),
        examples: [
            "\(AccessoryCtl.name) handoff D4:D9:19:AA:BB:CC --profile /usr/share/accessory-setup/profiles/gopro.json",
            "\(AccessoryCtl.name) leave && \(AccessoryCtl.name) handoff D4:D9:19:AA:BB:CC --profile gopro.json --switch-off",
        ],
        run: run)

    /// What `--json` prints after a handoff.
    struct Report: Encodable {
        var address: String
        var profile: String
        var joined: JoinedHotspot
    }

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        let address: MACAddress
        let profile: AccessoryProfile
        let handoff: BluetoothHandoff
        let policy: HotspotPolicy
        let timeout = arguments.seconds("timeout") ?? .seconds(45)
        do throws(UsageError) {
            address = try BluetoothCommand.address(arguments)
            let path = arguments.value("profile")!
            do { profile = try AccessoryProfile.load(contentsOf: URL(fileURLWithPath: path)) } catch {
                throw UsageError("\(error)")
            }
            guard profile.handoff == .bluetoothToWiFi, let gatt = profile.bluetoothHandoff, let hotspot = profile.hotspot else {
                throw UsageError("\(path): profile \(profile.id) has handoff \(profile.handoff.rawValue), not bluetoothToWiFi")
            }
            handoff = gatt
            policy = hotspot
        } catch {
            console.error("\(AccessoryCtl.name): error: \(error.message)")
            return .usage
        }
        let adapter = arguments.value("adapter")
        let progress = HotspotCommand.progress(console)
        let steps: @Sendable (HotspotHandoffStep) -> Void = { step in
            let text = switch step {
            case .pairing: "Pairing with \(address)…"
            case .connecting: "Connecting to \(address)…"
            case .switchingOn: "Switching the accessory's hotspot on…"
            case .waitingForHotspot: "Waiting for the accessory's hotspot…"
            case .reading: "Reading the hotspot's name and passphrase…"
            case .disconnecting: "Disconnecting Bluetooth…"
            case .joining: "Joining the accessory's hotspot…"
            case .switchingOff: "Switching the accessory's hotspot off…"
            }
            if let progress { progress(text) } else if !arguments.flag("json") { console.error("\(text)") }
        }

        if arguments.flag("switch-off") {
            return await BluetoothCommand.run(console) { bluetooth throws(BluetoothError) in
                do throws(HotspotHandoffError) {
                    try await bluetooth.switchHotspotOff(address, handoff: handoff, adapter: adapter, timeout: timeout, progress: steps)
                } catch {
                    HotspotCommand.clearProgress(console)
                    return report(error, console)
                }
                HotspotCommand.clearProgress(console)
                console.print(handoff.switchOff == nil
                    ? "Profile \(profile.id) cannot switch the accessory's hotspot off; it stays as the accessory keeps it."
                    : "Switched the hotspot of \(address) off.")
                return .success
            }
        }

        var options = JoinOptions(device: arguments.value("device"))
        options.timeout = timeout
        if let restoreAfter = arguments.seconds("restore-after") { options.restoreAfter = restoreAfter == .zero ? nil : restoreAfter }
        return await BluetoothCommand.run(console) { bluetooth throws(BluetoothError) in
            let joined: JoinedHotspot
            do throws(HotspotHandoffError) {
                let revealed = try await bluetooth.revealHotspot(address, handoff: handoff, adapter: adapter, timeout: timeout, progress: steps)
                let configuration = try revealed.configuration(policy: policy)
                steps(.joining)
                do throws(HotspotError) {
                    let network = try await NetworkManagerClient.connect()
                    joined = try await network.join(configuration, options: options)
                } catch {
                    // The accessory need not keep a hotspot nobody could join.
                    try? await bluetooth.switchHotspotOff(address, handoff: handoff, adapter: adapter, timeout: timeout, progress: steps)
                    throw .join(error)
                }
            } catch {
                HotspotCommand.clearProgress(console)
                return report(error, console)
            }
            HotspotCommand.clearProgress(console)
            if arguments.flag("json") {
                console.printJSON(Report(address: address.description, profile: profile.id, joined: joined))
                return .success
            }
            let ip = joined.ipv4Address.map { ", address \($0)" } ?? ""
            console.print("Joined \(joined.ssid.escaped), the hotspot of \(address), on \(joined.device) (profile '\(joined.connectionID)'\(ip)).")
            let back: TerminalText = joined.previousConnection.map { " to return to '\($0)'" } ?? ""
            console.print("Run '\(AccessoryCtl.name) leave'\(back).")
            return .success
        }
    }

    static func report(_ error: HotspotHandoffError, _ console: Console) -> ExitCode {
        if case .bluetooth(let error) = error { return BluetoothCommand.report(error, console) }
        if case .join(let error) = error { return HotspotCommand.report(error, console) }
        console.error("\(AccessoryCtl.name): error: \(error)")
        return .failure
    }
}
