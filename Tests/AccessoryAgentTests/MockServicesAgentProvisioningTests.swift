import AccessoryCore
import BusService
import DBusValues
import Foundation
import ServiceHarness
import Testing

/// The session's `ProvisioningProgress` signals from the `after`th signal on, up to the last
/// step (`joining`), which may reach the recorder just after the reply.
func provisioningSteps(of session: ClientSession, after: Int) async throws -> [BusSignal] {
    let progress = { (signals: [BusSignal]) in
        signals.dropFirst(after).filter { $0.member == "ProvisioningProgress" }
    }
    let all = try await session.signals.wait(for: "the joining step") {
        progress($0).contains { $0.arguments[1].string == "joining" }
    }
    return progress(all)
}

/// `ProvisionAccessory` through the built agent, on a private bus with python-dbusmock's
/// NetworkManager, BlueZ and polkitd, against the ESP32-style provisioning device simulator at
/// 192.168.4.1:80 behind the agent's `wlan0` (`SetupHotspots`: network namespaces of the
/// test's own): the kiosk policy picks an Acme plug, the client joins its hotspot and gives it
/// a network.
@Suite("Agent provisions accessories (private bus: mock NetworkManager, BlueZ, polkitd; ESP device simulator)")
struct MockServicesAgentProvisioningTests {
    static let pop = "abcd1234"
    static let profileID = "org.example.espprov"
    static let items = #"[{"name": "Acme plug", "descriptor": {"ssid": "Acme-Setup-4F2A"}}]"#

    /// The plug's profile: its open hotspot joined, then ESP-IDF provisioning at `address`.
    static func profile(address: String, security: Int? = 1) -> String {
        """
        {"schemaVersion": 1, "id": "\(profileID)", "vendor": "Example", "supports": ["wifi"],
         "hotspot": {"security": "open", "passphrase": {"source": "none"}}, "handoff": "joinHotspot",
         "provisioning": {"protocol": "espIDF", "transport": "softAP", "address": "\(address)"
                          \(security.map { #", "security": \#($0)"# } ?? "")},
         "items": [{"name": "Acme plug", "descriptor": {"ssidPrefix": "Acme-Setup-"}}]}
        """
    }

    /// The plug's device on a setup hotspot of the agent's.
    static func device(
        security: Int, proofOfPossession: String?, homeSSID: String = "HomeNet",
        homePassphrase: String = "home-passphrase", connectingPolls: Int = 1
    ) throws -> ESPProvisioningDevice {
        try ESPProvisioningDevice(
            security: security, proofOfPossession: proofOfPossession, homeSSID: homeSSID,
            homePassphrase: homePassphrase, connectingPolls: connectingPolls, on: SetupHotspots())
    }

    /// The agent, on `device`'s hotspots, with the plug's profile for `device` (at `host`
    /// instead of its address when given), picking for `users`.
    static func services(
        _ device: ESPProvisioningDevice, users: [UInt32], security: Int? = 1, host: String? = nil
    ) throws -> AgentServices {
        let services = try AgentServices(
            kiosk: kioskPolicy(profiles: [profileID, "org.example.plug"], users: users), startAgent: false,
            hotspots: device.hotspots)
        let address = host.map { "\($0):\(device.port)" } ?? device.address
        try services.agent.installProfile(profile(address: address, security: security), name: profileID)
        try services.networkManager.giveIPv4(to: "Acme-Setup-4F2A")
        try services.agent.start()
        return services
    }

    /// Picks the plug on a new session of `client` and joins its hotspot (unless not `join`).
    static func pickAndJoin(_ client: AgentClient, join: Bool = true) async throws -> (ClientSession, String) {
        let session = try await client.openSession(profileID)
        _ = try await session.activate()
        try await session.showPicker([pickerItem("Acme plug", [("ssid", "Acme-Setup-4F2A")])])
        let signals = try await session.waitForDismiss()
        let added = try #require(signals.first { $0.member == "AccessoryAdded" }?.arguments.first)
        let id = try #require(added["id"]?.string)
        if join { try await session.call("JoinAccessoryHotspot", [.string(id), .vardict([])]) }
        return (session, id)
    }

