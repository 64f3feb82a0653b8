//! The resources: `codeindex://health` and the condensed markdown of
//! `codeindex://relevant{?path,query}`, composed from two tools.

use crate::error::ToolError;
use crate::state::State;
use crate::tools::{related_files, search_code};

pub const HEALTH_URI: &str = "codeindex://health";
pub const RELEVANT_TEMPLATE: &str = "codeindex://relevant{?path,query}";
pub(crate) const RELEVANT_PREFIX: &str = "codeindex://relevant";

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

/// Condensed markdown of what to read next (the `codeindex://relevant` resource).
pub fn relevant_markdown(
    st: &State,
    path: Option<&str>,
    query: Option<&str>,
    repo: Option<&str>,
) -> Result<String, ToolError> {
    let mut md = String::new();
    if let Some(p) = path.filter(|p| !p.is_empty()) {
        let (out, _) = related_files::run(
            st,
            related_files::RelatedFilesArgs {
                path: p.to_string(),
                repo: repo.map(String::from),
                limit: Some(8),
                include_tests: None,
            },
        )?;
        md.push_str(&format!("## Read next for `{}`\n", out.path));
        if out.files.is_empty() {
            md.push_str("- (no import, call, inheritance or test relations)\n");
        }
        for f in &out.files {
            md.push_str(&format!("- `{}` — {}\n", f.path, f.reasons.join("; ")));
        }
    }
    if let Some(q) = query.filter(|q| !q.trim().is_empty()) {
        let (out, _) = search_code::run(
            st,
            search_code::SearchCodeArgs {
                query: q.to_string(),
                mode: None,
                repo: repo.map(String::from),
                module: None,
                lang: None,
                path: None,
                include_tests: Some("exclude".into()),
                limit: Some(5),
                cursor: None,
                max_per_file: None,
            },
        )?;
        md.push_str(&format!(
            "\n## Most relevant to \"{q}\" ({} query)\n",
            out.query_type
        ));
        for h in &out.results {
            md.push_str(&format!(
                "- `{}:{}-{}`{}\n",
                h.path,
                h.line,
                h.end_line,
                h.symbol
                    .as_deref()
                    .map(|s| format!(" {s}"))
                    .unwrap_or_default()
            ));
        }
    }
    if md.is_empty() {
        return Err(ToolError::invalid_argument(
            "codeindex://relevant needs path or query",
            "read codeindex://relevant?path=src/app.py or codeindex://relevant?query=how+are+sessions+stored",
        ));
    }
    Ok(md)
}
