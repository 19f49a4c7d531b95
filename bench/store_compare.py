#!/usr/bin/python3
"""ddprun's store server against torch's own TCPStore server, one store_bench load each.

Starts `ddprun store serve` and a Python process hosting torch.distributed.TCPStore
(is_master=True), both on 127.0.0.1, then runs `store_bench --endpoint ... --dialect d0`
against each, alternating servers, for every --connections value and --pipeline depth
(0 = one request at a time through ddprun's Client; K = K raw requests per write), --rounds
rounds.
Prints a Markdown table (median ops/s over the rounds, p50/p99 of the median-ops/s round) and
the command line. Needs /usr/bin/python3 (torch 1.13 speaks D0). Every wait is bounded.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DDPRUN = os.path.join(REPO_ROOT, "build", "src", "ddprun")
DEFAULT_BENCH = os.path.join(REPO_ROOT, "build", "bench", "store_bench")
START_TIMEOUT_S = 60.0  # torch import alone takes seconds on a loaded machine
STOP_TIMEOUT_S = 5.0
BENCH_SLACK_S = 60.0  # on top of --seconds: connect, key preload, exit

TORCH_SERVER = r"""
import datetime, os, sys
import torch.distributed as dist
store = dist.TCPStore("127.0.0.1", int(sys.argv[1]), is_master=True, wait_for_workers=False,
                      timeout=datetime.timedelta(seconds=300))
