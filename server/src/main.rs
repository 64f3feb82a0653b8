//! `code-index-mcp`: thin CLI over the server library: `serve` (MCP over
//! stdio) and `grep` (the same scan from the command line, used by the
//! ripgrep parity tests). stdout is the protocol: logs go to stderr.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use code_index_server::grep::{self, GrepRequest};
use code_index_server::{cursor, download, mcp, snapshot, state, store, tools};

#[derive(Parser)]
#[command(
    name = "code-index-mcp",
    version,
    about = "Read-only server over code-index snapshots."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// Trust snapshots signed by this public key only (ed25519:…, as `code-indexer keygen` prints;
    /// repeatable; also CODE_INDEX_TRUSTED_KEYS, comma-separated). Unsigned or otherwise signed
    /// snapshots are then refused.
    #[arg(long, global = true)]
    trust_key: Vec<String>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve MCP over stdio (read-only): load and verify the snapshots, then answer tools.
    Serve {
        /// Snapshot dir, <out>/<repo>/, <out>/, or the https:// URL of a published <repo>-<id>.tar.zst (repeatable).
        #[arg(long, required = true)]
        index: Vec<PathBuf>,
        /// YAML map `word: [synonyms]` added to the built-in table (search_code suggestions).
        #[arg(long)]
        synonyms: Option<PathBuf>,
        /// Load file contents into memory, uncompressed, instead of reading each
        /// file's page of files.parquet on use: scans skip decompression, for
        /// memory the size of the text and a slower start.
        #[arg(long)]
        plain_content: bool,
    },
    /// Print what to read next for a file and/or a query (markdown; the codeindex://relevant resource).
    Relevant {
        #[arg(long, required = true)]
        index: Vec<PathBuf>,
        /// Repo-relative file path.
        #[arg(long)]
        path: Option<String>,
        #[arg(long)]
        query: Option<String>,
        #[arg(long)]
        repo: Option<String>,
    },
    /// Run search_code from the command line (JSON; used by benchmarks and tests).
    SearchCode {
        #[arg(long, required = true)]
        index: Vec<PathBuf>,
        query: String,
        /// hybrid | semantic | keyword | regex
        #[arg(long, default_value = "hybrid")]
        mode: String,
        #[arg(long, default_value_t = 10)]
        limit: u32,
        #[arg(long)]
        repo: Option<String>,
    },
    /// Run one read-only SQL SELECT over the snapshot tables (files, symbols, refs/references, edges, chunks).
    Sql {
        #[arg(long, required = true)]
        index: Vec<PathBuf>,
        query: String,
        /// At most this many rows.
        #[arg(long, default_value_t = 100)]
        max_rows: usize,
        /// Interrupt the query after this many seconds.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Regex search over snapshot content, with ripgrep's semantics; prints JSON.
    Grep {
        /// Snapshot dir, <out>/<repo>/ or <out>/ (repeatable).
        #[arg(long, required = true)]
        index: Vec<PathBuf>,
        pattern: String,
        /// -F: the pattern is a literal.
        #[arg(short = 'F', long)]
        fixed_string: bool,
        /// -s: case sensitive (default: smart case).
        #[arg(short = 's', long, conflicts_with = "ignore_case")]
        case_sensitive: bool,
        /// -i: case insensitive.
        #[arg(short = 'i', long)]
        ignore_case: bool,
        /// -w: whole words.
        #[arg(short = 'w', long)]
        word: bool,
        /// -U: patterns may span lines and `.` matches newline (rg -U --multiline-dotall).
        #[arg(short = 'U', long)]
        multiline: bool,
        /// -g: rg glob, `!` negates (repeatable).
        #[arg(short = 'g', long = "glob")]
        globs: Vec<String>,
        /// Sub-directory or file to search.
        #[arg(long)]
        path: Option<String>,
        #[arg(long)]
        lang: Option<String>,
        #[arg(short = 'B', long, default_value_t = 0)]
        before: usize,
        #[arg(short = 'A', long, default_value_t = 0)]
        after: usize,
        /// -C: before and after.
        #[arg(short = 'C', long)]
        context: Option<usize>,
        #[arg(short = 'm', long)]
        max_count: Option<u64>,
        /// Page size (1..=1000); every page is fetched through cursors.
        #[arg(long, default_value_t = 500)]
        limit: usize,
    },
}

