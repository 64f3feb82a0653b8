//! `keywords.bin`: the snapshot's keyword (BM25) index over its chunks, and
//! the terms both sides agree on. The builder writes it; the server maps it
//! and scores a query's terms against it, so `search_code` has its keyword
//! ranker from the first call instead of tokenizing every chunk at start.
//!
//! # Terms
//! A text's words are its runs of letters, digits and `_` (at most 64
//! bytes). A word made of several identifier parts (`parseHTTPRequest_v2`:
//! parse, HTTP, Request, v2) gives the whole word lowercased and each part
//! of two or more characters lowercased and stemmed; any other word gives
//! itself lowercased and stemmed (Snowball's English stemmer, [`stem`])
//! unless it is shorter than two characters or a number of more than four
//! digits. Stop words ([`STOPWORDS`]) are dropped. A term is stored as
//! its 64-bit hash ([`term_hash`]: the bytes as little-endian u64 words,
//! the last zero-padded, each xored into the state, multiplied and rotated,
//! then splitmix64's finalizer). The terms of a chunk (a
//! *document*, numbered in table order: `chunks.parquet`'s rows, then the
//! pattern chunks of `patterns.parquet` — the rows whose `text` is set) are
//! those of its text (the file bytes `start_byte..end_byte`, or `text` when
//! set), of its `symbol` twice, of its `heading_path` and of its file's path.
//!
//! # Format (version 1; all integers little-endian)
//! ```text
//! 0   magic  b"CIXBM25\0"
//! 8   u32    version (1)
//! 12  u32    tokenizer version (4)
//! 16  u32    docs: number of documents
//! 20  u32    reserved (0)
//! 24  u64    terms: number of distinct term hashes
//! 32  u64    total length: the sum of all document lengths
//! 40  u64    offset of the document lengths
//! 48  u64    offset of the term blocks
//! 56  u64    offset of the block index
//! 64  postings: per term, in hash order, its documents ascending, each a
//!     LEB128 varint of `gap << 1 | (tf > 1)` (gap: the document minus the
//!     one before, the first minus 0), followed by a varint of tf when tf > 1
//! len document lengths: `docs` u32, a document's number of terms
//! blk term blocks: the terms in hash order, 64 to a block; per term three
//!     varints: hash minus the previous term's in the block (0 for the
//!     first), df (documents holding it), byte length of its postings
//! idx block index: per block 24 bytes: u64 hash of its first term, u64
//!     offset of the block, u64 offset of its first term's postings
//! ```
//! The bytes depend on the documents' terms and order only (not on threads,
//! nor on whether rows were reused from a previous snapshot).
//!
//! # Version history
//! - 1 (feature 6): first version.
//! - Tokenizer 2: Snowball's English stemmer (Porter2) instead of stripping
//!   plural and verb endings; a reader of tokenizer 1 files builds the index
//!   in memory instead.
//! - Tokenizer 3: `get`, `set` and `new` are terms, no longer stop words
//!   ("Handles conditional GET operations" ranks `ConditionalGetMiddleware`
//!   first, fourth before). Keyword MRR@10 / NDCG@10: Django
//!   reference-doc set 0.515 -> 0.521, semble 0.8558 -> 0.8570,
//!   docstring-stripped Go 0.342 -> 0.347, Python 0.315 -> 0.318; hybrid
//!   within noise (bench/results/ranking.md).
//! - Tokenizer 4: `return` and `returns` are terms too (a query that says
//!   "Returns …" describes a function, and functions hold `return`). Against
//!   tokenizer 3, MRR@10 / NDCG@10 keyword, hybrid: reference-doc set 0.521
//!   -> 0.524, 0.645 -> 0.648; semble 0.8570 -> 0.8577, 0.8700 -> 0.8701;
//!   stripped Go 0.347 -> 0.361, 0.552 -> 0.550; stripped Python 0.318 ->
//!   0.314, 0.414 -> 0.418.
//! - Tokenizer 5: numbers of two to four digits are terms ("uses a 410
//!   status code" -> `HttpResponseGone`, whose body says `status_code =
//!   410`). Against tokenizer 4, keyword / hybrid: reference-doc set 0.560
//!   -> 0.564, 0.659 -> 0.661; semble 0.858 -> 0.858 (two queries up, none
//!   down), 0.869 -> 0.869 (one up); stripped Go keyword 0.454 -> 0.446
//!   (two queries), Python 0.348 -> 0.353; their hybrid unchanged.

use std::io::{self, Seek, Write};
use std::path::Path;

