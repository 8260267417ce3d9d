#!/usr/bin/env python3
"""Side-by-side benchmark: qpcheck, SPIN and Rumur on the same models, exact search.

Models (../shared/bench in the issue; copies of the Promela/Murphi sources live in bench/models):
  phil      dining philosophers, deadlock-free variant, N philosophers (default 16: 1,136,689 states)
  rdma_cm   RDMA RC QP/CM connection setup, N connections x M RPCs (default 4x3: 3,748,096 states)

For each model and tool it prints states, transitions, wall and CPU seconds, states per CPU second, peak RSS and
bytes of peak RSS per state, then the ratios qpcheck/SPIN and qpcheck/Rumur of states per CPU second and of bytes per
state. If the state counts differ the comparison is void and the table says so. CPU seconds and peak RSS come from
wait4() on each child (search only: SPIN's and Rumur's C compilation is timed separately and excluded).

Each timed process runs --repeat times (default 3), the tools taking turns (qpcheck, qpcheck T threads, SPIN, Rumur,
then again), so that a change in the machine's load falls on every tool alike; the table reports each tool's least CPU
seconds and least wall seconds over its runs (the usual estimator of a program's own cost on a shared machine) and
lists every run's CPU seconds. State and transition counts must be the same in every run.

Usage: compare.py --qpcheck PATH --repo DIR [--phil N] [--rdma NxM] [--threads T] [--only phil|rdma_cm] [--repeat K]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


class Meter:
    """Per-child CPU time and peak RSS via os.wait4."""

    @staticmethod
    def run(cmd, cwd=None):
        t0 = time.monotonic()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.dup2(w, 1)
            os.dup2(w, 2)
            os.close(r)
            if cwd:
                os.chdir(cwd)
            try:
                os.execvp(cmd[0], cmd)
            finally:
                os._exit(127)
        os.close(w)
        chunks = []
        with os.fdopen(r, "r", errors="replace") as f:
            for line in f:
                chunks.append(line)
        _, status, ru = os.wait4(pid, 0)
        wall = time.monotonic() - t0
        code = os.waitstatus_to_exitcode(status)
        return {
            "out": "".join(chunks),
            "wall": wall,
            "cpu": ru.ru_utime + ru.ru_stime,
            "rss": ru.ru_maxrss * 1024,
            "code": code,
        }


def sh(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout)
        raise SystemExit(f"bench: command failed: {' '.join(cmd)}")
    return p.stdout


def num(pattern, text, cast=int):
    m = re.search(pattern, text)
    return cast(m.group(1).replace(",", "")) if m else None


# ---------------------------------------------------------------- peers

def spin(work, model_src, defines, bfs=False):
    """Compiles SPIN's verifier; returns a function that runs it once and parses its counts."""
    d = tempfile.mkdtemp(dir=work)
    src = os.path.join(d, os.path.basename(model_src))
    shutil.copy(model_src, src)
    sh(["spin", "-a"] + [f"-D{k}={v}" for k, v in defines.items()] + [os.path.basename(src)], cwd=d)
    t0 = time.monotonic()
    flags = ["-DBFS"] if bfs else []
    sh(["gcc", "-O2", "-DSAFETY", "-DNOREDUCE", "-DMEMLIM=16384"] + flags + ["-o", "pan", "pan.c"], cwd=d)
    compile_s = time.monotonic() - t0

    def run():
        # -m: DFS depth bound well above these models' depth (SPIN warns and truncates otherwise); default hash
        # table (-w24, 2^24 slots: more than 4x the states of either model).
        r = Meter.run(["./pan", "-m1000000"], cwd=d)
        if "max search depth too small" in r["out"]:
            r["note"] = "DEPTH TRUNCATED"
        out = r["out"]
        r["states"] = num(r"(\d+) states, stored", out)
        r["transitions"] = num(r"(\d+) transitions \(= stored\+matched\)", out)
        r["errors"] = num(r"errors: (\d+)", out)
        r["compile"] = compile_s
        r.setdefault("note", ("BFS" if bfs else "DFS") + " -DSAFETY -DNOREDUCE (exact)")
        return r
    return run


def rumur(work, model_src, consts, symmetry="off"):
    """Generates and compiles Rumur's checker (--symmetry-reduction `symmetry`: off, heuristic or exhaustive);
    returns a function that runs it once and parses its counts."""
    d = tempfile.mkdtemp(dir=work)
    text = open(model_src).read()
    for k, v in consts.items():
        text, n = re.subn(rf"(?m)^(\s*(?:const\s+)?{k}\s*:\s*)\d+;", rf"\g<1>{v};", text)
        if n != 1:
            raise SystemExit(f"bench: cannot set {k} in {model_src}")
    src = os.path.join(d, "model.m")
    open(src, "w").write(text)
    sh(["rumur", "--symmetry-reduction", symmetry, "--threads", "1", "--output", "model.c", "model.m"], cwd=d)
    t0 = time.monotonic()
    sh(["cc", "-std=c11", "-O3", "-mcx16", "-o", "model", "model.c", "-lpthread"], cwd=d)
    compile_s = time.monotonic() - t0

    def run():
        r = Meter.run(["./model"], cwd=d)
        out = r["out"]
        r["states"] = num(r"(\d+) states, \d+ rules fired", out)
        r["transitions"] = num(r"\d+ states, (\d+) rules fired", out)
        r["compile"] = compile_s
        r["note"] = f"1 thread, --symmetry-reduction {symmetry}"
        return r
    return run


