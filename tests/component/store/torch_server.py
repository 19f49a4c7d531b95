"""Hosts torch's own TCPStore server (1.13, is_master=True) on 127.0.0.1, port chosen by the OS.

Prints `port N`, then keeps the server alive for 60 s (the test kills it sooner).
Run with /usr/bin/python3 (Debian's python3-torch 1.13).
"""
import time
from datetime import timedelta

import torch.distributed as dist

server = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False,
                       timeout=timedelta(seconds=30))
server.set("from_torch", "hello")
print("port", server.port, flush=True)
time.sleep(60)
