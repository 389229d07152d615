#!/usr/bin/env bash
# The main job (`make run`): starts `orchard serve` in the background on ./orchard.db, waits for GET /healthz,
# runs `orchard demo` against it, and leaves the server running.
#
#   scripts/run.sh          (re)start the server, run the demo, leave the server running
#   scripts/run.sh stop     stop the server started by a previous run
#
# A server left by a previous run (its pid is in orchard-serve.pid) is stopped gracefully (SIGTERM) and started
# again, so the server always runs the binary just built. Environment: ORCHARD_BIN (default
# .build/debug/orchard), ORCHARD_RUN_PORT (default 8080), ORCHARD_RUN_DATABASE (default sqlite:orchard.db; a
# postgres://… URL needs ORCHARD_MASTER_KEY too).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
bin=${ORCHARD_BIN:-.build/debug/orchard}
host=127.0.0.1
port=${ORCHARD_RUN_PORT:-8080}
url="http://$host:$port"
database="orchard.db"
database_option=${ORCHARD_RUN_DATABASE:-sqlite:$database}
log="orchard-serve.log"
pidfile="orchard-serve.pid"

# The pid of the server a previous run started, when it is still running.
previous_server() {
    [[ -f "$pidfile" ]] || return 1
    local pid
    pid=$(cat "$pidfile")
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    # Only a process that is this checkout's `orchard serve` (not a recycled pid).
    ps -p "$pid" -o args= 2>/dev/null | grep -q "orchard serve" || return 1
    echo "$pid"
}

stop_server() {
    local pid
    pid=$(previous_server) || { rm -f "$pidfile"; return 0; }
    echo "Stopping the Orchard server of a previous run (pid $pid, SIGTERM)..."
    kill -TERM "$pid"
    for _ in $(seq 1 150); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "pid $pid did not stop within 15 s; sending SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
        sleep 0.2
    fi
    rm -f "$pidfile"
}

healthy() { curl -fsS --max-time 2 "$url/healthz" >/dev/null 2>&1; }

if [[ "${1:-}" == "stop" ]]; then
    stop_server
    exit 0
fi

command -v curl >/dev/null 2>&1 || ./scripts/install-deps.sh curl
[[ -x "$bin" ]] || { echo "no $bin: build it first (make build)" >&2; exit 1; }

stop_server
if healthy; then
    echo "Something else already answers on $url (not a server this script started)." >&2
    echo "Stop it, or run on another port: ORCHARD_RUN_PORT=8081 make run" >&2
    exit 1
fi

echo "Starting: $bin serve --host $host --port $port --database ${database_option%%:*}:…  (log: $log)"
nohup "$bin" serve --host "$host" --port "$port" --database "$database_option" >"$log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$pidfile"

for _ in $(seq 1 300); do
    healthy && break
    if ! kill -0 "$pid" 2>/dev/null; then
        rm -f "$pidfile"
        echo "orchard serve exited during start-up; the end of $log:" >&2
        tail -n 20 "$log" >&2
        exit 1
    fi
    sleep 0.1
done
if ! healthy; then
    echo "orchard serve (pid $pid) did not answer GET $url/healthz within 30 s; see $log" >&2
    exit 1
fi
echo "Ready: GET $url/healthz answers 200"
# On the database's first run the server provisions the sandbox merchant. Its log has the keys masked; show
# them once here, on the terminal (`orchard merchant show` shows them again).
if grep -q "Sandbox merchant created" "$log"; then
    echo
    echo "Sandbox merchant created. Its keys (again with: $bin merchant show --database sqlite:$database):"
    "$bin" merchant show --database "sqlite:$database" | sed -e '/^processing_certificate_pem/,$d' -e 's/^/  /'
fi
echo

status=0
"$bin" demo --url "$url" --database "$database_option" || status=$?

# A PostgreSQL URL is not printed (it may hold a password).
shown_database="$root/$database"
shown_option="sqlite:$database"
if [[ -n "${ORCHARD_RUN_DATABASE:-}" ]]; then
    shown_database="the PostgreSQL database of ORCHARD_RUN_DATABASE"
    shown_option='"$ORCHARD_RUN_DATABASE"'
fi
cat <<EOF

The Orchard gateway keeps running:
  URL       $url            (curl $url/healthz)
  store     $url/demo       (the demo store: open it in any browser and buy with a test card)
  pid       $pid               (also in $pidfile)
  log       $root/$log   (one JSON line per request)
  database  $shown_database
  keys      $bin merchant show --database $shown_option
  stop it   make stop        (or: kill $pid)
EOF
if [[ $status -ne 0 ]]; then
    echo
    echo "The demo FAILED (exit status $status); see above." >&2
fi
exit "$status"
