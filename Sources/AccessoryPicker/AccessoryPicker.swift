import BusService
import AccessoryCore
import FoundationEssentials
import Glibc
import GLibRuntime

/// `accessory-picker`: the graphical picker of a desktop session. It registers with the agent
/// as the picker agent of the person's logind session and shows a dialog for each picker
/// request, until it is stopped (SIGTERM, SIGINT). When the agent stops (it releases its picker
/// agents) and comes back, started again by the bus, the picker registers again.
public enum AccessoryPicker {
    static let path = "/io/accessorysetup/picker/gtk"
    static let interface = "io.accessorysetup.PickerAgent1"
    static let agentName = "io.accessorysetup"

    static let usage = """
        Usage: accessory-picker [--bus ADDRESS] [--session ID | --own-sessions] [--profiles DIR]...

        The graphical picker of a desktop session: shows the accessories the agent
        (io.accessorysetup) finds for an application, and tells it which one the person chose.

          --bus ADDRESS     the agent's bus (default: the system bus)
          --session ID      serve this logind session (default: $XDG_SESSION_ID)
          --own-sessions    serve only the sessions this process opens
          --profiles DIR    where product images are looked up, relative to the profile
                            (default: /etc/accessory-setup/profiles, /usr/share/accessory-setup/profiles)
        """

    /// Runs the picker; returns the exit status.
    public static func main(_ arguments: [String]) async -> Int32 {
        let options: Options
        switch Options.parse(arguments) {
        case .run(let parsed): options = parsed
        case .exit(let status): return status
        }
        let bus = options.bus
        guard GtkThread.shared.hasDisplay else {
            return fail("cannot open the display; run it in a graphical session (DISPLAY or WAYLAND_DISPLAY)")
        }
        let connection: BusConnection
        do {
            connection = try await BusConnection.connect(bus, threadName: "picker-bus")
        } catch {
            return fail("cannot connect to \(bus): \(error)")
        }
        let windows = PickerWindows(images: ProductImages(directories: options.profiles))
        let reregister: Task<Void, Never>
        do {
            reregister = try await registerWithAgent(on: connection, session: options.session)
        } catch {
            return fail("cannot register with the accessory agent: \(error)")
        }
        await serve(on: connection, windows: windows)
        reregister.cancel()
        await windows.closeAll()
        await connection.close()
        log("stopped")
        return 0
    }

    /// What the command line asks for.
    private struct Options {
        var bus = BusAddress.system
        var session = ProcessInfo.processInfo.environment["XDG_SESSION_ID"]
        var profiles: [URL] = []

        enum Parsed {
            case run(Options)
            /// Nothing to run: the help was asked for (0), or the arguments are wrong (64).
            case exit(Int32)
        }

        static func parse(_ arguments: [String]) -> Parsed {
            var options = Options()
            var rest = arguments[...]
            while let argument = rest.popFirst() {
                switch argument {
                case "--help", "-h":
                    print(usage)
                    return .exit(0)
                case "--own-sessions":
                    options.session = nil
                case "--bus", "--session", "--profiles":
                    guard let value = rest.popFirst(), !value.isEmpty else {
                        return .exit(fail("\(argument) needs a value", status: 64))
                    }
                    switch argument {
                    case "--bus": options.bus = .address(value)
                    case "--session": options.session = value
                    default: options.profiles.append(URL(fileURLWithPath: value))
                    }
                default:
                    return .exit(fail("unknown argument '\(argument)'\n\n\(usage)", status: 64))
                }
            }
            if options.profiles.isEmpty {
                options.profiles = ["/etc/accessory-setup/profiles", "/usr/share/accessory-setup/profiles"]
                    .map(URL.init(fileURLWithPath:))
            }
            return .run(options)
        }
    }

    /// Exports the picker agent and registers it for `session` (all of this process's sessions
    /// when nil); returns the task that registers again whenever the agent comes back.
    private static func registerWithAgent(
        on connection: BusConnection, session: String?
    ) async throws -> Task<Void, Never> {
        let options: [(String, DBusValue)] = session.map { [("session", .string($0))] } ?? []
        let served = session.map { "logind session \($0)" } ?? "this process's sessions"
        @Sendable func register() async throws {
            _ = try await connection.call(
                destination: agentName, path: "/io/accessorysetup", interface: "io.accessorysetup.Manager1",
                method: "RegisterPickerAgent", [.objectPath(path), .vardict(options)], timeout: .seconds(25))
            log("registered as the picker of \(served)")
        }
        // Subscribed before registering, so that an agent restarting in between is not missed.
        let owners = await connection.signals(
            sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "NameOwnerChanged")
        let object = try ExportedObject(
            path: path, interface: interface, xml: InterfaceDocuments.documents["\(interface).xml"] ?? "")
        try await connection.export(object)
        try await register()
        return Task {
            for await signal in owners {
                let arguments = signal.arguments.map(\.string)
                guard arguments.count == 3, arguments[0] == agentName, arguments[2]?.isEmpty == false else { continue }
                do {
                    try await register()
                } catch {
                    log("cannot register again with the agent that came back: \(error)")
                }
            }
        }
    }

    /// Hands the agent's calls to `windows` until the picker is stopped (SIGTERM, SIGINT) or the
    /// bus connection ends.
    private static func serve(on connection: BusConnection, windows: PickerWindows) async {
        let stop = Task {
            for await _ in await connection.unixSignals([SIGTERM, SIGINT]) { return }
        }
        let serve = Task {
            for await call in connection.incomingCalls where call.interface == interface {
                let arguments = call.arguments
                let session: String = if case .objectPath(let path)? = arguments.first { path } else { "" }
                switch call.member {
                case "RequestChoice":
                    await windows.request(call)
                    continue
                case "ConfirmPasskey":
                    await windows.confirmPasskey(call)
                    continue
                case "UpdateEntries" where arguments.count > 2:
                    let removed = arguments[2].elements.compactMap(\.unsigned)
                    await windows.update(session: session, entries: arguments[1].elements, removed: removed)
                case "SetupProgress" where arguments.count > 2:
                    await windows.progress(session: session, step: arguments[1].string ?? "", error: arguments[2])
                case "Cancel" where arguments.count > 1:
                    await windows.cancel(session: session, error: arguments[1])
                case "Release":
                    await windows.closeAll()
                    log("the agent released the picker (it is stopping); registering again when it comes back")
                default:
                    call.reply(
                        errorName: "org.freedesktop.DBus.Error.UnknownMethod", message: "\(call.member) is not known")
                    continue
                }
                call.reply()
            }
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await stop.value }
            group.addTask { await serve.value }
            await group.next()
            group.cancelAll()
        }
        stop.cancel()
        serve.cancel()
    }

    static func log(_ message: String) {
        StandardStream.error.write("accessory-picker: \(message)\n")
    }

    private static func fail(_ message: String, status: Int32 = 1) -> Int32 {
        log("error: \(message)")
        return status
    }
}
