//! The regex scan over snapshot content, with ripgrep's own matcher and
//! searcher crates configured as `rg` configures them, so the matches are
//! ripgrep's: smart case by default, `-w`, `-F`, `-U --multiline-dotall`,
//! `-g` globs with `!` negation, context lines and `--max-count`.

use std::time::{Duration, Instant};

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::overrides::{Override, OverrideBuilder};
use rayon::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{codes, ToolError};
use crate::snapshot::{FileEntry, Snapshot};

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
    globs: Option<Override>,
    req: GrepRequest,
    /// Files whose scan hit PER_FILE_LIMIT.
    pub cut_files: std::sync::atomic::AtomicU64,
}

/// Matchers built recently, keyed by pattern and flags (a few: a full DFA may take a megabyte).
static MATCHERS: crate::recent::Recent<RegexMatcher> = crate::recent::Recent::new(4);

fn build_matcher(b: &RegexMatcherBuilder, req: &GrepRequest) -> Result<RegexMatcher, ToolError> {
    b.build(&req.pattern).map_err(|e| {
        let msg = e.to_string();
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
        } else if req.fixed_string {
            "check the literal"
        } else {
            "fix the regex (Rust regex syntax, as ripgrep), or pass fixed_string: true to search for the text literally"
        };
        ToolError::new(codes::INVALID_PATTERN, format!("invalid pattern: {msg}"), hint)
    })
}

/// Files at least this large in total get full DFAs (as ripgrep always
/// builds them); smaller scans use the lazy DFA, whose build is ≈ 15× cheaper
/// (0.3 ms against 4.6 ms for `def \w+`) at the same search speed on most
/// patterns (measured on django's Python: equal but for `^\s+def (a|b)\(`,
/// 1.75× slower lazily, ≈ 0.9 ms per MB).
const FULL_DFA_MIN_BYTES: u64 = 8 << 20;

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
    let sel = match SELECTIONS.get(&key) {
        Some(sel) => sel,
        None => {
            let mut files = Vec::new();
            let mut bytes = 0u64;
            for (si, s) in snaps.iter().enumerate() {
                for (fi, f) in s.files.iter().enumerate() {
                    if selects(req, &globs, f) {
                        files.push((si as u32, fi as u32));
                        bytes += f.content_len() as u64;
                    }
                }
            }
            let sel = std::sync::Arc::new(Selection { files, bytes });
            SELECTIONS.put(key, sel.clone());
            sel
        }
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

fn build_globs(req: &GrepRequest) -> Result<Option<Override>, ToolError> {
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
    Ok(Some(ob.build().map_err(|e| {
        ToolError::invalid_argument(format!("invalid globs: {e}"), "use rg glob syntax")
    })?))
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
fn selects(req: &GrepRequest, globs: &Option<Override>, f: &FileEntry) -> bool {
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
    if let Some(ov) = globs {
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
    /// Does the file pass the path, lang and glob filters?
    pub fn selects(&self, f: &FileEntry) -> bool {
        selects(&self.req, &self.globs, f)
    }

    /// All matches in one file (respecting max_count).
    pub fn search_file(&self, repo: &str, f: &FileEntry) -> Vec<GrepMatch> {
        let mut sink = Collect {
            matcher: &self.matcher,
            repo,
            path: &f.path,
            out: Vec::new(),
            pending_before: Vec::new(),
            deadline: Instant::now() + self.req.per_file_limit.unwrap_or(PER_FILE_LIMIT),
            cut: false,
        };
        let mut searcher: Searcher = self.searcher.build();
        // Errors cannot happen on in-memory slices with this sink.
        let _ = f.with_bytes(|b| searcher.search_slice(&self.matcher, b, &mut sink));
        if sink.cut {
            self.cut_files
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        sink.out
    }
}

struct Collect<'a> {
    matcher: &'a RegexMatcher,
    repo: &'a str,
    path: &'a str,
    out: Vec<GrepMatch>,
    pending_before: Vec<ContextLine>,
    deadline: Instant,
    cut: bool,
}

fn strip_eol(b: &[u8]) -> &[u8] {
    let b = b.strip_suffix(b"\n").unwrap_or(b);
    b.strip_suffix(b"\r").unwrap_or(b)
}

fn clip_context(b: &[u8]) -> String {
    let b = strip_eol(b);
    if b.len() <= MAX_LINE_BYTES {
        return String::from_utf8_lossy(b).into_owned();
    }
    let mut end = MAX_LINE_BYTES;
    while end < b.len() && (b[end] & 0xC0) == 0x80 {
        end += 1;
    }
    format!("{}…", String::from_utf8_lossy(&b[..end]))
}

impl Sink for &mut Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if self.out.len() % 64 == 63 && Instant::now() > self.deadline {
            self.cut = true;
            return Ok(false);
        }
        let first_line = m.line_number().unwrap_or(0);
        let full = m.bytes();
        let bytes = strip_eol(full);
        // Submatches are found in the match's lines including the line end
        // (a pattern may end with `\n`), then clamped to the shown text.
        let mut subs: Vec<(usize, usize)> = Vec::new();
        let _ = self.matcher.find_iter(full, |mm| {
            if (mm.start() < mm.end() || subs.is_empty()) && mm.start() <= bytes.len() {
                subs.push((mm.start(), mm.end().min(bytes.len())));
            }
            true
        });
        let line_starts: Vec<usize> = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1))
            .collect();
        let end_line = first_line + (line_starts.len() as u64 - 1);
        let pos = |off: usize| -> (u64, u64) {
            let i = match line_starts.binary_search(&off) {
                Ok(i) => i,
                Err(i) => i - 1,
            };
            (first_line + i as u64, (off - line_starts[i]) as u64 + 1)
        };
        // Clip long text around the first submatch.
        let (mut lo, mut hi) = (0usize, bytes.len());
        let mut clipped = false;
        if bytes.len() > MAX_LINE_BYTES {
            let anchor = subs.first().map(|s| s.0).unwrap_or(0);
            lo = anchor.saturating_sub(MAX_LINE_BYTES / 3);
            hi = (lo + MAX_LINE_BYTES).min(bytes.len());
            while lo > 0 && (bytes[lo] & 0xC0) == 0x80 {
                lo -= 1;
            }
            while hi < bytes.len() && (bytes[hi] & 0xC0) == 0x80 {
                hi += 1;
            }
            clipped = true;
        }
        let submatches = subs
            .iter()
            .filter(|(s, e)| *s >= lo && *e <= hi)
            .map(|&(s, e)| {
                let (line, column) = pos(s);
                Submatch {
                    start: s - lo,
                    end: e - lo,
                    line,
                    column,
                }
            })
            .collect();
        self.out.push(GrepMatch {
            repo: self.repo.to_string(),
            path: self.path.to_string(),
            line: first_line,
            end_line,
            text: String::from_utf8_lossy(&bytes[lo..hi]).into_owned(),
            clipped,
            submatches,
            before: std::mem::take(&mut self.pending_before),
            after: Vec::new(),
        });
        Ok(true)
    }

    fn context(&mut self, _s: &Searcher, c: &SinkContext<'_>) -> Result<bool, Self::Error> {
        let line = ContextLine {
            line: c.line_number().unwrap_or(0),
            text: clip_context(c.bytes()),
        };
        match c.kind() {
            SinkContextKind::Before => self.pending_before.push(line),
            SinkContextKind::After => {
                if let Some(last) = self.out.last_mut() {
                    last.after.push(line);
                }
            }
            SinkContextKind::Other => {}
        }
        Ok(true)
    }
}

