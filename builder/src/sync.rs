//! `code-indexer sync` and `watch`: bring a repository's snapshot up to date
//! with its working tree, reusing the previous snapshot's rows for what did
//! not change.
//!
//! What changed is asked of git: the previous snapshot's commit and HEAD are
//! compared tree by tree (equal subtree hashes are skipped unopened) and the
//! working tree's changes and untracked files are added; every other file
//! keeps the previous snapshot's content hash without being read. That holds
//! only when the previous snapshot's content was the commit's plus known
//! paths: a clean build, or a `sync` build, which records the paths that
//! differed from the commit in `<out>/<repo>/.sync.json`. Otherwise (no git,
//! a dirty `index` build) every file is hashed, as `index --previous` does.
//! A new snapshot supersedes the overlays of the old one (they are removed)
//! and older snapshots beyond `keep`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{codes, Error, Result};
use crate::index::{self, EmbedOptions};
use crate::snapshot;

/// Where `sync` records what the snapshot it built held beyond its commit.
const STATE_FILE: &str = ".sync.json";

/// What `sync` knows of the snapshot it built last.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    snapshot_id: String,
    /// The commit the snapshot was built at.
    commit: Option<String>,
    /// Paths whose working-tree content differed from `commit` (modified,
    /// added, untracked, deleted) when it was built, with their stats taken
    /// before the build ([`stat`]).
    differed: std::collections::BTreeMap<String, String>,
    /// Without git: a hash of every walked file's path, size and mtime.
    fingerprint: Option<String>,
}

/// How `sync` builds.
#[derive(Clone, Debug)]
pub struct SyncOptions {
    /// The repository's root.
    pub root: PathBuf,
    /// `<out>/<repo>/`.
    pub repo_dir: PathBuf,
    pub threads: usize,
    pub embedding_cache: Option<PathBuf>,
    /// `Some(None)`: no vectors; `Some(Some(m))`: model m; `None`: the
    /// previous snapshot's choice (MiniLM int8 for a first build).
    pub model: Option<Option<String>>,
    /// Snapshots kept (the new one included).
    pub keep: usize,
    /// Wait for another build of the repository (else `E_BUSY`).
    pub wait: bool,
    /// Hash every file, whatever git says.
    pub full: bool,
    pub progress: bool,
    /// Download the published snapshot at this URL instead of building
    /// (default: the config's `snapshot_url`).
    pub url: Option<String>,
    /// Keys a downloaded snapshot must be signed by (none: not checked).
    pub trusted: Vec<code_index_schemas::signing::PublicKey>,
}

/// What one `sync` did.
#[derive(Debug, Serialize)]
pub struct Synced {
    pub repo: String,
    /// `<out>/<repo>/`: the folder of the repository's snapshots (what
    /// `--index` takes), not its checkout.
    pub repo_dir: String,
    /// `up-to-date` (nothing built or downloaded), `built`, `first-build`,
    /// or `downloaded`.
    pub action: &'static str,
    /// The published snapshot's URL, when it was asked rather than built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// After a download: the paths of the working tree that differ from
    /// the snapshot's commit, put into an overlay (none: no overlay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlay_paths: Option<usize>,
    pub previous: Option<String>,
    pub snapshot_id: String,
    pub commit: Option<String>,
    pub branch: Option<String>,
    /// Paths git named as possibly changed since the previous snapshot;
    /// `None` when every file was hashed.
    pub changed_paths: Option<usize>,
    pub files: u64,
    pub reused_files: u64,
    /// Snapshots and overlays removed (`<id>`, `overlay:<base>`).
    pub removed: Vec<String>,
    pub seconds: f64,
}

