//! `health`: server status and each snapshot's facts (also the
//! `codeindex://health` resource).

use schemars::JsonSchema;
use serde::Serialize;

use super::*;
use crate::error::ToolError;
use crate::state::State;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "Server status, version, uptime, and each snapshot's repo, commit, schema version and row counts.";

#[derive(Debug, Serialize, JsonSchema)]
pub struct TableRows {
    pub table: String,
    /// Rows of a Parquet table; absent for an index file (`ngrams.bin`,
    /// `keywords.bin`, `heads.bin`, `vectors.faiss` counts vectors), which
    /// has no rows of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    pub bytes: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SnapshotHealth {
    pub repo: String,
    pub snapshot_id: String,
    pub commit: Option<String>,
    /// The branch the snapshot was built on (null: detached HEAD or no git).
    pub branch: Option<String>,
    /// The snapshot was built from a tree with uncommitted changes.
    pub dirty_at_build: bool,
    pub schema_version: u32,
    pub tables: Vec<TableRows>,
    /// For the working directory's repo: is the snapshot's commit behind the checkout's git HEAD? Null when unknown.
    pub behind_head: Option<bool>,
    /// Commits in HEAD the snapshot lacks, when known.
    pub commits_behind: Option<u64>,
    /// For the working directory's repo: paths of the checkout that differ
    /// from its HEAD (modified, added, deleted, untracked). Null when unknown.
    pub working_tree_changes: Option<u64>,
    /// The snapshot carries a manifest.sig.
    pub signed: bool,
    /// Id of the trusted key its signature verified against (null: unsigned,
    /// or no key is trusted, so it was not checked).
    pub verified_by: Option<String>,
    /// The overlay in force (`code-indexer invalidate-file`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlay: Option<OverlayHealth>,
}

/// An overlay: the files it answers from the working tree's text.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OverlayHealth {
    pub overlay_id: String,
    /// Paths it stands in for (changed, added or deleted), at most 100.
    pub paths: Vec<String>,
    pub path_count: u64,
    /// Of those, the files it holds (the others were deleted or are no longer indexed).
    pub files: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct HealthOut {
    pub status: String,
    pub server_version: String,
    pub uptime_seconds: f64,
    /// Where the table tools read: `cache` (the table cache), `parquet`
    /// (the snapshot files, slower, while a new snapshot's cache builds),
    /// `loading` or `error`.
    pub tables_from: String,
    pub snapshots: Vec<SnapshotHealth>,
}

pub fn report(st: &State) -> HealthOut {
    HealthOut {
        status: "ok".into(),
        server_version: env!("CARGO_PKG_VERSION").into(),
        uptime_seconds: st.started.elapsed().as_secs_f64(),
        tables_from: st.store.reads_from().to_string(),
        snapshots: st
            .snaps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.overlay_of().is_none())
            .map(|(si, s)| SnapshotHealth {
                repo: s.repo().to_string(),
                snapshot_id: s.id().to_string(),
                commit: s.manifest.git.commit.clone(),
                branch: s.manifest.git.branch.clone(),
                dirty_at_build: s.manifest.git.dirty,
                schema_version: s.manifest.schema_version,
                tables: s
                    .manifest
                    .files
                    .iter()
                    .map(|f| TableRows {
                        table: f.name.trim_end_matches(".parquet").to_string(),
                        rows: (f.name.ends_with(".parquet") || f.name == "vectors.faiss")
                            .then_some(f.rows),
                        bytes: f.bytes,
                    })
                    .collect(),
                behind_head: None,
                commits_behind: None,
                working_tree_changes: None,
                signed: s.signature.is_some(),
                verified_by: s.signature.clone().filter(|k| k != "unverified"),
                overlay: st.overlay_for(si).map(|o| {
                    let replaces = &o.manifest.overlay.as_ref().expect("overlay").replaces;
                    OverlayHealth {
                        overlay_id: o.id().to_string(),
                        paths: replaces.iter().take(100).cloned().collect(),
                        path_count: replaces.len() as u64,
                        files: o.files.len() as u64,
                    }
                }),
            })
            .map(|mut h| {
                if let (Some(dir), Some(commit)) = (checkout_of(st, &h.repo), h.commit.clone()) {
                    (h.behind_head, h.commits_behind) = behind(&dir, &commit);
                    h.working_tree_changes =
                        git(&dir, &["status", "--porcelain", "--untracked-files=all"])
                            .map(|s| s.lines().count() as u64);
                }
                h
            })
            .collect(),
    }
}

