//! The analysis phase: files are analyzed in parallel (or reused from a
//! previous snapshot) in steps, and a sink thread streams each step's rows
//! into the files, chunks, symbols and references tables, in path order.

use foldhash::{HashMap, HashMapExt};
use std::io::IsTerminal;
use std::path::Path;

use code_index_schemas::heads::{self, FileHeads};
use code_index_schemas::keyword;
use code_index_schemas::ngram::{self, Run};
use code_index_schemas::{chunks_table, files_table, references_table, symbols_table, SkipCounts};
use indicatif::ProgressBar;
use rayon::prelude::*;

use super::{unreadable_error, Build, STEP};
use crate::analyze::{read_and_analyze, Analysis, Outcome};
use crate::config::Effective;
use crate::embeddings::{DefSpan, Pending};
use crate::error::{codes, Error, Result};
use crate::language::Lang;
use crate::modules::{ModuleInfo, Modules};
use crate::patterns::{Interner, Shape};
use crate::previous::Previous;
use crate::resolve::{go_first_result, go_var_type, rust_returns, FactSym, FileFacts};
use crate::walk::{Entry, WalkResult};
use crate::write::TableWriter;

/// What the analysis hands on to the later phases.
pub(super) struct Analysed {
    /// The four per-file tables, still open.
    pub writers: Writers,
    /// Symbols and raw edges per file, for resolution.
    pub facts: Vec<FileFacts>,
    pub totals: Totals,
    /// Path and sha256 of every file: the input hash.
    pub input: String,
    /// File shapes for pattern detection, and their interned feature names.
    pub shapes: Vec<Shape>,
    pub interner: Interner,
    /// Navigation docs (path, content) for `mentions` edges.
    pub nav_docs: Vec<(String, String)>,
    /// Chunks to embed (when embeddings are on), in table order.
    pub pending: Option<(String, Vec<Pending>)>,
    /// The n-gram postings of the files, one run per step, in file order.
    pub gram_runs: Vec<code_index_schemas::ngram::Run>,
    /// Files written (ids of the n-gram index: row numbers of files.parquet).
    pub gram_files: u32,
    /// The chunks' keyword postings, one run per step, in table order.
    pub kw_runs: Vec<keyword::Run>,
    /// Chunks written (documents of the keyword index).
    pub kw_docs: u32,
    /// The chunks' definition heads, in table order.
    pub heads: heads::Writer,
}

/// Counts for the manifest and the summary.
pub(super) struct Totals {
    pub skipped: SkipCounts,
    pub reused: u64,
    pub source_bytes: u64,
}

/// Open the tables, then analyze and write every walked file.
pub(super) fn analyse(
    b: &Build,
    dir: &Path,
    kv: &[(String, String)],
    walked: &WalkResult,
    modules: &Modules,
    prev: Option<Previous>,
    model_id: Option<String>,
) -> Result<(Analysed, Option<ProgressBar>)> {
    let writers = Writers::create(dir, kv)?;
    let bar = progress_bar(b.opts.progress, walked.entries.len());
    let sink = Sink::new(b, modules, walked, writers, model_id);
    let sink = pipeline(b, &walked.entries, prev.as_ref(), sink, bar.as_ref())?;
    Ok((sink.out, bar))
}

/// A bar on a terminal, when progress is asked for.
fn progress_bar(progress: bool, files: usize) -> Option<ProgressBar> {
    if !(progress && std::io::stderr().is_terminal()) {
        return None;
    }
    let b = ProgressBar::new(files as u64);
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} indexing [{bar:40}] {pos}/{len} files {per_sec} eta {eta}",
        )
        .unwrap()
        .progress_chars("=> "),
    );
    Some(b)
}

