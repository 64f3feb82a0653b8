//! `code-indexer hooks install|uninstall`: git hooks that keep a repository's
//! snapshot on its default branch. `post-merge` syncs after a merge into the
//! default branch; `post-checkout` syncs when the default branch is checked
//! out. The sync runs in the background (git is not held up), its output
//! appended to `<git dir>/code-index-sync.log`. The hooks are a marked block
//! appended to any hook already there, so other tools' hooks keep running.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{codes, Error, Result};

const BEGIN: &str = "# >>> code-index >>>";
const END: &str = "# <<< code-index <<<";
const HOOKS: [&str; 2] = ["post-merge", "post-checkout"];

#[derive(Debug, Serialize)]
pub struct Installed {
    pub hooks: Vec<String>,
    pub default_branch: String,
    pub repo_dir: String,
}

/// `'…'` for sh.
fn quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

/// The default branch: the config's `default_branch`, else the remote's
/// HEAD (`origin/HEAD`), else the branch checked out now, else `main`.
pub fn default_branch(root: &Path) -> String {
    let cfg = crate::config::load(root, None).ok();
    if let Some(b) = cfg.and_then(|c| c.config.default_branch) {
        return b;
    }
    let remote = crate::git::remote_head(root);
    remote
        .or_else(|| crate::git::branch(root))
        .unwrap_or_else(|| "main".to_string())
}

fn hooks_dir(root: &Path) -> Result<PathBuf> {
    if !crate::git::is_work_tree(root) {
        return Err(Error::new(
            codes::NOT_GIT,
            format!("{} is no git work tree", root.display()),
            "run `git init` first, or use `code-indexer watch` to sync a tree without git",
        )
        .at(root));
    }
    crate::git::hooks_dir(root).ok_or_else(|| {
        Error::new(
            codes::NOT_GIT,
            format!("git names no hooks directory for {}", root.display()),
            "check the repository with `git rev-parse --git-path hooks`",
        )
    })
}

/// The hook file without our block.
fn without_block(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for l in text.lines() {
        if l.trim_start().starts_with(BEGIN) {
            inside = true;
        } else if l.trim() == END {
            inside = false;
        } else if !inside {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

fn block(hook: &str, exe: &Path, root: &Path, repo_dir: &Path, branch: &str) -> String {
    let branch_q = format!("'{}'", branch.replace('\'', "'\\''"));
    // post-checkout's third argument is 1 for a branch checkout (0: files).
    let cond = match hook {
        "post-checkout" => {
            format!("[ \"$3\" = 1 ] && [ \"$(git symbolic-ref --short -q HEAD)\" = {branch_q} ]")
        }
        _ => format!("[ \"$(git symbolic-ref --short -q HEAD)\" = {branch_q} ]"),
    };
    format!(
        "{BEGIN} (written by `code-indexer hooks install`; `code-indexer hooks uninstall` removes it)\n\
         if {cond}; then\n  \
         ( {} sync {} --index {} >>\"$(git rev-parse --git-dir)/code-index-sync.log\" 2>&1 & )\n\
         fi\n{END}\n",
        quote(exe),
        quote(root),
        quote(repo_dir)
    )
}

/// Write (or rewrite) the hooks' block for `root`, syncing into `repo_dir`
/// with the binary `exe`.
pub fn install(root: &Path, repo_dir: &Path, exe: &Path) -> Result<Installed> {
    let dir = hooks_dir(root)?;
    std::fs::create_dir_all(&dir).map_err(|e| {
        Error::io(
            codes::WRITE,
            "cannot create",
            &dir,
            e,
            "check the repository's permissions",
        )
    })?;
    let branch = default_branch(root);
    let mut written = Vec::new();
    for hook in HOOKS {
        let p = dir.join(hook);
        let old = std::fs::read_to_string(&p).unwrap_or_default();
        let mut text = without_block(&old);
        if text.trim().is_empty() {
            text = "#!/bin/sh\n".to_string();
        }
        text.push_str(&block(hook, exe, root, repo_dir, &branch));
        write_executable(&p, &text)?;
        written.push(p.display().to_string());
    }
    Ok(Installed {
        hooks: written,
        default_branch: branch,
        repo_dir: repo_dir.display().to_string(),
    })
}

/// Remove the block (and a hook file left with nothing but a shebang).
pub fn uninstall(root: &Path) -> Result<Vec<String>> {
    let dir = hooks_dir(root)?;
    let mut removed = Vec::new();
    for hook in HOOKS {
        let p = dir.join(hook);
        let Ok(old) = std::fs::read_to_string(&p) else {
            continue;
        };
        if !old.contains(BEGIN) {
            continue;
        }
        let text = without_block(&old);
        let res = if text.trim() == "#!/bin/sh" || text.trim().is_empty() {
            std::fs::remove_file(&p)
        } else {
            std::fs::write(&p, text)
        };
        res.map_err(|e| {
            Error::io(
                codes::WRITE,
                "cannot rewrite",
                &p,
                e,
                "check the hook's permissions",
            )
        })?;
        removed.push(p.display().to_string());
    }
    Ok(removed)
}

fn write_executable(p: &Path, text: &str) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(p, text)
        .and_then(|_| std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)))
        .map_err(|e| {
            Error::io(
                codes::WRITE,
                "cannot write",
                p,
                e,
                "check the hook's permissions",
            )
        })
}
