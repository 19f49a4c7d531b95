#!/usr/bin/python3
"""store_barrier_bench against a fresh `ddprun store serve` and a fresh torch 1.13 TCPStore
server for every --connections value (fresh, so each RSS baseline is an idle server).

Prints one Markdown row per (server, N): barrier time (first add to last wake), CPU time of the
server and of the bench client during the barrier, connect time, server VmRSS growth per idle
connection. Every run is bounded by --timeout-seconds (the bench
gives up and reports) plus a hard subprocess timeout; servers are stopped SIGTERM then SIGKILL.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

import store_compare as sc

DEFAULT_BARRIER_BENCH = os.path.join(sc.REPO_ROOT, "build", "bench", "store_barrier_bench")
HARD_SLACK_S = 30.0


def barrier_argv(args, port: int, pid: int, n: int) -> list:
    return [args.barrier_bench, "--endpoint", f"127.0.0.1:{port}", "--server-pid", str(pid),
            "--connections", str(n), "--timeout-seconds", str(args.timeout_seconds), "--json"]


def run_one(args, name: str, n: int) -> dict:
    proc, port = (sc.start_ddprun_server(args.ddprun, 0) if name == "ddprun"
                  else sc.start_torch_server(0))
    try:
        argv = barrier_argv(args, port, proc.pid, n)
        out = subprocess.run(argv, capture_output=True, text=True,
                             timeout=args.timeout_seconds + HARD_SLACK_S)
        result = json.loads(out.stdout.strip().splitlines()[-1]) if out.stdout.strip() else {}
        result["rc"] = out.returncode
        result["stderr"] = out.stderr.strip().splitlines()[-1:] if out.stderr.strip() else []
        result["server_alive"] = proc.poll() is None
    except subprocess.TimeoutExpired:
        result = {"rc": "hard timeout", "server_alive": proc.poll() is None}
    finally:
        sc.stop(proc)
    return result


def row(name: str, n: int, r: dict) -> str:
    def f(key, fmt="{:.3f}"):
        return fmt.format(r[key]) if r.get(key) is not None else "-"
    note = "; ".join(r.get("stderr", [])) or ""
    return (f"| {name} | {n} | {r.get('rc')} | {r.get('errors', '-')} | {f('barrier_s')} | "
            f"{f('median_wake_s')} | {f('server_cpu_s', '{:.2f}')} | {f('client_cpu_s', '{:.2f}')} | "
            f"{f('connect_s')} | {f('rss_bytes_per_conn', '{:.0f}')} | "
            f"{'yes' if r.get('server_alive') else 'no'} | {note} |")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--ddprun", default=sc.DEFAULT_DDPRUN)
    p.add_argument("--barrier-bench", default=DEFAULT_BARRIER_BENCH)
    p.add_argument("--connections", default="1000,10000")
    p.add_argument("--servers", default="ddprun,torch 1.13")
    p.add_argument("--timeout-seconds", type=float, default=60.0)
    args = p.parse_args()
    print("```\n/usr/bin/python3 bench/store_barrier_compare.py " + shlex.join(sys.argv[1:])
          + "\n```\n")
    print("| server | connections | rc | errors | barrier s | median wake s | server CPU s | "
          "bench CPU s | connect s | server RSS B/idle conn | server alive after | note |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for n in [int(c) for c in args.connections.split(",")]:
        for name in args.servers.split(","):
            print(row(name, n, run_one(args, name, n)), flush=True)
    print(f"\nload average after the runs: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