use crate::binfile::{get_varint, put_varint};

/// File name inside a snapshot directory.
pub const KEYWORD_FILE: &str = "keywords.bin";
/// Version of the byte format.
pub const KEYWORD_VERSION: u32 = 1;
/// Version of the terms (what [`for_each_term`] yields): a reader whose
/// tokenizer differs must not use the file.
pub const TOKENIZER_VERSION: u32 = 5;
const MAGIC: &[u8; 8] = b"CIXBM25\0";
const HEADER: usize = 64;
const BLOCK_TERMS: usize = 64;
const INDEX_ENTRY: usize = 24;

/// BM25's term-frequency saturation and length normalisation.
pub const K1: f32 = 1.2;
pub const B: f32 = 0.75;

// ------------------------------------------------------------------ terms

pub const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "i", "if",
    "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "what",
    "when", "where", "which", "who", "why", "with", "work", "works", "self", "none", "def", "func",
    "fn", "let", "var", "const", "true", "false", "nil",
];

pub fn is_stop(t: &str) -> bool {
    // Called for every word of every chunk: the stop words as integers
    // (length and bytes packed), sorted at compile time, binary-searched;
    // string compares cost half the tokenizer.
    const KEYS: [u64; STOPWORDS.len()] = {
        let mut k = [0u64; STOPWORDS.len()];
        let mut i = 0;
        while i < k.len() {
            k[i] = stop_key(STOPWORDS[i].as_bytes());
            i += 1;
        }
        // Insertion sort (const context).
        let mut i = 1;
        while i < k.len() {
            let mut j = i;
            while j > 0 && k[j - 1] > k[j] {
                let x = k[j];
                k[j] = k[j - 1];
                k[j - 1] = x;
                j -= 1;
            }
            i += 1;
        }
        k
    };
    t.len() <= 7 && KEYS.binary_search(&stop_key(t.as_bytes())).is_ok()
}

/// A word of at most 7 bytes as one integer: its length, then its bytes.
const fn stop_key(t: &[u8]) -> u64 {
    let mut k = t.len() as u64;
    let mut i = 0;
    while i < t.len() && i < 7 {
        k |= (t[i] as u64) << (8 * (i + 1));
        i += 1;
    }
    k
}

/// Words a thread keeps stemmed (see [`with_stem`]).
const STEMS_KEPT: usize = 1 << 16;

/// English stemming: Snowball's English stemmer ("Porter2", the
/// `rust-stemmers` crate), which joins derived forms as well as inflected
/// ones (`serialization`, `serializer`, `serialize` → `serial`). A word is
/// stemmed once per thread: the tokenizer meets the same words again and
/// again, and a lookup costs a fraction of the stemmer. A thread keeps at
/// most [`STEMS_KEPT`] words (about 100 bytes each), then starts afresh.
fn with_stem<R>(t: &str, f: impl FnOnce(&str) -> R) -> R {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static SEEN: RefCell<HashMap<Box<str>, Box<str>>> = RefCell::new(HashMap::new());
    }
    // Snowball leaves words of two letters or fewer as they are.
    if t.len() <= 2 {
        return f(t);
    }
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        if let Some(s) = seen.get(t) {
            return f(s);
        }
        if seen.len() >= STEMS_KEPT {
            seen.clear();
        }
        let stemmer = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
        let s: Box<str> = stemmer.stem(t).into();
        let r = f(&s);
        seen.insert(t.into(), s);
        r
    })
}

/// A lowercase word's stem, as the index stores it.
pub fn stem(t: &str) -> String {
    with_stem(t, str::to_string)
}

/// Split an identifier into its words: `parseHTTPRequest_v2` → parse, HTTP, Request, v2.
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

/// Byte ranges of an ASCII word's identifier parts (as [`split_ident`]).
fn ascii_parts(w: &[u8], out: &mut Vec<(usize, usize)>) {
    out.clear();
    let n = w.len();
    let mut start = None;
    for i in 0..n {
        let c = w[i];
        if c == b'_' {
            if let Some(s) = start.take() {
                out.push((s, i));
            }
            continue;
        }
        if let Some(s) = start {
            let p = w[i - 1];
            let boundary = i > s
                && p != b'_'
                && c.is_ascii_uppercase()
                && (p.is_ascii_lowercase()
                    || (p.is_ascii_uppercase() && i + 1 < n && w[i + 1].is_ascii_lowercase()));
            if boundary {
                out.push((s, i));
                start = Some(i);
            }
        } else {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s, n));
    }
}

