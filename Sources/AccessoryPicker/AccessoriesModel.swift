import AccessoryCore
import AccessorySetupKit
import AgentInterface
import FoundationEssentials
import GLibRuntime

/// The accessories of one application in the Accessories window: a sandboxed application's,
/// named as its desktop file names it, or the host programs' (`application` nil).
struct AccessoryGroup: Sendable, Hashable, Identifiable {
    static let hostTitle = "Programs on this computer"

    /// The Flatpak id; `nil` for the records of programs on the host.
    var application: String?
    var title: String
    /// The application's icon, serialized as `DesktopApplication.icon`.
    var icon: String?
    var accessories: [AccessoryDetails]

    var id: String { application ?? "" }

    /// `accessories` grouped by application, the applications by title and the host programs
    /// last; each group's accessories by name. `applications` names the sandboxed ones.
    static func grouping(_ accessories: [AccessoryDetails], applications: [String: DesktopApplication])
        -> [AccessoryGroup]
    {
        let byApplication = Dictionary(grouping: accessories) { $0.application }
        var groups = byApplication.compactMap { application, records -> AccessoryGroup? in
            guard let application else { return nil }
            let desktop = applications[application]
            return AccessoryGroup(
                application: application, title: desktop?.name ?? application, icon: desktop?.icon,
                accessories: records.sortedForDisplay)
        }
        groups.sort { ($0.title.lowercased(), $0.id) < ($1.title.lowercased(), $1.id) }
        if let host = byApplication[nil] {
            groups.append(AccessoryGroup(application: nil, title: hostTitle, accessories: host.sortedForDisplay))
        }
        return groups
    }

    /// The confirmation of Remove Access: what goes, in a sentence.
    var removeAccessBody: String {
        let count = accessories.count == 1 ? "its accessory" : "its \(accessories.count) accessories"
        return "\(title) forgets \(count), and the Wi-Fi networks set up for them are removed from this computer."
    }
}

extension [AccessoryDetails] {
    fileprivate var sortedForDisplay: [AccessoryDetails] {
        sorted { ($0.displayName.lowercased(), $0.id) < ($1.displayName.lowercased(), $1.id) }
    }
}

extension AccessoryDetails {
    /// How the accessory is reached: `Wi-Fi`, `Bluetooth`, or both.
    var transportText: String {
        switch (ssid != nil, bluetoothIdentifier != nil) {
        case (true, true): "Wi-Fi and Bluetooth"
        case (false, true): "Bluetooth"
        default: "Wi-Fi"
        }
    }

    var isBluetoothOnly: Bool { ssid == nil && bluetoothIdentifier != nil }

    /// The record's state as a person reads it.
    var stateText: String {
        switch state {
        case "authorized": "Set up"
        case "awaitingAuthorization": "Waiting for its application"
        case "unauthorized": "Not authorized"
        default: state
        }
    }

    /// Where the accessory is on the home network: its addresses (and host name) as DNS-SD
    /// found it there, else the address it reported when it joined; `nil` when unknown.
    var locationText: String? {
        if let location, !location.addresses.isEmpty {
            let host = location.hostname.isEmpty ? "" : " (\(location.hostname))"
            return location.addresses.joined(separator: ", ") + host
        }
        if let address = network?.ipv4Address { return address }
        return nil
    }

    /// The web page the accessory announces on the home network (an HTTP service), if any.
    var webPage: URL? {
        if let url = network?.url, let page = URL(string: url), page.scheme == "http" || page.scheme == "https" {
            return page
        }
        guard let location, location.service == "_http._tcp", let address = location.addresses.first else {
            return nil
        }
        let host = address.contains(":") ? "[\(address)]" : address
        return URL(string: "http://\(host)" + (location.port == 80 || location.port == 0 ? "" : ":\(location.port)"))
    }

    /// The row's second line: transport, state and location.
    var summary: String {
        [transportText, stateText, locationText.map { "at \($0)" }].compactMap { $0 }.joined(separator: " · ")
    }
}

/// What the Accessories window shows.
enum AccessoriesContent: Sendable, Hashable {
    case loading
    /// The accessories by application, and the SSIDs of the Wi-Fi configurations applications applied.
    case list([AccessoryGroup], configurations: [String])
    /// The person has no accessories, nor configurations.
    case empty
    /// The agent is not running and cannot be started.
    case noAgent(String)
    /// polkit refused (another user's accessories without `manage-others`).
    case notAllowed(String)
    case failed(String)

    init(_ groups: [AccessoryGroup], configurations: [String]) {
        self = groups.isEmpty && configurations.isEmpty ? .empty : .list(groups, configurations: configurations)
    }

    init(_ error: AgentCallError) {
        if error.isNotRunning {
            self = .noAgent(error.message)
        } else if error.isNotAuthorized {
            self = .notAllowed(error.message)
        } else {
            self = .failed(error.message)
        }
    }
}
