"""Drives a real torch.distributed.TCPStore client against the store at 127.0.0.1:PORT.

Prints one `name value` line per result for store_component_test (torch_test.cpp) to assert.
Run with /usr/bin/python3 (Debian's python3-torch 1.13).
"""
import sys
import threading
from datetime import timedelta

import torch.distributed as dist

port = int(sys.argv[1])


def store():
    return dist.TCPStore("127.0.0.1", port, is_master=False, timeout=timedelta(seconds=10))


def out(name, value):
    print(name, value, flush=True)


s = store()
s.set("k1", "v1")
out("get", s.get("k1").decode())
out("add1", s.add("cnt", 5))
out("add2", s.add("cnt", 3))
out("add3", s.add("cnt", -10))
out("cs_create", s.compare_set("cs", "", "new").decode())
out("cs_missing", s.compare_set("cs2", "zzz", "new").decode())
out("cs_match", s.compare_set("cs", "new", "newer").decode())
out("cs_mismatch", s.compare_set("cs", "wrong", "x").decode())
out("num_keys", s.num_keys())
out("del1", s.delete_key("k1"))
out("del2", s.delete_key("k1"))
s.wait(["cnt"])
s.wait(["cnt", "cs"], timedelta(seconds=2))
out("wait_existing", "ok")
s.set("bin", bytes(range(256)))
out("binary", s.get("bin") == bytes(range(256)))

setter = store()
timer = threading.Timer(0.2, lambda: setter.set("late", "x"))
timer.start()
out("blocking_get", s.get("late").decode())
timer.join()

try:
    s.wait(["never"], timedelta(milliseconds=300))
    out("wait_timeout", "no")
except RuntimeError as e:
    out("wait_timeout", "raised")

fresh = store()
out("num_keys_end", fresh.num_keys())
out("done", 1)
