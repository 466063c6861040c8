import Foundation
import ServiceHarness
import Testing

/// `packaging/dbus/io.accessorysetup.conf` in a real `dbus-daemon` whose default policy is the
/// system bus's (`/usr/share/dbus-1/system.conf`: no one owns a name or sends a method call
/// unless a service's file allows it).
@Suite("The D-Bus system policy", .serialized)
struct DBusPolicyTests {
    static let systemDefaults = """
          <policy context="default">
            <allow user="*"/>
            <deny own="*"/>
            <deny send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_requested_reply="true" send_type="method_return"/>
            <allow send_requested_reply="true" send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
            <allow receive_type="signal"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
          </policy>
          <policy user="root"><allow own="org.example.Other"/></policy>
          <include>\(Repository.path("packaging/dbus/io.accessorysetup.conf"))</include>
        """
    static let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups", "--"]

    /// Asks the bus for `name` as the given user; returns gdbus's output or error.
    static func requestName(_ name: String, on bus: ConfiguredBus, as user: [String]) throws -> ProcessResult {
        try runProcess(
            "/usr/bin/setpriv",
            user + [
                "/usr/bin/gdbus", "call", "--system", "--dest", "org.freedesktop.DBus",
                "--object-path", "/org/freedesktop/DBus",
                "--method", "org.freedesktop.DBus.RequestName", name, "uint32 4",
            ], environment: bus.environment)
    }

    @Test func onlyRootOwnsTheName() throws {
        let bus = try ConfiguredBus(Self.systemDefaults)
        defer { bus.stop() }
        let asNobody = try Self.requestName(Repository.busName, on: bus, as: Self.nobody)
        #expect(asNobody.status != 0)
        #expect(asNobody.err.contains("AccessDenied"), "\(asNobody.err)")
        let asRoot = try Self.requestName(Repository.busName, on: bus, as: [])
        #expect(asRoot.status == 0, "\(asRoot.err)")
        #expect(asRoot.out.contains("uint32 1"), "\(asRoot.out)")
    }

    @Test func anyoneCallsTheServiceAndNoOtherServiceIsOpened() throws {
        let bus = try ConfiguredBus(Self.systemDefaults)
        defer { bus.stop() }
        let scratch = try ScratchDirectory("dbus-policy")
        let agent = try AgentMock(busEnvironment: bus.environment, directory: scratch)
        defer { agent.stop() }
        let call = { (user: [String], destination: String) in
            try runProcess(
                "/usr/bin/setpriv",
                user + [
                    "/usr/bin/busctl", "--system", "--timeout=5", "call", destination, "/io/accessorysetup",
                    "io.accessorysetup.Manager1", "ReportConnection", "sa{sv}", "up", "0",
                ], environment: bus.environment)
        }
        let asNobody = try call(Self.nobody, Repository.busName)
        #expect(asNobody.status == 0, "an unprivileged caller cannot reach the agent: \(asNobody.err)")
        #expect(try agent.reports() == [.init(action: "up", connection: [:])])

        // Another service on the same bus stays closed to the same caller: the file opened
        // the agent's name, not the bus.
        let other = try ServiceProcess(
            name: "python-dbusmock (other)", executable: "/usr/bin/python3",
            arguments: [
                "-m", "dbusmock", "--system", "org.example.Other", "/io/accessorysetup",
                "io.accessorysetup.Manager1",
            ],
            environment: bus.environment, logFile: scratch.url.appendingPathComponent("other.log"))
        defer { other.stop() }
        try other.wait(for: "owning org.example.Other") { bus.hasOwner("org.example.Other") }
        let denied = try call(Self.nobody, "org.example.Other")
        #expect(denied.status != 0)
        #expect(denied.err.contains("denied") || denied.err.contains("Access"), "\(denied.err)")
    }

    @Test func rootCallsPickerAgentsOfOtherUsersAndNothingElseOfTheirs() throws {
        let bus = try ConfiguredBus(Self.systemDefaults)
        defer { bus.stop() }
        // A picker front end of an unprivileged user: it owns no name, it exports an object.
        let picker = """
            import dbus, dbus.service, sys
            from dbus.mainloop.glib import DBusGMainLoop
            from gi.repository import GLib
            DBusGMainLoop(set_as_default=True)
            bus = dbus.bus.BusConnection(sys.argv[1])
            class Picker(dbus.service.Object):
                @dbus.service.method("io.accessorysetup.PickerAgent1", in_signature="", out_signature="")
                def Release(self):
                    print("released", flush=True)
                @dbus.service.method("org.example.Private", in_signature="", out_signature="s")
                def Secret(self):
                    return "secret"
            Picker(bus, "/picker")
            print(bus.get_unique_name(), flush=True)
            GLib.MainLoop().run()
            """
        let scratch = try ScratchDirectory("dbus-policy-picker")
        let script = scratch.path("picker.py")
        try picker.write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.url.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: script)
        let process = try ServiceProcess(
            name: "picker agent", executable: "/usr/bin/setpriv",
            arguments: Self.nobody + ["/usr/bin/python3", script, bus.address],
            logFile: scratch.url.appendingPathComponent("picker.log"))
        defer { process.stop() }
        try process.wait(for: "its unique name") { process.log.hasPrefix(":") }
        let uniqueName = String(process.log.prefix { $0 != "\n" })

        let call = { (interface: String, method: String) in
            try runProcess(
                "/usr/bin/busctl",
                [
                    "--system", "--timeout=5", "call", uniqueName, "/picker", interface, method,
                ], environment: bus.environment)
        }
        let release = try call("io.accessorysetup.PickerAgent1", "Release")
        #expect(release.status == 0, "root cannot call a picker agent: \(release.err)")
        let secret = try call("org.example.Private", "Secret")
        #expect(secret.status != 0, "root may call anything on a user's connection")
        #expect(secret.err.contains("denied") || secret.err.contains("Access"), "\(secret.err)")
    }
}
