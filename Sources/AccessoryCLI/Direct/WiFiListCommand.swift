import AccessoryCore
import NetworkManagerBackend

/// `accessoryctl wifi list`
enum WiFiListCommand {
    static let command = Command(
        path: ["wifi", "list"],
        summary: "List the Wi-Fi access points in range",
        discussion: """
            Lists the access points NetworkManager hears on a Wi-Fi device, strongest first:
            SSID (escaped when it is not printable UTF-8), BSSID, signal strength, frequency
            and the security each offers. With --rescan, asks for a fresh scan first and
            waits for it to finish. A hidden network is listed without its SSID, unless the
            scan probed for it: --probe SSID (repeatable, at most 15, implies --rescan) asks
            for the exact SSID, and a hidden network of that name then answers with it. As
            NetworkManager turns a scan away right after another, a probe is sent again (up
            to three scans in all) until every probed network has answered.
            """,
        options: [
            .flag("rescan", help: "Scan before listing, and wait for the scan"),
            .value("probe", "SSID", help: "Probe for this hidden network in the scan (repeatable)", repeatable: true),
            HotspotCommand.deviceOption,
            .flag("json", help: "Print the access points as JSON"),
        ],
        examples: [
            "\(AccessoryCtl.name) wifi list",
            "\(AccessoryCtl.name) wifi list --rescan --json",
            "\(AccessoryCtl.name) wifi list --probe Quiet-Setup-4004",
        ],
        run: run)

    private struct Output: Encodable {
        var device: String
        var accessPoints: [WiFiScanEntry]
    }

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        let probing: [SSID]
        do throws(UsageError) {
            probing = try probedSSIDs(arguments.all("probe"))
        } catch {
            console.error("\(AccessoryCtl.name): error: \(error.message)")
            console.error("Usage: \(command.synopsis)")
            return .usage
        }
        return await HotspotCommand.run(console) { client throws(HotspotError) in
            let device = try await client.wifiDevices().first {
                arguments.value("device") == nil || $0.interface == arguments.value("device")
            }
            guard let device else { throw .noWiFiDevice(arguments.value("device")) }
            let rescan = arguments.flag("rescan") || !probing.isEmpty
            if rescan { HotspotCommand.progress(console)?("Scanning on \(device.interface)…") }
            var heard = try await client.accessPoints(device: device.interface, rescan: rescan, probing: probing)
            for _ in 1..<Self.probeScans where !probing.allSatisfy({ ssid in heard.contains { $0.ssid == ssid } }) {
                try? await Task.sleep(for: .seconds(2))
                heard = try await client.accessPoints(device: device.interface, rescan: true, probing: probing)
            }
            let entries = heard.sorted { ($0.strength, $1.bssid) > ($1.strength, $0.bssid) }
            HotspotCommand.clearProgress(console)

            if arguments.flag("json") {
                console.printJSON(Output(device: device.interface, accessPoints: entries))
                return .success
            }
            guard !entries.isEmpty else {
                console.print("No access point in range of \(device.interface).")
                return .success
            }
            var rows = [["SSID", "BSSID", "SIGNAL", "FREQ", "SECURITY"]]
            for entry in entries {
                rows.append([
                    entry.ssid?.escaped ?? "(hidden)", entry.bssid.description, "\(entry.strength)%",
                    "\(entry.frequency) MHz", entry.security.description,
                ])
            }
            console.printTable(rows)
            return .success
        }
    }

    /// The most scans `--probe` sends until every probed network answered.
    static let probeScans = 3

    /// The SSIDs of `--probe`: exact names (a prefix cannot be probed for), one scan's worth.
    private static func probedSSIDs(_ values: [String]) throws(UsageError) -> [SSID] {
        var ssids: [SSID] = []
        for value in values {
            do {
                ssids.append(try SSID(notation: value))
            } catch {
                throw UsageError("--probe '\(value)': \(error)")
            }
        }
        ssids = ScanProbe.unique(ssids)
        guard ssids.count <= ScanProbe.limit else {
            throw UsageError("--probe: \(ssids.count) SSIDs, but one scan probes for at most \(ScanProbe.limit)")
        }
        return ssids
    }
}
