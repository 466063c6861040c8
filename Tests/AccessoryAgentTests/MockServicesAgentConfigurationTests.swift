import BusService
import DBusValues
import Foundation
import ServiceHarness
import Testing

/// An application's own Wi-Fi configurations (`ApplyConfiguration`, `GetConfiguredSSIDs`,
/// `RemoveConfiguration`) through the built agent, on a private bus with python-dbusmock's
/// NetworkManager (`wlan0` on `HomeNet`; `WLED-AP`, two `Acme-Setup-` hotspots and `Other-Net`
/// in range), BlueZ and polkitd.
@Suite("Agent: an application's own Wi-Fi configurations (private bus: mock NetworkManager, polkitd)")
struct MockServicesAgentConfigurationTests {
    let services: AgentServices

    init() throws {
        services = try AgentServices()
    }

    var active: String? { get throws { try services.networkManager.activeConnectionID(on: services.device) } }

    func expectBackHome(_ what: String, profiles: Int = 1) async throws {
        let home = try await poll(timeout: .seconds(30), every: .milliseconds(50)) {
            try active == "HomeNet" && services.networkManager.connectionPaths().count == profiles ? true : nil
        }
        if home == nil {
            Issue.record("not back on HomeNet \(what): active \(try active ?? "none"), \(services.agent.log)")
        }
    }

