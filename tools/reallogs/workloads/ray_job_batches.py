"""Ray job that processes BATCHES batches of TASKS tasks and logs one progress line per batch
(as a real batch-inference or preprocessing job does), submitted with `ray job submit`.
An Aggregator actor keeps running statistics. `--fail MODE --fail-batch N` makes batch N fail:
  raise       - one task of the batch raises ValueError (the driver's ray.get raises RayTaskError)
  segv        - one task dereferences NULL: its worker dies of SIGSEGV (retried by Ray's default
                max_retries=3, crashing each time; then WorkerCrashedError)
  actor-exit  - the Aggregator calls os._exit(1) (RayActorError on the driver)
"""
import argparse
import ctypes
import logging
import math
import os
import time

import ray

ap = argparse.ArgumentParser()
ap.add_argument("--batches", type=int, default=520)
ap.add_argument("--tasks", type=int, default=16)
ap.add_argument("--fail", default="")
ap.add_argument("--fail-batch", type=int, default=-1)
a = ap.parse_args()

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("batch_job")

ray.init(address="auto", logging_level=logging.INFO)


@ray.remote
def featurize(batch, i, fail):
    if fail == "raise":
        raise ValueError(f"record {batch * 1000 + i}: field 'amount' is not a number: 'n/a'")
    if fail == "segv":
        print(f"featurize({batch}, {i}): calling into the native parser", flush=True)
        ctypes.string_at(0)
    return sum(math.sin(batch * 0.01 + i * k) for k in range(200))


@ray.remote
class Aggregator:
    def __init__(self):
        self.n = 0
        self.total = 0.0

    def add(self, batch, values, fail):
        if fail == "actor-exit":
            print(f"aggregator: giving up at batch {batch} (os._exit(1))", flush=True)
            os._exit(1)
        self.n += len(values)
        self.total += sum(values)
        return self.n, self.total / self.n


agg = Aggregator.remote()
log.info("starting: %d batches x %d tasks, resources %s", a.batches, a.tasks, ray.cluster_resources())
t_start = time.time()
for b in range(a.batches):
    t0 = time.time()
    fail = a.fail if b == a.fail_batch else ""
    refs = [featurize.remote(b, i, fail if i == a.tasks // 2 and fail in ("raise", "segv") else "")
            for i in range(a.tasks)]
    values = ray.get(refs)
    n, mean = ray.get(agg.add.remote(b, values, fail if fail == "actor-exit" else ""))
    log.info("batch %d/%d: %d tasks in %.3fs, batch sum %.4f, %d records so far, running mean %.5f",
             b + 1, a.batches, len(values), time.time() - t0, sum(values), n, mean)
log.info("all %d batches done in %.1fs (%d records, mean %.5f)", a.batches, time.time() - t_start, n, mean)
print("batch job finished")
