#include "COpenSSL.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#if OPENSSL_VERSION_MAJOR != 3
#error "the headers are not OpenSSL 3's, whose library is libcrypto.so.3"
#endif

static struct copenssl_functions functions;
static char failure[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen(COPENSSL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(failure, sizeof failure, "%s", dlerror());
        return;
    }
#define COPENSSL_LOOK_UP(name)                                                          \
    functions.name = (__typeof__(name) *)dlsym(library, #name);                         \
    if (functions.name == NULL) {                                                       \
        snprintf(failure, sizeof failure, "%s has no %s", COPENSSL_LIBRARY, #name);     \
        return;                                                                         \
    }
    COPENSSL_FUNCTIONS(COPENSSL_LOOK_UP)
#undef COPENSSL_LOOK_UP
}

const struct copenssl_functions *copenssl_load(const char **error) {
    pthread_once(&once, load);
    if (failure[0] != '\0') {
        if (error != NULL) *error = failure;
        return NULL;
    }
    return &functions;
}
