#!/usr/bin/env bash
# The API fuzz: schemathesis (PyPI) generates requests from openapi.yaml against a live `orchard serve` on
# loopback with a fresh SQLite database, and again with a fresh PostgreSQL database when
# ORCHARD_TEST_POSTGRES_URL names a server (scripts/test.sh starts one), with both credential kinds (the app id +
# app key of client routes, the secret key of server routes), for a bounded number of examples per operation,
# stateful phase included: the spec's links chain payments to their capture, void and refund, and the hooks
# (schemathesis_hooks.py) give every pay request a real prime and every session payment a real token, minted
# through the sandbox wallet. Every check runs (`--checks all`); the 413 the body cap answers by design is
# expected, by check name, where a schema allows a body as large as the cap (see the configuration below).
# One worker: concurrent schema walks in one Python 3.11 process can trip its AST checks.
# It fails on any 5xx, any answer that breaks the schema, and any schema-valid request answered with a 4xx
# the spec does not list. make test runs it after the Swift tests (scripts/test.sh).
#   ORCHARD_BIN           the orchard binary (default .build/debug/orchard)
#   ORCHARD_FUZZ_EXAMPLES examples per operation (default 40)
#   ORCHARD_FUZZ_STORES   the stores to fuzz: sqlite, postgres (default: both when ORCHARD_TEST_POSTGRES_URL is set)
#   ORCHARD_FUZZ_PHASES   schemathesis phases (default examples,coverage,fuzzing,stateful)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${ORCHARD_BIN:-.build/debug/orchard}
examples=${ORCHARD_FUZZ_EXAMPLES:-40}
phases=${ORCHARD_FUZZ_PHASES:-examples,coverage,fuzzing,stateful}
# Checks to leave out of `--checks all` for a run (comma-separated names; none by default).
excluded_checks=${ORCHARD_FUZZ_EXCLUDED_CHECKS-}
exclude=()
[[ -n "$excluded_checks" ]] && exclude=(--exclude-checks "$excluded_checks")

if ! command -v schemathesis >/dev/null 2>&1 && ! python3 -c 'import schemathesis' >/dev/null 2>&1; then
    if [[ "${CI:-}" == "true" ]]; then
        echo "CI: schemathesis is missing (scripts/install-deps.sh --test installs it)" >&2
        exit 1
    fi
    echo "API fuzz skipped: schemathesis is not installed (pip install schemathesis)"
    exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/orchard-fuzz.XXXXXX")
server=""
cleanup() {
    if [[ -n "$server" ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

stores=${ORCHARD_FUZZ_STORES:-sqlite${ORCHARD_TEST_POSTGRES_URL:+ postgres}}
failed=0
for store in $stores; do
    run="$work/$store"
    mkdir -p "$run"
    master=()
    case "$store" in
    sqlite) database="sqlite:$run/fuzz.db" ;;
    postgres)
        # A fresh database on the test server, and a master key for it (PostgreSQL has no key file).
        name="orchard_fuzz_$(date +%s)_$$"
        psql "$ORCHARD_TEST_POSTGRES_URL" -qAtc "CREATE DATABASE $name" >/dev/null
        database="${ORCHARD_TEST_POSTGRES_URL%/*}/$name"
        master=(--master-key "$(openssl rand -hex 32)")
        ;;
    *) echo "API fuzz: unknown store $store" >&2; exit 2 ;;
    esac

    started=$SECONDS
    # No request or failed-authentication limits: the fuzz sends wrong keys on purpose (ignored_auth, the
    # negative cases), and after 20 of them every request from loopback would be answered 429. The processors'
    # base URLs point at a closed loopback port: a fuzzed PUT /v1/processor may switch the merchant to Adyen or
    # Checkout.com, and the fuzz talks only to 127.0.0.1 (their calls are then refused connections).
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$bin" serve --host 127.0.0.1 --port "$port" --database "$database" "${master[@]}" --rate-limit-per-second 0 \
        --auth-failure-refill-seconds 0 --per-ip-connection-limit 0 --log-level error \
        --processor-base-url "adyen=http://127.0.0.1:9/v71,checkout_com=http://127.0.0.1:9" \
        >"$run/serve.log" 2>&1 </dev/null &
    server=$!
    url="http://127.0.0.1:$port"
    for _ in $(seq 1 300); do
        curl -fsS "$url/healthz" >/dev/null 2>&1 && break
        kill -0 "$server" 2>/dev/null || { cat "$run/serve.log" >&2; exit 1; }
        sleep 0.1
    done

    eval "$("$bin" merchant show --database "$database" "${master[@]}" --json | python3 -c '
import json, sys; m = json.load(sys.stdin)
print("export ORCHARD_FUZZ_APP_ID=%s ORCHARD_FUZZ_APP_KEY=%s ORCHARD_FUZZ_SECRET_KEY=%s" % (m["app_id"], m["app_key"], m["secret_key"]))')"
    export ORCHARD_FUZZ_URL=$url

    cat >"$run/schemathesis.toml" <<TOML
