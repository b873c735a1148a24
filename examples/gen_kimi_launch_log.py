#!/usr/bin/env python3
"""Generate examples/kimi-k2.5-launch.log, faultline's showcase log.

The log reconstructs a failed launch of nvidia/Kimi-K2.5-NVFP4 with vLLM
0.16.0rc2 (V1 engine, multiprocess executor, TP=8) on 8x RTX PRO 6000
Blackwell (SM120). Every tensor-parallel worker dies while building the model
because no MLA attention backend supports the checkpoint's FP8 KV cache on
SM120. The real cause is buried under thousands of harmless INFO/WARNING
lines, the workers' tracebacks are interleaved, and the tail ends with the
generic EngineCore / APIServer tracebacks.

Deterministic: Python 3.11+ standard library only, fixed seed, no network.
Usage:  python3 examples/gen_kimi_launch_log.py [output-path]
"""

from __future__ import annotations

import os
import random
import sys

SEED = 20260220
rng = random.Random(SEED)

# --------------------------------------------------------------------------
# Fixed facts of the scenario
# --------------------------------------------------------------------------
MODEL = "/shared/kimi-k2.5-nvfp4"
VLLM_VERSION = "0.16.0rc2.dev41+g5e1a9c3d7"
HOST = "pro6000-vm"
HOST_IP = "10.1.230.174"
SITE = "/root/vllm-nightly/lib/python3.12/site-packages"
VP = SITE + "/vllm"
STDLIB = "/usr/lib/python3.12"
API_PID = 206812
CORE_PID = 206974
TP = 8
# Worker_TPk pid = 207079 + k, so Worker_TP7 is pid 207086 as in the
# original session's grep output.
WORKER_PIDS = [207079 + k for k in range(TP)]
BUS_IDS = ["1b000", "1c000", "3d000", "3e000", "9b000", "9c000", "bb000", "bc000"]
CPU_AFFINITY = ["0-23,96-119"] * 4 + ["48-71,144-167"] * 4
NCCL_CHANNELS = 24  # the launch environment had NCCL_MIN_NCHANNELS=24 (and NCCL_DEBUG=INFO)
NCCL_VERSION = "2.27.5"
VIT_DEPTH = 27  # MoonViT blocks: one vit-attention backend line per block
SHARDS = 119

DATE = "02-20"
T0 = 21 * 3600 + 33 * 60  # 21:33:00

ATTN_ERROR = (
    "ValueError: No valid attention backend found for cuda with "
    "AttentionSelectorConfig(head_size=576, dtype=torch.bfloat16, "
    "kv_cache_dtype=fp8, block_size=None, use_mla=True, has_sink=False, "
    "use_sparse=False, use_mm_prefix=False, attn_type=AttentionType.DECODER). "
    "Reasons: {FLASH_ATTN_MLA: [kv_cache_dtype not supported, compute capability not "
    "supported, FlashAttention MLA not supported on this device], "
    "FLASHMLA: [compute capability not supported], "
    "FLASHINFER_MLA: [compute capability not supported], "
    "TRITON_MLA: [kv_cache_dtype not supported], "
    "FLASHMLA_SPARSE: [kv_cache_dtype not supported, non-sparse not supported, "
    "compute capability not supported]}."
)

# --------------------------------------------------------------------------
# Event model: (sort_key, seq, text). Lines are sorted by sort_key; seq keeps
# insertion order for equal keys. The displayed timestamp is part of text.
# --------------------------------------------------------------------------
events: list[tuple[float, int, str]] = []
_seq = 0


def emit(t: float, text: str) -> None:
    global _seq
    assert "\n" not in text
    events.append((t, _seq, text))
    _seq += 1


def hms(t: float) -> str:
    s = int(T0 + t)
    return f"{s // 3600:02d}:{(s // 60) % 60:02d}:{s % 60:02d}"


def vlog(prefix: str | None, level: str, t: float, src: str, msg: str) -> None:
    """One vLLM logger record; multi-line messages get the header per line."""
    head = f"{level} {DATE} {hms(t)} [{src}] "
    for line in msg.split("\n"):
        text = head + line
        emit(t, f"{prefix} {text}" if prefix else text)


def raw(prefix: str | None, t: float, line: str) -> None:
    emit(t, f"{prefix} {line}" if prefix else line)


API = f"(APIServer pid={API_PID})"
CORE = f"(EngineCore_DP0 pid={CORE_PID})"


def wp(k: int) -> str:
    return f"(Worker_TP{k} pid={WORKER_PIDS[k]})"


def carets(code: str, expr: str) -> str:
    """Python 3.12 style caret line under `expr` inside `code`."""
    col = code.index(expr)
    return " " * col + "^" * len(expr)


def frame(path: str, lineno: int, func: str, code: str, expr: str | None = None) -> list[str]:
    out = [f'  File "{path}", line {lineno}, in {func}', f"    {code}"]
    if expr is not None:
        out.append("    " + carets(code, expr))
    return out


