//! A deterministic generator of realistic vLLM v1 serving logs, for benchmarks, the
//! instruction-count guard and `faultline db check`'s candidate-rate estimate.
//!
//! The same seed and options always give the same bytes. Most lines are the healthy traffic
//! a serving log is made of (multi-process INFO lines, request and access logs, engine
//! throughput, NCCL INFO); tracebacks, ERROR lines and real failure lines (the caller passes
//! them, e.g. signature examples) are rare, as in life.
//!
//! ```
//! use faultline_db::{LogGen, SynthOptions};
//!
//! let mut a = Vec::new();
//! LogGen::new(SynthOptions { seed: 7, ..SynthOptions::default() }).fill(&mut a, 10_000);
//! let mut b = Vec::new();
//! LogGen::new(SynthOptions { seed: 7, ..SynthOptions::default() }).fill(&mut b, 10_000);
//! assert_eq!(a, b);
//! assert!(a.len() >= 10_000 && a.ends_with(b"\n"));
//! ```

use std::io::{self, Write};

/// What to generate.
#[derive(Clone, Debug)]
pub struct SynthOptions {
    /// Seed of the pseudo-random sequence; equal seeds give equal logs.
    pub seed: u64,
    /// Fraction of lines that carry non-ASCII text (progress bars, multilingual prompts).
    pub non_ascii: f64,
    /// Real failure lines to sprinkle in (e.g. signature examples); none gives a healthy log.
    pub failures: Vec<String>,
    /// Fraction of lines that are one of `failures`.
    pub failure_rate: f64,
    /// Fraction of lines that start a Python traceback (a few frames and an exception line).
    pub traceback_rate: f64,
    /// Fraction of lines that are about 50 KB long (a request log with a huge prompt).
    pub long_line_rate: f64,
    /// Writes the same log with every run of non-ASCII bytes replaced by as many bytes of
    /// ordinary ASCII words: the twin a non-ASCII log's scan speed is compared with.
    pub ascii_twin: bool,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            seed: 1,
            non_ascii: 0.0,
            failures: Vec::new(),
            failure_rate: 1e-5,
            traceback_rate: 2e-5,
            long_line_rate: 2e-5,
            ascii_twin: false,
        }
    }
}

/// Replaces each run of non-ASCII bytes in `line` with as many bytes of ASCII words.
fn to_ascii(line: &mut [u8]) {
    static FILLER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let filler = FILLER.get_or_init(|| WORDS.join(" ")).as_bytes();
    for (k, b) in line.iter_mut().filter(|b| !b.is_ascii()).enumerate() {
        *b = filler[k % filler.len()];
    }
}

/// SplitMix64: small, fast and good enough for picking templates (also for
/// `crate::synth_set`'s words).
#[derive(Debug)]
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A number in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((self.next() >> 32) * n) >> 32
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) < p
    }
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "was",
    "on",
    "be",
    "by",
    "this",
    "are",
    "from",
    "or",
    "at",
    "an",
    "have",
    "not",
    "which",
    "but",
    "all",
    "were",
    "can",
    "one",
    "when",
    "there",
    "has",
    "more",
    "will",
    "their",
    "if",
    "about",
    "would",
    "what",
    "so",
    "out",
    "up",
    "into",
    "them",
    "some",
    "could",
    "other",
    "time",
    "than",
    "then",
    "only",
    "its",
    "also",
    "two",
    "first",
    "been",
    "any",
    "new",
    "like",
    "our",
    "these",
    "may",
    "over",
    "such",
    "most",
    "after",
    "used",
    "work",
    "use",
    "how",
    "where",
    "well",
    "should",
    "because",
    "each",
    "through",
    "between",
    "under",
    "model",
    "request",
    "token",
    "tokens",
    "cache",
    "batch",
    "prefill",
    "decode",
    "weights",
    "layer",
    "expert",
    "sequence",
    "user",
    "assistant",
    "summarize",
    "following",
    "document",
    "translate",
    "explain",
    "write",
    "function",
    "python",
    "please",
    "report",
    "table",
    "data",
    "answer",
    "question",
    "code",
    "review",
    "story",
    "list",
    "step",
    "reason",
    "think",
    "plan",
    "search",
    "query",
    "result",
    "error",
    "handling",
    "example",
    "output",
    "input",
    "value",
    "return",
    "class",
    "method",
    "string",
    "number",
    "file",
    "path",
    "server",
    "client",
    "response",
    "stream",
    "chunk",
    "message",
    "context",
    "window",
    "length",
    "attention",
    "memory",
    "latency",
    "throughput",
    "customer",
    "order",
    "invoice",
    "product",
    "price",
    "shipping",
    "refund",
    "account",
    "password",
    "email",
    "address",
    "support",
    "history",
    "science",
    "music",
    "weather",
    "travel",
    "recipe",
    "health",
    "finance",
    "market",
    "stock",
    "energy",
    "climate",
];

