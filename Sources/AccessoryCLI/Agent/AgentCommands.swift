import AccessoryCore
import AccessorySetupKit
import AgentInterface
import FoundationEssentials

/// The record commands through the agent: `list`, `show`, `remove`, `rename`, `authorize`.
enum RecordCommands {
    static let list = Command(
        path: ["list"],
        summary: "List your accessories (through the agent)",
        discussion: """
            Lists the accessories you authorized with 'accessoryctl pick', or your sandboxed
            applications did, as the agent records them: name, state, profile, application
            (the sandboxed application's id, or 'host'; in JSON an "application" key, absent
            for host), hotspot and Bluetooth address. Another user's need --user and the
            \(PolkitAction.manageOthers.rawValue) polkit action.
            """,
        options: [
            .value("profile", "ID", help: "Only the accessories of this profile"),
            .number(
                "user", "UID", NumberRange(0...Int(UInt32.max), "user ids"),
                help: "List this user's instead (polkit decides)"),
            .flag("json", help: "Print the accessories as JSON"),
        ],
        examples: ["\(AccessoryCtl.name) list", "\(AccessoryCtl.name) list --profile ge.wled.softap --json"],
        run: { arguments, console in
            await AgentCommand.run(console) { client throws(AgentFailure) in
                let accessories = try await client.accessories(
                    profile: arguments.value("profile"), user: arguments.integer("user").map(UInt32.init))
                if arguments.flag("json") {
                    console.printJSON(accessories.map(\.json))
                } else if accessories.isEmpty {
                    console.print("No accessories; 'accessoryctl pick PROFILE' adds one.")
                } else {
                    console.printTable(AgentCommand.table(accessories))
                }
                return .success
            }
        })

    static let show = Command(
        path: ["show"],
        summary: "Show one of your accessories (through the agent)",
        discussion: "Prints everything the agent recorded about the accessory with the id ID.",
        options: [.flag("json", help: "Print the accessory as JSON")],
        positionals: PositionalSpec(
            name: "ID", minimum: 1, maximum: 1, help: "The accessory's id, as 'list' prints it",
            leadsWithAccessoryID: true),
        examples: ["\(AccessoryCtl.name) show 6f1c2a4e-8d0b-4c1e-9a57-0b1d2c3e4f50"],
        run: { arguments, console in
            await AgentCommand.run(console) { client throws(AgentFailure) in
                let accessory = try await client.accessory(id: arguments.positionals[0])
                if arguments.flag("json") {
                    console.printJSON(accessory.json)
                    return .success
                }
                guard case .object(let fields) = accessory.json else { return .success }
                for key in fields.keys.sorted() where key != "descriptor" {
                    if case .object(let nested)? = fields[key] {
                        for inner in nested.keys.sorted() {
                            console.print("\(key).\(inner): \(nested[inner]?.plainText ?? "")")
                        }
                    } else {
                        console.print("\(key): \(fields[key]?.plainText ?? "")")
                    }
                }
                if case .object(let descriptor) = accessory.descriptor {
                    for key in descriptor.keys.sorted() {
                        console.print("descriptor.\(key): \(descriptor[key]?.plainText ?? "")")
                    }
                }
                return .success
            }
        })

    static let remove = Command(
        path: ["remove"],
        summary: "Remove an accessory and forget its hotspot profiles (through the agent)",
        discussion: """
            Removes the accessory's record; the NetworkManager profiles made for its hotspot
            are forgotten, and sessions of its app receive accessoryRemoved.
            """,
        options: [jsonOption],
        positionals: PositionalSpec(
            name: "ID", minimum: 1, maximum: 1, help: "The accessory's id", leadsWithAccessoryID: true),
        examples: ["\(AccessoryCtl.name) remove 6f1c2a4e-8d0b-4c1e-9a57-0b1d2c3e4f50"],
        run: { arguments, console in
            await AgentCommand.run(console) { client throws(AgentFailure) in
                let id = arguments.positionals[0]
                let accessory = try await client.accessory(id: id)
                try await client.removeAccessory(id: id)
                return done(accessory, "Removed \(AgentCommand.describe(accessory)).", arguments, console)
            }
        })

    static let rename = Command(
        path: ["rename"],
        summary: "Give an accessory a new name (through the agent)",
        discussion: """
            Renames the accessory (at most 128 bytes, no control characters). With --ssid its
            hotspot's SSID becomes the new name too, as Apple's RenameOptions.ssid.
            """,
        options: [.flag("ssid", help: "Rename the accessory's hotspot SSID too"), jsonOption],
        positionals: PositionalSpec(
            name: "ID NAME", minimum: 2, maximum: 2, help: "The accessory's id and its new name",
            leadsWithAccessoryID: true),
        examples: ["\(AccessoryCtl.name) rename 6f1c2a4e-8d0b-4c1e-9a57-0b1d2c3e4f50 \"Desk lamp\""],
        run: { arguments, console in
            await AgentCommand.run(console) { client throws(AgentFailure) in
                let id = arguments.positionals[0]
                try await client.renameAccessory(id: id, to: arguments.positionals[1], ssid: arguments.flag("ssid"))
                let accessory = try await client.accessory(id: id)
                return done(accessory, "Renamed: \(AgentCommand.describe(accessory)).", arguments, console)
            }
        })

