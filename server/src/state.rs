//! The server's state: the loaded snapshots, the store, the retrieval
//! engine and the caches, with the checks every tool shares (which repos a
//! call selects, a known language, repo-relative paths) and the release of
//! memory when the server is idle.
//!
//! **Invariant:** everything here is read-only after load; caches hold
//! results keyed by snapshot ids, never source from disk.

use std::sync::Arc;
use std::time::Instant;

use crate::error::{codes, ToolError};
use crate::grep;
use crate::query::SearchHit;
use crate::snapshot::Snapshot;
use crate::store::Store;

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
    pub grep_cache: crate::recent::Recent<Arc<grep::GrepAll>>,
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
    pub engine: std::sync::OnceLock<crate::retrieval::Engine>,
    /// Recent search_code rankings by cursor fingerprint.
    pub code_cache: crate::recent::Recent<Arc<crate::retrieval::Ranked>>,
    /// Synonyms for empty-result suggestions.
    pub synonyms: std::collections::HashMap<String, Vec<String>>,
    /// File graphs (imports and resolved calls) by snapshot index, built on first use.
    pub file_graphs:
        std::sync::Mutex<std::collections::HashMap<usize, Arc<crate::retrieval::FileGraph>>>,
    /// The languages of the loaded files, sorted (for `lang` arguments).
    pub langs: Vec<String>,
    /// The default repo's paths that differ in its checkout from what the
    /// server answers, with when they were read (see [`State::stale_paths`]).
    stale: std::sync::Mutex<Option<(Instant, Arc<std::collections::BTreeSet<String>>)>>,
}

