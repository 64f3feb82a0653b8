//! The parallel scan over candidate files: pages that resume at a
//! (file, match) position, time budgets, and per-file counts.

use std::sync::Mutex;
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

/// As [`scan_up_to`]; with `soft = (n, t)` it also stops once it holds at
/// least `n` matches and has run for `t` (the page is then not partial:
/// `next` says where to continue).
///
/// One worker per thread claims the next candidate file in order; results
/// are taken in file order as they become contiguous, and the workers stop
/// as soon as the page is decided: at most one file per thread is scanned
/// past that point (batches scanned whole wasted up to half of the last
/// batch on a page found in the first hundred files).
pub fn scan_up_to_soft(
    files: &[(&str, &FileEntry)],
    c: &Compiled,
    start: (u64, u64),
    limit: usize,
    soft: Option<(usize, Duration)>,
) -> Page {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let began = Instant::now();
    let from = start.0 as usize;
    let taken = Mutex::new(Taken {
        out: Vec::new(),
        positions: Vec::new(),
        pending: std::collections::BTreeMap::new(),
        next_file: from,
        end: None,
    });
    let claim = AtomicUsize::new(from);
    let stop = AtomicBool::new(false);
    let worker = || loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        if began.elapsed() > c.req.budget {
            stop.store(true, Ordering::Relaxed);
            return;
        }
        let k = claim.fetch_add(1, Ordering::Relaxed);
        if k >= files.len() {
            return;
        }
        let (repo, f) = files[k];
        let ms = c.search_file(repo, f);
        let mut t = taken.lock().unwrap_or_else(|e| e.into_inner());
        t.pending.insert(k, ms);
        if t.take(start, limit, soft, began, files.len()) {
            stop.store(true, Ordering::Relaxed);
            return;
        }
    };
    let threads = rayon::current_num_threads().max(1);
    if files.len() > from + 1 && threads > 1 {
        rayon::scope(|s| {
            for _ in 0..threads {
                s.spawn(|_| worker());
            }
        });
    } else {
        worker();
    }
    let t = taken.into_inner().unwrap_or_else(|e| e.into_inner());
    let scanned = (t.next_file - from) as u64;
    let cut = c.cut_files.load(Ordering::Relaxed) > 0;
    let (next, partial) = match t.end {
        Some(next) => (next, false),
        // Stopped by the budget before the end: a full page says there may
        // be more (the next page may then come back empty), any other is
        // partial.
        None if t.next_file < files.len() => (Some((t.next_file as u64, 0)), t.out.len() < limit),
        None => (None, false),
    };
    Page {
        matches: t.out,
        positions: t.positions,
        next,
        partial: partial || cut,
        files_scanned: scanned,
    }
}

/// The results of [`scan_up_to_soft`]'s workers, taken in file order.
struct Taken {
    out: Vec<GrepMatch>,
    positions: Vec<(u64, u64)>,
    /// Scanned files not yet taken (a file before them is still scanning).
    pending: std::collections::BTreeMap<usize, Vec<GrepMatch>>,
    /// The next file to take.
    next_file: usize,
    /// The page is decided: where the next one starts (None: nothing after it).
    end: Option<Option<(u64, u64)>>,
}

impl Taken {
    /// Take the contiguous scanned files; true once the page is decided: a
    /// match after `limit` (the next page starts there), the soft stop, or
    /// the last file taken.
    fn take(
        &mut self,
        start: (u64, u64),
        limit: usize,
        soft: Option<(usize, Duration)>,
        began: Instant,
        files: usize,
    ) -> bool {
        if self.end.is_some() {
            return true;
        }
        while let Some(ms) = self.pending.remove(&self.next_file) {
            let idx = self.next_file;
            self.next_file += 1;
            // Resume inside the first file at the cursor's match index.
            let first = if idx as u64 == start.0 {
                start.1 as usize
            } else {
                0
            };
            for (j, m) in ms.into_iter().enumerate().skip(first) {
                if self.out.len() == limit {
                    self.end = Some(Some((idx as u64, j as u64)));
                    return true;
                }
                self.out.push(m);
                self.positions.push((idx as u64, j as u64));
            }
            if let Some((n, t)) = soft {
                if self.out.len() >= n && began.elapsed() >= t && self.next_file < files {
                    self.end = Some(Some((self.next_file as u64, 0)));
                    return true;
                }
            }
        }
        if self.next_file >= files {
            self.end = Some(None);
            return true;
        }
        false
    }
}

/// Matches per file (repo, path, count) of the files with any, and whether
/// the scan stopped at its budget.
pub type Counts = (Vec<(String, String, u64)>, bool);

/// Matches per file over every candidate (for `count_only`).
pub fn count(files: &[(&str, &FileEntry)], c: &Compiled) -> Counts {
    let began = Instant::now();
    let mut out = Vec::new();
    for part in files.chunks(512) {
        let counts: Vec<u64> = part.par_iter().map(|(_, f)| c.count_file(f)).collect();
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
