import AccessoryCore
import AccessorySetupKit
import FoundationEssentials
import GLibRuntime
import NetworkManagerBackend

/// `accessoryctl join`
enum JoinCommand {
    static let command = Command(
        path: ["join"],
        summary: "Join an accessory's setup hotspot",
        discussion: """
            With an accessory id (as 'accessoryctl list' prints it), joins that accessory's
            hotspot through the agent, as any user authorized for it may: the passphrase is the
            one given, else the one the profile, the picker or the kiosk policy supplied, and
            the join lasts until 'accessoryctl leave'.

            With --ssid or --ssid-prefix, joins directly through NetworkManager (root): the
            hotspot named by --ssid, or the strongest one whose SSID starts with
            --ssid-prefix (3 to 32 bytes), and returns once the connection is up, or says why
            it is not: wrong passphrase, not in range, no address. The profile never takes the
            default route and never autoconnects, so the machine's internet stays where it is.
            A failed join leaves no profile behind. The passphrase is read from a file or from
            standard input, never from the command line, and is never printed.

            Until 'accessoryctl leave' runs, NetworkManager holds a checkpoint of the device;
            if nobody leaves within --restore-after seconds of the join being up (a crash, a
            closed lid), it puts the device back on its previous network by itself and deletes
            the profiles added since. If NetworkManager will not take the checkpoint (another
            tool may hold one), the join is refused; --restore-after 0 joins without one.
            Ctrl-C undoes the join.

            --security defaults to wpa2 with a passphrase and open without one. For an
            enterprise network give --eap and its settings; the passphrase is the EAP password.
            """,
        options: [
            .value("ssid", "SSID", help: "The exact SSID (hex:… for bytes that are not UTF-8)"),
            .value("ssid-prefix", "PREFIX", help: "Join the strongest hotspot whose SSID starts with this"),
            .value("passphrase-file", "FILE", help: "Read the passphrase from FILE"),
            .flag("passphrase-stdin", help: "Read the passphrase from standard input (typed unseen on a terminal)"),
            .value("security", "KIND", help: "open, wep, wpa2, wpa3, owe or enterprise"),
            .flag("once", help: "Join once: the profile is never stored and goes away when the connection does"),
            .flag("hidden", help: "The hotspot does not broadcast its SSID"),
            .number(
                "lifetime-days", "DAYS", NumberRange(HotspotConfiguration.lifetimeRange, "days"),
                help: "Delete the stored profile after DAYS"),
            HotspotCommand.deviceOption,
            .number(
                "timeout", "SECONDS", NumberRange(1...3600, "seconds"),
                help: "Give up if the connection is not up in time (default 45)"),
            .number(
                "restore-after", "SECONDS", NumberRange(0...86_400, "seconds"),
                help: "Restore the previous network this long after the join is up (default 900, 0: never)"),
            .value("eap", "METHOD", help: "Enterprise: tls, ttls, peap or fast (repeatable)", repeatable: true),
            .value("identity", "NAME", help: "Enterprise: the user name"),
            .value("anonymous-identity", "NAME", help: "Enterprise: the outer identity"),
            .value("ca-cert", "FILE", help: "Enterprise: the CA certificate that signs the server's (PEM)"),
            .value("server-name", "NAME", help: "Enterprise: a server name to trust (repeatable)", repeatable: true),
            .value("client-cert", "FILE", help: "Enterprise, TLS: the client certificate (PEM)"),
            .value("private-key", "FILE", help: "Enterprise, TLS: the client's private key (PEM)"),
            .value("ttls-inner", "METHOD", help: "Enterprise, TTLS: pap, chap, mschap, mschapv2 or eap"),
            .flag("json", help: "Print the result as JSON"),
        ],
        positionals: PositionalSpec(
            name: "ID", minimum: 0, maximum: 1, help: "An accessory's id, to join through the agent",
            leadsWithAccessoryID: true),
        examples: [
            "\(AccessoryCtl.name) join 6f1c2a4e-8d0b-4c1e-9a57-0b1d2c3e4f50     # through the agent",
            "\(AccessoryCtl.name) join --ssid WLED-AP --passphrase-file /root/wled.pass --once",
            "\(AccessoryCtl.name) join --ssid-prefix PROV_ --once",
            "\(AccessoryCtl.name) join --ssid Cam-Setup --security wpa3 --passphrase-stdin   # asks for it, unseen",
        ],
        usage:
            "(ID | --ssid SSID | --ssid-prefix PREFIX) [--passphrase-file FILE | --passphrase-stdin] [--security KIND] [--once] [OPTIONS]",
        run: run)

    /// Options that only a direct join takes.
    static let directOnly = [
        "ssid", "ssid-prefix", "once", "hidden", "lifetime-days", "timeout", "eap", "identity", "anonymous-identity",
        "ca-cert", "server-name", "client-cert", "private-key", "ttls-inner",
    ]

