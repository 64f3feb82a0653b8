//! The keyword side: identifier-aware terms (split, stemmed, stop words
//! dropped) and a compact BM25 index over chunk text, symbol names and paths.

use super::*;

pub(crate) const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "i", "if",
    "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "what",
    "when", "where", "which", "who", "why", "with", "work", "works", "get", "set", "self", "none",
    "return", "returns", "def", "func", "fn", "let", "var", "const", "new", "true", "false", "nil",
];

pub(crate) fn is_stop(t: &str) -> bool {
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

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn get_varint(b: &[u8], at: &mut usize) -> u32 {
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
pub(crate) fn encode_posting(gap: u32, tf: u16, out: &mut Vec<u8>) {
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

pub(crate) const K1: f32 = 1.2;
pub(crate) const B: f32 = 0.75;

pub(crate) fn term_hash(t: &str) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
