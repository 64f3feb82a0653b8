//! The MCP surface (rmcp, stdio). Every tool is read-only, returns
//! `structuredContent` (with an `outputSchema`) plus a compact text
//! rendering, and reports errors as results with `isError` and a body
//! `{code, message, hint}` the model can act on.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cursor;
use crate::error::{codes, ToolError};
use crate::grep::{self, GrepMatch, GrepRequest};
use crate::snapshot::Snapshot;
use crate::store::{NameMatch, Store, SymbolFilter, SymbolRow};

/// Bytes of rendered results per response (~6k tokens at ~4 bytes a token).
pub const RESPONSE_BUDGET_BYTES: usize = 24_000;
/// Bytes of structured content per response (the JSON the client may also show the model).
pub const STRUCTURED_BUDGET_BYTES: usize = 40_000;
/// Most context lines before or after a grep match: 20 + 20 lines of at
/// most 400 bytes keep one match within the response budget.
const MAX_CONTEXT_LINES: u32 = 20;

/// Most definitions find_references lists beside the usages.
const MAX_DEFINITIONS: usize = 200;

/// Default scan budget.
pub const SCAN_BUDGET: Duration = Duration::from_secs(10);

/// Loaded snapshots and server facts.
pub struct State {
    pub snaps: Vec<Snapshot>,
    pub store: Store,
    pub started: Instant,
    /// When the last tool call ended (ms since `started`).
    pub last_call: std::sync::atomic::AtomicU64,
    /// Tool calls running now.
    pub in_flight: std::sync::atomic::AtomicUsize,
    /// A release of memory is scheduled.
    pub release_pending: std::sync::atomic::AtomicBool,
    /// Recent `search` results by (snapshot ids, normalized query).
    pub cache: crate::recent::Recent<Arc<Vec<SearchHit>>>,
    /// Complete grep results by cursor fingerprint (small result sets), so
    /// later pages are slices instead of rescans.
    pub grep_cache: crate::recent::Recent<Arc<GrepAll>>,
    /// count_only results (counts per file, partial), so their pages index one list.
    pub count_cache: crate::recent::Recent<Arc<grep::Counts>>,
    /// How many matches the response budget let a recent grep page hold, by
    /// query fingerprint (a next page scans about that many).
    pub grep_fit: crate::recent::Recent<usize>,
    /// Fingerprints of the grep results being filled in the background.
    pub grep_filling: std::sync::Mutex<std::collections::HashSet<String>>,
    /// The loaded repo named like the working directory or one of its parents.
    pub default_repo: Option<String>,
    /// That directory: its git HEAD (never its files) tells whether the snapshot is behind.
    pub default_checkout: Option<std::path::PathBuf>,
    /// The semantic engine (chunks, BM25, vectors), built once in the background.
    pub engine: std::sync::OnceLock<crate::semantic::Engine>,
    /// Recent search_code rankings by cursor fingerprint.
    pub code_cache: crate::recent::Recent<Arc<crate::semtools::RankedPub>>,
    /// Synonyms for empty-result suggestions.
    pub synonyms: std::collections::HashMap<String, Vec<String>>,
    /// File graphs (imports and resolved calls) by snapshot index, built on first use.
    pub file_graphs:
        std::sync::Mutex<std::collections::HashMap<usize, Arc<crate::semtools::FileGraph>>>,
    /// The languages of the loaded files, sorted (for `lang` arguments).
    pub langs: Vec<String>,
}

/// Every match of a grep query, with positions.
pub struct GrepAll {
    pub matches: Vec<GrepMatch>,
    pub positions: Vec<(u64, u64)>,
}

/// How long a first page may scan to hold the whole result (for the cache)
/// once it has a page of matches; past it the page is answered and the scan
/// goes on in the background ([`Server::fill_grep_cache`]).
const FIRST_PAGE_FILL: Duration = Duration::from_millis(20);
/// Longest background scan filling the grep cache.
const GREP_FILL_BUDGET: Duration = Duration::from_secs(2);
/// Largest result set kept whole in the grep cache.
const GREP_CACHE_MATCHES: usize = 5_000;

impl State {
    /// Pick the default repo from a working directory (by directory names only).
    pub fn with_default_repo_from(mut self, cwd: &std::path::Path) -> State {
        let found = cwd.ancestors().find_map(|a| {
            let n = a.file_name()?.to_string_lossy().to_string();
            self.snaps
                .iter()
                .any(|s| s.repo() == n)
                .then(|| (n, a.to_path_buf()))
        });
        if let Some((name, dir)) = found {
            self.default_repo = Some(name);
            self.default_checkout = Some(dir);
        }
        self
    }

    pub fn new(snaps: Vec<Snapshot>, store: Store, started: Instant) -> State {
        let langs: std::collections::BTreeSet<String> = snaps
            .iter()
            .flat_map(|s| s.files.iter().map(|f| f.language.clone()))
            .collect();
        State {
            langs: langs.into_iter().collect(),
            snaps,
            store,
            started,
            last_call: std::sync::atomic::AtomicU64::new(0),
            in_flight: std::sync::atomic::AtomicUsize::new(0),
            release_pending: std::sync::atomic::AtomicBool::new(false),
            cache: crate::recent::Recent::new(CACHE_ENTRIES),
            grep_cache: crate::recent::Recent::new(4),
            count_cache: crate::recent::Recent::new(4),
            grep_filling: std::sync::Mutex::new(std::collections::HashSet::new()),
            grep_fit: crate::recent::Recent::new(16),
            default_repo: None,
            default_checkout: None,
            engine: std::sync::OnceLock::new(),
            code_cache: crate::recent::Recent::new(16),
            synonyms: crate::semtools::parse_synonyms(crate::semtools::DEFAULT_SYNONYMS)
                .unwrap_or_default(),
            file_graphs: std::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }

    /// The semantic engine (built on first use; `serve` starts it in the background).
    /// The `search_code` engine, built on first use (the server starts it in
    /// the background). The build runs in a pool of its own at low priority:
    /// in rayon's global pool, grep's scans would queue behind it (on the
    /// Linux kernel the build takes ≈ 40 s, and a grep waited that long).
    pub fn engine(&self) -> &crate::semantic::Engine {
        self.engine.get_or_init(|| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(std::thread::available_parallelism().map_or(2, |n| n.get()))
                .thread_name(|i| format!("code-index-engine-{i}"))
                .panic_handler(crate::guard::log_pool_panic)
                .start_handler(|_| {
                    // Linux: nice applies to the calling thread only.
                    // SAFETY: plain libc call without pointers.
                    unsafe {
                        libc::nice(10);
                    }
                })
                .build();
            match pool {
                Ok(pool) => pool.install(|| crate::semantic::Engine::build(&self.snaps)),
                Err(_) => crate::semantic::Engine::build(&self.snaps),
            }
        })
    }

    /// For an absolute path that runs through a loaded repo's name
    /// (`/home/me/django/django/db/models.py`), the hint names the
    /// repo-relative path.
    pub fn suggest_relative(&self, p: &str, e: ToolError) -> ToolError {
        for s in &self.snaps {
            let needle = format!("/{}/", s.repo());
            for (i, _) in p.match_indices(&needle) {
                let rel = &p[i + needle.len()..];
                let i = s.files.partition_point(|f| f.path.as_str() < rel);
                if !rel.is_empty() && s.files.get(i).is_some_and(|f| f.path.starts_with(rel)) {
                    return ToolError {
                        hint: format!(
                            "paths are relative to the repository root: use {rel:?} (repo {})",
                            s.repo()
                        ),
                        ..e
                    };
                }
            }
        }
        e
    }

    /// A `lang` value must name a language of the loaded files.
    pub fn check_lang(&self, l: &str) -> Result<(), ToolError> {
        if self.langs.iter().any(|x| x == l) {
            return Ok(());
        }
        let lower = l.to_ascii_lowercase();
        let hint = if self.langs.contains(&lower) {
            format!("language ids are lower case: use {lower:?}")
        } else {
            format!("use one of the loaded languages: {}", self.langs.join(", "))
        };
        Err(ToolError::new(
            codes::UNKNOWN_LANG,
            format!("no loaded file has language {l:?}"),
            hint,
        ))
    }

    pub fn synonyms(&self) -> &std::collections::HashMap<String, Vec<String>> {
        &self.synonyms
    }

    /// Name of the pattern a file follows (snapshot index, file index).
    pub fn pattern_of(&self, snap: u32, file: u32) -> Option<String> {
        self.engine().follows.get(&(snap, file)).cloned()
    }
}

/// Hands free memory back to the OS: DuckDB's cached table blocks, the
/// heap's free pages and DuckDB's allocator's free pages.
pub fn release_free_memory(st: &State) {
    st.store.release_buffers();
    crate::memory::trim_heap();
    crate::memory::purge_duckdb_allocator();
}

/// A tool call in progress. Dropped when the call ends, however it ends
/// (answered, failed, panicked or cancelled): it notes the time and
/// schedules a release of memory for when the server is idle.
pub(crate) struct Busy(Arc<State>);

