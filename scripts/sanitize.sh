#!/usr/bin/env bash
# The test suites under a sanitizer (#20): builds preset `asan` (AddressSanitizer + UBSan, LeakSanitizer
# at exit) or `tsan` (ThreadSanitizer) into build/<preset>, runs the unit, cts, ops and onnx labels (the
# device suites run every case on every device present), and ends with a summary: per label and per device
# the tests passed, failed and skipped, then every failed test. Exits 1 if any test failed.
#
#   scripts/sanitize.sh [asan|tsan] [label...]    # default: asan, labels unit cts ops onnx
#   SLUICE_JOBS=n                    parallel build jobs (default: number of cores)
#   SLUICE_TEST_JOBS=n               parallel tests (default: 2)
#   SLUICE_SANITIZE_TARGETS="t ..."  build only these targets (default: the whole preset)
#
# The sanitizers' options (suppressions, allocator_may_return_null) come from the preset's test
# environment (CMakePresets.json); scripts/sanitizers/ holds the suppression files, which name only
# third-party libraries, each with its reason.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

preset=${1:-asan}
[[ $# -gt 0 ]] && shift
case $preset in
  asan | tsan) ;;
  *)
    echo "usage: scripts/sanitize.sh [asan|tsan] [label...]" >&2
    exit 2
    ;;
esac
labels=("$@")
[[ ${#labels[@]} -gt 0 ]] || labels=(unit cts ops onnx)
build=build/$preset
logs=$build/sanitize
mkdir -p "$logs"

secs() { date +%s; }
took() { printf '%dm%02ds' $((($2 - $1) / 60)) $((($2 - $1) % 60)); }

t0=$(secs)
cmake --preset "$preset" > "$logs/configure.log"
read -r -a targets <<< "${SLUICE_SANITIZE_TARGETS:-}"
cmake --build --preset "$preset" -j "${SLUICE_JOBS:-$(nproc)}" ${targets[@]:+--target "${targets[@]}"}
t1=$(secs)
echo "sanitize: $preset built in $(took "$t0" "$t1")"

# One line per test: label, status, name (from ctest's "N/M Test #K: name ....   Passed   0.1 sec").
results=$logs/results.txt
: > "$results"
declare -A ran_in
for label in "${labels[@]}"; do
  s=$(secs)
  ctest --preset "$preset" -L "^${label}\$" -j "${SLUICE_TEST_JOBS:-2}" > "$logs/$label.log" 2>&1 || true
  ran_in[$label]=$(took "$s" "$(secs)")
  sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.*[ *]*(Passed|Not Run|[A-Za-z]+).*$/\2 \1/p' \
    "$logs/$label.log" | sed -E "s/^Not Run /Skipped /; s/^/$label /" >> "$results"
done

# The device of a test: the suites name it last (".../VULKAN"); "-" for tests of no device.
summary=$(awk '
  function line(head, l, d) {
    printf "%-9s %d passed, %d failed, %d skipped\n", head, n[l, d, "passed"], n[l, d, "failed"], n[l, d, "skipped"]
  }
  { dev = "-"
    if (match($3, /\/(CPU|NULL|VULKAN|CL|CUDA|HIP)(_[0-9]+)?(\/|$)/)) dev = substr($3, RSTART + 1, RLENGTH - 1)
    sub(/\/$/, "", dev)
    st = $2 == "Passed" ? "passed" : $2 == "Skipped" ? "skipped" : "failed"
    n[$1, dev, st]++; n[$1, "*", st]++; devs[$1, dev] = 1; labs[$1] = 1 }
  END {
    for (l in labs) {
      line(l ":", l, "*")
      for (k in devs) { split(k, p, SUBSEP); if (p[1] == l) line("  " p[2], l, p[2]) }
    }
  }' "$results")
failed=$(awk '$2 != "Passed" && $2 != "Skipped" { print "  " $1 "  " $3 " (" $2 ")" }' "$results")

echo
echo "== scripts/sanitize.sh $preset: built in $(took "$t0" "$t1")"
for label in "${labels[@]}"; do
  echo "$summary" | awk -v l="$label" '$1 == l":" { on = 1; print; next } /^[^ ]/ { on = 0 } on' |
    sed "1s/\$/ (ran in ${ran_in[$label]})/"
done
if [[ -n $failed ]]; then
  echo "failed (logs: $logs/<label>.log, and ctest's in $build/Testing/Temporary):"
  echo "$failed"
  exit 1
fi
echo "no failures"