/// Analysis of step N+1 (rayon pool) overlaps the writing of step N (sink thread).
fn pipeline<'a>(
    b: &Build,
    entries: &[Entry],
    prev: Option<&Previous>,
    mut sink: Sink<'a>,
    bar: Option<&ProgressBar>,
) -> Result<Sink<'a>> {
    std::thread::scope(|scope| -> Result<Sink> {
        type Step = (usize, Vec<(bool, Outcome)>, Run, keyword::Run, HeadsStep);
        type Grams = Vec<u32>;
        type Docs = Vec<Vec<(u64, u32)>>;
        let (tx, rx) = std::sync::mpsc::sync_channel::<Step>(1);
        let writer = scope.spawn(move || -> Result<Sink> {
            let mut busy = std::time::Duration::ZERO;
            for (start, outcomes, mut run, mut kw, (head_run, head_chunks)) in rx {
                let t0 = std::time::Instant::now();
                run.set_base(sink.out.gram_files);
                kw.set_base(sink.out.kw_docs);
                for (i, (was_reused, outcome)) in outcomes.into_iter().enumerate() {
                    sink.accept(&entries[start + i], was_reused, outcome)?;
                }
                sink.out.gram_runs.push(run);
                sink.out.kw_docs += kw.docs();
                sink.out.kw_runs.push(kw);
                sink.out.heads.push(head_run, &head_chunks);
                busy += t0.elapsed();
            }
            if std::env::var_os("CODE_INDEX_TIMING").is_some() {
                eprintln!("[timing]   writer thread busy: {:.2}s", busy.as_secs_f64());
            }
            Ok(sink)
        });
        for (n, step) in entries.chunks(STEP).enumerate() {
            let (outcomes, run, kw, heads) = b.pool.install(|| {
                #[allow(clippy::type_complexity)]
                let (outcomes, indexed): (
                    Vec<(bool, Outcome)>,
                    Vec<Option<(Grams, Docs, FileHeads)>>,
                ) = step
                    .par_iter()
                    .map(|e: &Entry| {
                        let (reused, mut outcome) = analyze_one(&b.root, e, &b.cfg, prev);
                        // The n-grams, keyword terms and heads of the
                        // published (redacted) text and rows, as the server
                        // reads them.
                        let indexed = match &mut outcome {
                            Outcome::Done(a) => {
                                canonicalize(a);
                                Some((
                                    ngram::file_grams(a.file.content.as_bytes()),
                                    chunk_keywords(a),
                                    chunk_heads(a),
                                ))
                            }
                            _ => None,
                        };
                        ((reused, outcome), indexed)
                    })
                    .unzip();
                let mut grams: Vec<Grams> = Vec::new();
                let mut docs: Docs = Vec::new();
                let (mut head_docs, mut head_chunks): (Docs, Vec<Vec<u32>>) = Default::default();
                for (g, d, (hd, hc)) in indexed.into_iter().flatten() {
                    grams.push(g);
                    docs.extend(d);
                    let base = head_docs.len() as u32;
                    head_chunks.extend(
                        hc.into_iter()
                            .map(|c| c.into_iter().map(|h| h + base).collect()),
                    );
                    head_docs.extend(hd);
                }
                let ((run, kw), head_run) = rayon::join(
                    || rayon::join(|| Run::new(0, &grams), || keyword::Run::new(0, &docs)),
                    || keyword::Run::new(0, &head_docs),
                );
                (outcomes, run, kw, (head_run, head_chunks))
            });
            if tx.send((n * STEP, outcomes, run, kw, heads)).is_err() {
                break; // the sink failed; its error is returned by join
            }
            if let Some(b) = bar {
                b.inc(step.len() as u64);
            }
        }
        drop(tx);
        writer.join().unwrap_or_else(|_| {
            Err(Error::new(
                codes::INTERNAL,
                "writer thread panicked",
                "report this as a bug",
            ))
        })
    })
}

/// The keyword terms of a file's chunks, in table order: a chunk's text is
/// its span of the published content (a class summary's synthesized text),
/// as the server reads it.
fn chunk_keywords(a: &Analysis) -> Vec<Vec<(u64, u32)>> {
    let content = a.file.content.as_str();
    let path = keyword::path_terms(&a.file.path);
    a.chunks
        .iter()
        .map(|c| {
            let text = if c.kind == "class_summary" {
                c.text.as_str()
            } else {
                keyword::chunk_text(content, c.start_byte as usize, c.end_byte as usize)
            };
            keyword::doc_terms(text, c.symbol.as_deref(), c.heading_path.as_deref(), &path)
        })
        .collect()
}

/// A step's heads: their run, and per chunk the run's heads it holds.
type HeadsStep = (keyword::Run, Vec<Vec<u32>>);

/// The definition heads of a file's chunks (`heads.bin`), from its rows in
/// table order (the symbols canonical).
fn chunk_heads(a: &Analysis) -> FileHeads {
    let spans: Vec<(u32, u32)> = a
        .chunks
        .iter()
        .map(|c| (c.start_line, c.end_line))
        .collect();
    let defs = a.parsed.symbols.iter().map(|s| heads::Def {
        qualified_name: &s.qualified_name,
        kind: s.kind,
        signature: Some(&s.signature),
        doc: s.doc.as_deref(),
        start_line: s.start_line,
        is_test: a.file.is_test,
    });
    heads::file_heads(defs, &spans)
}

