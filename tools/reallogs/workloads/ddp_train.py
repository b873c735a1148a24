"""Tiny DDP training on CPU with gloo, launched by torchrun (2 processes, or 2 nodes x 2).
Environment:
  STEPS       - training steps (default 300)
  LOG_EVERY   - every rank logs one line (loss, step time) every LOG_EVERY steps (default 10);
                every 10th step's line also carries the loss averaged over ranks (an all_reduce)
  STEP_SLEEP  - seconds each step waits before its batch, standing in for data loading (default 0)
  PG_TIMEOUT  - the process group's timeout in seconds (default: torch's own, 30 min); the
                failing runs set it short so a rank left waiting on a dead or stuck peer ends soon
FAIL_MODE makes one rank (FAIL_RANK, default 1) fail at step FAIL_STEP (default 50):
  raise    - raises a RuntimeError
  segv     - dereferences NULL (SIGSEGV; with PYTHONFAULTHANDLER=1 Python prints the stack)
  exit     - logs an error and calls os._exit(3) (the other ranks then fail in the next allreduce)
  hang     - stops without a word before its next collective (the other ranks time out waiting)
"""
import ctypes
import datetime
import logging
import os
import time

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
LOG_EVERY = int(os.environ.get("LOG_EVERY", "10"))
STEP_SLEEP = float(os.environ.get("STEP_SLEEP", "0"))
FAIL_MODE = os.environ.get("FAIL_MODE", "")
FAIL_STEP = int(os.environ.get("FAIL_STEP", "50"))
FAIL_RANK = int(os.environ.get("FAIL_RANK", "1"))
PG_TIMEOUT = os.environ.get("PG_TIMEOUT")

if PG_TIMEOUT:
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=float(PG_TIMEOUT)))
else:
    dist.init_process_group("gloo")
world = dist.get_world_size()
log.info("initialized process group: backend=%s world_size=%d timeout=%ss", dist.get_backend(), world,
         PG_TIMEOUT or "default")
torch.manual_seed(0)
torch.set_num_threads(1)

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
g = torch.Generator().manual_seed(1234 + rank)
w_true = torch.randn(32, 1, generator=torch.Generator().manual_seed(7))

for step in range(1, STEPS + 1):
    t0 = time.perf_counter()
    if STEP_SLEEP:
        time.sleep(STEP_SLEEP)
    x = torch.randn(64, 32, generator=g)
    y = x @ w_true + 0.01 * torch.randn(64, 1, generator=g)
    if rank == FAIL_RANK and step == FAIL_STEP and FAIL_MODE == "hang":
        time.sleep(3600)
    opt.zero_grad()
    loss = loss_fn(ddp(x), y)
    loss.backward()
    opt.step()
    if rank == FAIL_RANK and step == FAIL_STEP:
        if FAIL_MODE == "raise":
            raise RuntimeError(f"bad batch at step {step}: loss is {loss.item():.4f}, refusing to continue")
        if FAIL_MODE == "segv":
            log.info("dereferencing a NULL pointer")
            ctypes.string_at(0)
        if FAIL_MODE == "exit":
            log.error("injected failure at step %d: exiting with os._exit(3)", step)
            os._exit(3)
    mean = None
    if step % 10 == 0:
        t = torch.tensor([loss.item()])
        dist.all_reduce(t)
        mean = t.item() / world
    ms = (time.perf_counter() - t0) * 1000
    if mean is not None:
        log.info("step %d/%d loss %.5f (mean over ranks %.5f) step_time %.1fms", step, STEPS, loss.item(), mean, ms)
    elif step % LOG_EVERY == 0:
        log.info("step %d/%d loss %.5f step_time %.1fms", step, STEPS, loss.item(), ms)

dist.barrier()
if rank == 0:
    log.info("training finished: final loss %.5f", loss.item())
dist.destroy_process_group()
