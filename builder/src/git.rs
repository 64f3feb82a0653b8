//! Git facts of the indexed tree, through the `git` command (absent git or
//! a non-git tree simply gives no facts).

use std::path::Path;
use std::process::Command;

use code_index_schemas::GitInfo;

/// A git command's trimmed output, `None` when it fails or prints nothing.
fn git(repo: &Path, args: &[&str]) -> Option<String> {
    let s = String::from_utf8(git_raw(repo, args)?)
        .ok()?
        .trim()
        .to_string();
    (!s.is_empty()).then_some(s)
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

/// Raw output of a git command (NUL-separated lists keep their bytes).
fn git_raw(repo: &Path, args: &[&str]) -> Option<Vec<u8>> {
    // No optional locks: a background sync's `git status` never takes the
    // index lock a user's merge or checkout needs.
    let out = Command::new("git")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// The branch the remote's HEAD names (`origin/HEAD` → `main`), if any.
pub fn remote_head(repo: &Path) -> Option<String> {
    git(
        repo,
        &["symbolic-ref", "--short", "-q", "refs/remotes/origin/HEAD"],
    )
    .and_then(|s| s.split_once('/').map(|(_, b)| b.to_string()))
}

/// The branch HEAD is on, if any.
pub fn branch(repo: &Path) -> Option<String> {
    git(repo, &["symbolic-ref", "--short", "-q", "HEAD"])
}

/// The `.git` directory of `repo` (absolute), for hooks.
pub fn hooks_dir(repo: &Path) -> Option<std::path::PathBuf> {
    let p = git(
        repo,
        &["rev-parse", "--path-format=absolute", "--git-path", "hooks"],
    )?;
    Some(std::path::PathBuf::from(p))
}

/// The paths under `repo` (relative to it, `/`-separated) whose content may
/// differ from commit `commit`'s: git compares the two commits' trees (a
/// Merkle comparison: a directory whose tree hash is equal is skipped without
/// looking inside) and lists the working tree's changes and untracked files
/// (its index keeps file stats, so unchanged files are not read). `None` when
/// `repo` is no git work tree or `commit` is not in it.
pub fn changed_since(repo: &Path, commit: &str) -> Option<std::collections::BTreeSet<String>> {
    if !is_work_tree(repo) {
        return None;
    }
    let prefix = git(repo, &["rev-parse", "--show-prefix"]).unwrap_or_default();
    let committed = git_raw(
        repo,
        &[
            "diff-tree",
            "-r",
            "--no-commit-id",
            "--name-only",
            "-z",
            commit,
            "HEAD",
            "--",
        ],
    )?;
    let status = git_raw(
        repo,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules=all",
        ],
    )?;
    let mut out = std::collections::BTreeSet::new();
    let mut add = |p: &[u8]| {
        let p = String::from_utf8_lossy(p);
        if let Some(rel) = p.strip_prefix(prefix.as_str()) {
            if !rel.is_empty() {
                out.insert(rel.to_string());
            }
        }
    };
    for p in committed.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        add(p);
    }
    // Porcelain v1 entries: `XY <path>`.
    for e in status.split(|&b| b == 0).filter(|e| e.len() > 3) {
        add(&e[3..]);
    }
    Some(out)
}
