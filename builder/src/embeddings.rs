//! Chunk embeddings: what text is embedded, the persistent embedding cache,
//! and the batch run that fills `vectors.faiss`.
//!
//! What is embedded per chunk (chosen for retrieval, measured with
//! `bench/eval_search.py`): the context header's `file:`/`in:` lines, then
//! the chunk text, cut at [`MAX_INPUT_CHARS`] characters at a line boundary
//! (the tokenizer truncates further: MiniLM keeps 256 tokens). Each function
//! or method starting in the chunk adds its signature (with its doc's first
//! paragraph) as one more vector, and each definition starting past the
//! chunk's first [`WINDOW_AFTER_BYTES`] a window of its own text, so a long
//! chunk's later definitions are not lost to truncation. A chunk scores as
//! its best vector.
//!
//! The cache is keyed by (model id, sha256 of that input): an unchanged chunk
//! is never embedded twice, across builds, branches and `--previous` runs.
//! It lives in `~/.cache/code-index/embeddings/<model>.bin` (append-only
//! records: 32-byte key, then `dim` little-endian f32); a torn last record,
//! as a killed build may leave, is ignored on load.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use code_index_schemas::embed::Embedder;
use sha2::{Digest, Sha256};

use crate::chunk::Chunk;
use crate::error::{codes, Error, Result};

/// Most characters of one chunk sent to the model.
pub const MAX_INPUT_CHARS: usize = 2000;
const MAGIC: &[u8; 8] = b"CIEMB01\n";
/// What is embedded, as recorded in the manifest.
pub const INPUT_DOC: &str = "v2. per chunk: its context_header's file:/in: lines + chunk text; plus, for each function/method/constructor starting inside the chunk, its signature (prefixed by its container when the signature does not name it) + the first paragraph of its doc; plus, for each function/method/type starting past the chunk's first 800 bytes, a window of the header + the definition's doc + its text. Identifiers are split into words (parseHTTPDate -> parse http date). ids repeat: a chunk's score is its best vector. Each input is cut at 2000 characters at a line boundary; the model truncates further (MiniLM: 256 tokens)";
/// Definitions starting this far into a chunk get a vector of their own.
pub const WINDOW_AFTER_BYTES: u64 = 800;
/// Most extra windows per chunk.
pub const MAX_WINDOWS: usize = 32;

/// A definition, as windows need it.
pub struct DefSpan<'a> {
    pub kind: &'a str,
    pub start: u64,
    pub end: u64,
    pub doc: Option<&'a str>,
    /// The declaration line(s), e.g. `func (r *Reader) Read(p []byte) (int, error)`.
    pub signature: Option<&'a str>,
    /// The enclosing class or type, e.g. `Popen` for `def wait(self)`.
    pub container: Option<&'a str>,
}

/// Kinds whose signature gets a vector of its own.
const SIGNATURE_KINDS: &[&str] = &["function", "method", "constructor"];
/// Most signature vectors per chunk.
pub const MAX_SIGNATURES: usize = 64;
/// Most characters of a doc comment added to a signature vector.
const SIGNATURE_DOC_CHARS: usize = 600;

/// The signature input of a definition: `Container: signature`, then the
/// first paragraph of its doc. A short, body-free text matches a
/// description of what the function does far better than the whole chunk
/// (measured with bench/eval_search.py: Go semantic MRR@10 0.370 -> 0.476).
pub fn signature_text(d: &DefSpan) -> Option<String> {
    let sig = d.signature.map(str::trim).filter(|x| !x.is_empty())?;
    let mut s = String::with_capacity(sig.len() + 64);
    if let Some(c) = d.container.filter(|c| !c.is_empty() && !sig.contains(*c)) {
        s.push_str(c);
        s.push_str(": ");
    }
    s.push_str(sig);
    if let Some(doc) = d.doc.map(str::trim).filter(|x| !x.is_empty()) {
        let para = doc.split("\n\n").next().unwrap_or(doc);
        let mut cut = para.len().min(SIGNATURE_DOC_CHARS);
        while !para.is_char_boundary(cut) {
            cut -= 1;
        }
        s.push('\n');
        s.push_str(&para[..cut]);
    }
    cap(&mut s);
    Some(s)
}

