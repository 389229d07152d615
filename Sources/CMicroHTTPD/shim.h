#ifndef ORCHARD_CMICROHTTPD_SHIM_H
#define ORCHARD_CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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

/// An option item whose value is an unsigned integer (connection limit, timeout, pool size …).
static inline struct MHD_OptionItem orchard_mhd_option_uint(enum MHD_OPTION option, unsigned int value) {
    struct MHD_OptionItem item = { option, (intptr_t)value, NULL };
    return item;
}

/// An option item whose value is one pointer (MHD_OPTION_SOCK_ADDR, MHD_OPTION_HTTPS_MEM_CERT/KEY …).
static inline struct MHD_OptionItem orchard_mhd_option_pointer(enum MHD_OPTION option, const void *pointer) {
    struct MHD_OptionItem item = { option, 0, (void *)pointer };
    return item;
}

/// The item that ends an option array.
static inline struct MHD_OptionItem orchard_mhd_option_end(void) {
    struct MHD_OptionItem item = { MHD_OPTION_END, 0, NULL };
    return item;
}

/// MHD_OPTION_NOTIFY_COMPLETED: the callback (cast to intptr_t) and its closure.
static inline struct MHD_OptionItem orchard_mhd_option_notify_completed(MHD_RequestCompletedCallback callback,
                                                                        void *cls) {
    struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)callback, cls };
    return item;
}

/// An unescape callback that leaves the URI and its arguments percent-encoded (only `+` in arguments has already
/// become a space), so that the application splits the path before decoding its segments.
static inline size_t orchard_mhd_keep_escapes(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls;
    (void)connection;
    return strlen(text);
}

/// MHD_OPTION_UNESCAPE_CALLBACK with `orchard_mhd_keep_escapes`.
static inline struct MHD_OptionItem orchard_mhd_option_keep_escapes(void) {
    struct MHD_OptionItem item = { MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)&orchard_mhd_keep_escapes, NULL };
    return item;
}

/// A log sink for libmicrohttpd's messages: `function(context, message)` with the message already formatted.
typedef void (*orchard_mhd_log_function)(void *context, const char *message);

/// The closure passed with MHD_OPTION_EXTERNAL_LOGGER: the caller keeps it alive while the daemon runs.
struct orchard_mhd_logger {
    orchard_mhd_log_function function;
    void *context;
};

/// Formats a libmicrohttpd message (printf style with a va_list) and hands it to the logger's function.
static inline void orchard_mhd_log_trampoline(void *cls, const char *format, va_list arguments) {
    struct orchard_mhd_logger *logger = (struct orchard_mhd_logger *)cls;
    char message[512];
    vsnprintf(message, sizeof message, format, arguments);
    if (logger != NULL && logger->function != NULL) logger->function(logger->context, message);
}

/// MHD_OPTION_EXTERNAL_LOGGER with the formatting trampoline; list it first in the option array.
static inline struct MHD_OptionItem orchard_mhd_option_logger(struct orchard_mhd_logger *logger) {
    struct MHD_OptionItem item = { MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)&orchard_mhd_log_trampoline, logger };
    return item;
}

/// MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS): the peer's address or NULL.
static inline const struct sockaddr *orchard_mhd_connection_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/// MHD_OPTION_NOTIFY_CONNECTION: the callback (cast to intptr_t) and its closure; called when a connection starts
/// (before any request on it) and when it closes (before libmicrohttpd closes its socket).
static inline struct MHD_OptionItem orchard_mhd_option_notify_connection(MHD_NotifyConnectionCallback callback,
                                                                         void *cls) {
    struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)callback, cls };
    return item;
}

/// The URI log callback's type: called once the request line has arrived, before the headers; its result becomes
/// the request's initial context pointer.
typedef void *(*orchard_mhd_uri_log_function)(void *cls, const char *uri, struct MHD_Connection *connection);

/// MHD_OPTION_URI_LOG_CALLBACK: the callback (cast to intptr_t) and its closure.
static inline struct MHD_OptionItem orchard_mhd_option_uri_log(orchard_mhd_uri_log_function callback, void *cls) {
    struct MHD_OptionItem item = { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)callback, cls };
    return item;
}

/// MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD): the connection's socket or -1.
static inline int orchard_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT): the port the daemon listens on, 0 if unknown.
static inline uint16_t orchard_mhd_daemon_bind_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS): open connections, 0 if unknown.
static inline unsigned int orchard_mhd_daemon_current_connections(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info == NULL ? 0 : info->num_connections;
}

#endif
