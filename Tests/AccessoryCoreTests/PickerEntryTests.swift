import Testing

@testable import AccessoryCore

@Suite("Picker entries")
struct PickerEntryTests {
    @Test func bluetoothLevelsUseNetworkManagersScale() {
        #expect(PickerEntry.strength(dBm: -30) == 100)
        #expect(PickerEntry.strength(dBm: -40) == 100)
        #expect(PickerEntry.strength(dBm: -70) == 50)
        #expect(PickerEntry.strength(dBm: -100) == 0)
        #expect(PickerEntry.strength(dBm: -120) == 0)
    }

    @Test func theEntrysSignalIsItsStrongerRadio() {
        let wifi = SessionFixture.accessPoint("plug-1", "24:0A:C4:00:00:01", strength: 30)
        #expect(
            PickerEntry(
                id: 1, itemIndex: 0, name: "", wifi: wifi,
                bluetooth: SessionFixture.sensor("24:0A:C4:00:00:02", rssi: -70)
            )
            .signalStrength == 50)
        #expect(PickerEntry(id: 1, itemIndex: 0, name: "", wifi: wifi).signalStrength == 30)
        #expect(PickerEntry(id: 1, itemIndex: 0, name: "").signalStrength == nil)
    }

    @Test func unitsSharingASetupSSIDAreNamedByTheirBSSIDAndAnAddedOneHidesNoSibling() throws {
        let first = SessionFixture.accessPoint("WLED-AP", "02:00:00:00:1B:2D")
        let second = SessionFixture.accessPoint("WLED-AP", "02:00:00:00:1B:2E")
        let alone = SessionFixture.accessPoint("plug-1", "02:00:00:00:00:01")
        let entries = AccessorySession.unitsToldApart([
            PickerEntry(id: 1, itemIndex: 0, name: "WLED", wifi: first),
            PickerEntry(id: 2, itemIndex: 0, name: "WLED", wifi: second),
            PickerEntry(id: 3, itemIndex: 0, name: "Plug", wifi: alone),
        ])
        #expect(entries.map(\.name) == ["WLED · 1B:2D", "WLED · 1B:2E", "Plug"])
        let owner = AccessoryOwner(uid: 1000, profileID: "ge.wled.softap")
        let added = AccessoryRecord(
            displayName: "WLED", state: .authorized, ssid: try SSID("WLED-AP"), hotspotBSSID: first.bssid,
            descriptor: DiscoveryDescriptor(), owner: owner)
        #expect(added.isHeard(in: entries[0]))
        #expect(!added.isHeard(in: entries[1]), "an added unit does not hide its sibling")
        // A record from before BSSIDs were kept claims its SSID, as it did.
        var older = added
        older.hotspotBSSID = nil
        #expect(older.isHeard(in: entries[1]))
    }

    @Test func anAccessPointAndAnAdvertiserAreOneDeviceByNameOrNeighbouringAddress() throws {
        let accessPoint = SessionFixture.accessPoint("Shelly-4F2A", "24:0A:C4:00:00:FF")
        #expect(
            PickerEntryTable.sameDevice(accessPoint, SessionFixture.sensor("24:0A:C4:00:01:01")),
            "base + 2 across an octet")
        #expect(
            PickerEntryTable.sameDevice(accessPoint, SessionFixture.sensor("AA:BB:CC:00:00:01", name: "Shelly-4F2A")))
        #expect(!PickerEntryTable.sameDevice(accessPoint, SessionFixture.sensor("24:0A:C4:00:01:03")), "4 apart")
        #expect(!PickerEntryTable.sameDevice(accessPoint, SessionFixture.sensor("30:0A:C4:00:00:FE")), "another OUI")
        var random = SessionFixture.sensor("24:0A:C4:00:00:FE")
        random.addressType = .random
        #expect(!PickerEntryTable.sameDevice(accessPoint, random), "a random address says nothing about the hardware")
    }

    @Test func idsStayWithTheirDevice() {
        var table = PickerEntryTable()
        let items = [SessionFixture.plugItem, SessionFixture.sensorItem]
        let a = AccessoryMatch(itemIndex: 0, device: .wifi(SessionFixture.accessPoint("plug-a", "24:0A:C4:00:00:01")))
        let b = AccessoryMatch(itemIndex: 1, device: .bluetooth(SessionFixture.sensor("AC:67:B2:00:00:09")))
        #expect(table.entries(for: [a, b], items: items).map(\.id) == [1, 2])
        #expect(table.entries(for: [b], items: items).map(\.id) == [2])
        #expect(table.entries(for: [a, b], items: items).map(\.id) == [1, 2], "a device heard again keeps its id")
        #expect(table.entries(for: [b], items: items).first?.name == "Example sensor")
    }
}
