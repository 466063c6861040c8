/*
 * Typed wrappers for the GTK and GObject macros and variadic functions Swift cannot import.
 * Every symbol is prefixed cgtk_. Nothing here holds state.
 */
#ifndef CGTK_SHIM_H
#define CGTK_SHIM_H

#include <gtk/gtk.h>
#include <adwaita.h>

/* g_signal_connect_data with handlers of fixed shapes; G_CALLBACK stays on this side. */
typedef void (*cgtk_handler)(gpointer instance, gpointer user_data);
typedef void (*cgtk_pointer_handler)(gpointer instance, gpointer argument, gpointer user_data);
typedef gboolean (*cgtk_boolean_handler)(gpointer instance, gpointer user_data);

gulong cgtk_signal_connect(gpointer instance, const char *signal, cgtk_handler handler,
                           gpointer data, GClosureNotify destroy);
gulong cgtk_signal_connect_pointer(gpointer instance, const char *signal, cgtk_pointer_handler handler,
                                   gpointer data, GClosureNotify destroy);
gulong cgtk_signal_connect_boolean(gpointer instance, const char *signal, cgtk_boolean_handler handler,
                                   gpointer data, GClosureNotify destroy);

/* Checked casts of the classic GTK macros (GTK_WINDOW, GTK_BOX, ...): a g_critical on a mismatch. */
GtkWindow *cgtk_window(gpointer widget);
GtkBox *cgtk_box(gpointer widget);
GtkListBox *cgtk_list_box(gpointer widget);
GtkListBoxRow *cgtk_list_box_row(gpointer widget);
GtkButton *cgtk_button(gpointer widget);
GtkLabel *cgtk_label(gpointer widget);
GtkImage *cgtk_image(gpointer widget);
GtkSpinner *cgtk_spinner(gpointer widget);
GtkEditable *cgtk_editable(gpointer widget);
GtkEntry *cgtk_entry(gpointer widget);
GtkScrolledWindow *cgtk_scrolled_window(gpointer widget);

/* A GtkLabel whose accessible role is GTK_ACCESSIBLE_ROLE_HEADING (construct-only: g_object_new, varargs). */
GtkWidget *cgtk_heading_label_new(const char *text);

/* gtk_accessible_update_property (varargs) with GTK_ACCESSIBLE_PROPERTY_LABEL. */
void cgtk_accessible_set_label(gpointer widget, const char *label);
/* gtk_accessible_update_property with GTK_ACCESSIBLE_PROPERTY_DESCRIPTION. */
void cgtk_accessible_set_description(gpointer widget, const char *description);

/* A shortcut on `widget` (a window) that runs `handler` for `accelerator` ("Escape"). */
void cgtk_add_shortcut(gpointer widget, const char *accelerator, cgtk_boolean_handler handler,
                       gpointer data, GDestroyNotify destroy);

/* g_object_set(object, "name", value, NULL) for a string. */
void cgtk_object_set_string(gpointer object, const char *property, const char *value);

#endif
