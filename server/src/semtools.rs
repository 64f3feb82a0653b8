//! MCP tools of the semantic layer: `search_code` (hybrid BM25 + vectors,
//! query classification and routing), `related_files`, `call_graph`, and the
//! markdown behind the `codeindex://relevant{?path,query}` resource.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use duckdb::types::Value;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::*;
use rmcp::{tool, tool_router, ErrorData};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cursor;
use crate::error::{codes, ToolError};
use crate::semantic::{self, ChunkMeta, Engine, QueryType, Relation};
use crate::snapshot::Snapshot;
use crate::tools::{respond, Server, RESPONSE_BUDGET_BYTES};

pub type RankedPub = Ranked;
/// File → files it imports or calls into.
pub type FileGraph = HashMap<String, Vec<String>>;

/// Candidates taken from each ranker before fusion.
const CANDIDATES: usize = 300;
/// Most results a query keeps (pages are cut from these).
const MAX_RESULTS: usize = 200;
const MAX_LIMIT: u32 = 50;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchCodeArgs {
    /// What you are looking for, in words or as a name: "parse a date string", "QuerySet.filter",
    /// "what calls get_or_create", "from the request handler to the database", "how do serializers work".
    pub query: String,
    /// hybrid (default: keyword + semantic, fused) | semantic | keyword | regex (the grep engine over the same scope).
    #[serde(default)]
    pub mode: Option<String>,
    /// Repository (see list_repos); default the working directory's repo, "all" for every loaded one.
    #[serde(default)]
    pub repo: Option<String>,
    /// Module prefix, e.g. "django.db" or "net/http" (matches the chunks' module_path).
    #[serde(default)]
    pub module: Option<String>,
    /// Language id: python, go, rust, typescript, javascript, java, c, cpp, markdown, ...
    #[serde(default)]
    pub lang: Option<String>,
    /// Repo-relative sub-directory or file.
    #[serde(default)]
    pub path: Option<String>,
    /// include (default; tests weigh 0.5) | exclude | only.
    #[serde(default)]
    pub include_tests: Option<String>,
    /// Results per page, 1..=50 (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// next_cursor of the previous page.
    #[serde(default)]
    #[schemars(length(max = 1024))]
    pub cursor: Option<String>,
    /// Chunks per file (default 1: the best one).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_per_file: Option<u32>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CodeHit {
    pub repo: String,
    pub path: String,
    pub module: Option<String>,
    /// The chunk's span (1-based, inclusive): a function, method, class summary, section or small file.
    pub line: u64,
    pub end_line: u64,
    pub score: f32,
    pub kind: String,
    pub symbol: Option<String>,
    /// A few lines of the chunk (clipped).
    pub snippet: String,
    /// Name of the pattern this file follows, if it belongs to a detected family of similar files.
    pub follows_pattern: Option<String>,
    /// Why it was returned: keyword, semantic, both, definition, or the relation (e.g. "calls get_or_create at line 120").
    pub why: String,
    pub is_test: bool,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Suggestion {
    /// A query to try instead.
    pub query: String,
    /// Keyword results it would give in the same scope.
    pub results: u64,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SearchCodeOut {
    /// symbol | concept | relationship | flow | pattern | regex.
    pub query_type: String,
    /// The mode that ran (a semantic request without vectors runs as keyword; see notice).
    pub mode: String,
    pub results: Vec<CodeHit>,
    pub total_count: u64,
    pub next_cursor: Option<String>,
    pub has_more: bool,
    /// Snapshot id(s) searched.
    pub index_version: String,
    pub searched_repos: Vec<String>,
    /// Whether vectors took part (false: keyword only, see notice).
    pub semantic: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// With no or few results: queries to try, each with its result count.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<Suggestion>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related_modules: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// A ranked result list (before paging), cached per query.
pub struct Ranked {
    query_type: String,
    mode: String,
    hits: Vec<(usize, f32, String)>,
    semantic: bool,
    notice: Option<String>,
}

#[derive(Clone, Copy, PartialEq)]
enum Tests {
    Include,
    Exclude,
    Only,
}

struct Scope {
    snaps: Vec<bool>,
    lang: Option<String>,
    path: Option<String>,
    module: Option<String>,
    tests: Tests,
}

impl Scope {
    fn allows(&self, c: &ChunkMeta, snaps: &[Snapshot]) -> bool {
        if !self.snaps[c.snap as usize] || c.kind == "pattern" && self.path.is_some() {
            return false;
        }
        match self.tests {
            Tests::Exclude if c.is_test => return false,
            Tests::Only if !c.is_test => return false,
            _ => {}
        }
        let f = &snaps[c.snap as usize].files[c.file as usize];
        if let Some(l) = &self.lang {
            if &f.language != l {
                return false;
            }
        }
        if let Some(p) = &self.path {
            if !(f.path == *p || f.path.starts_with(&format!("{p}/")) || p.is_empty()) {
                return false;
            }
        }
        if let Some(m) = &self.module {
            let mp = c.module.as_deref().unwrap_or("");
            let ok = mp == m
                || mp.starts_with(&format!("{m}."))
                || mp.starts_with(&format!("{m}/"))
                || mp.starts_with(&format!("{m}::"));
            if !ok {
                return false;
            }
        }
        true
    }
}

fn snippet_of(text: &str, q_terms: &[String], max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut best = 0;
    if !q_terms.is_empty() {
        let mut best_n = 0;
        for (i, l) in lines.iter().enumerate() {
            let mut t = Vec::new();
            semantic::terms(l, &mut t);
            let n = t.iter().filter(|w| q_terms.contains(w)).count();
            if n > best_n {
                best_n = n;
                best = i;
            }
        }
    }
    let start = best
        .saturating_sub(1)
        .min(lines.len().saturating_sub(max_lines));
    let start = if best < max_lines { 0 } else { start };
    lines
        .iter()
        .skip(start)
        .take(max_lines)
        .map(|l| {
            if l.len() > 160 {
                let mut cut = 160;
                while !l.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!("{}…", &l[..cut])
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn val_str(v: &Value) -> String {
    match v {
        Value::Text(s) => s.clone(),
        Value::Null => String::new(),
        other => format!("{other:?}"),
    }
}

fn val_i64(v: &Value) -> i64 {
    match v {
        Value::TinyInt(x) => *x as i64,
        Value::SmallInt(x) => *x as i64,
        Value::Int(x) => *x as i64,
        Value::BigInt(x) => *x,
        Value::UBigInt(x) => *x as i64,
        Value::UInt(x) => *x as i64,
        Value::HugeInt(x) => *x as i64,
        _ => 0,
    }
}

fn file_index(s: &Snapshot, path: &str) -> Option<u32> {
    s.files
        .binary_search_by(|f| f.path.as_str().cmp(path))
        .ok()
        .map(|i| i as u32)
}

fn repos_in(names: &[String]) -> String {
    names
        .iter()
        .map(|r| crate::store::quote(r))
        .collect::<Vec<_>>()
        .join(",")
}

/// Reciprocal-rank fusion constant k (score of rank r: w / (k + r)).
const RRF_K: f32 = 20.0;
/// Weight of the semantic list in the fusion (keyword: 1).
const RRF_SEMANTIC_WEIGHT: f32 = 2.0;

/// How hybrid mode fuses its two lists.
#[derive(Clone, Copy)]
enum Fusion {
    /// Weighted reciprocal rank: k, semantic weight.
    Rrf(f32, f32),
    /// Max-normalized keyword score and cosine, A on the semantic side.
    Linear(f32),
}

/// The fusion in use: weighted reciprocal rank, k = 20 and semantic weight 2
/// (chosen with `bench/eval_search.py`; plain k = 60 scored MRR@10 0.440 /
/// 0.398 on the Go / Python sets, this 0.491 / 0.414).
/// `CODE_INDEX_FUSION=rrf:K:W` or `linear:A` override it for experiments;
/// the variable is read once.
fn fusion() -> Fusion {
    static F: std::sync::OnceLock<Fusion> = std::sync::OnceLock::new();
    *F.get_or_init(|| {
        let how = std::env::var("CODE_INDEX_FUSION").unwrap_or_default();
        if let Some(a) = how.strip_prefix("linear:").and_then(|a| a.parse().ok()) {
            return Fusion::Linear(a);
        }
        let mut it = how
            .strip_prefix("rrf:")
            .unwrap_or("")
            .split(':')
            .map(|x| x.parse::<f32>().ok());
        let k = it.next().flatten().unwrap_or(RRF_K);
        let w = it.next().flatten().unwrap_or(RRF_SEMANTIC_WEIGHT);
        Fusion::Rrf(k, w)
    })
}

/// Fuse the keyword and semantic lists (see [`fusion`]).
fn fuse(kw: &[(usize, f32)], sem: &[(usize, f32)]) -> Vec<(usize, f32)> {
    match fusion() {
        Fusion::Rrf(k, w) => semantic::rrf(&[(kw, 1.0), (sem, w)], k),
        Fusion::Linear(a) => {
            let mk = kw.iter().map(|x| x.1).fold(f32::MIN, f32::max).max(1e-6);
            let mut acc: HashMap<usize, f32> = HashMap::new();
            for (i, s) in kw {
                *acc.entry(*i).or_insert(0.0) += (1.0 - a) * s / mk;
            }
            for (i, s) in sem {
                *acc.entry(*i).or_insert(0.0) += a * s.max(0.0);
            }
            let mut v: Vec<(usize, f32)> = acc.into_iter().collect();
            let n = v.len();
            semantic::top_k(&mut v, n);
            v
        }
    }
}

/// The names a query gives as identifiers, lowercased: words written as code
/// (`parse_date`, `QuerySet`, `reset()`; of `Header.FileInfo` the last part), every word of a
/// short query (three words or fewer: `queryset filter`), and every word of
/// an explanation question (`how does the autodetector work`). In a sentence
/// such as "Reset clears the block", `Reset` is English, not a name: boosting
/// every `Reset` method for it cost 0.05-0.13 MRR@10 on the Go evaluation.
fn named_identifiers(q: &str, explain: bool) -> Vec<String> {
    let words: Vec<&str> = q.split_whitespace().collect();
    let all = explain || words.len() <= 3;
    let mut out = Vec::new();
    for w in words {
        let w = w.trim_matches(|c: char| {
            !(c.is_alphanumeric() || c == '_' || c == '(' || c == ')' || c == '.' || c == ':')
        });
        let w = w.trim_end_matches('.');
        let code_like = w.contains('_')
            || w.ends_with("()")
            || w.contains("::")
            || (w.contains('.') && !w.ends_with('.'))
            || w.chars().skip(1).any(|c| c.is_uppercase()) && w.chars().any(|c| c.is_lowercase());
        if !(all || code_like) {
            continue;
        }
        // `time.gmtime()` names gmtime; `Header.FileInfo` names FileInfo.
        if let Some(last) = w
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .rfind(|p| !p.is_empty())
        {
            out.push(last.to_lowercase());
        }
    }
    out
}

/// Move a chunk lying inside a higher-ranked class summary of the same file
/// just above that summary when it scores at least 60% of it.
fn specific_first(hits: &mut [(usize, f32, String)], chunks: &[ChunkMeta]) {
    let n = hits.len().min(MAX_RESULTS * 2);
    for i in 0..n {
        let ci = hits[i].0;
        let c = &chunks[ci];
        if c.kind != "class_summary" {
            continue;
        }
        let best_inside = (i + 1..n).find(|&j| {
            let d = &chunks[hits[j].0];
            d.snap == c.snap
                && d.file == c.file
                && d.kind != "pattern"
                && d.start_line >= c.start_line
                && d.end_line <= c.end_line
                && hits[j].1 >= 0.6 * hits[i].1
        });
        if let Some(j) = best_inside {
            hits[i..=j].rotate_right(1);
            hits[i].1 = hits[i + 1].1;
        }
    }
}

/// Default synonyms: a configurable YAML map (`--synonyms FILE` adds to it).
pub const DEFAULT_SYNONYMS: &str = include_str!("synonyms.yaml");

pub fn parse_synonyms(text: &str) -> Result<HashMap<String, Vec<String>>, String> {
    serde_yaml_ng_free(text)
}

/// A tiny YAML subset reader (`word: [a, b]` or `word:` + `- a` lines), so
/// the server needs no YAML dependency for one map.
fn serde_yaml_ng_free(text: &str) -> Result<HashMap<String, Vec<String>>, String> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let mut cur: Option<String> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split(" #").next().unwrap_or("").trim_end();
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(item) = t.strip_prefix("- ") {
            let k = cur
                .clone()
                .ok_or_else(|| format!("line {}: list item without a key", n + 1))?;
            out.entry(k)
                .or_default()
                .push(item.trim().trim_matches(['"', '\'']).to_lowercase());
            continue;
        }
        let (k, v) = t
            .split_once(':')
            .ok_or_else(|| format!("line {}: expected `word: [synonyms]`", n + 1))?;
        let k = k.trim().trim_matches(['"', '\'']).to_lowercase();
        let v = v.trim();
        if v.is_empty() {
            cur = Some(k);
            continue;
        }
        let v = v
            .strip_prefix('[')
            .and_then(|v| v.strip_suffix(']'))
            .ok_or_else(|| format!("line {}: expected a [list]", n + 1))?;
        out.entry(k.clone()).or_default().extend(
            v.split(',')
                .map(|s| s.trim().trim_matches(['"', '\'']).to_lowercase())
                .filter(|s| !s.is_empty()),
        );
        cur = Some(k);
    }
    Ok(out)
}

impl Server {
    fn engine(&self) -> &Engine {
        self.st.engine()
    }

    fn scope(&self, a: &SearchCodeArgs) -> Result<(Scope, Vec<usize>), ToolError> {
        let selected = self.st.select(a.repo.as_deref())?;
        let names: HashSet<&str> = selected.iter().map(|s| s.repo()).collect();
        let idx: Vec<usize> = (0..self.st.snaps.len())
            .filter(|&i| names.contains(self.st.snaps[i].repo()))
            .collect();
        let tests = match a.include_tests.as_deref().unwrap_or("include") {
            "include" => Tests::Include,
            "exclude" => Tests::Exclude,
            "only" => Tests::Only,
            other => {
                return Err(ToolError::invalid_argument(
                    format!("include_tests {other:?} is not one of the values"),
                    "use include (default), exclude or only",
                ))
            }
        };
        let norm = |s: &Option<String>| {
            s.as_ref()
                .map(|p| p.trim().trim_matches('/').to_string())
                .filter(|p| !p.is_empty())
        };
        Ok((
            Scope {
                snaps: (0..self.st.snaps.len()).map(|i| idx.contains(&i)).collect(),
                lang: norm(&a.lang),
                path: norm(&a.path),
                module: norm(&a.module),
                tests,
            },
            idx,
        ))
    }

    /// Weights after fusion: tests down, definitions named in the query up,
    /// navigation docs up for explanation questions.
    fn weight(&self, c: &ChunkMeta, q_idents: &[String], explain: bool) -> f32 {
        let mut w = if c.is_test { 0.5 } else { 1.0 };
        if explain && c.weight > 1.0 {
            w *= c.weight;
        }
        if let Some(s) = &c.symbol {
            let last = s.rsplit(['.', ':']).next().unwrap_or(s).to_lowercase();
            if q_idents.contains(&last) {
                w *= 1.5;
            }
        }
        w
    }

    fn keyword_list(&self, q: &str, allowed: &semantic::Allowed) -> Vec<(usize, f32)> {
        self.engine().bm25.search(q, allowed, CANDIDATES)
    }

    /// Semantic candidates over the selected snapshots; Err = why not available.
    fn semantic_list(
        &self,
        q: &str,
        snaps: &[usize],
        allowed: &semantic::Allowed,
    ) -> Result<Vec<(usize, f32)>, String> {
        let eng = self.engine();
        let mut all = Vec::new();
        let mut why = Vec::new();
        let mut any = false;
        for &si in snaps {
            match &eng.vectors[si] {
                Ok(sv) => match eng.query_vector(&sv.model, q) {
                    Ok(qv) => {
                        any = true;
                        all.extend(eng.semantic(si, &qv, allowed, CANDIDATES));
                    }
                    Err(e) => why.push(format!(
                        "{}: cannot embed the query with {} ({}: {})",
                        self.st.snaps[si].repo(),
                        sv.model,
                        e.code,
                        e.message
                    )),
                },
                Err(e) => why.push(format!("{}: {e}", self.st.snaps[si].repo())),
            }
        }
        if !any {
            return Err(why.join("; "));
        }
        semantic::top_k(&mut all, CANDIDATES);
        Ok(all)
    }

    fn rank(
        &self,
        a: &SearchCodeArgs,
        scope: &Scope,
        snaps: &[usize],
    ) -> Result<Ranked, ToolError> {
        let eng = self.engine();
        let chunks = &eng.chunks;
        let all_snaps = &self.st.snaps;
        let allowed = |i: usize| scope.allows(&chunks[i], all_snaps);
        let mode = a.mode.as_deref().unwrap_or("hybrid").to_string();
        let q = a.query.trim();
        if mode == "regex" {
            return self.rank_regex(q, scope, snaps);
        }
        if !["hybrid", "semantic", "keyword"].contains(&mode.as_str()) {
            return Err(ToolError::invalid_argument(
                format!("mode {mode:?} is not one of the values"),
                "use hybrid (default), semantic, keyword or regex",
            ));
        }
        let repos: Vec<String> = snaps
            .iter()
            .map(|&i| all_snaps[i].repo().to_string())
            .collect();
        let is_symbol = |w: &str| {
            self.st
                .store
                .rows(
                    &format!(
                        "SELECT 1 FROM symbols WHERE name = ? AND repo IN ({}) LIMIT 1",
                        repos_in(&repos)
                    ),
                    &[Value::Text(w.to_string())],
                )
                .map(|r| !r.is_empty())
                .unwrap_or(false)
        };
        let qt = semantic::classify(q, &is_symbol);
        let mut notice = None;
        // Routed answers come first (relations, flows, definitions).
        let mut routed: Vec<(usize, f32, String)> = Vec::new();
        match &qt {
            QueryType::Relationship { relation, target } => {
                routed = self.relation_hits(*relation, target, &repos, &allowed)?;
                if routed.is_empty() {
                    notice = Some(format!(
                        "no {} of {target:?} in the edges table; showing text results instead",
                        relation.name()
                    ));
                }
            }
            QueryType::Symbol(name) => {
                routed = self.definition_hits(name, &repos, &allowed)?;
            }
            QueryType::Pattern(subject) => {
                routed = self.pattern_hits(subject, &allowed);
                if routed.is_empty() {
                    notice = Some(format!(
                        "no detected pattern matches {subject:?}; showing concept results"
                    ));
                }
            }
            QueryType::Flow { from, to } => {
                routed = self.flow_hits(from, to, snaps, &allowed)?;
                if routed.is_empty() {
                    notice = Some(format!(
                        "no import/call path found from {from:?} to {to:?}; showing results for both ends"
                    ));
                }
            }
            _ => {}
        }
        let text_query = match &qt {
            QueryType::Relationship { target, .. } => target.clone(),
            QueryType::Pattern(subject) => subject.clone(),
            QueryType::Flow { from, to } => format!("{from} {to}"),
            _ => q.to_string(),
        };
        let explain = semantic::is_explanation(q) || matches!(qt, QueryType::Pattern(_));
        let mut semantic_on = false;
        let kw = if mode != "semantic" || eng.vectors.iter().all(|v| v.is_err()) {
            self.keyword_list(&text_query, &allowed)
        } else {
            Vec::new()
        };
        let mut sem = Vec::new();
        let mut effective = mode.clone();
        if mode != "keyword" {
            match self.semantic_list(&text_query, snaps, &allowed) {
                Ok(v) => {
                    sem = v;
                    semantic_on = true;
                }
                Err(why) => {
                    let n = format!("semantic search unavailable ({why}); ran keyword only");
                    notice = Some(match notice {
                        Some(p) => format!("{p}; {n}"),
                        None => n,
                    });
                    effective = "keyword".into();
                }
            }
        }
        let kw = if effective == "keyword" && kw.is_empty() && mode == "semantic" {
            self.keyword_list(&text_query, &allowed)
        } else {
            kw
        };
        let kw_set: HashSet<usize> = kw.iter().map(|x| x.0).collect();
        let sem_set: HashSet<usize> = sem.iter().map(|x| x.0).collect();
        let fused: Vec<(usize, f32)> = match effective.as_str() {
            "keyword" => kw.clone(),
            "semantic" => sem.clone(),
            _ => fuse(&kw, &sem),
        };
        // Names to boost. `CODE_INDEX_BOOST=all` (for comparison in
        // bench/eval_search.py) boosts every query word, the earlier rule.
        static BOOST_ALL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let boost_all =
            *BOOST_ALL.get_or_init(|| std::env::var("CODE_INDEX_BOOST").as_deref() == Ok("all"));
        let idents = if boost_all {
            text_query
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .map(|w| w.to_lowercase())
                .collect()
        } else {
            named_identifiers(&text_query, explain)
        };
        let mut scored: Vec<(usize, f32, String)> = fused
            .into_iter()
            .map(|(i, s)| {
                let why = match (kw_set.contains(&i), sem_set.contains(&i)) {
                    (true, true) => "keyword+semantic",
                    (true, false) => "keyword",
                    _ => "semantic",
                };
                (
                    i,
                    s * self.weight(&chunks[i], &idents, explain),
                    why.to_string(),
                )
            })
            .collect();
        scored.sort_by(|a, b| {
            b.1.partial_cmp(&a.1)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.0.cmp(&b.0))
        });
        // Routed hits first, scored above the best text result.
        let top = scored.first().map(|x| x.1).unwrap_or(1.0).max(1e-6);
        let n = routed.len() as f32;
        let mut hits: Vec<(usize, f32, String)> = routed
            .into_iter()
            .enumerate()
            .map(|(r, (i, _, why))| (i, top * (2.0 + (n - r as f32) / n.max(1.0)), why))
            .collect();
        let seen: HashSet<usize> = hits.iter().map(|h| h.0).collect();
        hits.extend(scored.into_iter().filter(|h| !seen.contains(&h.0)));
        Ok(Ranked {
            query_type: qt.label().into(),
            mode: effective,
            hits,
            semantic: semantic_on,
            notice,
        })
    }

    fn rank_regex(&self, q: &str, scope: &Scope, snaps: &[usize]) -> Result<Ranked, ToolError> {
        let eng = self.engine();
        let req = crate::grep::GrepRequest {
            pattern: q.to_string(),
            fixed_string: false,
            case_sensitive: None,
            whole_word: false,
            multiline: false,
            globs: Vec::new(),
            path: scope.path.clone(),
            lang: scope.lang.clone(),
            before: 0,
            after: 0,
            max_count: None,
            limit: 1000,
            budget: crate::tools::SCAN_BUDGET,
            per_file_limit: None,
        };
        let sel: Vec<&Snapshot> = snaps.iter().map(|&i| &self.st.snaps[i]).collect();
        let (compiled, files) = crate::grep::compile_scoped(&req, &sel).map_err(|e| {
            e.pattern_hint("fix the regex (Rust regex syntax, as ripgrep), or use mode keyword for plain words")
        })?;
        let page = crate::grep::scan_up_to(&files, &compiled, (0, 0), 5000);
        let mut per_chunk: HashMap<usize, (f32, u64)> = HashMap::new();
        for m in &page.matches {
            let Some(si) = self.st.snaps.iter().position(|s| s.repo() == m.repo) else {
                continue;
            };
            let Some(fi) = file_index(&self.st.snaps[si], &m.path) else {
                continue;
            };
            if let Some(ci) = eng.chunk_at(si as u32, fi, m.line as u32) {
                if scope.allows(&eng.chunks[ci], &self.st.snaps) {
                    let e = per_chunk.entry(ci).or_insert((0.0, m.line));
                    e.0 += 1.0;
                }
            }
        }
        let mut hits: Vec<(usize, f32, String)> = per_chunk
            .into_iter()
            .map(|(ci, (n, line))| (ci, n, format!("regex match at line {line}")))
            .collect();
        hits.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0)));
        Ok(Ranked {
            query_type: "regex".into(),
            mode: "regex".into(),
            hits,
            semantic: false,
            notice: page.partial.then(|| {
                "the scan budget ran out: results are partial; narrow path or lang".to_string()
            }),
        })
    }

    /// Pattern chunks matching a subject, each followed by its canonical file.
    fn pattern_hits(
        &self,
        subject: &str,
        allowed: &semantic::Allowed,
    ) -> Vec<(usize, f32, String)> {
        let eng = self.engine();
        let only = |i: usize| eng.chunks[i].kind == "pattern" && allowed(i);
        let mut out = Vec::new();
        for (ci, _) in eng.bm25.search(subject, &only, 3) {
            let c = &eng.chunks[ci];
            let name = c.symbol.as_deref().unwrap_or_default();
            out.push((ci, 1.0, format!("pattern: {name}")));
            if let Some(&(lo, hi)) = eng.file_chunks.get(&(c.snap, c.file)) {
                let best = (lo..hi)
                    .filter(|&i| allowed(i))
                    .find(|&i| {
                        matches!(eng.chunks[i].kind, "definition" | "class_summary" | "file")
                    })
                    .unwrap_or(lo);
                out.push((best, 1.0, format!("canonical example of pattern: {name}")));
            }
        }
        out
    }

    /// Chunks holding the definitions of `name`.
    fn definition_hits(
        &self,
        name: &str,
        repos: &[String],
        allowed: &semantic::Allowed,
    ) -> Result<Vec<(usize, f32, String)>, ToolError> {
        let last = name.rsplit(['.', ':']).next().unwrap_or(name);
        let rows = self.st.store.rows(
            &format!(
                "SELECT repo, path, start_line, qualified_name, kind FROM symbols WHERE (name = ? OR qualified_name = ? OR ends_with(qualified_name, ?)) AND repo IN ({}) \
                 AND kind NOT IN ('field', 'variable') \
                 ORDER BY CASE WHEN qualified_name = ? THEN 0 WHEN ends_with(qualified_name, ?) THEN 1 ELSE 2 END, is_test, repo, path, start_line LIMIT 50",
                repos_in(repos)
            ),
            &[
                Value::Text(last.to_string()),
                Value::Text(name.to_string()),
                Value::Text(format!(".{name}")),
                Value::Text(name.to_string()),
                Value::Text(format!(".{name}")),
            ],
        )?;
        Ok(self.rows_to_chunks(rows, allowed, |r| {
            format!("definition of {} ({})", val_str(&r[3]), val_str(&r[4]))
        }))
    }

    /// Map (repo, path, line, ...) rows to distinct chunks.
    fn rows_to_chunks(
        &self,
        rows: Vec<Vec<Value>>,
        allowed: &semantic::Allowed,
        why: impl Fn(&[Value]) -> String,
    ) -> Vec<(usize, f32, String)> {
        let eng = self.engine();
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for r in rows {
            let repo = val_str(&r[0]);
            let Some(si) = self.st.snaps.iter().position(|s| s.repo() == repo) else {
                continue;
            };
            let Some(fi) = file_index(&self.st.snaps[si], &val_str(&r[1])) else {
                continue;
            };
            let line = val_i64(&r[2]).max(1) as u32;
            if let Some(ci) = eng.chunk_at(si as u32, fi, line) {
                if allowed(ci) && seen.insert(ci) {
                    out.push((ci, 1.0, why(&r)));
                }
            }
        }
        out
    }

    fn relation_hits(
        &self,
        rel: Relation,
        target: &str,
        repos: &[String],
        allowed: &semantic::Allowed,
    ) -> Result<Vec<(usize, f32, String)>, ToolError> {
        let last = target
            .rsplit(['.', ':', '/'])
            .next()
            .unwrap_or(target)
            .to_string();
        let rs = repos_in(repos);
        let t = Value::Text(last.clone());
        let dotted = Value::Text(format!(".{last}"));
        let (sql, params): (String, Vec<Value>) = match rel {
            Relation::Callers => (
                format!("SELECT repo, src_path, line, coalesce(src_symbol, ''), dst_name FROM edges WHERE kind = 'calls' AND (dst_name = ? OR ends_with(dst_name, ?)) AND repo IN ({rs}) ORDER BY repo, src_path, line LIMIT 2000"),
                vec![t, dotted],
            ),
            Relation::Subclasses => (
                format!("SELECT repo, src_path, line, coalesce(src_symbol, ''), dst_name FROM edges WHERE kind IN ('extends', 'implements') AND (dst_name = ? OR ends_with(dst_name, ?)) AND repo IN ({rs}) ORDER BY repo, src_path, line LIMIT 2000"),
                vec![t, dotted],
            ),
            Relation::Importers => (
                format!("SELECT repo, path, line, coalesce(enclosing_symbol, ''), name FROM refs WHERE ref_kind = 'import' AND name = ? AND repo IN ({rs}) \
                         UNION ALL SELECT repo, src_path, line, '', dst_name FROM edges WHERE kind = 'imports' AND (dst_name = ? OR ends_with(dst_name, ?) OR ends_with(dst_name, ?) OR ends_with(coalesce(dst_path, ''), ?)) AND repo IN ({rs}) \
                         ORDER BY 1, 2, 3 LIMIT 2000"),
                vec![t.clone(), t, dotted, Value::Text(format!("/{last}")), Value::Text(last.clone())],
            ),
            Relation::Callees => (
                format!("SELECT s.repo, s.path, s.start_line, e.src_symbol, s.qualified_name FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id \
                         WHERE e.kind = 'calls' AND (e.src_symbol = ? OR ends_with(e.src_symbol, ?)) AND e.repo IN ({rs}) ORDER BY e.repo, e.src_path, e.line LIMIT 2000"),
                vec![Value::Text(target.to_string()), dotted],
            ),
            Relation::Imports => (
                format!("SELECT repo, dst_path, 1, src_path, dst_name FROM edges WHERE kind = 'imports' AND dst_path IS NOT NULL AND (src_path = ? OR contains(src_path, ?)) AND repo IN ({rs}) ORDER BY repo, src_path, line LIMIT 2000"),
                vec![Value::Text(target.to_string()), Value::Text(last.clone())],
            ),
        };
        let rows = self.st.store.rows(&sql, &params)?;
        Ok(self.rows_to_chunks(rows, allowed, |r| match rel {
            Relation::Callers => format!("calls {} at line {}", val_str(&r[4]), val_i64(&r[2])),
            Relation::Subclasses => format!(
                "extends/implements {} at line {}",
                val_str(&r[4]),
                val_i64(&r[2])
            ),
            Relation::Importers => format!("imports {} at line {}", val_str(&r[4]), val_i64(&r[2])),
            Relation::Callees => format!("called by {}", val_str(&r[3])),
            Relation::Imports => format!("imported by {}", val_str(&r[3])),
        }))
    }

    /// File graph (imports and resolved calls) of one snapshot (cached).
    fn file_graph(&self, si: usize) -> Result<Arc<FileGraph>, ToolError> {
        if let Some(g) = crate::guard::lock(&self.st.file_graphs).get(&si) {
            return Ok(g.clone());
        }
        let g = Arc::new(self.build_file_graph(si)?);
        crate::guard::lock(&self.st.file_graphs).insert(si, g.clone());
        Ok(g)
    }

    fn build_file_graph(&self, si: usize) -> Result<FileGraph, ToolError> {
        let repo = self.st.snaps[si].repo();
        let rows = self.st.store.rows(
            "SELECT DISTINCT e.src_path, coalesce(s.path, e.dst_path) FROM edges e LEFT JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id \
             WHERE e.repo = ? AND e.resolved AND e.kind IN ('imports', 'calls') AND coalesce(s.path, e.dst_path) IS NOT NULL",
            &[Value::Text(repo.to_string())],
        )?;
        let mut g: HashMap<String, Vec<String>> = HashMap::new();
        let files = &self.st.snaps[si].files;
        for r in rows {
            let (a, b) = (val_str(&r[0]), val_str(&r[1]));
            if a == b {
                continue;
            }
            if file_index(&self.st.snaps[si], &b).is_some() {
                g.entry(a).or_default().push(b);
            } else {
                // A package directory (Go): link to its non-test files.
                let prefix = format!("{b}/");
                let start = files.partition_point(|f| f.path.as_str() < prefix.as_str());
                for f in files[start..]
                    .iter()
                    .take_while(|f| f.path.starts_with(&prefix))
                    .filter(|f| !f.is_test && !f.path[prefix.len()..].contains('/'))
                    .take(20)
                {
                    g.entry(a.clone()).or_default().push(f.path.clone());
                }
            }
        }
        Ok(g)
    }

    fn flow_hits(
        &self,
        from: &str,
        to: &str,
        snaps: &[usize],
        allowed: &semantic::Allowed,
    ) -> Result<Vec<(usize, f32, String)>, ToolError> {
        let eng = self.engine();
        let seeds = |q: &str| -> Vec<usize> {
            let kw = self.keyword_list(q, allowed);
            let sem = self.semantic_list(q, snaps, allowed).unwrap_or_default();
            let f = fuse(&kw, &sem);
            let mut seen = HashSet::new();
            f.into_iter()
                .map(|x| x.0)
                .filter(|&c| seen.insert((eng.chunks[c].snap, eng.chunks[c].file)))
                .take(8)
                .collect()
        };
        let (a, b) = (seeds(from), seeds(to));
        for &si in snaps {
            let sn = &self.st.snaps[si];
            let paths = |v: &[usize]| -> Vec<String> {
                v.iter()
                    .filter(|&&c| eng.chunks[c].snap as usize == si)
                    .map(|&c| sn.files[eng.chunks[c].file as usize].path.clone())
                    .collect()
            };
            let (src, dst) = (paths(&a), paths(&b));
            if src.is_empty() || dst.is_empty() {
                continue;
            }
            let g = self.file_graph(si)?;
            let dst_set: HashSet<&String> = dst.iter().collect();
            // BFS (directed, then undirected) from any source to any destination.
            for undirected in [false, true] {
                let mut adj: FileGraph = (*g).clone();
                if undirected {
                    for (k, vs) in g.iter() {
                        for v in vs {
                            adj.entry(v.clone()).or_default().push(k.clone());
                        }
                    }
                }
                let mut prev: HashMap<String, Option<String>> = HashMap::new();
                let mut dq = VecDeque::new();
                for s in &src {
                    prev.insert(s.clone(), None);
                    dq.push_back((s.clone(), 0));
                }
                let mut found = None;
                while let Some((n, d)) = dq.pop_front() {
                    if dst_set.contains(&n) {
                        found = Some(n);
                        break;
                    }
                    if d >= 6 {
                        continue;
                    }
                    for m in adj.get(&n).into_iter().flatten() {
                        if !prev.contains_key(m) {
                            prev.insert(m.clone(), Some(n.clone()));
                            dq.push_back((m.clone(), d + 1));
                        }
                    }
                }
                if let Some(end) = found {
                    let mut path = vec![end.clone()];
                    let mut cur = end;
                    while let Some(Some(p)) = prev.get(&cur) {
                        path.push(p.clone());
                        cur = p.clone();
                    }
                    path.reverse();
                    let q = format!("{from} {to}");
                    let hops = path.len();
                    let mut out = Vec::new();
                    for (step, p) in path.iter().enumerate() {
                        let Some(fi) = file_index(sn, p) else {
                            continue;
                        };
                        let Some(&(lo, hi)) = eng.file_chunks.get(&(si as u32, fi)) else {
                            continue;
                        };
                        let allowed_here = |c: usize| c >= lo && c < hi && allowed(c);
                        let best = eng
                            .bm25
                            .search(&q, &allowed_here, 1)
                            .first()
                            .map(|x| x.0)
                            .unwrap_or(lo);
                        out.push((
                            best,
                            1.0,
                            format!(
                                "flow step {}/{} ({})",
                                step + 1,
                                hops,
                                if undirected {
                                    "import/call graph, either direction"
                                } else {
                                    "imports/calls"
                                }
                            ),
                        ));
                    }
                    return Ok(out);
                }
            }
        }
        Ok(Vec::new())
    }

    fn suggestions(&self, q: &str, scope: &Scope) -> (Vec<Suggestion>, Vec<String>) {
        let eng = self.engine();
        let allowed = |i: usize| scope.allows(&eng.chunks[i], &self.st.snaps);
        let syn = self.st.synonyms();
        let words: Vec<String> = q
            .split_whitespace()
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
                    .to_lowercase()
            })
            .filter(|w| !w.is_empty())
            .collect();
        let mut out: Vec<Suggestion> = Vec::new();
        for (i, w) in words.iter().enumerate() {
            let alts = syn
                .get(w)
                .or_else(|| syn.get(&semantic::stem(w)))
                .cloned()
                .unwrap_or_default();
            for alt in alts {
                let mut ws = words.clone();
                ws[i] = alt;
                let s = ws.join(" ");
                let n = eng.bm25.count(&s, &allowed) as u64;
                if n > 0 && !out.iter().any(|o| o.query == s) {
                    out.push(Suggestion {
                        query: s,
                        results: n,
                    });
                }
            }
        }
        // Wider scopes.
        if scope.tests == Tests::Exclude || scope.tests == Tests::Only {
            let n = eng
                .bm25
                .count(q, &|i| scope.snaps[eng.chunks[i].snap as usize]) as u64;
            if n > 0 {
                out.push(Suggestion {
                    query: format!("{q} (include_tests: include)"),
                    results: n,
                });
            }
        }
        if scope.path.is_some() || scope.lang.is_some() || scope.module.is_some() {
            let n = eng
                .bm25
                .count(q, &|i| scope.snaps[eng.chunks[i].snap as usize]) as u64;
            if n > 0 {
                out.push(Suggestion {
                    query: format!("{q} (without path/lang/module)"),
                    results: n,
                });
            }
        }
        out.sort_by(|a, b| b.results.cmp(&a.results).then(a.query.cmp(&b.query)));
        out.truncate(6);
        // Modules whose names share a word with the query.
        let qt = eng.bm25.query_terms(q);
        let mut mods: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for c in &eng.chunks {
            if let Some(m) = &c.module {
                if scope.snaps[c.snap as usize] && seen.insert(&**m) {
                    let mut t = Vec::new();
                    semantic::terms(m, &mut t);
                    if t.iter().any(|x| qt.contains(x)) {
                        mods.push(m.to_string());
                    }
                }
            }
        }
        mods.sort();
        mods.truncate(8);
        (out, mods)
    }

    pub(crate) fn search_code_impl(
        &self,
        a: SearchCodeArgs,
    ) -> Result<(SearchCodeOut, String), ToolError> {
        if a.query.trim().is_empty() {
            return Err(ToolError::invalid_argument(
                "empty query",
                "describe what you look for (\"parse a date string\") or name it (\"QuerySet.filter\")",
            ));
        }
        let limit = a.limit.unwrap_or(10);
        if limit == 0 || limit > MAX_LIMIT {
            return Err(ToolError::invalid_argument(
                format!("limit {limit} is out of range"),
                format!("use 1..={MAX_LIMIT} and page with next_cursor"),
            ));
        }
        let per_file = a.max_per_file.unwrap_or(1).max(1) as usize;
        let (scope, snaps) = self.scope(&a)?;
        let ids: Vec<&str> = snaps.iter().map(|&i| self.st.snaps[i].id()).collect();
        let norm = format!(
            "q={:?} m={:?} mod={:?} l={:?} p={:?} t={:?} pf={per_file}",
            a.query.trim(),
            a.mode.as_deref().unwrap_or("hybrid"),
            scope.module,
            scope.lang,
            scope.path,
            a.include_tests.as_deref().unwrap_or("include"),
        );
        let fp = cursor::fingerprint("search_code", &norm, &ids);
        let offset = crate::tools::offset_of(a.cursor.as_deref(), &fp)?;
        let ranked = {
            let cached = self.st.code_cache.get(&fp);
            match cached {
                Some(r) => r,
                None => {
                    let mut r = self.rank(&a, &scope, &snaps)?;
                    // A class summary yields to a chunk inside it that scores nearly
                    // as well (the method the query is about is the better answer).
                    let eng = self.engine();
                    specific_first(&mut r.hits, &eng.chunks);
                    // One best chunk per file unless asked.
                    let mut per: HashMap<(u32, u32, bool), usize> = HashMap::new();
                    r.hits.retain(|(ci, _, _)| {
                        let c = &eng.chunks[*ci];
                        // A pattern chunk does not take its canonical file's place.
                        let n = per
                            .entry((c.snap, c.file, c.kind == "pattern"))
                            .or_insert(0);
                        *n += 1;
                        *n <= per_file
                    });
                    r.hits.truncate(MAX_RESULTS);
                    let r = Arc::new(r);
                    self.st.code_cache.put(fp.clone(), r.clone());
                    r
                }
            }
        };
        let eng = self.engine();
        let q_terms = eng.bm25.query_terms(&a.query);
        let total = ranked.hits.len();
        let mut results = Vec::new();
        let mut text = String::new();
        let mut i = offset;
        while i < total && results.len() < limit as usize {
            let (ci, score, why) = &ranked.hits[i];
            let c = &eng.chunks[*ci];
            let snap = &self.st.snaps[c.snap as usize];
            let f = &snap.files[c.file as usize];
            let hit = CodeHit {
                repo: snap.repo().to_string(),
                path: f.path.clone(),
                module: c.module.as_deref().map(str::to_string),
                line: c.start_line as u64,
                end_line: c.end_line as u64,
                score: (*score * 10000.0).round() / 10000.0,
                kind: c.kind.to_string(),
                symbol: c.symbol.as_deref().map(str::to_string),
                snippet: semantic::with_chunk_text(c, &self.st.snaps, |body| {
                    snippet_of(body, &q_terms, 6)
                }),
                follows_pattern: self.st.pattern_of(c.snap, c.file),
                why: why.clone(),
                is_test: c.is_test,
            };
            let entry = format!(
                "{}:{}-{} [{}{}] {:.4} ({})\n{}\n\n",
                hit.path,
                hit.line,
                hit.end_line,
                hit.kind,
                hit.symbol
                    .as_deref()
                    .map(|s| format!(" {s}"))
                    .unwrap_or_default(),
                hit.score,
                hit.why,
                hit.snippet
            );
            if !results.is_empty() && text.len() + entry.len() > RESPONSE_BUDGET_BYTES {
                break;
            }
            text.push_str(&entry);
            results.push(hit);
            i += 1;
        }
        let has_more = i < total;
        let next_cursor = has_more.then(|| cursor::encode(&fp, &[i as u64]));
        let (suggestions, related_modules, hint) = if total < 3 && offset == 0 {
            let (s, m) = self.suggestions(&a.query, &scope);
            let hint = if total == 0 {
                Some("No results. Try a suggestion below, mode: keyword for exact words or semantic for concepts, a wider path/module, include_tests: include, or grep for exact text.".to_string())
            } else {
                Some("Few results: the suggestions may find more.".to_string())
            };
            (s, m, hint)
        } else {
            (Vec::new(), Vec::new(), None)
        };
        let header = format!(
            "{} results ({} query, {} mode{}){}\n",
            total,
            ranked.query_type,
            ranked.mode,
            if ranked.semantic {
                ""
            } else {
                ", keyword only"
            },
            ranked
                .notice
                .as_ref()
                .map(|n| format!("\nnote: {n}"))
                .unwrap_or_default()
        );
        let mut full = header + &text;
        if let Some(h) = &hint {
            full.push_str(&format!("{h}\n"));
        }
        for s in &suggestions {
            full.push_str(&format!("try: {} ({} results)\n", s.query, s.results));
        }
        if !related_modules.is_empty() {
            full.push_str(&format!(
                "related modules: {}\n",
                related_modules.join(", ")
            ));
        }
        if let Some(c) = &next_cursor {
            full.push_str(&format!("more: cursor {c}\n"));
        }
        let out = SearchCodeOut {
            query_type: ranked.query_type.clone(),
            mode: ranked.mode.clone(),
            results,
            total_count: total as u64,
            next_cursor,
            has_more,
            index_version: ids.join(","),
            searched_repos: snaps
                .iter()
                .map(|&i| self.st.snaps[i].repo().to_string())
                .collect(),
            semantic: ranked.semantic,
            notice: ranked.notice.clone(),
            suggestions,
            related_modules,
            hint,
        };
        Ok((out, full))
    }
}

