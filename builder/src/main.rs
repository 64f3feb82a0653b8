//! `code-indexer`: thin CLI over the builder library.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use code_index_builder::config::{self, CONFIG_FILE};
use code_index_builder::error::{codes, Error, Result};
use code_index_builder::{analyze, index, overlay, secrets, status, walk};

#[derive(Parser)]
#[command(
    name = "code-indexer",
    version,
    about = "Turns a source tree into a versioned, reproducible Parquet snapshot for code-index."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Index a repository into <out>/<repo>/<snapshot-id>/.
    Index(IndexArgs),
    /// Write a starter .code-index.yaml inferred from the tree.
    Init {
        repo: PathBuf,
        /// Overwrite an existing .code-index.yaml.
        #[arg(long)]
        force: bool,
    },
    /// Show a snapshot's manifest summary, table sizes and freshness.
    Status {
        /// A snapshot directory, or <out>/<repo>/ (uses `latest`).
        snapshot: PathBuf,
        /// A git checkout to compare the snapshot's commit with.
        #[arg(long)]
        repo: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Run one read-only SQL SELECT over a snapshot (runs `code-index-mcp sql`, which owns the DuckDB side).
    Sql {
        /// A snapshot directory, or <out>/<repo>/ (uses `latest`).
        snapshot: PathBuf,
        query: String,
        #[arg(long, default_value_t = 100)]
        max_rows: usize,
        /// Seconds before the query is interrupted.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        #[arg(long)]
        json: bool,
    },
    /// Re-embed a snapshot's chunks with another model into a new snapshot (tables copied, vectors new).
    UpgradeEmbeddings(UpgradeArgs),
    /// Print what to read next for a file (markdown, on stderr): for a Claude Code PreToolUse hook on Read.
    /// Without FILE, reads the hook's JSON from stdin (tool_input.file_path). Always exits 0.
    SuggestContext {
        /// The file about to be read (absolute, or relative to the working directory).
        file: Option<PathBuf>,
        /// Snapshot dir, or <out>/<repo>/ (default: ~/.cache/code-index/snapshots/<repo>/, or $CODE_INDEX_SNAPSHOTS/<repo>/).
        #[arg(long)]
        index: Option<PathBuf>,
        /// Also list the best chunks for this query.
        #[arg(long)]
        query: Option<String>,
        /// Print {"hookSpecificOutput": {"additionalContext": ...}} on stdout as well.
        #[arg(long)]
        hook_json: bool,
    },
    /// Build an overlay for edited files beside their repository's snapshot, so a server
    /// answers from their new text (for a Claude Code PostToolUse hook on Write|Edit).
    /// Without FILE, reads the hook's JSON from stdin (tool_input.file_path); then a file
    /// outside any indexed repository is no error.
    InvalidateFile {
        /// Changed, added or deleted files (absolute, or relative to the working directory).
        files: Vec<PathBuf>,
        /// The repository's snapshots, <out>/<repo>/ (default: ~/.cache/code-index/snapshots/<repo>/, or $CODE_INDEX_SNAPSHOTS/<repo>/).
        #[arg(long)]
        index: Option<PathBuf>,
        #[arg(long)]
        threads: Option<usize>,
        /// Embedding cache directory, or `none` (default: ~/.cache/code-index/embeddings).
        #[arg(long)]
        embedding_cache: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Bring a repository's snapshot up to date with its working tree: a build that reuses the
    /// previous snapshot's rows for every file git says is unchanged (no file of an unchanged
    /// subtree is read), then the superseded overlays and old snapshots are removed.
    Sync {
        /// The repository (default: the one holding the working directory).
        repo: Option<PathBuf>,
        /// Its snapshots, <out>/<repo>/ (default: ~/.cache/code-index/snapshots/<repo>/, or $CODE_INDEX_SNAPSHOTS/<repo>/).
        #[arg(long)]
        index: Option<PathBuf>,
        #[command(flatten)]
        build: SyncBuildArgs,
        /// Download the snapshot CI published here instead of building (default: the config's
        /// snapshot_url), e.g. https://host/snapshots/django-latest.manifest.json.
        #[arg(long)]
        url: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Sync repositories on a timer until SIGINT/SIGTERM (a build in progress finishes first;
    /// a second signal aborts it). One build per repository at a time (a lock).
    Watch {
        /// Repositories, comma-separated (default: the one holding the working directory).
        #[arg(long, value_delimiter = ',')]
        repos: Vec<PathBuf>,
        /// Time between rounds: 90s, 5m, 1h, 500ms.
        #[arg(long, default_value = "60s", value_parser = code_index_builder::sync::parse_interval)]
        interval: std::time::Duration,
        /// Directory holding <repo>/ snapshot folders (default: ~/.cache/code-index/snapshots, or $CODE_INDEX_SNAPSHOTS).
        #[arg(long)]
        out: Option<PathBuf>,
        /// One round, then exit.
        #[arg(long)]
        once: bool,
        #[command(flatten)]
        build: SyncBuildArgs,
        /// One JSON object per line per sync.
        #[arg(long)]
        json: bool,
    },
    /// Git hooks that sync the snapshot on the default branch (post-merge, post-checkout).
    Hooks {
        #[command(subcommand)]
        action: HooksCmd,
    },
    /// Summaries of the metrics code-index-mcp and the hooks record: searches, latency,
    /// zero-result queries, whether suggested files were read. A table, or --json.
    Metrics {
        /// The window: the last 7d, 24h, 30m, 2w.
        #[arg(long, default_value = "7d", value_parser = span_arg)]
        last: i64,
        /// The searches whose query contains this (case-insensitive), newest first.
        #[arg(long, conflicts_with_all = ["zero_results", "compare"])]
        query: Option<String>,
        /// The queries that found nothing, most frequent first.
        #[arg(long, conflicts_with = "compare")]
        zero_results: bool,
        /// Events before --before against events from --after on (dates: 2026-11-01 or 2026-11-01T12:00).
        #[arg(long, requires_all = ["before", "after"])]
        compare: bool,
        #[arg(long, value_parser = time_arg, requires = "compare")]
        before: Option<i64>,
        #[arg(long, value_parser = time_arg, requires = "compare")]
        after: Option<i64>,
        /// The metrics file (default: $CODE_INDEX_METRICS, else ~/.cache/code-index/metrics/events.jsonl); its rotated files are read too.
        #[arg(long)]
        file: Option<PathBuf>,
        /// Rows per list.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// The caches' sizes and hit rates (embedding cache, table caches, downloads, query cache).
    Cache {
        #[command(subcommand)]
        action: CacheCmd,
    },
    /// Drop a repository's overlays, sync state, downloads and the server's table caches
    /// (snapshots and the shared embedding cache stay).
    Invalidate {
        /// The repository: its directory, or its name in the snapshots directory.
        repo: PathBuf,
        /// Its snapshots, <out>/<repo>/ (default: ~/.cache/code-index/snapshots/<repo>/, or $CODE_INDEX_SNAPSHOTS/<repo>/).
        #[arg(long)]
        index: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// What changed between two snapshots (files, symbols, edges), or between a snapshot and
    /// its overlay (NEW omitted: the overlay in force for OLD).
    Diff {
        /// A snapshot directory, or <out>/<repo>/ (uses `latest`).
        old: PathBuf,
        /// A snapshot or overlay directory (default: OLD's current overlay).
        new: Option<PathBuf>,
        /// Rows shown per section on a terminal (--json lists all).
        #[arg(long, default_value_t = 50)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Make an ed25519 key pair for signing snapshots (the secret half is a CI secret).
    Keygen {
        /// Directory for code-index.key (secret) and code-index.pub; refused inside a git
        /// checkout [default: $XDG_CONFIG_HOME/code-index/keys, else ~/.config/code-index/keys].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Overwrite existing key files.
        #[arg(long)]
        force: bool,
    },
    /// Sign a snapshot's manifest (writes manifest.sig beside it).
    Sign {
        /// A snapshot directory, or <out>/<repo>/ (uses `latest`).
        snapshot: PathBuf,
        /// The secret key file from `keygen` (default: the CODE_INDEX_SIGNING_KEY variable's value).
        #[arg(long)]
        key: Option<PathBuf>,
    },
    /// Scan a repository for secrets (what `index` would redact).
    Secrets {
        repo: PathBuf,
        /// List every finding (path, line, kind, fingerprint; never the secret).
        #[arg(long)]
        list: bool,
        #[arg(long)]
        json: bool,
        /// With --list: also print each secret, when stdout is a terminal (never into a log).
        #[arg(long)]
        reveal: bool,
    },
}

// `index`'s arguments (no doc comment: the variant's is the help text).
#[derive(Args)]
struct IndexArgs {
    /// Root of the source tree.
    repo: PathBuf,
    /// Directory that holds snapshots (one folder per repo).
    #[arg(long)]
    out: PathBuf,
    /// A previous snapshot (or <out>/<repo>/ with a `latest` file): unchanged files reuse its rows.
    #[arg(long)]
    previous: Option<PathBuf>,
    /// Build without vectors (search_code then runs keyword-only and says so).
    #[arg(long)]
    no_embeddings: bool,
    /// Embedding model: minilm (offline default: MiniLM tuned on code, int8, onnxruntime), minilm-general (MiniLM as published, int8), minilm-fp32 (candle), voyage:<model>, openai:<model>, ollama:<model>.
    #[arg(long, default_value = "minilm")]
    model: String,
    /// Embedding cache directory (default ~/.cache/code-index/embeddings); `none` disables it.
    #[arg(long)]
    embedding_cache: Option<PathBuf>,
    /// Most vectors kept in an exact (Flat) FAISS index; above it an IVF index.
    #[arg(long, default_value_t = code_index_schemas::vectors::FLAT_MAX)]
    flat_max: usize,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    json: bool,
    /// Repository name in the snapshot path (default: config `name` or the directory name).
    #[arg(long)]
    name: Option<String>,
    /// Skip files larger than this many bytes (default: no limit, as rg; files over 1 MiB are indexed as searchable text, not parsed).
    #[arg(long)]
    max_file_size: Option<u64>,
    /// Follow symbolic links, as `rg -L` (a linked file is indexed under the link's path; default: links are skipped, as rg).
    #[arg(long)]
    follow_symlinks: bool,
    /// What to do with secrets found: redact them (default; or the config's secrets.action) or fail the build.
    #[arg(long, value_enum)]
    secrets: Option<code_index_builder::config::SecretsAction>,
    /// Leave unreadable files out (counted) instead of failing.
    #[arg(long)]
    skip_unreadable: bool,
}

#[derive(Subcommand)]
enum HooksCmd {
    /// Add the code-index block to .git/hooks/post-merge and post-checkout (other hooks' lines are kept).
    Install {
        /// The repository (default: the one holding the working directory).
        repo: Option<PathBuf>,
        /// Its snapshots, <out>/<repo>/ (default: ~/.cache/code-index/snapshots/<repo>/, or $CODE_INDEX_SNAPSHOTS/<repo>/).
        #[arg(long)]
        index: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Remove the code-index block from the hooks.
    Uninstall { repo: Option<PathBuf> },
}

#[derive(Subcommand)]
enum CacheCmd {
    /// Sizes on disk and hit rates (from the metrics).
    Stats {
        /// Directory holding <repo>/ snapshot folders (default: ~/.cache/code-index/snapshots, or $CODE_INDEX_SNAPSHOTS).
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

// How `sync` and `watch` build (no doc comment: clap would take it as help).
#[derive(Args, Clone)]
struct SyncBuildArgs {
    /// Worker threads (sync: all cores; watch: 1, to stay in the background).
    #[arg(long)]
    threads: Option<usize>,
    /// Embedding model of the new snapshot (default: the previous snapshot's; minilm for a first build).
    #[arg(long)]
    model: Option<String>,
    /// Build without vectors.
    #[arg(long, conflicts_with = "model")]
    no_embeddings: bool,
    /// Embedding cache directory, or `none` (default: ~/.cache/code-index/embeddings).
    #[arg(long)]
    embedding_cache: Option<PathBuf>,
    /// Snapshots kept per repository, the new one included (older ones are removed).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    keep: u64,
    /// Hash every file instead of asking git what changed.
    #[arg(long)]
    full: bool,
    /// A downloaded snapshot must be signed by this public key (repeatable; also
    /// CODE_INDEX_TRUSTED_KEYS).
    #[arg(long)]
    trust_key: Vec<String>,
}

// `upgrade-embeddings`' arguments (no doc comment: the variant's is the help text).
#[derive(Args)]
struct UpgradeArgs {
    /// A snapshot directory, or <out>/<repo>/ (uses `latest`).
    snapshot: PathBuf,
    /// The model to embed with: minilm (MiniLM tuned on code, int8, onnxruntime: what `index`
    /// uses by default), minilm-general (MiniLM as published, int8), minilm-fp32 (candle),
    /// voyage:<model>, openai:<model>, ollama:<model>.
    #[arg(long)]
    model: String,
    /// Where the new snapshot goes (default: beside the old one).
    #[arg(long)]
    out: Option<PathBuf>,
    #[arg(long)]
    embedding_cache: Option<PathBuf>,
    #[arg(long, default_value_t = code_index_schemas::vectors::FLAT_MAX)]
    flat_max: usize,
    /// Only say how many chunks would be embedded.
    #[arg(long)]
    dry_run: bool,
    #[arg(long)]
    json: bool,
}

fn cache_dir(arg: Option<PathBuf>) -> Option<PathBuf> {
    match arg {
        Some(p) if p.as_os_str() == "none" => None,
        Some(p) => Some(p),
        None => Some(code_index_schemas::dirs::embeddings_cache()),
    }
}

fn threads(n: Option<usize>) -> usize {
    n.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

// tree-sitter and our own code allocate a node or a string per token: a
// faster allocator is a large share of the build time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Piped into `head`, stop quietly when the reader goes, as rg and cat do
    // (Rust ignores SIGPIPE, so the next print would panic).
    // SAFETY: first thing, before any thread; restores the default action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // SAFETY: called once, first thing, before any tree-sitter object exists;
    // the four functions are one allocator family (mimalloc) with malloc's alignment.
    unsafe {
        // Keep freed memory instead of returning it to the OS: the build
        // allocates in waves, and re-faulting (zeroing) pages cost ~10% of it
        // (kernel: 90 s wall with no purging, 98 s with a 1 s delay; peak
        // RSS +10%). (mimalloc v3 option ids: 4 = arena_eager_commit,
        // 15 = purge_delay, -1 = never.)
        libmimalloc_sys::mi_option_set(4, 1);
        libmimalloc_sys::mi_option_set(15, -1);
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc: libmimalloc_sys::mi_malloc,
            calloc: libmimalloc_sys::mi_calloc,
            realloc: libmimalloc_sys::mi_realloc,
            free: libmimalloc_sys::mi_free,
        }));
    }
    let cli = Cli::parse();
    if !matches!(cli.cmd, Cmd::Watch { .. }) {
        // Interrupted (Ctrl-C, SIGTERM): remove the snapshot being written
        // rather than leave its temp directory until the next build.
        let _ = ctrlc::set_handler(|| {
            if code_index_builder::snapshot::abandon_builds() > 0 {
                eprintln!("code-indexer: interrupted; the unfinished snapshot was removed (earlier snapshots are untouched)");
            }
            std::process::exit(130);
        });
    }
    // The log file gets what commands did; the terminal keeps its own output.
    code_index_schemas::ops::init_logging("code-indexer", "off");
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{}", e.one_line());
            eprintln!("{e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Index(args) => cmd_index(args),
        Cmd::Init { repo, force } => cmd_init(&repo, force),
        Cmd::Status {
            snapshot,
            repo,
            json,
        } => cmd_status(&snapshot, repo.as_deref(), json),
        Cmd::Keygen { out, force } => cmd_keygen(out, force),
        Cmd::Sign { snapshot, key } => cmd_sign(&snapshot, key.as_deref()),
        Cmd::Secrets {
            repo,
            list,
            json,
            reveal,
        } => cmd_secrets(&repo, list, json, reveal),
        Cmd::UpgradeEmbeddings(args) => cmd_upgrade_embeddings(args),
        Cmd::SuggestContext {
            file,
            index,
            query,
            hook_json,
        } => {
            cmd_suggest_context(file, index, query, hook_json);
            Ok(())
        }
        Cmd::InvalidateFile {
            files,
            index,
            threads: t,
            embedding_cache,
            json,
        } => cmd_invalidate_file(files, index, threads(t), cache_dir(embedding_cache), json),
        Cmd::Sync {
            repo,
            index,
            build,
            url,
            json,
        } => cmd_sync(repo, index, build, url, json),
        Cmd::Watch {
            repos,
            interval,
            out,
            once,
            build,
            json,
        } => cmd_watch(repos, interval, out, once, build, json),
        Cmd::Hooks { action } => cmd_hooks(action),
        Cmd::Cache {
            action: CacheCmd::Stats { out, json },
        } => {
            let dir = out.unwrap_or_else(code_index_schemas::dirs::snapshots);
            let s = code_index_builder::cache::stats(&dir);
            if json {
                println!("{}", serde_json::to_string_pretty(&s).unwrap());
            } else {
                print!("{}", code_index_builder::cache::render(&s));
            }
            Ok(())
        }
        Cmd::Invalidate { repo, index, json } => {
            let repo_dir = match index {
                Some(i) => i,
                None if repo.is_dir() => {
                    code_index_builder::sync::repo_dir(&repo_root(Some(repo))?, None)
                }
                None => code_index_schemas::dirs::snapshots().join(&repo),
            };
            let done = code_index_builder::cache::invalidate(&repo_dir)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&done).unwrap());
            } else {
                println!(
                    "{}: removed {} item(s){}",
                    done.repo,
                    done.removed.len(),
                    done.removed
                        .iter()
                        .map(|r| format!("\n  {r}"))
                        .collect::<String>()
                );
            }
            Ok(())
        }
        Cmd::Metrics {
            last,
            query,
            zero_results,
            compare,
            before,
            after,
            file,
            limit,
            json,
        } => {
            use code_index_builder::metrics::Report;
            let r = match (query, zero_results, compare, before, after) {
                (_, _, true, Some(before), Some(after)) => Report::Compare { before, after },
                (Some(text), ..) => Report::Query {
                    text,
                    span_ms: last,
                },
                (_, true, ..) => Report::ZeroResults { span_ms: last },
                _ => Report::Summary { span_ms: last },
            };
            cmd_metrics(file, &r, limit, json)
        }
        Cmd::Diff {
            old,
            new,
            limit,
            json,
        } => cmd_diff(&old, new.as_deref(), limit, json),
        Cmd::Sql {
            snapshot,
            query,
            max_rows,
            timeout,
            json,
        } => cmd_sql(&snapshot, &query, max_rows, timeout, json),
    }
}

/// `index`: build a snapshot, then print its summary (text or JSON).
fn cmd_index(a: IndexArgs) -> Result<()> {
    let embeddings = (!a.no_embeddings).then(|| index::EmbedOptions {
        model: a.model,
        cache_dir: cache_dir(a.embedding_cache),
        flat_max: a.flat_max,
    });
    let opts = index::Options {
        embeddings,
        repo: a.repo,
        out: a.out,
        previous: a.previous,
        threads: threads(a.threads),
        name: a.name,
        max_file_size: a.max_file_size,
        follow_symlinks: a.follow_symlinks,
        skip_unreadable: a.skip_unreadable,
        progress: !a.json,
        secrets: a.secrets,
        overlay: None,
        changed: None,
    };
    let s = index::run(&opts)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&s).unwrap());
    } else {
        print_index_summary(&s);
    }
    Ok(())
}

