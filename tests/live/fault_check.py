#!/usr/bin/env python3
"""The fault suite's checks (docs/faults.md), on a directory the VM run left (tests/live/run_faults.sh).

    fault_check.py --qpcheck BIN --dir DIR [--verify-limit SECONDS] [--threads N]

DIR holds `console` (the payload's QPCHECK-FAULT-* lines) and `logs/ID.{server,client}.jsonl`. Two checks:

1. The ULP's spec (tests/live/specs/ulp_resilient.qpspec) is verified under every fault configuration the runs
   used (the fault's parameters, the device's transport): every property must hold. A search the time limit ends
   is reported INCONCLUSIVE (the largest configurations, a link down with its port events, need the long mode).
2. Every run is checked with `qpcheck conform` against its program's spec with the fault's parameters: it must
   CONFORM, or be a PREFIX (a killed program), or (rping) VIOLATE at its rdma_destroy_id as every rping run does.
   A program ended by a signal we did not send is a failure; one the payload's 30 s timeout ended is a hang,
   allowed (and reported) for rping and rdma_server/rdma_client under a network fault, which have no timeouts of
   their own, never for ulp_resilient, which has. Without a fault a hang is allowed only as the siw accept backlog
   (docs/faults.md): on siw, with the server's TCP socket holding bytes its QP never read (the payload's look at
   /proc/net/tcp 3 s before the timeout), and the logs conforming to the spec with mpa_accept_backlog=UNTIL_NEXT_FRAME
   (which every siw run is checked with).

Writes DIR/summary.json (one row per run) and DIR/verify.json; prints a table of runs per device, program, fault
and verdict. Exit 0 when every check is as required, 1 otherwise, 2 for bad arguments or an unreadable DIR.
"""
import argparse
import collections
import json
import os
import subprocess
import sys

SPEC = {"ulp": "tests/live/specs/ulp_resilient.qpspec", "rping": "spec/15_rping.qpspec",
        "rdma_sc": "spec/16_rdma_server_client.qpspec"}
NET = ["cm_timeouts=true", "path_faults=true"]
# What each injected fault can make happen, in the library's parameters (docs/faults.md "Faults and parameters").
PARAMS = {"none": [], "loss": NET, "delay": NET, "reorder": NET, "duplicate": NET,
          "linkdown": NET + ["port_faults=true"], "addrdel": NET, "devremove": ["device_removal=true"],
          "kill": ["process_exits=true"], "smallcq": []}
# On RoCE (rxe) a removed address changes the GID table: the library's address_removal (IBV_EVENT_GID_CHANGE,
# rdma_connect EINVAL). A link down was never seen to (no GID_CHANGE in the link-down runs).
ROCE_EXTRA = {"addrdel": ["address_removal=true"]}
NET_FAULTS = ("loss", "delay", "reorder", "duplicate", "linkdown", "addrdel")


def read_console(path):
    runs, results, kernel, events = [], {}, collections.defaultdict(list), collections.defaultdict(list)
    tcp = collections.defaultdict(list)
    for line in open(path, errors="replace").read().splitlines():
        f = line.split()
        if not f:
            continue
        if f[0] == "QPCHECK-FAULT-RUN" and len(f) >= 9:
            runs.append(dict(id=f[1], dev=f[2], prog=f[3], fault=f[4], side=f[5], at=f[6], dur=f[7], arg=f[8],
                             port=f[9] if len(f) > 9 else ""))
        elif f[0] == "QPCHECK-FAULT-RESULT":
            results[f[1]] = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in f[2:] if "=" in kv}
        elif f[0] == "QPCHECK-FAULT-KERNEL":
            kernel[f[1]].append(" ".join(f[2:]))
        elif f[0] == "QPCHECK-FAULT-EVENT":
            events[f[1]].append(" ".join(f[2:]))
        elif f[0] == "QPCHECK-FAULT-DIAG" and len(f) >= 11 and f[2] == "tcp:":
            # tcp: local ADDR:PORT remote ADDR:PORT st ST tx_queue:rx_queue TX:RX (hex, /proc/net/tcp)
            try:
                tx, rx = (int(x, 16) for x in f[10].split(":"))
                tcp[f[1]].append(dict(local_port=int(f[4].split(":")[1], 16), st=f[8], tx=tx, rx=rx))
            except (ValueError, IndexError):
                pass
    return runs, results, kernel, events, tcp


def unread_bytes(r, sockets):
    """Bytes the run's server-side connected socket held unread 3 s before the timeout (0: none, or no look)."""
    try:
        port = int(r["port"])
    except ValueError:
        return 0
    return sum(t["rx"] for t in sockets if t["local_port"] == port and t["st"] == "01")


