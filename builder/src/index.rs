//! `code-indexer index`: the whole build, from a tree to a committed snapshot.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use code_index_schemas::{
    chunks_table, edges_table, files_table, references_table, symbols_table, Manifest,
    ManifestFile, SkipCounts, BUILDER_NAME, FEATURE_VERSION, SCHEMA_VERSION,
};
use rayon::prelude::*;
use serde::Serialize;

use crate::analyze::{read_and_analyze, Analysis, Outcome};
use crate::config::{self, Effective};
use crate::error::{codes, Error, Result};
use crate::ids::sha256_hex;
use crate::modules::{ModuleInfo, Modules};
use crate::resolve::{Edge, FactSym, FileFacts, Resolver};
use crate::snapshot;
use crate::walk::{walk, Entry};
use crate::write::TableWriter;

/// Options of one build.
#[derive(Clone, Debug)]
pub struct Options {
    pub repo: PathBuf,
    pub out: PathBuf,
    pub previous: Option<PathBuf>,
    pub threads: usize,
    pub name: Option<String>,
    pub max_file_size: Option<u64>,
    pub skip_unreadable: bool,
    pub progress: bool,
    /// `None`: no vectors (`--no-embeddings`).
    pub embeddings: Option<EmbedOptions>,
    /// `--secrets`: overrides the config's `secrets.action`.
    pub secrets: Option<config::SecretsAction>,
}

/// How chunks are embedded.
#[derive(Clone, Debug)]
pub struct EmbedOptions {
    /// Model spec (`minilm`, `voyage:<m>`, `openai:<m>`, `ollama:<m>`).
    pub model: String,
    /// Persistent cache directory (`None`: memory only).
    pub cache_dir: Option<PathBuf>,
    /// Most vectors in an exact Flat index.
    pub flat_max: usize,
}

#[derive(Debug, Serialize)]
pub struct TableSummary {
    pub rows: u64,
    pub bytes: u64,
}

/// What a build did (printed by the CLI; never written into the snapshot).
#[derive(Debug, Serialize)]
pub struct Summary {
    pub snapshot_id: String,
    pub snapshot_dir: String,
    pub repo: String,
    pub files: u64,
    pub reused_files: u64,
    pub previous: Option<String>,
    pub previous_ignored: Option<String>,
    pub skipped: SkipCounts,
    pub source_bytes: u64,
    pub snapshot_bytes: u64,
    pub tables: std::collections::BTreeMap<String, TableSummary>,
    pub embeddings: Option<crate::embeddings::Stats>,
    pub seconds: f64,
}

/// Files analyzed in parallel per step (bounded memory, ordered output).
const STEP: usize = 1024;

/// Check the repository argument.
pub fn check_repo(repo: &Path) -> Result<PathBuf> {
    if !repo.exists() {
        return Err(Error::new(
            codes::REPO_NOT_FOUND,
            format!("repository path '{}' does not exist", repo.display()),
            "pass the root directory of a source tree, e.g. `code-indexer index . --out snapshots`",
        )
        .at(repo));
    }
    if !repo.is_dir() {
        return Err(Error::new(
            codes::REPO_NOT_DIR,
            format!("repository path '{}' is not a directory", repo.display()),
            "pass the directory that holds the sources, not a file",
        )
        .at(repo));
    }
    repo.canonicalize().map_err(|e| {
        Error::io(
            codes::REPO_NOT_FOUND,
            "cannot resolve",
            repo,
            e,
            "pass a readable directory",
        )
    })
}

