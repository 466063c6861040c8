import AccessoryCore
import AgentInterface
import FoundationEssentials
import GLibRuntime

/// What the terminal picker shows and how keys change it. Pure: the D-Bus calls and the keys
/// come in, answers for the agent come out, and `PickerScreen` draws it.
struct PickerModel {
    /// One accessory the agent offers (`PickerAgent1.UpdateEntries`).
    typealias Entry = PickerAgentEntry

    /// What `RequestChoice` asked for, item by item.
    typealias Request = PickerAgentRequest

    enum Stage: Equatable {
        /// Waiting for the agent's `RequestChoice`.
        case waiting
        case choosing
        case renaming(UInt32)
        case passphrase(UInt32, name: String?)
        /// The proof of possession printed on the device, after the passphrase if one was asked.
        case proofOfPossession(UInt32, name: String?, passphrase: Secret?)
        /// The choice was sent; `step` is the last `SetupProgress` step, if any.
        case settingUp(UInt32, name: String?, step: String?)
        case closed(Outcome)
    }

    enum Outcome: Equatable {
        case done
        case cancelled
        /// The setup failed or the agent ended the picker, with its message.
        case failed(String)
    }

    /// What the person decided, for the picker agent to answer `RequestChoice` with.
    enum Action: Equatable {
        case choose(entry: UInt32, name: String?, passphrase: Secret?, proofOfPossession: Secret? = nil)
        case cancel
        /// The person's answer to `ConfirmPasskey`: whether the accessory shows the same number.
        case confirm(Bool)
    }

    enum Key: Equatable {
        case up, down, home, end, enter, escape, interrupt, backspace
        case character(Character)
    }

    private(set) var request: Request?
    /// The sandboxed application that asks, as its desktop file names it; `nil` for a client
    /// on the host.
    private(set) var application: DesktopApplication?
    private(set) var entries: [Entry] = []
    private(set) var selected: UInt32?
    private(set) var stage: Stage = .waiting
    /// What is typed into the rename prompt; the passphrase is kept apart and never drawn.
    private(set) var typed = ""
    private(set) var typedSecretLength = 0
    private var secret = ""
    /// A sentence about the last key, such as a name refused.
    private(set) var notice: String?
    /// The code the accessory asks the person to type on it while pairing.
    private(set) var passkey: String?
    /// The number both sides show while pairing, for the person to compare (`ConfirmPasskey`).
    private(set) var confirmation: String?
    /// Digits typed in a row choose the entry with that number.
    private var number = 0

    var selectedEntry: Entry? { entries.first { $0.id == selected } }

    var isClosed: Bool { if case .closed = stage { true } else { false } }

    /// `RequestChoice`, with the application that asks as the desktop names it.
    mutating func requested(_ request: Request, application: DesktopApplication? = nil) {
        self.request = request
        self.application = application
        if stage == .waiting { stage = .choosing }
    }

    /// Entries added or changed, and the ids of those gone. New ones go last, so the list does
    /// not jump under the person's finger; the selection stays on its accessory, or moves to
    /// the one now in its place when it vanished.
    mutating func update(_ changed: [Entry], removed: [UInt32]) {
        let selectedIndex = entries.firstIndex { $0.id == selected }
        for entry in changed {
            if let index = entries.firstIndex(where: { $0.id == entry.id }) {
                entries[index] = entry
            } else {
                entries.append(entry)
            }
        }
        entries.removeAll { removed.contains($0.id) }
        if selectedEntry == nil {
            let index = min(selectedIndex ?? 0, entries.count - 1)
            selected = index >= 0 ? entries[index].id : nil
        }
        let prompted: UInt32? =
            switch stage {
            case .renaming(let id), .passphrase(let id, _), .proofOfPossession(let id, _, _): id
            default: nil
            }
        if let prompted, !entries.contains(where: { $0.id == prompted }) { backToList("That accessory went away.") }
    }