def warn_block(path: str, lineno: int, category: str, msg: str, src_line: str) -> list[str]:
    return [f"{path}:{lineno}: {category}: {msg}", f"  {src_line}"]


GPT_OSS_ERR = (
    "[gpt_oss_triton_kernels_moe.py:61] Failed to import Triton kernels. Please make sure "
    "your triton version is compatible. Error: cannot import name 'SparseMatrix' from "
    f"'triton_kernels.tensor' ({SITE}/triton_kernels/tensor.py)"
)
PYNVML_WARN = warn_block(
    f"{SITE}/torch/cuda/__init__.py", 63, "FutureWarning",
    "The pynvml package is deprecated. Please install nvidia-ml-py instead. If you did not "
    "install pynvml directly, please report this to the maintainers of the package that "
    "installed pynvml for you.",
    "import pynvml  # type: ignore[import]",
)
TF32_WARN = warn_block(
    f"{SITE}/torch/backends/__init__.py", 46, "UserWarning",
    "Please use the new API settings to control TF32 behavior, such as "
    "torch.backends.cudnn.conv.fp32_precision = 'tf32' or "
    "torch.backends.cuda.matmul.fp32_precision = 'ieee'. Old settings, e.g, "
    "torch.backends.cuda.matmul.allow_tf32 = True, torch.backends.cudnn.allow_tf32 = True, "
    "allowTF32CuDNN() and allowTF32CuBLAS() will be deprecated after Pytorch 2.9. Please see "
    "https://pytorch.org/docs/main/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices "
    "(Triggered internally at /pytorch/aten/src/ATen/Context.cpp:80.)",
    "self.setter(val)",
)


def import_noise(t: float, prefix: str | None) -> float:
    """Lines printed while a fresh interpreter imports vllm (before the
    process-name prefix is installed, so they are unprefixed)."""
    for line in PYNVML_WARN:
        raw(prefix, t, line)
    t += rng.uniform(0.8, 1.6)
    emit(t, f"ERROR {DATE} {hms(t)} {GPT_OSS_ERR}")
    return t


# --------------------------------------------------------------------------
# 1. API server start-up
# --------------------------------------------------------------------------
def api_server() -> None:
    t = 2.0
    import_noise(t, None)
    t = 4.1
    banner = [
        "",
        "       █     █     █▄   ▄█",
        f" ▄▄ ▄█ █     █     █ ▀▄▀ █  version {VLLM_VERSION}",
        f"  █▄█▀ █     █     █     █  model   {MODEL}",
        "   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀",
        "",
    ]
    for b in banner:
        vlog(API, "INFO", t, "utils.py:325", b)
    args = (
        "{'model_tag': '%s', 'api_server_count': 1, 'port': 8000, 'model': '%s', "
        "'trust_remote_code': True, 'tensor_parallel_size': 8, "
        "'tool_call_parser': 'kimi_k2', 'reasoning_parser': 'kimi_k2'}" % (MODEL, MODEL)
    )
    vlog(API, "INFO", t, "utils.py:261", f"non-default args: {args}")
    t += 6.2
    vlog(API, "INFO", t, "model.py:541", "Resolved architecture: KimiK25ForConditionalGeneration")
    vlog(API, "INFO", t, "model.py:1561", "Using max model len 262144")
    t += 0.4
    vlog(API, "WARNING", t, "modelopt.py:1015",
         "Detected ModelOpt NVFP4 checkpoint. Please note that the format is experimental "
         "and could change in future.")
    vlog(API, "INFO", t, "cache.py:214",
         "Using fp8 data type to store kv cache. It reduces the GPU memory footprint and boosts "
         "the performance. Meanwhile, it may cause accuracy drop without a proper scaling factor.")
    vlog(API, "INFO", t, "scheduler.py:229", "Chunked prefill is enabled with max_num_batched_tokens=8192.")
    vlog(API, "INFO", t, "vllm.py:630", "Asynchronous scheduling is enabled.")
    t += 0.2
    vlog(API, "INFO", t, "config.py:502",
         "Overriding max cuda graph capture size to 512 for performance.")


