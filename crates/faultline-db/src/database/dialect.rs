//! faultline's regex dialect, configured in one place: regex-automata syntax with Unicode
//! classes off (`\w`, `\d`, `\s`, `\b` are ASCII), any byte (no UTF-8 requirement), no
//! empty-match UTF-8 rules, and the size limits every compiled pattern is held to.

use regex_automata::{meta, util::syntax};
use regex_syntax::hir::Hir;

/// The syntax every pattern is parsed with: Unicode classes off, any byte.
pub(crate) fn syntax_config() -> syntax::Config {
    syntax::Config::new().unicode(false).utf8(false)
}

/// Parses a pattern in faultline's dialect: Unicode classes off, any byte allowed.
#[allow(clippy::result_large_err)]
pub(crate) fn parse(pattern: &str) -> Result<Hir, regex_syntax::Error> {
    regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(pattern)
}

/// Builds a regex in faultline's dialect: Unicode off, any byte, no empty-match UTF-8 rules.
#[allow(clippy::result_large_err)]
pub(crate) fn build_regex(pattern: &str) -> Result<meta::Regex, meta::BuildError> {
    meta::Builder::new()
        .syntax(syntax_config())
        .configure(
            meta::Config::new()
                .utf8_empty(false)
                .nfa_size_limit(Some(4 << 20))
                .hybrid_cache_capacity(1 << 20),
        )
        .build(pattern)
}

/// The confirmation budget: most states a pattern's NFA may have for its regex to confirm
/// candidate lines. Confirmation runs a lazy DFA whose states are sets of NFA states; a
/// pattern that needs more DFA states than its cache holds (counted repetitions multiply
/// them: `(?:a{99}){999}` has 98,906 NFA states) falls back to simulating the NFA, whose cost
/// per byte grows with its states (about 2.6 KB/s there), on every candidate line. The
/// largest pattern of the embedded set has 245 states; a plain 4,096-byte pattern, the
/// longest allowed, about 4,100.
pub const MAX_CONFIRM_STATES: usize = 8192;

/// The number of NFA states of `pattern` when it is over [`MAX_CONFIRM_STATES`] (`None`
/// within the budget, or when it does not build: the regex's own build reports that). Only a
/// counted repetition (`{n}`, `{n,m}`) can take a pattern of at most 4,096 bytes over the
/// budget, so a source without one is not compiled here.
pub(crate) fn over_confirm_budget(pattern: &str) -> Option<usize> {
    let counted = pattern
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b'{' && w[1].is_ascii_digit());
    if !counted {
        return None;
    }
    let nfa = regex_automata::nfa::thompson::Compiler::new()
        .syntax(syntax_config())
        .configure(
            regex_automata::nfa::thompson::Config::new()
                .nfa_size_limit(Some(4 << 20))
                .shrink(false),
        )
        .build(pattern)
        .ok()?;
    let states = nfa.states().len();
    (states > MAX_CONFIRM_STATES).then_some(states)
}

/// Most strings [`literal_language`] enumerates before it gives up.
const MAX_LANGUAGE: usize = 64;

/// Every string `pattern` matches, when its syntax is only plain text (ASCII, metacharacters escaped),
/// `|` and `(?:…)` groups of the same (`(?:exbzbco|vielmoez) jcfpbm`), and the strings are
/// at most 64: a line holding one of them matches, with no regex to run. A cheap scan of the
/// source, no parse, so that loading an archive can decide it per pattern.
pub fn literal_language(pattern: &str) -> Option<Vec<Vec<u8>>> {
    let bytes = pattern.as_bytes();
    let mut at = 0;
    let mut set = alternation(bytes, &mut at)?;
    if at != bytes.len() {
        return None;
    }
    set.sort_unstable();
    set.dedup();
    Some(set)
}

