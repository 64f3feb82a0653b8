//! `code-indexer index`: the whole build, from a tree to a committed snapshot.
//!
//! [`run`] is the list of phases; each takes what earlier ones produced and
//! returns what later ones need. Nothing is written before the checks
//! ([`prepare`]); rows stream into a temp directory ([`analyse`], [`tables`])
//! that becomes the snapshot only when its manifest is in ([`publish`]).

mod analyse;
mod prepare;
mod publish;
mod tables;

use std::path::{Path, PathBuf};

use code_index_schemas::{GitInfo, SkipCounts, BUILDER_NAME, FEATURE_VERSION, SCHEMA_VERSION};
use serde::Serialize;

use crate::config::{self, Effective};
use crate::error::{codes, Error, Result};
use crate::snapshot;
use crate::walk::walk;

/// Options of one build.
#[derive(Clone, Debug)]
pub struct Options {
    pub repo: PathBuf,
    pub out: PathBuf,
    pub previous: Option<PathBuf>,
    pub threads: usize,
    pub name: Option<String>,
    pub max_file_size: Option<u64>,
    /// `--follow-symlinks` (else the config's `follow_symlinks`).
    pub follow_symlinks: bool,
    pub skip_unreadable: bool,
    pub progress: bool,
    /// `None`: no vectors (`--no-embeddings`).
    pub embeddings: Option<EmbedOptions>,
    /// `--secrets`: overrides the config's `secrets.action`.
    pub secrets: Option<config::SecretsAction>,
    /// An overlay build (`invalidate-file`): only these paths, published
    /// beside the base snapshot instead of as a new one.
    pub overlay: Option<OverlayOptions>,
    /// With `previous`: the paths that may differ from it (`sync`'s git tree
    /// comparison). The other files take the previous snapshot's hash
    /// without being read; `None` hashes every file.
    pub changed: Option<std::collections::BTreeSet<String>>,
}

/// What an overlay build amends.
#[derive(Clone, Debug)]
pub struct OverlayOptions {
    /// Snapshot id of the base snapshot.
    pub base: String,
    /// Repo-relative paths the overlay stands in for (changed, added or deleted).
    pub replaces: std::collections::BTreeSet<String>,
}

/// How chunks are embedded.
#[derive(Clone, Debug)]
pub struct EmbedOptions {
    /// Model spec (`minilm` (int8, default), `minilm-fp32`, `voyage:<m>`, `openai:<m>`, `ollama:<m>`).
    pub model: String,
    /// Persistent cache directory (`None`: memory only).
    pub cache_dir: Option<PathBuf>,
    /// Most vectors in an exact Flat index.
    pub flat_max: usize,
}

#[derive(Debug, Serialize)]
pub struct TableSummary {
    pub rows: u64,
    pub bytes: u64,
}

/// What a build did (printed by the CLI; never written into the snapshot).
#[derive(Debug, Serialize)]
pub struct Summary {
    pub snapshot_id: String,
    pub snapshot_dir: String,
    pub repo: String,
    pub files: u64,
    pub reused_files: u64,
    pub previous: Option<String>,
    pub previous_ignored: Option<String>,
    pub skipped: SkipCounts,
    pub source_bytes: u64,
    pub snapshot_bytes: u64,
    pub tables: std::collections::BTreeMap<String, TableSummary>,
    pub embeddings: Option<crate::embeddings::Stats>,
    pub seconds: f64,
}

/// Files analyzed in parallel per step (bounded memory, ordered output).
const STEP: usize = 1024;

