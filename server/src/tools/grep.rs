//! `grep`: ripgrep-exact regex search over the snapshot content, paged
//! by cursor and cut to the response budget.

use crate::grep::{self, cache, GrepMatch, GrepRequest};
use crate::snapshot::{FileEntry, Snapshot};
use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::*;
use crate::cursor;
use crate::error::{codes, ToolError};
use crate::state::State;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "Regex search over file contents with ripgrep's exact semantics (same matches as `rg` with the same flags).\n\
    Returns matches with 1-based line/end_line, the matched text and submatch spans; context lines are nested in their match.\n\
    Examples: {\"pattern\": \"def get_or_create\", \"glob\": \"*.py\"};\n\
    a function with its body: {\"pattern\": \"def save\\\\(self[^)]*\\\\):\\\\n(\\\\s+.*\\\\n)+?\\\\s+return\", \"multiline\": true};\n\
    a docstring: {\"pattern\": \"\\\"\\\"\\\"[^\\\"]*transaction[^\\\"]*\\\"\\\"\\\"\", \"multiline\": true};\n\
    literal text: {\"pattern\": \"a.b(c)\", \"fixed_string\": true}.\n\
    To find where a function or class is defined, prefer search_symbols; use grep for text and usages.\n\
    A match's text is clipped to about 400 bytes around it (clipped: true): read_file line..end_line shows all of it.\n\
    Large result sets: use count_only (counts per file, paged), or page with next_cursor.";

