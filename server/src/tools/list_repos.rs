//! `list_repos`: the loaded repositories and their snapshots.

use schemars::JsonSchema;
use serde::Serialize;

use super::*;
use crate::error::ToolError;
use crate::state::State;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "The loaded repositories with their snapshot id, commit and size.";

#[derive(Debug, Serialize, JsonSchema)]
pub struct RepoOut {
    pub repo: String,
    pub snapshot_id: String,
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub files: u64,
    pub content_bytes: u64,
    /// Id of the overlay in force (`code-indexer invalidate-file`): the
    /// files it stands in for are answered from the working tree's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlay_id: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListReposOut {
    pub repos: Vec<RepoOut>,
}

pub fn report(st: &State) -> ListReposOut {
    ListReposOut {
        repos: st
            .snaps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.overlay_of().is_none())
            .map(|(si, s)| {
                let o = st.overlay_for(si);
                RepoOut {
                    repo: s.repo().to_string(),
                    snapshot_id: s.id().to_string(),
                    commit: s.manifest.git.commit.clone(),
                    branch: s.manifest.git.branch.clone(),
                    files: (s.visible_count() + o.map_or(0, |o| o.files.len())) as u64,
                    content_bytes: s
                        .visible_files()
                        .map(|(_, f)| f.content_len() as u64)
                        .sum::<u64>()
                        + o.map_or(0, |o| o.content_bytes()),
                    overlay_id: o.map(|o| o.id().to_string()),
                }
            })
            .collect(),
    }
}

pub fn run(st: &State, _a: NoArgs) -> Result<(ListReposOut, String), ToolError> {
    let out = report(st);
    let text = out
        .repos
        .iter()
        .map(|r| {
            format!(
                "{} {} commit {} ({} files)",
                r.repo,
                r.snapshot_id,
                r.commit.as_deref().unwrap_or("-"),
                r.files
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    Ok((out, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::fixture::{state, FILES};

    #[test]
    fn lists_the_fixture() {
        let (out, text) = run(&state(), NoArgs {}).unwrap();
        assert_eq!(out.repos.len(), 1);
        assert_eq!(out.repos[0].repo, "shop");
        assert_eq!(out.repos[0].files, FILES.len() as u64);
        assert!(text.starts_with("shop "));
    }
}
