#!/usr/bin/env bash
# Installs qpcheck with its library, docs and man page (README.md, "Install"; docs/cli.md, "Installing"):
#
#   bazel run //:install -- [--prefix DIR] [--destdir DIR]
#
#   PREFIX/bin/qpcheck                         the binary
#   PREFIX/bin/qpcheck-full                    the same with Z3, Open MPI and rdma-core linked: qpcheck hands it the
#                                              runs that need them (bmc/kind, synth, --distributed, replay)
#   PREFIX/share/qpcheck/lib/*.qpspec          the RDMA library: import "lib/rdma.qpspec"; finds it from anywhere
#   PREFIX/share/man/man1/qpcheck.1            the man page, written from the same CLI11 App as --help
#   PREFIX/share/doc/qpcheck/                  README.md, docs/*.md, examples/ (the shipped specs)
#
# --prefix defaults to /usr/local; a relative one is taken from the folder `bazel run` was started in. --destdir
# stages the tree under DIR (for packaging: DIR/PREFIX/...). The binary finds its library as ../share/qpcheck from
# its own folder, so the tree may be moved as a whole. Exits 0 on success, 4 on a bad option, 1 when a copy fails.
set -euo pipefail

prefix=/usr/local
destdir=
while (($#)); do
  case $1 in
    --prefix) [ $# -ge 2 ] || { echo "install: --prefix needs a folder" >&2; exit 4; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --destdir) [ $# -ge 2 ] || { echo "install: --destdir needs a folder" >&2; exit 4; }; destdir=$2; shift 2 ;;
    --destdir=*) destdir=${1#--destdir=}; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install: unknown option '$1' (expected --prefix DIR, --destdir DIR)" >&2; exit 4 ;;
  esac
done
[ -n "$prefix" ] || { echo "install: --prefix is empty" >&2; exit 4; }
# `bazel run` starts the script in its runfiles; relative paths mean the caller's folder.
base=${BUILD_WORKING_DIRECTORY:-$PWD}
case $prefix in /*) ;; *) prefix=$base/$prefix ;; esac
if [ -n "$destdir" ]; then case $destdir in /*) ;; *) destdir=$base/$destdir ;; esac; fi

# The files to install: this script's runfiles (bazel run, or a test's data).
runfiles=${RUNFILES_DIR:-$0.runfiles}
src=$runfiles/qpcheck
[ -x "$src/checker/cli/qpcheck" ] || src=$PWD
[ -x "$src/checker/cli/qpcheck" ] || { echo "install: cannot find the built qpcheck (run it with bazel run //:install)" >&2; exit 1; }

root=$destdir$prefix
# put MODE SRC DST: copies SRC (following links: runfiles are links) to DST through a temporary name, so that an
# interrupted install never leaves a truncated file. (Not install(1): a runfiles folder holds this script as
# `install`, found first on some PATHs.)
put() {
  mkdir -p "$(dirname "$3")"
  cp -fL "$2" "$3.new" && chmod "$1" "$3.new" && mv -f "$3.new" "$3"
}
put 0755 "$src/checker/cli/qpcheck-full" "$root/bin/qpcheck-full"
put 0755 "$src/checker/cli/qpcheck" "$root/bin/qpcheck"
# The library: every file under spec/lib, keeping its folders (an import names them); replaced as a whole.
rm -rf "$root/share/qpcheck/lib.new"
(cd "$src/spec/lib" && find -L . -type f -name '*.qpspec' -print0) | while IFS= read -r -d '' f; do
  put 0644 "$src/spec/lib/$f" "$root/share/qpcheck/lib.new/$f"
done
rm -rf "$root/share/qpcheck/lib"
mv "$root/share/qpcheck/lib.new" "$root/share/qpcheck/lib"
mkdir -p "$root/share/man/man1"
"$src/checker/cli/qpcheck-man" > "$root/share/man/man1/qpcheck.1.new"
chmod 0644 "$root/share/man/man1/qpcheck.1.new"
mv -f "$root/share/man/man1/qpcheck.1.new" "$root/share/man/man1/qpcheck.1"
for f in "$src/README.md" "$src"/docs/*.md; do put 0644 "$f" "$root/share/doc/qpcheck/$(basename "$f")"; done
for f in "$src"/spec/*.qpspec; do put 0644 "$f" "$root/share/doc/qpcheck/examples/$(basename "$f")"; done

echo "installed qpcheck into $root:"
echo "  $root/bin/qpcheck"
echo "  $root/share/qpcheck/lib/ ($(find "$root/share/qpcheck/lib" -name '*.qpspec' | wc -l) library files)"
echo "  $root/share/man/man1/qpcheck.1"
echo "  $root/share/doc/qpcheck/ (README.md, docs, examples/)"
if [ -z "$destdir" ]; then
  "$root/bin/qpcheck" --version >/dev/null || { echo "install: the installed binary does not run" >&2; exit 1; }
  case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "note: $prefix/bin is not on PATH" ;; esac
fi
