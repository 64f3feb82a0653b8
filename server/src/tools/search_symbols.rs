//! `search_symbols`: definitions by name (exact, prefix, substring) or regex.

use crate::store::{NameMatch, SymbolFilter};

use schemars::JsonSchema;
use serde::Deserialize;

use super::*;
use crate::cursor;
use crate::error::ToolError;
use crate::state::State;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "Find definitions (functions, classes, methods, structs, ...) by name: exact, prefix or substring, or a regex with regex: true.\n\
    Only definitions, never plain text matches: {\"query\": \"get_or_create\"}, {\"query\": \"^Test.*Case$\", \"regex\": true, \"kind\": \"class\"}.";

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchSymbolsArgs {
    /// Name to find: exact, prefix or substring matches (ranked in that order, case-insensitive), or a regex with regex: true.
    pub query: String,
    #[serde(default)]
    pub regex: Option<bool>,
    /// function, method, class, struct, interface, trait, enum, union, type, constant, variable, macro, module, namespace, field, property, constructor.
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub lang: Option<String>,
    #[serde(default)]
    pub repo: Option<String>,
    /// Only definitions under this sub-directory or in this file.
    #[serde(default)]
    pub path: Option<String>,
    /// 1..=1000, default 20.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    #[serde(default)]
    #[schemars(length(max = 1024))]
    pub cursor: Option<String>,
}

pub fn run(st: &State, a: SearchSymbolsArgs) -> Result<(SymbolsOut, String), ToolError> {
    if a.query.trim().is_empty() {
        return Err(ToolError::invalid_argument(
            "empty query",
            "pass a name, a prefix, or a regex with regex: true",
        ));
    }
    let kind = kind_of(a.kind.as_deref())?;
    let repos = repo_names(st, a.repo.as_deref())?;
    let limit = limit_of(a.limit, 20, MAX_LIMIT)?;
    let how = if a.regex.unwrap_or(false) {
        NameMatch::Regex
    } else {
        NameMatch::Ranked
    };
    let filter = SymbolFilter {
        repos: repos.clone(),
        kind: kind.clone(),
        lang: a.lang.clone(),
        path: a.path.clone(),
    };
    let ids: Vec<&str> = st.snaps.iter().map(|s| s.id()).collect();
    let fp = cursor::fingerprint(
        "search_symbols",
        &format!(
            "{:?} {:?} {:?} {:?} {:?} {:?}",
            a.query, a.regex, kind, a.lang, repos, a.path
        ),
        &ids,
    );
    let offset = offset_of(a.cursor.as_deref(), &fp)?;
    let (rows, total) = st.store.symbols(&a.query, how, &filter, limit, offset)?;
    let labels = RepoLabels::new(st, a.repo.as_deref());
    let (rows, text, next_cursor) = budget_page(
        rows,
        total,
        offset,
        &fp,
        format!("{total} definitions\n"),
        |r| labels.line(&r.repo, symbol_line(r)),
    );
    let hint = (total == 0).then(|| not_found_hint(st, &a.query));
    symbols_answer(rows, total, next_cursor, hint, text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::codes;
    use crate::tools::fixture::{args, state};
    use serde_json::json;

    #[test]
    fn exact_names_rank_first_and_kinds_filter() {
        let st = state();
        let out = run(&st, args(json!({"query": "slug"}))).unwrap().0;
        let names: Vec<&str> = out
            .symbols
            .iter()
            .map(|s| s.qualified_name.as_str())
            .collect();
        // Exact names first, then by path and line.
        assert_eq!(&names[..2], ["Product.slug", "Book.slug"], "{names:?}");
        assert!(names.contains(&"slugify"));
        let out = run(
            &st,
            args(json!({"query": "^[A-Z]", "regex": true, "kind": "class"})),
        )
        .unwrap()
        .0;
        let names: Vec<&str> = out.symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Product", "Book"]);
        let e = run(&st, args(json!({"query": "x", "kind": "widget"}))).unwrap_err();
        assert_eq!(e.code, codes::INVALID_ARGUMENT);
    }
}
