#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <glib-unix.h>
