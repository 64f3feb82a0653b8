//! The keyword side: BM25 over the snapshots' keyword indexes
//! (`keywords.bin`, read in place), scored with statistics of all loaded
//! snapshots together. The terms (identifier-aware, stemmed, stop words
//! dropped) are the builder's, from `code_index_schemas::keyword`.

use code_index_schemas::keyword::{doc_terms, path_terms, KeywordIndex, Run, B, K1};
pub use code_index_schemas::keyword::{is_stop, split_ident, stem, terms};

/// The distinct terms of a query as the index makes them (identifiers
/// split, stemmed, stop words out), sorted.
pub fn query_terms(q: &str) -> Vec<String> {
    let mut t = Vec::new();
    terms(q, &mut t);
    t.sort();
    t.dedup();
    t
}

use super::*;

/// Read the snapshots' `keywords.bin` (default), or build every keyword
/// index in memory (`CODE_INDEX_KEYWORDS=memory`: the path of older
/// snapshots, for comparison and troubleshooting).
pub fn from_snapshots() -> bool {
    std::env::var("CODE_INDEX_KEYWORDS").map_or(true, |v| v != "memory")
}

/// A hasher for chunk indexes: one multiply (Fibonacci hashing). The
/// default SipHash took a tenth of a keyword query in BM25's accumulator,
/// which common terms fill with thousands of postings.
#[derive(Default, Clone, Copy)]
pub(crate) struct IndexHasher(u64);

impl std::hash::Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (n as u64 ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// A map keyed by chunk index, hashed with [`IndexHasher`].
pub(crate) type IndexMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<IndexHasher>>;

/// BM25's inverse document frequency of a term in `df` of `n` documents.
fn idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// Documents per in-memory run when a snapshot has no usable `keywords.bin`.
const RUN_DOCS: usize = 16_384;

/// One snapshot's keyword index; its documents are the engine's chunks
/// `base..base + docs`.
struct Segment {
    base: u32,
    index: KeywordIndex,
}

/// BM25 over every loaded snapshot's chunks: document frequencies, the
/// number of documents and the average length are those of all snapshots.
pub struct Bm25 {
    segments: Vec<Segment>,
    docs: u32,
    avg_len: f32,
}

/// Where a snapshot's keyword index came from (for the start-up line).
pub enum Source {
    /// `keywords.bin`, mapped.
    Snapshot,
    /// Built in memory, and why.
    Built(String),
}

impl Bm25 {
    /// Drop the mapped indexes' resident pages (an idle server).
    pub fn release_pages(&self) {
        for s in &self.segments {
            s.index.release_pages();
        }
    }

    /// Combine indexes whose documents are numbered from each one's base
    /// (bases ascending, each right after the previous index's documents).
    pub(crate) fn new(parts: Vec<(u32, KeywordIndex)>) -> Bm25 {
        let docs: u64 = parts.iter().map(|p| p.1.docs() as u64).sum();
        let total: u64 = parts.iter().map(|p| p.1.total_len()).sum();
        let avg_len = if docs == 0 {
            1.0
        } else {
            (total as f64 / docs as f64) as f32
        };
        Bm25 {
            segments: parts
                .into_iter()
                .map(|(base, index)| Segment { base, index })
                .collect(),
            docs: docs as u32,
            avg_len: avg_len.max(1.0),
        }
    }

    /// The keyword index of every snapshot: its `keywords.bin` when the
    /// manifest lists it and it covers exactly the chunks loaded from it,
    /// else one built in memory from the chunks (older snapshots).
    /// `ranges[s]` is snapshot `s`'s chunks in `chunks`.
    pub fn load(
        chunks: &[ChunkMeta],
        ranges: &[(usize, usize)],
        snaps: &[Snapshot],
    ) -> (Bm25, Vec<Source>) {
        let mut parts = Vec::new();
        let mut sources = Vec::new();
        for (s, &(a, b)) in snaps.iter().zip(ranges) {
            let (index, source) = match open(s, (b - a) as u32) {
                Ok(i) => (i, Source::Snapshot),
                Err(why) => (
                    KeywordIndex::from_vec(build_bytes(&chunks[a..b], snaps))
                        .expect("an index just written is well formed"),
                    Source::Built(why),
                ),
            };
            parts.push((a as u32, index));
            sources.push(source);
        }
        (Bm25::new(parts), sources)
    }

    /// Documents holding `term`, over all snapshots.
    #[cfg(test)]
    pub fn doc_freq(&self, term: &str) -> usize {
        self.segments
            .iter()
            .map(|s| s.index.df(term) as usize)
            .sum()
    }

    /// BM25 scores of chunks among `allowed`, best first.
    pub fn search(&self, q: &str, allowed: &Allowed, k: usize) -> Vec<(usize, f32)> {
        let n = self.docs as f32;
        let mut acc: IndexMap<u32, f32> = IndexMap::default();
        for t in query_terms(q) {
            // One directory lookup per segment: the lists declare their df.
            let lists: Vec<_> = self
                .segments
                .iter()
                .map(|s| (s, s.index.postings(&t)))
                .collect();
            let df: u32 = lists.iter().map(|(_, p)| p.df()).sum();
            if df == 0 {
                continue;
            }
            let idf = idf(n, df as f32);
            for (s, postings) in lists {
                for (d, tf) in postings {
                    let g = s.base + d;
                    if !allowed(g as usize) {
                        continue;
                    }
                    let tf = tf as f32;
                    let dl = s.index.doc_len(d) as f32;
                    let score =
                        idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / self.avg_len));
                    *acc.entry(g).or_insert(0.0) += score;
                }
            }
        }
        let mut v: Vec<(usize, f32)> = acc.into_iter().map(|(d, s)| (d as usize, s)).collect();
        top_k(&mut v, k);
        v
    }

    /// The inverse document frequency of a term over all snapshots (0 when absent).
    pub fn idf(&self, t: &str) -> f32 {
        let df: u32 = self.segments.iter().map(|s| s.index.df(t)).sum();
        if df == 0 {
            return 0.0;
        }
        idf(self.docs as f32, df as f32)
    }

    /// Number of chunks among `allowed` holding any term of `q`.
    pub fn count(&self, q: &str, allowed: &Allowed) -> usize {
        let mut docs: Vec<u32> = Vec::new();
        for t in query_terms(q) {
            for s in &self.segments {
                docs.extend(s.index.postings(&t).map(|(d, _)| s.base + d));
            }
        }
        docs.sort_unstable();
        docs.dedup();
        docs.into_iter().filter(|&d| allowed(d as usize)).count()
    }
}