# --------------------------------------------------------------------------
# 2. Engine core start-up
# --------------------------------------------------------------------------
def engine_core() -> None:
    t = 16.0
    import_noise(t, None)
    t = 19.3
    cfg = (
        f"model='{MODEL}', speculative_config=None, tokenizer='{MODEL}', "
        "skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, tokenizer_revision=None, "
        "trust_remote_code=True, dtype=torch.bfloat16, max_seq_len=262144, download_dir=None, "
        "load_format=auto, tensor_parallel_size=8, pipeline_parallel_size=1, data_parallel_size=1, "
        "disable_custom_all_reduce=False, quantization=modelopt_fp4, enforce_eager=False, "
        "enable_return_routed_experts=False, kv_cache_dtype=fp8, device_config=cuda, "
        "structured_outputs_config=StructuredOutputsConfig(backend='auto', disable_fallback=False, "
        "disable_any_whitespace=False, disable_additional_properties=False, reasoning_parser='kimi_k2', "
        "reasoning_parser_plugin='', enable_in_reasoning=False), "
        "observability_config=ObservabilityConfig(show_hidden_metrics_for_version=None, "
        "otlp_traces_endpoint=None, collect_detailed_traces=None, kv_cache_metrics=False, "
        "kv_cache_metrics_sample=0.01, cudagraph_metrics=False, enable_layerwise_nvtx_tracing=False, "
        "enable_mfu_metrics=False), seed=0, "
        f"served_model_name={MODEL}, enable_prefix_caching=True, enable_chunked_prefill=True, "
        "pooler_config=None, compilation_config={'level': None, 'mode': <CompilationMode.VLLM_COMPILE: 3>, "
        "'debug_dump_path': None, 'cache_dir': '', 'compile_cache_save_format': 'binary', "
        "'backend': 'inductor', 'custom_ops': ['none'], 'splitting_ops': ['vllm::unified_attention', "
        "'vllm::unified_attention_with_output', 'vllm::unified_mla_attention', "
        "'vllm::unified_mla_attention_with_output', 'vllm::mamba_mixer2', 'vllm::mamba_mixer', "
        "'vllm::short_conv', 'vllm::linear_attention', 'vllm::plamo2_mamba_mixer', "
        "'vllm::gdn_attention_core', 'vllm::kda_attention', 'vllm::sparse_attn_indexer'], "
        "'compile_mm_encoder': False, 'compile_sizes': [], 'compile_ranges_split_points': [8192], "
        "'inductor_compile_config': {'enable_auto_functionalized_v2': False, 'combo_kernels': True, "
        "'benchmark_combo_kernel': True}, 'inductor_passes': {}, "
        "'cudagraph_mode': <CUDAGraphMode.FULL_AND_PIECEWISE: (2, 1)>, 'cudagraph_num_of_warmups': 1, "
        "'cudagraph_capture_sizes': [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, "
        "120, 128, 136, 144, 152, 160, 168, 176, 184, 192, 200, 208, 216, 224, 232, 240, 248, 256, 272, "
        "288, 304, 320, 336, 352, 368, 384, 400, 416, 432, 448, 464, 480, 496, 512], "
        "'cudagraph_copy_inputs': False, 'cudagraph_specialize_lora': True, 'use_inductor_graph_partition': False, "
        "'pass_config': {'fuse_norm_quant': False, 'fuse_act_quant': False, 'fuse_attn_quant': False, "
        "'eliminate_noops': True, 'enable_sp': False, 'fuse_gemm_comms': False, 'fuse_allreduce_rms': False}, "
        "'max_cudagraph_capture_size': 512, 'dynamic_shapes_config': {'type': <DynamicShapesType.BACKED: 'backed'>, "
        "'evaluate_guards': False}, 'local_cache_dir': None}"
    )
    vlog(CORE, "INFO", t, "core.py:97", f"Initializing a V1 LLM engine (v{VLLM_VERSION}) with config: {cfg}")
    t += 0.3
    vlog(CORE, "WARNING", t, "multiproc_executor.py:910",
         "Reducing Torch parallelism from 96 threads to 1 to avoid unnecessary CPU contention. "
         "Set OMP_NUM_THREADS in the external environment to tune this value as needed.")
    t += 0.4
    vlog(CORE, "INFO", t, "shm_broadcast.py:295",
         "vLLM message queue communication handle: Handle(local_reader_ranks=[0, 1, 2, 3, 4, 5, 6, 7], "
         "buffer_handle=(8, 16777216, 10, 'psm_5b0c2a1e'), "
         "local_subscribe_addr='ipc:///tmp/9f1c7d52-58e6-4d3b-9a0e-2f6d1f44c8a1', "
         "remote_subscribe_addr=None, remote_addr_ipv6=False)")


