#!/usr/bin/env bash
# Soak of the gate (docs/fuzzing.md, "Soak"): runs `qpcheck gate` over every spec in the tree (spec/, spec/bench/,
# tests/corpus/, tests/bad/, tests/gate/) N times (default 100) with random limits, and in some runs a SIGTERM at a
# random moment (in a few, a second one); each iteration also runs `qpcheck verify` on a random spec with random
# --threads (gate searches on one thread). Every run must end with a verdict or as interrupted, and leave
# well-formed reports: the JSON parses (and agrees with the exit code), JUnit validates against
# tests/schemas/junit.xsd, SARIF against the SARIF 2.1.0 schema, and no temporary file is left. After a second
# signal the process must end by that signal with each report either the previous one or a complete new one.
#
#   tools/soak_gate.sh [--runs N] [--seed S] [--qpcheck PATH]
# Ends with "N passed, N failed" (one case per run); failures are kept in soak-out/fail-<run>/.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=100; seed=$RANDOM; bin=""
while (($#)); do
  case $1 in
    --runs) runs=$2; shift ;;
    --seed) seed=$2; shift ;;
    --qpcheck) bin=$2; shift ;;
    *) echo "soak: unknown option $1"; exit 4 ;;
  esac
  shift
done
if [ -z "$bin" ]; then
  bazel build //checker/cli:qpcheck >/dev/null 2>&1 || { echo "soak: build failed"; echo "0 passed, 1 failed"; exit 1; }
  bin=bazel-bin/checker/cli/qpcheck
fi
RANDOM=$seed
out=soak-out
rm -rf "$out"; mkdir -p "$out"
specs=(spec spec/bench tests/corpus tests/bad tests/gate)
all_specs=(spec/*.qpspec spec/bench/*.qpspec tests/corpus/*.qpspec tests/gate/*.qpspec)
pick() { local a=("$@"); echo "${a[RANDOM % ${#a[@]}]}"; }
passed=0; failed=0
declare -A outcomes=()

check_reports() {  # dir expected_exit -> "" or the problem
  local d=$1 rc=$2
  python3 - "$d/g.json" "$rc" <<'PY' || return 1
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "qpcheck.gate", "schema"
assert j["exit_code"] == int(sys.argv[2]), f"exit_code {j['exit_code']} != {sys.argv[2]}"
assert j["verdict"] in ("pass", "fail", "inconclusive", "error"), j["verdict"]
PY
  xmllint --noout --schema tests/schemas/junit.xsd "$d/g.xml" 2>/dev/null || { echo "junit invalid"; return 1; }
  python3 - "$d/g.sarif" <<'PY' || return 1
import json, sys, jsonschema
schema = json.load(open("third_party/sarif/sarif-schema-2.1.0.json"))
jsonschema.validate(json.load(open(sys.argv[1])), schema)
PY
  if ls -A "$d" | grep -q '\.tmp-'; then echo "temporary file left"; return 1; fi
  return 0
}

for ((i = 1; i <= runs; i++)); do
  d=$out/run-$i
  mkdir -p "$d"
  limits=(--max-states "$(pick 500 2000 5000 20000)" --time-limit "$(pick 0.5 1 2)"
          --max-memory "$(pick 64M 256M 1G 0)")
  mode=$(pick none none none term term double)
  echo previous > "$d/g.json"; echo previous > "$d/g.xml"; echo previous > "$d/g.sarif"
  "$bin" gate "${specs[@]}" "${limits[@]}" --junit "$d/g.xml" --sarif "$d/g.sarif" --json "$d/g.json" \
    --svg-dir "$d/svg" --trace-dir "$d/traces" >"$d/stdout" 2>"$d/stderr" &
  pid=$!
  if [ "$mode" != none ]; then
    sleep "$(pick 0.05 0.2 0.5 1 2 4)"
    kill -TERM "$pid" 2>/dev/null
    if [ "$mode" = double ]; then sleep 0.01; kill -TERM "$pid" 2>/dev/null; fi
  fi
  wait "$pid"; rc=$?
  problem=""
  if [ "$mode" = double ] && [ "$rc" -eq 143 ]; then
    # Ended by the second signal: each report is the previous one or a complete new one (the signal came after it
    # was renamed into place), and no temporary is left.
    [ "$(cat "$d/g.json")" = previous ] || python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$d/g.json" ||
      problem="g.json neither the previous nor a complete report"
    [ "$(cat "$d/g.xml")" = previous ] || xmllint --noout --schema tests/schemas/junit.xsd "$d/g.xml" 2>/dev/null ||
      problem="g.xml neither the previous nor a valid report"
    [ "$(cat "$d/g.sarif")" = previous ] || python3 -c "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open('third_party/sarif/sarif-schema-2.1.0.json')))" "$d/g.sarif" ||
      problem="g.sarif neither the previous nor a valid report"
    ls -A "$d" | grep -q '\.tmp-' && problem="temporary file left after a second signal"
    [ -z "$problem" ] && outcome="killed-by-second-signal"
  elif [ "$rc" -le 3 ]; then
    problem=$(check_reports "$d" "$rc" 2>&1 | tail -n 3)
    [ "${PIPESTATUS[0]}" -eq 0 ] && problem="" || problem=${problem:-"reports invalid"}
    outcome="exit-$rc"
    grep -q "qpcheck: interrupted" "$d/stderr" && outcome="$outcome-interrupted"
    if [ "$mode" != none ] && ! grep -q "qpcheck: interrupted" "$d/stderr"; then outcome="$outcome-finished-before-signal"; fi
  else
    problem="gate exit $rc"
  fi
  # verify with random --threads on one spec, sometimes interrupted.
  spec=$(pick "${all_specs[@]}")
  vmode=$(pick none none term)
  "$bin" verify "$spec" --threads "$(pick 1 2 3 4)" "${limits[@]}" --trace-out "$d/v.json" >"$d/vstdout" 2>"$d/vstderr" &
  vpid=$!
  if [ "$vmode" = term ]; then sleep "$(pick 0.05 0.3 1)"; kill -TERM "$vpid" 2>/dev/null; fi
  wait "$vpid"; vrc=$?
  if [ "$vrc" -le 3 ]; then
    if [ "$vrc" -ne 3 ] && ! python3 -c "import json,sys; j=json.load(open('$d/v.json')); assert j['verdict'] in ('holds','violated','inconclusive')" 2>/dev/null; then
      problem="$problem; verify $spec: bad trace file"
    fi
  else
    problem="$problem; verify $spec exit $vrc"
  fi
  if [ -z "$problem" ]; then
    passed=$((passed + 1)); outcomes[$outcome]=$(( ${outcomes[$outcome]:-0} + 1 ))
    rm -rf "$d"
  else
    failed=$((failed + 1)); mv "$d" "$out/fail-$i"
    echo "soak: run $i ($mode, ${limits[*]}): $problem"
  fi
done
echo "soak: seed $seed; outcomes:"
for k in "${!outcomes[@]}"; do echo "  $k: ${outcomes[$k]}"; done
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
