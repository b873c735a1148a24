#!/usr/bin/env python3
"""A second, independent log generator for scan benchmarks (not derived from the crate's
src/synth.rs): a multi-node training and inference cluster's mixed log, as a log collector
would concatenate it. Other line shapes and lengths than genlog's vLLM serving log:

- torchrun / DDP training steps (loss, lr, grad norm, tokens/s), DeepSpeed and NCCL INFO lines
- Kubernetes-style JSON structured lines (some with a long "payload" field, 1-4 KB)
- nginx access lines, Triton/TGI-style router lines, SLURM and systemd lines, dmesg lines
- Python warnings (FutureWarning, UserWarning) with their source line, a few tracebacks that
  end in ordinary errors (KeyError, ConnectionResetError, TimeoutError)
- rarely (about once per 2 MB), a real failure line of the kind signatures find

Deterministic for a seed. Usage:
    tools/otherlog.py --bytes 1G --seed 1 > /tmp/o.log
"""

import argparse
import random
import sys

SIZES = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(s):
    s = s.strip().upper().rstrip("B").rstrip("I")
    if s and s[-1] in SIZES:
        return int(float(s[:-1]) * SIZES[s[-1]])
    return int(s)


WORDS = (
    "the model layer weight bias tensor shard rank node batch token sequence cache block "
    "request response worker queue scheduler optimizer gradient checkpoint epoch step "
    "dataset loader sample buffer stream kernel device host memory pool allocator "
    "config value default option parameter module state dict key path file directory "
    "client server connection session timeout retry backoff health probe ready live"
).split()
MODULES = [
    "torch.distributed.elastic.agent.server.api",
    "deepspeed.runtime.engine",
    "transformers.trainer",
    "accelerate.utils.other",
    "torch.utils.data.dataloader",
    "datasets.builder",
    "lightning.pytorch.utilities.rank_zero",
    "ray.train._internal.session",
]
HOSTS = ["gpu-node-%02d" % i for i in range(1, 17)]
PATHS = [
    "/v1/completions",
    "/v1/chat/completions",
    "/health",
    "/metrics",
    "/v2/models/llama/infer",
    "/generate_stream",
    "/api/v1/embeddings",
]
AGENTS = [
    "python-requests/2.31.0",
    "curl/8.5.0",
    "Go-http-client/1.1",
    "Prometheus/2.48.1",
    "kube-probe/1.29",
    "openai-python/1.30.1",
]
WARNINGS = [
    ("FutureWarning", "`resume_download` is deprecated and will be removed in version 1.0.0. Downloads always resume when possible. If you want to force a new download, use `force_download=True`.", "huggingface_hub/file_download.py", 1132),
    ("UserWarning", "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class.", "torch/_utils.py", 831),
    ("UserWarning", "None of the inputs have requires_grad=True. Gradients will be None", "torch/utils/checkpoint.py", 90),
    ("FutureWarning", "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead.", "accelerate/accelerator.py", 488),
    ("DeprecationWarning", "pkg_resources is deprecated as an API", "setuptools/pkg_resources/__init__.py", 121),
]
ORDINARY_ERRORS = [
    "KeyError: 'attention_mask'",
    "ConnectionResetError: [Errno 104] Connection reset by peer",
    "TimeoutError: timed out waiting for response from http://10.0.3.7:8265/api/jobs/",
    "ValueError: invalid literal for int() with base 10: 'auto'",
    "FileNotFoundError: [Errno 2] No such file or directory: '/data/shards/part-00417.arrow'",
]
# Real failure lines of the kinds signatures look for; a few per run, like a real cluster log.
FAILURES = [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.12 GiB is free.",
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "[E ProcessGroupNCCL.cpp:474] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800313 milliseconds before timing out.",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "Killed",
]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.t = 1_733_000_000.0
        self.step = 0

    def ts(self):
        self.t += self.r.expovariate(400.0)
        whole = int(self.t)
        frac = int((self.t - whole) * 1e6)
        s = whole % 86400
        return "2026-12-01T%02d:%02d:%02d.%06dZ" % (s // 3600, s // 60 % 60, s % 60, frac)

    def words(self, lo, hi):
        return " ".join(self.r.choice(WORDS) for _ in range(self.r.randint(lo, hi)))

    def ip(self):
        r = self.r
        return "10.%d.%d.%d" % (r.randint(0, 7), r.randint(0, 255), r.randint(1, 254))

    def line(self):
        r = self.r
        k = r.random()
        host = r.choice(HOSTS)
        if k < 0.22:
            self.step += 1
            rank = r.randint(0, 7)
            return "[rank%d]:%s %s | step %d/%d | loss %.4f | lr %.3e | grad_norm %.3f | tokens/s %d | mem %.1fGB" % (
                rank, self.ts(), host, self.step, 500000, r.uniform(1.2, 3.5), r.uniform(1e-5, 3e-4),
                r.uniform(0.1, 4.0), r.randint(9000, 31000), r.uniform(20, 78))
        if k < 0.40:
            return '%s - - [01/Dec/2026:%02d:%02d:%02d +0000] "%s %s HTTP/1.1" %d %d "-" "%s" rt=%.3f uct="%.3f"' % (
                self.ip(), r.randint(0, 23), r.randint(0, 59), r.randint(0, 59),
                r.choice(["GET", "POST", "POST", "POST"]), r.choice(PATHS),
                r.choice([200, 200, 200, 200, 204, 400, 404, 499, 503]), r.randint(0, 90000),
                r.choice(AGENTS), r.uniform(0.001, 9.0), r.uniform(0.0, 0.01))
        if k < 0.55:
            payload = ""
            if r.random() < 0.08:
                payload = ',"payload":"%s"' % self.words(150, 600)
            return '{"ts":"%s","level":"%s","logger":"%s","host":"%s","pod":"infer-%s-%05d","msg":"%s","trace_id":"%032x"%s}' % (
                self.ts(), r.choice(["info", "info", "info", "debug", "warn"]), r.choice(MODULES), host,
                r.choice(["router", "prefill", "decode"]), r.randint(0, 99999), self.words(4, 14),
                r.getrandbits(128), payload)
        if k < 0.67:
            return "%s %s NCCL INFO Channel %02d/%d : %d[%d] -> %d[%d] via P2P/%s" % (
                host, r.randint(1000, 99999), r.randint(0, 31), 32, r.randint(0, 7), r.randint(0, 7),
                r.randint(0, 7), r.randint(0, 7), r.choice(["CUMEM", "IPC", "direct pointer"]))
        if k < 0.77:
            return "%s [%s] [%s] %s: %s" % (
                self.ts(), r.choice(["INFO", "INFO", "DEBUG"]), r.choice(MODULES), host, self.words(6, 22))
        if k < 0.84:
            return "%s %s slurmstepd[%d]: task %d: %s" % (
                self.ts(), host, r.randint(1000, 60000), r.randint(0, 63), self.words(3, 9))
        if k < 0.90:
            return "%s %s kernel: [%d.%06d] %s" % (
                self.ts(), host, r.randint(1, 900000), r.randint(0, 999999),
                r.choice(["nvidia-peermem: module loaded", "mlx5_core 0000:%02x:00.0: Port module event: module 0, Cable plugged" % r.randint(0, 255),
                          "IPv6: ADDRCONF(NETDEV_CHANGE): eth%d: link becomes ready" % r.randint(0, 3),
                          "EXT4-fs (nvme%dn1): mounted filesystem with ordered data mode" % r.randint(0, 7)]))
        if k < 0.95:
            return "%s %s systemd[1]: %s" % (
                self.ts(), host, r.choice(["Started Session %d of user ml." % r.randint(1, 9999),
                                            "Starting Daily apt upgrade and clean activities...",
                                            "nvidia-persistenced.service: Succeeded.",
                                            "Finished Cleanup of Temporary Directories."]))
        if k < 0.985:
            name, text, path, no = r.choice(WARNINGS)
            return "/opt/conda/lib/python3.11/site-packages/%s:%d: %s: %s\n  warnings.warn(" % (path, no, name, text)
        if k < 0.999:
            return "\n".join([
                "Traceback (most recent call last):",
                '  File "/workspace/app/%s.py", line %d, in %s' % (r.choice(["serve", "train", "data"]), r.randint(10, 900), r.choice(["main", "run", "handle", "fetch"])),
                "    %s" % self.words(3, 7),
                r.choice(ORDINARY_ERRORS),
            ])
        return "%s %s %s" % (self.ts(), host, self.words(20, 80))

    def failure(self):
        return "%s %s %s" % (self.ts(), self.r.choice(HOSTS), self.r.choice(FAILURES))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bytes", default="64M")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    total = parse_size(a.bytes)
    g = Gen(a.seed)
    out = sys.stdout.buffer
    written = 0
    next_failure = g.r.randint(1 << 20, 3 << 20)
    buf = []
    size = 0
    while written + size < total:
        if written + size >= next_failure:
            s = g.failure()
            next_failure += g.r.randint(1 << 20, 3 << 20)
        else:
            s = g.line()
        b = (s + "\n").encode()
        buf.append(b)
        size += len(b)
        if size > 1 << 20:
            out.write(b"".join(buf))
            written += size
            buf, size = [], 0
    out.write(b"".join(buf))


if __name__ == "__main__":
    main()
