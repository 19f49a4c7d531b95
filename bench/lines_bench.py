#!/usr/bin/python3
"""Workers' lines through ddprun's line router (issue 41 §1): are they whole, and what do they cost.

Part `whole`: `<launcher> --standalone --nproc_per_node 4 PRINTS.py`, each rank printing 3,000
`print(f"line rank=R i=I {'x' * 60}", flush=True)` lines (Python workers run as `python -u`
under every launcher, so each print is two write(2)s, the text and the newline), the
launcher's stdout into a pipe the bench reads (`--sink pipe`) or into a file (`file`). A line
counts as whole when it is exactly one printed line. Launchers: torchrun 2.14 (Debian forky's,
in the root of scripts/torch-root.sh forky through bench/in-root.sh; skipped when the root is
missing), torchrun 1.13 (tools/torchrun-patched), ddprun --line-output off (workers write to
ddprun's stdout themselves, as under torchrun) and ddprun (the default: lines through the
agent when stdout is not a terminal).

Part `cost`: one worker writing --bytes of 100-byte lines into the launcher's stdout, a file,
either as os.write() of 64 KiB blocks ("write") or as print() lines ("print", a tenth of the
bytes), under ddprun --line-output off (straight to the file) and ddprun --line-output on
(through the router). Per run: the worker's own elapsed time for its writes and CPU, the
throughput, and ddprun's own CPU (wait4 rusage of the launcher, which includes its reaped
worker, less the CPU the worker recorded for itself). The file is checked: every byte there,
every line whole.

    /usr/bin/python3 bench/lines_bench.py --ddprun build/src/ddprun --runs 3
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading

import benchlib

PRINTS = """
import os
rank = os.environ["RANK"]
pad = "x" * 60
for i in range(int(os.environ["LINES_BENCH_N"])):
    print(f"line rank={rank} i={i} {pad}", flush=True)
"""

FLOOD = """
import json, os, sys, time
n, mode = int(os.environ["LINES_BENCH_BYTES"]), os.environ["LINES_BENCH_MODE"]
line = "y" * 99
block = ((line + "\\n") * 655).encode()
t0, c0 = time.monotonic(), os.times()
left = n
if mode == "write":
    while left > 0:
        part = memoryview(block)[:left]
        while part:
            part = part[os.write(1, part):]
        left -= min(left, len(block))