/// One page of results.
#[derive(Debug)]
pub struct Page {
    pub matches: Vec<GrepMatch>,
    /// Position of each match: (global file index, match index in that file).
    pub positions: Vec<(u64, u64)>,
    /// (global file index, match index in that file) to resume from.
    pub next: Option<(u64, u64)>,
    /// The time budget ran out before the scan finished.
    pub partial: bool,
    pub files_scanned: u64,
}

/// Scan from `start` = (file index, match index) until the request's `limit` matches or the budget is spent.
pub fn scan(files: &[(&str, &FileEntry)], c: &Compiled, start: (u64, u64)) -> Page {
    scan_up_to(files, c, start, c.req.limit)
}

/// As [`scan`] with an explicit match limit (the server fills its page cache with it).
pub fn scan_up_to(
    files: &[(&str, &FileEntry)],
    c: &Compiled,
    start: (u64, u64),
    limit: usize,
) -> Page {
    scan_up_to_soft(files, c, start, limit, None)
}

/// As [`scan_up_to`]; with `soft = (n, t)` it also stops, between batches of
/// files, once it holds at least `n` matches and has run for `t` (the page is
/// then not partial: `next` says where to continue).
pub fn scan_up_to_soft(
    files: &[(&str, &FileEntry)],
    c: &Compiled,
    start: (u64, u64),
    limit: usize,
    soft: Option<(usize, Duration)>,
) -> Page {
    let began = Instant::now();
    let mut out: Vec<GrepMatch> = Vec::new();
    let mut positions: Vec<(u64, u64)> = Vec::new();
    let mut fi = start.0 as usize;
    let mut scanned = 0u64;
    const BATCH: usize = 256;
    let cut = || c.cut_files.load(std::sync::atomic::Ordering::Relaxed) > 0;
    let page = |out, positions, next, partial: bool, scanned| Page {
        matches: out,
        positions,
        next,
        partial: partial || cut(),
        files_scanned: scanned,
    };
    while fi < files.len() {
        let end = (fi + BATCH).min(files.len());
        let results: Vec<Vec<GrepMatch>> = files[fi..end]
            .par_iter()
            .map(|(repo, f)| c.search_file(repo, f))
            .collect();
        for (k, ms) in results.into_iter().enumerate() {
            let idx = fi + k;
            scanned += 1;
            // Resume inside the first file at the cursor's match index.
            let first = if idx as u64 == start.0 {
                start.1 as usize
            } else {
                0
            };
            for (j, m) in ms.into_iter().enumerate().skip(first) {
                if out.len() == limit {
                    return page(out, positions, Some((idx as u64, j as u64)), false, scanned);
                }
                out.push(m);
                positions.push((idx as u64, j as u64));
            }
            if out.len() == limit {
                // Full page: is there anything after it? Past the scan budget
                // the answer is yes (the next page may then come back empty).
                let more = files[idx + 1..].par_iter().any(|(repo, f)| {
                    began.elapsed() > c.req.budget || !c.search_file(repo, f).is_empty()
                });
                return page(
                    out,
                    positions,
                    more.then_some(((idx + 1) as u64, 0)),
                    false,
                    scanned,
                );
            }
        }
        fi = end;
        if began.elapsed() > c.req.budget && fi < files.len() {
            return page(out, positions, Some((fi as u64, 0)), true, scanned);
        }
        if let Some((n, t)) = soft {
            if out.len() >= n && began.elapsed() >= t && fi < files.len() {
                return page(out, positions, Some((fi as u64, 0)), false, scanned);
            }
        }
    }
    page(out, positions, None, false, scanned)
}

