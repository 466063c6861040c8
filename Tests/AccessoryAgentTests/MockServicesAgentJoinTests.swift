import BusService
import DBusValues
import Foundation
import ServiceHarness
import Testing

/// Joining an authorized accessory's hotspot through the built agent, on a private bus with
/// python-dbusmock's NetworkManager (the project's template: `wlan0` on `HomeNet`, `WLED-AP`
/// in range), BlueZ and polkitd; the kiosk policy picks the accessory first.
@Suite("Agent joins (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentJoinTests {
    let services: AgentServices

    init() throws {
        services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [0]))
    }

    /// Picks WLED-AP on a new session of `client`; returns the session and the accessory's id.
    func pickWLED(_ client: AgentClient) async throws -> (ClientSession, String) {
        let session = try await client.openSession("ge.wled.softap")
        _ = try await session.activate()
        try await session.showPicker([wledItem])
        let signals = try await session.waitForDismiss()
        let added = try #require(signals.first { $0.member == "AccessoryAdded" }?.arguments.first)
        return (session, try #require(added["id"]?.string))
    }

    var active: String? { get throws { try services.networkManager.activeConnectionID(on: services.device) } }

    /// Waits until the device is back on HomeNet with only that profile left.
    func expectBackHome(_ what: String) async throws {
        let home = try await poll(timeout: .seconds(30), every: .milliseconds(50)) {
            try active == "HomeNet" && services.networkManager.connectionPaths().count == 1 ? true : nil
        }
        if home != nil { return }
        Issue.record("not back on HomeNet \(what): active \(try active ?? "none"), \(services.agent.log)")
    }

    @Test func joinAccessoryThenLeaveRestoresTheHomeNetwork() async throws {
        let client = try await services.client()
        let (_, id) = try await pickWLED(client)

        let reply = try #require(try await client.manager("JoinAccessory", [.string(id), .vardict([])]).first)
        #expect(reply["device"]?.string == "wlan0")
        #expect(reply["ssid"]?.string == "WLED-AP")
        #expect(reply["connection"]?.string == "Accessory WLED-AP")
        #expect(reply["previousConnection"]?.string == "HomeNet")
        #expect(reply["restoreDeadline"]?.int != nil)
        #expect(try active == "Accessory WLED-AP")
        // The profile's fixed passphrase was used, and never logged.
        #expect(services.networkManager.log.contains("wpa-psk"))
        #expect(!services.agent.log.contains("wled1234"))
        // The join's trace, for the benchmarks: every step from the call's arrival to the
        // reply, in order, each with its time.
        let trace = try #require(services.agent.log.split(separator: "\n").first { $0.contains("join trace: ") })
        let steps = trace.matches(of: /, ([a-z ]+) [0-9]+\.[0-9] ms|; ([a-z ]+) [0-9]+\.[0-9] ms/).map {
            String($0.output.1 ?? $0.output.2 ?? "")
        }
        #expect(
            steps == [
                "caller and record", "polkit", "adopted joins", "device claimed", "configuration", "profile checked",
                "access point looked up", "checkpoint taken", "request answered", "up", "held", "total",
            ], "\(trace)")
        #expect(trace.hasPrefix("<7>join trace: arrived ") && trace.hasSuffix("; joined"), "\(trace)")

        let left = try #require(try await client.manager("Leave", [.vardict([])]).first)
        #expect(left["restored"]?.string == "HomeNet")
        #expect(left["deleted"]?.bool == true)
        #expect(left["ssid"]?.string == "WLED-AP")
        try await expectBackHome("after Leave")
        await expectBusError("io.accessorysetup.Error.NotJoined") { try await client.manager("Leave", [.vardict([])]) }
        await expectBusError("io.accessorysetup.Error.NoSuchAccessory") {
            try await client.manager("JoinAccessory", [.string(UUID().uuidString), .vardict([])])
        }
        await client.close()
    }

    /// The previous connection a join's profile names is a tag its user may edit: leaving brings
    /// back only a network that user may use, never a profile of another user's.
    @Test func leavingBringsBackOnlyANetworkTheJoinsUserMayUse() async throws {
        let user = try systemUser("nobody")
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [user]))
        try services.polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.join"])
        let items = #"[{"name": "WLED controller (WLED-AP)", "descriptor": {"ssid": "WLED-AP"}}]"#
        let pick = try await services.runClient(uid: user, ["pick", "ge.wled.softap", items])
        let id = try #require(pick.added?["id"] as? String, "\(pick)")
        let join = try await services.runClient(uid: user, ["join", id])
        #expect(join.status == 0, "\(join)")
        let others = try services.networkManager.addTaggedProfile(
            id: "Daemon network", ssid: "HomeNet", userData: [:], permittedUser: "daemon")
        try services.networkManager.setUserData(
            ofProfile: "Accessory WLED-AP", "accessory-setup.previous-connection", to: others)

        let left = try await services.runClient(uid: user, ["leave"])
        #expect(left.status == 0, "\(left)")
        let reply = (left.result(of: "Leave")?["reply"] as? [[String: Any]])?.first
        #expect(reply?["restored"] as? String != "Daemon network", "\(left)")
        #expect(try services.networkManager.activeConnectionID(on: services.device) != "Daemon network")
    }

    /// NetworkManager keeps a join that is not join-once when the agent stops (a package
    /// upgrade restarts it): the next agent holds it again for the record's owner, who leaves it
    /// and is back home.
    @Test func aJoinLeftUpByARestartIsHeldAgainAndLeftByItsOwner() async throws {
        let services = try MockServicesAgentProfileOwnerTests.storedPlugServices()
        let client = try await services.client()
        let id = try await MockServicesAgentProfileOwnerTests.pickStoredPlug(client)
        try await client.manager("JoinAccessory", [.string(id), .vardict([])])
        await client.close()
        try services.agent.terminate()
        let device = services.device
        #expect(try services.networkManager.activeConnectionID(on: device) == "Accessory Acme-Setup-4F2A")

        try services.agent.start()
        let again = try await services.client()
        // Joining that record again (a kiosk batch resumed after a crash) hands the join back.
        let joinedAgain = try #require(try await again.manager("JoinAccessory", [.string(id), .vardict([])]).first)
        #expect(joinedAgain["alreadyJoined"]?.bool == true, "\(joinedAgain)")
        #expect(joinedAgain["device"]?.string == "wlan0" && joinedAgain["ssid"]?.string == "Acme-Setup-4F2A")
        #expect(services.agent.log.lowercased().contains("is already joined for record \(id); handed back"))
        let left = try #require(try await again.manager("Leave", [.vardict([])]).first)
        #expect(left["restored"]?.string == "HomeNet")
        #expect(left["ssid"]?.string == "Acme-Setup-4F2A")
        #expect(try services.networkManager.activeConnectionID(on: device) == "HomeNet")
        #expect(services.agent.log.contains("is held again for uid 0"), "\(services.agent.log)")
        await expectBusError("io.accessorysetup.Error.NotJoined") { try await again.manager("Leave", [.vardict([])]) }
        await again.close()
    }

    /// Stopped for a package upgrade (the prerm's `upgrading` in the unit's runtime directory),
    /// the agent lets its join-once join stand, and the next agent holds it for the owner, who
    /// leaves it and is back home; stopped otherwise, it ends the join.
    @Test func aJoinOnceJoinOutlastsAnUpgradesStopAndIsHeldByTheNextAgent() async throws {
        let runtime = try ScratchDirectory("accessory-setup-runtime")
        services.agent.environment["RUNTIME_DIRECTORY"] = runtime.url.path
        try services.agent.terminate()
        try services.agent.start()
        let client = try await services.client()
        let (_, id) = try await pickWLED(client)
        _ = try await client.manager("JoinAccessory", [.string(id), .vardict([])])
        #expect(try active == "Accessory WLED-AP")
        try Data().write(to: runtime.url.appendingPathComponent("upgrading"))
        await client.close()
        try services.agent.terminate()
        #expect(try active == "Accessory WLED-AP", "\(services.agent.log)")
        #expect(services.agent.log.contains("stopping for an upgrade: WLED-AP on wlan0 stays joined"))

        try FileManager.default.removeItem(at: runtime.url.appendingPathComponent("upgrading"))
        try services.agent.start()
        let again = try await services.client()
        let left = try #require(try await again.manager("Leave", [.vardict([])]).first)
        #expect(left["restored"]?.string == "HomeNet" && left["ssid"]?.string == "WLED-AP", "\(left)")
        try await expectBackHome("after leaving the join the next agent held")
        _ = try await again.manager("JoinAccessory", [.string(id), .vardict([])])
        #expect(try active == "Accessory WLED-AP")
        await again.close()
        try services.agent.terminate()
        try await expectBackHome("after a stop that was no upgrade")
        #expect(services.agent.log.contains("ended because the agent is stopping"), "\(services.agent.log)")
    }

    /// Removing a record ends the join held for it, the home network back: nothing would leave
    /// it later, and the agent stopping does not try to end a join of a record that is gone.
    @Test func removingAJoinedRecordEndsItsJoin() async throws {
        let client = try await services.client()
        let (_, id) = try await pickWLED(client)
        _ = try await client.manager("JoinAccessory", [.string(id), .vardict([])])
        #expect(try active == "Accessory WLED-AP")
        _ = try await client.manager("RemoveAccessory", [.string(id)])
        try await expectBackHome("after the record was removed")
        #expect(services.agent.log.contains("ended because its record was removed"), "\(services.agent.log)")
        await expectBusError("io.accessorysetup.Error.NotJoined") { try await client.manager("Leave", [.vardict([])]) }
        await client.close()
        try services.agent.terminate()
        #expect(!services.agent.log.contains("could not be ended"), "\(services.agent.log)")
    }

    @Test func aSessionsJoinEndsWithLeaveAndWithTheSession() async throws {
        let client = try await services.client()
        let (session, id) = try await pickWLED(client)

        let joined = try #require(try await session.call("JoinAccessoryHotspot", [.string(id), .vardict([])]).first)
        #expect(joined["ssid"]?.string == "WLED-AP")
        #expect(try active == "Accessory WLED-AP")
        let left = try #require(try await session.call("Leave").first)
        #expect(left["restored"]?.string == "HomeNet")
        try await expectBackHome("after Session1.Leave")

        try await session.call("JoinAccessoryHotspot", [.string(id), .vardict([])])
        #expect(try active == "Accessory WLED-AP")
        try await session.call("Invalidate")
        try await expectBackHome("after the session was invalidated")
        #expect(services.agent.log.contains("ended because its session ended"))
        await client.close()
    }

    @Test func aJoinOnceConnectionEndsWhenItsClientOrItsSessionsClientLeavesTheBus() async throws {
        // A Manager1 join outlives the command that made it ('accessoryctl join ID' exits at
        // once) unless the caller binds it to itself.
        let maker = try await services.client()
        let (_, id) = try await pickWLED(maker)
        try await maker.manager("JoinAccessory", [.string(id), .vardict([])])
        await maker.close()
        try await Task.sleep(for: .milliseconds(500))
        #expect(try active == "Accessory WLED-AP", "a join without bindToCaller stays after its caller left")
        let leaver = try await services.client()
        try await leaver.manager("Leave", [.vardict([])])
        try await expectBackHome("after another connection of the same user left it")
        await leaver.close()

        let client = try await services.client()
        try await client.manager("JoinAccessory", [.string(id), .vardict([("bindToCaller", .boolean(true))])])
        #expect(try active == "Accessory WLED-AP")

        await client.close()
        try await expectBackHome("after the client left the bus")
        #expect(services.agent.log.contains("ended because its client left the bus"))

        // A session's join ends when the session's client leaves too.
        let other = try await services.client()
        let session = try await other.openSession("ge.wled.softap")
        #expect(try await session.activate().compactMap { $0["id"]?.string } == [id])
        try await session.call("JoinAccessoryHotspot", [.string(id), .vardict([])])
        #expect(try active == "Accessory WLED-AP")
        await other.close()
        try await expectBackHome("after the session's client left the bus")
        #expect(services.agent.log.contains("ended because its session ended"))
        #expect(services.agent.isRunning)
    }

    /// The dispatcher hook reports each up and down of the agent's connections to the owner
    /// (`AccessoryChanged` with `connection`, and `Event` to subscribers); a down is recognised
    /// after its join-once profile is gone, and one the agent still holds brings the home
    /// network back at once, with NetworkManager's reason.
    @Test func theDispatchersReportsOfTheAgentsConnectionsReachTheOwner() async throws {
        let client = try await services.client()
        let (session, id) = try await pickWLED(client)
        let monitor = try await services.client()
        let events = try await monitor.subscribe()
        let joined = try #require(try await client.manager("JoinAccessory", [.string(id), .vardict([])]).first)
        let uuid = try #require(joined["connectionUUID"]?.string)
        try await client.manager(
            "ReportConnection", [.string("up"), .vardict([("uuid", .string(uuid)), ("interface", .string("wlan0"))])])
        #expect(services.agent.log.contains("dispatcher: accessory connection 'Accessory WLED-AP' up (record"))
        func connections(_ signals: [BusSignal], accessory index: Int) -> [DBusValue] {
            signals.filter { $0.member == "AccessoryChanged" || $0.member == "Event" }
                .compactMap { $0.arguments[index]["connection"] }
        }
        let up = try await session.signals.wait(for: "AccessoryChanged up") {
            !connections($0, accessory: 0).isEmpty
        }
        #expect(connections(up, accessory: 0).first?["state"]?.string == "up")
        #expect(connections(up, accessory: 0).first?["device"]?.string == "wlan0")
        let upEvent = try await events.wait(for: "Event up") { !connections($0, accessory: 2).isEmpty }
        #expect(upEvent.first?.arguments.first?.string == "/io/accessorysetup")
        #expect(upEvent.first?.arguments[1].uint32 == 32, "accessoryChanged")
        #expect(upEvent.first?.arguments[2]["id"]?.string == id)

        try await client.manager("Leave", [.vardict([])])
        try await expectBackHome("after Leave")
        try await client.manager("ReportConnection", [.string("down"), .vardict([("uuid", .string(uuid))])])
        #expect(
            services.agent.log.contains("dispatcher: accessory connection 'Accessory WLED-AP' down (record"),
            "a down after the join-once profile was deleted is still the agent's: \(services.agent.log)")

        // A down the agent did not cause: the accessory went away while joined, and
        // NetworkManager said why (NM_DEVICE_STATE_REASON_SSID_NOT_FOUND).
        let again = try #require(try await client.manager("JoinAccessory", [.string(id), .vardict([])]).first)
        let second = try #require(again["connectionUUID"]?.string)
        try services.networkManager.dropActiveConnection(on: services.device, reason: 53)
        try await client.manager("ReportConnection", [.string("down"), .vardict([("uuid", .string(second))])])
        try await expectBackHome("after the accessory connection went down unexpectedly")
        #expect(
            services.agent.log.contains("ended because the accessory connection went down: the network was not found"),
            "\(services.agent.log)")
        let down = try await events.wait(for: "Event down with its reason") { signals in
            connections(signals, accessory: 2).contains { $0["reason"]?.string == "the network was not found" }
        }
        let report = connections(down, accessory: 2).last
        #expect(report?["state"]?.string == "down")
        #expect(report?["device"]?.string == "wlan0")
        await monitor.close()
        await client.close()
    }
}