/// Repository name: flag, config `name`, or the directory name.
pub fn repo_name(root: &Path, cfg: &Effective, flag: Option<&str>) -> String {
    let raw = flag
        .map(|s| s.to_string())
        .or_else(|| cfg.config.name.clone())
        .unwrap_or_else(|| {
            root.file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_else(|| "repo".into())
        });
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
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

struct Writers {
    files: TableWriter,
    chunks: TableWriter,
    symbols: TableWriter,
    references: TableWriter,
}

fn write_file_rows(w: &mut Writers, a: &Analysis, m: &ModuleInfo, cfg: &Effective) -> Result<()> {
    let f = &a.file;
    let lang = f.lang.id();
    let t = &mut w.files;
    t.s(&f.path);
    t.s(lang);
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
    t.end_row(f.content.len() + f.path.len() + 100)?;

    let weight = if f.is_test {
        0.5
    } else if cfg.nav_docs.is_match(&f.path) {
        cfg.nav_boost
    } else {
        1.0
    };
    for c in &a.chunks {
        let t = &mut w.chunks;
        t.i64(c.id);
        t.s(&f.path);
        t.s(lang);
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
    for s in &a.parsed.symbols {
        let t = &mut w.symbols;
        t.i64(s.id);
        t.s(&f.path);
        t.s(&s.name);
        t.s(&s.qualified_name);
        t.s(s.kind);
        t.s(lang);
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
    for r in &a.parsed.references {
        let t = &mut w.references;
        t.s(&f.path);
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
    writers: Writers,
    facts: Vec<FileFacts>,
    skipped: SkipCounts,
    reused: u64,
    source_bytes: u64,
    input: String,
    next_symbol_id: i64,
    /// File shapes for pattern detection, and their interned feature names.
    shapes: Vec<crate::patterns::Shape>,
    interner: crate::patterns::Interner,
    /// Navigation docs (path, content) for `mentions` edges.
    nav_docs: Vec<(String, String)>,
    /// Chunks to embed (when embeddings are on), in table order.
    pending: Option<(String, Vec<crate::embeddings::Pending>)>,
}

impl Sink<'_> {
    fn accept(&mut self, entry: &Entry, was_reused: bool, outcome: Outcome) -> Result<()> {
        match outcome {
            Outcome::Binary => self.skipped.binary += 1,
            Outcome::Unreadable(err) => {
                if !self.skip_unreadable {
                    return Err(unreadable_error(self.root, &entry.abs, &err.to_string()));
                }
                self.skipped.unreadable += 1;
            }
            Outcome::Done(mut a) => {
                canonicalize(&mut a);
                renumber_symbols(&mut a, &mut self.next_symbol_id);
                self.reused += u64::from(was_reused);
                self.source_bytes += a.file.size;
                self.input.push_str(&a.file.path);
                self.input.push('\0');
                self.input.push_str(&a.file.sha256);
                self.input.push('\n');
                let m = self.modules.of(&a.file.path, a.file.lang);
                write_file_rows(&mut self.writers, &a, &m, self.cfg)?;
                if let Some((model, pending)) = self.pending.as_mut() {
                    let defs: Vec<crate::embeddings::DefSpan> = a
                        .parsed
                        .symbols
                        .iter()
                        .map(|s| crate::embeddings::DefSpan {
                            kind: s.kind,
                            start: s.start_byte,
                            end: s.end_byte,
                            doc: s.doc.as_deref(),
                            signature: Some(s.signature.as_str()),
                            container: s.container.as_deref(),
                        })
                        .collect();
                    for c in &a.chunks {
                        for input in crate::embeddings::inputs(c, &a.file.content, &defs) {
                            pending.push(crate::embeddings::Pending {
                                id: c.id,
                                key: crate::embeddings::key(model, &input),
                                input,
                                reused: was_reused,
                            });
                        }
                    }
                }
                let lang = a.file.lang.id();
                if !a.file.is_test && !a.file.is_generated && lang != "markdown" && lang != "text" {
                    if let Some(sh) = crate::patterns::shape(
                        &a.file.path,
                        lang,
                        m.module_path.clone(),
                        &a.parsed.symbols,
                        &a.parsed.edges,
                        &mut self.interner,
                    ) {
                        self.shapes.push(sh);
                    }
                }
                if lang == "markdown" && self.cfg.nav_docs.is_match(&a.file.path) {
                    self.nav_docs
                        .push((a.file.path.clone(), a.file.content.clone()));
                }
                let a = *a;
                self.facts.push(FileFacts {
                    path: a.file.path,
                    lang: a.file.lang,
                    symbols: a
                        .parsed
                        .symbols
                        .iter()
                        .map(|s| FactSym::new(&s.name, &s.qualified_name, s.kind, s.id))
                        .collect(),
                    edges: a.parsed.edges,
                });
            }
        }
        Ok(())
    }
}

/// Run a build.
pub fn run(opts: &Options) -> Result<Summary> {
    let started = std::time::Instant::now();
    let root = check_repo(&opts.repo)?;
    let cfg = config::load(&root, opts.max_file_size)?;
    let name = repo_name(&root, &cfg, opts.name.as_deref());
    let git = crate::git::info(&root);
    let threads = opts.threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::new(codes::INTERNAL, e.to_string(), "retry with --threads 1"))?;

    let timing = std::env::var_os("CODE_INDEX_TIMING").is_some();
    let phase = |name: &str| {
        if timing {
            eprintln!("[timing] {name}: {:.2}s", started.elapsed().as_secs_f64());
        }
    };
    // The model is opened first: a missing model or key fails before any work.
    let embedder = match &opts.embeddings {
        Some(eo) => {
            let spec = code_index_schemas::embed::ModelSpec::parse(&eo.model)
                .map_err(|e| Error::new(e.code, e.message, e.hint))?;
            let emb = code_index_schemas::embed::open(&spec)
                .map_err(|e| Error::new(e.code, e.message, e.hint))?;
            let cache = match &eo.cache_dir {
                Some(d) => crate::embeddings::Cache::open(d, &spec.id())?,
                None => crate::embeddings::Cache::memory(),
            };
            Some((emb, cache, eo.flat_max))
        }
        None => None,
    };
    let walked = walk(&root, &cfg, threads)?;
    phase("walk");
    let action = opts
        .secrets
        .or(cfg.config.secrets.action)
        .unwrap_or(config::SecretsAction::Redact);
    if action == config::SecretsAction::Fail {
        let found = crate::secrets::scan(&walked.entries, &cfg, &pool);
        if !found.is_empty() {
            return Err(crate::secrets::gate_error(&found));
        }
    }
    if let Some(p) = walked.unreadable.first() {
        if !opts.skip_unreadable {
            return Err(unreadable_error(&root, p, "cannot read metadata"));
        }
    }
    let paths: Vec<String> = walked.entries.iter().map(|e| e.rel.clone()).collect();
    let modules = Modules::infer(&root, &paths, &cfg.config);

    // Previous snapshot: hash current files first, then load only matching rows.
    let mut previous_ignored = None;
    let mut prev = None;
    let mut prev_dir = None;
    if let Some(pdir) = &opts.previous {
        let pdir = snapshot::resolve_dir(pdir)
            .map_err(|e| Error::new(codes::PREVIOUS_INVALID, e.message, e.hint))?;
        let pm = snapshot::read_manifest(&pdir)?;
        match crate::previous::incompatibility(&pm, &cfg.hash) {
            Some(why) => previous_ignored = Some(why),
            None => {
                let hashes: HashMap<String, String> = pool.install(|| {
                    walked
                        .entries
                        .par_iter()
                        .filter_map(|e| {
                            std::fs::read(&e.abs).ok().map(|b| {
                                let sha = crate::analyze::published_sha256(&e.rel, b, &cfg);
                                (e.rel.clone(), sha)
                            })
                        })
                        .collect()
                });
                prev = Some(crate::previous::load(&pdir, &hashes)?);
                prev_dir = Some((pdir.clone(), pm.embeddings.clone()));
            }
        }
    }

    let tmp = snapshot::begin(&opts.out, &name)?;
    let kv = kv_metadata(&name, &git, &cfg.hash);
    let writers = Writers {
        files: TableWriter::create(&tmp.dir, files_table(), &kv)?,
        chunks: TableWriter::create(&tmp.dir, chunks_table(), &kv)?,
        symbols: TableWriter::create(&tmp.dir, symbols_table(), &kv)?,
        references: TableWriter::create(&tmp.dir, references_table(), &kv)?,
    };
    let bar = if opts.progress && std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(walked.entries.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} indexing [{bar:40}] {pos}/{len} files {per_sec} eta {eta}",
            )
            .unwrap()
            .progress_chars("=> "),
        );
        Some(b)
    } else {
        None
    };

    let skipped0 = SkipCounts {
        default_excluded: walked.default_excluded,
        config_excluded: walked.config_excluded,
        too_large: walked.too_large,
        binary: 0,
        unreadable: walked.unreadable.len() as u64,
    };
    let mut sink = Sink {
        root: &root,
        cfg: &cfg,
        modules: &modules,
        skip_unreadable: opts.skip_unreadable,
        writers,
        facts: Vec::with_capacity(walked.entries.len()),
        skipped: skipped0,
        reused: 0,
        source_bytes: 0,
        input: String::new(),
        next_symbol_id: 1,
        shapes: Vec::new(),
        interner: Default::default(),
        nav_docs: Vec::new(),
        pending: embedder
            .as_ref()
            .map(|(e, _, _)| (e.model_id(), Vec::new())),
    };
    // Analysis of step N+1 (rayon pool) overlaps the writing of step N (sink thread).
    let entries = &walked.entries;
    let prev_ref = prev.as_ref();
    let sink = std::thread::scope(|scope| -> Result<Sink> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Vec<(bool, Outcome)>)>(1);
        let writer = scope.spawn(move || -> Result<Sink> {
            for (start, outcomes) in rx {
                for (i, (was_reused, outcome)) in outcomes.into_iter().enumerate() {
                    sink.accept(&entries[start + i], was_reused, outcome)?;
                }
            }
            Ok(sink)
        });
        for (n, step) in entries.chunks(STEP).enumerate() {
            let outcomes: Vec<(bool, Outcome)> = pool.install(|| {
                step.par_iter()
                    .map(|e: &Entry| analyze_one(&root, e, &cfg, prev_ref))
                    .collect()
            });
            if tx.send((n * STEP, outcomes)).is_err() {
                break; // the sink failed; its error is returned by join
            }
            if let Some(b) = &bar {
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
    })?;
    drop(prev);
    phase("analyze+write");
    if timing {
        for (i, name) in crate::analyze::STAGES.iter().enumerate() {
            let ns = crate::analyze::STAGE_NS[i].load(std::sync::atomic::Ordering::Relaxed);
            eprintln!("[timing]   cpu in {name}: {:.2}s", ns as f64 / 1e9);
        }
    }
    let Sink {
        writers,
        facts,
        skipped,
        reused,
        source_bytes,
        input,
        pending,
        shapes,
        interner,
        nav_docs,
        ..
    } = sink;
    let resolver = Resolver::new(&facts, &modules);
    let mentions = crate::mentions::Mentions::new(&facts, &nav_docs);
    phase("resolve index");
    let mut ew = TableWriter::create(&tmp.dir, edges_table(), &kv)?;
    let idx: Vec<usize> = (0..facts.len()).collect();
    for part in idx.chunks(4 * STEP) {
        let edges: Vec<Vec<Edge>> = pool.install(|| {
            part.par_iter()
                .map(|&fi| {
                    let mut e = resolver.file_edges(fi);
                    if let Some(extra) = mentions.edges(&facts[fi].path) {
                        e.extend(extra);
                        e.sort_by(|a, b| {
                            (a.kind, a.line, &a.dst_name).cmp(&(b.kind, b.line, &b.dst_name))
                        });
                    }
                    e
                })
                .collect()
        });
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
            ew.end_row(e.dst_name.len() + e.src_path.len() + 60)?;
        }
    }
    drop(resolver);
    drop(mentions);
    drop(facts);
    phase("edges");
    // Patterns: families of similarly shaped files.
    let pats = crate::patterns::detect(&shapes, &cfg.config.pattern_dirs, &interner);
    drop(shapes);
    drop(interner);
    let mut pw = TableWriter::create(&tmp.dir, code_index_schemas::patterns_table(), &kv)?;
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
    phase("patterns");
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let mut manifest_files: Vec<ManifestFile> = Vec::new();
    let Writers {
        files,
        chunks,
        symbols,
        references,
    } = writers;
    for w in [files, chunks, symbols, references, ew, pw] {
        let file = w.table.file;
        let rows = w.finish()?;
        manifest_files.push(snapshot::describe(&tmp.dir, file, rows)?);
    }
    let mut embed_info = None;
    let mut embed_stats = None;
    if let (Some((emb, mut cache, flat_max)), Some((model_id, mut items))) = (embedder, pending) {
        for p in &pats {
            items.push(crate::embeddings::Pending {
                id: p.id,
                key: crate::embeddings::key(&model_id, &p.text),
                input: p.text.clone(),
                reused: false,
            });
        }
        // Unchanged files of a previous snapshot with the same model: its vectors seed the cache.
        if let Some((pdir, Some(pe))) = &prev_dir {
            if pe.model == model_id && pe.input == crate::embeddings::INPUT_DOC {
                crate::embeddings::seed_from_snapshot(&mut cache, pdir, &items);
            }
        }
        let (data, dim, stats) =
            crate::embeddings::run(&items, emb.as_ref(), &mut cache, opts.progress)?;
        let ids: Vec<i64> = items.iter().map(|p| p.id).collect();
        let path = tmp.dir.join(code_index_schemas::embed::VECTORS_FILE);
        let layout = if ids.is_empty() {
            String::new()
        } else {
            code_index_schemas::vectors::write(&path, &ids, &data, dim, flat_max)
                .map_err(|e| Error::new(e.code, e.message, e.hint))?
        };
        if !ids.is_empty() {
            manifest_files.push(snapshot::describe(
                &tmp.dir,
                code_index_schemas::embed::VECTORS_FILE,
                ids.len() as u64,
            )?);
            embed_info = Some(code_index_schemas::EmbeddingInfo {
                model: model_id,
                dimension: dim as u32,
                metric: code_index_schemas::embed::METRIC.into(),
                normalized: true,
                index: layout,
                count: ids.len() as u64,
                input: crate::embeddings::INPUT_DOC.into(),
            });
        }
        embed_stats = Some(stats);
        phase("embeddings");
    }
    let input_hash = sha256_hex(format!("{}\n{}", cfg.hash, input).as_bytes());
    let mut manifest = Manifest {
        schema_version: SCHEMA_VERSION,
        feature_version: FEATURE_VERSION,
        tool: BUILDER_NAME.to_string(),
        tool_version: crate::TOOL_VERSION.to_string(),
        repo: name.clone(),
        git,
        config_hash: cfg.hash.clone(),
        input_hash,
        snapshot_id: String::new(),
        skipped: skipped.clone(),
        embeddings: embed_info,
        files: manifest_files,
    };
    phase("finish tables");
    manifest.snapshot_id = snapshot::derive_id(&manifest);
    let dest = snapshot::commit(tmp, &manifest)?;
    let mut tables = std::collections::BTreeMap::new();
    let mut snapshot_bytes = 0;
    for f in &manifest.files {
        snapshot_bytes += f.bytes;
        tables.insert(
            f.name.trim_end_matches(".parquet").to_string(),
            TableSummary {
                rows: f.rows,
                bytes: f.bytes,
            },
        );
    }
    Ok(Summary {
        snapshot_id: manifest.snapshot_id.clone(),
        snapshot_dir: dest.display().to_string(),
        repo: name,
        files: manifest.files[0].rows,
        reused_files: reused,
        previous: opts.previous.as_ref().map(|p| p.display().to_string()),
        previous_ignored,
        skipped,
        source_bytes,
        snapshot_bytes,
        tables,
        embeddings: embed_stats,
        seconds: started.elapsed().as_secs_f64(),
    })
}

