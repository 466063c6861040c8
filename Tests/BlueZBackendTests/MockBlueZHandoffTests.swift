import AccessoryCore
import Foundation
import ServiceHarness
import Testing

@testable import BlueZBackend

/// The accessory side of a Bluetooth-to-Wi-Fi handoff against the project's BlueZ template on
/// a private bus: a device whose hotspot characteristics need a paired link.
@Suite(.serialized) final class MockBlueZHandoffTests {
    static let service = "b5f90001-aa8d-11e3-9046-0002a5d5c51b"
    static let ssid = "b5f90002-aa8d-11e3-9046-0002a5d5c51b"
    static let passphrase = "b5f90003-aa8d-11e3-9046-0002a5d5c51b"
    static let security = "b5f90006-aa8d-11e3-9046-0002a5d5c51b"
    static let command = "b5f90072-aa8d-11e3-9046-0002a5d5c51b"
    static let response = "b5f90073-aa8d-11e3-9046-0002a5d5c51b"
    static let on: [UInt8] = [0x03, 0x17, 0x01, 0x01]
    static let off: [UInt8] = [0x03, 0x17, 0x01, 0x00]

    let mock: BlueZMock
    let address: MACAddress

    init() throws {
        mock = try BlueZMock()
        try mock.addAdapter()
        address = try MACAddress("D4:D9:19:AA:BB:CC")
    }

    deinit { mock.stop() }

    /// A camera-like device: SSID and passphrase readable over a paired link, a command
    /// characteristic, and a response characteristic that indicates `answer` after `on`.
    func addCamera(
        answer: [UInt8]? = [0x02, 0x17, 0x00], stateFlags: [String] = ["encrypt-indicate"], security: [UInt8]? = nil
    ) throws -> String {
        var characteristics: [BlueZMock.GATTDeviceSpec.Characteristic] = [
            .init(Self.ssid, flags: ["encrypt-read"], value: Array("GP24501234".utf8)),
            .init(Self.passphrase, flags: ["encrypt-read"], value: Array("camera-pass-1234".utf8) + [0]),
            .init(Self.command, flags: ["encrypt-write"]),
            .init(Self.response, flags: stateFlags),
        ]
        if let security { characteristics.append(.init(Self.security, flags: ["encrypt-read"], value: security)) }
        let answers =
            answer.map {
                [
                    BlueZMock.GATTDeviceSpec.Answer(
                        write: Self.on, characteristic: Self.response, value: $0, delayMs: 150)
                ]
            } ?? []
        return try mock.addGATTDevice(
            address.description, name: "GoPro 1234",
            spec: .init(
                service: Self.service, advertised: ["0000fea6-0000-1000-8000-00805f9b34fb"],
                characteristics: characteristics, answers: answers))
    }

    func handoff(
        pairing: BluetoothHandoff.Pairing = .required, security: Bool = false, readyTimeout: Duration = .seconds(30)
    ) throws -> BluetoothHandoff {
        BluetoothHandoff(
            service: try BluetoothUUID(Self.service), pairing: pairing, ssid: try BluetoothUUID(Self.ssid),
            passphrase: try BluetoothUUID(Self.passphrase), security: security ? try BluetoothUUID(Self.security) : nil,
            switchOn: .init(characteristic: try BluetoothUUID(Self.command), value: Self.on),
            switchOff: .init(characteristic: try BluetoothUUID(Self.command), value: Self.off),
            state: .init(
                characteristic: try BluetoothUUID(Self.response), ready: [[0x02, 0x17, 0x00]], failed: [[0x02, 0x17]]),
            readyTimeout: readyTimeout)
    }

    func client() async throws -> BlueZClient {
        try await BlueZClient.connect(busAddress: mock.bus.address)
    }

