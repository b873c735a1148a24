"""Unit tests of the site extractor on inline snippets.

    python3 -m pytest tools/coverage        or        python3 tools/coverage/test_sites.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import area_of  # noqa: E402
from sites import cpp_sites, guess_value, python_sites  # noqa: E402

PY = '''
import logging
from vllm.v1.engine.exceptions import EngineDeadError
logger = logging.getLogger(__name__)
_TP_MSG = "Tensor parallelism is not supported by this backend."


class KVCacheTooSmallError(RuntimeError):
    pass


def check(world_size, num_gpus, e):
    if world_size > num_gpus:
        raise ValueError(f"World size ({world_size}) is larger than the number of GPUs ({num_gpus}).")
    msg = "Not enough memory for the KV cache"
    msg += f" on rank {rank}"
    raise KVCacheTooSmallError(msg)


def other(e, path, dtype):
    raise RuntimeError(str(e))           # no literal text: not a site
    raise StopIteration("done")          # control flow: not a site
    raise                                # re-raise: not a site
    logger.info("healthy %s", path)      # not an error level
    logger.error("Failed to load %s with dtype %s", path, dtype)
    logger.exception("Worker crashed")
    raise EngineDeadError("EngineCore encountered an issue. See stack trace for the root cause.")
    raise TypeError("Expected {} but got {!r}".format(dtype, path))
    raise OSError("No space left on device: " + path)
    raise NotImplementedError(_TP_MSG)


def _died(rank, proc):
    return RuntimeError(f"Rank {rank} scheduler died during initialization (exit code: {proc.exitcode})")
'''


HINT = '''
def _hint(config):
    if config.extensible:
        return f"Decrease `max_model_len` ({config.max_model_len})."
    return "Try increasing `gpu_memory_utilization` when initializing the engine."


def _check(available, hint):
    if available <= 0:
        raise ValueError(f"No available memory for the cache blocks. {hint} See the docs.")


def plan(config, available):
    _check(available, _hint(config))
'''


class PythonSites(unittest.TestCase):
    def setUp(self):
        self.sites = python_sites("vllm/v1/worker/check.py", PY)
        self.by_line = {s.line: s for s in self.sites}

    def test_every_fatal_site_and_only_those(self):
        kinds = [(s.kind, s.exc) for s in self.sites]
        self.assertEqual(kinds, [
            ("raise", "ValueError"),
            ("raise", "vllm.v1.worker.check.KVCacheTooSmallError"),
            ("log.error", "ERROR"),
            ("log.exception", "ERROR"),
            ("raise", "vllm.v1.engine.exceptions.EngineDeadError"),
            ("raise", "TypeError"),
            ("raise", "OSError"),
            ("raise", "NotImplementedError"),
            ("raise", "RuntimeError"),
        ])
        self.assertEqual(self.sites[8].message, "Rank 1 scheduler died during initialization (exit code: 1)")
        self.assertEqual(self.sites[7].message, "Tensor parallelism is not supported by this backend.")

    def test_f_string_placeholders_get_plausible_values(self):
        s = self.sites[0]
        self.assertEqual(s.rendered, "ValueError: World size (8) is larger than the number of GPUs (4096).")
        self.assertEqual(s.func, "check")
        self.assertTrue(s.source.startswith("raise ValueError("))

    def test_message_from_a_local_variable_with_augmented_assignment(self):
        self.assertEqual(self.sites[1].message, "Not enough memory for the KV cache on rank 1")

    def test_percent_format_of_logger_arguments(self):
        self.assertEqual(self.sites[2].message, "Failed to load /models/Llama-3.1-8B-Instruct with dtype torch.bfloat16")
        self.assertEqual(self.sites[3].rendered, "Worker crashed")

    def test_format_and_concatenation(self):
        self.assertEqual(self.sites[5].message, "Expected torch.bfloat16 but got '/models/Llama-3.1-8B-Instruct'")
        self.assertEqual(self.sites[6].rendered, "OSError: No space left on device: /models/Llama-3.1-8B-Instruct")

    def test_parameter_placeholder_takes_what_a_caller_in_the_module_passes(self):
        (site,) = python_sites("vllm/v1/core/kv_cache_planning.py", HINT)
        self.assertEqual(site.rendered, "ValueError: No available memory for the cache blocks. Try increasing "
                         "`gpu_memory_utilization` when initializing the engine. See the docs.")

    def test_syntax_error_yields_no_site(self):
        self.assertEqual(python_sites("x.py", "def f(:\n  raise ValueError('x')\n"), [])


CPP = r'''
// TORCH_CHECK(false, "in a comment: not a site");
#define C10D_NCCL_CHECK(cmd, failureReason)                                   \
  do {                                                                        \
    ncclResult_t result = cmd;                                                \
    if (result != ncclSuccess) {                                              \
      std::string err = "NCCL error in: " + std::string(__FILE__) + ":" +     \
          std::to_string(__LINE__) + ", " + ncclGetErrorWithVersion(result) + \
          "\n" + getNcclErrorDetailStr(result, failureReason);                \
      TORCH_CHECK_WITH(DistBackendError, false, err);                         \
    }                                                                         \
  } while (0)

void f(int rank, int size) {
  TORCH_CHECK(rank < size, "Invalid rank ", rank, ", world size is ", size);
  TORCH_CHECK(rank >= 0);
  C10_THROW_ERROR(ValueError, "Unsupported backend: " + name);
  TORCH_CHECK(ok, some_message_variable);
}
'''


class CppSites(unittest.TestCase):
    def setUp(self):
        self.sites = cpp_sites("torch/csrc/distributed/c10d/NCCLUtils.hpp", CPP)

    def test_macro_sites_and_exception_types(self):
        self.assertEqual([(s.kind, s.exc, s.line) for s in self.sites], [
            ("TORCH_CHECK_WITH", "torch.distributed.DistBackendError", 10),
            ("TORCH_CHECK", "RuntimeError", 15),
            ("TORCH_CHECK", "RuntimeError", 16),
            ("C10_THROW_ERROR", "ValueError", 17),
        ])

    def test_nccl_error_built_in_a_local_string(self):
        self.assertTrue(self.sites[0].message.startswith("NCCL error in: /pytorch/torch/csrc/distributed/c10d/"))
        self.assertIn("unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version", self.sites[0].message)

    def test_streamed_arguments_and_default_message(self):
        self.assertEqual(self.sites[1].rendered, "RuntimeError: Invalid rank 1, world size is 8")
        self.assertTrue(self.sites[2].message.startswith("Expected rank>=0 to be true, but got false."))
        self.assertEqual(self.sites[3].rendered, "ValueError: Unsupported backend: llama")


class Helpers(unittest.TestCase):
    def test_longest_prefix_wins(self):
        areas = {"engine": ["vllm/engine/"], "config": ["vllm/engine/arg_utils.py"]}
        self.assertEqual(area_of("vllm/engine/arg_utils.py", areas), "config")
        self.assertEqual(area_of("vllm/engine/llm_engine.py", areas), "engine")
        self.assertIsNone(area_of("vllm/entrypoints/api_server.py", areas))

    def test_guess_value(self):
        self.assertEqual(guess_value("self.parallel_config.world_size"), 8)
        self.assertEqual(guess_value("getRank()"), 1)
        self.assertEqual(guess_value("str(e)"), "internal error")


if __name__ == "__main__":
    unittest.main()
