#!/usr/bin/env python3
"""Symmetry reduction, measured: states before and after, and qpcheck beside Rumur's scalarsets.

Models:
  rdma_cm  spec/bench/rdma_cm_symmetric.qpspec (the reference model, its N connections symmetric) against
           bench/models/rdma_cm.m, whose conn_t is a scalarset: Rumur with --symmetry-reduction exhaustive (exact
           canonical form, as qpcheck's within its budget) and off. SPIN has no symmetry reduction.
  srq      the library: spec/12_two_clients_srq.qpspec (clients, handlers and a shared SRQ) with `symmetric Conn;`,
           connections = 2, 3, 4.
Each row: states, transitions, wall and CPU seconds (best of --repeat), peak RSS; then the reduction factor (states
without / with symmetry) and the CPU ratio. Unreduced searches above --unreduced-max connections are skipped (rdma_cm
N=5 M=2 is 34^5 = 45 M states).

Usage: symmetry_compare.py --qpcheck PATH --repo DIR [--rdma N,N,...] [--srq N,N,...] [--repeat K]
                           [--unreduced-max N] [--peers-max N] [--no-peers]
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import Meter, best_of, qpcheck_once, rumur  # noqa: E402


def row(name, r):
    sps = r["states"] / r["cpu"] if r["cpu"] > 0 else 0
    print(f"  {name:<34} {r['states']:>11,} {r['transitions'] or 0:>12,} {r['wall']:>8.2f} {r['cpu']:>8.2f} "
          f"{sps:>11,.0f} {r['rss'] / 2**20:>9.1f}")


def best(tool, run, repeat):
    return best_of(tool, [run() for _ in range(repeat)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qpcheck", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--rdma", default="3,4,5", help="connection counts of the reference model (M=2)")
    ap.add_argument("--srq", default="2,3,4", help="connection counts of the library model (spec/12)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--unreduced-max", type=int, default=4)
    ap.add_argument("--no-peers", action="store_true", help="qpcheck only")
    ap.add_argument("--peers-max", type=int, default=4,
                    help="run Rumur up to this many connections (its exhaustive canonicalisation at N=5 takes minutes)")
    a = ap.parse_args()
    q = a.qpcheck
    print(f"symmetry reduction; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; best of "
          f"{a.repeat} runs")
    print(f"  {'tool':<34} {'states':>11} {'transitions':>12} {'wall s':>8} {'CPU s':>8} {'states/CPU s':>11} "
          f"{'RSS MiB':>9}")
    failed = False
    with tempfile.TemporaryDirectory() as work:
        sym_spec = os.path.join(a.repo, "spec/bench/rdma_cm_symmetric.qpspec")
        for n in [int(x) for x in a.rdma.split(",") if x]:
            print(f"rdma_cm N={n} connections x M=2 RPCs")
            params = {"N": n, "M": 2}
            with_sym = best("qpcheck", lambda: qpcheck_once(q, sym_spec, params, []), a.repeat)
            row("qpcheck symmetric Conn", with_sym)
            without = None
            if n <= a.unreduced_max:
                without = best("qpcheck", lambda: qpcheck_once(q, sym_spec, params, ["--no-symmetry"]), a.repeat)
                row("qpcheck --no-symmetry", without)
            if not a.no_peers and n <= a.peers_max:
                model = os.path.join(a.repo, "bench/models/rdma_cm.m")
                ex = best("rumur", rumur(work, model, {"N": n, "M": 2}, "exhaustive"), a.repeat)
                row("rumur --symmetry-reduction exhaustive", ex)
                if ex["states"] != with_sym["states"]:
                    print(f"    MISMATCH: qpcheck stores {with_sym['states']:,} orbits, Rumur {ex['states']:,}")
                    failed = True
                else:
                    print(f"    same orbit count as Rumur; qpcheck/Rumur states per CPU s: "
                          f"x{(with_sym['states'] / with_sym['cpu']) / (ex['states'] / ex['cpu']):.2f}")
                if n <= a.unreduced_max:
                    off = best("rumur", rumur(work, model, {"N": n, "M": 2}, "off"), a.repeat)
                    row("rumur --symmetry-reduction off", off)
            if without:
                print(f"    reduction x{without['states'] / with_sym['states']:.1f} states, "
                      f"x{without['cpu'] / with_sym['cpu']:.1f} CPU, x{without['rss'] / with_sym['rss']:.1f} RSS "
                      f"(N! = {__import__('math').factorial(n)})")
        srq = os.path.join(work, "srq_symmetric.qpspec")
        with open(srq, "w") as f:
            f.write(f'import "{os.path.join(a.repo, "spec/12_two_clients_srq.qpspec")}";\nsymmetric Conn;\n')
        for n in [int(x) for x in a.srq.split(",") if x]:
            print(f"library: spec/12 (clients, handlers, one SRQ), connections={n}")
            params = {"connections": n}
            with_sym = best("qpcheck", lambda: qpcheck_once(q, srq, params, []), a.repeat)
            row(f"qpcheck symmetric Conn ({with_sym['verdict']})", with_sym)
            if n <= a.unreduced_max:
                without = best("qpcheck", lambda: qpcheck_once(q, srq, params, ["--no-symmetry"]), a.repeat)
                row(f"qpcheck --no-symmetry ({without['verdict']})", without)
                if without["verdict"] != with_sym["verdict"]:
                    print("    MISMATCH: the verdicts differ")
                    failed = True
                print(f"    reduction x{without['states'] / with_sym['states']:.1f} states, "
                      f"x{without['cpu'] / with_sym['cpu']:.1f} CPU")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
