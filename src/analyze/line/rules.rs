//! The launcher prefixes a line may start with, each read by a small hand-written matcher.
//!
//! Each rule is specified by a regex (kept in the tests as the oracle, `RULE_REGEXES`) and
//! matched here byte by byte: the regexes were a quarter of a scan's instructions on a log
//! dense in hit lines, nearly all of it the regex engines' per-search set-up. A matcher
//! returns what the regex would: where the anchored match ends, and its groups' spans.

/// A prefix rule, tried in this order at the start of what is left of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rule {
    /// `name-1  | ` (docker compose)
    Compose,
    /// `0: ` (srun task prefix), only at the very start
    Task,
    /// `(EngineCore_DP0 pid=12)`, `(VllmWorker rank=3 pid=7)`, `(pid=5, ip=10.0.0.1)`
    Paren,
    /// `[rank3]:`, `[default0]:`
    Rank,
    /// `ERROR 10-31 15:15:48 [core.py:708] ` (vLLM)
    Vllm,
    /// `[2025-04-02 15:02:00,117 E 135782 135782] ` (Ray's C++ core: raylet, GCS, core worker)
    RayCore,
    /// `[2025-01-01 12:00:00 TP0] ` (SGLang)
    Sglang,
    /// `2025-01-01 12:00:00,123 - name - ERROR - ` (Python logging)
    PyLogging,
    /// `2025-01-01T12:00:00.123Z ` (ISO-8601 and friends)
    Iso,
    /// `[07/26/2022-11:14:38] [TRT] [W] ` (TensorRT's Python logger) and
    /// `[07/26/2022-11:14:38] [W] [TRT] ` (its C++ samples' and trtexec's logger)
    TensorRt,
    /// `[W1031 15:15:48.123 ProcessGroupNCCL.cpp:1538] ` (glog / c10)
    Glog,
    /// `ERROR: `, `[ERROR] `, `ERROR `
    Level,
}

/// Every rule, in the order they are tried.
pub(super) const RULES: [Rule; 12] = [
    Rule::Compose,
    Rule::Task,
    Rule::Paren,
    Rule::Rank,
    Rule::Vllm,
    Rule::RayCore,
    Rule::Sglang,
    Rule::PyLogging,
    Rule::Iso,
    Rule::TensorRt,
    Rule::Glog,
    Rule::Level,
];

impl Rule {
    /// Whether a prefix of this rule can start with `first`: a cheap test that rules out most
    /// rules before one is matched.
    const fn may_start_with(self, first: u8) -> bool {
        let level_initial = matches!(first, b'D' | b'I' | b'W' | b'E' | b'C' | b'F');
        match self {
            Rule::Compose => first.is_ascii_alphanumeric(),
            Rule::Task | Rule::PyLogging => first.is_ascii_digit(),
            Rule::Paren => first == b'(',
            Rule::Rank | Rule::Sglang | Rule::RayCore | Rule::TensorRt => first == b'[',
            Rule::Iso => first.is_ascii_digit() || first == b'[',
            Rule::Vllm => level_initial,
            Rule::Glog | Rule::Level => level_initial || first == b'[',
        }
    }
}

/// Per first byte, the rules (bits, in [`RULES`] order) whose prefix may start with it.
static BY_FIRST: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut b = 0;
    while b < 256 {
        let mut r = 0;
        while r < RULES.len() {
            if RULES[r].may_start_with(b as u8) {
                table[b] |= 1 << r;
            }
            r += 1;
        }
        b += 1;
    }
    table
};

/// The rules, in [`RULES`] order, whose prefix may start with `first`.
pub(super) fn rules_for(first: u8) -> impl Iterator<Item = Rule> {
    let mut bits = BY_FIRST[usize::from(first)];
    std::iter::from_fn(move || {
        let r = bits.trailing_zeros() as usize;
        bits &= bits.wrapping_sub(1);
        RULES.get(r).copied()
    })
}

/// The spans of a match's groups, by the regex's group number (0: the whole match).
pub(super) type Groups = [Option<(usize, usize)>; 9];

