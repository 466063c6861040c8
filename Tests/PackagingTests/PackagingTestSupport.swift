import Foundation
import ServiceHarness

/// Paths of the repository's packaging files.
enum Repository {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    static func text(_ relative: String) throws -> String {
        try String(contentsOfFile: path(relative), encoding: .utf8)
    }

    static let busName = "io.accessorysetup"
}

/// How a child process ended and what it printed.
struct ProcessResult {
    var status: Int32
    var out: String
    var err: String
    var seconds: Double
}

/// Runs `executable` with exactly `environment` (nothing inherited), standard input empty.
func runProcess(
    _ executable: String, _ arguments: [String], environment: [String: String], timeout: TimeInterval = 20
) throws -> ProcessResult {
    let start = Date()
    let process = try ChildProcess(
        executable, arguments, environment: environment, standardOutput: .pipe, standardError: .pipe)
    let (out, err) = process.readOutput()
    guard let ended = process.wait(within: timeout - Date().timeIntervalSince(start)) else {
        process.send(SIGKILL)
        process.wait(within: 10)
        throw HarnessError("\(executable) did not finish within \(Int(timeout)) s")
    }
    return ProcessResult(
        status: ended.status, out: String(decoding: out, as: UTF8.self),
        err: String(decoding: err, as: UTF8.self), seconds: Date().timeIntervalSince(start))
}

/// A `dbus-daemon` started from a configuration the test writes: a bus with the system bus's
/// default policy, or one that activates services from a directory.
final class ConfiguredBus: @unchecked Sendable {
    let directory: ScratchDirectory
    let address: String
    private let daemon: ServiceProcess

    /// `body` is the configuration between `<busconfig>` and `</busconfig>`, after the
    /// listening address.
    init(type: String = "system", _ body: String) throws {
        directory = try ScratchDirectory("packaging-bus")
        // Users the tests switch to must reach the socket.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.url.path)
        let socket = directory.path("bus_socket")
        address = "unix:path=\(socket)"
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>\(type)</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
            \(body)
            </busconfig>
            """
        let file = directory.path("bus.conf")
        try config.write(toFile: file, atomically: true, encoding: .utf8)
        daemon = try ServiceProcess(
            name: "dbus-daemon", executable: "/usr/bin/dbus-daemon",
            arguments: ["--config-file=\(file)", "--nofork", "--nopidfile"],
            logFile: directory.url.appendingPathComponent("dbus-daemon.log"))
        try daemon.wait(for: "listening on \(socket)") { FileManager.default.fileExists(atPath: socket) }
    }

    var environment: [String: String] {
        ["DBUS_SYSTEM_BUS_ADDRESS": address, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
    }

    /// Whether `name` has an owner on this bus.
    func hasOwner(_ name: String) -> Bool {
        let reply = try? run(
            "/usr/bin/gdbus",
            [
                "call", "--address", address, "--dest", "org.freedesktop.DBus", "--object-path",
                "/org/freedesktop/DBus",
                "--method", "org.freedesktop.DBus.NameHasOwner", name,
            ], timeout: 5)
        return reply?.contains("true") == true
    }

    func stop() { daemon.stop() }
}

/// python-dbusmock serving `io.accessorysetup` at `/io/accessorysetup` with `Manager1`'s
/// `ReportConnection`, whose calls the tests read back.
final class AgentMock: @unchecked Sendable {
    private let process: ServiceProcess
    private let environment: [String: String]

    init(busEnvironment: [String: String], directory: ScratchDirectory, reportConnectionCode: String = "") throws {
        environment = busEnvironment
        process = try ServiceProcess(
            name: "python-dbusmock (agent)", executable: "/usr/bin/python3",
            arguments: [
                "-m", "dbusmock", "--system", Repository.busName, "/io/accessorysetup",
                "io.accessorysetup.Manager1",
            ],
            environment: busEnvironment, logFile: directory.url.appendingPathComponent("agent-mock.log"))
        let address = busEnvironment["DBUS_SYSTEM_BUS_ADDRESS"]!
        try process.wait(for: "owning \(Repository.busName)") {
            (try? run(
                "/usr/bin/gdbus",
                [
                    "call", "--address", address, "--dest", "org.freedesktop.DBus",
                    "--object-path", "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.NameHasOwner",
                    Repository.busName,
                ], timeout: 5))?.contains("true") == true
        }
        try run(
            "/usr/bin/gdbus",
            [
                "call", "--address", address, "--dest", Repository.busName, "--object-path", "/io/accessorysetup",
                "--method", "org.freedesktop.DBus.Mock.AddMethod", "io.accessorysetup.Manager1", "ReportConnection",
                "sa{sv}", "", reportConnectionCode,
            ], timeout: 5)
    }

    struct Report: Equatable {
        var action: String
        var connection: [String: String]
    }

    /// The `ReportConnection` calls received, in order; every value of the dictionary must be
    /// a string.
    func reports() throws -> [Report] {
        let script = """
            import dbus, json, os
            bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
            mock = bus.get_object("io.accessorysetup", "/io/accessorysetup")
            calls = mock.GetMethodCalls("ReportConnection", dbus_interface="org.freedesktop.DBus.Mock")
            out = []
            for _, (action, connection) in calls:
                assert all(isinstance(v, dbus.String) for v in connection.values()), connection
                out.append([str(action), {str(k): str(v) for k, v in connection.items()}])
            print(json.dumps(out))
            """
        let json = try run("/usr/bin/python3", ["-c", script], environment: environment, timeout: 10)
        let decoded = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[Any]] ?? []
        return decoded.map { Report(action: $0[0] as? String ?? "", connection: $0[1] as? [String: String] ?? [:]) }
    }

    func stop() { process.stop() }
}
