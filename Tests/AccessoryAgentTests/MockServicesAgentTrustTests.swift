import BusService
import DBusValues
import Foundation
import ServiceHarness
import Testing

/// What one client of the agent can learn of or do to another's: the real `busctl`, `gdbus`
/// and the GIO test client, run as another user (through `setpriv`), against the built agent on
/// a private bus with python-dbusmock's NetworkManager, BlueZ and polkitd.
@Suite("Agent trust between users (private bus: mock NetworkManager, BlueZ, polkitd; setpriv)")
struct MockServicesAgentTrustTests {
    static let sessionInterface = "io.accessorysetup.Session1"

    @Test func anotherUserCanNeitherReadNorCallNorHearASession() async throws {
        let other = try systemUser("daemon")
        let services = try AgentServices()
        let scratch = try ScratchDirectory("monitor")
        // The real `gdbus monitor`, as the other user, for everything the agent sends.
        let monitor = try ServiceProcess(
            name: "gdbus monitor", executable: "/usr/bin/setpriv",
            arguments: AgentServices.asUser(
                other, "/usr/bin/stdbuf",
                ["-oL", "/usr/bin/gdbus", "monitor", "--system", "--dest", "io.accessorysetup"]),
            environment: services.bus.environment, logFile: scratch.url.appendingPathComponent("monitor.log"))
        try monitor.wait(for: "gdbus monitor to watch the agent") { monitor.log.contains("is owned by") }

        let owner = try await services.client()
        let picker = try await TestPicker(
            on: owner.bus, behaviour: .choose(ssid: "Acme-Setup-4F2A", name: "Kitchen plug"))
        try await owner.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let session = try await owner.openSession("org.example.plug")
        let changes = SignalRecorder(
            await owner.bus.signals(sender: nil, path: session.path, interface: "org.freedesktop.DBus.Properties"))
        _ = try await session.activate()
        try await session.showPicker([plugItem])
        let signals = try await session.waitForDismiss()
        #expect(signals.map(\.member).contains("AccessoryAdded"), "\(signals.map(\.member))")
        _ = picker

        // The owner reads its session's properties and is told of their changes.
        let own = try await owner.bus.call(
            destination: AgentProcess.busName, path: session.path, interface: "org.freedesktop.DBus.Properties",
            method: "GetAll", [.string(Self.sessionInterface)], timeout: .seconds(10))
        let ownProperties = own.first ?? .vardict([])
        #expect(ownProperties["State"]?.string == "active", "\(own)")
        #expect(ownProperties["Accessories"]?.elements.count == 1, "\(own)")
        try await changes.wait(for: "PropertiesChanged") { $0.contains { $0.member == "PropertiesChanged" } }

        // Anyone else is refused each read and each call, by the real tools.
        for arguments in [
            ["get-property", AgentProcess.busName, session.path, Self.sessionInterface, "Accessories"],
            ["get-property", AgentProcess.busName, session.path, Self.sessionInterface, "State"],
            [
                "call", AgentProcess.busName, session.path, "org.freedesktop.DBus.Properties", "GetAll", "s",
                Self.sessionInterface,
            ],
            ["call", AgentProcess.busName, session.path, Self.sessionInterface, "Invalidate"],
        ] {
            let run = try await services.runProgram("/usr/bin/busctl", ["--system"] + arguments, uid: other)
            #expect(run.status != 0, "busctl \(arguments): \(run)")
            #expect(
                run.err.contains("Access denied") || run.err.contains("AccessDenied"), "busctl \(arguments): \(run)")
            #expect(!run.out.contains("Kitchen") && !run.out.contains("Acme-Setup"), "busctl \(arguments): \(run)")
        }
        let introspection = try await services.runProgram(
            "/usr/bin/gdbus",
            ["introspect", "--system", "--dest", AgentProcess.busName, "--object-path", session.path], uid: other)
        #expect(!introspection.out.contains("Kitchen") && !introspection.out.contains("Acme-Setup"), "\(introspection)")

        // A change everyone may hear (the kiosk policy coming into force) reaches the monitor,
        // so it was listening all along; none of the session's did.
        try services.agent.writeKioskPolicy(kioskPolicy(profiles: ["org.example.plug"], users: [0]))
        try await owner.manager("Reload")
        try monitor.wait(for: "the manager's KioskPolicy change", timeout: 30) { monitor.log.contains("KioskPolicy") }
        monitor.stop()
        let heard = monitor.log
        #expect(!heard.contains(session.path), "the other user heard the session:\n\(heard)")
        for secret in ["Kitchen plug", "Acme-Setup-4F2A", "org.example.plug", AgentServices.plugBSSID] {
            #expect(!heard.contains(secret), "the other user heard \(secret):\n\(heard)")
        }
        #expect(try await session.call("Invalidate") == [])
        await owner.close()
    }
}

