internal import CGtk
internal import CGtkShim
import BusService
import FoundationEssentials
import GLibRuntime

typealias Widget = UnsafeMutablePointer<GtkWidget>

/// One picker dialog, for one `RequestChoice`: the vendor's name as its title, the matching
/// accessories as rows, Set Up and Cancel, the rename and passphrase rows where asked, and the
/// setup's progress. It lives on the GTK thread only (see `PickerWindows`).
final class PickerDialog {
    let request: PickerRequest
    private let images: ProductImages
    private var call: MethodCall?
    private var rows = PickerRows()
    private var widgets: [UInt32: Widget] = [:]
    private var chosen: PickerRow?
    /// The accessory's name once the person set it up: the new name, where they gave one.
    private var setUpName: String?
    /// Called once the window is gone.
    private let closed: () -> Void

    private let window: Widget
    private let list: Widget
    private let setUp: Widget
    private let cancel: Widget
    private let prompt: Widget
    private let options: Widget
    private let nameRow: Widget
    private let passphraseRow: Widget
    private let statusBox: Widget
    private let spinner: Widget
    private let statusLabel: Widget
    private let errorLabel: Widget
    /// The two answers to a numeric comparison while pairing (`ConfirmPasskey`).
    private let compareBox: Widget
    private let compareMatches: Widget
    private let compareDiffers: Widget
    private var comparison: MethodCall?
    private let searchSpinner: Widget
    private let searchLabel: Widget
    private var isClosed = false

    init(request: PickerRequest, call: MethodCall, images: ProductImages, closed: @escaping () -> Void) {
        self.request = request
        self.call = call
        self.images = images
        self.closed = closed

        window = adw_window_new()
        gtk_window_set_title(cgtk_window(window), request.vendor)
        gtk_window_set_default_size(cgtk_window(window), 480, -1)

        let header = adw_header_bar_new()!
        adw_header_bar_set_title_widget(
            ADW_HEADER_BAR(header), adw_window_title_new(request.vendor, "Set up an accessory"))
        cancel = gtk_button_new()
        setUp = gtk_button_new()
        Self.label(cancel, "_Cancel")
        Self.label(setUp, "_Set Up")
        gtk_widget_add_css_class(setUp, "suggested-action")
        gtk_widget_set_sensitive(setUp, 0)
        adw_header_bar_pack_start(ADW_HEADER_BAR(header), cancel)
        adw_header_bar_pack_end(ADW_HEADER_BAR(header), setUp)
        adw_header_bar_set_show_end_title_buttons(ADW_HEADER_BAR(header), 0)

        let content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12)!
        Self.margins(content, 18)
        prompt = gtk_label_new("Choose the accessory to set up.")
        gtk_label_set_wrap(cgtk_label(prompt), 1)
        gtk_label_set_xalign(cgtk_label(prompt), 0)
        gtk_box_append(cgtk_box(content), prompt)

