//! Paging and budgets shared by every listing tool: what `limit` means, how
//! a cursor holds an offset, and where a page is cut so its text fits the
//! response budget.

use crate::cursor;
use crate::error::{codes, ToolError};

/// Bytes of rendered results per response (~6k tokens at ~4 bytes a token).
pub const RESPONSE_BUDGET_BYTES: usize = 24_000;
/// Bytes of structured content per response (the JSON the client may also show the model).
pub const STRUCTURED_BUDGET_BYTES: usize = 40_000;

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
pub(crate) fn budget_page<T>(
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

/// The one meaning of `limit`: results per page, `default` when absent,
/// 1..=`max` (the tool's schema says the same range, so the argument check
/// refuses it first; this guards the in-process callers).
pub(crate) fn limit_of(v: Option<u32>, default: u32, max: usize) -> Result<usize, ToolError> {
    let l = v.unwrap_or(default);
    if l == 0 || l as usize > max {
        return Err(ToolError::invalid_argument(
            format!("limit {l} is out of range"),
            format!("use 1..={max} and page with next_cursor"),
        ));
    }
    Ok(l as usize)
}

/// Most results per page of a listing tool (grep, search, symbols, files).
pub const MAX_LIMIT: usize = crate::grep::MAX_LIMIT;

/// With a selection of more than one repository, a line `== repo <name> ==`
/// before each run of results from one repository, so the text channel says
/// where a path is (two repos may hold the same path); nothing otherwise.
pub(crate) struct RepoLabels {
    on: bool,
    last: std::cell::RefCell<Option<String>>,
}

impl RepoLabels {
    /// Labels for the repositories `repo` selects (as the tools' `repo`).
    pub(crate) fn new(st: &crate::state::State, repo: Option<&str>) -> RepoLabels {
        let on = st.select(repo).is_ok_and(|v| {
            let mut names: Vec<&str> = v.iter().map(|s| s.repo()).collect();
            names.sort_unstable();
            names.dedup();
            names.len() > 1
        });
        RepoLabels {
            on,
            last: std::cell::RefCell::new(None),
        }
    }

    /// `line`, after the repository's label when it starts a new run.
    pub(crate) fn line(&self, repo: &str, line: String) -> String {
        let mut last = self.last.borrow_mut();
        if !self.on || last.as_deref() == Some(repo) {
            return line;
        }
        *last = Some(repo.to_string());
        format!("== repo {repo} ==\n{line}")
    }
}