/// The text summary of a build.
fn print_index_summary(s: &index::Summary) {
    println!("snapshot {} written to {}", s.snapshot_id, s.snapshot_dir);
    println!(
        "  {} files ({} reused), {:.1} MB source -> {:.1} MB snapshot ({:.2}x) in {:.1}s",
        s.files,
        s.reused_files,
        s.source_bytes as f64 / 1e6,
        s.snapshot_bytes as f64 / 1e6,
        s.snapshot_bytes as f64 / s.source_bytes.max(1) as f64,
        s.seconds
    );
    for (t, ts) in &s.tables {
        println!("  {t:<11} {:>10} rows {:>12} bytes", ts.rows, ts.bytes);
    }
    if let Some(e) = &s.embeddings {
        println!(
            "  embeddings  {} chunks: {} from cache, {} embedded in {:.1}s",
            e.chunks, e.from_cache, e.embedded, e.seconds
        );
    }
    let sk = &s.skipped;
    println!(
        "  skipped: {} default-excluded, {} config-excluded, {} too large, {} binary, {} unreadable",
        sk.default_excluded, sk.config_excluded, sk.too_large, sk.binary, sk.unreadable
    );
    if let Some(why) = &s.previous_ignored {
        println!("  note: --previous not reused: {why}; this was a full build");
    }
}