/// The NetworkManager profiles the agent acts on: only those it made, by the UUIDs it recorded,
/// never one another client of NetworkManager tagged as this project's in its `user` setting.
@Suite("Agent and profiles it did not make (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentOwnProfilesTests {
    @Test func aProfileTaggedByAnotherClientIsNeitherEndedByTheDispatcherNorForgottenWithARecord() async throws {
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [0]))
        let client = try await services.client()
        let session = try await client.openSession("ge.wled.softap")
        _ = try await session.activate()
        try await session.showPicker([wledItem])
        let added = try #require(
            try await session.waitForDismiss().first { $0.member == "AccessoryAdded" }?.arguments.first)
        let id = try #require(added["id"]?.string)
        let joined = try #require(try await client.manager("JoinAccessory", [.string(id), .vardict([])]).first)
        let made = try #require(joined["connectionUUID"]?.string)
        #expect(try services.storedRecords().first?.connectionUUIDs == [made.lowercased()])

        // Any client NetworkManager lets add a profile can tag it as this project's.
        let foreign = try services.networkManager.addTaggedProfile(
            id: "Someone else WLED", ssid: "WLED-AP",
            userData: [
                "accessory-setup.managed": "1", "accessory-setup.join-once": "0", "accessory-setup.record-id": id,
            ])
        let profiles = try services.networkManager.connectionPaths().count

        // The dispatcher's "down" for it ends nobody's join.
        try await client.manager("ReportConnection", [.string("down"), .vardict([("uuid", .string(foreign))])])
        #expect(try services.networkManager.activeConnectionID(on: services.device) == "Accessory WLED-AP")

        // Leaving and removing the record forget the agent's profile, never the tagged one.
        try await client.manager("Leave", [.vardict([])])
        try await session.call("RemoveAccessory", [.string(id)])
        let forgotten = try await poll(timeout: .seconds(10)) {
            services.agent.log.lowercased().contains("record \(id): forgot") ? true : nil
        }
        #expect(forgotten == true, "\(services.agent.log)")
        #expect(try services.networkManager.connectionPaths().count == profiles - 1, "\(services.agent.log)")
        #expect(try services.storedRecords().isEmpty)
        #expect(!services.agent.log.contains("Someone else WLED"), "\(services.agent.log)")
        await client.close()
    }
}

/// What is left when a client goes, or its session ends, while the agent is still answering it:
/// nothing — no session, and no connection.
@Suite("Agent races at a session's end (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentSessionEndTests {
    /// A root client with WLED-AP picked through the kiosk policy, and its session.
    static func pickedWLED(_ services: AgentServices) async throws -> (AgentClient, ClientSession, String) {
        let client = try await services.client()
        let session = try await client.openSession("ge.wled.softap")
        _ = try await session.activate()
        try await session.showPicker([wledItem])
        let added = try #require(
            try await session.waitForDismiss().first { $0.member == "AccessoryAdded" }?.arguments.first)
        return (client, session, try #require(added["id"]?.string))
    }

    static func expectOnlyHome(_ services: AgentServices, _ what: String) async throws {
        let home = try await poll(timeout: .seconds(30), every: .milliseconds(50)) {
            try services.networkManager.activeConnectionID(on: services.device) == "HomeNet"
                && services.networkManager.connectionPaths().count == 1 ? true : nil
        }
        #expect(home == true, "not back on HomeNet alone \(what): \(services.agent.log)")
    }

    @Test func aSecondJoinWhileOneIsInFlightIsPendingAndOnlyOneConnectionIsMade() async throws {
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [0]))
        let (client, _, id) = try await Self.pickedWLED(services)
        // No checkpoint serialises these two: the agent must.
        let options = DBusValue.vardict([("restoreAfter", .uint32(0))])
        async let first = outcome { () async throws(BusError) in
            try await client.manager("JoinAccessory", [.string(id), options])
        }
        async let second = outcome { () async throws(BusError) in
            try await client.manager("JoinAccessory", [.string(id), options])
        }
        let results = await [first, second]
        let refused: [BusError] = results.compactMap { if case .failure(let error) = $0 { error } else { nil } }
        #expect(results.count - refused.count == 1, "\(results)")
        #expect(refused.map(\.name) == ["io.accessorysetup.Error.Pending"], "\(results)")
        #expect(try services.networkManager.activeConnectionID(on: services.device) == "Accessory WLED-AP")
        #expect(try services.networkManager.connectionPaths().count == 2)
        try await client.manager("Leave", [.vardict([])])
        try await Self.expectOnlyHome(services, "after Leave")
        await client.close()
    }

    @Test func aJoinThatCompletesAfterItsSessionEndedIsUndone() async throws {
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [0]))
        let (client, session, id) = try await Self.pickedWLED(services)
        let (queued, markQueued) = AsyncStream.makeStream(of: Never.self)
        async let join = outcome { () async throws(BusError) in
            try await client.bus.call(
                destination: AgentProcess.busName, path: session.path, interface: "io.accessorysetup.Session1",
                method: "JoinAccessoryHotspot", [.string(id), .vardict([])], timeout: .seconds(30),
                queued: { markQueued.finish() })
        }
        for await _ in queued {}
        // Sent after the join: the agent starts a connection's calls in the order they came.
        try await session.call("Invalidate")
        if case .failure(let error) = await join {
            #expect(error.name == "io.accessorysetup.Error.Invalidated", "\(error)")
        }
        try await Self.expectOnlyHome(services, "after the session ended mid-join")
        await client.close()
    }

    @Test func aClientThatLeftWhilePolkitDecidedLeavesNoSession() async throws {
        let services = try AgentServices()
        try services.polkit.allow(["io.accessorysetup.open-session"])
        try services.polkit.hold(["io.accessorysetup.open-session"])
        let scratch = try ScratchDirectory("leaving-client")
        let leaving = try ServiceProcess(
            name: "gdbus call", executable: "/usr/bin/setpriv",
            arguments: AgentServices.asUser(
                try systemUser("nobody"), "/usr/bin/gdbus",
                [
                    // Interactive, as from a desktop: the agent waits up to 5 minutes for polkit, so
                    // a slow machine cannot make the held check time out first.
                    "call", "--interactive", "--system", "--dest", AgentProcess.busName, "--object-path",
                    AgentClient.manager,
                    "--method", "io.accessorysetup.Manager1.OpenSession", "org.example.plug", "{}",
                ]),
            environment: services.bus.environment, logFile: scratch.url.appendingPathComponent("client.log"))
        try leaving.wait(for: "polkit to hold the check") { (try? services.polkit.holdsChecks()) == true }
        leaving.stop()
        try services.polkit.releaseHeldChecks()
        let cleaned = try await poll(timeout: .seconds(10)) {
            services.agent.log.contains("left before it was opened")
                && services.agent.log.contains("session /io/accessorysetup/session/1 ended")
                ? true : nil
        }
        #expect(cleaned == true, "\(services.agent.log)")
    }
}

