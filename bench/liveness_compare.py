#!/usr/bin/env python3
"""Liveness verdicts, qpcheck against SPIN, on the same models (issue 19; the models are in bench/liveness/).

Each model is written twice, as a qpspec without imports and as Promela that follows it line for line (README.md
there). For every model, parameter setting, property and fairness setting the script runs `qpcheck verify` and SPIN's
acceptance-cycle search, prints one table row with both verdicts, state counts and seconds, and "agree" or
"DISAGREE"; it exits 1 if any row disagrees, 2 if both tools agree on a verdict that is not the expected one (each
model's expected verdicts are written below, with the reason in the model's header), 0 otherwise.

Fairness settings and how each tool is told:
  none    qpcheck verify --no-fairness                 SPIN: ./pan -a -N PROP
  weak    the spec's own `fair weak ...;` (every       SPIN: ./pan -a -f -N PROP (-f: weak fairness of every process)
          process, each instance its own unit)
  strong  the spec's `fair` line replaced by the       SPIN: ./pan -a -f -N PROP_strong, where PROP_strong is
          model's strong line (a copy of the spec in     (SF(p) && ...) -> PROP with SF(p) = []<> enabled(p) ->
          a temporary folder; the models import         []<> (_last == p). SPIN's -f is weak fairness only, so strong
          nothing, so the copy means the same)          fairness is an LTL assumption on the processes the model's
                                                         strong line names; -f keeps the others weakly fair.
SPIN 6.5.2 translates an LTL formula with three SF conjuncts into a never claim only after minutes (two: 0.3 s), so
strong settings are listed only for models with at most two strongly fair processes.

Both tools check exactly: SPIN is compiled with -DNOREDUCE (no partial-order reduction; enabled() and _last need it
anyway), qpcheck runs its default exact liveness search. The states are not expected to be equal: qpcheck counts the
product of the reachable states with its one-bit property monitor (for `eventually P` only the states before P holds
are expanded), SPIN the product with the never claim and, under -f, with its fairness counter copies ("states,
stored"). Seconds are wall seconds of the search process (qpcheck verify from start-up to report; ./pan), the least
of --repeat runs; SPIN's generation and C compilation are timed once and shown in the "build s" column.

Usage: liveness_compare.py --qpcheck PATH --repo DIR [--only MODEL] [--phil N,...] [--repeat K]
"""
import argparse
import itertools
import json
import os
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # importing compare.py must not leave bench/__pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import Meter, num, sh  # noqa: E402  (bench/compare.py: per-child timing, output parsing)

# --------------------------------------------------------------------------------------------------- the models
# params: name -> values (qpspec values; `defines` maps a setting to spin -D defines; `procs` is its number of Promela
# processes, for pan's NFAIR). props: qpspec property ->
# Promela ltl name. expected(setting, prop, fairness) -> "holds" | "violated": the verdict argued in the model's header.


def _rnr_expected(s, prop, fairness):
    if s["rnr_retry"] == 7 and not s["repost"]:
        return "violated"  # the NAK/retry livelock, fair to every process
    if s["rnr_retry"] == 7 and fairness == "none":
        return "violated"  # repost, but the responder starved while the NAK loop runs
    return "holds"         # rnr_retry < 7: the retries run out, the WRs flush


def _toggle_expected(s, prop, fairness):
    return "holds" if fairness == "strong" else "violated"


def _phil_expected(s, prop, fairness):
    if prop == "someone_eats":
        return "holds"     # at most two steps without someone eating, and no deadlock: no fairness needed
    if prop == "p0_hungry_eats" and s["N"] == 2:
        return "holds"     # philosopher 0 holds fork 0, which philosopher 1 takes first: it alone can move
    return "holds" if fairness == "strong" else "violated"


