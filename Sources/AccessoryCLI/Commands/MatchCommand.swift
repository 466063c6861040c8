import AccessoryCore
import Foundation

/// `accessoryctl match --profile FILE --scan FILE`
enum MatchCommand {
    static let command = Command(
        path: ["match"],
        summary: "Match a recorded scan against the display items of profiles",
        discussion: """
            Matches the Wi-Fi access points and Bluetooth LE advertisements of a recorded scan
            (format: docs/scan-format.md) against the picker display items of one or more
            profiles, as the picker would. Each device is reported once, for the first item
            that matches it; access points are one device only when they share a BSSID.
            Exits 0 whether or not anything matched, 1 when a file cannot be used.
            """,
        options: [
            .value("profile", "FILE", help: "A profile whose items to match (repeatable)", required: true, repeatable: true),
            .value("scan", "FILE", help: "A recorded scan (JSON)", required: true),
            .flag("json", help: "Print the matches as JSON"),
        ],
        examples: [
            "\(AccessoryCtl.name) match --profile profiles/wled.json --scan examples/scans/demo.json",
            "\(AccessoryCtl.name) match --profile profiles/shelly.json --profile profiles/tasmota.json --scan scan.json --json",
        ],
        run: run)

    private struct MatchOutput: Encodable {
        var profile: String
        var item: String
        var itemIndex: Int
        var transport: String
        var wifi: WiFiScanEntry?
        var bluetooth: BLEAdvertisement?
    }

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        var failed = false
        var items: [(profile: String, item: PickerDisplayItem)] = []
        for path in arguments.all("profile") {
            do {
                let profile = try AccessoryProfile.load(contentsOf: URL(fileURLWithPath: path))
                items += profile.items.map { (profile.id, $0) }
            } catch {
                console.error(error.description)
                failed = true
            }
        }
        let scan: RecordedScan
        do {
            scan = try RecordedScan.load(contentsOf: URL(fileURLWithPath: arguments.value("scan")!))
        } catch {
            console.error(error.description)
            return .failure
        }
        if failed { return .failure }

        let matcher = AccessoryMatcher(descriptors: items.map(\.item.descriptor))
        let matches = matcher.matches(wifi: scan.wifi, bluetooth: scan.bluetooth).map { match in
            let (profile, item) = items[match.itemIndex]
            switch match.device {
            case .wifi(let entry):
                return MatchOutput(profile: profile, item: item.name, itemIndex: match.itemIndex, transport: "wifi", wifi: entry)
            case .bluetooth(let advertisement):
                return MatchOutput(
                    profile: profile, item: item.name, itemIndex: match.itemIndex, transport: "bluetooth", bluetooth: advertisement)
            }
        }

        if arguments.flag("json") {
            console.printJSON(["matches": matches])
            return .success
        }
        guard !matches.isEmpty else {
            console.print("No accessory in the scan (\(scan.wifi.count) access points, \(scan.bluetooth.count) Bluetooth devices) matches.")
            return .success
        }
        var rows = [["ITEM", "PROFILE", "VIA", "DEVICE", "ADDRESS", "SIGNAL"]]
        for match in matches {
            if let entry = match.wifi {
                rows.append([
                    terminalSafe(match.item), match.profile, "Wi-Fi", entry.ssid?.escaped ?? "(hidden)",
                    entry.bssid.description, "\(entry.strength)% \(entry.frequency) MHz \(entry.security)",
                ])
            } else if let advertisement = match.bluetooth {
                rows.append([
                    terminalSafe(match.item), match.profile, "Bluetooth", advertisement.name.map(terminalSafe) ?? "(no name)",
                    advertisement.address.description, advertisement.rssi.map { "\($0) dBm" } ?? "-",
                ])
            }
        }
        table(rows).forEach { console.print($0) }
        return .success
    }
}