    func apply(_ client: AgentClient, _ configuration: [(String, DBusValue)], options: [(String, DBusValue)] = [])
        async throws -> DBusValue
    {
        try #require(
            try await client.manager("ApplyConfiguration", [.vardict(configuration), .vardict(options)]).first)
    }

    func configured(_ client: AgentClient) async throws -> [String] {
        try await client.manager("GetConfiguredSSIDs").first?.elements.compactMap(\.string) ?? []
    }

    /// A stored configuration's join outlives the agent (a package upgrade restarts it): the next
    /// agent holds it again for its owner, proven by the profile's permissions, who leaves it.
    @Test func aConfigurationsJoinLeftUpByARestartIsLeftByItsOwner() async throws {
        let client = try await services.client()
        _ = try await apply(client, [("ssid", .string("Other-Net")), ("passphrase", .string("other-pass-1"))])
        await client.close()
        try services.agent.terminate()
        #expect(try active == "Accessory Other-Net", "NetworkManager kept the join")

        try services.agent.start()
        let again = try await services.client()
        let left = try #require(try await again.manager("Leave", [.vardict([])]).first)
        #expect(left["ssid"]?.string == "Other-Net")
        #expect(left["restored"]?.string == "HomeNet")
        try await expectBackHome("after leaving the configuration's join", profiles: 2)
        #expect(services.agent.log.contains("joined for a configuration before this start"), "\(services.agent.log)")
        #expect(try await configured(again) == ["Other-Net"])
        await again.close()
    }

    @Test func applyListLeaveAndRemoveWPA2PrefixJoinOnceAndLifetime() async throws {
        let client = try await services.client()
        let joined = try await apply(client, [("ssid", .string("Other-Net")), ("passphrase", .string("other-pass-1"))])
        #expect(joined["ssid"]?.string == "Other-Net")
        #expect(joined["previousConnection"]?.string == "HomeNet")
        #expect(joined["restoreDeadline"] == nil, "no checkpoint unless restoreAfter asks for one")
        #expect(try active == "Accessory Other-Net")
        #expect(try await configured(client) == ["Other-Net"])
        let settings = try services.networkManager.connectionSettings().joined(separator: "\n")
        #expect(
            settings.contains("'accessory-setup.owner': <'0'>") || settings.contains("'accessory-setup.owner': '0'"))
        #expect(!services.agent.log.contains("other-pass-1"))

        try await client.manager("Leave", [.vardict([])])
        try await expectBackHome("after Leave", profiles: 2)
        #expect(try await configured(client) == ["Other-Net"], "a stored configuration stays after Leave")

        // A prefix, join-once: the strongest Acme-Setup- network, gone when the caller leaves.
        let once = try await services.client()
        let prefixed = try await apply(once, [("ssidPrefix", .string("Acme-Setup-")), ("joinOnce", .boolean(true))])
        #expect(prefixed["ssid"]?.string == "Acme-Setup-9B1C")
        await once.close()
        try await expectBackHome("after the join-once configuration's client left", profiles: 2)
        #expect(try await configured(client) == ["Other-Net"])

        let lasting = try await apply(
            client, [("ssid", .string("WLED-AP")), ("passphrase", .string("wled1234")), ("lifeTimeInDays", .int32(30))])
        #expect(lasting["ssid"]?.string == "WLED-AP")
        #expect(try services.networkManager.connectionSettings().joined().contains("accessory-setup.expires"))
        #expect(try await configured(client) == ["Other-Net", "WLED-AP"])

        try await client.manager("RemoveConfiguration", [.string("WLED-AP")])
        try await expectBackHome("after RemoveConfiguration of the joined network", profiles: 2)
        #expect(try await configured(client) == ["Other-Net"])
        await expectBusError("io.accessorysetup.Error.NotStored") {
            try await client.manager("RemoveConfiguration", [.string("WLED-AP")])
        }
        try await client.manager("RemoveConfiguration", [.string("Other-Net")])
        #expect(try await configured(client).isEmpty)
        #expect(try services.networkManager.connectionPaths().count == 1)
        await client.close()
    }

    @Test func badInputIsRefusedNamingTheFieldWithNEHotspotConfigurationErrorsName() async throws {
        let client = try await services.client()
        let cases: [(String, [(String, DBusValue)], String)] = [
            (
                "InvalidWPAPassphrase", [("ssid", .string("Other-Net")), ("passphrase", .string("short"))],
                "configuration.passphrase"
            ),
            ("InvalidSSIDPrefix", [("ssidPrefix", .string("Ac"))], "configuration.ssidPrefix"),
            ("InvalidSSID", [("ssid", .string(String(repeating: "x", count: 33)))], "configuration.ssid"),
            (
                "InvalidConfiguration", [("ssid", .string("A-Net")), ("ssidPrefix", .string("A-N"))],
                "configuration.ssidPrefix"
            ),
            (
                "InvalidConfiguration", [("ssid", .string("Other-Net")), ("lifeTimeInDays", .int32(0))],
                "configuration.lifeTimeInDays"
            ),
            (
                "InvalidWEPPassphrase",
                [("ssid", .string("Other-Net")), ("security", .string("wep")), ("passphrase", .string("abcde"))],
                "configuration.passphrase"
            ),
            ("InvalidArguments", [("ssid", .string("Other-Net")), ("colour", .string("red"))], "configuration.colour"),
            (
                "InvalidEAPSettings",
                [
                    ("ssid", .string("Corp")),
                    ("eap", .vardict([("supportedEAPTypes", .array([.uint32(21)], elementType: "u"))])),
                ],
                "configuration.eap.username"
            ),
            (
                "JoinOnceNotSupported",
                [
                    ("ssid", .string("Corp")), ("joinOnce", .boolean(true)),
                    (
                        "eap",
                        .vardict([
                            ("supportedEAPTypes", .array([.uint32(25)], elementType: "u")),
                            ("username", .string("u")), ("password", .string("p")),
                        ])
                    ),
                ],
                "configuration.joinOnce"
            ),
        ]
        for (name, configuration, field) in cases {
            let message = await expectBusError("io.accessorysetup.Error.\(name)") {
                try await client.manager("ApplyConfiguration", [.vardict(configuration), .vardict([])])
            }
            #expect(message?.hasPrefix(field) == true, "\(name): \(message ?? "")")
        }
        #expect(try services.networkManager.connectionPaths().count == 1, "no refusal leaves a profile")
        #expect(try active == "HomeNet")
        #expect(!services.agent.log.contains("short"))
        await client.close()
    }

    @Test func eachUserSeesAndRemovesOnlyTheirOwnAndPolkitRefusalIsUserDenied() async throws {
        let alice = try systemUser("nobody"), bob = try systemUser("daemon")
        try services.polkit.allow(["io.accessorysetup.configure-hotspot"])
        let applied = try await services.runClient(
            uid: alice, ["apply", #"{"ssid": "Other-Net", "passphrase": "other-pass-1"}"#])
        #expect(applied.status == 0, "\(applied)")
        #expect(try active == "Accessory Other-Net")
        let settings = try services.networkManager.connectionSettings().joined()
        #expect(settings.contains("user:nobody:"), "the profile is alice's alone in NetworkManager")

        // A profile claiming to be alice's but open to bob (anyone may write a tag) is not hers.
        try services.networkManager.addTaggedProfile(
            id: "Accessory Forged", ssid: "Forged",
            userData: ["accessory-setup.managed": "1", "accessory-setup.owner": "\(alice)"], permittedUser: "daemon")
        let aliceList = try await services.runClient(uid: alice, ["configured"])
        #expect((aliceList.objects.first?["reply"] as? [[String]])?.first == ["Other-Net"], "\(aliceList)")
        let bobList = try await services.runClient(uid: bob, ["configured"])
        #expect((bobList.objects.first?["reply"] as? [[String]])?.first == [], "\(bobList)")
        let bobRemove = try await services.runClient(uid: bob, ["forget", "Other-Net"])
        #expect(bobRemove.objects.first?["error"] as? String == "io.accessorysetup.Error.NotStored", "\(bobRemove)")
        #expect(try active == "Accessory Other-Net")

        try services.polkit.allow([])
        let profiles = try services.networkManager.connectionPaths().count
        let refused = try await services.runClient(
            uid: bob, ["apply", #"{"ssid": "WLED-AP", "passphrase": "wled1234"}"#])
        #expect(refused.objects.first?["error"] as? String == "io.accessorysetup.Error.NotAuthorized", "\(refused)")
        #expect((refused.objects.first?["message"] as? String)?.contains("configure-hotspot") == true)
        #expect(try services.networkManager.connectionPaths().count == profiles)
        let checks = services.polkit.log.split(separator: "\n").filter { $0.contains("configure-hotspot") }
        #expect(checks.contains { $0.contains("ssid") && $0.contains("WLED-AP") }, "the prompt's details: \(checks)")

        let removed = try await services.runClient(uid: alice, ["forget", "Other-Net"])
        #expect(removed.status == 0, "\(removed)")
        try await expectBackHome("after alice removed hers", profiles: 2)
    }

    @Test func anEnterpriseCertificateArrivesByDescriptorAndGoesWithItsConfiguration() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("ca.pem").path
        try ChildProcess(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                directory.appendingPathComponent("ca.key").path, "-out", certificate, "-days", "2", "-subj",
                "/CN=Lab CA",
            ]
        ).wait()
        let pem = try String(contentsOfFile: certificate, encoding: .utf8)
        let descriptor = open(certificate, O_RDONLY)
        #expect(descriptor >= 0)
        defer { close(descriptor) }

        let client = try await services.client()
        let eap: [(String, DBusValue)] = [
            ("supportedEAPTypes", .array([.uint32(25)], elementType: "u")), ("username", .string("alice")),
            ("password", .string("corp-secret")), ("trustedServerCertificate", .handle(0)),
        ]
        let reply = try await client.bus.call(
            destination: AgentProcess.busName, path: AgentClient.manager, interface: "io.accessorysetup.Manager1",
            method: "ApplyConfiguration",
            [.vardict([("ssid", .string("Other-Net")), ("eap", .vardict(eap))]), .vardict([])],
            timeout: .seconds(30), fileDescriptors: [descriptor])
        #expect(reply.first?["ssid"]?.string == "Other-Net")
        let stored = services.agent.stateDirectory.appendingPathComponent("certificates")
        let directories = try FileManager.default.contentsOfDirectory(atPath: stored.path)
        #expect(directories.count == 1)
        let copy = stored.appendingPathComponent(directories[0]).appendingPathComponent("trustedServerCertificate.pem")
        #expect(try String(contentsOf: copy, encoding: .utf8) == pem)
        #expect(try FileManager.default.attributesOfItem(atPath: copy.path)[.posixPermissions] as? Int == 0o600)
        #expect(try services.networkManager.connectionSettings().joined().contains(copy.path))
        #expect(!services.agent.log.contains("corp-secret"))

        try await client.manager("RemoveConfiguration", [.string("Other-Net")])
        try await expectBackHome("after the enterprise configuration was removed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: stored.path).isEmpty)
        await client.close()
    }

    /// A configuration refused after its certificates were taken from the call closes them:
    /// forty refusals with three descriptors each leave the agent with no more open than before.
    @Test func aRefusedConfigurationKeepsNoDescriptorOpen() async throws {
        let client = try await services.client()
        let pid = try #require(services.agent.processIdentifier)
        let fds = "/proc/\(pid)/fd"
        _ = try await configured(client)
        let before = try FileManager.default.contentsOfDirectory(atPath: fds).count
        let descriptor = open("/dev/null", O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let eap: [(String, DBusValue)] = [
            ("supportedEAPTypes", .array([.uint32(13)], elementType: "u")), ("username", .string("alice")),
            ("trustedServerCertificate", .handle(0)), ("clientCertificate", .handle(1)), ("privateKey", .handle(2)),
        ]
        for _ in 0..<40 {
            do {
                _ = try await client.bus.call(
                    destination: AgentProcess.busName, path: AgentClient.manager,
                    interface: "io.accessorysetup.Manager1", method: "ApplyConfiguration",
                    [
                        .vardict([("ssid", .string("Other-Net")), ("security", .string("wep")), ("eap", .vardict(eap))]
                        ),
                        .vardict([]),
                    ],
                    timeout: .seconds(30), fileDescriptors: [descriptor, descriptor, descriptor])
                Issue.record("a WEP configuration without a key was accepted")
            } catch {
                #expect("\(error)".contains("WEP"), "\(error)")
            }
        }
        let after = try FileManager.default.contentsOfDirectory(atPath: fds).count
        #expect(after <= before + 3, "\(before) descriptors open before, \(after) after")
        await client.close()
    }

    /// A configuration whose polkit dialog a person leaves open holds off nobody else's join:
    /// the device is claimed only once polkit has answered.
    @Test func aPolkitDialogLeftOpenHoldsOffNoOtherJoin() async throws {
        let user = try systemUser("nobody")
        try services.polkit.hold(["io.accessorysetup.configure-hotspot"])
        let waiting = Task {
            try await services.runClient(
                uid: user, ["apply", #"{"ssid": "Acme-Setup-4F2A"}"#], timeout: 30)
        }
        let held = try await poll(timeout: .seconds(10)) { try services.polkit.holdsChecks() ? true : nil }
        #expect(held == true, "polkit was never asked: \(services.agent.log)")
        let client = try await services.client()
        let joined = try await apply(client, [("ssid", .string("Other-Net")), ("passphrase", .string("other-pass-1"))])
        #expect(joined["ssid"]?.string == "Other-Net")
        try await client.manager("Leave", [.vardict([])])
        try services.polkit.hold([])
        try services.polkit.releaseHeldChecks()
        let refused = try await waiting.value
        #expect(refused.objects.last?["error"] as? String == "io.accessorysetup.Error.NotAuthorized", "\(refused)")
        await client.close()
    }
}
