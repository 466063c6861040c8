#include "COpenSSL.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if OPENSSL_VERSION_MAJOR != 3
#error "the headers are not OpenSSL 3's, whose library is libcrypto.so.3"
#endif

static struct copenssl_functions functions;
/// What failed, once load() has run; NULL when everything was found.
static const char *failure;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen(COPENSSL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        // dlerror's text lasts only until the thread's next dl call.
        const char *reason = dlerror();
        failure = reason != NULL ? strdup(reason) : NULL;
        if (failure == NULL) failure = COPENSSL_LIBRARY " cannot be opened";
        return;
    }
#define COPENSSL_LOOK_UP(name)                                          \
    functions.name = (__typeof__(name) *)dlsym(library, #name);         \
    if (functions.name == NULL) {                                       \
        failure = COPENSSL_LIBRARY " has no " #name;                    \
        return;                                                         \
    }
    COPENSSL_FUNCTIONS(COPENSSL_LOOK_UP)
#undef COPENSSL_LOOK_UP
}

const struct copenssl_functions *copenssl_load(const char **error) {
    pthread_once(&once, load);
    if (failure != NULL) {
        if (error != NULL) *error = failure;
        return NULL;
    }
    return &functions;
}
