"""Failing Ray driver: a task allocates memory in 100 MB steps until Ray's memory monitor
kills it (run.py sets RAY_memory_usage_threshold just above the node's current usage so the
kill happens after about 1.5 GB). max_retries=0: ray.get raises OutOfMemoryError."""
import time

import ray

ray.init(num_cpus=2, include_dashboard=False)


@ray.remote(max_retries=0)
def hog():
    chunks = []
    for i in range(80):
        chunks.append(bytearray(100 * 1024 * 1024))
        print(f"hog: allocated {(i + 1) * 100} MB", flush=True)
        time.sleep(0.2)
    return len(chunks)


print("hog returned", ray.get(hog.remote()))
