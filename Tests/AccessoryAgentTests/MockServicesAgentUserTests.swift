import BusService
import Foundation
import GLibRuntime
import ServiceHarness
import Testing

/// The uid of an account every Debian system has; the bus daemon refuses uids it cannot look up.
func systemUser(_ name: String) throws -> UInt32 {
    guard let entry = getpwnam(name) else { throw HarnessError("no user '\(name)' on this system") }
    return entry.pointee.pw_uid
}

/// Clients running as other users (through `setpriv`, as GIO clients) against the built agent on
/// a private bus with python-dbusmock's NetworkManager, BlueZ and polkitd: polkit decides for
/// them, root's records and methods stay out of their reach, and each sees only its own.
@Suite("Agent and other users (private bus: mock NetworkManager, BlueZ, polkitd; setpriv)")
struct MockServicesAgentUserTests {
    static let wledItems = #"[{"name": "WLED controller (WLED-AP)", "descriptor": {"ssid": "WLED-AP"}}]"#

    @Test func aSecondUserCannotListShowJoinOrRemoveTheFirstOnesAccessories() async throws {
        let first = try systemUser("nobody"), second = try systemUser("daemon")
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [first]))
        try services.polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.join"])

        let picked = try await services.runClient(uid: first, ["pick", "ge.wled.softap", Self.wledItems])
        #expect(picked.status == 0, "\(picked)")
        let added = try #require(picked.objects.first { $0["event"] as? String == "AccessoryAdded" }, "\(picked)")
        let accessory = try #require((added["args"] as? [[String: Any]])?.first)
        let id = try #require(accessory["id"] as? String)
        #expect(accessory["user"] as? Int == Int(first))

        var refused: [String: String] = [:]
        for command in [
            ["list", "\(first)"], ["show", id], ["join", id], ["remove", id], ["rename", id, "Mine now"],
        ] {
            let run = try await services.runClient(uid: second, command)
            #expect(run.status == 1, "\(command): \(run)")
            refused[command[0]] = run.objects.first?["error"] as? String
        }
        #expect(
            refused == [
                "list": "io.accessorysetup.Error.NotAuthorized",
                "show": "io.accessorysetup.Error.NoSuchAccessory", "join": "io.accessorysetup.Error.NoSuchAccessory",
                "remove": "io.accessorysetup.Error.NoSuchAccessory",
                "rename": "io.accessorysetup.Error.NoSuchAccessory",
            ])
        let own = try await services.runClient(uid: second, ["list"])
        #expect(own.status == 0 && (own.objects.first?["reply"] as? [[Any]])?.first?.isEmpty == true, "\(own)")

        // The first user still has it, unchanged, and nothing was joined for anyone.
        let mine = try await services.runClient(uid: first, ["list"])
        let listed = (mine.objects.first?["reply"] as? [[[String: Any]]])?.first ?? []
        #expect(listed.compactMap { $0["id"] as? String } == [id], "\(mine)")
        #expect(listed.first?["displayName"] as? String == "WLED controller (WLED-AP)")
        #expect(try services.storedRecords().map(\.displayName) == ["WLED controller (WLED-AP)"])
        #expect(try services.networkManager.activeConnectionID(on: services.device) == "HomeNet")

        // An administrator (polkit's manage-others) looks it up.
        try services.polkit.allow(["io.accessorysetup.manage-others"])
        let shown = try await services.runClient(uid: second, ["show", id])
        #expect(shown.status == 0, "\(shown)")
    }

    @Test func polkitRefusingAuthorizeEndsThePickWithUserRestrictedAndRecordsNothing() async throws {
        let user = try systemUser("nobody")
        let services = try AgentServices()
        try services.polkit.allow(["io.accessorysetup.open-session"])
        let pick = ["pick", "ge.wled.softap", Self.wledItems, "--picker", "WLED-AP"]
        let refused = try await services.runClient(uid: user, pick)
        #expect(refused.status == 0, "\(refused)")
        let events = refused.objects.compactMap { $0["event"] as? String }
        #expect(events == ["Activated", "PickerDidPresent", "PickerDidDismiss"], "\(refused)")
        let dismissed = refused.objects.last { $0["event"] as? String == "PickerDidDismiss" }
        let error = (dismissed?["args"] as? [[String: Any]])?.first
        #expect(error?["name"] as? String == "io.accessorysetup.Error.UserRestricted")
        #expect(error?["code"] as? Int == 750)
        #expect((error?["message"] as? String)?.contains("io.accessorysetup.authorize") == true)
        // The person did pick: the picker agent answered RequestChoice, and is told the pick was refused.
        #expect(refused.objects.contains { $0["picker"] as? String == "RequestChoice" })
        let cancel = refused.objects.first { $0["picker"] as? String == "Cancel" }
        #expect(
            ((cancel?["args"] as? [Any])?.last as? [String: Any])?["name"] as? String
                == "io.accessorysetup.Error.UserRestricted", "\(refused)")
        #expect(try services.storedRecords().isEmpty)
        let files = services.stateFiles()
        #expect(files.allSatisfy { $0 == "accessories.json" }, "no other file: \(files)")
        #expect(services.agent.log.contains("polkit: io.accessorysetup.authorize refused"))

        // Allowed, the same pick is recorded.
        try services.polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.authorize"])
        let allowed = try await services.runClient(uid: user, pick)
        #expect(
            allowed.objects.compactMap { $0["event"] as? String }
                == ["Activated", "PickerDidPresent", "AccessoryAdded", "PickerDidDismiss"], "\(allowed)")
        #expect(try services.storedRecords().map(\.owner.uid) == [user])
    }

    @Test func polkitRefusingOpenSessionRefusesTheSession() async throws {
        let services = try AgentServices()
        let run = try await services.runClient(
            uid: try systemUser("nobody"), ["pick", "ge.wled.softap", Self.wledItems])
        #expect(run.status == 1)
        let refusal = run.objects.first { $0["call"] as? String == "OpenSession" }
        #expect(refusal?["error"] as? String == "io.accessorysetup.Error.NotAuthorized", "\(run)")
        #expect((refusal?["message"] as? String)?.contains("io.accessorysetup.open-session") == true)
    }

    @Test func reportConnectionIsRefusedForAnyoneButRoot() async throws {
        let services = try AgentServices()
        let connection = UUID().uuidString.lowercased()
        let run = try await services.runClient(uid: try systemUser("daemon"), ["report", "down", connection])
        #expect(run.status == 1)
        #expect(run.objects.first?["error"] as? String == "io.accessorysetup.Error.NotAuthorized", "\(run)")
        // polkit was not asked, and no session would help: the message says who may call it.
        let refusal = run.objects.first?["message"] as? String ?? ""
        #expect(refusal.contains("root") && !refusal.contains("polkit"), "\(refusal)")

        // Root may report; a connection the agent did not make is ignored, a bad action refused.
        let root = try await services.client()
        try await root.manager("ReportConnection", [.string("down"), .vardict([("uuid", .string(connection))])])
        let message = await expectBusError("io.accessorysetup.Error.InvalidArguments") {
            try await root.manager("ReportConnection", [.string("explode"), .vardict([("uuid", .string(connection))])])
        }
        #expect(message?.contains("action") == true, "\(message ?? "")")
        #expect(try services.networkManager.activeConnectionID(on: services.device) == "HomeNet")
        await root.close()
    }
}
