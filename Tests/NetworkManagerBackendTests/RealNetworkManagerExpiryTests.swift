import AccessoryCore
import Foundation
import ServiceHarness
import Testing

@testable import NetworkManagerBackend

/// Removing expired profiles through the real NetworkManager in a network namespace: only this
/// project's profiles past their lifetime go; the person's own (even one carrying an expiry
/// tag), a live one and a join-once one stay.
@Suite(.serialized) final class RealNetworkManagerExpiryTests {
    let daemon: IsolatedNetworkManager

    init() throws {
        daemon = try IsolatedNetworkManager()
    }

    deinit { daemon.stop() }

    static func stored(_ ssid: String, days: Int?, joinedAt: Date = Date()) throws -> WirelessProfile {
        let configuration = try HotspotConfiguration(
            target: .ssid(SSID(ssid)), joinOnce: days == nil, lifetimeInDays: days)
        return WirelessProfile(configuration, ssid: try SSID(ssid), options: JoinOptions(), now: joinedAt)
    }

    @Test func onlyOurProfilesPastTheirLifetimeAreRemoved() async throws {
        let client = try await NetworkManagerClient.connect(busAddress: daemon.bus.address)
        let expired = try Self.stored("Old-Setup", days: 1, joinedAt: Date(timeIntervalSinceNow: -2 * 86_400))
        let live = try Self.stored("New-Setup", days: 30)
        let once = try Self.stored("Once-Setup", days: nil)
        var own = try Self.stored("Home-Net", days: 1, joinedAt: Date(timeIntervalSinceNow: -2 * 86_400))
        own.userData[ProfileTag.managed] = nil
        own.id = "Home-Net"
        for profile in [expired, live, once, own] { try await client.add(profile, persistence: .disk) }

        let result = try await client.removeExpiredHotspots(at: Date())
        #expect(result.removed.map(\.connectionUUID) == [expired.uuid])
        #expect(result.inUse.isEmpty)
        #expect(Set(await client.allProfileUUIDs()) == [live.uuid, once.uuid, own.uuid])
        #expect(daemon.keyfiles().count == 3, "\(daemon.keyfiles())")

        let again = try await client.removeExpiredHotspots(at: Date())
        #expect(again == ExpiredHotspots(), "nothing is left to expire")
        let later = try await client.removeExpiredHotspots(at: Date(timeIntervalSinceNow: 31 * 86_400))
        #expect(later.removed.map(\.connectionUUID) == [live.uuid], "the live one goes once its lifetime ends")
        #expect(Set(await client.allProfileUUIDs()) == [once.uuid, own.uuid])
    }
}
