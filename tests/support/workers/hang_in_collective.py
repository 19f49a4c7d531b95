"""Rank 0 fails while rank 1 waits in an all_reduce that rank 0 never joins (gloo on CPU).

Rank 0 leaves a forked child holding its gloo sockets open, so rank 1 keeps waiting rather
than seeing the connection close: a hung collective, as on a real cluster.
"""
import os
import sys
import time

import torch
import torch.distributed as dist


def wait_in_all_reduce():
    dist.all_reduce(torch.ones(4))


def main():
    dist.init_process_group("gloo")
    dist.barrier()
    if dist.get_rank() == 0:
        if os.fork() == 0:
            time.sleep(120)
            os._exit(0)
        time.sleep(1)
        sys.exit(3)
    wait_in_all_reduce()


main()
