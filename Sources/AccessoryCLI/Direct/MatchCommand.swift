import AccessoryCore
import BlueZBackend
import FoundationEssentials
import NetworkManagerBackend

/// `accessoryctl match --profile FILE (--scan FILE | --live)`
enum MatchCommand {
    static let command = Command(
        path: ["match"],
        summary: "Match a recorded or live scan against the display items of profiles",
        discussion: """
            Matches the Wi-Fi access points and Bluetooth LE advertisements of a recorded scan
            (format: docs/scan-format.md), or with --live of a scan made now, against the
            picker display items of one or more profiles, as the picker would. A live scan
            listens for Bluetooth LE advertisements through BlueZ (with a discovery filter
            built from the items) and, when NetworkManager is reachable, scans for Wi-Fi; a
            source that is not available is reported and skipped. Each device is reported
            once, for the first item that matches it; access points are one device only when
            they share a BSSID. When a profile's hotspot is hidden, the live Wi-Fi scan probes
            for its items' exact SSIDs (a hidden network answers only a probe for its whole
            name, so an ssidPrefix item never finds one). Exits 0 whether or not anything
            matched, 1 when a file cannot be used or no source could scan.
            """,
        options: [
            .value(
                "profile", "FILE", help: "A profile whose items to match (repeatable)", required: true, repeatable: true
            ),
            .value("scan", "FILE", help: "A recorded scan (JSON)"),
            .flag("live", help: "Scan now over Bluetooth LE and Wi-Fi instead of reading a file"),
            BluetoothCommand.timeoutOption("With --live, how long to listen for Bluetooth LE (default: 5)"),
            .flag("json", help: "Print the matches as JSON"),
        ],
        examples: [
            "\(AccessoryCtl.name) match --profile profiles/wled.json --scan examples/scans/demo.json",
            "\(AccessoryCtl.name) match --profile profiles/shelly.json --profile profiles/tasmota.json --scan scan.json --json",
            "\(AccessoryCtl.name) match --profile profiles/improv-wifi.json --live --timeout 10",
        ],
        usage: "--profile FILE... (--scan FILE | --live [--timeout SECONDS]) [--json]",
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
        let live = arguments.flag("live")
        do throws(UsageError) {
            switch (live, arguments.value("scan") != nil) {
            case (false, false): throw UsageError("'--scan FILE' is required, or --live")
            case (true, true): throw UsageError("give --scan FILE or --live, not both")
            default: break
            }
        } catch {
            console.error("\(AccessoryCtl.name): error: \(error.message)")
            console.error("Usage: \(command.synopsis)")
            return .usage
        }
        guard let (items, probing) = readItems(arguments.all("profile"), console) else { return .failure }
        let scan: RecordedScan
        if live {
            let timeout = arguments.seconds("timeout") ?? .seconds(5)
            guard
                let liveScan = await liveScan(
                    items.map(\.item.descriptor), probing: probing, timeout: timeout, console)
            else {
                return .failure
            }
            scan = liveScan
        } else {
            do {
                scan = try RecordedScan.load(contentsOf: URL(fileURLWithPath: arguments.value("scan")!))
            } catch {
                for issue in error.issues { console.error("\(error.path): \(issue)") }
                return .failure
            }
        }
        let matches = match(items, in: scan)
        if arguments.flag("json") {
            console.printJSON(["matches": matches])
        } else {
            printTable(matches, of: scan, console)
        }
        return .success
    }

    /// Every item of the profile files, with its profile's id, and the hidden SSIDs a live scan
    /// probes for; `nil` when a file was refused (each fault printed).
    private static func readItems(
        _ paths: [String], _ console: Console
    ) -> (items: [(profile: String, item: PickerDisplayItem)], probing: [SSID])? {
        var failed = false
        var items: [(profile: String, item: PickerDisplayItem)] = []
        var probing: [SSID] = []
        for path in paths {
            do {
                let profile = try AccessoryProfile.load(contentsOf: URL(fileURLWithPath: path))
                items += profile.items.map { (profile.id, $0) }
                probing += ScanProbe.ssids(for: profile.items.map(\.descriptor), of: profile)
            } catch {
                for issue in error.issues { console.error("\(error.path): \(issue)") }
                failed = true
            }
        }
        return failed ? nil : (items, ScanProbe.unique(probing))
    }