fn analyze_one(
    root: &Path,
    e: &Entry,
    cfg: &Effective,
    prev: Option<&Previous>,
) -> (bool, Outcome) {
    if let Some(p) = prev {
        if let Some(a) = p.files.get(&e.rel) {
            // The previous rows were loaded only for unchanged content.
            return (true, Outcome::Done(Box::new(a.clone())));
        }
    }
    (false, read_and_analyze(root, e, cfg))
}

/// Deterministic order of everything in an analysis (fresh or reused).
fn canonicalize(a: &mut Analysis) {
    a.parsed.symbols.sort_by(|x, y| {
        (
            x.start_byte,
            std::cmp::Reverse(x.end_byte),
            &x.qualified_name,
            x.kind,
        )
            .cmp(&(
                y.start_byte,
                std::cmp::Reverse(y.end_byte),
                &y.qualified_name,
                y.kind,
            ))
    });
    a.parsed.references.sort_by_key(|r| r.start_byte);
    a.parsed.edges.sort_by(|x, y| {
        (x.kind, x.line, &x.dst_name, &x.src_symbol).cmp(&(
            y.kind,
            y.line,
            &y.dst_name,
            &y.src_symbol,
        ))
    });
}

/// Symbol ids are row ordinals (small, compressible); parents follow.
fn renumber_symbols(a: &mut Analysis, next: &mut i64) {
    let mut map: HashMap<i64, i64> = HashMap::with_capacity(a.parsed.symbols.len());
    for s in a.parsed.symbols.iter_mut() {
        map.insert(s.id, *next);
        s.id = *next;
        *next += 1;
    }
    for s in a.parsed.symbols.iter_mut() {
        s.parent_id = s.parent_id.and_then(|p| map.get(&p).copied());
    }
}

/// The tables written row by row as files are analyzed.
pub(super) struct Writers {
    pub files: TableWriter,
    pub chunks: TableWriter,
    pub symbols: TableWriter,
    pub references: TableWriter,
}

impl Writers {
    fn create(dir: &Path, kv: &[(String, String)]) -> Result<Writers> {
        Ok(Writers {
            files: TableWriter::create(dir, files_table(), kv)?,
            chunks: TableWriter::create(dir, chunks_table(), kv)?,
            symbols: TableWriter::create(dir, symbols_table(), kv)?,
            references: TableWriter::create(dir, references_table(), kv)?,
        })
    }
}

/// One file's rows in each of the four tables.
fn write_file_rows(w: &mut Writers, a: &Analysis, m: &ModuleInfo, cfg: &Effective) -> Result<()> {
    file_row(&mut w.files, a, m)?;
    chunk_rows(&mut w.chunks, a, m, cfg)?;
    symbol_rows(&mut w.symbols, a)?;
    reference_rows(&mut w.references, a)
}

fn file_row(t: &mut TableWriter, a: &Analysis, m: &ModuleInfo) -> Result<()> {
    let f = &a.file;
    t.s(&f.path);
    t.s(f.lang.id());
    t.i64(f.size as i64);
    t.i32(f.line_count as i64);
    t.s(&f.sha256);
    t.b(f.is_test);
    t.b(f.is_generated);
    t.b(f.is_lossy);
    t.os(m.module_path.as_deref());
    t.os(m.module_root.as_deref());
    t.os(m.submodule.as_deref());
    t.b(f.secret_count > 0);
    t.i32(f.secret_count as i64);
    t.s(&f.content);
    t.end_row(f.content.len() + f.path.len() + 100)
}

