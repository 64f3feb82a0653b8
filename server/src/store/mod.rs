//! The snapshot tables in DuckDB (in memory, read-only once loaded):
//! symbols, references, edges, chunks and file metadata, each with a `repo`
//! column. After loading, external access and configuration changes are
//! disabled, and user SQL is limited to one SELECT with row and time limits.
//!
//! **Invariant:** every SQL statement the server runs is here. Each query is
//! a method with typed parameters returning typed rows, decoded once here:
//! [`symbols`] (definitions and references by name), [`edges`] (relations
//! for routing and the file graph), [`related`] (`related_files`),
//! [`calls`] (`call_graph`), [`sql`] (the user-facing read-only command).

mod calls;
mod edges;
mod related;
mod sql;
mod symbols;

pub use calls::{CallRootRow, CallRow};
pub use edges::{FileLink, LocatedRow};
pub use related::{PathCount, PathCountName, PathName};
pub use sql::SqlResult;
pub use symbols::{DefinitionRow, NameMatch, RefRow, SymbolFilter, SymbolRow};

use std::sync::Mutex;

use duckdb::types::Value;
use duckdb::Connection;

use crate::error::ToolError;
use code_index_schemas::diag::Code;

use crate::snapshot::{LoadError, Snapshot};

/// DuckDB's buffer memory (`CODE_INDEX_DUCKDB_MEMORY`, default 32MB). What
/// it holds stays resident for the server's life, but less is too little:
/// with 16 MB, `find_definitions Reader` on go-stdlib fails (a scan pins
/// 256 KiB blocks per column and thread), and one thread is 2–10× slower.
fn duckdb_memory() -> String {
    std::env::var("CODE_INDEX_DUCKDB_MEMORY")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "32MB".to_string())
}

/// DuckDB's buffer memory while the tables are views of the Parquet files.
const DIRECT_MEMORY: &str = "512MB";

pub struct Store {
    conn: Mutex<Connection>,
    /// `None` while the tables load in the background ([`Store::deferred`]),
    /// then whether they did (queries wait for it).
    state: (Mutex<Option<Result<(), String>>>, std::sync::Condvar),
    /// Settings locked (the `sql` command runs user SQL); the server's own
    /// connection stays unlocked so that it can drop its buffers when idle.
    locked: bool,
    /// DuckDB's memory limit as configured (restored after a release).
    memory_limit: String,
    /// The tables are the table cache's (not yet: views of the Parquet files).
    cached: std::sync::atomic::AtomicBool,
}

/// The cached tables: (table, file, columns, path column, symbol-id columns).
type TableSpec = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
);
const TABLES: [TableSpec; 6] = [
    (
        "symbols",
        "symbols.parquet",
        "*",
        "path",
        &["symbol_id", "parent_id"],
    ),
    ("refs", "references.parquet", "*", "path", &[]),
    (
        "edges",
        "edges.parquet",
        "*",
        "src_path",
        &["src_symbol_id", "dst_symbol_id"],
    ),
    ("chunks", "chunks.parquet", "*", "path", &[]),
    ("files", "files.parquet", "* EXCLUDE (content)", "path", &[]),
    ("patterns", "patterns.parquet", "*", "path", &[]),
];

