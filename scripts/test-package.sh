#!/usr/bin/env bash
# The packaging tests (scripts/test.sh runs them after the release build):
#   1. the release binary copied alone into an empty directory serves /demo, /console, the SDK's files (by name
#      and by versioned name) and every console asset, byte for byte the files of Sources/GatewayHTTP/Web
#      (orchard.js with the wallet's versioned path and integrity filled in), and prints --version;
#   2. --access-log: SIGHUP reopens the file (logrotate), the process goes on;
#   3. make deb: lintian reports no error; systemd-analyze verify passes on the unit; dpkg -i installs it (the
#      orchard user, the master key with mode 600); the installed /usr/bin/orchard serves /readyz from the
#      packaged config as the orchard user; dpkg --purge removes every file, the key and the user.
# The package stage needs root (dpkg -i): without it, it is skipped with a message (a failure with CI=true).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${ORCHARD_RELEASE_BIN:-$PWD/.build/release/orchard}
[[ -x "$bin" ]] || { echo "test-package: no $bin (make release)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/orchard-package.XXXXXX")
chmod 755 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "test-package: FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_ready() { # URL
    for _ in $(seq 1 100); do
        curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

echo "== the release binary alone in an empty directory"
mkdir "$work/copied"
cp "$bin" "$work/copied/orchard"
"$work/copied/orchard" --version | grep -Eq '^orchard [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]{12}(-dirty)?|unknown\)$' \
    || fail "--version: $("$work/copied/orchard" --version)"
port=$(free_port)
(cd "$work/copied" && exec ./orchard serve --port "$port" --database "sqlite:$work/copied/orchard.db" \
    --access-log "$work/copied/access.log" >"$work/copied/serve.log" 2>&1) &
pids+=($!)
wait_ready "http://127.0.0.1:$port/healthz" || { cat "$work/copied/serve.log" >&2; fail "the copied binary did not start"; }
check_file() { # URL-PATH SOURCE-FILE
    curl -fsS "http://127.0.0.1:$port$1" -o "$work/body" || fail "GET $1"
    [[ -s "$work/body" ]] || fail "GET $1 is empty"
    if [[ -n "${2:-}" ]]; then cmp -s "$work/body" "$2" || fail "GET $1 differs from $2"; fi
    echo "  200 $1"
}
check_file /demo
check_file /console Sources/GatewayHTTP/Web/console/console.html
check_file /sdk/v1/orchard-sandbox-wallet.js Sources/GatewayHTTP/Web/orchard-sandbox-wallet.js
# orchard.js as served names the wallet's versioned path and integrity (GET /sdk/v1/integrity.json) in place of
# its placeholders; each file's versioned path serves the same bytes.
curl -fsS "http://127.0.0.1:$port/sdk/v1/integrity.json" -o "$work/integrity.json" || fail "GET /sdk/v1/integrity.json"
python3 - "$work/integrity.json" Sources/GatewayHTTP/Web/orchard.js "$work/orchard.js" <<'PY' || fail "integrity.json"
import json, sys
files = {entry["name"]: entry for entry in json.load(open(sys.argv[1]))["files"]}
wallet = files["orchard-sandbox-wallet.js"]
source = open(sys.argv[2]).read()
source = source.replace("{{ORCHARD_SANDBOX_WALLET_SRC}}", wallet["versioned_path"])
source = source.replace("{{ORCHARD_SANDBOX_WALLET_INTEGRITY}}", wallet["integrity"])
open(sys.argv[3], "w").write(source)
print("\n".join(entry["versioned_path"] for entry in files.values()), file=open(sys.argv[3] + ".paths", "w"))
PY
check_file /sdk/v1/orchard.js "$work/orchard.js"
while read -r versioned; do
    case "$versioned" in
    */orchard.*) check_file "$versioned" "$work/orchard.js" ;;
    *) check_file "$versioned" Sources/GatewayHTTP/Web/orchard-sandbox-wallet.js ;;
    esac
