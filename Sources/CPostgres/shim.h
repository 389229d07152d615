#ifndef ORCHARD_CPOSTGRES_SHIM_H
#define ORCHARD_CPOSTGRES_SHIM_H

#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>
#endif

/// The linked libpq's version as an integer (e.g. 150018 for 15.18).
static inline int orchard_pq_lib_version(void) { return PQlibVersion(); }

/// The SQLSTATE of a failed result (PG_DIAG_SQLSTATE is a character macro Swift cannot import), or NULL.
static inline const char *orchard_pq_sqlstate(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_SQLSTATE);
}

/// The constraint a failed result names (PG_DIAG_CONSTRAINT_NAME, e.g. for a unique violation), or NULL.
static inline const char *orchard_pq_constraint(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_CONSTRAINT_NAME);
}

static inline void orchard_pq_ignore_notice(void *arg, const char *message) {
    (void)arg;
    (void)message;
}

/// Drops the server's NOTICE messages instead of printing them on standard error.
static inline void orchard_pq_silence_notices(PGconn *connection) {
    PQsetNoticeProcessor(connection, orchard_pq_ignore_notice, NULL);
}

#endif
