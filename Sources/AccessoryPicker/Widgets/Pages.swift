internal import CGtk
internal import CGtkShim

/// A `GtkScrolledWindow` around an `AdwClamp`: a column that scrolls up and down, no wider
/// than `maximumWidth` and centred in a wider window, as a preferences page is.
final class ScrollingColumn: Widget {
    init(_ child: Widget, maximumWidth: Int32) {
        super.init(gtk_scrolled_window_new())
        let clamp = adw_clamp_new()
        adw_clamp_set_maximum_size(ADW_CLAMP(clamp), maximumWidth)
        adw_clamp_set_child(ADW_CLAMP(clamp), child.pointer)
        gtk_scrolled_window_set_policy(cgtk_scrolled_window(pointer), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_scrolled_window_set_child(cgtk_scrolled_window(pointer), clamp)
    }
}

/// An `AdwStatusPage`: an icon, a title and a description filling the window, with the next
/// step under them.
final class StatusPage: Widget {
    init(iconName: String, title: String, description: String) {
        super.init(adw_status_page_new())
        adw_status_page_set_icon_name(ADW_STATUS_PAGE(pointer), iconName)
        adw_status_page_set_title(ADW_STATUS_PAGE(pointer), title)
        adw_status_page_set_description(ADW_STATUS_PAGE(pointer), description)
    }

    func setChild(_ child: Widget) {
        adw_status_page_set_child(ADW_STATUS_PAGE(pointer), child.pointer)
    }
}

/// An `AdwMessageDialog` over a window: a heading, a body, and responses as buttons. It
/// destroys itself once answered.
final class MessageDialog: Widget {
    /// How a response's button looks (`AdwResponseAppearance`).
    struct Appearance: RawRepresentable, Hashable {
        var rawValue: AdwResponseAppearance

        /// `ADW_RESPONSE_DEFAULT`
        static let plain = Appearance(rawValue: ADW_RESPONSE_DEFAULT)
        /// `ADW_RESPONSE_SUGGESTED`
        static let suggested = Appearance(rawValue: ADW_RESPONSE_SUGGESTED)
        /// `ADW_RESPONSE_DESTRUCTIVE`
        static let destructive = Appearance(rawValue: ADW_RESPONSE_DESTRUCTIVE)
    }

    init(over parent: Window, heading: String, body: String) {
        super.init(adw_message_dialog_new(cgtk_window(parent.pointer), heading, body))
    }

    /// Adds the response `id`, labelled with a mnemonic.
    func addResponse(_ id: String, _ label: String, appearance: Appearance = .plain) {
        adw_message_dialog_add_response(ADW_MESSAGE_DIALOG(pointer), id, label)
        adw_message_dialog_set_response_appearance(ADW_MESSAGE_DIALOG(pointer), id, appearance.rawValue)
    }

    /// The response Return gives, and the one Escape (closing) gives.
    func setResponses(default defaultID: String, close closeID: String) {
        adw_message_dialog_set_default_response(ADW_MESSAGE_DIALOG(pointer), defaultID)
        adw_message_dialog_set_close_response(ADW_MESSAGE_DIALOG(pointer), closeID)
    }

    func setExtraChild(_ child: Widget) {
        adw_message_dialog_set_extra_child(ADW_MESSAGE_DIALOG(pointer), child.pointer)
    }

    /// Runs `handler` with the id of the response the person gave.
    func onResponse(_ handler: @escaping (String) -> Void) {
        connect(pointer, "response") { response in
            handler(response.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "")
        }
    }

    func present() {
        gtk_window_present(cgtk_window(pointer))
    }
}

extension Button {
    /// A button showing `iconName`, named `label` for a screen reader and its tooltip.
    convenience init(iconName: String, label: String) {
        self.init(mnemonic: "")
        gtk_button_set_icon_name(cgtk_button(pointer), iconName)
        gtk_widget_set_tooltip_text(pointer, label)
        setAccessibleLabel(label)
    }

    /// A button without a frame (`flat`), centred vertically in its row.
    func makeFlat() {
        addStyleClass("flat")
        verticallyCentered()
    }

    /// Centres the button vertically in a taller row, at its natural height.
    func verticallyCentered() {
        gtk_widget_set_valign(pointer, GTK_ALIGN_CENTER)
    }
}

/// A `GtkEntry`: one line of text to edit.
final class Entry: Widget {
    init(text: String, label: String) {
        super.init(gtk_entry_new())
        self.text = text
        setAccessibleLabel(label)
        gtk_entry_set_activates_default(cgtk_entry(pointer), 1)
    }

    var text: String {
        get { gtk_editable_get_text(cgtk_editable(pointer)).map { String(cString: $0) } ?? "" }
        set { gtk_editable_set_text(cgtk_editable(pointer), newValue) }
    }
}
