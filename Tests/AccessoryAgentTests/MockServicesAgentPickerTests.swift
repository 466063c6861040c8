import BusService
import DBusValues
import Foundation
import ServiceHarness
import Testing

/// The picker flow through the built agent, on a private bus with python-dbusmock's
/// NetworkManager (the project's template), BlueZ and polkitd (and logind where a picker agent
/// serves a logind session); clients and picker agents are the test's own connections.
@Suite("Agent picker (private bus: mock NetworkManager, BlueZ, polkitd)")
struct MockServicesAgentPickerTests {
    @Test func aPickerAgentsChoiceIsAddedWithEveryEventInApplesOrder() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        let events = try await client.subscribe()
        let picker = try await TestPicker(on: client.bus, behaviour: .choose(ssid: "WLED-AP"))
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let session = try await client.openSession("ge.wled.softap")
        #expect(try await session.activate().isEmpty)

        try await session.showPicker([wledItem])
        let signals = try await session.waitForDismiss()
        #expect(signals.map(\.member) == ["Activated", "PickerDidPresent", "AccessoryAdded", "PickerDidDismiss"])
        let added = try #require(signals.first { $0.member == "AccessoryAdded" }?.arguments.first)
        #expect(added["displayName"]?.string == "WLED controller (WLED-AP)")
        #expect(added["ssid"]?.string == "WLED-AP")
        #expect(added["state"]?.string == "authorized")
        #expect(added["stateCode"]?.int == 20)
        #expect(added["profile"]?.string == "ge.wled.softap")
        #expect(signals.last?.arguments.first?.entries.isEmpty == true, "a pick dismisses with no error")

        // The picker heard only the matching access point, never the home network or others.
        let calls = try await picker.wait(for: "SetupProgress")
        #expect(calls.first?.member == "RequestChoice")
        let request = try #require(calls.first?.arguments.last)
        #expect(request["profile"]?.string == "ge.wled.softap")
        #expect(request["items"]?.elements.first?["name"]?.string == "WLED controller (WLED-AP)")
        let heard = calls.filter { $0.member == "UpdateEntries" }.flatMap { $0.arguments[1].elements }
        #expect(!heard.isEmpty)
        #expect(Set(heard.compactMap { $0["ssid"]?.string }) == ["WLED-AP"])
        #expect(heard.first?["bssid"]?.string == AgentServices.wledBSSID)
        #expect(calls.last?.arguments[1].string == "done")

        // Subscribers get the same events, as Manager1.Event with Apple's event type values.
        let types = try await events.wait(for: "four events") { $0.count >= 4 }.map { $0.arguments[1].int }
        #expect(types == [10, 40, 30, 50])

