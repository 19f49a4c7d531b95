#!/usr/bin/python3
"""etcd-v3 rendezvous benchmark (issue 18): c10d and etcd-v3 side by side, on loopback.

Starts a 3-member etcd cluster on 127.0.0.1 (`/usr/bin/etcd`, free ports, a temp data dir, the
flags of tests/support/etcd_cluster.cpp: --heartbeat-interval 50 --election-timeout 500),
then runs, backends alternating within each repetition (the first one alternates too):

Part "finish": for each N in --nodes, N ddprun agents started at once,

    ddprun --nnodes N --rdzv_backend B --rdzv_endpoint E --rdzv_id <fresh> --local_addr
           127.0.0.<k+2> --rdzv_conf CONF --nproc_per_node 1 --log_dir DIR --no_python /bin/true

with E = 127.0.0.1:PORT for c10d (whichever agent binds it first hosts the store, as in
bench/multinode_bench.py) and the three etcd members for etcd-v3; wall time from the first
spawn to the last agent's exit (pidfd), every agent must exit 0 (else the run counts as failed,
its first failed agent's log tail is printed and the bench exits 1). CONF is the same for both
backends (--conf). For each etcd-v3 run the etcd requests it caused are read from the members'
/metrics (gRPC requests by method, summed over the members; raft proposals committed, i.e.
writes, a failed compare-and-set txn included). --watch-keys also runs `etcdctl watch --prefix`
on the run's keys and reports its writes per key and when the exit barrier's `done` counter got
its first write and reached N.

Part "recovery": --recovery-nodes R agents (default 4) with `--nnodes R-1:R`, `--log_level
INFO --events-file EV`, a worker that prints a line every 100 ms forever
(`/bin/sh -c 'while :; do echo tick; sleep 0.1; done'`). Once every agent's workers run in a
round of R, and --settle seconds later, the agent whose `rendezvous` event says group_rank 0
is sent SIGKILL. Measured from the kill (wall clock; events-file `ts` and the agents' glog
lines are wall clock too), over the survivors:
  detect  = first "membership changed (" log line (a survivor found the dead node)
  formed  = last `rendezvous` event of the new round (world R-1)
  started = first / last `workers_started` event of the new round
Then SIGTERM to the survivors, and a check that no process of the run (agents or workers,
found by an environment tag) is left. Variants:
  c10d-store  c10d against a separate `ddprun store serve` (rdzv_conf is_host=false), so
              that no agent holds the rendezvous: the like-for-like comparison
  etcd-v3     the etcd cluster above
  c10d-agent  c10d with the store in an agent (as torchrun does): that agent is group rank 0,
              so killing it takes the rendezvous with it; reported is when the survivors exit
The lease TTL printed beside it is ddprun's: max(3 s, ceil(keep_alive_interval x
keep_alive_max_attempt)); the issue's goal is recovery within TTL + 1 s.

Every run has a fresh --rdzv_id; every wait is bounded (--timeout); etcd, the agents and
their workers are killed and the temp dirs removed at the end, on an error and on Ctrl-C or
SIGTERM (and die with the bench through PR_SET_PDEATHSIG).

    /usr/bin/python3 bench/rdzv_etcd_bench.py --ddprun build/src/ddprun --reps 3
"""
import argparse
import base64
import ctypes
import datetime
import json
import math
import os
import re
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

import benchlib

ETCD = "/usr/bin/etcd"
ETCD_HEARTBEAT_MS, ETCD_ELECTION_MS = "50", "500"  # as tests/support/etcd_cluster.cpp
DEFAULT_CONF = "join_timeout=60,last_call_timeout=1,keep_alive_interval=1,keep_alive_max_attempt=3"
TICK_WORKER = "while :; do echo tick; sleep 0.1; done"
TAG_VAR = "RDZV_ETCD_BENCH_TAG"
KEY_PREFIX = "/ddprun/rdzv/"
GRPC_HANDLED = re.compile(
    r'^grpc_server_handled_total\{[^}]*grpc_method="(\w+)"[^}]*grpc_service="etcdserverpb\.'
    r'(?:KV|Lease|Watch)"[^}]*\} (\S+)$')
PROPOSALS = "etcd_server_proposals_committed_total"
GLOG = re.compile(r"^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) ")
BACKENDS = ("c10d", "etcd-v3")
VARIANTS = ("c10d-store", "etcd-v3", "c10d-agent")
PR_SET_PDEATHSIG = 1

_libc = ctypes.CDLL(None, use_errno=True)
_spawned = []  # every Popen of this bench, for the cleanup