[auth.openapi.appId]
api_key = "\${ORCHARD_FUZZ_APP_ID}"

[auth.openapi.appKey]
api_key = "\${ORCHARD_FUZZ_APP_KEY}"

[auth.openapi.secretKey]
bearer = "\${ORCHARD_FUZZ_SECRET_KEY}"

# TapPay's header; the body's partner_key is generated, so most calls answer status 82 (HTTP 200).
[auth.openapi.tappayApiKey]
api_key = "\${ORCHARD_FUZZ_SECRET_KEY}"

# Longer and more scenarios than the defaults (6 steps): a payment's links reach its capture, then its refund,
# then the payment again.
[phases.stateful]
max-steps = 10

[phases.stateful.generation]
max-examples = 120

# A schema-valid request may still be refused by a payment rule the schema cannot express (a made-up
# token or prime, an id that does not exist, a card declined): 402, 404, 409 and 422. A 400 means the
# spec allowed what the code refuses, and fails.
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "304", "401", "402", "403", "404", "409", "422", "429"]

# The 413 false positives. The domain-association file may be 65,536 characters, the server's whole body cap
# (max-body-bytes, 64 KiB by default): a JSON body holding a file that long, or any body longer than the cap, is
# answered 413 body_too_large (documented) before any schema rule or credential is looked at. Three checks
# take that 413 for a disagreement: positive_data_acceptance (a schema-valid file at the limit),
# negative_data_rejection (an over-long file, or one with a missing header, refused with 413 rather than 400 or
# 401) and missing_required_header (the same with a valid body). For this operation they accept 413 as well.
[[operations]]
include-operation-id = "putDomainAssociation"
checks.positive_data_acceptance.expected-statuses = ["2xx", "304", "401", "402", "403", "404", "409", "413", "422", "429"]
checks.negative_data_rejection.expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]
checks.missing_required_header.expected-statuses = ["400", "401", "403", "406", "413", "415", "422"]

TOML

    echo "API fuzz ($store): schemathesis against $url, $examples examples per operation"
    status=0
    # TapPay's and PayerMax's routes answer as those gateways do: HTTP 200 with their own status or code in the
    # body, also for a body that is not what they take and for a wrong partner key, app or signature
    # (docs/migrating.md). They run on their own, without the three checks that want a 4xx there
    # (negative_data_rejection, ignored_auth, missing_required_header) and without the stateful phase (no links
    # lead to them); every other operation runs with every check.
    compat='^/(tpc|aggregate-pay)/'
    for part in orchard compat; do
        if [[ "$part" == orchard ]]; then
            selection=(--exclude-path-regex "$compat" --phases "$phases" --checks all "${exclude[@]}")
        else
            compat_phases=$(tr , '\n' <<<"$phases" | grep -vx stateful | paste -sd, -)
            selection=(--include-path-regex "$compat" --phases "$compat_phases" --checks all --exclude-checks
                "negative_data_rejection,ignored_auth,missing_required_header${excluded_checks:+,$excluded_checks}")
        fi
        SCHEMATHESIS_HOOKS=schemathesis_hooks PYTHONPATH="$PWD/scripts${PYTHONPATH:+:$PYTHONPATH}" \
            schemathesis --config-file "$run/schemathesis.toml" run openapi.yaml --url "$url" \
            --max-examples "$examples" --seed 20261201 --workers 1 --request-timeout 10 \
            "${selection[@]}" \
            --report junit --report-junit-path "$run/junit-$part.xml" 2>&1 | tee "$run/run-$part.log" || status=$?
    done
    cases=$(cat "$run"/run-*.log | grep -Eo '[0-9]+ generated' | grep -Eo '[0-9]+' | awk '{ n += $1 } END { print n + 0 }')
    echo "API fuzz ($store): $cases generated cases"
    grep -E 'links? (covered|selected)|Links' "$run/run-orchard.log" | sed "s/^/API fuzz ($store): /" || true
    compgen -G "$run/junit-*.xml" >/dev/null && python3 - "$store" "$run"/junit-*.xml <<'PY'
import sys, xml.etree.ElementTree as ET
tests = failures = 0
for path in sys.argv[2:]:
    root = ET.parse(path).getroot()
    for suite in [root] if root.tag == "testsuite" else root.findall("testsuite"):
        tests += int(suite.get("tests", 0))
        failures += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
print(f"API fuzz ({sys.argv[1]}) operations: {tests - failures} passed, {failures} failed")
PY
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=""
    [[ "$store" == postgres ]] && psql "$ORCHARD_TEST_POSTGRES_URL" -qAtc "DROP DATABASE IF EXISTS $name" >/dev/null
    echo "API fuzz ($store): $((SECONDS - started)) s"
    ((status == 0)) || failed=1
done
exit "$failed"