/// Matches per file (repo, path, count) of the files with any, and whether
/// the scan stopped at its budget.
pub type Counts = (Vec<(String, String, u64)>, bool);

/// Matches per file over every candidate (for `count_only`).
pub fn count(files: &[(&str, &FileEntry)], c: &Compiled) -> Counts {
    let began = Instant::now();
    let mut out = Vec::new();
    for part in files.chunks(512) {
        let counts: Vec<u64> = part
            .par_iter()
            .map(|(repo, f)| c.search_file(repo, f).len() as u64)
            .collect();
        for ((repo, f), n) in part.iter().zip(counts) {
            if n > 0 {
                out.push((repo.to_string(), f.path.clone(), n));
            }
        }
        if began.elapsed() > c.req.budget {
            return (out, true);
        }
    }
    (
        out,
        c.cut_files.load(std::sync::atomic::Ordering::Relaxed) > 0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compressed, as the server keeps files by default.
    fn file(path: &str, content: &str) -> FileEntry {
        FileEntry::new(
            path.into(),
            "python".into(),
            content.len() as u64,
            false,
            false,
            content,
            true,
        )
    }

    fn req(p: &str) -> GrepRequest {
        GrepRequest {
            pattern: p.into(),
            limit: 100,
            budget: Duration::from_secs(10),
            ..Default::default()
        }
    }

    #[test]
    fn smart_case_word_and_submatches() {
        let f = file("a.py", "Foo foo\nfood\nbar FOO\n");
        let c = compile(&req("foo")).unwrap();
        let m = c.search_file("r", &f);
        assert_eq!(m.iter().map(|m| m.line).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(m[0].submatches.len(), 2);
        assert_eq!(
            (m[2].submatches[0].column, m[2].submatches[0].start),
            (5, 4)
        );
        let c = compile(&GrepRequest {
            whole_word: true,
            ..req("Foo")
        })
        .unwrap();
        assert_eq!(c.search_file("r", &f).len(), 1);
    }

    #[test]
    fn multiline_and_context() {
        let f = file("a.py", "x\ndef f():\n    return 1\ny\nz\n");
        let c = compile(&GrepRequest {
            multiline: true,
            ..req(r"def f\(\):\n\s+return")
        })
        .unwrap();
        let m = c.search_file("r", &f);
        assert_eq!((m[0].line, m[0].end_line), (2, 3));
        let c = compile(&GrepRequest {
            before: 1,
            after: 2,
            ..req("return")
        })
        .unwrap();
        let m = c.search_file("r", &f);
        assert_eq!(
            m[0].before,
            vec![ContextLine {
                line: 2,
                text: "def f():".into()
            }]
        );
        assert_eq!(
            m[0].after.iter().map(|c| c.line).collect::<Vec<_>>(),
            vec![4, 5]
        );
        // A newline in a line-mode pattern is an error, as in rg.
        assert_eq!(
            compile(&req("a\\nb")).err().unwrap().code,
            codes::INVALID_PATTERN
        );
    }

    #[test]
    fn globs_follow_rg() {
        let c = compile(&GrepRequest {
            globs: vec!["*.py".into(), "!tests/**".into()],
            ..req("x")
        })
        .unwrap();
        assert!(c.selects(&file("a/b.py", "")));
        assert!(!c.selects(&file("a/b.go", "")));
        assert!(!c.selects(&file("tests/t.py", "")));
        let c = compile(&GrepRequest {
            globs: vec!["!*.md".into()],
            ..req("x")
        })
        .unwrap();
        assert!(c.selects(&file("a/b.go", "")));
        assert!(!c.selects(&file("README.md", "")));
    }

    #[test]
    fn per_file_limit_cuts_and_flags_partial() {
        let big = file("big.py", &"x\n".repeat(500));
        let cands = vec![("r", &big)];
        let c = compile(&GrepRequest {
            per_file_limit: Some(Duration::ZERO),
            ..req("x")
        })
        .unwrap();
        let p = scan(&cands, &c, (0, 0));
        assert!(p.partial);
        assert_eq!(p.matches.len(), 63);
        let c = compile(&req("x")).unwrap();
        let p = scan(&cands, &c, (0, 0));
        assert!(!p.partial && p.matches.len() == 100 && p.next == Some((0, 100)));
    }

    #[test]
    fn limit_validation_and_paging() {
        assert_eq!(
            compile(&GrepRequest {
                limit: 1001,
                ..req("x")
            })
            .err()
            .unwrap()
            .code,
            codes::INVALID_ARGUMENT
        );
        assert_eq!(
            compile(&req("")).err().unwrap().code,
            codes::INVALID_ARGUMENT
        );
        let files: Vec<FileEntry> = (0..5)
            .map(|i| file(&format!("f{i}.py"), "x\nx\nx\n"))
            .collect();
        let cands: Vec<(&str, &FileEntry)> = files.iter().map(|f| ("r", f)).collect();
        let c = compile(&GrepRequest {
            limit: 4,
            ..req("x")
        })
        .unwrap();
        let mut seen = Vec::new();
        let mut pos = (0, 0);
        loop {
            let p = scan(&cands, &c, pos);
            seen.extend(p.matches.iter().map(|m| (m.path.clone(), m.line)));
            match p.next {
                Some(n) => pos = n,
                None => break,
            }
        }
        assert_eq!(seen.len(), 15);
        let mut dedup = seen.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), 15, "every match exactly once");
    }

    #[test]
    fn cached_matchers_keep_their_flags_apart() {
        let f = file("a.py", "Foo\nfoo\nfood\n");
        let n = |r: GrepRequest| compile(&r).unwrap().search_file("r", &f).len();
        // Same pattern, different flags: each gets its own matcher.
        assert_eq!(n(req("foo")), 3);
        assert_eq!(
            n(GrepRequest {
                case_sensitive: Some(true),
                ..req("foo")
            }),
            2
        );
        assert_eq!(
            n(GrepRequest {
                whole_word: true,
                ..req("foo")
            }),
            2
        );
        assert_eq!(
            n(GrepRequest {
                fixed_string: true,
                ..req("fo.")
            }),
            0
        );
        assert_eq!(n(req("fo.")), 3);
        // And again, from the cache.
        assert_eq!(
            n(GrepRequest {
                case_sensitive: Some(true),
                ..req("foo")
            }),
            2
        );
        assert_eq!(n(req("foo")), 3);
    }

    #[test]
    fn fuzz_globs() {
        use code_index_schemas::fuzz;
        use proptest::prelude::*;
        let glob = prop::collection::vec(
            prop_oneof![
                Just("*".to_string()),
                Just("**".to_string()),
                Just("/".to_string()),
                Just("!".to_string()),
                Just("{".to_string()),
                Just("}".to_string()),
                Just(",".to_string()),
                Just("[".to_string()),
                Just("]".to_string()),
                Just("\\".to_string()),
                "[a-z.]{1,4}",
                any::<char>().prop_map(String::from),
            ],
            0..24,
        )
        .prop_map(|v| v.concat());
        fuzz::run("globs", prop::collection::vec(glob, 1..4), |globs| {
            let r = build_globs(&GrepRequest {
                pattern: "x".into(),
                globs,
                limit: 10,
                ..Default::default()
            });
            if let Err(e) = r {
                prop_assert_eq!(e.code, codes::INVALID_ARGUMENT);
            }
            Ok(())
        });
    }
}