fn load_error(e: duckdb::Error) -> LoadError {
    LoadError::new(
        Code::SnapshotInvalid,
        format!("cannot load snapshot tables into DuckDB: {e}"),
        "check the snapshot with `code-indexer status <snapshot>`; rebuild it if damaged",
    )
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The repos as an SQL list of literals (for `repo IN (...)`).
fn repos_in(names: &[String]) -> String {
    names.iter().map(|r| quote(r)).collect::<Vec<_>>().join(",")
}

/// A text column (NULL as "", other types as their debug form).
fn val_str(v: &Value) -> String {
    match v {
        Value::Text(s) => s.clone(),
        Value::Null => String::new(),
        other => format!("{other:?}"),
    }
}

/// An integer column (NULL and other types as 0).
fn val_i64(v: &Value) -> i64 {
    match v {
        Value::TinyInt(x) => *x as i64,
        Value::SmallInt(x) => *x as i64,
        Value::Int(x) => *x as i64,
        Value::BigInt(x) => *x,
        Value::UBigInt(x) => *x as i64,
        Value::UInt(x) => *x as i64,
        Value::HugeInt(x) => *x as i64,
        _ => 0,
    }
}

/// An integer column that may be NULL.
fn val_opt_i64(v: &Value) -> Option<i64> {
    if *v == Value::Null {
        None
    } else {
        Some(val_i64(v))
    }
}

fn internal(e: impl std::fmt::Display) -> ToolError {
    let msg = e.to_string();
    let hint = if msg.contains("Out of Memory") {
        format!(
            "the table store's memory ({}) was too small for this query: narrow it (repo, path, kind), \
             or restart the server with a larger CODE_INDEX_DUCKDB_MEMORY (e.g. 4× that)",
            duckdb_memory()
        )
    } else {
        "retry; if it persists, report it with the arguments".to_string()
    };
    // Out of memory: only the first line; DuckDB appends generic tuning advice
    // that does not apply here. Other errors keep their detail lines.
    let msg = if msg.contains("Out of Memory") {
        msg.lines().next().unwrap_or("").to_string()
    } else {
        msg
    };
    ToolError::new(Code::Internal, format!("query failed: {msg}"), hint)
}

/// Table caches kept besides the one in use (each snapshot set gets its own;
/// a new snapshot id makes a new one).
const TABLE_CACHES_KEPT: usize = 16;

/// Delete all but the most recently used table caches besides `current`
/// (a server still using a deleted one keeps its open file; the next start
/// rebuilds it in seconds). `Store::load` marks the one it uses first.
fn prune_table_cache(dir: &std::path::Path, current: &std::path::Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut caches: Vec<(std::time::SystemTime, std::path::PathBuf)> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "duckdb") && p != current)
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .collect();
    caches.sort_by_key(|c| std::cmp::Reverse(c.0));
    for (_, p) in caches.into_iter().skip(TABLE_CACHES_KEPT) {
        let _ = std::fs::remove_file(&p);
        let _ = std::fs::remove_file(p.with_extension("duckdb.wal"));
        let _ =
            std::fs::remove_file(p.with_extension(code_index_schemas::dirs::TABLE_CACHE_REPOS_EXT));
    }
    // Builds a stopped server left (`.<key>.<pid>.tmp`, and its `.wal`).
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(pid) = stale_build_pid(&name) {
            if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// The process id in the name of a table-cache build's temp file
/// (`.<key>.<pid>.tmp` or `.<key>.<pid>.tmp.wal`).
fn stale_build_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let rest = rest
        .strip_suffix(".tmp")
        .or_else(|| rest.strip_suffix(".tmp.wal"))?;
    let (_, pid) = rest.rsplit_once('.')?;
    pid.parse().ok()
}

impl Store {
    /// Drops DuckDB's cached table blocks (they are re-read from the table
    /// cache file on the next query). The server calls it when idle: the
    /// blocks held ≈ 20–27 MB on go-stdlib, and a first symbol query after
    /// it takes ≈ 1–10 ms longer. Returns whether it did.
    pub fn release_buffers(&self) -> bool {
        if self.locked || !matches!(self.loaded(), Some(Ok(()))) {
            return false;
        }
        let Ok(conn) = self.conn() else {
            return false;
        };
        // A failed first SET keeps the old limit (DuckDB evicts what it can).
        let dropped = conn.execute_batch("SET memory_limit = '1MB';").is_ok();
        let restore = format!("SET memory_limit = '{}';", self.memory_limit);
        for attempt in 0..3 {
            match conn.execute_batch(&restore) {
                Ok(()) => return dropped,
                Err(e) if attempt == 2 => {
                    tracing::warn!(
                        "cannot restore DuckDB's memory limit {}: {e}",
                        self.memory_limit
                    )
                }
                Err(_) => {}
            }
        }
        false
    }