/// Most context lines before or after a grep match: 20 + 20 lines of at
/// most 400 bytes keep one match within the response budget.
const MAX_CONTEXT_LINES: u32 = 20;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GrepArgs {
    /// Regex (Rust syntax, as ripgrep) or, with fixed_string, a literal. Inline flags work: (?i), (?-s).
    pub pattern: String,
    /// Treat the pattern as a literal string (rg -F).
    #[serde(default)]
    pub fixed_string: Option<bool>,
    /// true = case-sensitive, false = insensitive; absent = smart case (insensitive unless the pattern has an uppercase letter).
    #[serde(default)]
    pub case_sensitive: Option<bool>,
    /// Match whole words only (rg -w).
    #[serde(default)]
    pub whole_word: Option<bool>,
    /// Patterns may span lines and `.` matches newline (rg -U --multiline-dotall).
    #[serde(default)]
    pub multiline: Option<bool>,
    /// rg glob or list of globs; a leading `!` excludes (e.g. "*.py", ["src/**", "!*_test.go"]).
    #[serde(default)]
    pub glob: Option<OneOrMany>,
    /// Only search this repo-relative sub-directory or file.
    #[serde(default)]
    pub path: Option<String>,
    /// Repository (see list_repos); default the working directory's repo when it is loaded, else all; "all" for every loaded one.
    #[serde(default)]
    pub repo: Option<String>,
    /// Language id: python, javascript, typescript, tsx, rust, go, java, c, cpp, markdown, text.
    #[serde(default)]
    pub lang: Option<String>,
    /// Lines of context before and after each match (rg -C), 0..=20; read_file shows more.
    #[serde(default)]
    #[schemars(range(max = 20))]
    pub context_lines: Option<u32>,
    /// Lines of context before each match (rg -B), 0..=20; overrides context_lines.
    #[serde(default)]
    #[schemars(range(max = 20))]
    pub before: Option<u32>,
    /// Lines of context after each match (rg -A), 0..=20; overrides context_lines.
    #[serde(default)]
    #[schemars(range(max = 20))]
    pub after: Option<u32>,
    /// At most this many matches per file (rg -m).
    #[serde(default)]
    pub max_count: Option<u64>,
    /// Matches per page, 1..=1000 (default 50). Larger is an INVALID_ARGUMENT.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    /// next_cursor of the previous page.
    #[serde(default)]
    #[schemars(length(max = 1024))]
    pub cursor: Option<String>,
    /// Return match counts per file instead of matches.
    #[serde(default)]
    pub count_only: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileCount {
    pub repo: String,
    pub path: String,
    pub count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct GrepOut {
    /// Matches in (repo, path, line) order; context lines are nested in their match.
    pub matches: Vec<GrepMatch>,
    /// With count_only: matches per file, in path order, `limit` files a page (when given) within the response budget; `returned` counts files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Vec<FileCount>>,
    pub returned: u64,
    pub has_more: bool,
    /// Pass as `cursor` for the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// The scan budget ran out: results are incomplete; narrow the query (path, glob, lang).
    pub partial: bool,
    /// Files of the searched snapshots that are not in them, so were not
    /// searched (absent when none): over the size cap, binary, unreadable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_indexed: Option<NotIndexed>,
    /// Server-side time for this call.
    pub elapsed_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

pub fn run(st: &Arc<State>, a: GrepArgs) -> Result<(GrepOut, String), ToolError> {
    let t0 = Instant::now();
    let snaps = st.select(a.repo.as_deref())?;
    let repo_arg = a.repo.clone();
    let req = request(&a)?;
    let (compiled, files) = grep::compile_scoped(&req, &snaps)?;
    let ids: Vec<&str> = snaps.iter().map(|s| s.id()).collect();
    if a.count_only.unwrap_or(false) {
        return count_page(st, &req, &compiled, &files, &snaps, &a, t0);
    }
    let fp = cursor::fingerprint("grep", &req.normalized(), &ids);
    let start = match &a.cursor {
        Some(c) => {
            let p = cursor::decode(c, &fp)?;
            if p.len() != 2 {
                return Err(ToolError::new(
                    codes::INVALID_CURSOR,
                    "invalid cursor",
                    "drop `cursor` to start over",
                ));
            }
            (p[0], p[1])
        }
        None => (0, 0),
    };
    let page = page_from(st, &fp, repo_arg, &req, &compiled, &files, start);
    let labels = RepoLabels::new(st, a.repo.as_deref());
    let (out, mut text, next) = cut_to_budget(
        st,
        &fp,
        &req,
        &labels,
        page.matches,
        page.positions,
        page.next,
    );
    let next_cursor = next.map(|n| cursor::encode(&fp, &[n.0, n.1]));
    let hint = if out.is_empty() && !page.partial && start != (0, 0) {
        Some("no further matches after the previous page".to_string())
    } else if out.is_empty() && !page.partial {
        Some(empty_hint(&req))
    } else if page.partial {
        Some("partial: the scan hit its 10 s budget or a file its 1 s limit, so matches may be missing; narrow with path, glob or lang (and continue with next_cursor when there is one)".to_string())
    } else {
        None
    };
    if out.is_empty() {
        text.push_str(&format!(
            "no matches. {}\n",
            hint.clone().unwrap_or_default()
        ));
    } else if next_cursor.is_some() {
        text.push_str("… more: pass next_cursor\n");
    }
    let not_indexed = NotIndexed::of(&snaps);
    if let (Some(n), (0, 0)) = (&not_indexed, start) {
        text.push_str(&n.line());
    }
    Ok((
        GrepOut {
            not_indexed,
            returned: out.len() as u64,
            matches: out,
            counts: None,
            has_more: next_cursor.is_some(),
            next_cursor,
            partial: page.partial,
            elapsed_ms: t0.elapsed().as_secs_f64() * 1000.0,
            hint,
        },
        text,
    ))
}

/// The engine's request for the tool's arguments.
fn request(a: &GrepArgs) -> Result<GrepRequest, ToolError> {
    let ctx = a.context_lines.unwrap_or(0) as usize;
    for (name, v) in [
        ("context_lines", a.context_lines),
        ("before", a.before),
        ("after", a.after),
    ] {
        if let Some(n) = v.filter(|&n| n > MAX_CONTEXT_LINES) {
            return Err(ToolError::invalid_argument(
                format!("{name} {n} is out of range"),
                format!(
                    "use 0..={MAX_CONTEXT_LINES}; read_file shows a longer range around a match"
                ),
            ));
        }
    }
    Ok(GrepRequest {
        pattern: a.pattern.clone(),
        fixed_string: a.fixed_string.unwrap_or(false),
        case_sensitive: a.case_sensitive,
        whole_word: a.whole_word.unwrap_or(false),
        multiline: a.multiline.unwrap_or(false),
        globs: a.glob.clone().map(OneOrMany::into_vec).unwrap_or_default(),
        path: a.path.clone(),
        lang: a.lang.clone(),
        before: a.before.map(|b| b as usize).unwrap_or(ctx),
        after: a.after.map(|b| b as usize).unwrap_or(ctx),
        max_count: a.max_count,
        limit: limit_of(a.limit, 50, MAX_LIMIT)?,
        budget: grep::SCAN_BUDGET,
        per_file_limit: None,
    })
}

/// The matches from `start`: a slice of the cached whole result, the first
/// page of a scan that goes on filling the cache in the background, or a
/// scan of about what the response budget let the previous page hold.
fn page_from(
    st: &Arc<State>,
    fp: &str,
    repo_arg: Option<String>,
    req: &GrepRequest,
    compiled: &grep::Compiled,
    files: &[(&str, &FileEntry)],
    start: (u64, u64),
) -> grep::Page {
    // Small result sets are computed whole once and paged from the cache.
    let cached = st.grep_cache.get(fp);
    // A first page whose whole result is not in hand soon (a large tree,
    // many matches) is served from what the scan found so far.
    let mut first: Option<grep::Page> = None;
    let all = match cached {
        Some(a) => Some(a),
        None if start == (0, 0) => {
            let p = grep::scan_up_to_soft(
                files,
                compiled,
                (0, 0),
                cache::GREP_CACHE_MATCHES,
                Some((req.limit, cache::FIRST_PAGE_FILL)),
            );
            if p.next.is_none() && !p.partial {
                let a = Arc::new(grep::GrepAll {
                    matches: p.matches,
                    positions: p.positions,
                });
                st.grep_cache.put(fp.to_string(), a.clone());
                Some(a)
            } else {
                // Not when the whole result will not fit the cache anyway
                // (projected from the share of files scanned so far).
                let projected =
                    p.matches.len() as u64 * files.len() as u64 / p.files_scanned.max(1);
                if !p.partial && projected < 2 * cache::GREP_CACHE_MATCHES as u64 {
                    fill_cache(st, fp.to_string(), repo_arg, req.clone(), &p);
                }
                first = Some(p);
                None
            }
        }
        None => None,
    };
    match all {
        Some(a) => {
            let from = a.positions.partition_point(|p| *p < start);
            let to = (from + req.limit).min(a.matches.len());
            grep::Page {
                matches: a.matches[from..to].to_vec(),
                positions: a.positions[from..to].to_vec(),
                next: a.positions.get(to).copied(),
                partial: false,
                files_scanned: files.len() as u64,
            }
        }
        None => match first {
            Some(mut p) => {
                let n = req.limit.min(p.matches.len());
                let next = p.positions.get(n).copied().or(p.next);
                let partial = p.partial && n == p.matches.len();
                p.matches.truncate(n);
                p.positions.truncate(n);
                grep::Page {
                    matches: p.matches,
                    positions: p.positions,
                    next,
                    partial,
                    files_scanned: p.files_scanned,
                }
            }
            None => {
                // Scan about what the response budget let the previous page
                // hold, not `limit` matches of which most would be cut and
                // scanned again for the next page.
                let cap = st
                    .grep_fit
                    .get(fp)
                    .map_or(req.limit, |n| (n + n / 2).clamp(1, req.limit));
                grep::scan_up_to(files, compiled, start, cap)
            }
        },
    }
}

/// The matches of a page that fit the response budget, their text and
/// where the next page starts; notes how many fit for the next scan.
fn cut_to_budget(
    st: &State,
    fp: &str,
    req: &GrepRequest,
    labels: &RepoLabels,
    matches: Vec<GrepMatch>,
    positions: Vec<(u64, u64)>,
    mut next: Option<(u64, u64)>,
) -> (Vec<GrepMatch>, String, Option<(u64, u64)>) {
    let scanned = matches.len();
    // Cut the page where the rendering exceeds the response budget.
    let mut text = String::new();
    let mut out = Vec::new();
    let mut json_bytes = 0usize;
    for (m, pos) in matches.into_iter().zip(positions) {
        let mut piece = labels.line(&m.repo, String::new());
        for c in &m.before {
            piece.push_str(&format!("{}-{}- {}\n", m.path, c.line, c.text));
        }
        piece.push_str(&format!("{}:{}: {}\n", m.path, m.line, m.text));
        for c in &m.after {
            piece.push_str(&format!("{}-{}- {}\n", m.path, c.line, c.text));
        }
        let json_len = serde_json::to_string(&m).map(|s| s.len()).unwrap_or(0);
        if !out.is_empty()
            && (text.len() + piece.len() > RESPONSE_BUDGET_BYTES
                || json_bytes + json_len > STRUCTURED_BUDGET_BYTES)
        {
            next = Some(pos);
            break;
        }
        json_bytes += json_len;
        text.push_str(&piece);
        out.push(m);
    }
    if out.len() < scanned {
        // The budget cut the page: that many fit.
        st.grep_fit.put(fp.to_string(), out.len());
    } else if scanned < req.limit && next.is_some() {
        // The scan cap, not the budget, ended the page: allow more next time.
        st.grep_fit
            .put(fp.to_string(), (scanned * 2).min(req.limit));
    }
    (out, text, next)
}

/// `count_only`: matches per file in path order, paged by the response budget.
fn count_page(
    st: &State,
    req: &GrepRequest,
    compiled: &grep::Compiled,
    files: &[(&str, &FileEntry)],
    snaps: &[&Snapshot],
    a: &GrepArgs,
    t0: Instant,
) -> Result<(GrepOut, String), ToolError> {
    let (cursor_arg, per_page) = (a.cursor.as_deref(), a.limit.map(|l| l as usize));
    let ids: Vec<&str> = snaps.iter().map(|s| s.id()).collect();
    // Counts per file in path order, `limit` files a page (when given) within the response budget.
    let fp = cursor::fingerprint("grep-count", &req.normalized(), &ids);
    let offset = offset_of(cursor_arg, &fp)?;
    // Pages index one list: counted once, then served from the cache.
    let counted = match st.count_cache.get(&fp) {
        Some(c) => c,
        None => {
            let c = Arc::new(grep::count(files, compiled));
            st.count_cache.put(fp.clone(), c.clone());
            c
        }
    };
    let (counts, partial) = (&counted.0, counted.1);
    let total: u64 = counts.iter().map(|c| c.2).sum();
    let n_files = counts.len();
    let mut text = format!(
        "{total} matches in {n_files} files{}\n",
        if partial {
            " (partial: time budget spent)"
        } else {
            ""
        }
    );
    let mut out_counts = Vec::new();
    let mut json_bytes = 0usize;
    let labels = RepoLabels::new(st, a.repo.as_deref());
    for (repo, path, n) in counts.iter().skip(offset) {
        let line = labels.line(repo, format!("{path}: {n}\n"));
        // repo, path, count and the JSON punctuation.
        let json_len = repo.len() + path.len() + 48;
        if !out_counts.is_empty()
            && (per_page.is_some_and(|n| out_counts.len() >= n)
                || text.len() + line.len() > RESPONSE_BUDGET_BYTES
                || json_bytes + json_len > STRUCTURED_BUDGET_BYTES)
        {
            break;
        }
        text.push_str(&line);
        json_bytes += json_len;
        out_counts.push(FileCount {
            repo: repo.clone(),
            path: path.clone(),
            count: *n,
        });
    }
    let end = offset + out_counts.len();
    let next_cursor = (end < n_files).then(|| cursor::encode(&fp, &[end as u64]));
    let mut hint = partial.then(|| {
        "partial: the scan hit its time budget; narrow the search with path, glob or lang"
            .to_string()
    });
    if next_cursor.is_some() {
        let more = format!(
            "files {}..{end} of {n_files} listed: pass next_cursor for the rest",
            offset + 1
        );
        hint = Some(match hint {
            Some(h) => format!("{h}; {more}"),
            None => more,
        });
    }
    if let Some(h) = &hint {
        text.push_str(h);
        text.push('\n');
    }
    let not_indexed = NotIndexed::of(snaps);
    if let (Some(n), 0) = (&not_indexed, offset) {
        text.push_str(&n.line());
    }
    Ok((
        GrepOut {
            not_indexed,
            matches: Vec::new(),
            returned: out_counts.len() as u64,
            counts: Some(out_counts),
            has_more: next_cursor.is_some(),
            next_cursor,
            partial,
            elapsed_ms: t0.elapsed().as_secs_f64() * 1000.0,
            hint,
        },
        text,
    ))
}

/// Finish a first page's scan in the background and cache the whole
/// result, so that the next pages are slices (a page asked for before it
/// is done scans from its cursor). `head` is what the first page's scan
/// found; the fill resumes where it stopped. Once per query at a time;
/// given up past [`cache::GREP_FILL_BUDGET`] or [`cache::GREP_CACHE_MATCHES`].
fn fill_cache(
    st: &Arc<State>,
    fp: String,
    repo: Option<String>,
    mut req: GrepRequest,
    head: &grep::Page,
) {
    let Some(from) = head.next else {
        return;
    };
    if !crate::guard::lock(&st.grep_filling).insert(fp.clone()) {
        return;
    }
    req.budget = cache::GREP_FILL_BUDGET;
    let (mut matches, mut positions) = (head.matches.clone(), head.positions.clone());
    let st = st.clone();
    crate::guard::spawn(move || {
        // Cleared however the fill ends, a panic included.
        struct Filling(Arc<State>, String);
        impl Drop for Filling {
            fn drop(&mut self) {
                crate::guard::lock(&self.0.grep_filling).remove(&self.1);
            }
        }
        let _filling = Filling(st.clone(), fp.clone());
        if let Ok(snaps) = st.select(repo.as_deref()) {
            if let Ok((c, files)) = grep::compile_scoped(&req, &snaps) {
                let rest = cache::GREP_CACHE_MATCHES - matches.len();
                let p = grep::scan_up_to(&files, &c, from, rest);
                if p.next.is_none() && !p.partial {
                    matches.extend(p.matches);
                    positions.extend(p.positions);
                    let all = Arc::new(grep::GrepAll { matches, positions });
                    st.grep_cache.put(fp.clone(), all);
                }
            }
        }
    });
}

fn empty_hint(req: &GrepRequest) -> String {
    let mut tips = Vec::new();
    if req.case_sensitive == Some(true) || req.pattern.chars().any(|c| c.is_uppercase()) {
        tips.push("try case_sensitive: false");
    }
    if req.whole_word {
        tips.push("drop whole_word");
    }
    if req.path.is_some() || !req.globs.is_empty() || req.lang.is_some() {
        tips.push("widen path/glob/lang");
    }
    if !req.fixed_string && req.pattern.chars().any(|c| "()[]{}.*+?|\\^$".contains(c)) {
        tips.push("if you meant the text literally, pass fixed_string: true");
    }
    if tips.is_empty() {
        tips.push("try a shorter or more general pattern, or search_files for file names");
    }
    // The text already says "no matches": the hint says what to try.
    let mut h = tips.join("; ");
    if let Some(c) = h.get(..1) {
        h = c.to_uppercase() + &h[1..];
    }
    format!("{h}.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::codes;
    use crate::tools::fixture::{args, line_of, state};
    use serde_json::json;

    #[test]
    fn finds_every_match_in_path_order() {
        let (out, text) = run(&state(), args(json!({"pattern": "def slug"}))).unwrap();
        let got: Vec<(&str, u64)> = out
            .matches
            .iter()
            .map(|m| (m.path.as_str(), m.line))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "app/models.py",
                    line_of("app/models.py", "    def slug(self):")
                ),
                (
                    "app/models.py",
                    line_of("app/models.py", "        return \"book-\"") - 1
                ),
                ("app/util.py", line_of("app/util.py", "def slugify")),
            ]
        );
        assert!(!out.has_more && !out.partial);
        assert!(text.contains("app/util.py:"));
    }

    #[test]
    fn pages_resume_where_the_last_ended() {
        let st = state();
        let all = run(&st, args(json!({"pattern": "slugify"})))
            .unwrap()
            .0
            .matches;
        assert!(all.len() >= 5);
        let mut paged = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut a = json!({"pattern": "slugify", "limit": 2});
            if let Some(c) = &cursor {
                a["cursor"] = json!(c);
            }
            let out = run(&st, args(a)).unwrap().0;
            assert!(out.matches.len() <= 2);
            paged.extend(out.matches.into_iter().map(|m| (m.path, m.line)));
            match out.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        let want: Vec<(String, u64)> = all.into_iter().map(|m| (m.path, m.line)).collect();
        assert_eq!(paged, want);
    }

    #[test]
    fn counts_context_and_filters() {
        let st = state();
        let out = run(&st, args(json!({"pattern": "slugify", "count_only": true})))
            .unwrap()
            .0;
        let counts = out.counts.unwrap();
        // README 1, models.py 3 (import, two calls), util.py 1, the test 3.
        assert_eq!(counts.iter().map(|c| c.count).sum::<u64>(), 8);
        assert_eq!(counts.len(), 4);
        let out = run(&st, args(json!({"pattern": "TODO", "context_lines": 1})))
            .unwrap()
            .0;
        assert_eq!(out.matches.len(), 1);
        assert_eq!(out.matches[0].before.len(), 1);
        assert_eq!(out.matches[0].after.len(), 1);
        let out = run(
            &st,
            args(json!({"pattern": "slugify", "glob": "!tests/**", "lang": "python"})),
        )
        .unwrap()
        .0;
        assert!(out.matches.iter().all(|m| !m.path.starts_with("tests/")));
        let e = run(&st, args(json!({"pattern": "(unclosed"}))).unwrap_err();
        assert_eq!(e.code, codes::INVALID_PATTERN);
        let out = run(&st, args(json!({"pattern": "nothing-like-this"})))
            .unwrap()
            .0;
        assert!(out.matches.is_empty() && out.hint.is_some());
    }
}
