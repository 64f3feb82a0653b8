//! `find_references`: usages of a name grouped by file: parsed references
//! plus whole-word text matches the parser did not classify.

use crate::grep::{self, GrepMatch, GrepRequest};

use schemars::JsonSchema;
use serde::Serialize;

use std::collections::{BTreeMap, HashMap, HashSet};

use super::*;
use crate::cursor;
use crate::error::ToolError;
use crate::state::State;

/// The tool's description (what the agent reads in tools/list).
pub const DESCRIPTION: &str = "Where is X used? Usages grouped by file with the enclosing symbol: parsed references (\"reference\", with their role: call, type, field, import)\n\
    plus whole-word text matches the parser did not classify (\"text\": comments, strings, templates). {\"symbol\": \"get_or_create\"}.";

/// Most definitions find_references reads to tell definitions from usages.
const MAX_DEFINITIONS: usize = 200;
/// Most definitions it lists, on the first page only (find_definitions pages
/// through all of them).
const LISTED_DEFINITIONS: usize = 20;

#[derive(Debug, Serialize, JsonSchema)]
pub struct UsageOut {
    pub line: u64,
    pub end_line: u64,
    pub column: u64,
    /// "reference": a parsed identifier occurrence (with its role); "text": a word-boundary content match the parser did not classify (comments, strings, other languages).
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ref_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enclosing_symbol: Option<String>,
    pub text: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileUsagesOut {
    pub repo: String,
    pub path: String,
    pub line: u64,
    pub end_line: u64,
    pub usages: Vec<UsageOut>,
    /// Usages in this file left off the page to keep it within budget (narrow with `path`).
    #[serde(skip_serializing_if = "is_zero")]
    pub more_usages: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReferencesOut {
    pub symbol: String,
    /// The name's definitions (at most 20, on the first page only; find_definitions lists them all).
    pub definitions: Vec<SymbolRow>,
    /// How many definitions the name has (up to 200 counted).
    pub total_definitions: u64,
    pub files: Vec<FileUsagesOut>,
    pub total_files: u64,
    pub total_usages: u64,
    pub has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

pub fn run(st: &State, a: SymbolArgs) -> Result<(ReferencesOut, String), ToolError> {
    let (definitions, _) = definitions(st, &a, MAX_DEFINITIONS, 0)?;
    let simple = a
        .symbol
        .trim()
        .rsplit(['.', ':'])
        .next()
        .unwrap_or("")
        .to_string();
    if simple.is_empty() {
        return Err(ToolError::invalid_argument(
            "empty symbol name",
            "pass a name like \"save\"",
        ));
    }
    let snaps = st.select(a.repo.as_deref())?;
    let repos: Vec<String> = snaps.iter().map(|s| s.repo().to_string()).collect();
    let limit = limit_of(a.limit, 20, MAX_LIMIT)?;
    // Parsed references, then word-boundary text matches on other lines.
    let refs = st.store.references(&simple, &repos, a.path.as_deref())?;
    let req = GrepRequest {
        pattern: simple.clone(),
        fixed_string: true,
        case_sensitive: Some(true),
        whole_word: true,
        path: a.path.clone(),
        limit: grep::MAX_LIMIT,
        budget: grep::SCAN_BUDGET,
        ..Default::default()
    };
    let (compiled, files) = grep::compile_scoped(&req, &snaps)?;
    let def_lines: HashSet<(String, String, u64)> = definitions
        .iter()
        .map(|d| (d.repo.clone(), d.path.clone(), d.name_line))
        .collect();
    let texts: Vec<GrepMatch> = {
        use rayon::prelude::*;
        files
            .par_iter()
            .flat_map_iter(|(repo, f)| compiled.search_file(repo, f))
            .collect()
    };
    let by_file = usages_by_file(refs, texts, &def_lines);
    let total_files = by_file.len() as u64;
    let total_usages = by_file.values().map(|v| v.len() as u64).sum();
    let ids: Vec<&str> = snaps.iter().map(|s| s.id()).collect();
    let fp = cursor::fingerprint(
        "find_references",
        &format!("{:?} {:?} {:?}", a.symbol, a.path, a.kind),
        &ids,
    );
    let offset = offset_of(a.cursor.as_deref(), &fp)?;
    let mut text = format!(
        "{total_usages} usage(s) of {simple} in {total_files} file(s); {} definition(s)\n",
        definitions.len()
    );
    let labels = RepoLabels::new(st, a.repo.as_deref());
    let (files_out, end) = files_page(by_file, offset, limit, &labels, &mut text);
    let total_definitions = definitions.len() as u64;
    let mut definitions = definitions;
    if offset > 0 {
        definitions.clear();
    } else if definitions.len() > LISTED_DEFINITIONS {
        definitions.truncate(LISTED_DEFINITIONS);
        text.push_str(&format!(
            "({total_definitions} definitions; the first {LISTED_DEFINITIONS} are listed: find_definitions pages through them)\n"
        ));
    }
    let next_cursor = ((end as u64) < total_files).then(|| cursor::encode(&fp, &[end as u64]));
    let hint = (total_usages == 0 && total_definitions == 0).then(|| not_found_hint(st, &simple));
    Ok((
        ReferencesOut {
            symbol: a.symbol,
            definitions,
            total_definitions,
            files: files_out,
            total_files,
            total_usages,
            has_more: next_cursor.is_some(),
            next_cursor,
            hint,
        },
        text,
    ))
}

/// Usages by (repo, path): parsed references, then whole-word text matches
/// on the lines no reference or definition holds.
fn usages_by_file(
    refs: Vec<crate::store::RefRow>,
    texts: Vec<GrepMatch>,
    def_lines: &HashSet<(String, String, u64)>,
) -> BTreeMap<(String, String), Vec<UsageOut>> {
    let mut by_file: BTreeMap<(String, String), Vec<UsageOut>> = BTreeMap::new();
    let mut ref_lines: HashSet<(String, String, u64)> = HashSet::new();
    let text_of: HashMap<(String, String, u64), String> = texts
        .iter()
        .map(|m| ((m.repo.clone(), m.path.clone(), m.line), m.text.clone()))
        .collect();
    for r in refs {
        if def_lines.contains(&(r.repo.clone(), r.path.clone(), r.line)) {
            continue;
        }
        ref_lines.insert((r.repo.clone(), r.path.clone(), r.line));
        let text = text_of
            .get(&(r.repo.clone(), r.path.clone(), r.line))
            .cloned()
            .unwrap_or_default();
        by_file
            .entry((r.repo.clone(), r.path.clone()))
            .or_default()
            .push(UsageOut {
                line: r.line,
                end_line: r.line,
                column: r.column,
                source: "reference".into(),
                ref_kind: Some(r.ref_kind),
                enclosing_symbol: r.enclosing_symbol,
                text,
            });
    }
    for m in texts {
        let key = (m.repo.clone(), m.path.clone(), m.line);
        if ref_lines.contains(&key) || def_lines.contains(&key) {
            continue;
        }
        by_file
            .entry((m.repo.clone(), m.path.clone()))
            .or_default()
            .push(UsageOut {
                line: m.line,
                end_line: m.end_line,
                column: m.submatches.first().map(|s| s.column).unwrap_or(1),
                source: "text".into(),
                ref_kind: None,
                enclosing_symbol: None,
                text: m.text,
            });
    }
    by_file
}

/// The files of one page from `offset` that fit the response budget after
/// `text`, their lines added to it, and where the next page starts.
fn files_page(
    by_file: BTreeMap<(String, String), Vec<UsageOut>>,
    offset: usize,
    limit: usize,
    labels: &RepoLabels,
    text: &mut String,
) -> (Vec<FileUsagesOut>, usize) {
    let mut files_out = Vec::new();
    let mut end = offset;
    let mut json_bytes = 0;
    for ((repo, path), mut usages) in by_file.into_iter().skip(offset).take(limit) {
        usages.sort_by_key(|u| (u.line, u.column));
        let first = files_out.is_empty();
        let mut piece = labels.line(&repo, format!("{path}\n"));
        let mut piece_json = path.len() + repo.len() + 80;
        let mut kept = 0;
        for u in &usages {
            let line = format!(
                "  {}:{} [{}{}] {}\n",
                u.line,
                u.column,
                u.source,
                u.enclosing_symbol
                    .as_deref()
                    .map(|e| format!(" in {e}"))
                    .unwrap_or_default(),
                u.text.trim()
            );
            let line_json = serde_json::to_string(u).map_or(0, |j| j.len() + 1);
            // One file alone may hold more usages than a page: cut it.
            if first
                && kept > 0
                && (text.len() + piece.len() + line.len() > RESPONSE_BUDGET_BYTES
                    || piece_json + line_json > STRUCTURED_BUDGET_BYTES / 2)
            {
                break;
            }
            piece.push_str(&line);
            piece_json += line_json;
            kept += 1;
        }
        if !first
            && (text.len() + piece.len() > RESPONSE_BUDGET_BYTES
                || json_bytes + piece_json > STRUCTURED_BUDGET_BYTES / 2)
        {
            break;
        }
        let more_usages = (usages.len() - kept) as u64;
        usages.truncate(kept);
        if more_usages > 0 {
            piece.push_str(&format!(
                "  ... {more_usages} more usage(s) in this file: narrow with path {path:?} and grep\n"
            ));
        }
        text.push_str(&piece);
        json_bytes += piece_json;
        files_out.push(FileUsagesOut {
            repo,
            path,
            line: usages.first().map(|u| u.line).unwrap_or(1),
            end_line: usages.last().map(|u| u.end_line).unwrap_or(1),
            usages,
            more_usages,
        });
        end += 1;
    }
    (files_out, end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::fixture::{args, line_of, state};
    use serde_json::json;

    #[test]
    fn usages_by_file_without_the_definition() {
        let st = state();
        let out = run(&st, args(json!({"symbol": "slugify"}))).unwrap().0;
        assert_eq!(out.definitions.len(), 1);
        let files: Vec<&str> = out.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(files, ["README.md", "app/models.py", "tests/test_util.py"]);
        let def = line_of("app/util.py", "def slugify");
        assert!(out
            .files
            .iter()
            .all(|f| f.path != "app/util.py" || f.usages.iter().all(|u| u.line != def)));
        let models = &out.files[1];
        assert!(models.usages.iter().all(|u| u.source == "reference"));
        assert_eq!(models.usages.len(), 3, "import and two calls");
        assert_eq!(out.files[0].usages[0].source, "text");
    }
}