    /// The connection, once the tables are loaded (waiting for a deferred load).
    fn conn(&self) -> Result<std::sync::MutexGuard<'_, Connection>, ToolError> {
        let (lock, cv) = &self.state;
        let mut st = lock.lock().unwrap_or_else(|p| p.into_inner());
        while st.is_none() {
            st = cv.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        if let Some(Err(e)) = &*st {
            return Err(ToolError::new(
                Code::SnapshotInvalid,
                format!("the snapshot tables could not be loaded: {e}"),
                "check the snapshot with `code-indexer status <snapshot>`, fix CODE_INDEX_CACHE, and restart the server",
            ));
        }
        drop(st);
        Ok(self.conn.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Load every snapshot's tables (not file contents: the scan has those)
    /// into a DuckDB file in `cache_dir` named by the snapshot ids (built
    /// once, then reused: snapshots are immutable), opened read-only with a
    /// memory limit, so resident memory stays small and user SQL cannot write.
    pub fn load(snaps: &[Snapshot], cache_dir: &std::path::Path) -> Result<Store, LoadError> {
        Self::open(snaps, cache_dir, true)
    }

    /// As [`Store::load`], for the server's tools, which run only the
    /// server's own SQL: settings stay unlocked so that
    /// [`Store::release_buffers`] can work (external access is off all the same).
    pub fn load_for_tools(
        snaps: &[Snapshot],
        cache_dir: &std::path::Path,
    ) -> Result<Store, LoadError> {
        Self::open(snaps, cache_dir, false)
    }

    fn open(
        snaps: &[Snapshot],
        cache_dir: &std::path::Path,
        lock: bool,
    ) -> Result<Store, LoadError> {
        if snaps.iter().any(|s| s.overlay_of().is_some()) {
            return Self::open_layered(snaps, cache_dir, lock);
        }
        let db = Self::cache_db(snaps, cache_dir)?;
        let cfg = duckdb::Config::default()
            .access_mode(duckdb::AccessMode::ReadOnly)
            .and_then(|c| c.max_memory(&duckdb_memory()))
            .and_then(|c| c.threads(2))
            .map_err(|e| {
                LoadError::new(
                    Code::ServerConfig,
                    format!("invalid DuckDB settings: {e}"),
                    format!(
                        "CODE_INDEX_DUCKDB_MEMORY must be a size such as 32MB or 1GB (it is {:?})",
                        duckdb_memory()
                    ),
                )
            })?;
        let conn = Connection::open_with_flags(&db, cfg).map_err(load_error)?;
        Self::configure(conn, lock).map_err(load_error)
    }

    /// Snapshots with overlays: the bases' table cache (the one a start on
    /// them builds, so usually there already) attached read-only, the
    /// overlays' rows in memory, and each table a view of the two with the
    /// overlaid files' base rows left out. A new overlay costs its own rows,
    /// not a new cache of every table.
    fn open_layered(
        snaps: &[Snapshot],
        cache_dir: &std::path::Path,
        lock: bool,
    ) -> Result<Store, LoadError> {
        let bases: Vec<&Snapshot> = snaps.iter().filter(|s| s.overlay_of().is_none()).collect();
        let overlays: Vec<&Snapshot> = snaps.iter().filter(|s| s.overlay_of().is_some()).collect();
        let db = Self::cache_db_of(&bases, cache_dir)?;
        let conn = Connection::open_in_memory().map_err(load_error)?;
        conn.execute_batch(&format!(
            "SET preserve_insertion_order = true; SET threads = 2; SET memory_limit = {}; ATTACH {} AS base (READ_ONLY);",
            quote(&duckdb_memory()),
            quote(&db.to_string_lossy())
        ))
        .map_err(load_error)?;
        Self::create_tables(&conn, &overlays, snaps, "ov_", "TABLE").map_err(load_error)?;
        for (table, path_col) in TABLES.iter().map(|t| (t.0, t.3)) {
            // The base rows of the files an overlay stands in for.
            let hidden: Vec<String> = bases
                .iter()
                .filter_map(|s| {
                    let paths: Vec<String> = s
                        .files
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| !s.visible(*i as u32))
                        .map(|(_, f)| quote(&f.path))
                        .collect();
                    (!paths.is_empty()).then(|| {
                        format!(
                            "(repo = {} AND {path_col} IN ({}))",
                            quote(s.repo()),
                            paths.join(",")
                        )
                    })
                })
                .collect();
            let filter = if hidden.is_empty() {
                String::new()
            } else {
                format!(" WHERE NOT ({})", hidden.join(" OR "))
            };
            conn.execute_batch(&format!(
                "CREATE VIEW {table} AS SELECT * FROM base.{table}{filter} UNION ALL BY NAME SELECT * FROM ov_{table};"
            ))
            .map_err(load_error)?;
        }
        conn.execute_batch("CREATE VIEW \"references\" AS SELECT * FROM refs;")
            .map_err(load_error)?;
        Self::configure(conn, lock).map_err(load_error)
    }

    /// The table cache of `snaps` (built when missing).
    fn cache_db(
        snaps: &[Snapshot],
        cache_dir: &std::path::Path,
    ) -> Result<std::path::PathBuf, LoadError> {
        Self::cache_db_of(&snaps.iter().collect::<Vec<_>>(), cache_dir)
    }

    fn cache_db_of(
        snaps: &[&Snapshot],
        cache_dir: &std::path::Path,
    ) -> Result<std::path::PathBuf, LoadError> {
        let err = load_error;
        let io = |e: std::io::Error| {
            LoadError::new(
                Code::Cache,
                format!(
                    "cannot write the table cache in {}: {e}",
                    cache_dir.display()
                ),
                "set CODE_INDEX_CACHE to a writable directory",
            )
        };
        // Keyed by each manifest's content (it holds every table's sha256), not
        // only by the ids a manifest claims: a forged snapshot reusing an id
        // never shares a cache with the real one.
        let mut ids: Vec<String> = snaps
            .iter()
            .map(|s| {
                use sha2::{Digest, Sha256};
                let m = serde_json::to_vec(&s.manifest).unwrap_or_default();
                format!("{}:{}", s.id(), hex::encode(&Sha256::digest(&m)[..12]))
            })
            .collect();
        ids.sort();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let key = crate::cursor::fingerprint("tables-v3", env!("CARGO_PKG_VERSION"), &ids);
        std::fs::create_dir_all(cache_dir).map_err(io)?;
        let db = cache_dir.join(format!("{key}.duckdb"));
        // Mark it used before anything else, so a parallel start's pruning keeps it.
        if let Ok(f) = std::fs::File::options().append(true).open(&db) {
            let _ = f.set_modified(std::time::SystemTime::now());
        }
        // One build at a time in this process: a state that layers an overlay
        // over the bases' cache while the first state still builds it waits
        // for that build instead of making a second one.
        static BUILDING: Mutex<()> = Mutex::new(());
        let _one = BUILDING.lock().unwrap_or_else(|p| p.into_inner());
        if !db.is_file() {
            let tmp = cache_dir.join(format!(".{key}.{}.tmp", std::process::id()));
            let _ = std::fs::remove_file(&tmp);
            {
                let conn = Connection::open(&tmp).map_err(err)?;
                conn.execute_batch("SET preserve_insertion_order = true; SET threads = 2;")
                    .map_err(err)?;
                let all: Vec<Snapshot> = Vec::new();
                Self::create_tables(&conn, snaps, &all, "", "TABLE").map_err(err)?;
                conn.execute_batch("CREATE VIEW \"references\" AS SELECT * FROM refs; CHECKPOINT;")
                    .map_err(err)?;
            }
            std::fs::rename(&tmp, &db).map_err(io)?;
        }
        let list = db.with_extension(code_index_schemas::dirs::TABLE_CACHE_REPOS_EXT);
        if !list.is_file() {
            let mut repos: Vec<&str> = snaps.iter().map(|s| s.manifest.repo.as_str()).collect();
            repos.sort();
            repos.dedup();
            let _ = std::fs::write(&list, repos.join("\n") + "\n");
        }
        prune_table_cache(cache_dir, &db);
        Ok(db)
    }

    /// External access off; settings locked unless the store is the tools' own.
    fn configure(conn: Connection, lock: bool) -> duckdb::Result<Store> {
        conn.execute_batch("SET enable_external_access = false;")?;
        if lock {
            conn.execute_batch("SET lock_configuration = true;")?;
        }
        Ok(Store {
            conn: Mutex::new(conn),
            state: (Mutex::new(Some(Ok(()))), std::sync::Condvar::new()),
            locked: lock,
            memory_limit: duckdb_memory(),
            cached: std::sync::atomic::AtomicBool::new(true),
        })
    }

    /// A store for the server's tools whose table cache is not loaded yet.
    /// The server starts answering at once — grep and the file tools need no
    /// tables — while the first start on a new snapshot builds the table
    /// cache (≈ 25 s for the Linux kernel). Meanwhile the tables are views of
    /// `snaps`' Parquet files, so table tools answer from the first call,
    /// slower (every query reads the files); with overlays (or no
    /// snapshots) queries wait until [`Store::finish_deferred`] has loaded
    /// the cache (or answer its error).
    pub fn deferred(snaps: &[Snapshot]) -> Result<Store, LoadError> {
        let internal = |e: duckdb::Error| {
            LoadError::new(
                Code::Internal,
                format!("cannot start DuckDB: {e}"),
                "report this as a bug",
            )
        };
        let conn = Connection::open_in_memory().map_err(internal)?;
        let direct = !snaps.is_empty() && snaps.iter().all(|s| s.overlay_of().is_none());
        if direct {
            // External access stays on: the views read the files. This
            // connection runs only the tools' own SQL, never a user's.
            // Scans of Parquet files pin more than the cached tables' (the
            // kernel's find_definitions ran out of 32 MB); this connection
            // lives only until the cache is built.
            conn.execute_batch(&format!(
                "SET preserve_insertion_order = true; SET threads = 2; SET memory_limit = {};",
                quote(DIRECT_MEMORY)
            ))
            .map_err(internal)?;
            let all: Vec<&Snapshot> = snaps.iter().collect();
            Self::create_tables(&conn, &all, snaps, "", "VIEW").map_err(load_error)?;
            conn.execute_batch("CREATE VIEW \"references\" AS SELECT * FROM refs;")
                .map_err(load_error)?;
            return Ok(Store {
                conn: Mutex::new(conn),
                state: (Mutex::new(Some(Ok(()))), std::sync::Condvar::new()),
                locked: false,
                memory_limit: DIRECT_MEMORY.to_string(),
                cached: std::sync::atomic::AtomicBool::new(false),
            });
        }
        let mut st = Self::configure(conn, false).map_err(internal)?;
        st.state = (Mutex::new(None), std::sync::Condvar::new());
        Ok(st)
    }

    /// Load the table cache of a [`Store::deferred`] store and let its
    /// queries run on it. When the store reads the Parquet files directly
    /// and the cache cannot be built, it goes on reading them (logged).
    pub fn finish_deferred(&self, snaps: &[Snapshot], cache_dir: &std::path::Path) {
        if snaps.is_empty() {
            // No snapshot yet (a server started before the first build): no tables.
            let (lock, cv) = &self.state;
            *lock.lock().unwrap_or_else(|p| p.into_inner()) = Some(Ok(()));
            cv.notify_all();
            return;
        }
        let result = Self::open(snaps, cache_dir, false).map(|loaded| {
            let conn = loaded.conn.into_inner().unwrap_or_else(|p| p.into_inner());
            *self.conn.lock().unwrap_or_else(|p| p.into_inner()) = conn;
            self.cached
                .store(true, std::sync::atomic::Ordering::Relaxed);
        });
        let (lock, cv) = &self.state;
        let mut state = lock.lock().unwrap_or_else(|p| p.into_inner());
        match result {
            Err(e) if state.is_some() => tracing::warn!(
                "the table cache could not be built ({}: {}); table tools read the Parquet files",
                e.message,
                e.hint
            ),
            r => *state = Some(r.map_err(|e| format!("{}: {}", e.message, e.hint))),
        }
        cv.notify_all();
    }

    /// Where table queries read: `cache` (the table cache), `parquet` (the
    /// snapshot files, while the cache builds or when it cannot be built),
    /// `loading` (queries wait for the cache), or `error`.
    pub fn reads_from(&self) -> &'static str {
        match self.loaded() {
            Some(Ok(())) if self.cached.load(std::sync::atomic::Ordering::Relaxed) => "cache",
            Some(Ok(())) => "parquet",
            None => "loading",
            Some(Err(_)) => "error",
        }
    }

