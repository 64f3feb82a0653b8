//! The semantic layer's engine: chunk metadata, a BM25 keyword index built
//! at load (over chunk text, symbol names and path tokens, with identifier
//! splitting), exact vector search over `vectors.faiss`, reciprocal-rank
//! fusion, and query classification. The MCP wrappers live in `semtools`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow_array::{Array, BooleanArray, Float32Array, Int32Array, Int64Array, StringArray};
use code_index_schemas::embed::{self, Embedder, ModelSpec};
use code_index_schemas::vectors::Vectors;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rayon::prelude::*;

use crate::snapshot::Snapshot;

/// A chunk filter (shared by the parallel scorers).
pub type Allowed<'a> = dyn Fn(usize) -> bool + Sync + 'a;

/// One retrieval unit. Kept small (≈ 100 bytes plus its symbol): a large
/// repository has a hundred thousand of them, resident for the server's life.
#[derive(Clone, Debug)]
pub struct ChunkMeta {
    pub snap: u32,
    /// Index into the snapshot's `files` (sorted by path).
    pub file: u32,
    pub id: i64,
    /// Interned: a small vocabulary (`function`, `method`, `class_summary`, `pattern`, …).
    pub kind: &'static str,
    pub chunk_type: &'static str,
    pub symbol: Option<Box<str>>,
    /// Shared by the chunks of a file.
    pub module: Option<Arc<str>>,
    pub heading: Option<Box<str>>,
    pub start_line: u32,
    pub end_line: u32,
    pub start_byte: u32,
    pub end_byte: u32,
    pub is_test: bool,
    pub weight: f32,
    /// Synthesized text (class summaries, patterns); else the byte span of the file.
    pub text: Option<Box<str>>,
}

/// The `&'static str` for a kind or chunk type (a small, bounded vocabulary
/// written by the builder; each distinct value is stored once per process).
pub fn intern(s: &str) -> &'static str {
    static SEEN: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut seen = crate::guard::lock(&SEEN);
    if let Some(k) = seen.iter().find(|k| **k == s) {
        return k;
    }
    let k: &'static str = Box::leak(s.to_string().into_boxed_str());
    seen.push(k);
    k
}

/// Per-snapshot vectors.
pub struct SnapVectors {
    pub model: String,
    pub vectors: Vectors,
    /// Vector row → chunk index.
    pub chunk_of_row: Vec<u32>,
}

type OpenedModel = Result<Arc<dyn Embedder>, embed::EmbedError>;
/// (model id, query, vector).
type CachedQuery = (String, String, Arc<Vec<f32>>);

/// Everything search_code needs, built once per server.
pub struct Engine {
    pub chunks: Vec<ChunkMeta>,
    pub bm25: Bm25,
    /// Per snapshot (same order as `State::snaps`): vectors, or why none.
    pub vectors: Vec<Result<SnapVectors, String>>,
    embedders: Mutex<HashMap<String, OpenedModel>>,
    query_cache: Mutex<Vec<CachedQuery>>,
    /// (snapshot, file) → range of its chunks in `chunks` (pattern chunks excluded).
    pub file_chunks: HashMap<(u32, u32), (usize, usize)>,
    /// (snapshot, file) → name of the pattern the file follows.
    pub follows: HashMap<(u32, u32), String>,
    pub build_seconds: f64,
}

/// Run `f` over a chunk's text.
pub fn with_chunk_text<R>(c: &ChunkMeta, snaps: &[Snapshot], f: impl FnOnce(&str) -> R) -> R {
    if let Some(t) = &c.text {
        return f(t);
    }
    snaps[c.snap as usize].files[c.file as usize].with_content(|content| {
        let (s, e) = (
            c.start_byte as usize,
            (c.end_byte as usize).min(content.len()),
        );
        f(content.get(s..e).unwrap_or(""))
    })
}

fn open_table(
    p: &std::path::Path,
) -> Result<parquet::arrow::arrow_reader::ParquetRecordBatchReader, String> {
    let file = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
    ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.with_batch_size(8192).build())
        .map_err(|e| format!("{}: {e}", p.display()))
}

/// Path → index into the snapshot's `files`.
fn file_index_map(snap: &Snapshot) -> HashMap<&str, u32> {
    snap.files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_str(), i as u32))
        .collect()
}

