/*
 * Typed wrappers for the GLib macros and variadic functions Swift cannot import.
 * Every symbol is prefixed cglib_. Nothing here holds state.
 */
#ifndef CGLIB_SHIM_H
#define CGLIB_SHIM_H

#include <gio/gio.h>

/* G_OBJECT_TYPE_NAME */
const char *cglib_type_name(gpointer instance);

/* g_object_set / g_object_get with one property of a known type. */
void cglib_object_set_string(gpointer object, const char *property, const char *value);
void cglib_object_set_boolean(gpointer object, const char *property, gboolean value);
void cglib_object_set_uint(gpointer object, const char *property, guint value);
void cglib_object_set_int(gpointer object, const char *property, gint value);
void cglib_object_set_boxed(gpointer object, const char *property, gconstpointer value);
void cglib_object_set_strv(gpointer object, const char *property, const char *const *value);

/* g_initable_new(type, cancellable, error, uint_property, uint_value, object_property, object, NULL);
 * without the object property when object_property is NULL. */
gpointer cglib_initable_new_with_uint_and_object(GType type, const char *uint_property, guint uint_value,
                                                 const char *object_property, gpointer object,
                                                 GCancellable *cancellable, GError **error);

/* g_signal_connect_data with handlers of fixed shapes. */
typedef void (*cglib_pointer_handler)(gpointer instance, gpointer argument, gpointer user_data);
typedef void (*cglib_uint2_handler)(gpointer instance, guint first, guint second, gpointer user_data);
typedef void (*cglib_uint3_handler)(gpointer instance, guint first, guint second, guint third, gpointer user_data);

gulong cglib_signal_connect_pointer(gpointer instance, const char *signal, cglib_pointer_handler handler,
                                    gpointer user_data, GClosureNotify destroy);
gulong cglib_signal_connect_uint2(gpointer instance, const char *signal, cglib_uint2_handler handler,
                                  gpointer user_data, GClosureNotify destroy);
gulong cglib_signal_connect_uint3(gpointer instance, const char *signal, cglib_uint3_handler handler,
                                  gpointer user_data, GClosureNotify destroy);

/* a{sv} dictionaries, built without G_VARIANT_TYPE or g_variant_new. */
GVariantBuilder *cglib_vardict_builder_new(void);
void cglib_vardict_add_string(GVariantBuilder *builder, const char *key, const char *value);
void cglib_vardict_add_bytestring_array(GVariantBuilder *builder, const char *key, GBytes *const *values, gsize count);
/* Ends the builder and frees it; the result is floating. */
GVariant *cglib_vardict_builder_end(GVariantBuilder *builder);

/* A GPtrArray of borrowed pointers (no free function). */
GPtrArray *cglib_ptr_array_new(void);

/* GVariants of fixed types, built without the G_VARIANT_TYPE macro; results are floating. */
GVariant *cglib_variant_new_bytes(const guint8 *data, gsize size);
GVariant *cglib_variant_new_array(const char *element_type, GVariant *const *children, gsize count);
/* The bytes of an "ay" GVariant, borrowed; NULL with size 0 when it is of another type. */
const guint8 *cglib_variant_get_bytes(GVariant *value, gsize *size);

/* pidfd_open(2) and pidfd_send_signal(2) (no siginfo, no flags), through syscall(2): Swift's
 * Glibc module has neither. -1 with errno set on failure. */
int cglib_pidfd_open(int pid);
int cglib_pidfd_send_signal(int pidfd, int signal);

#endif
