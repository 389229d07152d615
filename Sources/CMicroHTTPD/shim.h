#ifndef ORCHARD_CMICROHTTPD_SHIM_H
#define ORCHARD_CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// MHD_start_daemon is variadic: options go in as an MHD_OPTION_ARRAY, a list
/// of `struct MHD_OptionItem` ended by an item with option MHD_OPTION_END.
static inline struct MHD_Daemon *orchard_mhd_start_daemon(
    unsigned int flags, uint16_t port,
    MHD_AcceptPolicyCallback apc, void *apc_cls,
    MHD_AccessHandlerCallback dh, void *dh_cls,
    struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, apc, apc_cls, dh, dh_cls,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/// The linked libmicrohttpd's version text, e.g. "0.9.75".
static inline const char *orchard_mhd_version_text(void) { return MHD_get_version(); }

#endif