const WINDOW_KINDS: &[&str] = &[
    "function",
    "method",
    "constructor",
    "class",
    "struct",
    "interface",
    "trait",
    "enum",
    "macro",
];

fn cap(s: &mut String) {
    if s.len() > MAX_INPUT_CHARS {
        let mut cut = MAX_INPUT_CHARS;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        let keep = match s[..cut].rfind('\n') {
            Some(i) if i > MAX_INPUT_CHARS / 2 => i,
            _ => cut,
        };
        s.truncate(keep);
    }
}

/// Every model input of a chunk: the chunk itself, then one window per
/// definition that starts past its first [`WINDOW_AFTER_BYTES`] (so a long
/// chunk's later functions are not lost to the model's truncation).
/// `content` is the file content; `defs` the file's definitions.
pub fn inputs(c: &Chunk, content: &str, defs: &[DefSpan]) -> Vec<String> {
    let mut out = raw_inputs(c, content, defs);
    for s in &mut out {
        *s = code_index_schemas::embed::naturalize(s);
    }
    out
}

fn raw_inputs(c: &Chunk, content: &str, defs: &[DefSpan]) -> Vec<String> {
    let header = header_for_model(&c.context_header);
    let mut out = vec![input_with_header(c, &header)];
    if c.kind == "class_summary" {
        return out;
    }
    let mut sigs = 0;
    for d in defs {
        if sigs >= MAX_SIGNATURES {
            break;
        }
        if !SIGNATURE_KINDS.contains(&d.kind) || d.start < c.start_byte || d.start >= c.end_byte {
            continue;
        }
        if let Some(s) = signature_text(d) {
            out.push(s);
            sigs += 1;
        }
    }
    let windows_from = out.len();
    for d in defs {
        if out.len() - windows_from >= MAX_WINDOWS {
            break;
        }
        if !WINDOW_KINDS.contains(&d.kind)
            || d.start < c.start_byte + WINDOW_AFTER_BYTES
            || d.start >= c.end_byte
        {
            continue;
        }
        let end = d.end.min(c.end_byte) as usize;
        let Some(body) = content.get(d.start as usize..end) else {
            continue;
        };
        let mut s = String::with_capacity(header.len() + body.len().min(MAX_INPUT_CHARS) + 64);
        s.push_str(&header);
        if let Some(doc) = d.doc {
            s.push_str(doc);
            s.push('\n');
        }
        s.push_str(body);
        cap(&mut s);
        out.push(s);
    }
    out
}