MODELS = {
    "rnr_livelock": {
        "params": {"rnr_retry": [7, 3], "repost": [False, True]},
        "defines": lambda s: {"RNR_RETRY": s["rnr_retry"], "REPOST": int(s["repost"])},
        "procs": lambda s: 3,
        "props": ["sends_complete"],
        # Strong fairness would need SF of three processes in SPIN (see the docstring): not listed.
        "fairness": lambda s: ["none", "weak"],
        "strong_line": None,
        "expected": _rnr_expected,
    },
    "toggle": {
        "params": {},
        "defines": lambda s: {},
        "procs": lambda s: 2,
        "props": ["finishes"],
        "fairness": lambda s: ["none", "weak", "strong"],
        "strong_line": ("fair weak toggler, worker;", "fair weak toggler; fair strong worker;"),
        "expected": _toggle_expected,
    },
    "phil_starvation": {
        "params": {"N": [2, 3]},
        "defines": lambda s: {"N": s["N"]},
        "procs": lambda s: s["N"],
        "props": ["p0_eats", "p0_hungry_eats", "someone_eats"],
        # phil_starvation.pml writes the strong formulas for N = 2 only (two SF conjuncts).
        "fairness": lambda s: ["none", "weak", "strong"] if s["N"] == 2 else ["none", "weak"],
        "strong_line": ("fair weak phil;", "fair strong phil;"),
        "expected": _phil_expected,
    },
}


def settings(model):
    names = list(model["params"])
    for values in itertools.product(*(model["params"][n] for n in names)):
        yield dict(zip(names, values))


def qp_value(v):
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def describe(s):
    return " ".join(f"{k}={qp_value(v)}" for k, v in s.items()) or "-"


# --------------------------------------------------------------------------------------------------- the tools

def strong_copy(work, spec, line):
    """A copy of `spec` in a folder of its own with its weak `fair` line replaced by the strong one."""
    old, new = line
    text = open(spec).read()
    if text.count(old + "\n") != 1:
        raise SystemExit(f"liveness: {spec} must have the line '{old}' exactly once")
    d = tempfile.mkdtemp(dir=work)
    path = os.path.join(d, os.path.basename(spec))
    open(path, "w").write(text.replace(old + "\n", new + "\n"))
    return path


def run_qpcheck(binary, spec, s, prop, fairness):
    cmd = [binary, "verify", spec, "--format", "json", "--property", prop]
    cmd += [f"--param={k}={qp_value(v)}" for k, v in s.items()]
    if fairness == "none":
        cmd.append("--no-fairness")
    r = Meter.run(cmd)
    try:
        rep = json.loads(r["out"][r["out"].index("{"):])
    except ValueError:
        sys.stderr.write(r["out"])
        raise SystemExit(f"liveness: qpcheck did not print a JSON report: {' '.join(cmd)}")
    verdict = rep.get("verdict")
    if verdict == "violated":
        v = rep.get("violation", {})
        if v.get("property") != prop:
            verdict = f"violated {v.get('property')}"  # a safety property (deadlock, runtime_error) first
        states = rep["stats"]["states"]                # the liveness search's product states
    else:
        live = [l for l in rep.get("liveness", []) if l["property"] == prop]
        states = live[0]["states"] if live else None
        if not live and verdict == "holds":
            verdict = "not checked"
    return {"verdict": verdict, "states": states, "wall": r["wall"]}


