import AccessoryCore
import AccessorySetupKit
import AgentInterface
import DBusValues
import FoundationEssentials
import Glibc

/// `accessoryctl pick`
enum PickCommand {
    static let command = Command(
        path: ["pick"],
        summary: "Find an accessory of a profile and authorize it (through the agent)",
        discussion: """
            Opens a session with the agent over the installed profile PROFILE and shows the
            picker for the profile's items: the agent discovers over Wi-Fi and Bluetooth LE and
            only matching accessories reach the picker. On a terminal, this command is the
            picker (a picker agent for its own session, as 'pkttyagent --process' is): a live
            list of the matching accessories with their signal; arrow keys or an accessory's
            number choose, Enter sets it up (asking for a new name and a passphrase where the
            profile offers them), Esc or Ctrl-C cancels. With --select it chooses the accessory
            whose SSID or Bluetooth address is the one given, without asking. With --no-picker,
            or without a terminal, the kiosk policy of /etc/accessory-setup/kiosk.json picks, or
            a picker agent of your desktop session. The events are printed in Apple's order once
            the picker is closed; the accessory added is printed last. polkit
            (\(PolkitAction.authorize.rawValue)) decides whether the pick may be recorded; a refusal
            exits 77. With --join the accessory's hotspot is joined next, as 'join ID' does, with the
            passphrase typed in the picker (polkit: \(PolkitAction.join.rawValue)). With --provision the
            accessory is then given a Wi-Fi network as its profile says (ESP-IDF provisioning over
            its hotspot, joined first, or over Bluetooth LE; Improv Wi-Fi; the vendor's own HTTP
            setup API on its hotspot, as for Shelly, Tasmota, WLED, ESPHome), each step printed as the
            agent reports it, and its hotspot left: the network named with --ssid and a passphrase
            from --passphrase-file, else one this computer stores, which polkit
            (\(PolkitAction.shareNetwork.rawValue)) confirms with you, naming it, before its
            passphrase is sent; the picker says which network goes to the accessory you select
            before you confirm. NO_COLOR turns the picker's colours off.
            """,
        options: [
            .value(
                "select", "SSID|ADDRESS",
                help: "Choose the accessory with this SSID, hotspot BSSID (units sharing an SSID) or Bluetooth address"),
            .flag("no-picker", help: "Leave the choice to the kiosk policy or a desktop picker"),
            .number(
                "timeout", "SECONDS", NumberRange(1...3600, "seconds"),
                help: "Give up discovering after this (default 30)"),
            .value("profile-file", "FILE", help: "Use this profile file instead of an installed one (polkit decides)"),
            .flag("join", help: "Then join the accessory's hotspot through the agent, as 'join ID' does"),
            .flag(
                "provision",
                help: "Then give it a Wi-Fi network through the agent (joining its hotspot first where needed)"),
        ]
            + ProvisionThroughAgent.networkOptionSpecs(
                lead: "With --provision: ", proofOfPossession: "printed on the device")
            + [
                .flag(
                    "json",
                    help:
                        "Print the accessory added as JSON (with --join or --provision: {\"accessory\", \"joined\", \"provisioned\"})"
                )
            ],
        positionals: PositionalSpec(name: "PROFILE", minimum: 0, maximum: 1, help: "The id of an installed profile"),
        examples: [
            "\(AccessoryCtl.name) pick ge.wled.softap --select WLED-AP",
            "\(AccessoryCtl.name) pick --profile-file ./my-plug.json --select PLUG-1F2E   # a vendor's own profile",
            "\(AccessoryCtl.name) pick ge.wled.softap          # on a terminal: choose from the list",
            "\(AccessoryCtl.name) pick com.tasmota.wifimanager --join   # choose, then join its hotspot",
            "\(AccessoryCtl.name) pick ge.wled.softap --no-picker   # the kiosk policy picks",
            "\(AccessoryCtl.name) pick com.espressif.provisioning.softap --provision --pop-file plug.pop   # the whole setup",
            "\(AccessoryCtl.name) pick cloud.shelly.gen2 --provision   # a Shelly, through its own setup API",
        ],
        run: run)

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        let file = arguments.value("profile-file")
        guard (arguments.positionals.first == nil) != (file == nil) else {
            return RecordCommands.usage("give an installed profile's id or --profile-file, one of them", console)
        }
        guard arguments.value("select") == nil || !arguments.flag("no-picker") else {
            return RecordCommands.usage("give --select or --no-picker, not both", console)
        }
        let provisioning: AccessoryProvisioningOptions?
        do {
            provisioning = try ProvisionThroughAgent.options(arguments, console)
        } catch {
            return RecordCommands.usage(error.message, console)
        }
        var descriptor: Int32 = -1
        if let file {
            descriptor = open(file, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                console.error(
                    "\(AccessoryCtl.name): error: cannot open the profile file \(file): \(String(cString: strerror(errno)))"
                )
                return .failure
            }
        }
        defer { if descriptor >= 0 { close(descriptor) } }
        return await AgentCommand.run(console) { client throws(AgentFailure) in
            let select = arguments.value("select")
            var picker: SelectingPicker?
            var terminal: TerminalPicker?
            if let select {
                picker = try await SelectingPicker.register(on: client, selecting: select, console: console)
            } else if !arguments.flag("no-picker") && console.isTerminal && TerminalPicker.canShow {
                terminal = try await TerminalPicker.register(on: client)
            }
            defer { picker?.stop() }
            // While the terminal picker holds the screen, what is printed waits for it to close.
            var held: [() -> Void] = []
            func output(_ write: @escaping () -> Void) {
                if terminal == nil { write() } else { held.append(write) }
            }
            // An accessory whose item asks the application to confirm it (confirmAuthorization)
            // is provisioned while the picker waits, then confirmed, as an app would; its lines
            // wait for the picker to close.
            let confirmed = Locked<ProvisionThroughAgent.Outcome?>(nil)
            let confirmedLines = Locked<[TerminalText]>([])
            var whileConfirming: ((AccessoryDetails) async -> Bool)?
            if let provisioning {
                whileConfirming = { accessory in
                    let outcome = await ProvisionThroughAgent.provision(
                        accessory, passphrase: nil, provisioning, on: client
                    ) { line in confirmedLines.withLock { $0.append(line) } }
                    confirmed.withLock { $0 = outcome }
                    if case .success = outcome.provisioned { return true }
                    return false
                }
            }
            let result: Result<AccessoryDetails?, AgentFailure>
            do throws(AgentFailure) {
                result = .success(
                    try await pick(
                        client, arguments, descriptor, console, output, sharing: provisioning,
                        whileConfirming: whileConfirming))
            } catch {
                var error = error
                let restricted = error.is(AccessorySessionError.pickerRestricted(reason: ""))
                if restricted && select == nil && terminal == nil {
                    error = AgentFailure(name: error.name, message: error.message + "; " + Self.noPickerHint)
                }
                result = .failure(error)
            }
            let typed = await terminal?.close()
            let passphrase = typed?.passphrase
            held.forEach { $0() }
            // A provisioning that failed while the picker waited failed the authorization too:
            // its own error is the one to report.
            if let outcome = confirmed.withLock({ $0 }), case .failure(let failure) = outcome.provisioned {
                confirmedLines.withLock { $0 }.forEach { console.error($0) }
                throw failure
            }
            guard let added = try result.get() else { return .failure }
            if let outcome = confirmed.withLock({ $0 }) {
                confirmedLines.withLock { $0 }.forEach { console.error($0) }
                return try ProvisionThroughAgent.report(outcome, of: added, json: arguments.flag("json"), console)
            }
            if var provisioning {
                if provisioning.proofOfPossession == nil { provisioning.proofOfPossession = typed?.proofOfPossession }
                return try await ProvisionThroughAgent.run(
                    added, passphrase: passphrase, provisioning, json: arguments.flag("json"), on: client, console)
            }
            guard arguments.flag("join") else {
                if arguments.flag("json") { console.printJSON(added.json) }
                return .success
            }
            let joined = try await JoinCommand.join(
                added.id, options: AccessoryJoinOptions(passphrase: passphrase), on: client, console)
            if arguments.flag("json") {
                console.printJSON(JSONValue.object(["accessory": added.json, "joined": joined.json]))
            } else {
                JoinCommand.report(joined, console)
            }
            return .success
        }
    }

    static let noPickerHint =
        "accessoryctl has no terminal to show its picker on: give --select SSID|ADDRESS, or run it on a terminal"

    /// Opens the session, shows the picker and reports the events until it is dismissed;
    /// returns the accessory added, if one was.
    private static func pick(
        _ client: AgentConnection, _ arguments: ParsedArguments, _ descriptor: Int32, _ console: Console,
        _ output: (@escaping () -> Void) -> Void, sharing: AccessoryProvisioningOptions?,
        whileConfirming: ((AccessoryDetails) async -> Bool)? = nil
    ) async throws(AgentFailure) -> AccessoryDetails? {
        let session =
            if let profile = arguments.positionals.first {
                try await client.openSession(profile: profile)
            } else {
                try await client.openSession(profileFile: descriptor)
            }
        let events = session.events()
        try await session.activate()
        try await session.showPicker(
            items: try await session.items(), discoveryTimeout: arguments.integer("timeout"),
            sharing: sharing.map { $0.ssid.map(PickerDisplaySettings.SharedNetwork.ssid) ?? .current })

        var added: AccessoryDetails?
        for await event in events {
            let type = event.eventType
            if type == .accessoryAdded { added = event.accessory }
            if !arguments.flag("json") {
                let detail: TerminalText =
                    event.accessory.map { " \(AgentCommand.describe($0))" } ?? event.error.map { " \($0.name)" } ?? ""
                output { console.print("\(type.name)\(detail)") }
            }
            if type == .accessoryAdded, let accessory = event.accessory, accessory.state == "awaitingAuthorization",
                let whileConfirming
            {
                if await whileConfirming(accessory) {
                    try await session.finishAuthorization(id: accessory.id)
                } else {
                    try? await session.failAuthorization(id: accessory.id)
                }
            }
            guard type == .pickerDidDismiss || type == .invalidated else { continue }
            try? await session.invalidate()
            if let error = event.error {
                throw AgentFailure(name: error.name, message: error.message)
            }
            return added
        }
        throw AgentFailure(name: nil, message: "the agent left the bus before the picker ended")
    }
}