/// `status`: print the report; damaged files fail the command after it.
fn cmd_status(snapshot: &Path, repo: Option<&Path>, json: bool) -> Result<()> {
    let s = status::status(snapshot, repo)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&s).unwrap());
    } else {
        print!("{}", status::render(&s));
    }
    if !s.damaged_files.is_empty() {
        return Err(Error::new(
            codes::SNAPSHOT_INVALID,
            format!("snapshot files damaged: {}", s.damaged_files.join(", ")),
            "rebuild the snapshot with `code-indexer index`",
        ));
    }
    Ok(())
}

/// `upgrade-embeddings`: re-embed into a new snapshot (or, with --dry-run, only count).
fn cmd_upgrade_embeddings(a: UpgradeArgs) -> Result<()> {
    let (dry_run, json) = (a.dry_run, a.json);
    let src = code_index_builder::snapshot::resolve_dir(&a.snapshot)?;
    // <out>/<repo>/<id>: default out is two levels up.
    let out = a.out.unwrap_or_else(|| {
        src.parent()
            .and_then(|p| p.parent())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    });
    let cache = cache_dir(a.embedding_cache);
    let s = code_index_builder::embeddings::upgrade(
        &src,
        &out,
        &code_index_builder::embeddings::UpgradeOptions {
            model: &a.model,
            cache_dir: cache.as_deref(),
            flat_max: a.flat_max,
            progress: !json,
            dry_run,
        },
        &mut |todo, total, chunks, m| {
            if dry_run && json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({
                        "dry_run": true, "model": m, "inputs_to_embed": todo,
                        "inputs": total, "from_cache": total - todo, "chunks": chunks,
                    }))
                    .unwrap()
                )
            } else if dry_run {
                println!(
                    "would embed {todo} of {total} inputs ({chunks} chunks, their signatures and definition windows) with {m}"
                )
            } else {
                eprintln!(
                    "upgrade-embeddings: will embed {todo} of {total} inputs ({chunks} chunks, their signatures and definition windows) with {m} ({} from cache)",
                    total - todo
                )
            }
        },
    )?;
    let Some(s) = s else {
        return Ok(());
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&s).unwrap());
    } else {
        println!(
            "snapshot {} written to {} ({}: {} chunks, {} embedded in {:.1}s)",
            s.snapshot_id,
            s.snapshot_dir,
            s.model,
            s.stats.chunks,
            s.stats.embedded,
            s.stats.seconds
        );
    }
    Ok(())
}

