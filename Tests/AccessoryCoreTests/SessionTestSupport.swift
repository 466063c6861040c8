import Foundation
import Testing

@testable import AccessoryCore

/// Builders and a driver shared by the session and kiosk tests.
enum SessionFixture {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let owner = AccessoryOwner(uid: 1000, profileID: "org.example.plug")
    static let sensorService = BluetoothUUID(assigned: 0x180D)
    static let company = BluetoothCompanyIdentifier(rawValue: 0x0BA9)

    static func descriptor(_ change: (inout DiscoveryDescriptor) throws -> Void) rethrows -> DiscoveryDescriptor {
        var descriptor = DiscoveryDescriptor()
        try change(&descriptor)
        return descriptor
    }

    static var plugItem: PickerDisplayItem {
        PickerDisplayItem(name: "Example plug", descriptor: descriptor { $0.ssidPrefix = try! SSID("plug-") })
    }

    static var sensorItem: PickerDisplayItem {
        PickerDisplayItem(name: "Example sensor", descriptor: descriptor { $0.bluetoothServiceUUID = sensorService })
    }

    /// A profile supporting both radios, looking for `plug-…` hotspots and the 180d service.
    static var profile: AccessoryProfile {
        AccessoryProfile(
            id: "org.example.plug", vendor: "Example", supports: [.wifi, .bluetooth],
            bluetooth: .init(services: [sensorService], names: ["Plug"], companyIdentifiers: [company]),
            handoff: .none, items: [plugItem, sensorItem])
    }

    static func accessPoint(_ ssid: String, _ bssid: String, strength: Int = 60) -> WiFiScanEntry {
        WiFiScanEntry(
            ssid: try! SSID(ssid), bssid: try! MACAddress(bssid), strength: strength, frequency: 2412, security: .psk)
    }

    /// Two plugs' setup hotspots, plug-0001 and plug-0002, heard in one scan.
    static var twoPlugs: [WiFiScanEntry] {
        [accessPoint("plug-0001", "24:0A:C4:00:00:01"), accessPoint("plug-0002", "30:AE:A4:00:00:01")]
    }

    static func sensor(_ address: String, rssi: Int = -60, name: String? = nil) -> BLEAdvertisement {
        BLEAdvertisement(address: try! MACAddress(address), name: name, rssi: rssi, serviceUUIDs: [sensorService])
    }

    static func record(
        _ name: String, state: AccessoryState, descriptor: DiscoveryDescriptor, ssid: String? = nil
    ) -> AccessoryRecord {
        AccessoryRecord(
            displayName: name, state: state, ssid: ssid.map { try! SSID($0) }, descriptor: descriptor,
            owner: owner, created: now)
    }
}

/// Drives a session and keeps every effect and event, in order.
struct SessionRun {
    typealias Effect = AccessorySession.Effect

    var session: AccessorySession
    private(set) var effects: [Effect] = []

    init(profile: AccessoryProfile = SessionFixture.profile, accessories: [AccessoryRecord] = [], activate: Bool = true)
    {
        session = AccessorySession(profile: profile, owner: SessionFixture.owner, accessories: accessories)
        if activate { send(.activate) }
    }

    /// The events the client received, in order.
    var events: [AccessoryEvent] {
        effects.compactMap { if case .emit(let event) = $0 { event } else { nil } }
    }

    var eventTypes: [AccessoryEventType] { events.map(\.type) }

    /// Sends an input that must be accepted; returns its effects.
    @discardableResult
    mutating func send(_ input: AccessorySession.Input, at now: Date = SessionFixture.now) -> [Effect] {
        do {
            let output = try session.handle(input, at: now)
            effects += output
            return output
        } catch {
            Issue.record("refused: \(error)")
            return []
        }
    }

    /// Sends an input that must be refused; returns the error. The state must not change.
    mutating func refusal(_ input: AccessorySession.Input) -> AccessorySessionError? {
        let before = (session.phase, session.accessories, session.pickerEntries)
        do {
            effects += try session.handle(input, at: SessionFixture.now)
            return nil
        } catch {
            #expect(
                before == (session.phase, session.accessories, session.pickerEntries), "a refusal changed the state")
            return error
        }
    }

    /// Shows a picker for `items` with the agent front end.
    @discardableResult
    mutating func showPicker(
        _ items: [PickerDisplayItem], settings: PickerDisplaySettings = .init(), frontEnd: PickerFrontEnd = .agent
    ) -> [Effect] {
        send(.showPicker(items.map(PickerRequestItem.display), settings, frontEnd))
    }
}
