//! The regex scan over snapshot content, with ripgrep's own matcher and
//! searcher crates configured as `rg` configures them, so the matches are
//! ripgrep's: smart case by default, `-w`, `-F`, `-U --multiline-dotall`,
//! `-g` globs with `!` negation, context lines and `--max-count`.

pub mod cache;
pub mod plan;
mod scan;
mod sink;
#[cfg(test)]
mod tests;

pub use cache::GrepAll;
pub use scan::{count, scan, scan_up_to, scan_up_to_soft, Counts, Page};

use std::time::Duration;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::overrides::{Override, OverrideBuilder};
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{codes, ToolError};
use crate::snapshot::{FileEntry, Snapshot};

/// How long one grep, search or regex ranking may scan.
pub const SCAN_BUDGET: Duration = Duration::from_secs(10);

/// Most matches one page may hold.
pub const MAX_LIMIT: usize = 1000;
/// Lines longer than this are clipped around the first submatch.
pub const MAX_LINE_BYTES: usize = 400;
/// Compiled-regex size limits: no pattern can blow memory.
const REGEX_SIZE_LIMIT: usize = 10 << 20;
const DFA_SIZE_LIMIT: usize = 10 << 20;

/// A grep request (the `grep` tool's parameters after validation).
#[derive(Clone, Debug, Default)]
pub struct GrepRequest {
    pub pattern: String,
    pub fixed_string: bool,
    /// None = smart case (as rg: case-insensitive unless the pattern has an uppercase letter).
    pub case_sensitive: Option<bool>,
    pub whole_word: bool,
    /// `rg -U --multiline-dotall`.
    pub multiline: bool,
    /// rg `-g` globs; `!` negates.
    pub globs: Vec<String>,
    /// Sub-directory or file, repo-relative.
    pub path: Option<String>,
    pub lang: Option<String>,
    pub before: usize,
    pub after: usize,
    /// Per file, as `rg --max-count`.
    pub max_count: Option<u64>,
    pub limit: usize,
    /// Wall-clock budget for the scan.
    pub budget: Duration,
    /// Per-file limit (None = PER_FILE_LIMIT).
    pub per_file_limit: Option<Duration>,
}

impl GrepRequest {
    /// A canonical rendering of everything that selects results (for cursors and caches).
    pub fn normalized(&self) -> String {
        format!(
            "p={:?} F={} c={:?} w={} U={} g={:?} path={:?} lang={:?} B={} A={} m={:?}",
            self.pattern,
            self.fixed_string,
            self.case_sensitive,
            self.whole_word,
            self.multiline,
            self.globs,
            self.path,
            self.lang,
            self.before,
            self.after,
            self.max_count
        )
    }
}

/// One submatch of a [`GrepMatch`]. The structs below are also the grep
/// tool's output (their docs are its schema's field descriptions).
#[derive(Clone, Debug, Serialize, JsonSchema, PartialEq)]
pub struct Submatch {
    /// Byte offset of the submatch in `text` (of the whole match, for multiline).
    pub start: usize,
    /// Byte offset just past the submatch in `text`.
    pub end: usize,
    /// 1-based line where the submatch starts.
    pub line: u64,
    /// 1-based byte column in that line.
    pub column: u64,
}

#[derive(Clone, Debug, Serialize, JsonSchema, PartialEq)]
pub struct ContextLine {
    pub line: u64,
    pub text: String,
}

#[derive(Clone, Debug, Serialize, JsonSchema, PartialEq)]
pub struct GrepMatch {
    pub repo: String,
    /// Repo-relative.
    pub path: String,
    /// 1-based line of the match's first byte.
    pub line: u64,
    /// 1-based last line of the match (> line for multiline matches).
    pub end_line: u64,
    /// The matched line(s).
    pub text: String,
    /// `text` was clipped around the match to fit the budget.
    pub clipped: bool,
    pub submatches: Vec<Submatch>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<ContextLine>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<ContextLine>,
}

/// Longest time one file may take; a file past it keeps the matches found so
/// far and the page is flagged partial.
pub const PER_FILE_LIMIT: Duration = Duration::from_secs(1);

/// A compiled request.
pub struct Compiled {
    matcher: RegexMatcher,
    searcher: SearcherBuilder,
    globs: Option<Globs>,
    req: GrepRequest,
    /// Files whose scan hit PER_FILE_LIMIT.
    pub cut_files: std::sync::atomic::AtomicU64,
}

/// Matchers built recently, keyed by pattern and flags (a few: a full DFA may take a megabyte).
static MATCHERS: crate::recent::Recent<RegexMatcher> = crate::recent::Recent::new(4);

