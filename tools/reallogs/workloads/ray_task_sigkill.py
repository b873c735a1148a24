"""Failing Ray driver: a task's worker process is killed with SIGKILL (as the kernel OOM
killer or an operator would), max_retries=0; ray.get raises WorkerCrashedError."""
import os
import signal

import ray

ray.init(num_cpus=2, include_dashboard=False)


@ray.remote(max_retries=0)
def crunch(i):
    if i == 3:
        print(f"task {i}: killing own worker pid {os.getpid()} with SIGKILL", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    return i * 2


print("results:", ray.get([crunch.remote(i) for i in range(6)]))
