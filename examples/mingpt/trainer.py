"""Trainer: DDP training loop with periodic, atomic snapshots and resume.

Snapshot format (``torch.save`` of a dict): ``model`` (state_dict of the unwrapped model),
``optimizer`` (optimizer state_dict), ``epochs_run`` (epochs completed). Global rank 0 writes
it to ``<path>.tmp.<pid>`` and renames it over ``<path>``, so a reader never sees a partial
file even if the writer is killed mid-save. Every rank loads it at start when it exists.
"""
import hashlib
import os
import sys
import time
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


@dataclass
class TrainerConfig:
    epochs: int
    batch_size: int
    save_every: int
    snapshot_path: str
    max_steps_per_epoch: int = 0  # 0 = whole epoch
    learning_rate: float = 3e-3
    grad_clip: float = 1.0
    sleep_per_step: float = 0.0
    crash_at_step: int = -1  # global step index (epoch * steps_per_epoch + batch)
    crash_rank: int = 0
    crash_mode: str = "raise"  # "raise" (error file via @record) or "exit"
    crash_exit_code: int = 1
    log_every: int = 1


class InjectedCrash(RuntimeError):
    """Raised by --crash-at-step to simulate a failing worker."""


def params_sha256(model: torch.nn.Module) -> str:
    """sha256 of all parameters (float32, CPU, parameters() order) concatenated."""
    digest = hashlib.sha256()
    for param in model.parameters():
        digest.update(param.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()


class Trainer:
    def __init__(self, model, dataset, optimizer, cfg: TrainerConfig, device: torch.device):
        self.cfg = cfg
        self.device = device
        self.rank = dist.get_rank()
        self.restart_count = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
        self.model = model.to(device)
        self.optimizer = optimizer
        self.epochs_run = 0
        self.sampler = DistributedSampler(dataset, shuffle=False)
        self.loader = DataLoader(dataset, batch_size=cfg.batch_size, sampler=self.sampler,
                                 shuffle=False, num_workers=0, drop_last=False)
        self.eval_batch = next(iter(DataLoader(dataset, batch_size=cfg.batch_size)))
        if os.path.exists(cfg.snapshot_path):
            self._load_snapshot()
        device_ids = [device.index] if device.type == "cuda" else None
        self.ddp = DDP(self.model, device_ids=device_ids)

    def log(self, message: str) -> None:
        # One write per line so lines of concurrent ranks do not interleave mid-line.
        sys.stdout.write(f"[RANK {self.rank}] {message}\n")
        sys.stdout.flush()

    def steps_per_epoch(self) -> int:
        steps = len(self.loader)
        cap = self.cfg.max_steps_per_epoch
        return min(steps, cap) if cap > 0 else steps

    def _load_snapshot(self) -> None:
        snapshot = torch.load(self.cfg.snapshot_path, map_location=self.device)
        self.model.load_state_dict(snapshot["model"])
        self.optimizer.load_state_dict(snapshot["optimizer"])
        self.epochs_run = int(snapshot["epochs_run"])
        self.log(f"resuming from snapshot {self.cfg.snapshot_path} at epoch {self.epochs_run}")

    def _save_snapshot(self) -> None:
        snapshot = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                    "epochs_run": self.epochs_run}
        path = self.cfg.snapshot_path
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        tmp = f"{path}.tmp.{os.getpid()}"
        torch.save(snapshot, tmp)
        os.replace(tmp, path)
        self.log(f"epoch {self.epochs_run - 1} | snapshot saved to {path}")

    def _maybe_crash(self, global_step: int) -> None:
        cfg = self.cfg
        if global_step != cfg.crash_at_step or self.rank != cfg.crash_rank:
            return
        if self.restart_count != 0:
            return
        self.log(f"injected crash at step {global_step} (mode {cfg.crash_mode})")
        if cfg.crash_mode == "exit":
            sys.stdout.flush()
            os._exit(cfg.crash_exit_code)
        raise InjectedCrash(f"injected crash at step {global_step} on rank {self.rank}")

    def _run_batch(self, source: torch.Tensor, targets: torch.Tensor) -> float:
        self.optimizer.zero_grad(set_to_none=True)
        _, loss = self.ddp(source.to(self.device), targets.to(self.device))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.ddp.parameters(), self.cfg.grad_clip)
        self.optimizer.step()
        return loss.item()

    def _run_epoch(self, epoch: int) -> None:
        self.sampler.set_epoch(epoch)
        steps = self.steps_per_epoch()
        for batch, (source, targets) in enumerate(self.loader):
            if batch >= steps:
                break
            self._maybe_crash(epoch * steps + batch)
            loss = self._run_batch(source, targets)
            if batch % self.cfg.log_every == 0 or batch == steps - 1:
                self.log(f"epoch {epoch} | batch {batch} | loss {loss:.4f}")
            if self.cfg.sleep_per_step > 0:
                time.sleep(self.cfg.sleep_per_step)

    def train(self) -> None:
        for epoch in range(self.epochs_run, self.cfg.epochs):
            self._run_epoch(epoch)
            self.epochs_run = epoch + 1
            save_now = self.cfg.save_every > 0 and self.epochs_run % self.cfg.save_every == 0
            if self.rank == 0 and save_now:
                self._save_snapshot()

    @torch.no_grad()
    def final_report(self) -> None:
        """Loss on a fixed batch (same on every rank) and the parameters' sha256."""
        source, targets = self.eval_batch
        _, loss = self.model(source.to(self.device), targets.to(self.device))
        self.log(f"final loss {loss.item():.6f} params_sha256 {params_sha256(self.model)}")
