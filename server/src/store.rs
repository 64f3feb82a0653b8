//! The snapshot tables in DuckDB (in memory, read-only once loaded):
//! symbols, references, edges, chunks and file metadata, each with a `repo`
//! column. After loading, external access and configuration changes are
//! disabled, and user SQL is limited to one SELECT with row and time limits.

use std::sync::Mutex;
use std::time::Duration;

use duckdb::types::Value;
use duckdb::Connection;
use serde::Serialize;

use crate::error::{codes, ToolError};
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

pub struct Store {
    conn: Mutex<Connection>,
    /// Settings locked (the `sql` command runs user SQL); the server's own
    /// connection stays unlocked so that it can drop its buffers when idle.
    locked: bool,
    /// DuckDB's memory limit as configured (restored after a release).
    memory_limit: String,
}

/// The `symbols` condition for the definitions a name designates: a
/// qualified name ("Model.save", "Foo::bar") that definition only, matched
/// on the end of `qualified_name` at a dot; a bare name every definition of
/// that name.
pub fn definition_condition(name: &str) -> (&'static str, Vec<Value>) {
    let q = name.replace("::", ".");
    if q.contains('.') {
        (
            "(qualified_name = ? OR ends_with(qualified_name, ?))",
            vec![Value::Text(q.clone()), Value::Text(format!(".{q}"))],
        )
    } else {
        ("name = ?", vec![Value::Text(q)])
    }
}

pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
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
    ToolError::new("INTERNAL", format!("query failed: {msg}"), hint)
}

/// A definition row.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct SymbolRow {
    pub repo: String,
    pub path: String,
    pub name: String,
    pub qualified_name: String,
    pub kind: String,
    pub language: String,
    pub container: Option<String>,
    pub signature: String,
    pub doc: Option<String>,
    pub line: u64,
    pub end_line: u64,
    pub name_line: u64,
}

/// A reference row.
#[derive(Clone, Debug, Serialize)]
pub struct RefRow {
    pub repo: String,
    pub path: String,
    pub line: u64,
    pub column: u64,
    pub ref_kind: String,
    pub enclosing_symbol: Option<String>,
}

/// How `search_symbols` matches names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NameMatch {
    /// exact, then prefix, then substring (case-insensitive), ranked in that order.
    Ranked,
    Regex,
    /// name or qualified_name equal, or qualified_name ending in `.name`.
    Definition,
}

#[derive(Clone, Debug, Default)]
pub struct SymbolFilter {
    pub repos: Vec<String>,
    pub kind: Option<String>,
    pub lang: Option<String>,
    pub path: Option<String>,
}

/// Result of user SQL.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SqlResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<serde_json::Value>>,
    /// More rows existed than the row limit.
    pub truncated: bool,
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
    }
}

