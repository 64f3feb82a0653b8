//! `code-indexer status`: what a snapshot holds and whether it is behind.

use std::path::Path;

use serde::Serialize;

use crate::error::Result;
use crate::snapshot;

#[derive(Debug, Serialize)]
pub struct Status {
    pub snapshot_dir: String,
    pub manifest: code_index_schemas::Manifest,
    pub total_bytes: u64,
    /// The repo's HEAD when `--repo` was given and is a git repo.
    pub repo_head: Option<String>,
    /// None when unknown (no --repo, not git, or the commit is not in the repo).
    pub behind_head: Option<bool>,
    pub commits_behind: Option<u64>,
    /// With `--repo`: paths of the checkout that differ from its HEAD
    /// (modified, added, deleted, untracked); None when not a git checkout.
    pub working_tree_changes: Option<u64>,
    /// The repo's current branch, with `--repo`.
    pub repo_branch: Option<String>,
    /// Data files whose size or sha256 no longer match the manifest.
    pub damaged_files: Vec<String>,
    /// The key id of `manifest.sig` (as `keygen` and `sign` print it); None
    /// when the snapshot is not signed. Verified by the server against the
    /// keys it trusts.
    pub signed_by: Option<String>,
}

pub fn status(snapshot_arg: &Path, repo: Option<&Path>) -> Result<Status> {
    let dir = snapshot::resolve_dir(snapshot_arg)?;
    let manifest = snapshot::read_manifest(&dir)?;
    let mut damaged = Vec::new();
    for f in &manifest.files {
        match snapshot::describe(&dir, &f.name, f.rows) {
            Ok(d) if d.sha256 == f.sha256 && d.bytes == f.bytes => {}
            _ => damaged.push(f.name.clone()),
        }
    }
    let total_bytes = manifest.files.iter().map(|f| f.bytes).sum();
    let (mut repo_head, mut behind_head, mut commits_behind) = (None, None, None);
    let (mut working_tree_changes, mut repo_branch) = (None, None);
    if let Some(r) = repo {
        repo_head = crate::git::head(r);
        repo_branch = crate::git::branch(r);
        if let Some(c) = &repo_head {
            working_tree_changes = crate::git::changed_since(r, c).map(|s| s.len() as u64);
        }
        if let (Some(head), Some(commit)) = (&repo_head, &manifest.git.commit) {
            if head == commit {
                behind_head = Some(false);
                commits_behind = Some(0);
            } else if let Some(n) = crate::git::commits_behind(r, commit) {
                behind_head = Some(n > 0);
                commits_behind = Some(n);
            } else {
                behind_head = Some(true);
            }
        }
    }
    Ok(Status {
        snapshot_dir: dir.display().to_string(),
        manifest,
        total_bytes,
        repo_head,
        behind_head,
        commits_behind,
        working_tree_changes,
        repo_branch,
        damaged_files: damaged,
        signed_by: std::fs::read(dir.join(code_index_schemas::signing::SIGNATURE_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice::<code_index_schemas::signing::Signature>(&b).ok())
            .map(|s| s.key_id),
    })
}

/// Human-readable rendering.
pub fn render(s: &Status) -> String {
    let m = &s.manifest;
    let mut out = String::new();
    out.push_str(&format!(
        "snapshot  {}  ({})\n",
        m.snapshot_id, s.snapshot_dir
    ));
    out.push_str(&format!("repo      {}\n", m.repo));
    out.push_str(&format!(
        "git       commit {}  branch {}  time {}{}\n",
        m.git.commit.as_deref().unwrap_or("-"),
        m.git.branch.as_deref().unwrap_or("-"),
        m.git.commit_time.as_deref().unwrap_or("-"),
        if m.git.dirty { "  (dirty tree)" } else { "" }
    ));
    out.push_str(&format!(
        "built by  {} {}  schema {}  feature {}  config {}\n",
        m.tool,
        m.tool_version,
        m.schema_version,
        m.feature_version,
        &m.config_hash[..12.min(m.config_hash.len())]
    ));
    out.push_str("tables\n");
    for f in &m.files {
        out.push_str(&format!(
            "  {:<20} {:>12} rows {:>14} bytes\n",
            f.name, f.rows, f.bytes
        ));
    }
    out.push_str(&format!(
        "  {:<20} {:>12}      {:>14} bytes\n",
        "total", "", s.total_bytes
    ));
    let sk = &m.skipped;
    out.push_str(&format!(
        "skipped   default-excluded {}  config-excluded {}  too-large {}  binary {}  unreadable {}\n",
        sk.default_excluded, sk.config_excluded, sk.too_large, sk.binary, sk.unreadable
    ));
    out.push_str(&format!(
        "vectors   {}\n",
        m.embeddings
            .as_ref()
            .map(|e| format!("{} dim {} {}", e.model, e.dimension, e.metric))
            .unwrap_or_else(|| "none (built with --no-embeddings)".into())
    ));
    out.push_str(&match &s.signed_by {
        Some(k) => format!("signed    by key {k} (manifest.sig; the server checks it against the keys it trusts)\n"),
        None => "signed    no (`code-indexer sign` adds manifest.sig)\n".to_string(),
    });
    match (s.behind_head, s.commits_behind) {
        (Some(false), _) => out.push_str("freshness up to date with the repo's HEAD\n"),
        (Some(true), Some(n)) => out.push_str(&format!("freshness BEHIND: HEAD has {n} commit(s) the snapshot lacks; rebuild with `code-indexer index`\n")),
        (Some(true), None) => out.push_str("freshness BEHIND: the snapshot's commit differs from HEAD (not an ancestor)\n"),
        (None, _) => out.push_str("freshness unknown (pass --repo <path> of a git checkout)\n"),
    }
    if let Some(n) = s.working_tree_changes {
        out.push_str(&format!(
            "checkout  on {}: {n} path(s) differ from HEAD{}\n",
            s.repo_branch.as_deref().unwrap_or("(detached HEAD)"),
            if n > 0 {
                " (`code-indexer sync` indexes them; `invalidate-file` overlays them)"
            } else {
                ""
            }
        ));
    }
    if !s.damaged_files.is_empty() {
        out.push_str(&format!(
            "DAMAGED   {} (size or sha256 differ from the manifest; rebuild)\n",
            s.damaged_files.join(", ")
        ));
    }
    out
}