def build_spin(work, pml, defines, procs):
    """Generates and compiles pan for `pml` with `defines`; returns (folder, seconds, the names of its ltl claims)."""
    d = tempfile.mkdtemp(dir=work)
    shutil.copy(pml, d)
    gen = Meter.run(["spin"] + [f"-D{k}={v}" for k, v in defines.items()] + ["-a", os.path.basename(pml)], cwd=d)
    # -f keeps a fairness counter of NFAIR bytes; pan refuses -f when processes + claim + 1 >= 4 * NFAIR.
    nfair = max(2, (procs + 2) // 4 + 1)
    cc = Meter.run(["gcc", "-O2", "-DNOREDUCE", f"-DNFAIR={nfair}", "-DMEMLIM=4096", "-o", "pan", "pan.c"], cwd=d) \
        if gen["code"] == 0 else gen
    if cc["code"] != 0:
        sys.stderr.write(cc["out"])
        raise SystemExit(f"liveness: spin/gcc failed for {pml} {defines}")
    # spin -a prints each ltl block it translates as "ltl NAME: formula" (those #if keeps).
    claims = re.findall(r"(?m)^ltl (\w+):", gen["out"])
    return d, gen["wall"] + cc["wall"], claims


def run_spin(d, claims, claim, fairness):
    if claim not in claims:
        raise SystemExit(f"liveness: the Promela model has no ltl {claim} (it has {', '.join(claims)})")
    # -N only with several claims (pan warns and ignores it otherwise).
    # -m: the DFS depth bound; a search that hits it is run again with a ten times deeper stack (pan's -f search of
    # 16 philosophers needs more than 10^6), at most 10^7 (about 530 MB of stack).
    for depth in (1_000_000, 10_000_000):
        cmd = ["./pan", "-a", f"-m{depth}"] + (["-N", claim] if len(claims) > 1 else [])
        cmd += ["-f"] if fairness != "none" else []
        r = Meter.run(cmd, cwd=d)
        out = r["out"]
        if "max search depth too small" not in out:
            break
    errors = num(r"errors: (\d+)", out)
    if errors is None or "max search depth too small" in out or "cannot find claim" in out or "-N ignored" in out:
        sys.stderr.write(out)
        raise SystemExit(f"liveness: SPIN run failed or was truncated: {' '.join(cmd)} in {d}")
    # pan names the claim it checks when the model has several; make sure it is the one asked for.
    if "pan: ltl formula" in out and f"pan: ltl formula {claim}\n" not in out:
        sys.stderr.write(out)
        raise SystemExit(f"liveness: SPIN checked another claim than {claim}")
    return {"verdict": "violated" if errors else "holds", "states": num(r"(\d+) states, stored", out),
            "wall": r["wall"]}


def best(runs):
    verdicts = {(r["verdict"], r["states"]) for r in runs}
    if len(verdicts) != 1:
        raise SystemExit(f"liveness: repeated runs differ: {sorted(verdicts, key=str)}")
    out = dict(runs[0])
    out["wall"] = min(r["wall"] for r in runs)
    return out


# --------------------------------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qpcheck", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--only", choices=sorted(MODELS))
    ap.add_argument("--phil", help="philosopher counts for phil_starvation, e.g. 2,3,6 (default 2,3; the strong "
                                   "setting is checked for N = 2 only)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool and row; the least wall seconds counts")
    a = ap.parse_args()
    if a.repeat < 1:
        raise SystemExit(f"liveness: --repeat must be at least 1, not {a.repeat}")
    if a.phil:
        MODELS["phil_starvation"]["params"]["N"] = [int(x) for x in a.phil.split(",")]
    folder = os.path.join(a.repo, "bench", "liveness")
    work = tempfile.mkdtemp(prefix="qplive-")
    print(f"liveness: qpcheck vs SPIN 6 (acceptance cycles, -DNOREDUCE), {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}; wall seconds of the search process, least of {a.repeat}")
    head = (f"{'model':<16} {'setting':<24} {'property':<15} {'fairness':<8} {'expected':<9} "
            f"{'qpcheck':<9} {'states':>7} {'s':>6}   {'SPIN':<9} {'states':>7} {'s':>6} {'build s':>7}   result")
    print(head)
    print("-" * len(head))
    disagree = unexpected = 0
    try:
        for name, model in MODELS.items():
            if a.only and name != a.only:
                continue
            spec = os.path.join(folder, name + ".qpspec")
            pml = os.path.join(folder, name + ".pml")
            strong_spec = strong_copy(work, spec, model["strong_line"]) if model["strong_line"] else None
            for s in settings(model):
                d, build_s, claims = build_spin(work, pml, model["defines"](s), model["procs"](s))
                for prop in model["props"]:
                    for fairness in model["fairness"](s):
                        qspec = strong_spec if fairness == "strong" else spec
                        claim = prop + "_strong" if fairness == "strong" else prop
                        q = best([run_qpcheck(a.qpcheck, qspec, s, prop, fairness) for _ in range(a.repeat)])
                        p = best([run_spin(d, claims, claim, fairness) for _ in range(a.repeat)])
                        want = model["expected"](s, prop, fairness)
                        if q["verdict"] != p["verdict"]:
                            result = "DISAGREE"
                            disagree += 1
                        elif q["verdict"] != want:
                            result = "agree, UNEXPECTED"
                            unexpected += 1
                        else:
                            result = "agree"
                        print(f"{name:<16} {describe(s):<24} {prop:<15} {fairness:<8} {want:<9} "
                              f"{q['verdict']:<9} {q['states'] if q['states'] is not None else '-':>7} "
                              f"{q['wall']:>6.3f}   {p['verdict']:<9} {p['states']:>7} {p['wall']:>6.3f} "
                              f"{build_s:>7.2f}   {result}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{disagree} disagreement(s), {unexpected} agreed verdict(s) other than expected")
    if disagree:
        sys.exit(1)
    if unexpected:
        sys.exit(2)


if __name__ == "__main__":
    main()