/// For a Claude Code PreToolUse hook: never fails the hook (exit 0), prints
/// the markdown on stderr (and optionally the hook JSON on stdout).
fn cmd_suggest_context(
    file: Option<PathBuf>,
    index: Option<PathBuf>,
    query: Option<String>,
    hook_json: bool,
) {
    let file = file.or_else(hook_file_path);
    let Some(file) = file else {
        eprintln!("code-indexer suggest-context: no file (pass FILE or hook JSON with tool_input.file_path)");
        return;
    };
    let abs = std::env::current_dir()
        .map(|d| d.join(&file))
        .unwrap_or(file.clone());
    let Some((root, rel)) = overlay::find_repo(&abs) else {
        return;
    };
    let repo_name = overlay::repo_name(&root);
    let index = index.unwrap_or_else(|| code_index_schemas::dirs::snapshots().join(&repo_name));
    let Ok(me) = std::env::current_exe() else {
        return;
    };
    let server = me.with_file_name("code-index-mcp");
    let mut cmd = std::process::Command::new(&server);
    cmd.arg("relevant")
        .arg("--index")
        .arg(&index)
        .arg("--path")
        .arg(&rel);
    if let Some(q) = &query {
        cmd.arg("--query").arg(q);
    }
    match cmd.stderr(std::process::Stdio::null()).output() {
        Ok(o) if o.status.success() && !o.stdout.is_empty() => {
            let md = String::from_utf8_lossy(&o.stdout).to_string();
            eprint!("{md}");
            if hook_json {
                println!(
                    "{}",
                    serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": md}})
                );
            }
        }
        _ => {}
    }
}

/// The file path a Claude Code hook's JSON names (`tool_input.file_path`).
fn hook_file_path() -> Option<PathBuf> {
    let mut buf = String::new();
    let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut buf);
    serde_json::from_str::<serde_json::Value>(&buf)
        .ok()
        .and_then(|v| {
            v["tool_input"]["file_path"]
                .as_str()
                .or_else(|| v["tool_input"]["notebook_path"].as_str())
                .or_else(|| v["file_path"].as_str())
                .map(PathBuf::from)
        })
}

/// `invalidate-file`: one overlay per repository the files belong to.
fn cmd_invalidate_file(
    files: Vec<PathBuf>,
    index: Option<PathBuf>,
    threads: usize,
    embedding_cache: Option<PathBuf>,
    json: bool,
) -> Result<()> {
    let from_hook = files.is_empty();
    let files = if from_hook {
        hook_file_path().into_iter().collect()
    } else {
        files
    };
    if files.is_empty() {
        // Only from a hook without a file path: nothing to do, and no error.
        eprintln!("code-indexer invalidate-file: no file (pass FILE or hook JSON with tool_input.file_path)");
        return Ok(());
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut by_repo: std::collections::BTreeMap<PathBuf, Vec<String>> = Default::default();
    for f in &files {
        match overlay::find_repo(&cwd.join(f)) {
            Some((root, rel)) => by_repo.entry(root).or_default().push(rel),
            None if from_hook => return Ok(()),
            None => {
                return Err(Error::new(
                    codes::NO_SNAPSHOT,
                    format!(
                        "{} is in no repository (no .git or .code-index.yaml above it)",
                        f.display()
                    ),
                    "pass files inside an indexed repository",
                ))
            }
        }
    }
    let mut done = Vec::new();
    for (root, rels) in by_repo {
        let repo_dir = index.clone().unwrap_or_else(|| {
            code_index_schemas::dirs::snapshots().join(overlay::repo_name(&root))
        });
        let t = std::time::Instant::now();
        let r = overlay::invalidate(&root, &repo_dir, &rels, threads, embedding_cache.clone());
        code_index_schemas::ops::record(
            "invalidate",
            serde_json::json!({
                "repo": overlay::repo_name(&root), "paths": rels.len(), "from_hook": from_hook,
                "latency_ms": (t.elapsed().as_secs_f64() * 100000.0).round() / 100.0,
                "error": r.as_ref().err().map(|e| e.code.as_str()),
            }),
        );
        if let Ok(d) = &r {
            tracing::info!(
                "invalidate-file: overlay {} of {}@{} ({} paths) in {:.2}s",
                d.overlay_id,
                d.repo,
                d.base,
                d.replaces.len(),
                d.seconds
            );
        }
        match r {
            Ok(d) => done.push(d),
            // A hook on a repository nobody indexed is no error.
            Err(e) if from_hook && e.code == codes::NO_SNAPSHOT => {}
            Err(e) => return Err(e),
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&done).unwrap());
    } else {
        for d in &done {
            println!(
                "overlay {} of {}@{}: {} path(s) stale, {} analysed, in {:.2}s -> {}",
                d.overlay_id,
                d.repo,
                d.base,
                d.replaces.len(),
                d.files,
                d.seconds,
                d.overlay_dir
            );
        }
    }
    Ok(())
}

