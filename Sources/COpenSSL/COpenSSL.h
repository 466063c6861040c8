// OpenSSL's libcrypto (Debian libssl-dev): what ESP-IDF provisioning needs.
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