/// `seq ('|' seq)*` from `b[*at..]`, up to an unmatched `)` or the end.
fn alternation(b: &[u8], at: &mut usize) -> Option<Vec<Vec<u8>>> {
    let mut out = sequence(b, at)?;
    while b.get(*at) == Some(&b'|') {
        *at += 1;
        out.extend(sequence(b, at)?);
        if out.len() > MAX_LANGUAGE {
            return None;
        }
    }
    Some(out)
}

/// A run of literal bytes, escaped metacharacters and `(?:…)` groups: the product of their
/// languages (a byte is appended to every string in place; only a group multiplies them).
fn sequence(b: &[u8], at: &mut usize) -> Option<Vec<Vec<u8>>> {
    let mut out: Vec<Vec<u8>> = vec![Vec::new()];
    while let Some(&c) = b.get(*at) {
        let byte = match c {
            b'|' | b')' => break,
            b'\\' => {
                let e = *b.get(*at + 1)?;
                if !regex_syntax::is_meta_character(char::from(e)) {
                    return None;
                }
                *at += 2;
                Some(e)
            }
            b'(' => {
                if b.get(*at + 1..*at + 3) != Some(b"?:".as_slice()) {
                    return None;
                }
                *at += 3;
                let inner = alternation(b, at)?;
                if b.get(*at) != Some(&b')') {
                    return None;
                }
                *at += 1;
                if out.len() * inner.len() > MAX_LANGUAGE {
                    return None;
                }
                out = out
                    .iter()
                    .flat_map(|o| {
                        inner.iter().map(move |p| {
                            let mut s = o.clone();
                            s.extend_from_slice(p);
                            s
                        })
                    })
                    .collect();
                None
            }
            b'.' | b'^' | b'$' | b'*' | b'+' | b'?' | b'[' | b']' | b'{' | b'}' => return None,
            0x20..=0x7e => {
                *at += 1;
                Some(c)
            }
            _ => return None,
        };
        // A quantifier after the part would apply to it: not a finite plain language here.
        if matches!(b.get(*at), Some(b'*' | b'+' | b'?' | b'{')) {
            return None;
        }
        if let Some(byte) = byte {
            for o in &mut out {
                o.push(byte);
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn literal_languages_of_plain_text_and_groups() {
        let lang = |p: &str| {
            literal_language(p).map(|s| {
                s.into_iter()
                    .map(|m| String::from_utf8(m).unwrap())
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(lang(r"cuda\.py:"), Some(vec!["cuda.py:".to_string()]));
        assert_eq!(
            lang("(?:exbzbco|vielmoez) jcfpbm"),
            Some(vec!["exbzbco jcfpbm".into(), "vielmoez jcfpbm".into()])
        );
        assert_eq!(
            lang("a(?:b|c(?:d|e))f|g"),
            Some(vec!["abf".into(), "acdf".into(), "acef".into(), "g".into()])
        );
        assert_eq!(lang("a(?:b|)c"), Some(vec!["abc".into(), "ac".into()]));
        for not in [
            "(a|b)",
            "(?i:ab)",
            "(?:ab)?",
            "a(?:b|c)+",
            "ab?",
            "a.b",
            "[ab]",
            r"\d",
            "(?:ab",
            "ab)",
            "^ab",
            r"\bab",
            "x{2}",
        ] {
            assert_eq!(lang(not), None, "{not}");
        }
    }

    proptest! {
        /// On patterns of literal bytes, groups and alternations, a line matches the regex
        /// exactly when it holds a string of the language.
        #[test]
        fn the_language_is_what_the_regex_matches(
            pattern in r"([ab ]|\(\?:|\||\))*",
            line in "[ab ]{0,12}",
        ) {
            if let Some(lang) = literal_language(&pattern) {
                let re = build_regex(&pattern).expect("a literal language is a valid regex");
                let holds = lang.iter().any(|m| {
                    m.is_empty() || line.as_bytes().windows(m.len()).any(|w| w == m.as_slice())
                });
                prop_assert_eq!(re.is_match(line.as_bytes()), holds, "{:?}: {:?}", pattern, lang);
            }
        }
    }
}
