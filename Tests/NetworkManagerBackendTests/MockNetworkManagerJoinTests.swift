import AccessoryCore
import Foundation
import ServiceHarness
import Testing

@testable import NetworkManagerBackend

/// Joining, leaving, forgetting and listing against python-dbusmock's NetworkManager, with a
/// home network the device is on before each join.
@Suite(.serialized) final class MockNetworkManagerJoinTests {
    let mock: NetworkManagerMock
    let device: String

    init() throws {
        mock = try NetworkManagerMock()
        device = try mock.addWiFiDeviceOnHomeNet()
    }

    deinit { mock.stop() }

    func client() async throws -> NetworkManagerClient {
        try await NetworkManagerClient.connect(busAddress: mock.bus.address)
    }

    func configuration(
        _ ssid: String, _ security: HotspotSecurity = .open, joinOnce: Bool = true, lifetime: Int? = nil,
        hidden: Bool = false
    ) throws -> HotspotConfiguration {
        try HotspotConfiguration(
            target: .ssid(SSID(ssid)), security: security, joinOnce: joinOnce, lifetimeInDays: lifetime, hidden: hidden)
    }

    /// Only the person's own profile is left, and the device is back on it.
    func expectBackHome(_ comment: Comment? = nil) throws {
        #expect(try mock.connectionPaths().count == 1, comment)
        #expect(try mock.activeConnectionID(on: device) == "HomeNet", comment)
        #expect(
            try mock.property("/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager", "Checkpoints")
                .contains("@ao []"), comment)
    }

    /// With a second Wi-Fi device, a join without a named device takes the one not carrying
    /// the default route: the home network stays up on the other, and leaving restores nothing
    /// there. A device named is taken as named.
    @Test func aSecondRadioTakesTheJoinAndTheHomeNetworkStaysUp() async throws {
        let second = try mock.addWiFiDevice("wlan1")
        try mock.addAccessPoint(second, name: "plug2", ssid: "Acme-Setup", bssid: "02:00:00:00:00:10", strength: 60)
        try mock.addAccessPoint(device, name: "plug", ssid: "Acme-Setup", bssid: "02:00:00:00:00:10", strength: 60)
        let client = try await client()
        let joined = try await client.join(try configuration("Acme-Setup"), options: JoinOptions())
        #expect(joined.device == "wlan1")
        #expect(joined.keptDevice == "wlan0")
        #expect(joined.keptConnection == "HomeNet")
        #expect(joined.previousConnection == nil)
        #expect(try mock.activeConnectionID(on: second) == "Accessory Acme-Setup")
        #expect(try mock.activeConnectionID(on: device) == "HomeNet", "the home network stayed up")
        let left = try await client.leave(device: "wlan1")
        #expect(left.restored == nil && left.deleted)
        #expect(try mock.activeConnectionID(on: device) == "HomeNet")
        #expect(try mock.activeConnectionID(on: second) == nil)

        var named = JoinOptions()
        named.device = "wlan0"
        let onHome = try await client.join(try configuration("Acme-Setup"), options: named)
        #expect(onHome.device == "wlan0" && onHome.keptDevice == nil && onHome.previousConnection == "HomeNet")
        _ = try await client.leave(device: "wlan0")
        try expectBackHome()
    }

    /// Two access points broadcast the accessory's SSID: the join goes to the one picked, the
    /// weaker, and its profile is locked to that BSSID; with only the other in range it fails,
    /// naming both, and adds nothing. Neither the route nor the DNS of the hotspot is taken.
    @Test func theJoinGoesOnlyToTheAccessPointPicked() async throws {
        let picked = try mock.addAccessPoint(
            device, name: "plug", ssid: "Acme-Setup", bssid: "02:00:00:00:00:10", strength: 40)
        try mock.addAccessPoint(device, name: "twin", ssid: "Acme-Setup", bssid: "02:00:00:00:00:66", strength: 90)
        let client = try await client()
        var pinned = try configuration("Acme-Setup")
        pinned.bssid = try MACAddress("02:00:00:00:00:10")
        let joined = try await client.join(pinned, options: JoinOptions())
        let request = try #require(mock.log.split(separator: "\n").last { $0.contains("AddAndActivateConnection") })
        #expect(request.contains(picked), "NetworkManager is asked for the access point picked: \(request)")
        #expect(joined.ssid == (try SSID("Acme-Setup")))
        let settings = try #require(try mock.connectionSettings().first { $0.contains("Accessory Acme-Setup") })
        #expect(settings.contains("'bssid': <[byte 0x02, 0x00, 0x00, 0x00, 0x00, 0x10]>"), "\(settings)")
        #expect(settings.contains("'ignore-auto-dns': <true>"), "\(settings)")
        #expect(settings.contains("'never-default': <true>"), "\(settings)")
        _ = try await client.leave(device: "wlan0")

        try mock.removeAccessPoint(device, picked)
        // libnm hears of the removal on its own thread: the join is tried once the client no
        // longer lists the access point (under the address sanitizer it once still did, and joined).
        let gone = try MACAddress("02:00:00:00:00:10")
        var listed = true
        for _ in 0..<500 where listed {
            listed = try await client.accessPoints(device: "wlan0", rescan: false, probing: []).contains {
                $0.bssid == gone
            }
            if listed { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(!listed, "the client still lists the removed access point after 10 s")
        await #expect(
            throws: HotspotError.pickedAccessPointNotFound(
                try SSID("Acme-Setup"), bssid: try MACAddress("02:00:00:00:00:10"),
                others: [try MACAddress("02:00:00:00:00:66")])
        ) {
            try await client.join(pinned, options: JoinOptions())
        }
        try expectBackHome()
    }

    @Test func joinOnceThenLeaveRestoresTheHomeNetwork() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Acme-Setup", bssid: "02:00:00:00:00:10", strength: 60)
        let client = try await client()
        var options = JoinOptions()
        let record = UUID()
        options.recordID = record
        let joined = try await client.join(try configuration("Acme-Setup"), options: options)
        #expect(joined.device == "wlan0")
        #expect(joined.ssid == (try SSID("Acme-Setup")))
        #expect(joined.connectionID == "Accessory Acme-Setup")
        #expect(joined.previousConnection == "HomeNet")
        #expect(joined.restoreDeadline != nil)
        #expect(try mock.activeConnectionID(on: device) == "Accessory Acme-Setup")

        let stored = try #require(try await client.storedProfile(uuid: joined.connectionUUID))
        #expect(stored.profile.ssid == Array("Acme-Setup".utf8))
        #expect(stored.profile.keyManagement == nil)
        #expect(stored.autoconnect == false)
        #expect(stored.ipv4NeverDefault && stored.ipv6NeverDefault)
        #expect(stored.profile.userData[ProfileTag.managed] == "1")
        #expect(stored.profile.userData[ProfileTag.joinOnce] == "1")
        #expect(stored.profile.userData[ProfileTag.recordID] == record.uuidString.lowercased())
        #expect(
            stored.profile.userData[ProfileTag.checkpoint]?.hasPrefix("/org/freedesktop/NetworkManager/Checkpoint/")
                == true)
        #expect(stored.profile.userData[ProfileTag.previousConnection] != nil)
        #expect(mock.log.contains("AddAndActivateConnection2"), "join-once uses AddAndActivateConnection2")
        #expect(mock.log.contains("\"persist\": \"memory\""), "join-once profiles are never written to disk")

        let configured = try await client.configuredHotspots()
        #expect(configured.map(\.connectionID) == ["Accessory Acme-Setup"])
        #expect(configured.first?.active == true)
        #expect(configured.first?.recordID == record)

        let left = try await client.leave(device: nil)
        #expect(left == LeftHotspot(device: "wlan0", ssid: try SSID("Acme-Setup"), deleted: true, restored: "HomeNet"))
        try expectBackHome()
        #expect(try await client.configuredHotspots().isEmpty)
    }

    /// One lost handshake makes NetworkManager fail the home network's activation with
    /// `no-secrets` and block it from connecting by itself: leaving tries again.
    @Test func leaveBringsTheHomeNetworkBackWhenItsFirstActivationFails() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Acme-Setup", bssid: "02:00:00:00:00:10", strength: 60)
        let client = try await client()
        _ = try await client.join(try configuration("Acme-Setup"), options: JoinOptions())
        try mock.failNextActivation(of: "HomeNet", deviceReason: 7)
        let left = try await client.leave(device: nil)
        #expect(left.restored == "HomeNet")
        // Past the moment the failed attempt is taken down.
        try await Task.sleep(for: .milliseconds(500))
        #expect(try mock.activatedConnectionID(on: device) == "HomeNet")
        try expectBackHome("after a failed first activation of the home network")
    }

    /// NetworkManager deletes an in-memory profile by itself once its connection is down and
    /// the checkpoint is gone; leaving's own delete then fails, and that is no failure.
    @Test func leaveCountsAProfileNetworkManagerDeletedItselfAsDeleted() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Acme-Setup", bssid: "02:00:00:00:00:10", strength: 60)
        let client = try await client()
        _ = try await client.join(try configuration("Acme-Setup"), options: JoinOptions())
        try mock.raceDeletes(of: "Acme-Setup")
        let left = try await client.leave(device: nil)
        #expect(left.deleted && left.restored == "HomeNet")
        try expectBackHome()
    }

    /// A listing's clean-up may destroy the checkpoint while a leave waits for the home
    /// network; the leave's own destroy then hears "does not exist", and that is no failure.
    @Test func leaveCountsACheckpointDestroyedMeanwhileAsDestroyed() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Acme-Setup", bssid: "02:00:00:00:00:10", strength: 60)
        let client = try await client()
        _ = try await client.join(try configuration("Acme-Setup"), options: JoinOptions())
        try mock.raceCheckpointDestroy()
        let left = try await client.leave(device: nil)
        #expect(left.deleted && left.restored == "HomeNet")
        #expect(try mock.checkpointPaths().isEmpty)
        try expectBackHome()
    }

    /// A listing while a leave waits for the home network (the agent purges on its own
    /// schedule) leaves the joined profile to the leave, which destroys its checkpoint last.
    @Test func aListingDuringALeaveLeavesItsCheckpointToTheLeave() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Acme-Setup", bssid: "02:00:00:00:00:10", strength: 60)
        let client = try await client()
        _ = try await client.join(try configuration("Acme-Setup"), options: JoinOptions())
        try mock.failNextActivation(of: "HomeNet", deviceReason: 7)
        let destroys = { self.mock.log.matches(of: #/ CheckpointDestroy /#).count }
        let finished = Locked(false)
        let leaving = Task {
            defer { finished.withLock { $0 = true } }
            return try await client.leave(device: nil)
        }
        // The listing comes once the leave has taken the accessory's connection down and waits
        // for the home network. The leave runs on the client's own thread: a test task that the
        // cooperative pool leaves waiting may find it done, and then there is nothing to check.
        _ = try await poll(timeout: .seconds(30)) { self.mock.log.contains("DeactivateConnection") ? true : nil }
        _ = try await client.configuredHotspots()
        let leaveWasRunning = !finished.withLock { $0 }
        let destroyedMeanwhile = destroys()
        if leaveWasRunning {
            #expect(destroyedMeanwhile == 0, "the listing destroyed the checkpoint of a join being left")
        }
        let left = try await leaving.value
        #expect(left.restored == "HomeNet")
        #expect(destroys() == 1)
        #expect(try mock.checkpointPaths().isEmpty)
        #expect(try await client.configuredHotspots().isEmpty)
    }

    /// When the home network cannot come back (its access point is gone), leaving says so by
    /// naming no network it is back on, and does not try for ever.
    @Test func leaveNamesNoNetworkWhenTheHomeNetworkDoesNotComeBack() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Acme-Setup", bssid: "02:00:00:00:00:10", strength: 60)
        let client = try await client()
        _ = try await client.join(try configuration("Acme-Setup"), options: JoinOptions())
        try mock.failActivations(of: "HomeNet", deviceReason: 53)
        let activations = { self.mock.log.matches(of: #/ ActivateConnection /#).count }
        let before = activations()
        let left = try await client.leave(device: nil)
        #expect(left.restored == nil)
        #expect(left.notRestored == "HomeNet")
        #expect(activations() - before == 1, "a network out of range (ssid-not-found) is tried once, not again")
        #expect(left.ssid == (try SSID("Acme-Setup")))
        #expect(try mock.activeConnectionID(on: device) != "Accessory Acme-Setup")
    }

    @Test func prefixJoinPicksTheStrongestMatchAfterAFreshScan() async throws {
        try mock.addAccessPoint(device, name: "a1", ssid: "Acme-1111", bssid: "02:00:00:00:00:11", strength: 40)
        try mock.addAccessPoint(device, name: "a2", ssid: "Acme-2222", bssid: "02:00:00:00:00:12", strength: 80)
        try mock.addAccessPoint(device, name: "other", ssid: "Other-3333", bssid: "02:00:00:00:00:13", strength: 95)
        let client = try await client()
        let joined = try await client.join(
            HotspotConfiguration(target: .ssidPrefix(SSID("Acme-")), joinOnce: true), options: JoinOptions())
        #expect(joined.ssid == (try SSID("Acme-2222")))
        #expect(try mock.scanRequests() == [[]], "the cached results had never been scanned, so one full scan ran")
        _ = try await client.leave(device: "wlan0")
        try expectBackHome()
    }

    @Test func persistentProfileOutlivesLeaveUntilForgotten() async throws {
        try mock.addAccessPoint(device, name: "cam", ssid: "Cam-Setup", bssid: "02:00:00:00:00:20", security: .wpa2)
        let client = try await client()
        let joined = try await client.join(
            try configuration("Cam-Setup", .wpa2Personal(Secret("camera-pass")), joinOnce: false, lifetime: 7),
            options: JoinOptions())
        #expect(mock.log.contains("\"persist\": \"disk\""), "a stored profile is written to disk")
        let stored = try #require(try await client.storedProfile(uuid: joined.connectionUUID))
        #expect(stored.profile.keyManagement == "wpa-psk")
        #expect(stored.profile.psk == Secret("camera-pass"))
        let expires = try #require(stored.profile.expires)
        #expect(abs(expires.timeIntervalSinceNow - 7 * 86_400) < 60)

        let left = try await client.leave(device: nil)
        #expect(left.deleted == false)
        #expect(try mock.activeConnectionID(on: device) == "HomeNet")
        let configured = try await client.configuredHotspots()
        #expect(configured.map(\.ssid) == [try SSID("Cam-Setup")])
        #expect(configured.first?.active == false)
        #expect(configured.first?.joinOnce == false)

        let forgotten = try await client.forget(ssid: try SSID("Cam-Setup"))
        #expect(forgotten.map(\.connectionUUID) == [joined.connectionUUID])
        try expectBackHome()
    }

    /// An expired profile in use stays connected; once left, the next run removes it.
    @Test func anExpiredProfileInUseIsKeptUntilLeft() async throws {
        try mock.addAccessPoint(device, name: "cam", ssid: "Cam-Setup", bssid: "02:00:00:00:00:20", security: .wpa2)
        let client = try await client()
        let joined = try await client.join(
            try configuration("Cam-Setup", .wpa2Personal(Secret("camera-pass")), joinOnce: false, lifetime: 7),
            options: JoinOptions())
        let later = Date(timeIntervalSinceNow: 8 * 86_400)
        let whileJoined = try await client.removeExpiredHotspots(at: later)
        #expect(whileJoined.removed.isEmpty)
        #expect(whileJoined.inUse.map(\.connectionUUID) == [joined.connectionUUID])
        #expect(try mock.activeConnectionID(on: device) == "Accessory Cam-Setup")

        _ = try await client.leave(device: nil)
        let afterLeaving = try await client.removeExpiredHotspots(at: later)
        #expect(afterLeaving.removed.map(\.connectionUUID) == [joined.connectionUUID])
        #expect(afterLeaving.inUse.isEmpty)
        try expectBackHome()
    }

    @Test func aStoredJoinOfTheSameSSIDReplacesTheProfileItStoredBefore() async throws {
        try mock.addAccessPoint(device, name: "cam", ssid: "Cam-Setup", bssid: "02:00:00:00:00:20", security: .wpa2)
        let client = try await client()
        let first = try await client.join(
            try configuration("Cam-Setup", .wpa2Personal(Secret("old-pass-1")), joinOnce: false, lifetime: 7),
            options: JoinOptions())
        _ = try await client.leave(device: nil)
        let second = try await client.join(
            try configuration("Cam-Setup", .wpa2Personal(Secret("new-pass-2")), joinOnce: false), options: JoinOptions()
        )
        #expect(
            try await client.storedProfile(uuid: first.connectionUUID) != nil,
            "kept while the checkpoint may undo the join")
        _ = try await client.leave(device: nil)

        let configured = try await client.configuredHotspots()
        #expect(configured.map(\.connectionUUID) == [second.connectionUUID], "one stored profile per SSID, the newest")
        #expect(try await client.storedProfile(uuid: first.connectionUUID) == nil)
        let stored = try #require(try await client.storedProfile(uuid: second.connectionUUID))
        #expect(stored.profile.psk == Secret("new-pass-2"))
        #expect(stored.profile.expires == nil, "the new configuration's lifetime, not the old one's")
        #expect(try mock.activeConnectionID(on: device) == "HomeNet")
    }

    @Test func aStoredJoinWithoutACheckpointReplacesTheProfileStoredBeforeOnceItIsUp() async throws {
        try mock.addAccessPoint(device, name: "cam", ssid: "Cam-Setup", bssid: "02:00:00:00:00:20", security: .wpa2)
        let client = try await client()
        var withoutCheckpoint = JoinOptions()
        withoutCheckpoint.restoreAfter = nil
        let first = try await client.join(
            try configuration("Cam-Setup", .wpa2Personal(Secret("old-pass-1")), joinOnce: false),
            options: withoutCheckpoint)
        _ = try await client.leave(device: nil)
        let second = try await client.join(
            try configuration("Cam-Setup", .wpa2Personal(Secret("new-pass-2")), joinOnce: false),
            options: withoutCheckpoint)
        #expect(try await client.configuredHotspots().map(\.connectionUUID) == [second.connectionUUID])
        #expect(try await client.storedProfile(uuid: first.connectionUUID) == nil)
    }

    @Test func aStoredJoinLeavesTheProfileInUseOnAnotherDevice() async throws {
        let second = try mock.addWiFiDevice("wlan1")
        try mock.addAccessPoint(device, name: "cam", ssid: "Cam-Setup", bssid: "02:00:00:00:00:20", security: .wpa2)
        try mock.addAccessPoint(second, name: "cam1", ssid: "Cam-Setup", bssid: "02:00:00:00:00:20", security: .wpa2)
        let client = try await client()
        var onSecond = JoinOptions()
        onSecond.device = "wlan1"
        let first = try await client.join(
            try configuration("Cam-Setup", .wpa2Personal(Secret("camera-pass")), joinOnce: false), options: onSecond)
        let again = try await client.join(
            try configuration("Cam-Setup", .wpa2Personal(Secret("camera-pass")), joinOnce: false),
            options: JoinOptions())
        #expect(again.device == "wlan0")
        _ = try await client.leave(device: "wlan0")
        #expect(
            Set(try await client.configuredHotspots().map(\.connectionUUID)) == [
                first.connectionUUID, again.connectionUUID,
            ])
    }

    @Test func aStoredJoinThatFailsKeepsTheProfileStoredBefore() async throws {
        try mock.addAccessPoint(device, name: "cam", ssid: "Cam-Setup", bssid: "02:00:00:00:00:20", security: .wpa2)
        let client = try await client()
        let first = try await client.join(
            try configuration("Cam-Setup", .wpa2Personal(Secret("old-pass-1")), joinOnce: false), options: JoinOptions()
        )
        _ = try await client.leave(device: nil)
        try mock.failActivations(of: "Cam-Setup", deviceReason: 53)
        await #expect(throws: HotspotError.self) {
            try await client.join(
                try self.configuration("Cam-Setup", .wpa2Personal(Secret("wrong-pass")), joinOnce: false),
                options: JoinOptions())
        }
        #expect(try await client.configuredHotspots().map(\.connectionUUID) == [first.connectionUUID])
        #expect(try await client.storedProfile(uuid: first.connectionUUID)?.profile.psk == Secret("old-pass-1"))
    }

    @Test func forgettingAnActiveHotspotLeavesItFirst() async throws {
        try mock.addAccessPoint(device, name: "cam", ssid: "Cam-Setup", bssid: "02:00:00:00:00:20")
        let client = try await client()
        _ = try await client.join(try configuration("Cam-Setup", joinOnce: false), options: JoinOptions())
        let forgotten = try await client.forget(ssid: try SSID("Cam-Setup"))
        #expect(forgotten.count == 1)
        try expectBackHome()
    }

    @Test func hiddenNetworkIsFoundByAProbeForItsSSID() async throws {
        try mock.addHiddenAccessPoint(device, name: "hidden", ssid: "Quiet-Setup", bssid: "02:00:00:00:00:30")
        let client = try await client()
        let joined = try await client.join(try configuration("Quiet-Setup", hidden: true), options: JoinOptions())
        #expect(joined.ssid == (try SSID("Quiet-Setup")))
        #expect(try mock.scanRequests() == [[Array("Quiet-Setup".utf8)]])
        let stored = try #require(try await client.storedProfile(uuid: joined.connectionUUID))
        #expect(stored.profile.hidden)
        _ = try await client.leave(device: nil)
        try expectBackHome()
    }

    @Test func absentNetworkIsNotFoundAndLeavesNothing() async throws {
        let client = try await client()
        await #expect(throws: HotspotError.notFound("named Nowhere-Setup")) {
            try await client.join(try self.configuration("Nowhere-Setup"), options: JoinOptions())
        }
        await #expect(throws: HotspotError.notFound("whose SSID starts with Nowhere")) {
            try await client.join(HotspotConfiguration(target: .ssidPrefix(SSID("Nowhere"))), options: JoinOptions())
        }
        let probe = Array("Nowhere-Setup".utf8)
        #expect(
            try mock.scanRequests() == [[probe], [probe], [probe], [], [], []],
            "each join scans \(NetworkManagerClient.scanAttempts) times before giving up")
        try expectBackHome()
    }

    static let failures:
        [(deviceReason: UInt32, connectionReason: UInt32, expected: @Sendable (SSID) -> HotspotError)] = [
            (7, 9, { .wrongPassphrase($0) }),  // NO_SECRETS: the passphrase was refused
            (8, 0, { .wrongPassphrase($0) }),  // SUPPLICANT_DISCONNECT during the handshake
            (11, 0, { .associationTimeout($0) }),  // SUPPLICANT_TIMEOUT
            (53, 0, { .authenticationRejected($0) }),  // SSID_NOT_FOUND, the AP still in range: turned away
            (17, 0, { .addressingFailed($0) }),  // DHCP_FAILED
            (0, 6, { .associationTimeout($0) }),  // active connection CONNECT_TIMEOUT
            (4, 0, { .activationFailed($0, reason: "the configuration failed") }),
        ]

    @Test(arguments: 0..<failures.count)
    func failedJoinIsTypedAndLeavesNoProfile(index: Int) async throws {
        let failure = Self.failures[index]
        try mock.addAccessPoint(device, name: "plug", ssid: "Plug-Setup", bssid: "02:00:00:00:00:40", security: .wpa2)
        try mock.failActivations(
            of: "Plug-Setup", deviceReason: failure.deviceReason, connectionReason: failure.connectionReason)
        let client = try await client()
        let ssid = try SSID("Plug-Setup")
        await #expect(throws: failure.expected(ssid)) {
            try await client.join(
                try self.configuration("Plug-Setup", .wpa2Personal(Secret("wrong-pass"))), options: JoinOptions())
        }
        try await Task.sleep(for: .milliseconds(300))  // the mock removes the failed activation after 200 ms
        try expectBackHome("device reason \(failure.deviceReason)")
    }

    /// How a link the hotspot had accepted fails when a handshake was lost, as NetworkManager
    /// reports it: asking for secrets nobody gives (NO_SECRETS, the activation's NO_SECRETS), or,
    /// the link up with the two ends' keys out of step, no address within DHCP's timeout
    /// (IP_CONFIG_UNAVAILABLE, the activation's IP_CONFIG_INVALID; or DHCP_FAILED).
    static let lostLinks: [(deviceReason: UInt32, connectionReason: UInt32)] = [(7, 9), (5, 5), (17, 5)]

    /// As in the radio lab: the hotspot accepted the key (the device reached ip-config), then a
    /// handshake was lost and NetworkManager failed the activation. One more activation of the
    /// profile joins.
    @Test(arguments: [true, false], 0..<lostLinks.count)
    func aLinkThatDropsOnceAfterTheKeyWasAcceptedIsActivatedAgain(joinOnce: Bool, lost: Int) async throws {
        let reasons = Self.lostLinks[lost]
        try mock.addAccessPoint(device, name: "plug", ssid: "Plug-Setup", bssid: "02:00:00:00:00:40", security: .wpa2)
        try mock.dropLinkDuringActivation(
            of: "Plug-Setup", once: true, deviceReason: reasons.deviceReason, connectionReason: reasons.connectionReason
        )
        let client = try await client()
        let joined = try await client.join(
            try configuration("Plug-Setup", .wpa2Personal(Secret("plug-pass-1")), joinOnce: joinOnce),
            options: JoinOptions())
        #expect(try mock.activeConnectionID(on: device) == joined.connectionID)
        #expect(try mock.connectionPaths().count == 2, "one profile for the accessory, however many activations")
        try await Task.sleep(for: .milliseconds(300))  // the mock removes the failed activation after 200 ms
        let left = try await client.leave(device: "wlan0")
        #expect(left.restored == "HomeNet")
        if joinOnce { try expectBackHome() }
    }

    @Test func aLinkThatKeepsDroppingAfterTheKeyWasAcceptedIsNotAPassphraseProblem() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Plug-Setup", bssid: "02:00:00:00:00:40", security: .wpa2)
        try mock.dropLinkDuringActivation(of: "Plug-Setup", once: false)
        let client = try await client()
        let ssid = try SSID("Plug-Setup")
        await #expect(
            throws: HotspotError.activationFailed(
                ssid, reason: "the connection dropped after the hotspot had accepted the passphrase")
        ) {
            try await client.join(
                try self.configuration("Plug-Setup", .wpa2Personal(Secret("plug-pass-1"))), options: JoinOptions())
        }
        try await Task.sleep(for: .milliseconds(300))
        try expectBackHome()
    }

    /// The one more activation gets no address either: the hotspot gives none, and the join
    /// says so, leaving nothing behind.
    @Test func aLinkThatNeverGetsAnAddressIsAnAddressingFailure() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Plug-Setup", bssid: "02:00:00:00:00:40", security: .wpa2)
        try mock.dropLinkDuringActivation(of: "Plug-Setup", once: false, deviceReason: 5, connectionReason: 5)
        let client = try await client()
        let ssid = try SSID("Plug-Setup")
        await #expect(throws: HotspotError.addressingFailed(ssid)) {
            try await client.join(
                try self.configuration("Plug-Setup", .wpa2Personal(Secret("plug-pass-1"))), options: JoinOptions())
        }
        try await Task.sleep(for: .milliseconds(300))
        try expectBackHome()
    }

    /// A hotspot that is still in range after turning the join away, with a passphrase given:
    /// NetworkManager 1.42 reports a WPA3-SAE password refusal as SSID_NOT_FOUND.
    @Test func securedHotspotInRangeThatTurnsTheJoinAwayIsAPassphraseProblem() async throws {
        try mock.addAccessPoint(device, name: "cam", ssid: "Cam-Sae", bssid: "02:00:00:00:00:41", security: .wpa3)
        try mock.failActivations(of: "Cam-Sae", deviceReason: 53)
        let client = try await client()
        await #expect(throws: HotspotError.authenticationRejected(try SSID("Cam-Sae"))) {
            try await client.join(
                try self.configuration("Cam-Sae", .wpa3Personal(Secret("not-the-password"))), options: JoinOptions())
        }
        try await Task.sleep(for: .milliseconds(300))
        try expectBackHome()
    }

    /// As in the radio lab: wpa_supplicant heard the hotspot while it refused the SAE password,
    /// and NetworkManager refuses the scan asked for after the failure (it is already
    /// activating the home network).
    @Test func hotspotHeardDuringTheJoinThatTurnsItAwayIsAPassphraseProblemWithoutANewScan() async throws {
        try mock.addAccessPoint(device, name: "cam", ssid: "Cam-Sae-Busy", bssid: "02:00:00:00:00:44", security: .wpa3)
        try mock.rejectActivationsInRange(of: "Cam-Sae-Busy")
        let client = try await client()
        await #expect(throws: HotspotError.authenticationRejected(try SSID("Cam-Sae-Busy"))) {
            let configuration = try self.configuration("Cam-Sae-Busy", .wpa3Personal(Secret("not-the-password")))
            _ = try await client.join(configuration, options: JoinOptions())
        }
        try await Task.sleep(for: .milliseconds(300))
        try expectBackHome()
    }

    /// As in the radio lab (`systemctl restart NetworkManager` mid-join): NetworkManager takes the
    /// device down with reason "removed" before it leaves the bus. (The undo then waits its 30 s
    /// for a NetworkManager that never comes back.)
    @Test func networkManagerStoppingMidJoinIsSaidAsSuch() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Plug-Stop", bssid: "02:00:00:00:00:45", security: .open)
        try mock.stopDuringActivation(of: "Plug-Stop")
        let client = try await client()
        await #expect(throws: HotspotError.networkManagerRestarted) {
            _ = try await client.join(try self.configuration("Plug-Stop"), options: JoinOptions())
        }
    }

    @Test func hotspotThatGoesOutOfRangeDuringTheJoinIsNotFound() async throws {
        let ap = try mock.addAccessPoint(
            device, name: "cam", ssid: "Cam-Gone", bssid: "02:00:00:00:00:42", security: .wpa3)
        try mock.vanishDuringActivation(of: "Cam-Gone", accessPoint: ap)
        let client = try await client()
        await #expect(throws: HotspotError.notFound("named Cam-Gone")) {
            try await client.join(
                try self.configuration("Cam-Gone", .wpa3Personal(Secret("the-password"))), options: JoinOptions())
        }
        try await Task.sleep(for: .milliseconds(300))
        try expectBackHome()
    }

    /// Without a passphrase there is no passphrase to blame.
    @Test(arguments: [
        (HotspotSecurity.open, NetworkManagerMock.Security.open, UInt32(8), UInt32(0)),
        (.owe, .owe, 8, 0), (.open, .open, 7, 9), (.owe, .owe, 53, 0),
    ])
    func openHotspotThatDropsTheJoinIsNotAPassphraseProblem(
        security: HotspotSecurity, advertised: NetworkManagerMock.Security, deviceReason: UInt32,
        connectionReason: UInt32
    ) async throws {
        try mock.addAccessPoint(
            device, name: "plug", ssid: "Open-Setup", bssid: "02:00:00:00:00:43", security: advertised)
        try mock.failActivations(of: "Open-Setup", deviceReason: deviceReason, connectionReason: connectionReason)
        let client = try await client()
        await #expect {
            try await client.join(try self.configuration("Open-Setup", security), options: JoinOptions())
        } throws: { error in
            guard case .activationFailed(let ssid, _) = error as? HotspotError else { return false }
            return ssid == (try? SSID("Open-Setup"))
        }
        try await Task.sleep(for: .milliseconds(300))
        try expectBackHome()
    }

    /// Enterprise settings libnm refuses: the CA file they trust is not there.
    static var settingsWithAMissingCA: EAPSettings {
        var settings = EAPSettings(supportedEAPTypes: [.ttls])
        settings.username = "user"
        settings.password = Secret("password")
        settings.trustedServerCertificatePaths = ["/nonexistent/ca.pem"]
        return settings
    }

    /// A profile that libnm refuses is refused before NetworkManager is asked for anything, so
    /// no checkpoint is left to block the joins after it.
    @Test func refusedProfileLeavesNoCheckpointAndTheNextJoinWorks() async throws {
        try mock.addAccessPoint(
            device, name: "corp", ssid: "Corp-Setup", bssid: "02:00:00:00:00:44", security: .enterprise)
        try mock.addAccessPoint(device, name: "plug", ssid: "Plug-Setup", bssid: "02:00:00:00:00:45")
        let corporate = try HotspotConfiguration(
            target: .ssid(SSID("Corp-Setup")), security: .enterprise(Self.settingsWithAMissingCA))
        let client = try await client()
        await #expect {
            try await client.join(corporate, options: JoinOptions())
        } throws: { error in
            guard case .invalidConfiguration(.invalidEAPSettings) = error as? HotspotError else { return false }
            return true
        }
        try expectBackHome()
        #expect(!mock.log.contains("CheckpointCreate"))
        _ = try await client.join(try configuration("Plug-Setup"), options: JoinOptions())
        _ = try await client.leave(device: nil)
        try expectBackHome()
    }

    /// Settings libnm refuses are refused before any scan, whatever the radio hears: a
    /// network out of range is not reported as missing when its configuration could never join.
    @Test(arguments: [false, true])
    func refusedSettingsAreReportedBeforeAnyScan(byPrefix: Bool) async throws {
        let target: HotspotConfiguration.Target =
            byPrefix ? .ssidPrefix(try SSID("Absent")) : .ssid(try SSID("Absent-Setup"))
        let client = try await client()
        await #expect {
            try await client.join(
                try HotspotConfiguration(target: target, security: .enterprise(Self.settingsWithAMissingCA)),
                options: JoinOptions())
        } throws: { error in
            guard case .invalidConfiguration(.invalidEAPSettings) = error as? HotspotError else { return false }
            return true
        }
        #expect(try mock.scanRequests().isEmpty)
        try expectBackHome()
    }

    /// nmstate and Cockpit take checkpoints too: theirs is not a join of ours, and
    /// NetworkManager's refusal of a second one is reported, never swallowed.
    @Test func checkpointOfAnotherToolIsNotAPendingJoin() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Plug-Setup", bssid: "02:00:00:00:00:46")
        let foreign = try mock.createCheckpoint(of: device)
        let client = try await client()
        await #expect {
            try await client.join(try self.configuration("Plug-Setup"), options: JoinOptions())
        } throws: { error in
            guard case .checkpointRefused(let device, _) = error as? HotspotError else { return false }
            return device == "wlan0"
        }
        #expect(try mock.connectionPaths().count == 1, "no profile was added")
        #expect(try mock.activeConnectionID(on: device) == "HomeNet")

        var options = JoinOptions()
        options.restoreAfter = nil
        let joined = try await client.join(try configuration("Plug-Setup"), options: options)
        #expect(joined.restoreDeadline == nil)
        #expect(try mock.checkpointPaths() == [foreign], "a join without automatic restore takes no checkpoint")
        let left = try await client.leave(device: nil)
        #expect(left.restored == "HomeNet")
        #expect(try mock.activeConnectionID(on: device) == "HomeNet")
        #expect(try mock.connectionPaths().count == 1)
    }

    @Test func cancelledJoinIsCancelledAndUndoneCompletely() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Slow-Setup", bssid: "02:00:00:00:00:47")
        try mock.stallActivations(of: "Slow-Setup")
        let client = try await client()
        let steps = StepLog()
        var options = JoinOptions()
        options.progress = { steps.append($0) }
        let configuration = try configuration("Slow-Setup")
        let join = Task { try await client.join(configuration, options: options) }
        for _ in 0..<250 where !steps.values.contains(.associating) { try await Task.sleep(for: .milliseconds(20)) }
        #expect(steps.values.contains(.associating))
        join.cancel()
        await #expect(throws: HotspotError.cancelled) { try await join.value }
        try expectBackHome()
    }

    /// The hotspot went away while joined: leaving cleans up after it and says so.
    @Test func leavingAfterTheHotspotWentAwayCleansUp() async throws {
        let ap = try mock.addAccessPoint(device, name: "plug", ssid: "Plug-Setup", bssid: "02:00:00:00:00:48")
        let client = try await client()
        _ = try await client.join(try configuration("Plug-Setup"), options: JoinOptions())
        try mock.removeAccessPoint(device, ap)
        try mock.dropActiveConnection(on: device)
        // Leaving as soon as libnm saw the device go down: its list of active connections is
        // another property, which may still name the connection then.
        for _ in 0..<250
        where try await client.wifiDevices().first(where: { $0.interface == device })?.connection != nil {
            try await Task.sleep(for: .milliseconds(20))
        }
        let left = try await client.leave(device: nil)
        #expect(left.alreadyEnded)
        #expect(left.restored == "HomeNet")
        try expectBackHome()
    }

    @Test func joinThatNeverSettlesTimesOutAndLeavesNoProfile() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Slow-Setup", bssid: "02:00:00:00:00:50")
        try mock.stallActivations(of: "Slow-Setup")
        let client = try await client()
        var options = JoinOptions()
        options.timeout = .milliseconds(500)
        let steps = StepLog()
        options.progress = { steps.append($0) }
        await #expect(throws: HotspotError.timedOut(try SSID("Slow-Setup"), seconds: 0)) {
            try await client.join(try self.configuration("Slow-Setup"), options: options)
        }
        #expect(steps.values == [.scanning, .checkpoint, .adding, .associating])
        try expectBackHome()
    }

    /// A join slower than `restoreAfter` is not rolled back under it: while it comes up the
    /// rollback is pushed out, and the join ends in its own timeout.
    @Test func aJoinSlowerThanRestoreAfterTimesOutInsteadOfBeingRolledBack() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Slow-Setup", bssid: "02:00:00:00:00:51")
        try mock.stallActivations(of: "Slow-Setup")
        let client = try await client()
        var options = JoinOptions()
        options.restoreAfter = .seconds(3)
        options.timeout = .seconds(8)
        await #expect(throws: HotspotError.timedOut(try SSID("Slow-Setup"), seconds: 8)) {
            try await client.join(try self.configuration("Slow-Setup"), options: options)
        }
        #expect(mock.log.contains("CheckpointCreate [\"/org/freedesktop/NetworkManager/Devices/wlan0\"] 3 "))
        #expect(mock.log.contains("CheckpointAdjustRollbackTimeout"))
        try expectBackHome()
    }

    /// `restoreAfter` counts from the join being up, and NetworkManager then restores the home
    /// network by itself when nobody leaves.
    @Test func nobodyLeavingRestoresTheHomeNetworkRestoreAfterTheJoinIsUp() async throws {
        try mock.addAccessPoint(device, name: "plug", ssid: "Acme-Setup", bssid: "02:00:00:00:00:52")
        let client = try await client()
        var options = JoinOptions()
        options.restoreAfter = .seconds(2)
        let before = Date()
        let joined = try await client.join(try configuration("Acme-Setup"), options: options)
        let deadline = try #require(joined.restoreDeadline)
        #expect(deadline >= before + 2 && deadline <= Date() + 2)
        // Set to 2 s from the join being up.
        let checkpoint = try #require(try mock.checkpointPaths().first)
        #expect(mock.log.contains("CheckpointAdjustRollbackTimeout \"\(checkpoint)\" 2\n"))
        #expect(try mock.activeConnectionID(on: device) == "Accessory Acme-Setup")
        _ = try await poll(timeout: .seconds(10)) {
            try mock.activeConnectionID(on: device) == "HomeNet" ? true : nil
        }
        try expectBackHome("NetworkManager rolled the checkpoint back by itself")
    }

    @Test func joiningTheNetworkAlreadyInUseIsAlreadyAssociated() async throws {
        let client = try await client()
        await #expect(throws: HotspotError.alreadyAssociated(try SSID("HomeNet"))) {
            try await client.join(
                try self.configuration("HomeNet", .wpa2Personal(Secret("whatever1"))), options: JoinOptions())
        }
        try expectBackHome()
        #expect(!mock.log.contains("CheckpointCreate"), "a named network is checked before the checkpoint")
    }

    /// A prefix whose strongest match is the network in use: refused once the scan chose it,
    /// before any checkpoint.
    @Test func aPrefixThatChoosesTheNetworkInUseIsAlreadyAssociated() async throws {
        let client = try await client()
        await #expect(throws: HotspotError.alreadyAssociated(try SSID("HomeNet"))) {
            try await client.join(HotspotConfiguration(target: .ssidPrefix(SSID("Home"))), options: JoinOptions())
        }
        #expect(!mock.log.contains("CheckpointCreate"))
        try expectBackHome()
    }

    @Test func secondJoinWhileJoinedIsPending() async throws {
        try mock.addAccessPoint(device, name: "a", ssid: "Acme-A", bssid: "02:00:00:00:00:61")
        try mock.addAccessPoint(device, name: "b", ssid: "Acme-B", bssid: "02:00:00:00:00:62")
        let client = try await client()
        _ = try await client.join(try configuration("Acme-A"), options: JoinOptions())
        await #expect(throws: HotspotError.pending(device: "wlan0")) {
            try await client.join(try self.configuration("Acme-B"), options: JoinOptions())
        }
        _ = try await client.leave(device: nil)
        try expectBackHome()
    }

    @Test func leavingWithoutAnAccessoryIsNotJoined() async throws {
        let client = try await client()
        await #expect(throws: HotspotError.notJoined(device: "wlan0")) { try await client.leave(device: nil) }
        await #expect(throws: HotspotError.notJoined(device: "wlan0")) { try await client.leave(device: "wlan0") }
    }

    @Test func configuredListsOnlyThisProjectsProfilesAndDropsExpiredOnes() async throws {
        let client = try await client()
        var expired = WirelessProfile(
            id: "Accessory Old", uuid: UUID().uuidString.lowercased(), ssid: Array("Old-Setup".utf8))
        expired.userData = [ProfileTag.managed: "1", ProfileTag.joinOnce: "0", ProfileTag.expires: "1000"]
        var kept = WirelessProfile(
            id: "Accessory Kept", uuid: UUID().uuidString.lowercased(), ssid: Array("Kept-Setup".utf8))
        kept.userData = [ProfileTag.managed: "1", ProfileTag.joinOnce: "0"]
        try await client.add(expired, persistence: .disk)
        try await client.add(kept, persistence: .disk)
        #expect(try mock.connectionPaths().count == 3)

        let configured = try await client.configuredHotspots()
        #expect(configured.map(\.connectionID) == ["Accessory Kept"], "the person's 'home' profile is never listed")
        #expect(await client.allProfileUUIDs().contains(expired.uuid) == false, "the expired profile was deleted")
        _ = try await client.forget(ssid: try SSID("Kept-Setup"))
        try expectBackHome()
    }
}

/// Collects progress steps from the join's callback.
final class StepLog: @unchecked Sendable {
    private let lock = NSLock()
    private var steps: [JoinStep] = []
    func append(_ step: JoinStep) { lock.withLock { steps.append(step) } }
    var values: [JoinStep] { lock.withLock { steps } }
}
