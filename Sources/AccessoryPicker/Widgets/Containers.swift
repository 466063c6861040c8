internal import CGtk
internal import CGtkShim

/// A `GtkBox`: children in a row or a column.
final class Box: Widget {
    init(_ orientation: Orientation, spacing: Int32) {
        super.init(gtk_box_new(orientation.rawValue, spacing))
    }

    func append(_ child: Widget) {
        gtk_box_append(cgtk_box(pointer), child.pointer)
    }

    /// Takes `child` out, which destroys it unless something else holds it.
    func remove(_ child: Widget) {
        gtk_box_remove(cgtk_box(pointer), child.pointer)
    }
}

/// A `GtkListBox`.
final class ListBox: Widget {
    init(selection: SelectionMode) {
        super.init(gtk_list_box_new())
        gtk_list_box_set_selection_mode(cgtk_list_box(pointer), selection.rawValue)
    }

    func append(_ row: Widget) {
        gtk_list_box_append(cgtk_list_box(pointer), row.pointer)
    }

    /// Inserts `row` at `position`; -1 appends it.
    func insert(_ row: Widget, at position: Int32) {
        gtk_list_box_insert(cgtk_list_box(pointer), row.pointer, position)
    }

    /// Takes `row` out of the list, which destroys it unless something else holds it.
    func remove(_ row: Widget) {
        gtk_list_box_remove(cgtk_list_box(pointer), row.pointer)
    }

    /// What the list shows while it has no rows.
    func setPlaceholder(_ placeholder: Widget) {
        gtk_list_box_set_placeholder(cgtk_list_box(pointer), placeholder.pointer)
    }

    /// The selected row, compared with the rows the caller holds by `==`.
    var selectedRow: Widget? {
        gtk_list_box_get_selected_row(cgtk_list_box(pointer)).map { Widget(UnsafeMutablePointer(OpaquePointer($0))) }
    }

    func onRowSelected(_ handler: @escaping () -> Void) {
        connect(pointer, "row-selected") { _ in handler() }
    }

    func onRowActivated(_ handler: @escaping () -> Void) {
        connect(pointer, "row-activated") { _ in handler() }
    }
}

/// An `AdwWindowTitle`: a title with a subtitle under it, for a header bar.
final class WindowTitle: Widget {
    init(title: String, subtitle: String) {
        super.init(adw_window_title_new(title, subtitle))
    }
}

/// An `AdwHeaderBar`.
final class HeaderBar: Widget {
    init(title: Widget) {
        super.init(adw_header_bar_new())
        adw_header_bar_set_title_widget(ADW_HEADER_BAR(pointer), title.pointer)
    }

    func packStart(_ child: Widget) {
        adw_header_bar_pack_start(ADW_HEADER_BAR(pointer), child.pointer)
    }

    func packEnd(_ child: Widget) {
        adw_header_bar_pack_end(ADW_HEADER_BAR(pointer), child.pointer)
    }

    /// Whether the window's buttons (close, ...) show at the end of the bar.
    var showsEndTitleButtons: Bool {
        get { adw_header_bar_get_show_end_title_buttons(ADW_HEADER_BAR(pointer)) != 0 }
        set { adw_header_bar_set_show_end_title_buttons(ADW_HEADER_BAR(pointer), newValue ? 1 : 0) }
    }
}

/// An `AdwWindow`: a top-level window whose content draws its own title bar.
final class Window: Widget {
    init(title: String) {
        super.init(adw_window_new())
        gtk_window_set_title(cgtk_window(pointer), title)
    }

    /// The size the window opens at; -1 leaves a side to the content's natural size.
    func setDefaultSize(width: Int32, height: Int32) {
        gtk_window_set_default_size(cgtk_window(pointer), width, height)
    }

    func setContent(_ content: Widget) {
        adw_window_set_content(ADW_WINDOW(pointer), content.pointer)
    }

    /// The widget that Enter activates.
    func setDefaultWidget(_ widget: Widget) {
        gtk_window_set_default_widget(cgtk_window(pointer), widget.pointer)
    }

    /// The widget with the keyboard focus in the window, if any.
    var focus: Widget? {
        gtk_window_get_focus(cgtk_window(pointer)).map(Widget.init)
    }

    func present() {
        gtk_window_present(cgtk_window(pointer))
    }

    /// Opens `uri` (a web page) in the person's default application for it.
    func showURI(_ uri: String) {
        gtk_show_uri(cgtk_window(pointer), uri, 0)  // GDK_CURRENT_TIME
    }

    func destroy() {
        gtk_window_destroy(cgtk_window(pointer))
    }

    /// Runs `handler` when the person asks to close the window; returning `true` keeps it open.
    func onCloseRequest(_ handler: @escaping () -> Bool) {
        connectReturning(pointer, "close-request", handler)
    }

    /// Runs `handler` when `accelerator` (such as `Escape`) is pressed anywhere in the window.
    func onShortcut(_ accelerator: String, _ handler: @escaping () -> Void) {
        addShortcut(pointer, accelerator, handler)
    }
}

/// The icon theme of the display: where themed icons (an application's, say) are looked up.
enum IconTheme {
    /// Looks for icons in `directories` too (each holding themes, as `/usr/share/icons` does),
    /// after the places GTK looks already; those it looks in already are left as they are.
    static func addSearchPaths(_ directories: [String]) {
        guard let display = gdk_display_get_default() else { return }
        let theme = gtk_icon_theme_get_for_display(display)
        var present: Set<String> = []
        if let paths = gtk_icon_theme_get_search_path(theme) {
            var index = 0
            while let path = paths[index] {
                present.insert(String(cString: path))
                index += 1
            }
            g_strfreev(paths)
        }
        for directory in directories where !present.contains(directory) {
            gtk_icon_theme_add_search_path(theme, directory)
        }
    }
}
