//! The parallel scan over candidate files: pages that resume at a
//! (file, match) position, time budgets, and per-file counts.

use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::Compiled;
use super::GrepMatch;
use crate::snapshot::FileEntry;

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
    // Files per parallel batch: few at first (a page is often found in the
    // first candidates), doubling up to 256.
    let mut batch = 16usize;
    let cut = || c.cut_files.load(std::sync::atomic::Ordering::Relaxed) > 0;
    let page = |out, positions, next, partial: bool, scanned| Page {
        matches: out,
        positions,
        next,
        partial: partial || cut(),
        files_scanned: scanned,
    };
    while fi < files.len() {
        let end = (fi + batch).min(files.len());
        batch = (batch * 2).min(256);
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