    @Test func pairsSwitchesOnWaitsForTheIndicationReadsAndDisconnects() async throws {
        let device = try addCamera()
        let steps = Locked<[HotspotHandoffStep]>([])
        let revealed = try await client().revealHotspot(
            address, handoff: try handoff(), progress: { step in steps.withLock { $0.append(step) } })
        #expect(revealed.ssid.escaped == "GP24501234")
        #expect(revealed.passphrase?.reveal() == "camera-pass-1234", "the C string's NUL is not part of the passphrase")
        #expect(revealed.security == nil)
        #expect(
            steps.withLock { $0 } == [
                .pairing, .connecting, .switchingOn, .waitingForHotspot, .reading, .disconnecting,
            ])
        let log = try mock.gattLog(device)
        #expect(log.paired && log.pairs == 1)
        #expect(log.writes == [[Self.command, "03170101"]])
        #expect(log.reads == [Self.ssid, Self.passphrase])
        #expect(!log.connected)
    }

    @Test func anUnpairedClientIsRefusedByTheDevice() async throws {
        let device = try addCamera()
        await #expect(throws: HotspotHandoffError.bluetooth(.notAuthorized("Insufficient encryption"))) {
            _ = try await self.client().revealHotspot(self.address, handoff: try self.handoff(pairing: .none))
        }
        let log = try mock.gattLog(device)
        #expect(log.pairs == 0 && log.writes.isEmpty && !log.connected)
    }

    @Test func aFailedHotspotIsSwitchedOffAgain() async throws {
        let device = try addCamera(answer: [0x02, 0x17, 0x01])
        await #expect(throws: HotspotHandoffError.hotspotFailed([0x02, 0x17, 0x01])) {
            _ = try await self.client().revealHotspot(self.address, handoff: try self.handoff())
        }
        let log = try mock.gattLog(device)
        #expect(log.writes == [[Self.command, "03170101"], [Self.command, "03170100"]])
        #expect(log.reads.isEmpty, "nothing is read from a hotspot that failed")
        #expect(!log.connected)
    }

    @Test func aHotspotThatNeverComesUpTimesOut() async throws {
        let device = try addCamera(answer: nil)
        await #expect(
            throws: HotspotHandoffError.hotspotNotReady(seconds: 1),
            "the error names the one-second wait asked for, not a default"
        ) {
            _ = try await self.client().revealHotspot(
                self.address, handoff: try self.handoff(readyTimeout: .seconds(1)))
        }
        #expect(try mock.gattLog(device).writes.last == [Self.command, "03170100"])
    }

    /// The first link waits half the timeout, by design; the second has the other half, which
    /// under a sanitizer with the whole suite beside it must be more than a few seconds.
    @Test func aLinkWhoseServicesNeverResolveIsDroppedAndMadeOnceMore() async throws {
        let device = try addCamera()
        try mock.setUnresolvedLinks(device, 1)
        let client = try await client()
        let connected = try await client.connect(address, timeout: .seconds(30))
        #expect(connected.services.contains { $0.uuid == (try? BluetoothUUID(Self.service)) }, "\(connected.services)")
        let log = try mock.gattLog(device)
        #expect(log.connects == 2 && log.connected)
        try await client.disconnect(connected)
    }

    @Test func servicesUnresolvedOnBothLinksTimeOutWithNoLinkLeft() async throws {
        let device = try addCamera()
        try mock.setUnresolvedLinks(device, 2)
        await #expect(throws: BluetoothError.timedOut("resolving the GATT services of \(address)", seconds: 2)) {
            _ = try await self.client().connect(self.address, timeout: .seconds(2))
        }
        let log = try mock.gattLog(device)
        #expect(log.connects == 2 && !log.connected)
    }

    @Test func aReadableStateAlreadyReadyNeedsNoSwitchingOn() async throws {
        let device = try mock.addGATTDevice(
            address.description, name: "Open Cam",
            spec: .init(
                service: Self.service, advertised: [],
                characteristics: [
                    .init(Self.ssid, flags: ["read"], value: Array("Cam-Setup".utf8)),
                    .init(Self.passphrase, flags: ["read"], value: Array("open-cam-pass".utf8)),
                    .init(Self.command, flags: ["write"]),
                    .init(Self.response, flags: ["read"], value: [0x02, 0x17, 0x00]),
                ]))
        let revealed = try await client().revealHotspot(address, handoff: try handoff(pairing: .none))
        #expect(revealed.ssid.escaped == "Cam-Setup")
        let log = try mock.gattLog(device)
        #expect(log.writes.isEmpty)
        #expect(log.reads == [Self.response, Self.ssid, Self.passphrase])
        #expect(!log.paired)
    }

    @Test func aReadOnlyStateIsAskedUntilReady() async throws {
        let device = try addCamera(stateFlags: ["encrypt-read"])
        let revealed = try await client().revealHotspot(address, handoff: try handoff())
        #expect(revealed.ssid.escaped == "GP24501234")
        let reads = try mock.gattLog(device).reads
        #expect(
            reads.filter { $0 == Self.response }.count >= 2, "the state is read before the switch and after: \(reads)")
    }

    @Test func theSecurityTheDeviceNamesIsRead() async throws {
        _ = try addCamera(security: [0x02])
        let revealed = try await client().revealHotspot(address, handoff: try handoff(security: true))
        #expect(revealed.security == .wpa3Personal)
        let policy = HotspotPolicy(security: .wpa2Personal, passphrase: .handoff)
        #expect(try revealed.configuration(policy: policy).security == .wpa3Personal(Secret("camera-pass-1234")))
    }

    @Test func anUnknownSecurityCodeIsAnError() async throws {
        _ = try addCamera(security: [0x09])
        await #expect(throws: HotspotHandoffError.unknownSecurity([0x09])) {
            _ = try await self.client().revealHotspot(self.address, handoff: try self.handoff(security: true))
        }
    }

    @Test func aDeviceWithoutTheServiceIsNamed() async throws {
        try mock.addImprovDevice(address.description)
        await #expect(throws: HotspotHandoffError.notHandoffDevice(address, missing: try BluetoothUUID(Self.service))) {
            _ = try await self.client().revealHotspot(self.address, handoff: try self.handoff(pairing: .none))
        }
    }

    /// A camera laid out as Open GoPro documents it: the hotspot's name in one service, the
    /// command and its response in another.
    @Test func theShippedGoProProfileRunsAgainstACameraWithTwoServices() async throws {
        let profile = try AccessoryProfile.load(contentsOf: Self.profile("gopro.json"))
        let handoff = try #require(profile.bluetoothHandoff)
        let control = "0000fea6-0000-1000-8000-00805f9b34fb"
        let device = try mock.addGATTDevice(
            address.description, name: "GoPro 1234",
            spec: .init(
                service: Self.service, advertised: [control],
                characteristics: [
                    .init(Self.ssid, flags: ["encrypt-read"], value: Array("GP24501234".utf8)),
                    .init(Self.passphrase, flags: ["encrypt-read"], value: Array("camera-pass-1234".utf8)),
                    .init(Self.command, flags: ["encrypt-write"], service: control),
                    .init(Self.response, flags: ["encrypt-notify"], service: control),
                ], answers: [.init(write: Self.on, characteristic: Self.response, value: [0x02, 0x17, 0x00])]))
        let revealed = try await client().revealHotspot(address, handoff: handoff)
        #expect(revealed.ssid.escaped == "GP24501234")
        let joining = try revealed.configuration(policy: try #require(profile.hotspot))
        #expect(joining.security == .wpa2Personal(Secret("camera-pass-1234")))
        #expect(try mock.gattLog(device).writes == [[Self.command, "03170101"]])
    }

    /// An accessory implementing docs/hotspot-handoff.md, run with the shipped reading of it.
    @Test func theOpenHotspotHandoffProfileRunsAgainstAnAccessoryThatImplementsIt() async throws {
        let profile = try AccessoryProfile.load(contentsOf: Self.profile("hotspot-handoff.json"))
        let handoff = try #require(profile.bluetoothHandoff)
        let uuid = { (number: String) in "6e1d\(number)-8c3a-4b57-9f0e-2a7c94d1b360" }
        let device = try mock.addGATTDevice(
            address.description, name: "Printer",
            spec: .init(
                service: uuid("0001"), advertised: [uuid("0001")],
                characteristics: [
                    .init(
                        uuid("0002"), flags: ["encrypt-read"], value: Array("PRN-Setup".utf8),
                        description: "hotspot-ssid"),
                    .init(
                        uuid("0003"), flags: ["encrypt-read"], value: Array("printer-pass".utf8),
                        description: "hotspot-passphrase"),
                    .init(uuid("0004"), flags: ["encrypt-read"], value: [0x02], description: "hotspot-security"),
                    .init(uuid("0005"), flags: ["encrypt-write"], description: "hotspot-control"),
                    .init(
                        uuid("0006"), flags: ["encrypt-read", "encrypt-notify"], value: [0x00],
                        description: "hotspot-state"),
                ], answers: [.init(write: [0x01], characteristic: uuid("0006"), value: [0x02], delayMs: 200)]))
        let revealed = try await client().revealHotspot(address, handoff: handoff)
        let joining = try revealed.configuration(policy: try #require(profile.hotspot))
        #expect(joining.target == .ssid(try SSID("PRN-Setup")))
        #expect(joining.security == .wpa3Personal(Secret("printer-pass")), "the accessory's security byte wins")
        let log = try mock.gattLog(device)
        #expect(log.paired && log.writes == [[uuid("0005"), "01"]])
        #expect(log.reads == [uuid("0006"), uuid("0002"), uuid("0003"), uuid("0004")])
    }

    static func profile(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../profiles/\(name)")
            .standardizedFileURL
    }

    @Test func switchingOffWritesTheOffValue() async throws {
        let device = try addCamera()
        try await client().switchHotspotOff(address, handoff: try handoff())
        let log = try mock.gattLog(device)
        #expect(log.writes == [[Self.command, "03170100"]])
        #expect(log.paired && !log.connected)
    }
}
