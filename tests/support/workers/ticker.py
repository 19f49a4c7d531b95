"""Prints a line every INTERVAL seconds, COUNT times, with no flush: a chatty worker for the
stall watchdog (ddprun starts it as `python -u`, as torchrun does). Usage:
ticker.py INTERVAL COUNT"""
import sys
import time

interval, count = float(sys.argv[1]), int(sys.argv[2])
for i in range(count):
    print(f"tick {i}")
    time.sleep(interval)
print("done")
