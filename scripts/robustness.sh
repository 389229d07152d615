#!/usr/bin/env bash
# Robustness under load: start the release server on a temporary SQLite database, load it with
# `orchard bench http`, SIGKILL the server mid-run, restart it on the same database, then check that nothing
# acknowledged was lost:
#   - `orchard audit` (ledger invariants) right after the kill and again after the restart, both exit 0;
#   - every payment the benchmark saw acknowledged (200) is there after the restart, with that status
#     (`orchard bench http --check`).
# Exit status 0 only when all of that holds. The work directory (database, logs) is kept on failure, or always
# with KEEP=1.
#
# Environment: ORCHARD_BIN (default .build/release/orchard, built when missing), CLIENTS (default 32),
# DURATION (bench seconds, default 20), KILL_AFTER (seconds of measured load before the kill, default 4),
# SETTLE_WAIT (seconds, default 0: skip): also wait up to that long for the restarted server's reconciliation to
# settle the payments the kill left unsettled (it settles them after the gateway's 5-minute reconciliation
# delay; the restarted server reconciles every 10 s), then audit and check again.
set -euo pipefail

cd "$(dirname "$0")/.."
bin=${ORCHARD_BIN:-.build/release/orchard}
clients=${CLIENTS:-32}
duration=${DURATION:-20}
kill_after=${KILL_AFTER:-4}
settle_wait=${SETTLE_WAIT:-0}
if [[ ! -x "$bin" ]]; then
    echo "building $bin (swift build -c release --product orchard)"
    swift build -c release --product orchard
fi
command -v curl >/dev/null 2>&1 || ./scripts/install-deps.sh curl

work=$(mktemp -d "${TMPDIR:-/tmp}/orchard-robustness.XXXXXX")
database="sqlite:$work/orchard.db"
server_pid=""
bench_pid=""
failed=0

cleanup() {
    [[ -n "$bench_pid" ]] && kill "$bench_pid" 2>/dev/null || true
    [[ -n "$server_pid" ]] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
    if [[ $failed -ne 0 || -n "${KEEP:-}" ]]; then
        echo "work directory kept: $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

# Starts the server on a free port; sets server_pid and url. $1: the log file.
start_server() {
    local log=$1
    "$bin" serve --database "$database" --host 127.0.0.1 --port 0 --log-level error --reconcile-interval 10 \
        --rate-limit-per-second 1000000 --rate-limit-burst 1000000 --per-ip-connection-limit 0 \
        >"$log" 2>&1 </dev/null &
    server_pid=$!
    url=""
    for _ in $(seq 1 300); do
        url=$(sed -n 's/^Orchard gateway listening on \(http[^ ]*\).*/\1/p' "$log" | head -n 1)
        [[ -n "$url" ]] && curl -fsS --max-time 2 "$url/healthz" >/dev/null 2>&1 && return 0
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "the server did not come up; its log:" >&2
    cat "$log" >&2
    failed=1
    exit 1
}

step() { printf '\n== %s\n' "$*"; }

step "1. start the release server on $database"
start_server "$work/serve-1.log"
echo "pid $server_pid at $url"

step "2. load it: orchard bench http --clients $clients --duration $duration (recording acknowledged payments)"
"$bin" bench http --url "$url" --database "$database" --clients "$clients" --duration "$duration" --warmup 1 \
    --no-bound --record "$work/acknowledged.txt" >"$work/bench.log" 2>&1 &
bench_pid=$!
# Wait for the timed part to begin (the tokens are minted), then let it run a while.
for _ in $(seq 1 600); do
    grep -q "^  tokens " "$work/bench.log" && break
    sleep 0.1
done
sleep "$kill_after"

step "3. SIGKILL the server (pid $server_pid) under load"
in_flight=$(curl -fsS --max-time 2 "$url/metrics" 2>/dev/null | sed -n 's/^orchard_http_requests_in_flight \(.*\)/\1/p' || true)
echo "requests in flight just before the kill: ${in_flight:-?}"
kill -KILL "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=""
bench_status=0
wait "$bench_pid" || bench_status=$?
bench_pid=""
cat "$work/bench.log"
echo "(bench exit status $bench_status: failures are expected once the server is gone)"
acknowledged=$(wc -l <"$work/acknowledged.txt" | tr -d ' ')
echo "acknowledged payments recorded by the clients: $acknowledged"

step "4. orchard audit on the database as the kill left it"
audit_crash=0
"$bin" audit --database "$database" || audit_crash=$?
echo "(exit status $audit_crash)"

step "5. restart the server on the same database"
start_server "$work/serve-2.log"
echo "pid $server_pid at $url"

step "6. orchard audit after the restart"
audit_restart=0
"$bin" audit --database "$database" || audit_restart=$?
echo "(exit status $audit_restart)"

step "7. every acknowledged payment is there, as acknowledged: orchard bench http --check"
check=0
"$bin" bench http --url "$url" --database "$database" --check "$work/acknowledged.txt" | tee "$work/check.log" || check=$?
echo "(exit status $check)"
missing=$(sed -n 's/^missing after restart: //p' "$work/check.log")
changed=$(sed -n 's/^status changed: //p' "$work/check.log")
echo "acknowledged $acknowledged, found $((acknowledged - ${missing:-$acknowledged})) (missing ${missing:-?}, status changed ${changed:-?})"

settled=0
if [[ $settle_wait -gt 0 ]]; then
    step "8. wait up to $settle_wait s for reconciliation to settle what the kill left unsettled"
    for _ in $(seq 1 $((settle_wait / 5))); do
        unsettled=$("$bin" audit --database "$database" | sed -n 's/^unsettled[^:]*: //p')
        [[ "$unsettled" == "0" ]] && break
        sleep 5
    done
    "$bin" audit --database "$database" || settled=$?
    "$bin" bench http --url "$url" --database "$database" --check "$work/acknowledged.txt" || settled=$?
    [[ "$("$bin" audit --database "$database" | sed -n 's/^unsettled[^:]*: //p')" == "0" ]] || settled=1
    echo "(settled: exit status $settled)"
fi

step "result"
if [[ $audit_crash -eq 0 && $audit_restart -eq 0 && $check -eq 0 && $settled -eq 0 && $acknowledged -gt 0 ]]; then
    echo "robustness: OK: $clients clients, killed under load after $acknowledged acknowledged payments, all found;"
    echo "audit holds before and after the restart; no acknowledged payment lost or changed"
else
    failed=1
    echo "robustness: FAILED (audit after kill $audit_crash, audit after restart $audit_restart," \
        "acknowledged check $check, settling $settled, acknowledged $acknowledged)" >&2
    exit 1
fi
