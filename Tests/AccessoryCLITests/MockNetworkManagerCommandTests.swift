import AccessoryCLI
import Foundation
import ServiceHarness
import Testing

/// The Wi-Fi commands of the built `accessoryctl` against python-dbusmock's NetworkManager
/// on a private system bus.
@Suite(.serialized) final class MockNetworkManagerCommandTests {
    let mock: NetworkManagerMock
    let device: String
    let passphraseFile: TemporaryFile

    init() throws {
        mock = try NetworkManagerMock()
        device = try mock.addWiFiDevice("wlan0")
        let home = try mock.addAccessPoint(
            device, name: "home", ssid: "HomeNet", bssid: "3C:A6:2F:10:20:30", frequency: 5180, strength: 82,
            security: .transition)
        try mock.connectHomeNetwork(device, accessPoint: home, ssid: "HomeNet")
        try mock.addAccessPoint(
            device, name: "wled", ssid: "WLED-AP", bssid: "A4:CF:12:6B:00:01", frequency: 2412, strength: 64,
            security: .wpa2)
        try mock.addAccessPoint(
            device, name: "prov", ssid: "PROV_261FCC", bssid: "7C:DF:A1:26:1F:CD", frequency: 2437, strength: 71)
        try mock.addAccessPoint(
            device, name: "cam", ssid: "Cam-Setup", bssid: "02:11:22:33:44:55", frequency: 5745, strength: 30,
            security: .wpa3)
        passphraseFile = try TemporaryFile("wled1234\n", name: "wled.pass")
    }

    deinit { mock.stop() }

    func accessoryctl(_ arguments: String..., input: String? = nil) async throws -> Run {
        try await accessoryctlProcess(arguments, environment: mock.bus.environment, input: input)
    }

