// OpenSSL's libcrypto, what ESP-IDF provisioning needs of it: the declarations from Debian's
// libssl-dev, the functions from libssl3's libcrypto.so.3, loaded with dlopen when provisioning
// first needs them. Linked at build time, libcrypto would be loaded and its thousands of
// symbols bound at every start of accessoryctl, for the few commands that provision.
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/rand.h>

#define COPENSSL_LIBRARY "libcrypto.so.3"

/// The libcrypto functions the project calls, each with the type its declaration gives it.
#define COPENSSL_FUNCTIONS(X) \
    X(BN_CTX_free) \
    X(BN_CTX_new) \
    X(BN_add) \
    X(BN_bin2bn) \
    X(BN_bn2bin) \
    X(BN_bn2binpad) \
    X(BN_clear_free) \
    X(BN_is_zero) \
    X(BN_mod_exp) \
    X(BN_mod_mul) \
    X(BN_mod_sub) \
    X(BN_mul) \
    X(BN_new) \
    X(BN_nnmod) \
    X(BN_num_bits) \
    X(BN_set_flags) \
    X(ERR_clear_error) \
    X(ERR_error_string_n) \
    X(ERR_get_error) \
    X(EVP_CIPHER_CTX_ctrl) \
    X(EVP_CIPHER_CTX_free) \
    X(EVP_CIPHER_CTX_new) \
    X(EVP_DecryptFinal_ex) \
    X(EVP_DecryptInit_ex) \
    X(EVP_DecryptUpdate) \
    X(EVP_Digest) \
    X(EVP_EncryptFinal_ex) \
    X(EVP_EncryptInit_ex) \
    X(EVP_EncryptUpdate) \
    X(EVP_PKEY_CTX_free) \
    X(EVP_PKEY_CTX_new) \
    X(EVP_PKEY_CTX_new_id) \
    X(EVP_PKEY_derive) \
    X(EVP_PKEY_derive_init) \
    X(EVP_PKEY_derive_set_peer) \
    X(EVP_PKEY_free) \
    X(EVP_PKEY_get_raw_private_key) \
    X(EVP_PKEY_get_raw_public_key) \
    X(EVP_PKEY_keygen) \
    X(EVP_PKEY_keygen_init) \
    X(EVP_PKEY_new_raw_private_key) \
    X(EVP_PKEY_new_raw_public_key) \
    X(EVP_aes_256_ctr) \
    X(EVP_aes_256_gcm) \
    X(EVP_sha256) \
    X(EVP_sha512) \
    X(RAND_bytes)

/// Pointers to those functions, named as libcrypto names them.
struct copenssl_functions {
#define COPENSSL_FIELD(name) __typeof__(name) *name;
    COPENSSL_FUNCTIONS(COPENSSL_FIELD)
#undef COPENSSL_FIELD
};

/// Loads libcrypto and looks its functions up, once for the process (thread-safe). Returns them,
/// or NULL with `*error` (when given) saying what failed.
const struct copenssl_functions *copenssl_load(const char **error);
