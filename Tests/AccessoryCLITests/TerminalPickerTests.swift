import AccessoryCore
import GLibRuntime
import Testing

@testable import AccessoryCLI

private func entry(_ id: UInt32, _ name: String, ssid: String? = nil, signal: Int? = nil) -> PickerModel.Entry {
    PickerModel.Entry(id: id, item: 0, name: name, ssid: ssid, signal: signal)
}

private let plugRequest = PickerModel.Request(
    profile: "org.example.plug", vendor: "Example", items: [.init(name: "Item", rename: false)], asksPassphrase: false)

/// A model with the request made and `entries` shown.
private func choosing(_ entries: [PickerModel.Entry], request: PickerModel.Request = plugRequest) -> PickerModel {
    var model = PickerModel()
    model.requested(request)
    model.update(entries, removed: [])
    return model
}

private let twoPlugs = [
    entry(7, "Acme plug", ssid: "Acme-Setup-4F2A", signal: 50),
    entry(9, "Acme plug", ssid: "Acme-Setup-9B1C", signal: 80),
]

@Suite struct PickerModelTests {
    @Test func downThenEnterChoosesTheSecond() {
        var model = choosing(twoPlugs)
        #expect(model.selected == 7)
        #expect(model.handle(.down) == nil)
        #expect(model.handle(.enter) == .choose(entry: 9, name: nil, passphrase: nil))
        #expect(model.stage == .settingUp(9, name: nil, step: nil))
    }

    @Test func anItemsNumberSelectsIt() {
        var model = choosing((1...12).map { entry($0, "Plug \($0)", ssid: "Acme-Setup-\($0)") })
        _ = model.handle(.character("2"))
        #expect(model.selected == 2)
        // Digits in a row make one number while it names an entry.
        _ = model.handle(.character("1"))
        _ = model.handle(.character("2"))
        #expect(model.selected == 12)
        _ = model.handle(.character("9"))
        #expect(model.selected == 9)
        #expect(model.handle(.enter) == .choose(entry: 9, name: nil, passphrase: nil))
    }

    @Test func aNumberWithNoEntrySaysSo() {
        var model = choosing(twoPlugs)
        _ = model.handle(.character("5"))
        #expect(model.selected == 7)
        #expect(model.notice == "There is no accessory 5.")
    }

    @Test(arguments: [PickerModel.Key.escape, .interrupt])
    func escapeAndControlCCancel(key: PickerModel.Key) {
        var model = choosing(twoPlugs)
        #expect(model.handle(key) == .cancel)
        #expect(model.stage == .closed(.cancelled))
    }

    @Test func enterWithNothingFoundWaits() {
        var model = choosing([])
        #expect(model.handle(.enter) == nil)
        #expect(model.stage == .choosing)
    }

    @Test func theSelectionStaysOnItsAccessoryAsOthersComeAndGo() {
        var model = choosing(twoPlugs + [entry(11, "Acme plug", ssid: "Acme-Setup-0000")])
        _ = model.handle(.down)
        #expect(model.selected == 9)
        model.update([entry(12, "Acme plug", ssid: "Acme-Setup-1111")], removed: [7])
        #expect(model.selected == 9)
        #expect(model.entries.map(\.id) == [9, 11, 12])
        // The selected one vanishes: the one now in its place is selected.
        model.update([], removed: [9])
        #expect(model.selected == 11)
        model.update([], removed: [11, 12])
        #expect(model.selected == nil)
    }

    @Test func renameThenPassphrase() {
        let request = PickerModel.Request(
            profile: "org.example.cam", vendor: "Example", items: [.init(name: "Item", rename: true)],
            asksPassphrase: true)
        var model = choosing([entry(3, "Acme camera", ssid: "Acme-Cam-77")], request: request)
        #expect(model.handle(.enter) == nil)
        #expect(model.stage == .renaming(3))
        for character in "Desk  cam" { _ = model.handle(.character(character)) }
        _ = model.handle(.backspace)
        _ = model.handle(.character("X"))
        #expect(model.typed == "Desk  caX")
        #expect(model.handle(.enter) == nil)
        #expect(model.stage == .passphrase(3, name: "Desk  caX"))
        #expect(model.handle(.enter) == nil)
        #expect(model.notice == "Type the accessory's passphrase, or Esc to go back.")
        for character in "label-code" { _ = model.handle(.character(character)) }
        #expect(model.typedSecretLength == 10)
        #expect(model.handle(.enter) == .choose(entry: 3, name: "Desk  caX", passphrase: Secret("label-code")))
    }