fn analyze_one(
    root: &Path,
    e: &Entry,
    cfg: &Effective,
    prev: Option<&crate::previous::Previous>,
) -> (bool, Outcome) {
    if let Some(p) = prev {
        if let Some(a) = p.files.get(&e.rel) {
            // The previous rows were loaded only for unchanged content.
            return (true, Outcome::Done(Box::new(a.clone())));
        }
    }
    (false, read_and_analyze(root, e, cfg))
}

fn unreadable_error(root: &Path, p: &Path, why: &str) -> Error {
    let rel = p.strip_prefix(root).unwrap_or(p).display().to_string();
    Error::new(
        codes::UNREADABLE_FILE,
        format!("cannot read '{rel}': {why}"),
        format!("fix its permissions (chmod +r '{rel}'), add it to `exclude` in .code-index.yaml, or pass --skip-unreadable to leave it out and count it"),
    )
    .at(p)
}

/// Key-value metadata written into every Parquet file.
/// (The snapshot id, file hashes and input hash are derived from these very
/// bytes or from the whole tree, so they live in the manifest only.)
pub fn kv_metadata(
    repo: &str,
    git: &code_index_schemas::GitInfo,
    config_hash: &str,
) -> Vec<(String, String)> {
    let o = |v: &Option<String>| v.clone().unwrap_or_default();
    vec![
        (
            "code_index.schema_version".to_string(),
            SCHEMA_VERSION.to_string(),
        ),
        (
            "code_index.feature_version".to_string(),
            FEATURE_VERSION.to_string(),
        ),
        ("code_index.tool".to_string(), BUILDER_NAME.to_string()),
        (
            "code_index.tool_version".to_string(),
            crate::TOOL_VERSION.to_string(),
        ),
        ("code_index.repo".to_string(), repo.to_string()),
        ("code_index.commit".to_string(), o(&git.commit)),
        ("code_index.branch".to_string(), o(&git.branch)),
        ("code_index.commit_time".to_string(), o(&git.commit_time)),
        (
            "code_index.config_hash".to_string(),
            config_hash.to_string(),
        ),
    ]
}
