import AccessoryCore
import NetworkManagerBackend

/// `accessoryctl configured`
enum ConfiguredCommand {
    static let command = Command(
        path: ["configured"],
        summary: "List the accessory hotspot profiles this tool made",
        discussion: """
            Lists the NetworkManager profiles 'accessoryctl join' made (recognised by their
            accessory-setup tag), never the person's own: SSID, whether it is join-once, when
            it expires and whether it is in use. Expired stored profiles not in use are
            deleted first.
            """,
        options: [.flag("json", help: "Print the profiles as JSON")],
        examples: ["\(AccessoryCtl.name) configured", "\(AccessoryCtl.name) configured --json"],
        run: run)

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        await HotspotCommand.run(console) { client throws(HotspotError) in
            let hotspots = try await client.configuredHotspots()
            if arguments.flag("json") {
                console.printJSON(hotspots)
                return .success
            }
            guard !hotspots.isEmpty else {
                console.print("No accessory hotspot profile is stored.")
                return .success
            }
            var rows = [["SSID", "PROFILE", "ONCE", "EXPIRES", "ACTIVE"]]
            for hotspot in hotspots {
                rows.append([
                    hotspot.ssid.escaped, hotspot.connectionID, hotspot.joinOnce ? "yes" : "no",
                    hotspot.expires.map { $0.formatted(.iso8601) } ?? "never", hotspot.active ? "yes" : "no",
                ])
            }
            console.printTable(rows)
            return .success
        }
    }
}
