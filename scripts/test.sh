#!/usr/bin/env bash
# Every test: `make test` runs this, and CI (.ci/run) runs `make test`.
#   1. installs what the tests need when missing (scripts/install-deps.sh --test);
#   2. starts a throwaway PostgreSQL cluster on loopback (scripts/pg-cluster.sh) and exports its
#      superuser URL as ORCHARD_TEST_POSTGRES_URL for the PostgreSQL tests;
#   3. builds and runs the Swift tests, then, on that debug build, the reference docs (scripts/docs.sh: DocC
#      archives of OrchardPay, ApplePayModel and ApplePayToken, warnings as errors) and the public API check
#      (scripts/api-check.sh: OrchardPay and ApplePayModel against api/*.json, with its self-test);
#   4. builds the app-side sample package (Examples/OrchardPayCheckout) and runs the browser tests
#      (Tests/Browser, pytest + selenium + headless Chromium; test_samples.py runs the samples) against the
#      built `orchard`, the nginx example of docs/operations.md in front of it (scripts/test-proxy.sh), and the
#      API fuzz against openapi.yaml on SQLite and PostgreSQL (scripts/schemathesis.sh), when present;
#   5. runs the short, seeded token fuzz campaign (scripts/fuzz-tokens.sh, 200,000 executions), which fails on
#      a finding;
#   6. builds the release binary and runs the packaging tests (scripts/test-package.sh): the binary copied
#      alone serves every page, and the Debian package lints, installs, serves and purges (root only).
# Locally a missing service or tool skips its tests with a message; with CI=true it is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}

./scripts/install-deps.sh --test

work=$(mktemp -d "${TMPDIR:-/tmp}/orchard-test.XXXXXX")
chmod 755 "$work"
cleanup() {
    ./scripts/pg-cluster.sh stop "$work/pg" || true
    rm -rf "$work"
}
trap cleanup EXIT

"$SWIFT" build --build-tests

if [[ -z "${ORCHARD_TEST_POSTGRES_URL:-}" ]]; then
    if url=$(./scripts/pg-cluster.sh start "$work/pg"); then
        export ORCHARD_TEST_POSTGRES_URL=$url
        echo "PostgreSQL tests: a throwaway cluster at ${url}"
    elif [[ "${CI:-}" == "true" ]]; then
        echo "CI: could not start a PostgreSQL cluster for the tests" >&2
        exit 1
    else
        echo "PostgreSQL tests will be skipped: no PostgreSQL server could be started"
    fi
fi

"$SWIFT" test --skip-build

SWIFT=$SWIFT ./scripts/docs.sh --skip-build
SWIFT=$SWIFT ./scripts/api-check.sh --skip-build --self-test

if compgen -G "Tests/Browser/test_*.py" >/dev/null; then
    "$SWIFT" build --product orchard
    "$SWIFT" build --package-path Examples/OrchardPayCheckout
    export ORCHARD_BIN=${ORCHARD_BIN:-$PWD/.build/debug/orchard}
    python3 -m pytest -q -p no:cacheprovider Tests/Browser
fi

if [[ -x scripts/test-proxy.sh ]]; then
    "$SWIFT" build --product orchard
    ORCHARD_BIN=${ORCHARD_BIN:-$PWD/.build/debug/orchard} ./scripts/test-proxy.sh
fi

if [[ -x scripts/schemathesis.sh ]]; then
    "$SWIFT" build --product orchard
    ORCHARD_BIN=${ORCHARD_BIN:-$PWD/.build/debug/orchard} ./scripts/schemathesis.sh
fi

if [[ -x scripts/fuzz-tokens.sh ]]; then
    SWIFT=$SWIFT ORCHARD_TOKEN_FUZZ_RUNS=${ORCHARD_TOKEN_FUZZ_RUNS:-200000} ./scripts/fuzz-tokens.sh
fi

if [[ -x scripts/test-package.sh ]]; then
    "$SWIFT" build -c release --static-swift-stdlib --product orchard
    ORCHARD_RELEASE_BIN=$PWD/.build/release/orchard ./scripts/test-package.sh
fi