fn chunk_rows(t: &mut TableWriter, a: &Analysis, m: &ModuleInfo, cfg: &Effective) -> Result<()> {
    let f = &a.file;
    let weight = if f.is_test {
        0.5
    } else if cfg.nav_docs.is_match(&f.path) {
        cfg.nav_boost
    } else {
        1.0
    };
    for c in &a.chunks {
        t.i64(c.id);
        t.s(&f.path);
        t.s(f.lang.id());
        t.s(&c.chunk_type);
        t.s(&c.kind);
        t.os(c.symbol.as_deref());
        t.os(m.module_path.as_deref());
        t.os(c.heading_path.as_deref());
        t.i32(c.start_line as i64);
        t.i32(c.end_line as i64);
        t.i64(c.start_byte as i64);
        t.i64(c.end_byte as i64);
        t.i32(c.token_count as i64);
        t.b(f.is_test);
        t.f32(weight);
        t.s(&c.context_header);
        t.os((c.kind == "class_summary").then_some(c.text.as_str()));
        t.end_row(c.context_header.len() + 80)?;
    }
    Ok(())
}

fn symbol_rows(t: &mut TableWriter, a: &Analysis) -> Result<()> {
    let f = &a.file;
    for s in &a.parsed.symbols {
        t.i64(s.id);
        t.s(&f.path);
        t.s(&s.name);
        t.s(&s.qualified_name);
        t.s(s.kind);
        t.s(f.lang.id());
        t.os(s.container.as_deref());
        t.oi64(s.parent_id);
        t.s(&s.signature);
        t.os(s.doc.as_deref());
        t.i32(s.start_line as i64);
        t.i32(s.end_line as i64);
        t.i64(s.start_byte as i64);
        t.i64(s.end_byte as i64);
        t.i32(s.name_line as i64);
        t.b(f.is_test);
        t.end_row(s.signature.len() + 120)?;
    }
    Ok(())
}

fn reference_rows(t: &mut TableWriter, a: &Analysis) -> Result<()> {
    for r in &a.parsed.references {
        t.s(&a.file.path);
        t.s(&r.name);
        t.i32(r.line as i64);
        t.i32(r.column as i64);
        t.i64(r.start_byte as i64);
        t.s(r.ref_kind);
        t.os(r.enclosing.as_deref());
        t.end_row(r.name.len() + 40)?;
    }
    Ok(())
}

/// Receives analyses in path order and streams them into the tables.
struct Sink<'a> {
    root: &'a Path,
    cfg: &'a Effective,
    modules: &'a Modules,
    skip_unreadable: bool,
    next_symbol_id: i64,
    out: Analysed,
}

impl<'a> Sink<'a> {
    fn new(
        b: &'a Build,
        modules: &'a Modules,
        walked: &WalkResult,
        writers: Writers,
        model_id: Option<String>,
    ) -> Self {
        let skipped = SkipCounts {
            default_excluded: walked.default_excluded,
            config_excluded: walked.config_excluded,
            too_large: walked.too_large,
            binary: 0,
            unreadable: walked.unreadable.len() as u64,
        };
        Sink {
            root: &b.root,
            cfg: &b.cfg,
            modules,
            skip_unreadable: b.opts.skip_unreadable,
            next_symbol_id: 1,
            out: Analysed {
                writers,
                facts: Vec::with_capacity(walked.entries.len()),
                totals: Totals {
                    skipped,
                    reused: 0,
                    source_bytes: 0,
                },
                input: String::new(),
                shapes: Vec::new(),
                interner: Default::default(),
                nav_docs: Vec::new(),
                pending: model_id.map(|m| (m, Vec::new())),
                gram_runs: Vec::new(),
                gram_files: 0,
                kw_runs: Vec::new(),
                kw_docs: 0,
                heads: heads::Writer::default(),
            },
        }
    }

    fn accept(&mut self, entry: &Entry, was_reused: bool, outcome: Outcome) -> Result<()> {
        match outcome {
            Outcome::Binary => self.out.totals.skipped.binary += 1,
            Outcome::Unreadable(err) => {
                if !self.skip_unreadable {
                    return Err(unreadable_error(self.root, &entry.abs, &err.to_string()));
                }
                self.out.totals.skipped.unreadable += 1;
            }
            Outcome::Done(mut a) => {
                // Canonical already (the analysis step).
                renumber_symbols(&mut a, &mut self.next_symbol_id);
                self.out.totals.reused += u64::from(was_reused);
                self.out.gram_files += 1;
                self.out.totals.source_bytes += a.file.size;
                let input = &mut self.out.input;
                input.push_str(&a.file.path);
                input.push('\0');
                input.push_str(&a.file.sha256);
                input.push('\n');
                let m = self.modules.of(&a.file.path, a.file.lang);
                write_file_rows(&mut self.out.writers, &a, &m, self.cfg)?;
                self.queue_embeddings(&a, was_reused);
                self.collect(*a, &m);
            }
        }
        Ok(())
    }

