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

    /// Whether a bus name has an owner on this bus.
    public func hasOwner(_ name: String) -> Bool {
        let reply = try? run("/usr/bin/gdbus", [
            "call", "--system", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
            "--method", "org.freedesktop.DBus.NameHasOwner", name,
        ], environment: environment, timeout: 5)
        return reply?.contains("true") == true
    }

    public func stop() { daemon.stop() }
}