    /// A look-alike that offers security 0 (or a profile's floor without the proof of
    /// possession) learns nothing: the agent stops after the version exchange.
    @Test func aDeviceOfferingLessThanItsProfileAcceptsIsGivenNothing() async throws {
        let device = try Self.device(security: 0, proofOfPossession: nil)
        let services = try Self.services(device, users: [0], security: nil)
        let client = try await services.client()
        let (session, id) = try await Self.pickAndJoin(client)
        let network = DBusValue.vardict([
            ("ssid", .string("HomeNet")), ("passphrase", .string("home-passphrase")),
            ("proofOfPossession", .string(Self.pop)),
        ])
        await expectBusError("io.accessorysetup.Error.ProvisioningSecurityBelowMinimum") {
            try await session.call("ProvisionAccessory", [.string(id), network])
        }
        #expect(!device.log.contains("session established") && !device.log.contains("credentials"), "\(device.log)")
        await client.close()
    }

    @Test func theNetworkTheClientGivesReachesTheDeviceStepByStep() async throws {
        let device = try Self.device(security: 1, proofOfPossession: Self.pop)
        let services = try Self.services(device, users: [0])
        let client = try await services.client()
        let (session, id) = try await Self.pickAndJoin(client)
        let reply = try #require(
            try await session.call(
                "ProvisionAccessory",
                [
                    .string(id),
                    .vardict([
                        ("ssid", .string("HomeNet")), ("passphrase", .string("home-passphrase")),
                        ("proofOfPossession", .string(Self.pop)),
                    ]),
                ]
            ).first)
        #expect(reply["ssid"]?.string == "HomeNet")
        #expect(reply["protocol"]?.string == "espIDF")
        #expect(reply["security"]?.uint32 == 1)
        #expect(reply["ipv4Address"]?.string == "192.168.1.42")

