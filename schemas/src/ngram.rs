//! `ngrams.bin`: the snapshot's n-gram index — for every n-gram of the
//! files' text, the files (ids = row order of `files.parquet`, which is
//! sorted by path) that contain it. A grep plans its regex into a boolean
//! query over n-grams and scans only the files that satisfy it.
//!
//! # What is indexed
//! Every byte trigram of a file's published content with ASCII letters
//! folded to lower case (so one index serves case-sensitive and -insensitive
//! queries); every byte ≥ 0x80 on its own (a unigram); and every pair of a
//! UTF-8 lead byte (≥ 0xC0) and the byte after it (a bigram: the first two
//! bytes of a non-ASCII character, which make classes such as `\p{Greek}` and
//! one- or two-character strings selective). Keys: a trigram `abc` is
//! `a << 16 | b << 8 | c` (< 2^24); a unigram of byte `b` is `2^24 | b`; a
//! bigram `ab` is `2^25 | a << 8 | b`.
//!
//! # Format (version 2; all integers little-endian)
//! ```text
//! 0   magic  b"CIXGRAM\0"
//! 8   u32    version (2)
//! 12  u32    files: number of files (rows of files.parquet)
//! 16  u64    keys: number of distinct n-grams
//! 24  u64    directory offset
//! 32  postings: per key, in key order, its file ids ascending as LEB128
//!     varints: the first id, then each id minus the one before
//! dir directory: `keys` entries of 16 bytes, sorted by key:
//!     u32 key, u32 count (files holding it), u64 offset of its postings
//! ```
//! The bytes depend on the files' contents and order only (not on threads,
//! nor on whether rows were reused from a previous snapshot).
//!
//! # Version history
//! - 1: trigrams over ASCII-lowercased bytes, unigrams of bytes ≥ 0x80
//!   (never published: readers ignore it).
//! - 2 (feature 5): also bigrams of a UTF-8 lead byte and its next byte.

use std::io::{self, Write};
use std::path::Path;

/// File name inside a snapshot directory.
pub const NGRAM_FILE: &str = "ngrams.bin";
/// Format version written in the header.
pub const NGRAM_VERSION: u32 = 2;
const MAGIC: &[u8; 8] = b"CIXGRAM\0";
const HEADER: usize = 32;
const DIR_ENTRY: usize = 16;
/// First key of the unigrams (bytes ≥ 0x80).
pub const UNIGRAM_BASE: u32 = 1 << 24;
/// First key of the bigrams (a lead byte ≥ 0xC0 and the byte after it).
pub const BIGRAM_BASE: u32 = 1 << 25;

/// Key of the trigram `a b c` (bytes as indexed: ASCII already lower-cased).
pub fn trigram(a: u8, b: u8, c: u8) -> u32 {
    (a as u32) << 16 | (b as u32) << 8 | c as u32
}

/// Key of the unigram of a byte ≥ 0x80.
pub fn unigram(b: u8) -> u32 {
    UNIGRAM_BASE | b as u32
}

/// Key of the bigram of a lead byte `a` ≥ 0xC0 and the byte `b` after it.
pub fn bigram(a: u8, b: u8) -> u32 {
    BIGRAM_BASE | (a as u32) << 8 | b as u32
}

/// The distinct n-gram keys of one text, sorted.
pub fn file_grams(text: &[u8]) -> Vec<u32> {
    thread_local! {
        static SEEN: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        if seen.is_empty() {
            seen.resize(1 << 18, 0); // 2^24 bits
        }
        let mut keys = Vec::with_capacity((text.len() / 4).min(1 << 16));
        let mut high = [0u64; 2];
        let low = |b: u8| b.to_ascii_lowercase();
        for w in text.windows(3) {
            let k = trigram(low(w[0]), low(w[1]), low(w[2]));
            let (word, bit) = ((k >> 6) as usize, 1u64 << (k & 63));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                keys.push(k);
            }
        }
        let first_bigram = keys.len();
        for (i, &b) in text.iter().enumerate() {
            if b >= 0x80 {
                high[((b - 0x80) >> 6) as usize] |= 1u64 << (b & 63);
                if b >= 0xC0 {
                    if let Some(&next) = text.get(i + 1) {
                        // Beyond the trigram bitset: deduplicated after the sort.
                        keys.push(bigram(b, next));
                    }
                }
            }
        }
        for &k in &keys[..first_bigram] {
            seen[(k >> 6) as usize] = 0;
        }
        for (i, h) in high.iter().enumerate() {
            for bit in 0..64 {
                if h & (1u64 << bit) != 0 {
                    keys.push(unigram(0x80 + (i as u8) * 64 + bit as u8));
                }
            }
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    })
}

