//! The MCP tools, one module each: its arguments, its output, its body
//! (`run(&State, Args) -> (Out, text)`) and its description. Tools never
//! import each other; what two tools share lives here or in [`page`].
//!
//! **Invariant:** no rmcp here (the router in [`crate::mcp`] owns it); every
//! tool is read-only and answers within the response budget.

pub mod call_graph;
pub mod changes;
pub mod find_definitions;
pub mod find_references;
#[cfg(test)]
pub mod fixture;
pub mod grep;
pub mod health;
pub mod list_repos;
pub mod page;
pub mod read_file;
pub mod related_files;
pub mod search;
pub mod search_code;
pub mod search_files;
pub mod search_symbols;

pub use page::*;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::snapshot::Snapshot;
use crate::state::State;
use crate::store::{NameMatch, SymbolFilter, SymbolRow};

/// A string or a list of strings.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoArgs {}

#[derive(Debug, Serialize, JsonSchema)]
pub struct NotIndexed {
    /// Over the snapshot's max_file_size (default 1 MiB; rg would search them).
    pub too_large: u64,
    /// Holding a NUL byte (rg skips them too).
    pub binary: u64,
    pub unreadable: u64,
}

impl NotIndexed {
    /// What the manifests of `snaps` say was left out, when anything was.
    fn of(snaps: &[&Snapshot]) -> Option<NotIndexed> {
        let sum = |f: fn(&Snapshot) -> u64| snaps.iter().fold(0u64, |a, s| a.saturating_add(f(s)));
        let n = NotIndexed {
            too_large: sum(|s| s.manifest.skipped.too_large),
            binary: sum(|s| s.manifest.skipped.binary),
            unreadable: sum(|s| s.manifest.skipped.unreadable),
        };
        (n.too_large > 0 || n.binary > 0 || n.unreadable > 0).then_some(n)
    }

    /// One line for the text answer.
    fn line(&self) -> String {
        let mut parts = Vec::new();
        if self.too_large > 0 {
            parts.push(format!("{} over the size cap", self.too_large));
        }
        if self.binary > 0 {
            parts.push(format!("{} binary", self.binary));
        }
        if self.unreadable > 0 {
            parts.push(format!("{} unreadable", self.unreadable));
        }
        let mut l = format!(
            "not searched: files not in the snapshot ({})",
            parts.join(", ")
        );
        if self.too_large > 0 {
            l.push_str(
                "; raise max_file_size in .code-index.yaml and rebuild to include large files",
            );
        }
        l.push('\n');
        l
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SymbolArgs {
    /// A name ("get_or_create") or qualified name ("QuerySet.get_or_create"). Definitions match the
    /// qualified name; find_references matches usages by the simple name (the part after the last dot).
    pub symbol: String,
    /// Only under this sub-directory or in this file (for find_references: both definitions and usages).
    #[serde(default)]
    pub path: Option<String>,
    /// Only definitions of this kind (function, method, class, ...); usages are not filtered by it.
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub repo: Option<String>,
    /// Per page, 1..=1000: find_definitions definitions (default 50), find_references files (default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    #[serde(default)]
    #[schemars(length(max = 1024))]
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SymbolsOut {
    pub symbols: Vec<SymbolRow>,
    pub total_count: u64,
    pub has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// A definition's line in a listing.
/// A page of definitions as the answer: the hint, when any, ends the text.
pub(crate) fn symbols_answer(
    symbols: Vec<SymbolRow>,
    total_count: u64,
    next_cursor: Option<String>,
    hint: Option<String>,
    mut text: String,
) -> Result<(SymbolsOut, String), ToolError> {
    if let Some(h) = &hint {
        text.push_str(h);
    }
    Ok((
        SymbolsOut {
            symbols,
            total_count,
            has_more: next_cursor.is_some(),
            next_cursor,
            hint,
        },
        text,
    ))
}

pub(crate) fn symbol_line(r: &SymbolRow) -> String {
    format!(
        "{}:{} {} {} — {}\n",
        r.path, r.name_line, r.kind, r.qualified_name, r.signature
    )
}

/// The symbol kind `kind` names: one of the kinds in any case (`Struct`),
/// or a common alias (`func`, `fn`, `def` → function; `const` → constant;
/// `var` → variable; `ctor` → constructor; `enum_member`… are not aliases).
pub(crate) fn kind_of(kind: Option<&str>) -> Result<Option<String>, ToolError> {
    let Some(k) = kind else { return Ok(None) };
    let l = k.trim().to_ascii_lowercase();
    let canonical = match l.as_str() {
        "func" | "fn" | "def" | "fun" | "functions" => "function",
        "methods" | "meth" => "method",
        "classes" | "cls" => "class",
        "structs" => "struct",
        "const" | "constants" => "constant",
        "var" | "let" | "variables" => "variable",
        "ctor" | "init" => "constructor",
        "iface" | "interfaces" => "interface",
        "traits" => "trait",
        "enums" => "enum",
        "macros" => "macro",
        "prop" | "properties" => "property",
        "fields" => "field",
        other => other,
    };
    match code_index_schemas::SYMBOL_KINDS
        .iter()
        .find(|&&x| x == canonical)
    {
        Some(x) => Ok(Some(x.to_string())),
        None => Err(ToolError::invalid_argument(
            format!("unknown kind {k:?}"),
            format!(
                "use one of: {}",
                code_index_schemas::SYMBOL_KINDS.join(", ")
            ),
        )),
    }
}

pub(crate) fn repo_names(st: &State, repo: Option<&str>) -> Result<Vec<String>, ToolError> {
    Ok(st
        .select(repo)?
        .iter()
        .map(|s| s.repo().to_string())
        .collect())
}

pub(crate) fn not_found_hint(st: &State, name: &str) -> String {
    let similar = st.store.similar_names(name, 5);
    if similar.is_empty() {
        "check the spelling, or grep for the text".into()
    } else {
        format!("similar names in the index: {}", similar.join(", "))
    }
}

/// Definitions of `a.symbol` (`limit` from `offset`) and how many there are.
pub(crate) fn definitions(
    st: &State,
    a: &SymbolArgs,
    limit: usize,
    offset: usize,
) -> Result<(Vec<SymbolRow>, u64), ToolError> {
    if a.symbol.trim().is_empty() {
        return Err(ToolError::invalid_argument(
            "empty symbol",
            "pass a name like \"get_or_create\" or \"QuerySet.get_or_create\"",
        ));
    }
    let filter = SymbolFilter {
        repos: repo_names(st, a.repo.as_deref())?,
        kind: kind_of(a.kind.as_deref())?,
        lang: None,
        path: a.path.clone(),
    };
    st.store.symbols(
        a.symbol.trim(),
        NameMatch::Definition,
        &filter,
        limit,
        offset,
    )
}