/// The repository root for a `sync`/`watch` argument: the directory itself
/// when it holds `.git` or `.code-index.yaml`, else the nearest such ancestor,
/// else the directory named (a tree without git or config). Without an
/// argument, the working directory must be inside such a repository: a
/// command run from `/tmp` or `$HOME` must not index all of it.
fn repo_root(arg: Option<PathBuf>) -> Result<PathBuf> {
    let named = arg.is_some();
    let p = arg.unwrap_or_else(|| std::env::current_dir().unwrap_or_default());
    let p = index::check_repo(&p)?;
    match p
        .ancestors()
        .find(|a| a.join(".git").exists() || a.join(CONFIG_FILE).is_file())
    {
        Some(root) => Ok(root.to_path_buf()),
        None if named => Ok(p),
        None => Err(Error::new(
            codes::REPO_NOT_FOUND,
            format!(
                "'{}' is not inside a repository (no .git or {CONFIG_FILE} here or above)",
                p.display()
            ),
            format!(
                "run it in a git checkout, or name the tree to index: `code-indexer sync {}`",
                p.display()
            ),
        )
        .at(&p)),
    }
}

fn sync_options(
    root: PathBuf,
    repo_dir: PathBuf,
    b: &SyncBuildArgs,
    default_threads: usize,
    wait: bool,
    progress: bool,
) -> Result<code_index_builder::sync::SyncOptions> {
    Ok(code_index_builder::sync::SyncOptions {
        root,
        repo_dir,
        threads: b.threads.unwrap_or(default_threads).max(1),
        embedding_cache: cache_dir(b.embedding_cache.clone()),
        model: if b.no_embeddings {
            Some(None)
        } else {
            b.model.clone().map(Some)
        },
        keep: b.keep as usize,
        wait,
        full: b.full,
        progress,
        url: None,
        trusted: code_index_schemas::signing::trusted_keys(&b.trust_key)?,
    })
}

fn print_synced(s: &code_index_builder::sync::Synced) {
    let removed = if s.removed.is_empty() {
        String::new()
    } else {
        format!("; removed {}", s.removed.join(", "))
    };
    let what = match s.changed_paths {
        Some(n) => format!("{n} path(s) changed per git"),
        None => "every file hashed".to_string(),
    };
    let overlay = match s.overlay_paths {
        Some(n) => format!("; {n} changed path(s) of the working tree overlaid"),
        None => String::new(),
    };
    match s.action {
        "up-to-date" => println!("{}: up to date at {}{removed}", s.repo, s.snapshot_id),
        "downloaded" => println!(
            "{}: {} -> {} (downloaded from {}) in {:.2}s{overlay}{removed}",
            s.repo,
            s.previous.as_deref().unwrap_or("(none)"),
            s.snapshot_id,
            s.url.as_deref().unwrap_or("?"),
            s.seconds,
        ),
        _ => println!(
            "{}: {} -> {} ({what}; {} files, {} reused) in {:.2}s{removed}",
            s.repo,
            s.previous.as_deref().unwrap_or("(none)"),
            s.snapshot_id,
            s.files,
            s.reused_files,
            s.seconds,
        ),
    }
}

/// `sync`: one repository, up to date now.
fn cmd_sync(
    repo: Option<PathBuf>,
    index: Option<PathBuf>,
    b: SyncBuildArgs,
    url: Option<String>,
    json: bool,
) -> Result<()> {
    use code_index_builder::sync;
    let root = repo_root(repo)?;
    let repo_dir = sync::repo_dir(&root, index.as_deref());
    let mut o = sync_options(
        root,
        repo_dir,
        &b,
        threads(None),
        true,
        !json && std::io::stderr().is_terminal(),
    )?;
    o.url = url;
    let s = sync::sync(&o)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&s).unwrap());
    } else {
        print_synced(&s);
    }
    Ok(())
}

/// `watch`: sync on a timer until a signal.
fn cmd_watch(
    repos: Vec<PathBuf>,
    interval: std::time::Duration,
    out: Option<PathBuf>,
    once: bool,
    b: SyncBuildArgs,
    json: bool,
) -> Result<()> {
    use code_index_builder::sync;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let args: Vec<Option<PathBuf>> = if repos.is_empty() {
        vec![None]
    } else {
        repos.into_iter().map(Some).collect()
    };
    let mut opts = Vec::new();
    for a in args {
        let root = repo_root(a)?;
        let repo_dir = match &out {
            Some(o) => o.join(overlay::repo_name(&root)),
            None => sync::repo_dir(&root, None),
        };
        opts.push(sync_options(root, repo_dir, &b, 1, false, false)?);
    }
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                // A second signal: stop now, removing the build in progress.
                code_index_builder::snapshot::abandon_builds();
                std::process::exit(130);
            }
            eprintln!("code-indexer watch: stopping (after the build in progress, if any)");
        })
        .map_err(|e| {
            Error::new(
                codes::INTERNAL,
                format!("cannot handle signals: {e}"),
                "report this as a bug",
            )
        })?;
    }
    if !once {
        eprintln!(
            "code-indexer watch: {} repositor{} every {:?}",
            opts.len(),
            if opts.len() == 1 { "y" } else { "ies" },
            interval
        );
    }
    sync::watch(&opts, interval, once, &stop, |o, r| match r {
        Ok(s) if json => println!("{}", serde_json::to_string(s).unwrap()),
        Ok(s) if s.action != "up-to-date" || !s.removed.is_empty() => print_synced(s),
        Ok(_) => {}
        Err(e) if json => println!(
            "{}",
            serde_json::json!({"repo_dir": o.repo_dir.display().to_string(), "error": e.code.as_str(), "message": e.message})
        ),
        Err(e) => eprintln!("{}: {e}", o.repo_dir.display()),
    });
    Ok(())
}