fn build_matcher(b: &RegexMatcherBuilder, req: &GrepRequest) -> Result<RegexMatcher, ToolError> {
    b.build(&req.pattern).map_err(|e| {
        let msg = unwrap_pattern(&e.to_string(), &req.pattern);
        if msg.contains("exceeds size limit") {
            // Worded as ripgrep words it; our limit is rg's --regex-size-limit 10M
            // (rg's default is 100M), so one request cannot take that much memory.
            return ToolError::new(
                codes::INVALID_PATTERN,
                format!("Compiled regex exceeds size limit of {REGEX_SIZE_LIMIT} bytes."),
                "simplify the pattern: large counted repetitions (a{1000}) and Unicode classes repeated many times multiply its size (the server's limit is `rg --regex-size-limit 10M`)",
            );
        }
        let hint = if msg.contains("literal \"\\n\"") || msg.contains("'\\n'") {
            "the pattern can match a newline: pass multiline: true to search across lines"
        } else if msg.contains("look-around") || msg.contains("backreferences") {
            "Rust regex (as rg without -P) has no look-around or backreferences: match the context instead (`func Listen` for `(?<=func )Listen`), then narrow by reading the lines"
        } else if req.fixed_string {
            "check the literal"
        } else {
            "fix the regex (Rust regex syntax, as ripgrep), or pass fixed_string: true to search for the text literally"
        };
        ToolError::new(codes::INVALID_PATTERN, format!("invalid pattern: {msg}"), hint)
    })
}

/// A parse error shows the pattern as the matcher wrapped it, `(?:PAT)`;
/// show it as written, as rg does, with the carets moved to match.
fn unwrap_pattern(msg: &str, pattern: &str) -> String {
    let wrapped = format!("(?:{pattern})");
    if pattern.contains('\n') || !msg.contains(&wrapped) {
        return msg.to_string();
    }
    let mut out = Vec::new();
    let mut lines = msg.lines();
    while let Some(l) = lines.next() {
        if l.trim_start() == wrapped {
            let indent = l.len() - l.trim_start().len();
            out.push(format!("{}{pattern}", &l[..indent]));
            if let Some(c) = lines.next() {
                let shift = if c.len() >= indent + 3 && c[indent..indent + 3].trim().is_empty() {
                    format!("{}{}", &c[..indent], &c[indent + 3..])
                } else {
                    c.to_string()
                };
                out.push(shift);
            }
        } else {
            out.push(l.to_string());
        }
    }
    out.join("\n")
}

/// Files at least this large in total get full DFAs (as ripgrep always
/// builds them); smaller scans use the lazy DFA, whose build is ≈ 15× cheaper
/// (0.3 ms against 4.6 ms for `def \w+`) at the same search speed on most
/// patterns (measured on django's Python: equal but for `^\s+def (a|b)\(`,
/// 1.75× slower lazily, ≈ 0.9 ms per MB). The bytes are those of the n-gram
/// candidates, of which a first page usually reads a few.
const FULL_DFA_MIN_BYTES: u64 = 64 << 20;

/// Build the matcher exactly as ripgrep does for the same flags.
pub fn compile(req: &GrepRequest) -> Result<Compiled, ToolError> {
    compile_with(req, true)
}

/// The files `req` selects among `snaps`, and the matcher sized to them.
#[allow(clippy::type_complexity)]
pub fn compile_scoped<'a>(
    req: &GrepRequest,
    snaps: &[&'a Snapshot],
) -> Result<(Compiled, Vec<(&'a str, &'a FileEntry)>), ToolError> {
    check_request(req)?;
    let globs = build_globs(req)?;
    let ids: Vec<&str> = snaps.iter().map(|s| s.id()).collect();
    let key = format!(
        "{ids:?} g={:?} p={:?} l={:?}",
        req.globs, req.path, req.lang
    );
    let sel = match narrowed(req, snaps, &globs, &key) {
        Some(sel) => sel,
        None => match SELECTIONS.get(&key) {
            Some(sel) => sel,
            None => {
                let mut files = Vec::new();
                let mut bytes = 0u64;
                for (si, s) in snaps.iter().enumerate() {
                    let range = path_range(s, req.path.as_deref());
                    for (fi, f) in s.files[range.clone()].iter().enumerate() {
                        if s.visible((range.start + fi) as u32) && selects(req, &globs, f) {
                            files.push((si as u32, (range.start + fi) as u32));
                            bytes += f.content_len() as u64;
                        }
                    }
                }
                let sel = std::sync::Arc::new(Selection { files, bytes });
                SELECTIONS.put(key.clone(), sel.clone());
                sel
            }
        },
    };
    let files: Vec<(&str, &FileEntry)> = sel
        .files
        .iter()
        .map(|&(si, fi)| {
            let s = snaps[si as usize];
            (s.repo(), &s.files[fi as usize])
        })
        .collect();
    Ok((compile_with(req, sel.bytes >= FULL_DFA_MIN_BYTES)?, files))
}

