#!/usr/bin/python3
"""Hung-worker benchmarks (issue 16): stall detection-to-restart, and the cost of piping output.

Part 1, stall -> restart (ddprun only; torchrun has no stall watchdog):
`ddprun --standalone --nproc-per-node P --stall-timeout T --max-restarts 1 --events-file EV
--log-dir DIR --python PYTHON STALL.py` for each P in --nprocs. STALL.py is a light Python
worker (no torch): on attempt 0 it prints one line, takes `time.time_ns()` right after the
print returned (so its last output is before the stamp), writes it to silent_<rank> and sleeps
silently; on attempt 1 it writes start_<rank> = time.time_ns() first thing and exits 0. The
stacks are taken by the faulthandler path (SIGABRT; PYTHONFAULTHANDLER=1 set by ddprun), unless
py-spy is on PATH (the method is printed). Per run, with "silent" = max(silent_*) (the group's
last output) and all times wall-clock (events-file "ts", the agent log's glog prefix):
  beyond T   = min(start_*) - silent - T    (goal: <= 1 s, stack capture included)
  detect     = "worker group stalled" log line - silent - T   (how late the watchdog fires)
  capture    = `stall` event ts - that log line   (stacks taken; the dump kills the workers)
  respawn    = attempt-1 `workers_started` ts - `stall` ts   (stop, restart bookkeeping, spawn)
  exec       = min(start_*) - `workers_started` ts   (Python start-up of the new worker; the
               event is written after all P spawns, so with many workers it can be < 0)
  last start = max(start_*) - silent - T

Part 3, learned vs fixed timeout (`--parts learned`): the same stall, but the worker first
prints a line every --tick-s for --learn-s (a training loop's log), then stamps and falls
silent. Each configuration in LEARNED_CONFIGS (`--stall-timeout auto` with a start-up bound
of 5 s and a floor of 1 s, and fixed timeouts of 5 s and 30 s) runs --learned-runs times with
P = 2: detection = "worker group stalled" log line - silent (the time a hang goes unnoticed),
and the stall line's "(--stall-timeout auto: ...)" says what the learned value was.

Part 2, piping overhead (launchers alternate): `<launcher> --standalone --nproc_per_node P
--log_dir DIR FLOOD.py` (a Python worker: ddprun gets `--python PYTHON`, torchrun-patched runs
/usr/bin/python3), the launcher's stdout and stderr on /dev/null (--sink null) or a file
(--sink file; its size is checked), PYTHONUNBUFFERED and PYTHONFAULTHANDLER removed from the
environment. FLOOD.py writes lines with print() ("print", as logging does; both launchers
start Python workers as `python -u`, so every print is two write(2)s, the text and the
newline) or with os.write() of 64 KiB blocks of lines ("write"), unpaced or paced at --rate
bytes/s in total (split evenly over the workers), and records its own elapsed time for the
writes and its CPU time. Workloads: print 100 B lines unpaced (--bytes / 5 in total),
os.write 4 KiB lines unpaced, print 1000 B lines paced, os.write 100 B lines paced (--bytes in
total each). Reported per workload and launcher: median (min-max) over the runs of the
slowest worker's elapsed time, the achieved total rate, the workers' CPU and the launcher's
own CPU (wait4 rusage of the launcher, which includes its reaped workers, minus the CPU the
workers recorded for themselves just before exiting; torchrun's includes importing torch),
and for the paced workloads the furthest a worker fell behind its schedule (a full pipe
blocks its write). Launchers: torchrun-patched and ddprun with the workers' streams
inherited, ddprun --stall-timeout 60 (every stream through the agent) and ddprun --tee 3
(through the agent, and into the log files).

    /usr/bin/python3 bench/hang_bench.py --ddprun build/src/ddprun --runs 5 --flood-runs 3
    /usr/bin/python3 bench/hang_bench.py --ddprun build/src/ddprun --parts learned
"""
import argparse
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import benchlib

STALL_WORKER = """
import os, sys, time
directory, rank = os.environ["HANG_BENCH_DIR"], os.environ["LOCAL_RANK"]
if os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":
    print(f"rank {rank} working", flush=True)
    stamp = time.time_ns()
    with open(os.path.join(directory, "silent_" + rank), "w") as f:
        f.write(str(stamp))
    while True:
        time.sleep(3600)
stamp = time.time_ns()
with open(os.path.join(directory, "start_" + rank), "w") as f:
    f.write(str(stamp))
"""

