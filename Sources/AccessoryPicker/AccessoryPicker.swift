import AccessoryCore
import AccessorySetupKit
import AgentInterface
import BusService
import FoundationEssentials
import Glibc

/// `accessory-picker`: the graphical picker of a desktop session. It registers with the agent
/// as the picker agent of the person's logind session and shows a dialog for each picker
/// request, until it is stopped (SIGTERM, SIGINT). When the agent stops (it releases its picker
/// agents) and comes back, started again by the bus, the picker registers again.
public enum AccessoryPicker {
    static let path = AgentBus.pickerAgentPath("gtk")

    static let usage = """
        Usage: accessory-picker [--bus ADDRESS] [--session ID | --own-sessions] [--profiles DIR]...

        The graphical picker of a desktop session: shows the accessories the agent
        (\(AgentBus.name)) finds for an application, and tells it which one the person chose.

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
        let connection: AgentConnection
        do {
            connection = try await AgentConnection.connect(bus)
        } catch {
            return fail("cannot connect to \(bus): \(error)")
        }
        let windows = PickerWindows(images: ProductImages(directories: options.profiles))
        let service: PickerAgentService
        let reregister: Task<Void, Never>
        do {
            (service, reregister) = try await registerWithAgent(on: connection, session: options.session)
        } catch {
            return fail("cannot register with the accessory agent: \(error)")
        }
        await serve(service, on: connection, windows: windows)
        reregister.cancel()
        await windows.closeAll()
        await connection.close()
        GtkThread.shared.finish()
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
    /// when nil); returns it with the task that registers again whenever the agent comes back.
    private static func registerWithAgent(
        on connection: AgentConnection, session: String?
    ) async throws(AgentCallError) -> (PickerAgentService, Task<Void, Never>) {
        let served = session.map { "logind session \($0)" } ?? "this process's sessions"
        // Subscribed before registering, so that an agent restarting in between is not missed.
        let arrivals = await connection.agentArrivals()
        let service = try await PickerAgentService.export(on: connection, path: path)
        try await service.register(logindSession: session, timeout: .seconds(25))
        log("registered as the picker of \(served)")
        let reregister = Task {
            for await _ in arrivals {
                do {
                    try await service.register(logindSession: session, timeout: .seconds(25))
                    log("registered as the picker of \(served)")
                } catch {
                    log("cannot register again with the agent that came back: \(error)")
                }
            }
        }
        return (service, reregister)
    }

    /// Hands the agent's calls to `windows` until the picker is stopped (SIGTERM, SIGINT) or the
    /// bus connection ends.
    private static func serve(_ service: PickerAgentService, on connection: AgentConnection, windows: PickerWindows)
        async
    {
        let stop = Task {
            for await _ in await connection.unixSignals([SIGTERM, SIGINT]) { return }
        }
        let serve = Task {
            for await call in service.calls {
                switch call.method {
                case .requestChoice(let request):
                    // The application's desktop file is read here, off the GTK thread.
                    await windows.request(call, request, application: request.requestingApplication())
                    continue
                case .confirmPasskey(let code):
                    await windows.confirmPasskey(call, code)
                    continue
                case .updateEntries(let entries, let removed):
                    await windows.update(session: call.session, entries: entries, removed: removed)
                case .setupProgress(let step, let error, let passkey):
                    await windows.progress(session: call.session, step: step, error: error, passkey: passkey)
                case .cancel(let error):
                    await windows.cancel(session: call.session, error: error)
                case .release:
                    await windows.closeAll()
                    log("the agent released the picker (it is stopping); registering again when it comes back")
                case .unknown:
                    call.refuseUnknown()
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
        service.stop()
    }

    static func log(_ message: String) {
        StandardStream.error.write("accessory-picker: \(message)\n")
    }

    private static func fail(_ message: String, status: Int32 = 1) -> Int32 {
        log("error: \(message)")
        return status
    }
}