impl Busy {
    pub(crate) fn new(st: &Arc<State>) -> Busy {
        st.in_flight
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Busy(st.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        use std::sync::atomic::Ordering;
        let st = &self.0;
        st.last_call
            .store(st.started.elapsed().as_millis() as u64, Ordering::Release);
        st.in_flight.fetch_sub(1, Ordering::AcqRel);
        schedule_release(st);
    }
}

/// Release memory once no call has run for a second: at most once a second
/// (a release takes ≈ 1 ms of one core), never while a call runs nor in the
/// middle of a burst of calls (the pages of one query stay warm).
fn schedule_release(st: &Arc<State>) {
    use std::sync::atomic::Ordering;
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    if st.release_pending.swap(true, Ordering::AcqRel) {
        return;
    }
    let st = st.clone();
    rt.spawn(async move {
        loop {
            tokio::time::sleep(IDLE_RELEASE).await;
            // A call may end between the two reads: saturate, do not wrap.
            let idle = (st.started.elapsed().as_millis() as u64)
                .saturating_sub(st.last_call.load(Ordering::Acquire));
            if idle >= IDLE_RELEASE.as_millis() as u64 && st.in_flight.load(Ordering::Acquire) == 0
            {
                break;
            }
        }
        st.release_pending.store(false, Ordering::Release);
        let _ = tokio::task::spawn_blocking(move || release_free_memory(&st)).await;
    });
}

/// Idle time after which the server gives memory back.
const IDLE_RELEASE: std::time::Duration = std::time::Duration::from_secs(1);

/// Entries kept in the result cache.
const CACHE_ENTRIES: usize = 16;

impl State {
    /// Snapshots selected by a `repo` argument: absent = the working
    /// directory's repo when one is loaded (matched by directory name, the
    /// checkout itself is never read), else all; "all" = every one.
    pub(crate) fn select(&self, repo: Option<&str>) -> Result<Vec<&Snapshot>, ToolError> {
        let repo = match repo {
            None | Some("") => self.default_repo.as_deref(),
            r => r,
        };
        match repo {
            None | Some("all") => Ok(self.snaps.iter().collect()),
            Some(r) => {
                let v: Vec<&Snapshot> = self.snaps.iter().filter(|s| s.repo() == r).collect();
                if v.is_empty() {
                    let known: Vec<&str> = self.snaps.iter().map(|s| s.repo()).collect();
                    return Err(ToolError::new(
                        codes::UNKNOWN_REPO,
                        format!("repo {r:?} is not loaded"),
                        format!(
                            "use one of: {}, or \"all\" for every loaded repo",
                            known.join(", ")
                        ),
                    ));
                }
                Ok(v)
            }
        }
    }
}

#[derive(Clone)]
pub struct Server {
    tool_router: ToolRouter<Self>,
    /// Each tool's input schema, cleaned, as the arguments are checked against it.
    input_schemas: Arc<std::collections::HashMap<String, Value>>,
    pub(crate) st: Arc<State>,
}

/// A string or a list of strings.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GrepArgs {
    /// Regex (Rust syntax, as ripgrep) or, with fixed_string, a literal. Inline flags work: (?i), (?-s).
    pub pattern: String,
    /// Treat the pattern as a literal string (rg -F).
    #[serde(default)]
    pub fixed_string: Option<bool>,
    /// true = case-sensitive, false = insensitive; absent = smart case (insensitive unless the pattern has an uppercase letter).
    #[serde(default)]
    pub case_sensitive: Option<bool>,
    /// Match whole words only (rg -w).
    #[serde(default)]
    pub whole_word: Option<bool>,
    /// Patterns may span lines and `.` matches newline (rg -U --multiline-dotall).
    #[serde(default)]
    pub multiline: Option<bool>,
    /// rg glob or list of globs; a leading `!` excludes (e.g. "*.py", ["src/**", "!*_test.go"]).
    #[serde(default)]
    pub glob: Option<OneOrMany>,
    /// Only search this repo-relative sub-directory or file.
    #[serde(default)]
    pub path: Option<String>,
    /// Repository (see list_repos); default the working directory's repo when it is loaded, else all; "all" for every loaded one.
    #[serde(default)]
    pub repo: Option<String>,
    /// Language id: python, javascript, typescript, tsx, rust, go, java, c, cpp, markdown, text.
    #[serde(default)]
    pub lang: Option<String>,
    /// Lines of context before and after each match (rg -C), 0..=20; read_file shows more.
    #[serde(default)]
    #[schemars(range(max = 20))]
    pub context_lines: Option<u32>,
    /// Lines of context before each match (rg -B), 0..=20; overrides context_lines.
    #[serde(default)]
    #[schemars(range(max = 20))]
    pub before: Option<u32>,
    /// Lines of context after each match (rg -A), 0..=20; overrides context_lines.
    #[serde(default)]
    #[schemars(range(max = 20))]
    pub after: Option<u32>,
    /// At most this many matches per file (rg -m).
    #[serde(default)]
    pub max_count: Option<u64>,
    /// Matches per page, 1..=1000 (default 50). Larger is an INVALID_ARGUMENT.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    /// next_cursor of the previous page.
    #[serde(default)]
    #[schemars(length(max = 1024))]
    pub cursor: Option<String>,
    /// Return match counts per file instead of matches.
    #[serde(default)]
    pub count_only: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileCount {
    pub repo: String,
    pub path: String,
    pub count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct GrepOut {
    /// Matches in (repo, path, line) order; context lines are nested in their match.
    pub matches: Vec<GrepMatch>,
    /// With count_only: matches per file, in path order, paged by the response budget (`limit` does not apply; `returned` counts files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Vec<FileCount>>,
    pub returned: u64,
    pub has_more: bool,
    /// Pass as `cursor` for the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// The scan budget ran out: results are incomplete; narrow the query (path, glob, lang).
    pub partial: bool,
    /// Files of the searched snapshots that are not in them, so were not
    /// searched (absent when none): over the size cap, binary, unreadable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_indexed: Option<NotIndexed>,
    /// Server-side time for this call.
    pub elapsed_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct NotIndexed {
    /// Over the snapshot's max_file_size (default 1 MiB; rg would search them).
    pub too_large: u64,
    /// Holding a NUL byte (rg skips them too).
    pub binary: u64,
    pub unreadable: u64,
}

impl NotIndexed {
    /// What the manifests of `snaps` say was left out, when anything was.
    fn of(snaps: &[&Snapshot]) -> Option<NotIndexed> {
        let sum = |f: fn(&Snapshot) -> u64| snaps.iter().fold(0u64, |a, s| a.saturating_add(f(s)));
        let n = NotIndexed {
            too_large: sum(|s| s.manifest.skipped.too_large),
            binary: sum(|s| s.manifest.skipped.binary),
            unreadable: sum(|s| s.manifest.skipped.unreadable),
        };
        (n.too_large > 0 || n.binary > 0 || n.unreadable > 0).then_some(n)
    }

    /// One line for the text answer.
    fn line(&self) -> String {
        let mut parts = Vec::new();
        if self.too_large > 0 {
            parts.push(format!("{} over the size cap", self.too_large));
        }
        if self.binary > 0 {
            parts.push(format!("{} binary", self.binary));
        }
        if self.unreadable > 0 {
            parts.push(format!("{} unreadable", self.unreadable));
        }
        let mut l = format!(
            "not searched: files not in the snapshot ({})",
            parts.join(", ")
        );
        if self.too_large > 0 {
            l.push_str(
                "; raise max_file_size in .code-index.yaml and rebuild to include large files",
            );
        }
        l.push('\n');
        l
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchFilesArgs {
    /// Glob over repo-relative paths (e.g. "**/models/*.py"), or a regex with regex: true.
    pub pattern: String,
    #[serde(default)]
    pub regex: Option<bool>,
    #[serde(default)]
    pub repo: Option<String>,
    #[serde(default)]
    pub lang: Option<String>,
    /// 1..=1000, default 100.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    #[serde(default)]
    #[schemars(length(max = 1024))]
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileOut {
    pub repo: String,
    pub path: String,
    /// 1: the file's first line.
    pub line: u64,
    /// The file's last line (its line count).
    pub end_line: u64,
    pub language: String,
    pub size_bytes: u64,
    pub is_test: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchFilesOut {
    pub files: Vec<FileOut>,
    pub total_count: u64,
    pub has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadFileArgs {
    /// Repo-relative path.
    pub path: String,
    /// First line, 1-based (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub start_line: Option<u64>,
    /// Last line, inclusive (default: start_line + 399, capped by the response budget).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub end_line: Option<u64>,
    #[serde(default)]
    pub repo: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadFileOut {
    pub repo: String,
    pub path: String,
    pub line: u64,
    pub end_line: u64,
    pub total_lines: u64,
    /// More lines follow end_line: call again with start_line = end_line + 1.
    pub truncated: bool,
    /// The one line returned was longer than the response budget and is cut
    /// (minified code); grep within it instead.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub clipped: bool,
    pub content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Zoekt-like query: words and "quoted strings" (literal content), regex:PATTERN, file:PATH_REGEX, lang:LANG,
    /// sym:NAME (a definition whose name contains NAME), repo:NAME, case:yes|no|auto, -negation, `or`, (parentheses).
    /// Searches every loaded repo unless the query says repo:NAME. Quote text that holds a colon: "TODO:".
    #[schemars(length(max = 4096))]
    pub query: String,
    /// Hits per page, 1..=1000 (default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    #[serde(default)]
    #[schemars(length(max = 1024))]
    pub cursor: Option<String>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SearchHit {
    pub repo: String,
    pub path: String,
    pub line: u64,
    pub end_line: u64,
    /// "content" (a content term matched), "symbol" (a sym: definition), or "file" (only path/lang/repo terms).
    pub kind: String,
    pub text: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchOut {
    /// The parsed and simplified query.
    pub query_plan: String,
    pub hits: Vec<SearchHit>,
    pub total_hits: u64,
    pub files_matched: u64,
    pub has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Files not in the snapshots, so not searched (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_indexed: Option<NotIndexed>,
    /// The 10 s scan budget ran out: files past it were not searched; narrow the query.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchSymbolsArgs {
    /// Name to find: exact, prefix or substring matches (ranked in that order, case-insensitive), or a regex with regex: true.
    pub query: String,
    #[serde(default)]
    pub regex: Option<bool>,
    /// function, method, class, struct, interface, trait, enum, union, type, constant, variable, macro, module, namespace, field, property, constructor.
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub lang: Option<String>,
    #[serde(default)]
    pub repo: Option<String>,
    /// Only definitions under this sub-directory or in this file.
    #[serde(default)]
    pub path: Option<String>,
    /// 1..=1000, default 20.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    #[serde(default)]
    #[schemars(length(max = 1024))]
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SymbolsOut {
    pub symbols: Vec<SymbolRow>,
    pub total_count: u64,
    pub has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SymbolArgs {
    /// A name ("get_or_create") or qualified name ("QuerySet.get_or_create"). Definitions match the
    /// qualified name; find_references matches usages by the simple name (the part after the last dot).
    pub symbol: String,
    /// Only under this sub-directory or in this file (for find_references: both definitions and usages).
    #[serde(default)]
    pub path: Option<String>,
    /// Only definitions of this kind (function, method, class, ...); usages are not filtered by it.
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub repo: Option<String>,
    /// Per page, 1..=1000: find_definitions definitions (default 50), find_references files (default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    #[serde(default)]
    #[schemars(length(max = 1024))]
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct UsageOut {
    pub line: u64,
    pub end_line: u64,
    pub column: u64,
    /// "reference": a parsed identifier occurrence (with its role); "text": a word-boundary content match the parser did not classify (comments, strings, other languages).
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ref_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enclosing_symbol: Option<String>,
    pub text: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileUsagesOut {
    pub repo: String,
    pub path: String,
    pub line: u64,
    pub end_line: u64,
    pub usages: Vec<UsageOut>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReferencesOut {
    pub symbol: String,
    pub definitions: Vec<SymbolRow>,
    pub files: Vec<FileUsagesOut>,
    pub total_files: u64,
    pub total_usages: u64,
    pub has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RepoOut {
    pub repo: String,
    pub snapshot_id: String,
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub files: u64,
    pub content_bytes: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListReposOut {
    pub repos: Vec<RepoOut>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TableRows {
    pub table: String,
    pub rows: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SnapshotHealth {
    pub repo: String,
    pub snapshot_id: String,
    pub commit: Option<String>,
    pub schema_version: u32,
    pub tables: Vec<TableRows>,
    /// For the working directory's repo: is the snapshot's commit behind the checkout's git HEAD? Null when unknown.
    pub behind_head: Option<bool>,
    /// Commits in HEAD the snapshot lacks, when known.
    pub commits_behind: Option<u64>,
    /// The snapshot carries a manifest.sig.
    pub signed: bool,
    /// Id of the trusted key its signature verified against (null: unsigned,
    /// or no key is trusted, so it was not checked).
    pub verified_by: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct HealthOut {
    pub status: String,
    pub server_version: String,
    pub uptime_seconds: f64,
    pub snapshots: Vec<SnapshotHealth>,
}

pub(crate) fn ok<T: Serialize>(out: &T, text: String) -> Result<CallToolResult, ErrorData> {
    let v =
        serde_json::to_value(out).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let mut r = CallToolResult::structured(v);
    r.content = vec![ContentBlock::text(text)];
    Ok(r)
}

fn fail(e: ToolError) -> Result<CallToolResult, ErrorData> {
    let text = e.to_string();
    let mut r = CallToolResult::structured_error(
        serde_json::json!({"code": e.code, "message": e.message, "hint": e.hint}),
    );
    r.content = vec![ContentBlock::text(text)];
    Ok(r)
}

/// The position a one-number cursor holds (0 without a cursor).
pub(crate) fn offset_of(c: Option<&str>, fp: &str) -> Result<usize, ToolError> {
    match c {
        None => Ok(0),
        Some(c) => match cursor::decode(c, fp)?[..] {
            [o] => Ok(o as usize),
            _ => Err(ToolError::new(
                codes::INVALID_CURSOR,
                "invalid cursor",
                "drop `cursor` to start over",
            )),
        },
    }
}

/// One page of a listing from `offset`: the rows whose `line`s fit the
/// response budget after `head`, their text, and the cursor of the rest.
fn budget_page<T>(
    mut rows: Vec<T>,
    total: u64,
    offset: usize,
    fp: &str,
    head: String,
    line: impl Fn(&T) -> String,
) -> (Vec<T>, String, Option<String>) {
    let mut text = head;
    let mut kept = 0;
    for r in &rows {
        let line = line(r);
        if kept > 0 && text.len() + line.len() > RESPONSE_BUDGET_BYTES {
            break;
        }
        text.push_str(&line);
        kept += 1;
    }
    rows.truncate(kept);
    let end = offset + kept;
    let next = ((end as u64) < total).then(|| cursor::encode(fp, &[end as u64]));
    (rows, text, next)
}

/// A definition's line in a listing.
fn symbol_line(r: &SymbolRow) -> String {
    format!(
        "{}:{} {} {} — {}\n",
        r.path, r.name_line, r.kind, r.qualified_name, r.signature
    )
}

fn limit_of(v: Option<u32>, default: u32) -> Result<usize, ToolError> {
    let l = v.unwrap_or(default);
    if l == 0 || l as usize > grep::MAX_LIMIT {
        return Err(ToolError::invalid_argument(
            format!("limit {l} is out of range"),
            format!("use 1..={} and page with next_cursor", grep::MAX_LIMIT),
        ));
    }
    Ok(l as usize)
}

impl Server {
    pub fn new(st: Arc<State>) -> Server {
        let mut tool_router = Self::tool_router() + Self::semantic_router();
        let mut input_schemas = std::collections::HashMap::new();
        // Standard JSON Schema only (the TypeScript SDK's Ajv warns at every
        // start about schemars' `uint32`/`uint64` formats).
        for route in tool_router.map.values_mut() {
            let mut v = Value::Object((*route.attr.input_schema).clone());
            crate::args::clean_schema(&mut v);
            if let Value::Object(m) = &v {
                route.attr.input_schema = Arc::new(m.clone());
            }
            input_schemas.insert(route.attr.name.to_string(), v);
            if let Some(out) = &route.attr.output_schema {
                let mut v = Value::Object((**out).clone());
                crate::args::clean_schema(&mut v);
                if let Value::Object(m) = v {
                    route.attr.output_schema = Some(Arc::new(m));
                }
            }
        }
        Server {
            tool_router,
            input_schemas: Arc::new(input_schemas),
            st,
        }
    }

    /// The checks every call passes before its tool runs: the arguments
    /// against the tool's input schema, then the values that need the
    /// loaded snapshots (`lang`, `path`).
    fn check_call(&self, req: &mut CallToolRequestParams) -> Result<(), ToolError> {
        let Some(schema) = self.input_schemas.get(req.name.as_ref()) else {
            return Ok(());
        };
        let args = req.arguments.get_or_insert_with(JsonObject::new);
        crate::args::check(&req.name, schema, args)?;
        if let Some(Value::String(l)) = args.get("lang").filter(|l| l.as_str() != Some("")) {
            self.st.check_lang(l)?;
        }
        if let Some(Value::String(p)) = args.get("path") {
            check_path(p).map_err(|e| self.st.suggest_relative(p, e))?;
        }
        Ok(())
    }

    /// Finish a first page's scan in the background and cache the whole
    /// result, so that the next pages are slices (a page asked for before it
    /// is done scans from its cursor). `head` is what the first page's scan
    /// found; the fill resumes where it stopped. Once per query at a time;
    /// given up past [`GREP_FILL_BUDGET`] or [`GREP_CACHE_MATCHES`].
    fn fill_grep_cache(
        &self,
        fp: String,
        repo: Option<String>,
        mut req: GrepRequest,
        head: &grep::Page,
    ) {
        let Some(from) = head.next else {
            return;
        };
        if !crate::guard::lock(&self.st.grep_filling).insert(fp.clone()) {
            return;
        }
        req.budget = GREP_FILL_BUDGET;
        let (mut matches, mut positions) = (head.matches.clone(), head.positions.clone());
        let st = self.st.clone();
        crate::guard::spawn(move || {
            // Cleared however the fill ends, a panic included.
            struct Filling(Arc<State>, String);
            impl Drop for Filling {
                fn drop(&mut self) {
                    crate::guard::lock(&self.0.grep_filling).remove(&self.1);
                }
            }
            let _filling = Filling(st.clone(), fp.clone());
            if let Ok(snaps) = st.select(repo.as_deref()) {
                if let Ok((c, files)) = grep::compile_scoped(&req, &snaps) {
                    let rest = GREP_CACHE_MATCHES - matches.len();
                    let p = grep::scan_up_to(&files, &c, from, rest);
                    if p.next.is_none() && !p.partial {
                        matches.extend(p.matches);
                        positions.extend(p.positions);
                        let all = Arc::new(GrepAll { matches, positions });
                        st.grep_cache.put(fp.clone(), all);
                    }
                }
            }
        });
    }

    fn grep_impl(&self, a: GrepArgs) -> Result<(GrepOut, String), ToolError> {
        let t0 = Instant::now();
        let snaps = self.st.select(a.repo.as_deref())?;
        let repo_arg = a.repo.clone();
        let ctx = a.context_lines.unwrap_or(0) as usize;
        for (name, v) in [
            ("context_lines", a.context_lines),
            ("before", a.before),
            ("after", a.after),
        ] {
            if let Some(n) = v.filter(|&n| n > MAX_CONTEXT_LINES) {
                return Err(ToolError::invalid_argument(
                    format!("{name} {n} is out of range"),
                    format!("use 0..={MAX_CONTEXT_LINES}; read_file shows a longer range around a match"),
                ));
            }
        }
        let req = GrepRequest {
            pattern: a.pattern,
            fixed_string: a.fixed_string.unwrap_or(false),
            case_sensitive: a.case_sensitive,
            whole_word: a.whole_word.unwrap_or(false),
            multiline: a.multiline.unwrap_or(false),
            globs: a.glob.map(OneOrMany::into_vec).unwrap_or_default(),
            path: a.path,
            lang: a.lang,
            before: a.before.map(|b| b as usize).unwrap_or(ctx),
            after: a.after.map(|b| b as usize).unwrap_or(ctx),
            max_count: a.max_count,
            limit: limit_of(a.limit, 50)?,
            budget: SCAN_BUDGET,
            per_file_limit: None,
        };
        let (compiled, files) = grep::compile_scoped(&req, &snaps)?;
        let ids: Vec<&str> = snaps.iter().map(|s| s.id()).collect();
        if a.count_only.unwrap_or(false) {
            // Counts per file in path order, paged by the response budget.
            let fp = cursor::fingerprint("grep-count", &req.normalized(), &ids);
            let offset = offset_of(a.cursor.as_deref(), &fp)?;
            // Pages index one list: counted once, then served from the cache.
            let counted = match self.st.count_cache.get(&fp) {
                Some(c) => c,
                None => {
                    let c = Arc::new(grep::count(&files, &compiled));
                    self.st.count_cache.put(fp.clone(), c.clone());
                    c
                }
            };
            let (counts, partial) = (&counted.0, counted.1);
            let total: u64 = counts.iter().map(|c| c.2).sum();
            let n_files = counts.len();
            let mut text = format!(
                "{total} matches in {n_files} files{}\n",
                if partial {
                    " (partial: time budget spent)"
                } else {
                    ""
                }
            );
            let mut out_counts = Vec::new();
            let mut json_bytes = 0usize;
            for (repo, path, n) in counts.iter().skip(offset) {
                let line = format!("{path}: {n}\n");
                // repo, path, count and the JSON punctuation.
                let json_len = repo.len() + path.len() + 48;
                if !out_counts.is_empty()
                    && (text.len() + line.len() > RESPONSE_BUDGET_BYTES
                        || json_bytes + json_len > STRUCTURED_BUDGET_BYTES)
                {
                    break;
                }
                text.push_str(&line);
                json_bytes += json_len;
                out_counts.push(FileCount {
                    repo: repo.clone(),
                    path: path.clone(),
                    count: *n,
                });
            }
            let end = offset + out_counts.len();
            let next_cursor = (end < n_files).then(|| cursor::encode(&fp, &[end as u64]));
            let mut hint = partial.then(|| {
                "partial: the scan hit its time budget; narrow the search with path, glob or lang"
                    .to_string()
            });
            if next_cursor.is_some() {
                let more = format!(
                    "files {}..{end} of {n_files} listed: pass next_cursor for the rest",
                    offset + 1
                );
                hint = Some(match hint {
                    Some(h) => format!("{h}; {more}"),
                    None => more,
                });
            }
            if let Some(h) = &hint {
                text.push_str(h);
                text.push('\n');
            }
            let not_indexed = NotIndexed::of(&snaps);
            if let (Some(n), 0) = (&not_indexed, offset) {
                text.push_str(&n.line());
            }
            return Ok((
                GrepOut {
                    not_indexed,
                    matches: Vec::new(),
                    returned: out_counts.len() as u64,
                    counts: Some(out_counts),
                    has_more: next_cursor.is_some(),
                    next_cursor,
                    partial,
                    elapsed_ms: t0.elapsed().as_secs_f64() * 1000.0,
                    hint,
                },
                text,
            ));
        }
        let fp = cursor::fingerprint("grep", &req.normalized(), &ids);
        let start = match &a.cursor {
            Some(c) => {
                let p = cursor::decode(c, &fp)?;
                if p.len() != 2 {
                    return Err(ToolError::new(
                        codes::INVALID_CURSOR,
                        "invalid cursor",
                        "drop `cursor` to start over",
                    ));
                }
                (p[0], p[1])
            }
            None => (0, 0),
        };
        // Small result sets are computed whole once and paged from the cache.
        let cached = self.st.grep_cache.get(&fp);
        // A first page whose whole result is not in hand soon (a large tree,
        // many matches) is served from what the scan found so far.
        let mut first: Option<grep::Page> = None;
        let all = match cached {
            Some(a) => Some(a),
            None if start == (0, 0) => {
                let p = grep::scan_up_to_soft(
                    &files,
                    &compiled,
                    (0, 0),
                    GREP_CACHE_MATCHES,
                    Some((req.limit, FIRST_PAGE_FILL)),
                );
                if p.next.is_none() && !p.partial {
                    let a = Arc::new(GrepAll {
                        matches: p.matches,
                        positions: p.positions,
                    });
                    self.st.grep_cache.put(fp.clone(), a.clone());
                    Some(a)
                } else {
                    // Not when the whole result will not fit the cache anyway
                    // (projected from the share of files scanned so far).
                    let projected =
                        p.matches.len() as u64 * files.len() as u64 / p.files_scanned.max(1);
                    if !p.partial && projected < 2 * GREP_CACHE_MATCHES as u64 {
                        self.fill_grep_cache(fp.clone(), repo_arg, req.clone(), &p);
                    }
                    first = Some(p);
                    None
                }
            }
            None => None,
        };
        let page = match all {
            Some(a) => {
                let from = a.positions.partition_point(|p| *p < start);
                let to = (from + req.limit).min(a.matches.len());
                grep::Page {
                    matches: a.matches[from..to].to_vec(),
                    positions: a.positions[from..to].to_vec(),
                    next: a.positions.get(to).copied(),
                    partial: false,
                    files_scanned: files.len() as u64,
                }
            }
            None => match first {
                Some(mut p) => {
                    let n = req.limit.min(p.matches.len());
                    let next = p.positions.get(n).copied().or(p.next);
                    let partial = p.partial && n == p.matches.len();
                    p.matches.truncate(n);
                    p.positions.truncate(n);
                    grep::Page {
                        matches: p.matches,
                        positions: p.positions,
                        next,
                        partial,
                        files_scanned: p.files_scanned,
                    }
                }
                None => {
                    // Scan about what the response budget let the previous page
                    // hold, not `limit` matches of which most would be cut and
                    // scanned again for the next page.
                    let cap = self
                        .st
                        .grep_fit
                        .get(&fp)
                        .map_or(req.limit, |n| (n + n / 2).clamp(1, req.limit));
                    grep::scan_up_to(&files, &compiled, start, cap)
                }
            },
        };
        let scanned = page.matches.len();
        // Cut the page where the rendering exceeds the response budget.
        let mut text = String::new();
        let mut out = Vec::new();
        let mut json_bytes = 0usize;
        let mut next = page.next;
        for (m, pos) in page.matches.into_iter().zip(page.positions) {
            let mut piece = String::new();
            for c in &m.before {
                piece.push_str(&format!("{}-{}- {}\n", m.path, c.line, c.text));
            }
            piece.push_str(&format!("{}:{}: {}\n", m.path, m.line, m.text));
            for c in &m.after {
                piece.push_str(&format!("{}-{}- {}\n", m.path, c.line, c.text));
            }
            let json_len = serde_json::to_string(&m).map(|s| s.len()).unwrap_or(0);
            if !out.is_empty()
                && (text.len() + piece.len() > RESPONSE_BUDGET_BYTES
                    || json_bytes + json_len > STRUCTURED_BUDGET_BYTES)
            {
                next = Some(pos);
                break;
            }
            json_bytes += json_len;
            text.push_str(&piece);
            out.push(m);
        }
        if out.len() < scanned {
            // The budget cut the page: that many fit.
            self.st.grep_fit.put(fp.clone(), out.len());
        } else if scanned < req.limit && next.is_some() {
            // The scan cap, not the budget, ended the page: allow more next time.
            self.st
                .grep_fit
                .put(fp.clone(), (scanned * 2).min(req.limit));
        }
        let next_cursor = next.map(|n| cursor::encode(&fp, &[n.0, n.1]));
        let hint = if out.is_empty() && !page.partial && start != (0, 0) {
            Some("no further matches after the previous page".to_string())
        } else if out.is_empty() && !page.partial {
            Some(empty_hint(&req))
        } else if page.partial {
            Some("partial: the scan hit its 10 s budget or a file its 1 s limit, so matches may be missing; narrow with path, glob or lang (and continue with next_cursor when there is one)".to_string())
        } else {
            None
        };
        if out.is_empty() {
            text.push_str(&format!(
                "no matches. {}\n",
                hint.clone().unwrap_or_default()
            ));
        } else if next_cursor.is_some() {
            text.push_str("… more: pass next_cursor\n");
        }
        let not_indexed = NotIndexed::of(&snaps);
        if let (Some(n), (0, 0)) = (&not_indexed, start) {
            text.push_str(&n.line());
        }
        Ok((
            GrepOut {
                not_indexed,
                returned: out.len() as u64,
                matches: out,
                counts: None,
                has_more: next_cursor.is_some(),
                next_cursor,
                partial: page.partial,
                elapsed_ms: t0.elapsed().as_secs_f64() * 1000.0,
                hint,
            },
            text,
        ))
    }

    fn search_files_impl(&self, a: SearchFilesArgs) -> Result<(SearchFilesOut, String), ToolError> {
        let snaps = self.st.select(a.repo.as_deref())?;
        let limit = limit_of(a.limit, 100)?;
        let matcher: Box<dyn Fn(&str) -> bool> = if a.regex.unwrap_or(false) {
            let re = regex::Regex::new(&a.pattern).map_err(|e| {
                ToolError::new(
                    codes::INVALID_PATTERN,
                    format!("invalid regex: {e}"),
                    "fix the regex, or pass a glob without regex: true",
                )
            })?;
            Box::new(move |p| re.is_match(p))
        } else {
            let mut ob = ignore::overrides::OverrideBuilder::new("");
            ob.add(&a.pattern).map_err(|e| {
                ToolError::new(
                    codes::INVALID_PATTERN,
                    format!("invalid glob: {e}"),
                    "use glob syntax like \"**/*.py\" or \"src/**/test_*\"",
                )
            })?;
            let ov = ob.build().map_err(|e| {
                ToolError::new(
                    codes::INVALID_PATTERN,
                    format!("invalid glob: {e}"),
                    "use glob syntax",
                )
            })?;
            Box::new(move |p| ov.matched(p, false).is_whitelist())
        };
        let all: Vec<FileOut> = snaps
            .iter()
            .flat_map(|s| s.files.iter().map(move |f| (s.repo(), f)))
            .filter(|(_, f)| a.lang.as_ref().is_none_or(|l| &f.language == l) && matcher(&f.path))
            .map(|(r, f)| FileOut {
                repo: r.to_string(),
                path: f.path.clone(),
                line: 1,
                end_line: f.lines.max(1) as u64,
                language: f.language.clone(),
                size_bytes: f.size,
                is_test: f.is_test,
            })
            .collect();
        let ids: Vec<&str> = snaps.iter().map(|s| s.id()).collect();
        let fp = cursor::fingerprint(
            "search_files",
            &format!("{:?} {:?} {:?}", a.pattern, a.regex, a.lang),
            &ids,
        );
        let start = offset_of(a.cursor.as_deref(), &fp)?;
        let total = all.len();
        let page: Vec<FileOut> = all.into_iter().skip(start).take(limit).collect();
        let (page, text, next_cursor) = budget_page(
            page,
            total as u64,
            start,
            &fp,
            format!("{total} files match\n"),
            |f| format!("{} ({}, {} bytes)\n", f.path, f.language, f.size_bytes),
        );
        Ok((
            SearchFilesOut {
                files: page,
                total_count: total as u64,
                has_more: next_cursor.is_some(),
                next_cursor,
            },
            text,
        ))
    }

    fn read_file_impl(&self, a: ReadFileArgs) -> Result<(ReadFileOut, String), ToolError> {
        if let (Some(s), Some(e)) = (a.start_line, a.end_line) {
            if e < s {
                return Err(ToolError::invalid_argument(
                    format!("end_line {e} is before start_line {s}"),
                    "pass end_line ≥ start_line, or leave end_line out",
                ));
            }
        }
        let snaps = self.st.select(a.repo.as_deref())?;
        let path = a.path.trim_start_matches("./");
        let Some((repo, f)) = snaps.iter().find_map(|s| {
            s.files
                .binary_search_by(|f| f.path.as_str().cmp(path))
                .ok()
                .map(|i| (s.repo(), &s.files[i]))
        }) else {
            let base = path.rsplit('/').next().unwrap_or(path);
            let similar: Vec<&str> = snaps
                .iter()
                .flat_map(|s| s.files.iter())
                .filter(|f| f.path.ends_with(base))
                .take(5)
                .map(|f| f.path.as_str())
                .collect();
            return Err(ToolError::new(
                codes::NOT_FOUND,
                format!("no file {path:?} in the loaded snapshots"),
                if similar.is_empty() {
                    "paths are repo-relative; find them with search_files".to_string()
                } else {
                    format!("did you mean: {}", similar.join(", "))
                },
            ));
        };
        let content = f.content();
        let lines: Vec<&str> = content.split_inclusive('\n').collect();
        let total = lines.len() as u64;
        let start = a.start_line.unwrap_or(1).max(1);
        if total == 0 && start == 1 {
            let out = ReadFileOut {
                repo: repo.to_string(),
                path: f.path.clone(),
                line: 1,
                end_line: 0,
                total_lines: 0,
                truncated: false,
                clipped: false,
                content: String::new(),
            };
            let text = format!("{}: empty file (0 lines)", f.path);
            return Ok((out, text));
        }
        if start > total {
            return Err(ToolError::invalid_argument(
                format!("start_line {start} is past the end ({total} lines)"),
                if total == 0 {
                    "the file is empty: omit start_line".to_string()
                } else {
                    format!("use 1..={total}")
                },
            ));
        }
        let want_end = a.end_line.unwrap_or(start + 399).min(total).max(start);
        let mut content = String::new();
        let mut end = start - 1;
        let mut clipped = false;
        for l in &lines[(start - 1) as usize..want_end as usize] {
            if content.len() + l.len() > RESPONSE_BUDGET_BYTES {
                if content.is_empty() {
                    // One line longer than the budget (minified code): its head.
                    let mut cut = RESPONSE_BUDGET_BYTES;
                    while !l.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    content.push_str(&l[..cut]);
                    clipped = true;
                    end += 1;
                }
                break;
            }
            content.push_str(l);
            end += 1;
        }
        let out = ReadFileOut {
            repo: repo.to_string(),
            path: f.path.clone(),
            line: start,
            end_line: end,
            total_lines: total,
            truncated: end < total,
            clipped,
            content: content.clone(),
        };
        let mut text = format!("{}:{}-{} of {}\n{}", f.path, start, end, total, content);
        if clipped {
            text.push_str(&format!(
                "\n[line {end} clipped at {RESPONSE_BUDGET_BYTES} bytes; grep within it instead]\n"
            ));
        }
        Ok((out, text))
    }

    fn repo_names(&self, repo: Option<&str>) -> Result<Vec<String>, ToolError> {
        Ok(self
            .st
            .select(repo)?
            .iter()
            .map(|s| s.repo().to_string())
            .collect())
    }

    fn not_found_hint(&self, name: &str) -> String {
        let similar = self.st.store.similar_names(name, 5);
        if similar.is_empty() {
            "check the spelling, or grep for the text".into()
        } else {
            format!("similar names in the index: {}", similar.join(", "))
        }
    }

    fn search_symbols_impl(&self, a: SearchSymbolsArgs) -> Result<(SymbolsOut, String), ToolError> {
        if a.query.trim().is_empty() {
            return Err(ToolError::invalid_argument(
                "empty query",
                "pass a name, a prefix, or a regex with regex: true",
            ));
        }
        check_kind(a.kind.as_deref())?;
        let repos = self.repo_names(a.repo.as_deref())?;
        let limit = limit_of(a.limit, 20)?;
        let how = if a.regex.unwrap_or(false) {
            NameMatch::Regex
        } else {
            NameMatch::Ranked
        };
        let filter = SymbolFilter {
            repos: repos.clone(),
            kind: a.kind.clone(),
            lang: a.lang.clone(),
            path: a.path.clone(),
        };
        let ids: Vec<&str> = self.st.snaps.iter().map(|s| s.id()).collect();
        let fp = cursor::fingerprint(
            "search_symbols",
            &format!(
                "{:?} {:?} {:?} {:?} {:?} {:?}",
                a.query, a.regex, a.kind, a.lang, repos, a.path
            ),
            &ids,
        );
        let offset = offset_of(a.cursor.as_deref(), &fp)?;
        let (rows, total) = self
            .st
            .store
            .symbols(&a.query, how, &filter, limit, offset)?;
        let (rows, mut text, next_cursor) = budget_page(
            rows,
            total,
            offset,
            &fp,
            format!("{total} definitions\n"),
            symbol_line,
        );
        let hint = (total == 0).then(|| self.not_found_hint(&a.query));
        if let Some(h) = &hint {
            text.push_str(h);
        }
        Ok((
            SymbolsOut {
                symbols: rows,
                total_count: total,
                has_more: next_cursor.is_some(),
                next_cursor,
                hint,
            },
            text,
        ))
    }

    /// Definitions of `a.symbol` (`limit` from `offset`) and how many there are.
    fn definitions(
        &self,
        a: &SymbolArgs,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<SymbolRow>, u64), ToolError> {
        if a.symbol.trim().is_empty() {
            return Err(ToolError::invalid_argument(
                "empty symbol",
                "pass a name like \"get_or_create\" or \"QuerySet.get_or_create\"",
            ));
        }
        check_kind(a.kind.as_deref())?;
        let filter = SymbolFilter {
            repos: self.repo_names(a.repo.as_deref())?,
            kind: a.kind.clone(),
            lang: None,
            path: a.path.clone(),
        };
        self.st.store.symbols(
            a.symbol.trim(),
            NameMatch::Definition,
            &filter,
            limit,
            offset,
        )
    }

    fn find_definitions_impl(&self, a: SymbolArgs) -> Result<(SymbolsOut, String), ToolError> {
        let limit = limit_of(a.limit, 50)?;
        let ids: Vec<&str> = self.st.snaps.iter().map(|s| s.id()).collect();
        let repos = self.repo_names(a.repo.as_deref())?;
        let fp = cursor::fingerprint(
            "find_definitions",
            &format!(
                "{:?} {:?} {:?} {:?}",
                a.symbol.trim(),
                a.kind,
                repos,
                a.path
            ),
            &ids,
        );
        let offset = offset_of(a.cursor.as_deref(), &fp)?;
        let (rows, total) = self.definitions(&a, limit, offset)?;
        let (rows, mut text, next_cursor) = budget_page(
            rows,
            total,
            offset,
            &fp,
            format!("{total} definition(s) of {}\n", a.symbol),
            symbol_line,
        );
        let hint = if total == 0 {
            Some(self.not_found_hint(&a.symbol))
        } else if next_cursor.is_some() && offset == 0 {
            Some("more follow (next_cursor); or narrow with path, kind or a qualified name (\"Class.method\")".to_string())
        } else {
            None
        };
        if let Some(h) = &hint {
            text.push_str(h);
        }
        Ok((
            SymbolsOut {
                symbols: rows,
                total_count: total,
                has_more: next_cursor.is_some(),
                next_cursor,
                hint,
            },
            text,
        ))
    }

    fn find_references_impl(&self, a: SymbolArgs) -> Result<(ReferencesOut, String), ToolError> {
        let (definitions, _) = self.definitions(&a, MAX_DEFINITIONS, 0)?;
        let simple = a
            .symbol
            .trim()
            .rsplit(['.', ':'])
            .next()
            .unwrap_or("")
            .to_string();
        if simple.is_empty() {
            return Err(ToolError::invalid_argument(
                "empty symbol name",
                "pass a name like \"save\"",
            ));
        }
        let snaps = self.st.select(a.repo.as_deref())?;
        let repos: Vec<String> = snaps.iter().map(|s| s.repo().to_string()).collect();
        let limit = limit_of(a.limit, 20)?;
        // Parsed references, then word-boundary text matches on other lines.
        let refs = self
            .st
            .store
            .references(&simple, &repos, a.path.as_deref())?;
        let req = GrepRequest {
            pattern: simple.clone(),
            fixed_string: true,
            case_sensitive: Some(true),
            whole_word: true,
            path: a.path.clone(),
            limit: grep::MAX_LIMIT,
            budget: SCAN_BUDGET,
            ..Default::default()
        };
        let (compiled, files) = grep::compile_scoped(&req, &snaps)?;
        let def_lines: std::collections::HashSet<(String, String, u64)> = definitions
            .iter()
            .map(|d| (d.repo.clone(), d.path.clone(), d.name_line))
            .collect();
        let texts: Vec<GrepMatch> = {
            use rayon::prelude::*;
            files
                .par_iter()
                .flat_map_iter(|(repo, f)| compiled.search_file(repo, f))
                .collect()
        };
        let mut by_file: std::collections::BTreeMap<(String, String), Vec<UsageOut>> =
            std::collections::BTreeMap::new();
        let mut ref_lines: std::collections::HashSet<(String, String, u64)> =
            std::collections::HashSet::new();
        let text_of: std::collections::HashMap<(String, String, u64), String> = texts
            .iter()
            .map(|m| ((m.repo.clone(), m.path.clone(), m.line), m.text.clone()))
            .collect();
        for r in refs {
            if def_lines.contains(&(r.repo.clone(), r.path.clone(), r.line)) {
                continue;
            }
            ref_lines.insert((r.repo.clone(), r.path.clone(), r.line));
            let text = text_of
                .get(&(r.repo.clone(), r.path.clone(), r.line))
                .cloned()
                .unwrap_or_default();
            by_file
                .entry((r.repo.clone(), r.path.clone()))
                .or_default()
                .push(UsageOut {
                    line: r.line,
                    end_line: r.line,
                    column: r.column,
                    source: "reference".into(),
                    ref_kind: Some(r.ref_kind),
                    enclosing_symbol: r.enclosing_symbol,
                    text,
                });
        }
        for m in texts {
            let key = (m.repo.clone(), m.path.clone(), m.line);
            if ref_lines.contains(&key) || def_lines.contains(&key) {
                continue;
            }
            by_file
                .entry((m.repo.clone(), m.path.clone()))
                .or_default()
                .push(UsageOut {
                    line: m.line,
                    end_line: m.end_line,
                    column: m.submatches.first().map(|s| s.column).unwrap_or(1),
                    source: "text".into(),
                    ref_kind: None,
                    enclosing_symbol: None,
                    text: m.text,
                });
        }
        let total_files = by_file.len() as u64;
        let total_usages = by_file.values().map(|v| v.len() as u64).sum();
        let ids: Vec<&str> = snaps.iter().map(|s| s.id()).collect();
        let fp = cursor::fingerprint(
            "find_references",
            &format!("{:?} {:?} {:?}", a.symbol, a.path, a.kind),
            &ids,
        );
        let offset = offset_of(a.cursor.as_deref(), &fp)?;
        let mut text = format!(
            "{total_usages} usage(s) of {simple} in {total_files} file(s); {} definition(s)\n",
            definitions.len()
        );
        let mut files_out = Vec::new();
        let mut end = offset;
        for ((repo, path), mut usages) in by_file.into_iter().skip(offset).take(limit) {
            usages.sort_by_key(|u| (u.line, u.column));
            let mut piece = format!("{path}\n");
            for u in &usages {
                piece.push_str(&format!(
                    "  {}:{} [{}{}] {}\n",
                    u.line,
                    u.column,
                    u.source,
                    u.enclosing_symbol
                        .as_deref()
                        .map(|e| format!(" in {e}"))
                        .unwrap_or_default(),
                    u.text.trim()
                ));
            }
            if !files_out.is_empty() && text.len() + piece.len() > RESPONSE_BUDGET_BYTES {
                break;
            }
            text.push_str(&piece);
            files_out.push(FileUsagesOut {
                repo,
                path,
                line: usages.first().map(|u| u.line).unwrap_or(1),
                end_line: usages.last().map(|u| u.end_line).unwrap_or(1),
                usages,
            });
            end += 1;
        }
        let next_cursor = ((end as u64) < total_files).then(|| cursor::encode(&fp, &[end as u64]));
        let hint =
            (total_usages == 0 && definitions.is_empty()).then(|| self.not_found_hint(&simple));
        Ok((
            ReferencesOut {
                symbol: a.symbol,
                definitions,
                files: files_out,
                total_files,
                total_usages,
                has_more: next_cursor.is_some(),
                next_cursor,
                hint,
            },
            text,
        ))
    }

    /// The hits of `q` in every loaded file, and whether the scan budget ran
    /// out first (files past it are not searched).
    fn search_hits(&self, q: &crate::query::Query) -> Result<(Vec<SearchHit>, bool), ToolError> {
        use crate::query::{Atom, Case};
        use rayon::prelude::*;
        let t0 = Instant::now();
        let partial = std::sync::atomic::AtomicBool::new(false);
        // Compile every atom once.
        let atoms = crate::query::atoms(&q.expr);
        let case_sensitive = match q.case {
            Case::Yes => Some(true),
            Case::No => Some(false),
            Case::Auto => None,
        };
        enum Compiled {
            Content(Box<grep::Compiled>),
            Path(regex::Regex),
            Repo(regex::Regex),
            Lang(String),
            Sym(std::collections::HashMap<(String, String), Vec<(u64, String)>>),
        }
        let mut compiled = Vec::new();
        for a in &atoms {
            compiled.push(match a {
                Atom::Content { text, regex } => {
                    Compiled::Content(Box::new(grep::compile(&GrepRequest {
                        pattern: text.clone(),
                        fixed_string: !regex,
                        case_sensitive,
                        limit: grep::MAX_LIMIT,
                        budget: SCAN_BUDGET,
                        ..Default::default()
                    })
                    .map_err(|e| {
                        e.pattern_hint("fix the regex (Rust regex syntax, as ripgrep), or write the text as a \"quoted string\" to match it literally")
                    })?))
                }
                Atom::File(r) | Atom::Repo(r) => {
                    let insensitive = match q.case {
                        Case::Yes => false,
                        Case::No => true,
                        Case::Auto => !r.chars().any(|c| c.is_uppercase()),
                    };
                    let re = regex::RegexBuilder::new(r)
                        .case_insensitive(insensitive)
                        .size_limit(10 << 20)
                        .build()
                        .map_err(|e| {
                            ToolError::new(
                                codes::INVALID_PATTERN,
                                format!("invalid regex in {a:?}: {e}"),
                                "fix the regex",
                            )
                        })?;
                    if matches!(a, Atom::File(_)) {
                        Compiled::Path(re)
                    } else {
                        Compiled::Repo(re)
                    }
                }
                Atom::Lang(l) => {
                    self.st.check_lang(l)?;
                    Compiled::Lang(l.clone())
                }
                Atom::Sym(name) => {
                    let rows = self
                        .st
                        .store
                        .symbols(
                            name,
                            NameMatch::Ranked,
                            &SymbolFilter::default(),
                            100_000,
                            0,
                        )?
                        .0;
                    let mut m: std::collections::HashMap<(String, String), Vec<(u64, String)>> =
                        std::collections::HashMap::new();
                    for r in rows {
                        m.entry((r.repo, r.path))
                            .or_default()
                            .push((r.name_line, r.signature));
                    }
                    Compiled::Sym(m)
                }
            });
        }
        let files: Vec<(&str, &crate::snapshot::FileEntry)> = self
            .st
            .snaps
            .iter()
            .flat_map(|s| s.files.iter().map(move |f| (s.repo(), f)))
            .collect();
        let hits: Vec<Vec<SearchHit>> = files
            .par_iter()
            .map(|(repo, f)| {
                if t0.elapsed() > SCAN_BUDGET {
                    partial.store(true, std::sync::atomic::Ordering::Relaxed);
                    return Vec::new();
                }
                // Lazily evaluated atom results for this file.
                let mut cache: Vec<Option<Vec<SearchHit>>> = vec![None; compiled.len()];
                let mut eval_atom = |i: usize| -> Vec<SearchHit> {
                    if let Some(v) = &cache[i] {
                        return v.clone();
                    }
                    let file_hit = || SearchHit {
                        repo: repo.to_string(),
                        path: f.path.clone(),
                        line: 1,
                        end_line: 1,
                        kind: "file".into(),
                        text: f.with_content(|c| {
                            c.lines().next().unwrap_or("").chars().take(200).collect()
                        }),
                    };
                    let v = match &compiled[i] {
                        Compiled::Content(c) => c
                            .search_file(repo, f)
                            .into_iter()
                            .map(|m| SearchHit {
                                repo: m.repo,
                                path: m.path,
                                line: m.line,
                                end_line: m.end_line,
                                kind: "content".into(),
                                text: m.text,
                            })
                            .collect(),
                        Compiled::Path(re) => {
                            if re.is_match(&f.path) {
                                vec![file_hit()]
                            } else {
                                vec![]
                            }
                        }
                        Compiled::Repo(re) => {
                            if re.is_match(repo) {
                                vec![file_hit()]
                            } else {
                                vec![]
                            }
                        }
                        Compiled::Lang(l) => {
                            if &f.language == l {
                                vec![file_hit()]
                            } else {
                                vec![]
                            }
                        }
                        Compiled::Sym(m) => m
                            .get(&(repo.to_string(), f.path.clone()))
                            .map(|v| {
                                v.iter()
                                    .map(|(line, sig)| SearchHit {
                                        repo: repo.to_string(),
                                        path: f.path.clone(),
                                        line: *line,
                                        end_line: *line,
                                        kind: "symbol".into(),
                                        text: sig.clone(),
                                    })
                                    .collect()
                            })
                            .unwrap_or_default(),
                    };
                    cache[i] = Some(v.clone());
                    v
                };
                let mut hits = Vec::new();
                if !crate::query::eval(&q.expr, &atoms, &mut eval_atom, &mut hits) {
                    return Vec::new();
                }
                // Content and symbol hits beat the whole-file hit.
                if hits.iter().any(|h| h.kind != "file") {
                    hits.retain(|h| h.kind != "file");
                }
                hits.sort_by(|a, b| (a.line, &a.kind).cmp(&(b.line, &b.kind)));
                hits.dedup_by(|a, b| a.line == b.line);
                if hits.is_empty() {
                    hits.push(SearchHit {
                        repo: repo.to_string(),
                        path: f.path.clone(),
                        line: 1,
                        end_line: 1,
                        kind: "file".into(),
                        text: f.with_content(|c| {
                            c.lines().next().unwrap_or("").chars().take(200).collect()
                        }),
                    });
                }
                hits
            })
            .collect();
        Ok((hits.into_iter().flatten().collect(), partial.into_inner()))
    }

    fn search_impl(&self, a: SearchArgs) -> Result<(SearchOut, String), ToolError> {
        let q = crate::query::parse(&a.query)?;
        let plan = format!(
            "{} case:{}",
            crate::query::render(&q.expr),
            format!("{:?}", q.case).to_lowercase()
        );
        let limit = limit_of(a.limit, 50)?;
        let ids: Vec<&str> = self.st.snaps.iter().map(|s| s.id()).collect();
        let key = format!("{}|{plan}", ids.join(","));
        let cached = self.st.cache.get(&key);
        let (hits, partial) = match cached {
            Some(h) => (h, false),
            None => {
                let (h, partial) = self.search_hits(&q)?;
                let h = Arc::new(h);
                // A partial result is not kept: the next call scans again.
                if !partial {
                    self.st.cache.put(key, h.clone());
                }
                (h, partial)
            }
        };
        let fp = cursor::fingerprint("search", &plan, &ids);
        let offset = offset_of(a.cursor.as_deref(), &fp)?;
        let files_matched = {
            let mut n = 0u64;
            let mut last: Option<(&str, &str)> = None;
            for h in hits.iter() {
                if last != Some((&h.repo, &h.path)) {
                    n += 1;
                    last = Some((&h.repo, &h.path));
                }
            }
            n
        };
        let mut text = format!("{} hits in {files_matched} files for {plan}\n", hits.len());
        let mut out = Vec::new();
        let mut json_bytes = 0;
        for h in hits.iter().skip(offset).take(limit) {
            let piece = format!("{}:{}: {}\n", h.path, h.line, h.text);
            let jl = h.text.len() + h.path.len() + 80;
            if !out.is_empty()
                && (text.len() + piece.len() > RESPONSE_BUDGET_BYTES
                    || json_bytes + jl > STRUCTURED_BUDGET_BYTES)
            {
                break;
            }
            json_bytes += jl;
            text.push_str(&piece);
            out.push(h.clone());
        }
        let end = offset + out.len();
        let next_cursor = (end < hits.len()).then(|| cursor::encode(&fp, &[end as u64]));
        let hint = hits.is_empty().then(|| {
            "no hits: drop a term, use case:no, or check field values (lang:python, file:REGEX)"
                .to_string()
        });
        if partial {
            text.push_str("partial: the 10 s scan budget ran out before every file was searched; narrow the query (file:, lang:, repo:)\n");
        }
        // `search` covers every loaded repo.
        let all: Vec<&Snapshot> = self.st.snaps.iter().collect();
        let not_indexed = NotIndexed::of(&all);
        if let (Some(n), 0) = (&not_indexed, offset) {
            text.push_str(&n.line());
        }
        Ok((
            SearchOut {
                partial,
                not_indexed,
                query_plan: plan,
                total_hits: hits.len() as u64,
                files_matched,
                hits: out,
                has_more: next_cursor.is_some(),
                next_cursor,
                hint,
            },
            text,
        ))
    }

    fn checkout_of(&self, repo: &str) -> Option<std::path::PathBuf> {
        (self.st.default_repo.as_deref() == Some(repo))
            .then(|| self.st.default_checkout.clone())
            .flatten()
    }

    fn repos(&self) -> ListReposOut {
        ListReposOut {
            repos: self
                .st
                .snaps
                .iter()
                .map(|s| RepoOut {
                    repo: s.repo().to_string(),
                    snapshot_id: s.id().to_string(),
                    commit: s.manifest.git.commit.clone(),
                    branch: s.manifest.git.branch.clone(),
                    files: s.files.len() as u64,
                    content_bytes: s.content_bytes(),
                })
                .collect(),
        }
    }

    pub fn health_report(&self) -> HealthOut {
        HealthOut {
            status: "ok".into(),
            server_version: env!("CARGO_PKG_VERSION").into(),
            uptime_seconds: self.st.started.elapsed().as_secs_f64(),
            snapshots: self
                .st
                .snaps
                .iter()
                .map(|s| SnapshotHealth {
                    repo: s.repo().to_string(),
                    snapshot_id: s.id().to_string(),
                    commit: s.manifest.git.commit.clone(),
                    schema_version: s.manifest.schema_version,
                    tables: s
                        .manifest
                        .files
                        .iter()
                        .map(|f| TableRows {
                            table: f.name.trim_end_matches(".parquet").to_string(),
                            rows: f.rows,
                        })
                        .collect(),
                    behind_head: None,
                    commits_behind: None,
                    signed: s.signature.is_some(),
                    verified_by: s.signature.clone().filter(|k| k != "unverified"),
                })
                .map(|mut h| {
                    if let (Some(dir), Some(commit)) = (self.checkout_of(&h.repo), h.commit.clone())
                    {
                        (h.behind_head, h.commits_behind) = behind(&dir, &commit);
                    }
                    h
                })
                .collect(),
        }
    }
}

/// Compare a snapshot commit with a checkout's HEAD through `git` (metadata only).
fn behind(dir: &std::path::Path, commit: &str) -> (Option<bool>, Option<u64>) {
    let git = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let Some(head) = git(&["rev-parse", "--verify", "-q", "HEAD"]) else {
        return (None, None);
    };
    if head == commit {
        return (Some(false), Some(0));
    }
    match git(&["rev-list", "--count", &format!("{commit}..HEAD")])
        .and_then(|n| n.parse::<u64>().ok())
    {
        Some(n) => (Some(n > 0), Some(n)),
        None => (Some(true), None),
    }
}

fn check_kind(kind: Option<&str>) -> Result<(), ToolError> {
    match kind {
        Some(k) if !code_index_schemas::SYMBOL_KINDS.contains(&k) => {
            Err(ToolError::invalid_argument(
                format!("unknown kind {k:?}"),
                format!(
                    "use one of: {}",
                    code_index_schemas::SYMBOL_KINDS.join(", ")
                ),
            ))
        }
        _ => Ok(()),
    }
}

fn empty_hint(req: &GrepRequest) -> String {
    let mut tips = Vec::new();
    if req.case_sensitive == Some(true) || req.pattern.chars().any(|c| c.is_uppercase()) {
        tips.push("try case_sensitive: false");
    }
    if req.whole_word {
        tips.push("drop whole_word");
    }
    if req.path.is_some() || !req.globs.is_empty() || req.lang.is_some() {
        tips.push("widen path/glob/lang");
    }
    if !req.fixed_string && req.pattern.chars().any(|c| "()[]{}.*+?|\\^$".contains(c)) {
        tips.push("if you meant the text literally, pass fixed_string: true");
    }
    if tips.is_empty() {
        tips.push("try a shorter or more general pattern, or search_files for file names");
    }
    format!("No matches; {}.", tips.join("; "))
}

/// Run `f` off the async runtime; a panic in it is an `INTERNAL` error for
/// this call only.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    match tokio::task::spawn_blocking(move || crate::guard::catch(f)).await {
        Ok(r) => r,
        Err(e) => Err(crate::guard::internal(&e.to_string())),
    }
}

/// Run a tool body off the async runtime and render its outcome.
pub(crate) async fn respond<T: Serialize + Send + 'static>(
    st: &Arc<State>,
    f: impl FnOnce() -> Result<(T, String), ToolError> + Send + 'static,
) -> Result<CallToolResult, ErrorData> {
    let _busy = Busy::new(st);
    match blocking(f).await {
        Ok((out, text)) => ok(&out, text),
        Err(e) => fail(e),
    }
}

#[tool_router]
impl Server {
    /// Regex search over file contents with ripgrep's exact semantics (same matches as `rg` with the same flags).
    /// Returns matches with 1-based line/end_line, the matched text and submatch spans; context lines are nested in their match.
    /// Examples: {"pattern": "def get_or_create", "glob": "*.py"};
    /// a function with its body: {"pattern": "def save\\(self[^)]*\\):\\n(\\s+.*\\n)+?\\s+return", "multiline": true};
    /// a docstring: {"pattern": "\"\"\"[^\"]*transaction[^\"]*\"\"\"", "multiline": true};
    /// literal text: {"pattern": "a.b(c)", "fixed_string": true}.
    /// To find where a function or class is defined, prefer search_symbols; use grep for text and usages.
    /// A match's text is clipped to about 400 bytes around it (clipped: true): read_file line..end_line shows all of it.
    /// Large result sets: use count_only (counts per file, paged), or page with next_cursor.
    #[tool(annotations(read_only_hint = true, open_world_hint = false), output_schema = crate::outschema::output_schema::<GrepOut>())]
    async fn grep(&self, Parameters(a): Parameters<GrepArgs>) -> Result<CallToolResult, ErrorData> {
        let this = self.clone();
        respond(&self.st, move || this.grep_impl(a)).await
    }

    /// Find files by path: a glob like "**/models/*.py" (or a regex with regex: true). Returns paths with language and size, no content.
    #[tool(annotations(read_only_hint = true, open_world_hint = false), output_schema = crate::outschema::output_schema::<SearchFilesOut>())]
    async fn search_files(
        &self,
        Parameters(a): Parameters<SearchFilesArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let this = self.clone();
        respond(&self.st, move || this.search_files_impl(a)).await
    }

    /// Read lines of a file from the snapshot (never from disk): {"path": "src/app.py", "start_line": 120, "end_line": 180}.
    /// Output is capped (about 400 lines / 24 KB); truncated: true means call again from end_line + 1.
    #[tool(annotations(read_only_hint = true, open_world_hint = false), output_schema = crate::outschema::output_schema::<ReadFileOut>())]
    async fn read_file(
        &self,
        Parameters(a): Parameters<ReadFileArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let this = self.clone();
        respond(&self.st, move || this.read_file_impl(a)).await
    }

    /// Find definitions (functions, classes, methods, structs, ...) by name: exact, prefix or substring, or a regex with regex: true.
    /// Only definitions, never plain text matches: {"query": "get_or_create"}, {"query": "^Test.*Case$", "regex": true, "kind": "class"}.
    #[tool(annotations(read_only_hint = true, open_world_hint = false), output_schema = crate::outschema::output_schema::<SymbolsOut>())]
    async fn search_symbols(
        &self,
        Parameters(a): Parameters<SearchSymbolsArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let this = self.clone();
        respond(&self.st, move || this.search_symbols_impl(a)).await
    }

    /// Where is X defined? {"symbol": "QuerySet.get_or_create"} or {"symbol": "save", "path": "django/db/models"}.
    #[tool(annotations(read_only_hint = true, open_world_hint = false), output_schema = crate::outschema::output_schema::<SymbolsOut>())]
    async fn find_definitions(
        &self,
        Parameters(a): Parameters<SymbolArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let this = self.clone();
        respond(&self.st, move || this.find_definitions_impl(a)).await
    }

    /// Where is X used? Usages grouped by file with the enclosing symbol: parsed references ("reference", with their role: call, type, field, import)
    /// plus whole-word text matches the parser did not classify ("text": comments, strings, templates). {"symbol": "get_or_create"}.
    #[tool(annotations(read_only_hint = true, open_world_hint = false), output_schema = crate::outschema::output_schema::<ReferencesOut>())]
    async fn find_references(
        &self,
        Parameters(a): Parameters<SymbolArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let this = self.clone();
        respond(&self.st, move || this.find_references_impl(a)).await
    }

    /// One query string in a Zoekt-like language: words and "quoted strings" match content literally; regex:RE, file:PATH_RE,
    /// lang:python, sym:NAME (definitions), repo:NAME, case:yes|no|auto, -negation, `or`, parentheses.
    /// Examples: "lang:python sym:get_or_create -file:tests", "(regex:def\\s+save or \"def delete\") file:models".
    /// An unknown field (e.g. filee:) is an UNKNOWN_FIELD error listing the valid ones.
    #[tool(annotations(read_only_hint = true, open_world_hint = false), output_schema = crate::outschema::output_schema::<SearchOut>())]
    async fn search(
        &self,
        Parameters(a): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let this = self.clone();
        respond(&self.st, move || this.search_impl(a)).await
    }

    /// The loaded repositories with their snapshot id, commit and size.
    #[tool(annotations(read_only_hint = true, open_world_hint = false), output_schema = crate::outschema::output_schema::<ListReposOut>())]
    async fn list_repos(
        &self,
        Parameters(_a): Parameters<NoArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let out = self.repos();
        let text = out
            .repos
            .iter()
            .map(|r| {
                format!(
                    "{} {} commit {} ({} files)",
                    r.repo,
                    r.snapshot_id,
                    r.commit.as_deref().unwrap_or("-"),
                    r.files
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        ok(&out, text)
    }

    /// Server status, version, uptime, and each snapshot's repo, commit, schema version and row counts.
    #[tool(annotations(read_only_hint = true, open_world_hint = false), output_schema = crate::outschema::output_schema::<HealthOut>())]
    async fn health(
        &self,
        Parameters(_a): Parameters<NoArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let out = self.health_report();
        let text = format!(
            "{} v{} up {:.0}s, {} snapshot(s)",
            out.status,
            out.server_version,
            out.uptime_seconds,
            out.snapshots.len()
        );
        ok(&out, text)
    }
}

pub const HEALTH_URI: &str = "codeindex://health";
pub const RELEVANT_TEMPLATE: &str = "codeindex://relevant{?path,query}";
const RELEVANT_PREFIX: &str = "codeindex://relevant";

/// `a=b&c=d` with percent-decoding and `+` as space.
pub fn parse_query_string(q: &str) -> Vec<(String, String)> {
    fn dec(s: &str) -> String {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < b.len() => {
                    let hex = |c: u8| (c as char).to_digit(16);
                    match (hex(b[i + 1]), hex(b[i + 2])) {
                        (Some(h), Some(l)) => {
                            out.push((h * 16 + l) as u8);
                            i += 2;
                        }
                        _ => out.push(b'%'),
                    }
                }
                c => out.push(c),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (dec(k), dec(v)),
            None => (dec(p), String::new()),
        })
        .collect()
}

/// A repo-relative `path` argument: not absolute, not leaving the repo.
pub(crate) fn check_path(p: &str) -> Result<(), ToolError> {
    let bad = |why: &str| {
        ToolError::invalid_argument(
            format!("path {p:?} {why}"),
            "paths are relative to the repository root, e.g. \"src/app.py\" or \"src/\" (see search_files)",
        )
    };
    if p.starts_with('/')
        || p.starts_with('\\')
        || p.get(1..3) == Some(":\\")
        || p.get(1..3) == Some(":/")
    {
        return Err(bad("is absolute"));
    }
    let mut depth = 0i32;
    for part in p.split(['/', '\\']) {
        match part {
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return Err(bad("leaves the repository"));
                }
            }
            "" | "." => {}
            _ => depth += 1,
        }
    }
    Ok(())
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    /// Every call is checked first ([`Server::check_call`]), and whatever
    /// goes wrong after is a coded tool result: a panic is `INTERNAL` for
    /// this call only, and a deserialization error rmcp reports is an
    /// `INVALID_ARGUMENT`.
    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        use futures::FutureExt;
        if let Err(e) = self.check_call(&mut request) {
            return fail(e).map(Into::into);
        }
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let r = match std::panic::AssertUnwindSafe(self.tool_router.call(tcc))
            .catch_unwind()
            .await
        {
            Ok(r) => r,
            Err(p) => {
                return fail(crate::guard::internal(&crate::guard::panic_message(&*p)))
                    .map(Into::into)
            }
        };
        match r {
            Ok(CallToolResponse::Complete(res))
                if res.is_error == Some(true) && res.structured_content.is_none() =>
            {
                // rmcp's own argument error (text only): give it our code.
                let text = res
                    .content
                    .first()
                    .and_then(|c| c.as_text())
                    .map(|t| t.text.clone())
                    .unwrap_or_default();
                fail(ToolError::invalid_argument(
                    text.trim_start_matches("failed to deserialize parameters: ")
                        .to_string(),
                    "check the argument types against the tool's input schema",
                ))
                .map(Into::into)
            }
            other => other,
        }
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("code-index-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Read-only code search over indexed snapshots. search_code = find code by meaning or name when you don't know where it is \
                 (also \"what calls X\", \"from A to B\"); related_files = what else to read for a file; call_graph = callers/callees; \
                 search_symbols / find_definitions = where is X defined; \
                 find_references = where is X used; grep = ripgrep-exact regex search; search_files = find paths; \
                 read_file = read lines; list_repos / health = what is loaded. Paths are repo-relative.",
            )
    }

    async fn list_resources(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            HEALTH_URI, "health",
        )
        .with_description("Server and snapshot health (JSON)")
        .with_mime_type("application/json")]))
    }

    async fn list_resource_templates(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(RELEVANT_TEMPLATE, "relevant")
                .with_description(
                    "What to read next, as condensed markdown: files related to `path` (imports, callers, tests) and the best chunks for `query`.",
                )
                .with_mime_type("text/markdown"),
        ]))
    }

    async fn read_resource(
        &self,
        req: ReadResourceRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if let Some(rest) = req.uri.strip_prefix(RELEVANT_PREFIX) {
            let params = parse_query_string(rest.strip_prefix('?').unwrap_or(rest));
            let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
            let (path, query, repo) = (get("path"), get("query"), get("repo"));
            let as_error = |e: ToolError| {
                ErrorData::invalid_params(
                    format!("{}: {} (hint: {})", e.code, e.message, e.hint),
                    None,
                )
            };
            for (k, v) in [("path", &path), ("query", &query), ("repo", &repo)] {
                if v.as_ref()
                    .is_some_and(|v| v.len() > crate::args::MAX_STRING_LEN)
                {
                    return Err(as_error(ToolError::invalid_argument(
                        format!("`{k}` is longer than {} bytes", crate::args::MAX_STRING_LEN),
                        format!("shorten `{k}`"),
                    )));
                }
            }
            if let Some(p) = &path {
                check_path(p).map_err(as_error)?;
            }
            let this = self.clone();
            let _busy = Busy::new(&self.st);
            let md = blocking(move || {
                this.relevant_markdown(path.as_deref(), query.as_deref(), repo.as_deref())
            })
            .await
            .map_err(as_error)?;
            return Ok(ReadResourceResult::new(vec![
                ResourceContents::text(md, req.uri.clone()).with_mime_type("text/markdown")
            ])
            .into());
        }
        if req.uri == HEALTH_URI {
            let body = serde_json::to_string_pretty(&self.health_report())
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            return Ok(ReadResourceResult::new(vec![ResourceContents::text(
                body,
                req.uri.clone(),
            )
            .with_mime_type("application/json")])
            .into());
        }
        Err(ErrorData::resource_not_found(
            format!(
                "{}: unknown resource {} (hint: read {HEALTH_URI} or {RELEVANT_TEMPLATE})",
                codes::NOT_FOUND,
                req.uri.chars().take(200).collect::<String>()
            ),
            None,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use code_index_schemas::fuzz;
    use proptest::prelude::*;

    /// Where `p` lands from a repo root, or None when it climbs above it.
    fn depth_after(p: &str) -> Option<usize> {
        let mut d: Vec<&str> = Vec::new();
        for part in p.split(['/', '\\']) {
            match part {
                "" | "." => {}
                ".." => {
                    d.pop()?;
                }
                x => d.push(x),
            }
        }
        Some(d.len())
    }

    #[test]
    fn fuzz_path_arguments() {
        for p in [
            "/etc",
            "..",
            "a/../..",
            "C:\\x",
            "\\\\server\\share",
            "a/./../b",
        ] {
            let _ = check_path(p);
        }
        assert!(check_path("a/../..").is_err() && check_path("a/./../b").is_ok());
        let part = prop_oneof![
            Just("..".to_string()),
            Just(".".to_string()),
            Just("".to_string()),
            "[a-z]{1,3}",
            any::<String>(),
        ];
        let path = (
            prop::collection::vec(part, 0..8),
            prop::sample::select(vec!["/", "\\"]),
            any::<bool>(),
        )
            .prop_map(|(v, sep, lead)| format!("{}{}", if lead { sep } else { "" }, v.join(sep)));
        fuzz::run("path_arguments", path, |p| {
            let absolute = p.starts_with('/') || p.starts_with('\\');
            match check_path(&p) {
                Ok(()) => {
                    prop_assert!(!absolute);
                    prop_assert!(depth_after(&p).is_some(), "{p:?} leaves the repo");
                }
                Err(e) => {
                    prop_assert_eq!(e.code, codes::INVALID_ARGUMENT);
                    prop_assert!(
                        absolute
                            || depth_after(&p).is_none()
                            || p.get(1..3).is_some_and(|x| x.starts_with(':'))
                    );
                }
            }
            Ok(())
        });
    }

    /// Deserialize `v` as tool `name`'s argument struct.
    fn deserializes(name: &str, v: Value) -> Result<(), String> {
        fn de<T: serde::de::DeserializeOwned>(v: Value) -> Result<(), String> {
            serde_json::from_value::<T>(v)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        use crate::semtools::{CallGraphArgs, RelatedFilesArgs, SearchCodeArgs};
        match name {
            "grep" => de::<GrepArgs>(v),
            "search_files" => de::<SearchFilesArgs>(v),
            "read_file" => de::<ReadFileArgs>(v),
            "search_symbols" => de::<SearchSymbolsArgs>(v),
            "find_definitions" | "find_references" => de::<SymbolArgs>(v),
            "search" => de::<SearchArgs>(v),
            "list_repos" | "health" => de::<NoArgs>(v),
            "search_code" => de::<SearchCodeArgs>(v),
            "related_files" => de::<RelatedFilesArgs>(v),
            "call_graph" => de::<CallGraphArgs>(v),
            other => panic!("no argument type for tool {other}: add it here"),
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-2000i64..2000).prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            (-5i64..50).prop_map(|x| Value::from(x as f64)),
            ".{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                prop::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    #[test]
    fn fuzz_tool_arguments() {
        let mut router = Server::tool_router() + Server::semantic_router();
        let mut tools: Vec<(String, Value)> = Vec::new();
        for (name, route) in router.map.iter_mut() {
            let mut v = Value::Object((*route.attr.input_schema).clone());
            crate::args::clean_schema(&mut v);
            tools.push((name.to_string(), v));
        }
        tools.sort_by(|a, b| a.0.cmp(&b.0));
        let names: Vec<String> = tools
            .iter()
            .flat_map(|(_, s)| {
                s.get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().collect::<Vec<_>>())
                    .unwrap_or_default()
            })
            .chain(["bogus".to_string()])
            .collect();
        let call = (
            0..tools.len(),
            prop::collection::vec((prop::sample::select(names), json_value()), 0..6),
        );
        // What the checker accepts, the tool's argument type deserializes.
        fuzz::run("tool_arguments", call, |(t, kv)| {
            let (name, schema) = &tools[t];
            let mut args: JsonObject = kv.into_iter().collect();
            if let Ok(()) = crate::args::check(name, schema, &mut args) {
                let r = deserializes(name, Value::Object(args.clone()));
                prop_assert!(r.is_ok(), "{name} {args:?} passed the check but: {r:?}");
            }
            Ok(())
        });
    }
}
