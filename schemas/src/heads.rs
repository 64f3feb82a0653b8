//! `heads.bin`: a BM25 index over the snapshot's definition heads, and
//! which chunks each definition starts in. The builder writes it; the
//! server maps it, so `search_code`'s `head` stage costs nothing at load
//! (building it from `symbols.parquet` took 9 s and 1.1 GB on the Linux
//! kernel's 2.8 million definitions).
//!
//! # Heads
//! A *head* is a definition outside test files whose kind is one of
//! [`HEAD_KINDS`]: the terms (those of [`crate::keyword`]) of its
//! qualified name, its signature and the first paragraph of its doc —
//! what a description of it paraphrases, without its body's other words
//! ([`head_terms`]). Heads are numbered in table order (the files in
//! order, each file's definitions in `symbols.parquet`'s order); a
//! definition none of whose file's chunks holds its start line has none.
//! A chunk *holds* a definition when its lines hold the definition's
//! start line ([`Spans`]).
//!
//! # Format (version 1; all integers little-endian)
//! ```text
//! 0    the heads' keyword index, in keywords.bin's format (its own
//!      header, version and tokenizer version), `index length` bytes
//! …    chunk offsets: `chunks + 1` u32, chunk c's heads are
//!      ids[offset[c]..offset[c + 1]] (chunks in chunks.parquet's order;
//!      the pattern chunks have none and are not counted)
//! …    ids: `ids` u32, head numbers, ascending within a chunk
//! end-32 trailer: u64 index length, u32 chunks, u32 ids, u32 version (1),
//!      u32 reserved (0), magic b"CIXHEAD\0"
//! ```
//! The bytes depend on the tables' rows only (not on threads, nor on
//! whether rows were reused from a previous snapshot).

use std::io::{self, Seek, Write};
use std::path::Path;

use crate::keyword::{self, KeywordIndex, Run};

/// File name inside a snapshot directory.
pub const HEADS_FILE: &str = "heads.bin";
/// Format version of `heads.bin`'s trailer and map (the index inside has
/// keywords.bin's versions).
pub const HEADS_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"CIXHEAD\0";
const TRAILER: usize = 32;

/// Kinds of definition a description names (fields, constants, variables
/// and properties are described with their container).
pub const HEAD_KINDS: &[&str] = &[
    "function",
    "method",
    "constructor",
    "class",
    "struct",
    "interface",
    "trait",
    "enum",
    "type",
    "macro",
    "module",
    "namespace",
];

/// Does a definition of this kind, in a test file or not, have a head?
pub fn has_head(kind: &str, is_test: bool) -> bool {
    !is_test && HEAD_KINDS.contains(&kind)
}

/// A head's terms as (hash, tf) sorted by hash: its qualified name, its
/// signature and the first paragraph of its (trimmed) doc, one per line.
pub fn head_terms(
    qualified_name: &str,
    signature: Option<&str>,
    doc: Option<&str>,
) -> Vec<(u64, u32)> {
    let mut text = String::with_capacity(qualified_name.len() + 64);
    text.push_str(qualified_name);
    if let Some(s) = signature {
        text.push('\n');
        text.push_str(s);
    }
    if let Some(d) = doc {
        let d = d.trim();
        text.push('\n');
        text.push_str(d.split("\n\n").next().unwrap_or(d));
    }
    let mut t = keyword::doc_terms(&text, None, None, &[]);
    t.shrink_to_fit();
    t
}

/// A file's chunks by start line, with the largest end line so far, to
/// find the chunks holding a line without reading them all.
#[derive(Default)]
pub struct Spans {
    /// (start line, end line, chunk), by start line.
    by_start: Vec<(u32, u32, usize)>,
    /// The largest end line among `by_start[..=i]`.
    max_end: Vec<u32>,
}

impl Spans {
    /// From (start line, end line, chunk) triples in any order.
    pub fn new(spans: impl Iterator<Item = (u32, u32, usize)>) -> Spans {
        let mut by_start: Vec<(u32, u32, usize)> = spans.collect();
        by_start.sort_unstable();
        let mut max_end = Vec::with_capacity(by_start.len());
        let mut m = 0;
        for &(_, e, _) in &by_start {
            m = m.max(e);
            max_end.push(m);
        }
        Spans { by_start, max_end }
    }

    /// The chunks whose lines hold `line`, by start line.
    pub fn holding(&self, line: u32) -> impl Iterator<Item = usize> + '_ {
        // Spans starting after `line` cannot hold it; before that, the
        // running maximum of end lines says where the holders begin.
        let upto = self.by_start.partition_point(|s| s.0 <= line);
        let from = self.max_end[..upto].partition_point(|&e| e < line);
        self.by_start[from..upto]
            .iter()
            .filter(move |s| s.1 >= line)
            .map(|s| s.2)
    }
}