    static let authorize = Command(
        path: ["authorize"],
        summary: "Finish or fail an accessory's pending authorization (through the agent)",
        discussion: """
            An accessory picked from an item with finishInApp or confirmAuthorization waits in
            awaitingAuthorization until its app finishes the setup: --finish authorizes it (with
            the hotspot SSID and the classic Bluetooth address it learned, where it did),
            --fail removes it.
            """,
        options: [
            .flag("finish", help: "Authorize the accessory"),
            .flag("fail", help: "End the authorization as a failure; the accessory is removed"),
            .value("ssid", "SSID", help: "With --finish: the accessory's hotspot"),
            .value("bridging", "ADDRESS", help: "With --finish: its classic Bluetooth address"),
            jsonOption,
        ],
        positionals: PositionalSpec(
            name: "ID", minimum: 1, maximum: 1, help: "The accessory's id", leadsWithAccessoryID: true),
        examples: [
            "\(AccessoryCtl.name) authorize 6f1c2a4e-8d0b-4c1e-9a57-0b1d2c3e4f50 --finish --ssid WLED-AP",
            "\(AccessoryCtl.name) authorize 6f1c2a4e-8d0b-4c1e-9a57-0b1d2c3e4f50 --fail",
        ],
        usage: "ID (--finish [--ssid SSID] [--bridging ADDRESS] | --fail)",
        run: { arguments, console in
            let id = arguments.positionals[0]
            switch (arguments.flag("finish"), arguments.flag("fail")) {
            case (true, false):
                return await AgentCommand.run(console) { client throws(AgentFailure) in
                    try await client.finishAuthorization(
                        id: id, ssid: arguments.value("ssid"),
                        bluetoothTransportBridgingIdentifier: arguments.value("bridging"))
                    let accessory = try await client.accessory(id: id)
                    return done(accessory, "Authorized \(AgentCommand.describe(accessory)).", arguments, console)
                }
            case (false, true):
                guard arguments.value("ssid") == nil && arguments.value("bridging") == nil else {
                    return usage("--ssid and --bridging go with --finish", console)
                }
                return await AgentCommand.run(console) { client throws(AgentFailure) in
                    let accessory = try await client.accessory(id: id)
                    try await client.failAuthorization(id: id)
                    return done(
                        accessory, "The authorization failed; removed \(AgentCommand.describe(accessory)).", arguments,
                        console)
                }
            default:
                return usage("give --finish or --fail", console)
            }
        })

    static let jsonOption = OptionSpec.flag("json", help: "Print the accessory as JSON")

    /// Prints the accessory acted on: as JSON with --json, else `line`.
    private static func done(
        _ accessory: AccessoryDetails, _ line: TerminalText, _ arguments: ParsedArguments, _ console: Console
    ) -> ExitCode {
        if arguments.flag("json") {
            console.printJSON(accessory.json)
        } else {
            console.print(line)
        }
        return .success
    }

    static func usage(_ message: String, _ console: Console) -> ExitCode {
        console.error("\(AccessoryCtl.name): error: \(message)")
        return .usage
    }
}

/// `accessoryctl monitor`
enum MonitorCommand {
    static let command = Command(
        path: ["monitor"],
        summary: "Print the events of your sessions as they happen (through the agent)",
        discussion: """
            Subscribes to the agent's events and prints one line per event of your sessions
            (every session's, for root) until interrupted: the session, Apple's event name, and
            the accessory or the error it carries. NetworkManager's reports of an accessory's
            hotspot connection going up or down (and why, where it says) come as accessoryChanged
            of the agent's own path. With --json each line is a JSON object.
            """,
        options: [
            .number("count", "N", NumberRange(1...1_000_000, "events"), help: "Exit after N events"),
            .flag("json", help: "Print each event as one line of JSON"),
        ],
        examples: ["\(AccessoryCtl.name) monitor", "\(AccessoryCtl.name) monitor --json --count 4"],
        run: run)

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        await AgentCommand.run(console) { client throws(AgentFailure) in
            let events = try await client.subscribe()
            if !arguments.flag("json") { console.error("Listening for events; Ctrl-C stops.") }
            var remaining = arguments.integer("count") ?? Int.max
            for await event in events {
                let session = event.session
                let type = event.eventType
                let accessory = event.accessory
                let error = event.error
                if arguments.flag("json") {
                    var line: [String: JSONValue] = [
                        "session": .string(session), "event": .string(type.name),
                        "type": .number(Double(type.rawValue)),
                    ]
                    if let accessory { line["accessory"] = accessory.json }
                    if let error {
                        line["error"] = .object(["name": .string(error.name), "message": .string(error.message)])
                    }
                    console.printJSONLine(JSONValue.object(line))
                } else {
                    var detail: TerminalText =
                        accessory.map { " \(AgentCommand.describe($0))" } ?? error.map { " \($0.name)" } ?? ""
                    if let connection = accessory?.connection { detail = "\(detail): \(connection.summary)" }
                    console.print("\(session) \(type.name)\(detail)")
                }
                remaining -= 1
                if remaining == 0 { break }
            }
            return .success
        }
    }
}

extension JSONValue {
    /// The value as one line of text: strings bare, a list of strings joined with commas, the
    /// rest as JSON.
    var plainText: String {
        if case .string(let text) = self { return text }
        if case .array(let items) = self {
            let strings = items.compactMap { if case .string(let text) = $0 { text } else { nil } }
            if strings.count == items.count { return strings.joined(separator: ", ") }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}