    @Test func wifiListJSONHasEveryAccessPoint() async throws {
        let run = try await accessoryctl("wifi", "list", "--json")
        #expect(run.code == .success, "\(run.err)")
        struct Output: Decodable {
            struct Entry: Decodable, Equatable {
                var ssid: String?
                var bssid: String
                var strength: Int
                var frequency: Int
                var security: [String]
            }
            var device: String
            var accessPoints: [Entry]
        }
        let output = try JSONDecoder().decode(Output.self, from: Data(run.out.utf8))
        #expect(output.device == "wlan0")
        #expect(
            output.accessPoints == [
                .init(
                    ssid: "HomeNet", bssid: "3C:A6:2F:10:20:30", strength: 82, frequency: 5180,
                    security: ["wpa-psk", "sae"]),
                .init(ssid: "PROV_261FCC", bssid: "7C:DF:A1:26:1F:CD", strength: 71, frequency: 2437, security: []),
                .init(
                    ssid: "WLED-AP", bssid: "A4:CF:12:6B:00:01", strength: 64, frequency: 2412, security: ["wpa-psk"]),
                .init(ssid: "Cam-Setup", bssid: "02:11:22:33:44:55", strength: 30, frequency: 5745, security: ["sae"]),
            ])
    }

    @Test func wifiListTable() async throws {
        let run = try await accessoryctl("wifi", "list", "--rescan")
        #expect(run.code == .success, "\(run.err)")
        #expect(run.outLines.first?.hasPrefix("SSID") == true)
        #expect(run.outLines.count == 5)
        #expect(run.outLines[1].hasPrefix("HomeNet"))
        #expect(run.outLines[2].contains("7C:DF:A1:26:1F:CD  71%"))
        #expect(run.err.isEmpty, "no progress line when standard error is not a terminal")
        #expect(try mock.scanRequests() == [[]])
    }

    @Test func joinLeaveAndNoSecretOnTheTerminal() async throws {
        let joined = try await accessoryctl(
            "join", "--ssid", "WLED-AP", "--passphrase-file", passphraseFile.path, "--once")
        #expect(joined.code == .success, "\(joined.err)")
        #expect(joined.outLines.first == "Joined WLED-AP on wlan0 (profile 'Accessory WLED-AP').")
        #expect(
            joined.outLines.last?.hasPrefix("Run 'accessoryctl leave' to return to 'HomeNet'; NetworkManager restores")
                == true)
        #expect(!joined.out.contains("wled1234") && !joined.err.contains("wled1234"))
        #expect(try mock.activeConnectionID(on: device) == "Accessory WLED-AP")

        let configured = try await accessoryctl("configured", "--json")
        #expect(configured.code == .success)
        #expect(configured.out.contains("\"ssid\" : \"WLED-AP\""))
        #expect(configured.out.contains("\"joinOnce\" : true"))
        #expect(!configured.out.contains("wled1234"))

        let left = try await accessoryctl("leave")
        #expect(left.code == .success, "\(left.err)")
        #expect(left.out == "Left WLED-AP on wlan0 and deleted its profile; back on 'HomeNet'.\n")
        #expect(try mock.activeConnectionID(on: device) == "HomeNet")
        #expect(try mock.connectionPaths().count == 1)
    }

    @Test func prefixJoinFromStandardInputAsJSON() async throws {
        try mock.addAccessPoint(device, name: "prov2", ssid: "PROV_99AA00", bssid: "7C:DF:A1:99:AA:01", strength: 90)
        let joined = try await accessoryctl("join", "--ssid-prefix", "PROV_", "--once", "--json")
        #expect(joined.code == .success, "\(joined.err)")
        #expect(joined.out.contains("\"ssid\" : \"PROV_99AA00\""), "the strongest AP with the prefix")

        let sae = try await accessoryctl(
            "join", "--ssid", "Cam-Setup", "--security", "wpa3", "--passphrase-stdin", input: "camera pass\n")
        #expect(sae.code == .failure)
        #expect(sae.err.contains("an accessory join is already in place on wlan0"))
        _ = try await accessoryctl("leave")
    }

    @Test func storedProfileIsListedThenForgotten() async throws {
        let joined = try await accessoryctl(
            "join", "--ssid", "Cam-Setup", "--security", "wpa3", "--passphrase-stdin", "--lifetime-days", "3",
            input: "camera pass\n")
        #expect(joined.code == .success, "\(joined.err)")
        #expect(try await accessoryctl("leave").code == .success)
        let listed = try await accessoryctl("configured")
        #expect(listed.outLines.count == 2)
        #expect(listed.outLines[1].hasPrefix("Cam-Setup  Accessory Cam-Setup  no"))
        #expect(listed.outLines[1].hasSuffix("no"), "not active after leave")

        let forgotten = try await accessoryctl("forget", "--ssid", "Cam-Setup")
        #expect(forgotten.code == .success)
        #expect(forgotten.out == "Forgot Cam-Setup (1 profile).\n")
        let again = try await accessoryctl("forget", "--ssid", "Cam-Setup")
        #expect(again.code == .failure)
        #expect(again.err.contains("no profile of this tool is stored for Cam-Setup"))
        #expect(try mock.connectionPaths().count == 1)
    }

    @Test func wrongPassphraseIsReportedAndLeavesNoProfile() async throws {
        try mock.failActivations(of: "WLED-AP", deviceReason: 7, connectionReason: 9)
        let run = try await accessoryctl("join", "--ssid", "WLED-AP", "--passphrase-file", passphraseFile.path)
        #expect(run.code == .failure)
        #expect(run.err == "accessoryctl: error: WLED-AP refused the passphrase; check it and try again\n")
        usleep(300_000)
        #expect(try mock.connectionPaths().count == 1)
        #expect(try mock.activeConnectionID(on: device) == "HomeNet")
    }

    @Test(arguments: [
        (["join"], "give --ssid or --ssid-prefix"),
        (["join", "--ssid", "A", "--ssid-prefix", "ABC"], "--ssid and --ssid-prefix are mutually exclusive"),
        (
            ["join", "--ssid", "WLED-AP", "--security", "wpa2"],
            "a wpa2 network needs --passphrase-file or --passphrase-stdin"
        ),
        (
            ["join", "--ssid", "WLED-AP", "--security", "wpa9"],
            "--security 'wpa9' is not one of open, wep, wpa2, wpa3, owe, enterprise"
        ),
        (
            ["join", "--ssid", "WLED-AP", "--timeout", "soon"],
            "--timeout 'soon' is not a whole number of seconds from 1 to 3600"
        ),
        (
            ["join", "--ssid", "WLED-AP", "--passphrase-file", "/nonexistent"],
            "cannot read the passphrase file /nonexistent"
        ),
    ])
    func joinUsageErrors(arguments: [String], message: String) async throws {
        let run = try await accessoryctlProcess(arguments, environment: mock.bus.environment)
        #expect(run.code == .usage)
        #expect(run.err.hasPrefix("accessoryctl: error: \(message)\n"), "\(run.err)")
    }

    @Test(arguments: [
        (["join", "--ssid-prefix", "AB"], "ssidPrefix: is 2 bytes long; a prefix needs 3 to 32 bytes"),
        (
            ["join", "--ssid", String(repeating: "x", count: 33)],
            "ssid: is 33 bytes long; an SSID has at most 32 bytes (UTF-8 bytes, not characters)"
        ),
        (
            ["join", "--ssid", "WLED-AP", "--once", "--lifetime-days", "3"],
            "lifetimeInDays: a join-once configuration is never stored, so it has no lifetime"
        ),
    ])
    func invalidConfigurationsNameTheField(arguments: [String], message: String) async throws {
        let run = try await accessoryctlProcess(arguments, environment: mock.bus.environment)
        #expect(run.code == .failure)
        #expect(run.err == "accessoryctl: error: \(message)\n")
    }

    @Test func shortPassphraseNamesTheFieldWithoutPrintingIt() async throws {
        let short = try TemporaryFile("short\n", name: "short.pass")
        let run = try await accessoryctlProcess(
            ["join", "--ssid", "WLED-AP", "--passphrase-file", short.path], environment: mock.bus.environment)
        #expect(run.code == .failure)
        #expect(run.err.hasPrefix("accessoryctl: error: passphrase: has 5 characters"))
        #expect(!run.err.contains("short\n") && !run.err.contains(": short"))
    }

    /// Ctrl-C or a stop request in the middle of a join: the join is undone before the process
    /// exits with 128 plus the signal's number.
    @Test(arguments: [SIGINT, SIGTERM])
    func signalDuringAJoinUndoesIt(signal: Int32) async throws {
        try mock.addAccessPoint(device, name: "slow", ssid: "Slow-Setup", bssid: "02:11:22:33:44:66")
        try mock.stallActivations(of: "Slow-Setup")
        let join = try RunningAccessoryctl(
            ["join", "--ssid", "Slow-Setup", "--once"], environment: mock.bus.environment)
        try await waitUntil("the join is under way") {
            try mock.activeConnectionID(on: device) == "Accessory Slow-Setup"
        }
        join.signal(signal)
        let run = await join.finish()
        #expect(run.code.rawValue == 128 + signal, "\(run.err)")
        #expect(try mock.activeConnectionID(on: device) == "HomeNet")
        #expect(try mock.connectionPaths().count == 1, "only the home network's profile is left")
        #expect(try mock.checkpointPaths().isEmpty)
    }

    /// Ctrl-C at the hidden passphrase prompt gives the terminal its echo back.
    @Test func interruptAtThePassphrasePromptRestoresEcho() throws {
        let binary = try #require(AccessoryCtlTests.executable())
        let script = #"""
            import os, pty, select, sys, termios, time
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], [sys.argv[1], "join", "--ssid", "Cam-Setup", "--security", "wpa3", "--passphrase-stdin"])
            seen, deadline = b"", time.time() + 20
            while b"Passphrase:" not in seen and time.time() < deadline:
                if select.select([fd], [], [], 0.5)[0]:
                    seen += os.read(fd, 1024)
            echo_off = not termios.tcgetattr(fd)[3] & termios.ECHO
            os.write(fd, b"\x03")
            deadline, status = time.time() + 20, None
            while status is None and time.time() < deadline:
                done, code = os.waitpid(pid, os.WNOHANG)
                if done: status = os.waitstatus_to_exitcode(code)
                else: time.sleep(0.05)
            if status is None:
                os.kill(pid, 9)
                status = "still running 20 s after Ctrl-C"
            echo_back = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
            print(f"prompt={b'Passphrase:' in seen} echo_off={echo_off} exit={status} echo_back={echo_back}")
            """#
        let output = try ServiceHarness.run(
            "/usr/bin/python3", ["-c", script, binary.path], environment: mock.bus.environment)
        #expect(
            output.trimmingCharacters(in: .whitespacesAndNewlines)
                == "prompt=True echo_off=True exit=130 echo_back=True")
    }
}
