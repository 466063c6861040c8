#include <gtk/gtk.h>
#include <adwaita.h>