const NON_ASCII_WORDS: &[&str] = &[
    "请总结以下文档",
    "翻訳してください",
    "요약해 주세요",
    "объясни",
    "ÜBERSETZEN",
    "résumé",
    "naïve",
    "日本語",
    "中文",
    "Ελληνικά",
    "مرحبا",
    "🙂",
    "→",
    "…",
];

const WORKER_MESSAGES: &[(&str, &str)] = &[
    ("gpu_model_runner.py:2007", "Model loading took 71.2 GiB and 45.3 seconds"),
    ("gpu_worker.py:276", "Available KV cache memory: 3.42 GiB"),
    ("parallel_state.py:1208", "rank 3 in world size 8 is assigned as DP rank 0, PP rank 0, TP rank 3, EP rank 3"),
    ("default_loader.py:267", "Loading weights took 38.21 seconds"),
    ("monitor.py:34", "torch.compile takes 41.8 s in total"),
    ("backends.py:548", "Using cache directory: /root/.cache/vllm/torch_compile_cache/3f1a2b9c0d/rank_3_0/backbone for vLLM's torch.compile"),
    ("gpu_model_runner.py:3421", "Graph capturing finished in 17 secs, took 0.42 GiB"),
    ("custom_all_reduce.py:196", "Registering 8643 cuda graph addresses"),
    ("core.py:211", "init engine (profile, create kv cache, warmup model) took 94.02 seconds"),
    ("pynccl.py:70", "vLLM is using nccl==2.27.3"),
];

const API_MESSAGES: &[(&str, &str)] = &[
    ("launcher.py:37", "Route: /v1/chat/completions, Methods: POST"),
    ("api_server.py:1818", "Starting vLLM API server 0 on http://0.0.0.0:8000"),
    ("serving_chat.py:139", "Using default chat sampling params from model: {'temperature': 0.6, 'top_p': 0.95}"),
    ("chat_utils.py:470", "Detected the chat template content format to be 'string'. You can set `--chat-template-content-format` to override this."),
];

const WARNINGS: &[(&str, &str)] = &[
    ("scheduler.py:1070", "Sequence group chatcmpl-8d1 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance."),
    ("protocol.py:93", "The following fields were present in the request but ignored: {'stream_options'}"),
    ("config.py:3700", "Casting torch.bfloat16 to torch.float16."),
];

const NCCL_MESSAGES: &[&str] = &[
    "Channel 00/0 : 3[3] -> 4[4] via P2P/CUMEM/read",
    "Connected all rings, use ring PXN 0 GDR 1",
    "Using network Socket",
    "comm 0x5612c0a0 rank 3 nRanks 8 nNodes 1 localRanks 8 localRank 3 MNNVL 0",
    "NVLS multicast support is not available on dev 3",
    "ncclCommInitRank comm 0x5612c0a0 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId 4b000 commId 0x9f3e - Init COMPLETE",
];