        let steps = try await provisioningSteps(of: session, after: 0)
        #expect(steps.allSatisfy { $0.arguments.first?.string == id })
        #expect(
            steps.compactMap { $0.arguments[1].string } == [
                "connecting", "version", "session", "openingSession", "sessionEstablished", "scanning", "scanned",
                "sendingCredentials", "joining",
            ])
        let scanned = try #require(steps.first { $0.arguments[1].string == "scanned" }?.arguments[2])
        #expect(scanned["networks"]?.uint32 == 6)
        #expect(scanned["rssi"]?.int == -48)
        // Neither secret was logged, by the agent or in its signals.
        for secret in [Self.pop, "home-passphrase"] {
            #expect(!services.agent.log.contains(secret))
            #expect(!steps.description.contains(secret))
        }
        #expect(services.agent.log.contains("is given 'HomeNet'"))

        // The record says where the accessory now is, and the owner's session heard it.
        let changed = try await session.signals.wait(for: "AccessoryChanged with the network") {
            $0.contains { $0.member == "AccessoryChanged" && $0.arguments.first?["network"] != nil }
        }.last { $0.member == "AccessoryChanged" }
        let network = try #require(changed?.arguments.first?["network"])
        #expect(network["ssid"]?.string == "HomeNet")
        #expect(network["ipv4Address"]?.string == "192.168.1.42")
        let shown = try #require(try await client.manager("GetAccessory", [.string(id)]).first)
        #expect(shown["network"]?["ipv4Address"]?.string == "192.168.1.42")
        let stored = try #require(try services.storedRecords().first { $0.id.uuidString.lowercased() == id })
        #expect(stored.network?.ssid == (try SSID("HomeNet")) && stored.network?.ipv4Address == "192.168.1.42")
        await client.close()
    }

    @Test func theDevicesVerdictsAreErrorsOfTheirOwn() async throws {
        let device = try Self.device(security: 2, proofOfPossession: Self.pop)
        let services = try Self.services(device, users: [0], security: 2)
        let client = try await services.client()
        let (session, id) = try await Self.pickAndJoin(client)
        func provision(_ options: [(String, DBusValue)]) async throws(BusError) {
            try await session.call("ProvisionAccessory", [.string(id), .vardict(options)])
        }
        let home = [("ssid", DBusValue.string("HomeNet")), ("passphrase", .string("home-passphrase"))]

        await expectBusError("io.accessorysetup.Error.ProvisioningProofOfPossessionRequired") {
            try await provision(home)
        }
        await expectBusError("io.accessorysetup.Error.ProvisioningWrongProofOfPossession") {
            try await provision(home + [("proofOfPossession", .string("wrong-pop"))])
        }
        await expectBusError("io.accessorysetup.Error.ProvisioningWrongPassphrase") {
            try await provision([
                ("ssid", .string("HomeNet")), ("passphrase", .string("not-the-passphrase")),
                ("proofOfPossession", .string(Self.pop)),
            ])
        }
        await expectBusError("io.accessorysetup.Error.ProvisioningNetworkNotFound") {
            try await provision([
                ("ssid", .string("NoSuchNet")), ("passphrase", .string("home-passphrase")),
                ("proofOfPossession", .string(Self.pop)),
            ])
        }
        // Bad options name their field, before anything is sent.
        let invalid = [
            [("passphrase", DBusValue.string("home-passphrase"))],
            [
                ("ssid", .string("HomeNet")), ("open", .boolean(true)),
                ("passphrase", .string("x")),
            ], [("ssid", .string("HomeNet")), ("passphrase", .string("short"))],
            [("timeout", .uint32(0))], [("colour", .string("red"))],
        ]
        for options in invalid {
            await expectBusError("io.accessorysetup.Error.InvalidArguments") { try await provision(options) }
        }
        #expect(!services.agent.log.contains(Self.pop))
        await client.close()
    }

    @Test func anAccessoryIsProvisionedOverItsHotspotOnlyOnceJoinedAndOnlyWithAProvisioningProfile() async throws {
        let device = try Self.device(security: 1, proofOfPossession: Self.pop)
        let services = try Self.services(device, users: [0])
        let client = try await services.client()
        let (session, id) = try await Self.pickAndJoin(client)
        _ = try await session.call("Leave")
        let options = DBusValue.vardict([("ssid", .string("HomeNet")), ("passphrase", .string("home-passphrase"))])
        let notJoined = await expectBusError("io.accessorysetup.Error.InvalidRequest") {
            try await session.call("ProvisionAccessory", [.string(id), options])
        }
        #expect(notJoined?.contains("JoinAccessoryHotspot") == true, "\(String(describing: notJoined))")
        #expect(!device.log.contains("session"), "nothing reached the device: \(device.log)")

        // Another session's accessory is not this one's to provision, and an accessory whose
        // profile says of no provisioning is given no network.
        let plug = try await client.openSession("org.example.plug")
        _ = try await plug.activate()
        await expectBusError("io.accessorysetup.Error.InvalidRequest") {
            try await plug.call("ProvisionAccessory", [.string(id), options])
        }
        try await plug.showPicker([plugItem])
        let added = try #require(try await plug.waitForDismiss().first { $0.member == "AccessoryAdded" })
        let plugID = try #require(added.arguments.first?["id"]?.string)
        try await plug.call("JoinAccessoryHotspot", [.string(plugID), .vardict([])])
        let unprovisioned = await expectBusError("io.accessorysetup.Error.InvalidRequest") {
            try await plug.call("ProvisionAccessory", [.string(plugID), options])
        }
        #expect(unprovisioned?.contains("no provisioning section") == true, "\(String(describing: unprovisioned))")
        await client.close()
    }

    /// Over a hotspot the agent speaks only to an address on that hotspot's network: a profile
    /// (a client's own, say) naming another, here 127.0.0.1 while the hotspot is
    /// 192.168.4.0/24, or a name, is refused before anything is sent, so that no profile
    /// points the agent, as root, anywhere else.
    @Test func anAddressOffTheHotspotsNetworkIsRefusedBeforeAnythingIsSent() async throws {
        let device = try Self.device(security: 1, proofOfPossession: Self.pop)
        let options = DBusValue.vardict([
            ("ssid", .string("HomeNet")), ("passphrase", .string("home-passphrase")),
            ("proofOfPossession", .string(Self.pop)),
        ])
        for (host, said) in [
            ("127.0.0.1", "is not on the setup hotspot joined on wlan0 (192.168.4.0/24)"),
            ("localhost", "is not an IPv4 address"),
        ] {
            let services = try Self.services(device, users: [0], host: host)
            let client = try await services.client()
            let (session, id) = try await Self.pickAndJoin(client)
            let refused = await expectBusError("io.accessorysetup.Error.InvalidRequest") {
                try await session.call("ProvisionAccessory", [.string(id), options])
            }
            #expect(refused?.contains("provisioning.address") == true, "\(String(describing: refused))")
            #expect(refused?.contains(said) == true, "\(String(describing: refused))")
            await client.close()
        }
        #expect(!device.log.contains("session"), "nothing reached the device: \(device.log)")
    }

    /// A caller that leaves the bus mid-way ends its provisioning at once: the accessory is
    /// free for the next caller, not `Pending` until the device's own timeout.
    @Test func aCallerLeavingMidWayEndsItsProvisioning() async throws {
        let device = try Self.device(security: 1, proofOfPossession: Self.pop, connectingPolls: 120)
        let services = try Self.services(device, users: [0])
        let first = try await services.client()
        let (_, id) = try await Self.pickAndJoin(first, join: false)
        let watcher = try await services.client()
        try await watcher.manager("JoinAccessory", [.string(id), .vardict([])])
        let steps = SignalRecorder(
            await first.bus.signals(
                sender: nil, path: AgentClient.manager, interface: "io.accessorysetup.Manager1",
                member: "ProvisioningProgress"))
        let options = DBusValue.vardict([
            ("ssid", .string("HomeNet")), ("passphrase", .string("home-passphrase")),
            ("proofOfPossession", .string(Self.pop)),
        ])
        let call = Task { try? await first.manager("ProvisionAccessory", [.string(id), options]) }
        try await steps.wait(for: "the joining step") { $0.contains { $0.arguments[1].string == "joining" } }
        await first.close()
        call.cancel()
        _ = try await poll(timeout: .seconds(10)) {
            services.agent.log.contains("provisioning was interrupted") ? true : nil
        }
        #expect(services.agent.log.contains("provisioning was interrupted"), "\(services.agent.log)")
        // The next caller is not told Pending: it reaches the device, which is still joining.
        let second = try await services.client()
        let short = DBusValue.vardict([
            ("ssid", .string("HomeNet")), ("passphrase", .string("home-passphrase")),
            ("proofOfPossession", .string(Self.pop)), ("timeout", .uint32(2)),
        ])
        await expectBusError("io.accessorysetup.Error.TimedOut") {
            try await second.manager("ProvisionAccessory", [.string(id), short])
        }
        await second.close()
        await watcher.close()
    }

    /// A caller that leaves while polkit still asks about its provisioning (a person reading the
    /// dialog) had nothing to cancel yet: once polkit answers, it is given nothing, nothing
    /// reaches the device, and the accessory is free for the next caller.
    @Test func aCallerLeavingWhilePolkitAsksIsGivenNothing() async throws {
        let user = try systemUser("nobody")
        let device = try Self.device(security: 1, proofOfPossession: Self.pop)
        let services = try Self.services(device, users: [user])
        let allowed = [
            "io.accessorysetup.open-session", "io.accessorysetup.authorize", "io.accessorysetup.join",
            "io.accessorysetup.provision",
        ]
        try services.polkit.allow(allowed)
        let picked = try await services.runClient(uid: user, ["pick", Self.profileID, Self.items])
        let added = try #require(picked.objects.first { $0["event"] as? String == "AccessoryAdded" }, "\(picked)")
        let id = try #require((added["args"] as? [[String: Any]])?.first?["id"] as? String)
        let joined = try await services.runClient(uid: user, ["join", id])
        #expect(joined.status == 0, "\(joined)")

        try services.polkit.hold(["io.accessorysetup.provision"])
        let network = #"{"ssid": "HomeNet", "passphrase": "home-passphrase", "proofOfPossession": "\#(Self.pop)"}"#
        // The client is killed after 3 s, polkit still asking.
        let killed = try await services.runClient(uid: user, ["provision", id, network], timeout: 3)
        #expect(killed.status != 0, "\(killed)")
        #expect(try services.polkit.holdsChecks(), "polkit was never asked: \(services.agent.log)")
        try services.polkit.hold([])
        try services.polkit.releaseHeldChecks()
        try await Task.sleep(for: .seconds(2))
        #expect(!device.log.contains("session"), "the device was reached for a caller that left: \(device.log)")

        let given = try await services.runClient(uid: user, ["provision", id, network])
        #expect(given.status == 0, "the accessory is free for the next caller: \(given)")
    }

    /// A stored network's passphrase goes to an accessory by NetworkManager's own rule for
    /// reading it: a profile restricted to the caller alone with share-network (the caller's
    /// own password), a system profile only with share-system-network (an administrator's),
    /// another user's never; every share asks again, naming the application, the accessory,
    /// the network and how the passphrase travels; and a network that is not stored is said
    /// so only after polkit.
    @Test func aStoredNetworkIsSharedOnlyByWhoeverNetworkManagerLetsReadIt() async throws {
        let user = try systemUser("nobody")
        let device = try Self.device(
            security: 1, proofOfPossession: Self.pop, homeSSID: "OwnNet", homePassphrase: "own-passphrase")
        let services = try Self.services(device, users: [user])
        try services.networkManager.addTaggedProfile(
            id: "SavedNet", ssid: "SavedNet", userData: [:], psk: "saved-passphrase")
        try services.networkManager.addTaggedProfile(
            id: "OwnNet", ssid: "OwnNet", userData: [:], permittedUser: "nobody", psk: "own-passphrase")
        try services.networkManager.addTaggedProfile(
            id: "RootsNet", ssid: "RootsNet", userData: [:], permittedUser: "root", psk: "roots-passphrase")
        let granted = [
            "io.accessorysetup.open-session", "io.accessorysetup.authorize", "io.accessorysetup.join",
            "io.accessorysetup.provision",
        ]
        try services.polkit.allow(granted)
        let picked = try await services.runClient(uid: user, ["pick", Self.profileID, Self.items])
        let added = try #require(picked.objects.first { $0["event"] as? String == "AccessoryAdded" }, "\(picked)")
        let id = try #require((added["args"] as? [[String: Any]])?.first?["id"] as? String)
        let joined = try await services.runClient(uid: user, ["join", id])
        #expect(joined.status == 0, "\(joined)")
        let provision = { (ssid: String) in
            try await services.runClient(
                uid: user, ["provision", id, #"{"ssid": "\#(ssid)", "proofOfPossession": "\#(Self.pop)"}"#],
                timeout: 90)
        }
        let checks = { (action: String) in
            services.polkit.log.split(separator: "\n").filter { $0.contains("\"io.accessorysetup.\(action)\"") }
        }

        // Another user's network: not stored for this caller, which polkit hears of first.
        let notAllowed = try await provision("RootsNet")
        #expect(
            notAllowed.objects.last?["error"] as? String == "io.accessorysetup.Error.NotAuthorized", "\(notAllowed)")
        try services.polkit.allow(granted + ["io.accessorysetup.share-network"])
        let rootsNet = try await provision("RootsNet")
        #expect(rootsNet.objects.last?["error"] as? String == "io.accessorysetup.Error.NotStored", "\(rootsNet)")

        // The system's network: the caller's own consent is not enough.
        let systemNet = try await provision("SavedNet")
        #expect(systemNet.objects.last?["error"] as? String == "io.accessorysetup.Error.NotAuthorized", "\(systemNet)")
        #expect(
            (systemNet.objects.last?["message"] as? String)?.contains("share-system-network") == true, "\(systemNet)")
        #expect(!device.log.contains("session"), "nothing reached the device: \(device.log)")
        let asked = try #require(checks("share-system-network").last.map(String.init), "\(services.polkit.log)")
        for shown in ["SavedNet", "Acme plug", "a program of yours", "It is sent encrypted.", id] {
            #expect(asked.contains(shown), "polkit is shown \(shown): \(asked)")
        }

        // The caller's own network, with the caller's own consent, asked for each share.
        let before = checks("share-network").count
        for _ in 0..<2 {
            let given = try await provision("OwnNet")
            #expect(given.status == 0, "\(given)")
            #expect((given.objects.last?["reply"] as? [[String: Any]])?.first?["ssid"] as? String == "OwnNet")
            for secret in ["saved-passphrase", "own-passphrase", "roots-passphrase"] {
                #expect(!given.out.contains(secret) && !services.agent.log.contains(secret))
            }
        }
        #expect(checks("share-network").count == before + 2, "each share asks: \(services.polkit.log)")
        #expect(
            services.agent.log.contains(
                "the stored network 'OwnNet' (profile 'OwnNet', io.accessorysetup.share-network)"))
        #expect(device.log.contains("OwnNet"), "\(device.log)")
    }
}

