//! `search`: one Zoekt-like query string (see [`crate::query`]), its hits
//! cached per snapshot set and paged.

use crate::query::SearchHit;
use crate::snapshot::Snapshot;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::*;
use crate::cursor;
use crate::error::ToolError;
use crate::state::State;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "One query string in a Zoekt-like language: words and \"quoted strings\" match content literally; regex:RE, file:PATH_RE,\n\
    lang:python, sym:NAME (definitions), repo:NAME, case:yes|no|auto, -negation, `or`, parentheses.\n\
    Examples: \"lang:python sym:get_or_create -file:tests\", \"(regex:def\\\\s+save or \\\"def delete\\\") file:models\".\n\
    An unknown field (e.g. filee:) is an UNKNOWN_FIELD error listing the valid ones.";

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Zoekt-like query: words and "quoted strings" (literal content), regex:PATTERN, file:PATH_REGEX, lang:LANG,
    /// sym:NAME (a definition whose name contains NAME), repo:NAME, case:yes|no|auto, -negation, `or`, (parentheses).
    /// Searches every loaded repo unless the query says repo:NAME. Quote text that holds a colon: "TODO:".
    #[schemars(length(max = 4096))]
    pub query: String,
    /// Hits per page, 1..=1000 (default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    #[serde(default)]
    #[schemars(length(max = 1024))]
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchOut {
    /// The parsed and simplified query.
    pub query_plan: String,
    pub hits: Vec<SearchHit>,
    pub total_hits: u64,
    pub files_matched: u64,
    pub has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Files not in the snapshots, so not searched (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_indexed: Option<NotIndexed>,
    /// The 10 s scan budget ran out: files past it were not searched; narrow the query.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

pub fn run(st: &State, a: SearchArgs) -> Result<(SearchOut, String), ToolError> {
    let q = crate::query::parse(&a.query)?;
    let plan = format!(
        "{} case:{}",
        crate::query::render(&q.expr),
        format!("{:?}", q.case).to_lowercase()
    );
    let limit = limit_of(a.limit, 50, MAX_LIMIT)?;
    let ids: Vec<&str> = st.snaps.iter().map(|s| s.id()).collect();
    let key = format!("{}|{plan}", ids.join(","));
    let cached = st.cache.get(&key);
    let (hits, partial) = match cached {
        Some(h) => (h, false),
        None => {
            let (h, partial) = crate::query::search(
                &q,
                &st.snaps,
                &st.store,
                &|l| st.check_lang(l),
                crate::grep::SCAN_BUDGET,
            )?;
            let h = Arc::new(h);
            // A partial result is not kept: the next call scans again.
            if !partial {
                st.cache.put(key, h.clone());
            }
            (h, partial)
        }
    };
    let fp = cursor::fingerprint("search", &plan, &ids);
    let offset = offset_of(a.cursor.as_deref(), &fp)?;
    let files_matched = {
        let mut n = 0u64;
        let mut last: Option<(&str, &str)> = None;
        for h in hits.iter() {
            if last != Some((&h.repo, &h.path)) {
                n += 1;
                last = Some((&h.repo, &h.path));
            }
        }
        n
    };
    let mut text = format!("{} hits in {files_matched} files for {plan}\n", hits.len());
    let mut out = Vec::new();
    let mut json_bytes = 0;
    // `search` covers every loaded repo (a `repo:` term narrows it).
    let labels = RepoLabels::new(st, Some("all"));
    for h in hits.iter().skip(offset).take(limit) {
        let piece = labels.line(&h.repo, format!("{}:{}: {}\n", h.path, h.line, h.text));
        let jl = h.text.len() + h.path.len() + 80;
        if !out.is_empty()
            && (text.len() + piece.len() > RESPONSE_BUDGET_BYTES
                || json_bytes + jl > STRUCTURED_BUDGET_BYTES)
        {
            break;
        }
        json_bytes += jl;
        text.push_str(&piece);
        out.push(h.clone());
    }
    let end = offset + out.len();
    let next_cursor = (end < hits.len()).then(|| cursor::encode(&fp, &[end as u64]));
    let hint = hits.is_empty().then(|| {
        "no hits: drop a term, use case:no, or check field values (lang:python, file:REGEX)"
            .to_string()
    });
    if partial {
        text.push_str("partial: the 10 s scan budget ran out before every file was searched; narrow the query (file:, lang:, repo:)\n");
    }
    // `search` covers every loaded repo.
    let all: Vec<&Snapshot> = st.snaps.iter().collect();
    let not_indexed = NotIndexed::of(&all);
    if let (Some(n), 0) = (&not_indexed, offset) {
        text.push_str(&n.line());
    }
    Ok((
        SearchOut {
            partial,
            not_indexed,
            query_plan: plan,
            total_hits: hits.len() as u64,
            files_matched,
            hits: out,
            has_more: next_cursor.is_some(),
            next_cursor,
            hint,
        },
        text,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::fixture::{args, line_of, state};
    use serde_json::json;

    #[test]
    fn fields_negation_and_symbols() {
        let st = state();
        let out = run(&st, args(json!({"query": "\"TODO\""}))).unwrap().0;
        assert_eq!(out.hits.len(), 1);
        assert_eq!(
            (out.hits[0].path.as_str(), out.hits[0].line),
            ("app/util.py", line_of("app/util.py", "TODO"))
        );
        let out = run(&st, args(json!({"query": "slugify -file:tests"})))
            .unwrap()
            .0;
        assert!(out.files_matched >= 2);
        assert!(out.hits.iter().all(|h| !h.path.starts_with("tests/")));
        let out = run(&st, args(json!({"query": "lang:python sym:price"})))
            .unwrap()
            .0;
        assert!(out.hits.iter().all(|h| h.kind == "symbol"));
        assert!(out.hits.iter().any(|h| h.text.contains("price_with_tax")));
        let e = run(&st, args(json!({"query": "filee:x"}))).unwrap_err();
        assert_eq!(e.code, crate::error::codes::UNKNOWN_FIELD);
    }
}