fn checkout_of(st: &State, repo: &str) -> Option<std::path::PathBuf> {
    (st.default_repo.as_deref() == Some(repo))
        .then(|| st.default_checkout.clone())
        .flatten()
}

/// A git command's trimmed output in `dir` (metadata only), if it succeeds.
fn git(dir: &std::path::Path, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("git")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Compare a snapshot commit with a checkout's HEAD through `git` (metadata only).
fn behind(dir: &std::path::Path, commit: &str) -> (Option<bool>, Option<u64>) {
    let git = |args: &[&str]| git(dir, args);
    let Some(head) = git(&["rev-parse", "--verify", "-q", "HEAD"]) else {
        return (None, None);
    };
    if head == commit {
        return (Some(false), Some(0));
    }
    match git(&["rev-list", "--count", &format!("{commit}..HEAD")])
        .and_then(|n| n.parse::<u64>().ok())
    {
        Some(n) => (Some(n > 0), Some(n)),
        None => (Some(true), None),
    }
}

pub fn run(st: &State, _a: NoArgs) -> Result<(HealthOut, String), ToolError> {
    let out = report(st);
    let mut text = format!(
        "{} v{} up {:.0}s, {} snapshot(s)",
        out.status,
        out.server_version,
        out.uptime_seconds,
        out.snapshots.len()
    );
    for s in &out.snapshots {
        text.push_str(&format!(
            "\n{}@{}: commit {} on {}{}",
            s.repo,
            s.snapshot_id,
            s.commit.as_deref().map_or("-", |c| &c[..c.len().min(12)]),
            s.branch.as_deref().unwrap_or("(no branch)"),
            if s.dirty_at_build {
                " (built with uncommitted changes)"
            } else {
                ""
            }
        ));
        match (s.commits_behind, s.working_tree_changes) {
            (Some(0), Some(0)) => text.push_str("; the checkout is at that commit, no changes"),
            (n, c) if n.is_some() || c.is_some() => text.push_str(&format!(
                "; the checkout is ahead: {} commit(s), {} changed path(s)",
                n.map_or("?".into(), |n| n.to_string()),
                c.map_or("?".into(), |n| n.to_string())
            )),
            _ => {}
        }
        if let Some(o) = &s.overlay {
            text.push_str(&format!(
                "\n{}@{}: overlay {} answers {} path(s) from the working tree: {}{}",
                s.repo,
                s.snapshot_id,
                o.overlay_id,
                o.path_count,
                o.paths
                    .iter()
                    .take(10)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
                if o.path_count > 10 { ", ..." } else { "" }
            ));
        }
    }
    Ok((out, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::fixture::state;

    #[test]
    fn reports_each_table() {
        let (out, _) = run(&state(), NoArgs {}).unwrap();
        assert_eq!(out.status, "ok");
        let tables: Vec<(&str, Option<u64>)> = out.snapshots[0]
            .tables
            .iter()
            .map(|t| (t.table.as_str(), t.rows))
            .collect();
        assert!(tables.contains(&("files", Some(5))), "{tables:?}");
        assert!(tables
            .iter()
            .any(|(t, n)| *t == "symbols" && n.is_some_and(|n| n >= 8)));
        assert!(tables.contains(&("ngrams.bin", None)), "{tables:?}");
        assert!(!out.snapshots[0].signed);
    }
}