# --------------------------------------------------------------------------
# NCCL (NCCL_DEBUG=INFO): C-level stdout, therefore *unprefixed* lines
# --------------------------------------------------------------------------
def nccl_comm(t: float, comm_idx: int, first: bool, comm_id: str,
              api: str = "ncclCommInitRank") -> float:
    """Emit one 8-rank communicator init (ncclCommInitRank) for all ranks.
    Returns the time at which the communicator is usable."""
    end = t
    for r in range(TP):
        pid = WORKER_PIDS[r]
        main = pid
        init_tid = pid + 361 + 17 * comm_idx
        conn_tid = init_tid + 9
        tag = lambda tid: f"{HOST}:{pid}:{tid} [{r}] NCCL INFO "  # noqa: E731
        comm = "0x%x" % (0x55d1c8a3f2b0 + r * 0x1b4e0 + comm_idx * 0x7e3a1f0)
        tt = t + rng.uniform(0.0, 0.25)
        if first:
            emit(tt, tag(main) + "cudaDriverVersion 13000")
            emit(tt, tag(main) + f"Bootstrap: Using eth0:{HOST_IP}<0>")
            emit(tt, tag(main) + "NCCL_CUMEM_ENABLE set by environment to 0.")
            emit(tt, tag(main) + f"NCCL_MIN_NCHANNELS set by environment to {NCCL_CHANNELS}.")
            if r == 0:
                emit(tt, tag(main) + f"NCCL version {NCCL_VERSION}+cuda12.9")
        if api == "ncclCommInitRankConfig":
            emit(tt, tag(main) + "Comm config Blocking set to 1")
        tt += rng.uniform(0.01, 0.05)
        if first:
            emit(tt, tag(init_tid) + "NET/Plugin: Could not find: libnccl-net.so. ")
            emit(tt, tag(init_tid) + "NET/IB : No device found.")
            emit(tt, tag(init_tid) + f"NET/Socket : Using [0]eth0:{HOST_IP}<0> [1]docker0:172.17.0.1<0>")
            emit(tt, tag(init_tid) + "Initialized NET plugin Socket")
        emit(tt, tag(init_tid) + "Assigned NET plugin Socket to comm")
        emit(tt, tag(init_tid) + "Using network Socket")
        emit(tt, tag(init_tid) + f"{api} comm {comm} rank {r} nranks {TP} cudaDev {r} "
             f"nvmlDev {r} busId {BUS_IDS[r]} commId {comm_id} - Init START")
        tt += rng.uniform(0.05, 0.3)
        if first:
            emit(tt, tag(init_tid) + f"RAS client listening socket at ::1<{28028}>")
        boot = rng.uniform(0.01, 0.2)
        emit(tt, tag(init_tid) + "Bootstrap timings total %.6f (create %.6f, send %.6f, recv %.6f, "
             "ring %.6f, delay %.6f)" % (boot, rng.uniform(2e-5, 6e-5), rng.uniform(1e-4, 3e-4),
                                         boot * 0.8, rng.uniform(1e-4, 9e-4), 1e-6))
        emit(tt, tag(init_tid) + f"Setting affinity for GPU {r} to {CPU_AFFINITY[r]}")
        emit(tt, tag(init_tid) + f"comm {comm} rank {r} nRanks {TP} nNodes 1 localRanks {TP} "
             f"localRank {r} MNNVL 0")
        if r == 0:
            ring = "".join(f"{x:4d}" for x in range(TP))
            for c in range(NCCL_CHANNELS):
                emit(tt, tag(init_tid) + f"Channel {c:02d}/{NCCL_CHANNELS:02d} :{ring}")
        up = r + 1 if r + 1 < TP else -1
        down = r - 1
        trees = " ".join(f"[{c}] {up}/-1/-1->{r}->{down}" for c in range(NCCL_CHANNELS))
        emit(tt, tag(init_tid) + f"Trees {trees}")
        emit(tt, tag(init_tid) + "P2P Chunksize set to 131072")
        emit(tt, tag(init_tid) + "Check P2P Type intraNodeP2pSupport 1 directMode 0")
        tt += rng.uniform(0.01, 0.04)
        emit(tt, tag(init_tid + 3) + f"[Proxy Service] Device {r} CPU core {rng.randint(0, 23) + (48 if r >= 4 else 0)}")
        emit(tt, tag(init_tid + 4) + f"[Proxy Service UDS] Device {r} CPU core {rng.randint(96, 119) + (48 if r >= 4 else 0)}")
        emit(tt, tag(init_tid) + "threadThresholds 8/8/64 | 64/8/64 | 512 | 512")
        emit(tt, tag(init_tid) + f"{NCCL_CHANNELS} coll channels, {NCCL_CHANNELS} collnet channels, "
             f"0 nvls channels, {NCCL_CHANNELS} p2p channels, 1 p2p channels per peer")
        emit(tt, tag(init_tid) + "CC Off, workFifoBytes 1048576")
        if first:
            emit(tt, tag(init_tid) + "TUNER/Plugin: Could not find: libnccl-tuner.so. Using internal tuner plugin.")
            emit(tt, tag(init_tid) + "%s comm %s: no tuner plugin loaded, using internal tuner" % (api, comm))
        tt += rng.uniform(0.2, 0.6)
        emit(tt, tag(init_tid) + f"{api} comm {comm} rank {r} nranks {TP} cudaDev {r} "
             f"nvmlDev {r} busId {BUS_IDS[r]} commId {comm_id} - Init COMPLETE")
        k = rng.uniform(0.15, 0.3)
        emit(tt, tag(init_tid) + "Init timings - " + api + ": rank %d nranks %d total %.2f (kernels %.2f, "
             "alloc %.2f, bootstrap %.2f, allgathers %.2f, topo %.2f, graphs %.2f, connections %.2f, rest %.2f)"
             % (r, TP, k + 0.45 + boot, k, 0.04, boot, 0.01, 0.31, 0.01, 0.07, 0.01))
        # lazy connection set-up on the warm-up all_reduce
        tt += rng.uniform(0.3, 0.7)
        nxt = (r + 1) % TP
        for c in range(NCCL_CHANNELS):
            emit(tt, tag(conn_tid) + f"Channel {c:02d}/0 : {r}[{r}] -> {nxt}[{nxt}] via P2P/IPC")
        emit(tt, tag(conn_tid) + "Connected all rings, use ring PXN 0 GDR 1")
        for c in range(NCCL_CHANNELS):
            if up != -1:
                emit(tt, tag(conn_tid) + f"Channel {c:02d}/0 : {r}[{r}] -> {up}[{up}] via P2P/IPC")
            if down != -1:
                emit(tt, tag(conn_tid) + f"Channel {c:02d}/0 : {r}[{r}] -> {down}[{down}] via P2P/IPC")
        emit(tt, tag(conn_tid) + "Connected all trees")
        end = max(end, tt)
    return end


