import FoundationEssentials

extension AccessorySession {
    /// The configuration to join an accessory's hotspot with: the core of
    /// `joinAccessoryHotspot(_:passphrase:)` and `joinAccessoryHotspotWithoutSecurity(_:)`.
    ///
    /// The accessory must be this client's, authorized, and have a hotspot. Its security comes
    /// from the profile's `hotspot` policy; without one, a passphrase means WPA2/WPA3 personal
    /// and none an open network. `passphrase` is the caller's own, else the one the picker or
    /// the kiosk supplied (`suppliedPassphrase(for:)`, read by the service); without either, a
    /// fixed passphrase of the profile is used, unless the owner renamed the hotspot.
    public func hotspotConfiguration(
        for id: UUID, passphrase: Secret?, withoutSecurity: Bool = false
    ) throws(AccessorySessionError) -> HotspotConfiguration {
        let record = accessories[try recordIndex(id)]
        guard record.state == .authorized else {
            throw .invalidRequest(
                field: "accessory", reason: "\(record.id) is \(record.state.name); finish its authorization first")
        }
        guard let ssid = revealedHotspot(for: id)?.ssid ?? record.ssid else {
            throw .invalidRequest(field: "accessory", reason: "\(record.id) has no hotspot to join")
        }
        var policy = profile.hotspot
        if let security = revealedHotspot(for: id)?.security { policy?.security = security }
        var secret = passphrase
        if withoutSecurity {
            guard passphrase == nil else {
                throw .invalidRequest(field: "passphrase", reason: "give a passphrase or withoutSecurity, not both")
            }
            if let policy, policy.security != .open {
                throw .invalidRequest(
                    field: "withoutSecurity",
                    reason: "profile \(profile.id) says the hotspot is secured (\(policy.security.rawValue))")
            }
        } else if let policy {
            if secret == nil, !record.hotspotWasRenamed, case .fixed(let fixed) = policy.passphrase { secret = fixed }
            if policy.security.needsPassphrase && secret == nil {
                let renamed = record.hotspotWasRenamed && revealedHotspot(for: id) == nil
                throw .invalidRequest(
                    field: "passphrase",
                    reason: renamed
                        ? "the hotspot \(ssid) was renamed by its owner, so only a passphrase given with the join is used"
                        : "the hotspot \(ssid) needs a passphrase")
            }
        }
        var configuration: HotspotConfiguration
        do throws(HotspotConfigurationError) {
            switch (withoutSecurity, policy) {
            case (true, _):
                configuration = try HotspotConfiguration(
                    target: .ssid(ssid), joinOnce: policy?.joinOnce ?? true, hidden: policy?.hidden ?? false)
            case (false, nil):
                let security: HotspotSecurity = secret.map { .wpa2Personal($0) } ?? .open
                configuration = try HotspotConfiguration(target: .ssid(ssid), security: security, joinOnce: true)
            case (false, let policy?):
                configuration = try policy.configuration(for: .ssid(ssid), passphrase: secret)
            }
        } catch {
            throw .invalidRequest(field: error.field, reason: error.message)
        }
        // The access point the person picked, not a louder one that took its name; a hotspot
        // revealed over Bluetooth was never seen, so any of its name.
        if revealedHotspot(for: id) == nil { configuration.bssid = record.hotspotBSSID }
        return configuration
    }
}
