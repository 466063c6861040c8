import AccessoryCore
import AgentInterface
import CGLib
import DBusValues
import Foundation
import Testing

@testable import AccessorySetupKit

/// What the client library reads is what the agent writes (`BusCoding`), and what it sends is
/// what the agent reads (docs/dbus-api.md, "Conventions").
/// `value` as a client receives it: through a `GVariant`, variants unwrapped.
func wire(_ value: DBusValue) -> DBusValue {
    let variant = g_variant_ref_sink(value.newVariant())!
    defer { g_variant_unref(variant) }
    return DBusValue(copying: variant)
}

@Suite("The client library's reading and writing of the agent's dictionaries")
struct CodingTests {
    static func record() throws -> AccessoryRecord {
        var descriptor = DiscoveryDescriptor()
        descriptor.ssidPrefix = try SSID("WLED-")
        return AccessoryRecord(
            id: UUID(uuidString: "6F1B7C1E-0000-4000-8000-000000000001")!, displayName: "Living room lights",
            state: .awaitingAuthorization, ssid: try SSID(notation: "hex:43616ffe"),
            bluetoothTransportBridgingIdentifier: try MACAddress("7C:C6:B6:65:43:22"), descriptor: descriptor,
            owner: AccessoryOwner(uid: 1000, profileID: "ge.wled.softap"))
    }

    @Test func anAccessoryReadsAsTheAgentWroteIt() throws {
        let record = try Self.record()
        let accessory = try #require(AccessoryDetails(wire(BusCoding.record(record))))
        #expect(accessory.id == "6f1b7c1e-0000-4000-8000-000000000001")
        #expect(accessory.displayName == "Living room lights")
        #expect(accessory.state == "awaitingAuthorization")
        #expect(accessory.profile == "ge.wled.softap")
        #expect(accessory.user == 1000)
        #expect(accessory.application == nil, "a host process's record names no application")
        #expect(accessory.ssid == record.ssid?.notation)
        #expect(accessory.bluetoothIdentifier == nil)
        #expect(accessory.bluetoothTransportBridgingIdentifier == "7C:C6:B6:65:43:22")
        #expect(accessory.descriptor == .object(["ssidPrefix": .string("WLED-")]))
        #expect(accessory.json == wire(BusCoding.record(record)).jsonValue)
        #expect(AccessoryDetails(.vardict([])) == nil, "the empty dictionary is no accessory")
    }

    @Test func anApplicationsAccessoryNamesItsApplication() throws {
        var record = try Self.record()
        record.owner.application = "org.example.AcmePlug"
        let accessory = try #require(AccessoryDetails(wire(BusCoding.record(record))))
        #expect(accessory.application == "org.example.AcmePlug")
        guard case .object(let fields) = accessory.json else {
            Issue.record("the accessory's JSON is not an object: \(accessory.json)")
            return
        }
        #expect(fields["application"] == .string("org.example.AcmePlug"))
    }