def gloo_lines(t: float) -> None:
    """CPU (gloo) groups created for every GroupCoordinator: world, TP, PP,
    DCP, PCP, DP, EP. Printed by torch from C++ (unprefixed)."""
    for peers in (7, 7, 0, 0, 0, 0, 7):
        for r in rng.sample(range(TP), TP):
            emit(t + rng.uniform(0, 0.05),
                 f"[Gloo] Rank {r} is connected to {peers} peer ranks. "
                 f"Expected number of connected peer ranks is : {peers}")
        t += 0.06


# --------------------------------------------------------------------------
# 3. Workers: init, NCCL, model load, vit attention lines, the failure
# --------------------------------------------------------------------------
def worker_init() -> tuple[list[float], float]:
    """Returns per-worker time at which the vit-attention burst starts and
    the common failure time base."""
    spawn = 24.0
    for k in range(TP):
        t = spawn + 2.5 + rng.uniform(0.0, 2.5)
        import_noise(t, None)
    # first prefixed lines per worker
    base = 31.0
    for k in range(TP):
        t = base + rng.uniform(0.0, 1.2)
        p = wp(k)
        for line in TF32_WARN:
            raw(p, t, line)
        t += 0.05
        vlog(p, "INFO", t, "parallel_state.py:1236",
             f"world_size=8 rank={k} local_rank={k} distributed_init_method=tcp://127.0.0.1:48761 backend=nccl")
        t += rng.uniform(0.5, 1.5)
    t = nccl_comm(34.0, 0, True, "0x8f3e61d2c4b7a905", api="ncclCommInitRankConfig")
    gloo_lines(t + 0.2)
    t = nccl_comm(t + 0.6, 1, False, "0x5d09e4c81b7f2a36")
    for k in range(TP):
        tk = t + rng.uniform(0.0, 0.4)
        p = wp(k)
        vlog(p, "INFO", tk, "pynccl.py:111", f"vLLM is using nccl=={NCCL_VERSION}")
        tk += rng.uniform(0.2, 0.8)
        vlog(p, "INFO", tk, "custom_all_reduce_utils.py:244",
             "reading GPU P2P access cache from /root/.cache/vllm/gpu_p2p_access_cache_for_0,1,2,3,4,5,6,7.json")
        vlog(p, "WARNING", tk, "custom_all_reduce.py:154",
             "Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. "
             "To silence this warning, specify disable_custom_all_reduce=True explicitly.")
        tk += 0.02
        vlog(p, "WARNING", tk, "symm_mem.py:67",
             "SymmMemCommunicator: Device capability 12.0 not supported, communicator is not available.")
        if k == 0:
            vlog(p, "INFO", tk + 0.3, "shm_broadcast.py:295",
                 "vLLM message queue communication handle: Handle(local_reader_ranks=[1, 2, 3, 4, 5, 6, 7], "
                 "buffer_handle=(7, 4194304, 6, 'psm_c41f9e07'), "
                 "local_subscribe_addr='ipc:///tmp/2b8d0e3f-7c41-4a6e-b5d9-81f0c2a7e6b4', "
                 "remote_subscribe_addr=None, remote_addr_ipv6=False)")
    t = nccl_comm(t + 1.5, 2, False, "0x2c57b0e9a13d46f8")
    starts = []
    for k in range(TP):
        tk = t + rng.uniform(0.0, 0.5)
        p = wp(k)
        vlog(p, "INFO", tk, "parallel_state.py:1411",
             f"rank {k} in world size 8 is assigned as DP rank 0, PP rank 0, PCP rank 0, TP rank {k}, EP rank {k}")
        tk += rng.uniform(0.1, 0.3)
        vlog(p, "INFO", tk, "cuda_communicator.py:122", "Using AgRsAll2AllManager all2all manager.")
        tk += rng.uniform(0.3, 0.9)
        raw(p, tk, f"2026-02-20 21:{hms(tk)[3:]},%03d - INFO - flashinfer.jit: Prebuilt kernels not found, using JIT backend" % rng.randint(0, 999))
        vlog(p, "INFO", tk, "topk_topp_sampler.py:47", "Using FlashInfer for top-p & top-k sampling.")
        tk += rng.uniform(0.4, 1.0)
        vlog(p, "INFO", tk, "gpu_model_runner.py:3519", f"Starting to load model {MODEL}...")
        starts.append(tk)
    return starts, t


