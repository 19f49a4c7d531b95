"""A Hugging Face Accelerate training loop on CPU, for comparing launchers (tests/torch2).

Each rank trains the same tiny linear model on its own slice of a fixed data set for a few
steps; Accelerate averages the gradients over the ranks. Rank 0 prints the final parameters,
which must be the same under any launcher that gives the workers torchrun's environment.
Accelerate on a torch built with MPI (Debian's) picks the `mpi` backend, where each process sees
a world of one, unless the state is made with backend="gloo" first.
"""
import torch
from accelerate import Accelerator, PartialState

state = PartialState(cpu=True, backend="gloo")
accelerator = Accelerator(cpu=True)
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = accelerator.prepare(model, optimizer)
rank, world = accelerator.process_index, accelerator.num_processes
for step in range(5):
    x = torch.arange(8, dtype=torch.float32).reshape(2, 4) * (rank + 1 + step) / 10.0
    y = x.sum(dim=1, keepdim=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
params = [round(v, 6) for p in accelerator.unwrap_model(model).parameters() for v in p.flatten().tolist()]
if accelerator.is_main_process:
    print(f"accelerate world={world} backend={state.backend} final={params}", flush=True)