fn span_arg(s: &str) -> std::result::Result<i64, String> {
    code_index_schemas::ops::parse_span(s)
        .ok_or_else(|| format!("'{s}' is no span (e.g. 7d, 24h, 30m, 2w)"))
}

fn time_arg(s: &str) -> std::result::Result<i64, String> {
    code_index_schemas::ops::parse_time(s)
        .ok_or_else(|| format!("'{s}' is no date (e.g. 2026-11-01 or 2026-11-01T12:00, UTC)"))
}

/// `metrics`: read the events, print the report.
fn cmd_metrics(
    file: Option<PathBuf>,
    r: &code_index_builder::metrics::Report,
    limit: usize,
    json: bool,
) -> Result<()> {
    use code_index_builder::metrics;
    let file = match file {
        Some(f) => f,
        None => code_index_schemas::ops::metrics_file()
            .map(|r| r.path)
            .ok_or_else(|| {
                Error::new(
                    codes::NO_METRICS,
                    "metrics are turned off (CODE_INDEX_METRICS=off or metrics.enabled: false)",
                    "pass --file <events.jsonl>, or turn them on",
                )
            })?,
    };
    let (events, bad) = metrics::read(&file)?;
    let out = metrics::report(&events, r, code_index_schemas::ops::now_ms(), limit);
    if json {
        println!("{}", serde_json::to_string_pretty(&out).unwrap());
    } else {
        print!("{}", metrics::render(&out));
    }
    if bad > 0 {
        eprintln!("({bad} unreadable line(s) skipped)");
    }
    Ok(())
}

/// `hooks install|uninstall`.
fn cmd_hooks(action: HooksCmd) -> Result<()> {
    use code_index_builder::{hooks, sync};
    match action {
        HooksCmd::Install { repo, index, json } => {
            let root = repo_root(repo)?;
            let repo_dir = sync::repo_dir(&root, index.as_deref());
            let repo_dir = std::path::absolute(&repo_dir).unwrap_or(repo_dir);
            let exe = std::env::current_exe().map_err(|e| {
                Error::new(
                    codes::INTERNAL,
                    format!("cannot find this program's path: {e}"),
                    "run code-indexer by its full path",
                )
            })?;
            let done = hooks::install(&root, &repo_dir, &exe)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&done).unwrap());
            } else {
                println!(
                    "hooks installed: {} (sync into {} after a merge into, or a checkout of, {})",
                    done.hooks.join(", "),
                    done.repo_dir,
                    done.default_branch
                );
            }
        }
        HooksCmd::Uninstall { repo } => {
            let root = repo_root(repo)?;
            let removed = hooks::uninstall(&root)?;
            println!("code-index block removed from {} hook(s)", removed.len());
        }
    }
    Ok(())
}

/// `diff`: the changes from OLD to NEW (or to OLD's overlay).
fn cmd_diff(old: &Path, new: Option<&Path>, limit: usize, json: bool) -> Result<()> {
    use code_index_builder::snapshot::{read_manifest, resolve_dir};
    use code_index_schemas::overlay_in_force as current_overlay;
    let old = resolve_dir(old)?;
    let new = match new {
        Some(n) => resolve_dir(n)?,
        None => current_overlay(&old).ok_or_else(|| {
            Error::new(
                codes::NO_SNAPSHOT,
                format!("snapshot {} has no overlay", old.display()),
                "pass NEW, or run `code-indexer invalidate-file <files>` first",
            )
        })?,
    };
    // Damaged tables would diff as garbage: check every file's size and
    // sha256 against its manifest first, as `status`, `sql` and the server do.
    for d in [&old, &new] {
        code_index_schemas::download::verify_dir(d, |_| Ok(()))?;
    }
    let (om, nm) = (read_manifest(&old)?, read_manifest(&new)?);
    let scope: Option<std::collections::BTreeSet<String>> = nm
        .overlay
        .as_ref()
        .filter(|o| o.base == om.snapshot_id)
        .map(|o| o.replaces.iter().cloned().collect());
    let d = code_index_schemas::diff::diff(&old, &new, scope.as_ref()).map_err(|e| {
        e.into_diagnostic(
            codes::SNAPSHOT_INVALID,
            "pass two snapshot directories written by code-indexer",
        )
    })?;
    if json {
        let v = serde_json::json!({"old": om.snapshot_id, "new": nm.snapshot_id, "repo": nm.repo, "diff": d});
        println!("{}", serde_json::to_string_pretty(&v).unwrap());
        return Ok(());
    }
    println!(
        "{}@{} -> {}{}",
        om.repo,
        om.snapshot_id,
        if scope.is_some() { "overlay " } else { "" },
        nm.snapshot_id
    );
    fn section<T>(
        name: &str,
        c: &code_index_schemas::diff::Changes<T>,
        limit: usize,
        show: impl Fn(&T) -> String,
    ) {
        println!(
            "{name:8} +{} -{} ~{}",
            c.added.len(),
            c.removed.len(),
            c.changed.len()
        );
        let all = c
            .added
            .iter()
            .map(|x| ('+', x))
            .chain(c.removed.iter().map(|x| ('-', x)))
            .chain(c.changed.iter().map(|x| ('~', x)));
        let total = c.added.len() + c.removed.len() + c.changed.len();
        for (sign, x) in all.take(limit) {
            println!("  {sign} {}", show(x));
        }
        if total > limit {
            println!("  ... {} more (--json lists all)", total - limit);
        }
    }
    section("files", &d.files, limit, |f| f.path.clone());
    section("symbols", &d.symbols, limit, |s| {
        format!("{} {}  {}:{}", s.kind, s.qualified_name, s.path, s.line)
    });
    section("edges", &d.edges, limit, |e| {
        format!(
            "{} {}  {}:{}{}",
            e.kind,
            e.dst_name,
            e.src_path,
            e.line,
            e.src_symbol
                .as_deref()
                .map(|s| format!(" (in {s})"))
                .unwrap_or_default()
        )
    });
    Ok(())
}

