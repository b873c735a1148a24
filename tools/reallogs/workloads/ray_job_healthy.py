"""Healthy Ray job: remote tasks, an actor pool, object refs passed between tasks, ray.wait.
Submitted with `ray job submit` to a local head node started by run.py."""
import logging
import math
import time

import ray

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("healthy_job")

ray.init(address="auto", logging_level=logging.INFO)


@ray.remote
def square(x):
    return x * x


@ray.remote
def slow_sum(values):
    time.sleep(0.05)
    return sum(values)


@ray.remote
class Counter:
    def __init__(self, name):
        self.name = name
        self.n = 0
        logging.basicConfig(level=logging.INFO)
        logging.getLogger("counter").info("counter %s created", name)

    def add(self, k):
        self.n += k
        return self.n

    def report(self):
        print(f"counter {self.name} total={self.n}")
        return self.n


for round_ in range(5):
    refs = [square.remote(i) for i in range(200)]
    total = ray.get(slow_sum.remote(ray.get(refs)))
    log.info("round %d: sum of squares 0..199 = %d", round_, total)
    assert total == sum(i * i for i in range(200))

counters = [Counter.remote(f"c{i}") for i in range(3)]
for step in range(100):
    c = counters[step % 3]
    c.add.remote(step)
totals = ray.get([c.report.remote() for c in counters])
log.info("actor totals: %s (sum %d)", totals, sum(totals))

pending = [slow_sum.remote(list(range(k))) for k in range(50)]
done = 0
while pending:
    ready, pending = ray.wait(pending, num_returns=min(10, len(pending)))
    done += len(ready)
    log.info("ray.wait: %d done, %d pending", done, len(pending))

data = ray.put([math.sqrt(i) for i in range(100000)])
log.info("object store round trip: %d floats", len(ray.get(data)))
print("resources:", ray.cluster_resources())
print("healthy job finished")