const FRAMES: &[(&str, &str, &str)] = &[
    (
        "/usr/lib/python3.12/site-packages/vllm/v1/engine/core.py",
        "run_engine_core",
        "engine_core.run_busy_loop()",
    ),
    (
        "/usr/lib/python3.12/site-packages/vllm/v1/executor/multiproc_executor.py",
        "collective_rpc",
        "result = get_response(w, dequeue_timeout)",
    ),
    (
        "/usr/lib/python3.12/site-packages/vllm/worker/worker_base.py",
        "execute_method",
        "return run_method(self, method, args, kwargs)",
    ),
    (
        "/usr/lib/python3.12/site-packages/torch/nn/modules/module.py",
        "_call_impl",
        "return forward_call(*args, **kwargs)",
    ),
];

/// A generator of one log.
#[derive(Debug)]
pub struct LogGen {
    opts: SynthOptions,
    rng: Rng,
    /// Seconds since the log began, for timestamps.
    clock: u64,
    request: u64,
}

impl LogGen {
    /// A generator starting at the beginning of the log `opts` describes.
    pub fn new(opts: SynthOptions) -> LogGen {
        let rng = Rng(opts.seed ^ 0x5eed_f417_1e5c_a9e1);
        LogGen {
            opts,
            rng,
            clock: 0,
            request: 0,
        }
    }

    /// Appends whole lines to `out` until it holds at least `len` bytes.
    pub fn fill(&mut self, out: &mut Vec<u8>, len: usize) {
        while out.len() < len {
            self.line(out);
        }
    }

    /// Writes whole lines to `w`, at least `bytes` bytes in all; returns how many.
    pub fn write_to(&mut self, w: &mut dyn Write, bytes: u64) -> io::Result<u64> {
        let mut written = 0u64;
        let mut buf = Vec::with_capacity(1 << 20);
        while written < bytes {
            buf.clear();
            let want = (bytes - written).min(1 << 20) as usize;
            self.fill(&mut buf, want);
            w.write_all(&buf)?;
            written += buf.len() as u64;
        }
        Ok(written)
    }

    fn stamp(&mut self, out: &mut Vec<u8>) {
        if self.rng.chance(0.02) {
            self.clock += 1;
        }
        let t = self.clock;
        let _ = write!(
            out,
            "{:02}-{:02} {:02}:{:02}:{:02}",
            11,
            1 + (t / 86_400) % 28,
            (t / 3600) % 24,
            (t / 60) % 60,
            t % 60
        );
    }

    fn prefix(&mut self, out: &mut Vec<u8>, level: &str, file: &str) {
        match self.rng.below(4) {
            0 => out.extend_from_slice(b"(APIServer pid=206812) "),
            1 => out.extend_from_slice(b"(EngineCore_DP0 pid=207001) "),
            _ => {
                let tp = self.rng.below(8);
                let _ = write!(out, "(Worker_TP{tp} pid={}) ", 207_080 + tp);
            }
        }
        out.extend_from_slice(level.as_bytes());
        out.push(b' ');
        self.stamp(out);
        let _ = write!(out, " [{file}] ");
    }

    fn prompt(&mut self, out: &mut Vec<u8>, words: usize, non_ascii: bool) {
        for i in 0..words {
            if i > 0 {
                out.push(b' ');
            }
            if non_ascii && self.rng.chance(0.5) {
                out.extend_from_slice(self.rng.pick(NON_ASCII_WORDS).as_bytes());
            } else {
                out.extend_from_slice(self.rng.pick(WORDS).as_bytes());
            }
        }
    }

    fn request_line(&mut self, out: &mut Vec<u8>, words: usize, non_ascii: bool) {
        self.request += 1;
        let id = self.request;
        self.prefix(out, "INFO", "logger.py:43");
        let _ = write!(
            out,
            "Received request chatcmpl-{id:016x}: prompt: '<|im_start|>user\\n"
        );
        self.prompt(out, words, non_ascii);
        let temp = self.rng.below(10);
        let max = 64 << self.rng.below(6);
        let _ = write!(
            out,
            "<|im_end|>\\n', params: SamplingParams(n=1, presence_penalty=0.0, frequency_penalty=0.0, repetition_penalty=1.0, temperature=0.{temp}, top_p=0.95, top_k=-1, min_p=0.0, seed=None, stop=[], max_tokens={max}, min_tokens=0, logprobs=None, skip_special_tokens=True), prompt_token_ids: None, lora_request: None."
        );
    }