    /// Queue the embedding inputs of the file's chunks (when embeddings are on).
    fn queue_embeddings(&mut self, a: &Analysis, was_reused: bool) {
        let Some((model, pending)) = self.out.pending.as_mut() else {
            return;
        };
        let defs: Vec<DefSpan> = a
            .parsed
            .symbols
            .iter()
            .map(|s| DefSpan {
                kind: s.kind,
                name: &s.name,
                start: s.start_byte,
                end: s.end_byte,
                doc: s.doc.as_deref(),
                signature: Some(s.signature.as_str()),
                container: s.container.as_deref(),
            })
            .collect();
        for c in &a.chunks {
            for input in crate::embeddings::inputs(
                c,
                a.file.is_test,
                a.file.lang.is_code(),
                &a.file.content,
                &defs,
            ) {
                pending.push(Pending {
                    id: c.id,
                    key: crate::embeddings::key(model, &input),
                    input,
                    reused: was_reused,
                });
            }
        }
    }

    /// Keep what later phases need of the file: its shape, a navigation
    /// doc's text, and its symbols and edges.
    fn collect(&mut self, a: Analysis, m: &ModuleInfo) {
        let out = &mut self.out;
        let lang = a.file.lang.id();
        if !a.file.is_test && !a.file.is_generated && lang != "markdown" && lang != "text" {
            if let Some(sh) = crate::patterns::shape(
                &a.file.path,
                lang,
                m.module_path.clone(),
                &a.parsed.symbols,
                &a.parsed.edges,
                &mut out.interner,
            ) {
                out.shapes.push(sh);
            }
        }
        if lang == "markdown" && self.cfg.nav_docs.is_match(&a.file.path) {
            out.nav_docs
                .push((a.file.path.clone(), a.file.content.clone()));
        }
        let syms = &a.parsed.symbols;
        out.facts.push(FileFacts {
            path: a.file.path,
            lang: a.file.lang,
            symbols: a
                .parsed
                .symbols
                .iter()
                .map(|s| {
                    let mut f = FactSym::new(&s.name, &s.qualified_name, s.kind, s.id);
                    f.lines = (s.start_line, s.end_line);
                    if a.file.lang == Lang::Rust && s.kind == "method" {
                        let own = s.container.as_deref().unwrap_or("");
                        f.ret = rust_returns(&s.signature, own.rsplit('.').next().unwrap_or(own));
                    }
                    f
                })
                .collect(),
            // Rust struct fields' declared types (`inner: Mutex<Inner>`),
            // for calls through `self.inner`.
            // (and each generic type's parameters, `Pair.<>` → `A1,B1`, which
            // a field's type is matched with an `impl`'s arguments by, feature 35)
            fields: match a.file.lang {
                // (a tuple struct's and a tuple variant's fields under `.0`,
                // `.1` …, feature 41)
                Lang::Rust => a
                    .parsed
                    .symbols
                    .iter()
                    .flat_map(|s| {
                        let mut out: Vec<(Box<str>, Box<str>)> = Vec::new();
                        match s.kind {
                            "field" => {
                                if let Some((_, ty)) = s.signature.split_once(':') {
                                    let ty = ty.trim();
                                    if !ty.is_empty() {
                                        out.push((s.qualified_name.as_str().into(), ty.into()));
                                    }
                                }
                            }
                            "struct" | "enum" | "union" => {
                                if let Some(p) =
                                    crate::resolve::rust_type_params(&s.name, &s.signature)
                                {
                                    out.push((format!("{}.<>", s.qualified_name).into(), p.into()));
                                }
                            }
                            _ => {}
                        }
                        let tuple = (s.kind == "struct" && !s.signature.contains('{'))
                            || (s.kind == "constant" && s.signature == s.name);
                        let text = a
                            .file
                            .content
                            .get(s.start_byte as usize..s.end_byte as usize)
                            .filter(|_| tuple);
                        if let Some(text) = text {
                            for (i, t) in crate::resolve::rust_tuple_fields(&s.name, text)
                                .into_iter()
                                .enumerate()
                            {
                                out.push((format!("{}.{i}", s.qualified_name).into(), t.into()));
                            }
                        }
                        out
                    })
                    .collect(),
                // Go struct fields (`a, b *Conn` gives both), for calls
                // through `s.conns.Close()` (feature 20).
                Lang::Go => a
                    .parsed
                    .symbols
                    .iter()
                    .filter(|s| s.kind == "field")
                    .flat_map(|s| crate::resolve::go_field_types(&s.qualified_name, &s.signature))
                    .collect(),
                _ => Vec::new(),
            },
            go_results: match a.file.lang {
                Lang::Go => by_signature(syms, &["function", "method"], |s| {
                    go_first_result(&s.signature).map(Into::into)
                }),
                _ => Vec::new(),
            },
            // JS/TS: the callbacks each function takes, with the types its
            // signature gives their parameters (feature 27).
            js_callbacks: match a.file.lang {
                Lang::TypeScript | Lang::Tsx => by_signature(syms, &["function", "method"], |s| {
                    let c = s
                        .signature
                        .contains("=>")
                        .then(|| crate::resolve::ts_callback_params(&s.signature))?;
                    (!c.is_empty()).then_some(c)
                }),
                // (Rust, feature 57: `impl FnOnce(A)`, `F: Fn(A, B)`)
                Lang::Rust => by_signature(syms, &["function", "method"], |s| {
                    let c = s
                        .signature
                        .contains("Fn")
                        .then(|| crate::resolve::rust_callback_params(&s.signature))?;
                    (!c.is_empty()).then_some(c)
                }),
                _ => Vec::new(),
            },
            // JS/TS: each function's and method's declared return type
            // (feature 28).
            js_returns: match a.file.lang {
                Lang::TypeScript | Lang::Tsx => by_signature(syms, &["function", "method"], |s| {
                    crate::resolve::ts_return_type(&s.signature).map(Into::into)
                }),
                _ => Vec::new(),
            },
            go_vars: match a.file.lang {
                Lang::Go => by_signature(syms, &["variable", "constant"], |s| {
                    go_var_type(&s.name, &s.signature).map(Into::into)
                }),
                _ => Vec::new(),
            },
            rust_aliases: match a.file.lang {
                // (and an iterator's `type Item = State<'a>;`, feature 55)
                Lang::Rust => by_signature(syms, &["type"], |s| {
                    (s.qualified_name == s.name || s.name == "Item")
                        .then(|| crate::resolve::rust_alias_target(&s.signature))
                        .flatten()
                        .map(Into::into)
                }),
                _ => Vec::new(),
            },
            rust_rets: match a.file.lang {
                Lang::Rust => by_signature(syms, &["function", "method"], |s| {
                    crate::resolve::rust_return_type(&s.signature).map(Into::into)
                }),
                _ => Vec::new(),
            },
            py_values: match a.file.lang {
                Lang::Python => by_signature(syms, &["variable", "constant"], |s| {
                    (s.qualified_name == s.name)
                        .then(|| crate::resolve::py_value(&s.name, &s.signature))
                        .flatten()
                        .map(Into::into)
                }),
                _ => Vec::new(),
            },
            py_returns: match a.file.lang {
                Lang::Python => by_signature(syms, &["function", "method"], |s| {
                    let text = a
                        .file
                        .content
                        .get(s.start_byte as usize..s.end_byte as usize)?;
                    // (its decorators, the `@…` lines just above)
                    let before = a.file.content.get(..s.start_byte as usize)?;
                    let decorators = before
                        .rsplit('\n')
                        .skip(1)
                        .map(str::trim)
                        .take_while(|l| l.starts_with('@'));
                    if !crate::resolve::py_result_kept(decorators) {
                        return None;
                    }
                    crate::resolve::py_return_value(&s.signature, text).map(Into::into)
                }),
                _ => Vec::new(),
            },
            go_types: match a.file.lang {
                Lang::Go => by_signature(syms, &["type"], |s| {
                    crate::resolve::go_underlying(&s.name, &s.signature).map(Into::into)
                }),
                _ => Vec::new(),
            },
            edges: a.parsed.edges,
        });
    }
}

/// What the signature of each symbol of these kinds shows (`read`), by
/// symbol index, for resolution.
fn by_signature<T>(
    syms: &[crate::parse::Symbol],
    kinds: &[&str],
    read: impl Fn(&crate::parse::Symbol) -> Option<T>,
) -> Vec<(u32, T)> {
    syms.iter()
        .enumerate()
        .filter(|(_, s)| kinds.contains(&s.kind))
        .filter_map(|(i, s)| Some((i as u32, read(s)?)))
        .collect()
}