/// One definition, as a head's source.
pub struct Def<'a> {
    pub qualified_name: &'a str,
    pub kind: &'a str,
    pub signature: Option<&'a str>,
    pub doc: Option<&'a str>,
    pub start_line: u32,
    pub is_test: bool,
}

/// A file's heads: their terms (as (hash, tf) sorted by hash), and per
/// chunk the heads (indexes into the first) it holds.
pub type FileHeads = (Vec<Vec<(u64, u32)>>, Vec<Vec<u32>>);

/// The heads of one file: its heads' terms, and per chunk (for `chunks`
/// given as (start line, end line) in table order) the heads it holds.
pub fn file_heads<'a>(defs: impl Iterator<Item = Def<'a>>, chunks: &[(u32, u32)]) -> FileHeads {
    let mut docs = Vec::new();
    let mut of: Vec<Vec<u32>> = vec![Vec::new(); chunks.len()];
    let spans = Spans::new(chunks.iter().enumerate().map(|(i, &(s, e))| (s, e, i)));
    for d in defs {
        if !has_head(d.kind, d.is_test) {
            continue;
        }
        let id = docs.len() as u32;
        let mut used = false;
        for c in spans.holding(d.start_line) {
            of[c].push(id);
            used = true;
        }
        if used {
            docs.push(head_terms(d.qualified_name, d.signature, d.doc));
        }
    }
    (docs, of)
}

/// Heads gathered in table order, then written as `heads.bin`.
pub struct Writer {
    runs: Vec<Run>,
    heads: u32,
    offsets: Vec<u32>,
    ids: Vec<u32>,
}

impl Default for Writer {
    fn default() -> Self {
        Writer {
            runs: Vec::new(),
            heads: 0,
            offsets: vec![0],
            ids: Vec::new(),
        }
    }
}

impl Writer {
    /// Append the next chunks and their heads: `run` indexes the heads
    /// (numbered from 0 within it), `chunks[c]` lists the run's heads that
    /// chunk c holds.
    pub fn push(&mut self, mut run: Run, chunks: &[Vec<u32>]) {
        run.set_base(self.heads);
        for c in chunks {
            self.ids.extend(c.iter().map(|h| h + self.heads));
            self.offsets.push(self.ids.len() as u32);
        }
        self.heads += run.docs();
        self.runs.push(run);
    }

    /// Write `heads.bin` at `path`; returns its length.
    pub fn write(&self, path: &Path) -> io::Result<u64> {
        let f = std::fs::File::create(path)?;
        let (mut f, index_len) = keyword::write_to(f, &self.runs)?;
        f.seek(io::SeekFrom::Start(index_len))?;
        let mut out = io::BufWriter::with_capacity(1 << 20, f);
        for v in self.offsets.iter().chain(&self.ids) {
            out.write_all(&v.to_le_bytes())?;
        }
        out.write_all(&index_len.to_le_bytes())?;
        out.write_all(&(self.offsets.len() as u32 - 1).to_le_bytes())?;
        out.write_all(&(self.ids.len() as u32).to_le_bytes())?;
        out.write_all(&HEADS_VERSION.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(MAGIC)?;
        let f = out.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        Ok(index_len + 4 * (self.offsets.len() + self.ids.len()) as u64 + TRAILER as u64)
    }
}

fn bad(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{HEADS_FILE}: {why}"))
}

/// Which heads each chunk holds: read in place from `heads.bin`, or built
/// in memory.
pub enum HeadMap {
    Mapped {
        map: memmap2::Mmap,
        /// Byte offset of the chunk offsets; the ids follow them.
        at: usize,
        chunks: u32,
        ids: u32,
    },
    Owned {
        offsets: Vec<u32>,
        ids: Vec<u32>,
    },
}

impl HeadMap {
    /// From per-chunk lists of heads.
    pub fn from_lists(lists: &[Vec<u32>]) -> HeadMap {
        let mut offsets = Vec::with_capacity(lists.len() + 1);
        let mut ids = Vec::new();
        offsets.push(0);
        for l in lists {
            ids.extend_from_slice(l);
            offsets.push(ids.len() as u32);
        }
        HeadMap::Owned { offsets, ids }
    }

    /// Chunks covered.
    pub fn chunks(&self) -> u32 {
        match self {
            HeadMap::Mapped { chunks, .. } => *chunks,
            HeadMap::Owned { offsets, .. } => offsets.len() as u32 - 1,
        }
    }

    /// The heads chunk `c` holds (none past the covered chunks; a damaged
    /// map gives fewer, never out-of-range reads).
    pub fn heads(&self, c: u32) -> Vec<u32> {
        match self {
            HeadMap::Owned { offsets, ids } => {
                let (Some(&a), Some(&b)) = (offsets.get(c as usize), offsets.get(c as usize + 1))
                else {
                    return Vec::new();
                };
                ids.get(a as usize..b as usize)
                    .map_or_else(Vec::new, <[u32]>::to_vec)
            }
            HeadMap::Mapped {
                map,
                at,
                chunks,
                ids,
            } => {
                if c >= *chunks {
                    return Vec::new();
                }
                let u = |i: usize| {
                    let o = at + 4 * i;
                    u32::from_le_bytes(map[o..o + 4].try_into().unwrap())
                };
                let (a, b) = (u(c as usize).min(*ids), u(c as usize + 1).min(*ids));
                let base = *chunks as usize + 1;
                (a..b.max(a)).map(|i| u(base + i as usize)).collect()
            }
        }
    }

