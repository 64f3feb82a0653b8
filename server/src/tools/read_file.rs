//! `read_file`: lines of a file from the snapshot (never from disk), cut to
//! the response budget.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::*;
use crate::error::{codes, ToolError};
use crate::state::State;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "Read lines of a file from the snapshot (never from disk): {\"path\": \"src/app.py\", \"start_line\": 120, \"end_line\": 180}.\n\
    Returns start_line..end_line (default 400 lines) within 24 KB; truncated: true means the lines asked for (to end_line, or to the end of the file without it) did not all fit: call again from end_line + 1.";

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
    /// Not every line asked for came back (the range to `end_line`, or to the
    /// end of the file when `end_line` was omitted, went past the budget, or
    /// the one line is clipped): call again with start_line = end_line + 1.
    pub truncated: bool,
    /// The one line returned was longer than the response budget and is cut
    /// (minified code); grep within it instead.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub clipped: bool,
    /// Secrets the build redacted in this file (their bytes read as `*`);
    /// absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redacted_secrets: Option<u32>,
    pub content: String,
}

pub fn run(st: &State, a: ReadFileArgs) -> Result<(ReadFileOut, String), ToolError> {
    if let (Some(s), Some(e)) = (a.start_line, a.end_line) {
        if e < s {
            return Err(ToolError::invalid_argument(
                format!("end_line {e} is before start_line {s}"),
                "pass end_line ≥ start_line, or leave end_line out",
            ));
        }
    }
    let snaps = st.select(a.repo.as_deref())?;
    let path = a.path.trim_start_matches("./");
    let Some((repo, f)) = snaps
        .iter()
        .find_map(|s| s.file_index(path).map(|i| (s.repo(), &s.files[i as usize])))
    else {
        let base = path.rsplit('/').next().unwrap_or(path);
        let similar: Vec<&str> = snaps
            .iter()
            .flat_map(|s| s.visible_files().map(|(_, f)| f))
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
            redacted_secrets: None,
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
    let asked_end = a.end_line.map_or(total, |e| e.min(total));
    let out = ReadFileOut {
        repo: repo.to_string(),
        path: f.path.clone(),
        line: start,
        end_line: end,
        total_lines: total,
        truncated: clipped || end < asked_end,
        clipped,
        redacted_secrets: (f.secrets > 0).then_some(f.secrets),
        content: content.clone(),
    };
    // With more than one repository loaded, say which one answered, and
    // whether another holds the same path.
    let mut repos: Vec<&str> = snaps.iter().map(|s| s.repo()).collect();
    repos.sort_unstable();
    repos.dedup();
    let also: Vec<&str> = repos
        .iter()
        .copied()
        .filter(|r| *r != repo)
        .filter(|r| {
            snaps
                .iter()
                .any(|s| s.repo() == *r && s.file_index(&f.path).is_some())
        })
        .collect();
    let from = if repos.len() > 1 {
        format!(
            " (repo {repo}{})",
            if also.is_empty() {
                String::new()
            } else {
                format!("; also in {}: pass repo to read that one", also.join(", "))
            }
        )
    } else {
        String::new()
    };
    let mut text = format!(
        "{}:{}-{} of {}{from}\n{}",
        f.path, start, end, total, content
    );
    if out.truncated && !clipped {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[more lines: continue with start_line {}]\n",
            end + 1
        ));
    }
    if f.secrets > 0 {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[{} secret(s) in this file were redacted when it was indexed: those bytes read as *]\n",
            f.secrets
        ));
    }
    if clipped {
        text.push_str(&format!(
            "\n[line {end} clipped at {RESPONSE_BUDGET_BYTES} bytes; grep within it instead]\n"
        ));
    }
    Ok((out, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::codes;
    use crate::tools::fixture::{args, line_of, state, FILES};
    use serde_json::json;

    #[test]
    fn reads_the_lines_asked_for() {
        let st = state();
        let l = line_of("app/util.py", "def slugify");
        let out = run(
            &st,
            args(json!({"path": "app/util.py", "start_line": l, "end_line": l + 1})),
        )
        .unwrap()
        .0;
        let want: String = FILES[1]
            .1
            .split_inclusive('\n')
            .skip(l as usize - 1)
            .take(2)
            .collect();
        assert_eq!(out.content, want);
        assert_eq!((out.line, out.end_line), (l, l + 1));
        // Every line asked for came back.
        assert!(!out.truncated);
        // Without end_line, the rest of the file was asked for.
        let rest = run(&st, args(json!({"path": "app/util.py", "start_line": l})))
            .unwrap()
            .0;
        assert_eq!(rest.truncated, rest.end_line < rest.total_lines);
    }

    #[test]
    fn bad_ranges_and_paths_are_coded() {
        let st = state();
        let e = run(
            &st,
            args(json!({"path": "app/util.py", "start_line": 5, "end_line": 2})),
        )
        .unwrap_err();
        assert_eq!(e.code, codes::INVALID_ARGUMENT);
        let e = run(&st, args(json!({"path": "app/util.py", "start_line": 500}))).unwrap_err();
        assert_eq!(e.code, codes::INVALID_ARGUMENT);
        let e = run(&st, args(json!({"path": "lib/util.py"}))).unwrap_err();
        assert_eq!(e.code, codes::NOT_FOUND);
        assert!(e.hint.contains("app/util.py"), "{}", e.hint);
    }
}