def shard_progress(t_start: float, t_end: float) -> None:
    """tqdm bar of rank 0 (the only rank with a bar). vLLM's bar_format ends in
    a newline, and tqdm starts every refresh with a carriage return, so each
    update is its own line of the form `<prefix> \rLoading ...`. Refreshes
    that land in the same mininterval window are written back to back, which
    leaves several `\r` rewrites inside a single line."""
    p = wp(0)
    label = "Loading safetensors checkpoint shards: "
    times = sorted(rng.uniform(t_start, t_end) for _ in range(SHARDS))

    def fmt(sec: float) -> str:
        sec = int(sec)
        return f"{sec // 60:02d}:{sec % 60:02d}"

    def bar(n: int, t: float) -> str:
        pct = int(100 * n / SHARDS)
        if n == 0:
            return f"\r{label}{pct:3d}% Completed | 0/{SHARDS} [00:00<?, ?it/s]"
        el = t - t_start
        spi = el / n
        rate = f"{spi:5.2f}s/it" if spi >= 1.0 else f"{1 / spi:5.2f}it/s"
        return (f"\r{label}{pct:3d}% Completed | {n}/{SHARDS} "
                f"[{fmt(el)}<{fmt(spi * (SHARDS - n))}, {rate}]")

    pending = [bar(0, t_start)]
    for n in range(1, SHARDS + 1):
        t = times[n - 1]
        pending.append(bar(n, t))
        if rng.random() < 0.8 or n == SHARDS:
            raw(p, t, "".join(pending))
            pending = []


def worker_fail(starts: list[float]) -> tuple[int, list[float]]:
    """vit attention lines, then each worker's WorkerProc traceback.
    Returns the (worker index of the earliest failure, per-worker end times)."""
    # The seed log: vit-attention lines at 21:35:48 (t = 168)
    vit_base = 168.0
    fail_t = []
    for k in range(TP):
        p = wp(k)
        t = vit_base + 0.1 + rng.uniform(0.0, 0.35)
        for i in range(VIT_DEPTH):
            t += rng.uniform(0.004, 0.012)
            vlog(p, "INFO", t, "cuda.py:456", "Using backend AttentionBackendEnum.FLASH_ATTN for vit attention")
        fail_t.append(t + rng.uniform(0.02, 0.08))

    tb_lines = worker_traceback_lines()
    order = sorted(range(TP), key=lambda k: fail_t[k])
    ends = [0.0] * TP
    for k in range(TP):
        p = wp(k)
        t = fail_t[k]
        head = f"ERROR {DATE} {hms(t)} [multiproc_executor.py:772] "
        # each worker flushes its record in small chunks; the chunks of the
        # eight workers interleave (ordering key advances per chunk)
        key = t
        i = 0
        while i < len(tb_lines):
            n = rng.randint(1, 9)
            for line in tb_lines[i:i + n]:
                emit(key, f"{p} {head}{line}")
            i += n
            key += rng.uniform(0.01, 0.05)
        ends[k] = key
    return order[0], ends


