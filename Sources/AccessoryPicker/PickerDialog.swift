import AccessoryCore
import AccessorySetupKit
import AgentInterface
import FoundationEssentials
import GLibRuntime

/// One picker dialog, for one `RequestChoice`: the vendor's name as its title, the matching
/// accessories as rows, Set Up and Cancel, the rename and passphrase rows where asked, and the
/// setup's progress. It lives on the GTK thread only (see `PickerWindows`).
final class PickerDialog {
    let request: PickerRequest
    private let images: ProductImages
    private var call: PickerAgentCall?
    private var rows = PickerRows()
    private var widgets: [UInt32: ActionRow] = [:]
    private var chosen: PickerRow?
    /// The accessory's name once the person set it up: the new name, where they gave one.
    private var setUpName: String?
    /// Called once the window is gone.
    private let closed: () -> Void

    private let window: Window
    private let list = ListBox(selection: .single)
    private let setUp = Button(mnemonic: "_Set Up")
    private let cancel = Button(mnemonic: "_Cancel")
    private let options = ListBox(selection: .none)
    private let nameRow = EntryRow(title: "Name")
    private let passphraseRow = EntryRow(title: "Passphrase", hidesText: true)
    private let proofRow = EntryRow(title: "Proof of possession", hidesText: true)
    /// Where the proof of possession is found, as the profile says, under the options.
    private let proofHint = Label.paragraph("")
    /// What setting up the selected accessory will ask, where the client said it will give it a
    /// network: the sentence polkit's dialog will show then.
    private let consentLabel = Label.paragraph("")
    private let statusBox = Box(.horizontal, spacing: 12)
    private let spinner = Spinner()
    private let statusLabel = Label.paragraph("")
    private let errorLabel = Label.paragraph("")
    /// The two answers to a numeric comparison while pairing (`ConfirmPasskey`).
    private let compareBox = Box(.horizontal, spacing: 12)
    private let compareMatches = Button(mnemonic: "It _Matches")
    private let compareDiffers = Button(mnemonic: "It Does _Not Match")
    private var comparison: PickerAgentCall?
    private let searchSpinner = Spinner()
    private let searchLabel = Label("Searching for accessories…")
    private var isClosed = false

    init(request: PickerRequest, call: PickerAgentCall, images: ProductImages, closed: @escaping () -> Void) {
        self.request = request
        self.call = call
        self.images = images
        self.closed = closed

        window = Window(title: request.vendor)
        window.setDefaultSize(width: 480, height: -1)
        let page = Box(.vertical, spacing: 0)
        page.append(makeHeaderBar())
        page.append(makeContent())
        window.setContent(page)
        window.setDefaultWidget(setUp)
        refreshOptions()
        statusBox.isVisible = false
        compareBox.isVisible = false
        errorLabel.isVisible = false
        consentLabel.isVisible = false
        connectHandlers()
        window.present()
    }

    // MARK: Building the window

    /// The vendor over "Set up an accessory", Cancel at the start and Set Up at the end.
    private func makeHeaderBar() -> HeaderBar {
        let header = HeaderBar(title: WindowTitle(title: request.vendor, subtitle: "Set up an accessory"))
        setUp.addStyleClass("suggested-action")
        setUp.isSensitive = false
        header.packStart(cancel)
        header.packEnd(setUp)
        header.showsEndTitleButtons = false
        return header
    }

    /// The prompt, the accessories, the options, the status and comparison, and the error, in a column.
    private func makeContent() -> Box {
        let content = Box(.vertical, spacing: 12)
        content.setMargins(18)
        if let application = request.application { content.append(makeApplicationHeading(application)) }
        content.append(Label.paragraph("Choose the accessory to set up."))
        content.append(makeAccessoryList())
        if request.share?.exposure != .encrypted { consentLabel.addStyleClass("warning") }
        content.append(consentLabel)
        content.append(makeOptions())
        proofHint.addStyleClass("dim-label")
        proofHint.text = request.proofOfPossessionHint ?? "The code printed on the device or its box."
        content.append(proofHint)
        content.append(makeStatus())
        content.append(makeComparison())
        errorLabel.addStyleClass("error")
        content.append(errorLabel)
        return content
    }

    /// Who asks, as on iOS: the application's icon, named for a screen reader, and "<Name>
    /// wants to set up an accessory" as a heading.
    private func makeApplicationHeading(_ application: DesktopApplication) -> Box {
        let heading = Box(.vertical, spacing: 12)
        heading.setMargins(6)
        let icon =
            application.icon.flatMap { Image(serializedIcon: $0) } ?? Image(iconName: "application-x-executable")
        icon.pixelSize = 64
        icon.setAccessibleLabel(application.name)
        heading.append(icon)
        let text = Label(heading: application.pickerHeading)
        text.addStyleClass("title-4")
        text.wraps = true
        text.centersLines = true
        text.setAccessibleLabel(application.pickerHeading)
        heading.append(text)
        return heading
    }