/// `ProvisionAccessory` for an Improv Wi-Fi device over the project's BlueZ template: the
/// shipped Improv profile, the kiosk policy picking the authorized device.
@Suite("Agent provisions Improv devices (private bus: mock NetworkManager, BlueZ with an Improv device, polkitd)")
struct MockServicesAgentImprovProvisioningTests {
    static let item = pickerItem(
        "Improv Wi-Fi device",
        [
            ("bluetoothServiceUUID", "00004677-0000-1000-8000-00805f9b34fb"), ("bluetoothServiceDataBlob", "02"),
            ("bluetoothServiceDataMask", "ff"),
        ])

    /// The agent's client, a session over the Improv profile, and the record the kiosk policy
    /// picked in it.
    static func pick(_ services: AgentServices) async throws -> (AgentClient, ClientSession, String) {
        let client = try await services.client()
        let session = try await client.openSession("com.improv-wifi.ble")
        _ = try await session.activate()
        try await session.showPicker([Self.item])
        let added = try #require(try await session.waitForDismiss().first { $0.member == "AccessoryAdded" })
        return (client, session, try #require(added.arguments.first?["id"]?.string))
    }

    /// Improv sends the passphrase as it is: only a profile that says it accepts that
    /// (`unencryptedProvisioning`) has the agent send it, and otherwise the device hears nothing.
    @Test func anImprovDeviceIsGivenNothingUnlessItsProfileAcceptsAPlainPassphrase() async throws {
        let services = try AgentServices(
            kiosk: kioskPolicy(profiles: ["com.improv-wifi.ble"], users: [0]), startAgent: false)
        let shipped = try String(
            contentsOf: AgentPaths.packageRoot.appendingPathComponent("profiles/improv-wifi.json"), encoding: .utf8)
        let withoutConsent = shipped.replacingOccurrences(of: #""unencryptedProvisioning": true,"#, with: "")
        #expect(withoutConsent != shipped, "the shipped Improv profile says it sends the passphrase as it is")
        try services.agent.installProfile(withoutConsent, name: "com.improv-wifi.ble")
        let device = try services.bluez.addImprovDevice("24:0A:C4:00:00:0A")
        try services.agent.start()
        let (client, session, id) = try await Self.pick(services)
        let options = DBusValue.vardict([("ssid", .string("HomeNet")), ("passphrase", .string("home-passphrase"))])
        let message = await expectBusError("io.accessorysetup.Error.InvalidRequest") {
            try await session.call("ProvisionAccessory", [.string(id), options])
        }
        #expect(message?.contains("unencryptedProvisioning") == true, "\(message ?? "")")
        #expect(try services.bluez.improvLog(device).packets.isEmpty, "the device was sent nothing")
        await client.close()
    }

    @Test func anImprovDeviceIsGivenTheNetworkAndAnswersWithItsURL() async throws {
        let services = try AgentServices(
            kiosk: kioskPolicy(profiles: ["com.improv-wifi.ble"], users: [0]), startAgent: false)
        try services.agent.installShippedProfile("improv-wifi.json")
        let device = try services.bluez.addImprovDevice("24:0A:C4:00:00:09")
        try services.bluez.setImprov(device, url: "http://10.0.0.9/setup")
        try services.agent.start()
        let (client, session, id) = try await Self.pick(services)

        // The device's own verdict first: it could not join (and stays ready for another try).
        try services.bluez.setImprov(device, failConnect: true)
        let options = DBusValue.vardict([("ssid", .string("HomeNet")), ("passphrase", .string("home-passphrase"))])
        await expectBusError("io.accessorysetup.Error.ImprovUnableToConnect") {
            try await session.call("ProvisionAccessory", [.string(id), options])
        }
        _ = try await provisioningSteps(of: session, after: 0)
        try services.bluez.setImprov(device, failConnect: false)
        let before = session.signals.all.count
        let reply = try #require(try await session.call("ProvisionAccessory", [.string(id), options]).first)
        #expect(reply["protocol"]?.string == "improvWiFi")
        #expect(reply["url"]?.string == "http://10.0.0.9/setup")
        #expect(reply["ssid"]?.string == "HomeNet")
        let log = try services.bluez.improvLog(device)
        #expect(log.ssid == "HomeNet" && log.password == "home-passphrase")
        let steps = try await provisioningSteps(of: session, after: before).compactMap { $0.arguments[1].string }
        #expect(steps == ["connecting", "sendingCredentials", "joining"])
        let shown = try #require(try await client.manager("GetAccessory", [.string(id)]).first)
        #expect(shown["network"]?["url"]?.string == "http://10.0.0.9/setup")
        #expect(shown["network"]?["ssid"]?.string == "HomeNet")
        #expect(!services.agent.log.contains("home-passphrase"))

        await client.close()
    }
}
