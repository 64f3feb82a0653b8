//! The retrieval engine behind `search_code`: chunk metadata, the BM25
//! keyword indexes, vector search, fusion, ranking, query routing and graph
//! expansion. Loaded once per server from the snapshots; the tools read it
//! through [`Ctx`].
//!
//! **Invariant:** reads snapshots and the store only; knows nothing of MCP.

mod chunks;
mod fusion;
mod graph;
mod heads;
mod keyword;
mod rank;
mod rerank;
mod route;
mod suggest;
#[cfg(test)]
mod tests;
mod vectors;

pub use chunks::{intern, ChunkMeta};
pub use fusion::rrf;
pub use graph::FileGraph;
pub use keyword::{
    from_snapshots as keywords_from_snapshots, query_terms, split_ident, stem, terms, Bm25,
    Source as KeywordSource,
};
pub use rank::{Ranked, Scope, Tests};
pub use route::{asks_how, classify, is_explanation, looks_like_symbol, QueryType, Relation};
pub use suggest::{parse_synonyms, Suggestion, DEFAULT_SYNONYMS};
pub use vectors::SnapVectors;

use chunks::{load_chunks, load_patterns};
pub use heads::Heads;
use vectors::load_vectors;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use code_index_schemas::embed::{self, Embedder, ModelSpec};
use rayon::prelude::*;

use crate::error::ToolError;
use crate::snapshot::Snapshot;
use crate::store::Store;

/// A chunk filter (shared by the parallel scorers).
pub type Allowed<'a> = dyn Fn(usize) -> bool + Sync + 'a;

/// Candidates taken from each ranker before fusion.
pub(crate) const CANDIDATES: usize = 300;
/// Most results a query keeps (pages are cut from these).
pub(crate) const MAX_RESULTS: usize = 200;

/// An opened embedder and the sha256 of its weights file (`None`: remote).
type OpenedModel = Result<(Arc<dyn Embedder>, Option<String>), embed::EmbedError>;
/// (model id, query, vector).
type CachedQuery = (String, String, Arc<Vec<f32>>);

/// Everything search_code needs, built once per server.
pub struct Engine {
    pub chunks: Vec<ChunkMeta>,
    pub bm25: Bm25,
    /// BM25 over definition heads, one document per definition (qualified
    /// name, signature, first doc paragraph), and the heads each chunk holds.
    pub heads: Heads,
    /// Per snapshot: whether its keyword index is its `keywords.bin` or built here.
    pub keyword_sources: Vec<KeywordSource>,
    /// Per snapshot (same order as `State::snaps`): vectors, or why none.
    pub vectors: Vec<Result<SnapVectors, String>>,
    embedders: Mutex<HashMap<String, OpenedModel>>,
    query_cache: Mutex<Vec<CachedQuery>>,
    /// (snapshot, file) → range of its chunks in `chunks` (pattern chunks excluded).
    pub file_chunks: HashMap<(u32, u32), (usize, usize)>,
    /// (snapshot, file) → name of the pattern the file follows.
    pub follows: HashMap<(u32, u32), String>,
    /// A file name's stem, lowercased, `_` and `-` removed → its files
    /// (`flat_hash_map.h` → `flathashmap`): where a name is likely defined.
    pub stems: HashMap<String, Vec<(u32, u32)>>,
    /// Per snapshot: its version directories that a newer one supersedes
    /// (`rerank::superseded_dirs`).
    pub superseded: Vec<HashSet<String>>,
    /// A doc file that a source file takes as its documentation (Rust's
    /// `#![doc = include_str!("../docs/middleware.md")]`) → that source
    /// file's chunk holding the attribute.
    pub doc_of: HashMap<(u32, u32), Vec<usize>>,
    pub build_seconds: f64,
}

/// Run `f` over a chunk's text.
pub fn with_chunk_text<R>(c: &ChunkMeta, snaps: &[Snapshot], f: impl FnOnce(&str) -> R) -> R {
    if let Some(t) = &c.text {
        return f(t);
    }
    snaps[c.snap as usize].files[c.file as usize].with_content(|content| {
        f(code_index_schemas::keyword::chunk_text(
            content,
            c.start_byte as usize,
            c.end_byte as usize,
        ))
    })
}