        list = gtk_list_box_new()
        gtk_list_box_set_selection_mode(cgtk_list_box(list), GTK_SELECTION_SINGLE)
        gtk_widget_add_css_class(list, "boxed-list")
        cgtk_accessible_set_label(list, "Accessories")
        let searching = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12)!
        Self.margins(searching, 12)
        searchSpinner = gtk_spinner_new()
        gtk_spinner_start(cgtk_spinner(searchSpinner))
        cgtk_accessible_set_label(searchSpinner, "Searching")
        gtk_box_append(cgtk_box(searching), searchSpinner)
        searchLabel = gtk_label_new("Searching for accessories…")
        gtk_widget_add_css_class(searchLabel, "dim-label")
        gtk_box_append(cgtk_box(searching), searchLabel)
        gtk_list_box_set_placeholder(cgtk_list_box(list), searching)
        gtk_box_append(cgtk_box(content), list)

        options = gtk_list_box_new()
        gtk_list_box_set_selection_mode(cgtk_list_box(options), GTK_SELECTION_NONE)
        gtk_widget_add_css_class(options, "boxed-list")
        cgtk_accessible_set_label(options, "Setup options")
        nameRow = adw_entry_row_new()
        adw_preferences_row_set_title(ADW_PREFERENCES_ROW(nameRow), "Name")
        passphraseRow = adw_password_entry_row_new()
        adw_preferences_row_set_title(ADW_PREFERENCES_ROW(passphraseRow), "Passphrase")
        gtk_list_box_append(cgtk_list_box(options), nameRow)
        gtk_list_box_append(cgtk_list_box(options), passphraseRow)
        gtk_box_append(cgtk_box(content), options)

        statusBox = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12)
        spinner = gtk_spinner_new()
        cgtk_accessible_set_label(spinner, "Setting up")
        statusLabel = gtk_label_new("")
        gtk_label_set_wrap(cgtk_label(statusLabel), 1)
        gtk_label_set_xalign(cgtk_label(statusLabel), 0)
        gtk_box_append(cgtk_box(statusBox), spinner)
        gtk_box_append(cgtk_box(statusBox), statusLabel)
        gtk_box_append(cgtk_box(content), statusBox)
        compareBox = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12)
        gtk_widget_set_halign(compareBox, GTK_ALIGN_END)
        compareDiffers = gtk_button_new()
        compareMatches = gtk_button_new()
        Self.label(compareDiffers, "It Does _Not Match")
        Self.label(compareMatches, "It _Matches")
        gtk_widget_add_css_class(compareMatches, "suggested-action")
        gtk_box_append(cgtk_box(compareBox), compareDiffers)
        gtk_box_append(cgtk_box(compareBox), compareMatches)
        gtk_box_append(cgtk_box(content), compareBox)
        errorLabel = gtk_label_new("")
        gtk_label_set_wrap(cgtk_label(errorLabel), 1)
        gtk_label_set_xalign(cgtk_label(errorLabel), 0)
        gtk_widget_add_css_class(errorLabel, "error")
        gtk_box_append(cgtk_box(content), errorLabel)

        let page = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0)!
        gtk_box_append(cgtk_box(page), header)
        gtk_box_append(cgtk_box(page), content)
        adw_window_set_content(ADW_WINDOW(window), page)
        gtk_window_set_default_widget(cgtk_window(window), setUp)
        refreshOptions()
        gtk_widget_set_visible(statusBox, 0)
        gtk_widget_set_visible(compareBox, 0)
        gtk_widget_set_visible(errorLabel, 0)

        // Weak: GTK may emit while it tears the window down, after the dialog is gone.
        connect(setUp, "clicked") { [weak self] in self?.confirm() }
        connect(cancel, "clicked") { [weak self] in self?.dismiss() }
        connect(compareMatches, "clicked") { [weak self] in self?.answerComparison(matches: true) }
        connect(compareDiffers, "clicked") { [weak self] in self?.answerComparison(matches: false) }
        connect(list, "row-selected") { [weak self] _ in self?.selectionChanged() }
        connect(list, "row-activated") { [weak self] _ in self?.confirm() }
        connect(passphraseRow, "changed") { [weak self] in self?.selectionChanged() }
        connectReturning(window, "close-request") { [weak self] in
            self?.answerCancelled()
            self?.finish(destroy: false)
            return false
        }
        addShortcut(window, "Escape") { [weak self] in self?.dismiss() }
        gtk_window_present(cgtk_window(window))
    }

    // MARK: Updates from the agent

    func update(_ entries: [PickerRow], removed: [UInt32]) {
        let change = rows.apply(rows: entries, removed: removed)
        for row in change.added {
            let widget = makeRow(row)
            widgets[row.id] = widget
            gtk_list_box_append(cgtk_list_box(list), widget)
        }
        for row in change.changed {
            guard let widget = widgets[row.id] else { continue }
            gtk_list_box_remove(cgtk_list_box(list), widget)
            let replacement = makeRow(row)
            widgets[row.id] = replacement
            let position = rows.rows.firstIndex { $0.id == row.id } ?? -1
            gtk_list_box_insert(cgtk_list_box(list), replacement, Int32(position))
        }
        for id in change.removed {
            if let widget = widgets.removeValue(forKey: id) { gtk_list_box_remove(cgtk_list_box(list), widget) }
        }
        // The first accessory to appear takes the focus from where GTK put it (the first
        // button), so the arrow keys move through the accessories at once, as GNOME's HIG asks.
        let focus = gtk_window_get_focus(cgtk_window(window))
        if call != nil, let first = rows.rows.first, let widget = widgets[first.id], focus == nil || focus == cancel {
            gtk_widget_grab_focus(widget)
        }
        selectionChanged()
    }

    func progress(step: String, error: DBusValue?) {
        let status = SetupStatus(step: step, error: error, accessory: setUpName ?? chosen?.name ?? "the accessory")
        gtk_widget_set_visible(statusBox, 1)
        switch status {
        case .settingUp(let text):
            gtk_label_set_text(cgtk_label(statusLabel), text)
            gtk_spinner_start(cgtk_spinner(spinner))
        case .done(let text):
            gtk_label_set_text(cgtk_label(statusLabel), text)
            gtk_spinner_stop(cgtk_spinner(spinner))
            gtk_widget_set_visible(spinner, 0)
            showClose()
        case .failed(let title, let message):
            gtk_label_set_text(cgtk_label(statusLabel), title)
            gtk_spinner_stop(cgtk_spinner(spinner))
            gtk_widget_set_visible(spinner, 0)
            showError(message)
            showClose()
        }
    }

    /// `ConfirmPasskey`: the accessory being paired shows `code`; the person answers whether
    /// this window shows the same number. Not matching is the safe choice, so it has the focus.
    func confirmPasskey(_ code: String, call: MethodCall) {
        comparison?.reply(errorName: "io.accessorysetup.Error.UserCancelled", message: "a newer comparison replaced it")
        comparison = call
        let accessory = setUpName ?? chosen?.name ?? "the accessory"
        gtk_widget_set_visible(statusBox, 1)
        gtk_label_set_text(
            cgtk_label(statusLabel), "Does “\(accessory)” show \(code)? Pair it only if it shows this very number.")
        gtk_widget_set_visible(compareBox, 1)
        gtk_widget_grab_focus(compareDiffers)
    }

    /// The agent ended the picker (`Cancel`: a timeout, the client gone): a pending choice is
    /// answered, and the dialog says why until the person closes it.
    func cancelledByAgent(_ error: DBusValue?) {
        answerCancelled(message: error?.field("message")?.string ?? "the agent ended the picker")
        gtk_widget_set_sensitive(list, 0)
        gtk_widget_set_sensitive(options, 0)
        gtk_widget_set_visible(statusBox, 0)
        gtk_spinner_stop(cgtk_spinner(searchSpinner))
        gtk_widget_set_visible(searchSpinner, 0)
        gtk_label_set_text(cgtk_label(searchLabel), "No accessories found.")
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
        let passphraseGiven = !request.asksPassphrase || !text(of: passphraseRow).isEmpty
        gtk_widget_set_sensitive(setUp, chosen != nil && passphraseGiven ? 1 : 0)
    }

    private func confirm() {
        guard let call, let row = selectedRow() else { return }
        let passphrase = text(of: passphraseRow)
        if request.asksPassphrase && passphrase.isEmpty {
            showError("Enter the accessory's passphrase, printed on it or in its manual.")
            gtk_widget_grab_focus(passphraseRow)
            return
        }
        var answer: [(String, DBusValue)] = []
        let name = text(of: nameRow).trimmingWhitespace()
        setUpName = row.name
        if request.renames(row.item), !name.isEmpty, name != row.name {
            answer.append(("name", .string(name)))
            setUpName = name
        }
        if request.asksPassphrase { answer.append(("passphrase", .string(passphrase))) }
        chosen = row
        self.call = nil
        call.reply([.uint32(row.id), .vardict(answer)])
        gtk_widget_set_sensitive(list, 0)
        gtk_widget_set_sensitive(options, 0)
        gtk_widget_set_sensitive(setUp, 0)
        gtk_widget_set_visible(errorLabel, 0)
        progress(step: "", error: nil)
    }

    private func answerComparison(matches: Bool) {
        guard let comparison else { return }
        self.comparison = nil
        gtk_widget_set_visible(compareBox, 0)
        if matches {
            comparison.reply()
            progress(step: "pairing", error: nil)
        } else {
            comparison.reply(
                errorName: "io.accessorysetup.Error.UserCancelled", message: "the person saw another number on the accessory")
        }
    }

    private func dismiss() {
        answerCancelled()
        finish(destroy: true)
    }

    // MARK: Pieces

    private func answerCancelled(message: String = "the person cancelled the picker") {
        call?.reply(errorName: "io.accessorysetup.Error.UserCancelled", message: message)
        call = nil
        comparison?.reply(errorName: "io.accessorysetup.Error.UserCancelled", message: message)
        comparison = nil
        gtk_widget_set_visible(compareBox, 0)
    }

    private func finish(destroy: Bool) {
        guard !isClosed else { return }
        isClosed = true
        if destroy { gtk_window_destroy(cgtk_window(window)) }
        closed()
    }

    /// Labels a button with a mnemonic. GTK 4.8 names it by both its label property
    /// ("_Cancel") and the label inside it ("Cancel"), so a screen reader would say
    /// "_Cancel Cancel"; without the property the name is the label's alone.
    private static func label(_ button: Widget, _ mnemonic: String) {
        gtk_button_set_use_underline(cgtk_button(button), 1)
        gtk_button_set_label(cgtk_button(button), mnemonic)
        gtk_accessible_reset_property(GTK_ACCESSIBLE(button), GTK_ACCESSIBLE_PROPERTY_LABEL)
    }

    private static func margins(_ widget: Widget, _ size: Int32) {
        gtk_widget_set_margin_top(widget, size)
        gtk_widget_set_margin_bottom(widget, size)
        gtk_widget_set_margin_start(widget, size)
        gtk_widget_set_margin_end(widget, size)
    }

    private func showClose() {
        Self.label(cancel, "_Close")
        gtk_widget_set_visible(setUp, 0)
        gtk_widget_grab_focus(cancel)
    }

    private func showError(_ message: String) {
        gtk_label_set_text(cgtk_label(errorLabel), message)
        gtk_widget_set_visible(errorLabel, 1)
    }

    private func refreshOptions() {
        let renames = chosen.map { request.renames($0.item) } ?? false
        if renames, let chosen, text(of: nameRow).isEmpty { gtk_editable_set_text(cgtk_editable(nameRow), chosen.name) }
        gtk_widget_set_visible(nameRow, renames ? 1 : 0)
        gtk_widget_set_visible(passphraseRow, request.asksPassphrase ? 1 : 0)
        gtk_widget_set_visible(options, renames || request.asksPassphrase ? 1 : 0)
    }

    private func selectedRow() -> PickerRow? {
        guard let selected = gtk_list_box_get_selected_row(cgtk_list_box(list)) else { return nil }
        let pointer = UnsafeMutableRawPointer(selected)
        guard let id = widgets.first(where: { UnsafeMutableRawPointer($0.value) == pointer })?.key else { return nil }
        return rows.rows.first { $0.id == id }
    }

    private func text(of editable: Widget) -> String {
        gtk_editable_get_text(cgtk_editable(editable)).map { String(cString: $0) } ?? ""
    }

    private func makeRow(_ row: PickerRow) -> Widget {
        let widget = adw_action_row_new()!
        adw_preferences_row_set_title(ADW_PREFERENCES_ROW(widget), row.name)
        adw_preferences_row_set_use_markup(ADW_PREFERENCES_ROW(widget), 0)
        adw_action_row_set_subtitle(ADW_ACTION_ROW(widget), row.identity)
        let image: Widget
        if let file = images.file(for: row.productImage ?? request.items[safe: row.item]?.productImage) {
            image = gtk_image_new_from_file(file.path)
        } else {
            let icon = row.isBluetooth ? "bluetooth-active-symbolic" : "network-wireless-symbolic"
            image = gtk_image_new_from_icon_name(icon)
        }
        gtk_image_set_pixel_size(cgtk_image(image), 48)
        cgtk_accessible_set_label(image, "Picture of \(row.name)")
        adw_action_row_add_prefix(ADW_ACTION_ROW(widget), image)
        let signal = gtk_label_new(row.signalText)!
        gtk_widget_add_css_class(signal, "dim-label")
        cgtk_accessible_set_label(signal, row.signalDescription)
        adw_action_row_add_suffix(ADW_ACTION_ROW(widget), signal)
        cgtk_accessible_set_description(widget, "\(row.identity), \(row.signalDescription)")
        return widget
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