fn load_chunks(si: usize, snap: &Snapshot) -> Result<Vec<ChunkMeta>, String> {
    let p = snap.dir.join("chunks.parquet");
    let reader = open_table(&p)?;
    let index = file_index_map(snap);
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| format!("{}: {e}", p.display()))?;
        macro_rules! col {
            ($n:expr, $t:ty) => {
                batch
                    .column_by_name($n)
                    .and_then(|c| c.as_any().downcast_ref::<$t>().cloned())
                    .ok_or_else(|| format!("{} lacks column {}", p.display(), $n))?
            };
        }
        let id = col!("chunk_id", Int64Array);
        let path = col!("path", StringArray);
        let ctype = col!("chunk_type", StringArray);
        let kind = col!("kind", StringArray);
        let symbol = col!("symbol", StringArray);
        let module = col!("module_path", StringArray);
        let heading = col!("heading_path", StringArray);
        let sl = col!("start_line", Int32Array);
        let el = col!("end_line", Int32Array);
        let sb = col!("start_byte", Int64Array);
        let eb = col!("end_byte", Int64Array);
        let test = col!("is_test", BooleanArray);
        let weight = col!("retrieval_weight", Float32Array);
        let text = col!("text", StringArray);
        let opt = |a: &StringArray, i: usize| (!a.is_null(i)).then(|| Box::from(a.value(i)));
        let mut last_module: Option<Arc<str>> = None;
        for i in 0..batch.num_rows() {
            let Some(&fi) = index.get(path.value(i)) else {
                continue;
            };
            let module = (!module.is_null(i)).then(|| {
                let m = module.value(i);
                match &last_module {
                    Some(l) if &**l == m => l.clone(),
                    _ => {
                        let a: Arc<str> = Arc::from(m);
                        last_module = Some(a.clone());
                        a
                    }
                }
            });
            out.push(ChunkMeta {
                snap: si as u32,
                file: fi,
                id: id.value(i),
                kind: intern(kind.value(i)),
                chunk_type: intern(ctype.value(i)),
                symbol: opt(&symbol, i),
                module,
                heading: opt(&heading, i),
                start_line: sl.value(i) as u32,
                end_line: el.value(i) as u32,
                start_byte: sb.value(i).clamp(0, u32::MAX as i64) as u32,
                end_byte: eb.value(i).clamp(0, u32::MAX as i64) as u32,
                is_test: test.value(i),
                weight: weight.value(i),
                text: opt(&text, i),
            });
        }
    }
    Ok(out)
}

/// Pattern chunks (one per pattern, on its canonical file) and membership.
#[allow(clippy::type_complexity)]
fn load_patterns(
    si: usize,
    snap: &Snapshot,
) -> Result<(Vec<ChunkMeta>, HashMap<(u32, u32), String>), String> {
    let p = snap.dir.join("patterns.parquet");
    let mut chunks = Vec::new();
    let mut members = HashMap::new();
    // Only a table the manifest lists (and so verified) is read.
    if !p.is_file()
        || !snap
            .manifest
            .files
            .iter()
            .any(|f| f.name == "patterns.parquet")
    {
        return Ok((chunks, members));
    }
    let reader = open_table(&p)?;
    let index = file_index_map(snap);
    for batch in reader {
        let batch = batch.map_err(|e| format!("{}: {e}", p.display()))?;
        macro_rules! col {
            ($n:expr, $t:ty) => {
                batch
                    .column_by_name($n)
                    .and_then(|c| c.as_any().downcast_ref::<$t>().cloned())
                    .ok_or_else(|| format!("{} lacks column {}", p.display(), $n))?
            };
        }
        let id = col!("pattern_id", Int64Array);
        let name = col!("name", StringArray);
        let module = col!("module_path", StringArray);
        let path = col!("path", StringArray);
        let text = col!("text", StringArray);
        for i in 0..batch.num_rows() {
            let Some(&fi) = index.get(path.value(i)) else {
                continue;
            };
            members.insert((si as u32, fi), name.value(i).to_string());
            if text.is_null(i) {
                continue;
            }
            let f = &snap.files[fi as usize];
            chunks.push(ChunkMeta {
                snap: si as u32,
                file: fi,
                id: id.value(i),
                kind: "pattern",
                chunk_type: "code",
                symbol: Some(Box::from(name.value(i))),
                module: (!module.is_null(i)).then(|| Arc::from(module.value(i))),
                heading: None,
                start_line: 1,
                end_line: f.lines.max(1),
                start_byte: 0,
                end_byte: f.content_len().min(u32::MAX as usize) as u32,
                is_test: false,
                weight: 1.0,
                text: Some(Box::from(text.value(i))),
            });
        }
    }
    Ok((chunks, members))
}

