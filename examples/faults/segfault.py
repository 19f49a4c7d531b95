#!/usr/bin/python3
"""Worker that kills itself with SIGSEGV on one rank (exit status -11 / "Signal 11").

The other ranks sleep --others-sleep seconds and exit 0.

    ddprun --nproc_per_node 2 segfault.py --rank 1 --delay 0.5
"""
import argparse
import os
import signal
import time


def say(line: str) -> None:
    """Write one whole line in a single write(2), so concurrent ranks do not interleave."""
    os.write(1, (line + "\n").encode())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rank", type=int, default=0, help="global RANK that segfaults")
    p.add_argument("--delay", type=float, default=0.0, help="seconds before the signal")
    p.add_argument("--others-sleep", type=float, default=0.0)
    args = p.parse_args()
    rank = int(os.environ.get("RANK", "0"))
    if rank == args.rank:
        time.sleep(args.delay)
        say(f"[segfault rank {rank}] raising SIGSEGV")
        os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(10)  # not reached: the default action of SIGSEGV terminates us
    time.sleep(args.others_sleep)
    say(f"[segfault rank {rank}] ok")


if __name__ == "__main__":
    main()
