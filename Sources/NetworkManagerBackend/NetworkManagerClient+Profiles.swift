import AccessoryCore
import GLibRuntime

/// Profile storage without activation: what the tests against the real daemon exercise, and
/// what adopting an existing profile will use.
extension NetworkManagerClient {
    enum Persistence {
        case disk, memory
    }

    /// Adds a profile. With `verifyLocally` false the daemon alone judges it.
    func add(_ profile: WirelessProfile, persistence: Persistence, verifyLocally: Bool = true)
        async throws(HotspotError)
    {
        let connection = try LibNM.connection(profile)
        if verifyLocally { try LibNM.verify(connection) }
        try await LibNM.add(connection, client: client, toDisk: persistence == .disk)
    }

    /// A stored profile read back with its secrets, as NetworkManager holds it.
    func storedProfile(uuid: String) async throws(HotspotError) -> StoredProfile? {
        guard let remote = LibNM.remoteConnection(uuid: uuid, in: client.pointer) else { return nil }
        let reference = GObjectRef(retaining: remote)
        let copy = LibNM.clone(remote)
        for setting in LibNM.secretSettingNames where LibNM.hasSetting(copy.pointer, named: setting) {
            try await LibNM.readSecrets(of: reference, setting: setting, into: copy)
        }
        return LibNM.storedProfile(remote, copy: copy.pointer)
    }

    /// Deletes a profile by UUID; `false` when there is none.
    @discardableResult
    func deleteProfile(uuid: String) async throws(HotspotError) -> Bool {
        guard let remote = LibNM.remoteConnection(uuid: uuid, in: client.pointer) else { return false }
        try await delete(GObjectRef(retaining: remote))
        return true
    }

    /// The UUIDs of every profile NetworkManager holds, the person's own included.
    func allProfileUUIDs() -> [String] {
        LibNM.connections(of: client.pointer).compactMap(LibNM.connectionUUID)
    }
}

/// A profile as NetworkManager stored it.
struct StoredProfile: Sendable {
    var profile: WirelessProfile
    var unsaved: Bool
    var filename: String?
    var autoconnect: Bool
    var ipv4NeverDefault: Bool
    var ipv6NeverDefault: Bool
}

extension NetworkManagerClient {
    public func storedNetwork(ssid: SSID?, device: String?, permitting user: String?) async throws(HotspotError)
        -> StoredNetwork
    {
        let usable = { (profile: WirelessProfile) in
            user == nil || profile.permittedUsers.isEmpty || user.map(profile.permittedUsers.contains) == true
        }
        let uuid: String
        if let ssid {
            let active = activeConnectionUUIDs()
            let candidates = LibNM.connections(of: client.pointer).compactMap { connection -> (String, Bool)? in
                guard let profile = LibNM.profile(connection), profile.ssid == ssid.bytes, !profile.uuid.isEmpty,
                    profile.userData[ProfileTag.managed] == nil, usable(profile)
                else { return nil }
                return (profile.uuid, active.contains(profile.uuid))
            }
            guard let chosen = candidates.first(where: { $0.1 }) ?? candidates.first else {
                throw .notStored(ssid.escaped)
            }
            uuid = chosen.0
        } else {
            let pointer = try wifiDevice(named: device)
            guard let active = LibNM.activeConnection(of: pointer.pointer), let activeUUID = LibNM.activeUUID(active)
            else {
                throw .notStored("the network \(LibNM.interface(pointer.pointer)) is on (it is on none)")
            }
            // Joined to an accessory: its profile names the network it left.
            let joined = LibNM.remoteConnection(uuid: activeUUID, in: client.pointer).flatMap(LibNM.profile)
            if let joined, joined.userData[ProfileTag.managed] != nil {
                guard let previous = joined.userData[ProfileTag.previousConnection] else {
                    throw .notStored(
                        "the network \(LibNM.interface(pointer.pointer)) was on before joining the accessory (it was on none)"
                    )
                }
                uuid = previous
            } else {
                uuid = activeUUID
            }
        }
        guard let stored = try await storedProfile(uuid: uuid), let ssid = try? SSID(bytes: stored.profile.ssid),
            usable(stored.profile)
        else {
            throw .notStored(ssid?.escaped ?? "the network the device returns to (a profile of another user)")
        }
        return StoredNetwork(
            ssid: ssid, connectionID: stored.profile.id, passphrase: stored.profile.psk ?? stored.profile.wepKey,
            keyManagement: stored.profile.keyManagement,
            holder: StoredNetwork.SecretHolder(permittedUsers: stored.profile.permittedUsers))
    }
}