fn put_varint(out: &mut Vec<u8>, v: u32) {
    crate::binfile::put_varint(out, v as u64);
}

fn get_varint(b: &[u8], pos: &mut usize) -> Option<u32> {
    u32::try_from(crate::binfile::get_varint(b, pos)?).ok()
}

/// The postings of a run of consecutive files (ids `base..base + n`), grouped by key.
pub struct Run {
    base: u32,
    keys: Vec<u32>,
    /// End of each key's postings in `data`.
    ends: Vec<u32>,
    /// Per key: local ids (id - base) as varint deltas.
    data: Vec<u8>,
}

impl Run {
    /// Group the gram lists of files `base, base + 1, …` by key.
    pub fn new(base: u32, files: &[Vec<u32>]) -> Run {
        let mut pairs: Vec<u64> = Vec::with_capacity(files.iter().map(Vec::len).sum());
        for (i, g) in files.iter().enumerate() {
            pairs.extend(g.iter().map(|&k| (k as u64) << 32 | i as u64));
        }
        pairs.sort_unstable();
        let mut run = Run {
            base,
            keys: Vec::new(),
            ends: Vec::new(),
            data: Vec::with_capacity(pairs.len() + pairs.len() / 4),
        };
        let mut prev_key = u64::MAX;
        let mut prev_local = 0u32;
        for p in pairs {
            let (k, local) = (p >> 32, p as u32);
            if k != prev_key {
                if prev_key != u64::MAX {
                    run.ends.push(run.data.len() as u32);
                }
                run.keys.push(k as u32);
                prev_key = k;
                put_varint(&mut run.data, local);
            } else {
                put_varint(&mut run.data, local - prev_local);
            }
            prev_local = local;
        }
        if prev_key != u64::MAX {
            run.ends.push(run.data.len() as u32);
        }
        run
    }

    /// Number the run's files from `base` (the run is built before its
    /// place among all files is known).
    pub fn set_base(&mut self, base: u32) {
        self.base = base;
    }
}

/// Write `ngrams.bin` for `files` files from runs covering ids in order
/// (run bases ascending, each run's files after the previous run's).
pub fn write(path: &Path, files: u32, runs: &[Run]) -> io::Result<u64> {
    use std::collections::BinaryHeap;
    let mut out = io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    out.write_all(&[0u8; HEADER])?;
    let mut dir: Vec<u8> = Vec::new();
    let mut offset = HEADER as u64;
    // Min-heap of (key, run index) over each run's next key.
    let mut cursor = vec![0usize; runs.len()];
    let mut heap: BinaryHeap<std::cmp::Reverse<(u32, usize)>> = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.keys.is_empty())
        .map(|(i, r)| std::cmp::Reverse((r.keys[0], i)))
        .collect();
    let mut buf: Vec<u8> = Vec::new();
    let mut keys = 0u64;
    while let Some(std::cmp::Reverse((key, _))) = heap.peek().copied() {
        buf.clear();
        let mut count = 0u32;
        let mut prev: Option<u32> = None;
        // Runs with this key, in run order (= ascending ids).
        let mut with: Vec<usize> = Vec::new();
        while let Some(std::cmp::Reverse((k, i))) = heap.peek().copied() {
            if k != key {
                break;
            }
            heap.pop();
            with.push(i);
        }
        with.sort_unstable();
        for i in with {
            let r = &runs[i];
            let c = cursor[i];
            let start = if c == 0 { 0 } else { r.ends[c - 1] as usize };
            let end = r.ends[c] as usize;
            let mut pos = start;
            let mut local = 0u32;
            let mut first = true;
            while pos < end {
                let v = get_varint(&r.data, &mut pos).expect("run postings are well formed");
                local = if first { v } else { local + v };
                first = false;
                let id = r.base + local;
                match prev {
                    None => put_varint(&mut buf, id),
                    Some(p) => put_varint(&mut buf, id - p),
                }
                prev = Some(id);
                count += 1;
            }
            cursor[i] = c + 1;
            if c + 1 < r.keys.len() {
                heap.push(std::cmp::Reverse((r.keys[c + 1], i)));
            }
        }
        dir.extend_from_slice(&key.to_le_bytes());
        dir.extend_from_slice(&count.to_le_bytes());
        dir.extend_from_slice(&offset.to_le_bytes());
        out.write_all(&buf)?;
        offset += buf.len() as u64;
        keys += 1;
    }
    let dir_offset = offset;
    out.write_all(&dir)?;
    let mut f = out.into_inner().map_err(|e| e.into_error())?;
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&NGRAM_VERSION.to_le_bytes());
    header.extend_from_slice(&files.to_le_bytes());
    header.extend_from_slice(&keys.to_le_bytes());
    header.extend_from_slice(&dir_offset.to_le_bytes());
    use std::io::Seek;
    f.seek(io::SeekFrom::Start(0))?;
    f.write_all(&header)?;
    f.sync_all()?;
    Ok(dir_offset + dir.len() as u64)
}