/// `accessoryctl migrate`
enum MigrateCommand {
    static let command = Command(
        path: ["migrate"],
        summary: "Adopt an accessory that was set up before (through the agent)",
        discussion: """
            The ASMigrationDisplayItem counterpart: records an accessory that was set up before
            the agent knew it, from an existing NetworkManager profile of its hotspot (--ssid,
            the full SSID) or a Bluetooth device BlueZ knows (--address), under a profile's item
            (--item, the index in the profile's items; default 0). The item's descriptor must
            match it. The profile may be one the agent made for you or your own (a system
            profile, or one only you may use), never another user's; it stays as it is, and
            removing the accessory leaves it.
            """,
        options: [
            .value("ssid", "SSID", help: "The SSID of the accessory's existing NetworkManager profile"),
            .value("address", "ADDRESS", help: "The address of the accessory's Bluetooth device"),
            .number("item", "N", NumberRange(0...255, "items"), help: "The profile item it is (default 0)"),
            .value("name", "NAME", help: "The name to record (default: the item's)"),
            .flag("json", help: "Print the accessories adopted as JSON"),
        ],
        positionals: PositionalSpec(name: "PROFILE", minimum: 1, maximum: 1, help: "The id of an installed profile"),
        examples: ["\(AccessoryCtl.name) migrate ge.wled.softap --ssid WLED-AP"],
        run: run)

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        guard arguments.value("ssid") != nil || arguments.value("address") != nil else {
            return RecordCommands.usage("give --ssid or --address", console)
        }
        return await AgentCommand.run(console) { client throws(AgentFailure) in
            let session = try await client.openSession(profile: arguments.positionals[0])
            let events = session.events()
            try await session.activate()
            let items = try await session.items()
            let index = arguments.integer("item") ?? 0
            guard items.indices.contains(index), var item = items[index].members else {
                throw AgentFailure(name: nil, message: "--item \(index): the profile has \(items.count) items")
            }
            if let name = arguments.value("name") { item["name"] = .string(name) }
            if let ssid = arguments.value("ssid") { item["hotspotSSID"] = .string(ssid) }
            if let address = arguments.value("address") { item["peripheralAddress"] = .string(address) }
            let migration = DBusValue.vardict(item.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            try await session.showPicker(items: [migration])
            for await event in events where event.eventType == .migrationComplete {
                try? await session.invalidate()
                let adopted = event.migrated
                if arguments.flag("json") {
                    console.printJSON(adopted.map(\.json))
                } else if adopted.isEmpty {
                    console.print("Nothing was adopted: no NetworkManager profile or Bluetooth device matches.")
                } else {
                    adopted.forEach { console.print("Adopted \(AgentCommand.describe($0))") }
                }
                return adopted.isEmpty ? .failure : .success
            }
            throw AgentFailure(name: nil, message: "the agent left the bus before the migration ended")
        }
    }
}