/// The context header as the model sees it: the `file:` and `in:` lines.
/// The `defines:` and `related:` name lists help keyword search but make
/// sibling chunks look alike to the model (measured: Go semantic MRR@10
/// 0.349 with them, 0.370 without), so they are left out.
pub fn header_for_model(h: &str) -> String {
    let mut s = String::with_capacity(h.len() + 1);
    for l in h.lines() {
        if l.starts_with("defines: ") || l.starts_with("related: ") {
            continue;
        }
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// The text embedded for a chunk: the model header, then the chunk text.
pub fn input_text(c: &Chunk) -> String {
    input_with_header(c, &header_for_model(&c.context_header))
}

fn input_with_header(c: &Chunk, header: &str) -> String {
    let mut s = String::with_capacity(header.len() + c.text.len().min(MAX_INPUT_CHARS));
    s.push_str(header);
    let budget = MAX_INPUT_CHARS.saturating_sub(s.len());
    if c.text.len() <= budget {
        s.push_str(&c.text);
    } else {
        let mut cut = budget;
        while cut > 0 && !c.text.is_char_boundary(cut) {
            cut -= 1;
        }
        let head = &c.text[..cut];
        let head = match head.rfind('\n') {
            Some(i) if i > budget / 2 => &head[..i],
            _ => head,
        };
        s.push_str(head);
    }
    s
}

/// Cache key of an input under a model.
pub fn key(model_id: &str, input: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(model_id.as_bytes());
    h.update([0u8]);
    h.update(input.as_bytes());
    h.finalize().into()
}

/// The persistent embedding cache of one model.
pub struct Cache {
    path: Option<PathBuf>,
    dim: Option<usize>,
    map: HashMap<[u8; 32], Vec<f32>>,
    file: Option<std::fs::File>,
}

fn cache_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::new(
        codes::EMBEDDING_CACHE,
        format!("embedding cache {}: {e}", path.display()),
        "delete the file (it is only a cache) or pass --embedding-cache <dir>",
    )
}

impl Cache {
    /// An in-memory cache only.
    pub fn memory() -> Cache {
        Cache {
            path: None,
            dim: None,
            map: HashMap::new(),
            file: None,
        }
    }

    /// Open (or create) the cache file of `model_id` under `dir`.
    pub fn open(dir: &Path, model_id: &str) -> Result<Cache> {
        let name: String = model_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("{name}.bin"));
        let mut cache = Cache {
            path: Some(path.clone()),
            ..Cache::memory()
        };
        if let Ok(mut f) = std::fs::File::open(&path) {
            let mut buf = Vec::new();
            f.read_to_end(&mut buf).map_err(|e| cache_err(&path, e))?;
            if buf.len() >= 12 && &buf[..8] == MAGIC {
                let dim = u32::from_le_bytes(buf[8..12].try_into().unwrap()) as usize;
                let rec = 32 + 4 * dim;
                let body = &buf[12..];
                let whole = body.len() / rec * rec;
                if whole != body.len() {
                    // A torn last record (killed build): cut it so appends stay aligned.
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .map_err(|e| cache_err(&path, e))?;
                    f.set_len((12 + whole) as u64)
                        .map_err(|e| cache_err(&path, e))?;
                }
                let body = &body[..whole];
                for r in body.chunks_exact(rec) {
                    let k: [u8; 32] = r[..32].try_into().unwrap();
                    let v = r[32..]
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                        .collect();
                    cache.map.insert(k, v);
                }
                cache.dim = Some(dim);
            } else if !buf.is_empty() {
                return Err(cache_err(&path, "not an embedding cache file"));
            }
        }
        Ok(cache)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Add a vector in memory only (not written to the file).
    pub fn seed(&mut self, k: [u8; 32], v: Vec<f32>) {
        self.map.entry(k).or_insert(v);
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn get(&self, k: &[u8; 32]) -> Option<&Vec<f32>> {
        self.map.get(k)
    }

    /// Add vectors and append them to the file (one write per call).
    pub fn put(&mut self, items: Vec<([u8; 32], Vec<f32>)>) -> Result<()> {
        let Some(first) = items.first() else {
            return Ok(());
        };
        let dim = first.1.len();
        if let Some(path) = self.path.clone() {
            if self.dim.is_some_and(|d| d != dim) {
                return Err(cache_err(&path, "dimension changed for the same model id"));
            }
            let mut buf = Vec::with_capacity(items.len() * (32 + 4 * dim) + 12);
            if self.file.is_none() {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| cache_err(&path, e))?;
                }
                let f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .map_err(|e| cache_err(&path, e))?;
                if f.metadata().map(|m| m.len()).unwrap_or(0) == 0 {
                    buf.extend_from_slice(MAGIC);
                    buf.extend_from_slice(&(dim as u32).to_le_bytes());
                }
                self.file = Some(f);
            }
            for (k, v) in &items {
                buf.extend_from_slice(k);
                for x in v {
                    buf.extend_from_slice(&x.to_le_bytes());
                }
            }
            if let Some(f) = self.file.as_mut() {
                f.write_all(&buf).map_err(|e| cache_err(&path, e))?;
            }
        }
        self.dim = Some(dim);
        self.map.extend(items);
        Ok(())
    }
}

