import Foundation
import ServiceHarness
import Testing

/// `packaging/dispatcher/90-accessory-setup` run as NetworkManager's dispatcher runs it, with
/// hostile values, against python-dbusmock standing in for the agent on a private bus.
@Suite("The NetworkManager dispatcher hook", .serialized)
struct DispatcherHookTests {
    static let hook = Repository.path("packaging/dispatcher/90-accessory-setup")
    static let uuid = "6f1c2a4e-8d0b-4c1e-9a57-0b1d2c3e4f50"

    /// A private bus with the mock agent on it.
    final class Fixture {
        let bus: PrivateSystemBus
        let scratch: ScratchDirectory
        let agent: AgentMock

        init(reportConnectionCode: String = "") throws {
            let bus = try PrivateSystemBus()
            self.bus = bus
            environment = bus.environment.merging(["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]) { $1 }
            scratch = try ScratchDirectory("dispatcher-hook")
            agent = try AgentMock(
                busEnvironment: environment, directory: scratch, reportConnectionCode: reportConnectionCode)
        }

        /// The bus's address and a dispatcher-like PATH, nothing else.
        let environment: [String: String]

        /// Runs the hook with the dispatcher's two arguments and `variables` on top of the bus.
        func hook(_ interface: String, _ action: String, _ variables: [String: String]) throws -> ProcessResult {
            try runProcess(
                DispatcherHookTests.hook, [interface, action], environment: environment.merging(variables) { $1 })
        }

        deinit {
            agent.stop()
            bus.stop()
        }
    }

    @Test func reportsUpAndDownWithTheConnectionsUUIDNameAndInterface() throws {
        let fixture = try Fixture()
        for action in ["up", "down", "pre-down"] {
            let run = try fixture.hook(
                "wlan0", action,
                [
                    "CONNECTION_UUID": Self.uuid, "CONNECTION_ID": "Accessory WLED-AP", "DEVICE_IFACE": "wlan0",
                    "NM_DISPATCHER_ACTION": action,
                ])
            #expect(run.status == 0)
            #expect(run.out.isEmpty && run.err.isEmpty, "the hook printed: \(run.out)\(run.err)")
        }
        let expected = ["uuid": Self.uuid, "id": "Accessory WLED-AP", "interface": "wlan0"]
        let reports = try fixture.agent.reports()
        #expect(reports == ["up", "down", "pre-down"].map { .init(action: $0, connection: expected) })
    }

    @Test func reportsNothingForOtherActions() throws {
        let fixture = try Fixture()
        for action in ["dhcp4-change", "vpn-up", "connectivity-change", "hostname", "reapply", "up; down", "UP", ""] {
            let run = try fixture.hook("wlan0", action, ["CONNECTION_UUID": Self.uuid, "CONNECTION_ID": "x"])
            #expect(run.status == 0, "action \(action)")
        }
        #expect(try fixture.agent.reports().isEmpty)
    }

    @Test func reportsNothingWithoutAUUIDOfTheRightShape() throws {
        let fixture = try Fixture()
        let bad = [
            "", "6f1c2a4e8d0b4c1e9a570b1d2c3e4f50", Self.uuid + "0", "x" + Self.uuid.dropFirst(), " " + Self.uuid,
            Self.uuid + "\n", "6f1c2a4e-8d0b-4c1e-9a57-0b1d2c3e4f5g", "********-****-****-****-************",
            "$(touch /tmp/x)-8d0b-4c1e-9a57-0b1d2c3e4f50", "[0-9a-f]" + Self.uuid.dropFirst(),
        ]
        for uuid in bad {
            let run = try fixture.hook("wlan0", "up", ["CONNECTION_UUID": uuid])
            #expect(run.status == 0, "uuid \(uuid.debugDescription)")
        }
        let run = try fixture.hook("wlan0", "up", [:])
        #expect(run.status == 0)
        #expect(try fixture.agent.reports().isEmpty)
    }

    @Test func passesHostileNamesVerbatimAndNeverEvaluatesThem() throws {
        let fixture = try Fixture()
        let marker = fixture.scratch.path("evaluated")
        let names = [
            "--help", "-- --system", "$(touch \(marker))", "`touch \(marker)`; touch \(marker)", "a\nb\tc", "'\"\\",
            "Café ☕", String(repeating: "x", count: 255),
        ]
        for name in names {
            let run = try fixture.hook("wlan0", "up", ["CONNECTION_UUID": Self.uuid, "CONNECTION_ID": name])
            #expect(run.status == 0)
        }
        #expect(!FileManager.default.fileExists(atPath: marker), "a value was run as a command")
        #expect(try fixture.agent.reports().map { $0.connection["id"] } == names)
    }

    @Test func leavesOutNamesTooLongOrNotUTF8AndStillReports() throws {
        let fixture = try Fixture()
        // 256 bytes, though fewer characters: the limit is in bytes.
        let long = String(repeating: "é", count: 128)
        #expect(try fixture.hook("wlan0", "up", ["CONNECTION_UUID": Self.uuid, "CONNECTION_ID": long]).status == 0)
        // An environment value that is not UTF-8 cannot be a Swift string; the shell makes it.
        let notUTF8 = try runProcess(
            "/bin/sh", ["-c", "CONNECTION_ID=$(printf 'ok\\377\\376') exec \"$0\" wlan0 down", Self.hook],
            environment: fixture.environment.merging(["CONNECTION_UUID": Self.uuid]) { $1 })
        #expect(notUTF8.status == 0)
        let reports = try fixture.agent.reports()
        #expect(reports.map(\.action) == ["up", "down"])
        #expect(reports.allSatisfy { $0.connection == ["uuid": Self.uuid, "interface": "wlan0"] })
    }

    @Test func takesTheDevicesInterfaceAndLeavesOutImpossibleNames() throws {
        let fixture = try Fixture()
        let cases: [(argument: String, variable: String?, expected: String?)] = [
            ("wlan0", "wlp2s0", "wlp2s0"),
            ("wlan1", nil, "wlan1"),
            ("wlan0", "../../etc", nil),
            ("wlan0", "wl an0", nil),
            ("wlan0", "ab\ncd", nil),
            ("wlan0", String(repeating: "w", count: 16), nil),
            ("wlan0", String(repeating: "w", count: 15), String(repeating: "w", count: 15)),
            ("..", nil, nil),
            ("-x", nil, "-x"),
        ]
        for (argument, variable, _) in cases {
            var variables = ["CONNECTION_UUID": Self.uuid]
            variables["DEVICE_IFACE"] = variable
            #expect(try fixture.hook(argument, "up", variables).status == 0)
        }
        #expect(try fixture.agent.reports().map { $0.connection["interface"] } == cases.map(\.expected))
    }

    @Test func exitsZeroAtOnceWithoutTheAgentOrWithoutABus() throws {
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        let variables = ["CONNECTION_UUID": Self.uuid, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
        let noAgent = try runProcess(
            Self.hook, ["wlan0", "up"], environment: bus.environment.merging(variables) { $1 })
        #expect(noAgent.status == 0)
        #expect(noAgent.out.isEmpty && noAgent.err.isEmpty)
        #expect(noAgent.seconds < 2, "the hook waited \(noAgent.seconds) s for an agent that is not there")

        let noBus = try runProcess(
            Self.hook, ["wlan0", "down"],
            environment: variables.merging(["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bus"]) { $1 })
        #expect(noBus.status == 0)
        #expect(noBus.out.isEmpty && noBus.err.isEmpty)
        #expect(noBus.seconds < 2)
    }

    @Test func waitsAtMostThreeSecondsForAnAgentThatDoesNotAnswer() throws {
        let fixture = try Fixture(reportConnectionCode: "import time; time.sleep(8)")
        let run = try fixture.hook("wlan0", "up", ["CONNECTION_UUID": Self.uuid])
        #expect(run.status == 0)
        #expect(run.seconds < 5, "the hook held the dispatcher for \(run.seconds) s")
    }

    /// A bus that would start the agent on demand: the hook must not.
    @Test func neverStartsTheAgent() throws {
        let services = try ScratchDirectory("dispatcher-activation")
        let marker = services.path("started")
        let starter = services.path("start-agent")
        try "#!/bin/sh\ntouch '\(marker)'\nsleep 5\n".write(toFile: starter, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: starter)
        try "[D-BUS Service]\nName=\(Repository.busName)\nExec=\(starter)\n".write(
            toFile: services.path("\(Repository.busName).service"), atomically: true, encoding: .utf8)
        let bus = try ConfiguredBus(
            type: "session",
            """
              <servicedir>\(services.url.path)</servicedir>
              <policy context="default">
                <allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/>
              </policy>
            """)
        defer { bus.stop() }
        let run = try runProcess(
            Self.hook, ["wlan0", "up"], environment: bus.environment.merging(["CONNECTION_UUID": Self.uuid]) { $1 })
        #expect(run.status == 0)
        usleep(300_000)
        #expect(!FileManager.default.fileExists(atPath: marker), "the hook started the agent")

        // The same call with activation allowed does start it: the bus above can tell.
        _ = try? runProcess(
            "/usr/bin/busctl",
            [
                "--system", "--timeout=1", "call", Repository.busName, "/io/accessorysetup",
                "io.accessorysetup.Manager1", "ReportConnection", "sa{sv}", "up", "0",
            ],
            environment: bus.environment)
        #expect(FileManager.default.fileExists(atPath: marker))
    }
}