/// ASCII bytes that belong to a word: letters, digits and `_`.
const WORD: [bool; 128] = {
    let mut t = [false; 128];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'_';
        c += 1;
    }
    t
};

/// Call `f` with each index/query term of `text`, in order (see the module
/// documentation). Allocation-free for ASCII words this thread has stemmed
/// before.
pub fn for_each_term(text: &str, mut f: impl FnMut(&str)) {
    let b = text.as_bytes();
    let n = b.len();
    let mut lower: Vec<u8> = Vec::with_capacity(64);
    let mut parts: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < n {
        // Skip to a word.
        let c = b[i];
        if c < 0x80 {
            if !WORD[c as usize] {
                i += 1;
                continue;
            }
        } else {
            let ch = text[i..].chars().next().unwrap();
            if !ch.is_alphanumeric() {
                i += ch.len_utf8();
                continue;
            }
        }
        let start = i;
        let (mut ascii, mut upper, mut under) = (true, false, false);
        while i < n {
            let c = b[i];
            if c < 0x80 {
                if WORD[c as usize] {
                    upper |= c.is_ascii_uppercase();
                    under |= c == b'_';
                    i += 1;
                    continue;
                }
                break;
            }
            let ch = text[i..].chars().next().unwrap();
            if ch.is_alphanumeric() {
                ascii = false;
                i += ch.len_utf8();
                continue;
            }
            break;
        }
        let w = &text[start..i];
        if w.len() > 64 {
            continue;
        }
        if !ascii {
            unicode_word(w, &mut f);
            continue;
        }
        let wb = w.as_bytes();
        let lw = if upper {
            lower.clear();
            lower.extend(wb.iter().map(u8::to_ascii_lowercase));
            std::str::from_utf8(&lower).expect("ASCII")
        } else {
            w
        };
        // Without `_` or upper case a word is one part.
        let multi = (upper || under) && {
            ascii_parts(wb, &mut parts);
            parts.len() > 1
        };
        if multi {
            if !is_stop(lw) {
                f(lw);
            }
            for &(s, e) in &parts {
                let p = &lw[s..e];
                if p.len() >= 2 && !is_stop(p) {
                    with_stem(p, &mut f);
                }
            }
        } else if lw.len() >= 2 && !is_stop(lw) && !long_number(lw) {
            with_stem(lw, &mut f);
        }
    }
}

/// A word of more than [`MAX_NUMBER_DIGITS`] digits only: no term (ids,
/// constants, timestamps), where `404` or `8601` is one.
fn long_number(w: &str) -> bool {
    w.len() > MAX_NUMBER_DIGITS && w.bytes().all(|c| c.is_ascii_digit())
}

/// Longest all-digit word that is a term.
const MAX_NUMBER_DIGITS: usize = 4;

/// The general (non-ASCII) case of one word.
fn unicode_word(w: &str, f: &mut impl FnMut(&str)) {
    let lw = w.to_lowercase();
    let parts = split_ident(w);
    if parts.len() > 1 {
        if !is_stop(&lw) {
            f(&lw);
        }
        for p in parts {
            let p = p.to_lowercase();
            if p.len() >= 2 && !is_stop(&p) {
                f(&stem(&p));
            }
        }
    } else if lw.len() >= 2 && !is_stop(&lw) && !long_number(&lw) {
        f(&stem(&lw));
    }
}

/// The terms of a text, appended to `out`.
pub fn terms(text: &str, out: &mut Vec<String>) {
    for_each_term(text, |t| out.push(t.to_string()));
}

/// A term's stored key: a 64-bit hash of its bytes, 8 at a time (stable
/// across runs and machines; the format's readers must compute the same).
pub fn term_hash(t: &str) -> u64 {
    const M: u64 = 0xbf58_476d_1ce4_e5b9;
    let b = t.as_bytes();
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ b.len() as u64;
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        h = (h ^ u64::from_le_bytes(w.try_into().unwrap()))
            .wrapping_mul(M)
            .rotate_left(31);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(M).rotate_left(31);
    }
    // splitmix64's finalizer.
    h ^= h >> 30;
    h = h.wrapping_mul(M);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// A chunk's text when it is a span of its file: bytes `start..end` of the
/// published content (end clamped; empty when not on character boundaries).
pub fn chunk_text(content: &str, start: usize, end: usize) -> &str {
    content.get(start..end.min(content.len())).unwrap_or("")
}

/// The hashes of a file path's terms (shared by the file's chunks).
pub fn path_terms(path: &str) -> Vec<u64> {
    let mut v = Vec::new();
    for_each_term(path, |t| v.push(term_hash(t)));
    v
}

