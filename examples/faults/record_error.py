#!/usr/bin/python3
"""Worker wrapped in @record that raises ValueError on one rank.

@record writes the exception (message, traceback, timestamp) as JSON to
$TORCHELASTIC_ERROR_FILE, which the launcher reports as the root cause. The other ranks
sleep --others-sleep seconds and exit 0.

    ddprun --nproc_per_node 2 record_error.py --rank 1 --message "bad batch"
"""
import argparse
import os
import time

from torch.distributed.elastic.multiprocessing.errors import record


def say(line: str) -> None:
    """Write one whole line in a single write(2), so concurrent ranks do not interleave."""
    os.write(1, (line + "\n").encode())


@record
def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rank", type=int, default=0, help="global RANK that raises")
    p.add_argument("--message", default="record_error.py: injected failure")
    p.add_argument("--delay", type=float, default=0.0, help="seconds before raising")
    p.add_argument("--others-sleep", type=float, default=0.0)
    args = p.parse_args()
    rank = int(os.environ.get("RANK", "0"))
    if rank == args.rank:
        time.sleep(args.delay)
        raise ValueError(f"{args.message} (rank {rank})")
    time.sleep(args.others_sleep)
    say(f"[record_error rank {rank}] ok")


if __name__ == "__main__":
    main()