    @Test func passphraseThenProofOfPossession() {
        let request = PickerModel.Request(
            profile: "org.example.espprov", vendor: "Example", items: [.init(name: "Item")], asksPassphrase: true,
            asksProofOfPossession: true, proofOfPossessionHint: "Under the lid")
        var model = choosing([entry(4, "Acme plug", ssid: "PROV_4F2A")], request: request)
        #expect(model.handle(.enter) == nil)
        for character in "hotspot-pass" { _ = model.handle(.character(character)) }
        #expect(model.handle(.enter) == nil)
        #expect(model.stage == .proofOfPossession(4, name: nil, passphrase: Secret("hotspot-pass")))
        #expect(model.handle(.enter) == nil)
        #expect(model.notice == "Type the code printed on the device, or Esc to go back.")
        for character in "abcd1234" { _ = model.handle(.character(character)) }
        #expect(model.typedSecretLength == 8)
        #expect(
            model.handle(.enter)
                == .choose(
                    entry: 4, name: nil, passphrase: Secret("hotspot-pass"), proofOfPossession: Secret("abcd1234")))
        #expect(model.stage == .settingUp(4, name: nil, step: nil))
    }

    @Test func escapeFromTheProofOfPossessionGoesBackToTheList() {
        let request = PickerModel.Request(
            profile: "p", vendor: "v", items: [.init(name: "Item")], asksPassphrase: false, asksProofOfPossession: true)
        var model = choosing([entry(4, "Acme plug", ssid: "PROV_4F2A")], request: request)
        #expect(model.handle(.enter) == nil)
        #expect(model.stage == .proofOfPossession(4, name: nil, passphrase: nil))
        _ = model.handle(.character("x"))
        #expect(model.handle(.escape) == nil)
        #expect(model.stage == .choosing)
        #expect(model.typedSecretLength == 0)
    }

    @Test func anEmptyNameKeepsTheItemsName() {
        let request = PickerModel.Request(
            profile: "p", vendor: "v", items: [.init(name: "Item", rename: true)], asksPassphrase: false)
        var model = choosing([entry(3, "Acme camera")], request: request)
        _ = model.handle(.enter)
        _ = model.handle(.character(" "))
        #expect(model.handle(.enter) == .choose(entry: 3, name: nil, passphrase: nil))
    }

    @Test func aNameTheAgentWouldRefuseIsRefusedHere() {
        let request = PickerModel.Request(
            profile: "p", vendor: "v", items: [.init(name: "Item", rename: true)], asksPassphrase: false)
        var model = choosing([entry(3, "Acme camera")], request: request)
        _ = model.handle(.enter)
        for _ in 0..<129 { _ = model.handle(.character("a")) }
        #expect(model.handle(.enter) == nil)
        #expect(model.stage == .renaming(3))
        #expect(model.notice == "The name is 129 bytes long; at most 128 are allowed.")
    }

    @Test func escapeInAPromptGoesBackAndForgetsWhatWasTyped() {
        let request = PickerModel.Request(
            profile: "p", vendor: "v", items: [.init(name: "Item", rename: false)], asksPassphrase: true)
        var model = choosing(twoPlugs, request: request)
        _ = model.handle(.enter)
        for character in "secret" { _ = model.handle(.character(character)) }
        #expect(model.handle(.escape) == nil)
        #expect(model.stage == .choosing)
        #expect(model.typedSecretLength == 0)
        _ = model.handle(.enter)
        _ = model.handle(.character("x"))
        #expect(model.handle(.enter) == .choose(entry: 7, name: nil, passphrase: Secret("x")))
    }

    @Test func anAccessoryVanishingUnderAPromptGoesBackToTheList() {
        let request = PickerModel.Request(
            profile: "p", vendor: "v", items: [.init(name: "Item", rename: true)], asksPassphrase: false)
        var model = choosing(twoPlugs, request: request)
        _ = model.handle(.enter)
        model.update([], removed: [7])
        #expect(model.stage == .choosing)
        #expect(model.notice == "That accessory went away.")
    }

    @Test func progressUntilTheEnd() {
        var model = choosing(twoPlugs)
        _ = model.handle(.enter)
        model.progress("pairing", message: nil)
        #expect(model.stage == .settingUp(7, name: nil, step: "pairing"))
        #expect(model.handle(.enter) == nil)
        model.progress("failed", message: "setting up the accessory failed")
        #expect(model.stage == .closed(.failed("setting up the accessory failed")))
        model.ended("later")
        #expect(model.stage == .closed(.failed("setting up the accessory failed")))
    }

    @Test func aNumberToCompareIsAnsweredWithYOrN() {
        var model = choosing(twoPlugs)
        let early = model.confirming("271828")
        #expect(!early, "nothing is being set up yet")
        _ = model.handle(.enter)
        let asked = model.confirming("271828")
        #expect(asked)
        #expect(model.stage == .settingUp(7, name: nil, step: "pairing"))
        #expect(model.handle(.enter) == nil, "Enter is no answer: the person must say y or n")
        #expect(model.handle(.character("y")) == .confirm(true))
        #expect(model.confirmation == nil)
        #expect(model.handle(.character("n")) == nil, "answered once")
        _ = model.confirming("314159")
        #expect(model.handle(.escape) == .confirm(false))
        _ = model.confirming("141421")
        #expect(model.handle(.interrupt) == .cancel)
        #expect(model.confirmation == nil)
    }

    @Test func controlCWhileSettingUpLeaves() {
        var model = choosing(twoPlugs)
        _ = model.handle(.enter)
        #expect(model.handle(.escape) == nil)
        #expect(model.handle(.interrupt) == .cancel)
        #expect(model.stage == .closed(.cancelled))
    }
}