    /// Drop the mapping's resident pages (an idle server).
    pub fn release_pages(&self) {
        if let HeadMap::Mapped { map, .. } = self {
            crate::binfile::release(map);
        }
    }
}

/// Open `heads.bin`: its heads' keyword index and its chunks' map. Another
/// format or tokenizer version is `ErrorKind::Unsupported`.
pub fn open(path: &Path) -> io::Result<(KeywordIndex, HeadMap)> {
    let map = crate::binfile::map(path)?;
    let n = map.len();
    if n < TRAILER || &map[n - 8..] != MAGIC {
        return Err(bad("not a heads index (bad magic)"));
    }
    let t = &map[n - TRAILER..];
    let u32_at = |o: usize| u32::from_le_bytes(t[o..o + 4].try_into().unwrap());
    let index_len = u64::from_le_bytes(t[..8].try_into().unwrap());
    let (chunks, ids, version) = (u32_at(8), u32_at(12), u32_at(16));
    if version != HEADS_VERSION {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{HEADS_FILE}: format {version}; this reader reads {HEADS_VERSION}"),
        ));
    }
    let want = index_len
        .checked_add(4 * (chunks as u64 + 1 + ids as u64))
        .and_then(|v| v.checked_add(TRAILER as u64));
    if want != Some(n as u64) {
        return Err(bad("sections out of bounds"));
    }
    let index = KeywordIndex::open_prefix(path, index_len as usize)?;
    Ok((
        index,
        HeadMap::Mapped {
            map,
            at: index_len as usize,
            chunks,
            ids,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def<'a>(qn: &'a str, kind: &'a str, doc: Option<&'a str>, line: u32) -> Def<'a> {
        Def {
            qualified_name: qn,
            kind,
            signature: Some(""),
            doc,
            start_line: line,
            is_test: false,
        }
    }

    #[test]
    fn spans_holding_a_line() {
        let s = Spans::new([(1, 100, 0), (10, 20, 1), (21, 30, 2), (50, 60, 3)].into_iter());
        assert_eq!(s.holding(15).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(s.holding(40).collect::<Vec<_>>(), vec![0]);
        assert_eq!(s.holding(101).count(), 0);
    }

    #[test]
    fn heads_of_chunks_round_trip_through_the_file() {
        // File 1: a class (lines 1-30) holding a method (10-20) and a field;
        // file 2: one function, and a test-file definition with no head.
        let (d1, c1) = file_heads(
            [
                def("Apps", "class", Some("A registry.\n\nMore words."), 1),
                def(
                    "Apps.get_app_configs",
                    "method",
                    Some("Return an iterable of AppConfig."),
                    10,
                ),
                def("Apps.ready", "field", None, 3),
            ]
            .into_iter(),
            &[(1, 30), (10, 20)],
        );
        assert_eq!(d1.len(), 2);
        assert_eq!(c1, vec![vec![0, 1], vec![1]]);
        let mut t = def("test_x", "function", None, 1);
        t.is_test = true;
        let (d2, c2) = file_heads(
            [def("populate", "function", None, 2), t].into_iter(),
            &[(1, 5)],
        );
        let mut w = Writer::default();
        w.push(Run::new(0, &d1), &c1);
        w.push(Run::new(0, &d2), &c2);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(HEADS_FILE);
        let len = w.write(&p).unwrap();
        assert_eq!(len, std::fs::metadata(&p).unwrap().len());
        let (index, map) = open(&p).unwrap();
        assert_eq!((index.docs(), map.chunks()), (3, 3));
        assert_eq!(
            (map.heads(0), map.heads(1), map.heads(2)),
            (vec![0, 1], vec![1], vec![2])
        );
        assert!(map.heads(3).is_empty());
        // The first doc paragraph is a head's; the second is not.
        let term = |w: &str| {
            let mut v = Vec::new();
            keyword::terms(w, &mut v);
            v.pop().unwrap()
        };
        assert_eq!(index.df(&term("iterable")), 1);
        assert_eq!(index.df(&term("registry")), 1);
        assert_eq!(index.df(&term("words")), 0);
        assert_eq!(index.df(&term("populate")), 1);
        assert_eq!(index.df("test_x"), 0);
        // A cut file is refused, not misread.
        let bytes = std::fs::read(&p).unwrap();
        std::fs::write(&p, &bytes[..bytes.len() - 4]).unwrap();
        assert!(open(&p).is_err());
    }
}
