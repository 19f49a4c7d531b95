"""A hang after healthy training, for --stall-timeout auto (gloo on CPU): every rank runs
STEPS steps (default 30), each an all_reduce and a line, STEP_S (default 0.2) s apart, so the
agent learns the gaps; then, on the first attempt, rank 1 waits silently in a function of its
own while the others block in an all_reduce it never joins. On a later attempt every rank
prints the result and exits 0.

As in stall_once.py, a child process prints a line every 0.5 s until the gloo group is ready:
importing torch holds the GIL for seconds, and those lines are the start-up's progress.
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
    step_s = float(os.environ.get("STEP_S", "0.2"))
    for step in range(int(os.environ.get("STEPS", "30"))):
        train_step()
        print(f"rank {rank} attempt {attempt} step {step}", flush=True)
        time.sleep(step_s)
    if attempt == 0 and rank == 1:
        wait_for_data()
    print(f"rank {rank} sum {train_step()[0].item():.0f}", flush=True)
    os._exit(0)  # no silent teardown for a slow machine to stretch past the timeout


main()
