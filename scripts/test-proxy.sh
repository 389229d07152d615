#!/usr/bin/env bash
# Runs the nginx example of docs/operations.md ("Behind a reverse proxy") in front of `orchard serve
# --trusted-proxy 127.0.0.1`: the example as written, with a throwaway certificate and this run's ports.
# A client on 127.0.0.2 that sends its own X-Forwarded-For and Forwarded must still be seen as 127.0.0.2
# (client_ip and the access log), and its console sign-in, forwarded as HTTPS, must get a Secure cookie.
#   ORCHARD_BIN=.build/debug/orchard scripts/test-proxy.sh
# Without nginx it is skipped with a message; with CI=true that is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${ORCHARD_BIN:-$PWD/.build/debug/orchard}
nginx=$(command -v nginx || true)
[[ -n "$nginx" ]] || { [[ -x /usr/sbin/nginx ]] && nginx=/usr/sbin/nginx; }
if [[ -z "$nginx" ]]; then
    [[ "${CI:-}" == "true" ]] && { echo "test-proxy: nginx is missing (scripts/install-deps.sh --test)" >&2; exit 1; }
    echo "test-proxy: skipped: nginx is not installed (scripts/install-deps.sh --test installs nginx-light)"
    exit 0
fi

work=$(mktemp -d /tmp/orchard-proxy.XXXXXX)
serve_pid=""
nginx_pid=""
cleanup() {
    [[ -n "$nginx_pid" ]] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
    [[ -n "$serve_pid" ]] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "test-proxy: FAIL: $*" >&2
    for log in "$work/serve.log" "$work/error.log"; do [[ -f "$log" ]] && tail -20 "$log" >&2; done
    exit 1
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

gateway_port=$(free_port)
proxy_port=$(free_port)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=pay.example -days 1 \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

# The example, exactly as the page shows it, then pointed at this run's files and ports.
awk '/<!-- proxy-example: nginx -->/ { found = 1; next }
     found && /^```nginx/ { inside = 1; next }
     inside && /^```/ { exit }
     inside { print }' docs/operations.md >"$work/site.conf"
grep -q 'proxy_add_x_forwarded_for' "$work/site.conf" || fail "no nginx example found in docs/operations.md"
sed -i -e "s|listen 443 ssl;|listen 127.0.0.1:$proxy_port ssl;|" \
    -e "s|/etc/ssl/pay.example.pem|$work/cert.pem|" -e "s|/etc/ssl/private/pay.example.key|$work/key.pem|" \
    -e "s|http://127.0.0.1:8080|http://127.0.0.1:$gateway_port|" "$work/site.conf"
cat >"$work/nginx.conf" <<EOF
$( [[ $(id -u) -eq 0 ]] && echo "user root;" )
daemon off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events {}
http {
    access_log off;
    client_body_temp_path $work/client_body;
    proxy_temp_path $work/proxy;
    fastcgi_temp_path $work/fastcgi;
    uwsgi_temp_path $work/uwsgi;
    scgi_temp_path $work/scgi;
    include $work/site.conf;
}
EOF

"$bin" serve --host 127.0.0.1 --port "$gateway_port" --database "sqlite:$work/gateway.db" \
    --trusted-proxy 127.0.0.1 --per-ip-connection-limit 0 --access-log "$work/access.log" >"$work/serve.log" 2>&1 &
serve_pid=$!
"$nginx" -p "$work" -c "$work/nginx.conf" &
nginx_pid=$!
for _ in $(seq 1 100); do
    curl -fsk --interface 127.0.0.2 "https://127.0.0.1:$proxy_port/readyz" >/dev/null 2>&1 && break
    sleep 0.2
done
curl -fsk --interface 127.0.0.2 "https://127.0.0.1:$proxy_port/readyz" >/dev/null || fail "the gateway is not ready behind nginx"

credentials=$("$bin" merchant show --database "sqlite:$work/gateway.db" --json)
field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$credentials" "$1"; }
app_id=$(field app_id)
app_key=$(field app_key)
secret_key=$(field secret_key)

request='{"format": "tappay-web", "payment_request": {"supportedNetworks": ["VISA"], "supportedMethods": ["apple_pay"],
  "displayItems": [{"label": "Tea", "amount": {"currency": "TWD", "value": "100.00"}}],
  "total": {"label": "Orchard", "amount": {"currency": "TWD", "value": "100.00"}}}}'
answer=$(curl -fsk --interface 127.0.0.2 "https://127.0.0.1:$proxy_port/v1/payment-requests/validate" \
    -H "X-Orchard-App-Id: $app_id" -H "X-Orchard-App-Key: $app_key" -H 'Content-Type: application/json' \
    -H 'X-Forwarded-For: 203.0.113.9' -H 'Forwarded: for=203.0.113.10' --data "$request") ||
    fail "validate through nginx"
client_ip=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["client_ip"])' "$answer")
[[ "$client_ip" == "127.0.0.2" ]] || fail "client_ip is $client_ip, not the client's 127.0.0.2"

headers=$(curl -sk --interface 127.0.0.2 -o /dev/null -D - "https://127.0.0.1:$proxy_port/console/session" \
    -H 'Content-Type: application/json' --data "{\"secret_key\": \"$secret_key\"}")
grep -qi '^set-cookie: orchard_console=.*; Secure' <<<"$headers" || fail "the console cookie is not Secure: $headers"

grep -q '"remote":"127.0.0.2"' "$work/access.log" || fail "the access log does not name the client 127.0.0.2"
! grep -q '203\.0\.113\.' "$work/access.log" || fail "the access log took the address a client wrote"
echo "test-proxy: ok (nginx example: client_ip and the access log name the client, the cookie is Secure)"
