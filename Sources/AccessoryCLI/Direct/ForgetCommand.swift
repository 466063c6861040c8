import AccessoryCore
import NetworkManagerBackend

/// `accessoryctl forget`
enum ForgetCommand {
    static let command = Command(
        path: ["forget"],
        summary: "Delete the stored profiles for an accessory hotspot",
        discussion: """
            Deletes the profiles this tool made for the SSID, leaving the hotspot first if the
            device is on it. Profiles the person made are never touched. Exits 1 when there
            is no such profile.
            """,
        options: [
            .value("ssid", "SSID", help: "The hotspot's SSID (hex:… for bytes that are not UTF-8)", required: true),
            .flag("json", help: "Print the removed profiles as JSON"),
        ],
        examples: ["\(AccessoryCtl.name) forget --ssid Cam-Setup"],
        run: run)

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        let ssid: SSID
        do {
            ssid = try SSID(notation: arguments.value("ssid")!)
        } catch {
            console.error("\(AccessoryCtl.name): error: ssid: \(error)")
            return .failure
        }
        return await HotspotCommand.run(console) { client throws(HotspotError) in
            let removed = try await client.forget(ssid: ssid)
            if arguments.flag("json") {
                console.printJSON(removed)
            } else if !removed.isEmpty {
                console.print("Forgot \(ssid.escaped) (\(removed.count) profile\(removed.count == 1 ? "" : "s")).")
            }
            if removed.isEmpty {
                console.error("\(AccessoryCtl.name): error: no profile of this tool is stored for \(ssid.escaped)")
                return .failure
            }
            return .success
        }
    }
}