impl Engine {
    /// Build from loaded snapshots (chunks, BM25, vectors).
    pub fn build(snaps: &[Snapshot]) -> Engine {
        let t0 = std::time::Instant::now();
        let mut chunks = Vec::new();
        let mut vectors = Vec::new();
        let mut follows = HashMap::new();
        for (si, s) in snaps.iter().enumerate() {
            let base = chunks.len();
            match load_chunks(si, s) {
                Ok(c) => chunks.extend(c),
                Err(e) => eprintln!("code-index-mcp: chunks of {}: {e}", s.repo()),
            }
            match load_patterns(si, s) {
                Ok((pc, members)) => {
                    chunks.extend(pc);
                    follows.extend(members);
                }
                Err(e) => eprintln!("code-index-mcp: patterns of {}: {e}", s.repo()),
            }
            vectors.push(load_vectors(s, &chunks[base..], base));
        }
        // Extending by the pattern chunks doubled the capacity: 13 MB of
        // go-stdlib's 26 MB were unused.
        chunks.shrink_to_fit();
        let bm25 = Bm25::build(&chunks, snaps);
        let mut file_chunks: HashMap<(u32, u32), (usize, usize)> = HashMap::new();
        for (i, c) in chunks
            .iter()
            .enumerate()
            .filter(|(_, c)| c.kind != "pattern")
        {
            file_chunks
                .entry((c.snap, c.file))
                .and_modify(|r| r.1 = i + 1)
                .or_insert((i, i + 1));
        }
        // Give the build's scratch memory back to the OS.
        crate::memory::trim_heap();
        Engine {
            follows,
            file_chunks,
            chunks,
            bm25,
            vectors,
            embedders: Mutex::new(HashMap::new()),
            query_cache: Mutex::new(Vec::new()),
            build_seconds: t0.elapsed().as_secs_f64(),
        }
    }

    /// The chunk of a file that best holds `line`: the smallest span
    /// containing it (definitions and methods before summaries).
    pub fn chunk_at(&self, snap: u32, file: u32, line: u32) -> Option<usize> {
        let (a, b) = *self.file_chunks.get(&(snap, file))?;
        (a..b)
            .filter(|&i| {
                let c = &self.chunks[i];
                c.start_line <= line && line <= c.end_line && c.kind != "pattern"
            })
            .min_by_key(|&i| {
                let c = &self.chunks[i];
                (c.kind == "class_summary", c.end_line - c.start_line, i)
            })
            .or(Some(a))
    }

    /// The embedder for a model id (opened once; failures are remembered).
    pub fn embedder(&self, model: &str) -> Result<Arc<dyn Embedder>, embed::EmbedError> {
        let mut m = crate::guard::lock(&self.embedders);
        if let Some(r) = m.get(model) {
            return r.clone();
        }
        let r = ModelSpec::parse(model)
            .and_then(|spec| embed::open(&spec))
            .map(Arc::from);
        m.insert(model.to_string(), r.clone());
        r
    }

    /// The query's vector under `model` (cached).
    pub fn query_vector(&self, model: &str, q: &str) -> Result<Arc<Vec<f32>>, embed::EmbedError> {
        if let Some((_, _, v)) = crate::guard::lock(&self.query_cache)
            .iter()
            .find(|(m, t, _)| m == model && t == q)
        {
            return Ok(v.clone());
        }
        let v = Arc::new(self.embedder(model)?.embed_query(&embed::naturalize(q))?);
        let mut c = crate::guard::lock(&self.query_cache);
        c.push((model.to_string(), q.to_string(), v.clone()));
        if c.len() > 128 {
            c.remove(0);
        }
        Ok(v)
    }

    /// Chunks by vector similarity (cosine), best first, among `allowed`.
    pub fn semantic(
        &self,
        si: usize,
        qv: &[f32],
        allowed: &Allowed,
        k: usize,
    ) -> Vec<(usize, f32)> {
        let Some(Ok(sv)) = self.vectors.get(si) else {
            return Vec::new();
        };
        let v = &sv.vectors;
        if let Some(ivf) = &v.ivf {
            let want = (k * 20).min(v.len()).max(1);
            // The lock is held for FAISS's search only, never across our code.
            let res = {
                let mut idx = crate::guard::lock(ivf);
                faiss::Index::search(&mut *idx, qv, want)
            };
            let Ok(res) = res else {
                return Vec::new();
            };
            let row_of: HashMap<i64, usize> =
                v.ids.iter().enumerate().map(|(r, &id)| (id, r)).collect();
            let mut seen = std::collections::HashSet::new();
            return res
                .labels
                .iter()
                .zip(res.distances.iter())
                .filter_map(|(l, d)| {
                    let id = l.get()? as i64;
                    let ci = *sv.chunk_of_row.get(*row_of.get(&id)?)?;
                    // A vector whose id matches no chunk is skipped.
                    if ci == NO_CHUNK {
                        return None;
                    }
                    let ci = ci as usize;
                    (allowed(ci) && seen.insert(ci)).then_some((ci, *d))
                })
                .take(k)
                .collect();
        }
        let scored: Vec<(usize, f32)> = (0..v.len())
            .into_par_iter()
            .filter_map(|r| {
                let ci = sv.chunk_of_row[r];
                if ci == NO_CHUNK || !allowed(ci as usize) {
                    return None;
                }
                let row = v.row(r);
                let s: f32 = row.iter().zip(qv).map(|(a, b)| a * b).sum();
                Some((ci as usize, s))
            })
            .collect();
        // A chunk may have several vectors (definition windows): keep its best.
        let mut best: HashMap<usize, f32> = HashMap::with_capacity(scored.len());
        for (ci, s) in scored {
            let e = best.entry(ci).or_insert(f32::MIN);
            if s > *e {
                *e = s;
            }
        }
        let mut scored: Vec<(usize, f32)> = best.into_iter().collect();
        top_k(&mut scored, k);
        scored
    }
}

