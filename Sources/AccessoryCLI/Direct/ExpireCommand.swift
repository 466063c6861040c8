import AccessoryCore
import FoundationEssentials

/// `accessoryctl expire`
enum ExpireCommand {
    static let command = Command(
        path: ["expire"],
        summary: "Remove the accessory hotspot profiles whose lifetime has ended",
        discussion: """
            Deletes the NetworkManager profiles this project made (recognised by their
            accessory-setup tag) that were joined with a lifetime (lifetimeInDays) and are
            past it, and nothing else: not the person's own profiles, not join-once ones, not
            those without a lifetime. A profile in use stays connected and is removed by a
            later run once it is no longer in use. The package's accessory-setup-expire.timer
            runs this every hour as root, so profiles expire while no agent runs.
            """,
        options: [.flag("json", help: "Print what was removed and what was kept as JSON")],
        examples: ["\(AccessoryCtl.name) expire", "\(AccessoryCtl.name) expire --json"],
        run: run)

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        await HotspotCommand.run(console) { client throws(HotspotError) in
            let expired = try await client.removeExpiredHotspots(at: Date())
            if arguments.flag("json") {
                console.printJSON(expired)
                return .success
            }
            for hotspot in expired.removed {
                console.print("Removed '\(hotspot.connectionID)' (\(hotspot.ssid.escaped)): \(ended(hotspot)).")
            }
            for hotspot in expired.inUse {
                console.print(
                    "Kept '\(hotspot.connectionID)' (\(hotspot.ssid.escaped)) while it is in use: \(ended(hotspot)).")
            }
            if expired.removed.isEmpty && expired.inUse.isEmpty {
                console.print("No accessory hotspot profile has expired.")
            }
            return .success
        }
    }

    private static func ended(_ hotspot: ConfiguredHotspot) -> String {
        "its lifetime ended at \(hotspot.expires.map { $0.formatted(.iso8601) } ?? "?")"
    }
}
