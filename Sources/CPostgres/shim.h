#ifndef ORCHARD_CPOSTGRES_SHIM_H
#define ORCHARD_CPOSTGRES_SHIM_H

#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>
#endif

/// The linked libpq's version as an integer (e.g. 150018 for 15.18).
static inline int orchard_pq_lib_version(void) { return PQlibVersion(); }

#endif
