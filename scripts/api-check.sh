#!/usr/bin/env bash
# The stable-SDK check: `make api-check` runs this, and scripts/test.sh runs it after the Swift tests.
# Dumps the public API of OrchardPay and ApplePayModel with swift-api-digester and compares it with the
# committed baselines api/<Module>.json. A breaking change (a public symbol removed or renamed, a signature
# or type changed, a protocol requirement added, …) fails the run (exit 1) with the changes listed, unless
# the baseline is updated in the same commit; additions pass.
#   scripts/api-check.sh              build the debug modules, then check
#   scripts/api-check.sh --skip-build check against the modules the caller has just built
#   scripts/api-check.sh --update     rewrite api/<Module>.json from the current modules (`make api-baseline`)
#   scripts/api-check.sh --self-test  proves the comparison fails: a copy of the current dump with a public
#                                     symbol removed must be reported as breaking, one with a symbol added
#                                     must pass (no build; run after the check, reusing its dumps)
# --self-test combines with the others; it runs after them.
set -euo pipefail
cd "$(dirname "$0")/.."
MODULES=(OrchardPay ApplePayModel)

update=false
self_test=false
for arg in "$@"; do
    case "$arg" in
        --skip-build) ;;
        --update) update=true ;;
        --self-test) self_test=true ;;
        *) echo "usage: scripts/api-check.sh [--skip-build] [--update] [--self-test]" >&2; exit 2 ;;
    esac
done

source scripts/swift-tools.sh
DIGESTER=$(swift_tool swift-api-digester)

work=$(mktemp -d "${TMPDIR:-/tmp}/orchard-api.XXXXXX")
trap 'rm -rf "$work"' EXIT

# dump MODULE OUT: the module's public API as JSON, without source locations (stable across edits).
dump() {
    require_module "$1"
    "$DIGESTER" -dump-sdk -module "$1" -I "$MODULES_DIR" -I Sources/COpenSSL -target "$TARGET" \
        -avoid-location -avoid-tool-args -o "$2"
}

# compare BASELINE CURRENT REPORT: writes the breaking changes of CURRENT against BASELINE to REPORT, one a
# line; returns 1 when there is any. The digester lists them under section headers ("/* Removed Decls */"…)
# and exits 0 either way, so the lines that are neither headers nor blank are the breakages.
compare() {
    local raw="$work/raw.$$"
    "$DIGESTER" -diagnose-sdk -input-paths "$1" -input-paths "$2" -o "$raw" 2>&1
    grep -v -e '^[[:space:]]*$' -e '^/\*.*\*/$' "$raw" >"$3" || true
    rm -f "$raw"
    [[ ! -s "$3" ]]
}

for module in "${MODULES[@]}"; do
    dump "$module" "$work/$module.json"
done

if $update; then
    mkdir -p api
    for module in "${MODULES[@]}"; do
        cp "$work/$module.json" "api/$module.json"
        echo "api-check: wrote api/$module.json"
    done
else
    broken=()
    for module in "${MODULES[@]}"; do
        if [[ ! -f "api/$module.json" ]]; then
            echo "api-check: api/$module.json is missing; make api-baseline writes it" >&2
            exit 1
        fi
        if compare "api/$module.json" "$work/$module.json" "$work/$module.report"; then
            if cmp -s "api/$module.json" "$work/$module.json"; then
                echo "api-check: $module matches api/$module.json"
            else
                echo "api-check: $module adds to api/$module.json (nothing broken; make api-baseline records it)"
            fi
        else
            echo "api-check: $module breaks its public API against api/$module.json:" >&2
            sed 's/^/  /' "$work/$module.report" >&2
            broken+=("$module")
        fi
    done
    if ((${#broken[@]})); then
        echo "api-check: breaking changes in ${broken[*]}. If they are intended, run make api-baseline and commit" >&2
        echo "api-check: the updated api/*.json in the same commit (docs/ios.md#the-public-api-baseline)." >&2
        exit 1
    fi
fi

if $self_test; then
    # The first public declaration of each module's dump, removed (breaking) and duplicated under a new
    # name (an addition), through python3's json: the comparison must fail on the one and pass the other.
    for module in "${MODULES[@]}"; do
        current="$work/$module.json"
        removed_name=$(python3 - "$current" "$work/$module.removed.json" "$work/$module.added.json" <<'EOF'
import copy, json, sys
current, removed_path, added_path = sys.argv[1:4]
with open(current) as f:
    sdk = json.load(f)
children = sdk["ABIRoot"]["children"]
index = next(i for i, c in enumerate(children) if c.get("kind") in ("TypeDecl", "Function", "Var"))
victim = children[index]
name = victim["name"]
removed = copy.deepcopy(sdk)
del removed["ABIRoot"]["children"][index]
def renamed(node):
    node = {k: (v.replace(name, name + "SelfTestAddition") if k in ("usr", "mangledName") else v)
            for k, v in node.items()}
    if "children" in node:
        node["children"] = [renamed(c) for c in node["children"]]
    return node
extra = renamed(victim)
extra["name"] = name + "SelfTestAddition"
extra["printedName"] = victim["printedName"].replace(name, extra["name"], 1)
added = copy.deepcopy(sdk)
added["ABIRoot"]["children"].append(extra)
for path, value in ((removed_path, removed), (added_path, added)):
    with open(path, "w") as f:
        json.dump(value, f, indent=2)
print(name)
EOF
        )
        if compare "$current" "$work/$module.removed.json" "$work/$module.self.report"; then
            echo "api-check self-test: removing $module's public $removed_name was not reported as breaking" >&2
            exit 1
        fi
        if ! grep -q "$removed_name" "$work/$module.self.report"; then
            echo "api-check self-test: the report for $module does not name $removed_name:" >&2
            cat "$work/$module.self.report" >&2
            exit 1
        fi
        if ! compare "$current" "$work/$module.added.json" "$work/$module.self.report"; then
            echo "api-check self-test: adding a public symbol to $module was reported as breaking:" >&2
            cat "$work/$module.self.report" >&2
            exit 1
        fi
        echo "api-check self-test: $module: a removed $removed_name fails the check, an addition passes"
    done
fi
