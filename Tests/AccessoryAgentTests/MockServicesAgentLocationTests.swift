import AccessoryCore
import BusService
import DBusValues
import Foundation
import ServiceHarness
import Testing

/// After `ProvisionAccessory`, the agent finds the accessory on the home network through the
/// real avahi-daemon (on the private bus, in a network namespace of its own), by the service
/// type the profile declares and the address the device reported, and tells the owner where it
/// lives; a service elsewhere that claims its name is logged, not adopted.
@Suite("Agent locates provisioned accessories (private bus: mock NetworkManager, BlueZ, polkitd; avahi-daemon)")
struct MockServicesAgentLocationTests {
    static let profileID = MockServicesAgentProvisioningTests.profileID

    /// The plug's provisioning profile, declaring the web server it publishes once home.
    static func profile(address: String) -> String {
        """
        {"schemaVersion": 1, "id": "\(profileID)", "vendor": "Example", "supports": ["wifi"],
         "hotspot": {"security": "open", "passphrase": {"source": "none"}}, "handoff": "joinHotspot",
         "provisioning": {"protocol": "espIDF", "transport": "softAP", "address": "\(address)",
                          "security": 1},
         "homeNetwork": {"services": [{"type": "_http._tcp"}]},
         "items": [{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-"}}]}
        """
    }

    /// The location an `AccessoryChanged` of `session` carried once it says `address`.
    static func announcedLocation(_ session: ClientSession, address: String) async throws -> DBusValue? {
        let changed = try await session.signals.wait(for: "AccessoryChanged with the location at \(address)") {
            $0.contains { Self.location(in: $0)?["addresses"]?.elements.first?.string == address }
        }
        return changed.compactMap(Self.location).last
    }

    static func location(in signal: BusSignal) -> DBusValue? {
        signal.member == "AccessoryChanged" ? signal.arguments.first?["location"] : nil
    }

    @Test func theProvisionedPlugIsFoundByItsReportedAddressAndNeverAtAnImpostors() async throws {
        let device = try MockServicesAgentProvisioningTests.device(
            security: 1, proofOfPossession: MockServicesAgentProvisioningTests.pop)
        let services = try AgentServices(
            kiosk: kioskPolicy(profiles: [Self.profileID], users: [0]), startAgent: false, hotspots: device.hotspots)
        try services.agent.installProfile(Self.profile(address: device.address), name: Self.profileID)
        try services.networkManager.giveIPv4(to: "Acme-Setup-4F2A")
        try services.agent.start()
        let avahi = try AvahiResponder(on: services.bus)
        defer { avahi.stop() }
        // Another web server of the home network, and the plug at the address it will report.
        try avahi.publish("printer", type: "_http._tcp", port: 631, hostname: "printer.local", address: "192.168.1.43")
        try avahi.publish(
            "acme-plug-4f2a", type: "_http._tcp", port: 80, hostname: "acme-plug.local", address: "192.168.1.42",
            txt: ["path=/"])

        let client = try await services.client()
        let (session, id) = try await MockServicesAgentProvisioningTests.pickAndJoin(client)
        try await session.call(
            "ProvisionAccessory",
            [
                .string(id),
                .vardict([
                    ("ssid", .string("HomeNet")), ("passphrase", .string("home-passphrase")),
                    ("proofOfPossession", .string(MockServicesAgentProvisioningTests.pop)),
                ]),
            ])

        let location = try #require(
            try await Self.announcedLocation(session, address: "192.168.1.42"), "\(services.agent.log)\n\(avahi.log)")
        #expect(location["service"]?.string == "_http._tcp")
        #expect(location["instance"]?.string == "acme-plug-4f2a")
        #expect(location["hostname"]?.string == "acme-plug.local")
        #expect(location["port"]?.int == 80)
        #expect(services.agent.log.contains("by reportedAddress"), "\(services.agent.log)")
        let shown = try #require(try await client.manager("GetAccessory", [.string(id)]).first)
        #expect(shown["location"]?["hostname"]?.string == "acme-plug.local")
        let stored = try #require(try services.storedRecords().first { $0.id.uuidString.lowercased() == id })
        #expect(stored.location?.addresses == ["192.168.1.42"] && stored.location?.instance == "acme-plug-4f2a")

        // Another host announces the plug's name, TXT and all, at another address: logged, not
        // adopted. The plug announced again at the address it reported (another port) is followed.
        avahi.unpublishAll()
        try avahi.publish(
            "acme-plug-4f2a", type: "_http._tcp", port: 8080, hostname: "acme-plug.local", address: "192.168.1.44",
            txt: ["path=/"])
        let logged = try await poll(timeout: .seconds(60), every: .milliseconds(100)) {
            services.agent.log.contains("at 192.168.1.44 presents itself as the accessory") ? true : nil
        }
        #expect(logged == true, "\(services.agent.log)")
        #expect(try services.storedRecords().first?.location?.addresses == ["192.168.1.42"])
        avahi.unpublishAll()
        try avahi.publish(
            "acme-plug-4f2a", type: "_http._tcp", port: 8080, hostname: "acme-plug.local", address: "192.168.1.42")
        let again = try await session.signals.wait(for: "AccessoryChanged with the location on port 8080") {
            $0.contains { Self.location(in: $0)?["port"]?.int == 8080 }
        }
        #expect(
            again.compactMap(Self.location).allSatisfy { $0["addresses"]?.elements.first?.string == "192.168.1.42" })
        #expect(services.agent.log.contains("by knownInstance"), "\(services.agent.log)")
        #expect(try services.storedRecords().first?.location?.port == 8080)
        await client.close()
    }
}
