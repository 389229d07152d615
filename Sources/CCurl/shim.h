#ifndef ORCHARD_CCURL_SHIM_H
#define ORCHARD_CCURL_SHIM_H

#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic: one typed wrapper per
// argument kind.

static inline CURLcode orchard_curl_setopt_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode orchard_curl_setopt_string(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode orchard_curl_setopt_pointer(CURL *curl, CURLoption option, void *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode orchard_curl_setopt_slist(CURL *curl, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(curl, option, value);
}
/// A blob option (CURLOPT_SSLCERT_BLOB, CURLOPT_SSLKEY_BLOB …) that libcurl does not copy: `data` must stay
/// valid until the handle is reset or cleaned up.
static inline CURLcode orchard_curl_setopt_blob_nocopy(CURL *curl, CURLoption option, void *data, size_t length) {
    struct curl_blob blob = { data, length, CURL_BLOB_NOCOPY };
    return curl_easy_setopt(curl, option, &blob);
}
typedef size_t (*orchard_curl_write_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
static inline CURLcode orchard_curl_setopt_write_function(CURL *curl, CURLoption option, orchard_curl_write_callback fn) {
    return curl_easy_setopt(curl, option, fn);
}
static inline CURLcode orchard_curl_getinfo_long(CURL *curl, CURLINFO info, long *value) {
    return curl_easy_getinfo(curl, info, value);
}
/// The linked libcurl's version text, e.g. "libcurl/7.88.1 OpenSSL/3.0.19 ...".
static inline const char *orchard_curl_version_text(void) { return curl_version(); }

/// curl_version_info(CURLVERSION_NOW): CURLVERSION_NOW is a macro.
static inline curl_version_info_data *orchard_curl_version_info(void) { return curl_version_info(CURLVERSION_NOW); }

#endif
