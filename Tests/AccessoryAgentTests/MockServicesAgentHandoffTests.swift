import AccessoryCore
import BusService
import Foundation
import ServiceHarness
import Testing

/// A `bluetoothToWiFi` accessory picked through the agent (dbusmock's BlueZ and
/// NetworkManager, the real agent): the hotspot handoff runs as the pick's bridging step, the
/// record keeps the hotspot it revealed, the join uses it, and leaving switches it off.
@Suite(.serialized) final class MockServicesAgentHandoffTests {
    static let address = GoProCamera.address
    static let command = GoProCamera.command
    static let gopro = GoProCamera.service
    static let cameraItem = pickerItem("GoPro camera", [("bluetoothServiceUUID", gopro)])

    /// The services, the agent with the shipped GoPro profile, and a camera answering
    /// Set AP Control with `answer`; returns the camera's path too.
    static func start(answer: [UInt8] = [0x02, 0x17, 0x00], answerDelayMs: Int = 100) throws -> (AgentServices, String)
    {
        let services = try AgentServices(startAgent: false)
        try services.agent.installShippedProfile("gopro.json")
        try services.networkManager.addAccessPoint(
            services.device, name: "gopro", ssid: "GP24501234", bssid: "02:00:00:00:00:50", strength: 70,
            security: .wpa2)
        let camera = try addCamera(services.bluez, answer: answer, delayMs: answerDelayMs)
        try services.agent.start()
        return (services, camera)
    }

    static func addCamera(_ bluez: BlueZMock, answer: [UInt8], delayMs: Int = 100) throws -> String {
        try GoProCamera.add(to: bluez, answer: answer, delayMs: delayMs)
    }

    /// A client with a picker that chooses the camera, its session, and the signals of its pick.
    static func pickCamera(_ services: AgentServices) async throws -> (
        AgentClient, TestPicker, ClientSession, [BusSignal]
    ) {
        let client = try await services.client()
        let picker = try await TestPicker(on: client.bus, behaviour: .chooseDevice(address: address))
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let session = try await client.openSession("com.gopro.camera")
        _ = try await session.activate()
        try await session.showPicker([cameraItem])
        return (client, picker, session, try await session.waitForDismiss())
    }

