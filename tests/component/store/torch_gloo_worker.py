"""One rank of a 2-process gloo job whose store is the agent store under test.

Env (set by torch_test.cpp): MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE,
TORCHELASTIC_USE_AGENT_STORE=True, TORCHELASTIC_RESTART_COUNT=0.
Prints `allreduce <sum>` and `done 1`. Run with /usr/bin/python3 (python3-torch 1.13).
"""
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=30))
t = torch.tensor([dist.get_rank() + 1.0])
dist.all_reduce(t)
print("allreduce", int(t.item()), flush=True)
dist.barrier()
group = dist.new_group([0, 1])
dist.all_reduce(t, group=group)
print("group_allreduce", int(t.item()), flush=True)
dist.destroy_process_group()
print("done", 1, flush=True)
