import AccessoryCore
import AgentInterface

/// Draws a `PickerModel` as the lines of a terminal `width` columns wide and `height` rows
/// high. Pure: every line is cut to the width (only the consent paragraph is wrapped, at
/// spaces, so that none of it is lost), everything that came from a
/// device or a person goes through `terminalSafe`, and colour (bold, dim, reverse video) is
/// added only when `color` is set, which `NO_COLOR` clears.
struct PickerScreen {
    var width: Int
    var height: Int
    var color = false
    /// Whether the terminal takes UTF-8: signal bars and arrows, else ASCII.
    var unicode = true

    struct Frame: Equatable {
        var lines: [String]
        /// Where the cursor goes (row and column, from 0) while the person types; hidden otherwise.
        var cursor: Cursor?
    }

    struct Cursor: Equatable {
        var row: Int
        var column: Int
    }

    enum Style {
        case plain, bold, dim, reverse, alert
    }

    /// A run of text in one style.
    struct Span {
        var text: String
        var style: Style

        init(_ text: String, _ style: Style = .plain) {
            self.text = text
            self.style = style
        }
    }

    func frame(_ model: PickerModel) -> Frame {
        var lines: [[Span]] = []
        var cursor: Cursor?
        let vendor = model.request.map { "\($0.vendor) (\($0.profile))" } ?? ""
        switch model.stage {
        case .waiting:
            lines = [[Span("Set up an accessory", .bold)], [], [Span("Waiting for the agent to start the picker…")]]
            lines += footer(model, ["Esc: cancel"])
        case .choosing:
            let consent = consent(model, for: model.selectedEntry)
            lines = [[Span("Choose an accessory to set up", .bold), Span(vendor.isEmpty ? "" : " · \(vendor)")], []]
            lines += list(model, reserving: consent.isEmpty ? 0 : consent.count + 1)
            if !consent.isEmpty { lines.insert(contentsOf: [[]] + consent, at: lines.count - 3) }
        case .renaming(let id):
            let entry = model.entries.first { $0.id == id }
            lines = [
                [Span("Set up ", .bold), Span(describe(entry), .bold)], [], [Span("New name: "), Span(model.typed)],
            ]
            cursor = Cursor(row: 2, column: min(width - 1, displayWidth(terminalSafe("New name: " + model.typed))))
            let keep = entry.map { "Enter with nothing typed keeps “\($0.name)”" } ?? ""
            lines += footer(
                model, [keep, "Esc: back", "Ctrl-C: cancel"], short: ["Enter: keep if empty", "Esc: back"])
        case .passphrase(let id, _), .proofOfPossession(let id, _, _):
            let entry = model.entries.first { $0.id == id }
            var label = "Passphrase for \(entry.map(\.identity) ?? "the accessory"): "
            var hint: [[Span]] = []
            if case .proofOfPossession = model.stage {
                label = "Proof of possession: "
                hint = [[Span(model.request?.proofOfPossessionHint ?? "The code printed on the device or its box.")]]
            }
            let consent = consent(model, for: entry)
            lines = [[Span("Set up ", .bold), Span(describe(entry), .bold)], []] + hint + [[Span(label)]]
            cursor = Cursor(row: 2 + hint.count, column: min(width - 1, displayWidth(terminalSafe(label))))
            if !consent.isEmpty { lines += [[]] + consent }
            lines += footer(
                model, ["Typing is not shown", "Enter: set up", "Esc: back", "Ctrl-C: cancel"],
                short: ["Not shown", "Enter: set up", "Esc: back"])
        case .settingUp(let id, let name, let step):
            let entry = model.entries.first { $0.id == id }
            let shown = name.map { "\($0) (\(entry?.identity ?? ""))" } ?? describe(entry)
            let doing =
                switch step {
                case "pairing" where model.confirmation != nil:
                    "Pairing: does the accessory show \(model.confirmation ?? "")? Pair only if it shows this very number."
                case "pairing" where model.passkey != nil: "Pairing: type \(model.passkey ?? "") on the accessory…"
                case "pairing": "Pairing over Bluetooth LE…"
                case "bridging": "Bringing up its Bluetooth connection…"
                case "hotspotHandoff": "Switching its hotspot on over Bluetooth LE…"
                case "authorization": "Added. The application is finishing the setup…"
                default: "Setting it up…"
                }
            lines = [[Span("Setting up ", .bold), Span(shown, .bold)], [], [Span(doing)]]
            lines += footer(
                model,
                model.confirmation != nil ? ["y: it does, pair", "n: it does not", "Ctrl-C: leave"] : ["Ctrl-C: leave"])
        case .closed(let outcome):
            lines =
                switch outcome {
                case .done: [[Span("Done.")]]
                case .cancelled: [[Span("Cancelled.")]]
                case .failed(let message): [[Span("The setup failed: ", .alert), Span(message, .alert)]]
                }
        }
        // Who asks, above what the picker shows while it is open, as on iOS.
        if let application = model.application, model.request != nil, !model.isClosed {
            lines.insert([Span(application.pickerHeading, .bold)], at: 0)
            cursor?.row += 1
        }
        if lines.count > height {
            // The title and the list matter most; the hints go first.
            lines = Array(lines.prefix(max(height, 1)))
            if let row = cursor?.row, row >= lines.count { cursor = nil }
        }
        return Frame(lines: lines.map(render), cursor: cursor)
    }