/// `\s` without Unicode: space, tab, line feed, vertical tab, form feed, carriage return.
fn space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// A position in the text being matched.
struct At<'a> {
    t: &'a [u8],
    i: usize,
}

impl At<'_> {
    fn peek(&self) -> Option<u8> {
        self.t.get(self.i).copied()
    }

    fn byte(&mut self, b: u8) -> Option<()> {
        (self.peek() == Some(b)).then(|| self.i += 1)
    }

    fn bytes(&mut self, s: &[u8]) -> Option<()> {
        self.t[self.i..].starts_with(s).then(|| self.i += s.len())
    }

    /// `\s?`.
    fn maybe_space(&mut self) {
        if self.peek().is_some_and(space) {
            self.i += 1;
        }
    }

    /// One byte of `set`: its span.
    fn one_of(&mut self, set: &[u8]) -> Option<(usize, usize)> {
        let from = self.i;
        self.peek().filter(|b| set.contains(b))?;
        self.i += 1;
        Some((from, self.i))
    }

    /// As many bytes as `f` accepts (greedy); how many.
    fn many(&mut self, f: impl Fn(u8) -> bool) -> usize {
        let from = self.i;
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
        self.i - from
    }

    /// One or more bytes `f` accepts: their span.
    fn some(&mut self, f: impl Fn(u8) -> bool) -> Option<(usize, usize)> {
        let from = self.i;
        (self.many(f) > 0).then_some((from, self.i))
    }

    /// Exactly `n` digits: their span.
    fn digits(&mut self, n: usize) -> Option<(usize, usize)> {
        let from = self.i;
        let d = self.t.get(from..from + n)?;
        d.iter().all(u8::is_ascii_digit).then(|| {
            self.i += n;
            (from, self.i)
        })
    }

    /// `[0-9]+`: the span.
    fn number(&mut self) -> Option<(usize, usize)> {
        self.some(|b| b.is_ascii_digit())
    }

    /// `(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)` followed by a byte `next` accepts:
    /// the word's span. (The regexes try `WARNING` before `WARN`; the words are otherwise
    /// prefix-free, and what follows decides between those two.)
    fn level(&mut self, next: impl Fn(Option<u8>) -> bool) -> Option<(usize, usize)> {
        const WORDS: [&[u8]; 7] = [
            b"DEBUG",
            b"INFO",
            b"WARNING",
            b"WARN",
            b"ERROR",
            b"CRITICAL",
            b"FATAL",
        ];
        let from = self.i;
        WORDS.iter().find_map(|w| {
            let rest = &self.t[from..];
            (rest.starts_with(w) && next(rest.get(w.len()).copied())).then(|| {
                self.i = from + w.len();
                (from, self.i)
            })
        })
    }

    /// `[0-9]{2}-([0-9]{2})-([0-9]{2})` and the rest of a `MM-DD HH:MM:SS` stamp, `sep` between
    /// date and time: the five spans.
    fn month_to_second(&mut self, sep: impl Fn(u8) -> bool) -> Option<[(usize, usize); 5]> {
        let month = self.digits(2)?;
        self.byte(b'-')?;
        let day = self.digits(2)?;
        self.peek().filter(|&b| sep(b))?;
        self.i += 1;
        let [hour, minute, second] = self.clock()?;
        Some([month, day, hour, minute, second])
    }

    /// `([0-9]{2}):([0-9]{2}):([0-9]{2})`: the hour, minute and second spans.
    fn clock(&mut self) -> Option<[(usize, usize); 3]> {
        let hour = self.digits(2)?;
        self.byte(b':')?;
        let minute = self.digits(2)?;
        self.byte(b':')?;
        let second = self.digits(2)?;
        Some([hour, minute, second])
    }

    /// `[0-9]{4}-` and a `MM-DD HH:MM:SS` stamp after it: see [`At::month_to_second`].
    fn dated(&mut self, sep: impl Fn(u8) -> bool) -> Option<[(usize, usize); 5]> {
        self.digits(4)?;
        self.byte(b'-')?;
        self.month_to_second(sep)
    }

    /// `(?:[.,]([0-9]+))?` (or only `.` when `comma` is false): the fraction's span.
    fn fraction(&mut self, comma: bool) -> Option<(usize, usize)> {
        let sep = self.peek()?;
        if !(sep == b'.' || comma && sep == b',') {
            return None;
        }
        let from = self.i;
        self.i += 1;
        let digits = self.number();
        if digits.is_none() {
            self.i = from;
        }
        digits
    }
}

