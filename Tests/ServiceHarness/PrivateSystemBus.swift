import Foundation

/// A `dbus-daemon` of its own that stands in for the system bus: tests point libnm (and
/// python-dbusmock, and NetworkManager) at it, and the host's buses are never touched.
public final class PrivateSystemBus: @unchecked Sendable {
    public let address: String
    let directory: ScratchDirectory
    private let daemon: ServiceProcess

    public init() throws {
        directory = try ScratchDirectory("accessory-bus")
        let socket = directory.path("system_bus_socket")
        address = "unix:path=\(socket)"
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_type="method_call"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """
        let configFile = directory.path("bus.conf")
        try config.write(toFile: configFile, atomically: true, encoding: .utf8)
        daemon = try ServiceProcess(
            name: "dbus-daemon", executable: "/usr/bin/dbus-daemon",
            arguments: ["--config-file=\(configFile)", "--nofork", "--nopidfile"],
            logFile: directory.url.appendingPathComponent("dbus-daemon.log"))
        try daemon.wait(for: "listening on \(socket)") { FileManager.default.fileExists(atPath: socket) }
    }

    /// The environment that points a child process at this bus as its system bus.
    public var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": address] }

    /// Starts python-dbusmock with `arguments` and waits until it owns `name`. A mock that has
    /// not taken its name within 60 s is killed and started again, twice at most: under the
    /// sanitizers, with every suite starting its services at once, one BlueZ mock in a few
    /// hundred was seen never to take its name, its log empty, while the others on the same
    /// machine did. Each attempt's log is kept (`logName`, then `logName.2`, `logName.3`).
    public func startMock(_ label: String, owning name: String, arguments: [String], logName: String) throws
        -> ServiceProcess
    {
        var failures: [String] = []
        for attempt in 1...3 {
            let log = directory.url.appendingPathComponent(attempt == 1 ? logName : "\(logName).\(attempt)")
            let mock = try ServiceProcess(
                name: "python-dbusmock (\(label))", executable: "/usr/bin/python3",
                arguments: ["-m", "dbusmock", "--system"] + arguments, environment: environment, logFile: log)
            do {
                try mock.wait(for: "owning \(name)", timeout: 60) { hasOwner(name) }
                return mock
            } catch {
                let names =
                    (try? run(
                        "/usr/bin/gdbus",
                        [
                            "call", "--system", "--dest", "org.freedesktop.DBus", "--object-path",
                            "/org/freedesktop/DBus",
                            "--method", "org.freedesktop.DBus.ListNames",
                        ], environment: environment, timeout: 10)) ?? "(the bus did not answer ListNames)"
                failures.append("attempt \(attempt): \(error); the bus's names: \(names)")
                mock.stop()
            }
        }
        throw HarnessError(failures.joined(separator: "\n"))
    }

    /// Whether a bus name has an owner on this bus.
    public func hasOwner(_ name: String) -> Bool {
        let reply = try? run(
            "/usr/bin/gdbus",
            [
                "call", "--system", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                "--method", "org.freedesktop.DBus.NameHasOwner", name,
            ], environment: environment, timeout: 5)
        return reply?.contains("true") == true
    }

    public func stop() { daemon.stop() }
}