/// Whether grep narrows its files with the snapshots' n-gram indexes: on,
/// unless `CODE_INDEX_NGRAM=off` (benchmarks and the parity tests compare both).
pub fn ngram_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("CODE_INDEX_NGRAM").map_or(true, |v| v != "off"))
}

/// The files of `path` (a directory or file) are a contiguous range of the
/// path-sorted files: the range holding them (and perhaps a few neighbours
/// such as `path-x`, which the exact filter drops).
fn path_range(s: &Snapshot, path: Option<&str>) -> std::ops::Range<usize> {
    let Some(p) = path.map(|p| p.trim_matches('/')).filter(|p| !p.is_empty()) else {
        return 0..s.files.len();
    };
    // '0' follows '/': every "p/..." sorts below "p0".
    let end = format!("{p}0");
    let lo = s.files.partition_point(|f| f.path.as_str() < p);
    let hi = s.files.partition_point(|f| f.path.as_str() < end.as_str());
    lo..hi.max(lo)
}

/// The selected files that can hold a match, when the pattern's n-gram plan
/// narrows them: the plan's candidates first, then the path, language and
/// glob filters on those only (`None`: no index, or a plan that cannot
/// narrow; the caller selects from every file).
fn narrowed(
    req: &GrepRequest,
    snaps: &[&Snapshot],
    globs: &Option<Globs>,
    sel_key: &str,
) -> Option<std::sync::Arc<Selection>> {
    if !ngram_enabled() || snaps.iter().all(|s| s.grams.is_none()) {
        return None;
    }
    let key = format!(
        "{sel_key} P={:?} F={} c={:?}",
        req.pattern, req.fixed_string, req.case_sensitive
    );
    if let Some(n) = SELECTIONS.get(&key) {
        return Some(n);
    }
    let q = plan::plan(req);
    if q.is_all() {
        return None;
    }
    let mut files = Vec::new();
    let mut bytes = 0u64;
    for (si, s) in snaps.iter().enumerate() {
        let range = path_range(s, req.path.as_deref());
        let bits = s.grams.as_ref().and_then(|g| plan::eval(&q, g));
        let mut take = |fi: usize| {
            let f = &s.files[fi];
            if s.visible(fi as u32) && selects(req, globs, f) {
                files.push((si as u32, fi as u32));
                bytes += f.content_len() as u64;
            }
        };
        match bits {
            Some(b) => {
                for (w, &word) in b.iter().enumerate() {
                    let mut word = word;
                    while word != 0 {
                        let fi = w * 64 + word.trailing_zeros() as usize;
                        word &= word - 1;
                        if range.contains(&fi) {
                            take(fi);
                        }
                    }
                }
            }
            None => range.for_each(&mut take),
        }
    }
    let n = std::sync::Arc::new(Selection { files, bytes });
    SELECTIONS.put(key, n.clone());
    Some(n)
}

/// The files a request's globs, path and language select (snapshot position
/// among the selected ones, file index), and their total size.
struct Selection {
    files: Vec<(u32, u32)>,
    bytes: u64,
}

/// Selections of recent requests, by snapshot ids and filters: matching
/// globs against every path and its directories costs ≈ 0.5 µs a file, 40 ms
/// on the Linux kernel's 78k files, for every page of a query.
static SELECTIONS: crate::recent::Recent<std::sync::Arc<Selection>> = crate::recent::Recent::new(8);

/// A request's `-g` globs: rg's override matcher, and, when every glob is a
/// plain `*.ext` (the common case), those suffixes: a file is then selected
/// exactly when its path ends with one, checked without the matcher
/// (≈ 100× cheaper per path).
struct Globs {
    ov: Override,
    exts: Option<Vec<String>>,
}

/// The suffixes (".ext") when every glob is `*.ext` with a plain extension.
pub(crate) fn ext_globs(globs: &[String]) -> Option<Vec<String>> {
    globs
        .iter()
        .map(|g| {
            let ext = g.strip_prefix("*.")?;
            (!ext.is_empty()
                && ext
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'+'))
            .then(|| format!(".{ext}"))
        })
        .collect()
}

