#!/usr/bin/python3
"""Simulated-scale etcd-v3 rendezvous (issue 28): rdzv_scale_bench's nodes against a real etcd.

Starts a 3-member etcd cluster on 127.0.0.1 (rdzv_etcd_bench.EtcdCluster: free ports, a temp
data dir), then for each N in --nodes runs

    rdzv_scale_bench --nodes N --processes P --backend etcd-v3 --endpoint MEMBERS
                     --running-seconds S [--lose-one] --timeout-seconds T

(each simulated node: its own etcd client, lease, generation and DynamicRendezvous, the agents'
real code and cadence) and prints the bench's JSON line with what etcd saw added: per phase
(open: leases and generations; join: round 0; running: S seconds of the running round; re-form:
after one node is lost) the gRPC requests by method summed over the members and the raft
proposals committed, each also per node, and the most watch streams and watchers etcd held at
once (sampled every 0.5 s from /metrics). The phases come from the bench's "phase" lines on
stderr. A fresh etcd per N (a clean key space and counters). Every wait is bounded.

    /usr/bin/python3 bench/rdzv_scale_etcd.py --bench build/bench/rdzv_scale_bench \
        --nodes 256,1024,4096 --processes 4 --running-seconds 10 --lose-one
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time

import benchlib
from rdzv_etcd_bench import ETCD, EtcdCluster, _die_with_parent, kill_and_reap

GAUGES = {  # etcd's names for what it holds at once
    "watch_streams": re.compile(r"^etcd_debugging_mvcc_watch_stream_total (\S+)$"),
    "watchers": re.compile(r"^etcd_debugging_mvcc_watcher_total (\S+)$"),
}
PHASE = re.compile(r"^rdzv_scale_bench: phase (\w+)$")


def gauges(etcd: EtcdCluster) -> dict:
    """The watch-stream and watcher gauges, summed over the members."""
    out = dict.fromkeys(GAUGES, 0)
    for _, text in etcd.metrics():
        for line in text.splitlines():
            for name, pattern in GAUGES.items():
                m = pattern.match(line)
                if m:
                    out[name] += int(float(m.group(1)))
    return out


class GaugeSampler(threading.Thread):
    """The largest gauge values seen while the bench runs."""

    def __init__(self, etcd: EtcdCluster):
        super().__init__(daemon=True)
        self.etcd, self.peak, self.done = etcd, dict.fromkeys(GAUGES, 0), threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            for name, value in gauges(self.etcd).items():
                self.peak[name] = max(self.peak[name], value)


def delta(after: dict, before: dict, nodes: int) -> dict:
    out = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    out = {k: v for k, v in out.items() if v}
    out["total"] = sum(v for k, v in out.items() if k != "proposals")
    out["per_node"] = round(out["total"] / nodes, 2)
    return out


def run_one(args, nodes: int) -> dict:
    etcd = EtcdCluster(args.etcd, 3, args.data_dir)
    try:
        etcd.start()
        argv = [args.bench, "--nodes", str(nodes), "--processes", str(min(args.processes, nodes)),
                "--backend", "etcd-v3", "--endpoint", etcd.endpoints(),
                "--running-seconds", str(args.running_seconds),
                "--keep-alive-ms", str(args.keep_alive_ms),
                "--timeout-seconds", str(args.timeout), "--json"]
        if args.lose_one:
            argv.append("--lose-one")
        sampler = GaugeSampler(etcd)
        sampler.start()
        marks = [("start", etcd.counters())]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=_die_with_parent)
        errors, warnings = [], 0
        deadline = time.monotonic() + 4 * args.timeout + args.running_seconds
        out_lines = []  # drained all along: a full pipe would stop the bench
        reader = threading.Thread(target=lambda: out_lines.extend(proc.stdout), daemon=True)
        reader.start()
        log = open(args.stderr, "a") if args.stderr else None
        for line in proc.stderr:
            if log:
                log.write(f"{time.monotonic():.3f} {line}")
            m = PHASE.match(line.strip())
            if m:
                marks.append((m.group(1), etcd.counters()))
            else:
                warnings += 1
                if len(errors) < 5:
                    errors.append(line.rstrip())
            if time.monotonic() > deadline:
                break
        if log:
            log.close()
        try:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            kill_and_reap([proc])
            raise RuntimeError(f"rdzv_scale_bench did not finish: {' '.join(argv)}")
        reader.join(timeout=5)
        out = "".join(out_lines)
        marks.append(("end", etcd.counters()))
        sampler.done.set()
        lines = [x for x in out.splitlines() if x.startswith("{")]
        result = json.loads(lines[-1]) if lines else {"nodes": nodes, "stdout": out[-500:]}
        result["returncode"] = proc.returncode
        result["etcd_phases"] = {name: delta(c, marks[i][1], nodes)
                                 for i, (name, c) in enumerate(marks[1:])}
        result["etcd_peak"] = sampler.peak
        if errors:
            result["first_errors"] = errors
            result["stderr_lines"] = warnings
        return result
    finally:
        etcd.stop()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench", default=os.path.join(benchlib.REPO_ROOT, "build", "bench",
                                                   "rdzv_scale_bench"))
    p.add_argument("--etcd", default=ETCD)
    p.add_argument("--nodes", default="256,1024")
    p.add_argument("--processes", type=int, default=4)
    p.add_argument("--running-seconds", type=float, default=10.0)
    p.add_argument("--lose-one", action="store_true")
    p.add_argument("--keep-alive-ms", type=int, default=5000,
                   help="the nodes' keep_alive_interval (the agents' default 5000)")
    p.add_argument("--timeout", type=float, default=120.0, help="the bench's --timeout-seconds")
    p.add_argument("--stderr", default=None,
                   help="append the bench's stderr here, each line after a monotonic time")
    p.add_argument("--data-dir", default=None)
    args = p.parse_args()
    if not os.access(args.bench, os.X_OK):
        p.error(f"rdzv_scale_bench not found at {args.bench} (use --bench PATH)")
    status = 0
    for n in (int(x) for x in args.nodes.split(",")):
        result = run_one(args, n)
        print(json.dumps(result), flush=True)
        status |= 1 if result["returncode"] != 0 else 0
    return status


if __name__ == "__main__":
    sys.exit(main())
