"""A worker that uses torch's own file-timer client (torch.distributed.elastic.timer), as a
training script would under torchrun with TORCHELASTIC_ENABLE_FILE_TIMER=1.

usage: file_timer.py MARKERS MODE
  hang     attempt 0 holds `with expires(after=2, scope="step")` and sleeps 60 s in it, so the
           watchdog must kill it; later attempts finish at once.
  release  holds a 0.5 s timer around a quick step, releases it, then sleeps 1.5 s past its
           expiration and finishes (a released timer must never fire).
Each start appends "attempt=<n> rank=<r>" to MARKERS/rank_<r>.log.
"""

import os
import sys
import time

from torch.distributed.elastic.timer import FileTimerClient, configure, expires


def main() -> int:
    markers, mode = sys.argv[1], sys.argv[2]
    attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    rank = os.environ["RANK"]
    with open(os.path.join(markers, f"rank_{rank}.log"), "a") as log:
        log.write(f"attempt={attempt} rank={rank}\n")
    configure(FileTimerClient(file_path=os.environ["TORCHELASTIC_TIMER_FILE"]))
    if mode == "hang":
        if attempt == 0:
            with expires(after=2, scope="step"):
                time.sleep(60)
            return 3  # reached only if the watchdog did not act
        return 0
    if mode == "release":
        with expires(after=0.5, scope="quick"):
            pass
        time.sleep(1.5)
        return 0
    print(f"unknown mode {mode!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
