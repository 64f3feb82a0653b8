//! Evaluation: each atom compiled once (content atoms by the grep engine,
//! `sym:` atoms by the store), then the tree evaluated file by file in
//! parallel under a scan budget.

use std::time::{Duration, Instant};

use rayon::prelude::*;
use schemars::JsonSchema;
use serde::Serialize;

use super::{Atom, Case, Expr, Query};
use crate::error::{codes, ToolError};
use crate::grep::{self, GrepRequest};
use crate::snapshot::{FileEntry, Snapshot};
use crate::store::{NameMatch, Store, SymbolFilter};

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SearchHit {
    pub repo: String,
    pub path: String,
    pub line: u64,
    pub end_line: u64,
    /// "content" (a content term matched), "symbol" (a sym: definition), or "file" (only path/lang/repo terms).
    pub kind: String,
    pub text: String,
}

/// Does `e` hold for one file? `atom(i)` gives the hits of `atoms[i]` there
/// (empty: the atom does not hold); the hits of the positive atoms that made
/// `e` hold are added to `hits` (none from under a negation).
pub fn eval<H>(
    e: &Expr,
    atoms: &[Atom],
    atom: &mut dyn FnMut(usize) -> Vec<H>,
    hits: &mut Vec<H>,
) -> bool {
    fn go<H>(
        e: &Expr,
        atoms: &[Atom],
        positive: bool,
        f: &mut dyn FnMut(usize) -> Vec<H>,
        hits: &mut Vec<H>,
    ) -> bool {
        match e {
            Expr::Atom(a) => {
                let Some(i) = atoms.iter().position(|x| x == a) else {
                    return false;
                };
                let v = f(i);
                let ok = !v.is_empty();
                if ok && positive {
                    hits.extend(v);
                }
                ok
            }
            Expr::Not(x) => {
                let mut sink = Vec::new();
                !go(x, atoms, !positive, f, &mut sink)
            }
            Expr::And(v) => {
                let mut local = Vec::new();
                for x in v {
                    if !go(x, atoms, positive, f, &mut local) {
                        return false;
                    }
                }
                hits.extend(local);
                true
            }
            Expr::Or(v) => {
                let mut any = false;
                for x in v {
                    any |= go(x, atoms, positive, f, hits);
                }
                any
            }
        }
    }
    go(e, atoms, true, atom, hits)
}

/// The hits of `q` in every file of `snaps`, and whether the scan budget
/// ran out first (files past it are not searched). `check_lang` refuses a
/// `lang:` value no loaded file has.
pub fn search(
    q: &Query,
    snaps: &[Snapshot],
    store: &Store,
    check_lang: &dyn Fn(&str) -> Result<(), ToolError>,
    budget: Duration,
) -> Result<(Vec<SearchHit>, bool), ToolError> {
    let t0 = Instant::now();
    let partial = std::sync::atomic::AtomicBool::new(false);
    let atoms = super::atoms(&q.expr);
    let mut compiled = compile_atoms(q, &atoms, store, check_lang, budget)?;
    for c in &compiled {
        if let Compiled::Repo(re) = c {
            if !snaps.iter().any(|s| re.is_match(s.repo())) {
                let mut known: Vec<&str> = snaps.iter().map(|s| s.repo()).collect();
                known.dedup();
                return Err(ToolError::new(
                    codes::UNKNOWN_REPO,
                    format!("repo:{} matches no loaded repo", re.as_str()),
                    format!("use one of: {}", known.join(", ")),
                ));
            }
        }
    }
    // Each content atom's candidate files, from the snapshots' n-gram indexes:
    // a file outside them cannot hold the atom, so it is not scanned for it.
    for c in compiled.iter_mut() {
        if let Compiled::Content(g, cands) = c {
            let plan = grep::plan::plan(g.request());
            if grep::ngram_enabled() && !plan.is_all() {
                *cands = snaps
                    .iter()
                    .map(|s| s.grams.as_ref().and_then(|i| grep::plan::eval(&plan, i)))
                    .collect();
            }
        }
    }
    let files: Vec<((usize, u32), &str, &FileEntry)> = snaps
        .iter()
        .enumerate()
        .flat_map(|(si, s)| {
            s.visible_files()
                .map(move |(fi, f)| ((si, fi), s.repo(), f))
        })
        .collect();
    let hits: Vec<Vec<SearchHit>> = files
        .par_iter()
        .map(|(at, repo, f)| {
            if t0.elapsed() > budget {
                partial.store(true, std::sync::atomic::Ordering::Relaxed);
                return Vec::new();
            }
            file_hits(q, &atoms, &compiled, *at, repo, f)
        })
        .collect();
    Ok((hits.into_iter().flatten().collect(), partial.into_inner()))
}

/// An atom made ready to test files.
enum Compiled {
    /// The matcher, and per snapshot the files that can match (empty or
    /// `None`: every file).
    Content(Box<grep::Compiled>, Vec<Option<grep::plan::Bits>>),
    Path(regex::Regex),
    Repo(regex::Regex),
    Lang(String),
    Sym(std::collections::HashMap<(String, String), Vec<(u64, String)>>),
}

