#!/usr/bin/env bash
# The reference docs: `make docs` runs this, and scripts/test.sh runs it after the Swift tests.
# Builds the debug modules (skipped with --skip-build, when the caller has just built them), extracts the
# public symbol graphs of OrchardPay, ApplePayModel and ApplePayToken with swift-symbolgraph-extract, and
# converts each into .build/docs/<Module>.doccarchive with the toolchain's docc, warnings as errors: a broken
# doc link or a malformed doc comment fails the run (exit 1) and docc's warning is printed.
# The catalogs (landing pages) are Sources/<Module>/<Module>.docc, when present.
set -euo pipefail
cd "$(dirname "$0")/.."
MODULES=(OrchardPay ApplePayModel ApplePayToken)

for arg in "$@"; do
    case "$arg" in
        --skip-build) ;;
        *) echo "usage: scripts/docs.sh [--skip-build]" >&2; exit 2 ;;
    esac
done

source scripts/swift-tools.sh
EXTRACT=$(swift_tool swift-symbolgraph-extract)
DOCC=$(swift_tool docc)
for module in "${MODULES[@]}"; do
    require_module "$module"
done

out=.build/docs
work=$(mktemp -d "${TMPDIR:-/tmp}/orchard-docs.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

failed=()
for module in "${MODULES[@]}"; do
    graphs="$work/$module-graphs"
    mkdir -p "$graphs"
    "$EXTRACT" -module-name "$module" -I "$MODULES_DIR" -I Sources/COpenSSL -target "$TARGET" \
        -minimum-access-level public -skip-inherited-docs -output-dir "$graphs"
    catalog=()
    if [[ -d "Sources/$module/$module.docc" ]]; then
        catalog=("Sources/$module/$module.docc")
    fi
    archive="$out/$module.doccarchive"
    rm -rf "$archive"
    log="$work/$module.log"
    if "$DOCC" convert "${catalog[@]}" --additional-symbol-graph-dir "$graphs" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.orchard.$module" \
        --output-path "$archive" --warnings-as-errors >"$log" 2>&1; then
        echo "docs: $module -> $archive"
    else
        cat "$log" >&2
        echo "docs: $module has documentation warnings or errors (above)" >&2
        rm -rf "$archive"
        failed+=("$module")
    fi
done

if ((${#failed[@]})); then
    echo "docs: failed for ${failed[*]}" >&2
    exit 1
fi
