//! The user-facing `sql` command: one read-only SELECT over the tables,
//! with a row limit and a time limit.

use std::time::Duration;

use duckdb::types::Value;
use serde::Serialize;

use super::{internal, Store};
use crate::error::{codes, ToolError};

/// Result of user SQL.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SqlResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<serde_json::Value>>,
    /// More rows existed than the row limit.
    pub truncated: bool,
}

impl Store {
    /// Run one read-only SELECT with a row limit and a time limit.
    pub fn sql(
        &self,
        query: &str,
        max_rows: usize,
        timeout: Duration,
    ) -> Result<SqlResult, ToolError> {
        const TABLES_HINT: &str = "tables: files, symbols, refs (or \"references\"), edges, chunks, patterns; columns in schemas/SCHEMA.md";
        if query.trim().trim_end_matches(';').trim().is_empty() {
            return Err(ToolError::invalid_argument(
                "the query is empty",
                "write one SELECT, e.g. SELECT path, language FROM files LIMIT 5",
            ));
        }
        let conn = self.conn()?;
        // Exactly one SELECT: DuckDB's own parser says so (json_serialize_sql
        // refuses anything else and lists the statements).
        let check: String = conn
            .query_row("SELECT json_serialize_sql(?::VARCHAR)", [query], |r| {
                r.get(0)
            })
            .map_err(internal)?;
        let parsed: serde_json::Value = serde_json::from_str(&check).unwrap_or_default();
        if parsed.get("error").and_then(|e| e.as_bool()) == Some(true) {
            let msg = parsed
                .get("error_message")
                .and_then(|m| m.as_str())
                .unwrap_or("not a SELECT");
            // DuckDB refuses to serialize anything but a SELECT; any other
            // message is the parser's (a syntax error), worth showing.
            return Err(if msg.starts_with("Only SELECT statements") {
                ToolError::invalid_argument(
                    "only a read-only SELECT is allowed (no INSERT, UPDATE, DELETE, CREATE, DROP, COPY, ATTACH, SET, PRAGMA, …)",
                    format!("write one SELECT ({TABLES_HINT})"),
                )
            } else {
                ToolError::invalid_argument(format!("SQL syntax error: {msg}"), TABLES_HINT)
            });
        }
        if parsed
            .get("statements")
            .and_then(|s| s.as_array())
            .map(|a| a.len())
            != Some(1)
        {
            return Err(ToolError::invalid_argument(
                "only one statement is allowed",
                "remove the extra statements (a `;` ends one)",
            ));
        }
        let handle = conn.interrupt_handle();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            if done_rx.recv_timeout(timeout).is_err() {
                handle.interrupt();
            }
        });
        let wrapped = format!(
            "SELECT * FROM ({}) LIMIT {}",
            query.trim().trim_end_matches(';'),
            max_rows + 1
        );
        let result = (|| -> duckdb::Result<SqlResult> {
            let mut stmt = conn.prepare(&wrapped)?;
            let mut rows_out = Vec::new();
            let mut rows = stmt.query([])?;
            let mut columns = Vec::new();
            while let Some(row) = rows.next()? {
                if columns.is_empty() {
                    columns = row
                        .as_ref()
                        .column_names()
                        .into_iter()
                        .map(|s| s.to_string())
                        .collect();
                }
                let n = columns.len();
                let vals: Vec<serde_json::Value> = (0..n)
                    .map(|i| to_json(row.get::<_, Value>(i).unwrap_or(Value::Null)))
                    .collect();
                rows_out.push(vals);
            }
            drop(rows);
            if columns.is_empty() {
                // No rows: the statement still knows its columns.
                columns = stmt.column_names();
            }
            let truncated = rows_out.len() > max_rows;
            rows_out.truncate(max_rows);
            Ok(SqlResult {
                columns,
                rows: rows_out,
                truncated,
            })
        })();
        let _ = done_tx.send(());
        let _ = watchdog.join();
        result.map_err(|e| {
            let m = e.to_string();
            if m.contains("INTERRUPT") || m.to_lowercase().contains("interrupt") {
                ToolError::new(
                    codes::BUDGET_EXCEEDED,
                    format!("query ran longer than {:?}", timeout),
                    "add filters or a LIMIT",
                )
            } else {
                ToolError::invalid_argument(format!("SQL error: {}", user_message(&m)), TABLES_HINT)
            }
        })
    }
}

/// DuckDB's message for the user's query: its first line, and a "Did you
/// mean" that names a table the user can query. The `LINE 1:` excerpt shows
/// the query as wrapped (with the row limit), so it is left out.
fn user_message(m: &str) -> String {
    let mut lines = m.lines().filter(|l| !l.trim().is_empty());
    let mut out = lines.next().unwrap_or("").to_string();
    if let Some(dym) = lines.find(|l| l.starts_with("Did you mean")) {
        if !dym.contains("ov_") && !dym.contains("base.") {
            out.push(' ');
            out.push_str(dym);
        }
    }
    out
}

fn to_json(v: Value) -> serde_json::Value {
    use serde_json::json;
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Boolean(b) => json!(b),
        Value::TinyInt(i) => json!(i),
        Value::SmallInt(i) => json!(i),
        Value::Int(i) => json!(i),
        Value::BigInt(i) => json!(i),
        Value::HugeInt(i) => json!(i.to_string()),
        Value::UTinyInt(i) => json!(i),
        Value::USmallInt(i) => json!(i),
        Value::UInt(i) => json!(i),
        Value::UBigInt(i) => json!(i),
        Value::Float(f) => json!(f),
        Value::Double(f) => json!(f),
        Value::Text(s) => json!(s),
        other => json!(format!("{other:?}")),
    }
}
