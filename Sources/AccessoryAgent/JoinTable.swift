import AccessoryCore
import FoundationEssentials

/// The joins the agent made and must end, by device; the devices joins are being made on now;
/// and the connections recent joins made.
final class JoinTable {
    private var joins: [String: ActiveJoin] = [:]
    /// The devices joins are being made on now ("*": the first Wi-Fi device, whichever it is).
    private var inFlight: [String] = []
    /// The connections the agent's joins made, so that the dispatcher's `down` for one is
    /// recognised after its join-once profile is gone. The most recent `madeKept`.
    private var made: [MadeConnection] = []
    private static let madeKept = 64

    /// Every join held, in no particular order.
    var all: [ActiveJoin] { Array(joins.values) }

    var isEmpty: Bool { joins.isEmpty }

    /// The join on `device`, if there is one.
    subscript(device: String) -> ActiveJoin? { joins[device] }

    /// The join that made the connection `uuid` (lowercased).
    func join(connectionUUID uuid: String) -> ActiveJoin? {
        joins.values.first { $0.connectionUUID == uuid }
    }

    /// The join of `uid` that `Leave` ends: on `device` if named, of the session at
    /// `sessionPath` if named, one `admits`; the first by device name when several are.
    func joinToLeave(
        uid: UInt32, device: String?, sessionPath: String?, where admits: (ActiveJoin) -> Bool = { _ in true }
    ) -> ActiveJoin? {
        let candidates = joins.values.filter { join in
            join.uid == uid && (device == nil || join.device == device)
                && (sessionPath == nil || join.sessionPath == sessionPath) && admits(join)
        }
        return candidates.sorted(by: { $0.device < $1.device }).first
    }

    /// Claims `device` (`nil`: the first Wi-Fi device) for a join, returning the claim for
    /// `release`. One join at a time on a device, checkpoint or not; a join on the first device
    /// found waits for none and is waited for by all: refused with `Pending`.
    func claim(_ device: String?) throws(CallFailure) -> String {
        let slot = device ?? "*"
        if let busy = inFlight.first(where: { $0 == slot || $0 == "*" || slot == "*" }) {
            throw CallFailure(HotspotError.pending(device: busy == "*" ? (device ?? "the Wi-Fi device") : busy))
        }
        inFlight.append(slot)
        return slot
    }

    func release(_ claim: String) {
        inFlight.removeAll { $0 == claim }
    }

    func add(_ join: ActiveJoin) {
        joins[join.device] = join
    }

    /// Takes the join on `device` off the table; `nil` if there was none.
    func remove(on device: String) -> ActiveJoin? {
        joins.removeValue(forKey: device)
    }

    /// Puts back a join taken off for a leave that failed, unless another took its device.
    func restore(_ join: ActiveJoin) {
        if joins[join.device] == nil { joins[join.device] = join }
    }

    /// Remembers the connection a join made for `recordID`.
    func remember(_ joined: JoinedHotspot, of recordID: UUID?) {
        made.append(
            MadeConnection(
                uuid: joined.connectionUUID.lowercased(), id: joined.connectionID, ssid: joined.ssid, recordID: recordID
            ))
        if made.count > Self.madeKept { made.removeFirst(made.count - Self.madeKept) }
    }

    /// The latest connection with UUID `uuid` (lowercased) a recent join made.
    func madeConnection(_ uuid: String) -> MadeConnection? {
        made.last { $0.uuid == uuid }
    }

    /// The UUIDs of the connections recent joins made: for these records, or for all.
    func madeConnectionUUIDs(of recordIDs: Set<UUID>? = nil) -> [String] {
        made.filter { made in
            guard let recordIDs else { return true }
            return made.recordID.map(recordIDs.contains) ?? false
        }.map(\.uuid)
    }
}

/// A connection one of the agent's joins made.
struct MadeConnection: Sendable {
    /// NetworkManager's UUID of it, lowercased.
    let uuid: String
    /// Its name in NetworkManager.
    let id: String
    let ssid: SSID
    /// `nil` for an application's own configuration.
    let recordID: UUID?
}

/// Hotspots accessories revealed in a Bluetooth handoff and still keep switched on, by record:
/// a join after the picking session ended uses them. A revealed passphrase is kept only while
/// its hotspot is on.
final class HandedOffHotspots {
    private var byRecord: [UUID: RevealedHotspot] = [:]

    func hotspot(for recordID: UUID) -> RevealedHotspot? {
        byRecord[recordID]
    }

    func keep(_ hotspot: RevealedHotspot, for recordID: UUID) {
        byRecord[recordID] = hotspot
    }

    /// The hotspot is switched off, or about to be.
    func drop(_ recordID: UUID) {
        byRecord[recordID] = nil
    }
}
