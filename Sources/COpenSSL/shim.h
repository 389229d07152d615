#ifndef ORCHARD_COPENSSL_SHIM_H
#define ORCHARD_COPENSSL_SHIM_H

// OpenSSL 3 for Swift. Function-like macros and variadic functions cannot be
// called from Swift; each one the project needs gets a `static inline` wrapper
// here, prefixed `orchard_`.

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/cms.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/objects.h>
#include <openssl/opensslv.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/// The runtime library's version number (OPENSSL_VERSION_NUMBER of the linked libcrypto).
static inline unsigned long orchard_openssl_version_number(void) { return OpenSSL_version_num(); }

/// The linked library's version text, e.g. "OpenSSL 3.0.19 ...".
static inline const char *orchard_openssl_version_text(void) { return OpenSSL_version(OPENSSL_VERSION); }

// MARK: STACK_OF(X509)

static inline STACK_OF(X509) *orchard_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int orchard_sk_X509_num(const STACK_OF(X509) *sk) { return sk_X509_num(sk); }
static inline X509 *orchard_sk_X509_value(const STACK_OF(X509) *sk, int i) { return sk_X509_value(sk, i); }
static inline int orchard_sk_X509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
static inline void orchard_sk_X509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }
static inline void orchard_sk_X509_pop_free(STACK_OF(X509) *sk) { sk_X509_pop_free(sk, X509_free); }

#endif