// ------------------------------------------------------------ related files

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RelatedFilesArgs {
    /// Repo-relative file path.
    pub path: String,
    #[serde(default)]
    pub repo: Option<String>,
    /// Most files (default 15, at most 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RelatedFile {
    pub repo: String,
    pub path: String,
    pub score: f32,
    /// imports, imported by, calls, called by, extends, extended by, shares symbols, its test, tested code.
    pub reasons: Vec<String>,
    pub line: u64,
    pub end_line: u64,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RelatedFilesOut {
    pub repo: String,
    pub path: String,
    pub files: Vec<RelatedFile>,
    pub total_count: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CallGraphArgs {
    /// Function or method name, optionally qualified: "save", "Model.save".
    pub symbol: String,
    /// callers (default) | callees.
    #[serde(default)]
    pub direction: Option<String>,
    /// Hops, 1..=3 (default 1).
    #[serde(default)]
    #[schemars(range(min = 1, max = 3))]
    pub depth: Option<u32>,
    #[serde(default)]
    pub repo: Option<String>,
    /// Restrict the root definitions to this sub-directory or file.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CallNode {
    pub repo: String,
    pub symbol: String,
    pub path: String,
    pub line: u64,
    pub end_line: u64,
    pub depth: u32,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CallEdge {
    /// Caller (qualified name; "<file>" for file-level code).
    pub from: String,
    /// Callee as resolved (qualified name) or as written.
    pub to: String,
    pub path: String,
    /// Line of the call in `path`.
    pub line: u64,
    pub resolved: bool,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CallGraphOut {
    pub roots: Vec<CallNode>,
    pub nodes: Vec<CallNode>,
    pub edges: Vec<CallEdge>,
    /// The node cap was reached.
    pub truncated: bool,
}

const MAX_NODES: usize = 100;

impl Server {
    fn one_repo(&self, repo: Option<&str>, path: &str) -> Result<usize, ToolError> {
        let sel = self.st.select(repo)?;
        let hits: Vec<usize> = (0..self.st.snaps.len())
            .filter(|&i| sel.iter().any(|s| s.repo() == self.st.snaps[i].repo()))
            .filter(|&i| file_index(&self.st.snaps[i], path).is_some())
            .collect();
        match hits.first() {
            Some(&i) => Ok(i),
            None => {
                let base = path.rsplit('/').next().unwrap_or(path);
                Err(ToolError::new(
                    codes::NOT_FOUND,
                    format!("file {path:?} is not in the selected snapshot(s)"),
                    format!("paths are repo-relative; find it with search_files {{\"pattern\": \"**/{base}\"}}"),
                ))
            }
        }
    }

    pub(crate) fn related_files_impl(
        &self,
        a: RelatedFilesArgs,
    ) -> Result<(RelatedFilesOut, String), ToolError> {
        let path = a
            .path
            .trim()
            .trim_start_matches("./")
            .trim_matches('/')
            .to_string();
        let limit = a.limit.unwrap_or(15).clamp(1, 50) as usize;
        let si = self.one_repo(a.repo.as_deref(), &path)?;
        let snap = &self.st.snaps[si];
        let repo = snap.repo().to_string();
        let dir = path.rsplit_once('/').map(|x| x.0).unwrap_or("");
        let r = Value::Text(repo.clone());
        let p = Value::Text(path.clone());
        let d = Value::Text(dir.to_string());
        let mut score: HashMap<String, (f32, Vec<String>)> = HashMap::new();
        let mut add = |f: String, s: f32, why: String| {
            if f == path || f.is_empty() {
                return;
            }
            let e = score.entry(f).or_insert((0.0, Vec::new()));
            e.0 += s;
            if !e.1.contains(&why) && e.1.len() < 4 {
                e.1.push(why);
            }
        };
        let st = &self.st.store;
        // Imports (resolved files; Go: package directories).
        for row in st.rows("SELECT dst_path, count(*) FROM edges WHERE repo = ? AND src_path = ? AND kind = 'imports' AND dst_path IS NOT NULL GROUP BY 1", &[r.clone(), p.clone()])? {
            let dst = val_str(&row[0]);
            if file_index(snap, &dst).is_some() {
                add(dst, 3.0, "imports".into());
            } else {
                let prefix = format!("{dst}/");
                for f in snap.files.iter().filter(|f| f.path.starts_with(&prefix) && !f.is_test && !f.path[prefix.len()..].contains('/')).take(3) {
                    add(f.path.clone(), 1.5, format!("imports package {dst}"));
                }
            }
        }
        for row in st.rows("SELECT src_path, count(*) FROM edges WHERE repo = ? AND kind = 'imports' AND (dst_path = ? OR dst_path = ?) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 200", &[r.clone(), p.clone(), d.clone()])? {
            add(val_str(&row[0]), 2.0, "imported by".into());
        }
        for row in st.rows("SELECT s.path, count(*), min(s.name) FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id WHERE e.repo = ? AND e.src_path = ? AND e.kind = 'calls' GROUP BY 1", &[r.clone(), p.clone()])? {
            let n = val_i64(&row[1]) as f32;
            add(val_str(&row[0]), 1.0 + n.ln_1p(), format!("calls {} ({}x)", val_str(&row[2]), n));
        }
        for row in st.rows("SELECT e.src_path, count(*), min(s.name) FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id WHERE e.repo = ? AND s.path = ? AND e.kind = 'calls' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 200", &[r.clone(), p.clone()])? {
            let n = val_i64(&row[1]) as f32;
            add(val_str(&row[0]), 1.0 + n.ln_1p(), format!("called by ({}x, e.g. {})", n, val_str(&row[2])));
        }
        for row in st.rows("SELECT s.path, min(e.dst_name) FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id WHERE e.repo = ? AND e.src_path = ? AND e.kind IN ('extends', 'implements') GROUP BY 1", &[r.clone(), p.clone()])? {
            add(val_str(&row[0]), 2.5, format!("extends {}", val_str(&row[1])));
        }
        for row in st.rows("SELECT e.src_path, min(s.name) FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id WHERE e.repo = ? AND s.path = ? AND e.kind IN ('extends', 'implements') GROUP BY 1 LIMIT 100", &[r.clone(), p.clone()])? {
            add(val_str(&row[0]), 2.0, format!("extends its {}", val_str(&row[1])));
        }
        // Files using names this file defines (distinctive names only: defined in at most 2 files).
        for row in st.rows(
            "WITH mine AS (SELECT DISTINCT name FROM symbols WHERE repo = ? AND path = ? AND parent_id IS NULL AND length(name) > 3), \
             rare AS (SELECT m.name FROM mine m JOIN symbols s ON s.repo = ? AND s.name = m.name GROUP BY 1 HAVING count(DISTINCT s.path) <= 2) \
             SELECT r.path, count(DISTINCT r.name), min(r.name) FROM refs r JOIN rare USING (name) WHERE r.repo = ? AND r.path <> ? GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 100",
            &[r.clone(), p.clone(), r.clone(), r.clone(), p.clone()],
        )? {
            let n = val_i64(&row[1]) as f32;
            add(val_str(&row[0]), 0.5 + 0.5 * n.min(6.0), format!("uses its {} ({} names)", val_str(&row[2]), n));
        }
        // Tests by name: test_x.py, x_test.go, x.test.ts, x_spec.rb, tests/x.rs, XTest.java.
        let base = path.rsplit('/').next().unwrap_or(&path);
        let stem = base.split('.').next().unwrap_or(base).to_string();
        let this_is_test = snap.files[file_index(snap, &path).unwrap() as usize].is_test;
        if stem.len() >= 3 {
            let sl = stem.to_lowercase();
            for f in &snap.files {
                if f.path == path {
                    continue;
                }
                let fb = f.path.rsplit('/').next().unwrap_or(&f.path);
                let fs = fb.split('.').next().unwrap_or(fb).to_lowercase();
                let candidates = [
                    format!("test_{sl}"),
                    format!("{sl}_test"),
                    format!("{sl}test"),
                    format!("tests_{sl}"),
                    format!("{sl}_spec"),
                    format!("{sl}.test"),
                ];
                if !this_is_test
                    && f.is_test
                    && (candidates.contains(&fs)
                        || (fb.to_lowercase().starts_with(&format!("{sl}."))
                            && fb.contains("test")))
                {
                    add(f.path.clone(), 3.0, "its test".into());
                } else if this_is_test && !f.is_test {
                    let tl = stem.to_lowercase();
                    let core = tl
                        .trim_start_matches("test_")
                        .trim_end_matches("_test")
                        .trim_end_matches("test")
                        .trim_end_matches("_spec");
                    if core.len() >= 3 && fs == core {
                        add(f.path.clone(), 3.0, "code under test".into());
                    }
                }
            }
        }
        let mut files: Vec<(String, (f32, Vec<String>))> = score.into_iter().collect();
        files.sort_by(|a, b| b.1 .0.partial_cmp(&a.1 .0).unwrap().then(a.0.cmp(&b.0)));
        let total = files.len();
        let eng = self.engine();
        let out_files: Vec<RelatedFile> = files
            .into_iter()
            .take(limit)
            .map(|(f, (s, reasons))| {
                let (line, end_line) = file_index(snap, &f)
                    .and_then(|fi| eng.file_chunks.get(&(si as u32, fi)))
                    .map(|&(lo, hi)| {
                        let c = &eng.chunks[lo..hi];
                        (
                            c.iter().map(|c| c.start_line).min().unwrap_or(1) as u64,
                            c.iter().map(|c| c.end_line).max().unwrap_or(1) as u64,
                        )
                    })
                    .unwrap_or((1, 1));
                RelatedFile {
                    repo: repo.clone(),
                    path: f,
                    score: (s * 100.0).round() / 100.0,
                    reasons,
                    line,
                    end_line,
                }
            })
            .collect();
        let mut text = format!(
            "{} files related to {path} (showing {}):\n",
            total,
            out_files.len()
        );
        for f in &out_files {
            text.push_str(&format!(
                "{} ({:.1}): {}\n",
                f.path,
                f.score,
                f.reasons.join("; ")
            ));
        }
        if out_files.is_empty() {
            text.push_str("No import, call, inheritance or test relations found. Try search_code with the file's main symbol, or grep for its module name.\n");
        }
        Ok((
            RelatedFilesOut {
                repo,
                path,
                files: out_files,
                total_count: total as u64,
            },
            text,
        ))
    }

    pub(crate) fn call_graph_impl(
        &self,
        a: CallGraphArgs,
    ) -> Result<(CallGraphOut, String), ToolError> {
        let dir = a.direction.as_deref().unwrap_or("callers");
        if dir != "callers" && dir != "callees" {
            return Err(ToolError::invalid_argument(
                format!("direction {dir:?} is not one of the values"),
                "use callers (who calls it) or callees (what it calls)",
            ));
        }
        let depth = a.depth.unwrap_or(1);
        if !(1..=3).contains(&depth) {
            return Err(ToolError::invalid_argument(
                format!("depth {depth} is out of range"),
                "use 1, 2 or 3",
            ));
        }
        let sel = self.st.select(a.repo.as_deref())?;
        let repos: Vec<String> = sel.iter().map(|s| s.repo().to_string()).collect();
        let name = a.symbol.trim();
        if name.is_empty() {
            return Err(ToolError::invalid_argument(
                "symbol is empty",
                "name a function or method: \"save\", or qualified \"Model.save\"",
            ));
        }
        let last = name.rsplit(['.', ':']).next().unwrap_or(name);
        let (cond, mut params) = crate::store::definition_condition(name);
        let mut sql = format!(
            "SELECT repo, symbol_id, qualified_name, path, start_line, end_line FROM symbols WHERE {cond} \
             AND kind IN ('function', 'method', 'constructor', 'macro') AND repo IN ({})",
            repos_in(&repos)
        );
        if let Some(p) = a
            .path
            .as_deref()
            .map(|p| p.trim_matches('/'))
            .filter(|p| !p.is_empty())
        {
            sql.push_str(" AND (path = ? OR starts_with(path, ?))");
            params.push(Value::Text(p.into()));
            params.push(Value::Text(format!("{p}/")));
        }
        sql.push_str(" ORDER BY is_test, repo, path, start_line LIMIT 20");
        let node = |r: &[Value], d: u32| CallNode {
            repo: val_str(&r[0]),
            symbol: val_str(&r[2]),
            path: val_str(&r[3]),
            line: val_i64(&r[4]) as u64,
            end_line: val_i64(&r[5]) as u64,
            depth: d,
        };
        let roots_rows = self.st.store.rows(&sql, &params)?;
        if roots_rows.is_empty() {
            let similar = self.st.store.similar_names(last, 5);
            let only = "call graphs cover functions, methods, constructors and macros; search_symbols finds names by prefix or substring";
            return Err(ToolError::new(
                codes::NOT_FOUND,
                format!("no function or method named {name:?}"),
                if similar.is_empty() {
                    only.to_string()
                } else {
                    format!("similar names: {} ({only})", similar.join(", "))
                },
            ));
        }
        let roots: Vec<CallNode> = roots_rows.iter().map(|r| node(r, 0)).collect();
        let mut frontier: Vec<(String, i64, String)> = roots_rows
            .iter()
            .map(|r| (val_str(&r[0]), val_i64(&r[1]), val_str(&r[2])))
            .collect();
        let mut seen: HashSet<(String, i64)> =
            frontier.iter().map(|f| (f.0.clone(), f.1)).collect();
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        let mut truncated = false;
        for d in 1..=depth {
            let mut next = Vec::new();
            for (repo, id, qn) in &frontier {
                let rows = if dir == "callers" {
                    self.st.store.rows(
                        "SELECT e.repo, coalesce(e.src_symbol_id, -1), coalesce(e.src_symbol, '<file>'), e.src_path, e.line, s.start_line, s.end_line \
                         FROM edges e LEFT JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.src_symbol_id \
                         WHERE e.repo = ? AND e.kind = 'calls' AND e.dst_symbol_id = ? ORDER BY e.src_path, e.line LIMIT 500",
                        &[Value::Text(repo.clone()), Value::BigInt(*id)],
                    )?
                } else {
                    self.st.store.rows(
                        "SELECT e.repo, coalesce(e.dst_symbol_id, -1), coalesce(s.qualified_name, e.dst_name), coalesce(s.path, ''), e.line, s.start_line, s.end_line, e.src_path \
                         FROM edges e LEFT JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id \
                         WHERE e.repo = ? AND e.kind = 'calls' AND e.src_symbol_id = ? ORDER BY e.line LIMIT 500",
                        &[Value::Text(repo.clone()), Value::BigInt(*id)],
                    )?
                };
                for r in rows {
                    let other_id = val_i64(&r[1]);
                    let other = val_str(&r[2]);
                    let call_line = val_i64(&r[4]) as u64;
                    let resolved = other_id >= 0;
                    let (from, to, at) = if dir == "callers" {
                        (other.clone(), qn.clone(), val_str(&r[3]))
                    } else {
                        (qn.clone(), other.clone(), val_str(&r[7]))
                    };
                    if edges.len() < 4 * MAX_NODES {
                        edges.push(CallEdge {
                            from,
                            to,
                            path: at,
                            line: call_line,
                            resolved,
                        });
                    }
                    let key = (
                        repo.clone(),
                        if resolved {
                            other_id
                        } else {
                            -(edges.len() as i64) - 1
                        },
                    );
                    if resolved && seen.insert(key) {
                        if nodes.len() >= MAX_NODES {
                            truncated = true;
                            continue;
                        }
                        nodes.push(CallNode {
                            repo: repo.clone(),
                            symbol: other.clone(),
                            path: val_str(&r[3]),
                            line: if r[5] == Value::Null {
                                call_line
                            } else {
                                val_i64(&r[5]) as u64
                            },
                            end_line: if r[6] == Value::Null {
                                call_line
                            } else {
                                val_i64(&r[6]) as u64
                            },
                            depth: d,
                        });
                        next.push((repo.clone(), other_id, other));
                    }
                }
            }
            frontier = next;
            if frontier.is_empty() {
                break;
            }
        }
        let mut text = format!(
            "{} of {} ({} root definition(s), depth {depth}): {} nodes, {} edges{}\n",
            dir,
            name,
            roots.len(),
            nodes.len(),
            edges.len(),
            if truncated { " (truncated)" } else { "" }
        );
        for e in edges.iter().take(60) {
            text.push_str(&format!(
                "{} -> {}  {}:{}{}\n",
                e.from,
                e.to,
                e.path,
                e.line,
                if e.resolved { "" } else { " (unresolved)" }
            ));
        }
        if edges.is_empty() {
            text.push_str(&format!(
                "No {dir} recorded. Calls are resolved by name within the repo; try find_references {{\"symbol\": \"{last}\"}} for text usages.\n"
            ));
        }
        Ok((
            CallGraphOut {
                roots,
                nodes,
                edges,
                truncated,
            },
            text,
        ))
    }

    /// search_code for the command line.
    pub fn search_code_cli(
        &self,
        query: String,
        mode: String,
        limit: u32,
        repo: Option<String>,
    ) -> Result<SearchCodeOut, ToolError> {
        self.search_code_impl(SearchCodeArgs {
            query,
            mode: Some(mode),
            repo,
            module: None,
            lang: None,
            path: None,
            include_tests: None,
            limit: Some(limit),
            cursor: None,
            max_per_file: None,
        })
        .map(|x| x.0)
    }

    /// Condensed markdown of what to read next (the `codeindex://relevant` resource).
    pub fn relevant_markdown(
        &self,
        path: Option<&str>,
        query: Option<&str>,
        repo: Option<&str>,
    ) -> Result<String, ToolError> {
        let mut md = String::new();
        if let Some(p) = path.filter(|p| !p.is_empty()) {
            let (out, _) = self.related_files_impl(RelatedFilesArgs {
                path: p.to_string(),
                repo: repo.map(String::from),
                limit: Some(8),
            })?;
            md.push_str(&format!("## Read next for `{}`\n", out.path));
            if out.files.is_empty() {
                md.push_str("- (no import, call, inheritance or test relations)\n");
            }
            for f in &out.files {
                md.push_str(&format!("- `{}` — {}\n", f.path, f.reasons.join("; ")));
            }
        }
        if let Some(q) = query.filter(|q| !q.trim().is_empty()) {
            let (out, _) = self.search_code_impl(SearchCodeArgs {
                query: q.to_string(),
                mode: None,
                repo: repo.map(String::from),
                module: None,
                lang: None,
                path: None,
                include_tests: Some("exclude".into()),
                limit: Some(5),
                cursor: None,
                max_per_file: None,
            })?;
            md.push_str(&format!(
                "\n## Most relevant to \"{q}\" ({} query)\n",
                out.query_type
            ));
            for h in &out.results {
                md.push_str(&format!(
                    "- `{}:{}-{}`{}\n",
                    h.path,
                    h.line,
                    h.end_line,
                    h.symbol
                        .as_deref()
                        .map(|s| format!(" {s}"))
                        .unwrap_or_default()
                ));
            }
        }
        if md.is_empty() {
            return Err(ToolError::invalid_argument(
                "codeindex://relevant needs path or query",
                "read codeindex://relevant?path=src/app.py or codeindex://relevant?query=how+are+sessions+stored",
            ));
        }
        Ok(md)
    }
}

#[tool_router(router = semantic_router, vis = "pub(crate)")]
impl Server {
    /// Find code by meaning or by name when you don't know where it is (hybrid keyword + embedding search, fused by rank).
    /// Results are chunks (a function, method, class summary, doc section) with their span, best chunk per file.
    /// The query is classified and routed: a name → its definitions; "what calls X" / "who imports Y" / "subclasses of Z" → the edges table;
    /// "from the API to the DB" → a path through imports and calls; "how do importers work" → the family of similar files; anything else → concept search.
    /// Examples: {"query": "parse a date string into a datetime"}, {"query": "what calls get_or_create"}, {"query": "retry with backoff", "lang": "go", "include_tests": "exclude"}.
    /// Use grep for exact text, search_symbols for names you know.
    #[tool(annotations(read_only_hint = true, open_world_hint = false), output_schema = crate::outschema::output_schema::<SearchCodeOut>())]
    async fn search_code(
        &self,
        Parameters(a): Parameters<SearchCodeArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let this = self.clone();
        respond(&self.st, move || this.search_code_impl(a)).await
    }

    /// What else to read for a file, ranked with reasons: files it imports, files importing it, calls / called by, inheritance,
    /// files using its names, and its tests. {"path": "django/db/models/query.py"}.
    #[tool(annotations(read_only_hint = true, open_world_hint = false), output_schema = crate::outschema::output_schema::<RelatedFilesOut>())]
    async fn related_files(
        &self,
        Parameters(a): Parameters<RelatedFilesArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let this = self.clone();
        respond(&self.st, move || this.related_files_impl(a)).await
    }

    /// Who calls a function (direction: callers) or what it calls (callees), up to depth 3, from the resolved call edges.
    /// {"symbol": "QuerySet.get_or_create", "direction": "callers", "depth": 2}.
    #[tool(annotations(read_only_hint = true, open_world_hint = false), output_schema = crate::outschema::output_schema::<CallGraphOut>())]
    async fn call_graph(
        &self,
        Parameters(a): Parameters<CallGraphArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let this = self.clone();
        respond(&self.st, move || this.call_graph_impl(a)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_written_as_code_are_boosted_in_sentences() {
        assert!(named_identifiers("Reset clears the block with all zeros.", false).is_empty());
        let v = named_identifiers("Returns an fs.FileInfo for the Header.", false);
        assert_eq!(v, vec!["fileinfo"]);
        let v = named_identifiers(
            "Return UTC time tuple compatible with time.gmtime().",
            false,
        );
        assert_eq!(v, vec!["gmtime"]);
        let v = named_identifiers("where is parse_date called from the views", false);
        assert_eq!(v, vec!["parse_date"]);
        assert_eq!(
            named_identifiers("call reset() twice on errors", false),
            vec!["reset"]
        );
        assert_eq!(
            named_identifiers("queryset filter", false),
            vec!["queryset", "filter"]
        );
        let v = named_identifiers("how does the autodetector work", true);
        assert!(v.contains(&"autodetector".to_string()));
    }

    #[test]
    fn synonyms_yaml_subset() {
        let m =
            parse_synonyms("# c\nauth: [login, authentication]\ndb:\n  - database\n  - 'sql'\n")
                .unwrap();
        assert_eq!(m["auth"], vec!["login", "authentication"]);
        assert_eq!(m["db"], vec!["database", "sql"]);
        assert!(parse_synonyms("x y z").is_err());
        assert!(!parse_synonyms(DEFAULT_SYNONYMS).unwrap().is_empty());
    }

    #[test]
    fn snippets_center_on_query_words() {
        let text = (1..=20)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n")
            + "\nparse the date here\nend";
        let s = snippet_of(&text, &["date".to_string()], 3);
        assert!(s.contains("parse the date"));
        assert_eq!(s.lines().count(), 3);
    }
}