/// One document's terms as (hash, tf), sorted by hash: its text's terms,
/// its symbol's twice, its heading's and `path` (from [`path_terms`]).
pub fn doc_terms(
    text: &str,
    symbol: Option<&str>,
    heading: Option<&str>,
    path: &[u64],
) -> Vec<(u64, u32)> {
    let mut hs: Vec<u64> = Vec::new();
    for_each_term(text, |t| hs.push(term_hash(t)));
    if let Some(s) = symbol {
        for _ in 0..2 {
            for_each_term(s, |t| hs.push(term_hash(t)));
        }
    }
    if let Some(h) = heading {
        for_each_term(h, |t| hs.push(term_hash(t)));
    }
    hs.extend_from_slice(path);
    hs.sort_unstable();
    let mut out: Vec<(u64, u32)> = Vec::new();
    for h in hs {
        match out.last_mut() {
            Some((lh, n)) if *lh == h => *n += 1,
            _ => out.push((h, 1)),
        }
    }
    out
}

// ------------------------------------------------------------------ postings

/// One posting: the gap to the document before, and the term frequency.
fn put_posting(out: &mut Vec<u8>, gap: u32, tf: u32) {
    put_varint(out, (gap as u64) << 1 | u64::from(tf > 1));
    if tf > 1 {
        put_varint(out, tf as u64);
    }
}

// ------------------------------------------------------------------ writing

/// The postings of consecutive documents (`base..base + n`), grouped by term.
pub struct Run {
    base: u32,
    terms: Vec<u64>,
    /// df of each term within the run.
    df: Vec<u32>,
    /// End of each term's postings in `data`.
    ends: Vec<u32>,
    /// Per term: postings with document numbers local to the run.
    data: Vec<u8>,
    doc_len: Vec<u32>,
}

impl Run {
    /// Group the term lists of documents `base, base + 1, …` by term.
    pub fn new(base: u32, docs: &[Vec<(u64, u32)>]) -> Run {
        let mut triples: Vec<(u64, u32, u32)> = Vec::with_capacity(docs.iter().map(Vec::len).sum());
        let mut doc_len = Vec::with_capacity(docs.len());
        for (d, ts) in docs.iter().enumerate() {
            doc_len.push(ts.iter().map(|t| t.1).sum());
            triples.extend(ts.iter().map(|&(h, tf)| (h, d as u32, tf)));
        }
        triples.sort_unstable();
        let mut run = Run {
            base,
            terms: Vec::new(),
            df: Vec::new(),
            ends: Vec::new(),
            data: Vec::with_capacity(triples.len() + triples.len() / 4),
            doc_len,
        };
        let mut prev_doc = 0u32;
        for (h, d, tf) in triples {
            if run.terms.last() != Some(&h) {
                if !run.terms.is_empty() {
                    run.ends.push(run.data.len() as u32);
                }
                run.terms.push(h);
                run.df.push(0);
                prev_doc = 0;
            }
            put_posting(&mut run.data, d - prev_doc, tf);
            *run.df.last_mut().unwrap() += 1;
            prev_doc = d;
        }
        if !run.terms.is_empty() {
            run.ends.push(run.data.len() as u32);
        }
        run.terms.shrink_to_fit();
        run.df.shrink_to_fit();
        run.ends.shrink_to_fit();
        run.data.shrink_to_fit();
        run
    }

    /// Number the run's documents from `base` (a run is built before its
    /// place among all documents is known).
    pub fn set_base(&mut self, base: u32) {
        self.base = base;
    }

    /// Documents in the run.
    pub fn docs(&self) -> u32 {
        self.doc_len.len() as u32
    }
}

