"""Tiny DDP training on CPU with gloo, launched by torchrun with 2 processes.
FAIL_MODE (env) makes one rank fail for the failing runs:
  raise    - rank 1 raises a RuntimeError at step FAIL_STEP
  segv     - rank 1 dereferences NULL (SIGSEGV) at step FAIL_STEP
  exit     - rank 1 calls os._exit(3) at step FAIL_STEP (rank 0 then blocks in / fails the allreduce)
"""
import ctypes
import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s [rank%(rank)s] %(name)s: %(message)s")
rank = int(os.environ["RANK"])
log = logging.LoggerAdapter(logging.getLogger("ddp_train"), {"rank": rank})
for h in logging.getLogger().handlers:
    h.addFilter(lambda r: setattr(r, "rank", getattr(r, "rank", rank)) or True)

STEPS = int(os.environ.get("STEPS", "300"))
FAIL_MODE = os.environ.get("FAIL_MODE", "")
FAIL_STEP = int(os.environ.get("FAIL_STEP", "50"))

dist.init_process_group("gloo")
world = dist.get_world_size()
log.info("initialized process group: backend=%s world_size=%d", dist.get_backend(), world)
torch.manual_seed(0)
torch.set_num_threads(1)

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
g = torch.Generator().manual_seed(1234 + rank)
w_true = torch.randn(32, 1, generator=torch.Generator().manual_seed(7))

for step in range(1, STEPS + 1):
    x = torch.randn(64, 32, generator=g)
    y = x @ w_true + 0.01 * torch.randn(64, 1, generator=g)
    opt.zero_grad()
    loss = loss_fn(ddp(x), y)
    loss.backward()
    opt.step()
    if rank == 1 and step == FAIL_STEP:
        if FAIL_MODE == "raise":
            raise RuntimeError(f"bad batch at step {step}: loss is {loss.item():.4f}, refusing to continue")
        if FAIL_MODE == "segv":
            log.info("dereferencing a NULL pointer")
            ctypes.string_at(0)
        if FAIL_MODE == "exit":
            log.info("exiting with os._exit(3)")
            os._exit(3)
    if step % 10 == 0:
        t = torch.tensor([loss.item()])
        dist.all_reduce(t)
        log.info("step %d/%d loss %.5f (mean over ranks %.5f)", step, STEPS, loss.item(), t.item() / world)

dist.barrier()
if rank == 0:
    log.info("training finished: final loss %.5f", loss.item())
dist.destroy_process_group()
