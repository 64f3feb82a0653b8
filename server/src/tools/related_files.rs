//! `related_files`: what else to read for a file, ranked with reasons.

use super::limit_of;
use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{codes, ToolError};
use crate::snapshot::Snapshot;
use crate::state::State;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "What else to read for a file, ranked with reasons: files it imports, files importing it, calls / called by, inheritance,\n\
    files using its names, and its tests. {\"path\": \"django/db/models/query.py\"}; {\"include_tests\": \"exclude\"} leaves tests out.";

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
    /// include (default) | exclude | only: test files among the related ones.
    #[serde(default)]
    pub include_tests: Option<String>,
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
        .filter(|&i| st.snaps[i].file_index(path).is_some())
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
    let tests: Option<bool> = match a.include_tests.as_deref().unwrap_or("include") {
        "include" => None,
        "exclude" => Some(false),
        "only" => Some(true),
        other => {
            return Err(ToolError::invalid_argument(
                format!("include_tests {other:?} is not one of the values"),
                "use include (default), exclude or only",
            ))
        }
    };
    let si = one_repo(st, a.repo.as_deref(), &path)?;
    let snap = &st.snaps[si];
    let repo = snap.repo().to_string();
    let dir = path.rsplit_once('/').map(|x| x.0).unwrap_or("");
    let mut score = Scores {
        of: HashMap::new(),
        this: &path,
    };
    by_relations(st, snap, &repo, &path, dir, &mut score)?;
    by_test_names(snap, &path, &mut score);
    let mut files: Vec<(String, (f32, Vec<String>))> = score
        .of
        .into_iter()
        .filter(|(f, _)| {
            tests.is_none_or(|want| {
                snap.file_index(f)
                    .is_some_and(|i| snap.files[i as usize].is_test == want)
            })
        })
        .collect();
    files.sort_by(|a, b| b.1 .0.partial_cmp(&a.1 .0).unwrap().then(a.0.cmp(&b.0)));
    let total = files.len();
    let eng = st.engine();
    let out_files: Vec<RelatedFile> = files
        .into_iter()
        .take(limit)
        .map(|(f, (s, reasons))| {
            let (line, end_line) = snap
                .file_index(&f)
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

/// Related files with their summed score and up to four reasons.
struct Scores<'a> {
    of: HashMap<String, (f32, Vec<String>)>,
    /// The file asked about (never related to itself).
    this: &'a str,
}

impl Scores<'_> {
    fn add(&mut self, f: String, s: f32, why: String) {
        if f == self.this || f.is_empty() {
            return;
        }
        let e = self.of.entry(f).or_insert((0.0, Vec::new()));
        e.0 += s;
        if !e.1.contains(&why) && e.1.len() < 4 {
            e.1.push(why);
        }
    }
}

/// Imports, importers, calls both ways, inheritance both ways and users of
/// its names, from the store.
fn by_relations(
    st: &State,
    snap: &Snapshot,
    repo: &str,
    path: &str,
    dir: &str,
    score: &mut Scores,
) -> Result<(), ToolError> {
    let mut add = |f: String, s: f32, why: String| score.add(f, s, why);
    let store = &st.store;
    // Imports (resolved files; Go: package directories).
    for row in store.file_imports(repo, path)? {
        let dst = row.path;
        if snap.file_index(&dst).is_some() {
            add(dst, 3.0, "imports".into());
        } else {
            let prefix = format!("{dst}/");
            for f in snap
                .visible_files()
                .map(|(_, f)| f)
                .filter(|f| {
                    f.path.starts_with(&prefix)
                        && !f.is_test
                        && !f.path[prefix.len()..].contains('/')
                })
                .take(3)
            {
                add(f.path.clone(), 1.5, format!("imports package {dst}"));
            }
        }
    }
    for row in store.file_importers(repo, path, dir)? {
        add(row.path, 2.0, "imported by".into());
    }
    for row in store.file_callees(repo, path)? {
        let n = row.count as f32;
        add(
            row.path,
            1.0 + n.ln_1p(),
            format!("calls {} ({}x)", row.name, n),
        );
    }
    for row in store.file_callers(repo, path)? {
        let n = row.count as f32;
        add(
            row.path,
            1.0 + n.ln_1p(),
            format!("called by ({}x, e.g. {})", n, row.name),
        );
    }
    for row in store.file_bases(repo, path)? {
        add(row.path, 2.5, format!("extends {}", row.name));
    }
    for row in store.file_subclasses(repo, path)? {
        add(row.path, 2.0, format!("extends its {}", row.name));
    }
    // Files using names this file defines (distinctive names only: defined in at most 2 files).
    for row in store.file_name_users(repo, path)? {
        let n = row.count as f32;
        add(
            row.path,
            0.5 + 0.5 * n.min(6.0),
            if row.count > 1 {
                format!(
                    "uses its {} and {} more of its names",
                    row.name,
                    row.count - 1
                )
            } else {
                format!("uses its {}", row.name)
            },
        );
    }
    Ok(())
}

/// Tests by name: test_x.py, x_test.go, x.test.ts, x_spec.rb, tests/x.rs,
/// XTest.java (and, for a test, the code under test).
fn by_test_names(snap: &Snapshot, path: &str, score: &mut Scores) {
    let mut add = |f: String, s: f32, why: String| score.add(f, s, why);
    let base = path.rsplit('/').next().unwrap_or(path);
    let stem = base.split('.').next().unwrap_or(base).to_string();
    let this_is_test = snap.files[snap.file_index(path).unwrap() as usize].is_test;
    if stem.len() >= 3 {
        let sl = stem.to_lowercase();
        for (_, f) in snap.visible_files() {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::fixture::{args, state};
    use serde_json::json;

    #[test]
    fn imports_and_tests_come_with_reasons() {
        let st = state();
        let out = run(&st, args(json!({"path": "app/util.py"}))).unwrap().0;
        let get = |p: &str| out.files.iter().find(|f| f.path == p);
        let models = get("app/models.py").expect("models.py imports util.py");
        assert!(
            models.reasons.iter().any(|r| r == "imported by"),
            "{:?}",
            models.reasons
        );
        let test = get("tests/test_util.py").expect("its test");
        assert!(
            test.reasons.iter().any(|r| r == "its test"),
            "{:?}",
            test.reasons
        );
        assert!(get("app/util.py").is_none(), "never related to itself");
        let e = run(&st, args(json!({"path": "app/nope.py"}))).unwrap_err();
        assert_eq!(e.code, codes::NOT_FOUND);
    }
}
