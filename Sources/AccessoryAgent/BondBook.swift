import AccessoryCore
import FoundationEssentials

/// The user each Bluetooth bond the agent made was made for, as `bonds.json` in the state
/// directory keeps it.
///
/// BlueZ's bonds belong to the machine: once paired, a device answers whoever connects, with
/// the keys of whoever paired it. So the agent uses a paired device (hands its hotspot off,
/// adopts it in a migration) only for the user it paired it for; a bond made for someone else,
/// or outside the agent (no entry here), takes polkit's `manage-others`.
struct BondBook {
    private let url: URL
    private var owners: [MACAddress: UInt32]

    /// The bonds recorded in `directory`. A file that cannot be read is logged and read as none,
    /// which is the safe side: every bond then counts as someone else's.
    static func open(in directory: URL) -> BondBook {
        let url = directory.appendingPathComponent("bonds.json")
        var owners: [MACAddress: UInt32] = [:]
        if FileManager.default.fileExists(atPath: url.path) {
            do {
                let file = try JSONDecoder().decode(BondFile.self, from: Data(contentsOf: url))
                for bond in file.bonds { owners[bond.address] = bond.uid }
            } catch {
                Journal.error("bonds: \(url.path) cannot be read (\(error)); every bond counts as another user's")
            }
        }
        return BondBook(url: url, owners: owners)
    }

    /// The user the agent paired `address` for, if it did.
    func owner(of address: MACAddress) -> UInt32? { owners[address] }

    /// Records that the agent paired `address` for `uid`; a failed write is logged (the bond
    /// then counts as another user's, never as this one's to anybody else).
    mutating func record(_ address: MACAddress, for uid: UInt32) {
        owners[address] = uid
        save()
    }

    /// Drops what is recorded of `address` (BlueZ no longer has it paired).
    mutating func forget(_ address: MACAddress) {
        guard owners.removeValue(forKey: address) != nil else { return }
        save()
    }

    private func save() {
        let bonds = owners.sorted { $0.key < $1.key }.map { BondFile.Bond(address: $0.key, uid: $0.value) }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try DurableFile.replace(url, with: try encoder.encode(BondFile(schemaVersion: 1, bonds: bonds)))
        } catch {
            Journal.error("bonds: \(url.path) cannot be written: \(error)")
        }
    }

    private struct BondFile: Codable {
        struct Bond: Codable {
            var address: MACAddress
            var uid: UInt32
        }
        var schemaVersion: Int
        var bonds: [Bond]
    }
}
