#include "cglib_shim.h"

#include <sys/syscall.h>
#include <unistd.h>

const char *cglib_type_name(gpointer instance) {
    return G_OBJECT_TYPE_NAME(instance);
}

void cglib_object_set_string(gpointer object, const char *property, const char *value) {
    g_object_set(G_OBJECT(object), property, value, NULL);
}

void cglib_object_set_boolean(gpointer object, const char *property, gboolean value) {
    g_object_set(G_OBJECT(object), property, value, NULL);
}

void cglib_object_set_uint(gpointer object, const char *property, guint value) {
    g_object_set(G_OBJECT(object), property, value, NULL);
}

void cglib_object_set_int(gpointer object, const char *property, gint value) {
    g_object_set(G_OBJECT(object), property, value, NULL);
}

void cglib_object_set_boxed(gpointer object, const char *property, gconstpointer value) {
    g_object_set(G_OBJECT(object), property, value, NULL);
}

void cglib_object_set_strv(gpointer object, const char *property, const char *const *value) {
    g_object_set(G_OBJECT(object), property, value, NULL);
}

gpointer cglib_initable_new_with_uint_and_object(GType type, const char *uint_property, guint uint_value,
                                                 const char *object_property, gpointer object,
                                                 GCancellable *cancellable, GError **error) {
    if (object_property == NULL)
        return g_initable_new(type, cancellable, error, uint_property, uint_value, NULL);
    return g_initable_new(type, cancellable, error, uint_property, uint_value, object_property, object, NULL);
}

gulong cglib_signal_connect_pointer(gpointer instance, const char *signal, cglib_pointer_handler handler,
                                    gpointer user_data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, G_CALLBACK(handler), user_data, destroy, G_CONNECT_DEFAULT);
}

gulong cglib_signal_connect_uint2(gpointer instance, const char *signal, cglib_uint2_handler handler,
                                  gpointer user_data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, G_CALLBACK(handler), user_data, destroy, G_CONNECT_DEFAULT);
}

gulong cglib_signal_connect_uint3(gpointer instance, const char *signal, cglib_uint3_handler handler,
                                  gpointer user_data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, G_CALLBACK(handler), user_data, destroy, G_CONNECT_DEFAULT);
}

GVariantBuilder *cglib_vardict_builder_new(void) {
    return g_variant_builder_new(G_VARIANT_TYPE_VARDICT);
}

void cglib_vardict_add_string(GVariantBuilder *builder, const char *key, const char *value) {
    g_variant_builder_add(builder, "{sv}", key, g_variant_new_string(value));
}

void cglib_vardict_add_bytestring_array(GVariantBuilder *builder, const char *key, GBytes *const *values, gsize count) {
    GVariantBuilder array;
    g_variant_builder_init(&array, G_VARIANT_TYPE("aay"));
    for (gsize i = 0; i < count; i++) {
        gsize size = 0;
        gconstpointer data = g_bytes_get_data(values[i], &size);
        g_variant_builder_add_value(&array, g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, data, size, 1));
    }
    g_variant_builder_add(builder, "{sv}", key, g_variant_builder_end(&array));
}

GVariant *cglib_vardict_builder_end(GVariantBuilder *builder) {
    GVariant *result = g_variant_builder_end(builder);
    g_variant_builder_unref(builder);
    return result;
}

GPtrArray *cglib_ptr_array_new(void) {
    return g_ptr_array_new();
}

GVariant *cglib_variant_new_bytes(const guint8 *data, gsize size) {
    return g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, data, size, 1);
}

GVariant *cglib_variant_new_array(const char *element_type, GVariant *const *children, gsize count) {
    return g_variant_new_array(G_VARIANT_TYPE(element_type), children, count);
}

const guint8 *cglib_variant_get_bytes(GVariant *value, gsize *size) {
    *size = 0;
    if (!g_variant_is_of_type(value, G_VARIANT_TYPE_BYTESTRING)) return NULL;
    return g_variant_get_fixed_array(value, size, 1);
}

int cglib_pidfd_open(int pid) {
    return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0u);
}

int cglib_pidfd_send_signal(int pidfd, int signal) {
    return (int)syscall(SYS_pidfd_send_signal, pidfd, signal, NULL, 0u);
}