/// Run a build.
pub fn run(opts: &Options) -> Result<Summary> {
    let b = Build::start(opts)?;
    // The model is opened first: a missing model or key fails before any work.
    let model = prepare::open_model(opts)?;
    let mut walked = walk(&b.root, &b.cfg, b.threads)?;
    b.timer.phase("walk");
    // Modules come from the whole tree, so an overlay's rows equal a full build's.
    let modules = prepare::infer_modules(&b, &walked);
    if let Some(o) = &opts.overlay {
        walked.entries.retain(|e| o.replaces.contains(&e.rel));
        walked.unreadable.clear();
    }
    prepare::secrets_gate(&b, &walked)?;
    prepare::unreadable_gate(&b, &walked)?;
    let reuse = prepare::load_previous(&b, &walked)?;

    let tmp = snapshot::begin(&opts.out, &b.name)?;
    let kv = kv_metadata(&b.name, &b.git, &b.cfg.hash);
    // Inputs are keyed under the id the model's vectors are cached by.
    let model_id = model.as_ref().map(|m| m.key_id.clone());
    let (a, bar) = analyse::analyse(&b, &tmp.dir, &kv, &walked, &modules, reuse.rows, model_id)?;
    b.timer.phase("analyze+write");
    b.timer.stages();
    // The n-gram index is written (one thread) while the edges are resolved.
    let (gram_runs, gram_files) = (a.gram_runs, a.gram_files);
    let (edges, patterns, pats, ngrams) = std::thread::scope(|scope| -> Result<_> {
        let ngrams = scope.spawn(|| tables::write_ngrams(&tmp.dir, gram_files, &gram_runs));
        let edges = tables::write_edges(&b, &tmp.dir, &kv, a.facts, &modules, &a.nav_docs)?;
        b.timer.phase("edges");
        let (patterns, pats) = tables::write_patterns(&b, &tmp.dir, &kv, a.shapes, a.interner)?;
        b.timer.phase("patterns");
        let ngrams = ngrams.join().unwrap_or_else(|_| {
            Err(Error::new(
                codes::INTERNAL,
                "n-gram writer thread panicked",
                "report this as a bug",
            ))
        })?;
        b.timer.phase("n-gram index");
        Ok((edges, patterns, pats, ngrams))
    })?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let mut files = tables::finish(&tmp.dir, a.writers, edges, patterns)?;
    files.push(ngrams);
    let mut kw_runs = a.kw_runs;
    let mut pattern_run = tables::pattern_keywords(&pats);
    pattern_run.set_base(a.kw_docs);
    kw_runs.push(pattern_run);
    files.push(tables::write_keywords(&tmp.dir, &kw_runs)?);
    drop(kw_runs);
    files.push(tables::write_heads(&tmp.dir, &a.heads)?);
    b.timer.phase("keyword index");
    let vectors = publish::embed(&b, &tmp.dir, model, a.pending, &pats, &reuse.dir)?;
    files.extend(vectors.file);
    let (manifest, dest) =
        publish::publish(&b, tmp, files, vectors.info, &a.totals.skipped, &a.input)?;
    let s = publish::summary(&b, &manifest, &dest, a.totals, reuse.ignored, vectors.stats);
    code_index_schemas::ops::record(
        "build",
        serde_json::json!({
            "repo": s.repo, "overlay": opts.overlay.is_some(), "files": s.files,
            "reused_files": s.reused_files, "seconds": s.seconds, "embeddings": s.embeddings,
        }),
    );
    Ok(s)
}

/// What every phase reads: the repository, its config, the thread pool and
/// the phase timer.
struct Build<'o> {
    opts: &'o Options,
    root: PathBuf,
    cfg: Effective,
    name: String,
    git: GitInfo,
    threads: usize,
    pool: rayon::ThreadPool,
    timer: Timer,
}

impl<'o> Build<'o> {
    fn start(opts: &'o Options) -> Result<Self> {
        let started = std::time::Instant::now();
        let root = check_repo(&opts.repo)?;
        let cfg = config::load_with(&root, opts.max_file_size, opts.follow_symlinks)?;
        let name = repo_name(&root, &cfg, opts.name.as_deref());
        let git = crate::git::info(&root);
        let threads = opts.threads.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| Error::new(codes::INTERNAL, e.to_string(), "retry with --threads 1"))?;
        let timer = Timer {
            started,
            on: std::env::var_os("CODE_INDEX_TIMING").is_some(),
        };
        Ok(Build {
            opts,
            root,
            cfg,
            name,
            git,
            threads,
            pool,
            timer,
        })
    }
}