    fn progress_bar(&mut self, out: &mut Vec<u8>) {
        let total = 67;
        let done = self.rng.below(total + 1);
        let pct = done * 100 / total;
        let _ = write!(
            out,
            "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): {pct:3}%|"
        );
        let cells = (done * 10 / total) as usize;
        for _ in 0..cells {
            out.extend_from_slice("█".as_bytes());
        }
        if cells < 10 {
            out.extend_from_slice("▍".as_bytes());
            out.extend(std::iter::repeat_n(b' ', 9 - cells));
        }
        let _ = write!(out, "| {done}/{total} [00:02<00:02, 13.11it/s]");
    }

    fn traceback(&mut self, out: &mut Vec<u8>) {
        let tp = self.rng.below(8);
        let tag = format!("(Worker_TP{tp} pid={}) ", 207_080 + tp);
        out.extend_from_slice(tag.as_bytes());
        out.extend_from_slice(b"ERROR ");
        self.stamp(out);
        out.extend_from_slice(b" [multiproc_executor.py:671] WorkerProc hit an exception.\n");
        let _ = writeln!(out, "{tag}Traceback (most recent call last):");
        let frames = 2 + self.rng.below(3) as usize;
        for _ in 0..frames {
            let (file, func, code) = *self.rng.pick(FRAMES);
            let n = 100 + self.rng.below(900);
            let _ = writeln!(out, "{tag}  File \"{file}\", line {n}, in {func}");
            let _ = writeln!(out, "{tag}    {code}");
        }
        let _ = writeln!(
            out,
            "{tag}ValueError: request chatcmpl-{:016x} was aborted by the client",
            self.request
        );
    }

    /// Appends one line (a traceback appends several).
    fn line(&mut self, out: &mut Vec<u8>) {
        let start = out.len();
        self.line_any(out);
        if self.opts.ascii_twin {
            to_ascii(&mut out[start..]);
        }
    }

