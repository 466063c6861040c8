import AccessoryAgent
import AccessoryCore
import BusService
import DBusValues
import Foundation
import ServiceHarness
import Testing

/// Migration (`ShowPicker` with migration items) adopts a hotspot through a profile the agent
/// made for the same owner or the person's own (never another user's, never one tagged for
/// another client), and only once polkit allowed `authorize`; profiles are read
/// only once polkit allowed the session; a user's accessories are bounded.
@Suite("Agent migration, profile reads and record limits (private bus: mock NetworkManager, BlueZ, polkitd; setpriv)")
struct MockServicesAgentMigrationTests {
    static let migrationItem = DBusValue.vardict([
        ("name", .string("Acme plug")), ("descriptor", .vardict([("ssidPrefix", .string("Acme-Setup-"))])),
        ("hotspotSSID", .string("Acme-Setup-4F2A")),
    ])

    @Test func aProfileTaggedByAnotherClientIsNotAdopted() async throws {
        let services = try AgentServices()
        try services.networkManager.addTaggedProfile(
            id: "Accessory Acme-Setup-4F2A", ssid: "Acme-Setup-4F2A",
            userData: ["accessory-setup.managed": "1", "accessory-setup.join-once": "0"])
        let client = try await services.client()
        let session = try await client.openSession("org.example.plug")
        _ = try await session.activate()
        try await session.showPicker([Self.migrationItem])
        let signals = try await session.signals.wait(for: "MigrationComplete") {
            $0.contains { $0.member == "MigrationComplete" }
        }
        let adopted = signals.first { $0.member == "MigrationComplete" }?.arguments.first?.elements ?? []
        #expect(adopted.isEmpty, "adopted through a profile the agent did not make: \(adopted)")
        #expect(try services.storedRecords().isEmpty)
        await client.close()
    }

    @Test func thePersonsOwnProfileIsAdoptedAndStaysTheirs() async throws {
        let user = try systemUser("nobody")
        let services = try AgentServices()
        try services.polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.authorize"])
        let note = ["org.example.note": "made by the person"]
        try services.networkManager.addTaggedProfile(
            id: "Acme own", ssid: "Acme-Setup-0001", userData: note, permittedUser: "nobody")
        try services.networkManager.addTaggedProfile(id: "Acme shared", ssid: "Acme-Setup-0002", userData: note)
        try services.networkManager.addTaggedProfile(
            id: "Acme of daemon", ssid: "Acme-Setup-0003", userData: note, permittedUser: "daemon")
        let before = try services.networkManager.connectionSettings()
        let items = (1...4).map { number in
            #"{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-"}, "hotspotSSID": "Acme-Setup-000\#(number)"}"#
        }
        let run = try await services.runClient(
            uid: user, ["pick", "org.example.plug", "[\(items.joined(separator: ","))]"])
        #expect(run.status == 0, "\(run)")
        let records = try services.storedRecords()
        #expect(
            Set(records.compactMap(\.ssid?.description)) == ["Acme-Setup-0001", "Acme-Setup-0002"],
            "the person's own profile and a system one are adopted; another user's, or none, is not: \(records)")
        #expect(records.allSatisfy { $0.owner.uid == user && $0.connectionUUIDs.isEmpty && $0.state == .authorized })

        // The profiles stay the person's: untouched, and not forgotten with the record.
        for record in records {
            let removed = try await services.runClient(uid: user, ["remove", record.id.uuidString])
            #expect(removed.status == 0, "\(removed)")
        }
        #expect(try services.storedRecords().isEmpty)
        #expect(try services.networkManager.connectionSettings() == before)
    }

    @Test func migrationNeedsPolkitsAuthorize() async throws {
        let user = try systemUser("nobody")
        let services = try AgentServices()
        try services.polkit.allow(["io.accessorysetup.open-session"])
        let items =
            #"[{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-"}, "hotspotSSID": "Acme-Setup-4F2A"}]"#
        let run = try await services.runClient(uid: user, ["pick", "org.example.plug", items])
        let refusal = run.objects.first { $0["call"] as? String == "ShowPicker" }
        #expect(refusal?["error"] as? String == "io.accessorysetup.Error.NotAuthorized", "\(run)")
        #expect((refusal?["message"] as? String)?.contains("io.accessorysetup.authorize") == true, "\(run)")
        #expect(try services.storedRecords().isEmpty)
    }

    @Test func aProfileIsReadOnlyOncePolkitAllowedTheSession() async throws {
        let services = try AgentServices(startAgent: false)
        try services.agent.installProfile(
            #"{"schemaVersion": 1, "id": "org.example.broken"}"#, name: "org.example.broken")
        try services.agent.start()
        let run = try await services.runClient(uid: try systemUser("nobody"), ["pick", "org.example.broken", "[]"])
        let refusal = run.objects.first { $0["call"] as? String == "OpenSession" }
        #expect(refusal?["error"] as? String == "io.accessorysetup.Error.NotAuthorized", "\(run)")
        #expect(
            !services.agent.log.contains("org.example.broken.json is installed but refused"), "\(services.agent.log)")
    }

    @Test func aUserWithAsManyAccessoriesAsTheLimitCannotShowAPicker() async throws {
        let services = try AgentServices(startAgent: false)
        _ = try MockServicesAgentRecordTests.prefill(services, count: AgentLimits().recordsPerUser)
        try services.agent.start()
        let client = try await services.client()
        let session = try await client.openSession("org.example.plug")
        _ = try await session.activate()
        let refused = await expectBusError("io.accessorysetup.Error.LimitsExceeded") {
            try await session.showPicker([plugItem])
        }
        #expect(refused?.contains("at most \(AgentLimits().recordsPerUser) accessories") == true, "\(refused ?? "")")
        await client.close()
    }
}
