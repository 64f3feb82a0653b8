//! Git facts of the indexed tree, through the `git` command (absent git or
//! a non-git tree simply gives no facts).

use std::path::Path;
use std::process::Command;

use code_index_schemas::GitInfo;

fn git(repo: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    if s.is_empty() {
        None
    } else {
        Some(s)
    }
}

/// True when `repo` is the top of a git work tree.
pub fn is_work_tree(repo: &Path) -> bool {
    git(repo, &["rev-parse", "--is-inside-work-tree"]).as_deref() == Some("true")
}

/// Commit, branch, commit time and dirtiness; default when not a git repo.
pub fn info(repo: &Path) -> GitInfo {
    if !is_work_tree(repo) {
        return GitInfo::default();
    }
    let commit = git(repo, &["rev-parse", "--verify", "-q", "HEAD"]);
    if commit.is_none() {
        return GitInfo::default();
    }
    GitInfo {
        commit,
        branch: git(repo, &["symbolic-ref", "--short", "-q", "HEAD"]),
        commit_time: git(repo, &["show", "-s", "--format=%cI", "HEAD"]),
        dirty: git(repo, &["status", "--porcelain", "--untracked-files=no"]).is_some(),
    }
}

/// HEAD of the repo, if any.
pub fn head(repo: &Path) -> Option<String> {
    git(repo, &["rev-parse", "--verify", "-q", "HEAD"])
}

/// Commits in HEAD that `commit` lacks; None when unknown (e.g. commit not in this repo).
pub fn commits_behind(repo: &Path, commit: &str) -> Option<u64> {
    git(repo, &["rev-list", "--count", &format!("{commit}..HEAD")]).and_then(|s| s.parse().ok())
}