LEARN_WORKER = """
import os, sys, time
directory, rank = os.environ["HANG_BENCH_DIR"], os.environ["LOCAL_RANK"]
tick, learn = float(os.environ["HANG_BENCH_TICK"]), float(os.environ["HANG_BENCH_LEARN"])
if os.environ["TORCHELASTIC_RESTART_COUNT"] == "0":
    end = time.monotonic() + learn
    step = 0
    while time.monotonic() < end:
        print(f"rank {rank} step {step}", flush=True)
        step += 1
        time.sleep(tick)
    print(f"rank {rank} hangs", flush=True)
    stamp = time.time_ns()
    with open(os.path.join(directory, "silent_" + rank), "w") as f:
        f.write(str(stamp))
    while True:
        time.sleep(3600)
"""

# name -> the stall flags of one learned-vs-fixed configuration (part 3).
LEARNED_CONFIGS = {
    "auto (start-up 5 s, floor 1 s)": ["--stall-timeout", "auto", "--stall-startup-timeout", "5",
                                       "--stall-timeout-floor", "1"],
    "fixed 5 s": ["--stall-timeout", "5"],
    "fixed 30 s": ["--stall-timeout", "30"],
}
LEARNED_BASIS = re.compile(r"worker group stalled: [^\n]*?(\(--stall-timeout[^\n]*\))")

FLOOD_WORKER = """
import json, os, resource, sys, time
env = os.environ
directory, rank = env["HANG_BENCH_DIR"], env["LOCAL_RANK"]
total, line = int(env["HANG_BENCH_BYTES"]), int(env["HANG_BENCH_LINE"])
rate, mode = float(env["HANG_BENCH_RATE"]), env["HANG_BENCH_MODE"]
text = "x" * (line - 1)
lines = total // line
batch = max(1, 65536 // line)
block = ((text + "\\n") * batch).encode()
written, behind = 0, 0.0
start = time.monotonic()
while written < lines:
    n = min(batch, lines - written)
    if mode == "print":
        for _ in range(n):
            print(text)
    else:
        view = memoryview(block)[: n * line]
        while view:
            view = view[os.write(1, view):]
    written += n
    if rate:
        delay = start + written * line / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        else:
            behind = max(behind, -delay)
sys.stdout.flush()
elapsed = time.monotonic() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
with open(os.path.join(directory, "flood_" + rank), "w") as f:
    json.dump({"elapsed_s": elapsed, "bytes": written * line, "behind_s": behind,
               "cpu_s": usage.ru_utime + usage.ru_stime}, f)
"""

GLOG_STALLED = re.compile(
    r"^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) .*worker group stalled")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--parts", default="stall,flood",
                   help="which parts to run: stall,learned,flood")
    p.add_argument("--runs", type=int, default=5, help="stall runs per --nprocs value")
    p.add_argument("--nprocs", default="2,8", help="stall: --nproc-per-node values")
    p.add_argument("--stall-timeout", type=float, default=2.0, help="stall: T in seconds")
    p.add_argument("--learned-runs", type=int, default=3, help="learned: runs per config")
    p.add_argument("--tick-s", type=float, default=0.5, help="learned: seconds between lines")
    p.add_argument("--learn-s", type=float, default=8.0, help="learned: seconds of lines")
    p.add_argument("--flood-runs", type=int, default=3, help="flood runs per workload+launcher")
    p.add_argument("--flood-nproc", type=int, default=2, help="flood: --nproc_per_node")
    p.add_argument("--bytes", type=int, default=500_000_000,
                   help="flood: total bytes written (all workers together)")
    p.add_argument("--rate", type=float, default=100e6, help="flood: paced total bytes/s")
    p.add_argument("--sink", choices=("null", "file"), default="null",
                   help="flood: the launcher's stdout/stderr")
    p.add_argument("--python", default=sys.executable, help="interpreter of the workers")
    benchlib.add_launcher_args(p)
    args = p.parse_args()
    if args.runs < 1 or args.flood_runs < 1 or args.flood_nproc < 1:
        p.error("--runs, --flood-runs and --flood-nproc must be >= 1")
    return args


def worker_env() -> dict:
    """The bench's environment without PYTHONUNBUFFERED and PYTHONFAULTHANDLER: whether the
    workers' stdout is block-buffered is what the launcher (or a launcher variant) decides."""
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONUNBUFFERED", "PYTHONFAULTHANDLER")}


def read_ints(directory: str, prefix: str) -> list:
    values = []
    for path in glob.glob(os.path.join(directory, prefix + "_*")):
        with open(path) as f:
            text = f.read().strip()
        if text:
            values.append(int(text))
    return values


