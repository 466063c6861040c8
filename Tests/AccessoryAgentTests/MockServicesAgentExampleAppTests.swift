import AccessoryCore
import Foundation
import ServiceHarness
import Testing

/// `examples/PickAccessory`, the example application in Swift over the AccessorySetupKit
/// library, built with the package and run against the built agent on a private bus with
/// python-dbusmock's NetworkManager, BlueZ and polkitd.
@Suite("Example app pick-accessory (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentExampleAppTests {
    @Test func picksAnAccessoryThroughTheLibraryAndJoinsItsHotspot() async throws {
        let app = try AgentProcess.builtProduct("pick-accessory").path
        let user = try systemUser("nobody")
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [user]))
        try services.polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.join"])

        let run = try await services.runProgram(app, ["ge.wled.softap", "--join"], uid: user)
        #expect(run.status == 0, "\(run)")
        let record = try #require(try services.storedRecords().first, "\(run)")
        #expect(record.owner.uid == user)
        let accessory = "WLED controller (WLED-AP), authorized, id \(record.id.uuidString.lowercased())"
        #expect(
            run.lines == [
                "activated: 0 accessories already authorized",
                "pickerDidPresent",
                "accessoryAdded: \(accessory)",
                "pickerDidDismiss",
                "added: \(accessory)",
                "joined: WLED-AP on wlan0",
            ], "\(run)")
        #expect(run.err.isEmpty, "\(run)")
        #expect(try services.networkManager.activeConnectionID(on: services.device) == "Accessory WLED-AP")
    }

    @Test func saysWhyNothingWasAddedAndExits1() async throws {
        let app = try AgentProcess.builtProduct("pick-accessory").path
        let services = try AgentServices()

        let restricted = try await services.runProgram(app, ["ge.wled.softap"])
        #expect(restricted.status == 1, "\(restricted)")
        #expect(restricted.err.contains("io.accessorysetup.Error.PickerRestricted"), "\(restricted)")
        #expect(!restricted.out.contains("added:"), "\(restricted)")

        let unknown = try await services.runProgram(app, ["org.example.nothing"])
        #expect(unknown.status == 1, "\(unknown)")
        #expect(unknown.err.contains("io.accessorysetup.Error.NoSuchProfile"), "\(unknown)")

        let usage = try await services.runProgram(app, [])
        #expect(usage.status == 64, "\(usage)")
        #expect(try services.storedRecords().isEmpty)
    }

    /// The example as a Flatpak application (`examples/PickAccessory/org.example.PickAccessory.json`)
    /// runs it: in a sandbox whose `/.flatpak-info` names it, over a profile whose `applications`
    /// name it. Its record is its application's; a profile that does not name it is, to it, not
    /// there, and the example says what a sandboxed application's profile needs.
    @Test func runsAsAFlatpakApplicationOverItsOwnProfile() async throws {
        let app = try AgentProcess.builtProduct("pick-accessory")
        let user = try systemUser("nobody")
        let id = "org.example.pickaccessory.wled"
        let services = try AgentServices(kiosk: kioskPolicy(profiles: [id, "ge.wled.softap"], users: [user]))
        try services.polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.join"])
        try await Sandbox.check(as: user, services: services)
        var profile = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: AgentPaths.packageRoot.appendingPathComponent("profiles/wled.json")))
                as? [String: Any])
        profile["id"] = id
        profile["applications"] = ["org.example.PickAccessory"]
        profile["items"] = (profile["items"] as? [[String: Any]])?.map { $0.filter { $0.key != "productImage" } }
        try services.agent.installProfile(
            String(decoding: try JSONSerialization.data(withJSONObject: profile), as: UTF8.self), name: id)

        let sandbox = try Sandbox(application: "org.example.PickAccessory")
        let binds = [app.deletingLastPathComponent().path, try Self.swiftRuntimeDirectory(of: app)]
        let run = try await services.runProgram(
            "/bin/sh", sandbox.command(bus: services.bus, app.path, [id, "--join"], binding: binds), uid: user)
        #expect(run.status == 0, "\(run)")
        #expect(run.lines.last == "joined: WLED-AP on wlan0", "\(run)")
        let record = try #require(try services.storedRecords().first, "\(run)")
        #expect(record.owner == AccessoryOwner(uid: user, profileID: id, application: "org.example.PickAccessory"))

        let foreign = try await services.runProgram(
            "/bin/sh", sandbox.command(bus: services.bus, app.path, ["ge.wled.softap"], binding: binds), uid: user)
        #expect(foreign.status == 1, "\(foreign)")
        #expect(foreign.err.contains("io.accessorysetup.Error.NoSuchProfile"), "\(foreign)")
        #expect(foreign.err.contains("a profile must name this application in its \"applications\""), "\(foreign)")
        #expect(try services.storedRecords().count == 1)
    }

    /// The directory of the Swift runtime `binary` links (`ldd` names it), for the sandbox.
    static func swiftRuntimeDirectory(of binary: URL) throws -> String {
        let ldd = try ChildProcess("/usr/bin/ldd", [binary.path], standardOutput: .pipe)
        let output = String(decoding: ldd.readOutput().output, as: UTF8.self)
        ldd.wait()
        let line = try #require(
            output.split(separator: "\n").first { $0.contains("libswiftCore.so => ") }, "ldd \(binary.path): \(output)")
        let path = try #require(line.split(separator: " ").first { $0.hasPrefix("/") })
        return URL(fileURLWithPath: String(path)).deletingLastPathComponent().path
    }
}
