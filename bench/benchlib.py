"""Shared helpers for ddprun's launcher benchmarks (no torch import)."""
import os
import shlex
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass, field

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCHRUN_PATCHED = os.path.join(REPO_ROOT, "tools", "torchrun-patched")
DEFAULT_DDPRUN = os.path.join(REPO_ROOT, "build", "src", "ddprun")
HWM_SAMPLE_SECONDS = 0.005
GNU_TIME = "/usr/bin/time"  # Debian package "time"; used for a low-floor ru_maxrss


WRAPPERS = ("in-trixie.sh", "in-root.sh")  # prefixes that run the launcher elsewhere (a chroot)


@dataclass
class Launcher:
    name: str
    argv: list  # launcher prefix: executable + launcher-only flags

    @property
    def wrapped(self) -> bool:
        """Started through a wrapper: VmHWM samples the wrapper, not the launcher."""
        return os.path.basename(self.argv[0]) in WRAPPERS


@dataclass
class RunResult:
    wall_s: float
    returncode: int
    ru_maxrss_kib: int  # launcher's wait4 rusage: max over it, its pre-exec image, descendants
    vm_hwm_kib: int  # last /proc/<pid>/status VmHWM sample of the launcher itself (lower bound)


@dataclass
class Samples:
    launcher: Launcher
    runs: list = field(default_factory=list)


def default_launchers(ddprun_path: str, with_default_interval: bool) -> list:
    """ddprun (when the binary exists) and torchrun-patched with --monitor_interval 0.1."""
    launchers = []
    if os.access(ddprun_path, os.X_OK):
        launchers.append(Launcher("ddprun", [ddprun_path]))
    else:
        print(f"note: ddprun not found at {ddprun_path}; skipping it (use --ddprun PATH)")
    launchers.append(Launcher("torchrun-patched (monitor 0.1 s)",
                              [TORCHRUN_PATCHED, "--monitor_interval", "0.1"]))
    if with_default_interval:
        launchers.append(Launcher("torchrun-patched (monitor default)", [TORCHRUN_PATCHED]))
    return launchers


def parse_extra_launcher(spec: str) -> Launcher:
    """'NAME=COMMAND WITH ARGS' -> Launcher."""
    name, sep, command = spec.partition("=")
    if not sep or not name or not command:
        raise ValueError(f"--launcher {spec!r}: expected NAME=COMMAND")
    return Launcher(name, shlex.split(command))


def _read_vm_hwm_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _first_child(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            pids = children.read().split()
        return int(pids[0]) if pids else 0
    except (OSError, ValueError):
        return 0


def _sample_hwm(pid: int, via_time: bool, stop: threading.Event, out: list) -> None:
    """Keep out[0] = max VmHWM seen of the launcher (the child of GNU time when via_time)."""
    launcher = 0 if via_time else pid
    while not stop.is_set():
        if not launcher:
            launcher = _first_child(pid)
        elif (value := _read_vm_hwm_kib(launcher)):
            out[0] = max(out[0], value)
        stop.wait(HWM_SAMPLE_SECONDS)


def use_gnu_time() -> bool:
    return os.access(GNU_TIME, os.X_OK)


def run_once(argv: list, cwd: str, log_path: str, timeout_s: float) -> RunResult:
    """Spawn argv, reap it and return wall time, exit status and memory figures.

    With GNU time available the launcher is started as `time -f %M -o FILE argv`: then the
    launcher's pre-exec image is a copy of `time` (~2 MiB) rather than of this Python
    process (~14 MiB), which otherwise sets a floor under ru_maxrss (exec records the old
    image's high-water mark). The wall time then includes one extra fork+exec (~1 ms).
    """
    via_time = use_gnu_time()
    rss_file = log_path + ".maxrss"
    full = [GNU_TIME, "-f", "%M", "-o", rss_file] + argv if via_time else argv
    with open(log_path, "wb") as log:
        start = time.perf_counter()
        proc = subprocess.Popen(full, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        hwm, stop = [0], threading.Event()
        sampler = threading.Thread(target=_sample_hwm, args=(proc.pid, via_time, stop, hwm),
                                   daemon=True)
        sampler.start()
        timer = threading.Timer(timeout_s, proc.kill)
        timer.start()
        _, status, rusage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        timer.cancel()
        stop.set()
        sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped; keep Popen quiet
    maxrss = _read_time_maxrss(rss_file) if via_time else rusage.ru_maxrss
    return RunResult(wall, proc.returncode, maxrss, hwm[0])


def _read_time_maxrss(path: str) -> int:
    """Last line of GNU time's -o file is %M (KiB); earlier lines may say 'Command exited'."""
    with open(path) as f:
        return int(f.read().split()[-1])


def summarize(values: list) -> tuple:
    return statistics.median(values), min(values), max(values)


def mib(kib: float) -> str:
    return f"{kib / 1024:.1f}"


def command_line(argv: list) -> str:
    return " ".join(shlex.quote(a) for a in argv)


def add_launcher_args(p) -> None:
    """The options every launcher benchmark takes: which launchers, output, limits."""
    p.add_argument("--ddprun", default=DEFAULT_DDPRUN, help="path of the ddprun binary")
    p.add_argument("--json", default=None, help="also write the raw results here")
    p.add_argument("--with-default-interval", action="store_true",
                   help="also time torchrun-patched with its default --monitor_interval (5 s)")
    p.add_argument("--launcher", action="append", default=[], metavar="NAME=CMD",
                   help="extra launcher prefix to compare (repeatable)")
    p.add_argument("--timeout", type=float, default=120.0, help="per-run limit in seconds")
