#!/usr/bin/env bash
# Runs the whole test suite (installing build dependencies first if missing) and prints a closing line
# "N passed, N failed" that counts doctest test cases across all test targets; a target that fails without a doctest
# summary (build failure, crash, timeout) counts as one failed case.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh || { echo "tests: installing dependencies failed"; echo "0 passed, 1 failed"; exit 1; }

log=$(mktemp)
bazel test --nocache_test_results //... 2>&1 | tee "$log" | grep -E "PASSED|FAILED|NO STATUS|TIMEOUT|ERROR|Executed" 
rc=${PIPESTATUS[0]}

passed=0; failed=0
testlogs=$(bazel info bazel-testlogs 2>/dev/null)
while read -r target status; do
  [ -n "$target" ] || continue
  rel=${target#//}; rel=${rel/://}
  # A sharded target (shard_count) has one log per shard, test.log in shard_K_of_N/; a test.log beside them is an
  # older unsharded run's and is ignored.
  logs=("$testlogs/$rel"/shard_*_of_*/test.log)
  [ -f "${logs[0]}" ] || logs=("$testlogs/$rel/test.log")
  summary=""; p=0; f=0
  for l in "${logs[@]}"; do
    [ -f "$l" ] || continue
    s=$(grep -E '^\[doctest\] test cases:' "$l" | tail -n 1)
    [ -n "$s" ] || continue
    summary=$s
    p=$((p + $(sed -E 's/.*\| *([0-9]+) passed.*/\1/' <<<"$s"))); f=$((f + $(sed -E 's/.*\| *([0-9]+) failed.*/\1/' <<<"$s")))
  done
  if [ -n "$summary" ] && [ "$status" != "NO" ]; then
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$status" != "PASSED" ] && [ "$f" = 0 ]; then failed=$((failed + 1)); fi
  elif [ "$status" = "PASSED" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done < <(grep -E '^//[^ ]+ +(\(cached\) )?(PASSED|FAILED|TIMEOUT|NO STATUS|FLAKY)' "$log" | sed -E 's/\(cached\) //' | awk '{print $1, $2}')
rm -f "$log"
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi   # e.g. a build error before any test ran
echo "${passed} passed, ${failed} failed"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
