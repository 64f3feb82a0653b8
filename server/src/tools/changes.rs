//! `changes`: what the overlays in force changed against their snapshots
//! (`code-indexer invalidate-file`), with the callers of each changed symbol.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::state::State;
use code_index_schemas::diag::Code;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "What the edits since the snapshot changed (the overlay `code-indexer invalidate-file` builds): files added, removed and changed; symbols added, removed and changed, each with the places that use its name (callers first); edge counts. Empty when no file was invalidated.";

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ChangesArgs {
    #[serde(default)]
    pub repo: Option<String>,
    /// Symbols listed per repo, 1..=200 (default 50); the counts are always whole.
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct UseOut {
    pub path: String,
    pub line: u64,
    pub ref_kind: String,
    pub enclosing_symbol: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ChangedSymbol {
    /// added | removed | changed
    pub change: String,
    pub path: String,
    pub qualified_name: String,
    pub kind: String,
    pub line: u64,
    pub signature: String,
    /// Uses of its name elsewhere (calls first), at most 10.
    pub used_by: Vec<UseOut>,
    pub used_by_count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RepoChanges {
    pub repo: String,
    pub snapshot_id: String,
    pub overlay_id: String,
    pub files_added: Vec<String>,
    pub files_removed: Vec<String>,
    pub files_changed: Vec<String>,
    pub symbols: Vec<ChangedSymbol>,
    pub symbol_count: u64,
    pub edges_added: u64,
    pub edges_removed: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ChangesOut {
    pub repos: Vec<RepoChanges>,
}

pub fn run(st: &State, a: ChangesArgs) -> Result<(ChangesOut, String), ToolError> {
    let limit = a.limit.unwrap_or(50).clamp(1, 200) as usize;
    let selected: Vec<String> = st
        .select(a.repo.as_deref())?
        .iter()
        .map(|s| s.repo().to_string())
        .collect();
    let mut out = ChangesOut { repos: Vec::new() };
    for (si, base) in st.snaps.iter().enumerate() {
        if base.overlay_of().is_some() || !selected.iter().any(|r| r == base.repo()) {
            continue;
        }
        let Some(o) = st.overlay_for(si) else {
            continue;
        };
        let scope = o
            .manifest
            .overlay
            .as_ref()
            .map(|x| x.replaces.iter().cloned().collect());
        let d = code_index_schemas::diff::diff(&base.dir, &o.dir, scope.as_ref()).map_err(|e| {
            ToolError::new(
                Code::Internal,
                format!("cannot compare {} with its overlay: {e}", base.repo()),
                "run `code-indexer invalidate-file` again, or rebuild the snapshot",
            )
        })?;
        let repos = vec![base.repo().to_string()];
        let mut symbols = Vec::new();
        let all = d
            .symbols
            .added
            .iter()
            .map(|s| ("added", s))
            .chain(d.symbols.removed.iter().map(|s| ("removed", s)))
            .chain(d.symbols.changed.iter().map(|s| ("changed", s)));
        for (change, s) in all.take(limit) {
            let mut uses: Vec<_> = st
                .store
                .references(&s.name, &repos, None)?
                .into_iter()
                .filter(|r| {
                    r.path != s.path || r.enclosing_symbol.as_deref() != Some(&s.qualified_name)
                })
                .collect();
            uses.sort_by_key(|r| (r.ref_kind != "call", r.path.clone(), r.line));
            symbols.push(ChangedSymbol {
                change: change.into(),
                path: s.path.clone(),
                qualified_name: s.qualified_name.clone(),
                kind: s.kind.clone(),
                line: s.line as u64,
                signature: s.signature.clone(),
                used_by_count: uses.len() as u64,
                used_by: uses
                    .into_iter()
                    .take(10)
                    .map(|r| UseOut {
                        path: r.path,
                        line: r.line,
                        ref_kind: r.ref_kind,
                        enclosing_symbol: r.enclosing_symbol,
                    })
                    .collect(),
            });
        }
        let paths =
            |v: &[code_index_schemas::diff::FileChange]| v.iter().map(|f| f.path.clone()).collect();
        out.repos.push(RepoChanges {
            repo: base.repo().to_string(),
            snapshot_id: base.id().to_string(),
            overlay_id: o.id().to_string(),
            files_added: paths(&d.files.added),
            files_removed: paths(&d.files.removed),
            files_changed: paths(&d.files.changed),
            symbol_count: (d.symbols.added.len()
                + d.symbols.removed.len()
                + d.symbols.changed.len()) as u64,
            symbols,
            edges_added: d.edges.added.len() as u64,
            edges_removed: d.edges.removed.len() as u64,
        });
    }
    let mut text = String::new();
    if out.repos.is_empty() {
        text.push_str("no overlay: nothing changed since the snapshot (as far as `code-indexer invalidate-file` was told)");
    }
    for r in &out.repos {
        text.push_str(&format!(
            "{}@{} + overlay {}: files +{} -{} ~{}; {} symbol change(s); edges +{} -{}\n",
            r.repo,
            r.snapshot_id,
            r.overlay_id,
            r.files_added.len(),
            r.files_removed.len(),
            r.files_changed.len(),
            r.symbol_count,
            r.edges_added,
            r.edges_removed
        ));
        for s in &r.symbols {
            text.push_str(&format!(
                "  {} {} {} {}:{} (used {}x{})\n",
                s.change,
                s.kind,
                s.qualified_name,
                s.path,
                s.line,
                s.used_by_count,
                s.used_by
                    .first()
                    .map(|u| format!(", e.g. {}:{}", u.path, u.line))
                    .unwrap_or_default()
            ));
        }
        if r.symbol_count as usize > r.symbols.len() {
            text.push_str(&format!(
                "  ... {} more (raise limit)\n",
                r.symbol_count as usize - r.symbols.len()
            ));
        }
    }
    Ok((out, text))
}
