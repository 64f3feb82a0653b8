//! The tables written after the analysis: edges (resolved across files, plus
//! `mentions` from navigation docs) and patterns; then every table closed.

use std::path::Path;

use code_index_schemas::{edges_table, patterns_table, ManifestFile};
use rayon::prelude::*;

use super::analyse::Writers;
use super::{Build, STEP};
use crate::error::{codes, Error, Result};
use crate::mentions::Mentions;
use crate::modules::Modules;
use crate::patterns::{Interner, Pattern, Shape};
use crate::resolve::{Edge, FileFacts, Resolver};
use crate::snapshot;
use crate::write::TableWriter;

/// Resolve every file's edges (in parallel, in parts) and write them.
pub(super) fn write_edges(
    b: &Build,
    dir: &Path,
    kv: &[(String, String)],
    facts: Vec<FileFacts>,
    modules: &Modules,
    nav_docs: &[(String, String)],
) -> Result<TableWriter> {
    let resolver = Resolver::new(&facts, modules);
    let mentions = Mentions::new(&facts, nav_docs);
    b.timer.phase("resolve index");
    let mut ew = TableWriter::create(dir, edges_table(), kv)?;
    let idx: Vec<usize> = (0..facts.len()).collect();
    // Resolution of part N+1 (pool) overlaps the writing of part N (here).
    std::thread::scope(|scope| -> Result<TableWriter> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Vec<Edge>>>(1);
        let (resolver, mentions, facts) = (&resolver, &mentions, &facts);
        scope.spawn(move || {
            for part in idx.chunks(4 * STEP) {
                let edges: Vec<Vec<Edge>> = b.pool.install(|| {
                    part.par_iter()
                        .map(|&fi| file_edges(resolver, mentions, facts, fi))
                        .collect()
                });
                if tx.send(edges).is_err() {
                    break; // the writer failed; its error is returned below
                }
            }
        });
        for edges in rx {
            for e in edges.iter().flatten() {
                ew.s(e.kind);
                ew.s(&e.src_path);
                ew.os(e.src_symbol.as_deref());
                ew.oi64(e.src_symbol_id);
                ew.s(&e.dst_name);
                ew.os(e.dst_path.as_deref());
                ew.oi64(e.dst_symbol_id);
                ew.i32(e.line as i64);
                ew.b(e.resolved);
                ew.os(e.receiver_type.as_deref());
                ew.os(e.alias.as_deref());
                ew.end_row(e.dst_name.len() + e.src_path.len() + 60)?;
            }
        }
        Ok(ew)
    })
}

/// The edges of file `fi`: resolved ones, and the files a doc mentions.
fn file_edges(
    resolver: &Resolver,
    mentions: &Mentions,
    facts: &[FileFacts],
    fi: usize,
) -> Vec<Edge> {
    let mut e = resolver.file_edges(fi);
    if let Some(extra) = mentions.edges(&facts[fi].path) {
        e.extend(extra);
        e.sort_by(|a, b| (a.kind, a.line, &a.dst_name).cmp(&(b.kind, b.line, &b.dst_name)));
    }
    e
}

/// Patterns: families of similarly shaped files, one row per member.
pub(super) fn write_patterns(
    b: &Build,
    dir: &Path,
    kv: &[(String, String)],
    shapes: Vec<Shape>,
    interner: Interner,
) -> Result<(TableWriter, Vec<Pattern>)> {
    let pats = crate::patterns::detect(&shapes, &b.cfg.config.pattern_dirs, &interner);
    drop(shapes);
    drop(interner);
    let mut pw = TableWriter::create(dir, patterns_table(), kv)?;
    for p in &pats {
        for (path, sim) in &p.members {
            pw.i64(p.id);
            pw.s(&p.name);
            pw.os(p.module.as_deref());
            pw.s(&p.canonical_path);
            pw.i32(p.members.len() as i64);
            pw.f32(p.similarity);
            pw.s(path);
            pw.f32(*sim);
            pw.os((*path == p.canonical_path).then_some(p.text.as_str()));
            pw.end_row(p.name.len() + path.len() + 80)?;
        }
    }
    Ok((pw, pats))
}

/// Close every table, in manifest order, and describe each.
pub(super) fn finish(
    dir: &Path,
    writers: Writers,
    edges: TableWriter,
    patterns: TableWriter,
) -> Result<Vec<ManifestFile>> {
    let Writers {
        files,
        chunks,
        symbols,
        references,
    } = writers;
    let mut out = Vec::new();
    for w in [files, chunks, symbols, references, edges, patterns] {
        let file = w.table.file;
        let rows = w.finish()?;
        out.push(snapshot::describe(dir, file, rows)?);
    }
    Ok(out)
}

/// Write `ngrams.bin` from the runs the analysis collected, and describe it.
pub(super) fn write_ngrams(
    dir: &Path,
    files: u32,
    runs: &[code_index_schemas::ngram::Run],
) -> Result<ManifestFile> {
    use code_index_schemas::ngram::{write, NGRAM_FILE};
    write_index(dir, NGRAM_FILE, |p| write(p, files, runs))
}

/// Write one binary index file of the snapshot with `write`, and describe it.
fn write_index(
    dir: &Path,
    name: &str,
    write: impl FnOnce(&Path) -> std::io::Result<u64>,
) -> Result<ManifestFile> {
    let path = dir.join(name);
    write(&path).map_err(|e| {
        Error::io(
            codes::WRITE,
            "cannot write",
            &path,
            e,
            "check free space in the --out directory",
        )
    })?;
    snapshot::describe(dir, name, 0)
}

/// The keyword documents of the pattern chunks (after every table chunk, in
/// the order the server reads them: a pattern's row on its canonical file).
pub(super) fn pattern_keywords(pats: &[Pattern]) -> code_index_schemas::keyword::Run {
    use code_index_schemas::keyword::{doc_terms, path_terms, Run};
    let mut docs = Vec::new();
    for p in pats {
        for (path, _) in &p.members {
            if *path == p.canonical_path {
                docs.push(doc_terms(&p.text, Some(&p.name), None, &path_terms(path)));
            }
        }
    }
    Run::new(0, &docs)
}

/// Write `keywords.bin` from the runs of the chunks' terms, and describe it.
pub(super) fn write_keywords(
    dir: &Path,
    runs: &[code_index_schemas::keyword::Run],
) -> Result<ManifestFile> {
    use code_index_schemas::keyword::{write, KEYWORD_FILE};
    write_index(dir, KEYWORD_FILE, |p| write(p, runs))
}

/// Write `heads.bin` from the chunks' definition heads, and describe it.
pub(super) fn write_heads(
    dir: &Path,
    heads: &code_index_schemas::heads::Writer,
) -> Result<ManifestFile> {
    write_index(dir, code_index_schemas::heads::HEADS_FILE, |p| {
        heads.write(p)
    })
}
