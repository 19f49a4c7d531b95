#!/usr/bin/python3
"""Worker that hangs forever (until killed); with --rank only that rank hangs, others exit 0.

Prints "[hang rank R] hanging pid P" first, so a test can wait for it before stopping the job.

    ddprun --nproc_per_node 2 hang.py            # Ctrl-C / SIGTERM the launcher to stop it
    ddprun --nproc_per_node 2 hang.py --rank 1   # rank 0 exits 0, rank 1 never does
"""
import argparse
import os
import signal
import sys


def say(line: str) -> None:
    """Write one whole line in a single write(2), so concurrent ranks do not interleave."""
    os.write(1, (line + "\n").encode())


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rank", type=int, default=None, help="only this global RANK hangs")
    args = p.parse_args()
    rank = int(os.environ.get("RANK", "0"))
    if args.rank is not None and args.rank != rank:
        say(f"[hang rank {rank}] exiting 0")
        return 0
    say(f"[hang rank {rank}] hanging pid {os.getpid()}")
    while True:
        signal.pause()


if __name__ == "__main__":
    sys.exit(main())
