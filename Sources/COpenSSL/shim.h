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

// MARK: Apple Pay tokens, merchant keys and the sandbox PKI

/// BIO_get_mem_data: the memory BIO's contents (not NUL-terminated) and their length.
static inline long orchard_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
/// OPENSSL_free.
static inline void orchard_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }

static inline int orchard_sk_CMS_SignerInfo_num(const STACK_OF(CMS_SignerInfo) *sk) { return sk_CMS_SignerInfo_num(sk); }
static inline CMS_SignerInfo *orchard_sk_CMS_SignerInfo_value(const STACK_OF(CMS_SignerInfo) *sk, int i) {
    return sk_CMS_SignerInfo_value(sk, i);
}

/// A STACK_OF(X509_EXTENSION) for CSR extension requests.
static inline STACK_OF(X509_EXTENSION) *orchard_sk_X509_EXTENSION_new_null(void) { return sk_X509_EXTENSION_new_null(); }
static inline int orchard_sk_X509_EXTENSION_push(STACK_OF(X509_EXTENSION) *sk, X509_EXTENSION *x) {
    return sk_X509_EXTENSION_push(sk, x);
}
static inline void orchard_sk_X509_EXTENSION_pop_free(STACK_OF(X509_EXTENSION) *sk) {
    sk_X509_EXTENSION_pop_free(sk, X509_EXTENSION_free);
}

/// X509V3_set_ctx_nodb.
static inline void orchard_X509V3_set_ctx_nodb(X509V3_CTX *ctx) { X509V3_set_ctx_nodb(ctx); }

/// XN_FLAG_RFC2253 without escaping of UTF-8 bytes, for printing names.
static inline unsigned long orchard_XN_FLAG_RFC2253_UTF8(void) { return XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB; }

/// EVP_PKEY_PUBLIC_KEY, the selection for EVP_PKEY_fromdata of a public key.
static inline int orchard_EVP_PKEY_PUBLIC_KEY(void) { return EVP_PKEY_PUBLIC_KEY; }

#include <openssl/provider.h>

// MARK: STACK_OF(ASN1_TYPE) (ASN1_SEQUENCE_ANY)

static inline int orchard_sk_ASN1_TYPE_num(const STACK_OF(ASN1_TYPE) *sk) { return sk_ASN1_TYPE_num(sk); }
static inline ASN1_TYPE *orchard_sk_ASN1_TYPE_value(const STACK_OF(ASN1_TYPE) *sk, int i) { return sk_ASN1_TYPE_value(sk, i); }
static inline ASN1_TYPE *orchard_sk_ASN1_TYPE_delete(STACK_OF(ASN1_TYPE) *sk, int i) { return sk_ASN1_TYPE_delete(sk, i); }
static inline void orchard_sk_ASN1_TYPE_pop_free(STACK_OF(ASN1_TYPE) *sk) { sk_ASN1_TYPE_pop_free(sk, ASN1_TYPE_free); }

#endif
