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

/// The one string `pattern` matches when it is a plain literal: ASCII with no
/// metacharacters but escaped ones (`cuda\.py:`). A line holding that string matches it.
pub(crate) fn plain_literal(pattern: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(pattern.len());
    let mut bytes = pattern.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'\\' => {
                let e = bytes.next()?;
                if !regex_syntax::is_meta_character(char::from(e)) {
                    return None;
                }
                out.push(e);
            }
            b'.' | b'^' | b'$' | b'*' | b'+' | b'?' | b'(' | b')' | b'[' | b']' | b'{' | b'}'
            | b'|' => return None,
            0x20..=0x7e => out.push(b),
            _ => return None,
        }
    }
    (!out.is_empty()).then_some(out)
}