def _die_with_parent() -> None:
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def spawn(argv: list, log_path: str, env: dict = None) -> subprocess.Popen:
    """argv in its own session, stdout+stderr to log_path, SIGKILLed if this bench dies."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                start_new_session=True, preexec_fn=_die_with_parent)
    _spawned.append(proc)
    return proc


def kill_and_reap(procs: list, sig: int = signal.SIGKILL) -> None:
    for p in procs:
        if p.poll() is None:
            try:
                os.kill(p.pid, sig)
            except ProcessLookupError:
                pass
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)
            p.wait()


def tagged_pids(tag: str) -> list:
    """Processes whose environment holds TAG_VAR=tag (a run's agents and their workers)."""
    needle = f"{TAG_VAR}={tag}".encode() + b"\0"
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if needle in f.read():
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


def kill_tagged(tag: str) -> list:
    """SIGKILLs the run's processes still alive; returns them as "pid (command)"."""
    killed = []
    for pid in tagged_pids(tag):
        try:
            with open(f"/proc/{pid}/comm") as f:
                name = f.read().strip()
            os.kill(pid, signal.SIGKILL)
            killed.append(f"{pid} ({name})")
        except OSError:
            pass
    return killed


def reap_tagged(tag: str) -> list:
    """Waits up to 5 s for the run's processes to be gone (an agent's guardian, ddprun-guard,
    exits just after its agent), then kills what is left and returns it."""
    if wait_until(lambda: not tagged_pids(tag), 5, 0.05):
        return []
    return kill_tagged(tag)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path: str, chars: int = 1500) -> str:
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError as e:
        return f"({e})"
    return text[-chars:]


class EtcdCluster:
    """A 3-member etcd on 127.0.0.1 (two free ports per member), as the tests start one."""

    def __init__(self, etcd: str, members: int, base_dir: str):
        self.etcd = etcd
        self.dir = tempfile.mkdtemp(prefix="ddprun_etcd_bench_", dir=base_dir)
        self.ports = [(free_port(), free_port()) for _ in range(members)]
        self.procs = []

    def argv(self, m: int) -> list:
        cluster = ",".join(f"m{i}=http://127.0.0.1:{peer}" for i, (_, peer) in
                           enumerate(self.ports))
        client, peer = self.ports[m]
        return [self.etcd, "--name", f"m{m}", "--data-dir", os.path.join(self.dir, f"m{m}"),
                "--listen-client-urls", f"http://127.0.0.1:{client}",
                "--advertise-client-urls", f"http://127.0.0.1:{client}",
                "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-cluster", cluster, "--initial-cluster-state", "new",
                "--initial-cluster-token", "ddprun-bench",
                "--heartbeat-interval", ETCD_HEARTBEAT_MS, "--election-timeout", ETCD_ELECTION_MS]

    def endpoints(self) -> str:
        return ",".join(f"127.0.0.1:{client}" for client, _ in self.ports)

    def _healthy(self, m: int) -> bool:
        try:
            url = f"http://127.0.0.1:{self.ports[m][0]}/health"
            with urllib.request.urlopen(url, timeout=1) as r:
                return json.loads(r.read()).get("health") == "true"
        except (OSError, ValueError):
            return False

    def start(self, timeout_s: float = 30.0) -> None:
        for m in range(len(self.ports)):
            self.procs.append(spawn(self.argv(m), os.path.join(self.dir, f"m{m}.log")))
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for m, p in enumerate(self.procs):
                if p.poll() is not None:
                    raise RuntimeError(f"etcd member m{m} exited {p.returncode}:\n"
                                       + tail(os.path.join(self.dir, f"m{m}.log")))
            if all(self._healthy(m) for m in range(len(self.procs))):
                return
            time.sleep(0.1)
        raise RuntimeError(f"etcd not healthy after {timeout_s:.0f} s; m0.log:\n"
                           + tail(os.path.join(self.dir, "m0.log")))

    def kv(self, verb: str, key: str, value: str = None) -> None:
        """One put or deleterange through the v3 JSON gateway of member 0."""
        body = {"key": base64.b64encode(key.encode()).decode()}
        if value is not None:
            body["value"] = base64.b64encode(value.encode()).decode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.ports[0][0]}/v3/kv/{verb}",
                                         data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(request, timeout=3) as r:
            r.read()

    def count_keys(self, prefix: str) -> int:
        """Keys under prefix, through the v3 JSON gateway of member 0 (-1: no answer)."""
        def b64(text):
            return base64.b64encode(text.encode()).decode()
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        body = json.dumps({"key": b64(prefix), "range_end": b64(end), "count_only": True})
        request = urllib.request.Request(f"http://127.0.0.1:{self.ports[0][0]}/v3/kv/range",
                                         data=body.encode(), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=3) as r:
                return int(json.loads(r.read()).get("count", 0))
        except (OSError, ValueError):
            return -1

    def metrics(self):
        """(client port, /metrics text) of each member that answers."""
        for client, _ in self.ports:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{client}/metrics", timeout=3) as r:
                    yield client, r.read().decode()
            except OSError:
                continue

    def counters(self) -> dict:
        """Client requests by gRPC method (Txn, Range, Put, ...; the JSON gateway forwards to
        these), summed over the members, and raft proposals committed (writes) of member 0."""
        out = {}
        for client, text in self.metrics():
            for line in text.splitlines():
                m = GRPC_HANDLED.match(line)
                if m:
                    out[m.group(1)] = out.get(m.group(1), 0) + int(float(m.group(2)))
                elif client == self.ports[0][0] and line.startswith(PROPOSALS + " "):
                    out["proposals"] = int(float(line.split()[1]))
        return out

    def stop(self) -> None:
        kill_and_reap(self.procs)
        shutil.rmtree(self.dir, ignore_errors=True)


