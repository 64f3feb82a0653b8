//! `call_graph`'s queries: the root definitions a name designates, and one
//! hop of resolved call edges from a definition, either way.

use duckdb::types::Value;

use super::symbols::definition_condition;
use super::{repos_in, val_i64, val_opt_i64, val_str, Store};
use crate::error::ToolError;

/// A function, method, constructor or macro a call graph starts from.
#[derive(Clone, Debug, PartialEq)]
pub struct CallRootRow {
    pub repo: String,
    pub symbol_id: i64,
    pub qualified_name: String,
    pub path: String,
    pub line: i64,
    pub end_line: i64,
}

/// One call edge from or to a definition: `other` is the caller (for
/// [`Store::callers_of_symbol`]) or the callee (for
/// [`Store::callees_of_symbol`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CallRow {
    pub repo: String,
    /// The other end's symbol id; -1 when it is file-level code (callers)
    /// or unresolved (callees).
    pub other_id: i64,
    /// Its qualified name: "<file>" for file-level callers; an unresolved
    /// callee as written.
    pub other: String,
    /// Callers: the calling file. Callees: the callee's file ("" when
    /// unresolved).
    pub path: String,
    /// The line of the call.
    pub line: i64,
    /// The other end's definition lines (None when it has none).
    pub start_line: Option<i64>,
    pub end_line: Option<i64>,
    /// The file the call is in.
    pub src_path: String,
}

impl Store {
    /// Functions, methods, constructors and macros `name` designates (see
    /// `definition_condition`), optionally under the directory or file
    /// `path`: non-tests first, then by repo, path, line; at most 20.
    pub fn call_roots(
        &self,
        name: &str,
        repos: &[String],
        path: Option<&str>,
    ) -> Result<Vec<CallRootRow>, ToolError> {
        let (cond, mut params) = definition_condition(name);
        let mut sql = format!(
            "SELECT repo, symbol_id, qualified_name, path, start_line, end_line FROM symbols WHERE {cond} \
             AND kind IN ('function', 'method', 'constructor', 'macro') AND repo IN ({})",
            repos_in(repos)
        );
        if let Some(p) = path.map(|p| p.trim_matches('/')).filter(|p| !p.is_empty()) {
            sql.push_str(" AND (path = ? OR starts_with(path, ?))");
            params.push(Value::Text(p.into()));
            params.push(Value::Text(format!("{p}/")));
        }
        sql.push_str(" ORDER BY is_test, repo, path, start_line LIMIT 20");
        Ok(self
            .rows(&sql, &params)?
            .iter()
            .map(|r| CallRootRow {
                repo: val_str(&r[0]),
                symbol_id: val_i64(&r[1]),
                qualified_name: val_str(&r[2]),
                path: val_str(&r[3]),
                line: val_i64(&r[4]),
                end_line: val_i64(&r[5]),
            })
            .collect())
    }

    /// Calls resolved to the symbol `id` in `repo`, by calling file and
    /// line; at most 500.
    pub fn callers_of_symbol(&self, repo: &str, id: i64) -> Result<Vec<CallRow>, ToolError> {
        let rows = self.rows(
            "SELECT e.repo, coalesce(e.src_symbol_id, -1), coalesce(e.src_symbol, '<file>'), e.src_path, e.line, s.start_line, s.end_line, e.src_path \
             FROM edges e LEFT JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.src_symbol_id \
             WHERE e.repo = ? AND e.kind = 'calls' AND e.dst_symbol_id = ? ORDER BY e.src_path, e.line, 2, 3 LIMIT 500",
            &[Value::Text(repo.to_string()), Value::BigInt(id)],
        )?;
        Ok(rows.iter().map(|r| call_row(r)).collect())
    }

    /// Calls made by the symbol `id` in `repo`, resolved or not, by line;
    /// at most 500.
    pub fn callees_of_symbol(&self, repo: &str, id: i64) -> Result<Vec<CallRow>, ToolError> {
        let rows = self.rows(
            "SELECT e.repo, coalesce(e.dst_symbol_id, -1), coalesce(s.qualified_name, e.dst_name), coalesce(s.path, ''), e.line, s.start_line, s.end_line, e.src_path \
             FROM edges e LEFT JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id \
             WHERE e.repo = ? AND e.kind = 'calls' AND e.src_symbol_id = ? ORDER BY e.line, 2, 3, 4 LIMIT 500",
            &[Value::Text(repo.to_string()), Value::BigInt(id)],
        )?;
        Ok(rows.iter().map(|r| call_row(r)).collect())
    }
}

/// A call row as both queries select it: repo, the other symbol's id and
/// name, its path, the call's line, the other's span, the calling file.
fn call_row(r: &[Value]) -> CallRow {
    CallRow {
        repo: val_str(&r[0]),
        other_id: val_i64(&r[1]),
        other: val_str(&r[2]),
        path: val_str(&r[3]),
        line: val_i64(&r[4]),
        start_line: val_opt_i64(&r[5]),
        end_line: val_opt_i64(&r[6]),
        src_path: val_str(&r[7]),
    }
}