def worker_traceback_lines() -> list[str]:
    L = ["WorkerProc failed to start.", "Traceback (most recent call last):"]
    L += frame(f"{VP}/v1/executor/multiproc_executor.py", 743, "worker_main",
               "worker = WorkerProc(*args, **kwargs)", "WorkerProc(*args, **kwargs)")
    L += frame(f"{VP}/v1/executor/multiproc_executor.py", 580, "__init__", "self.worker.load_model()")
    L += frame(f"{VP}/v1/worker/gpu_worker.py", 276, "load_model",
               "self.model_runner.load_model(eep_scale_up=eep_scale_up)")
    L += frame(f"{VP}/v1/worker/gpu_model_runner.py", 3585, "load_model",
               "self.model = model_loader.load_model(", "model_loader.load_model(")
    L += frame(f"{VP}/model_executor/model_loader/base_loader.py", 54, "load_model",
               "model = initialize_model(", "initialize_model(")
    L += frame(f"{VP}/model_executor/model_loader/utils.py", 55, "initialize_model",
               "model = model_class(vllm_config=vllm_config, prefix=prefix)",
               "model_class(vllm_config=vllm_config, prefix=prefix)")
    L += frame(f"{VP}/model_executor/models/kimi_k25.py", 371, "__init__",
               "self.language_model = DeepseekV3ForCausalLM(", "DeepseekV3ForCausalLM(")
    L += frame(f"{VP}/model_executor/models/deepseek_v2.py", 1377, "__init__",
               "self.model = self.model_cls(", "self.model_cls(")
    L += frame(f"{VP}/compilation/decorators.py", 306, "__init__", "old_init(self, **kwargs)")
    L += frame(f"{VP}/model_executor/models/deepseek_v2.py", 1269, "__init__",
               "self.start_layer, self.end_layer, self.layers = make_layers(", "make_layers(")
    L += frame(f"{VP}/model_executor/models/utils.py", 672, "make_layers",
               'maybe_offload_to_cpu(layer_fn(prefix=f"{prefix}.{idx}"))',
               'layer_fn(prefix=f"{prefix}.{idx}")')
    L += frame(f"{VP}/model_executor/models/deepseek_v2.py", 1271, "<lambda>",
               "lambda prefix: DeepseekV2DecoderLayer(", "DeepseekV2DecoderLayer(")
    L += frame(f"{VP}/model_executor/models/deepseek_v2.py", 1153, "__init__",
               "self.self_attn = attn_cls(", "attn_cls(")
    L += frame(f"{VP}/model_executor/models/deepseek_v2.py", 1087, "__init__",
               "self.mla_attn = MultiHeadLatentAttentionWrapper(", "MultiHeadLatentAttentionWrapper(")
    L += frame(f"{VP}/model_executor/layers/mla.py", 95, "__init__",
               "self.mla_attn = MLAAttention(", "MLAAttention(")
    L += frame(f"{VP}/attention/layer.py", 534, "__init__",
               "self.attn_backend = get_attn_backend(", "get_attn_backend(")
    L += frame(f"{VP}/v1/attention/selector.py", 93, "get_attn_backend",
               "return _cached_get_attn_backend(", "_cached_get_attn_backend(")
    L += frame(f"{VP}/v1/attention/selector.py", 113, "_cached_get_attn_backend",
               "attention_cls = current_platform.get_attn_backend_cls(",
               "current_platform.get_attn_backend_cls(")
    L += frame(f"{VP}/platforms/cuda.py", 362, "get_attn_backend_cls", "raise ValueError(")
    L.append(ATTN_ERROR)
    return L