/// A call's reply or its error, for calls made at once.
func outcome(_ body: () async throws(BusError) -> [DBusValue]) async -> Result<[DBusValue], BusError> {
    do {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}

@Suite("Agent log lines (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentLogTests {
    /// A right-to-left override makes a name read otherwise than it is, in a log line or in
    /// polkit's dialog: a name holding one is refused, and nothing of it reaches the log raw.
    @Test func aNameWithAFormatCharacterIsRefusedAndNeverLoggedRaw() async throws {
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [0]))
        let (client, _, id) = try await MockServicesAgentSessionEndTests.pickedWLED(services)
        let message = await expectBusError("io.accessorysetup.Error.InvalidRequest") {
            try await client.manager("RenameAccessory", [.string(id), .string("Desk \u{202E}gnp.exe"), .vardict([])])
        }
        #expect(message?.contains("name: must not contain control, format or bidirectional characters") == true)
        #expect(!services.agent.log.contains("\u{202E}"))
        await client.close()
    }
}

@Suite("Agent profiles of a user (private bus: mock NetworkManager, BlueZ, polkitd; setpriv)")
struct MockServicesAgentProfileOwnerTests {
    /// The test plug with a stored profile (joinOnce false).
    static let storedPlugProfile =
        plugProfile
        .replacingOccurrences(of: #""id": "org.example.plug""#, with: #""id": "org.example.storedplug""#)
        .replacingOccurrences(
            of: #""passphrase": { "source": "none" } }"#,
            with: #""passphrase": { "source": "none" }, "joinOnce": false }"#)

    /// The agent with the stored plug's profile installed.
    static func storedPlugServices() throws -> AgentServices {
        let services = try AgentServices(startAgent: false)
        try services.agent.installProfile(Self.storedPlugProfile, name: "org.example.storedplug")
        try services.agent.start()
        return services
    }

    /// Picks the stored plug (Acme-Setup-4F2A) in a session of `client`; its record's id.
    static func pickStoredPlug(_ client: AgentClient) async throws -> String {
        let picker = try await TestPicker(on: client.bus, behaviour: .choose(ssid: "Acme-Setup-4F2A"))
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let session = try await client.openSession("org.example.storedplug")
        _ = try await session.activate()
        try await session.showPicker([plugItem])
        let added = try #require(
            try await session.waitForDismiss().first { $0.member == "AccessoryAdded" }?.arguments.first)
        _ = picker
        return try #require(added["id"]?.string)
    }

    @Test func aStoredJoinReplacesItsOwnUsersProfileOfTheSSIDButNeverAnotherUsers() async throws {
        let services = try Self.storedPlugServices()
        // Another user's stored profile of the same hotspot, as the agent makes them.
        try services.networkManager.addTaggedProfile(
            id: "Accessory Acme-Setup-4F2A", ssid: "Acme-Setup-4F2A",
            userData: ["accessory-setup.managed": "1", "accessory-setup.join-once": "0"], permittedUser: "nobody")
        let client = try await services.client()
        let id = try await Self.pickStoredPlug(client)
        // Twice: the second stored profile replaces root's first, and only that one.
        for _ in 0..<2 {
            try await client.manager("JoinAccessory", [.string(id), .vardict([("restoreAfter", .uint32(0))])])
            try await client.manager("Leave", [.vardict([])])
        }
        let profiles = try services.networkManager.connectionSettings()
        let plugs = profiles.filter { $0.contains("'Accessory Acme-Setup-4F2A'") }
        #expect(plugs.count == 2, "root's one stored profile and nobody's: \(plugs)")
        #expect(plugs.filter { $0.contains("user:nobody:") }.count == 1, "\(plugs)")
        await client.close()
    }

    @Test func aUsersJoinMakesAProfileOnlyThatUserSeesInNetworkManager() async throws {
        let user = try systemUser("nobody")
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [user]))
        try services.polkit.allow([
            "io.accessorysetup.open-session", "io.accessorysetup.join", "io.accessorysetup.authorize",
        ])
        let picked = try await services.runClient(
            uid: user, ["pick", "ge.wled.softap", MockServicesAgentUserTests.wledItems])
        let added = try #require(picked.objects.first { $0["event"] as? String == "AccessoryAdded" }, "\(picked)")
        let id = try #require(((added["args"] as? [[String: Any]])?.first)?["id"] as? String)
        let joined = try await services.runClient(uid: user, ["join", id])
        #expect(joined.status == 0, "\(joined)")