fn main() -> ExitCode {
    // A panic in a background rayon task is logged; without a handler rayon
    // aborts the process (and the agent loses every tool).
    let _ = rayon::ThreadPoolBuilder::new()
        .panic_handler(code_index_server::guard::log_pool_panic)
        .build_global();
    let cli = Cli::parse();
    // The server says what it loads on stderr (an MCP client's log); the
    // one-shot commands only their warnings.
    let serving = matches!(cli.cmd, Cmd::Serve { .. });
    if !serving {
        // A one-shot command piped into `head` stops quietly when the reader
        // goes, as rg and cat do (Rust's default would panic on the next
        // write). `serve` keeps handling the closed pipe itself.
        // SAFETY: sets the process-wide disposition back to the default; no handler runs.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let stderr_level = if serving { "info" } else { "warn" };
    code_index_schemas::ops::init_logging("code-index-mcp", stderr_level);
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

fn load_all(index: &[PathBuf]) -> Result<Vec<snapshot::Snapshot>, Box<dyn std::error::Error>> {
    Ok(load_roots(index, false)?.0)
}

/// The snapshots the `--index` arguments name, with their overlays, and the
/// directories to read again for new ones (a download's is fixed). With
/// `allow_empty` (`serve`), a directory without a snapshot yet is watched
/// too: the server starts empty and serves what a build writes there.
fn load_roots(
    index: &[PathBuf],
    allow_empty: bool,
) -> Result<(Vec<snapshot::Snapshot>, Vec<PathBuf>), Box<dyn std::error::Error>> {
    let (mut snaps, mut roots) = (Vec::new(), Vec::new());
    for i in index {
        let arg = i.to_string_lossy();
        if download::is_url(&arg) {
            let dir = download::fetch(&arg, &cache_root())?;
            snaps.push(snapshot::load(&dir)?);
            roots.push(dir);
            continue;
        }
        let i = i.canonicalize().unwrap_or_else(|_| i.clone());
        let found = snapshot::discover_in(&i, allow_empty)?;
        if found.is_empty() {
            tracing::warn!(
                "no snapshot in {} yet: tools answer NOT_FOUND until `code-indexer index --out {}` or `code-indexer sync` writes one there (served without a restart)",
                i.display(),
                i.display()
            );
        }
        for d in found {
            snaps.push(snapshot::load(&d)?);
        }
        roots.push(i);
    }
    snaps.sort_by(|a, b| a.repo().cmp(b.repo()));
    Ok((snapshot::with_overlays(snaps), roots))
}

/// Where downloads and derived, rebuildable data (the DuckDB table cache) live: never a snapshot we write.
fn cache_root() -> PathBuf {
    code_index_schemas::dirs::server_cache()
}

/// The server's state without the MCP transport (for the command-line subcommands).
fn offline_server(index: &[PathBuf]) -> Result<state::State, Box<dyn std::error::Error>> {
    let snaps = load_all(index)?;
    let store = store::Store::load(&snaps, &cache_dir())?;
    let mut state = state::State::new(snaps, store, std::time::Instant::now());
    if let Ok(cwd) = std::env::current_dir() {
        state = state.with_default_repo_from(&cwd);
    }
    Ok(state)
}

fn cache_dir() -> PathBuf {
    code_index_schemas::dirs::server_tables()
}

fn serve(index: &[PathBuf], synonyms: Option<&PathBuf>) -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::ServiceExt;
    let started = std::time::Instant::now();
    let (snaps, roots) = load_roots(index, true)?;
    tracing::info!(
        "code-index-mcp {}: {} snapshot(s) loaded in {:.2}s: {}",
        env!("CARGO_PKG_VERSION"),
        snaps.len(),
        started.elapsed().as_secs_f64(),
        snaps
            .iter()
            .map(|s| format!("{}@{}", s.repo(), s.id()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // The tables load in the background (the first start on a new snapshot
    // builds their cache): the table tools wait for them, the rest answer now.
    let store = store::Store::deferred(&snaps)?;
    tracing::info!("ready in {:.2}s", started.elapsed().as_secs_f64());
    let mut state = state::State::new(snaps, store, started);
    if let Some(p) = synonyms {
        let text = std::fs::read_to_string(p)
            .map_err(|e| format!("cannot read synonyms file {}: {e}", p.display()))?;
        let extra = code_index_server::retrieval::parse_synonyms(&text).map_err(|e| {
            format!(
                "synonyms file {}: {e} (expected lines like `auth: [login, session]`)",
                p.display()
            )
        })?;
        for (k, v) in extra {
            state.synonyms.entry(k).or_default().extend(v);
        }
    }
    if let Ok(cwd) = std::env::current_dir() {
        state = state.with_default_repo_from(&cwd);
    }
    if let Some(r) = &state.default_repo {
        tracing::info!(
            "default repo {r} (from the working directory; pass repo: \"all\" for every one)"
        );
    }
    let state = std::sync::Arc::new(state);
    code_index_server::live::start_background(&state, &cache_dir());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let running = mcp::Server::with_live(code_index_server::live::Live::watching(
            state,
            cache_dir(),
            roots,
        ))
        .serve(rmcp::transport::stdio())
        .await?;
        running.waiting().await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}

/// `--trust-key` and `CODE_INDEX_TRUSTED_KEYS`: the keys a snapshot's signature must verify against.
fn trust_keys(trust_key: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let keys = code_index_schemas::signing::trusted_keys(trust_key)?;
    if !keys.is_empty() {
        code_index_server::snapshot::set_trusted_keys(keys);
    }
    Ok(())
}

/// `sql`: one read-only query over the snapshots' tables, as TSV or JSON.
fn cmd_sql(
    index: &[PathBuf],
    query: &str,
    max_rows: usize,
    timeout: f64,
    json: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let snaps = load_all(index)?;
    let store = store::Store::load(&snaps, &cache_dir())?;
    let r = store.sql(query, max_rows, Duration::from_secs_f64(timeout))?;
    if json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        println!("{}", r.columns.join("\t"));
        for row in &r.rows {
            let cells: Vec<String> = row
                .iter()
                .map(|v| match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            println!("{}", cells.join("\t"));
        }
        if r.truncated {
            eprintln!("(truncated at {max_rows} rows; raise --max-rows)");
        }
    }
    Ok(())
}

/// `grep`: every match, paged through the opaque cursor as an agent would page, as JSON.
fn cmd_grep(
    snaps: &[snapshot::Snapshot],
    req: &GrepRequest,
) -> Result<(), Box<dyn std::error::Error>> {
    let refs: Vec<&snapshot::Snapshot> = snaps.iter().collect();
    let (compiled, files) = grep::compile_scoped(req, &refs)?;
    let ids: Vec<&str> = snaps.iter().map(|s| s.id()).collect();
    let fp = cursor::fingerprint("grep", &req.normalized(), &ids);
    let mut all = Vec::new();
    let mut pos = (0u64, 0u64);
    let mut pages = 0;
    loop {
        let page = grep::scan(&files, &compiled, pos);
        pages += 1;
        all.extend(page.matches);
        match page.next {
            Some(n) => {
                // Round-trip through the opaque cursor, as an agent would.
                let c = cursor::encode(&fp, &[n.0, n.1]);
                let p = cursor::decode(&c, &fp)?;
                pos = (p[0], p[1]);
            }
            None => break,
        }
    }
    println!(
        "{}",
        serde_json::to_string(
            &serde_json::json!({"matches": all, "pages": pages, "files": files.len()})
        )?
    );
    Ok(())
}

fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    trust_keys(&cli.trust_key)?;
    match cli.cmd {
        Cmd::Serve {
            index,
            synonyms,
            plain_content,
        } => {
            code_index_server::snapshot::set_compressed_content(!plain_content);
            serve(&index, synonyms.as_ref())
        }
        Cmd::Relevant {
            index,
            path,
            query,
            repo,
        } => {
            let t = std::time::Instant::now();
            let server = offline_server(&index)?;
            let md = code_index_server::resources::relevant_markdown(
                &server,
                path.as_deref(),
                query.as_deref(),
                repo.as_deref(),
            )?;
            print!("{md}");
            code_index_server::metrics::context_inject(
                path.as_deref(),
                query.as_deref(),
                &md,
                t.elapsed(),
            );
            Ok(())
        }
        Cmd::SearchCode {
            index,
            query,
            mode,
            limit,
            repo,
        } => {
            let server = offline_server(&index)?;
            let out = tools::search_code::cli(&server, query, mode, limit, repo)?;
            println!("{}", serde_json::to_string_pretty(&out)?);
            Ok(())
        }
        Cmd::Sql {
            index,
            query,
            max_rows,
            timeout,
            json,
        } => cmd_sql(&index, &query, max_rows, timeout, json),
        Cmd::Grep {
            index,
            pattern,
            fixed_string,
            case_sensitive,
            ignore_case,
            word,
            multiline,
            globs,
            path,
            lang,
            before,
            after,
            context,
            max_count,
            limit,
        } => {
            let snaps = load_all(&index)?;
            let req = GrepRequest {
                pattern,
                fixed_string,
                case_sensitive: if case_sensitive {
                    Some(true)
                } else if ignore_case {
                    Some(false)
                } else {
                    None
                },
                whole_word: word,
                multiline,
                globs,
                path,
                lang,
                before: context.unwrap_or(before),
                after: context.unwrap_or(after),
                max_count,
                limit,
                budget: Duration::from_secs(600),
                per_file_limit: None,
            };
            cmd_grep(&snaps, &req)
        }
    }
}