    @Test func thePickRunsTheHandoffAsBridgingAndTheJoinUsesTheRevealedHotspot() async throws {
        let (services, camera) = try Self.start()
        let (client, picker, session, signals) = try await Self.pickCamera(services)
        #expect(
            signals.map(\.member) == [
                "Activated", "PickerDidPresent", "PickerSetupBridging", "AccessoryAdded", "PickerDidDismiss",
            ])
        let added = try #require(signals.first { $0.member == "AccessoryAdded" }?.arguments.first)
        #expect(added["ssid"]?.string == "GP24501234")
        #expect(added["bluetoothIdentifier"]?.string == Self.address)
        #expect(
            try await picker.wait(for: "SetupProgress").contains {
                $0.member == "SetupProgress" && $0.arguments[1].string == "hotspotHandoff"
            })
        #expect(try services.bluez.gattLog(camera).writes == [[Self.command, "03170101"]])

        let id = try #require(added["id"]?.string)
        // Joined as `accessoryctl pick --join` does: after the session it was picked in ended.
        _ = try await session.call("Invalidate")
        let joined = try #require(try await client.manager("JoinAccessory", [.string(id), .vardict([])]).first)
        #expect(joined["ssid"]?.string == "GP24501234")
        #expect(
            services.networkManager.log.contains("camera-pass-1234"),
            "the revealed passphrase did not reach NetworkManager")
        #expect(!services.agent.log.contains("camera-pass-1234"))

        let on = [Self.command, "03170101"], off = [Self.command, "03170100"]
        _ = try await client.manager("Leave", [.vardict([])])
        try await waitForWrites(services, camera, [on, off])
        // The hotspot is off now: joining again has the camera switch it on again.
        _ = try #require(try await client.manager("JoinAccessory", [.string(id), .vardict([])]).first)
        #expect(try services.bluez.gattLog(camera).writes == [on, off, on])
        _ = try await client.manager("Leave", [.vardict([])])
        try await waitForWrites(services, camera, [on, off, on, off])
        await client.close()
    }

    /// A picker that ends while the accessory is still switching its hotspot on (its client
    /// invalidates the session, or leaves the bus) has it switched off again: no record and no
    /// join would ever do it.
    @Test(arguments: [true, false])
    func aPickerEndingDuringTheHandoffSwitchesTheHotspotOffAgain(clientLeaves: Bool) async throws {
        let (services, camera) = try Self.start(answerDelayMs: 60_000)
        let client = try await services.client()
        let picker = try await TestPicker(on: client.bus, behaviour: .chooseDevice(address: Self.address))
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let session = try await client.openSession("com.gopro.camera")
        _ = try await session.activate()
        try await session.showPicker([Self.cameraItem])

        let on = [Self.command, "03170101"], off = [Self.command, "03170100"]
        try await waitForWrites(services, camera, [on])
        #expect(try await picker.wait(for: "SetupProgress").last?.arguments[1].string == "hotspotHandoff")
        if clientLeaves {
            await client.close()
        } else {
            _ = try await session.call("Invalidate")
        }
        try await waitForWrites(services, camera, [on, off])
        #expect(try services.storedRecords().isEmpty)
        #expect(services.agent.log.contains("handoff: \(Self.address) failed: cancelled"))
        if !clientLeaves { await client.close() }
    }

    /// Waits until the camera has seen exactly `writes` ("leaving switches the hotspot off").
    func waitForWrites(_ services: AgentServices, _ camera: String, _ writes: [[String]]) async throws {
        _ = try await poll(timeout: .seconds(30), every: .milliseconds(50)) {
            try services.bluez.gattLog(camera).writes == writes ? true : nil
        }
        #expect(try services.bluez.gattLog(camera).writes == writes)
    }

    /// Pairing runs over the agent's own connection, where its BlueZ pairing agent answers: a
    /// passkey the camera wants typed on it goes to the picker.
    @Test func aPasskeyToTypeOnTheAccessoryIsShownByThePicker() async throws {
        let (services, camera) = try Self.start()
        try services.bluez.setPairing(camera, agentName: AgentProcess.busName, passkey: 4242)
        let (client, picker, _, signals) = try await Self.pickCamera(services)
        #expect(signals.map(\.member).contains("AccessoryAdded"), "\(signals.map(\.member))")
        #expect(try services.bluez.gattLog(camera).agentCalls == [["DisplayPasskey", "accepted"]])
        // The picker hears from the agent on its own connection: no order with the client's signals.
        let shown: [TestPicker.Call] =
            try await poll(timeout: .seconds(30)) {
                let shown = picker.calls.filter { $0.member == "SetupProgress" && $0.arguments[1].string == "pairing" }
                return shown.isEmpty ? nil : shown
            } ?? []
        #expect(shown.first?.arguments[2]["passkey"]?.string == "004242", "\(picker.calls.map(\.member))")
        #expect(services.bluez.log.contains("RegisterAgent"), "the agent registers its pairing agent with BlueZ")
        await client.close()
    }

    /// Numeric comparison: the camera shows a number, and only the person can say this screen
    /// shows the same; the picker asks, and the pairing follows the answer.
    @Test(arguments: [TestPicker.Comparison.matches, .differs])
    func aNumberToCompareIsAskedOfThePersonThroughThePicker(_ comparison: TestPicker.Comparison) async throws {
        let (services, camera) = try Self.start()
        try services.bluez.setPairing(camera, agentName: AgentProcess.busName, confirm: 27_182)
        let client = try await services.client()
        let picker = try await TestPicker(
            on: client.bus, behaviour: .chooseDevice(address: Self.address), comparison: comparison)
        try await client.manager("RegisterPickerAgent", [.objectPath(TestPicker.path), .vardict([])])
        let session = try await client.openSession("com.gopro.camera")
        _ = try await session.activate()
        try await session.showPicker([Self.cameraItem])
        let signals = try await session.waitForDismiss()
        let asked = picker.calls.filter { $0.member == "ConfirmPasskey" }
        #expect(asked.map { $0.arguments.last?.string } == ["027182"], "\(picker.members)")
        #expect(asked.first?.arguments.first?.string == session.path)
        switch comparison {
        case .matches:
            #expect(try services.bluez.gattLog(camera).agentCalls == [["RequestConfirmation", "accepted"]])
            #expect(signals.map(\.member).contains("AccessoryAdded"), "\(signals.map(\.member))")
        case .differs:
            #expect(
                try services.bluez.gattLog(camera).agentCalls == [["RequestConfirmation", "org.bluez.Error.Rejected"]])
            #expect(
                signals.map(\.member) == [
                    "Activated", "PickerDidPresent", "PickerSetupBridging", "PickerSetupFailed", "PickerDidDismiss",
                ])
            let failure = signals.first { $0.member == "PickerSetupFailed" }?.arguments.first?["message"]?.string
            #expect(failure?.contains("did not confirm") == true, "\(failure ?? "")")
            #expect(try services.storedRecords().isEmpty)
        }
        await client.close()
    }

    @Test func aKioskPickHasNoOneToCompareANumberWithAndIsRefused() async throws {
        let services = try AgentServices(startAgent: false)
        try services.agent.installShippedProfile("gopro.json")
        try services.agent.writeKioskPolicy(kioskPolicy(profiles: ["com.gopro.camera"], users: [0]))
        let camera = try Self.addCamera(services.bluez, answer: [0x02, 0x17, 0x00])
        try services.agent.start()
        try services.bluez.setPairing(camera, agentName: AgentProcess.busName, confirm: 27_182)
        let client = try await services.client()
        let session = try await client.openSession("com.gopro.camera")
        _ = try await session.activate()
        try await session.showPicker([Self.cameraItem])
        let signals = try await session.waitForDismiss()
        #expect(signals.map(\.member).contains("PickerSetupFailed"), "\(signals.map(\.member))")
        #expect(try services.bluez.gattLog(camera).agentCalls == [["RequestConfirmation", "org.bluez.Error.Rejected"]])
        #expect(services.agent.log.contains("no person picks for session"), "\(services.agent.log)")
        #expect(try services.storedRecords().isEmpty)
        await client.close()
    }

    @Test func aCodeToTypeIntoThisMachineIsRefusedAndThePickFails() async throws {
        let (services, camera) = try Self.start()
        try services.bluez.setPairing(camera, agentName: AgentProcess.busName)
        let (client, _, _, signals) = try await Self.pickCamera(services)
        #expect(
            signals.map(\.member) == [
                "Activated", "PickerDidPresent", "PickerSetupBridging", "PickerSetupFailed", "PickerDidDismiss",
            ])
        #expect(try services.bluez.gattLog(camera).agentCalls == [["RequestPasskey", "org.bluez.Error.Rejected"]])
        #expect(try services.bluez.gattLog(camera).writes.isEmpty, "nothing is asked of an accessory that did not pair")
        let failure = signals.first { $0.member == "PickerSetupFailed" }?.arguments.first?["message"]?.string
        #expect(
            failure?.contains("asked for a code to be typed into this machine (RequestPasskey)") == true,
            "\(failure ?? "")")
        await client.close()
    }

    @Test func aHotspotThatFailsIsPickerSetupFailedAndNoRecord() async throws {
        let (services, _) = try Self.start(answer: [0x02, 0x17, 0x01])
        let (client, picker, _, signals) = try await Self.pickCamera(services)
        #expect(
            signals.map(\.member) == [
                "Activated", "PickerDidPresent", "PickerSetupBridging", "PickerSetupFailed", "PickerDidDismiss",
            ])
        let failure = try #require(signals.first { $0.member == "PickerSetupFailed" }?.arguments.first)
        #expect(failure["message"]?.string?.contains("failed to start (state 021701)") == true, "\(failure)")
        #expect(try services.storedRecords().isEmpty)
        // The picker hears from the agent on its own connection: no order with the client's signals.
        #expect(
            try await picker.wait(for: "Cancel").contains { $0.member == "Cancel" },
            "the picker is told the setup failed")
        await client.close()
    }

    /// Removing the record of an accessory the agent paired unpairs it, as Apple's removal does:
    /// BlueZ forgets the device, and the bond is no longer recorded.
    @Test func removingThePairedCamerasRecordUnpairsIt() async throws {
        let (services, camera) = try Self.start()
        let (client, _, _, signals) = try await Self.pickCamera(services)
        let added = try #require(signals.first { $0.member == "AccessoryAdded" }?.arguments.first)
        let id = try #require(added["id"]?.string)
        #expect(try services.bluez.gattLog(camera).paired)
        _ = try await client.manager("RemoveAccessory", [.string(id)])
        let gone = try await poll(timeout: .seconds(30), every: .milliseconds(100)) {
            (try? services.bluez.gattLog(camera)) == nil ? true : nil
        }
        #expect(gone == true, "BlueZ still knows the camera: \(services.agent.log)")
        let bonds = try String(
            contentsOf: services.agent.stateDirectory.appendingPathComponent("bonds.json"), encoding: .utf8)
        #expect(!bonds.contains(Self.address), "\(bonds)")
        #expect(services.agent.log.contains("unpaired with record"), "\(services.agent.log)")
        await client.close()
    }

    /// A bond answers whoever connects, so the camera paired for one user is neither handed
    /// off to another (nothing is written to it, nothing recorded) nor adopted in their
    /// migration, unless polkit lets that user manage others' accessories. A camera paired
    /// outside the agent counts as someone else's too.
    @Test(arguments: [false, true])
    func aCameraPairedForAnotherUserIsNotUsedForThisOne(pairedOutsideTheAgent: Bool) async throws {
        let (services, camera) = try Self.start()
        try services.polkit.allow(["io.accessorysetup.open-session", "io.accessorysetup.authorize"])
        let fields = #""name": "GoPro camera", "descriptor": {"bluetoothServiceUUID": "\#(Self.gopro)"}"#
        let pick = ["pick", "com.gopro.camera", "[{\(fields)}]", "--picker", Self.address]
        if pairedOutsideTheAgent {
            try services.bluez.call(camera, "org.bluez.Device1", "Pair", [])
        } else {
            let owner = try systemUser("nobody")
            let first = try await services.runClient(uid: owner, pick)
            #expect(first.objects.contains { $0["event"] as? String == "AccessoryAdded" }, "\(first)")
            let bonds = try String(
                contentsOf: services.agent.stateDirectory.appendingPathComponent("bonds.json"), encoding: .utf8)
            #expect(bonds.contains(Self.address) && bonds.contains("\(owner)"), "\(bonds)")
        }
        let before = try services.bluez.gattLog(camera)
        let other = try systemUser("daemon")
        let refused = try await services.runClient(uid: other, pick)
        let failure = refused.objects.first { $0["event"] as? String == "PickerSetupFailed" }
        let message = ((failure?["args"] as? [Any])?.first as? [String: Any])?["message"] as? String
        #expect(message?.contains("paired with this machine for another user") == true, "\(refused)")
        #expect(try services.bluez.gattLog(camera).writes == before.writes, "nothing is asked of the camera")
        #expect(try services.bluez.gattLog(camera).pairs == before.pairs)
        let migration = try await services.runClient(
            uid: other, ["pick", "com.gopro.camera", "[{\(fields), \"peripheralAddress\": \"\(Self.address)\"}]"])
        let adopted = migration.objects.first { $0["event"] as? String == "MigrationComplete" }?["args"] as? [[Any]]
        #expect(adopted?.first?.isEmpty == true, "\(migration)")
        #expect(try services.storedRecords().allSatisfy { $0.owner.uid != other })

        try services.polkit.allow([
            "io.accessorysetup.open-session", "io.accessorysetup.authorize", "io.accessorysetup.manage-others",
        ])
        let allowed = try await services.runClient(uid: other, pick)
        #expect(allowed.objects.contains { $0["event"] as? String == "AccessoryAdded" }, "\(allowed)")
        #expect(services.agent.log.contains("is used for user \(other) (manage-others)"))
    }
}