/// Fills groups `first..first + 5` with a stamp's spans.
fn put(groups: &mut Groups, first: usize, spans: [(usize, usize); 5]) {
    for (k, s) in spans.into_iter().enumerate() {
        groups[first + k] = Some(s);
    }
}

/// Matches `rule` at the start of `t` (anchored): the end of the match and its groups, or
/// `None` (an empty match is none).
// Not inlined: inlined into `line::prefixes`, which tries every rule of a line's first
// bytes, it costs more instructions per line (callgrind on a generated serving log).
#[inline(never)]
pub(super) fn match_rule(rule: Rule, t: &[u8]) -> Option<(usize, Groups)> {
    let mut g: Groups = [None; 9];
    let mut at = At { t, i: 0 };
    match rule {
        Rule::Compose | Rule::Task | Rule::Paren | Rule::Rank | Rule::Level => {
            tag(rule, &mut at, &mut g)?
        }
        Rule::Vllm | Rule::RayCore | Rule::Sglang | Rule::PyLogging => {
            server_stamp(rule, &mut at, &mut g)?
        }
        Rule::Iso | Rule::TensorRt | Rule::Glog => dated_stamp(rule, &mut at, &mut g)?,
    }
    let end = at.i;
    if end == 0 {
        return None;
    }
    g[0] = Some((0, end));
    Some((end, g))
}

/// [`match_rule`] for the rules that read a process tag or a bare level: advances `a` past
/// the match and fills `g`.
fn tag(rule: Rule, a: &mut At, g: &mut Groups) -> Option<()> {
    let t = a.t;
    match rule {
        // ([A-Za-z0-9][A-Za-z0-9_.-]*-[0-9]+)\s+\|\s?
        Rule::Compose => {
            a.peek().filter(u8::is_ascii_alphanumeric)?;
            let (_, end) =
                a.some(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))?;
            // The name ends where the run does (a space follows it); it must end `-DIGITS`.
            let digits = t[..end]
                .iter()
                .rev()
                .take_while(|b| b.is_ascii_digit())
                .count();
            let dash = end.checked_sub(digits + 1)?;
            if digits == 0 || dash == 0 || t[dash] != b'-' {
                return None;
            }
            g[1] = Some((0, end));
            a.some(space)?;
            a.byte(b'|')?;
            a.maybe_space();
        }
        // ([0-9]{1,5}):
        Rule::Task => {
            let n = a.number()?;
            if n.1 - n.0 > 5 {
                return None;
            }
            g[1] = Some(n);
            a.bytes(b": ")?;
        }
        // \(((?:[A-Za-z_][A-Za-z0-9_]*[ ,]+)?(?:rank=[0-9]+[ ,]+)?pid=[0-9]+(?:,\s*ip=[^)]*)?
        //   |raylet|gcs_server)\)\s*
        Rule::Paren => {
            a.byte(b'(')?;
            let inner = paren_inner(&t[1..]).map(|n| n + 1).or_else(|| {
                [&b"raylet"[..], b"gcs_server"]
                    .iter()
                    .find(|w| t[1..].starts_with(w))
                    .map(|w| 1 + w.len())
            })?;
            g[1] = Some((1, inner));
            a.i = inner;
            a.byte(b')')?;
            a.many(space);
        }
        // \[((?:rank|default)[0-9]+)\]:\s?
        Rule::Rank => {
            a.byte(b'[')?;
            a.bytes(b"rank").or_else(|| a.bytes(b"default"))?;
            a.number()?;
            g[1] = Some((1, a.i));
            a.bytes(b"]:")?;
            a.maybe_space();
        }
        // \[?(LEVEL)\]?(?::\s*|\s+)
        Rule::Level => {
            let _ = a.byte(b'[');
            let after = |b: Option<u8>| b.is_some_and(|b| b == b']' || b == b':' || space(b));
            let word = a.level(after)?;
            g[1] = Some(word);
            let _ = a.byte(b']');
            if a.byte(b':').is_some() {
                a.many(space);
            } else {
                a.some(space)?;
            }
        }
        _ => return None,
    }
    Some(())
}

