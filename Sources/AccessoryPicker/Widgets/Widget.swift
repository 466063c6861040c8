internal import CGtk
internal import CGtkShim

/// A GTK widget seen from Swift. GTK owns the widget: a container holds its children, and a
/// window holds itself until it is destroyed. The wrapper borrows the pointer, taking no
/// reference, so it must not be used once GTK has destroyed the widget.
///
/// `Widgets/` is the only part of the module that builds or changes widgets in C; it connects
/// their signals through `GtkSignals.swift`, and GTK runs on `GtkThread`.
class Widget: Equatable {
    let pointer: UnsafeMutablePointer<GtkWidget>

    init(_ pointer: UnsafeMutablePointer<GtkWidget>) {
        self.pointer = pointer
    }

    /// Two wrappers are equal when they wrap the same widget.
    static func == (lhs: Widget, rhs: Widget) -> Bool { lhs.pointer == rhs.pointer }

    var isVisible: Bool {
        get { gtk_widget_get_visible(pointer) != 0 }
        set { gtk_widget_set_visible(pointer, newValue ? 1 : 0) }
    }

    var isSensitive: Bool {
        get { gtk_widget_get_sensitive(pointer) != 0 }
        set { gtk_widget_set_sensitive(pointer, newValue ? 1 : 0) }
    }

    var horizontalAlignment: Alignment {
        get { Alignment(rawValue: gtk_widget_get_halign(pointer)) }
        set { gtk_widget_set_halign(pointer, newValue.rawValue) }
    }

    /// Whether the widget takes the width left over.
    var expandsHorizontally: Bool {
        get { gtk_widget_get_hexpand(pointer) != 0 }
        set { gtk_widget_set_hexpand(pointer, newValue ? 1 : 0) }
    }

    /// Whether the widget takes the room left over in both directions.
    var expands: Bool {
        get { gtk_widget_get_vexpand(pointer) != 0 }
        set {
            gtk_widget_set_vexpand(pointer, newValue ? 1 : 0)
            gtk_widget_set_hexpand(pointer, newValue ? 1 : 0)
        }
    }

    /// Adds a style class, such as `boxed-list` or `suggested-action`.
    func addStyleClass(_ name: String) {
        gtk_widget_add_css_class(pointer, name)
    }

    /// Sets the same margin on all four sides.
    func setMargins(_ size: Int32) {
        gtk_widget_set_margin_top(pointer, size)
        gtk_widget_set_margin_bottom(pointer, size)
        gtk_widget_set_margin_start(pointer, size)
        gtk_widget_set_margin_end(pointer, size)
    }

    func grabFocus() {
        _ = gtk_widget_grab_focus(pointer)
    }

    /// The name a screen reader gives the widget (`GTK_ACCESSIBLE_PROPERTY_LABEL`).
    func setAccessibleLabel(_ label: String) {
        cgtk_accessible_set_label(pointer, label)
    }

    /// What a screen reader says after the name (`GTK_ACCESSIBLE_PROPERTY_DESCRIPTION`).
    func setAccessibleDescription(_ description: String) {
        cgtk_accessible_set_description(pointer, description)
    }

    /// Names the widget `label` alone: GTK 4.8 would join the label with the content the
    /// widget is labelled by (a button's own text).
    func setOnlyAccessibleLabel(_ label: String) {
        cgtk_accessible_set_label(pointer, label)
        gtk_accessible_reset_relation(GTK_ACCESSIBLE(pointer), GTK_ACCESSIBLE_RELATION_LABELLED_BY)
    }

    /// Drops the accessible label, so that the widget is named by its content.
    func resetAccessibleLabel() {
        gtk_accessible_reset_property(GTK_ACCESSIBLE(pointer), GTK_ACCESSIBLE_PROPERTY_LABEL)
    }
}

/// A widget's alignment in its space (`GtkAlign`).
struct Alignment: RawRepresentable, Hashable {
    var rawValue: GtkAlign

    /// `GTK_ALIGN_END`
    static let end = Alignment(rawValue: GTK_ALIGN_END)
    /// `GTK_ALIGN_CENTER`
    static let center = Alignment(rawValue: GTK_ALIGN_CENTER)
}

/// The direction a box lays out its children in (`GtkOrientation`).
struct Orientation: RawRepresentable, Hashable {
    var rawValue: GtkOrientation

    /// `GTK_ORIENTATION_HORIZONTAL`
    static let horizontal = Orientation(rawValue: GTK_ORIENTATION_HORIZONTAL)
    /// `GTK_ORIENTATION_VERTICAL`
    static let vertical = Orientation(rawValue: GTK_ORIENTATION_VERTICAL)
}

/// How many rows of a list box can be selected (`GtkSelectionMode`).
struct SelectionMode: RawRepresentable, Hashable {
    var rawValue: GtkSelectionMode

    /// `GTK_SELECTION_NONE`
    static let none = SelectionMode(rawValue: GTK_SELECTION_NONE)
    /// `GTK_SELECTION_SINGLE`
    static let single = SelectionMode(rawValue: GTK_SELECTION_SINGLE)
}