def run_params(r, logs):
    """The library parameters a run is checked with: its fault's, the device's transport, the client's CQ depth."""
    params = list(PARAMS[r["fault"]] if r["prog"] == "ulp" else [])
    if r["dev"] == "rxe" and r["prog"] == "ulp":
        params += ROCE_EXTRA.get(r["fault"], [])
    if r["dev"] == "siw":
        # siw leaves frames that reach the socket during rdma_accept unread (lib/mpa.qpspec mpa_accept_backlog), and
        # may flush the QP before it reads frames that arrive with the peer's FIN (lib/cm.qpspec iw_peer_close)
        params += ["transport=IWARP", "mpa_accept_backlog=UNTIL_NEXT_FRAME", "iw_peer_close=RACES_DATA"]
    if r["fault"] == "smallcq" and os.path.exists(logs[1]):
        # the CQ the provider gave for the client's --cqe (ibv_create_cq's cqe_actual)
        depth = None
        for line in open(logs[1], errors="replace"):
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if j.get("call") == "ibv_create_cq" and "cqe_actual" in j:
                depth = j["cqe_actual"] if depth is None else min(depth, j["cqe_actual"])
        if depth:
            params.append(f"active_cq_depth={max(1, min(16, depth))}")
    return params


def verify_configs(qp, configs, limit, threads):
    """Verifies the ULP's spec under each configuration; returns (rows, failures)."""
    rows, bad = [], 0
    for params in sorted(configs):
        cmd = [qp, "verify", SPEC["ulp"], "--format", "json", "--time-limit", str(limit), "--threads", str(threads)]
        for p in params:
            cmd += ["--param", p]
        p = subprocess.run(cmd, capture_output=True, text=True)
        try:
            j = json.loads(p.stdout)
            verdict = j["verdict"].upper()
            states = j["stats"]["states"]
            seconds = j["stats"].get("seconds", 0)
            detail = j.get("violation", {}).get("property", "") if verdict == "VIOLATED" else j.get("limit", "")
        except (ValueError, KeyError):
            verdict, states, seconds = "ERROR", 0, 0
            detail = (p.stderr.strip().splitlines() or ["?"])[-1][:300]
        ok = verdict in ("HOLDS", "INCONCLUSIVE")
        bad += not ok
        rows.append(dict(params=list(params), verdict=verdict, states=states, seconds=seconds, detail=detail, ok=ok))
        print(f"faults: verify {' '.join(params) or '(no fault)'}: {verdict} {states} states {seconds:.1f} s"
              + (f" ({detail})" if detail else ""))
    return rows, bad


