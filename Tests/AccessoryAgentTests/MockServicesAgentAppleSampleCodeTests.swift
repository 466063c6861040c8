import AccessoryCore
import Foundation
import ServiceHarness
import Testing

/// Apple's own sample code from `../shared/seeds` (`examples/AppleSampleCode`, built with the
/// package with only the lines Linux must change), run against the built agent on a private
/// bus with python-dbusmock's NetworkManager, BlueZ and polkitd, as the application
/// `org.example.AppleSamples`: its session finds its profile from that identity.
@Suite("Apple's sample code (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentAppleSampleCodeTests {
    static let profile = """
        {
          "schemaVersion": 1,
          "id": "org.example.applesamples",
          "vendor": "Example",
          "applications": ["org.example.AppleSamples"],
          "supports": ["wifi", "bluetooth"],
          "bluetooth": { "services": ["feed", "beef"] },
          "hotspot": { "security": "open", "passphrase": { "source": "none" } },
          "handoff": "joinHotspot",
          "items": [ { "name": "Acme plug", "descriptor": { "ssidPrefix": "Acme-Setup-" } } ]
        }
        """
    static let diceAddress = "C0:FF:EE:00:00:01"

    /// The agent with the samples' profile installed, a kiosk that picks the first match for
    /// `nobody`, and the dice advertising its service.
    static func services(allowing actions: [String]) throws -> (AgentServices, UInt32) {
        let user = try systemUser("nobody")
        let services = try AgentServices(
            kiosk: kioskPolicy(profiles: ["org.example.applesamples"], users: [user]))
        try services.agent.installProfile(profile, name: "org.example.applesamples")
        try services.polkit.allow(["io.accessorysetup.open-session"] + actions)
        try services.bluez.addDevice(
            diceAddress, name: "Pink Dice", rssi: -50, uuids: ["0000feed-0000-1000-8000-00805f9b34fb"])
        return (services, user)
    }

    static func run(_ sample: String, on services: AgentServices, as user: UInt32, environment: [String] = [])
        async throws -> ScriptRun
    {
        let program = try AgentProcess.builtProduct("apple-sample-code").path
        return try await services.runProgram(
            "/usr/bin/env",
            ["GIO_LAUNCHED_DESKTOP_FILE=/usr/share/applications/org.example.AppleSamples.desktop"] + environment
                + [program, sample],
            uid: user, timeout: 200)
    }

    /// The reports of a run, without their prefix.
    static func reports(_ run: ScriptRun) -> [String] {
        run.lines.filter { $0.hasPrefix("sample: ") }.map { String($0.dropFirst("sample: ".count)) }
    }

    @Test func theSessionActivatesOverTheProfileThatNamesTheApplication() async throws {
        let (services, user) = try Self.services(allowing: [])
        let run = try await Self.run("session", on: services, as: user)
        #expect(run.status == 0, "\(run)")
        #expect(Self.reports(run) == ["activated: 0 accessories"], "\(run)")
    }

    @Test func theArticlesPickerAddsTheBluetoothAccessoryUnderAStableIdentifier() async throws {
        let (services, user) = try Self.services(allowing: [])
        let run = try await Self.run("picker", on: services, as: user)
        #expect(run.status == 0, "\(run)")
        let reports = Self.reports(run)
        #expect(reports.contains("pickerDidPresent"), "\(run)")
        #expect(
            reports.contains("added My Accessory: Bluetooth 4C494E55-5842-8000-8000-C0FFEE000001"),
            "the accessory's bluetoothIdentifier is its address's: \(run)")
        let record = try #require(try services.storedRecords().first, "\(run)")
        #expect(record.owner.application == nil && record.owner.uid == user)
        #expect(record.bluetoothIdentifier?.description == Self.diceAddress)
    }

    @Test func theWWDCDicePickerAddsThePinkDice() async throws {
        let (services, user) = try Self.services(allowing: [])
        let run = try await Self.run("dice", on: services, as: user)
        #expect(run.status == 0, "\(run)")
        #expect(Self.reports(run) == ["added Pink Dice", "pickerDidDismiss"], "\(run)")
        #expect(try services.storedRecords().map(\.displayName) == ["Pink Dice"])
    }

    /// The article's custom filtering: the application sees the advertisement, shows the dice
    /// under its own name, and the accessory is recorded under that name.
    @Test func theArticlesFilteringShowsTheDiscoveredAccessoryUnderTheApplicationsName() async throws {
        let (services, user) = try Self.services(allowing: [])
        let run = try await Self.run("filter", on: services, as: user)
        #expect(run.status == 0, "\(run)")
        let reports = Self.reports(run)
        #expect(
            reports.first
                == "discovered: [\"kCBAdvDataLocalName\", \"kCBAdvDataServiceUUIDs\", \"kCBAdvDataTxPowerLevel\"], RSSI -50",
            "\(run)")
        #expect(reports.last == "added More Specific Product Name", "\(run)")
        #expect(try services.storedRecords().map(\.displayName) == ["More Specific Product Name"])
    }

    @Test func theGuidesWiFiListingJoinsThePickedHotspotThroughNEHotspotConfigurationManager() async throws {
        let (services, user) = try Self.services(allowing: ["io.accessorysetup.configure-hotspot"])
        let run = try await Self.run("wifi", on: services, as: user)
        #expect(run.status == 0, "\(run)")
        #expect(Self.reports(run).last?.hasPrefix("joined Acme-Setup-") == true, "\(run)")
        #expect(try services.networkManager.activeConnectionID(on: services.device)?.contains("Acme-Setup-") == true)
    }

    @Test func aRefusedJoinComesBackInNEHotspotConfigurationErrorDomain() async throws {
        let (services, user) = try Self.services(allowing: [])
        let run = try await Self.run("wifi", on: services, as: user)
        #expect(run.status == 0, "\(run)")
        #expect(run.out.contains("Wi-Fi join failed: "), "polkit refused configure-hotspot: \(run)")
        #expect(!run.out.contains("sample: joined"), "\(run)")
    }

    @Test func theGuidesMigrationAdoptsTheHotspotProfile() async throws {
        let (services, user) = try Self.services(allowing: ["io.accessorysetup.authorize"])
        try services.networkManager.addTaggedProfile(
            id: "Acme own", ssid: "Acme-Setup-4F2A", userData: ["org.example.note": "made by the person"],
            permittedUser: "nobody")
        let run = try await Self.run("migration", on: services, as: user)
        #expect(run.status == 0, "\(run)")
        #expect(Self.reports(run) == ["migrationComplete: [\"My Accessory\"]"], "\(run)")
        #expect(try services.storedRecords().map { $0.ssid?.description } == ["Acme-Setup-4F2A"])
    }

    /// An agent that stops sends no `Invalidated`; the application's session still ends, with
    /// an error that says why.
    @Test func aSessionWhoseAgentLeftTheBusIsInvalidated() async throws {
        let (services, user) = try Self.services(allowing: [])
        let program = try AgentProcess.builtProduct("apple-sample-code").path
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("apple-sample-\(UUID()).log")
        try #require(FileManager.default.createFile(atPath: log.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: log) }
        let output = try FileHandle(forWritingTo: log)
        defer { try? output.close() }
        let arguments = [
            "GIO_LAUNCHED_DESKTOP_FILE=/usr/share/applications/org.example.AppleSamples.desktop", program,
            "session-kept",
        ]
        let sample = try ChildProcess(
            "/usr/bin/setpriv", AgentServices.asUser(user, "/usr/bin/env", arguments),
            environment: ProcessInfo.processInfo.environment.merging(services.bus.environment) { $1 },
            standardOutput: .file(output), standardError: .output)
        defer { sample.send(SIGKILL) }
        func printed() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        let deadline = Date() + 90
        while !printed().contains("sample: activated"), sample.isRunning, Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(printed().contains("sample: activated: 0 accessories"), "\(printed())")

        try services.agent.kill()
        let ended = sample.wait(within: 60)
        #expect(ended?.rawStatus == 0, "the sample ends on its invalidated event: \(printed())")
        #expect(printed().hasSuffix("sample: invalidated\n"), "\(printed())")
    }

    @Test func aHostProcessWithNoApplicationIdentityIsToldToNameItsProfile() async throws {
        let (services, user) = try Self.services(allowing: [])
        let program = try AgentProcess.builtProduct("apple-sample-code").path
        let run = try await services.runProgram(
            "/usr/bin/env", ["-u", "GIO_LAUNCHED_DESKTOP_FILE", program, "session"], uid: user, timeout: 200)
        #expect(run.status == 0, "\(run)")
        #expect(Self.reports(run) == ["invalidated"], "\(run)")
    }
}