/// Compile every atom once.
fn compile_atoms(
    q: &Query,
    atoms: &[Atom],
    store: &Store,
    check_lang: &dyn Fn(&str) -> Result<(), ToolError>,
    budget: Duration,
) -> Result<Vec<Compiled>, ToolError> {
    let case_sensitive = match q.case {
        Case::Yes => Some(true),
        Case::No => Some(false),
        Case::Auto => None,
    };
    let mut compiled = Vec::new();
    for a in atoms {
        compiled.push(match a {
            Atom::Content { text, regex } => {
                Compiled::Content(
                    Box::new(grep::compile(&GrepRequest {
                    pattern: text.clone(),
                    fixed_string: !regex,
                    case_sensitive,
                    limit: grep::MAX_LIMIT,
                    budget,
                    ..Default::default()
                })
                .map_err(|e| {
                    e.pattern_hint("fix the regex (Rust regex syntax, as ripgrep), or write the text as a \"quoted string\" to match it literally")
                })?),
                    Vec::new(),
                )
            }
            Atom::File(r) | Atom::Repo(r) => {
                let insensitive = match q.case {
                    Case::Yes => false,
                    Case::No => true,
                    Case::Auto => !r.chars().any(|c| c.is_uppercase()),
                };
                let re = regex::RegexBuilder::new(r)
                    .case_insensitive(insensitive)
                    .size_limit(10 << 20)
                    .build()
                    .map_err(|e| {
                        ToolError::new(
                            codes::INVALID_PATTERN,
                            format!("invalid regex in {a:?}: {e}"),
                            "fix the regex",
                        )
                    })?;
                if matches!(a, Atom::File(_)) {
                    Compiled::Path(re)
                } else {
                    Compiled::Repo(re)
                }
            }
            Atom::Lang(l) => {
                check_lang(l)?;
                Compiled::Lang(l.clone())
            }
            Atom::Sym(name) => {
                let rows = store
                    .symbols(
                        name,
                        NameMatch::Ranked,
                        &SymbolFilter::default(),
                        100_000,
                        0,
                    )?
                    .0;
                let mut m: std::collections::HashMap<(String, String), Vec<(u64, String)>> =
                    std::collections::HashMap::new();
                for r in rows {
                    m.entry((r.repo, r.path))
                        .or_default()
                        .push((r.name_line, r.signature));
                }
                Compiled::Sym(m)
            }
        });
    }
    Ok(compiled)
}

/// The hits of the query in one file (none when it does not hold there).
fn file_hits(
    q: &Query,
    atoms: &[Atom],
    compiled: &[Compiled],
    (si, fi): (usize, u32),
    repo: &str,
    f: &FileEntry,
) -> Vec<SearchHit> {
    // Lazily evaluated atom results for this file.
    let mut cache: Vec<Option<Vec<SearchHit>>> = vec![None; compiled.len()];
    let mut eval_atom = |i: usize| -> Vec<SearchHit> {
        if let Some(v) = &cache[i] {
            return v.clone();
        }
        let file_hit = || file_hit(repo, f);
        let v = match &compiled[i] {
            Compiled::Content(_, cands)
                if cands
                    .get(si)
                    .and_then(Option::as_ref)
                    .is_some_and(|b| !grep::plan::has(b, fi)) =>
            {
                Vec::new()
            }
            Compiled::Content(c, _) => c
                .search_file(repo, f)
                .into_iter()
                .map(|m| SearchHit {
                    repo: m.repo,
                    path: m.path,
                    line: m.line,
                    end_line: m.end_line,
                    kind: "content".into(),
                    text: m.text,
                })
                .collect(),
            Compiled::Path(re) => {
                if re.is_match(&f.path) {
                    vec![file_hit()]
                } else {
                    vec![]
                }
            }
            Compiled::Repo(re) => {
                if re.is_match(repo) {
                    vec![file_hit()]
                } else {
                    vec![]
                }
            }
            Compiled::Lang(l) => {
                if &f.language == l {
                    vec![file_hit()]
                } else {
                    vec![]
                }
            }
            Compiled::Sym(m) => m
                .get(&(repo.to_string(), f.path.clone()))
                .map(|v| {
                    v.iter()
                        .map(|(line, sig)| SearchHit {
                            repo: repo.to_string(),
                            path: f.path.clone(),
                            line: *line,
                            end_line: *line,
                            kind: "symbol".into(),
                            text: sig.clone(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        };
        cache[i] = Some(v.clone());
        v
    };
    let mut hits = Vec::new();
    if !crate::query::eval(&q.expr, atoms, &mut eval_atom, &mut hits) {
        return Vec::new();
    }
    // Content and symbol hits beat the whole-file hit.
    if hits.iter().any(|h| h.kind != "file") {
        hits.retain(|h| h.kind != "file");
    }
    hits.sort_by(|a, b| (a.line, &a.kind).cmp(&(b.line, &b.kind)));
    hits.dedup_by(|a, b| a.line == b.line);
    if hits.is_empty() {
        hits.push(file_hit(repo, f));
    }
    hits
}

/// The hit for a file as a whole: its first line.
fn file_hit(repo: &str, f: &FileEntry) -> SearchHit {
    SearchHit {
        repo: repo.to_string(),
        path: f.path.clone(),
        line: 1,
        end_line: 1,
        kind: "file".into(),
        text: f.with_content(|c| c.lines().next().unwrap_or("").chars().take(200).collect()),
    }
}