/// Write the index of the documents the runs hold (run bases ascending,
/// each run's documents right after the previous run's) to `out`; returns
/// its length.
pub fn write_to<W: Write + Seek>(out: W, runs: &[Run]) -> io::Result<(W, u64)> {
    use std::collections::BinaryHeap;
    let mut out = io::BufWriter::with_capacity(1 << 20, out);
    out.write_all(&[0u8; HEADER])?;
    let mut blocks: Vec<u8> = Vec::new();
    let mut index: Vec<u8> = Vec::new();
    let mut prev_term = 0u64;
    let mut offset = HEADER as u64;
    let mut cursor = vec![0usize; runs.len()];
    let mut heap: BinaryHeap<std::cmp::Reverse<(u64, usize)>> = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.terms.is_empty())
        .map(|(i, r)| std::cmp::Reverse((r.terms[0], i)))
        .collect();
    let mut buf: Vec<u8> = Vec::new();
    let mut terms = 0u64;
    let mut with: Vec<usize> = Vec::new();
    while let Some(std::cmp::Reverse((term, _))) = heap.peek().copied() {
        buf.clear();
        with.clear();
        while let Some(std::cmp::Reverse((t, i))) = heap.peek().copied() {
            if t != term {
                break;
            }
            heap.pop();
            with.push(i);
        }
        with.sort_unstable();
        let mut df = 0u32;
        let mut last: u32 = 0;
        for &i in &with {
            let r = &runs[i];
            let c = cursor[i];
            let start = if c == 0 { 0 } else { r.ends[c - 1] as usize };
            let end = r.ends[c] as usize;
            let seg = &r.data[start..end];
            // Only the first posting changes (its gap is from the document
            // before, in an earlier run); the rest are copied.
            let mut pos = 0;
            let v = get_varint(seg, &mut pos).expect("run postings are well formed");
            let doc = r.base + (v >> 1) as u32;
            put_varint(&mut buf, ((doc - last) as u64) << 1 | (v & 1));
            buf.extend_from_slice(&seg[pos..]);
            // The last document of this run's list: walk it.
            let mut d = doc;
            if v & 1 == 1 {
                get_varint(seg, &mut pos);
            }
            while pos < seg.len() {
                let v = get_varint(seg, &mut pos).expect("run postings are well formed");
                d += (v >> 1) as u32;
                if v & 1 == 1 {
                    get_varint(seg, &mut pos);
                }
            }
            last = d;
            df += r.df[c];
            cursor[i] = c + 1;
            if c + 1 < r.terms.len() {
                heap.push(std::cmp::Reverse((r.terms[c + 1], i)));
            }
        }
        if (terms as usize).is_multiple_of(BLOCK_TERMS) {
            index.extend_from_slice(&term.to_le_bytes());
            index.extend_from_slice(&(blocks.len() as u64).to_le_bytes());
            index.extend_from_slice(&offset.to_le_bytes());
            put_varint(&mut blocks, 0);
        } else {
            put_varint(&mut blocks, term - prev_term);
        }
        put_varint(&mut blocks, df as u64);
        put_varint(&mut blocks, buf.len() as u64);
        prev_term = term;
        out.write_all(&buf)?;
        offset += buf.len() as u64;
        terms += 1;
    }
    let len_offset = offset;
    let mut docs = 0u64;
    let mut total = 0u64;
    for r in runs {
        for &n in &r.doc_len {
            out.write_all(&n.to_le_bytes())?;
            total += n as u64;
        }
        docs += r.doc_len.len() as u64;
    }
    let blocks_offset = len_offset + docs * 4;
    let index_offset = blocks_offset + blocks.len() as u64;
    // Block offsets were relative to the blocks' start.
    for e in index.chunks_exact_mut(INDEX_ENTRY) {
        let rel = u64::from_le_bytes(e[8..16].try_into().unwrap());
        e[8..16].copy_from_slice(&(blocks_offset + rel).to_le_bytes());
    }
    out.write_all(&blocks)?;
    out.write_all(&index)?;
    let mut f = out.into_inner().map_err(|e| e.into_error())?;
    let docs = u32::try_from(docs)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "more than 2^32 documents"))?;
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&KEYWORD_VERSION.to_le_bytes());
    header.extend_from_slice(&TOKENIZER_VERSION.to_le_bytes());
    header.extend_from_slice(&docs.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    header.extend_from_slice(&terms.to_le_bytes());
    header.extend_from_slice(&total.to_le_bytes());
    header.extend_from_slice(&len_offset.to_le_bytes());
    header.extend_from_slice(&blocks_offset.to_le_bytes());
    header.extend_from_slice(&index_offset.to_le_bytes());
    f.seek(io::SeekFrom::Start(0))?;
    f.write_all(&header)?;
    Ok((f, index_offset + index.len() as u64))
}

/// Write `keywords.bin` at `path`; returns its length.
pub fn write(path: &Path, runs: &[Run]) -> io::Result<u64> {
    let (f, n) = write_to(std::fs::File::create(path)?, runs)?;
    f.sync_all()?;
    Ok(n)
}

// ------------------------------------------------------------------ reading