/// Doc files that Rust source files include as their documentation
/// (`#[doc = include_str!("…")]`, `#![doc = …]`), each mapped to the
/// chunks holding the attribute (see [`Engine::doc_of`]).
fn included_docs(
    snaps: &[Snapshot],
    chunks: &[ChunkMeta],
    file_chunks: &HashMap<(u32, u32), (usize, usize)>,
) -> HashMap<(u32, u32), Vec<usize>> {
    let re = regex::Regex::new(r#"#!?\[\s*doc\s*=\s*include_str!\(\s*"([^"\n]+)"\s*\)\s*\]"#)
        .expect("valid regex");
    let mut out: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
    for (si, s) in snaps.iter().enumerate() {
        let mut by_path: Option<HashMap<&str, u32>> = None;
        for (fi, f) in s.visible_files() {
            if f.language != "rust" {
                continue;
            }
            let found: Vec<(usize, String)> = f.with_content(|t| {
                if !t.contains("include_str!") {
                    return Vec::new();
                }
                re.captures_iter(t)
                    .map(|c| (c.get(0).map_or(0, |m| m.start()), c[1].to_string()))
                    .collect()
            });
            if found.is_empty() {
                continue;
            }
            let by_path = by_path.get_or_insert_with(|| {
                s.visible_files()
                    .map(|(i, f)| (f.path.as_str(), i))
                    .collect()
            });
            let dir = f.path.rsplit_once('/').map_or("", |x| x.0);
            for (off, rel) in found {
                let Some(target) = join_relative(dir, &rel) else {
                    continue;
                };
                let Some(&doc) = by_path.get(target.as_str()) else {
                    continue;
                };
                let Some(&(a, b)) = file_chunks.get(&(si as u32, fi)) else {
                    continue;
                };
                let holder = (a..b).find(|&ci| {
                    let c = &chunks[ci];
                    c.text.is_none() && (c.start_byte as usize) <= off && off < c.end_byte as usize
                });
                if let Some(ci) = holder {
                    let v = out.entry((si as u32, doc)).or_default();
                    if !v.contains(&ci) {
                        v.push(ci);
                    }
                }
            }
        }
    }
    out
}

/// `rel` resolved against the directory `dir` (both `/`-separated, relative
/// to the snapshot root); None when it leaves the root or is absolute.
fn join_relative(dir: &str, rel: &str) -> Option<String> {
    if rel.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

impl Engine {
    /// Build from loaded snapshots (chunks, BM25, vectors).
    pub fn build(snaps: &[Snapshot]) -> Engine {
        let t0 = std::time::Instant::now();
        let mut chunks = Vec::new();
        let mut vectors = Vec::new();
        let mut follows = HashMap::new();
        let mut ranges = Vec::new();
        for (si, s) in snaps.iter().enumerate() {
            let base = chunks.len();
            match load_chunks(si, s) {
                Ok(c) => chunks.extend(c),
                Err(e) => tracing::warn!("chunks of {}: {e}", s.repo()),
            }
            match load_patterns(si, s) {
                Ok((pc, members)) => {
                    chunks.extend(pc);
                    follows.extend(members);
                }
                Err(e) => tracing::warn!("patterns of {}: {e}", s.repo()),
            }
            vectors.push(load_vectors(s, &chunks[base..], base));
            ranges.push((base, chunks.len()));
        }
        // Extending by the pattern chunks doubled the capacity: 13 MB of
        // go-stdlib's 26 MB were unused.
        chunks.shrink_to_fit();
        let (bm25, keyword_sources) = Bm25::load(&chunks, &ranges, snaps);
        for (s, src) in snaps.iter().zip(&keyword_sources) {
            if let KeywordSource::Built(why) = src {
                tracing::info!(
                    "{}: keyword index built in memory ({why}); rebuild the snapshot to read it in place",
                    s.repo()
                );
            }
        }
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
        let mut stems: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        for (si, s) in snaps.iter().enumerate() {
            for (fi, f) in s.visible_files() {
                let k = rerank::norm_stem(&f.path);
                if !k.is_empty() {
                    stems.entry(k).or_default().push((si as u32, fi));
                }
            }
        }
        let superseded = snaps
            .iter()
            .map(|s| rerank::superseded_dirs(s.visible_files().map(|(_, f)| f.path.as_str())))
            .collect();
        let doc_of = included_docs(snaps, &chunks, &file_chunks);
        let heads = Heads::load(snaps, &chunks, &ranges, &file_chunks);
        // Give the build's scratch memory back to the OS.
        crate::memory::trim_heap();
        Engine {
            follows,
            stems,
            superseded,
            doc_of,
            file_chunks,
            chunks,
            bm25,
            heads,
            keyword_sources,
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
}

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

/// Candidates: (chunk index, score), best first.
pub type Scored = Vec<(usize, f32)>;
/// Ranked hits: (chunk index, score, why).
pub type Hits = Vec<(usize, f32, String)>;

/// What a ranking reads: the loaded snapshots (in `State::snaps` order),
/// their tables, the engine and the synonyms for suggestions.
pub struct Ctx<'a> {
    pub snaps: &'a [Snapshot],
    pub store: &'a Store,
    pub eng: &'a Engine,
    pub synonyms: &'a HashMap<String, Vec<String>>,
    /// File graphs by snapshot index, built on first use.
    pub graphs: &'a Mutex<HashMap<usize, Arc<FileGraph>>>,
}
