#!/usr/bin/python3
"""Launch-overhead benchmark: ddprun vs torchrun on a do-nothing job.

Runs `<launcher> --standalone --nproc_per_node 2 --no_python /bin/true` --runs times per
launcher (round-robin, after one untimed warm-up each) and prints a Markdown table of wall
time (median/min/max) and peak RSS.

Memory, measured two ways (both in MiB):
  * ru_maxrss of the launcher from wait4 (taken by GNU time's %M when /usr/bin/time exists,
    else by this script's own os.wait4). Linux reports the max of: the launcher's own peak;
    the RSS of its pre-exec image (a copy of the spawning process: ~2 MiB for GNU time, ~14 MiB
    for this Python script -- hence GNU time); and the peaks of every descendant it reaped:
    the /bin/true workers (~1 MiB) and, between fork and exec, copies of the launcher (at most
    the launcher's own RSS). An upper bound that in practice equals the launcher's peak,
    unless the launcher is smaller than the floor printed as "floor (/bin/true)".
  * VmHWM of /proc/<launcher pid>/status, sampled every 5 ms while it runs: the launcher
    image alone, but a lower bound (growth in the last < 5 ms before exit is missed). For a
    launcher started through bench/in-trixie.sh that image is the wrapper's, so the column
    shows "-"; ru_maxrss still covers the launcher (a descendant the wrapper's chain reaped).

    /usr/bin/python3 bench/launch_bench.py --ddprun build/src/ddprun --runs 20 --json out.json
"""
import argparse
import json
import os
import sys
import tempfile

import benchlib

WORKLOAD = ["--standalone", "--nproc_per_node", "2", "--no_python", "/bin/true"]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10, help="timed runs per launcher (>= 1)")
    benchlib.add_launcher_args(p)
    args = p.parse_args()
    if args.runs < 1:
        p.error("--runs must be >= 1")
    return args


def bench(launchers: list, runs: int, timeout_s: float, workdir: str) -> list:
    samples = [benchlib.Samples(launcher) for launcher in launchers]
    for index in range(runs + 1):  # run 0 is the warm-up
        for sample in samples:
            argv = sample.launcher.argv + WORKLOAD
            log = os.path.join(workdir, f"run{index}.log")
            result = benchlib.run_once(argv, workdir, log, timeout_s)
            if result.returncode != 0:
                sys.exit(f"{sample.launcher.name} exited {result.returncode}; log: {log}")
            if index > 0:
                sample.runs.append(result)
    return samples


def markdown(samples: list) -> str:
    rows = ["| launcher | runs | median s | min s | max s | ru_maxrss MiB (median) "
            "| VmHWM MiB (median) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for sample in samples:
        med, low, high = benchlib.summarize([r.wall_s for r in sample.runs])
        rss = benchlib.summarize([r.ru_maxrss_kib for r in sample.runs])[0]
        hwm = benchlib.summarize([r.vm_hwm_kib for r in sample.runs])[0]
        hwm_text = "-" if sample.launcher.wrapped else benchlib.mib(hwm)
        rows.append(f"| {sample.launcher.name} | {len(sample.runs)} | {med:.3f} | {low:.3f} "
                    f"| {high:.3f} | {benchlib.mib(rss)} | {hwm_text} |")
    return "\n".join(rows)


def main() -> None:
    args = parse_args()
    launchers = benchlib.default_launchers(args.ddprun, args.with_default_interval)
    launchers += [benchlib.parse_extra_launcher(spec) for spec in args.launcher]
    workdir = tempfile.mkdtemp(prefix="ddprun_launch_bench_")
    samples = bench(launchers, args.runs, args.timeout, workdir)
    floor = benchlib.run_once(["/bin/true"], workdir, os.path.join(workdir, "floor.log"), 10.0)
    print(f"bench: {benchlib.command_line([sys.executable] + sys.argv)}")
    method = f"GNU time %M ({benchlib.GNU_TIME})" if benchlib.use_gnu_time() else "os.wait4"
    print(f"ru_maxrss via {method}; floor (/bin/true) {benchlib.mib(floor.ru_maxrss_kib)} MiB")
    for launcher in launchers:
        print(f"  {launcher.name}: {benchlib.command_line(launcher.argv + WORKLOAD)}")
    print()
    print(markdown(samples))
    if args.json:
        launchers_raw = [{"launcher": s.launcher.name, "argv": s.launcher.argv + WORKLOAD,
                          "runs": [vars(r) for r in s.runs]} for s in samples]
        raw = {"floor_ru_maxrss_kib": floor.ru_maxrss_kib, "launchers": launchers_raw}
        with open(args.json, "w") as out:
            json.dump(raw, out, indent=2)


if __name__ == "__main__":
    main()
