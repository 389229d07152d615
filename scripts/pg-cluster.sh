#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests, on a loopback port in a temporary directory.
#   scripts/pg-cluster.sh start DIR   initialises and starts a cluster in DIR; prints its superuser URL
#   scripts/pg-cluster.sh stop DIR    stops it (DIR is then safe to delete)
# When run as root, the server runs as the unprivileged `postgres` user that Debian's package creates.
# The cluster trusts loopback connections (it is throwaway and listens on 127.0.0.1 only).
set -euo pipefail

action=${1:-}
dir=${2:-}
[[ -n "$action" && -n "$dir" ]] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

bindir=""
for candidate in /usr/lib/postgresql/15/bin $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
    [[ -x "$candidate/initdb" ]] && { bindir=$candidate; break; }
done
[[ -n "$bindir" ]] || { echo "pg-cluster: no PostgreSQL server binaries (install postgresql-15)" >&2; exit 1; }

as_server_user() {
    if [[ $(id -u) -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

case "$action" in
start)
    mkdir -p "$dir"
    if [[ $(id -u) -eq 0 ]]; then
        chown postgres: "$dir"
        runuser -u postgres -- test -w "$dir" \
            || { echo "pg-cluster: the postgres user cannot reach $dir (make its parents traversable)" >&2; exit 1; }
    fi
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_server_user "$bindir/initdb" -D "$dir/data" -U orchard --auth=trust --encoding=UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    as_server_user "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=300 -c fsync=on" \
        start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "$port" >"$dir/port"
    echo "postgres://orchard@127.0.0.1:$port/postgres"
    ;;
stop)
    [[ -d "$dir/data" ]] || exit 0
    as_server_user "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    ;;
*)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
