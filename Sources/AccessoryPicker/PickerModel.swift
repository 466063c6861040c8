import AccessoryCore
import AccessorySetupKit
import AgentInterface
import FoundationEssentials
import GLibRuntime

/// A picker request of the agent (`PickerAgent1.RequestChoice`) and the session it is for.
@dynamicMemberLookup
struct PickerRequest: Sendable, Hashable {
    var session: String
    var request: PickerAgentRequest
    /// The sandboxed application that asks, as its desktop file names it; `nil` for a client
    /// on the host.
    var application: DesktopApplication? = nil

    subscript<Value>(dynamicMember keyPath: KeyPath<PickerAgentRequest, Value>) -> Value { request[keyPath: keyPath] }

    /// Whether the item at `index` offers renaming.
    func renames(_ index: Int) -> Bool { request.renames(index) }
}

/// One accessory the picker shows, from an entry of `PickerAgent1.UpdateEntries`.
typealias PickerRow = PickerAgentEntry

extension PickerAgentEntry {
    /// What identifies the accessory: its SSID, or its Bluetooth name and address.
    var identity: String {
        if let ssid { return "Wi-Fi · \(ssid)" }
        if let bluetoothAddress {
            return "Bluetooth · " + (bluetoothName.map { "\($0) (\(bluetoothAddress))" } ?? bluetoothAddress)
        }
        return ""
    }

    /// The signal as shown: `64%` for Wi-Fi, `-60 dBm` for Bluetooth.
    var signalText: String {
        if let signal { return "\(signal)%" }
        if let rssi { return "\(rssi) dBm" }
        return ""
    }

    /// The signal as a screen reader says it.
    var signalDescription: String {
        if let signal { return "Signal \(signal) percent" }
        if let rssi { return "Signal \(rssi) decibel-milliwatts" }
        return "Signal unknown"
    }

    /// Wi-Fi or Bluetooth, for the generic icon when there is no product image.
    var isBluetooth: Bool { ssid == nil && bluetoothAddress != nil }
}

/// The entries of one picker, kept in the order they arrived.
struct PickerRows: Sendable {
    private(set) var rows: [PickerRow] = []

    /// Applies an update; returns the ids added, changed and removed.
    mutating func apply(
        rows entries: [PickerRow], removed: [UInt32]
    ) -> (added: [PickerRow], changed: [PickerRow], removed: [UInt32]) {
        var added: [PickerRow] = [], changed: [PickerRow] = [], gone: [UInt32] = []
        for row in entries {
            if let index = rows.firstIndex(where: { $0.id == row.id }) {
                if rows[index] != row { rows[index] = row; changed.append(row) }
            } else {
                rows.append(row)
                added.append(row)
            }
        }
        for id in removed where rows.contains(where: { $0.id == id }) {
            rows.removeAll { $0.id == id }
            gone.append(id)
        }
        return (added, changed, gone)
    }
}

/// Entries that arrived for a session before its `RequestChoice`: the agent sends
/// `UpdateEntries` as it finds accessories, while its `RequestChoice` call may still be on its
/// way, so they are held here and shown when the dialog opens. At most `limit` sessions are
/// held; the oldest goes first.
struct EarlyEntries: Sendable {
    static let limit = 32
    private var sessions: [(session: String, rows: PickerRows)] = []

    mutating func hold(_ session: String, _ entries: [PickerRow], removed: [UInt32]) {
        if let index = sessions.firstIndex(where: { $0.session == session }) {
            _ = sessions[index].rows.apply(rows: entries, removed: removed)
            return
        }
        var rows = PickerRows()
        _ = rows.apply(rows: entries, removed: removed)
        sessions.append((session, rows))
        if sessions.count > Self.limit { sessions.removeFirst() }
    }

    /// The entries held for `session`, now forgotten here.
    mutating func take(_ session: String) -> [PickerRow] {
        guard let index = sessions.firstIndex(where: { $0.session == session }) else { return [] }
        return sessions.remove(at: index).rows.rows
    }
}

/// What the dialog says about the setup after the person chose.
enum SetupStatus: Sendable, Hashable {
    case settingUp(String)
    case failed(title: String, message: String)
    case done(String)

    /// The status for a `PickerAgent1.SetupProgress` step: with its error, or the passkey to
    /// type on the accessory while pairing.
    init(step: String, error: ASError?, passkey: String? = nil, accessory: String) {
        switch step {
        case "pairing":
            if let passkey {
                self = .settingUp("Type \(passkey) on “\(accessory)” to pair it…")
            } else {
                self = .settingUp("Pairing with “\(accessory)”…")
            }
        case "hotspotHandoff": self = .settingUp("Switching on the hotspot of “\(accessory)”…")
        case "bridging": self = .settingUp("Joining the network of “\(accessory)”…")
        case "authorization": self = .settingUp("“\(accessory)” is added. The application is finishing its setup…")
        case "done": self = .done("“\(accessory)” is set up.")
        case "failed": self = .failed(title: "“\(accessory)” could not be set up", message: Self.advice(for: error))
        default: self = .settingUp("Setting up “\(accessory)”…")
        }
    }

    /// A sentence a person can act on, for an agent error.
    static func advice(for error: ASError?) -> String {
        let name = error?.name ?? ""
        let message = error?.message ?? ""
        let known: [String: String] = [
            AgentBus.errorName("WrongPassphrase"): "The accessory refused the passphrase. Check it and try again.",
            HotspotError.notFound("").dbusName: "The accessory is out of range. Bring it closer and try again.",
            AccessorySessionError.Code.discoveryTimeout.dbusName:
                "No accessory was found in time. Make sure it is in setup mode.",
            AgentError.Code.notAuthorized.dbusName: "You are not allowed to set up accessories on this computer.",
        ]
        if let advice = known[name] { return advice }
        return message.isEmpty ? "Something went wrong. Try again." : message
    }
}

/// Finds product images: an item's `productImage` is relative to its profile's directory, one
/// of the directories the agent reads profiles from.
struct ProductImages: Sendable {
    var directories: [URL]

    /// The image file for `path`, when one of the directories holds a valid one (PNG or SVG,
    /// at most 1 MiB, inside the directory); `nil` means the generic icon.
    func file(for path: String?) -> URL? {
        guard let path else { return nil }
        for directory in directories where ProductImage.problem(path, in: directory) == nil {
            return ProductImage.resolve(path, in: directory)
        }
        return nil
    }
}
