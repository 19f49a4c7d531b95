#!/usr/bin/python3
"""Output patterns for the output/log e2e tests (no torch needed). Usage: chatter.py MODE ARGS

  lines N             N interleaved "out/err rank=R i=I" lines on stdout/stderr, then a
                      partial stdout line "tail rank=R" without newline
  attempt DIR RANK C  prints "out|err attempt=A rank=R"; rank RANK waits for DIR/done_0_A
                      (written by rank 0 after its output) and exits C; other ranks exit 0
  long N              one stdout line of N bytes (digits) plus a newline, then "after long"
  flood N             N bytes of 100-byte stdout lines, written as fast as possible
  prints N            N print(..., flush=True) lines "line rank=R i=I xxx..." (under -u each
                      is two writes, the text and the newline, as torchrun's workers do)
  whereis             prints what the worker's fd 1 and fd 2 are ("fd1=/dev/pts/3")
  prompt DIR          writes "waiting>" without a newline, waits (up to 60 s) for DIR/go, then
                      ends the line
"""
import os
import sys
import time


def write(fd: int, text: str) -> None:
    data = text.encode()
    while data:
        data = data[os.write(fd, data):]


def lines(n: int, rank: str) -> None:
    for i in range(n):
        write(1, f"out rank={rank} i={i}\n")
        write(2, f"err rank={rank} i={i}\n")
    write(1, f"tail rank={rank}")


def attempt(folder: str, failing: str, code: int, rank: str) -> None:
    count = os.environ["TORCHELASTIC_RESTART_COUNT"]
    write(1, f"out attempt={count} rank={rank}\n")
    write(2, f"err attempt={count} rank={rank}\n")
    marker = os.path.join(folder, f"done_0_{count}")
    if rank == "0":
        open(marker, "w").close()
    if rank != failing:
        return
    deadline = time.monotonic() + 60
    while not os.path.exists(marker) and time.monotonic() < deadline:
        time.sleep(0.01)
    sys.exit(code)


def long_line(n: int) -> None:
    digits = "0123456789" * (n // 10 + 1)
    write(1, digits[:n] + "\n")
    write(1, "after long\n")


def flood(n: int) -> None:
    line = ("x" * 99 + "\n").encode()
    chunk = line * 1000
    left = n
    while left > 0:
        part = chunk[:left]
        written = 0
        while written < len(part):
            written += os.write(1, part[written:])
        left -= len(part)


def prints(n: int, rank: str) -> None:
    pad = "x" * 60
    for i in range(n):
        print(f"line rank={rank} i={i} {pad}", flush=True)


def whereis() -> None:
    for fd in (1, 2):
        write(fd, f"fd{fd}={os.readlink(f'/proc/self/fd/{fd}')}\n")


def prompt(folder: str) -> None:
    write(1, "waiting>")
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(folder, "go")) and time.monotonic() < deadline:
        time.sleep(0.01)
    write(1, " go\n")


def main() -> None:
    mode, args = sys.argv[1], sys.argv[2:]
    rank = os.environ.get("RANK", "?")
    if mode == "lines":
        lines(int(args[0]), rank)
    elif mode == "attempt":
        attempt(args[0], args[1], int(args[2]), rank)
    elif mode == "long":
        long_line(int(args[0]))
    elif mode == "flood":
        flood(int(args[0]))
    elif mode == "prints":
        prints(int(args[0]), rank)
    elif mode == "whereis":
        whereis()
    elif mode == "prompt":
        prompt(args[0])
    else:
        sys.exit(f"chatter.py: unknown mode {mode!r}")


if __name__ == "__main__":
    main()
