import AccessorySetupKit
import AgentInterface
import DBusValues
import Foundation
import Testing

@testable import AccessoryPicker

private func entry(
    _ id: UInt32, name: String = "WLED controller", ssid: String? = "WLED-AP", signal: UInt32? = 64
) -> PickerRow {
    PickerRow(entryValue(id, name: name, ssid: ssid, signal: signal))!
}

private func entryValue(_ id: UInt32, name: String, ssid: String?, signal: UInt32?) -> DBusValue {
    var fields: [(String, DBusValue)] = [("entry", .uint32(id)), ("item", .uint32(0)), ("name", .string(name))]
    if let ssid { fields.append(("ssid", .string(ssid))) }
    if let signal { fields.append(("signal", .uint32(signal))) }
    return .vardict(fields)
}

@Suite("The picker's model")
struct PickerModelTests {
    @Test("a request reads its vendor, items, rename and passphrase flags")
    func request() {
        let request = PickerRequest(
            session: "/io/accessorysetup/session/1",
            request: PickerAgentRequest(
                .vardict([
                    ("profile", .string("ge.wled.softap")), ("vendor", .string("WLED")), ("user", .uint32(1000)),
                    (
                        "items",
                        .array(
                            [
                                .vardict([
                                    ("name", .string("WLED controller")), ("rename", .boolean(true)),
                                    ("productImage", .string("images/a.svg")),
                                ])
                            ], elementType: "a{sv}")
                    ),
                    ("passphrase", .boolean(false)),
                ])))
        #expect(request.vendor == "WLED")
        #expect(request.items == [.init(name: "WLED controller", productImage: "images/a.svg", rename: true)])
        #expect(request.renames(0))
        #expect(!request.renames(1))
        #expect(!request.asksPassphrase)
    }

    @Test("rows appear, change and vanish, in arrival order")
    func rows() {
        var rows = PickerRows()
        var change = rows.apply(
            rows: [entry(1), entry(2, name: "Plug", ssid: "Acme-Setup-4F2A", signal: 50)], removed: [])
        #expect(change.added.map(\.id) == [1, 2])
        change = rows.apply(rows: [entry(2, name: "Plug", ssid: "Acme-Setup-4F2A", signal: 80), entry(1)], removed: [])
        #expect(change.added.isEmpty)
        #expect(change.changed.map(\.signal) == [80])
        change = rows.apply(rows: [], removed: [1, 7])
        #expect(change.removed == [1])
        #expect(rows.rows.map(\.id) == [2])
    }

    @Test("a row says what identifies the accessory and its signal")
    func rowText() throws {
        let wifi = entry(1)
        #expect(wifi.identity == "Wi-Fi · WLED-AP")
        #expect(wifi.signalText == "64%")
        let bluetooth = try #require(
            PickerRow(
                .vardict([
                    ("entry", .uint32(3)), ("name", .string("Sensor")),
                    ("bluetoothAddress", .string("AA:BB:CC:DD:EE:FF")),
                    ("bluetoothName", .string("SBDW-002C")), ("rssi", .int32(-61)),
                ])))
        #expect(bluetooth.identity == "Bluetooth · SBDW-002C (AA:BB:CC:DD:EE:FF)")
        #expect(bluetooth.signalText == "-61 dBm")
        #expect(bluetooth.isBluetooth)
        #expect(PickerRow(.vardict([("name", .string("no id"))])) == nil)
    }

    @Test("a failed setup says what to do")
    func failure() {
        let wrong = SetupStatus(
            step: "failed", error: ASError(code: .unknown, name: AgentBus.errorName("WrongPassphrase"), message: "x"),
            accessory: "Plug")
        let refused = "The accessory refused the passphrase. Check it and try again."
        #expect(wrong == .failed(title: "“Plug” could not be set up", message: refused))
        let other = SetupStatus(
            step: "failed", error: ASError(code: .unknown, name: "", message: "Bring it closer."), accessory: "Plug")
        #expect(other == .failed(title: "“Plug” could not be set up", message: "Bring it closer."))
        let bridging = SetupStatus(step: "bridging", error: nil, accessory: "Plug")
        #expect(bridging == .settingUp("Joining the network of “Plug”…"))
    }

    @Test("pairing shows the passkey to type on the accessory; the hotspot handoff says what it does")
    func pairingAndHandoff() {
        let passkey = SetupStatus(step: "pairing", error: nil, passkey: "004242", accessory: "Camera")
        #expect(passkey == .settingUp("Type 004242 on “Camera” to pair it…"))
        #expect(SetupStatus(step: "pairing", error: nil, accessory: "Camera") == .settingUp("Pairing with “Camera”…"))
        #expect(
            SetupStatus(step: "hotspotHandoff", error: nil, accessory: "Camera")
                == .settingUp("Switching on the hotspot of “Camera”…"))
        #expect(
            SetupStatus(step: "authorization", error: nil, accessory: "Camera")
                == .settingUp("“Camera” is added. The application is finishing its setup…"))
    }

    @Test("product images resolve inside the profile directories only, else the generic icon")
    func images() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("picker-images-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("images"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8)
            .write(to: directory.appendingPathComponent("images/a.svg"))
        try Data("not an image".utf8).write(to: directory.appendingPathComponent("images/b.png"))
        let images = ProductImages(directories: [URL(fileURLWithPath: "/nonexistent"), directory])
        #expect(images.file(for: "images/a.svg")?.path == directory.appendingPathComponent("images/a.svg").path)
        #expect(images.file(for: "images/b.png") == nil)
        #expect(images.file(for: "../\(directory.lastPathComponent)/images/a.svg") == nil)
        #expect(images.file(for: nil) == nil)
    }
}

@Suite("Entries that arrive before the picker request")
struct EarlyEntriesTests {
    @Test("entries for a session without a dialog are held, changed and removed, then handed over once")
    func heldUntilTheRequest() {
        var early = EarlyEntries()
        early.hold("/s/1", [entry(1), entry(2, name: "Plug", ssid: "Acme-Setup-4F2A", signal: 50)], removed: [])
        early.hold("/s/1", [entry(2, name: "Plug", ssid: "Acme-Setup-4F2A", signal: 70)], removed: [1])
        early.hold("/s/2", [entry(9)], removed: [])
        let rows = early.take("/s/1")
        #expect(rows.map(\.id) == [2])
        #expect(rows.first?.signal == 70)
        #expect(early.take("/s/1").isEmpty)
        #expect(early.take("/s/2").map(\.id) == [9])
    }

    @Test("no more than the limit of sessions is held; the oldest goes")
    func bounded() {
        var early = EarlyEntries()
        for index in 0...EarlyEntries.limit { early.hold("/s/\(index)", [entry(1)], removed: []) }
        #expect(early.take("/s/0").isEmpty)
        #expect(early.take("/s/\(EarlyEntries.limit)").map(\.id) == [1])
    }
}
