import AccessoryAgent
import AccessoryCore
import AgentInterface
import BusService
import FoundationEssentials
import GLibRuntime
import Glibc

// accessory-agent: the system service. Started by D-Bus activation through systemd.
// The start's trace counts from here (the process's way to main is the benchmark's to show).
let began = ContinuousClock.now
// Its tasks run on a GLib thread of their own, so that waiting on the bus wakes nothing.
GLibTaskExecutor.makeDefault()

let usage = """
    usage: accessory-agent [--bus system|session|ADDRESS] [--state-directory DIR]
                           [--profiles DIR]... [--kiosk-policy FILE] [--idle-exit SECONDS]

    Serves \(AgentBus.name) on the bus until SIGTERM. Records are kept in the state directory
    (default $STATE_DIRECTORY, else /var/lib/accessory-setup); profiles are looked up in each
    --profiles directory in order (default /etc/accessory-setup/profiles, then
    /usr/share/accessory-setup/profiles). With --idle-exit it exits after that many seconds
    with nothing to do, to come back by D-Bus activation.
    """

func fail(_ message: String, code: Int32 = 64) -> Never {
    StandardStream.error.write("accessory-agent: \(message)\n")
    exit(code)
}

var configuration = AgentConfiguration()
var profiles: [URL] = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    func value() -> String {
        guard let value = arguments.popFirst() else { fail("\(argument) needs a value\n\(usage)") }
        return value
    }
    switch argument {
    case "--bus":
        let bus = value()
        configuration.bus = bus == "system" ? .system : bus == "session" ? .session : .address(bus)
    case "--state-directory":
        configuration.stateDirectory = URL(fileURLWithPath: value())
    case "--profiles":
        profiles.append(URL(fileURLWithPath: value()))
    case "--kiosk-policy":
        configuration.kioskPolicyPath = value()
    case "--idle-exit":
        guard let seconds = Int(value()), (0...86_400).contains(seconds) else {
            fail("--idle-exit takes 0 to 86400 seconds")
        }
        configuration.idleExit = seconds == 0 ? nil : .seconds(seconds)
    case "--version":
        print("accessory-agent \(AgentConfiguration.version)")
        exit(0)
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        fail("unknown argument '\(argument)'\n\(usage)")
    }
}
if !profiles.isEmpty { configuration.profileDirectories = profiles }
umask(0o077)

do {
    let agent = try await Agent.start(configuration, began: began)
    await agent.run()
} catch {
    fail("\(error)", code: 1)
}