    /// What setting up `entry` will ask, when the client said it will give the accessory a
    /// network: the sentence polkit's dialog will show then, wrapped to the width, as an alert
    /// where the passphrase may travel unencrypted.
    private func consent(_ model: PickerModel, for entry: PickerModel.Entry?) -> [[Span]] {
        guard let share = model.request?.share, let entry else { return [] }
        let sentence = share.consent(for: entry.name, application: model.application?.name).sentence
        let style: Style = share.exposure == .encrypted ? .plain : .alert
        return wrap(terminalSafe(sentence)).map { [Span($0, style)] }
    }

    /// `text` in lines of at most `width` columns, broken at spaces (a word longer than a line
    /// is cut by `render`).
    private func wrap(_ text: String) -> [String] {
        var lines: [String] = [], line = ""
        for word in text.split(separator: " ") {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            if !line.isEmpty && displayWidth(candidate) > width {
                lines.append(line)
                line = String(word)
            } else {
                line = candidate
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    private func describe(_ entry: PickerModel.Entry?) -> String {
        guard let entry else { return "the accessory" }
        let identity = entry.identity
        return identity.isEmpty ? entry.name : "\(entry.name) (\(identity))"
    }

    /// The notice line, then the keys: `hints`, or `short` when they do not fit.
    private func footer(_ model: PickerModel, _ hints: [String], short: [String]? = nil) -> [[Span]] {
        var line = hints.filter { !$0.isEmpty }.joined(separator: " · ")
        if let short, displayWidth(line) > width { line = short.joined(separator: " · ") }
        return [[Span(model.notice ?? "", .alert)], [Span(line, .dim)]]
    }

    /// The table of entries, a window of it around the selection when it is taller than the
    /// screen, then the status and the hints.
    private func list(_ model: PickerModel, reserving reserved: Int = 0) -> [[Span]] {
        let entries = model.entries
        let hints = [unicode ? "↑↓ or number: choose" : "Up/Down or number: choose", "Enter: set up", "Esc: cancel"]
        let short = [unicode ? "↑↓/number" : "Up/Down/number", "Enter: set up", "Esc: cancel"]
        guard !entries.isEmpty else {
            return [[Span("Looking for accessories…")]] + footer(model, hints, short: short)
        }
        let rows = max(1, height - 7 - reserved - (model.application == nil ? 0 : 1))
        let index = entries.firstIndex { $0.id == model.selected } ?? 0
        let first = min(max(0, index - rows / 2), max(0, entries.count - rows))
        let window = Array(entries.indices.dropFirst(first).prefix(rows))

        // Columns: marker, number, name, identity, signal, transport; the transport goes first
        // on a narrow terminal.
        let numberWidth = String(entries.count).count
        let names = entries.map { displayWidth(terminalSafe($0.name)) }.max() ?? 0
        let identities = entries.map { displayWidth(terminalSafe($0.identity)) }.max() ?? 0
        var nameWidth = max(4, names), identityWidth = max(9, identities)
        let showTransport = width >= 50
        let fixed = 2 + numberWidth + 2 + 2 + 2 + 6 + (showTransport ? 2 + 9 : 0)
        let spare = width - fixed
        if nameWidth + identityWidth > spare {
            // The name gives way first: the SSID or address is what tells entries apart.
            nameWidth = max(6, spare - identityWidth)
            identityWidth = max(4, spare - nameWidth)
        }
        func row(_ cells: [String]) -> String {
            var widths = [numberWidth, nameWidth, identityWidth, 6]
            if showTransport { widths.append(9) }
            return zip(cells, widths).map { pad($0, $1) }.joined(separator: "  ")
        }
        var lines: [[Span]] = [[Span("  " + row(["#", "NAME", "ACCESSORY", "SIGNAL", "VIA"]), .dim)]]
        for position in window {
            let entry = entries[position]
            let isSelected = entry.id == model.selected
            let marker = isSelected ? (unicode ? "› " : "> ") : "  "
            let cells = [
                String(position + 1), terminalSafe(entry.name), terminalSafe(entry.identity), bars(entry.strength),
                entry.transport,
            ]
            lines.append([Span(marker + row(cells), isSelected ? .reverse : .plain)])
        }
        var status = "\(entries.count) found"
        if window.count < entries.count {
            status += ", showing \(first + 1)–\(first + window.count)"
        }
        let footerLines = footer(model, hints, short: short)
        return lines + [[], [Span(model.notice ?? status, model.notice == nil ? .dim : .alert)], footerLines[1]]
    }

    /// Four bars, as `nmcli` draws them (`nm-utils.c`, the Wi-Fi strength bars).
    func bars(_ strength: Int?) -> String {
        guard let strength else { return unicode ? "····" : "----" }
        let full = strength > 80 ? 4 : strength > 55 ? 3 : strength > 30 ? 2 : strength > 5 ? 1 : 0
        let shapes: [Character] = unicode ? ["▂", "▄", "▆", "█"] : ["*", "*", "*", "*"]
        let empty: Character = unicode ? "_" : "-"
        return String((0..<4).map { $0 < full ? shapes[$0] : empty })
    }

    /// `text` cut or padded to exactly `columns` display columns.
    private func pad(_ text: String, _ columns: Int) -> String {
        let cut = truncate(text, columns)
        return cut + String(repeating: " ", count: max(0, columns - displayWidth(cut)))
    }

    /// `text` cut to at most `columns` display columns, with an ellipsis where it was cut.
    func truncate(_ text: String, _ columns: Int) -> String {
        guard displayWidth(text) > columns else { return text }
        guard columns > 0 else { return "" }
        let ellipsis = unicode ? "…" : "~"
        var result = "", used = 0
        for character in text {
            let wide = displayWidth(String(character))
            if used + wide > columns - 1 { break }
            result.append(character)
            used += wide
        }
        return result + ellipsis
    }

    /// One line: each span made terminal-safe, the whole cut to the width, styled last.
    private func render(_ spans: [Span]) -> String {
        var line = "", used = 0
        for span in spans {
            guard used < width else { break }
            var text = truncate(terminalSafe(span.text), width - used)
            if span.style == .reverse {
                // The selection bar runs the whole width.
                text += String(repeating: " ", count: max(0, width - used - displayWidth(text)))
            }
            used += displayWidth(text)
            guard color, span.style != .plain, !text.isEmpty else {
                line += text
                continue
            }
            let code =
                switch span.style {
                case .bold: "1"
                case .dim: "2"
                case .reverse: "7"
                case .alert: "1;31"
                case .plain: "0"
                }
            line += "\u{1B}[\(code)m" + text + "\u{1B}[0m"
        }
        return line
    }
}

/// The columns `text` takes on a terminal, as `wcwidth` counts them: combining marks and
/// zero-width characters none, East Asian wide and emoji two, others one.
func displayWidth(_ text: String) -> Int {
    text.unicodeScalars.reduce(0) { total, scalar in
        let properties = scalar.properties
        switch properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format:
            return total
        default:
            break
        }
        let value = scalar.value
        let wide =
            properties.isEmojiPresentation
            || (0x1100...0x115F).contains(value) || (0x2E80...0x303E).contains(value)
            || (0x3041...0x33FF).contains(value) || (0x3400...0x4DBF).contains(value)
            || (0x4E00...0x9FFF).contains(value) || (0xA000...0xA4CF).contains(value)
            || (0xAC00...0xD7A3).contains(value) || (0xF900...0xFAFF).contains(value)
            || (0xFE30...0xFE4F).contains(value) || (0xFF00...0xFF60).contains(value)
            || (0xFFE0...0xFFE6).contains(value) || (0x20000...0x3FFFD).contains(value)
        return total + (wide ? 2 : 1)
    }
}