@Suite struct PickerScreenTests {
    private func screen(width: Int, height: Int = 30, color: Bool = false, unicode: Bool = true) -> PickerScreen {
        PickerScreen(width: width, height: height, color: color, unicode: unicode)
    }

    private func expectFits(
        _ frame: PickerScreen.Frame, _ width: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for line in frame.lines {
            #expect(
                displayWidth(line) <= width, "wider than \(width): \(line.debugDescription)",
                sourceLocation: sourceLocation)
            let unsafe = line.unicodeScalars.contains { $0.isUnsafeOnTerminal }
            #expect(!unsafe, "\(line.debugDescription)", sourceLocation: sourceLocation)
        }
    }

    @Test func theListAtAHundredColumns() {
        var model = choosing(twoPlugs)
        _ = model.handle(.down)
        let frame = screen(width: 100).frame(model)
        #expect(
            frame.lines == [
                "Choose an accessory to set up · Example (org.example.plug)",
                "",
                "  #  NAME       ACCESSORY        SIGNAL  VIA      ",
                "  1  Acme plug  Acme-Setup-4F2A  ▂▄__    Wi-Fi    ",
                "› 2  Acme plug  Acme-Setup-9B1C  ▂▄▆_    Wi-Fi    " + String(repeating: " ", count: 50),
                "",
                "2 found",
                "↑↓ or number: choose · Enter: set up · Esc: cancel",
            ])
        #expect(frame.cursor == nil)
    }

    @Test func theApplicationThatAsksIsNamedAboveThePicker() {
        var model = PickerModel()
        model.requested(plugRequest, application: DesktopApplication(id: "org.example.AcmePlug", name: "Acme Plug"))
        model.update(twoPlugs, removed: [])
        let frame = screen(width: 100).frame(model)
        #expect(frame.lines.first == "Acme Plug wants to set up an accessory")
        #expect(frame.lines[1] == "Choose an accessory to set up · Example (org.example.plug)")
        #expect(frame.lines[4].hasPrefix("› 1  Acme plug  Acme-Setup-4F2A"))
        // The prompts keep the line, and the cursor stays on the prompt under it.
        let request = PickerModel.Request(
            profile: "p", vendor: "v", items: [.init(name: "Item", rename: false)], asksPassphrase: true)
        model.requested(request, application: DesktopApplication(id: "org.example.AcmePlug", name: "Acme Plug"))
        _ = model.handle(.enter)
        let asking = screen(width: 80).frame(model)
        #expect(asking.lines[0] == "Acme Plug wants to set up an accessory")
        #expect(asking.lines[3] == "Passphrase for Acme-Setup-4F2A: ")
        #expect(asking.cursor == PickerScreen.Cursor(row: 3, column: 32))
        // A name from a desktop file is escaped as what a device sends is, and cut to the width.
        model = PickerModel()
        let hostile = DesktopApplication(id: "org.example.Evil", name: "Evil\u{1B}]0;owned\u{07} app with a long name")
        model.requested(plugRequest, application: hostile)
        let escaped = screen(width: 40).frame(model)
        expectFits(escaped, 40)
        #expect(escaped.lines[0].hasPrefix("Evil\\x1b]0;owned\\x07 app"))
        // A client on the host: no such line.
        #expect(!screen(width: 100).frame(choosing(twoPlugs)).lines.joined().contains("wants to set up"))
    }

    @Test func aFortyColumnTerminalKeepsTheSSIDsAndDropsTheTransport() {
        let long = entry(10, "Acme plug with a very long product name", ssid: "Acme-Setup-77AA", signal: 5)
        let model = choosing(twoPlugs + [long])
        let frame = screen(width: 40).frame(model)
        expectFits(frame, 40)
        #expect(frame.lines[3].contains("Acme-Setup-4F2A"))
        #expect(frame.lines[5].contains("Acme-Setup-77AA"))
        #expect(frame.lines[5].contains("Acme plug…"))
        #expect(!frame.lines.joined().contains("Wi-Fi"))
        #expect(frame.lines.last == "↑↓/number · Enter: set up · Esc: cancel")
    }

    @Test(arguments: [1, 5, 12, 20, 33])
    func noLineIsEverWiderThanTheTerminal(width: Int) {
        let request = PickerModel.Request(
            profile: "p", vendor: "Example", items: [.init(name: "Item", rename: true)], asksPassphrase: true)
        let wide = entry(3, "照明コントローラー", ssid: "カメラ-Setup-XYZ", signal: 99)
        var model = choosing(twoPlugs + [wide], request: request)
        expectFits(screen(width: width).frame(model), width)
        _ = model.handle(.enter)
        for character in "デスクのランプ" { _ = model.handle(.character(character)) }
        let renaming = screen(width: width).frame(model)
        expectFits(renaming, width)
        #expect((renaming.cursor?.column ?? 0) < max(width, 1))
        _ = model.handle(.enter)
        expectFits(screen(width: width).frame(model), width)
    }

    @Test func whatADeviceSendsIsEscaped() {
        let hostile = entry(1, "Plug\u{1B}[2J\u{1B}]0;owned\u{07}", ssid: "Acme-\u{202E}gnp.exe", signal: 40)
        for color in [false, true] {
            let frame = screen(width: 100, color: color).frame(choosing([hostile]))
            let row = frame.lines[3]
            #expect(row.contains("Plug\\x1b[2J\\x1b]0;owned\\x07"))
            #expect(row.contains("Acme-\\xe2\\x80\\xaegnp.exe"))
            let raw = frame.lines.joined().unicodeScalars.filter { $0 == "\u{1B}" }.count
            // Only the screen's own styling may put ESC on the line, and only with colour.
            #expect(color ? raw > 0 : raw == 0)
            #expect(!frame.lines.joined().contains("\u{07}"))
            #expect(!frame.lines.joined().contains("\u{202E}"))
        }
    }

    @Test func colourMarksTheSelectionAndNoColourLeavesOnlyTheMarker() {
        let model = choosing(twoPlugs)
        let coloured = screen(width: 60, color: true).frame(model)
        #expect(coloured.lines[3].hasPrefix("\u{1B}[7m› "))
        #expect(coloured.lines[0].hasPrefix("\u{1B}[1m"))
        let plain = screen(width: 60, color: false).frame(model)
        #expect(plain.lines[3].hasPrefix("› "))
        #expect(!plain.lines.joined().contains("\u{1B}"))
    }

    @Test func aLongListShowsAWindowAroundTheSelection() {
        var model = choosing((1...40).map { entry($0, "Plug", ssid: "Acme-Setup-\($0)", signal: 60) })
        for _ in 0..<30 { _ = model.handle(.down) }
        let frame = screen(width: 80, height: 15).frame(model)
        #expect(frame.lines.count <= 15)
        #expect(frame.lines.contains { $0.hasPrefix("› ") && $0.contains("Acme-Setup-31 ") })
        #expect(frame.lines.contains { $0.hasPrefix("40 found, showing ") })
    }

    @Test func signalBarsFromWiFiOrBluetooth() {
        let screen = screen(width: 80)
        #expect(screen.bars(100) == "▂▄▆█")
        #expect(screen.bars(56) == "▂▄▆_")
        #expect(screen.bars(31) == "▂▄__")
        #expect(screen.bars(5) == "____")
        #expect(screen.bars(nil) == "····")
        #expect(self.screen(width: 80, unicode: false).bars(60) == "***-")
        let bluetooth = PickerModel.Entry(
            id: 1, item: 0, name: "Sensor", bluetoothAddress: "AA:BB:CC:DD:EE:FF", bluetoothName: "SHBDW", rssi: -40)
        #expect(bluetooth.strength == 100)
        #expect(bluetooth.identity == "SHBDW AA:BB:CC:DD:EE:FF")
        #expect(bluetooth.transport == "BLE")
        let frame = screen.frame(choosing([bluetooth]))
        #expect(frame.lines[3].contains("SHBDW AA:BB:CC:DD:EE:FF  ▂▄▆█    BLE"))
    }

    @Test func thePassphraseIsNeverDrawn() {
        let request = PickerModel.Request(
            profile: "p", vendor: "v", items: [.init(name: "Item", rename: false)], asksPassphrase: true)
        var model = choosing(twoPlugs, request: request)
        _ = model.handle(.enter)
        for character in "hunter22" { _ = model.handle(.character(character)) }
        let frame = screen(width: 80).frame(model)
        #expect(frame.lines[2] == "Passphrase for Acme-Setup-4F2A: ")
        #expect(frame.cursor == PickerScreen.Cursor(row: 2, column: 32))
        #expect(!frame.lines.joined().contains("hunter22"))
        #expect(!frame.lines.joined().contains("********"))
    }

    @Test func progressAndTheEnd() {
        var model = choosing(twoPlugs)
        _ = model.handle(.enter)
        #expect(screen(width: 80).frame(model).lines[2] == "Setting it up…")
        model.progress("pairing", message: nil)
        #expect(screen(width: 80).frame(model).lines[0] == "Setting up Acme plug (Acme-Setup-4F2A)")
        #expect(screen(width: 80).frame(model).lines[2] == "Pairing over Bluetooth LE…")
        model.progress("pairing", message: nil, passkey: "004242")
        #expect(screen(width: 80).frame(model).lines[2] == "Pairing: type 004242 on the accessory…")
        _ = model.confirming("271828")
        let comparing = screen(width: 120).frame(model).lines
        #expect(comparing[2] == "Pairing: does the accessory show 271828? Pair only if it shows this very number.")
        #expect(comparing.last == "y: it does, pair · n: it does not · Ctrl-C: leave")
        _ = model.handle(.character("y"))
        model.progress("hotspotHandoff", message: nil)
        #expect(screen(width: 80).frame(model).lines[2] == "Switching its hotspot on over Bluetooth LE…")
        model.progress("authorization", message: nil)
        #expect(screen(width: 80).frame(model).lines[2] == "Added. The application is finishing the setup…")
        model.progress("failed", message: "the accessory refused the pairing")
        #expect(screen(width: 80).frame(model).lines == ["The setup failed: the accessory refused the pairing"])
    }
}