/// The bytes of an index: a mapped file, or built in memory.
enum Bytes {
    Map(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Map(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

impl KeywordIndex {
    /// Drop the pages of a mapped index read so far from the process's
    /// resident memory (they are read again from the file when needed).
    pub fn release_pages(&self) {
        if let Bytes::Map(m) = &self.bytes {
            crate::binfile::release(m);
        }
    }
}

/// A keyword index read in place: the directory is binary-searched, a
/// term's postings decoded on demand.
pub struct KeywordIndex {
    bytes: Bytes,
    docs: u32,
    terms: usize,
    total_len: u64,
    len_off: usize,
    blocks_off: usize,
    index_off: usize,
}

impl std::fmt::Debug for KeywordIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeywordIndex")
            .field("docs", &self.docs)
            .field("terms", &self.terms)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

fn bad(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{KEYWORD_FILE}: {why}"))
}

impl KeywordIndex {
    /// Map a file and check its header and section bounds. Another format
    /// or tokenizer version is `ErrorKind::Unsupported` (not damage: the
    /// reader may build its own index instead).
    pub fn open(path: &Path) -> io::Result<KeywordIndex> {
        Self::from_bytes(Bytes::Map(crate::binfile::map(path)?))
    }

    /// An index written to memory by [`write_to`].
    pub fn from_vec(v: Vec<u8>) -> io::Result<KeywordIndex> {
        Self::from_bytes(Bytes::Owned(v))
    }

    /// Map a file whose first `end` bytes are an index.
    pub(crate) fn open_prefix(path: &Path, end: usize) -> io::Result<KeywordIndex> {
        Self::from_prefix(Bytes::Map(crate::binfile::map(path)?), end)
    }

    fn from_bytes(bytes: Bytes) -> io::Result<KeywordIndex> {
        let end = bytes.len();
        Self::from_prefix(bytes, end)
    }

    /// An index that is the first `end` bytes of `bytes` (a file that
    /// carries more after it, such as `heads.bin`).
    fn from_prefix(bytes: Bytes, end: usize) -> io::Result<KeywordIndex> {
        if end > bytes.len() || end < HEADER || &bytes[..8] != MAGIC {
            return Err(bad("not a keyword index (bad magic)"));
        }
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
        let (version, tokenizer) = (u32_at(8), u32_at(12));
        if version != KEYWORD_VERSION || tokenizer != TOKENIZER_VERSION {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{KEYWORD_FILE}: format {version}, tokenizer {tokenizer}; this reader reads \
                     {KEYWORD_VERSION}, {TOKENIZER_VERSION}"
                ),
            ));
        }
        let docs = u32_at(16);
        let terms = u64_at(24) as usize;
        let total_len = u64_at(32);
        let len_off = u64_at(40) as usize;
        let blocks_off = u64_at(48) as usize;
        let index_off = u64_at(56) as usize;
        let nblocks = terms.div_ceil(BLOCK_TERMS);
        if len_off < HEADER
            || len_off.checked_add(docs as usize * 4) != Some(blocks_off)
            || blocks_off > index_off
            || index_off.checked_add(nblocks.saturating_mul(INDEX_ENTRY)) != Some(end)
        {
            return Err(bad("sections out of bounds"));
        }
        Ok(KeywordIndex {
            bytes,
            docs,
            terms,
            total_len,
            len_off,
            blocks_off,
            index_off,
        })
    }

    /// Number of documents.
    pub fn docs(&self) -> u32 {
        self.docs
    }

    /// Sum of the documents' lengths (in terms).
    pub fn total_len(&self) -> u64 {
        self.total_len
    }

    /// Number of distinct terms.
    pub fn terms(&self) -> usize {
        self.terms
    }

    /// Bytes held (mapped or in memory).
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// A document's length in terms.
    pub fn doc_len(&self, d: u32) -> u32 {
        let o = self.len_off + d as usize * 4;
        u32::from_le_bytes(self.bytes[o..o + 4].try_into().unwrap())
    }

    /// Block `i` of the index: (first hash, block offset, postings offset).
    fn block(&self, i: usize) -> (u64, usize, u64) {
        let o = self.index_off + i * INDEX_ENTRY;
        let m = &self.bytes;
        let u = |o: usize| u64::from_le_bytes(m[o..o + 8].try_into().unwrap());
        (u(o), u(o + 8) as usize, u(o + 16))
    }