fn load_vectors(s: &Snapshot, chunks: &[ChunkMeta], base: usize) -> Result<SnapVectors, String> {
    let Some(info) = &s.manifest.embeddings else {
        return Err("the snapshot was built with --no-embeddings".into());
    };
    let path = s.dir.join(embed::VECTORS_FILE);
    let vectors = code_index_schemas::vectors::read(&path).map_err(|e| e.message)?;
    let by_id: HashMap<i64, u32> = chunks
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id, (base + i) as u32))
        .collect();
    let chunk_of_row = vectors
        .ids
        .iter()
        .map(|id| by_id.get(id).copied().unwrap_or(NO_CHUNK))
        .collect();
    Ok(SnapVectors {
        model: info.model.clone(),
        vectors,
        chunk_of_row,
    })
}

/// `chunk_of_row` of a vector whose id matches no chunk (skipped by every search).
const NO_CHUNK: u32 = u32::MAX;

/// Keep the k best (highest score, then lowest index) in order.
pub fn top_k(v: &mut Vec<(usize, f32)>, k: usize) {
    let cmp = |a: &(usize, f32), b: &(usize, f32)| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    };
    if v.len() > k && k > 0 {
        v.select_nth_unstable_by(k - 1, cmp);
        v.truncate(k);
    }
    v.sort_by(cmp);
}

// ------------------------------------------------------------------ terms

const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "i", "if",
    "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "what",
    "when", "where", "which", "who", "why", "with", "work", "works", "get", "set", "self", "none",
    "return", "returns", "def", "func", "fn", "let", "var", "const", "new", "true", "false", "nil",
];

fn is_stop(t: &str) -> bool {
    static SET: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
        std::sync::OnceLock::new();
    SET.get_or_init(|| STOPWORDS.iter().copied().collect())
        .contains(t)
}

/// Crude English stemming: plural and common verb endings.
pub fn stem(t: &str) -> String {
    let n = t.len();
    if n > 4 && t.ends_with("ies") {
        return format!("{}y", &t[..n - 3]);
    }
    if n > 5 && t.ends_with("ing") {
        return t[..n - 3].to_string();
    }
    if n > 4 && t.ends_with("ed") && !t.ends_with("eed") {
        return t[..n - 2].to_string();
    }
    if n > 3 && t.ends_with('s') && !t.ends_with("ss") && !t.ends_with("us") && !t.ends_with("is") {
        return t[..n - 1].to_string();
    }
    t.to_string()
}

/// Split an identifier into its words: `parseHTTPRequest_v2` → parse, http, request, v2.
pub fn split_ident(w: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for seg in w.split('_').filter(|s| !s.is_empty()) {
        let cs: Vec<char> = seg.chars().collect();
        let mut cur = String::new();
        for i in 0..cs.len() {
            let c = cs[i];
            let boundary = i > 0
                && ((c.is_uppercase() && cs[i - 1].is_lowercase())
                    || (c.is_uppercase()
                        && cs[i - 1].is_uppercase()
                        && cs.get(i + 1).is_some_and(|n| n.is_lowercase())));
            if boundary && !cur.is_empty() {
                parts.push(std::mem::take(&mut cur));
            }
            cur.push(c);
        }
        if !cur.is_empty() {
            parts.push(cur);
        }
    }
    parts
}

/// Index/query terms of a text: lowercased words, identifiers split into
/// their parts (the whole identifier is kept too), stemmed, stopwords out.
pub fn terms(text: &str, out: &mut Vec<String>) {
    for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if w.is_empty() || w.len() > 64 {
            continue;
        }
        let lw = w.to_lowercase();
        let parts = split_ident(w);
        if parts.len() > 1 {
            if !is_stop(&lw) {
                out.push(lw);
            }
            for p in parts {
                let p = p.to_lowercase();
                if p.len() >= 2 && !is_stop(&p) {
                    out.push(stem(&p));
                }
            }
        } else if lw.len() >= 2 && !is_stop(&lw) && !lw.chars().all(|c| c.is_ascii_digit()) {
            out.push(stem(&lw));
        }
    }
}

// ------------------------------------------------------------------ BM25