    private static func run(_ arguments: ParsedArguments, _ console: Console) async -> ExitCode {
        if let id = arguments.positionals.first {
            return await joinThroughAgent(id, arguments, console)
        }
        let configuration: HotspotConfiguration
        var options = JoinOptions(device: arguments.value("device"))
        do {
            configuration = try makeConfiguration(arguments, console)
            if let timeout = arguments.seconds("timeout") { options.timeout = timeout }
            if let restoreAfter = arguments.seconds("restore-after") {
                options.restoreAfter = restoreAfter == .zero ? nil : restoreAfter
            }
        } catch let error as UsageError {
            console.error("\(AccessoryCtl.name): error: \(error.message)")
            console.error("Run '\(AccessoryCtl.name) join --help' for the options.")
            return .usage
        } catch let error as HotspotConfigurationError {
            console.error("\(AccessoryCtl.name): error: \(error)")
            return .failure
        } catch {
            console.error("\(AccessoryCtl.name): error: \(error)")
            return .failure
        }

        options.progress = progressReport(console)
        return await HotspotCommand.run(console) { client throws(HotspotError) in
            let joined: JoinedHotspot
            do throws(HotspotError) {
                joined = try await client.join(configuration, options: options)
                HotspotCommand.clearProgress(console)
            } catch {
                HotspotCommand.clearProgress(console)
                throw error
            }
            if arguments.flag("json") {
                console.printJSON(joined)
            } else {
                report(joined, console)
            }
            return .success
        }
    }

    /// The join's steps on a terminal's status line; `nil` when the output is no terminal.
    private static func progressReport(_ console: Console) -> (@Sendable (JoinStep) -> Void)? {
        guard let progress = HotspotCommand.progress(console) else { return nil }
        return { step in
            let text =
                switch step {
                case .scanning: "Looking for the hotspot…"
                case .checkpoint: "Saving the current network state…"
                case .adding: "Adding the profile…"
                case .associating: "Associating…"
                case .configuringAddress: "Getting an address…"
                }
            progress(text)
        }
    }

    /// A direct join, for a person: where, and how to go back.
    private static func report(_ joined: JoinedHotspot, _ console: Console) {
        let address = joined.ipv4Address.map { ", address \($0)" } ?? ""
        console.print("Joined \(joined.ssid.escaped) on \(joined.device) (profile '\(joined.connectionID)'\(address)).")
        if let kept = joined.keptDevice {
            console.print("\(kept) stays on '\(joined.keptConnection ?? "its network")'.")
        }
        let back: TerminalText = joined.previousConnection.map { " to return to '\($0)'" } ?? ""
        var leave: TerminalText = "Run '\(AccessoryCtl.name) leave'\(back)"
        if let deadline = joined.restoreDeadline {
            let restore = deadline.formatted(.iso8601)
            leave = "\(leave); NetworkManager restores the previous network by itself at \(restore)"
        }
        console.print("\(leave).")
    }

    static func makeConfiguration(_ arguments: ParsedArguments, _ console: Console) throws -> HotspotConfiguration {
        guard arguments.value("ssid") != nil || arguments.value("ssid-prefix") != nil else {
            throw UsageError("give --ssid or --ssid-prefix")
        }
        guard arguments.value("ssid") == nil || arguments.value("ssid-prefix") == nil else {
            throw UsageError("--ssid and --ssid-prefix are mutually exclusive")
        }
        let target = try HotspotConfiguration.target(
            ssid: arguments.value("ssid"), ssidPrefix: arguments.value("ssid-prefix"))
        let passphrase = try HotspotCommand.passphrase(arguments, console)
        let kind =
            arguments.value("security")
            ?? (arguments.all("eap").isEmpty ? (passphrase == nil ? "open" : "wpa2") : "enterprise")
        let security: HotspotSecurity
        switch kind {
        case "open", "owe":
            if passphrase != nil { throw UsageError("a \(kind) network takes no passphrase") }
            security = kind == "open" ? .open : .owe
        case "wep", "wpa2", "wpa3":
            guard let passphrase else {
                throw UsageError("a \(kind) network needs --passphrase-file or --passphrase-stdin")
            }
            security =
                kind == "wep"
                ? .wep(passphrase) : kind == "wpa2" ? .wpa2Personal(passphrase) : .wpa3Personal(passphrase)
        case "enterprise":
            security = .enterprise(try eapSettings(arguments, password: passphrase))
        default:
            throw UsageError("--security '\(kind)' is not one of open, wep, wpa2, wpa3, owe, enterprise")
        }
        return try HotspotConfiguration(
            target: target, security: security, joinOnce: arguments.flag("once"),
            lifetimeInDays: arguments.integer("lifetime-days"), hidden: arguments.flag("hidden"))
    }

    private static func eapSettings(_ arguments: ParsedArguments, password: Secret?) throws -> EAPSettings {
        let methods = try arguments.all("eap").map { name throws(UsageError) -> EAPSettings.EAPType in
            switch name {
            case "tls": return .tls
            case "ttls": return .ttls
            case "peap": return .peap
            case "fast": return .fast
            default: throw UsageError("--eap '\(name)' is not one of tls, ttls, peap, fast")
            }
        }
        var settings = EAPSettings(supportedEAPTypes: methods)
        settings.username = arguments.value("identity")
        settings.password = password
        settings.outerIdentity = arguments.value("anonymous-identity")
        settings.trustedServerCertificatePaths = arguments.all("ca-cert")
        settings.trustedServerNames = arguments.all("server-name")
        settings.clientCertificatePath = arguments.value("client-cert")
        settings.privateKeyPath = arguments.value("private-key")
        settings.tlsClientCertificateRequired = methods.contains(.tls)
        if let inner = arguments.value("ttls-inner") {
            guard let method = EAPSettings.TTLSInnerAuthentication(rawValue: inner) else {
                throw UsageError("--ttls-inner '\(inner)' is not one of pap, chap, mschap, mschapv2, eap")
            }
            settings.ttlsInnerAuthenticationType = method
        }
        return settings
    }
}