impl Store {
    /// Drops DuckDB's cached table blocks (they are re-read from the table
    /// cache file on the next query). The server calls it when idle: the
    /// blocks held ≈ 20–27 MB on go-stdlib, and a first symbol query after
    /// it takes ≈ 1–10 ms longer. Returns whether it did.
    pub fn release_buffers(&self) -> bool {
        if self.locked {
            return false;
        }
        let conn = self.conn();
        // A failed first SET keeps the old limit (DuckDB evicts what it can).
        let dropped = conn.execute_batch("SET memory_limit = '1MB';").is_ok();
        let restore = format!("SET memory_limit = '{}';", self.memory_limit);
        for attempt in 0..3 {
            match conn.execute_batch(&restore) {
                Ok(()) => return dropped,
                Err(e) if attempt == 2 => {
                    eprintln!(
                        "code-index-mcp: cannot restore DuckDB's memory limit {}: {e}",
                        self.memory_limit
                    )
                }
                Err(_) => {}
            }
        }
        false
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
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
        let err = |e: duckdb::Error| LoadError {
            code: "E_SNAPSHOT_INVALID",
            message: format!("cannot load snapshot tables into DuckDB: {e}"),
            hint: "check the snapshot with `code-indexer status <snapshot>`; rebuild it if damaged"
                .into(),
        };
        let io = |e: std::io::Error| LoadError {
            code: "E_CACHE",
            message: format!(
                "cannot write the table cache in {}: {e}",
                cache_dir.display()
            ),
            hint: "set CODE_INDEX_CACHE to a writable directory".into(),
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
        let key = crate::cursor::fingerprint("tables", env!("CARGO_PKG_VERSION"), &ids);
        std::fs::create_dir_all(cache_dir).map_err(io)?;
        let db = cache_dir.join(format!("{key}.duckdb"));
        // Mark it used before anything else, so a parallel start's pruning keeps it.
        if let Ok(f) = std::fs::File::options().append(true).open(&db) {
            let _ = f.set_modified(std::time::SystemTime::now());
        }
        if !db.is_file() {
            let tmp = cache_dir.join(format!(".{key}.{}.tmp", std::process::id()));
            let _ = std::fs::remove_file(&tmp);
            {
                let conn = Connection::open(&tmp).map_err(err)?;
                conn.execute_batch("SET preserve_insertion_order = false; SET threads = 2;")
                    .map_err(err)?;
                Self::create_tables(&conn, snaps).map_err(err)?;
                conn.execute_batch("CHECKPOINT;").map_err(err)?;
            }
            std::fs::rename(&tmp, &db).map_err(io)?;
        }
        prune_table_cache(cache_dir, &db);
        let cfg = duckdb::Config::default()
            .access_mode(duckdb::AccessMode::ReadOnly)
            .and_then(|c| c.max_memory(&duckdb_memory()))
            .and_then(|c| c.threads(2))
            .map_err(|e| LoadError {
                code: "E_CONFIG",
                message: format!("invalid DuckDB settings: {e}"),
                hint: format!(
                    "CODE_INDEX_DUCKDB_MEMORY must be a size such as 32MB or 1GB (it is {:?})",
                    duckdb_memory()
                ),
            })?;
        let conn = Connection::open_with_flags(&db, cfg).map_err(err)?;
        Self::configure(conn, lock).map_err(err)
    }

    /// External access off; settings locked unless the store is the tools' own.
    fn configure(conn: Connection, lock: bool) -> duckdb::Result<Store> {
        conn.execute_batch("SET enable_external_access = false;")?;
        if lock {
            conn.execute_batch("SET lock_configuration = true;")?;
        }
        Ok(Store {
            conn: Mutex::new(conn),
            locked: lock,
            memory_limit: duckdb_memory(),
        })
    }

    fn create_tables(conn: &Connection, snaps: &[Snapshot]) -> duckdb::Result<()> {
        let tables: [(&str, &str, &str); 5] = [
            ("symbols", "symbols.parquet", "*"),
            ("refs", "references.parquet", "*"),
            ("edges", "edges.parquet", "*"),
            ("chunks", "chunks.parquet", "*"),
            ("files", "files.parquet", "* EXCLUDE (content)"),
        ];
        for (table, file, cols) in tables {
            let parts: Vec<String> = snaps
                .iter()
                .map(|s| {
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
            conn.execute_batch(&format!("CREATE TABLE {table} AS {body} ORDER BY ALL;"))?;
        }
        conn.execute_batch("CREATE VIEW \"references\" AS SELECT * FROM refs;")
    }

    /// Definitions matching `query`, ranked; returns one page and the total.
    pub fn symbols(
        &self,
        query: &str,
        how: NameMatch,
        f: &SymbolFilter,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<SymbolRow>, u64), ToolError> {
        let mut params: Vec<Value> = Vec::new();
        let (cond, rank) = match how {
            NameMatch::Ranked => {
                params.extend([
                    Value::Text(query.to_string()),
                    Value::Text(query.to_string()),
                    Value::Text(query.to_lowercase()),
                    Value::Text(query.to_lowercase()),
                ]);
                (
                    "(name = ? OR qualified_name = ? OR starts_with(lower(name), ?) OR contains(lower(qualified_name), ?))",
                    format!(
                        "CASE WHEN name = {q} OR qualified_name = {q} THEN 0 WHEN starts_with(lower(name), {l}) THEN 1 ELSE 2 END, ",
                        q = quote(query),
                        l = quote(&query.to_lowercase())
                    ),
                )
            }
            NameMatch::Regex => {
                params.push(Value::Text(query.to_string()));
                ("regexp_matches(name, ?)", String::new())
            }
            NameMatch::Definition => {
                let (cond, p) = definition_condition(query);
                params.extend(p);
                (cond, String::new())
            }
        };
        let mut sql = format!("FROM symbols WHERE {cond}");
        if !f.repos.is_empty() {
            sql.push_str(&format!(
                " AND repo IN ({})",
                f.repos
                    .iter()
                    .map(|r| quote(r))
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
        if let Some(k) = &f.kind {
            sql.push_str(" AND kind = ?");
            params.push(Value::Text(k.clone()));
        }
        if let Some(l) = &f.lang {
            sql.push_str(" AND language = ?");
            params.push(Value::Text(l.clone()));
        }
        if let Some(p) = &f.path {
            let p = p.trim_matches('/');
            if !p.is_empty() {
                sql.push_str(" AND (path = ? OR starts_with(path, ?))");
                params.push(Value::Text(p.to_string()));
                params.push(Value::Text(format!("{p}/")));
            }
        }
        let conn = self.conn();
        let total: i64 = conn
            .prepare(&format!("SELECT count(*) {sql}"))
            .and_then(|mut s| s.query_row(duckdb::params_from_iter(params.iter()), |r| r.get(0)))
            .map_err(|e| {
                if how == NameMatch::Regex {
                    ToolError::new(
                        codes::INVALID_PATTERN,
                        format!("invalid regex: {e}"),
                        "fix the regex (RE2 syntax), or drop regex: true",
                    )
                } else {
                    internal(e)
                }
            })?;
        let q = format!(
            "SELECT repo, path, name, qualified_name, kind, language, container, signature, doc, start_line, end_line, name_line \
             {sql} ORDER BY {rank}repo, path, start_line, qualified_name LIMIT {limit} OFFSET {offset}"
        );
        let mut stmt = conn.prepare(&q).map_err(internal)?;
        let rows = stmt
            .query_map(duckdb::params_from_iter(params.iter()), |r| {
                Ok(SymbolRow {
                    repo: r.get(0)?,
                    path: r.get(1)?,
                    name: r.get(2)?,
                    qualified_name: r.get(3)?,
                    kind: r.get(4)?,
                    language: r.get(5)?,
                    container: r.get(6)?,
                    signature: r.get(7)?,
                    doc: r.get(8)?,
                    line: r.get::<_, i32>(9)? as u64,
                    end_line: r.get::<_, i32>(10)? as u64,
                    name_line: r.get::<_, i32>(11)? as u64,
                })
            })
            .map_err(internal)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(internal)?;
        Ok((rows, total as u64))
    }

    /// Identifier occurrences named `name` (from the references table).
    pub fn references(
        &self,
        name: &str,
        repos: &[String],
        path: Option<&str>,
    ) -> Result<Vec<RefRow>, ToolError> {
        let mut sql = String::from("SELECT repo, path, line, \"column\", ref_kind, enclosing_symbol FROM refs WHERE name = ?");
        let mut params = vec![Value::Text(name.to_string())];
        if !repos.is_empty() {
            sql.push_str(&format!(
                " AND repo IN ({})",
                repos.iter().map(|r| quote(r)).collect::<Vec<_>>().join(",")
            ));
        }
        if let Some(p) = path.map(|p| p.trim_matches('/')).filter(|p| !p.is_empty()) {
            sql.push_str(" AND (path = ? OR starts_with(path, ?))");
            params.push(Value::Text(p.to_string()));
            params.push(Value::Text(format!("{p}/")));
        }
        sql.push_str(" ORDER BY repo, path, line, \"column\"");
        let conn = self.conn();
        let mut stmt = conn.prepare(&sql).map_err(internal)?;
        let rows = stmt
            .query_map(duckdb::params_from_iter(params.iter()), |r| {
                Ok(RefRow {
                    repo: r.get(0)?,
                    path: r.get(1)?,
                    line: r.get::<_, i32>(2)? as u64,
                    column: r.get::<_, i32>(3)? as u64,
                    ref_kind: r.get(4)?,
                    enclosing_symbol: r.get(5)?,
                })
            })
            .map_err(internal)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(internal)?;
        Ok(rows)
    }

    /// Rows of a parameterized internal query (values as DuckDB gives them).
    pub fn rows(&self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, ToolError> {
        let conn = self.conn();
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

    /// Names of definitions close to `name` (for "did you mean").
    pub fn similar_names(&self, name: &str, limit: usize) -> Vec<String> {
        let conn = self.conn();
        let q = format!(
            "SELECT name FROM (SELECT DISTINCT name FROM symbols) ORDER BY jaro_winkler_similarity(lower(name), lower(?)) DESC, name LIMIT {limit}"
        );
        conn.prepare(&q)
            .and_then(|mut s| {
                s.query_map([name], |r| r.get::<_, String>(0))
                    .and_then(|rows| rows.collect())
            })
            .unwrap_or_default()
    }

    /// Run one read-only SELECT with a row limit and a time limit.
    pub fn sql(
        &self,
        query: &str,
        max_rows: usize,
        timeout: Duration,
    ) -> Result<SqlResult, ToolError> {
        let conn = self.conn();
        // Exactly one SELECT: DuckDB's own parser says so (json_serialize_sql
        // refuses anything else and lists the statements).
        let check: String = conn
            .query_row("SELECT json_serialize_sql(?::VARCHAR)", [query], |r| {
                r.get(0)
            })
            .map_err(internal)?;
        let parsed: serde_json::Value = serde_json::from_str(&check).unwrap_or_default();
        if parsed.get("error").and_then(|e| e.as_bool()) == Some(true) {
            let msg = parsed
                .get("error_message")
                .and_then(|m| m.as_str())
                .unwrap_or("not a SELECT");
            return Err(ToolError::invalid_argument(
                format!("only one read-only SELECT is allowed: {msg}"),
                "write a single SELECT (tables: files, symbols, refs/references, edges, chunks; see schemas/SCHEMA.md)",
            ));
        }
        if parsed
            .get("statements")
            .and_then(|s| s.as_array())
            .map(|a| a.len())
            != Some(1)
        {
            return Err(ToolError::invalid_argument(
                "only one statement is allowed",
                "remove the extra statements",
            ));
        }
        let handle = conn.interrupt_handle();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            if done_rx.recv_timeout(timeout).is_err() {
                handle.interrupt();
            }
        });
        let wrapped = format!(
            "SELECT * FROM ({}) LIMIT {}",
            query.trim().trim_end_matches(';'),
            max_rows + 1
        );
        let result = (|| -> duckdb::Result<SqlResult> {
            let mut stmt = conn.prepare(&wrapped)?;
            let mut rows_out = Vec::new();
            let mut rows = stmt.query([])?;
            let mut columns = Vec::new();
            while let Some(row) = rows.next()? {
                if columns.is_empty() {
                    columns = row
                        .as_ref()
                        .column_names()
                        .into_iter()
                        .map(|s| s.to_string())
                        .collect();
                }
                let n = columns.len();
                let vals: Vec<serde_json::Value> = (0..n)
                    .map(|i| to_json(row.get::<_, Value>(i).unwrap_or(Value::Null)))
                    .collect();
                rows_out.push(vals);
            }
            let truncated = rows_out.len() > max_rows;
            rows_out.truncate(max_rows);
            Ok(SqlResult {
                columns,
                rows: rows_out,
                truncated,
            })
        })();
        let _ = done_tx.send(());
        let _ = watchdog.join();
        result.map_err(|e| {
            let m = e.to_string();
            if m.contains("INTERRUPT") || m.to_lowercase().contains("interrupt") {
                ToolError::new(codes::BUDGET_EXCEEDED, format!("query ran longer than {:?}", timeout), "add filters or a LIMIT")
            } else {
                ToolError::invalid_argument(format!("SQL error: {m}"), "tables: files, symbols, refs/references, edges, chunks (see schemas/SCHEMA.md)")
            }
        })
    }
}

fn to_json(v: Value) -> serde_json::Value {
    use serde_json::json;
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Boolean(b) => json!(b),
        Value::TinyInt(i) => json!(i),
        Value::SmallInt(i) => json!(i),
        Value::Int(i) => json!(i),
        Value::BigInt(i) => json!(i),
        Value::HugeInt(i) => json!(i.to_string()),
        Value::UTinyInt(i) => json!(i),
        Value::USmallInt(i) => json!(i),
        Value::UInt(i) => json!(i),
        Value::UBigInt(i) => json!(i),
        Value::Float(f) => json!(f),
        Value::Double(f) => json!(f),
        Value::Text(s) => json!(s),
        other => json!(format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