/// An inverted index over chunks: text, symbol (twice), heading and path words.
/// Terms are kept as sorted 64-bit hashes and postings as delta-coded
/// varints, so the index costs ≈ 1.3 bytes per posting and 16 per term.
pub struct Bm25 {
    /// Term hashes, sorted; a term's id is its position.
    terms: Vec<u64>,
    /// Postings of term t: `postings[offsets[t]..offsets[t + 1]]`, documents
    /// ascending, each a varint of `gap << 1 | (tf > 1)` followed by a varint
    /// of tf when tf > 1 (≈ 1.3 bytes a posting instead of 6).
    offsets: Vec<u32>,
    postings: Vec<u8>,
    /// Documents per term.
    df: Vec<u32>,
    doc_len: Vec<u32>,
    avg_len: f32,
}

fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], at: &mut usize) -> u32 {
    let mut v = 0u32;
    let mut shift = 0;
    loop {
        let x = b[*at];
        *at += 1;
        v |= ((x & 0x7f) as u32) << shift;
        if x < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// One posting: the document's gap to the previous one, and its term frequency.
fn encode_posting(gap: u32, tf: u16, out: &mut Vec<u8>) {
    put_varint(out, gap << 1 | u32::from(tf > 1));
    if tf > 1 {
        put_varint(out, tf as u32);
    }
}

/// (document, term frequency) of one posting list.
struct Postings<'a> {
    bytes: &'a [u8],
    at: usize,
    doc: u32,
}

impl Iterator for Postings<'_> {
    type Item = (u32, u32);
    fn next(&mut self) -> Option<(u32, u32)> {
        if self.at >= self.bytes.len() {
            return None;
        }
        let v = get_varint(self.bytes, &mut self.at);
        self.doc += v >> 1;
        let tf = if v & 1 == 1 {
            get_varint(self.bytes, &mut self.at)
        } else {
            1
        };
        Some((self.doc, tf))
    }
}

const K1: f32 = 1.2;
const B: f32 = 0.75;

fn term_hash(t: &str) -> u64 {
    // FNV-1a: stable across runs (std's SipHash keys are random).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in t.as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Bm25 {
    pub fn build(chunks: &[ChunkMeta], snaps: &[Snapshot]) -> Bm25 {
        // Per document: (term hash, tf), sorted.
        let per_doc: Vec<Vec<(u64, u16)>> = chunks
            .par_iter()
            .map(|c| {
                let mut t = Vec::new();
                with_chunk_text(c, snaps, |text| terms(text, &mut t));
                if let Some(s) = &c.symbol {
                    for _ in 0..2 {
                        terms(s, &mut t);
                    }
                }
                if let Some(h) = &c.heading {
                    terms(h, &mut t);
                }
                let path = &snaps[c.snap as usize].files[c.file as usize].path;
                terms(path, &mut t);
                let mut hs: Vec<u64> = t.iter().map(|w| term_hash(w)).collect();
                hs.sort_unstable();
                let mut out: Vec<(u64, u16)> = Vec::new();
                for h in hs {
                    match out.last_mut() {
                        Some((lh, n)) if *lh == h => *n = n.saturating_add(1),
                        _ => out.push((h, 1)),
                    }
                }
                out.shrink_to_fit();
                out
            })
            .collect();
        let mut per_doc = per_doc;
        let mut terms: Vec<u64> = per_doc.iter().flatten().map(|(h, _)| *h).collect();
        terms.par_sort_unstable();
        terms.dedup();
        terms.shrink_to_fit();
        // Hash → term id, once.
        per_doc.par_iter_mut().for_each(|tf| {
            for (h, _) in tf.iter_mut() {
                *h = terms.binary_search(h).unwrap() as u64;
            }
        });
        // Encode per term in document order: first the byte size of each list.
        let mut size = vec![0u32; terms.len()];
        let mut df = vec![0u32; terms.len()];
        let mut last = vec![0u32; terms.len()];
        let mut scratch = Vec::with_capacity(10);
        for (d, tf) in per_doc.iter().enumerate() {
            for &(h, n) in tf {
                let t = h as usize;
                scratch.clear();
                encode_posting(d as u32 - last[t], n, &mut scratch);
                size[t] += scratch.len() as u32;
                df[t] += 1;
                last[t] = d as u32;
            }
        }
        let mut offsets = Vec::with_capacity(terms.len() + 1);
        let mut acc = 0u32;
        for n in &size {
            offsets.push(acc);
            acc += n;
        }
        offsets.push(acc);
        drop(size);
        let mut postings = vec![0u8; acc as usize];
        let mut fill: Vec<u32> = offsets[..terms.len()].to_vec();
        last.iter_mut().for_each(|x| *x = 0);
        let mut doc_len = Vec::with_capacity(per_doc.len());
        for (d, tf) in per_doc.into_iter().enumerate() {
            doc_len.push(tf.iter().map(|(_, n)| *n as u32).sum());
            for (h, n) in tf {
                let t = h as usize;
                scratch.clear();
                encode_posting(d as u32 - last[t], n, &mut scratch);
                let at = fill[t] as usize;
                postings[at..at + scratch.len()].copy_from_slice(&scratch);
                fill[t] += scratch.len() as u32;
                last[t] = d as u32;
            }
        }
        let avg_len = if doc_len.is_empty() {
            1.0
        } else {
            doc_len.iter().map(|&n| n as f64).sum::<f64>() as f32 / doc_len.len() as f32
        };
        Bm25 {
            terms,
            offsets,
            postings,
            df,
            doc_len,
            avg_len: avg_len.max(1.0),
        }
    }

    fn postings(&self, term: &str) -> Option<(usize, Postings<'_>)> {
        let t = self.terms.binary_search(&term_hash(term)).ok()?;
        let (a, b) = (self.offsets[t] as usize, self.offsets[t + 1] as usize);
        Some((
            self.df[t] as usize,
            Postings {
                bytes: &self.postings[a..b],
                at: 0,
                doc: 0,
            },
        ))
    }

    pub fn doc_freq(&self, term: &str) -> usize {
        self.postings(term).map(|p| p.0).unwrap_or(0)
    }
    /// Terms of a query that the index knows.
    pub fn query_terms(&self, q: &str) -> Vec<String> {
        let mut t = Vec::new();
        terms(q, &mut t);
        t.sort();
        t.dedup();
        t
    }

    /// BM25 scores of chunks among `allowed`, best first.
    pub fn search(&self, q: &str, allowed: &Allowed, k: usize) -> Vec<(usize, f32)> {
        let n = self.doc_len.len() as f32;
        let mut acc: HashMap<u32, f32> = HashMap::new();
        for t in self.query_terms(q) {
            let Some((df, postings)) = self.postings(&t) else {
                continue;
            };
            let df = df as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for (d, tf) in postings {
                if !allowed(d as usize) {
                    continue;
                }
                let tf = tf as f32;
                let dl = self.doc_len[d as usize] as f32;
                let s = idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / self.avg_len));
                *acc.entry(d).or_insert(0.0) += s;
            }
        }
        let mut v: Vec<(usize, f32)> = acc.into_iter().map(|(d, s)| (d as usize, s)).collect();
        top_k(&mut v, k);
        v
    }

    /// Number of chunks among `allowed` holding any term of `q`.
    pub fn count(&self, q: &str, allowed: &Allowed) -> usize {
        let mut docs: Vec<u32> = Vec::new();
        for t in self.query_terms(q) {
            if let Some((_, p)) = self.postings(&t) {
                docs.extend(p.map(|(d, _)| d));
            }
        }
        docs.sort_unstable();
        docs.dedup();
        docs.into_iter().filter(|&d| allowed(d as usize)).count()
    }
}

