//! The embedding inputs of a built snapshot, read back from its tables (for
//! `upgrade-embeddings`): the same inputs, in the same order, as `index`
//! queued when it built the snapshot.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use code_index_schemas::table::{Batch, Nullable};
use code_index_schemas::{chunks_table, files_table, patterns_table, symbols_table, Table};

use super::{inputs, key, DefSpan, Pending};
use crate::chunk::Chunk;
use crate::error::{codes, Result};
use crate::language::Lang;
use crate::previous::Batches;

/// The embedding inputs of a snapshot's chunks (from its tables), in table order.
pub fn snapshot_items(dir: &Path, model_id: &str) -> Result<Vec<Pending>> {
    let (content, parsed) = file_contents(dir)?;
    let defs = definitions(dir)?;
    let mut items = chunk_items(dir, model_id, &content, &parsed, &defs)?;
    // Pattern chunks, as `index` embeds them (after the chunks, in table order).
    if dir.join("patterns.parquet").is_file() {
        pattern_items(dir, model_id, &mut items)?;
    }
    Ok(items)
}

/// Open a table of the snapshot. Unreadable files are E_PREVIOUS_INVALID (as
/// they have always been here); missing or retyped columns E_SNAPSHOT_INVALID.
fn open(dir: &Path, table: &Table, columns: &[&str]) -> Result<Batches> {
    crate::previous::open_table(
        dir,
        table,
        columns,
        codes::SNAPSHOT_INVALID,
        "rebuild the snapshot with `code-indexer index`",
    )
}

/// Every file's content by path, and the paths of code in a language with a
/// grammar here ([`Lang::is_code`], as `index` decides it).
fn file_contents(dir: &Path) -> Result<(HashMap<String, String>, HashSet<String>)> {
    let mut content: HashMap<String, String> = HashMap::new();
    let mut parsed: HashSet<String> = HashSet::new();
    for b in open(dir, &files_table(), &["path", "content", "language"])? {
        let b = b?;
        let (p, c, l) = (b.str("path"), b.str("content"), b.str("language"));
        for i in 0..b.num_rows() {
            if Lang::from_id(l.value(i)).is_code() {
                parsed.insert(p.value(i).to_string());
            }
            content.insert(p.value(i).to_string(), c.value(i).to_string());
        }
    }
    Ok((content, parsed))
}

/// A definition of the symbols table, owned (see [`DefSpan`]).
struct Def {
    kind: String,
    name: String,
    start: u64,
    end: u64,
    doc: Option<String>,
    signature: Option<String>,
    container: Option<String>,
}

impl Def {
    fn span(&self) -> DefSpan<'_> {
        DefSpan {
            kind: &self.kind,
            name: &self.name,
            start: self.start,
            end: self.end,
            doc: self.doc.as_deref(),
            signature: self.signature.as_deref(),
            container: self.container.as_deref(),
        }
    }
}

/// Definitions per file, in table order, for the signatures and windows.
fn definitions(dir: &Path) -> Result<HashMap<String, Vec<Def>>> {
    let mut defs: HashMap<String, Vec<Def>> = HashMap::new();
    for b in open(
        dir,
        &symbols_table(),
        &[
            "path",
            "kind",
            "name",
            "start_byte",
            "end_byte",
            "doc",
            "signature",
            "container",
        ],
    )? {
        let b = b?;
        let (p, k, n, sb, eb, d, sg, ct) = (
            b.str("path"),
            b.str("kind"),
            b.str("name"),
            b.i64("start_byte"),
            b.i64("end_byte"),
            b.str("doc"),
            b.str("signature"),
            b.str("container"),
        );
        for i in 0..b.num_rows() {
            defs.entry(p.value(i).to_string()).or_default().push(Def {
                kind: k.value(i).to_string(),
                name: n.value(i).to_string(),
                start: sb.value(i) as u64,
                end: eb.value(i) as u64,
                doc: d.opt(i).map(str::to_string),
                signature: sg.opt(i).map(str::to_string),
                container: ct.opt(i).map(str::to_string),
            });
        }
    }
    Ok(defs)
}

/// The inputs of every chunk of the chunks table, in table order.
fn chunk_items(
    dir: &Path,
    model_id: &str,
    content: &HashMap<String, String>,
    parsed: &HashSet<String>,
    defs: &HashMap<String, Vec<Def>>,
) -> Result<Vec<Pending>> {
    let mut items = Vec::new();
    let empty = String::new();
    for b in open(
        dir,
        &chunks_table(),
        &[
            "kind",
            "chunk_id",
            "path",
            "context_header",
            "text",
            "start_byte",
            "end_byte",
            "is_test",
        ],
    )? {
        let b = b?;
        let path = b.str("path");
        let is_test = b.bool("is_test");
        for i in 0..b.num_rows() {
            let content_of = content.get(path.value(i)).unwrap_or(&empty);
            let c = chunk_at(&b, i, content_of);
            let spans: Vec<DefSpan> = defs
                .get(path.value(i))
                .map(|v| v.iter().map(Def::span).collect())
                .unwrap_or_default();
            let code = parsed.contains(path.value(i));
            for input in inputs(&c, is_test.value(i), code, content_of, &spans) {
                items.push(Pending {
                    id: c.id,
                    key: key(model_id, &input),
                    input,
                    reused: false,
                });
            }
        }
    }
    Ok(items)
}

/// Row `i` of a chunks batch as a [`Chunk`], with what its inputs need. Only
/// class summaries store their text: every other chunk's is its byte span
/// of `content`, its file's content.
fn chunk_at(b: &Batch, i: usize, content: &str) -> Chunk {
    let (kind, id, header, text, sb, eb) = (
        b.str("kind"),
        b.i64("chunk_id"),
        b.str("context_header"),
        b.str("text"),
        b.i64("start_byte"),
        b.i64("end_byte"),
    );
    let body = match text.opt(i) {
        Some(t) => t.to_string(),
        None => content
            .get(sb.value(i) as usize..eb.value(i) as usize)
            .unwrap_or("")
            .to_string(),
    };
    Chunk {
        id: id.value(i),
        chunk_type: String::new(),
        kind: kind.value(i).to_string(),
        symbol: None,
        heading_path: None,
        start_line: 0,
        end_line: 0,
        start_byte: sb.value(i) as u64,
        end_byte: eb.value(i) as u64,
        token_count: 0,
        context_header: header.value(i).to_string(),
        text: body,
    }
}

/// The pattern chunks' inputs (their text as is), appended to `items`.
fn pattern_items(dir: &Path, model_id: &str, items: &mut Vec<Pending>) -> Result<()> {
    for b in open(dir, &patterns_table(), &["pattern_id", "text"])? {
        let b = b?;
        let (id, text) = (b.i64("pattern_id"), b.str("text"));
        for i in 0..b.num_rows() {
            let Some(input) = text.opt(i) else {
                continue;
            };
            let input = input.to_string();
            items.push(Pending {
                id: id.value(i),
                key: key(model_id, &input),
                input,
                reused: false,
            });
        }
    }
    Ok(())
}