def conform_run(qp, out, r, params, result, kernel, events, sockets):
    logs = [os.path.join(out, "logs", f"{r['id']}.{s}.jsonl") for s in ("server", "client")]
    present = [p for p in logs if os.path.exists(p) and os.path.getsize(p) > 0]
    rep = os.path.join(out, "logs", f"{r['id']}.report.json")
    if not present:
        verdict, detail = "NO-LOGS", "no call log was recorded"
    else:
        # A program the suite's 30 s timeout ended (rping, rdma_server/rdma_client: a hang, below) was killed: what
        # its peer saw afterwards is the kernel's release of its cm_id and QP (process_exits), and its log has no
        # trailer (the check reads it as cut there).
        timed_out = [s for s in ("client", "server") if result.get(s, 0) in (124, 143)]
        if timed_out and r["prog"] != "ulp" and "process_exits=true" not in params:
            params = params + ["process_exits=true"]
        # --max-states: a link-down run on rxe (port_faults with local_route_errors) needs about 1.5 million model
        # states at its widest point (seed 1 run 67: 1,481,596 in 18 s), above conform's default of one million.
        cmd = ([qp, "conform", SPEC[r["prog"]]] + present + sum((["--param", p] for p in params), [])
               + ["--max-states", "10000000"])
        p = subprocess.run(cmd + ["--format", "json"], capture_output=True, text=True)
        open(rep, "w").write(p.stdout)
        try:
            j = json.loads(p.stdout)
            verdict = j["verdict"]
            o = j.get("observed") or {}
            detail = f"event {j['event']}: {o.get('source', '').split('/')[-1]} {o.get('call', '')}"
            if verdict == "DEVIATES":
                detail += " allowed: " + "; ".join(", ".join(a["ops"]) for a in j.get("allowed", [])[:6])
            if verdict == "VIOLATES":
                detail += f" ({j.get('property')})"
        except (ValueError, KeyError):
            verdict, detail = "ERROR", (p.stderr.strip().splitlines() or ["?"])[-1][:300]
    ok = verdict in ("CONFORMS", "PREFIX") or (r["prog"] == "rping" and verdict == "VIOLATES")
    hung = [s for s in ("client", "server") if result.get(s, 0) in (124, 143)]
    unread = unread_bytes(r, sockets)
    # the siw accept backlog: the server hangs with the client's request in its socket, unread
    backlog = bool(hung) and r["dev"] == "siw" and r["prog"] != "ulp" and "server" in hung and unread > 0
    is_hung = bool(hung) and r["prog"] != "ulp" and (r["fault"] in NET_FAULTS or backlog)
    if is_hung:
        detail += f"; hung: {'/'.join(hung)} ended by the 30 s timeout"
    if backlog:
        detail += f" (siw accept backlog: {unread} bytes unread in the server's socket)"
    crashed = [s for s in ("client", "server") if result.get(s, 0) >= 128
               and not (r["fault"] == "kill" and s == r["side"]) and not (is_hung and s in hung)]
    if crashed and r["fault"] != "devremove":
        ok = False
        detail += f"; {'/'.join(crashed)} ended by a signal (exit {', '.join(str(result[s]) for s in crashed)})"
    if kernel:
        detail += f"; kernel: {kernel[0][:160]}"
    # A run without a fault must have connected on both sides and ended by itself: one that did not ran on a broken
    # wire (the environment, not the program), and the faulted runs around it cannot be trusted either. The program's
    # exit code is its own judgement, which conform has checked: ulp_resilient exits 3 when the client's orderly
    # disconnect flushes the server's spare receive before the server takes DISCONNECTED (seed 3 run 544, siw).
    established = [p for p in logs if os.path.exists(p) and "RDMA_CM_EVENT_ESTABLISHED" in open(p, errors="replace").read()]
    # (the accept backlog's timed-out server excepted: it did not end by itself, for the reason shown above)
    excused = hung if backlog else []
    if r["fault"] == "none" and (len(established) < 2 or any((result.get(s, 124) in (124, 143) or result.get(s, 0) >= 128)
                                                            and s not in excused for s in ("client", "server"))):
        ok = False
        detail += "; a run without a fault did not connect or did not end by itself (the wire or a device is broken)"
    return dict(r, verdict=verdict, ok=ok, hung=is_hung, backlog=backlog, detail=detail, params=params, exit=result,
                events=events, connected=len(established) == 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qpcheck", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--verify-limit", type=float, default=120.0)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.dir, "console")):
        print(f"faults: {a.dir}: no console file (not a directory run_faults.sh --keep wrote?)", file=sys.stderr)
        return 2
    runs, results, kernel, events, tcp = read_console(os.path.join(a.dir, "console"))
    logs_of = {r["id"]: [os.path.join(a.dir, "logs", f"{r['id']}.{s}.jsonl") for s in ("server", "client")]
               for r in runs}
    params_of = {r["id"]: run_params(r, logs_of[r["id"]]) for r in runs}
    configs = {tuple(params_of[r["id"]]) for r in runs if r["prog"] == "ulp"}
    vrows, vbad = verify_configs(a.qpcheck, configs, a.verify_limit, a.threads)
    json.dump(vrows, open(os.path.join(a.dir, "verify.json"), "w"), indent=1)
    rows = [conform_run(a.qpcheck, a.dir, r, params_of[r["id"]], results.get(r["id"], {}), kernel.get(r["id"], []),
                        events.get(r["id"], []), tcp.get(r["id"], [])) for r in runs]
    json.dump(rows, open(os.path.join(a.dir, "summary.json"), "w"), indent=1)
    count = collections.Counter((x["dev"], x["prog"], x["fault"],
                                 x["verdict"] + ("/BACKLOG" if x["backlog"] else "/HUNG" if x["hung"] else ""))
                                for x in rows)
    print(f"{'device':<6} {'program':<8} {'fault':<10} {'verdict':<14} runs")
    for k in sorted(count):
        print(f"{k[0]:<6} {k[1]:<8} {k[2]:<10} {k[3]:<14} {count[k]}")
    bad = sum(not x["ok"] for x in rows)
    for x in rows:
        if not x["ok"]:
            print(f"faults: run {x['id']} ({x['dev']} {x['prog']} {x['fault']} {x['side']} arg={x['arg']}): "
                  f"{x['verdict']} {x['detail']}")
    for dev in sorted({x["dev"] for x in rows}):
        mine = [x for x in rows if x["dev"] == dev]
        print(f"faults: {dev}: {sum(x['connected'] for x in mine)} of {len(mine)} runs connected (ESTABLISHED on both "
              "sides)")
    per = collections.Counter((x["dev"], x["verdict"]) for x in rows)
    print("faults: " + ", ".join(f"{d} {v} {n}" for (d, v), n in sorted(per.items())))
    inconclusive = sum(v["verdict"] == "INCONCLUSIVE" for v in vrows)
    print(f"faults: spec verified under {len(vrows)} configurations: {len(vrows) - vbad - inconclusive} hold, "
          f"{inconclusive} inconclusive (time limit), {vbad} not")
    print(f"faults: {len(rows)} runs, {len(rows) - bad} as required, {bad} not")
    return 1 if bad or vbad or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