    /// `SetupProgress`: `pairing` (with a passkey to type on the accessory, if it wants one),
    /// `bridging`, `hotspotHandoff`, `authorization` (added; the application finishes the
    /// setup), `failed` (with the error's message) or `done`.
    mutating func progress(_ step: String, message: String?, passkey: String? = nil) {
        switch step {
        case "done": stage = .closed(.done)
        case "failed": stage = .closed(.failed(message ?? "the setup failed"))
        default:
            if case .settingUp(let id, let name, _) = stage { stage = .settingUp(id, name: name, step: step) }
            self.passkey = step == "pairing" ? passkey : nil
        }
    }

    /// `ConfirmPasskey`: the accessory being paired shows `code`; the person says whether this
    /// screen shows the same. Only while setting up; `false` when there is nothing to ask in.
    mutating func confirming(_ code: String) -> Bool {
        guard case .settingUp(let id, let name, _) = stage else { return false }
        stage = .settingUp(id, name: name, step: "pairing")
        confirmation = code
        return true
    }

    /// The agent ended the picker (`Cancel`), or it went away.
    mutating func ended(_ message: String) {
        confirmation = nil
        guard !isClosed else { return }
        stage = .closed(.failed(message))
    }

    /// Applies one key; returns what to tell the agent, if anything.
    mutating func handle(_ key: Key) -> Action? {
        notice = nil
        if case .character(let character) = key, character.isASCII, character.isNumber {} else { number = 0 }
        switch stage {
        case .waiting:
            return cancelling(on: key)
        case .choosing:
            return choosing(key)
        case .renaming(let id):
            return renaming(id, key)
        case .passphrase(let id, let name):
            switch typingSecret(key, missing: "Type the accessory's passphrase, or Esc to go back.") {
            case .typed(let passphrase): return askProofOrChoose(id, name: name, passphrase: passphrase)
            case .typing(let action): return action
            }
        case .proofOfPossession(let id, let name, let passphrase):
            switch typingSecret(key, missing: "Type the code printed on the device, or Esc to go back.") {
            case .typed(let proof):
                stage = .settingUp(id, name: name, step: nil)
                return .choose(entry: id, name: name, passphrase: passphrase, proofOfPossession: proof)
            case .typing(let action):
                return action
            }
        case .settingUp:
            if confirmation != nil, let answer = Self.confirmationAnswer(key) {
                confirmation = nil
                return .confirm(answer)
            }
            // The choice is made; only leaving is left.
            guard key == .interrupt else { return nil }
            confirmation = nil
            stage = .closed(.cancelled)
            return .cancel
        case .closed:
            return nil
        }
    }

    /// y (yes, the numbers match) or n and Esc (they do not); other keys answer nothing.
    private static func confirmationAnswer(_ key: Key) -> Bool? {
        switch key {
        case .character("y"), .character("Y"): true
        case .character("n"), .character("N"), .escape: false
        default: nil
        }
    }

    private mutating func cancelling(on key: Key) -> Action? {
        guard key == .escape || key == .interrupt else { return nil }
        stage = .closed(.cancelled)
        return .cancel
    }

    private mutating func choosing(_ key: Key) -> Action? {
        let index = entries.firstIndex { $0.id == selected }
        switch key {
        case .up:
            if let index, index > 0 { selected = entries[index - 1].id }
        case .down:
            if let index, index + 1 < entries.count { selected = entries[index + 1].id }
        case .home:
            selected = entries.first?.id
        case .end:
            selected = entries.last?.id
        case .character(let character) where character.isASCII && character.isNumber:
            let digit = Int(character.asciiValue ?? 48) - 48
            let longer = number * 10 + digit
            number = longer >= 1 && longer <= entries.count ? longer : digit
            if number >= 1 && number <= entries.count {
                selected = entries[number - 1].id
            } else {
                notice = "There is no accessory \(number)."
                number = 0
            }
        case .enter:
            guard let entry = selectedEntry else {
                notice = "No accessory to set up yet."
                return nil
            }
            return chose(entry)
        case .escape, .interrupt:
            return cancelling(on: key)
        default:
            break
        }
        return nil
    }