        let settings = try services.networkManager.connectionSettings()
        let accessory = try #require(settings.first { $0.contains("'Accessory WLED-AP'") }, "\(settings)")
        #expect(accessory.contains("'permissions': <['user:nobody:']>"), "\(accessory)")
        let home = try #require(settings.first { $0.contains("'HomeNet'") })
        #expect(!home.contains("permissions"), "the person's own profile is left as it was")
    }

    /// The passphrase of a kiosk policy's root-only file is not the user's to read: the join's
    /// profile is not restricted to them, since NetworkManager gives a restricted profile's
    /// secrets to its user, a system profile's only to an administrator.
    @Test func aKioskPassphraseGoesIntoAProfileWhoseSecretsTheUserCannotRead() async throws {
        let user = try systemUser("nobody")
        let services = try AgentServices(startAgent: false)
        let file = services.agent.stateDirectory.deletingLastPathComponent().appendingPathComponent("label.pass")
        try Data("other-pass-1\n".utf8).write(to: file)
        #expect(chmod(file.path, 0o600) == 0)
        try services.agent.writeKioskPolicy(
            #"{"schemaVersion": 1, "policies": [{"profiles": ["org.example.labelled"], "users": [\#(user)], "#
                + #""choose": "firstMatch", "passphraseFile": "\#(file.path)"}]}"#)
        try services.agent.installProfile(
            """
            {"schemaVersion": 1, "id": "org.example.labelled", "vendor": "Example", "supports": ["wifi"],
             "hotspot": {"security": "wpa2Personal", "passphrase": {"source": "prompt", "hint": "On the label."},
                         "joinOnce": false},
             "handoff": "joinHotspot", "items": [{"name": "Labelled plug", "descriptor": {"ssid": "Other-Net"}}]}
            """, name: "org.example.labelled")
        try services.agent.start()
        try services.polkit.allow([
            "io.accessorysetup.open-session", "io.accessorysetup.join", "io.accessorysetup.authorize",
        ])
        let items = #"[{"name": "Labelled plug", "descriptor": {"ssid": "Other-Net"}}]"#
        // Joined in the picking session, which holds what the kiosk policy supplied; stored, so
        // that the profile is there to look at once the client is gone.
        let joined = try await services.runClient(uid: user, ["pick", "org.example.labelled", items, "--join"])
        #expect(joined.status == 0, "\(joined)\n\(services.agent.log)")
        #expect(services.networkManager.log.contains("other-pass-1"), "the file's passphrase was used")

        let settings = try services.networkManager.connectionSettings()
        let accessory = try #require(settings.first { $0.contains("'Accessory Other-Net'") }, "\(settings)")
        #expect(!accessory.contains("user:nobody"), "\(accessory)")
        #expect(!services.agent.log.contains("other-pass-1"))
    }
}