def qpcheck(binary, spec, params, extra):
    """Returns a function that runs `qpcheck verify` once and parses its JSON report."""
    return lambda: qpcheck_once(binary, spec, params, extra)


def qpcheck_once(binary, spec, params, extra, prefix=()):
    """One `qpcheck verify` (prefix: words between the binary and `verify`, for mpirun: -np N PATH)."""
    cmd = ([binary] + list(prefix) + ["verify", spec, "--format", "json"]
           + [f"--param={k}={v}" for k, v in params.items()] + extra)
    r = Meter.run(cmd)
    try:
        rep = json.loads(r["out"][r["out"].index("{"):])
    except ValueError:
        sys.stderr.write(r["out"])
        raise SystemExit("bench: qpcheck did not print a JSON report")
    st = rep["stats"]
    r["states"] = st["states"]
    r["transitions"] = st["transitions"]
    r["verdict"] = rep.get("verdict")
    r["store_bytes"] = st.get("store_bytes")
    r["note"] = " ".join(extra) if extra else "BFS, exact"
    return r


def best_of(tool, runs):
    """Folds repeated runs of one tool into one row: least CPU and least wall seconds, largest peak RSS."""
    counts = {(r["states"], r["transitions"]) for r in runs}
    if len(counts) != 1:
        raise SystemExit(f"bench: {tool} gave different counts in repeated runs: {sorted(counts)}")
    best = dict(min(runs, key=lambda r: r["cpu"]))
    best["wall"] = min(r["wall"] for r in runs)
    best["rss"] = max(r["rss"] for r in runs)
    if len(runs) > 1:
        best["note"] += "; CPU s of runs " + "/".join(f"{r['cpu']:.2f}" for r in runs)
    return best


# ---------------------------------------------------------------- report

def fmt_row(tool, r):
    sps = r["states"] / r["cpu"] if r["states"] and r["cpu"] > 0 else 0
    bps = r["rss"] / r["states"] if r["states"] else 0
    store = f"{r['store_bytes'] / r['states']:.1f}" if r.get("store_bytes") and r["states"] else "-"
    return (f"  {tool:<22} {r['states'] or 0:>11,} {r['transitions'] or 0:>12,} {r['wall']:>8.2f} {r['cpu']:>8.2f} "
            f"{sps:>11,.0f} {r['rss'] / 2**20:>9.1f} {bps:>8.1f} {store:>7}   {r['note']}")


def report(title, rows):
    print(f"\n{title}")
    print(f"  {'tool':<22} {'states':>11} {'transitions':>12} {'wall s':>8} {'CPU s':>8} {'states/CPUs':>11} "
          f"{'RSS MiB':>9} {'RSS B/st':>8} {'store':>7}   mode")
    for tool, r in rows:
        print(fmt_row(tool, r))
    q = dict(rows)
    base = [(t, r) for t, r in rows if t.startswith("qpcheck")]
    for peer in ("spin", "rumur"):
        if peer not in q:
            continue
        p = q[peer]
        for t, r in base:
            if r["states"] != p["states"]:
                print(f"  {t}/{peer}: comparison void: {r['states']:,} states vs {p['states']:,}")
                continue
            speed = (r["states"] / r["cpu"]) / (p["states"] / p["cpu"])
            mem = (r["rss"] / r["states"]) / (p["rss"] / p["states"])
            wall = p["wall"] / r["wall"]
            print(f"  {t}/{peer}: states/CPU-s x{speed:.2f}, wall-clock speed x{wall:.2f}, RSS bytes/state x{mem:.2f}")
    return [(f"{title.split(' ')[0]}: {name}", ok) for name, ok in targets(rows)]


# ---------------------------------------------------------------- issue 4's targets

TARGET_SPIN_SPEED = 4.0      # exact, one thread: states per CPU second, x SPIN's
TARGET_STORE_BYTES = 16.0    # visited set + predecessor links, bytes per state
TARGET_THREADS_SPEEDUP = 1.7  # 2 threads: wall-clock states per second, x one thread's
TARGET_SPEC_MS = 50.0        # each shipped spec, whole process, wall


def verdict(ok):
    return "met" if ok else "MISSED"