impl Synced {
    /// What a sync that ends at the snapshot `m` (built or not) says,
    /// before its own details.
    fn of(
        m: &code_index_schemas::Manifest,
        repo_dir: &Path,
        action: &'static str,
        started: std::time::Instant,
    ) -> Synced {
        Synced {
            repo: m.repo.clone(),
            repo_dir: repo_dir.display().to_string(),
            action,
            url: None,
            overlay_paths: None,
            previous: Some(m.snapshot_id.clone()),
            snapshot_id: m.snapshot_id.clone(),
            commit: m.git.commit.clone(),
            branch: m.git.branch.clone(),
            changed_paths: None,
            files: m.rows("files.parquet"),
            reused_files: 0,
            removed: Vec::new(),
            seconds: started.elapsed().as_secs_f64(),
        }
    }
}

fn read_state(repo_dir: &Path) -> Option<State> {
    let text = std::fs::read_to_string(repo_dir.join(STATE_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_state(repo_dir: &Path, st: &State) {
    let p = repo_dir.join(STATE_FILE);
    let tmp = repo_dir.join(".sync.json.tmp");
    let json = serde_json::to_vec_pretty(st).expect("state serializes");
    if std::fs::write(&tmp, json).is_ok() {
        let _ = std::fs::rename(&tmp, &p);
    }
}

/// A file's mtime in nanoseconds since the epoch (0 when unknown).
fn mtime_ns(m: &std::fs::Metadata) -> u128 {
    m.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

/// A file's size and mtime (`-` when it is gone): equal stats before and
/// after mean the file was not written in between.
fn stat(root: &Path, rel: &str) -> String {
    match std::fs::metadata(root.join(rel)) {
        Ok(m) => format!("{}:{}", m.len(), mtime_ns(&m)),
        Err(_) => "-".to_string(),
    }
}

/// A hash of every file `index` would read: path, size and mtime.
fn fingerprint(root: &Path, threads: usize) -> Result<String> {
    use sha2::Digest;
    let cfg = crate::config::load(root, None)?;
    let walked = crate::walk::walk(root, &cfg, threads)?;
    let mut h = sha2::Sha256::new();
    h.update(cfg.hash.as_bytes());
    for e in &walked.entries {
        let mtime = std::fs::metadata(&e.abs).map_or(0, |m| mtime_ns(&m));
        h.update(format!("{}\0{}\0{mtime}\n", e.rel, e.size).as_bytes());
    }
    Ok(hex::encode(h.finalize()))
}

/// The paths that may differ from the snapshot `m` describes, when git can
/// say (see the module documentation).
fn changed_paths(
    root: &Path,
    cfg: &crate::config::Effective,
    m: &code_index_schemas::Manifest,
    state: Option<&State>,
) -> Option<BTreeSet<String>> {
    // Files git does not track the changes of: ones the config indexes
    // despite ignore files, submodules', and files read through symbolic
    // links (git sees the link, not what it points at): git status is not
    // asked, every file is hashed.
    if !cfg.config.include_override.is_empty()
        || cfg.follow_symlinks
        || root.join(".gitmodules").exists()
    {
        return None;
    }
    let commit = m.git.commit.as_deref()?;
    let extra: Vec<String> = match state {
        Some(s) if s.snapshot_id == m.snapshot_id && s.commit.as_deref() == Some(commit) => {
            s.differed.keys().cloned().collect()
        }
        _ if !m.git.dirty => Vec::new(),
        _ => return None,
    };
    let mut changed = crate::git::changed_since(root, commit)?;
    changed.extend(extra);
    Some(changed)
}

/// Bring the snapshot of `o.root` in `o.repo_dir` up to date (logged, and
/// a `sync` metrics event).
pub fn sync(o: &SyncOptions) -> Result<Synced> {
    let r = sync_now(o);
    match &r {
        Ok(s) if s.action != "up-to-date" => tracing::info!(
            "sync {}: {} -> {} ({:?} changed paths, {} files, {} reused) in {:.2}s",
            s.repo,
            s.previous.as_deref().unwrap_or("-"),
            s.snapshot_id,
            s.changed_paths,
            s.files,
            s.reused_files,
            s.seconds
        ),
        Ok(s) => tracing::debug!("sync {}: up to date at {}", s.repo, s.snapshot_id),
        Err(e) => tracing::error!("sync {}: {}", o.repo_dir.display(), e.one_line()),
    }
    if let Ok(s) = &r {
        if s.action != "up-to-date" {
            code_index_schemas::ops::record(
                "sync",
                serde_json::json!({"repo": s.repo, "action": s.action, "changed_paths": s.changed_paths,
                                   "files": s.files, "reused_files": s.reused_files, "seconds": s.seconds}),
            );
        }
    }
    r
}

fn sync_now(o: &SyncOptions) -> Result<Synced> {
    let started = std::time::Instant::now();
    let root = index::check_repo(&o.root)?;
    let _lock = snapshot::lock(&o.repo_dir, o.wait)?;
    let cfg = crate::config::load(&root, None)?;
    if let Some(url) = o.url.clone().or_else(|| cfg.config.snapshot_url.clone()) {
        return download(o, &root, &url, started);
    }
    let previous = snapshot::resolve_dir(&o.repo_dir).ok();
    let prev_manifest = match &previous {
        Some(d) => Some(snapshot::read_manifest(d)?),
        None => None,
    };
    let state = read_state(&o.repo_dir);
    let git_now = crate::git::info(&root);
    let compatible = prev_manifest
        .as_ref()
        .is_some_and(|m| crate::previous::incompatibility(m, &cfg.hash).is_none());
    let same_model = match (&o.model, &prev_manifest) {
        (None, _) => true,
        (Some(want), Some(m)) => want.as_deref() == m.embeddings.as_ref().map(|e| e.model.as_str()),
        (Some(_), None) => false,
    };
    let changed = match (&prev_manifest, o.full || !compatible) {
        (Some(m), false) => changed_paths(&root, &cfg, m, state.as_ref()),
        _ => None,
    };
    // Nothing to build: same commit, nothing changed since (git), or the
    // same file stats (no git).
    let fp = if changed.is_none() && git_now.commit.is_none() && compatible && !o.full {
        Some(fingerprint(&root, o.threads)?)
    } else {
        None
    };
    if let (Some(m), true, true) = (&prev_manifest, compatible, same_model) {
        // Same commit, and the paths that differ from it are the ones that
        // did when the snapshot was built, unwritten since.
        let unchanged_git = m.git.commit == git_now.commit
            && changed.as_ref().is_some_and(|c| {
                let known = state
                    .as_ref()
                    .filter(|s| s.snapshot_id == m.snapshot_id)
                    .map(|s| &s.differed);
                c.iter()
                    .all(|p| known.and_then(|k| k.get(p)) == Some(&stat(&root, p)))
            });
        let unchanged_fp = fp.is_some()
            && state
                .as_ref()
                .is_some_and(|s| s.snapshot_id == m.snapshot_id && s.fingerprint == fp);
        if unchanged_git || unchanged_fp {
            // The tree is the snapshot's: any overlay is stale.
            let removed = snapshot::clear_overlays(&o.repo_dir, false);
            return Ok(Synced {
                changed_paths: changed.as_ref().map(BTreeSet::len),
                removed,
                ..Synced::of(m, &o.repo_dir, "up-to-date", started)
            });
        }
    }
    let model = match &o.model {
        Some(m) => m.clone(),
        None => match &prev_manifest {
            Some(m) => m.embeddings.as_ref().map(|e| e.model.clone()),
            None => Some("minilm".to_string()),
        },
    };
    let out = o.repo_dir.parent().ok_or_else(|| {
        Error::new(
            codes::OUT_DIR,
            format!("{} has no parent directory", o.repo_dir.display()),
            "pass --index <out>/<repo>",
        )
    })?;
    let name = o
        .repo_dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string());
    // The paths that differ from HEAD now, before and after the build (an
    // edit during the build is counted either way).
    let differed_before = git_now
        .commit
        .as_deref()
        .and_then(|c| crate::git::changed_since(&root, c))
        .map(|set| {
            set.into_iter()
                .map(|p| {
                    let st = stat(&root, &p);
                    (p, st)
                })
                .collect::<std::collections::BTreeMap<_, _>>()
        });
    let opts = index::Options {
        repo: root.clone(),
        out: out.to_path_buf(),
        previous: previous.clone(),
        threads: o.threads,
        name,
        max_file_size: None,
        follow_symlinks: false,
        skip_unreadable: true,
        progress: o.progress,
        embeddings: model.map(|m| EmbedOptions {
            model: m,
            cache_dir: o.embedding_cache.clone(),
            flat_max: code_index_schemas::vectors::FLAT_MAX,
        }),
        secrets: None,
        overlay: None,
        changed: changed.clone(),
    };
    let s = index::run(&opts)?;
    let differed_after = git_now
        .commit
        .as_deref()
        .and_then(|c| crate::git::changed_since(&root, c));
    // A path that began to differ during the build gets no stat, so the next
    // sync looks at it again.
    let mut differed = std::collections::BTreeMap::new();
    if let (Some(before), Some(after)) = (differed_before, differed_after) {
        differed.extend(after.into_iter().map(|p| (p, "?".to_string())));
        differed.extend(before);
    }
    write_state(
        &o.repo_dir,
        &State {
            snapshot_id: s.snapshot_id.clone(),
            commit: git_now.commit.clone(),
            differed,
            fingerprint: match git_now.commit {
                Some(_) => None,
                None => Some(fingerprint(&root, o.threads)?),
            },
        },
    );
    let removed = snapshot::prune(&o.repo_dir, o.keep);
    Ok(Synced {
        repo: s.repo.clone(),
        repo_dir: o.repo_dir.display().to_string(),
        action: if previous.is_some() {
            "built"
        } else {
            "first-build"
        },
        url: None,
        overlay_paths: None,
        previous: prev_manifest.map(|m| m.snapshot_id),
        snapshot_id: s.snapshot_id,
        commit: git_now.commit,
        branch: git_now.branch,
        changed_paths: changed.as_ref().map(BTreeSet::len),
        files: s.files,
        reused_files: s.reused_files,
        removed,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Most paths an overlay over a downloaded snapshot is built for: a working
/// tree further from the snapshot's commit is served as published.
const MAX_OVERLAY_PATHS: usize = 2000;

/// `sync` with a URL: make the newest published snapshot `latest` (fetched
/// and verified unless it is `latest` already), then lay the working tree's
/// differences from its commit over it as an overlay, so the index answers
/// for the tree as a local build would.
fn download(
    o: &SyncOptions,
    root: &Path,
    url: &str,
    started: std::time::Instant,
) -> Result<Synced> {
    use code_index_schemas::download;
    let name = o
        .repo_dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let remote = download::remote(url, "code-indexer").map_err(|e| e.at(root))?;
    let m = remote.manifest.clone();
    if m.repo != name {
        return Err(Error::new(
            codes::SNAPSHOT_INVALID,
            format!(
                "{url} is a snapshot of repository '{}', and this one is indexed as '{name}'",
                m.repo
            ),
            format!(
                "set `name: {}` in .code-index.yaml (or pass --index <out>/{}), or point snapshot_url at this repository's snapshots",
                m.repo, m.repo
            ),
        ));
    }
    let previous = snapshot::resolve_dir(&o.repo_dir)
        .ok()
        .and_then(|d| snapshot::read_manifest(&d).ok());
    let dest = o.repo_dir.join(&m.snapshot_id);
    let current = previous.as_ref().is_some_and(|p| *p == m);
    if !current {
        let verify = |dir: &Path| {
            download::verify_dir(dir, |text| {
                code_index_schemas::signing::check_dir(&o.trusted, dir, text)
            })
            .map(|(m, _)| m)
        };
        remote.fetch_into(&dest, &verify)?;
        snapshot::set_latest(&o.repo_dir, &m.snapshot_id)?;
        // A later local sync may start from it: it holds its commit's tree
        // when it was built clean.
        let state = State {
            snapshot_id: m.snapshot_id.clone(),
            commit: m.git.commit.clone(),
            ..State::default()
        };
        if m.git.dirty {
            let _ = std::fs::remove_file(o.repo_dir.join(STATE_FILE));
        } else {
            write_state(&o.repo_dir, &state);
        }
    }
    let mut removed = snapshot::prune(&o.repo_dir, o.keep);
    // The working tree's differences from the snapshot's commit (the
    // snapshot's own are overlaid already when it is current).
    let mut overlay_paths = None;
    let differ = m
        .git
        .commit
        .as_deref()
        .and_then(|c| crate::git::changed_since(root, c));
    match differ {
        Some(paths) if !current && !paths.is_empty() && paths.len() <= MAX_OVERLAY_PATHS => {
            let paths: Vec<String> = paths.into_iter().collect();
            match crate::overlay::invalidate(
                root,
                &o.repo_dir,
                &paths,
                o.threads,
                o.embedding_cache.clone(),
            ) {
                Ok(_) => overlay_paths = Some(paths.len()),
                Err(e) => tracing::warn!(
                    "sync {name}: the working tree's changes are not overlaid: {}",
                    e.one_line()
                ),
            }
        }
        Some(paths) if !current && paths.len() > MAX_OVERLAY_PATHS => tracing::warn!(
            "sync {name}: {} paths differ from the published snapshot's commit (more than {MAX_OVERLAY_PATHS}): served as published",
            paths.len()
        ),
        _ => {}
    }
    removed.sort();
    removed.dedup();
    Ok(Synced {
        url: Some(url.to_string()),
        overlay_paths,
        previous: previous.map(|p| p.snapshot_id),
        removed,
        ..Synced::of(
            &m,
            &o.repo_dir,
            if current { "up-to-date" } else { "downloaded" },
            started,
        )
    })
}

/// The snapshot directory of the repository at `root`: `index` when given,
/// else `<CODE_INDEX_SNAPSHOTS or the default cache>/<repo name>/`.
pub fn repo_dir(root: &Path, index: Option<&Path>) -> PathBuf {
    index.map(Path::to_path_buf).unwrap_or_else(|| {
        code_index_schemas::dirs::snapshots().join(crate::overlay::repo_name(root))
    })
}

/// A duration argument: `90s`, `5m`, `1h`, `500ms`, or plain seconds.
pub fn parse_interval(s: &str) -> std::result::Result<std::time::Duration, String> {
    let s = s.trim();
    let (num, unit) = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or((s, ""), |i| s.split_at(i));
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is no duration (e.g. 60s, 5m, 1h, 500ms)"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("'{s}': unknown unit '{unit}' (use ms, s, m or h)")),
    };
    if !(secs.is_finite() && secs > 0.0) {
        return Err(format!("'{s}' must be more than zero"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// `watch`: [`sync`] each repository every `interval` until `stop` is set,
/// reporting each round's outcome (a busy lock skips the repository this
/// round). The wait between rounds checks `stop` every 100 ms.
pub fn watch(
    repos: &[SyncOptions],
    interval: std::time::Duration,
    once: bool,
    stop: &std::sync::atomic::AtomicBool,
    mut report: impl FnMut(&SyncOptions, &Result<Synced>),
) {
    use std::sync::atomic::Ordering;
    loop {
        for o in repos {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            report(o, &sync(o));
        }
        if once {
            return;
        }
        let until = std::time::Instant::now() + interval;
        while std::time::Instant::now() < until {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100).min(interval));
        }
    }
}
