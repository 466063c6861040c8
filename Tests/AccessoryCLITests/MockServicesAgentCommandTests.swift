import AccessoryCLI
import AccessoryCore
import Foundation
import ServiceHarness
import Testing

/// `accessoryctl`'s commands through the agent, run as processes (as root, and as another user
/// through `setpriv`), against the built agent on a private system bus with python-dbusmock's
/// NetworkManager (HomeNet and WLED-AP in range) and polkitd (denying everything not allowed).
@Suite(.serialized) final class MockServicesAgentCommandTests {
    let bus: PrivateSystemBus
    let networkManager: NetworkManagerMock
    let polkit: PolkitMock
    let agent: AgentProcess
    let device: String
    static let otherUser: UInt32 = 65534

    init() throws {
        bus = try PrivateSystemBus()
        networkManager = try NetworkManagerMock(on: bus)
        polkit = try PolkitMock(on: bus)
        device = try networkManager.addWiFiDeviceOnHomeNet()
        try networkManager.addAccessPoint(
            device, name: "wled", ssid: "WLED-AP", bssid: "02:00:00:00:00:20", strength: 60, security: .wpa2)
        agent = try AgentProcess(bus: bus)
        try agent.installShippedProfile("wled.json")
        try agent.start()
    }

    deinit {
        agent.stop()
        polkit.stop()
        networkManager.stop()
        bus.stop()
    }

    /// Runs accessoryctl against the agent's bus, as root or as `uid`.
    func accessoryctl(_ arguments: [String], uid: UInt32? = nil) async throws -> Run {
        try await accessoryctlProcess(arguments, environment: bus.environment, deadline: .seconds(60), uid: uid)
    }