/// Weighted reciprocal rank fusion: a document at 0-based rank r of a list
/// with weight w scores w / (k + r + 1), summed over the lists.
pub fn rrf(lists: &[(&[(usize, f32)], f32)], k: f32) -> Vec<(usize, f32)> {
    let mut acc: HashMap<usize, f32> = HashMap::new();
    for (l, w) in lists {
        for (rank, (d, _)) in l.iter().enumerate() {
            *acc.entry(*d).or_insert(0.0) += w / (k + rank as f32 + 1.0);
        }
    }
    let mut v: Vec<(usize, f32)> = acc.into_iter().collect();
    let n = v.len();
    top_k(&mut v, n);
    v
}

// ------------------------------------------------------------ classification

/// What kind of question a query is (no LLM: patterns over the words).
#[derive(Clone, Debug, PartialEq)]
pub enum QueryType {
    /// A name: `parse_date`, `QuerySet.filter`, `http.Server`.
    Symbol(String),
    /// A relation: `what calls X`, `who imports Y`, `subclasses of Z`, `what does X call`.
    Relationship { relation: Relation, target: String },
    /// A path through the code: `from the API to the DB`.
    Flow { from: String, to: String },
    /// How a family of similar files works: `how do importers work`.
    Pattern(String),
    /// Anything else: a description of behaviour.
    Concept,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Relation {
    Callers,
    Callees,
    Importers,
    Imports,
    Subclasses,
}

impl Relation {
    pub fn name(self) -> &'static str {
        match self {
            Relation::Callers => "callers",
            Relation::Callees => "callees",
            Relation::Importers => "importers",
            Relation::Imports => "imports",
            Relation::Subclasses => "subclasses",
        }
    }
}

impl QueryType {
    pub fn label(&self) -> &'static str {
        match self {
            QueryType::Symbol(_) => "symbol",
            QueryType::Relationship { .. } => "relationship",
            QueryType::Flow { .. } => "flow",
            QueryType::Pattern(_) => "pattern",
            QueryType::Concept => "concept",
        }
    }
}

