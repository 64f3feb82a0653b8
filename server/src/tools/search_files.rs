//! `search_files`: paths by glob or regex, with language and size.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::*;
use crate::cursor;
use crate::error::{codes, ToolError};
use crate::state::State;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "Find files by path: a glob like \"**/models/*.py\" (or a regex with regex: true). Returns paths with language and size, no content.";

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

pub fn run(st: &State, a: SearchFilesArgs) -> Result<(SearchFilesOut, String), ToolError> {
    if a.pattern.trim().is_empty() {
        return Err(ToolError::invalid_argument(
            "empty pattern",
            "pass a glob like \"**/*.py\" or \"models/*.py\", or a regex with regex: true",
        ));
    }
    let snaps = st.select(a.repo.as_deref())?;
    let limit = limit_of(a.limit, 100, MAX_LIMIT)?;
    let matcher: Box<dyn Fn(&str) -> bool> = if a.regex.unwrap_or(false) {
        let re = regex::Regex::new(&a.pattern).map_err(|e| {
            ToolError::new(
                codes::INVALID_PATTERN,
                format!("invalid regex: {e}"),
                "fix the regex, or pass a glob without regex: true",
            )
        })?;
        Box::new(move |p| re.is_match(p))
    } else if let Some([suffix]) = crate::grep::ext_globs(&[a
        .pattern
        .strip_prefix("**/")
        .unwrap_or(&a.pattern)
        .to_string()])
    .as_deref()
    {
        // `*.ext` and `**/*.ext` select the paths ending in `.ext`: a suffix
        // check instead of the glob matcher (the same paths; tested below).
        let suffix = suffix.clone();
        Box::new(move |p: &str| p.ends_with(suffix.as_str()))
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
    let ids: Vec<&str> = snaps.iter().map(|s| s.id()).collect();
    let fp = cursor::fingerprint(
        "search_files",
        &format!("{:?} {:?} {:?}", a.pattern, a.regex, a.lang),
        &ids,
    );
    let start = offset_of(a.cursor.as_deref(), &fp)?;
    // Every match is counted; only the page's are built.
    let mut total = 0usize;
    let mut page: Vec<FileOut> = Vec::new();
    for (r, f) in snaps
        .iter()
        .flat_map(|s| s.visible_files().map(move |(_, f)| (s.repo(), f)))
        .filter(|(_, f)| a.lang.as_ref().is_none_or(|l| &f.language == l) && matcher(&f.path))
    {
        if total >= start && page.len() < limit {
            page.push(FileOut {
                repo: r.to_string(),
                path: f.path.clone(),
                line: 1,
                end_line: f.lines.max(1) as u64,
                language: f.language.clone(),
                size_bytes: f.size,
                is_test: f.is_test,
            });
        }
        total += 1;
    }
    let labels = RepoLabels::new(st, a.repo.as_deref());
    let (page, text, next_cursor) = budget_page(
        page,
        total as u64,
        start,
        &fp,
        format!("{total} files match\n"),
        |f| {
            labels.line(
                &f.repo,
                format!("{} ({}, {} bytes)\n", f.path, f.language, f.size_bytes),
            )
        },
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::fixture::{args, state};
    use serde_json::json;

    #[test]
    fn globs_and_regexes_select_paths() {
        let st = state();
        let out = run(&st, args(json!({"pattern": "**/*.py"}))).unwrap().0;
        let paths: Vec<&str> = out.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["app/models.py", "app/util.py", "tests/test_util.py"]
        );
        assert!(out.files[2].is_test && !out.files[0].is_test);
        let out = run(&st, args(json!({"pattern": "\\.(rs|md)$", "regex": true})))
            .unwrap()
            .0;
        assert_eq!(out.total_count, 2);
        let out = run(&st, args(json!({"pattern": "**/*", "lang": "rust"})))
            .unwrap()
            .0;
        assert_eq!(out.files.len(), 1);
        assert_eq!(out.files[0].path, "src/lib.rs");
    }

    /// `*.ext` globs (checked by suffix) find what the same glob spelled
    /// so the matcher must run (`*.[p]y`) finds, page by page.
    #[test]
    fn extension_globs_match_the_glob_matcher() {
        let st = state();
        let paths = |pattern: &str, limit: u32| {
            let mut got = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let mut a = json!({"pattern": pattern, "limit": limit});
                if let Some(c) = &cursor {
                    a["cursor"] = json!(c);
                }
                let out = run(&st, args(a)).unwrap().0;
                got.extend(out.files.iter().map(|f| f.path.clone()));
                match out.next_cursor {
                    Some(c) => cursor = Some(c),
                    None => return (got, out.total_count),
                }
            }
        };
        for (fast, slow) in [
            ("*.py", "*.[p]y"),
            ("**/*.py", "**/*.[p]y"),
            ("*.md", "*.[m]d"),
            ("*.rs", "*.[r]s"),
        ] {
            let (a, ta) = paths(fast, 1);
            let (b, tb) = paths(slow, 100);
            assert_eq!((a.clone(), ta), (b, tb), "{fast} vs {slow}");
            assert!(!a.is_empty(), "{fast}");
        }
    }
}