/// Seed the cache with a previous snapshot's vectors for the chunks whose
/// ids (path, kind, span) it shares with the `reused` items: their files are
/// unchanged, so chunk ids and inputs are the same as before. A
/// missing or unreadable vector file only costs re-embedding.
pub fn seed_from_snapshot(cache: &mut Cache, dir: &Path, items: &[Pending]) -> usize {
    let path = dir.join(code_index_schemas::embed::VECTORS_FILE);
    let Ok(v) = code_index_schemas::vectors::read(&path) else {
        return 0;
    };
    if v.ivf.is_some() {
        return 0;
    }
    // A chunk's vectors are consecutive, in window order, under its id.
    let mut by_id: HashMap<i64, Vec<usize>> = HashMap::new();
    for (i, &id) in v.ids.iter().enumerate() {
        by_id.entry(id).or_default().push(i);
    }
    let mut seen: HashMap<i64, usize> = HashMap::new();
    let mut n = 0;
    for p in items {
        let k = seen.entry(p.id).or_insert(0);
        let window = *k;
        *k += 1;
        if !p.reused {
            continue;
        }
        if let Some(&i) = by_id.get(&p.id).and_then(|rows| rows.get(window)) {
            if cache.get(&p.key).is_none() {
                cache.seed(p.key, v.row(i).to_vec());
                n += 1;
            }
        }
    }
    n
}

/// One chunk waiting for its vector.
pub struct Pending {
    pub id: i64,
    pub key: [u8; 32],
    /// The model input.
    pub input: String,
    /// The chunk comes from a file reused unchanged from `--previous`.
    pub reused: bool,
}

/// What the embedding step did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Stats {
    pub chunks: u64,
    pub from_cache: u64,
    pub embedded: u64,
    pub seconds: f64,
}

/// Vectors in `items` order: cached ones from `cache`, the rest embedded
/// (shortest first, so batches carry little padding) and added to the cache
/// batch by batch (a killed build keeps what it paid for).
pub fn run(
    items: &[Pending],
    embedder: &dyn Embedder,
    cache: &mut Cache,
    progress: bool,
) -> Result<(Vec<f32>, usize, Stats)> {
    let started = std::time::Instant::now();
    let mut stats = Stats {
        chunks: items.len() as u64,
        ..Stats::default()
    };
    let mut todo: Vec<usize> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, p) in items.iter().enumerate() {
        if cache.get(&p.key).is_some() {
            stats.from_cache += 1;
        } else if seen.insert(p.key) {
            todo.push(i);
        }
    }
    todo.sort_by_key(|&i| (items[i].input.len(), i));
    let bar =
        (progress && !todo.is_empty() && std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .then(|| {
                let b = indicatif::ProgressBar::new(todo.len() as u64);
                b.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{spinner} embedding [{bar:40}] {pos}/{len} chunks {per_sec} eta {eta}",
                    )
                    .unwrap()
                    .progress_chars("=> "),
                );
                b
            });
    let bs = embedder.batch_size().max(1);
    for batch in todo.chunks(bs) {
        let texts: Vec<String> = batch.iter().map(|&i| items[i].input.clone()).collect();
        let vecs = embedder.embed_documents(&texts)?;
        stats.embedded += batch.len() as u64;
        cache.put(batch.iter().map(|&i| items[i].key).zip(vecs).collect())?;
        if let Some(b) = &bar {
            b.inc(batch.len() as u64);
        }
    }
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let dim = items
        .first()
        .and_then(|p| cache.get(&p.key))
        .map(|v| v.len())
        .unwrap_or(0);
    let mut data = Vec::with_capacity(items.len() * dim);
    for p in items {
        data.extend_from_slice(cache.get(&p.key).expect("every key was embedded"));
    }
    stats.embedded = todo.len() as u64;
    stats.seconds = started.elapsed().as_secs_f64();
    Ok((data, dim, stats))
}

/// What `upgrade-embeddings` did.
#[derive(Debug, serde::Serialize)]
pub struct UpgradeSummary {
    pub snapshot_id: String,
    pub snapshot_dir: String,
    pub model: String,
    pub stats: Stats,
}