def shutdown_and_tail(t_workers_done: float) -> None:
    # torch C++ warnings from every worker process as it exits (unprefixed)
    t = t_workers_done + 0.3
    for r in rng.sample(range(TP), TP):
        t += rng.uniform(0.01, 0.08)
        ns = rng.randint(100000000, 999999999)
        raw(None, t, f"[rank{r}]:[W220 {hms(t)}.{ns} ProcessGroupNCCL.cpp:1538] Warning: WARNING: "
                     "destroy_process_group() was not called before program exit, which can leak "
                     "resources. For more info, please see "
                     "https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())")

    # EngineCore: logger.exception record
    t += 0.6
    head_src = "core.py:946"
    core_tb = ["EngineCore failed to start.", "Traceback (most recent call last):"]
    core_frames = []
    core_frames += frame(f"{VP}/v1/engine/core.py", 937, "run_engine_core",
                         "engine_core = EngineCoreProc(*args, engine_index=dp_rank, **kwargs)",
                         "EngineCoreProc(*args, engine_index=dp_rank, **kwargs)")
    core_frames += frame(f"{VP}/v1/engine/core.py", 691, "__init__", "super().__init__(")
    core_frames += frame(f"{VP}/v1/engine/core.py", 105, "__init__",
                         "self.model_executor = executor_class(vllm_config)",
                         "executor_class(vllm_config)")
    core_frames += frame(f"{VP}/v1/executor/multiproc_executor.py", 101, "__init__",
                         "super().__init__(vllm_config)")
    core_frames += frame(f"{VP}/v1/executor/abstract.py", 101, "__init__", "self._init_executor()")
    core_frames += frame(f"{VP}/v1/executor/multiproc_executor.py", 183, "_init_executor",
                         "self.workers = WorkerProc.wait_for_ready(unready_workers)",
                         "WorkerProc.wait_for_ready(unready_workers)")
    core_frames += frame(f"{VP}/v1/executor/multiproc_executor.py", 671, "wait_for_ready",
                         "raise e from None")
    exc = ("Exception: WorkerProc initialization failed due to an exception in a background "
           "process. See stack trace for root cause.")
    vlog(CORE, "ERROR", t, head_src, "\n".join(core_tb + core_frames + [exc]))
    # multiprocessing's own report of the dead process (no log header)
    t += 0.05
    raw(CORE, t, "Process EngineCore_DP0:")
    raw(CORE, t, "Traceback (most recent call last):")
    mp = []
    mp += frame(f"{STDLIB}/multiprocessing/process.py", 314, "_bootstrap", "self.run()")
    mp += frame(f"{STDLIB}/multiprocessing/process.py", 108, "run",
                "self._target(*self._args, **self._kwargs)")
    mp += frame(f"{VP}/v1/engine/core.py", 950, "run_engine_core", "raise e")
    for line in mp + core_frames + [exc]:
        raw(CORE, t, line)

    # API server: the traceback the user saw
    t += 1.4
    api = []
    api += frame("/root/vllm-nightly/bin/vllm", 10, "<module>", "sys.exit(main())", "main()")
    api += frame(f"{VP}/entrypoints/cli/main.py", 73, "main", "args.dispatch_function(args)")
    api += frame(f"{VP}/entrypoints/cli/serve.py", 111, "cmd", "uvloop.run(run_server(args))")
    api += frame(f"{SITE}/uvloop/__init__.py", 96, "run", "return __asyncio.run(", "__asyncio.run(")
    api += frame(f"{STDLIB}/asyncio/runners.py", 194, "run", "return runner.run(main)", "runner.run(main)")
    api += frame(f"{STDLIB}/asyncio/runners.py", 118, "run",
                 "return self._loop.run_until_complete(task)", "self._loop.run_until_complete(task)")
    api.append('  File "uvloop/loop.pyx", line 1518, in uvloop.loop.Loop.run_until_complete')
    api += frame(f"{SITE}/uvloop/__init__.py", 48, "wrapper", "return await main", "await main")
    api += frame(f"{VP}/entrypoints/openai/api_server.py", 919, "run_server",
                 "await run_server_worker(listen_address, sock, args, **uvicorn_kwargs)")
    api += frame(f"{VP}/entrypoints/openai/api_server.py", 938, "run_server_worker",
                 "async with build_async_engine_client(", "build_async_engine_client(")
    api += frame(f"{STDLIB}/contextlib.py", 210, "__aenter__", "return await anext(self.gen)",
                 "await anext(self.gen)")
    api += frame(f"{VP}/entrypoints/openai/api_server.py", 147, "build_async_engine_client",
                 "async with build_async_engine_client_from_engine_args(",
                 "build_async_engine_client_from_engine_args(")
    api += frame(f"{STDLIB}/contextlib.py", 210, "__aenter__", "return await anext(self.gen)",
                 "await anext(self.gen)")
    api += frame(f"{VP}/entrypoints/openai/api_server.py", 188,
                 "build_async_engine_client_from_engine_args",
                 "async_llm = AsyncLLM.from_vllm_config(", "AsyncLLM.from_vllm_config(")
    api += frame(f"{VP}/v1/engine/async_llm.py", 223, "from_vllm_config", "return cls(", "cls(")
    api += frame(f"{VP}/v1/engine/async_llm.py", 134, "__init__",
                 "self.engine_core = EngineCoreClient.make_async_mp_client(",
                 "EngineCoreClient.make_async_mp_client(")
    api += frame(f"{VP}/v1/engine/core_client.py", 121, "make_async_mp_client",
                 "return AsyncMPClient(*client_args)", "AsyncMPClient(*client_args)")
    api += frame(f"{VP}/v1/engine/core_client.py", 808, "__init__", "super().__init__(")
    api += frame(f"{VP}/v1/engine/core_client.py", 469, "__init__",
                 "with launch_core_engines(vllm_config, executor_class, log_stats) as (",
                 "launch_core_engines(vllm_config, executor_class, log_stats)")
    api += frame(f"{STDLIB}/contextlib.py", 144, "__exit__", "next(self.gen)")
    api += frame(f"{VP}/v1/engine/utils.py", 900, "launch_core_engines", "wait_for_engine_startup(")
    api += frame(f"{VP}/v1/engine/utils.py", 957, "wait_for_engine_startup", "raise RuntimeError(")
    raw(API, t, "Traceback (most recent call last):")
    for line in api:
        raw(API, t, line)
    raw(API, t, "RuntimeError: Engine core initialization failed. See root cause above. "
                "Failed core proc(s): {'EngineCore_DP0': 1}")
    t += 0.8
    for line in warn_block(f"{STDLIB}/multiprocessing/resource_tracker.py", 279, "UserWarning",
                           "resource_tracker: There appear to be 1 leaked shared_memory objects "
                           "to clean up at shutdown",
                           "warnings.warn('resource_tracker: There appear to be %d '"):
        raw(None, t, line)


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "kimi-k2.5-launch.log")
    api_server()
    engine_core()
    starts, _ = worker_init()
    shard_progress(max(starts) + 1.0, 166.5)
    first, ends = worker_fail(starts)
    shutdown_and_tail(max(ends))

    events.sort(key=lambda e: (e[0], e[1]))
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for _, _, text in events:
            f.write(text + "\n")

    # summary for the README / maintainers
    lines = [e[2] for e in events]
    root = next(i for i, l in enumerate(lines, 1) if "No valid attention backend found" in l)
    print(f"wrote {out}: {len(lines)} lines, {os.path.getsize(out)} bytes")
    print(f"first root-cause line: {root}: {lines[root - 1][:110]}...")
    return 0


if __name__ == "__main__":
    sys.exit(main())