        let id = try #require(added["id"]?.string)
        #expect(try services.storedRecords().map { $0.id.uuidString.lowercased() } == [id])
        #expect(try await client.listAccessories().compactMap { $0["id"]?.string } == [id])
        await client.close()
    }

    /// As AccessorySetupKit's picker: a device the owner added is not offered again, so it
    /// cannot be added twice, and a picker with nothing else in range ends by its timeout.
    @Test func anAccessoryAlreadyAddedIsNotOfferedAgain() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        let picker = try await TestPicker(on: client.bus, behaviour: .choose(ssid: "WLED-AP"))
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let first = try await client.openSession("ge.wled.softap")
        _ = try await first.activate()
        try await first.showPicker([wledItem])
        #expect(try await first.waitForDismiss().contains { $0.member == "AccessoryAdded" })
        let offeredFirst = try await picker.wait(for: "SetupProgress").count

        let again = try await client.openSession("ge.wled.softap")
        #expect(try await again.activate().count == 1, "the session starts with the accessory added")
        try await again.showPicker([wledItem], settings: .vardict([("discoveryTimeout", .uint32(3))]))
        let signals = try await again.waitForDismiss()
        #expect(signals.map(\.member) == ["Activated", "PickerDidPresent", "PickerDidDismiss"])
        #expect(signals.last?.arguments.first?["name"]?.string == "io.accessorysetup.Error.DiscoveryTimeout")
        let offeredAgain = try await picker.wait(for: "Cancel").dropFirst(offeredFirst)
            .filter { $0.member == "UpdateEntries" }.flatMap { $0.arguments[1].elements }
        #expect(offeredAgain.isEmpty, "\(offeredAgain)")
        #expect(try services.storedRecords().count == 1)
        await client.close()
    }

    /// `confirmAuthorization`: the accessory is added and the picker stays in its setting-up
    /// state ("authorization") until the client finishes (the picker is told "done") or fails
    /// the authorization, or the named timeout passes; `finishInApp` dismisses at once.
    @Test func confirmAuthorizationKeepsThePickerUntilTheApplicationFinishes() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        let picker = try await TestPicker(on: client.bus, behaviour: .choose(ssid: "WLED-AP"))
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let confirming = pickerItem(
            "WLED controller (WLED-AP)", [("ssid", "WLED-AP")], setupOptions: ["confirmAuthorization"])

        let session = try await client.openSession("ge.wled.softap")
        _ = try await session.activate()
        try await session.showPicker([confirming])
        let added = try await session.signals.wait(for: "AccessoryAdded") {
            $0.map(\.member).contains("AccessoryAdded")
        }
        let id = try #require(added.last?.arguments.first?["id"]?.string)
        #expect(added.last?.arguments.first?["state"]?.string == "awaitingAuthorization")
        let progress = try await picker.wait(for: "SetupProgress")
        #expect(progress.last?.arguments[1].string == "authorization")
        #expect(
            try await session.signals.quiet(for: .seconds(1)).isEmpty, "the picker stays until the application answers")
        try await session.call("FinishAuthorization", [.string(id), .vardict([])])
        let finished = try await session.waitForDismiss()
        #expect(Array(finished.map(\.member).suffix(2)) == ["AccessoryChanged", "PickerDidDismiss"])
        #expect(finished.last?.arguments.first?.members?.isEmpty == true, "dismissed without an error")
        let done = try await picker.wait(for: "SetupProgress").filter { $0.member == "SetupProgress" }
        #expect(done.last?.arguments[1].string == "done")
        #expect(try services.storedRecords().map(\.state) == [.authorized])

        // Nobody answers within the timeout: the record goes, the picker fails with the reason.
        try await client.manager("RemoveAccessory", [.string(id)])
        let late = try await client.openSession("ge.wled.softap")
        _ = try await late.activate()
        try await late.showPicker([confirming], settings: .vardict([("authorizationTimeout", .uint32(2))]))
        let timedOut = try await late.waitForDismiss()
        #expect(timedOut.map(\.member).contains("PickerSetupFailed"))
        let error = timedOut.last?.arguments.first
        #expect(error?["name"]?.string == "io.accessorysetup.Error.ConnectionFailed")
        #expect(error?["message"]?.string?.contains("within 2 s (ShowPicker's authorizationTimeout)") == true)
        #expect(try services.storedRecords().isEmpty)
        let refused = await expectBusError("io.accessorysetup.Error.InvalidRequest") {
            try await late.showPicker([confirming], settings: .vardict([("authorizationTimeout", .uint32(0))]))
        }
        #expect(refused?.contains("settings.authorizationTimeout") == true, "\(refused ?? "")")
        await client.close()
    }

    /// A vendor's own profile, passed as a file descriptor (`OpenSessionWithProfile`).
    static func clientProfile(_ items: String) -> String {
        """
        {"schemaVersion": 1, "id": "com.example.devlight", "vendor": "Example Lights", "supports": ["wifi"],
         "hotspot": {"security": "wpa2Personal", "passphrase": {"source": "fixed", "value": "wled1234"}},
         "handoff": "joinHotspot", "items": \(items)}
        """
    }

    /// Opens a session with `profile`'s text passed as a file descriptor.
    static func openSession(_ client: AgentClient, withProfile profile: String) async throws -> ClientSession {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "client-profile-\(UUID().uuidString).json")
        try Data(profile.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let reply = try await client.bus.call(
            destination: AgentProcess.busName, path: AgentClient.manager, interface: "io.accessorysetup.Manager1",
            method: "OpenSessionWithProfile", [.handle(0), .vardict([])], timeout: .seconds(30),
            fileDescriptors: [descriptor])
        let path = try #require(reply.first?.string)
        let recorder = SignalRecorder(
            await client.bus.signals(sender: nil, path: path, interface: "io.accessorysetup.Session1"))
        return ClientSession(client: client, path: path, signals: recorder)
    }

    /// A profile read from bytes has no directory: the image it names cannot be checked, and
    /// looked up among the installed profiles it would show another vendor's picture.
    @Test func aClientsOwnProfileOpensASessionAndItsImageIsNotShown() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        let picker = try await TestPicker(on: client.bus, behaviour: .choose(ssid: "WLED-AP"))
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let profile = Self.clientProfile(
            #"[{"name": "Dev light", "productImage": "images/led-controller.svg", "descriptor": {"ssid": "WLED-AP"}}]"#)
        let session = try await Self.openSession(client, withProfile: profile)
        // The items `accessoryctl pick --profile-file` passes on to ShowPicker as they are.
        let items = try #require(
            try await client.bus.call(
                destination: AgentProcess.busName, path: session.path, interface: "org.freedesktop.DBus.Properties",
                method: "Get", [.string("io.accessorysetup.Session1"), .string("Items")], timeout: .seconds(30)
            ).first?.elements)
        #expect(items.map { $0["name"]?.string } == ["Dev light"])
        #expect(items.first?["productImage"] == nil, "\(items)")

        _ = try await session.activate()
        try await session.showPicker([pickerItem("Dev light", [("ssid", "WLED-AP")])])
        let signals = try await session.waitForDismiss()
        let added = try #require(signals.first { $0.member == "AccessoryAdded" }?.arguments.first)
        #expect(added["profile"]?.string == "com.example.devlight")
        let request = try #require(
            try await picker.wait(for: "RequestChoice").first { $0.member == "RequestChoice" }?.arguments.last)
        #expect(request["vendor"]?.string == "Example Lights")
        await client.close()
    }

    /// A client's profile cannot take an installed profile's id, nor one the kiosk policy names:
    /// records, joins and the kiosk policy's choice (with its root-only passphrase) go by the id.
    @Test func aClientsProfileCannotTakeAnInstalledOrAKioskProfilesID() async throws {
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["com.example.kiosklight"], users: [0]))
        let client = try await services.client()
        let items = #"[{"name": "Dev light", "descriptor": {"ssid": "WLED-AP"}}]"#
        for (id, reason) in [("ge.wled.softap", "an installed profile's"), ("com.example.kiosklight", "kiosk policy")] {
            let profile = Self.clientProfile(items).replacingOccurrences(of: "com.example.devlight", with: id)
            let message = await expectBusError("io.accessorysetup.Error.InvalidArguments") {
                _ = try await Self.openSession(client, withProfile: profile)
            }
            #expect(
                message?.contains("its id '\(id)' is") == true && message?.contains(reason) == true, "\(message ?? "")")
        }
        #expect(!services.agent.log.contains("over profile com.example.kiosklight"), "no session was opened")
        await client.close()
    }

    @Test func aClientsProfileWithFaultsIsRefusedNamingEachField() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        let profile = Self.clientProfile(
            #"[{"name": "Dev light", "descriptor": {"ssid": "WLED-AP", "ssidPrefix": "WLED"}}]"#
        )
        .replacingOccurrences(of: #""vendor": "Example Lights", "#, with: "")
        let message = await expectBusError("io.accessorysetup.Error.InvalidProfile") {
            _ = try await Self.openSession(client, withProfile: profile)
        }
        #expect(message?.contains("vendor") == true, "\(message ?? "")")
        #expect(message?.contains("items[0].descriptor") == true, "\(message ?? "")")
        #expect(services.agent.isRunning)
        await client.close()
    }

    @Test func theKioskPolicyPicksWithNoFrontEnd() async throws {
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [0]))
        let client = try await services.client()
        let property = try await client.bus.call(
            destination: AgentProcess.busName, path: AgentClient.manager, interface: "org.freedesktop.DBus.Properties",
            method: "Get", [.string("io.accessorysetup.Manager1"), .string("KioskPolicy")], timeout: .seconds(30))
        #expect(property.first?.bool == true)
        let session = try await client.openSession("ge.wled.softap")
        _ = try await session.activate()
        try await session.showPicker([wledItem])
        let signals = try await session.waitForDismiss()
        #expect(signals.map(\.member) == ["Activated", "PickerDidPresent", "AccessoryAdded", "PickerDidDismiss"])
        #expect(signals[2].arguments.first?["ssid"]?.string == "WLED-AP")
        #expect(try services.storedRecords().map(\.displayName) == ["WLED controller (WLED-AP)"])
        #expect(services.agent.log.contains("the kiosk policy picks"))
        await client.close()
    }

    /// Both `Acme-Setup-` hotspots match; each rule must choose its own.
    @Test(arguments: [
        (#""choose": "strongestSignal", "settleSeconds": 1"#, "Acme-Setup-9B1C"),
        (#""choose": "ssidPattern", "ssidPattern": "Acme-Setup-4F*""#, "Acme-Setup-4F2A"),
    ])
    func theKioskPolicyChoosesByItsRule(rule: String, expected: String) async throws {
        let policy =
            #"{"schemaVersion": 1, "policies": [{"profiles": ["org.example.plug"], "users": [0], "#
            + rule + "}]}"
        let services = try AgentServices(kiosk: policy)
        let client = try await services.client()
        let session = try await client.openSession("org.example.plug")
        _ = try await session.activate()
        try await session.showPicker([plugItem])
        let signals = try await session.waitForDismiss()
        #expect(signals.map(\.member) == ["Activated", "PickerDidPresent", "AccessoryAdded", "PickerDidDismiss"])
        #expect(signals.first { $0.member == "AccessoryAdded" }?.arguments.first?["ssid"]?.string == expected)
        await client.close()
    }

    /// An accessory back in setup mode under a new SSID keeps its radio's BSSID, and
    /// NetworkManager lists both names until the old one ages out. The picker shows the radio
    /// under its newest name, even when the old one was heard stronger, and the old one going
    /// does not take the new one out (it did while the agent kept access points by BSSID).
    @Test func anAccessoryBackUnderANewNameStaysWhenItsOldNameGoes() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        let picker = try await TestPicker(on: client.bus, behaviour: .wait)
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let session = try await client.openSession("org.example.plug")
        _ = try await session.activate()
        // Discovery must outlast the test: under a sanitizer, with every suite at once, the steps
        // below took longer than the default 30 s, after which discovery stops and the picker
        // keeps what it showed.
        try await session.showPicker([plugItem], settings: .vardict([("discoveryTimeout", .string("unbounded"))]))
        try await picker.waitForEntries(["Acme-Setup-4F2A", "Acme-Setup-9B1C"])

        try services.networkManager.addAccessPoint(
            services.device, name: "plug1setup", ssid: "Acme-Setup-7C3D", bssid: AgentServices.plugBSSID, strength: 45)
        try await picker.waitForEntries(["Acme-Setup-7C3D", "Acme-Setup-9B1C"])
        try services.networkManager.removeAccessPoint(services.device, services.plugAccessPoint)
        // The agent hears NetworkManager's events in order: once a third plug shows, the removal
        // before it has been handled.
        try services.networkManager.addAccessPoint(
            services.device, name: "plug3", ssid: "Acme-Setup-D00D", bssid: "02:00:00:00:00:33", strength: 40)
        try await picker.waitForEntries(["Acme-Setup-7C3D", "Acme-Setup-9B1C", "Acme-Setup-D00D"])
        await client.close()
    }

    @Test func withNoPickerAgentAndNoKioskPolicyThePickerIsRestricted() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        let session = try await client.openSession("ge.wled.softap")
        _ = try await session.activate()
        let message = await expectBusError("io.accessorysetup.Error.PickerRestricted") {
            try await session.showPicker([wledItem])
        }
        #expect(message?.contains("kiosk.json") == true, "the message says what to do: \(message ?? "")")
        #expect(try await session.signals.quiet(for: .milliseconds(300)).isEmpty)
        #expect(session.signals.members == ["Activated"])
        await client.close()
    }

    @Test(arguments: [
        (pickerItem("Both", [("ssid", "WLED-AP"), ("ssidPrefix", "WLED")]), "items[0].descriptor.ss"),
        (pickerItem("Outside", [("ssid", "Other-Net")]), "items[0].descriptor.ssid"),
        (pickerItem("Long", [("ssid", String(repeating: "W", count: 33))]), "items[0].descriptor.ssid"),
        (pickerItem("BLE", [("bluetoothServiceUUID", "180d")]), "items[0].descriptor.bluetoothServiceUUID"),
        (pickerItem("Unknown", [("ssid", "WLED-AP"), ("colour", "red")]), "items[0].descriptor.colour"),
        (pickerItem("", [("ssid", "WLED-AP")]), "items[0].name"),
    ])
    func anInvalidDescriptorIsRefusedNamingTheField(item: DBusValue, field: String) async throws {
        let services = try AgentServices(kiosk: kioskPolicy(profiles: ["ge.wled.softap"], users: [0]))
        let client = try await services.client()
        let session = try await client.openSession("ge.wled.softap")
        _ = try await session.activate()
        let message = await expectBusError("io.accessorysetup.Error.InvalidRequest") {
            try await session.showPicker([item, wledItem])
        }
        #expect(message?.hasPrefix(field) == true, "'\(message ?? "")' names \(field)")

        // Nothing was shown, and the session serves a valid picker afterwards.
        #expect(session.signals.members == ["Activated"])
        try await session.showPicker([wledItem])
        let signals = try await session.waitForDismiss()
        #expect(signals.map(\.member) == ["Activated", "PickerDidPresent", "AccessoryAdded", "PickerDidDismiss"])
        #expect(services.agent.isRunning)
        await client.close()
    }

    @Test func severalClientsPickAtOnceAndEachHearsOnlyItsOwn() async throws {
        let services = try AgentServices()
        let wled = try await services.client(), plug = try await services.client()
        let watcher = try await services.client()
        let wledPicker = try await TestPicker(on: wled.bus, behaviour: .choose(ssid: "WLED-AP"))
        let plugPicker = try await TestPicker(
            on: plug.bus, behaviour: .choose(ssid: "Acme-Setup-4F2A", name: "Desk plug"))
        for client in [wled, plug] {
            try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        }
        let wledSession = try await wled.openSession("ge.wled.softap")
        let plugSession = try await plug.openSession("org.example.plug")
        // A second session of the plug's owner (uid 0, org.example.plug), with no picker of its own.
        let watching = try await watcher.openSession("org.example.plug")
        for session in [wledSession, plugSession, watching] { _ = try await session.activate() }

        async let wledPicked: Void = wledSession.showPicker([wledItem])
        async let plugPicked: Void = plugSession.showPicker([plugItem])
        _ = try await (wledPicked, plugPicked)
        let wledSignals = try await wledSession.waitForDismiss()
        let plugSignals = try await plugSession.waitForDismiss()

        #expect(wledSignals.map(\.member) == ["Activated", "PickerDidPresent", "AccessoryAdded", "PickerDidDismiss"])
        #expect(
            plugSignals.map(\.member) == [
                "Activated", "PickerDidPresent", "PickerSetupRename", "AccessoryAdded", "PickerDidDismiss",
            ])
        #expect(wledSignals[2].arguments.first?["ssid"]?.string == "WLED-AP")
        let plugAdded = try #require(plugSignals[3].arguments.first)
        #expect(plugAdded["ssid"]?.string == "Acme-Setup-4F2A")
        #expect(plugAdded["displayName"]?.string == "Desk plug")

        // Each picker saw its own profile's matches only.
        let wledHeard = wledPicker.calls.filter { $0.member == "UpdateEntries" }.flatMap { $0.arguments[1].elements }
        let plugHeard = plugPicker.calls.filter { $0.member == "UpdateEntries" }.flatMap { $0.arguments[1].elements }
        #expect(Set(wledHeard.compactMap { $0["ssid"]?.string }) == ["WLED-AP"])
        #expect(Set(plugHeard.compactMap { $0["ssid"]?.string }) == ["Acme-Setup-4F2A", "Acme-Setup-9B1C"])

        // The other session of the plug's owner hears of the addition; nobody hears the other's.
        let watched = try await watching.signals.wait(for: "AccessoryAdded") {
            $0.contains { $0.member == "AccessoryAdded" }
        }
        #expect(watched.map(\.member) == ["Activated", "AccessoryAdded"])
        #expect(watched[1].arguments.first?["id"] == plugAdded["id"])
        #expect(try await wledSession.signals.quiet(for: .milliseconds(300)).isEmpty)
        #expect(try await wled.listAccessories().count == 2, "both records are uid 0's")
        for client in [wled, plug, watcher] { await client.close() }
    }

    @Test func aClientVanishingMidPickerEndsItsSessionAndCancelsThePicker() async throws {
        let services = try AgentServices()
        let logind = try LogindMock(on: services.bus, session: "c1", uid: 0, user: "root")
        defer { logind.stop() }
        let front = try await services.client()
        let picker = try await TestPicker(on: front.bus, behaviour: .wait)
        try await front.manager(
            "RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([("session", .string("c1"))])])

        let client = try await services.client()
        let clientName = client.bus.uniqueName
        let session = try await client.openSession("org.example.plug")
        _ = try await session.activate()
        try await session.showPicker([plugItem])
        try await picker.wait(for: "UpdateEntries")
        #expect(picker.calls.first?.arguments.first?.string == session.path)

        await client.close()
        let calls = try await picker.wait(for: "Cancel")
        let cancel = try #require(calls.last { $0.member == "Cancel" })
        #expect(cancel.arguments.first?.string == session.path)
        #expect(cancel.arguments.last?["name"]?.string == "io.accessorysetup.Error.Invalidated")
        #expect(cancel.arguments.last?["code"]?.int == 400)

        // The session is gone from the bus, nothing was recorded, and the agent serves on.
        do {
            _ = try await front.bus.call(
                destination: AgentProcess.busName, path: session.path, interface: "io.accessorysetup.Session1",
                method: "Activate", timeout: .seconds(30))
            Issue.record("the vanished client's session still answers")
        } catch {
            // GDBus answers for a path with nothing exported with UnknownMethod (older) or UnknownObject.
            let names = ["org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownObject"]
            #expect(names.contains(error.name ?? ""), "\(error)")
        }
        #expect(services.agent.log.contains("session \(session.path): its client \(clientName) left the bus"))
        #expect(try services.storedRecords().isEmpty)
        #expect(try await front.listAccessories().isEmpty)
        await front.close()
    }

    @Test func aPersonCancellingThePickerDismissesItWithUserCancelled() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        let picker = try await TestPicker(on: client.bus, behaviour: .cancel)
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let session = try await client.openSession("ge.wled.softap")
        _ = try await session.activate()
        try await session.showPicker([wledItem])
        let signals = try await session.waitForDismiss()
        #expect(signals.map(\.member) == ["Activated", "PickerDidPresent", "PickerDidDismiss"])
        #expect(signals.last?.arguments.first?["name"]?.string == "io.accessorysetup.Error.UserCancelled")
        #expect(signals.last?.arguments.first?["code"]?.int == 700)
        #expect(picker.members.first == "RequestChoice")
        #expect(try services.storedRecords().isEmpty)
        await client.close()
    }

    /// The picker front end learns why the agent closed its picker: `Cancel` with the error, not
    /// the `SetupProgress` "done" of a pick that never happened.
    @Test func aDiscoveryTimeoutCancelsThePickerAgentWithTheReason() async throws {
        let services = try AgentServices()
        let client = try await services.client()
        let (picker, session, signals) = try await showPickerThatTimesOut(client)
        #expect(signals.map(\.member) == ["Activated", "PickerDidPresent", "PickerDidDismiss"])
        #expect(signals.last?.arguments.first?["name"]?.string == "io.accessorysetup.Error.DiscoveryTimeout")

        let calls = try await picker.wait(for: "Cancel", timeout: .seconds(30))
        let cancel = calls.last { $0.member == "Cancel" }
        #expect(cancel?.arguments.first?.string == session.path)
        #expect(cancel?.arguments.last?["name"]?.string == "io.accessorysetup.Error.DiscoveryTimeout")
        #expect(cancel?.arguments.last?["code"]?.int == 200)
        #expect(!picker.members.contains("SetupProgress"), "\(picker.members)")
        await client.close()
    }
}
