import AccessoryCore
import Testing

@Suite struct ScanProbeTests {
    static func profile(hidden: Bool) -> AccessoryProfile {
        AccessoryProfile(
            id: "org.example.quiet", vendor: "Example", supports: [.wifi],
            hotspot: HotspotPolicy(security: .open, passphrase: .none, hidden: hidden), handoff: .joinHotspot,
            items: [])
    }

    @Test func aHiddenHotspotsExactSSIDsAreProbedForOnceEach() throws {
        var exact = DiscoveryDescriptor()
        exact.ssid = try SSID("Quiet-Setup-4004")
        var prefix = DiscoveryDescriptor()
        prefix.ssidPrefix = try SSID("Quiet-")
        let descriptors = [exact, prefix, exact]
        let hidden = Self.profile(hidden: true)
        #expect(ScanProbe.ssids(for: descriptors, of: hidden) == [try SSID("Quiet-Setup-4004")])
        let broadcast = Self.profile(hidden: false)
        #expect(ScanProbe.ssids(for: descriptors, of: broadcast).isEmpty)
    }

    @Test func moreSSIDsThanOneScanTakesAreProbedForInTurns() throws {
        let ssids = try (0..<40).map { try SSID("Quiet-\($0)") }
        let rounds = (0..<3).map { ScanProbe.window(of: ssids, round: $0) }
        #expect(rounds.allSatisfy { $0.count == ScanProbe.limit })
        #expect(Set(rounds.flatMap { $0 }) == Set(ssids), "three scans probe for all 40")
        #expect(rounds[0] == Array(ssids[0..<15]))
        #expect(rounds[2] == Array(ssids[30..<40] + ssids[0..<5]))
        let few = Array(ssids.prefix(3))
        #expect(ScanProbe.window(of: few, round: 7) == few)
    }
}