fn build_globs(req: &GrepRequest) -> Result<Option<Globs>, ToolError> {
    if req.globs.is_empty() {
        return Ok(None);
    }
    let mut ob = OverrideBuilder::new("");
    for g in &req.globs {
        ob.add(g).map_err(|e| {
            ToolError::invalid_argument(
                format!("invalid glob {g:?}: {e}"),
                "use rg glob syntax, e.g. \"*.py\", \"src/**\", \"!*_test.go\"",
            )
        })?;
    }
    let ov = ob.build().map_err(|e| {
        ToolError::invalid_argument(format!("invalid globs: {e}"), "use rg glob syntax")
    })?;
    Ok(Some(Globs {
        ov,
        exts: ext_globs(&req.globs),
    }))
}

/// The empty-pattern and limit checks, first of all.
fn check_request(req: &GrepRequest) -> Result<(), ToolError> {
    if req.pattern.is_empty() {
        return Err(ToolError::invalid_argument(
            "empty pattern",
            "pass a regex (e.g. \"def \\w+\\(\") or a literal with fixed_string: true",
        ));
    }
    if req.limit == 0 || req.limit > MAX_LIMIT {
        return Err(ToolError::invalid_argument(
            format!("limit {} is out of range", req.limit),
            format!(
                "use 1..={MAX_LIMIT} and page with next_cursor, or count_only: true for totals"
            ),
        ));
    }
    Ok(())
}

fn compile_with(req: &GrepRequest, full_dfa: bool) -> Result<Compiled, ToolError> {
    check_request(req)?;
    let mut b = RegexMatcherBuilder::new();
    b.multi_line(true)
        .unicode(true)
        .octal(false)
        .fixed_strings(req.fixed_string)
        .word(req.whole_word)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .full_dfa(full_dfa);
    match req.case_sensitive {
        None => b.case_smart(true),
        Some(true) => b.case_insensitive(false),
        Some(false) => b.case_insensitive(true),
    };
    if req.multiline {
        b.dot_matches_new_line(true);
    } else {
        b.line_terminator(Some(b'\n')).dot_matches_new_line(false);
    }
    // Recently built matchers are reused: paging through a result and
    // repeating a query skip the regex build, which for a Unicode class
    // like `\w` (full DFAs, as ripgrep builds them) costs milliseconds.
    let key = format!(
        "{}{:?}{}{}{}\0{}",
        req.fixed_string, req.case_sensitive, req.whole_word, req.multiline, full_dfa, req.pattern
    );
    let matcher = match MATCHERS.get(&key) {
        Some(m) => m,
        None => {
            let m = build_matcher(&b, req)?;
            MATCHERS.put(key, m.clone());
            m
        }
    };
    let mut s = SearcherBuilder::new();
    s.line_number(true)
        .multi_line(req.multiline)
        .before_context(req.before)
        .after_context(req.after)
        .binary_detection(BinaryDetection::none())
        .max_matches(req.max_count);
    let globs = build_globs(req)?;
    Ok(Compiled {
        matcher,
        searcher: s,
        globs,
        req: req.clone(),
        cut_files: std::sync::atomic::AtomicU64::new(0),
    })
}

/// Does the file pass the path, lang and glob filters of `req`?
fn selects(req: &GrepRequest, globs: &Option<Globs>, f: &FileEntry) -> bool {
    if let Some(l) = &req.lang {
        if &f.language != l {
            return false;
        }
    }
    if let Some(p) = &req.path {
        let p = p.trim_matches('/');
        if !p.is_empty()
            && f.path != p
            && !(f.path.starts_with(p) && f.path.as_bytes().get(p.len()) == Some(&b'/'))
        {
            return false;
        }
    }
    if let Some(Globs {
        exts: Some(exts), ..
    }) = globs
    {
        return exts.iter().any(|e| f.path.ends_with(e.as_str()));
    }
    if let Some(Globs { ov, .. }) = globs {
        // As rg: an ignored ancestor directory excludes; a file must be whitelisted
        // when any whitelist glob exists.
        let mut idx = 0;
        while let Some(i) = f.path[idx..].find('/') {
            let dir = &f.path[..idx + i];
            if ov.matched(dir, true).is_ignore() {
                return false;
            }
            idx += i + 1;
        }
        let m = ov.matched(&f.path, false);
        if m.is_ignore() {
            return false;
        }
        if m.is_none() && ov.num_whitelists() > 0 {
            return false;
        }
    }
    true
}

impl Compiled {
    /// The request this was compiled from.
    pub fn request(&self) -> &GrepRequest {
        &self.req
    }

    /// Does the file pass the path, lang and glob filters?
    pub fn selects(&self, f: &FileEntry) -> bool {
        selects(&self.req, &self.globs, f)
    }
}
