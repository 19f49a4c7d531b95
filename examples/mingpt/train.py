#!/usr/bin/python3
"""minGPT-style DDP trainer for ddprun (and torchrun): a tiny char-level GPT.

Run (2 ranks on CPU):
    ddprun --standalone --nproc_per_node 2 train.py --snapshot-path /tmp/gpt.pt

Reads RANK / LOCAL_RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT from the launcher (env://).
Device: cuda:<LOCAL_RANK> with nccl when CUDA is available (unless --cpu), else CPU with gloo.
Deterministic: the same arguments give bit-identical parameters (see the final line's
params_sha256), including after a crash and resume from the snapshot.
"""
import argparse
import datetime
import os

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

import corpus
from data import CharDataset
from model import GPT, GPTConfig
from trainer import Trainer, TrainerConfig


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--save-every", type=int, default=1, help="snapshot every N epochs (0 = never)")
    p.add_argument("--snapshot-path", default="snapshot.pt")
    p.add_argument("--batch-size", type=int, default=16, help="per-rank batch size")
    p.add_argument("--max-steps-per-epoch", type=int, default=0, help="0 = whole epoch")
    p.add_argument("--sleep-per-step", type=float, default=0.0, metavar="SECONDS")
    p.add_argument("--crash-at-step", type=int, default=-1,
                   help="global step (epoch*steps_per_epoch+batch) to fail at, attempt 0 only")
    p.add_argument("--crash-rank", type=int, default=0, help="global rank that crashes")
    p.add_argument("--crash-mode", choices=["raise", "exit"], default="raise")
    p.add_argument("--crash-exit-code", type=int, default=1,
                   help="exit status for --crash-mode exit")
    p.add_argument("--log-every", type=int, default=1, help="print every N batches")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--block-size", type=int, default=32)
    p.add_argument("--n-layer", type=int, default=2)
    p.add_argument("--n-head", type=int, default=2)
    p.add_argument("--n-embd", type=int, default=64)
    p.add_argument("--corpus-bytes", type=int, default=corpus.DEFAULT_SIZE_BYTES)
    p.add_argument("--corpus-file", default=None, help="train on this UTF-8 file instead")
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    p.add_argument("--cpu", action="store_true", help="use CPU + gloo even if CUDA is available")
    p.add_argument("--pg-timeout", type=float, default=120.0, help="process group timeout (s)")
    return p.parse_args(argv)


def setup_distributed(args) -> torch.device:
    use_cuda = torch.cuda.is_available() and not args.cpu
    backend = "nccl" if use_cuda else "gloo"
    timeout = datetime.timedelta(seconds=args.pg_timeout)
    dist.init_process_group(backend=backend, init_method="env://", timeout=timeout)
    if not use_cuda:
        return torch.device("cpu")
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    return device


def load_text(args) -> str:
    if args.corpus_file:
        with open(args.corpus_file, encoding="utf-8") as f:
            return f.read()
    return corpus.generate(size_bytes=args.corpus_bytes)


@record
def main(argv=None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    device = setup_distributed(args)
    dataset = CharDataset(load_text(args), args.block_size, stride=args.block_size)
    torch.manual_seed(args.seed)
    gpt_cfg = GPTConfig(vocab_size=dataset.vocab_size, block_size=args.block_size,
                        n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd)
    model = GPT(gpt_cfg)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    cfg = TrainerConfig(
        epochs=args.epochs, batch_size=args.batch_size, save_every=args.save_every,
        snapshot_path=args.snapshot_path, max_steps_per_epoch=args.max_steps_per_epoch,
        learning_rate=args.lr, sleep_per_step=args.sleep_per_step,
        crash_at_step=args.crash_at_step, crash_rank=args.crash_rank,
        crash_mode=args.crash_mode, crash_exit_code=args.crash_exit_code,
        log_every=args.log_every)
    trainer = Trainer(model, dataset, optimizer, cfg, device)
    trainer.log(f"pid {os.getpid()} world_size {dist.get_world_size()} device {device} "
                f"params {sum(p.numel() for p in model.parameters())} "
                f"samples {len(dataset)} steps/epoch {trainer.steps_per_epoch()}")
    trainer.train()
    trainer.final_report()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