/// [`match_rule`] for the serving and logging libraries' stamps (vLLM, Ray's core, SGLang,
/// Python logging): advances `a` past the match and fills `g`.
fn server_stamp(rule: Rule, a: &mut At, g: &mut Groups) -> Option<()> {
    match rule {
        // (LEVEL)\s+([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?\s+
        //   \[([^\]]+)\]\s?
        Rule::Vllm => {
            g[1] = Some(a.level(|b| b.is_some_and(space))?);
            a.many(space);
            put(g, 2, a.month_to_second(|b| b == b' ')?);
            g[7] = a.fraction(false);
            a.some(space)?;
            a.byte(b'[')?;
            g[8] = Some(a.some(|b| b != b']')?);
            a.byte(b']')?;
            a.maybe_space();
        }
        // \[[0-9]{4}-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}),([0-9]+)
        //   ([DIWEF]) [0-9]+ [0-9]+\]\s?
        Rule::RayCore => {
            a.byte(b'[')?;
            put(g, 1, a.dated(|b| b == b' ')?);
            a.byte(b',')?;
            g[6] = Some(a.number()?);
            a.byte(b' ')?;
            g[7] = Some(a.one_of(b"DIWEF")?);
            a.byte(b' ')?;
            a.number()?;
            a.byte(b' ')?;
            a.number()?;
            a.byte(b']')?;
            a.maybe_space();
        }
        // \[[0-9]{4}-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?
        //   ((?: [A-Z]{2,4}[0-9]+)*)\]\s*
        Rule::Sglang => {
            a.byte(b'[')?;
            put(g, 1, a.dated(|b| b == b' ')?);
            g[6] = a.fraction(true);
            let tags = a.i;
            loop {
                let from = a.i;
                let tag = (|| {
                    a.byte(b' ')?;
                    let upper = a.many(|b| b.is_ascii_uppercase());
                    if !(2..=4).contains(&upper) {
                        return None;
                    }
                    a.number()
                })();
                if tag.is_none() {
                    a.i = from;
                    break;
                }
            }
            g[7] = Some((tags, a.i));
            a.byte(b']')?;
            a.many(space);
        }
        // [0-9]{4}-([0-9]{2})-([0-9]{2})[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?
        //   \s+-\s+([A-Za-z0-9_.]+)\s+-\s+(LEVEL)\s+-\s*
        Rule::PyLogging => {
            put(g, 1, a.dated(|b| b == b' ' || b == b'T')?);
            g[6] = a.fraction(true);
            a.some(space)?;
            a.byte(b'-')?;
            a.some(space)?;
            g[7] = Some(a.some(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')?);
            a.some(space)?;
            a.byte(b'-')?;
            a.some(space)?;
            g[8] = Some(a.level(|b| b.is_some_and(space))?);
            a.some(space)?;
            a.byte(b'-')?;
            a.many(space);
        }
        _ => return None,
    }
    Some(())
}

/// [`match_rule`] for the ISO, TensorRT and glog stamps: advances `a` past the match and
/// fills `g`.
fn dated_stamp(rule: Rule, a: &mut At, g: &mut Groups) -> Option<()> {
    match rule {
        // \[?[0-9]{4}-([0-9]{2})-([0-9]{2})[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?
        //   (?:Z|[+-][0-9]{2}:?[0-9]{2})?\]?\s{1,2}
        Rule::Iso => {
            let _ = a.byte(b'[');
            put(g, 1, a.dated(|b| b == b' ' || b == b'T')?);
            g[6] = a.fraction(true);
            if a.byte(b'Z').is_none() {
                let from = a.i;
                let zone = (|| {
                    a.peek().filter(|b| matches!(b, b'+' | b'-'))?;
                    a.i += 1;
                    a.digits(2)?;
                    let _ = a.byte(b':');
                    a.digits(2)
                })();
                if zone.is_none() {
                    a.i = from;
                }
            }
            let _ = a.byte(b']');
            a.peek().filter(|&b| space(b))?;
            a.i += 1;
            a.maybe_space();
        }
        // \[([0-9]{2})/([0-9]{2})/[0-9]{4}-([0-9]{2}):([0-9]{2}):([0-9]{2})\] (?:\[TRT\] )?
        //   \[([VIWEF])\] (?:\[TRT\] )?
        Rule::TensorRt => {
            a.byte(b'[')?;
            g[1] = Some(a.digits(2)?);
            a.byte(b'/')?;
            g[2] = Some(a.digits(2)?);
            a.byte(b'/')?;
            a.digits(4)?;
            a.byte(b'-')?;
            let [hour, minute, second] = a.clock()?;
            (g[3], g[4], g[5]) = (Some(hour), Some(minute), Some(second));
            a.bytes(b"] ")?;
            let _ = a.bytes(b"[TRT] ");
            a.byte(b'[')?;
            g[6] = Some(a.one_of(b"VIWEF")?);
            a.bytes(b"] ")?;
            let _ = a.bytes(b"[TRT] ");
        }
        // \[?([IWEF])(?:[0-9]{4})?([0-9]{2})([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})
        //   (?:\.([0-9]+))?\s+(?:[0-9]+\s+)?([^\]\s]+)\]\s?
        // (glog prints the year before the month unless `--log_year_in_prefix=false`.)
        Rule::Glog => {
            let _ = a.byte(b'[');
            g[1] = Some(a.one_of(b"IWEF")?);
            match a.number()? {
                (s, e) if e - s == 8 => a.i = s + 4,
                (s, e) if e - s == 4 => a.i = s,
                _ => return None,
            }
            g[2] = Some(a.digits(2)?);
            g[3] = Some(a.digits(2)?);
            a.byte(b' ')?;
            let [hour, minute, second] = a.clock()?;
            (g[4], g[5], g[6]) = (Some(hour), Some(minute), Some(second));
            g[7] = a.fraction(false);
            a.some(space)?;
            // A thread id, when digits and spaces come before the source.
            let from = a.i;
            if a.number().is_none() || a.some(space).is_none() {
                a.i = from;
            }
            g[8] = Some(a.some(|b| b != b']' && !space(b))?);
            a.byte(b']')?;
            a.maybe_space();
        }
        _ => return None,
    }
    Some(())
}

/// `(?:[A-Za-z_][A-Za-z0-9_]*[ ,]+)?(?:rank=[0-9]+[ ,]+)?pid=[0-9]+(?:,\s*ip=[^)]*)?` followed
/// by `)`: where that `)` is. (Each optional part is taken when it matches: when it does,
/// skipping it cannot lead to a match, as the next part starts with a letter it consumed.)
fn paren_inner(t: &[u8]) -> Option<usize> {
    let mut a = At { t, i: 0 };
    let optional = |a: &mut At, part: &dyn Fn(&mut At) -> Option<()>| {
        let from = a.i;
        if part(a).is_none() {
            a.i = from;
        }
    };
    optional(&mut a, &|a| {
        a.peek().filter(|b| b.is_ascii_alphabetic() || *b == b'_')?;
        a.many(|b| b.is_ascii_alphanumeric() || b == b'_');
        a.some(|b| b == b' ' || b == b',').map(|_| ())
    });
    optional(&mut a, &|a| {
        a.bytes(b"rank=")?;
        a.number()?;
        a.some(|b| b == b' ' || b == b',').map(|_| ())
    });
    a.bytes(b"pid=")?;
    a.number()?;
    optional(&mut a, &|a| {
        a.byte(b',')?;
        a.many(space);
        a.bytes(b"ip=")?;
        a.many(|b| b != b')');
        a.peek().filter(|&b| b == b')').map(|_| ())
    });
    (a.peek() == Some(b')')).then_some(a.i)
}