/// How long a reading of the checkout's changed paths is reused.
const STALE_TTL: std::time::Duration = std::time::Duration::from_secs(3);

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
            synonyms: crate::retrieval::parse_synonyms(crate::retrieval::DEFAULT_SYNONYMS)
                .unwrap_or_default(),
            file_graphs: std::sync::Mutex::new(std::collections::HashMap::new()),
            stale: std::sync::Mutex::new(None),
        }
    }

    /// The `search_code` engine, loaded on first use (the server starts it
    /// in the background). With every snapshot's keyword and heads indexes
    /// on disk the load is light (the Linux kernel: 0.3 s) and runs right
    /// here; when one must be built in memory (snapshots before feature 6,
    /// heads before feature 10) the build runs
    /// in a pool of its own at low priority: in rayon's global pool, grep's
    /// scans would queue behind it (on the kernel it takes ≈ 30 s).
    pub fn engine(&self) -> &crate::retrieval::Engine {
        self.engine.get_or_init(|| {
            let light = crate::retrieval::keywords_from_snapshots()
                && self.snaps.iter().all(|s| {
                    let has = |name: &str| s.manifest.files.iter().any(|f| f.name == name);
                    has(code_index_schemas::keyword::KEYWORD_FILE)
                        && has(code_index_schemas::heads::HEADS_FILE)
                });
            if light {
                return crate::retrieval::Engine::build(&self.snaps);
            }
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
                Ok(pool) => pool.install(|| crate::retrieval::Engine::build(&self.snaps)),
                Err(_) => crate::retrieval::Engine::build(&self.snaps),
            }
        })
    }

    /// The overlay in force for the snapshot `snaps[si]` (it follows its base).
    pub fn overlay_for(&self, si: usize) -> Option<&Snapshot> {
        let base = self.snaps.get(si)?;
        self.snaps
            .get(si + 1)
            .filter(|o| o.overlay_of() == Some(base.id()))
    }

    /// Whether `path` of `repo` (`None`: of any repo) is answered from an
    /// overlay (the working tree's text at the last `invalidate-file`), not
    /// from the snapshot.
    pub fn overlaid(&self, repo: Option<&str>, path: &str) -> bool {
        self.snaps.iter().any(|s| {
            repo.is_none_or(|r| s.repo() == r)
                && s.manifest.overlay.as_ref().is_some_and(|o| {
                    o.replaces
                        .binary_search_by(|p| p.as_str().cmp(path))
                        .is_ok()
                })
        })
    }

    /// The default repo's paths whose text in its checkout (the working
    /// directory's) may differ from what the server answers: changed since
    /// the snapshot's commit (committed or not, untracked included) and not
    /// stood in for by an overlay. Read with `git` (metadata only, never the
    /// files), at most every few seconds; empty when there is no checkout or
    /// git cannot tell.
    pub fn stale_paths(&self) -> Arc<std::collections::BTreeSet<String>> {
        let mut cached = self.stale.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, paths)) = cached.as_ref() {
            if at.elapsed() < STALE_TTL {
                return paths.clone();
            }
        }
        let paths = Arc::new(self.read_stale_paths().unwrap_or_default());
        *cached = Some((Instant::now(), paths.clone()));
        paths
    }

    fn read_stale_paths(&self) -> Option<std::collections::BTreeSet<String>> {
        let (repo, dir) = (
            self.default_repo.as_deref()?,
            self.default_checkout.as_deref()?,
        );
        let base = self
            .snaps
            .iter()
            .find(|s| s.repo() == repo && s.overlay_of().is_none())?;
        let commit = base.manifest.git.commit.as_deref()?;
        let git = |args: &[&str]| -> Option<Vec<u8>> {
            let out = std::process::Command::new("git")
                .env("GIT_OPTIONAL_LOCKS", "0")
                .arg("-C")
                .arg(dir)
                .args(args)
                .stderr(std::process::Stdio::null())
                .output()
                .ok()?;
            out.status.success().then_some(out.stdout)
        };
        // Paths from git are relative to the top of the work tree; the
        // snapshot's to the directory that was indexed.
        let prefix = String::from_utf8(git(&["rev-parse", "--show-prefix"])?).ok()?;
        let prefix = prefix.trim_end_matches('\n');
        let mut changed: Vec<String> = Vec::new();
        let status = git(&["status", "--porcelain=v1", "-z", "--untracked-files=all"])?;
        let mut entries = status.split(|&b| b == 0).filter(|e| !e.is_empty());
        while let Some(e) = entries.next() {
            if e.len() < 4 {
                continue;
            }
            changed.push(String::from_utf8_lossy(&e[3..]).into_owned());
            if matches!(e[0], b'R' | b'C') || matches!(e[1], b'R' | b'C') {
                // A rename's or copy's source follows as its own entry.
                if let Some(src) = entries.next() {
                    changed.push(String::from_utf8_lossy(src).into_owned());
                }
            }
        }
        let head = git(&["rev-parse", "--verify", "-q", "HEAD"])
            .map(|h| String::from_utf8_lossy(&h).trim().to_string());
        if head.as_deref() != Some(commit) {
            // The snapshot's commit may be unknown here (a download of a
            // commit not fetched): then only the uncommitted changes count.
            let diff = git(&["diff", "--name-only", "-z", "--no-renames", commit, "HEAD"])
                .unwrap_or_default();
            changed.extend(
                diff.split(|&b| b == 0)
                    .filter(|e| !e.is_empty())
                    .map(|e| String::from_utf8_lossy(e).into_owned()),
            );
        }
        Some(
            changed
                .into_iter()
                .filter_map(|p| p.strip_prefix(prefix).map(str::to_string))
                .filter(|p| !self.overlaid(Some(repo), p))
                .collect(),
        )
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

    /// A `path` scope (already normalized) must name a file or a directory
    /// of the repos the call reads: an empty answer for a path the index
    /// does not hold would read as "nothing here". An unknown `repo` is left
    /// to the tool, which says so.
    pub fn check_path_exists(&self, p: &str, repo: Option<&str>) -> Result<(), ToolError> {
        let p = p.trim_matches('/');
        if p.is_empty() {
            return Ok(());
        }
        let Ok(snaps) = self.select(repo) else {
            return Ok(());
        };
        let dir = format!("{p}/");
        let holds = |s: &Snapshot| {
            let i = s.files.partition_point(|f| f.path.as_str() < p);
            let j = s.files.partition_point(|f| f.path.as_str() < dir.as_str());
            s.files.get(i).is_some_and(|f| f.path == p)
                || s.files.get(j).is_some_and(|f| f.path.starts_with(&dir))
        };
        if snaps.iter().any(|s| holds(s)) {
            return Ok(());
        }
        // The nearest directory the index holds, and a case-insensitive twin.
        let lower = p.to_lowercase();
        let twin = snaps.iter().find_map(|s| {
            s.files.iter().find_map(|f| {
                let fl = f.path.to_lowercase();
                (fl == lower || fl.starts_with(&format!("{lower}/"))).then(|| {
                    let n = p.len().min(f.path.len());
                    f.path.get(..n).unwrap_or(&f.path).to_string()
                })
            })
        });
        let mut near = p;
        let parent = loop {
            match near.rsplit_once('/') {
                Some((head, _)) => {
                    near = head;
                    let d = format!("{near}/");
                    if snaps.iter().any(|s| {
                        let i = s.files.partition_point(|f| f.path.as_str() < d.as_str());
                        s.files.get(i).is_some_and(|f| f.path.starts_with(&d))
                    }) {
                        break Some(near);
                    }
                }
                None => break None,
            }
        };
        let hint = match (twin, parent) {
            (Some(t), _) => format!("paths are case-sensitive: use {t:?}"),
            (None, Some(d)) => format!(
                "the nearest indexed directory is {d:?}; list its files with search_files {{\"pattern\": \"{d}/**\"}}, or drop `path`"
            ),
            (None, None) => "paths are relative to the repository root, e.g. \"src/\"; find files with search_files, or drop `path`".to_string(),
        };
        Err(ToolError::new(
            codes::NOT_FOUND,
            format!("path {p:?} matches no indexed file or directory"),
            hint,
        ))
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

    /// What the retrieval engine reads (builds the engine on first use).
    pub fn ctx(&self) -> crate::retrieval::Ctx<'_> {
        crate::retrieval::Ctx {
            snaps: &self.snaps,
            store: &self.store,
            eng: self.engine(),
            synonyms: &self.synonyms,
            graphs: &self.file_graphs,
        }
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
/// mapped indexes' resident pages, the heap's free pages and DuckDB's
/// allocator's free pages.
pub fn release_free_memory(st: &State) {
    st.store.release_buffers();
    // The mapped indexes' pages: the OS keeps them in its page cache.
    for s in &st.snaps {
        if let Some(g) = &s.grams {
            g.release_pages();
        }
    }
    if let Some(e) = st.engine.get() {
        e.bm25.release_pages();
        e.heads.release_pages();
    }
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