/// Phase times on stderr when `CODE_INDEX_TIMING` is set.
struct Timer {
    started: std::time::Instant,
    on: bool,
}

impl Timer {
    fn phase(&self, name: &str) {
        if self.on {
            eprintln!(
                "[timing] {name}: {:.2}s",
                self.started.elapsed().as_secs_f64()
            );
        }
    }

    /// CPU time of each analysis stage, summed over threads.
    fn stages(&self) {
        if self.on {
            for (i, name) in crate::analyze::STAGES.iter().enumerate() {
                let ns = crate::analyze::STAGE_NS[i].load(std::sync::atomic::Ordering::Relaxed);
                eprintln!("[timing]   cpu in {name}: {:.2}s", ns as f64 / 1e9);
            }
        }
    }
}

/// Check the repository argument.
pub fn check_repo(repo: &Path) -> Result<PathBuf> {
    if !repo.exists() {
        return Err(Error::new(
            codes::REPO_NOT_FOUND,
            format!("repository path '{}' does not exist", repo.display()),
            "pass the root directory of a source tree, e.g. `code-indexer index . --out snapshots`",
        )
        .at(repo));
    }
    if !repo.is_dir() {
        return Err(Error::new(
            codes::REPO_NOT_DIR,
            format!("repository path '{}' is not a directory", repo.display()),
            "pass the directory that holds the sources, not a file",
        )
        .at(repo));
    }
    repo.canonicalize().map_err(|e| {
        Error::io(
            codes::REPO_NOT_FOUND,
            "cannot resolve",
            repo,
            e,
            "pass a readable directory",
        )
    })
}

/// Repository name: flag, config `name`, or the directory name.
pub fn repo_name(root: &Path, cfg: &Effective, flag: Option<&str>) -> String {
    let raw = flag
        .map(|s| s.to_string())
        .or_else(|| cfg.config.name.clone())
        .unwrap_or_else(|| {
            root.file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_else(|| "repo".into())
        });
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn unreadable_error(root: &Path, p: &Path, why: &str) -> Error {
    let rel = p.strip_prefix(root).unwrap_or(p).display().to_string();
    Error::new(
        codes::UNREADABLE_FILE,
        format!("cannot read '{rel}': {why}"),
        format!("fix its permissions (chmod +r '{rel}'), add it to `exclude` in .code-index.yaml, or pass --skip-unreadable to leave it out and count it"),
    )
    .at(p)
}

/// Key-value metadata written into every Parquet file.
/// (The snapshot id, file hashes and input hash are derived from these very
/// bytes or from the whole tree, so they live in the manifest only.)
pub fn kv_metadata(repo: &str, git: &GitInfo, config_hash: &str) -> Vec<(String, String)> {
    let o = |v: &Option<String>| v.clone().unwrap_or_default();
    vec![
        (
            "code_index.schema_version".to_string(),
            SCHEMA_VERSION.to_string(),
        ),
        (
            "code_index.feature_version".to_string(),
            FEATURE_VERSION.to_string(),
        ),
        ("code_index.tool".to_string(), BUILDER_NAME.to_string()),
        (
            "code_index.tool_version".to_string(),
            crate::TOOL_VERSION.to_string(),
        ),
        ("code_index.repo".to_string(), repo.to_string()),
        ("code_index.commit".to_string(), o(&git.commit)),
        ("code_index.branch".to_string(), o(&git.branch)),
        ("code_index.commit_time".to_string(), o(&git.commit_time)),
        (
            "code_index.config_hash".to_string(),
            config_hash.to_string(),
        ),
    ]
}
