#!/usr/bin/env python3
"""The fault suite's plan (docs/faults.md): which program runs on which device pair with which fault, drawn from a
seed, so that every run can be made again. One line per run, read by tests/live/faults_payload.sh in the guest and by
tests/live/run_faults.sh to check each run's logs:

    RUN ID DEVICE PROGRAM FAULT SIDE AT_MS DURATION_MS ARG PORT GAP_MS

DEVICE: rxe (rxe0 on vethA0 <-> rxe1 on vethA1) or siw (siw0/vethB0 <-> siw1/vethB1). PROGRAM: ulp (our
ulp_resilient), rping, rdma_sc (rdma_server/rdma_client). FAULT and its fields:
    none          -
    loss          ARG: netem loss percent, both wire ends
    delay         ARG: netem delay ms (jitter a quarter of it), both ends
    reorder       ARG: percent of packets sent at once while the rest wait 10 ms (netem reorder), both ends
    duplicate     ARG: netem duplicate percent, both ends
    linkdown      SIDE's wire end down at AT_MS after the client starts, up DURATION_MS later
    addrdel       SIDE's address removed at AT_MS, back DURATION_MS later
    devremove     SIDE's RDMA device removed (`rdma link delete`) at AT_MS, re-added after the run
    kill          SIDE's process SIGKILLed right after its ARG-th recorded call (QPCHECK_RECORD_KILL_AT)
    smallcq       the client asks for CQs of ARG entries (ulp --cqe)
rping and rdma_server/rdma_client get the network faults only (none, loss, delay, reorder, duplicate): their specs
(spec/15, spec/16) describe their healthy paths, not the error paths they take when a connection fails.

    fault_plan.py --runs N --seed S        N runs per device (the CI sample: 40; the long run: 300)
"""
import argparse
import random

ULP_FAULTS = [("none", 1), ("loss", 2), ("delay", 1), ("reorder", 1), ("duplicate", 1), ("linkdown", 2),
              ("addrdel", 1), ("devremove", 2), ("kill", 3), ("smallcq", 1)]
NET_FAULTS = [("none", 1), ("loss", 2), ("delay", 1), ("reorder", 1), ("duplicate", 1)]


def pick(rng, weighted):
    total = sum(w for _, w in weighted)
    x = rng.uniform(0, total)
    for name, w in weighted:
        x -= w
        if x <= 0:
            return name
    return weighted[-1][0]


def plan(runs, seed):
    rng = random.Random(seed)
    lines = []
    port = 7100
    run_id = 0
    for i in range(runs):
        for device in ("rxe", "siw"):
            run_id += 1
            port += 1
            program = "ulp" if rng.random() < 0.7 else rng.choice(["rping", "rdma_sc"])
            fault = pick(rng, ULP_FAULTS if program == "ulp" else NET_FAULTS)
            side = rng.choice(["server", "client"])
            at_ms = rng.randint(150, 1400)
            duration = rng.randint(300, 2500)
            gap = rng.randint(200, 700)
            arg = 0
            if fault == "loss":
                arg = rng.randint(2, 30) if program == "ulp" else rng.randint(2, 10)
            elif fault == "delay":
                arg = rng.randint(2, 40)
            elif fault == "reorder":
                arg = rng.randint(10, 50)
            elif fault == "duplicate":
                arg = rng.randint(2, 30)
            elif fault == "kill":
                arg = rng.randint(1, 28)
            elif fault == "smallcq":
                arg = 1
            lines.append(f"RUN {run_id} {device} {program} {fault} {side} {at_ms} {duration} {arg} {port} {gap}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=40, help="runs per device")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.runs < 1 or a.runs > 10000:
        ap.error(f"--runs {a.runs}: expected 1..10000")
    print("\n".join(plan(a.runs, a.seed)))


if __name__ == "__main__":
    main()
