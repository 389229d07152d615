#!/usr/bin/env bash
# The token parser fuzz campaign (docs/tokens.md#the-fuzz-campaign): libFuzzer over Sources/TokenFuzzer
# (parse, CMS verification, decryption), from seed tokens the sandbox minter writes at run time and, when
# the shared conformance vectors are there, the real tokens beside the project (read in place; the corpus
# is a temporary directory). It fails on a finding: a crash, an input slower than 1 s, or a mutated
# signature, signed content or ciphertext accepted (the target's own checks). scripts/test.sh runs the short,
# seeded campaign; the long one is the same script with more runs:
#   nice -n 19 env ORCHARD_TOKEN_FUZZ_RUNS=5000000 ORCHARD_TOKEN_FUZZ_JOBS=2 scripts/fuzz-tokens.sh
#
#   ORCHARD_TOKEN_FUZZ_RUNS    executions per job (default 200000)
#   ORCHARD_TOKEN_FUZZ_JOBS    jobs run side by side, each with its own seed (default 1)
#   ORCHARD_TOKEN_FUZZ_SEED    the first job's libFuzzer seed (default 20261201; job i adds i)
#   ORCHARD_TOKEN_FUZZ_DIR     a directory to keep the world and a growing corpus in across runs
#                              (default: a temporary one)
#   ORCHARD_TOKEN_FUZZ_SANITIZERS  -sanitize= of the libFuzzer build (default fuzzer,address; `fuzzer` alone runs
#                              about twice as fast, for long campaigns)
#   ORCHARD_VECTORS_DIR        the vectors (default ../shared/vectors); absent, only the sandbox seeds run
#   SWIFT                      the swift command (default swift)
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
runs=${ORCHARD_TOKEN_FUZZ_RUNS:-200000}
jobs=${ORCHARD_TOKEN_FUZZ_JOBS:-1}
seed=${ORCHARD_TOKEN_FUZZ_SEED:-20261201}
vectors=${ORCHARD_VECTORS_DIR:-$PWD/../shared/vectors}
sanitizers=${ORCHARD_TOKEN_FUZZ_SANITIZERS:-fuzzer,address}
build=.build-fuzz
[[ "$sanitizers" == "fuzzer" ]] && build=.build-fuzz-fast

work=$(mktemp -d "${TMPDIR:-/tmp}/orchard-token-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The replaying build writes the world and the seeds; the libFuzzer build (release, fuzzer + address
# sanitizers, a build path of its own) fuzzes.
"$SWIFT" build --product TokenFuzzer 2>&1 | tail -n 3
"$SWIFT" build -c release --product TokenFuzzer --build-path "$build" \
    -Xswiftc -sanitize="$sanitizers" -Xswiftc -DORCHARD_LIBFUZZER 2>&1 | tail -n 3
root=${ORCHARD_TOKEN_FUZZ_DIR:-$work/campaign}
[[ -d "$root/world" ]] || .build/debug/TokenFuzzer --write-corpus "$root"
corpus=$root/corpus
export ORCHARD_FUZZ_WORLD=$root/world
if [[ -f "$vectors/manifest.json" ]]; then
    export ORCHARD_FUZZ_VECTORS=$vectors
    python3 - "$vectors" "$corpus" <<'PY'
import json, pathlib, shutil, sys
vectors, corpus = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for entry in json.loads((vectors / "manifest.json").read_text())["vectors"]:
    shutil.copyfile(vectors / entry["dir"] / entry["token"], corpus / f"vector-{entry['id']}.json")
PY
else
    echo "token fuzz: no vectors at $vectors; the sandbox seeds only"
fi

echo "token fuzz: $jobs job(s) x $runs runs, seed $seed, corpus $(ls "$corpus" | wc -l) files"
start=$(date +%s)
pids=()
for ((job = 0; job < jobs; job++)); do
    "$build"/release/TokenFuzzer "$corpus" -runs="$runs" -seed=$((seed + job)) -timeout=1 \
        -rss_limit_mb=4096 -max_len=65536 -artifact_prefix="$work/finding-$job-" -print_final_stats=1 \
        >"$work/job-$job.log" 2>&1 &
    pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
seconds=$(($(date +%s) - start))

execs=0
for ((job = 0; job < jobs; job++)); do
    done_runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$work/job-$job.log" | grep -Eo '[0-9]+$' || echo 0)
    execs=$((execs + done_runs))
done
findings=$(find "$work" -maxdepth 1 -name 'finding-*' | wc -l)
echo "token fuzz: $execs execs in ${seconds}s, corpus $(ls "$corpus" | wc -l) files, $findings finding(s)"
if ((status != 0 || findings != 0)); then
    for ((job = 0; job < jobs; job++)); do tail -n 40 "$work/job-$job.log" >&2; done
    for finding in "$work"/finding-*; do
        [[ -f "$finding" ]] || continue
        kept=fuzz-findings/$(basename "$finding")
        mkdir -p fuzz-findings && cp "$finding" "$kept" && cp -R "$root/world" fuzz-findings/
        echo "token fuzz: finding kept in $kept" \
            "(replay: ORCHARD_FUZZ_WORLD=fuzz-findings/world .build/debug/TokenFuzzer $kept)" >&2
    done
    exit 1
fi
