#!/usr/bin/env bash
# The whole user path (README.md, "Install"; issue 15): install into a temporary prefix with tools/install.sh (what
# `bazel run //:install -- --prefix DIR` runs), then, in an empty folder outside the checkout and with a clean
# environment, write specs that import the library and run verify, gate, show and diff against the installed copy
# only; then the import search order, the "cannot find" diagnostic, a moved install tree and the man page.
set -uo pipefail
runfiles=${TEST_SRCDIR:?run me with bazel test //tests:install_test}
# A folder of the user's, outside the checkout and Bazel's trees.
tmp=$(mktemp -d /tmp/qpcheck-user.XXXXXX 2>/dev/null || mktemp -d "${TEST_TMPDIR:-/tmp}/user.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# expect RC CMD...: runs CMD (stdout to $tmp/out, stderr to $tmp/err) and checks its exit code.
expect() {
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" = "$want" ]; then ok; else bad "exit $rc, expected $want: $*"; sed 's/^/  | /' "$tmp/err" | head -20; fi
}
has() { if grep -qF -- "$2" "$1"; then ok; else bad "$1 lacks: $2"; sed 's/^/  | /' "$1" | head -20; fi; }
lacks() { if grep -qF -- "$2" "$1"; then bad "$1 has: $2"; else ok; fi; }

# 1. Install, as the README says (the script behind `bazel run //:install`).
expect 0 env RUNFILES_DIR="$runfiles" bash "$runfiles/qpcheck/tools/install.sh" --prefix "$prefix"
for f in bin/qpcheck bin/qpcheck-full share/qpcheck/lib/rdma.qpspec share/man/man1/qpcheck.1 share/doc/qpcheck/README.md \
         share/doc/qpcheck/language.md share/doc/qpcheck/cli.md share/doc/qpcheck/examples/03_patch_passive_first_ib.qpspec; do
  if [ -f "$prefix/$f" ]; then ok; else bad "not installed: $f"; fi
done
expect 4 env RUNFILES_DIR="$runfiles" bash "$runfiles/qpcheck/tools/install.sh" --frob

# 2. A user's folder outside the checkout; the environment holds nothing of qpcheck's.
work=$tmp/work
mkdir -p "$work"
cd "$work" || exit 1
run() { env -i HOME="$tmp" PATH="$prefix/bin:/usr/bin:/bin" "$@"; }
expect 0 run qpcheck --version
has "$tmp/out" "qpcheck "

# The seed scenario as a user writes it: passive-first ULP on IB with connect_rnr_retry 0. The library comes from
# PREFIX/share/qpcheck/lib (the violated invariant's source says so).
cat > passive_first.qpspec <<'SPEC'
import "lib/rdma.qpspec";
set connect_rnr_retry = 0;
disable recv_before_wakeup "this ULP has no RPCs to wake";

process client {
  create_qp(ACTIVE);
  connect(ACTIVE);
  get_cm_event(ACTIVE, ESTABLISHED);
  post_recv(ACTIVE, 2);
}

process server {
  get_cm_event(PASSIVE, CONNECT_REQUEST);
  create_qp(PASSIVE);
  post_recv(PASSIVE, 2);
  accept(PASSIVE);
  post_send(PASSIVE, UNSOL);
}

matrix { transport in { IB, IWARP }; }
expect no_send_to_empty_rq: violated;
expect passive_send_after_peer_recv: violated;
expect no_fatal_qp_error: violated;
expect deadlock: violated when transport = IWARP;
SPEC
# The fixed version: the client posts its receives before connecting.
sed -e '/get_cm_event(ACTIVE, ESTABLISHED);/d' -e 's/^  post_recv(ACTIVE, 2);/  get_cm_event(ACTIVE, ESTABLISHED);/' \
    -e 's/^  create_qp(ACTIVE);/  create_qp(ACTIVE);\n  post_recv(ACTIVE, 2);/' \
    -e '$a expect deadlock: violated when transport = IWARP;  // the extra-data race: CONNECT_ERROR' -e '/^expect/d' \
    passive_first.qpspec > receives_first.qpspec

expect 1 run qpcheck verify passive_first.qpspec
has "$tmp/out" "passive_first.qpspec: VIOLATED: no_send_to_empty_rq"
has "$tmp/out" "$prefix/share/qpcheck/lib/verbs.qpspec:"
has "$tmp/out" "Counterexample: 10 steps (shortest: BFS)"
has "$tmp/out" "  not checked (disabled at passive_first.qpspec:3: this ULP has no RPCs to wake): recv_before_wakeup"
expect 0 run qpcheck verify receives_first.qpspec
has "$tmp/out" "HOLDS"

# verify --trace-out, then show.
expect 1 run qpcheck verify passive_first.qpspec --trace-out trace.json
expect 0 run qpcheck show trace.json --svg chart.svg
has chart.svg "<svg"

# gate over the folder: every expectation met.
expect 0 run qpcheck gate . --json gate.json
has gate.json '"verdict": "pass"'
has gate.json '"by": "disable"'

# diff: the fix removes the violation; JSON params are an object, as in the gate's report.
expect 1 run qpcheck diff passive_first.qpspec receives_first.qpspec
has "$tmp/out" "| transport=IB | passive_send_after_peer_recv | **violated** (10 steps) | holds |"
expect 1 run qpcheck diff passive_first.qpspec receives_first.qpspec --format json
has "$tmp/out" '"transport": "IB"'

# The README's example, as written there.
mkdir -p readme && (cd readme && printf '%s\n' 'import "lib/rdma.qpspec";' \
  'process client { create_qp(ACTIVE); post_recv(ACTIVE, 2); connect(ACTIVE); get_cm_event(ACTIVE, ESTABLISHED); }' \
  'process server { get_cm_event(PASSIVE, CONNECT_REQUEST); create_qp(PASSIVE); post_recv(PASSIVE, 2); accept(PASSIVE); }' \
  > mine.qpspec)
expect 0 run qpcheck verify readme/mine.qpspec
has "$tmp/out" "readme/mine.qpspec: HOLDS"

# The shipped specs, installed as examples, import the installed library too.
expect 0 run qpcheck verify "$prefix/share/doc/qpcheck/examples/01_linux_today.qpspec"

# 3. The import search order: the importing file's folder, --lib-dir, QPCHECK_LIB_PATH, the installed library.
for d in near lib_dir env_dir; do mkdir -p "$tmp/$d/lib"; done
for d in near lib_dir env_dir; do
  printf 'param which: 0..3 = 0;\nvar x: bool;\nrule step when !x { x = true; }\n' > "$tmp/$d/lib/rdma.qpspec"
done
sed -i 's/= 0;/= 1;/' "$tmp/near/lib/rdma.qpspec"
sed -i 's/= 0;/= 2;/' "$tmp/lib_dir/lib/rdma.qpspec"
sed -i 's/= 0;/= 3;/' "$tmp/env_dir/lib/rdma.qpspec"
printf 'import "lib/rdma.qpspec";\n' > "$tmp/near/spec.qpspec"
printf 'import "lib/rdma.qpspec";\n' > spec.qpspec
expect 0 run qpcheck verify "$tmp/near/spec.qpspec" --lib-dir "$tmp/lib_dir"
has "$tmp/out" "params: which=1"
expect 0 run env QPCHECK_LIB_PATH="$tmp/nowhere:$tmp/env_dir" qpcheck verify spec.qpspec --lib-dir "$tmp/lib_dir"
has "$tmp/out" "params: which=2"
expect 0 run env QPCHECK_LIB_PATH="$tmp/nowhere:$tmp/env_dir" qpcheck verify spec.qpspec
has "$tmp/out" "params: which=3"
printf 'import "lib/rdma.qpspec";\nprocess p { create_qp(ACTIVE); }\n' > installed.qpspec
expect 0 run qpcheck verify installed.qpspec
has "$tmp/out" "params: connections=1 transport=IB"

# Every place it looked, and how to add one.
printf 'import "lib/nosuch.qpspec";\n' > missing.qpspec
expect 3 run env QPCHECK_LIB_PATH="$tmp/env_dir" qpcheck verify missing.qpspec --lib-dir "$tmp/lib_dir"
has "$tmp/err" "missing.qpspec:1:8: error: cannot find imported file \"lib/nosuch.qpspec\"; looked in:"
has "$tmp/err" "    $work/lib/nosuch.qpspec (relative to the importing file)"
has "$tmp/err" "    $tmp/lib_dir/lib/nosuch.qpspec (--lib-dir)"
has "$tmp/err" "    $tmp/env_dir/lib/nosuch.qpspec (QPCHECK_LIB_PATH)"
has "$tmp/err" "    $prefix/share/qpcheck/lib/nosuch.qpspec (installed library)"
has "$tmp/err" "with --lib-dir DIR or QPCHECK_LIB_PATH=DIR[:DIR...]"
lacks "$tmp/err" "runfiles"

# 4. The install tree moved as a whole still finds its library.
mv "$prefix" "$tmp/moved"
expect 1 env -i HOME="$tmp" PATH=/usr/bin:/bin "$tmp/moved/bin/qpcheck" verify passive_first.qpspec
has "$tmp/out" "$tmp/moved/share/qpcheck/lib/verbs.qpspec:"
# ... and so does qpcheck-full, which a Z3 run is handed over to (checker/cli/backends.h): beside qpcheck, it finds
# the same library (no violation within 2 steps: inconclusive).
expect 2 env -i HOME="$tmp" PATH=/usr/bin:/bin "$tmp/moved/bin/qpcheck" verify passive_first.qpspec --engine bmc --depth 2
has "$tmp/out" "statistics: bmc engine, depth 2,"

# 5. The man page renders and carries the search order.
if command -v man >/dev/null 2>&1; then
  expect 0 env MANWIDTH=100 man -l "$tmp/moved/share/man/man1/qpcheck.1"
  has "$tmp/out" "IMPORT SEARCH ORDER"
  has "$tmp/out" "QPCHECK_LIB_PATH"
else
  echo "note: man is not installed; the page's rendering is checked by //checker/cli:app_test with groff"
fi

# 6. Progress on a terminal (a pseudo-terminal from script(1)): synth and --engine bmc say the depth reached, the
# values still undecided and the time; with stderr not a terminal they print no progress at all.
printf 'param n: 0..3 = 1;\nvar a: 0..3;\nrule up when a < 2 { a = a + 1; }\ninvariant small: a <= n + 1;\n' > grow.qpspec
if command -v script >/dev/null 2>&1; then
  q=$tmp/moved/bin/qpcheck
  expect 1 script -qec "$q synth grow.qpspec --param n=* --no-deadlock" /dev/null
  has "$tmp/out" "synth: property 1/2 small: depth 2/20, 4 of 4 values undecided, 0 s"
  has "$tmp/out" "synth: property 2/2 runtime_error: depth 0/20"
  has "$tmp/out" "FAILS for n=0 (bmc, shortest counterexample: 2 steps)"
  expect 1 script -qec "$q verify grow.qpspec --param n=0 --engine bmc --depth 3 --no-deadlock" /dev/null
  has "$tmp/out" "bmc: depth 1/3, 0 s: no counterexample of length 1"
else
  echo "note: script(1) is not installed; the progress lines on a terminal are not checked"
fi
expect 1 "$tmp/moved/bin/qpcheck" synth grow.qpspec --param 'n=*' --no-deadlock
lacks "$tmp/err" "synth: property"

echo "install_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
