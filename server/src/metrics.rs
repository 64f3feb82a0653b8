//! Metrics events of tool calls, written with `code_index_schemas::ops::record`
//! (JSONL, rotated): `search` for the finding tools (query, query_type,
//! results, latency_ms, zero_results), `file_read` for `read_file` (with
//! `was_suggested`: the path was offered as context before), `tool_call` for
//! the rest; `cache_hit` says the answer came from a result cache. Paths, counts, timings and the agent's query only; never file
//! content.

use std::time::Duration;

use rmcp::model::{CallToolResponse, ErrorData, JsonObject};
use serde_json::{json, Value};

use code_index_schemas::ops;

/// The query argument and query type of a finding tool.
fn query_of(tool: &str, args: &JsonObject) -> Option<(String, String)> {
    let s = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
    let (q, t) = match tool {
        "grep" => (
            s("pattern"),
            if args.get("fixed_strings") == Some(&Value::Bool(true)) {
                "literal"
            } else {
                "regex"
            }
            .to_string(),
        ),
        "search" => (s("query"), "query".into()),
        "search_symbols" => (s("query"), "symbol".into()),
        "find_definitions" => (s("symbol"), "definition".into()),
        "find_references" => (s("symbol"), "reference".into()),
        "call_graph" => (s("symbol"), "call_graph".into()),
        "search_files" => (s("pattern"), "file".into()),
        "related_files" => (s("path"), "related".into()),
        "search_code" => (
            s("query"),
            format!("code:{}", s("mode").unwrap_or_else(|| "hybrid".into())),
        ),
        _ => return None,
    };
    Some((q.unwrap_or_default(), t))
}

/// The result list of a structured result: its first array field.
fn items(v: &Value) -> Option<&Vec<Value>> {
    v.as_object()?.values().find_map(Value::as_array)
}

/// Record one tool call.
pub fn tool_call(
    tool: &str,
    args: Option<&JsonObject>,
    res: &Result<CallToolResponse, ErrorData>,
    took: Duration,
    cached: bool,
) {
    let empty = JsonObject::new();
    let args = args.unwrap_or(&empty);
    let latency_ms = (took.as_secs_f64() * 1000.0 * 100.0).round() / 100.0;
    let (structured, error) = match res {
        Ok(CallToolResponse::Complete(r)) => {
            let code = (r.is_error == Some(true)).then(|| {
                r.structured_content
                    .as_ref()
                    .and_then(|v| v.get("code"))
                    .and_then(Value::as_str)
                    .unwrap_or("ERROR")
                    .to_string()
            });
            (r.structured_content.as_ref(), code)
        }
        Ok(_) => (None, None),
        Err(e) => (None, Some(format!("{:?}", e.code))),
    };
    tracing::debug!(
        "{tool}: {:.2} ms{}{}",
        latency_ms,
        if cached { ", from a cache" } else { "" },
        error
            .as_deref()
            .map(|e| format!(", error {e}"))
            .unwrap_or_default()
    );
    let repo = args.get("repo").cloned().unwrap_or(Value::Null);
    if tool == "read_file" {
        let path = args.get("path").and_then(Value::as_str).unwrap_or("");
        ops::record(
            "file_read",
            json!({"source": "read_file", "path": path, "repo": repo, "was_suggested": ops::was_suggested(path),
                   "latency_ms": latency_ms, "error": error}),
        );
        return;
    }
    let Some((query, query_type)) = query_of(tool, args) else {
        ops::record(
            "tool_call",
            json!({"tool": tool, "latency_ms": latency_ms, "error": error}),
        );
        return;
    };
    let found = structured.and_then(items);
    let results = found.map_or(0, Vec::len);
    if tool == "related_files" {
        if let Some(list) = found {
            let paths: Vec<String> = list
                .iter()
                .filter_map(|x| x.get("path").and_then(Value::as_str).map(str::to_string))
                .collect();
            ops::remember_suggested(&paths);
        }
    }
    ops::record(
        "search",
        json!({"tool": tool, "query": query, "query_type": query_type, "repo": repo, "results": results,
               "zero_results": results == 0 && error.is_none(), "latency_ms": latency_ms, "error": error,
               "cache_hit": cached}),
    );
}

/// Record what the `relevant` command (the Read hook's `suggest-context`)
/// offered: a `file_read` of `path` (suggested earlier or not), then a
/// `context_inject` with the paths its markdown lists (`- \`path\``), which
/// a later read counts as suggested.
pub fn context_inject(path: Option<&str>, query: Option<&str>, md: &str, took: Duration) {
    let suggested: Vec<String> = md
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split_once('`').map(|(p, _)| p.to_string()))
        .collect();
    if let Some(p) = path {
        ops::record(
            "file_read",
            json!({"source": "hook", "path": p, "was_suggested": ops::was_suggested(p)}),
        );
    }
    ops::record(
        "context_inject",
        json!({"path": path, "query": query, "suggestions": suggested.len(), "suggested": suggested,
               "latency_ms": (took.as_secs_f64() * 100000.0).round() / 100.0}),
    );
    ops::remember_suggested(&suggested);
}
