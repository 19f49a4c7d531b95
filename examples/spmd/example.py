#!/usr/bin/python3
"""SPMD DDP example in the style of PyTorch's "launching and configuring DDP applications".

Each process trains a ToyModel (Linear-ReLU-Linear) for one DDP step. The process group is
initialised from MASTER_ADDR / MASTER_PORT / RANK / WORLD_SIZE in the environment (env://).
The local rank comes from ``--local_rank`` / ``--local-rank`` (legacy launchers append
``--local_rank=N``) or, when absent, from env LOCAL_RANK (ddprun / torchrun default).

Each local rank gets ``n = cuda_device_count // local_world_size`` GPUs:
device_ids = [local_rank*n, ..., (local_rank+1)*n - 1]. With no CUDA (or n == 0) it runs
on CPU with the gloo backend.

    ddprun --nproc_per_node 2 example.py --local_world_size 2
    # legacy: the launcher appends --local_rank=N (torch.distributed.launch without --use_env)
    python -m torch.distributed.launch --nproc_per_node 2 example.py --local_world_size 2
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist
from torch import nn, optim
from torch.nn.parallel import DistributedDataParallel as DDP

IN_FEATURES, HIDDEN, OUT_FEATURES, BATCH = 10, 10, 5, 20


class ToyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = nn.Linear(IN_FEATURES, HIDDEN)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(HIDDEN, OUT_FEATURES)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def say(message: str) -> None:
    # One write per line so that lines of concurrent ranks do not interleave mid-line.
    sys.stdout.write(f"[{os.getpid()}] {message}\n")
    sys.stdout.flush()


def local_devices(local_rank: int, local_world_size: int) -> list:
    """GPU ids owned by this local rank; empty means CPU."""
    if not torch.cuda.is_available():
        return []
    n = torch.cuda.device_count() // local_world_size
    return list(range(local_rank * n, (local_rank + 1) * n))


def demo_basic(local_rank: int, local_world_size: int, device_ids: list) -> None:
    n = len(device_ids)
    say(f"rank = {dist.get_rank()}, world_size = {dist.get_world_size()}, n = {n}, "
        f"device_ids = {device_ids}")
    torch.manual_seed(dist.get_rank())
    # DDP in torch >= 1.9 accepts one device per process: use the first of ours.
    device = torch.device("cuda", device_ids[0]) if device_ids else torch.device("cpu")
    model = ToyModel().to(device)
    ddp_model = DDP(model, device_ids=[device_ids[0]] if device_ids else None)
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(BATCH, IN_FEATURES, device=device))
    labels = torch.randn(BATCH, OUT_FEATURES, device=device)
    loss = loss_fn(outputs, labels)
    loss.backward()
    optimizer.step()
    say(f"rank {dist.get_rank()} done loss={loss.item():.6f}")


def spmd_main(local_rank: int, local_world_size: int, source: str = "argv") -> None:
    say(f"local_rank = {local_rank} (from {source}), local_world_size = {local_world_size}")
    keys = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")
    env_dict = {key: os.environ[key] for key in keys}
    say(f"Initializing process group with: {env_dict}")
    device_ids = local_devices(local_rank, local_world_size)
    dist.init_process_group(backend="nccl" if device_ids else "gloo", init_method="env://")
    say(f"world_size = {dist.get_world_size()}, rank = {dist.get_rank()}, "
        f"backend={dist.get_backend()}")
    demo_basic(local_rank, local_world_size, device_ids)
    dist.destroy_process_group()


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="SPMD DDP example")
    parser.add_argument("--local_rank", "--local-rank", dest="local_rank", type=int, default=None,
                        help="set by legacy launchers; default: env LOCAL_RANK")
    parser.add_argument("--local_world_size", "--local-world-size", dest="local_world_size",
                        type=int, default=None, help="default: env LOCAL_WORLD_SIZE or 1")
    args = parser.parse_args(argv)
    args.local_rank_source = "--local_rank"
    if args.local_rank is None:
        args.local_rank = int(os.environ["LOCAL_RANK"])
        args.local_rank_source = "env LOCAL_RANK"
    if args.local_world_size is None:
        args.local_world_size = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    return args


if __name__ == "__main__":
    cli = parse_args()
    spmd_main(cli.local_rank, cli.local_world_size, cli.local_rank_source)
