//! `call_graph`: callers or callees of a function from the resolved call
//! edges, up to depth 3.

use std::collections::HashSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{codes, ToolError};
use crate::state::State;
use crate::store::CallRootRow;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "Who calls a function (direction: callers) or what it calls (callees), up to depth 3, from the resolved call edges.\n\
    {\"symbol\": \"QuerySet.get_or_create\", \"direction\": \"callers\", \"depth\": 2}.";

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

pub fn run(st: &State, a: CallGraphArgs) -> Result<(CallGraphOut, String), ToolError> {
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
    let sel = st.select(a.repo.as_deref())?;
    let repos: Vec<String> = sel.iter().map(|s| s.repo().to_string()).collect();
    let name = a.symbol.trim();
    if name.is_empty() {
        return Err(ToolError::invalid_argument(
            "symbol is empty",
            "name a function or method: \"save\", or qualified \"Model.save\"",
        ));
    }
    let last = name.rsplit(['.', ':']).next().unwrap_or(name);
    let node = |r: &CallRootRow, d: u32| CallNode {
        repo: r.repo.clone(),
        symbol: r.qualified_name.clone(),
        path: r.path.clone(),
        line: r.line as u64,
        end_line: r.end_line as u64,
        depth: d,
    };
    let roots_rows = st.store.call_roots(name, &repos, a.path.as_deref())?;
    if roots_rows.is_empty() {
        return Err(not_found(st, name, last));
    }
    let roots: Vec<CallNode> = roots_rows.iter().map(|r| node(r, 0)).collect();
    let (nodes, edges, truncated) = walk(st, &roots_rows, dir, depth)?;
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

/// Breadth-first over the resolved call edges from the roots, `depth`
/// levels: the nodes reached (at most [`MAX_NODES`]), the edges seen (at
/// most four times that) and whether the node cap cut the walk.
fn walk(
    st: &State,
    roots_rows: &[CallRootRow],
    dir: &str,
    depth: u32,
) -> Result<(Vec<CallNode>, Vec<CallEdge>, bool), ToolError> {
    let mut frontier: Vec<(String, i64, String)> = roots_rows
        .iter()
        .map(|r| (r.repo.clone(), r.symbol_id, r.qualified_name.clone()))
        .collect();
    let mut seen: HashSet<(String, i64)> = frontier.iter().map(|f| (f.0.clone(), f.1)).collect();
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    let mut truncated = false;
    for d in 1..=depth {
        let mut next = Vec::new();
        for (repo, id, qn) in &frontier {
            let rows = if dir == "callers" {
                st.store.callers_of_symbol(repo, *id)?
            } else {
                st.store.callees_of_symbol(repo, *id)?
            };
            for r in rows {
                let other_id = r.other_id;
                let other = r.other.clone();
                let call_line = r.line as u64;
                let resolved = other_id >= 0;
                let (from, to, at) = if dir == "callers" {
                    (other.clone(), qn.clone(), r.path.clone())
                } else {
                    (qn.clone(), other.clone(), r.src_path.clone())
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
                        path: r.path.clone(),
                        line: r.start_line.map_or(call_line, |l| l as u64),
                        end_line: r.end_line.map_or(call_line, |l| l as u64),
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
    Ok((nodes, edges, truncated))
}

/// No function or method by that name: similar names in the hint.
fn not_found(st: &State, name: &str, last: &str) -> ToolError {
    let similar = st.store.similar_names(last, 5);
    let only = "call graphs cover functions, methods, constructors and macros; search_symbols finds names by prefix or substring";
    ToolError::new(
        codes::NOT_FOUND,
        format!("no function or method named {name:?}"),
        if similar.is_empty() {
            only.to_string()
        } else {
            format!("similar names: {} ({only})", similar.join(", "))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::fixture::{args, state};
    use serde_json::json;

    #[test]
    fn callers_and_callees_follow_resolved_calls() {
        let st = state();
        let out = run(&st, args(json!({"symbol": "slugify"}))).unwrap().0;
        let callers: Vec<&str> = out.edges.iter().map(|e| e.from.as_str()).collect();
        assert!(
            callers.contains(&"Product.slug") && callers.contains(&"Book.slug"),
            "{callers:?}"
        );
        assert!(out.edges.iter().all(|e| e.to == "slugify"));
        let out = run(
            &st,
            args(json!({"symbol": "timeout_seconds", "direction": "callees"})),
        )
        .unwrap()
        .0;
        assert!(
            out.edges.iter().any(|e| e.to == "parse_duration"),
            "{:?}",
            out.edges.iter().map(|e| &e.to).collect::<Vec<_>>()
        );
        let e = run(&st, args(json!({"symbol": "slugify", "depth": 4}))).unwrap_err();
        assert_eq!(e.code, crate::error::codes::INVALID_ARGUMENT);
    }
}
