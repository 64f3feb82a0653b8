//! `related_files`' relations of one file to others in its repo: imports,
//! importers, calls either way, inheritance either way, users of its names.

use duckdb::types::Value;

use super::{val_i64, val_str, Store};
use crate::error::ToolError;

/// A related file (or package directory) and how many edges lead there.
#[derive(Clone, Debug, PartialEq)]
pub struct PathCount {
    pub path: String,
    pub count: i64,
}

/// A related file, how many edges or names lead there, and the first name.
#[derive(Clone, Debug, PartialEq)]
pub struct PathCountName {
    pub path: String,
    pub count: i64,
    pub name: String,
}

/// A related file and the first name relating it.
#[derive(Clone, Debug, PartialEq)]
pub struct PathName {
    pub path: String,
    pub name: String,
}

fn path_count(rows: Vec<Vec<Value>>) -> Vec<PathCount> {
    rows.iter()
        .map(|r| PathCount {
            path: val_str(&r[0]),
            count: val_i64(&r[1]),
        })
        .collect()
}

fn path_count_name(rows: Vec<Vec<Value>>) -> Vec<PathCountName> {
    rows.iter()
        .map(|r| PathCountName {
            path: val_str(&r[0]),
            count: val_i64(&r[1]),
            name: val_str(&r[2]),
        })
        .collect()
}

fn path_name(rows: Vec<Vec<Value>>) -> Vec<PathName> {
    rows.iter()
        .map(|r| PathName {
            path: val_str(&r[0]),
            name: val_str(&r[1]),
        })
        .collect()
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

impl Store {
    /// Files (or package directories) the file imports, resolved.
    pub fn file_imports(&self, repo: &str, path: &str) -> Result<Vec<PathCount>, ToolError> {
        let rows = self.rows("SELECT dst_path, count(*) FROM edges WHERE repo = ? AND src_path = ? AND kind = 'imports' AND dst_path IS NOT NULL GROUP BY 1", &[text(repo), text(path)])?;
        Ok(path_count(rows))
    }

    /// Files importing the file or its directory `dir` (most imports first,
    /// then by path; at most 200).
    pub fn file_importers(
        &self,
        repo: &str,
        path: &str,
        dir: &str,
    ) -> Result<Vec<PathCount>, ToolError> {
        let rows = self.rows("SELECT src_path, count(*) FROM edges WHERE repo = ? AND kind = 'imports' AND (dst_path = ? OR dst_path = ?) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 200", &[text(repo), text(path), text(dir)])?;
        Ok(path_count(rows))
    }

    /// Files defining what the file calls (resolved calls; `name` the first
    /// callee by name).
    pub fn file_callees(&self, repo: &str, path: &str) -> Result<Vec<PathCountName>, ToolError> {
        let rows = self.rows("SELECT s.path, count(*), min(s.name) FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id WHERE e.repo = ? AND e.src_path = ? AND e.kind = 'calls' GROUP BY 1", &[text(repo), text(path)])?;
        Ok(path_count_name(rows))
    }

    /// Files calling what the file defines (`name` the first callee by
    /// name; most calls first, then by path; at most 200).
    pub fn file_callers(&self, repo: &str, path: &str) -> Result<Vec<PathCountName>, ToolError> {
        let rows = self.rows("SELECT e.src_path, count(*), min(s.name) FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id WHERE e.repo = ? AND s.path = ? AND e.kind = 'calls' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 200", &[text(repo), text(path)])?;
        Ok(path_count_name(rows))
    }

    /// Files defining what the file's classes extend or implement (`name`
    /// the first base as written).
    pub fn file_bases(&self, repo: &str, path: &str) -> Result<Vec<PathName>, ToolError> {
        let rows = self.rows("SELECT s.path, min(e.dst_name) FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id WHERE e.repo = ? AND e.src_path = ? AND e.kind IN ('extends', 'implements') GROUP BY 1", &[text(repo), text(path)])?;
        Ok(path_name(rows))
    }

    /// Files extending or implementing what the file defines (`name` the
    /// first base by name; at most 100).
    pub fn file_subclasses(&self, repo: &str, path: &str) -> Result<Vec<PathName>, ToolError> {
        let rows = self.rows("SELECT e.src_path, min(s.name) FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id WHERE e.repo = ? AND s.path = ? AND e.kind IN ('extends', 'implements') GROUP BY 1 LIMIT 100", &[text(repo), text(path)])?;
        Ok(path_name(rows))
    }

    /// Other files referring to the file's distinctive top-level names
    /// (longer than 3 characters, defined in at most 2 files): `count` the
    /// names used, `name` the first; most names first, then by path; at
    /// most 100.
    pub fn file_name_users(&self, repo: &str, path: &str) -> Result<Vec<PathCountName>, ToolError> {
        let rows = self.rows(
            "WITH mine AS (SELECT DISTINCT name FROM symbols WHERE repo = ? AND path = ? AND parent_id IS NULL AND length(name) > 3), \
             rare AS (SELECT m.name FROM mine m JOIN symbols s ON s.repo = ? AND s.name = m.name GROUP BY 1 HAVING count(DISTINCT s.path) <= 2) \
             SELECT r.path, count(DISTINCT r.name), min(r.name) FROM refs r JOIN rare USING (name) WHERE r.repo = ? AND r.path <> ? GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 100",
            &[text(repo), text(path), text(repo), text(repo), text(path)],
        )?;
        Ok(path_count_name(rows))
    }
}