    @Test func errorsKeepApplesCodeOrTheAgentsOwnName() throws {
        let timeout = try #require(ASError(dictionary: wire(BusCoding.error(.discoveryTimeout))))
        #expect(timeout.code == .discoveryTimeout)
        #expect(timeout.name == "io.accessorysetup.Error.DiscoveryTimeout")
        let field = try #require(
            ASError(dictionary: wire(BusCoding.error(.invalidRequest(field: "items[0]", reason: "r")))))
        #expect(field.code == .invalidRequest)
        #expect(field.field == "items[0]")
        #expect(ASError(dictionary: wire(BusCoding.error(nil))) == nil)
        let hotspot = AgentCallError(name: HotspotError.wrongPassphrase(try SSID("x")).dbusName, message: "m")
        #expect(hotspot.accessoryError == nil, "not one of Apple's codes")
        #expect(hotspot.is(HotspotError.wrongPassphrase(try SSID("y"))))
        let denied = AgentCallError(name: AgentError.Code.notAuthorized.dbusName, message: "m")
        #expect(denied.isNotAuthorized)
        #expect(AgentCallError(name: "org.freedesktop.DBus.Error.ServiceUnknown", message: "").isNotRunning)
    }

    @Test func aSubscribersEventReadsItsSessionTypeAccessoryAndError() throws {
        let record = try Self.record()
        let added = try #require(
            AgentEvent(
                managerEvent: wire(
                    .tuple([
                        .objectPath("/io/accessorysetup/session/3"), .uint32(30), BusCoding.record(record),
                        BusCoding.error(nil),
                    ])
                ).elements))
        #expect(added.session == "/io/accessorysetup/session/3")
        #expect(added.eventType == .accessoryAdded)
        #expect(added.accessory?.displayName == "Living room lights")
        #expect(added.error == nil)
        let dismissed = try #require(
            AgentEvent(
                managerEvent: wire(
                    .tuple([
                        .objectPath("/s"), .uint32(50), BusCoding.emptyDictionary, BusCoding.error(.userCancelled),
                    ])
                ).elements))
        #expect(dismissed.eventType == .pickerDidDismiss)
        #expect(dismissed.accessory == nil)
        #expect(dismissed.error?.code == .userCancelled)
        #expect(AgentEvent(managerEvent: [.string("short")]) == nil)
    }

    @Test func aDiscoveredAccessoryReadsTheAccessPointsFieldsAndTheAdvertisementsRawData() throws {
        let service = try BluetoothUUID("4677")
        let entry = PickerEntry(
            id: 7, itemIndex: 1, name: "Plug",
            wifi: WiFiScanEntry(
                ssid: try SSID("plug-4F2A"), bssid: try MACAddress("24:0A:C4:00:00:01"), strength: 70, frequency: 2437,
                security: .psk),
            bluetooth: BLEAdvertisement(
                address: try MACAddress("C0:FF:EE:00:00:01"), addressType: .random, name: "Plug", rssi: -52,
                txPower: 4, serviceUUIDs: [service],
                manufacturerData: [BluetoothCompanyIdentifier(rawValue: 0x0BA9): [0x02, 0x20]],
                serviceData: [service: [0x01, 0x01]]))
        let discovered = try #require(DiscoveredEntry(wire(BusCoding.discovered(entry))))
        #expect(discovered.entry == 7 && discovered.item == 1)
        #expect(discovered.ssid == "plug-4F2A" && discovered.bssid == "24:0A:C4:00:00:01")
        #expect(discovered.signal == 70 && discovered.frequency == 2437 && discovered.security == ["wpa-psk"])
        #expect(discovered.bluetoothIdentifier == "C0:FF:EE:00:00:01" && discovered.bluetoothName == "Plug")
        #expect(discovered.bluetoothRSSI == -52 && discovered.txPower == 4)
        #expect(discovered.serviceUUIDs == [service.string])
        #expect(discovered.manufacturerData == [0x0BA9: [0x02, 0x20]])
        #expect(discovered.serviceData == [service.string: [0x01, 0x01]])
    }

    @Test func anAccessorysConnectionReportReadsAsTheAgentWroteIt() throws {
        let report = HotspotConnectionReport(state: .down, device: "wlan0", reason: "the network was not found")
        let accessory = try #require(AccessoryDetails(wire(BusCoding.record(try Self.record(), connection: report))))
        #expect(accessory.connection?.state == "down")
        #expect(accessory.connection?.summary == "hotspot connection down on wlan0: the network was not found")
        #expect(try AccessoryDetails(wire(BusCoding.record(Self.record())))?.connection == nil)
    }

    @Test func joinOptionsCarryOnlyWhatWasGiven() {
        #expect(AccessoryJoinOptions().dbusValue.members?.isEmpty == true)
        let all = AccessoryJoinOptions(
            passphrase: Secret("pass-1234"), withoutSecurity: true, device: "wlan1", restoreAfter: 30)
        let members = wire(all.dbusValue).members ?? [:]
        #expect(members["passphrase"]?.string == "pass-1234")
        #expect(members["withoutSecurity"]?.bool == true)
        #expect(members["device"]?.string == "wlan1")
        #expect(members["restoreAfter"]?.uint32 == 30)
    }
}
