//! Reads a previous snapshot back into per-file analyses, so `--previous`
//! can skip parsing files whose content hash did not change. Only used when
//! the previous snapshot was built by the same tool version, schema and
//! config; otherwise the build is a full one (and says so).

use std::collections::HashMap;
use std::path::Path;

use code_index_schemas::table::{Batch, Nullable, StringArray, TableError, TableReader};
use code_index_schemas::{
    chunks_table, edges_table, files_table, references_table, symbols_table, Manifest, Table,
    FEATURE_VERSION, SCHEMA_VERSION,
};

use crate::analyze::{Analysis, FileRecord};
use crate::chunk::Chunk;
use crate::error::{codes, Code, Error, Result};
use crate::language::Lang;
use crate::parse::{Parsed, RawEdge, Reference, Symbol};

/// Previous analyses by path, with the content hash they were made from.
pub struct Previous {
    pub files: HashMap<String, Analysis>,
    pub snapshot_id: String,
}

/// Why a previous snapshot cannot be reused, if it cannot.
pub fn incompatibility(m: &Manifest, config_hash: &str) -> Option<String> {
    if m.schema_version != SCHEMA_VERSION || m.feature_version != FEATURE_VERSION {
        return Some(format!(
            "schema/feature version {}/{} differs from {SCHEMA_VERSION}/{FEATURE_VERSION}",
            m.schema_version, m.feature_version
        ));
    }
    if m.tool_version != crate::TOOL_VERSION {
        return Some(format!(
            "built by code-indexer {} (this is {})",
            m.tool_version,
            crate::TOOL_VERSION
        ));
    }
    if m.config_hash != config_hash {
        return Some("the configuration changed".to_string());
    }
    None
}

const HINT_OPEN: &str = "pass a complete snapshot to --previous, or drop the flag";

/// A `Result` iterator over a table's batches, its errors as this crate's.
pub type Batches = Box<dyn Iterator<Item = Result<Batch>>>;

/// Open the file of `table` in the snapshot `dir`, reading `columns` (checked
/// now against the table's definition). Unreadable files and their batches
/// are `E_PREVIOUS_INVALID`; a missing, retyped or NULL-holding column is
/// `column_code` with `column_hint`.
pub fn open_table(
    dir: &Path,
    table: &Table,
    columns: &[&str],
    column_code: Code,
    column_hint: &'static str,
) -> Result<Batches> {
    let to_error = move |e: TableError, hint: &str| match e {
        TableError::Open { path, source } => {
            Error::io(codes::PREVIOUS_INVALID, "cannot open", &path, source, hint)
        }
        e if e.is_column_error() => e.into_diagnostic(column_code, column_hint),
        e => e.into_diagnostic(codes::PREVIOUS_INVALID, hint),
    };
    let reader = TableReader::open_in(dir, table, columns)
        .map_err(|e| to_error(e, HINT_OPEN))?
        .batch_size(65536);
    Ok(Box::new(reader.map(move |b| {
        b.map_err(|e| to_error(e, "rebuild without --previous"))
    })))
}

/// [`open_table`] for `--previous`.
fn previous_table(dir: &Path, table: &Table, columns: &[&str]) -> Result<Batches> {
    open_table(dir, table, columns, codes::PREVIOUS_INVALID, HINT_OPEN)
}

/// Load the previous snapshot's rows for the files in `wanted` (path → content sha256).
pub fn load(dir: &Path, wanted: &HashMap<String, String>) -> Result<Previous> {
    let m = crate::snapshot::read_manifest(dir)?;
    let mut files = load_files(dir, wanted)?;
    add_symbols(dir, &mut files)?;
    add_references(dir, &mut files)?;
    add_edges(dir, &mut files)?;
    add_chunks(dir, &mut files)?;
    Ok(Previous {
        files,
        snapshot_id: m.snapshot_id,
    })
}

/// Every file's published content hash in the snapshot `dir` (path → sha256).
pub fn hashes(dir: &Path) -> Result<HashMap<String, String>> {
    let mut out = HashMap::new();
    for batch in previous_table(dir, &files_table(), &["path", "content_sha256"])? {
        let b = batch?;
        let (path, sha) = (b.str("path"), b.str("content_sha256"));
        for i in 0..b.num_rows() {
            out.insert(path.value(i).to_string(), sha.value(i).to_string());
        }
    }
    Ok(out)
}

