//! Lists the files of a tree exactly as ripgrep would search them (`.gitignore`
//! inside a git repo, `.ignore` and `.rgignore` always, hidden files skipped,
//! symlinks not followed unless `follow_symlinks` asks, as `rg -L` does),
//! minus the unambiguous default exclusions and the configured
//! include/exclude globs. Binary detection happens when the file
//! is read (see `analyze`), as in ripgrep.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::{WalkBuilder, WalkState};

use crate::config::Effective;
use crate::error::{codes, Error, Result};

/// A file the walker kept.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Repo-relative, '/'-separated.
    pub rel: String,
    pub abs: PathBuf,
    pub size: u64,
}

#[derive(Debug, Default, Clone)]
pub struct WalkResult {
    pub entries: Vec<Entry>,
    pub default_excluded: u64,
    pub config_excluded: u64,
    pub too_large: u64,
    /// Paths whose metadata could not be read.
    pub unreadable: Vec<PathBuf>,
}

/// Directory names that are never source: dependency trees, caches, VCS.
const EXCLUDED_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".bzr",
    "CVS",
    "node_modules",
    "bower_components",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    ".eggs",
    ".gradle",
    ".idea",
    ".vscode",
    ".cache",
    ".venv",
];

/// True for a directory that is never indexed (also a Python venv, told by its `pyvenv.cfg`).
pub fn is_excluded_dir(name: &str, path: &Path) -> bool {
    EXCLUDED_DIRS.contains(&name) || path.join("pyvenv.cfg").is_file()
}

/// True for editor swap and backup files.
pub fn is_editor_file(name: &str) -> bool {
    name.ends_with(".swp")
        || name.ends_with(".swo")
        || name.ends_with('~')
        || (name.starts_with('#') && name.ends_with('#'))
        || name.starts_with(".#")
        || name == ".DS_Store"
}

fn rel_of(root: &Path, p: &Path) -> Option<String> {
    let rel = p.strip_prefix(root).ok()?;
    let s = rel.to_string_lossy().replace('\\', "/");
    if s.is_empty() {
        None
    } else {
        Some(s)
    }
}

/// Walk `root` with ripgrep's rules and the config's globs.
pub fn walk(root: &Path, cfg: &Effective, threads: usize) -> Result<WalkResult> {
    let out = Mutex::new(WalkResult::default());
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut builder = WalkBuilder::new(root);
    builder
        .standard_filters(true)
        .hidden(true)
        .parents(true)
        .follow_links(cfg.follow_symlinks)
        .add_custom_ignore_filename(".rgignore")
        .threads(threads.max(1));
    collect(&builder, root, cfg, false, &out, &errors);
    if !cfg.include_override.is_empty() {
        let mut raw = WalkBuilder::new(root);
        raw.standard_filters(false)
            .follow_links(cfg.follow_symlinks)
            .threads(threads.max(1));
        collect(&raw, root, cfg, true, &out, &errors);
    }
    let errs = errors.into_inner().unwrap();
    if let Some(first) = errs.first() {
        return Err(Error::new(
            codes::WALK,
            format!("cannot walk {}: {first}", root.display()),
            "check permissions of the directory named above, or exclude it in .code-index.yaml",
        )
        .at(root));
    }
    let mut res = out.into_inner().unwrap();
    res.entries.sort_by(|a, b| a.rel.cmp(&b.rel));
    res.entries.dedup_by(|a, b| a.rel == b.rel);
    res.unreadable.sort();
    Ok(res)
}

/// The link of a symlink loop error (possibly wrapped with its depth).
fn loop_child(e: &ignore::Error) -> Option<PathBuf> {
    match e {
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            loop_child(err)
        }
        _ => None,
    }
}

/// A symbolic link whose target does not exist (met only when links are
/// followed; `rg -L` warns and skips it, as here).
fn is_dangling_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
        && std::fs::metadata(p).is_err()
}

fn collect(
    builder: &WalkBuilder,
    root: &Path,
    cfg: &Effective,
    override_pass: bool,
    out: &Mutex<WalkResult>,
    errors: &Mutex<Vec<String>>,
) {
    builder.build_parallel().run(|| {
        Box::new(|res| {
            let dent = match res {
                Ok(d) => d,
                Err(e) => {
                    // Unreadable directories and broken ignore files: ripgrep
                    // reports and continues; so do we, but loudly.
                    if loop_child(&e).is_some() {
                        // A followed link back to an ancestor: ripgrep
                        // (`-L`) warns and goes on; its files are listed once.
                    } else if let ignore::Error::WithPath { path, .. } = &e {
                        if !is_dangling_link(path) {
                            out.lock().unwrap().unreadable.push(path.clone());
                        }
                    } else if !override_pass {
                        errors.lock().unwrap().push(e.to_string());
                    }
                    return WalkState::Continue;
                }
            };
            let Some(ft) = dent.file_type() else {
                return WalkState::Continue;
            };
            let name = dent.file_name().to_string_lossy();
            if ft.is_dir() {
                if dent.depth() > 0 && is_excluded_dir(&name, dent.path()) {
                    if !override_pass {
                        out.lock().unwrap().default_excluded += 1;
                    }
                    return WalkState::Skip;
                }
                return WalkState::Continue;
            }
            if !ft.is_file() {
                return WalkState::Continue;
            }
            let Some(rel) = rel_of(root, dent.path()) else {
                return WalkState::Continue;
            };
            if override_pass {
                if !cfg.include_override.is_match(&rel) {
                    return WalkState::Continue;
                }
            } else if is_editor_file(&name) {
                out.lock().unwrap().default_excluded += 1;
                return WalkState::Continue;
            } else if (!cfg.include.is_empty() && !cfg.include.is_match(&rel))
                || cfg.exclude.is_match(&rel)
            {
                if !cfg.include_override.is_match(&rel) {
                    out.lock().unwrap().config_excluded += 1;
                }
                return WalkState::Continue;
            }
            let size = match dent.metadata() {
                Ok(m) => m.len(),
                Err(_) => {
                    out.lock()
                        .unwrap()
                        .unreadable
                        .push(dent.path().to_path_buf());
                    return WalkState::Continue;
                }
            };
            let mut o = out.lock().unwrap();
            if size > cfg.max_file_size {
                if !override_pass {
                    o.too_large += 1;
                }
                return WalkState::Continue;
            }
            o.entries.push(Entry {
                rel,
                abs: dent.path().to_path_buf(),
                size,
            });
            WalkState::Continue
        })
    });
}