/// The picker of `pick --select`: a picker agent for this process's own sessions that chooses
/// the entry whose SSID or Bluetooth address is the one given, as soon as it appears.
final class SelectingPicker: Sendable {
    private let service: PickerAgentService
    private let task: Task<Void, Never>

    private init(service: PickerAgentService, task: Task<Void, Never>) {
        self.service = service
        self.task = task
    }

    static func register(
        on client: AgentConnection, selecting select: String, console: Console
    ) async throws(AgentFailure) -> SelectingPicker {
        let service = try await PickerAgentService.register(on: client, path: TerminalPicker.path)
        let wanted = select.lowercased()
        let task = Task {
            var entries: [UInt32: PickerAgentEntry] = [:]
            var pending: PickerAgentCall?
            func matching() -> UInt32? {
                entries.keys.sorted().first { id in
                    entries[id]?.ssid?.lowercased() == wanted || entries[id]?.bssid?.lowercased() == wanted
                        || entries[id]?.bluetoothAddress?.lowercased() == wanted
                }
            }
            for await call in service.calls {
                switch call.method {
                case .requestChoice:
                    pending = call
                case .updateEntries(let updated, let removed):
                    for entry in updated { entries[entry.id] = entry }
                    for id in removed { entries[id] = nil }
                    call.reply()
                case .setupProgress(let step, _, _):
                    if step != "done" { console.error("Setting up: \(step)") }
                    call.reply()
                case .cancel, .release:
                    pending?.cancel("the picker was closed")
                    pending = nil
                    call.reply()
                case .confirmPasskey, .unknown:
                    call.refuseUnknown()
                }
                if let call = pending, let id = matching() {
                    call.choose(entry: id)
                    pending = nil
                }
            }
        }
        return SelectingPicker(service: service, task: task)
    }

    func stop() {
        task.cancel()
        service.stop()
    }
}
