"""A Transformers Trainer run on CPU, for comparing launchers (tests/torch2).

A tiny GPT-2 built from a config (no download) trains for a few steps on a fixed token data set
with DDP over gloo, as TrainingArguments(use_cpu=True, ddp_backend="gloo") sets it up from the
launcher's environment. Rank 0 prints the world size and a checksum of the final parameters,
which must be the same under any launcher that gives the workers torchrun's environment.
Usage: trainer_train.py OUTPUT_DIR
"""
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        ids = torch.tensor([(i * 7 + j * 3) % 50 for j in range(16)])
        return {"input_ids": ids, "labels": ids}


torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(vocab_size=50, n_positions=16, n_embd=16, n_layer=1, n_head=2))
args = TrainingArguments(
    output_dir=sys.argv[1],
    use_cpu=True,
    ddp_backend="gloo",
    per_device_train_batch_size=2,
    max_steps=4,
    learning_rate=1e-2,
    seed=0,
    report_to=[],
    save_strategy="no",
    logging_strategy="no",
    disable_tqdm=True,
    dataloader_num_workers=0,
)
trainer = Trainer(model=model, args=args, train_dataset=Tokens())
trainer.train()
if trainer.is_world_process_zero():
    total = sum(p.detach().double().sum().item() for p in model.parameters())
    print(f"trainer world={args.world_size} checksum={total:.6f}", flush=True)
