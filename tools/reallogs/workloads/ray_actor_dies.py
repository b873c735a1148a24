"""Failing Ray driver: an actor calls os._exit(1) in the middle of a method; the driver's
ray.get raises RayActorError (the actor died unexpectedly before finishing this task)."""
import os
import time

import ray

ray.init(num_cpus=2, include_dashboard=False)


@ray.remote
class Worker:
    def __init__(self):
        self.steps = 0

    def step(self):
        self.steps += 1
        print(f"worker step {self.steps} pid={os.getpid()}", flush=True)
        if self.steps == 5:
            print("worker: simulating a crash with os._exit(1)", flush=True)
            os._exit(1)
        return self.steps


w = Worker.remote()
for i in range(10):
    print("driver got", ray.get(w.step.remote()), flush=True)
    time.sleep(0.1)
