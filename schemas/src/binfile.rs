//! What the snapshot's binary indexes (`ngrams.bin`, `keywords.bin`) share:
//! LEB128 varints and mapping a verified snapshot file read-only.

use std::io;
use std::path::Path;

/// Append `v` as an unsigned LEB128 varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Read a varint at `*at` (advanced past it); `None` when truncated or wider than 64 bits.
pub(crate) fn get_varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let x = *b.get(*at)?;
        *at += 1;
        v |= ((x & 0x7f) as u64) << shift;
        if x < 0x80 {
            return Some(v);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// Map a snapshot file for random reads of its postings.
pub(crate) fn map(path: &Path) -> io::Result<memmap2::Mmap> {
    let file = std::fs::File::open(path)?;
    // SAFETY: snapshots are immutable once written; the file was checked
    // against the manifest's sha256 before it is opened.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    let _ = map.advise(memmap2::Advice::Random);
    Ok(map)
}

/// Drop the mapping's resident pages from the process (an idle server's
/// RSS): the file is read-only and immutable, so a later read faults them
/// back in from the page cache (or the disk) unchanged.
pub(crate) fn release(map: &memmap2::Mmap) {
    // SAFETY: MADV_DONTNEED on a read-only shared file mapping discards no
    // data: the pages are the file's and are re-read on the next access.
    let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
}