/// A snapshot's `keywords.bin`, when listed, readable and covering `docs` chunks.
fn open(s: &Snapshot, docs: u32) -> Result<KeywordIndex, String> {
    use code_index_schemas::keyword::KEYWORD_FILE;
    if !from_snapshots() {
        return Err("CODE_INDEX_KEYWORDS=memory".into());
    }
    if !s.manifest.files.iter().any(|f| f.name == KEYWORD_FILE) {
        return Err(format!(
            "no {KEYWORD_FILE} (feature version {})",
            s.manifest.feature_version
        ));
    }
    let index = KeywordIndex::open(&s.dir.join(KEYWORD_FILE)).map_err(|e| e.to_string())?;
    if index.docs() != docs {
        return Err(format!(
            "{KEYWORD_FILE} has {} documents, the snapshot {docs} chunks",
            index.docs()
        ));
    }
    Ok(index)
}

/// A keyword index built in memory from loaded chunks, with the builder's
/// terms: the bytes the builder writes for them.
pub(crate) fn build_bytes(chunks: &[ChunkMeta], snaps: &[Snapshot]) -> Vec<u8> {
    let mut runs: Vec<Run> = chunks
        .par_chunks(RUN_DOCS)
        .map(|part| {
            let mut path: (u32, u32, Vec<u64>) = (u32::MAX, u32::MAX, Vec::new());
            let docs: Vec<Vec<(u64, u32)>> = part
                .iter()
                .map(|c| {
                    if (path.0, path.1) != (c.snap, c.file) {
                        let p = &snaps[c.snap as usize].files[c.file as usize].path;
                        path = (c.snap, c.file, path_terms(p));
                    }
                    with_chunk_text(c, snaps, |text| {
                        doc_terms(text, c.symbol.as_deref(), c.heading.as_deref(), &path.2)
                    })
                })
                .collect();
            Run::new(0, &docs)
        })
        .collect();
    let mut base = 0;
    for r in &mut runs {
        r.set_base(base);
        base += r.docs();
    }
    in_memory(&runs)
}

/// The bytes of a keyword index of `runs`, written to memory.
pub(crate) fn in_memory(runs: &[Run]) -> Vec<u8> {
    code_index_schemas::keyword::write_to(std::io::Cursor::new(Vec::new()), runs)
        .map(|(c, _)| c.into_inner())
        .expect("writing to memory does not fail")
}
