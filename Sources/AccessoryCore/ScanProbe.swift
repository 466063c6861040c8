/// Targeted scans for hidden hotspots: a hidden hotspot answers only a probe request that names
/// its SSID, so it is found by asking for that exact SSID. A prefix cannot be probed for (the
/// hotspot compares the whole name), so `ssidPrefix` descriptors never find a hidden one.
public enum ScanProbe {
    /// The most SSIDs one scan probes for. wpa_supplicant takes at most 16 in a scan
    /// (`WPAS_MAX_SCAN_SSIDS`), fewer when the driver allows fewer, and NetworkManager puts the
    /// wildcard SSID first while there is room for it, so that broadcasting networks are still
    /// heard; NetworkManager refuses a request of more than 32 outright.
    public static let limit = 15

    /// The SSIDs to probe for, for discovery over `descriptors` of `profile`: the exact SSIDs of
    /// those descriptors when the profile's hotspot is hidden; none otherwise.
    public static func ssids(for descriptors: [DiscoveryDescriptor], of profile: AccessoryProfile) -> [SSID] {
        guard profile.hotspot?.hidden == true else { return [] }
        return unique(descriptors.compactMap(\.ssid))
    }

    /// The SSIDs `round` of a schedule of scans probes for: all of `ssids` when they fit in
    /// one scan; else `limit` of them, the next `limit` each round, so each is probed in turn.
    public static func window(of ssids: [SSID], round: Int) -> [SSID] {
        guard ssids.count > limit else { return ssids }
        let start = (round * limit) % ssids.count
        return (0..<limit).map { ssids[(start + $0) % ssids.count] }
    }

    /// `ssids` without repeats, in their first order.
    public static func unique(_ ssids: [SSID]) -> [SSID] {
        var seen: Set<SSID> = []
        return ssids.filter { seen.insert($0).inserted }
    }
}