class KeyWatch:
    """`etcdctl watch --prefix` on one run's keys: every PUT with the time this bench read it
    (perf_counter; read as it arrives while the bench waits, so late by at most a poll)."""

    def __init__(self, etcdctl: str, etcd: EtcdCluster, prefix: str, log_path: str):
        self.etcd, self.prefix = etcd, prefix
        env = dict(os.environ, ETCDCTL_API="3")
        with open(log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [etcdctl, "--endpoints", etcd.endpoints(), "watch", "--prefix", prefix, "-w",
                 "json"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, env=env,
                start_new_session=True, preexec_fn=_die_with_parent)
        _spawned.append(self.proc)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self.buf, self.puts = b"", []  # (time, key without prefix, value)
        sentinel = prefix + "_watch_ready"
        deadline = time.monotonic() + 10
        while not any(k == "_watch_ready" for _, k, _ in self.puts):  # the watch is live
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("etcdctl watch did not start: " + tail(log_path, 400))
            etcd.kv("put", sentinel, "1")
            time.sleep(0.05)
            self.drain()
        etcd.kv("deleterange", sentinel)
        self.puts.clear()

    def fileno(self) -> int:
        return self.proc.stdout.fileno()

    def drain(self) -> None:
        now = time.perf_counter()
        while True:
            try:
                chunk = os.read(self.fileno(), 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            self.buf += chunk
        *lines, self.buf = self.buf.split(b"\n")
        for line in lines:
            try:
                events = json.loads(line).get("Events") or []
            except ValueError:
                continue
            for e in events:
                if e.get("type", 0) == 0:
                    kv = e["kv"]
                    key = base64.b64decode(kv["key"]).decode(errors="replace")
                    value = base64.b64decode(kv.get("value", "")).decode(errors="replace")
                    self.puts.append((now, key[len(self.prefix):], value))

    def stop(self) -> list:
        time.sleep(0.2)  # the last events of the run
        self.drain()
        kill_and_reap([self.proc], signal.SIGTERM)
        return self.puts


def key_kind(key: str) -> str:
    """g1/ddprun/rdzv/ID/0/slot/12 -> 0/slot/*, g1/alive/NODE -> alive/*: one name per kind."""
    key = re.sub(r"^g\d+/ddprun/rdzv/[^/]+/", "", key)
    key = re.sub(r"^g\d+/", "", key)
    return re.sub(r"^((?:\d+/)?(?:hb|progress|alive|slot|rank|stacks))/.*$", r"\1/*", key)


def summarize_puts(puts: list, start: float, nodes: int) -> dict:
    by_kind = {}
    for _, key, _ in puts:
        by_kind[key_kind(key)] = by_kind.get(key_kind(key), 0) + 1
    done = [(t, v) for t, k, v in puts if key_kind(k).endswith("/done")]
    full = [t for t, v in done if v.strip() == str(nodes)]
    return {"puts": len(puts), "by_kind": by_kind,
            "first_done_s": done[0][0] - start if done else None,
            "done_full_s": full[0] - start if full else None,
            "done_puts": len(done)}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ddprun", default=benchlib.DEFAULT_DDPRUN, help="path of the ddprun binary")
    p.add_argument("--etcd", default=ETCD, help="path of the etcd server binary")
    p.add_argument("--parts", default="finish,recovery", help="which parts: finish,recovery")
    p.add_argument("--nodes", default="4,16,64", help="finish: comma-separated agent counts")
    p.add_argument("--reps", type=int, default=3, help="repetitions per backend and N (>= 1)")
    p.add_argument("--recovery-nodes", type=int, default=4,
                   help="recovery: agents R, started with --nnodes R-1:R (>= 3)")
    p.add_argument("--recovery-reps", type=int, default=None, help="recovery runs (default --reps)")
    p.add_argument("--variants", default=",".join(VARIANTS),
                   help="recovery variants: c10d-store,etcd-v3,c10d-agent")
    p.add_argument("--conf", default=DEFAULT_CONF,
                   help="--rdzv_conf given to every agent of both backends")
    p.add_argument("--settle", type=float, default=1.5,
                   help="recovery: seconds between all workers running and the kill")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="bound of each run (finish) and of each wait (recovery), seconds")
    p.add_argument("--data-dir", default=None,
                   help="where the etcd data dirs go (default: the system temp dir)")
    p.add_argument("--log-level", default=None,
                   help="finish: --log_level for the agents (default: ddprun's, WARNING)")
    p.add_argument("--watch-keys", action="store_true",
                   help="finish: watch each etcd-v3 run's keys with etcdctl and report the "
                        "writes per key and when the exit barrier's `done` counter moved")
    p.add_argument("--etcdctl", default="/usr/bin/etcdctl", help="etcdctl, for --watch-keys")
    p.add_argument("--json", default=None, help="also write the raw results here")
    p.add_argument("--keep-logs", action="store_true", help="keep the agents' logs")
    args = p.parse_args()
    args.ddprun = os.path.abspath(args.ddprun)
    if args.recovery_reps is None:
        args.recovery_reps = args.reps
    if args.reps < 1 or args.recovery_reps < 1 or args.recovery_nodes < 3:
        p.error("--reps and --recovery-reps must be >= 1, --recovery-nodes >= 3")
    if not os.access(args.ddprun, os.X_OK):
        p.error(f"ddprun not found at {args.ddprun} (use --ddprun PATH)")
    if not os.access(args.etcd, os.X_OK):
        p.error(f"etcd not found at {args.etcd} (Debian package etcd-server; or --etcd PATH)")
    args.parts = args.parts.split(",")
    args.variants = args.variants.split(",")
    for part in args.parts:
        if part not in ("finish", "recovery"):
            p.error(f"unknown part {part!r}")
    for v in args.variants:
        if v not in VARIANTS:
            p.error(f"unknown variant {v!r}")
    return args


def conf_value(conf: str, key: str, default: float) -> float:
    for item in conf.split(","):
        k, _, v = item.partition("=")
        if k.strip() == key:
            return float(v)
    return default


def keep_alive_bound(conf: str) -> float:
    """keep_alive_interval x keep_alive_max_attempt (ddprun's defaults 5 s x 3)."""
    interval = conf_value(conf, "keep_alive_interval", 5)
    return interval * conf_value(conf, "keep_alive_max_attempt", 3)


def lease_ttl(conf: str) -> int:
    """ddprun's etcd lease TTL (src/rdzv/etcd_layout.cpp, lease_ttl)."""
    return max(3, math.ceil(keep_alive_bound(conf) - 1e-9))


def agent_env(tag: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PET_")}
    env[TAG_VAR] = tag
    return env


def agent_argv(args, backend: str, nnodes, endpoint: str, rdzv_id: str, k, conf: str,
               logdir: str = "DIR") -> list:
    """Agent k's flags before the worker (k None: the displayed template). --log_dir keeps
    each agent's (empty) log directory in the run's directory instead of /tmp."""
    addr = "127.0.0.<k+2>" if k is None else f"127.0.0.{k + 2}"
    return [args.ddprun, "--nnodes", str(nnodes), "--rdzv_backend", backend,
            "--rdzv_endpoint", endpoint, "--rdzv_id", rdzv_id, "--local_addr", addr,
            "--rdzv_conf", conf, "--nproc_per_node", "1", "--log_dir", logdir]


def wait_exits(procs: list, deadline: float, watch: KeyWatch = None) -> dict:
    """Blocks until every process exited or deadline (perf_counter) passed; returns
    {index: perf_counter of its exit} for those that exited (and reaps them). Meanwhile
    drains `watch` as its events arrive."""
    poller, fds, ends = select.poll(), {}, {}
    if watch is not None:
        poller.register(watch.fileno(), select.POLLIN)
    for i, p in enumerate(procs):
        if p.returncode is None:
            fd = os.pidfd_open(p.pid)
            fds[fd] = i
            poller.register(fd, select.POLLIN)
    try:
        while fds:
            left = deadline - time.perf_counter()
            if left <= 0:
                break
            for fd, _ in poller.poll(left * 1000):
                if watch is not None and fd == watch.fileno():
                    watch.drain()
                    continue
                now = time.perf_counter()
                i = fds.pop(fd)
                poller.unregister(fd)
                os.close(fd)
                procs[i].wait()
                ends[i] = now
    finally:
        for fd in fds:
            os.close(fd)
    return ends


def shown(argv: list) -> str:
    """argv as a shell line, the executable relative to the repository when it is inside."""
    out = list(argv)
    if out[0].startswith(benchlib.REPO_ROOT + os.sep):
        out[0] = os.path.relpath(out[0], benchlib.REPO_ROOT)
    return benchlib.command_line(out)


# ---------------------------------------------------------------- part 1: time to all finished

def finish_run(args, backend: str, nodes: int, etcd: EtcdCluster, logdir: str) -> dict:
    endpoint = f"127.0.0.1:{free_port()}" if backend == "c10d" else etcd.endpoints()
    rdzv_id = "bench-" + uuid.uuid4().hex[:12]
    tag = uuid.uuid4().hex
    env = agent_env(tag)
    procs = []
    watch = None
    if args.watch_keys and backend == "etcd-v3":
        watch = KeyWatch(args.etcdctl, etcd, KEY_PREFIX + rdzv_id + "/",
                         os.path.join(logdir, "watch.log"))
    before = etcd.counters() if backend == "etcd-v3" else None
    start = time.perf_counter()
    for k in range(nodes):
        argv = agent_argv(args, backend, nodes, endpoint, rdzv_id, k, args.conf,
                          os.path.join(logdir, "ddprun-logs"))
        if args.log_level:
            argv += ["--log_level", args.log_level]
        procs.append(spawn(argv + ["--no_python", "/bin/true"],
                           os.path.join(logdir, f"agent{k}.log"), env))
        if watch is not None:
            watch.drain()
    ends = wait_exits(procs, start + args.timeout, watch)
    wall = (max(ends.values()) if ends else time.perf_counter()) - start
    failure = None
    if len(ends) < nodes:
        failure = f"timeout after {args.timeout:.0f} s ({nodes - len(ends)} agents still running)"
        stuck = [k for k in range(nodes) if k not in ends]
        kill_and_reap(procs)
        log = os.path.join(logdir, f"agent{stuck[0]}.log")
        print(f"  agent {stuck[0]} stderr tail:\n{tail(log)}", file=sys.stderr)
    else:
        bad = [(k, p.returncode) for k, p in enumerate(procs) if p.returncode != 0]
        if bad:
            failure = f"{len(bad)} agents failed (agent {bad[0][0]} exit {bad[0][1]})"
            print(f"  agent {bad[0][0]} stderr tail:\n"
                  f"{tail(os.path.join(logdir, f'agent{bad[0][0]}.log'))}", file=sys.stderr)
    left = reap_tagged(tag)
    if left and not failure:
        failure = f"still running 5 s after the agents exited: {', '.join(left)}"
    requests = None
    if before is not None:
        after = etcd.counters()
        requests = {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}
    keys = summarize_puts(watch.stop(), start, nodes) if watch is not None else None
    return {"backend": backend, "nodes": nodes, "wall_s": wall, "failure": failure,
            "logdir": logdir, "etcd_requests": requests, "etcd_keys": keys}


def run_finish(args, etcd: EtcdCluster, workdir: str) -> list:
    results = []
    for nodes in [int(n) for n in args.nodes.split(",")]:
        for rep in range(args.reps):
            order = BACKENDS if rep % 2 == 0 else BACKENDS[::-1]
            for backend in order:
                logdir = os.path.join(workdir, f"finish-{backend}-n{nodes}-r{rep}")
                os.makedirs(logdir)
                r = finish_run(args, backend, nodes, etcd, logdir)
                results.append(r)
                extra = ""
                if r["etcd_requests"] is not None:
                    extra = " (etcd: " + ", ".join(
                        f"{k} {v}" for k, v in sorted(r["etcd_requests"].items())) + ")"
                print(f"finish {backend} N={nodes} rep {rep}: {r['wall_s']:.3f} s{extra}"
                      + (f" FAILED: {r['failure']} ({logdir})" if r["failure"] else ""),
                      file=sys.stderr, flush=True)
    return results


def print_finish(args, results: list) -> None:
    print("Part finish, agent k = 0..N-1 (c10d: E = 127.0.0.1:PORT, hosted by the first agent "
          "to bind it; etcd-v3: E = the 3 members):")
    print(f"  `{shown(agent_argv(args, 'B', 'N', 'E', 'ID', None, args.conf))} "
          "--no_python /bin/true`")
    print()
    print("| N | runs | c10d median s (min–max) | etcd-v3 median s (min–max) "
          "| ratio etcd-v3 / c10d | etcd-v3 run: txn / range / put requests, raft commits "
          "(median) | failed runs |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for nodes in [int(n) for n in args.nodes.split(",")]:
        cells, failed = {}, 0
        for backend in BACKENDS:
            rows = [r for r in results if r["nodes"] == nodes and r["backend"] == backend]
            failed += sum(1 for r in rows if r["failure"])
            cells[backend] = [r["wall_s"] for r in rows if not r["failure"]]
        reqs = [r["etcd_requests"] for r in results if r["nodes"] == nodes
                and r["backend"] == "etcd-v3" and r["etcd_requests"] and not r["failure"]]

        def req(key):
            return f"{statistics.median([q.get(key, 0) for q in reqs]):.0f}" if reqs else "-"
        counts = f"{req('Txn')} / {req('Range')} / {req('Put')}, {req('proposals')}"
        if not cells["c10d"] or not cells["etcd-v3"]:
            print(f"| {nodes} | {args.reps} | - | - | - | {counts} | {failed} |")
            continue
        med = {b: statistics.median(v) for b, v in cells.items()}
        ratio = med["etcd-v3"] / med["c10d"]
        print(f"| {nodes} | {args.reps} | {fmt_range(cells['c10d'])} "
              f"| {fmt_range(cells['etcd-v3'])} | {ratio:.2f}× | {counts} | {failed} |")
    print()
    watched = [r for r in results if r.get("etcd_keys")]
    if watched:
        print("etcd-v3 runs under `--watch-keys` (successful writes seen by `etcdctl watch "
              "--prefix`; times after the first spawn):")
        print()
        print("| N | run s | writes | `done` writes | first `done` write s | `done` = N s "
              "| writes by key (top 5) |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for r in watched:
            k = r["etcd_keys"]
            top = sorted(k["by_kind"].items(), key=lambda kv: -kv[1])[:5]

            def sec(v):
                return "-" if v is None else f"{v:.3f}"
            print(f"| {r['nodes']} | {r['wall_s']:.3f} | {k['puts']} | {k['done_puts']} "
                  f"| {sec(k['first_done_s'])} | {sec(k['done_full_s'])} | "
                  + ", ".join(f"`{name}` {n}" for name, n in top) + " |")
        print()


def fmt_range(values: list, spec: str = "{:.3f}") -> str:
    med, low, high = benchlib.summarize(values)
    return f"{spec.format(med)} ({spec.format(low)}–{spec.format(high)})"


# ---------------------------------------------------------------- part 2: recovery

def read_events(path: str) -> list:
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            pass  # a line being written
    return out


def glog_times(log_path: str, needle: str, near_s: float) -> list:
    """Wall-clock times of the log lines containing needle (glog prefix: local time, no year)."""
    year = datetime.datetime.fromtimestamp(near_s).year
    times = []
    with open(log_path, errors="replace") as f:
        for line in f:
            match = GLOG.match(line)
            if match and needle in line:
                month, day, hour, minute, second, micro = (int(g) for g in match.groups())
                times.append(datetime.datetime(year, month, day, hour, minute, second,
                                               micro).timestamp())
    return times


def wait_until(predicate, timeout_s: float, step_s: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout_s
    while True:
        if predicate():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(step_s)


def last_round(events: list) -> tuple:
    """(last rendezvous event, whether a workers_started event follows it)."""
    rdzv, started = None, False
    for e in events:
        if e.get("event") == "rendezvous":
            rdzv, started = e, False
        elif e.get("event") == "workers_started" and rdzv is not None:
            started = True
    return rdzv, started


def connectable(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def recovery_run(args, variant: str, etcd: EtcdCluster, logdir: str) -> dict:
    n = args.recovery_nodes
    tag = uuid.uuid4().hex
    env = agent_env(tag)
    rdzv_id = "recovery-" + uuid.uuid4().hex[:12]
    result = {"variant": variant, "failure": None, "logdir": logdir}
    store = None
    conf = args.conf
    if variant == "etcd-v3":
        backend, endpoint = "etcd-v3", etcd.endpoints()
    else:
        backend, port = "c10d", free_port()
        endpoint = f"127.0.0.1:{port}"
        if variant == "c10d-store":
            conf += ",is_host=false"
            store = spawn([args.ddprun, "store", "serve", "--host", "127.0.0.1", "--port",
                           str(port)], os.path.join(logdir, "store.log"), env)
            if not wait_until(lambda: connectable(port), 10):
                kill_and_reap([store])
                result["failure"] = "ddprun store serve did not listen: " + tail(
                    os.path.join(logdir, "store.log"), 400)
                return result
    procs, logs, evs = [], [], []
    try:
        for k in range(n):
            logs.append(os.path.join(logdir, f"agent{k}.log"))
            evs.append(os.path.join(logdir, f"events{k}.jsonl"))
            argv = agent_argv(args, backend, f"{n - 1}:{n}", endpoint, rdzv_id, k, conf,
                              os.path.join(logdir, "ddprun-logs"))
            argv += ["--log_level", "INFO", "--events-file", evs[-1], "--no_python", "/bin/sh",
                     "-c", TICK_WORKER]
            procs.append(spawn(argv, logs[-1], env))

        def all_running() -> bool:
            for ev in evs:
                rdzv, started = last_round(read_events(ev))
                if rdzv is None or rdzv.get("group_world_size") != n or not started:
                    return False
            return True

        if not wait_until(all_running, args.timeout):
            bad = [k for k, p in enumerate(procs) if p.poll() is not None] or [0]
            result["failure"] = (f"the round of {n} did not start its workers within "
                                 f"{args.timeout:.0f} s; agent {bad[0]} log:\n{tail(logs[bad[0]])}")
            return result
        time.sleep(args.settle)
        victim = next(k for k, ev in enumerate(evs)
                      if last_round(read_events(ev))[0].get("group_rank") == 0)
        survivors = [k for k in range(n) if k != victim]
        t_kill = time.time()
        kill_perf = time.perf_counter()
        os.kill(procs[victim].pid, signal.SIGKILL)
        result["victim"] = victim
        if variant == "c10d-agent":
            ends = wait_exits([procs[k] for k in survivors], kill_perf + args.timeout)
            if len(ends) < len(survivors):
                result["failure"] = f"survivors still running {args.timeout:.0f} s after the kill"
                return result
            result["survivors_exit_s"] = [t - kill_perf for t in ends.values()]
            result["survivor_codes"] = sorted({procs[k].returncode for k in survivors})
            result["store_lost_logged"] = all(
                "lost the rendezvous store" in tail(logs[k], 100000) for k in survivors)
            return result

        def new_round(k: int):
            """(rendezvous event, workers_started event) of the first round after the kill."""
            rdzv = None
            for e in read_events(evs[k]):
                if e.get("ts", 0) <= t_kill:
                    continue
                if e.get("event") == "rendezvous" and rdzv is None:
                    rdzv = e
                elif e.get("event") == "workers_started" and rdzv is not None:
                    return rdzv, e
            return None

        def recovered() -> bool:
            if any(procs[k].poll() is not None for k in survivors):
                return True  # fails below
            return all(new_round(k) for k in survivors)

        ok = wait_until(recovered, args.timeout)
        dead = [k for k in survivors if procs[k].poll() is not None]
        if dead or not ok:
            k = dead[0] if dead else survivors[0]
            result["failure"] = ((f"survivor agent {k} exited {procs[k].returncode}" if dead else
                                  f"no new round within {args.timeout:.0f} s")
                                 + f"; agent {k} log:\n{tail(logs[k])}")
            return result
        rounds = [new_round(k) for k in survivors]
        worlds = {r[0].get("group_world_size") for r in rounds}
        if worlds != {n - 1}:
            result["failure"] = f"the new round's world sizes are {sorted(worlds)}, not {n - 1}"
            return result
        detect = [t for k in survivors for t in glog_times(logs[k], "membership changed (", t_kill)
                  if t > t_kill]
        result["detect_s"] = min(detect) - t_kill if detect else None
        result["formed_s"] = max(r[0]["ts"] for r in rounds) - t_kill
        result["first_start_s"] = min(r[1]["ts"] for r in rounds) - t_kill
        result["last_start_s"] = max(r[1]["ts"] for r in rounds) - t_kill
        # Stop the job: SIGTERM to the survivors (the killed agent is reaped below).
        for k in survivors:
            os.kill(procs[k].pid, signal.SIGTERM)
        ends = wait_exits([procs[k] for k in survivors], time.perf_counter() + 30)
        if len(ends) < len(survivors):
            result["failure"] = "survivors still running 30 s after SIGTERM"
            return result
        result["stop_codes"] = sorted({procs[k].returncode for k in survivors})
        return result
    finally:
        kill_and_reap(procs)
        if store is not None:
            kill_and_reap([store], signal.SIGTERM)
        left = reap_tagged(tag)
        if left and not result["failure"]:
            result["failure"] = f"still running 5 s after the agents exited: {', '.join(left)}"
        result["victim_code"] = procs[result["victim"]].returncode if "victim" in result else None


def run_recovery(args, etcd: EtcdCluster, workdir: str) -> list:
    results = []
    for rep in range(args.recovery_reps):
        order = args.variants if rep % 2 == 0 else args.variants[::-1]
        for variant in order:
            logdir = os.path.join(workdir, f"recovery-{variant}-r{rep}")
            os.makedirs(logdir)
            r = recovery_run(args, variant, etcd, logdir)
            results.append(r)
            if r["failure"]:
                line = f"FAILED: {r['failure']} ({logdir})"
            elif variant == "c10d-agent":
                line = (f"survivors exited {r['survivor_codes']} after "
                        f"{max(r['survivors_exit_s']):.3f} s")
            else:
                line = (f"detect {r['detect_s']:.3f} s, formed {r['formed_s']:.3f} s, "
                        f"workers {r['first_start_s']:.3f}–{r['last_start_s']:.3f} s; "
                        f"after SIGTERM exit {r['stop_codes']}")
            print(f"recovery {variant} rep {rep}: {line}", file=sys.stderr, flush=True)
    return results


def print_recovery(args, results: list, keys_left: int) -> None:
    n = args.recovery_nodes
    bound, ttl = keep_alive_bound(args.conf), lease_ttl(args.conf)
    print(f"Part recovery: {n} agents, `--nnodes {n - 1}:{n}`, worker `/bin/sh -c "
          f"{TICK_WORKER!r}`, SIGKILL to the group-rank-0 agent {args.settle:g} s after all "
          f"workers run; keep-alive bound {bound:g} s, etcd lease TTL {ttl} s, goal TTL + 1 s = "
          f"{ttl + 1} s; last_call_timeout {conf_value(args.conf, 'last_call_timeout', 30):g} s. "
          "Seconds after the kill, median (min–max):")
    print(f"  `{shown(agent_argv(args, 'B', f'{n - 1}:{n}', 'E', 'ID', None, args.conf))} "
          f"--log_level INFO --events-file EV --no_python /bin/sh -c W`"
          " (c10d-store: E = a `ddprun store serve`, plus `is_host=false` in --rdzv_conf)")
    print()
    print("| variant | runs | detect (first `membership changed`) | new round formed "
          "| detect → formed | first worker started | last worker started | failed runs |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for variant in args.variants:
        rows = [r for r in results if r["variant"] == variant]
        ok = [r for r in rows if not r["failure"]]
        failed = len(rows) - len(ok)
        if variant == "c10d-agent":
            exits = [max(r["survivors_exit_s"]) for r in ok]
            codes = sorted({c for r in ok for c in r["survivor_codes"]})
            text = (f"no recovery: the store died with it; survivors exit {codes} after "
                    f"{fmt_range(exits)}" if ok else "-")
            print(f"| c10d, store in the rank-0 agent | {len(rows)} | {text} | - | - | - | - "
                  f"| {failed} |")
            continue

        def col(key):
            values = [r[key] for r in ok if r.get(key) is not None]
            return fmt_range(values) if values else "-"
        name = {"c10d-store": "c10d, separate `ddprun store serve`", "etcd-v3": "etcd-v3"}[variant]
        for r in ok:
            if r.get("detect_s") is not None:
                r["detect_to_formed_s"] = r["formed_s"] - r["detect_s"]
        print(f"| {name} | {len(rows)} | {col('detect_s')} | {col('formed_s')} "
              f"| {col('detect_to_formed_s')} | {col('first_start_s')} "
              f"| {col('last_start_s')} | {failed} |")
    print()
    if keys_left >= 0:
        print(f"keys left in etcd under {KEY_PREFIX} after all runs: {keys_left}")


def main() -> None:
    args = parse_args()

    def to_interrupt(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # SIGINT: even when
        signal.signal(signum, to_interrupt)  # started in the background, where it is ignored
    workdir = tempfile.mkdtemp(prefix="ddprun_rdzv_etcd_bench_")
    etcd = EtcdCluster(args.etcd, 3, args.data_dir)
    finish, recovery, keys_left = [], [], -1
    interrupted = True
    try:
        etcd.start()
        print(f"etcd: 3 members at {etcd.endpoints()} (data in {etcd.dir})", file=sys.stderr)
        if "finish" in args.parts:
            finish = run_finish(args, etcd, workdir)
        if "recovery" in args.parts:
            recovery = run_recovery(args, etcd, workdir)
        keys_left = etcd.count_keys(KEY_PREFIX)
        interrupted = False
    finally:
        etcd.stop()
        kill_and_reap(_spawned)
        if interrupted:
            print(f"stopped; etcd and every agent killed; logs: {workdir}", file=sys.stderr)
    print(f"bench: {benchlib.command_line([sys.executable] + sys.argv)}")
    print(f"etcd member m = 0..2: `{args.etcd} --name m<m> --data-dir DIR/m<m> "
          "--listen-client-urls http://127.0.0.1:C<m> --advertise-client-urls "
          "http://127.0.0.1:C<m> --listen-peer-urls http://127.0.0.1:P<m> "
          "--initial-advertise-peer-urls http://127.0.0.1:P<m> --initial-cluster "
          "m0=http://127.0.0.1:P0,m1=http://127.0.0.1:P1,m2=http://127.0.0.1:P2 "
          "--initial-cluster-state new --initial-cluster-token ddprun-bench "
          f"--heartbeat-interval {ETCD_HEARTBEAT_MS} --election-timeout {ETCD_ELECTION_MS}` "
          f"(free ports, DIR a temp dir under {args.data_dir or tempfile.gettempdir()})")
    print(f"--rdzv_conf for both backends: {args.conf}")
    print()
    if finish:
        print_finish(args, finish)
    if recovery:
        print_recovery(args, recovery, keys_left)
    failures = [r for r in finish + recovery if r["failure"]]
    for r in failures:
        print(f"failure: {r.get('backend', r.get('variant'))} {r['failure'].splitlines()[0]} "
              f"({r['logdir']})")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"finish": finish, "recovery": recovery}, out, indent=1)
    if args.keep_logs or failures:
        print(f"logs: {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
