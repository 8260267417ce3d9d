#!/usr/bin/env python3
"""The distributed search (mpirun -np N qpcheck verify --distributed) beside the threaded search, same model.

Rows: one process, --threads 2, and mpirun -np N for each N of --np; wall seconds (the whole job, mpirun's start
included), CPU seconds of the job (every rank: mpirun's children), states per wall second and the ratio to one
process. Ranks beyond os.cpu_count() are oversubscribed (they share cores), and the table says so: those rows
measure the protocol's overhead, not a speed-up. The counts must equal one process's (exit 1 otherwise).

Usage: distributed_compare.py --qpcheck PATH --repo DIR [--np 1,2,4] [--rdma NxM] [--repeat K]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import best_of, qpcheck_once  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qpcheck", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--np", default="1,2,4")
    ap.add_argument("--rdma", default="4x3")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    n, m = (int(x) for x in a.rdma.split("x"))
    spec = os.path.join(a.repo, "spec/bench/rdma_cm.qpspec")
    params = {"N": n, "M": m}
    cores = os.cpu_count()
    os.environ.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                       "OMPI_MCA_rmaps_base_oversubscribe": "1"})
    print(f"distributed search, rdma_cm N={n} M={m}; {cores} CPUs, load average {os.getloadavg()[0]:.2f}; best of "
          f"{a.repeat} (least wall seconds)")
    print(f"  {'run':<30} {'states':>11} {'wall s':>8} {'CPU s':>8} {'states/wall s':>13} {'vs 1':>6}")
    rows = [("one process", lambda: qpcheck_once(a.qpcheck, spec, params, [])),
            ("--threads 2", lambda: qpcheck_once(a.qpcheck, spec, params, ["--threads=2"]))]
    for np_ in [int(x) for x in a.np.split(",") if x]:
        note = f" (oversubscribed: {np_} ranks on {cores} cores)" if np_ > cores else ""
        binary = ["mpirun", "-np", str(np_), a.qpcheck]

        def run(binary=binary):
            # qpcheck_once prepends the binary: mpirun and its arguments stand in for it.
            return qpcheck_once(binary[0], spec, params, ["--distributed"], prefix=binary[1:])
        rows.append((f"mpirun -np {np_}{note}", run))
    base = None
    failed = False
    for name, fn in rows:
        runs = [fn() for _ in range(a.repeat)]
        r = best_of(name, runs)
        if base is None:
            base = r
        if r["states"] != base["states"] or r["transitions"] != base["transitions"]:
            print(f"  MISMATCH: {name} gives {r['states']:,} states, one process {base['states']:,}")
            failed = True
        sps = r["states"] / r["wall"] if r["wall"] > 0 else 0
        ratio = base["wall"] / r["wall"] if r["wall"] > 0 else 0
        print(f"  {name:<30} {r['states']:>11,} {r['wall']:>8.2f} {r['cpu']:>8.2f} {sps:>13,.0f} {ratio:>5.2f}x")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