    fn line_any(&mut self, out: &mut Vec<u8>) {
        let o = &self.opts;
        let non_ascii = o.non_ascii > 0.0 && self.rng.chance(o.non_ascii);
        if !o.failures.is_empty() && self.rng.chance(o.failure_rate) {
            let i = self.rng.below(self.opts.failures.len() as u64) as usize;
            out.extend_from_slice(self.opts.failures[i].as_bytes());
            out.push(b'\n');
            return;
        }
        if self.rng.chance(self.opts.traceback_rate) {
            self.traceback(out);
            return;
        }
        if self.rng.chance(self.opts.long_line_rate) {
            // About 50 KB: a request whose prompt is a pasted document.
            self.request_line(out, 8_000, non_ascii);
            out.push(b'\n');
            return;
        }
        if non_ascii {
            if self.rng.chance(0.5) {
                self.progress_bar(out);
            } else {
                let words = 8 + self.rng.below(40) as usize;
                self.request_line(out, words, true);
            }
            out.push(b'\n');
            return;
        }
        match self.rng.below(1000) {
            0..=279 => {
                let words = 8 + self.rng.below(40) as usize;
                self.request_line(out, words, false);
            }
            280..=519 => {
                let port = 30_000 + self.rng.below(30_000);
                let _ = write!(
                    out,
                    "(APIServer pid=206812) INFO:     10.0.{}.{}:{port} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
                    self.rng.below(4),
                    self.rng.below(250)
                );
            }
            520..=639 => {
                self.prefix(out, "INFO", "loggers.py:123");
                let (p, g) = (self.rng.below(90_000), self.rng.below(9_000));
                let (r, w) = (self.rng.below(256), self.rng.below(8));
                let (kv, hit) = (self.rng.below(1000), self.rng.below(1000));
                let _ = write!(
                    out,
                    "Engine 000: Avg prompt throughput: {}.{} tokens/s, Avg generation throughput: {}.{} tokens/s, Running: {r} reqs, Waiting: {w} reqs, GPU KV cache usage: {}.{}%, Prefix cache hit rate: {}.{}%",
                    p / 10, p % 10, g / 10, g % 10, kv / 10, kv % 10, hit / 10, hit % 10
                );
            }
            640..=799 => {
                let (file, msg) = *self.rng.pick(WORKER_MESSAGES);
                self.prefix(out, "INFO", file);
                out.extend_from_slice(msg.as_bytes());
            }
            800..=879 => {
                let (file, msg) = *self.rng.pick(API_MESSAGES);
                self.prefix(out, "INFO", file);
                out.extend_from_slice(msg.as_bytes());
            }
            880..=884 => {
                let rank = self.rng.below(8);
                let _ = write!(
                    out,
                    "gpu-node-07:{}:{} [{rank}] NCCL INFO {}",
                    207_080 + rank,
                    208_100 + self.rng.below(40),
                    self.rng.pick(NCCL_MESSAGES)
                );
            }
            885..=989 => {
                let (file, msg) = *self.rng.pick(WARNINGS);
                self.prefix(out, "WARNING", file);
                out.extend_from_slice(msg.as_bytes());
            }
            990..=994 => {
                // A noise signature by design (well under 1% of lines).
                self.prefix(out, "INFO", "cuda.py:456");
                out.extend_from_slice(
                    b"Using backend AttentionBackendEnum.FLASH_ATTN for vit attention",
                );
            }
            _ => {
                self.prefix(out, "INFO", "metrics.py:88");
                let _ = write!(
                    out,
                    "SpecDecoding metrics: Mean acceptance length: 2.{}, Accepted throughput: 51.2 tokens/s, Drafted throughput: 80.1 tokens/s",
                    self.rng.below(100)
                );
            }
        }
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_seed_dependent() {
        let gen = |seed| {
            let mut v = Vec::new();
            LogGen::new(SynthOptions {
                seed,
                ..SynthOptions::default()
            })
            .fill(&mut v, 200_000);
            v
        };
        assert_eq!(gen(3), gen(3));
        assert_ne!(gen(3), gen(4));
    }

    #[test]
    fn the_ascii_twin_differs_only_in_non_ascii_bytes() {
        let opts = SynthOptions {
            non_ascii: 0.2,
            ..SynthOptions::default()
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        LogGen::new(opts.clone()).fill(&mut a, 200_000);
        LogGen::new(SynthOptions {
            ascii_twin: true,
            ..opts
        })
        .fill(&mut b, 200_000);
        assert_eq!(a.len(), b.len());
        assert!(b.is_ascii() && !a.is_ascii());
        assert!(a.iter().zip(&b).all(|(x, y)| x == y || !x.is_ascii()));
    }

    #[test]
    fn non_ascii_share_follows_the_option() {
        let mut v = Vec::new();
        LogGen::new(SynthOptions {
            non_ascii: 0.1,
            ..SynthOptions::default()
        })
        .fill(&mut v, 1 << 20);
        let lines = v.split(|&b| b == b'\n').filter(|l| !l.is_empty());
        let (mut all, mut wide) = (0, 0);
        for l in lines {
            all += 1;
            wide += usize::from(!l.is_ascii());
        }
        let share = wide as f64 / all as f64;
        assert!((0.05..0.15).contains(&share), "{share}");
        let mut plain = Vec::new();
        LogGen::new(SynthOptions::default()).fill(&mut plain, 1 << 20);
        assert!(plain.is_ascii());
    }

    #[test]
    fn failures_and_long_lines_appear() {
        let mut v = Vec::new();
        LogGen::new(SynthOptions {
            failures: vec!["BOOM unique failure".into()],
            failure_rate: 1e-3,
            long_line_rate: 1e-3,
            traceback_rate: 1e-3,
            ..SynthOptions::default()
        })
        .fill(&mut v, 4 << 20);
        let text = String::from_utf8(v).unwrap();
        assert!(text.lines().any(|l| l == "BOOM unique failure"));
        assert!(text.lines().any(|l| l.len() > 40_000));
        assert!(text.contains("Traceback (most recent call last):"));
    }
}
