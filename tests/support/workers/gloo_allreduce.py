"""One real gloo DDP step: all-reduce a tensor and train one step of a tiny DDP model."""
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    loss = model(torch.ones(2, 4) * (rank + 1)).sum()
    loss.backward()
    grad = model.module.weight.grad.sum().item()
    print(f"rank={rank} world={world} allreduce={t.item():.1f} grad={grad:.4f}"
          f" store={os.environ['TORCHELASTIC_USE_AGENT_STORE']} prefix={sys.prefix}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