    /// The list of accessories; while it is empty it says that the agent is searching.
    private func makeAccessoryList() -> ListBox {
        list.addStyleClass("boxed-list")
        list.setAccessibleLabel("Accessories")
        let searching = Box(.horizontal, spacing: 12)
        searching.setMargins(12)
        searchSpinner.start()
        searchSpinner.setAccessibleLabel("Searching")
        searching.append(searchSpinner)
        searchLabel.addStyleClass("dim-label")
        searching.append(searchLabel)
        list.setPlaceholder(searching)
        return list
    }

    /// The rename, passphrase and proof-of-possession rows.
    private func makeOptions() -> ListBox {
        options.addStyleClass("boxed-list")
        options.setAccessibleLabel("Setup options")
        options.append(nameRow)
        options.append(passphraseRow)
        options.append(proofRow)
        return options
    }

    /// The spinner and the text that tell how the setup goes.
    private func makeStatus() -> Box {
        spinner.setAccessibleLabel("Setting up")
        statusBox.append(spinner)
        statusBox.append(statusLabel)
        return statusBox
    }

    private func makeComparison() -> Box {
        compareBox.horizontalAlignment = .end
        compareMatches.addStyleClass("suggested-action")
        compareBox.append(compareDiffers)
        compareBox.append(compareMatches)
        return compareBox
    }

    private func connectHandlers() {
        // Weak: GTK may emit while it tears the window down, after the dialog is gone.
        setUp.onClicked { [weak self] in self?.confirm() }
        cancel.onClicked { [weak self] in self?.dismiss() }
        compareMatches.onClicked { [weak self] in self?.answerComparison(matches: true) }
        compareDiffers.onClicked { [weak self] in self?.answerComparison(matches: false) }
        list.onRowSelected { [weak self] in self?.selectionChanged() }
        list.onRowActivated { [weak self] in self?.confirm() }
        passphraseRow.onChanged { [weak self] in self?.selectionChanged() }
        proofRow.onChanged { [weak self] in self?.selectionChanged() }
        window.onCloseRequest { [weak self] in
            self?.answerCancelled()
            self?.finish(destroy: false)
            return false
        }
        window.onShortcut("Escape") { [weak self] in self?.dismiss() }
    }

    // MARK: Updates from the agent

    func update(_ entries: [PickerRow], removed: [UInt32]) {
        let change = rows.apply(rows: entries, removed: removed)
        for row in change.added {
            let widget = makeRow(row)
            widgets[row.id] = widget
            list.append(widget)
        }
        for row in change.changed {
            guard let widget = widgets[row.id] else { continue }
            list.remove(widget)
            let replacement = makeRow(row)
            widgets[row.id] = replacement
            let position = rows.rows.firstIndex { $0.id == row.id } ?? -1
            list.insert(replacement, at: Int32(position))
        }
        for id in change.removed {
            if let widget = widgets.removeValue(forKey: id) { list.remove(widget) }
        }
        // The first accessory to appear takes the focus from where GTK put it (the first
        // button), so the arrow keys move through the accessories at once, as GNOME's HIG asks.
        let focus = window.focus
        if call != nil, let first = rows.rows.first, let widget = widgets[first.id], focus == nil || focus == cancel {
            widget.grabFocus()
        }
        selectionChanged()
    }

    func progress(step: String, error: ASError?, passkey: String? = nil) {
        let status = SetupStatus(
            step: step, error: error, passkey: passkey, accessory: setUpName ?? chosen?.name ?? "the accessory")
        statusBox.isVisible = true
        switch status {
        case .settingUp(let text):
            statusLabel.text = text
            spinner.start()
        case .done(let text):
            statusLabel.text = text
            spinner.stop()
            spinner.isVisible = false
            showClose()
        case .failed(let title, let message):
            statusLabel.text = title
            spinner.stop()
            spinner.isVisible = false
            showError(message)
            showClose()
        }
    }

    /// `ConfirmPasskey`: the accessory being paired shows `code`; the person answers whether
    /// this window shows the same number. Not matching is the safe choice, so it has the focus.
    func confirmPasskey(_ code: String, call: PickerAgentCall) {
        comparison?.cancel("a newer comparison replaced it")
        comparison = call
        let accessory = setUpName ?? chosen?.name ?? "the accessory"
        statusBox.isVisible = true
        statusLabel.text = "Does “\(accessory)” show \(code)? Pair it only if it shows this very number."
        compareBox.isVisible = true
        compareDiffers.grabFocus()
    }

    /// The agent ended the picker (`Cancel`: a timeout, the client gone): a pending choice is
    /// answered, and the dialog says why until the person closes it.
    func cancelledByAgent(_ error: ASError?) {
        answerCancelled(message: error?.message ?? "the agent ended the picker")
        list.isSensitive = false
        options.isSensitive = false
        proofHint.isVisible = false
        statusBox.isVisible = false
        searchSpinner.stop()
        searchSpinner.isVisible = false
        searchLabel.text = "No accessories found."
        showError(SetupStatus.advice(for: error))
        showClose()
    }