done <"$work/orchard.js.paths"
assets=$(grep -oE '(src|href)="/console/[^"]+"' Sources/GatewayHTTP/Web/console/console.html | sed -E 's/^[a-z]+="//; s/"$//' | sort -u)
[[ -n "$assets" ]] || fail "console.html names no assets"
for asset in $assets; do check_file "$asset" "Sources/GatewayHTTP/Web${asset}"; done
for file in Sources/GatewayHTTP/Web/console/*.js Sources/GatewayHTTP/Web/console/*.css; do
    check_file "/console/$(basename "$file")" "$file"
done

echo "== SIGHUP reopens the access log"
grep -q '"route":"/healthz"' "$work/copied/access.log" || fail "no request line in the access log"
grep -q '"route":"/readyz"' "$work/copied/access.log" && fail "a /readyz line before it was requested"
mv "$work/copied/access.log" "$work/copied/access.log.1"
kill -HUP "${pids[0]}"
for _ in $(seq 1 50); do [[ -e "$work/copied/access.log" ]] && break; sleep 0.1; done
[[ -e "$work/copied/access.log" ]] || fail "SIGHUP did not reopen the access log"
curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" || fail "the gateway did not survive SIGHUP"
for _ in $(seq 1 50); do grep -q '"route":"/readyz"' "$work/copied/access.log" && break; sleep 0.1; done
grep -q '"route":"/readyz"' "$work/copied/access.log" || fail "the request after SIGHUP is not in the new file"
grep -q '"route":"/readyz"' "$work/copied/access.log.1" && fail "the request after SIGHUP went to the rotated file"
echo "  reopened"
kill "${pids[0]}"
wait "${pids[0]}" 2>/dev/null || true
pids=()

echo "== the Debian package"
if [[ $(id -u) -ne 0 ]]; then
    [[ "${CI:-}" == "true" ]] && fail "the package stage needs root in CI"
    echo "package tests skipped: dpkg -i needs root"
    exit 0
fi
if dpkg-query -W -f='${Status}' orchard 2>/dev/null | grep -q "ok installed"; then
    [[ "${CI:-}" == "true" ]] && fail "a package named orchard is already installed"
    echo "package tests skipped: an orchard package is installed on this machine already"
    exit 0
fi
deb=$(ORCHARD_BIN="$bin" ./scripts/build-deb.sh "$work")
echo "  built $(basename "$deb")"
command -v lintian >/dev/null || fail "lintian is not installed (scripts/install-deps.sh --test)"
lintian --fail-on error --suppress-tags-from-file /dev/null "$deb" | tee "$work/lintian.txt" || fail "lintian reports an error"
dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -i"; }
getent passwd orchard >/dev/null || fail "no orchard user after install"
[[ "$(stat -c '%a %U' /etc/orchard/master-key)" == "600 orchard" ]] || fail "master key: $(stat -c '%a %U' /etc/orchard/master-key)"
grep -Eq '^[0-9a-f]{64}$' /etc/orchard/master-key || fail "the master key is not 64 hex digits"
systemd-analyze verify /lib/systemd/system/orchard.service || fail "systemd-analyze verify"
echo "  unit verified"
port=$(free_port)
(cd /var/lib/orchard && exec runuser -u orchard -- /usr/bin/orchard serve --config /etc/orchard/orchard.conf \
    --port "$port" >"$work/installed.log" 2>&1) &
pids+=($!)
wait_ready "http://127.0.0.1:$port/readyz" || { cat "$work/installed.log" >&2; fail "/usr/bin/orchard did not serve /readyz"; }
curl -fsS "http://127.0.0.1:$port/readyz" && echo
[[ -s /var/log/orchard/access.log ]] || fail "the packaged config's access log is empty"
[[ "$(stat -c '%U' /var/lib/orchard/orchard.db)" == "orchard" ]] || fail "the database is not the orchard user's"
kill "${pids[0]}"
wait "${pids[0]}" 2>/dev/null || true
pids=()
dpkg --purge orchard >"$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; fail "dpkg --purge"; }
for path in /usr/bin/orchard /etc/orchard /var/lib/orchard /var/log/orchard /lib/systemd/system/orchard.service \
    /etc/logrotate.d/orchard /usr/share/doc/orchard; do
    [[ ! -e "$path" ]] || fail "$path is left after purge"
done
getent passwd orchard >/dev/null && fail "the orchard user is left after purge"
echo "  installed, served /readyz, purged"
