//! `code-indexer cache stats` and `code-indexer invalidate <repo>`: what the
//! caches beside the snapshots hold and how often they answer, and dropping
//! one repository's derived state.
//!
//! Sizes are read from disk; hit rates from the metrics (`build` events carry
//! the embedding cache's hits, `search` events whether a result cache
//! answered), so they cover what the metrics recorded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::Result;

#[derive(Debug, Serialize, Default)]
pub struct Usage {
    pub path: String,
    pub files: u64,
    pub bytes: u64,
}

/// Files and bytes under `dir` (recursively; symlinks not followed).
pub fn usage(dir: &Path) -> Usage {
    fn walk(d: &Path, u: &mut Usage) {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                walk(&e.path(), u);
            } else if t.is_file() {
                u.files += 1;
                u.bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    let mut u = Usage {
        path: dir.display().to_string(),
        ..Usage::default()
    };
    walk(dir, &mut u);
    u
}

/// Add `base` and its rotated predecessors (`base.N`) to `u`.
fn add_rotated(u: &mut Usage, base: &Path) {
    let dir = base.parent().unwrap_or(Path::new("."));
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if (p == base || code_index_schemas::ops::is_rotated_of(&p, base)) && p.is_file() {
            u.files += 1;
            u.bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
        }
    }
}

#[derive(Debug, Serialize, Default)]
pub struct RepoSnapshots {
    pub snapshots: u64,
    pub overlays: u64,
    pub bytes: u64,
}

#[derive(Debug, Serialize, Default)]
pub struct Stats {
    pub embedding_cache: Usage,
    /// Chunks the builds took from the embedding cache, of all they needed.
    pub embedding_hits: u64,
    pub embedding_lookups: u64,
    pub embedding_hit_rate: Option<f64>,
    /// The server's DuckDB table caches (one per set of served snapshots).
    pub table_caches: Usage,
    /// Snapshots downloaded by the server (`--index https://…`).
    pub downloads: Usage,
    /// Snapshots and overlays per repository in the snapshots directory.
    pub snapshots: BTreeMap<String, RepoSnapshots>,
    pub snapshots_dir: String,
    /// Searches answered from a server result cache, of all searches.
    pub query_cache_hits: u64,
    pub searches: u64,
    pub query_cache_hit_rate: Option<f64>,
    pub metrics: Option<Usage>,
    pub logs: Option<Usage>,
}

use crate::metrics::{pc, rate};

