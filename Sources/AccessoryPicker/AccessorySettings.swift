import AccessoryCore
import AccessorySetupKit
import AgentInterface
import BusService
import FoundationEssentials
import Glibc

/// `accessory-settings`: the Accessories window, where a person sees and manages the
/// accessories applications set up for them (Settings › Privacy & Security › Accessories on
/// an iPhone), until they close it.
public enum AccessorySettings {
    static let usage = """
        Usage: accessory-settings [--bus ADDRESS] [--user UID] [--profiles DIR]...

        Shows the accessories applications set up through the agent (\(AgentBus.name)),
        by application, to rename or remove them, and the Wi-Fi networks applications configured.

          --bus ADDRESS     the agent's bus (default: the system bus)
          --user UID        another user's accessories (an administrator's password is asked)
          --profiles DIR    where profiles and their product images are looked up
                            (default: /etc/accessory-setup/profiles, /usr/share/accessory-setup/profiles)
        """

    /// Runs the window until it is closed (or SIGTERM, SIGINT); returns the exit status.
    public static func main(_ arguments: [String]) async -> Int32 {
        var bus = BusAddress.system
        var user: UInt32?
        var profiles: [URL] = []
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h":
                print(usage)
                return 0
            case "--bus", "--user", "--profiles":
                guard let value = rest.popFirst(), !value.isEmpty else {
                    return fail("\(argument) needs a value", status: 64)
                }
                switch argument {
                case "--bus": bus = .address(value)
                case "--user":
                    guard let uid = UInt32(value) else { return fail("--user needs a numeric user id", status: 64) }
                    user = uid
                default: profiles.append(URL(fileURLWithPath: value))
                }
            default:
                return fail("unknown argument '\(argument)'\n\n\(usage)", status: 64)
            }
        }
        if profiles.isEmpty {
            profiles = ["/etc/accessory-setup/profiles", "/usr/share/accessory-setup/profiles"]
                .map(URL.init(fileURLWithPath:))
        }
        guard GtkThread.shared.hasDisplay else {
            return fail("cannot open the display; run it in a graphical session (DISPLAY or WAYLAND_DISPLAY)")
        }
        let controller = AccessoriesController(bus: bus, user: user, images: ProductImages(directories: profiles))
        // SIGTERM and SIGINT close the window, through GLib's signal sources on a connection's
        // thread. Without the bus the window still runs, its page saying why, until it is closed.
        let stopped = Task {
            guard let signals = try? await AgentConnection.connect(bus) else {
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
                return
            }
            for await _ in await signals.unixSignals([SIGTERM, SIGINT]) { break }
            await signals.close()
        }
        await controller.start()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in controller.closed { return } }
            group.addTask { await stopped.value }
            await group.next()
            stopped.cancel()
            group.cancelAll()
        }
        await controller.close()
        GtkThread.shared.finish()
        log("closed")
        return 0
    }

    static func log(_ message: String) {
        StandardStream.error.write("accessory-settings: \(message)\n")
    }

    private static func fail(_ message: String, status: Int32 = 1) -> Int32 {
        log("error: \(message)")
        return status
    }
}
