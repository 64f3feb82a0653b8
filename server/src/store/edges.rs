//! Relations for search_code's routing ("what calls X", "who imports Y",
//! "subclasses of Z", "what does X call", "what does F import") and the file
//! graph of imports and resolved calls (flows).

use duckdb::types::Value;

use super::{repos_in, val_i64, val_str, Store};
use crate::error::ToolError;

/// A place in a file found by a relation, with what is there: `symbol` is
/// the other end of the relation and `name` what the place refers to (each
/// method says which columns they are).
#[derive(Clone, Debug, PartialEq)]
pub struct LocatedRow {
    pub repo: String,
    pub path: String,
    pub line: i64,
    pub symbol: String,
    pub name: String,
}

/// An edge of the file graph: `from` imports or calls into `to` (a file, or
/// a package directory).
#[derive(Clone, Debug, PartialEq)]
pub struct FileLink {
    pub from: String,
    pub to: String,
}

/// The last segment of a dotted, `::` or `/` name.
fn last_segment(target: &str) -> String {
    target
        .rsplit(['.', ':', '/'])
        .next()
        .unwrap_or(target)
        .to_string()
}

fn located(rows: Vec<Vec<Value>>) -> Vec<LocatedRow> {
    rows.iter()
        .map(|r| LocatedRow {
            repo: val_str(&r[0]),
            path: val_str(&r[1]),
            line: val_i64(&r[2]),
            symbol: val_str(&r[3]),
            name: val_str(&r[4]),
        })
        .collect()
}

impl Store {
    /// Calls to `target` (by its last segment, alone or at a dot): the call
    /// site, `symbol` the calling symbol ("" at file level), `name` the
    /// callee as written. By repo, path, line; at most 2000.
    pub fn callers(&self, target: &str, repos: &[String]) -> Result<Vec<LocatedRow>, ToolError> {
        // A Rust macro call is written `m!` (feature 13): `m` and `m!` both find it.
        let last = last_segment(target).trim_end_matches('!').to_string();
        let rs = repos_in(repos);
        let t = Value::Text(last.clone());
        let dotted = Value::Text(format!(".{last}"));
        let pathed = Value::Text(format!("::{last}"));
        let sql = format!("SELECT repo, src_path, line, coalesce(src_symbol, ''), dst_name FROM edges WHERE kind = 'calls' AND (rtrim(dst_name, '!') = ? OR ends_with(rtrim(dst_name, '!'), ?) OR ends_with(rtrim(dst_name, '!'), ?)) AND repo IN ({rs}) ORDER BY repo, src_path, line, 4, 5 LIMIT 2000");
        Ok(located(self.rows(&sql, &[t, dotted, pathed])?))
    }

    /// Classes extending or implementing `target` (by its last segment): the
    /// declaration, `symbol` the subclass, `name` the base as written. By
    /// repo, path, line; at most 2000.
    pub fn subclasses(&self, target: &str, repos: &[String]) -> Result<Vec<LocatedRow>, ToolError> {
        let last = last_segment(target);
        let rs = repos_in(repos);
        let t = Value::Text(last.clone());
        let dotted = Value::Text(format!(".{last}"));
        let sql = format!("SELECT repo, src_path, line, coalesce(src_symbol, ''), dst_name FROM edges WHERE kind IN ('extends', 'implements') AND (dst_name = ? OR ends_with(dst_name, ?)) AND repo IN ({rs}) ORDER BY repo, src_path, line, 4, 5 LIMIT 2000");
        Ok(located(self.rows(&sql, &[t, dotted])?))
    }

    /// Imports of `target` (by its last segment: an imported name, a module
    /// or a file): import references, then import edges; the import,
    /// `symbol` the enclosing symbol ("" for edges), `name` what is imported.
    /// By repo, path, line; at most 2000.
    pub fn importers(&self, target: &str, repos: &[String]) -> Result<Vec<LocatedRow>, ToolError> {
        let last = last_segment(target);
        let rs = repos_in(repos);
        let t = Value::Text(last.clone());
        let dotted = Value::Text(format!(".{last}"));
        let sql = format!("SELECT repo, path, line, coalesce(enclosing_symbol, ''), name FROM refs WHERE ref_kind = 'import' AND name = ? AND repo IN ({rs}) \
                         UNION ALL SELECT repo, src_path, line, '', dst_name FROM edges WHERE kind = 'imports' AND (dst_name = ? OR ends_with(dst_name, ?) OR ends_with(dst_name, ?) OR ends_with(coalesce(dst_path, ''), ?)) AND repo IN ({rs}) \
                         ORDER BY 1, 2, 3, 4, 5 LIMIT 2000");
        let params = vec![
            t.clone(),
            t,
            dotted,
            Value::Text(format!("/{last}")),
            Value::Text(last.clone()),
        ];
        Ok(located(self.rows(&sql, &params)?))
    }

    /// What `target` calls (the symbol `target`, or ending in its last
    /// segment at a dot), resolved: the callee's definition, `symbol` the
    /// calling symbol, `name` the callee's qualified name. By the call's repo,
    /// path, line; at most 2000.
    pub fn callees(&self, target: &str, repos: &[String]) -> Result<Vec<LocatedRow>, ToolError> {
        let last = last_segment(target);
        let rs = repos_in(repos);
        let dotted = Value::Text(format!(".{last}"));
        let sql = format!("SELECT s.repo, s.path, s.start_line, e.src_symbol, s.qualified_name FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id \
                         WHERE e.kind = 'calls' AND (e.src_symbol = ? OR ends_with(e.src_symbol, ?)) AND e.repo IN ({rs}) ORDER BY e.repo, e.src_path, e.line, 4, 5, 2, 3 LIMIT 2000");
        Ok(located(
            self.rows(&sql, &[Value::Text(target.to_string()), dotted])?,
        ))
    }

    /// Files imported by the file `target` (or files whose path contains its
    /// last segment), resolved: the imported file at line 1, `symbol` the
    /// importing file, `name` the import as written. By repo, importing
    /// file, line; at most 2000.
    pub fn imports(&self, target: &str, repos: &[String]) -> Result<Vec<LocatedRow>, ToolError> {
        let last = last_segment(target);
        let rs = repos_in(repos);
        let sql = format!("SELECT repo, dst_path, 1, src_path, dst_name FROM edges WHERE kind = 'imports' AND dst_path IS NOT NULL AND (src_path = ? OR contains(src_path, ?)) AND repo IN ({rs}) ORDER BY repo, src_path, line, 4, 5 LIMIT 2000");
        Ok(located(self.rows(
            &sql,
            &[Value::Text(target.to_string()), Value::Text(last.clone())],
        )?))
    }

    /// The file graph's edges in `repo` (distinct): resolved imports and
    /// calls from a file to the file (or package directory) they reach.
    pub fn file_links(&self, repo: &str) -> Result<Vec<FileLink>, ToolError> {
        let rows = self.rows(
            "SELECT DISTINCT e.src_path, coalesce(s.path, e.dst_path) FROM edges e LEFT JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id \
             WHERE e.repo = ? AND e.resolved AND e.kind IN ('imports', 'calls') AND coalesce(s.path, e.dst_path) IS NOT NULL",
            &[Value::Text(repo.to_string())],
        )?;
        Ok(rows
            .iter()
            .map(|r| FileLink {
                from: val_str(&r[0]),
                to: val_str(&r[1]),
            })
            .collect())
    }
}