fn clean_target(s: &str) -> String {
    s.trim()
        .trim_end_matches(['?', '.', '!'])
        .trim()
        .trim_matches(['`', '"', '\''])
        .trim_start_matches("the ")
        .trim_end_matches("()")
        .trim()
        .to_string()
}

/// Is `s` shaped like a code name (not an English word)?
pub fn looks_like_symbol(s: &str) -> bool {
    let re =
        regex::Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?$")
            .unwrap();
    if !re.is_match(s) {
        return false;
    }
    let core = s.trim_end_matches("()");
    core.contains('_')
        || core.contains('.')
        || core.contains("::")
        || s.ends_with("()")
        || core.chars().skip(1).any(|c| c.is_uppercase())
        || core.chars().next().is_some_and(|c| c.is_uppercase())
}

/// Classify a query. `is_symbol` says whether a bare word names a definition.
pub fn classify(q: &str, is_symbol: &dyn Fn(&str) -> bool) -> QueryType {
    let q = q.trim();
    let lq = q.to_lowercase();
    let rel = |re: &str| regex::Regex::new(re).unwrap().captures(&lq);
    let original = |lc: &str| -> String {
        // Recover the original casing of a captured span.
        match lq.find(lc) {
            Some(i) if q.len() == lq.len() => clean_target(&q[i..i + lc.len()]),
            _ => clean_target(lc),
        }
    };
    let pats: [(&str, Relation); 8] = [
        (
            r"^(?:what|who|which\s+\w+)\s+(?:calls|invokes|uses)\s+(.+)$",
            Relation::Callers,
        ),
        (
            r"^(?:callers|usages|uses|call sites|references)\s+(?:of|to)\s+(.+)$",
            Relation::Callers,
        ),
        (
            r"^where\s+is\s+(.+?)\s+(?:called|used|invoked|referenced)\b.*$",
            Relation::Callers,
        ),
        (
            r"^(?:what|who|which\s+\w+)\s+(?:imports|depends on|requires)\s+(.+)$",
            Relation::Importers,
        ),
        (
            r"^(?:importers|dependents)\s+of\s+(.+)$",
            Relation::Importers,
        ),
        (
            r"^(?:what|who|which\s+\w+)\s+(?:extends|implements|inherits from|subclasses)\s+(.+)$",
            Relation::Subclasses,
        ),
        (
            r"^(?:subclasses|implementations|implementers)\s+of\s+(.+)$",
            Relation::Subclasses,
        ),
        (r"^what\s+does\s+(.+?)\s+call\??$", Relation::Callees),
    ];
    for (re, r) in pats {
        if let Some(c) = rel(re) {
            let t = original(c.get(1).unwrap().as_str());
            if !t.is_empty() {
                return QueryType::Relationship {
                    relation: r,
                    target: t,
                };
            }
        }
    }
    if let Some(c) = rel(r"^what\s+does\s+(.+?)\s+(?:import|depend on)\??$") {
        return QueryType::Relationship {
            relation: Relation::Imports,
            target: original(c.get(1).unwrap().as_str()),
        };
    }
    // A flow question starts with "from" ("from the API to the DB", "flow from
    // X to Y") or asks how something goes/gets/flows from X to Y; a sentence
    // such as "create a dict with keys from iterable and values set to value"
    // is not one.
    let flowish = regex::Regex::new(
        r"^(?:(?:the\s+)?(?:data\s+|request\s+|call\s+)?(?:flow|path|trace)\s+)?from\s",
    )
    .unwrap()
    .is_match(&lq)
        || regex::Regex::new(
            r"\b(?:flows?|path|trace|travels?|goes|go|gets?|pass(?:es)?|moves?)\b[^.]*?\bfrom\s",
        )
        .unwrap()
        .is_match(&lq);
    if let Some(c) =
        rel(r"\bfrom\s+(?:the\s+)?(.+?)\s+(?:to|into|down to|through to)\s+(?:the\s+)?(.+?)\??$")
            .filter(|_| flowish)
    {
        let (f, t) = (clean_target(&c[1]), clean_target(&c[2]));
        if !f.is_empty() && !t.is_empty() && f.split_whitespace().count() <= 4 {
            return QueryType::Flow { from: f, to: t };
        }
    }
    if let Some(c) = rel(r"^how\s+(?:do|are)\s+(?:the\s+|all\s+)?(.+?)\s+(?:work|implemented|written|structured|defined|registered|organized)\??$")
        .or_else(|| rel(r"^how\s+(?:do\s+i|to|should\s+i)\s+(?:write|add|implement|create|make)\s+(?:a\s+|an\s+|another\s+|new\s+)*(.+?)\??$"))
    {
        return QueryType::Pattern(clean_target(&c[1]));
    }
    let words: Vec<&str> = q.split_whitespace().collect();
    if words.len() == 1 {
        let w = words[0].trim_end_matches("()");
        if looks_like_symbol(words[0]) || is_symbol(w) {
            return QueryType::Symbol(w.to_string());
        }
    }
    QueryType::Concept
}