def targets(rows):
    """Prints one line per target of issue 4 that this model's rows can decide; returns [(name, ok)]."""
    q = dict(rows)
    one = q.get("qpcheck")
    out = []
    if one is None or not one["states"]:
        return out
    spin_ = q.get("spin")
    if spin_ and spin_["states"] == one["states"] and spin_["cpu"] > 0 and one["cpu"] > 0:
        x = (one["states"] / one["cpu"]) / (spin_["states"] / spin_["cpu"])
        out.append((f"exact, 1 thread, >= x{TARGET_SPIN_SPEED:g} SPIN states/CPU-s", x >= TARGET_SPIN_SPEED, f"x{x:.2f}"))
    if one.get("store_bytes"):
        b = one["store_bytes"] / one["states"]
        out.append((f"<= {TARGET_STORE_BYTES:g} bytes/state (visited set + links)", b <= TARGET_STORE_BYTES, f"{b:.1f}"))
    for t, r in rows:
        if t.startswith("qpcheck ") and t.endswith(" threads") and r["states"] == one["states"] and r["wall"] > 0:
            n = int(t.split()[1])
            x = one["wall"] / r["wall"]
            goal = TARGET_THREADS_SPEEDUP if n == 2 else None
            if goal is not None:
                out.append((f"{n} threads >= x{goal:g} one thread (wall)", x >= goal, f"x{x:.2f}"))
            else:
                print(f"  {n} threads: x{x:.2f} one thread (wall); the target is stated for 2")
    for name, ok, figure in out:
        print(f"  target {name}: {figure} {verdict(ok)}")
    return [(name, ok) for name, ok, _ in out]


def shipped_specs(binary, repo, runs=10):
    """Mean wall clock of `qpcheck verify` on each shipped spec (spec/NN_*.qpspec) over `runs` runs; prints them
    against the target."""
    specs = sorted(f for f in os.listdir(os.path.join(repo, "spec")) if f[:1].isdigit() and f.endswith(".qpspec"))
    print(f"\nshipped specs, whole process (start-up, parse, search, report), mean wall of {runs} runs")
    worst = 0.0
    for f in specs:
        path = os.path.join(repo, "spec", f)
        walls = [Meter.run([binary, "verify", path])["wall"] for _ in range(runs)]
        ms = 1000 * sum(walls) / len(walls)
        worst = max(worst, ms)
        print(f"  {f:<40} {ms:7.1f} ms")
    ok = worst < TARGET_SPEC_MS
    print(f"  target each shipped spec < {TARGET_SPEC_MS:g} ms wall: slowest {worst:.1f} ms {verdict(ok)}")
    return [("shipped specs", ok)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qpcheck", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--phil", type=int, default=16)
    ap.add_argument("--rdma", default="4x3", help="NxM: connections x RPCs")
    ap.add_argument("--threads", type=int, default=2,
                    help="also run qpcheck with this many threads (default 2, the target's; 0 or 1: not at all)")
    ap.add_argument("--only", choices=["phil", "rdma_cm"])
    ap.add_argument("--no-peers", action="store_true", help="qpcheck only")
    ap.add_argument("--repeat", type=int, default=3, help="runs per tool, taking turns; the least CPU s counts")
    a = ap.parse_args()
    if a.repeat < 1:
        raise SystemExit(f"bench: --repeat must be at least 1, not {a.repeat}")
    models = os.path.join(a.repo, "bench", "models")
    n, m = (int(x) for x in a.rdma.lower().split("x"))
    load = os.getloadavg()
    print(f"qpcheck vs SPIN vs Rumur, exact search; {os.cpu_count()} CPUs, load average {load[0]:.2f} at start "
          f"(other load inflates wall clock; states per CPU second is the steadier figure); "
          f"best of {a.repeat} runs per tool, taking turns")
    work = tempfile.mkdtemp(prefix="qpbench-")
    try:
        jobs = []
        results = []
        if a.only in (None, "phil"):
            jobs.append((f"dining philosophers N={a.phil}", "phil", os.path.join(a.repo, "tests/corpus/philosophers.qpspec"),
                         {"N": a.phil}, {"N": a.phil}))
        if a.only in (None, "rdma_cm"):
            jobs.append((f"rdma_cm N={n} connections x M={m} RPCs", "rdma_cm",
                         os.path.join(a.repo, "spec/bench/rdma_cm.qpspec"), {"N": n, "M": m}, {"N": n, "M": m}))
        for title, base, spec, params, consts in jobs:
            tools = [("qpcheck", qpcheck(a.qpcheck, spec, params, []))]
            if a.threads > 1:
                tools.append((f"qpcheck {a.threads} threads", qpcheck(a.qpcheck, spec, params, [f"--threads={a.threads}"])))
            if not a.no_peers:
                # The philosophers' DFS is deeper than SPIN's depth bound; SPIN's BFS has none.
                tools.append(("spin", spin(work, os.path.join(models, base + ".pml"), consts, bfs=(base == "phil"))))
                tools.append(("rumur", rumur(work, os.path.join(models, base + ".m"), consts)))
            runs = {tool: [] for tool, _ in tools}
            for _ in range(a.repeat):
                for tool, run in tools:
                    runs[tool].append(run())
            rows = [(tool, best_of(tool, runs[tool])) for tool, _ in tools]
            results += report(title, rows)
        if a.only is None:
            results += shipped_specs(a.qpcheck, a.repo)
        missed = [name for name, ok in results if not ok]
        print(f"\ntargets: {len(results) - len(missed)} met, {len(missed)} missed"
              + (f" ({'; '.join(missed)})" if missed else ""))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
