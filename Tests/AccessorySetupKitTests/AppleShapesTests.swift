import AccessoryCore
import AgentInterface
import CoreBluetooth
import DBusValues
import Foundation
import Testing

@testable import AccessorySetupKit

/// Apple's classes over the agent's values: what an application sets reads as the agent reads
/// it, what the agent sends reads in Apple's types, and what Apple's framework would stop the
/// app for is an `invalidRequest` naming the field.
@Suite("The client library in Apple's shapes")
struct AppleShapesTests {
    static func invalidRequestField(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as ASError {
            #expect(error.code == .invalidRequest, "\(error)")
            return error.field
        } catch {
            Issue.record("not an ASError: \(error)")
            return nil
        }
    }

    @Test func aDescriptorSetPropertyByPropertyIsTheCoresDescriptor() throws {
        let descriptor = ASDiscoveryDescriptor()
        descriptor.bluetoothServiceUUID = CBUUID(string: "FEED")
        descriptor.bluetoothCompanyIdentifier = 0x0BA9
        descriptor.bluetoothNameSubstring = "Dice"
        descriptor.bluetoothManufacturerDataBlob = Data([0x02, 0x20])
        descriptor.bluetoothManufacturerDataMask = Data([0xFF, 0x00])
        descriptor.bluetoothServiceDataBlob = Data([0x01])
        descriptor.bluetoothServiceDataMask = Data([0xFF])
        descriptor.bluetoothRange = .immediate
        descriptor.supportedOptions = .bluetoothPairingLE
        let read = try descriptor.discoveryDescriptor()
        #expect(read.bluetoothServiceUUID == (try BluetoothUUID("feed")))
        #expect(read.bluetoothCompanyIdentifier == BluetoothCompanyIdentifier(rawValue: 0x0BA9))
        #expect(read.bluetoothNameSubstring == "Dice")
        #expect(read.bluetoothManufacturerData == (try MaskedData(blob: [0x02, 0x20], mask: [0xFF, 0x00])))
        #expect(read.bluetoothServiceData == (try MaskedData(blob: [0x01], mask: [0xFF])))
        #expect(read.bluetoothRange == .immediate && read.supportedOptions == .bluetoothPairingLE)
        #expect(ASDiscoveryDescriptor(read).discoveryDescriptorOrNil == read, "the core's descriptor reads back")
    }

    @Test func ssidsAreTextAsApplesAreAndBytesBeside() throws {
        let descriptor = ASDiscoveryDescriptor()
        descriptor.ssid = "WLED-AP"
        #expect(try descriptor.discoveryDescriptor().ssid == (try SSID("WLED-AP")))

        var core = DiscoveryDescriptor()
        core.ssidPrefix = try SSID(bytes: [0x43, 0x61, 0x6F, 0xFE])
        let bytes = ASDiscoveryDescriptor(core)
        #expect(bytes.ssidPrefix == nil && bytes.ssidPrefixBytes == core.ssidPrefix, "not UTF-8: bytes, not text")
        #expect(try bytes.discoveryDescriptor() == core)

        let tooLong = ASDiscoveryDescriptor()
        tooLong.ssid = String(repeating: "x", count: 33)
        #expect(Self.invalidRequestField { _ = try tooLong.discoveryDescriptor() } == "descriptor.ssid")

        let both = ASDiscoveryDescriptor()
        both.ssid = "a"
        both.ssidBytes = try SSID("a")
        #expect(Self.invalidRequestField { _ = try both.discoveryDescriptor() } == "descriptor.ssid")
    }

