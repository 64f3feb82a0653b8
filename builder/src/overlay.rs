//! `code-indexer invalidate-file`: overlays that keep a snapshot in step with
//! the files an agent edits, without touching the snapshot.
//!
//! An overlay is a snapshot directory of its own, built by the same phases as
//! a full build (same tables, rules, modules and model) from only the stale
//! paths, and published beside its base as `<repo>/.overlays/<base>/<id>/`
//! with `current` naming the one in force (see `OverlayInfo` in schemas).
//! Every call re-analyses all the paths the overlay already stood in for plus
//! the new ones, from the working tree, so the overlay in force always equals
//! the tree at its latest call; a later full or `--previous` build (a new
//! base) leaves it behind.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::CONFIG_FILE;
use crate::error::{codes, Error, Result};
use crate::index::{self, EmbedOptions, OverlayOptions};
use crate::snapshot;

/// The repository holding `abs` (the nearest ancestor with `.git` or
/// `.code-index.yaml`) and `abs` relative to it, `/`-separated. `abs` need
/// not exist (a deleted file, or a file in a deleted directory): its nearest
/// existing ancestor is resolved and the rest joined back.
pub fn find_repo(abs: &Path) -> Option<(PathBuf, String)> {
    let abs = resolve_existing_prefix(abs)?;
    let root = abs
        .ancestors()
        .skip(1)
        .find(|a| a.join(".git").exists() || a.join(CONFIG_FILE).is_file())?;
    let rel = abs.strip_prefix(root).ok()?;
    let rel = rel.to_string_lossy().replace('\\', "/");
    (!rel.is_empty()).then(|| (root.to_path_buf(), rel))
}

/// `p` with its longest existing prefix canonicalized (symlinks and `..`
/// resolved) and the components that no longer exist joined back.
fn resolve_existing_prefix(p: &Path) -> Option<PathBuf> {
    let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
    let mut cur = p;
    loop {
        if let Ok(c) = cur.canonicalize() {
            let mut out = c;
            for m in missing.iter().rev() {
                if *m == ".." {
                    out.pop();
                } else if *m != "." {
                    out.push(m);
                }
            }
            return Some(out);
        }
        missing.push(cur.file_name().or_else(|| {
            // `..` or `.` as the last component has no file_name.
            cur.components().next_back().map(|c| c.as_os_str())
        })?);
        cur = cur.parent()?;
    }
}

