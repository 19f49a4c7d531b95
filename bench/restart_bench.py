#!/usr/bin/python3
"""Restart-latency benchmark: worker exit -> replacement worker exec, per launcher.

Job: `<launcher> --standalone --nproc_per_node P --max_restarts 1 --no_python /bin/sh -c W`
where W, a POSIX shell worker, does on attempt 0 (TORCHELASTIC_RESTART_COUNT=0)
`date +%s%N > $DIR/exit_$LOCAL_RANK; exit 1`, and on attempt 1 first thing
`date +%s%N > $DIR/start_$LOCAL_RANK` (then exits 0). Per run it reports
  restart latency = max(start_*) - min(exit_*)   (first failure -> whole group restarted)
  first start     = min(start_*) - min(exit_*)
The timestamps come from separate `date` processes, so each figure includes one /bin/sh
start-up plus one `date` fork+exec (~1-3 ms); "floor" measures exactly that by spawning W's
start half directly from this script. Medians over --runs runs, launchers round-robin.

    /usr/bin/python3 bench/restart_bench.py --ddprun build/src/ddprun --runs 10

--health-checks times ddprun alone, with and without its node health checks before each
round (issue #27): no check at all (--gpu-memory-wait 0), --health-check true, and the
GPU-memory wait over the fake NVML of tests/support/fake_nvml (--fake-nvml DIR, default
build/tests/fake_nvml; memory already free, so one NVML open and one read per restart). The
differences between the medians are the checks' cost per round.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import benchlib

WORKER = """
if [ "$TORCHELASTIC_RESTART_COUNT" = 0 ]; then
    date +%s%N > "$RESTART_BENCH_DIR/exit_$LOCAL_RANK"; exit 1
fi
date +%s%N > "$RESTART_BENCH_DIR/start_$LOCAL_RANK"
"""
FLOOR_WORKER = 'date +%s%N > "$RESTART_BENCH_DIR/start_0"'


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--nproc", type=int, default=2, help="--nproc_per_node")
    p.add_argument("--health-checks", action="store_true",
                   help="time ddprun with and without its node health checks instead")
    p.add_argument("--fake-nvml", default=os.path.join(benchlib.REPO_ROOT, "build", "tests",
                                                       "fake_nvml"),
                   help="directory of the fake libnvidia-ml.so.1 (with --health-checks)")
    benchlib.add_launcher_args(p)
    args = p.parse_args()
    if args.runs < 1 or args.nproc < 1:
        p.error("--runs and --nproc must be >= 1")
    return args


def read_stamps(directory: str, prefix: str) -> list:
    stamps = []
    for path in glob.glob(os.path.join(directory, prefix + "_*")):
        with open(path) as f:
            text = f.read().strip()
        if text:  # a worker stopped by the launcher while writing leaves an empty file
            stamps.append(int(text))
    return stamps


def run_job(launcher: benchlib.Launcher, nproc: int, timeout_s: float) -> tuple:
    """One launch; returns (restart latency s, first-start latency s) or exits on failure."""
    directory = tempfile.mkdtemp(prefix="ddprun_restart_bench_")
    argv = launcher.argv + ["--standalone", "--nproc_per_node", str(nproc), "--max_restarts",
                            "1", "--no_python", "/bin/sh", "-c", WORKER]
    log = os.path.join(directory, "launcher.log")
    env = dict(os.environ, RESTART_BENCH_DIR=directory)
    with open(log, "wb") as out:
        code = subprocess.run(argv, stdout=out, stderr=out, env=env, timeout=timeout_s).returncode
    exits, starts = read_stamps(directory, "exit"), read_stamps(directory, "start")
    # A fast launcher stops the other attempt-0 workers as soon as the first one fails, so
    # only the first exit stamp is guaranteed; every replacement must start.
    if code != 0 or not exits or len(starts) != nproc:
        sys.exit(f"{launcher.name}: exit {code}, {len(exits)} exit / {len(starts)} start "
                 f"stamps (want >= 1 / {nproc}); see {log}")
    shutil.rmtree(directory)
    first_exit = min(exits)
    return (max(starts) - first_exit) / 1e9, (min(starts) - first_exit) / 1e9


def floor_latency() -> float:
    """Spawn -> timestamp latency of the worker's start half, launched from here."""
    directory = tempfile.mkdtemp(prefix="ddprun_restart_floor_")
    env = dict(os.environ, RESTART_BENCH_DIR=directory)
    before = time.time_ns()
    subprocess.run(["/bin/sh", "-c", FLOOR_WORKER], env=env, check=True)
    stamp = read_stamps(directory, "start")[0]
    shutil.rmtree(directory)
    return (stamp - before) / 1e9


def health_check_launchers(ddprun: str, fake_nvml: str) -> list:
    """ddprun without any check, with --health-check true, and with the GPU-memory wait."""
    if not os.access(ddprun, os.X_OK) or not os.path.isdir(fake_nvml):
        sys.exit(f"--health-checks needs {ddprun} and the fake NVML in {fake_nvml}")
    none = ["/usr/bin/env", "LD_LIBRARY_PATH=/nonexistent", ddprun, "--gpu-memory-wait", "0"]
    return [
        benchlib.Launcher("ddprun, no checks", none),
        benchlib.Launcher("ddprun --health-check true", none + ["--health-check", "true"]),
        benchlib.Launcher("ddprun, GPU-memory wait (fake NVML, memory free)",
                          ["/usr/bin/env", "LD_LIBRARY_PATH=" + fake_nvml, "FAKE_NVML_GPUS=2",
                           ddprun, "--gpu-memory-wait", "50"]),
    ]


def main() -> None:
    args = parse_args()
    if args.health_checks:
        launchers = health_check_launchers(args.ddprun, args.fake_nvml)
    else:
        launchers = benchlib.default_launchers(args.ddprun, args.with_default_interval)
    launchers += [benchlib.parse_extra_launcher(spec) for spec in args.launcher]
    results = {launcher.name: [] for launcher in launchers}
    for _ in range(args.runs):
        for launcher in launchers:
            results[launcher.name].append(run_job(launcher, args.nproc, args.timeout))
    floors = [floor_latency() for _ in range(args.runs)]
    print(f"bench: {benchlib.command_line([sys.executable] + sys.argv)}")
    for launcher in launchers:
        job = launcher.argv + ["--standalone", "--nproc_per_node", str(args.nproc),
                               "--max_restarts", "1", "--no_python", "/bin/sh", "-c", "W"]
        print(f"  {launcher.name}: {benchlib.command_line(job)}")
    print(f"  W = {WORKER.strip()!r}")
    print()
    print("| launcher | runs | restart latency median s | min s | max s | first start median s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, pairs in results.items():
        med, low, high = benchlib.summarize([p[0] for p in pairs])
        first = benchlib.summarize([p[1] for p in pairs])[0]
        print(f"| {name} | {len(pairs)} | {med:.3f} | {low:.3f} | {high:.3f} | {first:.3f} |")
    med, low, high = benchlib.summarize(floors)
    print(f"| floor (sh + date spawned directly) | {len(floors)} | {med:.4f} | {low:.4f} "
          f"| {high:.4f} | - |")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"results": results, "floor_s": floors}, out, indent=2)


if __name__ == "__main__":
    main()