    /// (df, postings offset, postings length) of a term hash.
    fn find(&self, hash: u64) -> Option<(u32, usize, usize)> {
        let nblocks = self.terms.div_ceil(BLOCK_TERMS);
        // The last block whose first hash is ≤ `hash`.
        let (mut lo, mut hi) = (0usize, nblocks);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.block(mid).0 <= hash {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let b = lo.checked_sub(1)?;
        let (mut h, at, mut posting) = self.block(b);
        let end = if b + 1 < nblocks {
            self.block(b + 1).1
        } else {
            self.index_off
        };
        let data = self.bytes.get(at.max(self.blocks_off)..end)?;
        let mut pos = 0;
        let n = BLOCK_TERMS.min(self.terms - b * BLOCK_TERMS);
        for _ in 0..n {
            h = h.checked_add(get_varint(data, &mut pos)?)?;
            let df = get_varint(data, &mut pos)?;
            let len = get_varint(data, &mut pos)?;
            if h == hash {
                return Some((u32::try_from(df).ok()?, posting as usize, len as usize));
            }
            if h > hash {
                return None;
            }
            posting = posting.checked_add(len)?;
        }
        None
    }

    /// Documents holding the term (0 when absent).
    pub fn df(&self, term: &str) -> u32 {
        self.find(term_hash(term)).map_or(0, |f| f.0)
    }

    /// The term's postings: (document, tf), documents ascending. Empty when
    /// the term is absent; stops early on a damaged list.
    pub fn postings(&self, term: &str) -> Postings<'_> {
        let Some((df, start, len)) = self.find(term_hash(term)) else {
            return Postings::EMPTY;
        };
        match start.checked_add(len) {
            Some(end) if start >= HEADER && end <= self.len_off => Postings {
                data: &self.bytes[start..end],
                at: 0,
                doc: 0,
                left: df,
                docs: self.docs,
            },
            _ => Postings::EMPTY,
        }
    }
}

/// Iterator over one term's (document, tf).
pub struct Postings<'a> {
    data: &'a [u8],
    at: usize,
    doc: u32,
    left: u32,
    docs: u32,
}

impl Postings<'_> {
    /// Documents the list declares (its term's df), before iteration.
    pub fn df(&self) -> u32 {
        self.left
    }

    const EMPTY: Postings<'static> = Postings {
        data: &[],
        at: 0,
        doc: 0,
        left: 0,
        docs: 0,
    };
}