def read_events(path: str) -> list:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def glog_stalled_time(log_path: str, near_s: float) -> float:
    """Wall-clock time of the agent's "worker group stalled" line (glog prefix: local time,
    no year; the year is taken from near_s), or None."""
    with open(log_path, errors="replace") as f:
        for line in f:
            match = GLOG_STALLED.match(line)
            if match:
                month, day, hour, minute, second, micro = (int(g) for g in match.groups())
                year = datetime.datetime.fromtimestamp(near_s).year
                return datetime.datetime(year, month, day, hour, minute, second,
                                         micro).timestamp()
    return None


def stall_run(ddprun: str, python: str, worker: str, nproc: int, stall_timeout: float,
              timeout_s: float) -> dict:
    directory = tempfile.mkdtemp(prefix="ddprun_hang_bench_")
    events, log = os.path.join(directory, "events.jsonl"), os.path.join(directory, "agent.log")
    argv = [ddprun, "--standalone", "--nproc-per-node", str(nproc), "--stall-timeout",
            f"{stall_timeout:g}", "--max-restarts", "1", "--events-file", events, "--log-dir",
            os.path.join(directory, "logs"), "--python", python, worker]
    env = dict(worker_env(), HANG_BENCH_DIR=directory)
    with open(log, "wb") as out:
        code = subprocess.run(argv, stdout=out, stderr=out, env=env, timeout=timeout_s,
                              stdin=subprocess.DEVNULL).returncode
    silents, starts = read_ints(directory, "silent"), read_ints(directory, "start")
    if code != 0 or len(silents) != nproc or len(starts) != nproc:
        sys.exit(f"stall run: exit {code}, {len(silents)} silent / {len(starts)} start stamps "
                 f"(want {nproc} each); see {directory}")
    evs = read_events(events)
    stall = next(e for e in evs if e["event"] == "stall")
    started = next(e for e in evs if e["event"] == "workers_started" and e["attempt"] == 1)
    silent = max(silents) / 1e9
    logged = glog_stalled_time(log, silent)
    shutil.rmtree(directory)
    first, last = min(starts) / 1e9, max(starts) / 1e9
    return {
        "beyond_s": first - silent - stall_timeout,
        "detect_s": None if logged is None else logged - silent - stall_timeout,
        "capture_s": None if logged is None else stall["ts"] - logged,
        "respawn_s": started["ts"] - stall["ts"],
        "exec_s": first - started["ts"],
        "last_start_s": last - silent - stall_timeout,
        "method": stall.get("method", "?"),
    }


def learned_run(args: argparse.Namespace, worker: str, flags: list) -> dict:
    directory = tempfile.mkdtemp(prefix="ddprun_hang_bench_")
    log = os.path.join(directory, "agent.log")
    argv = [args.ddprun, "--standalone", "--nproc-per-node", "2"] + flags + [
        "--max-restarts", "0", "--log-dir", os.path.join(directory, "logs"), "--python",
        args.python, worker]
    env = dict(worker_env(), HANG_BENCH_DIR=directory, HANG_BENCH_TICK=str(args.tick_s),
               HANG_BENCH_LEARN=str(args.learn_s))
    with open(log, "wb") as out:
        code = subprocess.run(argv, stdout=out, stderr=out, env=env, timeout=args.timeout,
                              stdin=subprocess.DEVNULL).returncode
    silents = read_ints(directory, "silent")
    if code != 1 or len(silents) != 2:
        sys.exit(f"learned run: exit {code} (want 1: the stall), {len(silents)} silent stamps; "
                 f"see {directory}")
    silent = max(silents) / 1e9
    logged = glog_stalled_time(log, silent)
    with open(log, errors="replace") as f:
        basis = LEARNED_BASIS.search(f.read())
    shutil.rmtree(directory)
    return {"detect_s": None if logged is None else logged - silent,
            "basis": basis.group(1) if basis else "?"}


def run_learned(args: argparse.Namespace, workdir: str) -> dict:
    worker = os.path.join(workdir, "learn_worker.py")
    with open(worker, "w") as f:
        f.write(LEARN_WORKER)
    results = {name: [learned_run(args, worker, flags) for _ in range(args.learned_runs)]
               for name, flags in LEARNED_CONFIGS.items()}
    print(f"  ddprun --standalone --nproc-per-node 2 FLAGS --max-restarts 0 --log-dir DIR "
          f"--python {args.python} LEARN.py  (a line every {args.tick_s:g} s for "
          f"{args.learn_s:g} s, then silent); median (min–max) over {args.learned_runs} runs")
    print()
    print("| configuration | flags | hang found after (s) | the stall line's basis (first run) |")
    print("| --- | --- | ---: | --- |")
    for name, rows in results.items():
        values = [r["detect_s"] for r in rows if r["detect_s"] is not None]
        print(f"| {name} | `{' '.join(LEARNED_CONFIGS[name])}` "
              f"| {fmt_range(values) if values else 'n/a'} | {rows[0]['basis']} |")
    print()
    return results


