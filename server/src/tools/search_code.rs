//! `search_code`: find code by meaning or name; the ranking is the
//! retrieval engine's ([`crate::retrieval`]), this module scopes, caches,
//! pages and renders it.

use crate::retrieval::{self, Scope, Suggestion, Tests};
use std::collections::HashSet;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::*;
use crate::cursor;
use crate::error::ToolError;
use crate::state::State;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "Find code by meaning or by name when you don't know where it is (hybrid keyword + embedding search, fused by rank).\n\
    Results are chunks (a function, method, class summary, doc section) with their span, best chunk per file (when few files match, their other chunks follow; max_per_file caps it).\n\
    The query is classified and routed: a name \u{2192} its definitions; \"what calls X\" / \"who imports Y\" / \"subclasses of Z\" \u{2192} the edges table;\n\
    \"from the API to the DB\" \u{2192} a path through imports and calls; \"how do importers work\" \u{2192} the family of similar files; anything else \u{2192} concept search.\n\
    Examples: {\"query\": \"parse a date string into a datetime\"}, {\"query\": \"what calls get_or_create\"}, {\"query\": \"retry with backoff\", \"lang\": \"go\", \"include_tests\": \"exclude\"}.\n\
    Use grep for exact text, search_symbols for names you know.";

/// Most results per page.
const MAX_LIMIT: usize = 50;

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
    /// Chunks per file at most. Unset: each file's best chunk first, then, when fewer files match than fill the results, their other chunks.
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

fn scope(st: &State, a: &SearchCodeArgs) -> Result<(Scope, Vec<usize>), ToolError> {
    let selected = st.select(a.repo.as_deref())?;
    let names: HashSet<&str> = selected.iter().map(|s| s.repo()).collect();
    let idx: Vec<usize> = (0..st.snaps.len())
        .filter(|&i| names.contains(st.snaps[i].repo()))
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
            snaps: (0..st.snaps.len()).map(|i| idx.contains(&i)).collect(),
            lang: norm(&a.lang),
            path: norm(&a.path),
            module: norm(&a.module),
            tests,
        },
        idx,
    ))
}

pub fn run(st: &State, a: SearchCodeArgs) -> Result<(SearchCodeOut, String), ToolError> {
    // The ranking and the page read the same files' chunks over and over.
    crate::snapshot::remember_reads(|| answer(st, a))
}

fn answer(st: &State, a: SearchCodeArgs) -> Result<(SearchCodeOut, String), ToolError> {
    if a.query.trim().is_empty() {
        return Err(ToolError::invalid_argument(
            "empty query",
            "describe what you look for (\"parse a date string\") or name it (\"QuerySet.filter\")",
        ));
    }
    let limit = limit_of(a.limit, 10, MAX_LIMIT)?;
    let per_file = a.max_per_file.map(|n| n.max(1) as usize);
    let (scope, snaps) = scope(st, &a)?;
    let ids: Vec<&str> = snaps.iter().map(|&i| st.snaps[i].id()).collect();
    let norm = format!(
        "q={:?} m={:?} mod={:?} l={:?} p={:?} t={:?} pf={per_file:?}",
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
        let cached = st.code_cache.get(&fp);
        match cached {
            Some(r) => r,
            None => {
                let mode = a.mode.as_deref().unwrap_or("hybrid");
                let r = st.ctx().rank(&a.query, mode, per_file, &scope, &snaps)?;
                let r = Arc::new(r);
                st.code_cache.put(fp.clone(), r.clone());
                r
            }
        }
    };
    let total = ranked.hits.len();
    let labels = RepoLabels::new(st, a.repo.as_deref());
    let (results, text, i) = hits_page(st, &ranked, &a.query, offset, limit, &labels);
    let has_more = i < total;
    let next_cursor = has_more.then(|| cursor::encode(&fp, &[i as u64]));
    let (suggestions, related_modules, hint) = if total < 3 && offset == 0 {
        let (s, m) = st.ctx().suggestions(&a.query, &scope);
        let hint = if total == 0 {
            Some("No results. Try a suggestion below, mode: keyword for exact words or semantic for concepts, a wider path/module, include_tests: include, or grep for exact text.".to_string())
        } else {
            Some("Few results: the suggestions may find more.".to_string())
        };
        (s, m, hint)
    } else {
        (Vec::new(), Vec::new(), None)
    };
    // A relationship query's answers come from the call/import/base graph;
    // what follows them is ranked by text, and the header says how many are which.
    let graph = if ranked.query_type == "relationship" {
        let from_graph = ranked
            .hits
            .iter()
            .filter(|h| {
                [
                    "calls ",
                    "extends/implements ",
                    "imports ",
                    "called by ",
                    "imported by ",
                ]
                .iter()
                .any(|p| h.2.starts_with(p))
            })
            .count();
        format!(": {from_graph} from the code graph, the rest ranked by text")
    } else {
        String::new()
    };
    // The page's place in the ranking; a ranking cut at its cap says so
    // (it holds the best candidates, not every chunk that matches).
    let of = if total >= crate::retrieval::MAX_RESULTS {
        format!("the {total} best-ranked")
    } else {
        total.to_string()
    };
    let shown = if total == 0 {
        "0 results".to_string()
    } else if results.is_empty() {
        format!("no results past {offset} of {of}")
    } else {
        format!("results {}-{} of {of}", offset + 1, offset + results.len())
    };
    let header = format!(
        "{shown}{graph} ({} query, {} mode{}){}\n",
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
            .map(|&i| st.snaps[i].repo().to_string())
            .collect(),
        semantic: ranked.semantic,
        notice: ranked.notice.clone(),
        suggestions,
        related_modules,
        hint,
    };
    Ok((out, full))
}