    /// Whether the tables are loaded (`None`: still loading).
    pub fn loaded(&self) -> Option<Result<(), String>> {
        self.state
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Tables `<prefix><table>` of `snaps`' rows; `all` are every served
    /// snapshot (to find an overlay's base). Every row goes in: a cache is
    /// keyed by its snapshots alone, so the base rows an overlay hides are
    /// left out by the views of [`Store::open_layered`], never here.
    fn create_tables(
        conn: &Connection,
        snaps: &[&Snapshot],
        all: &[Snapshot],
        prefix: &str,
        kind: &str,
    ) -> duckdb::Result<()> {
        let symbol_rows = |s: &Snapshot| s.manifest.rows("symbols.parquet");
        for (table, file, cols, _, id_cols) in TABLES {
            let mut ordered: Vec<&Snapshot> = snaps.to_vec();
            ordered.sort_by(|a, b| (a.repo(), a.id()).cmp(&(b.repo(), b.id())));
            let parts: Vec<String> = ordered
                .iter()
                .map(|s| {
                    // An overlay's symbol ids follow its base's (ordinals of
                    // each table), so the two never share one.
                    let offset = s
                        .overlay_of()
                        .and_then(|b| all.iter().find(|x| x.id() == b && x.overlay_of().is_none()))
                        .map_or(0, symbol_rows);
                    let cols = if offset > 0 && !id_cols.is_empty() {
                        let r: Vec<String> = id_cols
                            .iter()
                            .map(|c| format!("{c} + {offset} AS {c}"))
                            .collect();
                        format!("{cols} REPLACE ({})", r.join(", "))
                    } else {
                        cols.to_string()
                    };
                    format!(
                        "SELECT {} AS repo, {cols} FROM read_parquet({})",
                        quote(s.repo()),
                        quote(&s.dir.join(file).to_string_lossy())
                    )
                })
                .collect();
            let body = if parts.is_empty() {
                format!("SELECT '' AS repo, {cols} FROM read_parquet([]) WHERE false")
            } else {
                parts.join(" UNION ALL BY NAME ")
            };
            // In the tables' own order (each sorted by the builder), snapshots
            // by (repo, id): a sort of every column (`ORDER BY ALL`) took 18 of
            // the 22 s of the kernel's cache build.
            let t0 = std::time::Instant::now();
            conn.execute_batch(&format!("CREATE {kind} {prefix}{table} AS {body};"))?;
            if std::env::var_os("CODE_INDEX_TIMING").is_some() {
                eprintln!(
                    "[timing] table cache: {table} {:.2}s",
                    t0.elapsed().as_secs_f64()
                );
            }
        }
        Ok(())
    }

    /// Rows of a parameterized internal query (values as DuckDB gives them;
    /// the typed methods decode them).
    fn rows(&self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, ToolError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(sql).map_err(internal)?;
        let mut rows = stmt
            .query(duckdb::params_from_iter(params.iter()))
            .map_err(internal)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(internal)? {
            let n = r.as_ref().column_count();
            let mut row = Vec::with_capacity(n);
            for i in 0..n {
                row.push(r.get::<_, Value>(i).map_err(internal)?);
            }
            out.push(row);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn only_the_tools_store_drops_its_buffers() {
        let open = || {
            let conn = Connection::open_in_memory().unwrap();
            conn.execute_batch(&format!("SET memory_limit = '{}'", duckdb_memory()))
                .unwrap();
            conn
        };
        let tools = Store::configure(open(), false).unwrap();
        assert!(tools.release_buffers());
        // Settings are back as configured afterwards.
        let limit = tools
            .rows("SELECT current_setting('memory_limit')", &[])
            .unwrap();
        assert!(format!("{limit:?}").contains("MiB"), "{limit:?}");
        assert!(tools
            .rows("SELECT * FROM read_csv('/etc/hostname')", &[])
            .is_err());
        let user_sql = Store::configure(open(), true).unwrap();
        assert!(!user_sql.release_buffers());
        assert!(user_sql
            .sql("SET memory_limit = '8GB'", 10, Duration::from_secs(5))
            .is_err());
    }

    #[test]
    fn a_stopped_servers_cache_build_is_removed() {
        assert_eq!(stale_build_pid(".0e5b2d4bb0.10113.tmp"), Some(10113));
        assert_eq!(stale_build_pid(".0e5b2d4bb0.10113.tmp.wal"), Some(10113));
        assert_eq!(stale_build_pid("0e5b2d4bb0.duckdb"), None);
        let dir = tempfile::tempdir().unwrap();
        let me = std::process::id();
        // A pid no process has (above the kernel's pid_max, 2^22).
        let gone = format!(".k.{}.tmp", 5_000_000);
        let mine = format!(".k.{me}.tmp");
        for n in [
            &gone,
            &format!("{gone}.wal"),
            &mine,
            &"k.duckdb".to_string(),
        ] {
            std::fs::write(dir.path().join(n), b"x").unwrap();
        }
        prune_table_cache(dir.path(), &dir.path().join("k.duckdb"));
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        left.sort();
        assert_eq!(left, vec![mine, "k.duckdb".to_string()]);
    }

    #[test]
    fn stores_opened_at_once_share_one_cache_build() {
        // A start and an overlay's state both open the bases' cache before it
        // exists: one builds it, the other waits and reads it.
        let st = crate::tools::fixture::state();
        let cache = tempfile::tempdir().unwrap();
        let dir = st.snaps[0].dir.clone();
        let opened: Vec<_> = (0..4)
            .map(|_| {
                let (dir, cache) = (dir.clone(), cache.path().to_path_buf());
                std::thread::spawn(move || {
                    let snaps = vec![crate::snapshot::load(&dir).unwrap()];
                    Store::load_for_tools(&snaps, &cache).map(|_| ())
                })
            })
            .collect();
        for t in opened {
            assert!(t.join().unwrap().is_ok());
        }
        let dbs: Vec<_> = std::fs::read_dir(cache.path())
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "duckdb"))
            .collect();
        assert_eq!(dbs.len(), 1, "{dbs:?}");
    }

    fn slugify_rows(s: &Store) -> Vec<(String, u64)> {
        s.symbols(
            "slugify",
            NameMatch::Ranked,
            &SymbolFilter::default(),
            10,
            0,
        )
        .unwrap()
        .0
        .iter()
        .map(|r| (r.path.clone(), r.name_line))
        .collect()
    }

    /// Before its table cache is built, a deferred store over snapshots
    /// answers from their Parquet files, with the rows the cache gives; a
    /// cache that cannot be built leaves it reading them.
    #[test]
    fn deferred_store_reads_the_parquet_files_until_its_cache_is_built() {
        let st = crate::tools::fixture::state();
        let snaps = vec![crate::snapshot::load(&st.snaps[0].dir).unwrap()];
        let cache = tempfile::tempdir().unwrap();
        let direct = Store::deferred(&snaps).unwrap();
        assert_eq!(direct.reads_from(), "parquet");
        let want = slugify_rows(&st.store);
        assert!(!want.is_empty());
        assert_eq!(slugify_rows(&direct), want);
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
        direct.finish_deferred(&snaps, cache.path());
        assert_eq!(direct.reads_from(), "cache");
        // The cache and the list of the repositories it holds.
        let mut names: Vec<String> = std::fs::read_dir(cache.path())
            .unwrap()
            .flatten()
            .map(|e| e.path().extension().unwrap().to_string_lossy().to_string())
            .collect();
        names.sort();
        assert_eq!(names, ["duckdb", "repos"]);
        assert_eq!(slugify_rows(&direct), want);
        // The cached tables refuse file access; the views needed it.
        assert!(direct
            .rows("SELECT * FROM read_csv('/etc/hostname')", &[])
            .is_err());

        let file = cache.path().join("not-a-dir");
        std::fs::write(&file, b"x").unwrap();
        let kept = Store::deferred(&snaps).unwrap();
        kept.finish_deferred(&snaps, &file.join("sub"));
        assert_eq!(kept.reads_from(), "parquet");
        assert_eq!(slugify_rows(&kept), want);
    }

    /// A deferred store without snapshots to read answers once its tables
    /// are loaded (the query waits for the background load), with the same
    /// rows as a store loaded at once; a load that fails makes every query a
    /// coded error.
    #[test]
    fn deferred_store_waits_for_its_tables() {
        let st = crate::tools::fixture::state();
        let cache = tempfile::tempdir().unwrap();
        // Without snapshots to read (as with overlays), queries wait.
        let deferred = std::sync::Arc::new(Store::deferred(&[]).unwrap());
        assert_eq!(deferred.reads_from(), "loading");
        let (d, snaps_dir) = (deferred.clone(), st.snaps[0].dir.clone());
        let cache_dir = cache.path().to_path_buf();
        let loader = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            let snaps = vec![crate::snapshot::load(&snaps_dir).unwrap()];
            d.finish_deferred(&snaps, &cache_dir);
        });
        let t = std::time::Instant::now();
        let waited = slugify_rows(&deferred);
        assert!(
            t.elapsed() >= Duration::from_millis(150),
            "the query did not wait"
        );
        assert!(!waited.is_empty());
        assert_eq!(waited, slugify_rows(&st.store));
        loader.join().unwrap();
        assert_eq!(deferred.loaded(), Some(Ok(())));