    func pickWLED() async throws -> String {
        let run = try await accessoryctl(["pick", "ge.wled.softap", "--select", "WLED-AP", "--timeout", "20"])
        #expect(run.code == .success, "\(run.err)\n\(agent.log)")
        let id = try #require(
            run.out.split(separator: "\n").first { $0.hasPrefix("accessoryAdded") }?.split(separator: " ").last)
        return String(id)
    }

    @Test func pickPrintsTheEventsInApplesOrderAndTheRecordCommandsSeeTheAccessory() async throws {
        let monitor = try RunningAccessoryctl(["monitor", "--json", "--count", "5"], environment: bus.environment)
        try waitUntilSync("monitor subscribed") { agent.log.contains("subscribed") }

        let run = try await accessoryctl(["pick", "ge.wled.softap", "--select", "WLED-AP", "--timeout", "20"])
        #expect(run.code == .success, "\(run.err)")
        let events = run.out.split(separator: "\n").map { String($0.split(separator: " ").first ?? "") }
        #expect(events == ["activated", "pickerDidPresent", "accessoryAdded", "pickerDidDismiss"])
        let id = try #require(
            run.out.split(separator: "\n").first { $0.hasPrefix("accessoryAdded") }?.split(separator: " ").last)
        // The pick's trace for the benchmarks: the entry sent, the choice, polkit's answer.
        let trace = agent.log.split(separator: "\n").filter { $0.hasPrefix("<7>discovery trace: session ") }
            .map { $0.split(separator: ": ", maxSplits: 2).last.map(String.init) ?? "" }
        #expect(trace.first?.hasSuffix(" entries sent to the picker (WLED-AP)") == true, "\(trace)")
        #expect(
            trace.filter { !$0.contains("entries sent") }.map { $0.replacing(/[0-9]+$/, with: "N") } == [
                "the picker chose entry N", "polkit answered the pick",
            ], "\(trace)")

        let monitored = await monitor.finish()
        #expect(monitored.code == .success, "\(monitored.err)")
        let lines = monitored.out.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(
            lines.map { $0["event"] as? String } == [
                "activated", "pickerDidPresent", "accessoryAdded", "pickerDidDismiss", "invalidated",
            ])

        let list = try await accessoryctl(["list", "--json"])
        #expect(list.out.contains("\"id\" : \"\(id)\""))
        let shown = try await accessoryctl(["show", String(id)])
        #expect(shown.out.contains("displayName: WLED controller (WLED-AP)"))
        let renamed = try await accessoryctl(["rename", String(id), "Desk lamp", "--json"])
        #expect(renamed.code == .success)
        #expect(renamed.out.contains("\"displayName\" : \"Desk lamp\""))

        let joined = try await accessoryctl(["join", String(id)])
        #expect(joined.code == .success, "\(joined.err)")
        #expect(joined.out.hasPrefix("Joined WLED-AP on wlan0 through the agent"))
        #expect(
            !joined.out.contains("wled1234") && !agent.log.contains("wled1234"),
            "the profile's passphrase is never shown")
        let left = try await accessoryctl(["leave"])
        #expect(left.out == "Left WLED-AP on wlan0 through the agent; back on 'HomeNet'.\n", "\(left.err)")

        #expect(try await accessoryctl(["remove", String(id)]).code == .success)
        #expect(try await accessoryctl(["list", "--json"]).out == "[\n\n]\n")
    }

    @Test func polkitRefusingTheAuthorizationExits77NamingTheActionAndRecordsNothing() async throws {
        try polkit.allow(["io.accessorysetup.open-session"])
        let run = try await accessoryctl(
            ["pick", "ge.wled.softap", "--select", "WLED-AP", "--timeout", "20"], uid: Self.otherUser)
        #expect(run.code == .notAuthorized, "\(run.out)\n\(run.err)")
        #expect(run.err.contains("io.accessorysetup.authorize"))
        #expect(!run.out.contains("accessoryAdded"))
        #expect(try AccessoryStore(url: agent.storeURL).load().isEmpty, "nothing is recorded")

        try polkit.allow([])
        let refused = try await accessoryctl(["pick", "ge.wled.softap", "--select", "WLED-AP"], uid: Self.otherUser)
        #expect(refused.code == .notAuthorized)
        #expect(refused.err.contains("io.accessorysetup.open-session"))
    }

    @Test func anotherUserSeesAndTouchesNoneOfRootsAccessories() async throws {
        let id = try await pickWLED()
        let list = try await accessoryctl(["list", "--json"], uid: Self.otherUser)
        #expect(list.code == .success, "\(list.err)")
        #expect(!list.out.contains(id))
        for command in [["show", id], ["join", id], ["remove", id], ["rename", id, "Mine"]] {
            let run = try await accessoryctl(command, uid: Self.otherUser)
            #expect(run.code == .failure, "\(command): \(run.err)")
            #expect(run.err.contains("you have no accessory with the id"), "\(command): \(run.err)")
        }
        #expect(try AccessoryStore(url: agent.storeURL).load().map(\.displayName) == ["WLED controller (WLED-AP)"])
        let others = try await accessoryctl(["list", "--user", "0"], uid: Self.otherUser)
        #expect(others.code == .notAuthorized)
        #expect(others.err.contains("io.accessorysetup.manage-others"))
    }

    @Test func withoutTheAgentTheAgentsCommandsSaySoAndLeaveFallsBackToTheDirectWay() async throws {
        _ = try agent.terminate()
        let run = try await accessoryctl(["list"])
        #expect(run.code == .failure)
        #expect(run.err.contains("the agent (io.accessorysetup) is not running"))
        let leave = try await accessoryctl(["leave"])
        #expect(leave.err.contains("the agent is not running; leaving directly."))
        #expect(leave.err.contains("is not connected to an accessory hotspot"))
    }
}

/// Polls `condition` for up to 10 s.
func waitUntilSync(_ what: String, _ condition: () throws -> Bool) throws {
    let deadline = Date() + 10
    while Date() < deadline {
        if try condition() { return }
        usleep(50_000)
    }
    Issue.record("timed out waiting until \(what)")
}
