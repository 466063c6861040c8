import AccessoryCore
import AgentInterface
import Testing

@Suite("What PickerAgent1 carries, written by the agent and read by the pickers")
struct PickerAgentEntryTests {
    @Test func anEntryOfBothRadiosComesBackAsItWasSent() throws {
        let wifi = WiFiScanEntry(
            ssid: try SSID(bytes: Array("Cam-\u{1}".utf8)), bssid: MACAddress(rawValue: 0x0200_0000_0010), strength: 64,
            frequency: 2437)
        let bluetooth = BLEAdvertisement(address: MACAddress(rawValue: 0xAABB_CCDD_EEFF), name: "GoPro 1234", rssi: -61)
        let core = PickerEntry(
            id: 7, itemIndex: 2, name: "Camera", productImage: "images/cam.svg", wifi: wifi, bluetooth: bluetooth)
        let sent = PickerAgentEntry(core)
        #expect(sent.ssid == wifi.ssid?.notation, "an SSID that is not printable goes escaped, as the core writes it")
        let read = try #require(PickerAgentEntry(sent.dbusValue))
        #expect(read == sent)
        #expect(read.id == 7 && read.item == 2 && read.name == "Camera" && read.productImage == "images/cam.svg")
        #expect(read.bssid == "02:00:00:00:00:10" && read.signal == 64)
        #expect(read.bluetoothAddress == "AA:BB:CC:DD:EE:FF" && read.bluetoothName == "GoPro 1234" && read.rssi == -61)
        #expect(read.strength == max(64, PickerEntry.strength(dBm: -61)))
    }

    @Test func anEntryWithoutItsIdIsNotRead() {
        #expect(PickerAgentEntry(.vardict([("name", .string("no id"))])) == nil)
        #expect(PickerAgentEntry(.vardict([("entry", .int32(-1))])) == nil, "an id is a u")
    }

    @Test func aBluetoothEntryHasNoWiFiFields() throws {
        let core = PickerEntry(
            id: 1, itemIndex: 0, name: "Sensor", bluetooth: BLEAdvertisement(address: MACAddress(rawValue: 1)))
        let read = try #require(PickerAgentEntry(PickerAgentEntry(core).dbusValue))
        #expect(read.ssid == nil && read.bssid == nil && read.signal == nil && read.rssi == nil && read.strength == nil)
        #expect(read.dbusValue["ssid"] == nil)
    }

    @Test func aRequestComesBackAsItWasSent() {
        let sent = PickerAgentRequest(
            profile: "ge.wled.softap", vendor: "WLED", user: 1000,
            items: [
                .init(name: "WLED controller", productImage: "images/wled.svg", rename: true), .init(name: "Other"),
            ],
            asksPassphrase: true)
        let read = PickerAgentRequest(sent.dbusValue)
        #expect(read == sent)
        #expect(read.renames(0) && !read.renames(1) && !read.renames(2))
    }

    @Test func aRequestWithoutAVendorIsTitledWithItsProfile() {
        let read = PickerAgentRequest(.vardict([("profile", .string("org.example.plug"))]))
        #expect(read.vendor == "org.example.plug")
        #expect(read.items.isEmpty && !read.asksPassphrase && read.user == nil)
    }

    @Test func aChoiceComesBackAsThePickerSentIt() throws {
        let sent = PickerAgentChoice(
            entry: 3, name: "Porch light", passphrase: Secret("s3cr3t-pass"), proofOfPossession: Secret("abcd1234"))
        let read = try #require(PickerAgentChoice(sent.dbusValues))
        #expect(read.entry == 3 && read.name == "Porch light")
        #expect(read.passphrase?.reveal() == "s3cr3t-pass" && read.proofOfPossession?.reveal() == "abcd1234")
        let bare = try #require(PickerAgentChoice(PickerAgentChoice(entry: 0).dbusValues))
        #expect(bare.entry == 0 && bare.name == nil && bare.passphrase == nil && bare.proofOfPossession == nil)
        #expect(PickerAgentChoice(entry: 0).dbusValues[1] == .vardict([]), "nothing typed, nothing sent")
    }

    @Test func aChoiceWithoutAnEntryIsNotRead() throws {
        #expect(PickerAgentChoice([]) == nil)
        #expect(PickerAgentChoice([.string("3")]) == nil, "an entry is a u")
        let entryOnly = try #require(PickerAgentChoice([.uint32(5)]), "the answer's dictionary may be left out")
        #expect(entryOnly.entry == 5 && entryOnly.name == nil)
    }
}