print(store.port, flush=True)
sys.stdin.read()  # serve until the bench closes our stdin
"""


def start_torch_server(port: int) -> tuple:
    """Returns (Popen, port) once torch's server prints its port."""
    proc = subprocess.Popen([sys.executable, "-c", TORCH_SERVER, str(port)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = read_line_bounded(proc, START_TIMEOUT_S)
    return proc, int(line)


def read_line_bounded(proc: subprocess.Popen, timeout_s: float) -> str:
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    if not sel.select(timeout_s):
        stop(proc)
        raise RuntimeError(f"server pid {proc.pid} printed nothing within {timeout_s} s")
    return proc.stdout.readline().strip()


def start_ddprun_server(ddprun: str, port: int) -> tuple:
    """Starts `ddprun store serve` on a free port; returns (Popen, port) once it accepts."""
    if port == 0:
        port = free_port()
    proc = subprocess.Popen([ddprun, "store", "serve", "--host", "127.0.0.1", "--port",
                             str(port)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    wait_accepting(proc, port, START_TIMEOUT_S)
    return proc, port


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_accepting(proc: subprocess.Popen, port: int, timeout_s: float) -> None:
    import socket
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before accepting")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    stop(proc)
    raise RuntimeError(f"server on port {port} not accepting within {timeout_s} s")


def stop(proc: subprocess.Popen) -> None:
    """Closes stdin, SIGTERM, then SIGKILL after STOP_TIMEOUT_S each."""
    if proc.stdin:
        proc.stdin.close()
    for action in (proc.terminate, proc.kill):
        if proc.poll() is not None:
            return
        action()
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pass


def bench_argv(args, port: int, case: tuple) -> list:
    connections, depth = case
    return [args.store_bench, "--endpoint", f"127.0.0.1:{port}", "--dialect", "d0",
            "--connections", str(connections), "--pipeline", str(depth), "--seconds",
            str(args.seconds), "--mix", args.mix, "--keys", str(args.keys), "--json"]


def cpu_seconds(pid: int) -> float:
    """utime + stime of /proc/<pid>/stat (all threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_bench(args, server: tuple, case: tuple) -> dict:
    """One store_bench run; adds server_cpu_s, the server process's CPU time during it (this
    includes the untimed key preload: 1 connection, --keys SETs)."""
    proc, port = server
    argv = bench_argv(args, port, case)
    cpu0 = cpu_seconds(proc.pid)
    out = subprocess.run(argv, capture_output=True, text=True,
                         timeout=args.seconds + BENCH_SLACK_S)
    if out.returncode != 0 and not out.stdout.strip():
        raise RuntimeError(f"{shlex.join(argv)}: exit {out.returncode}: {out.stderr.strip()}")
    sample = json.loads(out.stdout.strip().splitlines()[-1])
    sample["server_cpu_s"] = cpu_seconds(proc.pid) - cpu0
    return sample


def cpu_us_per_op(sample: dict) -> float:
    return sample["server_cpu_s"] * 1e6 / max(sample["ops"], 1)


def median_round(samples: list) -> dict:
    """The round whose ops/s is the (lower) median, so p50/p99 come from one real run."""
    ranked = sorted(samples, key=lambda s: s["ops_per_s"])
    return ranked[(len(ranked) - 1) // 2]


def table(results: dict, cases: list) -> str:
    rows = ["| server | connections | pipeline | rounds | ops/s median | ops/s min | ops/s max | p50 µs | "
            "p99 µs | server CPU µs/op | errors |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for case in cases:
        for name, by_case in results.items():
            s = by_case[case]
            m = median_round(s)
            ops = [x["ops_per_s"] for x in s]
            errors = sum(x["errors"] for x in s)
            rows.append(f"| {name} | {case[0]} | {case[1] or 'no'} | {len(s)} | {statistics.median(ops):.0f} | "
                        f"{min(ops):.0f} | {max(ops):.0f} | {m['p50_us']:.1f} | "
                        f"{m['p99_us']:.1f} | {statistics.median(cpu_us_per_op(x) for x in s):.2f} | "
                        f"{errors} |")
    return "\n".join(rows)


def ratios(results: dict, cases: list) -> str:
    lines = []
    for case in cases:
        ours = statistics.median(x["ops_per_s"] for x in results["ddprun"][case])
        theirs = statistics.median(x["ops_per_s"] for x in results["torch 1.13"][case])
        cpu_ours = statistics.median(cpu_us_per_op(x) for x in results["ddprun"][case])
        cpu_theirs = statistics.median(cpu_us_per_op(x) for x in results["torch 1.13"][case])
        lines.append(f"{case[0]} connections, pipeline {case[1] or 'no'}: "
                     f"ddprun / torch ops/s = {ours / theirs:.2f}x, "
                     f"server CPU per op torch / ddprun = {cpu_theirs / cpu_ours:.2f}x")
    return "\n".join(lines)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--ddprun", default=DEFAULT_DDPRUN)
    p.add_argument("--store-bench", default=DEFAULT_BENCH)
    p.add_argument("--connections", default="1,16,64", help="comma-separated list")
    p.add_argument("--pipeline", default="0,16",
                   help="comma-separated depths; 0 = one request at a time through Client")
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--mix", default="25:50:20:5", help="SET:GET:ADD:CHECK weights")
    p.add_argument("--keys", type=int, default=1000)
    return p.parse_args()


def main() -> int:
    args = parse_args()
    cases = [(int(c), int(d)) for d in args.pipeline.split(",")
             for c in args.connections.split(",")]
    servers = {}
    try:
        servers["ddprun"] = start_ddprun_server(args.ddprun, 0)
        servers["torch 1.13"] = start_torch_server(0)
        results = {name: {case: [] for case in cases} for name in servers}
        for r in range(args.rounds):
            for case in cases:
                for name, server in servers.items():
                    sample = run_bench(args, server, case)
                    results[name][case].append(sample)
                    print(f"round {r + 1} {name} {case}: {sample}", file=sys.stderr, flush=True)
    finally:
        for proc, _ in servers.values():
            stop(proc)
    print("```\n/usr/bin/python3 bench/store_compare.py " + shlex.join(sys.argv[1:]) + "\n```\n")
    print(f"each run: {shlex.join(bench_argv(args, 0, ('N', 'K')))}"
          " with N, K from the table\n")
    print(table(results, cases))
    print()
    print(ratios(results, cases))
    print(f"\nload average after the runs: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
