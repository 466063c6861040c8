#include "cgtk_shim.h"

gulong cgtk_signal_connect(gpointer instance, const char *signal, cgtk_handler handler,
                           gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, G_CALLBACK(handler), data, destroy, 0);
}

gulong cgtk_signal_connect_pointer(gpointer instance, const char *signal, cgtk_pointer_handler handler,
                                   gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, G_CALLBACK(handler), data, destroy, 0);
}

gulong cgtk_signal_connect_boolean(gpointer instance, const char *signal, cgtk_boolean_handler handler,
                                   gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, G_CALLBACK(handler), data, destroy, 0);
}

GtkWindow *cgtk_window(gpointer widget) { return GTK_WINDOW(widget); }
GtkBox *cgtk_box(gpointer widget) { return GTK_BOX(widget); }
GtkListBox *cgtk_list_box(gpointer widget) { return GTK_LIST_BOX(widget); }
GtkListBoxRow *cgtk_list_box_row(gpointer widget) { return GTK_LIST_BOX_ROW(widget); }
GtkButton *cgtk_button(gpointer widget) { return GTK_BUTTON(widget); }
GtkLabel *cgtk_label(gpointer widget) { return GTK_LABEL(widget); }
GtkImage *cgtk_image(gpointer widget) { return GTK_IMAGE(widget); }
GtkSpinner *cgtk_spinner(gpointer widget) { return GTK_SPINNER(widget); }
GtkEditable *cgtk_editable(gpointer widget) { return GTK_EDITABLE(widget); }
GtkEntry *cgtk_entry(gpointer widget) { return GTK_ENTRY(widget); }
GtkScrolledWindow *cgtk_scrolled_window(gpointer widget) { return GTK_SCROLLED_WINDOW(widget); }

GtkWidget *cgtk_heading_label_new(const char *text) {
    return g_object_new(GTK_TYPE_LABEL, "label", text, "accessible-role", GTK_ACCESSIBLE_ROLE_HEADING, NULL);
}

void cgtk_accessible_set_label(gpointer widget, const char *label) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
}

void cgtk_accessible_set_description(gpointer widget, const char *description) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, description, -1);
}

typedef struct {
    cgtk_boolean_handler handler;
    gpointer data;
    GDestroyNotify destroy;
} CgtkShortcut;

static gboolean cgtk_shortcut_trigger(GtkWidget *widget, GVariant *args, gpointer data) {
    (void)args;
    CgtkShortcut *shortcut = data;
    return shortcut->handler(widget, shortcut->data);
}

static void cgtk_shortcut_free(gpointer data) {
    CgtkShortcut *shortcut = data;
    if (shortcut->destroy) shortcut->destroy(shortcut->data);
    g_free(shortcut);
}

void cgtk_add_shortcut(gpointer widget, const char *accelerator, cgtk_boolean_handler handler,
                       gpointer data, GDestroyNotify destroy) {
    CgtkShortcut *shortcut = g_new0(CgtkShortcut, 1);
    shortcut->handler = handler;
    shortcut->data = data;
    shortcut->destroy = destroy;
    GtkEventController *controller = gtk_shortcut_controller_new();
    gtk_shortcut_controller_set_scope(GTK_SHORTCUT_CONTROLLER(controller), GTK_SHORTCUT_SCOPE_GLOBAL);
    gtk_shortcut_controller_add_shortcut(
        GTK_SHORTCUT_CONTROLLER(controller),
        gtk_shortcut_new(gtk_shortcut_trigger_parse_string(accelerator),
                         gtk_callback_action_new(cgtk_shortcut_trigger, shortcut, cgtk_shortcut_free)));
    gtk_widget_add_controller(GTK_WIDGET(widget), controller);
}

void cgtk_object_set_string(gpointer object, const char *property, const char *value) {
    g_object_set(object, property, value, NULL);
}