        // A cache directory that cannot be created: the load fails, queries say so.
        let file = cache.path().join("not-a-dir");
        std::fs::write(&file, b"x").unwrap();
        let broken = Store::deferred(&[]).unwrap();
        broken.finish_deferred(&st.snaps, &file.join("sub"));
        let e = broken
            .symbols(
                "slugify",
                NameMatch::Ranked,
                &SymbolFilter::default(),
                10,
                0,
            )
            .unwrap_err();
        assert_eq!(e.code, Code::SnapshotInvalid, "{e:?}");
        assert!(!broken.release_buffers());
    }

    #[test]
    fn table_cache_keeps_the_current_and_the_most_recent() {
        let dir = std::env::temp_dir().join(format!("ci-prune-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let base = std::time::SystemTime::now() - Duration::from_secs(3600);
        for i in 0..12u64 {
            let p = dir.join(format!("{i:02}.duckdb"));
            std::fs::write(&p, b"x").unwrap();
            let f = std::fs::File::options().append(true).open(&p).unwrap();
            f.set_modified(base + Duration::from_secs(i * 60)).unwrap();
        }
        std::fs::write(dir.join("other.txt"), b"kept").unwrap();
        // The oldest one is in use: it stays, and becomes the newest.
        for i in 12..20u64 {
            let p = dir.join(format!("{i:02}.duckdb"));
            std::fs::write(&p, b"x").unwrap();
            let f = std::fs::File::options().append(true).open(&p).unwrap();
            f.set_modified(base + Duration::from_secs(i * 60)).unwrap();
        }
        prune_table_cache(&dir, &dir.join("00.duckdb"));
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let want: Vec<String> = std::iter::once(0)
            .chain(4..20)
            .map(|n| format!("{n:02}.duckdb"))
            .chain(["other.txt".to_string()])
            .collect();
        assert_eq!(left, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