    @Test func whatApplesFrameworkStopsTheAppForIsAnInvalidRequestNamingTheField() {
        let cases: [(String, (ASDiscoveryDescriptor) -> Void)] = [
            (
                "descriptor.ssidPrefix",
                {
                    $0.ssid = "a"; $0.ssidPrefix = "b"
                }
            ),
            ("descriptor.bluetoothServiceUUID", { $0.bluetoothServiceUUID = CBUUID(string: "not-a-uuid") }),
            (
                "descriptor.bluetoothManufacturerDataMask",
                {
                    $0.bluetoothCompanyIdentifier = 1; $0.bluetoothManufacturerDataMask = Data([1])
                }
            ),
            (
                "descriptor.bluetoothServiceDataBlob",
                {
                    $0.bluetoothServiceUUID = CBUUID(string: "feed")
                    $0.bluetoothServiceDataBlob = Data([1, 2])
                    $0.bluetoothServiceDataMask = Data([1])
                }
            ),
            ("descriptor.bluetoothNameSubstring", { $0.bluetoothNameSubstring = "Dice" }),
            ("descriptor", { _ in }),
        ]
        for (field, setUp) in cases {
            let descriptor = ASDiscoveryDescriptor()
            setUp(descriptor)
            #expect(Self.invalidRequestField { _ = try descriptor.discoveryDescriptor() } == field)
        }
    }

