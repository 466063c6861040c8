internal import CGtk
internal import CGtkShim

/// A `GtkLabel`.
final class Label: Widget {
    init(_ text: String) {
        super.init(gtk_label_new(text))
    }

    /// A label that assistive technologies announce as a heading.
    init(heading text: String) {
        super.init(cgtk_heading_label_new(text))
    }

    var text: String {
        get { String(cString: gtk_label_get_text(cgtk_label(pointer))) }
        set { gtk_label_set_text(cgtk_label(pointer), newValue) }
    }

    /// Whether long text wraps onto more lines.
    var wraps: Bool {
        get { gtk_label_get_wrap(cgtk_label(pointer)) != 0 }
        set { gtk_label_set_wrap(cgtk_label(pointer), newValue ? 1 : 0) }
    }

    /// Whether the lines of wrapped text are centred on one another (`GTK_JUSTIFY_CENTER`).
    var centersLines: Bool {
        get { gtk_label_get_justify(cgtk_label(pointer)) == GTK_JUSTIFY_CENTER }
        set { gtk_label_set_justify(cgtk_label(pointer), newValue ? GTK_JUSTIFY_CENTER : GTK_JUSTIFY_LEFT) }
    }

    /// Where the text sits across the label: 0 at the start, 1 at the end.
    var xAlign: Float {
        get { gtk_label_get_xalign(cgtk_label(pointer)) }
        set { gtk_label_set_xalign(cgtk_label(pointer), newValue) }
    }
}

/// A `GtkButton` with a text label.
final class Button: Widget {
    init(mnemonic: String) {
        super.init(gtk_button_new())
        setMnemonic(mnemonic)
    }

    /// Labels the button with a mnemonic. GTK 4.8 names it by both its label property
    /// ("_Cancel") and the label inside it ("Cancel"), so a screen reader would say
    /// "_Cancel Cancel"; without the property the name is the label's alone.
    func setMnemonic(_ mnemonic: String) {
        gtk_button_set_use_underline(cgtk_button(pointer), 1)
        gtk_button_set_label(cgtk_button(pointer), mnemonic)
        resetAccessibleLabel()
    }

    func onClicked(_ handler: @escaping () -> Void) {
        connect(pointer, "clicked", handler)
    }
}

/// A `GtkImage`, from a file or a themed icon.
final class Image: Widget {
    init(file path: String) {
        super.init(gtk_image_new_from_file(path))
    }

    init(iconName: String) {
        super.init(gtk_image_new_from_icon_name(iconName))
    }

    /// The icon a `GIcon` serialized with `g_icon_to_string` describes (a themed icon's name, a
    /// file); `nil` when the text does not read as one, or names a themed icon the display's
    /// theme does not have (GTK would draw its "missing image" instead).
    init?(serializedIcon: String) {
        guard let icon = g_icon_new_for_string(serializedIcon, nil) else { return nil }
        defer { g_object_unref(gpointer(icon)) }
        if let display = gdk_display_get_default(),
            gtk_icon_theme_has_gicon(gtk_icon_theme_get_for_display(display), icon) == 0
        {
            return nil
        }
        super.init(gtk_image_new_from_gicon(icon))
    }

    var pixelSize: Int32 {
        get { gtk_image_get_pixel_size(cgtk_image(pointer)) }
        set { gtk_image_set_pixel_size(cgtk_image(pointer), newValue) }
    }
}

/// A `GtkSpinner`.
final class Spinner: Widget {
    init() {
        super.init(gtk_spinner_new())
    }

    func start() {
        gtk_spinner_start(cgtk_spinner(pointer))
    }

    func stop() {
        gtk_spinner_stop(cgtk_spinner(pointer))
    }
}

/// An `AdwActionRow`: a title and a subtitle, with widgets before and after them.
final class ActionRow: Widget {
    /// A row whose title and subtitle are plain text, not Pango markup.
    init(title: String, subtitle: String) {
        super.init(adw_action_row_new())
        adw_preferences_row_set_title(ADW_PREFERENCES_ROW(pointer), title)
        adw_preferences_row_set_use_markup(ADW_PREFERENCES_ROW(pointer), 0)
        adw_action_row_set_subtitle(ADW_ACTION_ROW(pointer), subtitle)
    }

    func addPrefix(_ widget: Widget) {
        adw_action_row_add_prefix(ADW_ACTION_ROW(pointer), widget.pointer)
    }

    func addSuffix(_ widget: Widget) {
        adw_action_row_add_suffix(ADW_ACTION_ROW(pointer), widget.pointer)
    }
}

/// An `AdwEntryRow`, or with `hidesText` an `AdwPasswordEntryRow`: a titled text field in a list.
final class EntryRow: Widget {
    init(title: String, hidesText: Bool = false) {
        super.init(hidesText ? adw_password_entry_row_new() : adw_entry_row_new())
        adw_preferences_row_set_title(ADW_PREFERENCES_ROW(pointer), title)
    }

    var text: String {
        get { gtk_editable_get_text(cgtk_editable(pointer)).map { String(cString: $0) } ?? "" }
        set { gtk_editable_set_text(cgtk_editable(pointer), newValue) }
    }

    func onChanged(_ handler: @escaping () -> Void) {
        connect(pointer, "changed", handler)
    }
}
