//! `related_files`: what else to read for a file, ranked with reasons.

use super::limit_of;
use crate::retrieval::{file_index, val_i64, val_str};
use duckdb::types::Value;
use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{codes, ToolError};
use crate::state::State;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "What else to read for a file, ranked with reasons: files it imports, files importing it, calls / called by, inheritance,\n\
    files using its names, and its tests. {\"path\": \"django/db/models/query.py\"}.";

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RelatedFilesArgs {
    /// Repo-relative file path.
    pub path: String,
    #[serde(default)]
    pub repo: Option<String>,
    /// Most files (default 15, at most 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RelatedFile {
    pub repo: String,
    pub path: String,
    pub score: f32,
    /// imports, imported by, calls, called by, extends, extended by, shares symbols, its test, tested code.
    pub reasons: Vec<String>,
    pub line: u64,
    pub end_line: u64,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct RelatedFilesOut {
    pub repo: String,
    pub path: String,
    pub files: Vec<RelatedFile>,
    pub total_count: u64,
}

fn one_repo(st: &State, repo: Option<&str>, path: &str) -> Result<usize, ToolError> {
    let sel = st.select(repo)?;
    let hits: Vec<usize> = (0..st.snaps.len())
        .filter(|&i| sel.iter().any(|s| s.repo() == st.snaps[i].repo()))
        .filter(|&i| file_index(&st.snaps[i], path).is_some())
        .collect();
    match hits.first() {
        Some(&i) => Ok(i),
        None => {
            let base = path.rsplit('/').next().unwrap_or(path);
            Err(ToolError::new(
                codes::NOT_FOUND,
                format!("file {path:?} is not in the selected snapshot(s)"),
                format!("paths are repo-relative; find it with search_files {{\"pattern\": \"**/{base}\"}}"),
            ))
        }
    }
}

pub fn run(st: &State, a: RelatedFilesArgs) -> Result<(RelatedFilesOut, String), ToolError> {
    let path = a
        .path
        .trim()
        .trim_start_matches("./")
        .trim_matches('/')
        .to_string();
    let limit = limit_of(a.limit, 15, 50)?;
    let si = one_repo(st, a.repo.as_deref(), &path)?;
    let snap = &st.snaps[si];
    let repo = snap.repo().to_string();
    let dir = path.rsplit_once('/').map(|x| x.0).unwrap_or("");
    let r = Value::Text(repo.clone());
    let p = Value::Text(path.clone());
    let d = Value::Text(dir.to_string());
    let mut score: HashMap<String, (f32, Vec<String>)> = HashMap::new();
    let mut add = |f: String, s: f32, why: String| {
        if f == path || f.is_empty() {
            return;
        }
        let e = score.entry(f).or_insert((0.0, Vec::new()));
        e.0 += s;
        if !e.1.contains(&why) && e.1.len() < 4 {
            e.1.push(why);
        }
    };
    let store = &st.store;
    // Imports (resolved files; Go: package directories).
    for row in store.rows("SELECT dst_path, count(*) FROM edges WHERE repo = ? AND src_path = ? AND kind = 'imports' AND dst_path IS NOT NULL GROUP BY 1", &[r.clone(), p.clone()])? {
        let dst = val_str(&row[0]);
        if file_index(snap, &dst).is_some() {
            add(dst, 3.0, "imports".into());
        } else {
            let prefix = format!("{dst}/");
            for f in snap.files.iter().filter(|f| f.path.starts_with(&prefix) && !f.is_test && !f.path[prefix.len()..].contains('/')).take(3) {
                add(f.path.clone(), 1.5, format!("imports package {dst}"));
            }
        }
    }
    for row in store.rows("SELECT src_path, count(*) FROM edges WHERE repo = ? AND kind = 'imports' AND (dst_path = ? OR dst_path = ?) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 200", &[r.clone(), p.clone(), d.clone()])? {
        add(val_str(&row[0]), 2.0, "imported by".into());
    }
    for row in store.rows("SELECT s.path, count(*), min(s.name) FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id WHERE e.repo = ? AND e.src_path = ? AND e.kind = 'calls' GROUP BY 1", &[r.clone(), p.clone()])? {
        let n = val_i64(&row[1]) as f32;
        add(val_str(&row[0]), 1.0 + n.ln_1p(), format!("calls {} ({}x)", val_str(&row[2]), n));
    }
    for row in store.rows("SELECT e.src_path, count(*), min(s.name) FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id WHERE e.repo = ? AND s.path = ? AND e.kind = 'calls' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 200", &[r.clone(), p.clone()])? {
        let n = val_i64(&row[1]) as f32;
        add(val_str(&row[0]), 1.0 + n.ln_1p(), format!("called by ({}x, e.g. {})", n, val_str(&row[2])));
    }
    for row in store.rows("SELECT s.path, min(e.dst_name) FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id WHERE e.repo = ? AND e.src_path = ? AND e.kind IN ('extends', 'implements') GROUP BY 1", &[r.clone(), p.clone()])? {
        add(val_str(&row[0]), 2.5, format!("extends {}", val_str(&row[1])));
    }
    for row in store.rows("SELECT e.src_path, min(s.name) FROM edges e JOIN symbols s ON s.repo = e.repo AND s.symbol_id = e.dst_symbol_id WHERE e.repo = ? AND s.path = ? AND e.kind IN ('extends', 'implements') GROUP BY 1 LIMIT 100", &[r.clone(), p.clone()])? {
        add(val_str(&row[0]), 2.0, format!("extends its {}", val_str(&row[1])));
    }
    // Files using names this file defines (distinctive names only: defined in at most 2 files).
    for row in store.rows(
        "WITH mine AS (SELECT DISTINCT name FROM symbols WHERE repo = ? AND path = ? AND parent_id IS NULL AND length(name) > 3), \
         rare AS (SELECT m.name FROM mine m JOIN symbols s ON s.repo = ? AND s.name = m.name GROUP BY 1 HAVING count(DISTINCT s.path) <= 2) \
         SELECT r.path, count(DISTINCT r.name), min(r.name) FROM refs r JOIN rare USING (name) WHERE r.repo = ? AND r.path <> ? GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 100",
        &[r.clone(), p.clone(), r.clone(), r.clone(), p.clone()],
    )? {
        let n = val_i64(&row[1]) as f32;
        add(val_str(&row[0]), 0.5 + 0.5 * n.min(6.0), format!("uses its {} ({} names)", val_str(&row[2]), n));
    }
    // Tests by name: test_x.py, x_test.go, x.test.ts, x_spec.rb, tests/x.rs, XTest.java.
    let base = path.rsplit('/').next().unwrap_or(&path);
    let stem = base.split('.').next().unwrap_or(base).to_string();
    let this_is_test = snap.files[file_index(snap, &path).unwrap() as usize].is_test;
    if stem.len() >= 3 {
        let sl = stem.to_lowercase();
        for f in &snap.files {
            if f.path == path {
                continue;
            }
            let fb = f.path.rsplit('/').next().unwrap_or(&f.path);
            let fs = fb.split('.').next().unwrap_or(fb).to_lowercase();
            let candidates = [
                format!("test_{sl}"),
                format!("{sl}_test"),
                format!("{sl}test"),
                format!("tests_{sl}"),
                format!("{sl}_spec"),
                format!("{sl}.test"),
            ];
            if !this_is_test
                && f.is_test
                && (candidates.contains(&fs)
                    || (fb.to_lowercase().starts_with(&format!("{sl}.")) && fb.contains("test")))
            {
                add(f.path.clone(), 3.0, "its test".into());
            } else if this_is_test && !f.is_test {
                let tl = stem.to_lowercase();
                let core = tl
                    .trim_start_matches("test_")
                    .trim_end_matches("_test")
                    .trim_end_matches("test")
                    .trim_end_matches("_spec");
                if core.len() >= 3 && fs == core {
                    add(f.path.clone(), 3.0, "code under test".into());
                }
            }
        }
    }
    let mut files: Vec<(String, (f32, Vec<String>))> = score.into_iter().collect();
    files.sort_by(|a, b| b.1 .0.partial_cmp(&a.1 .0).unwrap().then(a.0.cmp(&b.0)));
    let total = files.len();
    let eng = st.engine();
    let out_files: Vec<RelatedFile> = files
        .into_iter()
        .take(limit)
        .map(|(f, (s, reasons))| {
            let (line, end_line) = file_index(snap, &f)
                .and_then(|fi| eng.file_chunks.get(&(si as u32, fi)))
                .map(|&(lo, hi)| {
                    let c = &eng.chunks[lo..hi];
                    (
                        c.iter().map(|c| c.start_line).min().unwrap_or(1) as u64,
                        c.iter().map(|c| c.end_line).max().unwrap_or(1) as u64,
                    )
                })
                .unwrap_or((1, 1));
            RelatedFile {
                repo: repo.clone(),
                path: f,
                score: (s * 100.0).round() / 100.0,
                reasons,
                line,
                end_line,
            }
        })
        .collect();
    let mut text = format!(
        "{} files related to {path} (showing {}):\n",
        total,
        out_files.len()
    );
    for f in &out_files {
        text.push_str(&format!(
            "{} ({:.1}): {}\n",
            f.path,
            f.score,
            f.reasons.join("; ")
        ));
    }
    if out_files.is_empty() {
        text.push_str("No import, call, inheritance or test relations found. Try search_code with the file's main symbol, or grep for its module name.\n");
    }
    Ok((
        RelatedFilesOut {
            repo,
            path,
            files: out_files,
            total_count: total as u64,
        },
        text,
    ))
}
