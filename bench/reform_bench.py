#!/usr/bin/env python3
"""Re-form time after a lost agent: SIGKILLed (its guardian tells the rendezvous) or a lost
machine (the agent and its guardian SIGSTOPped: only the keep-alive bound can tell).

Two ddprun agents on 127.0.0.2/3, --nnodes 1:2, c10d and (when /usr/bin/etcd exists) etcd-v3
on a private etcd; each worker writes `start <ns> world=<W>` when it starts and then loops.
Re-form time = the survivor's first start with world=1 - the moment the bench killed or
stopped the other agent. It includes the last call (--last-call seconds).
"""

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

WORKER = """echo "start $(date +%s%N) world=$WORLD_SIZE" >> "$1/starts"
while [ ! -e "$2" ]; do sleep 0.05; done
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ddprun", default=benchlib.DEFAULT_DDPRUN, help="path of the ddprun binary")
    p.add_argument("--runs", type=int, default=3, help="runs per backend and case")
    p.add_argument("--keep-alive", type=int, default=2, help="keep_alive_interval, seconds")
    p.add_argument("--attempts", type=int, default=2, help="keep_alive_max_attempt")
    p.add_argument("--last-call", type=int, default=1, help="last_call_timeout, seconds")
    return p.parse_args()


def start_etcd(work: str):
    client, peer = free_port(), free_port()
    url, purl = f"http://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
    proc = subprocess.Popen(
        ["/usr/bin/etcd", "--data-dir", os.path.join(work, "etcd"), "--listen-client-urls", url,
         "--advertise-client-urls", url, "--listen-peer-urls", purl,
         "--initial-advertise-peer-urls", purl, "--initial-cluster", f"default={purl}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", client), timeout=0.2).close()
            return proc, f"127.0.0.1:{client}"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("etcd did not start")


def starts(d: str) -> list:
    try:
        with open(os.path.join(d, "starts")) as f:
            return [ln.split() for ln in f if ln.startswith("start ")]
    except FileNotFoundError:
        return []


def wait_for(pred, bound: float) -> bool:
    deadline = time.time() + bound
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return False


def guardian_of(pid: int) -> int:
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if int(fields[1]) == pid and comm == "ddprun-guard":
            return int(entry)
    return 0


def agent_argv(args, backend: str, endpoint: str, run_id: str, k: int, d: str, release: str):
    conf = (f"join_timeout=30,last_call_timeout={args.last_call},"
            f"keep_alive_interval={args.keep_alive},keep_alive_max_attempt={args.attempts}")
    return ["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", args.ddprun, "--nnodes", "1:2",
            "--rdzv_backend", backend, "--rdzv_endpoint", endpoint, "--rdzv_id", run_id,
            "--local_addr", f"127.0.0.{2 + k}", "--nproc_per_node", "1", "--rdzv_conf", conf,
            "--no_python", "/bin/sh", "-c", WORKER, "w", d, release]


def one_run(args, backend: str, endpoint: str, case: str, work: str, n: int) -> float:
    run_id = f"reform{n}"
    dirs = [tempfile.mkdtemp(dir=work) for _ in range(2)]
    release = os.path.join(dirs[0], "release")
    procs = []
    try:
        for k in range(2):
            procs.append(subprocess.Popen(
                agent_argv(args, backend, endpoint, run_id, k, dirs[k], release),
                stdout=subprocess.DEVNULL, stderr=open(os.path.join(dirs[k], "err"), "w"),
                start_new_session=True))
            time.sleep(0.5)
        both = wait_for(lambda: all(s and s[-1][2] == "world=2" for s in map(starts, dirs)), 30)
        if not both:
            raise RuntimeError("the two agents did not form a round of two")
        victim = procs[1].pid
        guard = guardian_of(victim)
        t0 = time.time_ns()
        if case == "killed":
            os.kill(victim, signal.SIGKILL)
        else:
            for pid in (guard, victim):
                if pid:
                    os.kill(pid, signal.SIGSTOP)
        bound = 4 * args.keep_alive * args.attempts + 20
        if not wait_for(lambda: any(s[2] == "world=1" and int(s[1]) > t0
                                    for s in starts(dirs[0])), bound):
            raise RuntimeError("the survivor did not re-form")
        t1 = min(int(s[1]) for s in starts(dirs[0]) if s[2] == "world=1" and int(s[1]) > t0)
        if case != "killed":
            for pid in (guard, victim):
                if pid:
                    os.kill(pid, signal.SIGKILL)
        return (t1 - t0) / 1e9
    finally:
        open(release, "w").close()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def main() -> None:
    args = parse_args()
    if not os.access(args.ddprun, os.X_OK):
        sys.exit(f"no ddprun at {args.ddprun}")
    work = tempfile.mkdtemp(prefix="ddprun-reform-")
    etcd = None
    backends = [("c10d", f"127.0.0.1:{free_port()}")]
    if os.access("/usr/bin/etcd", os.X_OK):
        etcd, endpoint = start_etcd(work)
        backends.append(("etcd-v3", endpoint))
    bound = args.keep_alive * args.attempts
    print(f"keep-alive bound {bound} s, last call {args.last_call} s, {args.runs} run(s)\n")
    print("| backend | case | median s | min s | max s |\n| --- | --- | --- | --- | --- |")
    n = 0
    try:
        for backend, endpoint in backends:
            for case in ("killed", "lost machine"):
                samples = []
                for _ in range(args.runs):
                    n += 1
                    ep = endpoint if backend == "etcd-v3" else f"127.0.0.1:{free_port()}"
                    samples.append(one_run(args, backend, ep, case, work, n))
                print(f"| {backend} | {case} | {statistics.median(samples):.2f} | "
                      f"{min(samples):.2f} | {max(samples):.2f} |", flush=True)
    finally:
        if etcd:
            etcd.kill()
            etcd.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
