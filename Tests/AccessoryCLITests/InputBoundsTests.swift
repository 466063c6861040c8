import AccessoryCLI
import Foundation
import ServiceHarness
import Testing

/// Numbers and inputs of any size: every numeric option is bounded, every file and standard
/// input is read up to a limit, and none of them crashes or hangs the built binary.
@Suite struct InputBoundsTests {
    /// No NetworkManager or BlueZ behind it: a command that got past its options fails to connect.
    static let noBus = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/accessoryctl-test-bus"]
    static let address = "24:0A:C4:12:34:56"

    static let numericOptions: [([String], String, String)] = [
        (["join", "--ssid", "WLED-AP"], "timeout", "a whole number of seconds from 1 to 3600"),
        (["join", "--ssid", "WLED-AP"], "restore-after", "a whole number of seconds from 0 to 86400"),
        (["join", "--ssid", "WLED-AP"], "lifetime-days", "a whole number of days from 1 to 365"),
        (["ble", "list"], "timeout", "a number of seconds from 0.1 to 3600"),
        (["improv", "identify", address], "timeout", "a number of seconds from 0.1 to 3600"),
        (
            ["improv", "provision", address, "--ssid", "HomeNet", "--passphrase-stdin"], "timeout",
            "a number of seconds from 0.1 to 3600"
        ),
        (
            ["match", "--profile", Paths.profile("wled.json"), "--live"], "timeout",
            "a number of seconds from 0.1 to 3600"
        ),
    ]

    @Test(arguments: numericOptions)
    func everyNumericOptionIsBounded(command: [String], option: String, range: String) async throws {
        for value in ["99999999999999999999", "9223372036854775807", "-1", "1e9", "nan", "90000"] {
            let run = try await accessoryctlProcess(
                command + ["--\(option)", value], environment: Self.noBus, deadline: .seconds(60))
            #expect(run.signal == nil && !run.timedOut, "\(command) --\(option) \(value) crashed or hung")
            #expect(run.code == .usage, "\(command) --\(option) \(value): \(run.err)")
            #expect(run.err.hasPrefix("accessoryctl: error: --\(option) '\(value)' is not \(range)\n"), "\(run.err)")
        }
    }

    @Test(arguments: [
        (
            ["join", "--ssid", "WLED-AP", "--passphrase-file", "/dev/zero"], "the passphrase file /dev/zero",
            ExitCode.usage
        ),
        (
            ["improv", "provision", address, "--ssid", "HomeNet", "--passphrase-file", "/dev/zero"],
            "the passphrase file /dev/zero", .usage
        ),
        (["profile", "validate", "/dev/zero"], "/dev/zero: (file):", .failure),
        (["match", "--profile", "/dev/zero", "--scan", Paths.demoScan], "/dev/zero: (file):", .failure),
        (["match", "--profile", Paths.profile("wled.json"), "--scan", "/dev/zero"], "/dev/zero: (file):", .failure),
    ])
    func endlessFilesAreRefusedAtOnce(arguments: [String], name: String, code: ExitCode) async throws {
        let run = try await accessoryctlProcess(arguments, environment: Self.noBus, deadline: .seconds(30))
        #expect(!run.timedOut && run.signal == nil, "hung or crashed reading /dev/zero")
        #expect(run.code == code, "\(run.err)")
        let limit = name.contains("passphrase") ? "4 KiB" : "8 MiB"
        let message = "\(name) is larger than \(limit), the limit for this input"
        #expect((run.out + run.err).contains(message), "\(run.out)\(run.err)")
    }

    @Test(arguments: [
        ["join", "--ssid", "WLED-AP", "--passphrase-stdin"],
        ["improv", "provision", address, "--ssid", "HomeNet", "--passphrase-stdin"],
    ])
    func endlessStandardInputIsRefusedAtOnce(arguments: [String]) async throws {
        let run = try await accessoryctlProcess(
            arguments, environment: Self.noBus, inputFile: "/dev/zero", deadline: .seconds(30))
        #expect(!run.timedOut && run.signal == nil, "hung or crashed reading /dev/zero")
        #expect(run.code == .usage)
        #expect(
            run.err.hasPrefix(
                "accessoryctl: error: the passphrase on standard input is larger than 4 KiB, the limit for this input\n"
            ),
            "\(run.err)")
    }

    @Test func aPassphraseFileAtTheLimitIsRead() async throws {
        let file = try TemporaryFile(String(repeating: "p", count: 4096), name: "long.pass")
        let run = try await accessoryctlProcess(
            ["join", "--ssid", "WLED-AP", "--passphrase-file", file.path], environment: Self.noBus)
        #expect(run.code == .failure, "read, then refused by the core as too long for WPA: \(run.err)")
        #expect(run.err.hasPrefix("accessoryctl: error: passphrase: "), "\(run.err)")
    }
}

/// A huge timeout reaching the join path of the built binary, against python-dbusmock's NetworkManager.
@Suite(.serialized) final class JoinBoundsTests {
    let mock: NetworkManagerMock

    init() throws {
        mock = try NetworkManagerMock()
        let device = try mock.addWiFiDevice("wlan0")
        try mock.addAccessPoint(
            device, name: "wled", ssid: "WLED-AP", bssid: "A4:CF:12:6B:00:01", frequency: 2412, strength: 64)
    }

    deinit { mock.stop() }

    @Test(arguments: ["timeout", "restore-after"])
    func hugeSecondsAreAUsageErrorNotATrap(option: String) async throws {
        let run = try await accessoryctlProcess(
            ["join", "--ssid", "WLED-AP", "--once", "--\(option)", "9223372036854775807"],
            environment: mock.bus.environment, deadline: .seconds(60))
        #expect(run.signal == nil, "accessoryctl died by signal \(run.signal ?? 0)")
        #expect(run.code == .usage, "\(run.err)")
        #expect(try mock.connectionPaths().isEmpty, "no profile was added")
    }
}