/// Gather the stats; `snapshots_dir` is where `<repo>/` folders live.
pub fn stats(snapshots_dir: &Path) -> Stats {
    use code_index_schemas::dirs;
    let mut s = Stats {
        embedding_cache: usage(&dirs::embeddings_cache()),
        table_caches: usage(&dirs::server_tables()),
        downloads: usage(&dirs::server_cache().join("downloads")),
        snapshots_dir: snapshots_dir.display().to_string(),
        ..Stats::default()
    };
    for e in std::fs::read_dir(snapshots_dir)
        .into_iter()
        .flatten()
        .flatten()
    {
        if !e.path().is_dir() {
            continue;
        }
        let repo = e.file_name().to_string_lossy().to_string();
        let snaps = crate::snapshot::list(&e.path()).len() as u64;
        if snaps == 0 {
            continue;
        }
        let overlays = std::fs::read_dir(e.path().join(code_index_schemas::OVERLAY_DIR))
            .into_iter()
            .flatten()
            .flatten()
            .count() as u64;
        s.snapshots.insert(
            repo,
            RepoSnapshots {
                snapshots: snaps,
                overlays,
                bytes: usage(&e.path()).bytes,
            },
        );
    }
    if let Some(m) = code_index_schemas::ops::metrics_file() {
        let mut u = Usage {
            path: m.path.display().to_string(),
            ..Usage::default()
        };
        add_rotated(&mut u, &m.path);
        s.metrics = Some(u);
        if let Ok((events, _)) = crate::metrics::read(&m.path) {
            for e in &events {
                match e.v["event"].as_str() {
                    Some("build") => {
                        let emb = &e.v["embeddings"];
                        s.embedding_hits += emb["from_cache"].as_u64().unwrap_or(0);
                        s.embedding_lookups += emb["chunks"].as_u64().unwrap_or(0);
                    }
                    Some("search") => {
                        s.searches += 1;
                        if e.v["cache_hit"].as_bool() == Some(true) {
                            s.query_cache_hits += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    s.embedding_hit_rate = rate(s.embedding_hits, s.embedding_lookups);
    s.query_cache_hit_rate = rate(s.query_cache_hits, s.searches);
    s.logs = code_index_schemas::ops::log_file("code-indexer", &Default::default()).map(|l| {
        let dir = l.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let mut u = Usage {
            path: dir.display().to_string(),
            ..Usage::default()
        };
        for bin in ["code-indexer", "code-index-mcp"] {
            let r = code_index_schemas::ops::Rotating::new(dir.join(format!("{bin}.log")), 1.0, 1);
            add_rotated(&mut u, &r.path);
        }
        u
    });
    s
}

fn mb(b: u64) -> String {
    format!("{:.1} MB", b as f64 / 1e6)
}

pub fn render(s: &Stats) -> String {
    let mut out = String::new();
    let line = |name: &str, u: &Usage, extra: String| {
        format!(
            "{name:<16} {:>9} {:>7} files  {extra}  {}\n",
            mb(u.bytes),
            u.files,
            u.path
        )
    };
    out.push_str(&line(
        "embedding cache",
        &s.embedding_cache,
        format!(
            "hit rate {} ({} of {} chunks)",
            pc(s.embedding_hit_rate),
            s.embedding_hits,
            s.embedding_lookups
        ),
    ));
    out.push_str(&line("table caches", &s.table_caches, String::new()));
    out.push_str(&line("downloads", &s.downloads, String::new()));
    out.push_str(&format!(
        "{:<16} in server memory, per snapshot and overlay; hit rate {} ({} of {} searches)\n",
        "query cache",
        pc(s.query_cache_hit_rate),
        s.query_cache_hits,
        s.searches
    ));
    if let Some(m) = &s.metrics {
        out.push_str(&line("metrics", m, String::new()));
    }
    if let Some(l) = &s.logs {
        out.push_str(&line("logs", l, String::new()));
    }
    out.push_str(&format!("snapshots in {}\n", s.snapshots_dir));
    for (repo, r) in &s.snapshots {
        out.push_str(&format!(
            "  {repo:<20} {} snapshot(s), {} overlay(s), {}\n",
            r.snapshots,
            r.overlays,
            mb(r.bytes)
        ));
    }
    out
}

#[derive(Debug, Serialize)]
pub struct Invalidated {
    pub repo: String,
    pub removed: Vec<String>,
}

/// Drop `repo_dir`'s (`<out>/<repo>/`) overlays and sync state, the
/// server's downloads of the repository, and the server's table caches that
/// hold it (a cache lists its repositories in `<key>.repos`; one without
/// that list is dropped too). Snapshots and the embedding cache (shared,
/// keyed by content) stay. A repository with neither snapshots nor
/// downloads is an error: nothing of that name exists to invalidate.
pub fn invalidate(repo_dir: &Path) -> Result<Invalidated> {
    use code_index_schemas::dirs;
    let repo = repo_dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let downloads = dirs::server_cache().join("downloads").join(&repo);
    if repo.is_empty() || (!repo_dir.is_dir() && !downloads.is_dir()) {
        let parent = repo_dir.parent().unwrap_or(Path::new("."));
        let known: Vec<String> = std::fs::read_dir(parent)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| !crate::snapshot::list(&e.path()).is_empty())
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        return Err(crate::error::Error::new(
            crate::error::codes::NO_SNAPSHOT,
            format!(
                "no repository {:?} in {} and none downloaded",
                repo,
                parent.display()
            ),
            if known.is_empty() {
                "pass a repository's checkout, or its name under the snapshots directory (CODE_INDEX_SNAPSHOTS), or --index <out>/<repo>".to_string()
            } else {
                format!("known repositories there: {}", known.join(", "))
            },
        ));
    }
    let mut removed = crate::snapshot::clear_overlays(repo_dir, false);
    let mut rm = |p: PathBuf| {
        let gone = if p.is_dir() {
            std::fs::remove_dir_all(&p).is_ok()
        } else {
            std::fs::remove_file(&p).is_ok()
        };
        if gone {
            removed.push(p.display().to_string());
        }
    };
    rm(repo_dir.join(".sync.json"));
    rm(downloads);
    for e in std::fs::read_dir(dirs::server_tables())
        .into_iter()
        .flatten()
        .flatten()
    {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "duckdb") {
            continue;
        }
        let list = p.with_extension(code_index_schemas::dirs::TABLE_CACHE_REPOS_EXT);
        let holds = match std::fs::read_to_string(&list) {
            Ok(t) => t.lines().any(|l| l == repo),
            Err(_) => true,
        };
        if holds {
            rm(p.with_extension("duckdb.wal"));
            rm(p);
            let _ = std::fs::remove_file(list);
        }
    }
    Ok(Invalidated { repo, removed })
}