/// A memory-mapped `ngrams.bin`: the directory is searched in place, a
/// key's postings decoded on demand.
pub struct NgramIndex {
    map: memmap2::Mmap,
    files: u32,
    keys: usize,
    dir: usize,
}

impl NgramIndex {
    /// Drop the pages read so far from the process's resident memory (they
    /// are read again from the file when needed).
    pub fn release_pages(&self) {
        crate::binfile::release(&self.map);
    }
}

impl std::fmt::Debug for NgramIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NgramIndex")
            .field("files", &self.files)
            .field("keys", &self.keys)
            .field("bytes", &self.map.len())
            .finish()
    }
}

/// A damaged or foreign `ngrams.bin`.
fn bad(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{NGRAM_FILE}: {why}"))
}

impl NgramIndex {
    /// Map and check the header and directory bounds.
    pub fn open(path: &Path) -> io::Result<NgramIndex> {
        let map = crate::binfile::map(path)?;
        if map.len() < HEADER || &map[..8] != MAGIC {
            return Err(bad("not an n-gram index (bad magic)"));
        }
        let u32_at = |o: usize| u32::from_le_bytes(map[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(map[o..o + 8].try_into().unwrap());
        let version = u32_at(8);
        if version != NGRAM_VERSION {
            // Unsupported, not damaged: a reader may scan without it.
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{NGRAM_FILE}: format version {version}, this reader reads {NGRAM_VERSION}"
                ),
            ));
        }
        let files = u32_at(12);
        let keys = u64_at(16) as usize;
        let dir = u64_at(24) as usize;
        if dir < HEADER || dir.checked_add(keys.saturating_mul(DIR_ENTRY)) != Some(map.len()) {
            return Err(bad("directory out of bounds"));
        }
        Ok(NgramIndex {
            map,
            files,
            keys,
            dir,
        })
    }

    /// Number of files the ids range over.
    pub fn files(&self) -> u32 {
        self.files
    }

    fn entry(&self, i: usize) -> (u32, u32, u64) {
        let o = self.dir + i * DIR_ENTRY;
        let m = &self.map;
        (
            u32::from_le_bytes(m[o..o + 4].try_into().unwrap()),
            u32::from_le_bytes(m[o + 4..o + 8].try_into().unwrap()),
            u64::from_le_bytes(m[o + 8..o + 16].try_into().unwrap()),
        )
    }

    fn find(&self, key: u32) -> Option<usize> {
        let (mut lo, mut hi) = (0usize, self.keys);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let k = self.entry(mid).0;
            match k.cmp(&key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// Number of files holding `key` (0 when absent).
    pub fn count(&self, key: u32) -> u32 {
        self.find(key).map(|i| self.entry(i).1).unwrap_or(0)
    }

    /// Call `f` with each file id holding `key`, ascending. A damaged
    /// posting list stops early and returns an error.
    pub fn for_each(&self, key: u32, mut f: impl FnMut(u32)) -> io::Result<()> {
        let Some(i) = self.find(key) else {
            return Ok(());
        };
        let (_, count, offset) = self.entry(i);
        let end = if i + 1 < self.keys {
            self.entry(i + 1).2 as usize
        } else {
            self.dir
        };
        let (start, end) = (offset as usize, end);
        if start > end || end > self.dir {
            return Err(bad("postings out of bounds"));
        }
        let data = &self.map[start..end];
        let mut pos = 0;
        let mut id: u32 = 0;
        for n in 0..count {
            let v = get_varint(data, &mut pos).ok_or_else(|| bad("truncated postings"))?;
            id = if n == 0 {
                v
            } else {
                id.checked_add(v).ok_or_else(|| bad("postings overflow"))?
            };
            if id >= self.files {
                return Err(bad("file id out of range"));
            }
            f(id);
        }
        Ok(())
    }

    /// The files holding `key`, as a bitmap of `files()` bits.
    pub fn bitmap(&self, key: u32) -> io::Result<Vec<u64>> {
        let mut bits = vec![0u64; (self.files as usize).div_ceil(64)];
        self.for_each(key, |id| bits[(id >> 6) as usize] |= 1u64 << (id & 63))?;
        Ok(bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(texts: &[&str], step: usize) -> (tempfile::TempDir, NgramIndex, Vec<u8>) {
        let grams: Vec<Vec<u32>> = texts.iter().map(|t| file_grams(t.as_bytes())).collect();
        let runs: Vec<Run> = grams
            .chunks(step)
            .enumerate()
            .map(|(i, c)| Run::new((i * step) as u32, c))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(NGRAM_FILE);
        write(&p, texts.len() as u32, &runs).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        let idx = NgramIndex::open(&p).unwrap();
        (dir, idx, bytes)
    }

    #[test]
    fn postings_are_the_files_holding_each_gram() {
        let texts = [
            "fn Main() {}",
            "main loop",
            "",
            "ab",
            "αβγ main",
            "MAIN",
            "nothing here",
        ];
        let (_d, idx, _) = build(&texts, 2);
        assert_eq!(idx.files(), texts.len() as u32);
        let mut ids = Vec::new();
        idx.for_each(trigram(b'm', b'a', b'i'), |i| ids.push(i))
            .unwrap();
        assert_eq!(ids, vec![0, 1, 4, 5]);
        assert_eq!(idx.count(trigram(b'm', b'a', b'i')), 4);
        assert_eq!(
            idx.count(trigram(b'M', b'A', b'I')),
            0,
            "upper case is folded"
        );
        // 'α' is 0xCE 0xB1: both bytes are unigrams, and the pair a bigram, of file 4 only.
        let mut ids = Vec::new();
        idx.for_each(unigram(0xCE), |i| ids.push(i)).unwrap();
        assert_eq!(ids, vec![4]);
        assert_eq!(idx.count(bigram(0xCE, 0xB1)), 1);
        assert_eq!(idx.count(bigram(0xCE, 0xB2)), 1, "β");
        assert_eq!(idx.count(bigram(0xCE, 0xB4)), 0, "no δ");
        assert_eq!(idx.count(trigram(b'z', b'z', b'z')), 0);
        // Every key of every file is found, and no other file claims it.
        for (i, t) in texts.iter().enumerate() {
            for k in file_grams(t.as_bytes()) {
                let bits = idx.bitmap(k).unwrap();
                assert!(bits[i >> 6] & (1 << (i & 63)) != 0);
            }
        }
    }

    #[test]
    fn bytes_do_not_depend_on_the_run_size() {
        let texts: Vec<String> = (0..300)
            .map(|i| format!("file {i} holds word{} and Ωmega{}", i % 7, i % 13))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (_a, _, one) = build(&refs, 1);
        let (_b, _, many) = build(&refs, 64);
        let (_c, _, all) = build(&refs, 1000);
        assert_eq!(one, many);
        assert_eq!(one, all);
    }

    #[test]
    fn damaged_files_are_refused() {
        let (d, _, bytes) = build(&["hello world"], 4);
        let p = d.path().join("bad.bin");
        std::fs::write(&p, &bytes[..bytes.len() - 3]).unwrap();
        assert!(NgramIndex::open(&p).is_err());
        let mut wrong = bytes.clone();
        wrong[0] = b'X';
        std::fs::write(&p, &wrong).unwrap();
        assert!(NgramIndex::open(&p).is_err());
    }
}