/// The paths `given` stands for: a path the working tree holds as a
/// directory, or one the snapshot holds files under (a deleted directory),
/// stands for every file under it in either; any other path for itself.
pub fn expand_dirs(root: &Path, given: &[String], indexed: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    for g in given {
        let g = g.trim_end_matches('/');
        let prefix = format!("{g}/");
        let abs = root.join(g);
        let under_snapshot: Vec<&String> = indexed
            .range(prefix.clone()..)
            .take_while(|p| p.starts_with(&prefix))
            .collect();
        if abs.is_dir() || (!abs.exists() && !indexed.contains(g) && !under_snapshot.is_empty()) {
            out.extend(under_snapshot.into_iter().cloned());
            if abs.is_dir() {
                for e in walkdir_files(&abs) {
                    if let Ok(rel) = e.strip_prefix(root) {
                        out.push(rel.to_string_lossy().replace('\\', "/"));
                    }
                }
            }
        } else {
            out.push(g.to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Every regular file under `dir` (not following symlinks; `.git` skipped).
fn walkdir_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() && e.file_name() != ".git" {
                stack.push(e.path());
            } else if t.is_file() {
                out.push(e.path());
            }
        }
    }
    out
}

/// The repository's name as a build would give it (config `name`, else the
/// directory's name).
pub fn repo_name(root: &Path) -> String {
    crate::config::load(root, None)
        .map(|cfg| index::repo_name(root, &cfg, None))
        .unwrap_or_else(|_| {
            root.file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default()
        })
}

/// What one `invalidate-file` call did for one repository.
#[derive(Debug, Serialize)]
pub struct Invalidated {
    pub repo: String,
    /// The snapshot amended.
    pub base: String,
    pub overlay_id: String,
    pub overlay_dir: String,
    /// Every path the overlay stands in for (this call's and earlier ones').
    pub replaces: Vec<String>,
    /// Of those, the ones analysed from the working tree (the rest are gone
    /// or no longer indexed).
    pub files: u64,
    pub seconds: f64,
}

/// Build the overlay of `root`'s snapshot in `repo_dir` (`<out>/<repo>/`,
/// holding `latest`) for `paths` plus those the current overlay covers.
pub fn invalidate(
    root: &Path,
    repo_dir: &Path,
    paths: &[String],
    threads: usize,
    embedding_cache: Option<PathBuf>,
) -> Result<Invalidated> {
    let started = std::time::Instant::now();
    let base_dir = snapshot::resolve_dir(repo_dir).map_err(|e| {
        Error::new(
            codes::NO_SNAPSHOT,
            format!("no snapshot to amend in {}: {}", repo_dir.display(), e.message),
            "index the repository first (`code-indexer index <repo> --out <dir>`), or pass --index <out>/<repo>",
        )
    })?;
    let base = snapshot::read_manifest(&base_dir)?;
    if base.overlay.is_some() {
        return Err(Error::new(
            codes::SNAPSHOT_INVALID,
            format!("{} is an overlay, not a snapshot", base_dir.display()),
            "pass the repository's snapshot directory <out>/<repo>/",
        ));
    }
    let layout_ok = base_dir.parent().and_then(Path::file_name) == Some(base.repo.as_ref());
    let out = base_dir
        .parent()
        .and_then(Path::parent)
        .filter(|_| layout_ok);
    let Some(out) = out else {
        return Err(Error::new(
            codes::SNAPSHOT_INVALID,
            format!(
                "{} is not laid out as <out>/{}/<id>/",
                base_dir.display(),
                base.repo
            ),
            "overlays live beside snapshots written by `code-indexer index --out <out>`; pass --index <out>/<repo>",
        ));
    };
    let cfg = crate::config::load(root, None)?;
    if cfg.hash != base.config_hash {
        return Err(Error::new(
            codes::CONFIG_CHANGED,
            format!(
                "the configuration of {} changed since snapshot {} was built",
                root.display(),
                base.snapshot_id
            ),
            "rebuild the snapshot (`code-indexer index <repo> --out <out> --previous <out>/<repo>`); overlays need the snapshot's own rules",
        ));
    }
    let indexed: BTreeSet<String> = crate::previous::hashes(&base_dir)?.into_keys().collect();
    let mut replaces: BTreeSet<String> = expand_dirs(root, paths, &indexed).into_iter().collect();
    if let Some(cur) = code_index_schemas::overlay_in_force(&base_dir) {
        if let Some(o) = snapshot::read_manifest(&cur)?.overlay {
            replaces.extend(o.replaces);
        }
    }
    let embeddings = base.embeddings.as_ref().map(|e| EmbedOptions {
        model: e.model.clone(),
        cache_dir: embedding_cache,
        flat_max: code_index_schemas::vectors::FLAT_MAX,
    });
    let opts = index::Options {
        repo: root.to_path_buf(),
        out: out.to_path_buf(),
        previous: None,
        threads,
        name: Some(base.repo.clone()),
        max_file_size: None,
        follow_symlinks: false,
        skip_unreadable: true,
        progress: false,
        embeddings,
        secrets: None,
        overlay: Some(OverlayOptions {
            base: base.snapshot_id.clone(),
            replaces: replaces.clone(),
        }),
        changed: None,
    };
    let s = index::run(&opts)?;
    Ok(Invalidated {
        repo: base.repo,
        base: base.snapshot_id,
        overlay_id: s.snapshot_id,
        overlay_dir: s.snapshot_dir,
        replaces: replaces.into_iter().collect(),
        files: s.files,
        seconds: started.elapsed().as_secs_f64(),
    })
}