    private mutating func chose(_ entry: Entry) -> Action? {
        typed = ""
        if request?.renames(entry.item) == true {
            stage = .renaming(entry.id)
            return nil
        }
        return askPassphraseOrChoose(entry.id, name: nil)
    }

    private mutating func askPassphraseOrChoose(_ id: UInt32, name: String?) -> Action? {
        guard request?.asksPassphrase == true else { return askProofOrChoose(id, name: name, passphrase: nil) }
        secret = ""
        typedSecretLength = 0
        stage = .passphrase(id, name: name)
        return nil
    }

    private mutating func askProofOrChoose(_ id: UInt32, name: String?, passphrase: Secret?) -> Action? {
        guard request?.asksProofOfPossession == true else {
            stage = .settingUp(id, name: name, step: nil)
            return .choose(entry: id, name: name, passphrase: passphrase)
        }
        secret = ""
        typedSecretLength = 0
        stage = .proofOfPossession(id, name: name, passphrase: passphrase)
        return nil
    }

    private mutating func renaming(_ id: UInt32, _ key: Key) -> Action? {
        switch key {
        case .enter:
            let name = typed.trimmingWhitespace()
            guard !name.isEmpty else { return askPassphraseOrChoose(id, name: nil) }
            do {
                try AccessorySession.validateName(name, field: "name")
            } catch {
                if case .invalidRequest(_, let reason) = error {
                    notice = "The name \(reason)."
                } else {
                    notice = "\(error)"
                }
                return nil
            }
            return askPassphraseOrChoose(id, name: name)
        case .backspace:
            if !typed.isEmpty { typed.removeLast() }
        case .character(let character):
            typed.append(character)
        case .escape:
            backToList(nil)
        case .interrupt:
            return cancelling(on: key)
        default:
            break
        }
        return nil
    }

    private enum SecretTyping {
        /// Enter, with something typed.
        case typed(Secret)
        /// Still typing, gone back to the list, or cancelling.
        case typing(Action?)
    }

    /// A secret typed unseen: Enter ends it (refused when empty, with `missing`), Esc goes back
    /// to the list.
    private mutating func typingSecret(_ key: Key, missing: String) -> SecretTyping {
        switch key {
        case .enter:
            guard !secret.isEmpty else {
                notice = missing
                return .typing(nil)
            }
            let typed = Secret(secret)
            secret = ""
            typedSecretLength = 0
            return .typed(typed)
        case .backspace:
            if !secret.isEmpty {
                secret.removeLast()
                typedSecretLength -= 1
            }
        case .character(let character):
            secret.append(character)
            typedSecretLength += 1
        case .escape:
            secret = ""
            typedSecretLength = 0
            backToList(nil)
        case .interrupt:
            secret = ""
            return .typing(cancelling(on: key))
        default:
            break
        }
        return .typing(nil)
    }

    private mutating func backToList(_ notice: String?) {
        secret = ""
        typedSecretLength = 0
        typed = ""
        stage = .choosing
        self.notice = notice
    }
}

extension PickerAgentEntry {
    /// What tells it apart from its neighbours: the SSID, the Bluetooth name and address.
    var identity: String {
        var parts: [String] = []
        if let ssid { parts.append(ssid) }
        switch (bluetoothName, bluetoothAddress) {
        case (let name?, let address?) where name != ssid: parts.append("\(name) \(address)")
        case (_, let address?): parts.append(address)
        default: break
        }
        return parts.joined(separator: " · ")
    }

    var transport: String {
        switch (ssid != nil || signal != nil, bluetoothAddress != nil) {
        case (true, true): "Wi-Fi+BLE"
        case (false, true): "BLE"
        default: "Wi-Fi"
        }
    }
}
