//! The sink that collects one file's matches with their context lines and
//! submatches, as rg prints them, clipped to the line budget.

use std::time::Instant;

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};

use super::*;
use crate::snapshot::FileEntry;

impl Compiled {
    /// All matches in one file (respecting max_count).
    pub fn search_file(&self, repo: &str, f: &FileEntry) -> Vec<GrepMatch> {
        let mut sink = Collect {
            matcher: &self.matcher,
            repo,
            path: &f.path,
            out: Vec::new(),
            pending_before: Vec::new(),
            deadline: self.file_deadline(),
            cut: false,
        };
        self.scan(f, &mut sink);
        self.note_cut(sink.cut);
        sink.out
    }

    /// How many matches `search_file` would return in one file (respecting
    /// max_count), without building them: `count_only`'s pass over every
    /// candidate file.
    pub fn count_file(&self, f: &FileEntry) -> u64 {
        let mut sink = Count {
            n: 0,
            deadline: self.file_deadline(),
            cut: false,
        };
        self.scan(f, &mut sink);
        self.note_cut(sink.cut);
        sink.n
    }

    fn file_deadline(&self) -> Instant {
        Instant::now() + self.req.per_file_limit.unwrap_or(PER_FILE_LIMIT)
    }

    fn scan<S: Sink>(&self, f: &FileEntry, mut sink: S) {
        let mut searcher: Searcher = self.searcher.build();
        // Errors cannot happen on in-memory slices with these sinks.
        let _ = f.with_bytes(|b| searcher.search_slice(&self.matcher, b, &mut sink));
    }

    fn note_cut(&self, cut: bool) {
        if cut {
            self.cut_files
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

struct Count {
    n: u64,
    deadline: Instant,
    cut: bool,
}

impl Sink for Count {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, _m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        // The same deadline checks as `Collect`, so a cut file counts alike.
        if self.n % 64 == 63 && Instant::now() > self.deadline {
            self.cut = true;
            return Ok(false);
        }
        self.n += 1;
        Ok(true)
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
