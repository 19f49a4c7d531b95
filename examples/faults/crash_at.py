#!/usr/bin/python3
"""Worker that counts steps and exits with a chosen code at a chosen step (no torch needed).

Every rank prints "[crash_at rank R attempt A] step i" every --step-seconds. The crashing
rank(s) exit with --exit-code at step --step (0 = before the first step, i.e. after
--delay); the others finish --steps steps and exit 0.

    ddprun --nproc_per_node 2 crash_at.py --step 3 --exit-code 7 --rank 1
    ddprun --nproc_per_node 2 --max_restarts 2 crash_at.py --step 2 --only-attempt 0
"""
import argparse
import os
import sys
import time


def say(line: str) -> None:
    """Write one whole line in a single write(2), so concurrent ranks do not interleave."""
    os.write(1, (line + "\n").encode())


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--exit-code", type=int, default=1)
    p.add_argument("--step", type=int, default=3, help="step at which to exit")
    p.add_argument("--steps", type=int, default=10, help="steps the other ranks run")
    p.add_argument("--step-seconds", type=float, default=0.2)
    p.add_argument("--delay", type=float, default=0.0, help="seconds to sleep before step 0")
    p.add_argument("--rank", type=int, default=None, help="only this global RANK crashes")
    p.add_argument("--only-attempt", type=int, default=None,
                   help="crash only when TORCHELASTIC_RESTART_COUNT equals this")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    rank = int(os.environ.get("RANK", "0"))
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    crashes = (args.rank is None or args.rank == rank) and \
        (args.only_attempt is None or args.only_attempt == attempt)
    tag = f"[crash_at rank {rank} attempt {attempt}]"
    time.sleep(args.delay)
    for step in range(args.steps):
        if crashes and step == args.step:
            say(f"{tag} exiting with {args.exit_code} at step {step}")
            return args.exit_code
        say(f"{tag} step {step}")
        time.sleep(args.step_seconds)
    say(f"{tag} done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