/// The files whose content is unchanged (same sha256), with empty analyses.
fn load_files(dir: &Path, wanted: &HashMap<String, String>) -> Result<HashMap<String, Analysis>> {
    let mut files: HashMap<String, Analysis> = HashMap::new();
    for batch in previous_table(
        dir,
        &files_table(),
        &[
            "path",
            "content_sha256",
            "language",
            "size_bytes",
            "line_count",
            "is_test",
            "is_generated",
            "is_lossy",
            "secret_count",
            "content",
        ],
    )? {
        let b = batch?;
        let (path, sha, lang, size, lines) = (
            b.str("path"),
            b.str("content_sha256"),
            b.str("language"),
            b.i64("size_bytes"),
            b.i32("line_count"),
        );
        let (test, generated, lossy, secrets, content) = (
            b.bool("is_test"),
            b.bool("is_generated"),
            b.bool("is_lossy"),
            b.i32("secret_count"),
            b.str("content"),
        );
        for i in 0..b.num_rows() {
            let (p, sha) = (path.value(i), sha.value(i));
            if wanted.get(p).map(String::as_str) != Some(sha) {
                continue;
            }
            let rec = FileRecord {
                lang: Lang::from_id(lang.value(i)),
                size: size.value(i) as u64,
                line_count: lines.value(i) as u32,
                sha256: sha.to_string(),
                is_test: test.value(i),
                is_generated: generated.value(i),
                is_lossy: lossy.value(i),
                secret_count: secrets.value(i) as u32,
                content: content.value(i).to_string(),
                path: p.to_string(),
            };
            files.insert(
                p.to_string(),
                Analysis {
                    file: rec,
                    parsed: Parsed::default(),
                    chunks: Vec::new(),
                },
            );
        }
    }
    Ok(files)
}

/// Their definitions.
fn add_symbols(dir: &Path, files: &mut HashMap<String, Analysis>) -> Result<()> {
    let owned = |a: &StringArray, i: usize| a.opt(i).map(str::to_string);
    for batch in previous_table(
        dir,
        &symbols_table(),
        &[
            "path",
            "symbol_id",
            "name",
            "qualified_name",
            "kind",
            "container",
            "parent_id",
            "signature",
            "doc",
            "start_line",
            "end_line",
            "start_byte",
            "end_byte",
            "name_line",
        ],
    )? {
        let b = batch?;
        let (path, id, name, qualified, kind, container, parent) = (
            b.str("path"),
            b.i64("symbol_id"),
            b.str("name"),
            b.str("qualified_name"),
            b.str("kind"),
            b.str("container"),
            b.i64("parent_id"),
        );
        let (signature, doc, sl, el, sb, eb, nl) = (
            b.str("signature"),
            b.str("doc"),
            b.i32("start_line"),
            b.i32("end_line"),
            b.i64("start_byte"),
            b.i64("end_byte"),
            b.i32("name_line"),
        );
        for i in 0..b.num_rows() {
            let Some(a) = files.get_mut(path.value(i)) else {
                continue;
            };
            a.parsed.symbols.push(Symbol {
                id: id.value(i),
                name: name.value(i).to_string(),
                qualified_name: qualified.value(i).to_string(),
                kind: crate::parse::static_kind(kind.value(i)),
                container: owned(container, i),
                parent_id: parent.opt(i),
                signature: signature.value(i).to_string(),
                doc: owned(doc, i),
                start_line: sl.value(i) as u32,
                end_line: el.value(i) as u32,
                start_byte: sb.value(i) as u64,
                end_byte: eb.value(i) as u64,
                name_line: nl.value(i) as u32,
                // Not stored; only the chunker reads it, and chunks are reused too.
                lead_byte: sb.value(i) as u64,
            });
        }
    }
    Ok(())
}