impl Iterator for Postings<'_> {
    type Item = (u32, u32);
    fn next(&mut self) -> Option<(u32, u32)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let v = get_varint(self.data, &mut self.at)?;
        let doc = self.doc.checked_add(u32::try_from(v >> 1).ok()?)?;
        let tf = if v & 1 == 1 {
            u32::try_from(get_varint(self.data, &mut self.at)?).ok()?
        } else {
            1
        };
        if doc >= self.docs {
            self.left = 0;
            return None;
        }
        self.doc = doc;
        Some((doc, tf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference tokenizer (the server's before this module): the fast
    /// one must yield exactly its terms.
    fn reference_terms(text: &str) -> Vec<String> {
        let mut out = Vec::new();
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
            } else if lw.len() >= 2 && !is_stop(&lw) && !long_number(&lw) {
                out.push(stem(&lw));
            }
        }
        out
    }

    fn fast_terms(text: &str) -> Vec<String> {
        let mut v = Vec::new();
        terms(text, &mut v);
        v
    }

    #[test]
    fn terms_split_identifiers_and_stem() {
        assert_eq!(
            fast_terms("parseHTTPRequest_v2 entries"),
            [
                "parsehttprequest_v2",
                "pars",
                "http",
                "request",
                "v2",
                "entri"
            ]
        );
        assert_eq!(
            fast_terms("the Running of 2024 dogs"),
            ["run", "2024", "dog"]
        );
        // Numbers of two to four digits are terms, longer ones and digits are not.
        assert_eq!(fast_terms("HTTP 404, 7 or 20260101"), ["http", "404"]);
        // Derived forms share a stem, inflected ones too (Porter2).
        assert_eq!(
            fast_terms("serialization serializer Serialize serialized"),
            ["serial"; 4]
        );
        assert_eq!(fast_terms("validation validators"), ["valid"; 2]);
        assert_eq!(fast_terms("__init__ self.x_y"), ["__init__", "x_y"]);
        assert_eq!(
            fast_terms("ÜberKlasse größe"),
            reference_terms("ÜberKlasse größe")
        );
    }

    #[test]
    fn fast_terms_equal_the_reference_on_real_code() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            let r = reference_terms(&text);
            n += r.len();
            assert_eq!(fast_terms(&text), r);
        }
        assert!(n > 10_000, "{n}");
    }

    proptest! {
        #[test]
        fn fast_terms_equal_the_reference(s in "([a-zA-Z0-9_ .(]|[ÄäßΩω]|XMLHttp|ies|ing|ed){0,40}") {
            prop_assert_eq!(fast_terms(&s), reference_terms(&s));
        }
        #[test]
        fn fast_terms_equal_the_reference_any_text(s in "\\PC{0,30}") {
            prop_assert_eq!(fast_terms(&s), reference_terms(&s));
        }
    }

    fn docs_of(texts: &[&str]) -> Vec<Vec<(u64, u32)>> {
        let p = path_terms("src/lib.rs");
        texts
            .iter()
            .map(|t| doc_terms(t, Some("MySym"), None, &p))
            .collect()
    }

    fn build(texts: &[&str], step: usize) -> Vec<u8> {
        let docs = docs_of(texts);
        let mut runs: Vec<Run> = docs.chunks(step).map(|c| Run::new(0, c)).collect();
        let mut base = 0;
        for r in &mut runs {
            r.set_base(base);
            base += r.docs();
        }
        write_to(io::Cursor::new(Vec::new()), &runs)
            .unwrap()
            .0
            .into_inner()
    }

    #[test]
    fn postings_are_the_documents_holding_each_term() {
        let texts = [
            "fn parse_config() {}",
            "config config config",
            "",
            "nothing here",
            "ParseConfig again",
        ];
        let idx = KeywordIndex::from_vec(build(&texts, 2)).unwrap();
        assert_eq!(idx.docs(), 5);
        let got: Vec<(u32, u32)> = idx.postings("config").collect();
        assert_eq!(got, vec![(0, 1), (1, 3), (4, 1)]);
        assert_eq!(idx.df("config"), 3);
        assert_eq!(idx.df("parseconfig"), 1);
        assert_eq!(idx.df("zzz"), 0);
        assert_eq!(idx.postings("zzz").count(), 0);
        // Symbol terms twice, path terms once, in every document.
        assert_eq!(
            idx.postings("mysym").map(|p| p.1).collect::<Vec<_>>(),
            vec![2; 5]
        );
        assert_eq!(idx.df("lib"), 5);
        let lens: Vec<u32> = (0..5).map(|d| idx.doc_len(d)).collect();
        let want: Vec<u32> = docs_of(&texts)
            .iter()
            .map(|d| d.iter().map(|t| t.1).sum())
            .collect();
        assert_eq!(lens, want);
        assert_eq!(idx.total_len(), want.iter().map(|&n| n as u64).sum::<u64>());
    }

    #[test]
    fn bytes_do_not_depend_on_the_run_size() {
        let texts: Vec<String> = (0..300)
            .map(|i| {
                format!(
                    "doc {i} holds word{} and Ωmega{} {} uniq{i}z",
                    i % 7,
                    i % 13,
                    "x ".repeat(i % 5)
                )
            })
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let one = build(&refs, 1);
        assert_eq!(one, build(&refs, 64));
        assert_eq!(one, build(&refs, 1000));
        let idx = KeywordIndex::from_vec(one).unwrap();
        let word3: Vec<u32> = idx.postings("word3").map(|p| p.0).collect();
        let want: Vec<u32> = (0..300).filter(|i| i % 7 == 3).collect();
        assert_eq!(word3, want);
        // Many blocks of terms: each is found, with its one document.
        assert!(idx.terms() > 4 * BLOCK_TERMS, "{}", idx.terms());
        for i in 0..300u32 {
            let got: Vec<(u32, u32)> = idx.postings(&format!("uniq{i}z")).collect();
            assert_eq!(got, vec![(i, 1)]);
            assert_eq!(idx.df(&format!("uniq{i}y")), 0);
        }
    }

    #[test]
    fn damaged_or_foreign_files_are_refused() {
        let bytes = build(&["hello world"], 4);
        assert!(KeywordIndex::from_vec(bytes[..bytes.len() - 3].to_vec()).is_err());
        let mut wrong = bytes.clone();
        wrong[0] = b'X';
        assert!(KeywordIndex::from_vec(wrong).is_err());
        let mut newer = bytes.clone();
        newer[12] = 9;
        let e = KeywordIndex::from_vec(newer).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
        // Corrupt postings end the iteration instead of panicking.
        let mut garbled = bytes;
        for b in &mut garbled[HEADER..HEADER + 4] {
            *b = 0xff;
        }
        let idx = KeywordIndex::from_vec(garbled).unwrap();
        assert!(idx.postings("hello").count() <= 1);
    }
}