    private static func match(
        _ items: [(profile: String, item: PickerDisplayItem)], in scan: RecordedScan
    ) -> [MatchOutput] {
        let matcher = AccessoryMatcher(descriptors: items.map(\.item.descriptor))
        return matcher.matches(wifi: scan.wifi, bluetooth: scan.bluetooth).map { match in
            let (profile, item) = items[match.itemIndex]
            switch match.device {
            case .wifi(let entry):
                return MatchOutput(
                    profile: profile, item: item.name, itemIndex: match.itemIndex, transport: "wifi", wifi: entry)
            case .bluetooth(let advertisement):
                return MatchOutput(
                    profile: profile, item: item.name, itemIndex: match.itemIndex, transport: "bluetooth",
                    bluetooth: advertisement)
            }
        }
    }

    private static func printTable(_ matches: [MatchOutput], of scan: RecordedScan, _ console: Console) {
        guard !matches.isEmpty else {
            console.print(
                "No accessory in the scan (\(scan.wifi.count) access points, \(scan.bluetooth.count) Bluetooth devices) matches."
            )
            return
        }
        var rows = [["ITEM", "PROFILE", "VIA", "DEVICE", "ADDRESS", "SIGNAL"]]
        for match in matches {
            if let entry = match.wifi {
                rows.append([
                    match.item, match.profile, "Wi-Fi", entry.ssid?.escaped ?? "(hidden)",
                    entry.bssid.description, "\(entry.strength)% \(entry.frequency) MHz \(entry.security)",
                ])
            } else if let advertisement = match.bluetooth {
                rows.append([
                    match.item, match.profile, "Bluetooth", advertisement.name ?? "(no name)",
                    advertisement.address.description, advertisement.rssi.map { "\($0) dBm" } ?? "-",
                ])
            }
        }
        console.printTable(rows)
    }

    /// Bluetooth LE advertisements and Wi-Fi access points heard now, the Wi-Fi scan probing
    /// for the hidden SSIDs `probing` (one scan for each `ScanProbe.limit` of them); `nil` when
    /// no source could scan.
    private static func liveScan(
        _ descriptors: [DiscoveryDescriptor], probing: [SSID], timeout: Duration, _ console: Console
    ) async -> RecordedScan? {
        var scan = RecordedScan()
        var sources = 0
        let bluetooth = descriptors.filter(\.hasBluetoothIdentifier)
        if !bluetooth.isEmpty {
            do throws(BluetoothError) {
                let client = try await BluetoothCommand.connect()
                HotspotCommand.progress(console)?("Listening for Bluetooth LE accessories…")
                scan.bluetooth = try await BluetoothCommand.scan(client, bluetooth, adapter: nil, timeout: timeout)
                sources += 1
            } catch {
                console.error("\(AccessoryCtl.name): Bluetooth LE skipped: \(error)")
            }
        }
        if descriptors.contains(where: \.hasWiFiIdentifier) {
            do throws(HotspotError) {
                let client = try await NetworkManagerClient.connect()
                HotspotCommand.progress(console)?("Scanning for Wi-Fi accessories…")
                let scans = max(1, (probing.count + ScanProbe.limit - 1) / ScanProbe.limit)
                for round in 0..<scans {
                    let probe = ScanProbe.window(of: probing, round: round)
                    scan.wifi = try await client.accessPoints(device: nil, rescan: true, probing: probe)
                }
                sources += 1
            } catch {
                console.error("\(AccessoryCtl.name): Wi-Fi skipped: \(error)")
            }
        }
        HotspotCommand.clearProgress(console)
        return sources > 0 ? scan : nil
    }
}