/// "How does X work"-style questions, where navigation docs help.
pub fn is_explanation(q: &str) -> bool {
    let l = q.to_lowercase();
    [
        "how does",
        "how do",
        "how is",
        "how are",
        "what is",
        "explain",
        "overview",
        "architecture",
        "why",
    ]
    .iter()
    .any(|p| l.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_metadata_stays_small() {
        // A hundred thousand of these live for the server's life (go-stdlib: 98k).
        assert!(
            std::mem::size_of::<ChunkMeta>() <= 136,
            "{}",
            std::mem::size_of::<ChunkMeta>()
        );
    }

    #[test]
    fn postings_round_trip() {
        let list: Vec<(u32, u16)> = vec![
            (0, 1),
            (1, 3),
            (2, 1),
            (200, 1),
            (70_000, 65_535),
            (2_000_000, 2),
        ];
        let mut bytes = Vec::new();
        let mut prev = 0;
        for &(d, tf) in &list {
            encode_posting(d - prev, tf, &mut bytes);
            prev = d;
        }
        // Small gaps with tf 1 take one byte each.
        assert!(bytes.len() < list.len() * 4, "{}", bytes.len());
        let back: Vec<(u32, u16)> = Postings {
            bytes: &bytes,
            at: 0,
            doc: 0,
        }
        .map(|(d, tf)| (d, tf as u16))
        .collect();
        assert_eq!(back, list);
    }

    #[test]
    fn identifiers_split_and_stem() {
        assert_eq!(
            split_ident("parseHTTPRequest_v2"),
            vec!["parse", "HTTP", "Request", "v2"]
        );
        let mut t = Vec::new();
        terms("def get_or_create(self, defaults): Parsers", &mut t);
        assert!(t.contains(&"get_or_create".to_string()));
        assert!(t.contains(&"create".to_string()));
        assert!(t.contains(&"default".to_string()));
        assert!(t.contains(&"parser".to_string()));
        assert!(!t.contains(&"self".to_string()));
    }

    #[test]
    fn classification() {
        let no = |_: &str| false;
        let yes = |_: &str| true;
        assert_eq!(
            classify("get_or_create", &no),
            QueryType::Symbol("get_or_create".into())
        );
        assert_eq!(
            classify("QuerySet.filter", &no),
            QueryType::Symbol("QuerySet.filter".into())
        );
        assert_eq!(classify("cache", &no), QueryType::Concept);
        assert_eq!(classify("cache", &yes), QueryType::Symbol("cache".into()));
        assert_eq!(
            classify("what calls get_or_create?", &no),
            QueryType::Relationship {
                relation: Relation::Callers,
                target: "get_or_create".into()
            }
        );
        assert_eq!(
            classify("Who imports QuerySet", &no),
            QueryType::Relationship {
                relation: Relation::Importers,
                target: "QuerySet".into()
            }
        );
        assert_eq!(
            classify("subclasses of Field", &no),
            QueryType::Relationship {
                relation: Relation::Subclasses,
                target: "Field".into()
            }
        );
        assert_eq!(
            classify("what does save call", &no),
            QueryType::Relationship {
                relation: Relation::Callees,
                target: "save".into()
            }
        );
        assert_eq!(
            classify("flow from the request handler to the database", &no),
            QueryType::Flow {
                from: "request handler".into(),
                to: "database".into()
            }
        );
        assert_eq!(
            classify("how does a request get from the view to the database?", &no),
            QueryType::Flow {
                from: "view".into(),
                to: "database".into()
            }
        );
        assert_eq!(
            classify(
                "Create a new ordered dictionary with keys from iterable and values set to value.",
                &no
            ),
            QueryType::Concept
        );
        assert_eq!(
            classify("copy bytes from src to dst", &no),
            QueryType::Concept
        );
        assert_eq!(
            classify("how do importers work", &no),
            QueryType::Pattern("importers".into())
        );
        assert_eq!(
            classify("how to write a middleware", &no),
            QueryType::Pattern("middleware".into())
        );
        assert_eq!(classify("how does caching work", &no), QueryType::Concept);
        assert_eq!(
            classify("parse a date string into a datetime", &no),
            QueryType::Concept
        );
    }

    #[test]
    fn fusion_prefers_agreement() {
        let a = vec![(1, 9.0), (2, 8.0), (3, 7.0)];
        let b = vec![(3, 0.9), (1, 0.8), (4, 0.7)];
        let f = rrf(&[(&a, 1.0), (&b, 1.0)], 60.0);
        assert_eq!(f[0].0, 1);
        assert_eq!(f[1].0, 3);
    }
}