# name -> launcher prefix from (ddprun, python). Python workers (no --no_python): ddprun sets
# PYTHONUNBUFFERED / PYTHONFAULTHANDLER only for those; both launchers run them as `python -u`.
FLOOD_LAUNCHERS = {
    "torchrun-patched (inherit)": lambda d, py: [benchlib.TORCHRUN_PATCHED,
                                                 "--monitor_interval", "0.1"],
    "ddprun (inherit)": lambda d, py: [d, "--python", py],
    "ddprun --stall-timeout 60 (piped)": lambda d, py: [d, "--python", py, "--stall-timeout",
                                                        "60"],
    "ddprun --tee 3": lambda d, py: [d, "--python", py, "--tee", "3"],
}


def flood_launchers(ddprun: str, python: str, extra: list) -> list:
    launchers = []
    for name, prefix in FLOOD_LAUNCHERS.items():
        if name.startswith("ddprun") and not os.access(ddprun, os.X_OK):
            continue
        launchers.append(benchlib.Launcher(name, prefix(ddprun, python)))
    return launchers + [benchlib.parse_extra_launcher(spec) for spec in extra]


def flood_run(launcher: benchlib.Launcher, worker: str, nproc: int,
              workload: dict, sink: str, timeout_s: float) -> dict:
    directory = tempfile.mkdtemp(prefix="ddprun_flood_bench_")
    argv = launcher.argv + ["--standalone", "--nproc_per_node", str(nproc), "--log_dir",
                            os.path.join(directory, "logs"), worker]
    per_worker = workload["bytes"] // nproc
    env = dict(worker_env(), HANG_BENCH_DIR=directory, HANG_BENCH_BYTES=str(per_worker),
               HANG_BENCH_LINE=str(workload["line"]),
               HANG_BENCH_RATE=str(workload["rate"] / nproc), HANG_BENCH_MODE=workload["mode"])
    sink_path = os.path.join(directory, "console") if sink == "file" else os.devnull
    with open(sink_path, "wb") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env)
        timer = threading.Timer(timeout_s, proc.kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    reports = []
    for path in sorted(glob.glob(os.path.join(directory, "flood_*"))):
        with open(path) as f:
            reports.append(json.load(f))
    console_bytes = os.path.getsize(sink_path) if sink == "file" else None
    if proc.returncode != 0 or len(reports) != nproc:
        sys.exit(f"{launcher.name}: exit {proc.returncode}, {len(reports)}/{nproc} worker "
                 f"reports; see {directory}")
    written = sum(r["bytes"] for r in reports)
    if console_bytes is not None and console_bytes < written:
        sys.exit(f"{launcher.name}: console has {console_bytes} bytes < {written} written; "
                 f"see {directory}")
    shutil.rmtree(directory)
    elapsed = max(r["elapsed_s"] for r in reports)
    workers_cpu = sum(r["cpu_s"] for r in reports)
    return {"elapsed_s": elapsed, "rate_mb_s": written / elapsed / 1e6,
            "behind_ms": 1e3 * max(r["behind_s"] for r in reports),
            "workers_cpu_s": workers_cpu,
            "launcher_cpu_s": usage.ru_utime + usage.ru_stime - workers_cpu}


def fmt_range(values: list, spec: str = "{:.3f}") -> str:
    med, low, high = benchlib.summarize(values)
    return f"{spec.format(med)} ({spec.format(low)}–{spec.format(high)})"


def run_stall(args: argparse.Namespace, workdir: str) -> dict:
    worker = os.path.join(workdir, "stall_worker.py")
    with open(worker, "w") as f:
        f.write(STALL_WORKER)
    results = {}
    for nproc in [int(n) for n in args.nprocs.split(",")]:
        results[nproc] = [stall_run(args.ddprun, args.python, worker, nproc, args.stall_timeout,
                                    args.timeout) for _ in range(args.runs)]
    print(f"  ddprun --standalone --nproc-per-node P --stall-timeout {args.stall_timeout:g} "
          f"--max-restarts 1 --events-file EV --log-dir DIR --python {args.python} STALL.py")
    methods = sorted({r["method"] for rows in results.values() for r in rows})
    print(f"  stack method: {', '.join(methods)}; T = {args.stall_timeout:g} s; "
          "median (min–max) over the runs, seconds")
    print()
    print("| workers | runs | beyond T: first restarted worker | detect (log line − T) "
          "| capture (→ `stall` event) | respawn (→ `workers_started`) "
          "| exec (→ worker stamp) | beyond T: last restarted worker |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for nproc, rows in results.items():
        def col(key):
            values = [r[key] for r in rows if r[key] is not None]
            return fmt_range(values) if values else "n/a"
        print(f"| {nproc} | {len(rows)} | {col('beyond_s')} | {col('detect_s')} "
              f"| {col('capture_s')} | {col('respawn_s')} | {col('exec_s')} "
              f"| {col('last_start_s')} |")
    print()
    return results


def run_flood(args: argparse.Namespace, workdir: str) -> dict:
    worker = os.path.join(workdir, "flood_worker.py")
    with open(worker, "w") as f:
        f.write(FLOOD_WORKER)
    workloads = [
        {"name": "print 100 B lines, unpaced", "mode": "print", "line": 100, "rate": 0.0,
         "bytes": args.bytes // 5},
        {"name": "os.write 4 KiB lines, unpaced", "mode": "write", "line": 4096, "rate": 0.0,
         "bytes": args.bytes},
        {"name": f"print 1000 B lines, paced {args.rate / 1e6:g} MB/s", "mode": "print",
         "line": 1000, "rate": args.rate, "bytes": args.bytes},
        {"name": f"os.write 100 B lines, paced {args.rate / 1e6:g} MB/s", "mode": "write",
         "line": 100, "rate": args.rate, "bytes": args.bytes},
    ]
    launchers = flood_launchers(args.ddprun, args.python, args.launcher)
    results = {w["name"]: {launcher.name: [] for launcher in launchers} for w in workloads}
    for workload in workloads:
        for _ in range(args.flood_runs):
            for launcher in launchers:
                results[workload["name"]][launcher.name].append(
                    flood_run(launcher, worker, args.flood_nproc, workload, args.sink,
                              args.timeout))
    for launcher in launchers:
        job = launcher.argv + ["--standalone", "--nproc_per_node", str(args.flood_nproc),
                               "--log_dir", "DIR", "FLOOD.py"]
        print(f"  {launcher.name}: "
              f"{benchlib.command_line(job)} > {'/dev/null' if args.sink == 'null' else 'FILE'}")
    print(f"  {args.flood_nproc} workers; bytes in total per run: {args.bytes // 5} (100 B "
          f"unpaced), {args.bytes} (others); median (min–max) over {args.flood_runs} runs")
    print()
    print("| workload | launcher | slowest worker's write time s | total MB/s "
          "| max behind schedule ms | workers' CPU s | launcher CPU s |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for workload in workloads:
        paced = workload["rate"] > 0
        for name, rows in results[workload["name"]].items():
            print(f"| {workload['name']} | {name} "
                  f"| {fmt_range([r['elapsed_s'] for r in rows])} "
                  f"| {fmt_range([r['rate_mb_s'] for r in rows], '{:.0f}')} "
                  f"| {fmt_range([r['behind_ms'] for r in rows], '{:.1f}') if paced else '-'} "
                  f"| {fmt_range([r['workers_cpu_s'] for r in rows], '{:.2f}')} "
                  f"| {fmt_range([r['launcher_cpu_s'] for r in rows], '{:.2f}')} |")
    print()
    return results


def main() -> None:
    args = parse_args()
    parts = set(args.parts.split(","))
    print(f"bench: {benchlib.command_line([sys.executable] + sys.argv)}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    workdir = tempfile.mkdtemp(prefix="ddprun_hang_bench_workers_")
    raw = {}
    began = time.monotonic()
    if "stall" in parts:
        if not os.access(args.ddprun, os.X_OK):
            sys.exit(f"ddprun not found at {args.ddprun} (use --ddprun PATH)")
        raw["stall"] = run_stall(args, workdir)
    if "learned" in parts:
        raw["learned"] = run_learned(args, workdir)
    if "flood" in parts:
        raw["flood"] = run_flood(args, workdir)
    shutil.rmtree(workdir)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"bench took {time.monotonic() - began:.0f} s")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(raw, out, indent=2)


if __name__ == "__main__":
    main()
