#!/usr/bin/env bash
# Builds and runs the libFuzzer harnesses of fuzz/ (docs/fuzzing.md) with clang-14 (ASan + UBSan + LeakSanitizer),
# outside Bazel: Bazel's auto-configured toolchain here is g++.
#
#   tools/fuzz.sh --ci              every harness for a short fixed budget (what .ci/run does)
#   tools/fuzz.sh --hours N         every harness for N hours each (long runs; the corpus grows in fuzz-out/)
#   tools/fuzz.sh --runs N [NAME]   N executions of each harness (or of NAME only)
#   tools/fuzz.sh --seconds N [NAME]
#
# Seeds: fuzz/corpus/<harness>/ (the reproducers of issue 16 and traces written by qpcheck), the shipped specs
# (spec/, spec/lib/, tests/corpus/, tests/bad/, tests/gate/) for the spec harnesses. The working corpus and findings
# live in fuzz-out/ (not in git). Ends with "N passed, N failed" (one case per harness); exit 1 when a harness found a
# crash, a leak or an input slower than the bound (-timeout), with the input saved in fuzz-out/findings/<harness>/.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

mode=seconds; budget=60; only=""
while (($#)); do
  case $1 in
    --ci) mode=seconds; budget=${FUZZ_CI_SECONDS:-40} ;;
    --hours) mode=seconds; budget=$(( $2 * 3600 )); shift ;;
    --seconds) mode=seconds; budget=$2; shift ;;
    --runs) mode=runs; budget=$2; shift ;;
    -h|--help) sed -n 2,14p "$0"; exit 0 ;;
    -*) echo "fuzz: unknown option $1 (see --help)"; exit 4 ;;
    *) only=$1 ;;
  esac
  shift
done

# clang-14 and its libFuzzer/sanitizer runtimes (Debian 12).
need=()
for p in clang-14 libclang-rt-14-dev libfmt-dev nlohmann-json3-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" ||
    { echo "fuzz: cannot install ${need[*]}"; echo "0 passed, 1 failed"; exit 1; }
fi

out=$root/fuzz-out
mkdir -p "$out/obj" "$out/bin" "$out/findings"
cxx=clang++-14
flags=(-std=c++20 -O1 -g -I"$root" -fsanitize=address,undefined -fno-sanitize-recover=undefined
       -fno-omit-frame-pointer -Wno-unused-command-line-argument)
# The product code the harnesses reach (no tests, no CLI, no Z3, no verbs device).
# Every non-test source of the front end, the model, the explicit engine and the trace (a new file there is picked up
# without editing this list), plus the replay planner.
# A test is a file that includes doctest, not a name pattern (a source named like a test was left out once, and a
# missed source is a link error here).
mapfile -t lib_srcs < <(grep -L 'doctest/doctest\.h' checker/lang/*.cc checker/frontend/*.cc checker/model/*.cc \
                           checker/explore/*.cc checker/trace/*.cc checker/conform/*.cc)
lib_srcs+=(verbs_backend/conductor.cc verbs_backend/device.cc verbs_backend/replay_ops.cc verbs_backend/call_log.cc)
objs=()
pids=()
for src in "${lib_srcs[@]}"; do
  obj=$out/obj/$(echo "$src" | tr / _).o
  objs+=("$obj")
  # Rebuilt when the source or any project header is newer (headers are few; a full rebuild takes ~2 minutes).
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find checker verbs_backend -name '*.h' -newer "$obj" -print -quit)" ]; then
    "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
    pids+=($!)
    if ((${#pids[@]} >= 2)); then wait "${pids[0]}" || { echo "fuzz: compiling failed"; echo "0 passed, 1 failed"; exit 1; }; pids=("${pids[@]:1}"); fi
  fi
done
for p in "${pids[@]}"; do wait "$p" || { echo "fuzz: compiling failed"; echo "0 passed, 1 failed"; exit 1; }; done

harnesses=(parse_fuzzer spec_fuzzer trace_fuzzer call_log_fuzzer)
[ -n "$only" ] && harnesses=("$only")
for h in "${harnesses[@]}"; do
  "$cxx" "${flags[@]}" -fsanitize=fuzzer "fuzz/$h.cc" "${objs[@]}" -lfmt -o "$out/bin/$h" ||
    { echo "fuzz: linking $h failed"; echo "0 passed, 1 failed"; exit 1; }
done

# Seed corpora (copied, so the fuzzer's additions never land in the tree).
seed() {
  local h=$1 dir=$out/corpus/$1
  mkdir -p "$dir"
  [ -d "fuzz/corpus/$h" ] && cp -n fuzz/corpus/"$h"/* "$dir"/ 2>/dev/null
  case $h in
    parse_fuzzer|spec_fuzzer)
      cp -n fuzz/corpus/spec/* "$dir"/ 2>/dev/null
      for f in spec/*.qpspec spec/lib/*.qpspec tests/corpus/*.qpspec tests/bad/*.qpspec tests/gate/*.qpspec; do
        [ -f "$f" ] && cp -n "$f" "$dir/$(echo "$f" | tr / _)"
      done ;;
    call_log_fuzzer)
      for f in tests/conform/logs/*.jsonl; do [ -f "$f" ] && cp -n "$f" "$dir/$(basename "$f")"; done ;;
  esac
}

passed=0; failed=0
export QPCHECK_SPEC_DIR=$root/spec
for h in "${harnesses[@]}"; do
  seed "$h"
  mkdir -p "$out/findings/$h"
  # -timeout: an input slower than 10 s is a finding (the spec harness's own limits end any search within 1 s);
  # -rss_limit_mb: so is a run above 2 GiB; leaks are reported at exit (LeakSanitizer).
  args=(-timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$out/findings/$h/"
        -close_fd_mask=1)
  if [ "$mode" = runs ]; then args+=(-runs="$budget"); else args+=(-max_total_time="$budget"); fi
  log=$out/$h.log
  start=$(date +%s)
  "$out/bin/$h" "${args[@]}" "$out/corpus/$h" >"$log" 2>&1
  rc=$?
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  echo "fuzz: $h: exit $rc, ${execs:-?} executions in $(( $(date +%s) - start )) s, corpus $(ls "$out/corpus/$h" | wc -l) inputs"
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    grep -E 'ERROR|SUMMARY|unexpected|raw control|not XML|invalid UTF|Test unit written' "$log" | head -n 20
  fi
done
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