    @Test func anAccessoryHasApplesTypes() throws {
        var descriptor = DiscoveryDescriptor()
        descriptor.bluetoothServiceUUID = try BluetoothUUID("feed")
        let record = AccessoryRecord(
            id: UUID(uuidString: "6F1B7C1E-0000-4000-8000-000000000001")!, displayName: "Pink Dice",
            state: .authorized, bluetoothIdentifier: try MACAddress("C0:FF:EE:00:00:01"),
            bluetoothTransportBridgingIdentifier: try MACAddress("7C:C6:B6:65:43:22"), descriptor: descriptor,
            owner: AccessoryOwner(uid: 1000, profileID: "org.example.dice"))
        let accessory = ASAccessory(try #require(AccessoryDetails(wire(BusCoding.record(record)))))
        #expect(accessory.state == .authorized)
        #expect(accessory.displayName == "Pink Dice" && accessory.ssid == nil)
        #expect(accessory.bluetoothIdentifier == UUID(uuidString: "4C494E55-5842-8000-8000-C0FFEE000001"))
        #expect(accessory.bluetoothAddress == (try MACAddress("C0:FF:EE:00:00:01")))
        #expect(accessory.bluetoothTransportBridgingIdentifier == Data([0x7C, 0xC6, 0xB6, 0x65, 0x43, 0x22]))
        #expect(accessory.descriptor.bluetoothServiceUUID == CBUUID(string: "0000feed-0000-1000-8000-00805f9b34fb"))
        #expect(accessory.id == "6f1b7c1e-0000-4000-8000-000000000001")
    }

    @Test func aPeripheralIdentifierLeadsBackToItsAddressAndNoOtherUUIDDoes() throws {
        let address = try MACAddress("00:1A:7D:DA:71:13")
        #expect(MACAddress(peripheralIdentifier: address.peripheralIdentifier) == address)
        #expect(address.peripheralIdentifier.uuidString == "4C494E55-5842-8000-8000-001A7DDA7113")
        #expect(MACAddress(peripheralIdentifier: UUID()) == nil)
    }

    @Test func aMigrationItemReadsAsTheAgentReadsIt() throws {
        let descriptor = ASDiscoveryDescriptor()
        descriptor.bluetoothServiceUUID = CBUUID(string: "feed")
        let item = ASMigrationDisplayItem(name: "Pink Dice", productImage: nil, descriptor: descriptor)
        item.hotspotSSID = "Dice-Setup"
        item.peripheralIdentifier = try MACAddress("C0:FF:EE:00:00:01").peripheralIdentifier
        let read = try AccessorySession.pickerRequestItem(wire(try item.dbusValue()).jsonValue, at: "items[0]")
        guard case .migration(let migration) = read else {
            Issue.record("not a migration item: \(read)")
            return
        }
        #expect(migration.item.name == "Pink Dice")
        #expect(migration.hotspotSSID == (try SSID("Dice-Setup")))
        #expect(migration.peripheralAddress == (try MACAddress("C0:FF:EE:00:00:01")))

        let nothing = ASMigrationDisplayItem(name: "Pink Dice", productImage: nil, descriptor: descriptor)
        #expect(Self.invalidRequestField { _ = try nothing.dbusValue() } == "hotspotSSID")
        nothing.peripheralIdentifier = UUID()
        #expect(Self.invalidRequestField { _ = try nothing.dbusValue() } == "peripheralIdentifier")
    }

    @Test func eachDefaultSettingsObjectIsNewAsApplesAre() {
        let settings = ASPickerDisplaySettings.default
        settings.discoveryTimeout = .unbounded
        settings.options.insert(.filterDiscoveryResults)
        #expect(ASPickerDisplaySettings.default.discoveryTimeout == .default)
        #expect(ASPickerDisplaySettings.default.options.isEmpty)
        #expect(settings.pickerDisplaySettings.options == .filterDiscoveryResults)
    }

    @Test func aDiscoveredAccessoryGivesItsAdvertisementUnderCoreBluetoothsKeys() throws {
        let service = try BluetoothUUID("4677")
        let entry = PickerEntry(
            id: 7, itemIndex: 0, name: "Plug",
            bluetooth: BLEAdvertisement(
                address: try MACAddress("C0:FF:EE:00:00:01"), addressType: .random, name: "Plug", rssi: -52,
                txPower: 4, serviceUUIDs: [service],
                manufacturerData: [BluetoothCompanyIdentifier(rawValue: 0x0BA9): [0x02, 0x20]],
                serviceData: [service: [0x01]]))
        let accessory = ASDiscoveredAccessory(try #require(DiscoveredEntry(wire(BusCoding.discovered(entry)))))
        let event = ASAccessoryEvent(eventType: .accessoryDiscovered, accessory: accessory)
        let discovered = try #require(event.accessory as? ASDiscoveredAccessory, "Apple's code casts it so")
        #expect(discovered.bluetoothRSSI == -52)
        let advertisement = try #require(discovered.bluetoothAdvertisementData)
        #expect(advertisement["kCBAdvDataLocalName"] as? String == "Plug")
        #expect(advertisement["kCBAdvDataManufacturerData"] as? Data == Data([0xA9, 0x0B, 0x02, 0x20]))
        #expect(advertisement["kCBAdvDataServiceUUIDs"] as? [String] == [service.string])
        #expect(advertisement["kCBAdvDataServiceData"] as? [String: Data] == [service.string: Data([0x01])])
        #expect(advertisement["kCBAdvDataTxPowerLevel"] as? Int == 4)
        #expect(discovered.bluetoothIdentifier == (try MACAddress("C0:FF:EE:00:00:01")).peripheralIdentifier)
    }

    @Test func aSessionNotActivatedRefusesCallsAsInvalidated() async {
        let session = ASAccessorySession(profile: "org.example.nothing")
        do {
            try await session.showPicker()
            Issue.record("a session never activated showed a picker")
        } catch let error as ASError {
            #expect(error.code == .invalidated)
        } catch {
            Issue.record("not an ASError: \(error)")
        }
        #expect(session.accessories.isEmpty)
    }

    @Test func theDesktopEntryNamesTheApplication() {
        setenv("GIO_LAUNCHED_DESKTOP_FILE", "/usr/share/applications/org.example.Dice.desktop", 1)
        #expect(ASAccessorySession.desktopApplication() == "org.example.Dice")
        unsetenv("GIO_LAUNCHED_DESKTOP_FILE")
        #expect(ASAccessorySession.desktopApplication() == nil)
    }
}

extension ASDiscoveryDescriptor {
    fileprivate var discoveryDescriptorOrNil: DiscoveryDescriptor? { try? discoveryDescriptor() }
}