/// The hits of one page from `offset` (at most `limit`, cut to the
/// response budget), their text, and where the next page starts.
fn hits_page(
    st: &State,
    ranked: &retrieval::Ranked,
    query: &str,
    offset: usize,
    limit: usize,
    labels: &RepoLabels,
) -> (Vec<CodeHit>, String, usize) {
    let eng = st.engine();
    let q_terms = crate::retrieval::query_terms(query);
    let total = ranked.hits.len();
    let mut results = Vec::new();
    let mut text = String::new();
    let mut i = offset;
    while i < total && results.len() < limit {
        let (ci, score, why) = &ranked.hits[i];
        let c = &eng.chunks[*ci];
        let snap = &st.snaps[c.snap as usize];
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
            snippet: retrieval::with_chunk_text(c, &st.snaps, |body| snippet_of(body, &q_terms, 6)),
            follows_pattern: st.pattern_of(c.snap, c.file),
            why: why.clone(),
            is_test: c.is_test,
        };
        let entry = format!(
            "{}{}:{}-{} [{}{}] {:.4} ({})\n{}\n\n",
            labels.line(&hit.repo, String::new()),
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
    (results, text, i)
}

fn snippet_of(text: &str, q_terms: &[String], max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut best = 0;
    if !q_terms.is_empty() {
        let mut best_n = 0;
        for (i, l) in lines.iter().enumerate() {
            let mut t = Vec::new();
            retrieval::terms(l, &mut t);
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

/// search_code for the command line.
pub fn cli(
    st: &State,
    query: String,
    mode: String,
    limit: u32,
    repo: Option<String>,
) -> Result<SearchCodeOut, ToolError> {
    run(
        st,
        SearchCodeArgs {
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
        },
    )
    .map(|x| x.0)
}

#[cfg(test)]
mod tests {
    use super::*;

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

#[cfg(test)]
mod fixture_tests {
    use super::*;
    use crate::tools::fixture::{args, state};
    use serde_json::json;

    #[test]
    fn keyword_only_snapshots_still_answer() {
        let st = state();
        let out = run(&st, args(json!({"query": "parse a title into a URL slug"})))
            .unwrap()
            .0;
        assert!(!out.semantic);
        assert_eq!(out.results[0].path, "app/util.py", "{:?}", out.results);
        assert!(
            out.results[0].snippet.contains("def slugify"),
            "{}",
            out.results[0].snippet
        );
        let out = run(&st, args(json!({"query": "what calls slugify"})))
            .unwrap()
            .0;
        assert_eq!(out.query_type, "relationship");
        assert!(out.results.iter().any(|h| h.path == "app/models.py"));
        let out = run(&st, args(json!({"query": "parse_duration"})))
            .unwrap()
            .0;
        assert_eq!(out.query_type, "symbol");
        assert_eq!(out.results[0].path, "src/lib.rs");
        let out = run(
            &st,
            args(json!({"query": "slugify", "include_tests": "only"})),
        )
        .unwrap()
        .0;
        assert!(out.results.iter().all(|h| h.is_test));
    }
}