@Suite struct KeyDecoderTests {
    @Test func arrowsEnterAndControlKeys() {
        var decoder = KeyDecoder()
        #expect(
            decoder.keys(Array("\u{1B}[A\u{1B}[B\u{1B}OA\r\u{03}\u{7F}2".utf8))
                == [.up, .down, .up, .enter, .interrupt, .backspace, .character("2")])
        #expect(!decoder.isWaiting)
    }

    @Test func aSequenceCutBetweenReadsWaitsForTheRest() {
        var decoder = KeyDecoder()
        #expect(decoder.keys([0x1B, UInt8(ascii: "[")]) == [])
        #expect(decoder.isWaiting)
        #expect(decoder.keys([UInt8(ascii: "B")]) == [.down])
        #expect(decoder.keys(Array("é".utf8).prefix(1).map { $0 }) == [])
        #expect(decoder.keys(Array("é".utf8).dropFirst().map { $0 }) == [.character("é")])
    }

    @Test func aLoneEscapeIsTheEscKeyAfterAPause() {
        var decoder = KeyDecoder()
        #expect(decoder.keys([0x1B]) == [])
        #expect(decoder.flush() == [.escape])
        #expect(!decoder.isWaiting)
        // Two in a row: the first is a key at once.
        #expect(decoder.keys([0x1B, 0x1B]) == [.escape])
        #expect(decoder.flush() == [.escape])
    }

    @Test func unknownSequencesAndControlsAreDropped() {
        var decoder = KeyDecoder()
        // F5, Ctrl-Right, Ctrl-A, a C1 control (NEL, U+0085) in UTF-8, then a key.
        let bytes = Array("\u{1B}[15~\u{1B}[1;5C\u{01}".utf8) + [0xC2, 0x85, UInt8(ascii: "a")]
        #expect(decoder.keys(bytes) == [.character("a")])
    }
}
