import Foundation
import Testing

@testable import AccessoryCore

@Suite("The session: the configuration to join an accessory's hotspot")
struct AccessorySessionJoinTests {
    private typealias Fixture = SessionFixture

    private static func session(
        hotspot: HotspotPolicy?, state: AccessoryState = .authorized, ssid: String? = "plug-0001"
    ) -> (AccessorySession, UUID) {
        var profile = Fixture.profile
        profile.hotspot = hotspot
        let record = Fixture.record("Plug", state: state, descriptor: Fixture.plugItem.descriptor, ssid: ssid)
        return (AccessorySession(profile: profile, owner: Fixture.owner, accessories: [record]), record.id)
    }

    private static func refusal(_ body: () throws(AccessorySessionError) -> HotspotConfiguration) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            return error.field
        }
    }

    @Test func theProfilesFixedPassphraseIsUsedUnlessTheCallerGivesOne() throws {
        let policy = HotspotPolicy(security: .wpa2Personal, passphrase: .fixed(Secret("wled1234")))
        let (session, id) = Self.session(hotspot: policy)
        let fixed = try session.hotspotConfiguration(for: id, passphrase: nil)
        #expect(fixed.target == .ssid(try SSID("plug-0001")))
        #expect(fixed.security == .wpa2Personal(Secret("wled1234")))
        #expect(fixed.joinOnce)
        let own = try session.hotspotConfiguration(for: id, passphrase: Secret("changed-it"))
        #expect(own.security == .wpa2Personal(Secret("changed-it")))
        #expect(
            Self.refusal { () throws(AccessorySessionError) in
                try session.hotspotConfiguration(for: id, passphrase: Secret("short"))
            } == "passphrase")
    }

    /// The access point the person picked is the one joined: its BSSID pins the configuration.
    @Test func theJoinIsPinnedToTheAccessPointPicked() throws {
        var profile = Fixture.profile
        profile.hotspot = HotspotPolicy(security: .open, passphrase: .none)
        var record = Fixture.record(
            "Plug", state: .authorized, descriptor: Fixture.plugItem.descriptor, ssid: "plug-0001")
        record.hotspotBSSID = try MACAddress("02:00:00:00:4f:2a")
        let session = AccessorySession(profile: profile, owner: Fixture.owner, accessories: [record])
        let configuration = try session.hotspotConfiguration(for: record.id, passphrase: nil)
        #expect(configuration.bssid == record.hotspotBSSID)
    }

    @Test func aPromptedPassphraseMustBeGiven() {
        let (session, id) = Self.session(
            hotspot: HotspotPolicy(security: .wpa3Personal, passphrase: .prompt(hint: nil)))
        #expect(
            Self.refusal { () throws(AccessorySessionError) in
                try session.hotspotConfiguration(for: id, passphrase: nil)
            } == "passphrase")
    }

    @Test func withoutSecurityOnlyForAnOpenHotspot() throws {
        let (open, openID) = Self.session(hotspot: HotspotPolicy(security: .open, passphrase: .none, joinOnce: false))
        let configuration = try open.hotspotConfiguration(for: openID, passphrase: nil, withoutSecurity: true)
        #expect(configuration.security == .open)
        #expect(!configuration.joinOnce)
        #expect(
            Self.refusal { () throws(AccessorySessionError) in
                try open.hotspotConfiguration(for: openID, passphrase: Secret("x"), withoutSecurity: true)
            } == "passphrase")

        let (secured, securedID) = Self.session(hotspot: HotspotPolicy(security: .wpa2Personal, passphrase: .handoff))
        #expect(
            Self.refusal { () throws(AccessorySessionError) in
                try secured.hotspotConfiguration(for: securedID, passphrase: nil, withoutSecurity: true)
            } == "withoutSecurity")
    }

    @Test func withoutAPolicyAPassphraseMeansWPAPersonal() throws {
        let (session, id) = Self.session(hotspot: nil)
        #expect(try session.hotspotConfiguration(for: id, passphrase: nil).security == .open)
        #expect(
            try session.hotspotConfiguration(for: id, passphrase: Secret("12345678")).security
                == .wpa2Personal(Secret("12345678")))
    }

    @Test func onlyAnAuthorizedAccessoryWithAHotspotIsJoined() {
        let (awaiting, awaitingID) = Self.session(hotspot: nil, state: .awaitingAuthorization)
        #expect(
            Self.refusal { () throws(AccessorySessionError) in
                try awaiting.hotspotConfiguration(for: awaitingID, passphrase: nil)
            } == "accessory")
        let (bluetoothOnly, bluetoothID) = Self.session(hotspot: nil, ssid: nil)
        #expect(
            Self.refusal { () throws(AccessorySessionError) in
                try bluetoothOnly.hotspotConfiguration(for: bluetoothID, passphrase: nil)
            } == "accessory")
        #expect(
            Self.refusal { () throws(AccessorySessionError) in
                try bluetoothOnly.hotspotConfiguration(for: UUID(), passphrase: nil)
            } == "accessory")
    }
}
