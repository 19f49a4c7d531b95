#!/usr/bin/python3
"""Multi-node rendezvous benchmark: N agents on loopback, c10d, one no-op worker each.

For each N in --nodes, starts N agents of one launcher at once,

    <launcher> --nnodes N --rdzv_backend c10d --rdzv_endpoint 127.0.0.1:PORT --rdzv_id bench
               --nproc_per_node 1 [launcher flags] --no_python /bin/true

and measures the wall time from starting the first agent to the exit of the last one (all
must exit 0). ddprun agents also get --local_addr 127.0.0.<k+2> (distinct node addresses);
torchrun-patched gets --monitor_interval 0.1 and --rdzv_conf join_timeout=<--join-timeout>.
Launchers alternate run by run; torchrun only up to --torchrun-max-nodes (it is slow).
Prints a Markdown table (median/min/max of --runs runs).

    /usr/bin/python3 bench/multinode_bench.py --ddprun build/src/ddprun --runs 3
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import benchlib

RUN_ID = "bench"
POLL_SECONDS = 0.002
WORKER = ["--nproc_per_node", "1", "--no_python", "/bin/true"]


@dataclass
class Launcher:
    name: str
    argv: list  # executable + launcher-only flags
    max_nodes: int
    per_node: object  # k -> extra flags for agent k


@dataclass
class Cell:
    launcher: str
    nodes: int
    walls: list = field(default_factory=list)
    failures: list = field(default_factory=list)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ddprun", default=benchlib.DEFAULT_DDPRUN, help="path of the ddprun binary")
    p.add_argument("--nodes", default="4,8,16,64", help="comma-separated agent counts")
    p.add_argument("--runs", type=int, default=3, help="timed runs per launcher and N (>= 1)")
    p.add_argument("--torchrun-max-nodes", type=int, default=16,
                   help="largest N run with torchrun (0: skip torchrun)")
    p.add_argument("--timeout", type=float, default=60.0, help="ddprun per-run limit, seconds")
    p.add_argument("--torchrun-timeout", type=float, default=120.0,
                   help="torchrun per-run limit, seconds")
    p.add_argument("--join-timeout", type=int, default=90,
                   help="torchrun --rdzv_conf join_timeout (seconds)")
    p.add_argument("--json", default=None, help="also write the raw results here")
    p.add_argument("--keep-logs", action="store_true", help="keep the agents' logs")
    args = p.parse_args()
    if args.runs < 1:
        p.error("--runs must be >= 1")
    return args


def launchers(args: argparse.Namespace) -> list:
    out = []
    if os.access(args.ddprun, os.X_OK):
        out.append(Launcher("ddprun", [os.path.abspath(args.ddprun)], 10**6,
                            lambda k: ["--local_addr", "127.0.0.<k+2>" if k is None else f"127.0.0.{k + 2}"]))
    else:
        print(f"note: ddprun not found at {args.ddprun}; skipping it (use --ddprun PATH)")
    if args.torchrun_max_nodes > 0:
        out.append(Launcher("torchrun-patched (monitor 0.1 s)",
                            [benchlib.TORCHRUN_PATCHED, "--monitor_interval", "0.1",
                             "--rdzv_conf", f"join_timeout={args.join_timeout}"],
                            args.torchrun_max_nodes, lambda k: []))
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def agent_argv(launcher: Launcher, nodes, port, k) -> list:
    """Agent k's command line (k None, nodes "N", port "PORT": the displayed template)."""
    return (launcher.argv + ["--nnodes", str(nodes), "--rdzv_backend", "c10d",
                             "--rdzv_endpoint", f"127.0.0.1:{port}", "--rdzv_id", RUN_ID]
            + launcher.per_node(k) + WORKER)


def wait_all(procs: list, deadline: float) -> bool:
    """Reaps every process; False (after killing the rest) when the deadline passes."""
    live = list(procs)
    while live:
        live = [p for p in live if p.poll() is None]
        if live and time.perf_counter() > deadline:
            for p in live:
                p.kill()
            for p in live:
                p.wait()
            return False
        if live:
            time.sleep(POLL_SECONDS)
    return True


def run_once(launcher: Launcher, nodes: int, timeout_s: float, logdir: str):
    """Returns (wall seconds, None) or (wall seconds, reason)."""
    port = free_port()
    procs, logs = [], []
    start = time.perf_counter()
    for k in range(nodes):
        log = open(os.path.join(logdir, f"agent{k}.log"), "wb")
        logs.append(log)
        procs.append(subprocess.Popen(agent_argv(launcher, nodes, port, k), cwd=logdir,
                                      stdin=subprocess.DEVNULL, stdout=log, stderr=log))
    finished = wait_all(procs, start + timeout_s)
    wall = time.perf_counter() - start
    for log in logs:
        log.close()
    if not finished:
        return wall, f"timeout after {timeout_s:.0f} s"
    bad = [p.returncode for p in procs if p.returncode != 0]
    return wall, (f"{len(bad)} agents failed (exit {bad[0]})" if bad else None)


def bench(args: argparse.Namespace, all_launchers: list, workdir: str) -> list:
    cells = []
    for nodes in [int(n) for n in args.nodes.split(",")]:
        row = [Cell(l.name, nodes) for l in all_launchers if nodes <= l.max_nodes]
        active = [l for l in all_launchers if nodes <= l.max_nodes]
        for index in range(args.runs):
            for launcher, cell in zip(active, row):
                timeout = args.timeout if launcher.name == "ddprun" else args.torchrun_timeout
                logdir = os.path.join(workdir, f"{launcher.name.split()[0]}-n{nodes}-r{index}")
                os.makedirs(logdir)
                wall, failure = run_once(launcher, nodes, timeout, logdir)
                cell.walls.append(wall)
                if failure:
                    cell.failures.append(f"run {index}: {failure} ({logdir})")
                print(f"{launcher.name} N={nodes} run {index}: {wall:.3f} s"
                      + (f" FAILED: {failure}" if failure else ""), file=sys.stderr, flush=True)
        cells += row
    return cells


def markdown(cells: list) -> str:
    rows = ["| launcher | N | runs | median s | min s | max s | failed runs |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for c in cells:
        med, low, high = statistics.median(c.walls), min(c.walls), max(c.walls)
        rows.append(f"| {c.launcher} | {c.nodes} | {len(c.walls)} | {med:.3f} | {low:.3f} "
                    f"| {high:.3f} | {len(c.failures)} |")
    return "\n".join(rows)


def main() -> None:
    args = parse_args()
    all_launchers = launchers(args)
    workdir = tempfile.mkdtemp(prefix="ddprun_multinode_bench_")
    cells = bench(args, all_launchers, workdir)
    print(markdown(cells))
    print()
    for l in all_launchers:
        shown = agent_argv(l, "N", "PORT", None)
        shown[0] = os.path.relpath(shown[0], benchlib.REPO_ROOT)
        print(f"{l.name}, agent k = 0..N-1: `{' '.join(shown)}`")
    for c in cells:
        for f in c.failures:
            print(f"failure: {c.launcher} N={c.nodes} {f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump([c.__dict__ for c in cells], out, indent=1)
    if args.keep_logs or any(c.failures for c in cells):
        print(f"logs: {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