/// The builder links no database: SQL runs in the server binary installed beside it.
fn cmd_sql(snapshot: &Path, query: &str, max_rows: usize, timeout: f64, json: bool) -> Result<()> {
    let dir = code_index_builder::snapshot::resolve_dir(snapshot)?;
    let me = std::env::current_exe()
        .map_err(|e| Error::new(codes::INTERNAL, e.to_string(), "report this as a bug"))?;
    let server = me.with_file_name("code-index-mcp");
    if !server.is_file() {
        return Err(Error::new(
            codes::INTERNAL,
            format!("`sql` needs code-index-mcp beside code-indexer ({} not found)", server.display()),
            "build the workspace (cargo build --release --workspace) or install both binaries together",
        ));
    }
    let mut cmd = std::process::Command::new(&server);
    cmd.arg("sql")
        .arg("--index")
        .arg(&dir)
        .arg("--max-rows")
        .arg(max_rows.to_string())
        .arg("--timeout")
        .arg(timeout.to_string());
    if json {
        cmd.arg("--json");
    }
    let status = cmd.arg(query).status().map_err(|e| {
        Error::new(
            codes::INTERNAL,
            format!("cannot run {}: {e}", server.display()),
            "check the installation",
        )
    })?;
    if status.success() {
        Ok(())
    } else {
        // Killed by a signal (SIGPIPE under `| head`): exit as a shell reports it.
        use std::os::unix::process::ExitStatusExt;
        std::process::exit(
            status
                .code()
                .or(status.signal().map(|s| 128 + s))
                .unwrap_or(2),
        );
    }
}

#[derive(serde::Serialize)]
struct SecretRow {
    path: String,
    line: u32,
    kind: &'static str,
    /// Names the finding without telling anything about the secret.
    fingerprint: String,
    /// The secret itself, with --reveal on a terminal only.
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<String>,
}

fn cmd_secrets(repo: &Path, list: bool, json: bool, reveal: bool) -> Result<()> {
    let root = index::check_repo(repo)?;
    let cfg = config::load(&root, None)?;
    let walked = walk::walk(&root, &cfg, threads(None))?;
    // Secrets go to a person, never to a log: only onto a terminal.
    let reveal = reveal && std::io::stdout().is_terminal();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads(None))
        .build()
        .map_err(|e| Error::new(codes::INTERNAL, e.to_string(), "retry"))?;
    let rows: Vec<SecretRow> = secrets::scan(&walked.entries, &cfg, &pool)
        .into_iter()
        .map(|l| SecretRow {
            fingerprint: l.finding.fingerprint(&l.path),
            line: l.finding.line,
            kind: l.finding.kind,
            value: reveal.then(|| String::from_utf8_lossy(&l.value).into_owned()),
            path: l.path,
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&rows).unwrap());
        return Ok(());
    }
    if list {
        for r in &rows {
            match &r.value {
                Some(v) => println!("{}:{}: {} {} {v}", r.path, r.line, r.kind, r.fingerprint),
                None => println!("{}:{}: {} {}", r.path, r.line, r.kind, r.fingerprint),
            }
        }
    }
    let files: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.path.as_str()).collect();
    println!(
        "{} secret(s) in {} file(s); they are redacted in snapshots (`index --secrets=fail` refuses to build instead). \
         Silence a false alarm with `secrets: {{ignore: [\"<glob>\"], ignore_values: [\"<value>\"]}}` in {CONFIG_FILE}.",
        rows.len(),
        files.len()
    );
    Ok(())
}

fn cmd_keygen(out: Option<PathBuf>, force: bool) -> Result<()> {
    use code_index_schemas::signing;
    let out = match out {
        Some(o) => o,
        None => std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| code_index_schemas::dirs::home().map(|h| h.join(".config")))
            .ok_or_else(|| {
                Error::new(
                    codes::OUT_DIR,
                    "no default key directory: HOME is not set",
                    "pass --out <dir> outside any git checkout",
                )
            })?
            .join("code-index/keys"),
    };
    let out = out.as_path();
    // A secret key inside a checkout is one `git add -A` from being published.
    let abs = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
    if let Some(root) = abs.ancestors().find(|a| a.join(".git").exists()) {
        return Err(Error::new(
            codes::OUT_DIR,
            format!(
                "{} is inside the git checkout {}: the secret key could be committed or indexed",
                out.display(),
                root.display()
            ),
            "pass --out a directory outside any checkout (default: ~/.config/code-index/keys)",
        ));
    }
    let (secret, public) = signing::generate()?;
    let (key, pubf) = (out.join("code-index.key"), out.join("code-index.pub"));
    if !force && (key.exists() || pubf.exists()) {
        return Err(Error::new(
            codes::KEY_EXISTS,
            format!("{} or {} exists", key.display(), pubf.display()),
            "pass --force to replace the key pair (snapshots signed with the old key then need the old public key to verify)",
        ));
    }
    std::fs::create_dir_all(out).map_err(|e| {
        Error::io(
            codes::OUT_DIR,
            "cannot create",
            out,
            e,
            "pass a writable --out",
        )
    })?;
    write_private(&key, &format!("{secret}\n"))?;
    std::fs::write(&pubf, format!("{public}\n"))
        .map_err(|e| Error::io(codes::WRITE, "cannot write", &pubf, e, "check permissions"))?;
    println!("{public}");
    eprintln!(
        "secret key: {} (store its content as the CI secret CODE_INDEX_SIGNING_KEY; never commit it)\n\
         public key: {} (give it to `code-index-mcp serve --trust-key` or CODE_INDEX_TRUSTED_KEYS)\n\
         key id:     {} (what `sign`, `status` and the server's errors call it)",
        key.display(),
        pubf.display(),
        public.key_id()
    );
    Ok(())
}

/// Write a file only its owner can read.
fn write_private(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    o.mode(0o600);
    o.open(path)
        .and_then(|mut f| {
            // An existing file keeps its mode on open: set it (keygen --force).
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
            }
            f.write_all(text.as_bytes())
        })
        .map_err(|e| Error::io(codes::WRITE, "cannot write", path, e, "check permissions"))
}