/// The embedding inputs of a snapshot's chunks (from its tables), in table order.
pub fn snapshot_items(dir: &Path, model_id: &str) -> Result<Vec<Pending>> {
    use code_index_schemas::table::Nullable;
    use code_index_schemas::{chunks_table, files_table, patterns_table, symbols_table, Table};
    // Unreadable files are E_PREVIOUS_INVALID (as they have always been
    // here); missing or retyped columns E_SNAPSHOT_INVALID.
    let open = |table: &Table, columns: &[&str]| {
        crate::previous::open_table(
            dir,
            table,
            columns,
            codes::SNAPSHOT_INVALID,
            "rebuild the snapshot with `code-indexer index`",
        )
    };
    let mut content: HashMap<String, String> = HashMap::new();
    for b in open(&files_table(), &["path", "content"])? {
        let b = b?;
        let (p, c) = (b.str("path"), b.str("content"));
        for i in 0..b.num_rows() {
            content.insert(p.value(i).to_string(), c.value(i).to_string());
        }
    }
    // Definitions per file (kind, start, end, doc, signature, container), for the windows.
    type Def = (
        String,
        u64,
        u64,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let mut defs: HashMap<String, Vec<Def>> = HashMap::new();
    for b in open(
        &symbols_table(),
        &[
            "path",
            "kind",
            "start_byte",
            "end_byte",
            "doc",
            "signature",
            "container",
        ],
    )? {
        let b = b?;
        let (p, k, sb, eb, d, sg, ct) = (
            b.str("path"),
            b.str("kind"),
            b.i64("start_byte"),
            b.i64("end_byte"),
            b.str("doc"),
            b.str("signature"),
            b.str("container"),
        );
        for i in 0..b.num_rows() {
            defs.entry(p.value(i).to_string()).or_default().push((
                k.value(i).to_string(),
                sb.value(i) as u64,
                eb.value(i) as u64,
                d.opt(i).map(str::to_string),
                sg.opt(i).map(str::to_string),
                ct.opt(i).map(str::to_string),
            ));
        }
    }
    let mut items = Vec::new();
    for b in open(
        &chunks_table(),
        &[
            "kind",
            "chunk_id",
            "path",
            "context_header",
            "text",
            "start_byte",
            "end_byte",
        ],
    )? {
        let b = b?;
        let (kind, id, path, header, text, sb, eb) = (
            b.str("kind"),
            b.i64("chunk_id"),
            b.str("path"),
            b.str("context_header"),
            b.str("text"),
            b.i64("start_byte"),
            b.i64("end_byte"),
        );
        for i in 0..b.num_rows() {
            let body = match text.opt(i) {
                Some(t) => t.to_string(),
                None => content
                    .get(path.value(i))
                    .and_then(|c| c.get(sb.value(i) as usize..eb.value(i) as usize))
                    .unwrap_or("")
                    .to_string(),
            };
            let c = Chunk {
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
            };
            let spans: Vec<DefSpan> = defs
                .get(path.value(i))
                .map(|v| {
                    v.iter()
                        .map(|(k, s, e, d, sg, ct)| DefSpan {
                            kind: k,
                            start: *s,
                            end: *e,
                            doc: d.as_deref(),
                            signature: sg.as_deref(),
                            container: ct.as_deref(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let empty = String::new();
            let content_of = content.get(path.value(i)).unwrap_or(&empty);
            for input in inputs(&c, content_of, &spans) {
                items.push(Pending {
                    id: c.id,
                    key: key(model_id, &input),
                    input,
                    reused: false,
                });
            }
        }
    }
    // Pattern chunks, as `index` embeds them (after the chunks, in table order).
    if dir.join("patterns.parquet").is_file() {
        for b in open(&patterns_table(), &["pattern_id", "text"])? {
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
    }
    Ok(items)
}

/// How `upgrade` embeds.
#[derive(Clone, Copy)]
pub struct UpgradeOptions<'a> {
    pub model: &'a str,
    pub cache_dir: Option<&'a Path>,
    pub flat_max: usize,
    pub progress: bool,
    /// Only announce the count.
    pub dry_run: bool,
}

/// Re-embed a snapshot's chunks with another model into a new snapshot
/// under `out` (tables are copied unchanged; vectors and manifest are new).
/// `announce` hears how many inputs will be embedded before any is; with
/// `dry_run` nothing else happens.
pub fn upgrade(
    snapshot: &Path,
    out: &Path,
    opts: &UpgradeOptions,
    announce: &mut dyn FnMut(usize, usize, usize, &str),
) -> Result<Option<UpgradeSummary>> {
    let UpgradeOptions {
        model,
        cache_dir,
        flat_max,
        progress,
        dry_run,
    } = *opts;
    let src = crate::snapshot::resolve_dir(snapshot)?;
    let mut manifest = crate::snapshot::read_manifest(&src)?;
    let spec = code_index_schemas::embed::ModelSpec::parse(model)?;
    let model_id = spec.id();
    let mut cache = match cache_dir {
        Some(d) => Cache::open(d, &model_id)?,
        None => Cache::memory(),
    };
    let items = snapshot_items(&src, &model_id)?;
    let mut distinct = std::collections::HashSet::new();
    let todo = items
        .iter()
        .filter(|p| cache.get(&p.key).is_none() && distinct.insert(p.key))
        .count();
    let chunks = items
        .iter()
        .map(|p| p.id)
        .collect::<std::collections::HashSet<_>>()
        .len();
    announce(todo, items.len(), chunks, &model_id);
    if dry_run {
        return Ok(None);
    }
    let embedder = code_index_schemas::embed::open(&spec)?;
    let (data, dim, stats) = run(&items, embedder.as_ref(), &mut cache, progress)?;
    let tmp = crate::snapshot::begin(out, &manifest.repo)?;
    let mut files = Vec::new();
    for f in manifest
        .files
        .iter()
        .filter(|f| f.name.ends_with(".parquet"))
    {
        let (from, to) = (src.join(&f.name), tmp.dir.join(&f.name));
        if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).map_err(|e| {
                Error::io(
                    codes::WRITE,
                    "cannot copy",
                    &to,
                    e,
                    "check the --out directory",
                )
            })?;
        }
        files.push(f.clone());
    }
    let vpath = tmp.dir.join(code_index_schemas::embed::VECTORS_FILE);
    let ids: Vec<i64> = items.iter().map(|p| p.id).collect();
    manifest.embeddings = None;
    if !ids.is_empty() {
        let layout = code_index_schemas::vectors::write(&vpath, &ids, &data, dim, flat_max)?;
        files.push(crate::snapshot::describe(
            &tmp.dir,
            code_index_schemas::embed::VECTORS_FILE,
            ids.len() as u64,
        )?);
        manifest.embeddings = Some(code_index_schemas::EmbeddingInfo {
            model: model_id.clone(),
            dimension: dim as u32,
            metric: code_index_schemas::embed::METRIC.into(),
            normalized: true,
            index: layout,
            count: ids.len() as u64,
            input: INPUT_DOC.into(),
        });
    }
    manifest.files = files;
    manifest.snapshot_id = String::new();
    manifest.snapshot_id = crate::snapshot::derive_id(&manifest);
    let dest = crate::snapshot::commit(tmp, &manifest)?;
    Ok(Some(UpgradeSummary {
        snapshot_id: manifest.snapshot_id.clone(),
        snapshot_dir: dest.display().to_string(),
        model: model_id,
        stats,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(header: &str, text: &str) -> Chunk {
        Chunk {
            id: 1,
            chunk_type: "code".into(),
            kind: "definition".into(),
            symbol: None,
            heading_path: None,
            start_line: 1,
            end_line: 1,
            start_byte: 0,
            end_byte: text.len() as u64,
            token_count: 1,
            context_header: header.into(),
            text: text.into(),
        }
    }

    #[test]
    fn input_starts_with_header_and_is_capped() {
        let long = "x = 1\n".repeat(1000);
        let s = input_text(&chunk("file: a.py", &long));
        assert!(s.starts_with("file: a.py\nx = 1\n"));
        assert!(s.len() <= MAX_INPUT_CHARS);
        assert!(s.ends_with("x = 1"));
        let s = input_text(&chunk("h", "é".repeat(3000).as_str()));
        assert!(s.len() <= MAX_INPUT_CHARS);
    }

    #[test]
    fn model_header_drops_name_lists() {
        let h = "file: a/b.py\nin: class Popen(object)\nrelated: wait, poll, kill";
        assert_eq!(
            header_for_model(h),
            "file: a/b.py\nin: class Popen(object)\n"
        );
        let h = "file: x.go\ndefines: a, b, c";
        assert_eq!(header_for_model(h), "file: x.go\n");
    }

    #[test]
    fn one_signature_input_per_function_in_the_chunk_then_windows() {
        let body = format!(
            "def wait(self):\n    return 1\n{}def poll(self):\n    return 2\n",
            "#\n".repeat(500)
        );
        let c = chunk("file: sub.py\nin: class Popen\nrelated: wait, poll", &body);
        let poll_at = body.find("def poll").unwrap() as u64;
        let defs = [
            DefSpan {
                kind: "method",
                start: 0,
                end: 28,
                doc: Some("Wait for the child.\n\nMore details."),
                signature: Some("def wait(self)"),
                container: Some("Popen"),
            },
            DefSpan {
                kind: "method",
                start: poll_at,
                end: body.len() as u64,
                doc: None,
                signature: Some("def poll(self)"),
                container: Some("Popen"),
            },
            // A Go method names its receiver type in the signature: no prefix.
            DefSpan {
                kind: "method",
                start: poll_at + 1,
                end: body.len() as u64,
                doc: None,
                signature: Some("func (r *Reader) Read(p []byte) (int, error)"),
                container: Some("Reader"),
            },
            // Outside the chunk: no input.
            DefSpan {
                kind: "function",
                start: body.len() as u64 + 5,
                end: body.len() as u64 + 50,
                doc: None,
                signature: Some("def elsewhere()"),
                container: None,
            },
        ];
        let ins = raw_inputs(&c, &body, &defs);
        assert_eq!(ins.len(), 1 + 3 + 2, "{ins:#?}");
        assert!(ins[0].starts_with("file: sub.py\nin: class Popen\ndef wait"));
        assert_eq!(ins[1], "Popen: def wait(self)\nWait for the child.");
        assert_eq!(ins[2], "Popen: def poll(self)");
        assert_eq!(ins[3], "func (r *Reader) Read(p []byte) (int, error)");
        // Windows: the definitions past the first 800 bytes, with the model header.
        assert!(ins[4].starts_with("file: sub.py\nin: class Popen\ndef poll"));
        assert!(inputs(&c, &body, &defs)[3].starts_with("func (r *Reader) Read(p []byte)"));
        // A class summary gets no signature inputs.
        let mut summary = c.clone();
        summary.kind = "class_summary".into();
        assert_eq!(raw_inputs(&summary, &body, &defs).len(), 1);
    }

    #[test]
    fn cache_round_trips_and_ignores_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cache::open(dir.path(), "m:x").unwrap();
        c.put(vec![([1; 32], vec![1.0, 2.0]), ([2; 32], vec![3.0, 4.0])])
            .unwrap();
        c.put(vec![([3; 32], vec![5.0, 6.0])]).unwrap();
        drop(c);
        let path = dir.path().join("m_x.bin");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(&[9; 17]).unwrap(); // torn record
        let mut c = Cache::open(dir.path(), "m:x").unwrap();
        assert_eq!(c.len(), 3);
        c.put(vec![([4; 32], vec![7.0, 8.0])]).unwrap();
        drop(c);
        let c = Cache::open(dir.path(), "m:x").unwrap();
        assert_eq!(c.len(), 4);
        assert_eq!(c.get(&[4; 32]).unwrap(), &vec![7.0, 8.0]);
        assert_eq!(c.get(&[3; 32]).unwrap(), &vec![5.0, 6.0]);
        std::fs::write(&path, b"garbage!garbage").unwrap();
        assert!(Cache::open(dir.path(), "m:x").is_err());
    }
}
