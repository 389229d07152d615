# Sourced by scripts/docs.sh and scripts/api-check.sh: the toolchain's tools and the debug modules they read.
# Takes --skip-build (the caller has just built, as scripts/test.sh has) among the script's arguments, sets
#   SWIFT         the swift driver ($SWIFT, default swift)
#   TARGET        the host's target triple
#   MODULES_DIR   the debug build's Modules directory, built first unless --skip-build
# and defines swift_tool NAME (the path of a tool next to the swift driver, or fails) and
# require_module MODULE (fails with a message when the build has not produced MODULE.swiftmodule).
SWIFT=${SWIFT:-swift}

swift_tool() {
    local found
    found=$(command -v "$1" || true)
    if [[ -z "$found" ]]; then
        found="$(dirname "$(readlink -f "$(command -v "$SWIFT")")")/$1"
    fi
    if [[ ! -x "$found" ]]; then
        echo "$(basename "$0"): $1 is not in the Swift toolchain" >&2
        exit 1
    fi
    echo "$found"
}

require_module() {
    if [[ ! -e "$MODULES_DIR/$1.swiftmodule" ]]; then
        echo "$(basename "$0"): $MODULES_DIR/$1.swiftmodule is missing; run swift build first" >&2
        exit 1
    fi
}

TARGET=$("$(swift_tool swiftc)" -print-target-info |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["unversionedTriple"])')

if [[ " $* " != *" --skip-build "* ]]; then
    "$SWIFT" build --build-tests
fi
MODULES_DIR="$("$SWIFT" build --show-bin-path)/Modules"