fn cmd_sign(snapshot: &Path, key: Option<&Path>) -> Result<()> {
    use code_index_schemas::signing;
    let secret = match key {
        Some(p) => std::fs::read_to_string(p).map_err(|e| {
            Error::io(codes::SIGNING_KEY, "cannot read the signing key", p, e, "pass the code-index.key `keygen` wrote")
        })?,
        None => std::env::var("CODE_INDEX_SIGNING_KEY").map_err(|_| {
            Error::new(
                codes::SIGNING_KEY,
                "no signing key: neither --key nor CODE_INDEX_SIGNING_KEY is set",
                "make a key pair with `code-indexer keygen`, then pass --key code-index.key or set CODE_INDEX_SIGNING_KEY to its content",
            )
        })?,
    };
    let dir = code_index_builder::snapshot::resolve_dir(snapshot)?;
    let mpath = dir.join(code_index_schemas::MANIFEST_FILE);
    let manifest = std::fs::read(&mpath).map_err(|e| {
        Error::io(
            codes::SNAPSHOT_INVALID,
            "cannot read",
            &mpath,
            e,
            "pass a snapshot directory (it holds manifest.json)",
        )
    })?;
    let sig = signing::sign(&secret, &manifest)?;
    let spath = dir.join(signing::SIGNATURE_FILE);
    let tmp = spath.with_extension("sig.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(&sig).unwrap() + "\n")
        .and_then(|_| std::fs::rename(&tmp, &spath))
        .map_err(|e| Error::io(codes::WRITE, "cannot write", &spath, e, "check permissions"))?;
    println!("signed {} with key {}", dir.display(), sig.key_id);
    Ok(())
}

/// `init`: write a starter config inferred from the tree (checked to parse first).
fn cmd_init(repo: &Path, force: bool) -> Result<()> {
    let root = index::check_repo(repo)?;
    let target = root.join(CONFIG_FILE);
    if target.exists() && !force {
        return Err(Error::new(
            codes::CONFIG_EXISTS,
            format!("{} already exists", target.display()),
            "edit it, or pass --force to overwrite it with a fresh starter file",
        )
        .at(&target));
    }
    let cfg = config::effective(config::Config::default(), None, &target, None)?;
    let walked = walk::walk(&root, &cfg, threads(None))?;
    let paths: Vec<String> = walked.entries.iter().map(|e| e.rel.clone()).collect();
    let tree = Inferred::scan(&root, &cfg, &paths);
    let name = index::repo_name(&root, &cfg, None);
    let y = starter_config(&root, &name, &tree);
    // Check it parses before writing.
    config::parse_config(&y, &target)?;
    let tmp = target.with_extension("yaml.tmp");
    std::fs::write(&tmp, &y)
        .and_then(|_| std::fs::rename(&tmp, &target))
        .map_err(|e| {
            Error::io(
                codes::WRITE,
                "cannot write",
                &target,
                e,
                "check the repository is writable",
            )
        })?;
    println!(
        "wrote {} ({} modules inferred, {} listed; {} test files, {} navigation docs)",
        target.display(),
        tree.roots.len(),
        listed_modules(&tree.roots).len(),
        tree.tests,
        tree.docs.len()
    );
    let _ = analyze::count_lines;
    Ok(())
}

/// What `init` infers from the tree's paths.
struct Inferred<'a> {
    /// Files and test files per module root.
    roots: std::collections::BTreeMap<String, (usize, usize)>,
    /// Files matching the default test patterns.
    tests: usize,
    /// The first navigation docs found (at most 10).
    docs: Vec<&'a str>,
}

impl<'a> Inferred<'a> {
    fn scan(root: &Path, cfg: &config::Effective, paths: &'a [String]) -> Inferred<'a> {
        let modules = code_index_builder::modules::Modules::infer(root, paths, &cfg.config);
        let mut t = Inferred {
            roots: std::collections::BTreeMap::new(),
            tests: 0,
            docs: Vec::new(),
        };
        for p in paths {
            let lang = code_index_builder::language::Lang::detect(p);
            let is_test = cfg.tests.is_match(p);
            if let Some(r) = modules.of(p, lang).module_root {
                let e = t.roots.entry(r).or_default();
                e.0 += 1;
                e.1 += usize::from(is_test);
            }
            if is_test {
                t.tests += 1;
            }
            // Navigation docs are text: the docs folder's images and style sheets are not.
            let text_doc = Path::new(p)
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| {
                    ["md", "markdown", "mdx", "rst", "txt", "adoc", "org"]
                        .contains(&x.to_ascii_lowercase().as_str())
                });
            if text_doc && cfg.nav_docs.is_match(p) && t.docs.len() < 10 {
                t.docs.push(p);
            }
        }
        t
    }
}

/// The text of the starter .code-index.yaml.
fn starter_config(root: &Path, name: &str, tree: &Inferred) -> String {
    let Inferred { roots, tests, docs } = tree;
    let mut y = String::new();
    y.push_str("# code-index configuration (written by `code-indexer init`; edit freely).\n");
    y.push_str(
        "# Every key is optional. Globs follow ripgrep: no '/' matches a file name anywhere.\n",
    );
    y.push_str(&format!("name: {name}\n"));
    if let Some(b) = code_index_builder::git::info(root).branch {
        y.push_str(&format!("default_branch: {b}\n"));
    }
    y.push_str("# snapshot_url: https://host/snapshots/NAME-latest.manifest.json  # `sync` downloads what CI published\n");
    y.push_str("# include: [\"src/**\"]          # only these files (default: everything ripgrep would search)\n");
    y.push_str("exclude: []                    # e.g. [\"vendor/**\", \"*.snap\"]\n");
    y.push_str("include_override: []           # indexed even if .gitignore drops them\n");
    y.push_str(&format!(
        "# max_file_size: {}        # skip larger files (default: no limit, as rg; over {} bytes: text only, not parsed)\n",
        config::PARSE_MAX_BYTES,
        config::PARSE_MAX_BYTES
    ));
    y.push_str(
        "# follow_symlinks: true          # walk through symbolic links, as rg -L (default: skipped, as rg)\n",
    );
    if roots.is_empty() {
        y.push_str("modules: []\n");
    } else {
        let listed = listed_modules(roots);
        let all = roots.keys().filter(|r| !r.is_empty()).count();
        y.push_str("modules:                       # inferred from __init__.py, package.json, Cargo.toml, go.mod\n");
        if listed.len() < all {
            y.push_str(&format!(
                "  # {} of the {all} inferred modules, source before tests, largest first; every build infers\n  # the others the same way: list one here only to describe it\n",
                listed.len()
            ));
        }
        for (r, n) in listed {
            y.push_str(&format!(
                "  - path: {}\n    description: \"\"   # {n} files\n",
                yaml_str(r)
            ));
        }
    }
    y.push_str("navigation_docs:\n  patterns:\n");
    for p in config::NavigationDocs::default().patterns {
        y.push_str(&format!("    - {}\n", yaml_str(&p)));
    }
    y.push_str("  boost: 1.5\n");
    y.push_str(&format!(
        "# {tests} files match the default test patterns; set test_patterns to replace them.\n"
    ));
    y.push_str("# test_patterns: [\"tests/**\", \"test_*.py\"]\n");
    if !docs.is_empty() {
        y.push_str(&format!("# navigation docs found: {}\n", docs.join(", ")));
    }
    y.push_str("secrets:\n  ignore: []                   # path globs whose findings are not redacted\n  ignore_values: []\n");
    y
}

/// The modules the starter file lists (at most [`INIT_MODULES`]): those not
/// made mostly of tests first, then by size, then by path.
fn listed_modules(
    roots: &std::collections::BTreeMap<String, (usize, usize)>,
) -> Vec<(&str, usize)> {
    let mut v: Vec<(&str, usize, usize)> = roots
        .iter()
        .filter(|(r, _)| !r.is_empty())
        .map(|(r, &(n, t))| (r.as_str(), n, t))
        .collect();
    v.sort_by_key(|&(r, n, t)| (t * 2 > n, std::cmp::Reverse(n), r));
    v.into_iter()
        .take(INIT_MODULES)
        .map(|(r, n, _)| (r, n))
        .collect()
}

const INIT_MODULES: usize = 50;

fn yaml_str(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
        && !s.is_empty()
    {
        s.to_string()
    } else {
        format!("{s:?}")
    }
}