    /// Closes the window at once (`Release`, the picker stopping), answering a pending choice.
    func close() {
        answerCancelled(message: "the picker stopped")
        finish(destroy: true)
    }

    // MARK: The person

    private func selectionChanged() {
        guard call != nil else { return }
        chosen = selectedRow()
        refreshOptions()
        if let share = request.share, let chosen {
            consentLabel.text = share.consent(for: chosen.name, application: request.application?.name).sentence
            consentLabel.isVisible = true
        } else {
            consentLabel.isVisible = false
        }
        let passphraseGiven = !request.asksPassphrase || !passphraseRow.text.isEmpty
        let proofGiven = !request.asksProofOfPossession || !proofRow.text.isEmpty
        setUp.isSensitive = chosen != nil && passphraseGiven && proofGiven
    }

    private func confirm() {
        guard let call, let row = selectedRow() else { return }
        let passphrase = passphraseRow.text
        if request.asksPassphrase && passphrase.isEmpty {
            showError("Enter the accessory's passphrase, printed on it or in its manual.")
            passphraseRow.grabFocus()
            return
        }
        let proof = proofRow.text
        if request.asksProofOfPossession && proof.isEmpty {
            showError(
                request.proofOfPossessionHint ?? "Enter the proof of possession printed on the device or its box.")
            proofRow.grabFocus()
            return
        }
        var newName: String?
        let name = nameRow.text.trimmingWhitespace()
        setUpName = row.name
        if request.renames(row.item), !name.isEmpty, name != row.name {
            newName = name
            setUpName = name
        }
        chosen = row
        self.call = nil
        call.choose(
            entry: row.id, name: newName, passphrase: request.asksPassphrase ? Secret(passphrase) : nil,
            proofOfPossession: request.asksProofOfPossession ? Secret(proof) : nil)
        list.isSensitive = false
        options.isSensitive = false
        proofHint.isVisible = false
        setUp.isSensitive = false
        errorLabel.isVisible = false
        progress(step: "", error: nil)
    }

    private func answerComparison(matches: Bool) {
        guard let comparison else { return }
        self.comparison = nil
        compareBox.isVisible = false
        if matches {
            comparison.reply()
            progress(step: "pairing", error: nil)
        } else {
            comparison.cancel("the person saw another number on the accessory")
        }
    }

    private func dismiss() {
        answerCancelled()
        finish(destroy: true)
    }

    // MARK: Pieces

    private func answerCancelled(message: String = "the person cancelled the picker") {
        call?.cancel(message)
        call = nil
        comparison?.cancel(message)
        comparison = nil
        compareBox.isVisible = false
    }

    private func finish(destroy: Bool) {
        guard !isClosed else { return }
        isClosed = true
        if destroy { window.destroy() }
        closed()
    }

    private func showClose() {
        cancel.setMnemonic("_Close")
        setUp.isVisible = false
        cancel.grabFocus()
    }

    private func showError(_ message: String) {
        errorLabel.text = message
        errorLabel.isVisible = true
    }

    private func refreshOptions() {
        let renames = chosen.map { request.renames($0.item) } ?? false
        if renames, let chosen, nameRow.text.isEmpty { nameRow.text = chosen.name }
        nameRow.isVisible = renames
        passphraseRow.isVisible = request.asksPassphrase
        proofRow.isVisible = request.asksProofOfPossession
        proofHint.isVisible = request.asksProofOfPossession && options.isSensitive
        options.isVisible = renames || request.asksPassphrase || request.asksProofOfPossession
    }

    private func selectedRow() -> PickerRow? {
        guard let selected = list.selectedRow,
            let id = widgets.first(where: { $0.value == selected })?.key
        else { return nil }
        return rows.rows.first { $0.id == id }
    }

    private func makeRow(_ row: PickerRow) -> ActionRow {
        let widget = ActionRow(title: row.name, subtitle: row.identity)
        let image: Image
        if let file = images.file(for: row.productImage ?? request.items[safe: row.item]?.productImage) {
            image = Image(file: file.path)
        } else {
            image = Image(iconName: row.isBluetooth ? "bluetooth-active-symbolic" : "network-wireless-symbolic")
        }
        image.pixelSize = 48
        image.setAccessibleLabel("Picture of \(row.name)")
        widget.addPrefix(image)
        let signal = Label(row.signalText)
        signal.addStyleClass("dim-label")
        signal.setAccessibleLabel(row.signalDescription)
        widget.addSuffix(signal)
        widget.setAccessibleDescription("\(row.identity), \(row.signalDescription)")
        return widget
    }
}

extension Label {
    /// A label whose text wraps, aligned to the start.
    fileprivate static func paragraph(_ text: String) -> Label {
        let label = Label(text)
        label.wraps = true
        label.xAlign = 0
        return label
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
