//! `find_definitions`: where a name or qualified name is defined.

use super::*;
use crate::cursor;
use crate::error::ToolError;
use crate::state::State;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "Where is X defined? {\"symbol\": \"QuerySet.get_or_create\"} or {\"symbol\": \"save\", \"path\": \"django/db/models\"}.";

pub fn run(st: &State, a: SymbolArgs) -> Result<(SymbolsOut, String), ToolError> {
    let limit = limit_of(a.limit, 50, MAX_LIMIT)?;
    let ids: Vec<&str> = st.snaps.iter().map(|s| s.id()).collect();
    let repos = repo_names(st, a.repo.as_deref())?;
    let fp = cursor::fingerprint(
        "find_definitions",
        &format!(
            "{:?} {:?} {:?} {:?}",
            a.symbol.trim(),
            a.kind,
            repos,
            a.path
        ),
        &ids,
    );
    let offset = offset_of(a.cursor.as_deref(), &fp)?;
    let (rows, total) = definitions(st, &a, limit, offset)?;
    let labels = RepoLabels::new(st, a.repo.as_deref());
    let (rows, text, next_cursor) = budget_page(
        rows,
        total,
        offset,
        &fp,
        format!("{total} definition(s) of {}\n", a.symbol),
        |r| labels.line(&r.repo, symbol_line(r)),
    );
    let hint = if total == 0 {
        Some(not_found_hint(st, &a.symbol))
    } else if next_cursor.is_some() && offset == 0 {
        Some("more follow (next_cursor); or narrow with path, kind or a qualified name (\"Class.method\")".to_string())
    } else {
        None
    };
    symbols_answer(rows, total, next_cursor, hint, text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::fixture::{args, line_of, state};
    use serde_json::json;

    #[test]
    fn qualified_names_pick_one_definition() {
        let st = state();
        let out = run(&st, args(json!({"symbol": "Product.slug"}))).unwrap().0;
        assert_eq!(out.symbols.len(), 1);
        assert_eq!(
            out.symbols[0].name_line,
            line_of("app/models.py", "    def slug(self):")
        );
        let out = run(&st, args(json!({"symbol": "slug"}))).unwrap().0;
        assert_eq!(out.total_count, 2);
        let out = run(&st, args(json!({"symbol": "parse_duration"})))
            .unwrap()
            .0;
        assert_eq!(out.symbols[0].path, "src/lib.rs");
        assert_eq!(out.symbols[0].language, "rust");
        let out = run(&st, args(json!({"symbol": "slugifyy"}))).unwrap().0;
        assert_eq!(out.total_count, 0);
        assert!(out.hint.unwrap().contains("slugify"));
    }
}