else:
    for _ in range(n // 100):
        print(line)
elapsed, c1 = time.monotonic() - t0, os.times()
cpu = c1.user - c0.user + c1.system - c0.system
with open(os.path.join(os.environ["LINES_BENCH_DIR"], "report"), "w") as f:
    json.dump({"elapsed_s": elapsed, "cpu_s": cpu}, f)
"""

LINE = re.compile(rb"line rank=([0-9]+) i=([0-9]+) x{60}")
RANKS, LINES = 4, 3000


def whole_launchers(ddprun: str) -> list:
    out = []
    forky = os.path.join(os.environ.get("DDPRUN_ROOTS", "/var/cache/ddprun/roots"), "forky")
    if os.path.isdir(forky):
        out.append(("torchrun 2.14", [os.path.join(benchlib.REPO_ROOT, "bench", "in-root.sh"),
                                      "forky", "torchrun"], "python3"))
    else:
        print(f"note: no forky root at {forky}; torchrun 2.14 skipped "
              "(scripts/torch-root.sh forky)")
    out.append(("torchrun 1.13", [benchlib.TORCHRUN_PATCHED], "/usr/bin/python3"))
    out.append(("ddprun --line-output off", [ddprun, "--line-output", "off",
                                             "--python", "/usr/bin/python3"], None))
    out.append(("ddprun", [ddprun, "--python", "/usr/bin/python3"], None))
    return out


def count_whole(data: bytes) -> int:
    return sum(1 for line in data.split(b"\n") if LINE.fullmatch(line))


def whole_run(prefix: list, python, sink: str, timeout_s: float) -> int:
    directory = tempfile.mkdtemp(prefix="ddprun_lines_bench_")
    script = os.path.join(directory, "prints.py")
    with open(script, "w") as f:
        f.write(PRINTS)
    argv = prefix + ["--standalone", "--nproc_per_node", str(RANKS), script]
    env = dict(os.environ, LINES_BENCH_N=str(LINES), IN_ROOT_PASS="LINES_BENCH_N")
    if python is not None:
        env["PYTHON_EXEC"] = python
    try:
        if sink == "pipe":
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, timeout=timeout_s,
                                  check=False)
            data = proc.stdout
        else:
            path = os.path.join(directory, "console")
            with open(path, "wb") as out:
                proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out,
                                      stderr=subprocess.DEVNULL, env=env, timeout=timeout_s,
                                      check=False)
            with open(path, "rb") as f:
                data = f.read()
        if proc.returncode != 0:
            sys.exit(f"{argv}: exit {proc.returncode}; see {directory}")
        return count_whole(data)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def check_console(path: str, written: int) -> None:
    size = os.path.getsize(path)
    newlines = 0
    bad = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            newlines += chunk.count(b"\n")
            bad += len(chunk) - chunk.count(b"y") - chunk.count(b"\n")
    if size != written or newlines != written // 100 or bad != 0:
        sys.exit(f"{path}: {size} bytes, {newlines} lines, {bad} stray bytes; "
                 f"expected {written} bytes in {written // 100} lines")


def cost_run(ddprun: str, mode: str, lines: str, n: int, timeout_s: float) -> dict:
    directory = tempfile.mkdtemp(prefix="ddprun_lines_cost_")
    script = os.path.join(directory, "flood.py")
    with open(script, "w") as f:
        f.write(FLOOD)
    argv = [ddprun, "--line-output", lines, "--python", "/usr/bin/python3", "--standalone",
            "--nproc_per_node", "1", "--log_dir", os.path.join(directory, "logs"), script]
    env = dict(os.environ, LINES_BENCH_BYTES=str(n), LINES_BENCH_MODE=mode,
               LINES_BENCH_DIR=directory)
    env.pop("PYTHONUNBUFFERED", None)
    console = os.path.join(directory, "console")
    try:
        with open(console, "wb") as out, open(os.path.join(directory, "err"), "wb") as err:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    env=env)
            timer = threading.Timer(timeout_s, proc.kill)
            timer.start()
            _, status, usage = os.wait4(proc.pid, 0)
            timer.cancel()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{argv}: exit {os.waitstatus_to_exitcode(status)}; see {directory}")
        with open(os.path.join(directory, "report")) as f:
            report = json.load(f)
        check_console(console, n)
    finally:
        if "report" in locals():
            shutil.rmtree(directory, ignore_errors=True)
    return {"elapsed_s": report["elapsed_s"], "mb_s": n / report["elapsed_s"] / 1e6,
            "worker_cpu_s": report["cpu_s"],
            "agent_cpu_s": usage.ru_utime + usage.ru_stime - report["cpu_s"]}


def fmt(values: list, spec: str = "{:.2f}") -> str:
    return f"{spec.format(statistics.median(values))} ({spec.format(min(values))}–" \
           f"{spec.format(max(values))})"


def part_whole(args) -> None:
    print(f"\n{RANKS} ranks x {LINES} print lines: whole lines of {RANKS * LINES}, "
          f"median (min–max) of {args.runs}\n")
    print("| launcher | into a pipe | into a file |")
    print("| --- | ---: | ---: |")
    for name, prefix, python in whole_launchers(args.ddprun):
        cells = []
        for sink in ("pipe", "file"):
            counts = [whole_run(prefix, python, sink, args.timeout) for _ in range(args.runs)]
            cells.append(fmt(counts, "{:.0f}"))
        print(f"| {name} | {cells[0]} | {cells[1]} |", flush=True)


def part_cost(args) -> None:
    print(f"\nOne worker, 100-byte lines into a file; median (min–max) of {args.runs}\n")
    print("| workload | ddprun | worker's write time s | MB/s | worker CPU s | agent CPU s |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for mode, n in (("write", args.bytes), ("print", args.bytes // 10)):
        label = f"os.write 64 KiB blocks, {n / 1e9:g} GB" if mode == "write" else \
            f"print lines, {n / 1e9:g} GB"
        for lines, name in (("off", "--line-output off (straight)"),
                            ("on", "--line-output on (router)")):
            runs = [cost_run(args.ddprun, mode, lines, n, args.timeout) for _ in range(args.runs)]
            print(f"| {label} | {name} | {fmt([r['elapsed_s'] for r in runs], '{:.3f}')} | "
                  f"{fmt([r['mb_s'] for r in runs], '{:.0f}')} | "
                  f"{fmt([r['worker_cpu_s'] for r in runs])} | "
                  f"{fmt([r['agent_cpu_s'] for r in runs])} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ddprun", default=benchlib.DEFAULT_DDPRUN)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--bytes", type=int, default=1_000_000_000)
    p.add_argument("--parts", default="whole,cost")
    p.add_argument("--timeout", type=float, default=300)
    args = p.parse_args()
    print(benchlib.command_line(sys.argv))
    parts = args.parts.split(",")
    if "whole" in parts:
        part_whole(args)
    if "cost" in parts:
        part_cost(args)


if __name__ == "__main__":
    main()
