"""A hang for the stall watchdog's tests (gloo on CPU): on the first attempt one rank waits
silently in a function of its own while the others block in an all_reduce it never joins;
on a later attempt every rank joins, prints the result and exits 0 at once.

Start-up (importing torch, forming the gloo group) can be slower than the tests' short
--stall-timeout on a loaded machine, so a child process prints a line every 0.5 s until the
group is ready, as a training script's logging would (a thread would not do: loading torch's
extension holds the GIL for seconds); the hang itself is silent.

STALL_RANK (default 1) names the stuck rank, unless STALL_HERE is set: then the ranks of the
node where STALL_HERE=1 are the stuck ones. STALL_ALWAYS=1 makes every attempt hang.

STEPS (default 0) healthy steps come first, each an all_reduce and a line, STEP_S (default
0.2) s apart, so --stall-timeout auto learns the gaps before the hang.
"""
import os
import subprocess
import time

talker = subprocess.Popen(["/bin/sh", "-c", "while :; do echo starting; sleep 0.5; done"])

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def wait_for_data():
    while True:
        time.sleep(0.2)


def train_step():
    tensor = torch.ones(4)
    dist.all_reduce(tensor)
    return tensor


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    dist.barrier()
    talker.kill()
    talker.wait()
    print(f"rank {rank} attempt {attempt} ready", flush=True)
    step_s = float(os.environ.get("STEP_S", "0.2"))
    for step in range(int(os.environ.get("STEPS", "0"))):
        train_step()
        print(f"rank {rank} attempt {attempt} step {step}", flush=True)
        time.sleep(step_s)
    if attempt == 0 or os.environ.get("STALL_ALWAYS") == "1":
        here = os.environ.get("STALL_HERE")
        if (here == "1") if here is not None else rank == int(os.environ.get("STALL_RANK", "1")):
            wait_for_data()
    print(f"rank {rank} sum {train_step()[0].item():.0f}", flush=True)
    os._exit(0)  # no silent teardown for a slow machine to stretch past the timeout


main()
