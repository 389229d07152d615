#!/usr/bin/env bash
# The token parser fuzz campaign (docs/tokens.md#the-fuzz-campaign): libFuzzer over Sources/TokenFuzzer
# (parse, CMS verification, decryption), from seed tokens the sandbox minter writes at run time and, when
# the shared conformance vectors are there, the real tokens beside the project (read in place; the corpus
# is a temporary directory). It fails on a finding: a crash, an input taking more than 1 s of CPU time (the target
# measures it; libFuzzer's wall-clock -timeout of 30 s catches one that blocks), or a mutated signature, signed
# content or ciphertext accepted (the target's own checks). scripts/test.sh runs the short,
# seeded campaign; the long one is the same script with more runs:
#   nice -n 19 env ORCHARD_TOKEN_FUZZ_RUNS=10000000 ORCHARD_TOKEN_FUZZ_SANITIZERS=fuzzer \
#       ORCHARD_TOKEN_FUZZ_DIR=/tmp/token-campaign scripts/fuzz-tokens.sh
#
#   ORCHARD_TOKEN_FUZZ_RUNS    executions per job (default 200000)
#   ORCHARD_TOKEN_FUZZ_JOBS    jobs run side by side, each with its own seed (default 1)
#   ORCHARD_TOKEN_FUZZ_SEED    the first job's libFuzzer seed (default 20261201; job i adds i)
#   ORCHARD_TOKEN_FUZZ_DIR     a directory to keep the world, a growing corpus and the jobs' logs in across
#                              runs (default: a temporary one)
#   ORCHARD_TOKEN_FUZZ_SANITIZERS  -sanitize= of the libFuzzer build (default fuzzer,address; `fuzzer` alone runs
#                              about twice as fast, for long campaigns)
#   ORCHARD_VECTORS_DIR        the vectors (default: shared/vectors beside the checkout, also from a git worktree
#                              of it); absent, only the sandbox seeds run
#   SWIFT                      the swift command (default swift)
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
runs=${ORCHARD_TOKEN_FUZZ_RUNS:-200000}
jobs=${ORCHARD_TOKEN_FUZZ_JOBS:-1}
seed=${ORCHARD_TOKEN_FUZZ_SEED:-20261201}
# The vectors sit beside the checkout; a worktree of it finds them beside its main checkout (git's common
# directory is that checkout's .git).
vectors=${ORCHARD_VECTORS_DIR:-}
if [[ -z "$vectors" ]]; then
    vectors=$PWD/../shared/vectors
    if [[ ! -d "$vectors" ]] && common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null); then
        vectors=$(dirname "$common")/../shared/vectors
    fi
fi
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
logs=$work
if [[ -n "${ORCHARD_TOKEN_FUZZ_DIR:-}" ]]; then logs=$root/logs-$(date +%Y%m%dT%H%M%S) && mkdir -p "$logs"; fi
export ORCHARD_FUZZ_WORLD=$root/world
# Swift's own crash handler would take the target's traps (a finding's fatalError) before libFuzzer, which then
# never writes the input that crashed: libFuzzer handles them.
export SWIFT_BACKTRACE=enable=no
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
    "$build"/release/TokenFuzzer "$corpus" -runs="$runs" -seed=$((seed + job)) -timeout=30 \
        -rss_limit_mb=4096 -max_len=65536 -artifact_prefix="$work/finding-$job-" -print_final_stats=1 \
        >"$logs/job-$job.log" 2>&1 &
    pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
seconds=$(($(date +%s) - start))

# libFuzzer's count of executions, and the target's own slowest input in CPU time (over 1 s is a finding).
execs=0
slowest=0
for ((job = 0; job < jobs; job++)); do
    # A job stopped by a finding prints no final statistics: its last progress line counts.
    job_execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$logs/job-$job.log" | grep -Eo '[0-9]+$' \
        || grep -Eo '^#[0-9]+' "$logs/job-$job.log" | tail -n 1 | tr -d '#' || echo 0)
    execs=$((execs + job_execs))
    job_slowest=$(grep -Eo 'slowest input [0-9.]+ ms CPU' "$logs/job-$job.log" | grep -Eo '[0-9.]+' || echo 0)
    slowest=$(printf '%s\n%s\n' "$slowest" "$job_slowest" | sort -g | tail -n 1)
done
findings=$(find "$work" -maxdepth 1 -name 'finding-*' | wc -l)
echo "token fuzz: $execs execs in ${seconds}s, corpus $(ls "$corpus" | wc -l) files, $findings finding(s)," \
    "slowest input ${slowest} ms of CPU"
if ((status != 0 || findings != 0)); then
    for ((job = 0; job < jobs; job++)); do tail -n 40 "$logs/job-$job.log" >&2; done
    # Kept in the campaign's directory when there is one, else in fuzz-findings/ (ignored by git).
    kept_dir=fuzz-findings
    [[ -n "${ORCHARD_TOKEN_FUZZ_DIR:-}" ]] && kept_dir=$root/findings
    for finding in "$work"/finding-*; do
        [[ -f "$finding" ]] || continue
        kept=$kept_dir/$(basename "$finding")
        mkdir -p "$kept_dir" && cp "$finding" "$kept" && cp -R "$root/world" "$kept_dir/"
        echo "token fuzz: finding kept in $kept (replay: ORCHARD_FUZZ_WORLD=$kept_dir/world" \
            "${ORCHARD_FUZZ_VECTORS:+ORCHARD_FUZZ_VECTORS=$ORCHARD_FUZZ_VECTORS }.build/debug/TokenFuzzer $kept)" >&2
    done
    exit 1
fi