/// Their references.
fn add_references(dir: &Path, files: &mut HashMap<String, Analysis>) -> Result<()> {
    for batch in previous_table(
        dir,
        &references_table(),
        &[
            "path",
            "name",
            "line",
            "column",
            "start_byte",
            "ref_kind",
            "enclosing_symbol",
        ],
    )? {
        let b = batch?;
        let (path, name, line, column, sb, kind, enclosing) = (
            b.str("path"),
            b.str("name"),
            b.i32("line"),
            b.i32("column"),
            b.i64("start_byte"),
            b.str("ref_kind"),
            b.str("enclosing_symbol"),
        );
        for i in 0..b.num_rows() {
            let Some(a) = files.get_mut(path.value(i)) else {
                continue;
            };
            a.parsed.references.push(Reference {
                name: name.value(i).to_string(),
                line: line.value(i) as u32,
                column: column.value(i) as u32,
                start_byte: sb.value(i) as u64,
                ref_kind: crate::parse::static_kind(kind.value(i)),
                enclosing: enclosing.opt(i).map(std::sync::Arc::from),
            });
        }
    }
    Ok(())
}

/// Their raw relations (mentions are recomputed every build).
fn add_edges(dir: &Path, files: &mut HashMap<String, Analysis>) -> Result<()> {
    for batch in previous_table(
        dir,
        &edges_table(),
        &[
            "src_path",
            "kind",
            "src_symbol",
            "dst_name",
            "line",
            "receiver_type",
            "alias",
        ],
    )? {
        let b = batch?;
        let (src_path, kind, src_symbol, dst_name, line, receiver_type, alias) = (
            b.str("src_path"),
            b.str("kind"),
            b.str("src_symbol"),
            b.str("dst_name"),
            b.i32("line"),
            b.str("receiver_type"),
            b.str("alias"),
        );
        for i in 0..b.num_rows() {
            let Some(a) = files.get_mut(src_path.value(i)) else {
                continue;
            };
            if kind.value(i) == "mentions" {
                continue; // derived from the docs and the whole tree: recomputed every build
            }
            a.parsed.edges.push(RawEdge {
                kind: crate::parse::static_kind(kind.value(i)),
                src_symbol: src_symbol.opt(i).map(std::sync::Arc::from),
                dst_name: dst_name.value(i).to_string(),
                line: line.value(i) as u32,
                recv_type: receiver_type.opt(i).map(str::to_string),
                alias: alias.opt(i).map(str::to_string),
            });
        }
    }
    Ok(())
}

/// Their chunks.
fn add_chunks(dir: &Path, files: &mut HashMap<String, Analysis>) -> Result<()> {
    let owned = |a: &StringArray, i: usize| a.opt(i).map(str::to_string);
    for batch in previous_table(
        dir,
        &chunks_table(),
        &[
            "path",
            "chunk_id",
            "chunk_type",
            "kind",
            "symbol",
            "heading_path",
            "start_line",
            "end_line",
            "start_byte",
            "end_byte",
            "token_count",
            "context_header",
            "text",
        ],
    )? {
        let b = batch?;
        let (path, id, chunk_type, kind, symbol, heading) = (
            b.str("path"),
            b.i64("chunk_id"),
            b.str("chunk_type"),
            b.str("kind"),
            b.str("symbol"),
            b.str("heading_path"),
        );
        let (sl, el, sb, eb, tokens, header, text) = (
            b.i32("start_line"),
            b.i32("end_line"),
            b.i64("start_byte"),
            b.i64("end_byte"),
            b.i32("token_count"),
            b.str("context_header"),
            b.str("text"),
        );
        for i in 0..b.num_rows() {
            let Some(a) = files.get_mut(path.value(i)) else {
                continue;
            };
            let (start, end) = (sb.value(i) as usize, eb.value(i) as usize);
            let text = owned(text, i).unwrap_or_else(|| {
                a.file
                    .content
                    .get(start..end)
                    .unwrap_or_default()
                    .to_string()
            });
            a.chunks.push(Chunk {
                id: id.value(i),
                chunk_type: chunk_type.value(i).to_string(),
                kind: kind.value(i).to_string(),
                symbol: owned(symbol, i),
                heading_path: owned(heading, i),
                start_line: sl.value(i) as u32,
                end_line: el.value(i) as u32,
                start_byte: sb.value(i) as u64,
                end_byte: eb.value(i) as u64,
                token_count: tokens.value(i) as u32,
                context_header: header.value(i).to_string(),
                text,
            });
        }
    }
    Ok(())
}
