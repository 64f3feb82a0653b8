//! Random access to `files.content` without loading it: the builder writes
//! every file's text as a Parquet data page of its own (feature 5), so the
//! offset index gives each file's bytes in `files.parquet`; reading a file
//! reads and decompresses that one page (`pread`, LZ4), nothing else. The
//! page header is read here with a small Thrift compact-protocol decoder;
//! the text is the page's one PLAIN byte-array value.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use parquet::basic::{Compression, Encoding, Type as PhysicalType};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};

/// How the pages are compressed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Codec {
    None,
    Zstd,
    Lz4Raw,
}

/// Where each file's content page is, by row.
#[derive(Debug)]
pub struct ContentPages {
    file: File,
    codec: Codec,
    /// Per row: (offset of the page header, page size including the header).
    pages: Vec<(u64, u32)>,
}

fn bad(why: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.into())
}

impl ContentPages {
    /// The content pages of `files.parquet`, when each row's content is a
    /// page of its own (PLAIN, required, zstd or uncompressed) and the offset
    /// index lists them; `Ok(None)` otherwise (older snapshots: the caller
    /// loads the content instead).
    pub fn open(path: &Path) -> io::Result<Option<ContentPages>> {
        let file = File::open(path)?;
        let meta = ParquetMetaDataReader::new()
            .with_offset_index_policy(PageIndexPolicy::Optional)
            .parse_and_finish(&file)
            .map_err(|e| bad(format!("{}: {e}", path.display())))?;
        Ok(Self::from_meta(file, &meta))
    }

    fn from_meta(file: File, meta: &ParquetMetaData) -> Option<ContentPages> {
        let schema = meta.file_metadata().schema_descr();
        let col = (0..schema.num_columns()).find(|&i| schema.column(i).name() == "content")?;
        let descr = schema.column(col);
        if descr.max_def_level() != 0
            || descr.max_rep_level() != 0
            || descr.physical_type() != PhysicalType::BYTE_ARRAY
        {
            return None;
        }
        let offsets = meta.offset_index()?;
        let mut codec = None;
        let mut pages = Vec::with_capacity(meta.file_metadata().num_rows() as usize);
        for (g, rg) in meta.row_groups().iter().enumerate() {
            let cc = rg.column(col);
            let c = match cc.compression() {
                Compression::ZSTD(_) => Codec::Zstd,
                Compression::LZ4_RAW => Codec::Lz4Raw,
                Compression::UNCOMPRESSED => Codec::None,
                _ => return None,
            };
            if *codec.get_or_insert(c) != c
                || cc.dictionary_page_offset().is_some()
                || cc
                    .encodings()
                    .any(|e| e != Encoding::PLAIN && e != Encoding::RLE)
            {
                return None;
            }
            let locs = offsets.get(g)?.get(col)?.page_locations();
            if locs.len() as i64 != rg.num_rows() {
                return None; // several rows per page: not written for random access
            }
            pages.extend(
                locs.iter()
                    .map(|l| (l.offset as u64, l.compressed_page_size as u32)),
            );
        }
        Some(ContentPages {
            file,
            codec: codec.unwrap_or(Codec::None),
            pages,
        })
    }

    /// Number of rows (files).
    pub fn rows(&self) -> usize {
        self.pages.len()
    }

    /// Read row `row`'s content: its page is read into `raw`, its value
    /// decompressed into `out` when needed; returns the text's bytes.
    pub fn read<'a>(
        &self,
        row: usize,
        raw: &'a mut Vec<u8>,
        out: &'a mut Vec<u8>,
    ) -> io::Result<&'a [u8]> {
        let &(offset, size) = self
            .pages
            .get(row)
            .ok_or_else(|| bad(format!("row {row} out of range")))?;
        raw.resize(size as usize, 0);
        self.file.read_exact_at(raw, offset)?;
        let (h, header_len) = PageHeader::parse(raw).ok_or_else(|| bad("bad page header"))?;
        let body = raw
            .get(header_len..header_len + h.compressed as usize)
            .ok_or_else(|| bad("page shorter than its header says"))?;
        if h.num_values != 1 || h.encoding != 0 {
            return Err(bad("not a single PLAIN value"));
        }
        // V2 pages keep their (here empty) levels uncompressed in front.
        let skip = h.levels_len as usize;
        let packed = body.get(skip..).ok_or_else(|| bad("levels"))?;
        let values: &[u8] = match self.codec {
            Codec::None => packed,
            _ if !h.compressed_values => packed,
            Codec::Zstd => {
                out.resize(h.uncompressed as usize - skip, 0);
                let n = zstd::bulk::decompress_to_buffer(packed, &mut out[..])?;
                &out[..n]
            }
            Codec::Lz4Raw => {
                out.resize(h.uncompressed as usize - skip, 0);
                let n = lz4_flex::block::decompress_into(packed, &mut out[..])
                    .map_err(|e| bad(format!("lz4: {e}")))?;
                &out[..n]
            }
        };
        let len = u32::from_le_bytes(
            values
                .get(..4)
                .ok_or_else(|| bad("empty page"))?
                .try_into()
                .unwrap(),
        ) as usize;
        values
            .get(4..4 + len)
            .ok_or_else(|| bad("value longer than its page"))
    }
}

/// The fields of a data page header this reader needs.
#[derive(Debug, Default)]
struct PageHeader {
    uncompressed: i32,
    compressed: i32,
    num_values: i32,
    encoding: i32,
    /// V2: bytes of definition and repetition levels before the values.
    levels_len: i32,
    compressed_values: bool,
}

/// A Thrift compact-protocol reader over a byte slice.
struct Thrift<'a> {
    b: &'a [u8],
    p: usize,
    depth: u32,
}

impl Thrift<'_> {
    fn byte(&mut self) -> Option<u8> {
        let v = *self.b.get(self.p)?;
        self.p += 1;
        Some(v)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }

    fn i32(&mut self) -> Option<i32> {
        let v = self.varint()?;
        Some(((v >> 1) as i64 ^ -((v & 1) as i64)) as i32)
    }

    fn skip(&mut self, t: u8) -> Option<()> {
        match t {
            1 | 2 => {}
            3 => {
                self.byte()?;
            }
            4..=6 => {
                self.varint()?;
            }
            7 => self.p += 8,
            8 => {
                let n = self.varint()? as usize;
                self.p = self.p.checked_add(n)?;
            }
            9 | 10 => {
                let h = self.byte()?;
                let n = if h >> 4 == 15 {
                    self.varint()? as usize
                } else {
                    (h >> 4) as usize
                };
                let et = h & 0x0f;
                for _ in 0..n {
                    if et == 1 || et == 2 {
                        self.byte()?;
                    } else {
                        self.skip(et)?;
                    }
                }
            }
            11 => {
                let n = self.varint()? as usize;
                if n > 0 {
                    let kv = self.byte()?;
                    for _ in 0..n {
                        self.skip(kv >> 4)?;
                        self.skip(kv & 0x0f)?;
                    }
                }
            }
            12 => self.fields(|_, _, _| Some(false))?,
            _ => return None,
        }
        (self.p <= self.b.len()).then_some(())
    }

    /// Walk a struct's fields: `on(self, id, type)` reads a field and
    /// returns true, or returns false to have it skipped.
    fn fields(&mut self, mut on: impl FnMut(&mut Self, i16, u8) -> Option<bool>) -> Option<()> {
        self.depth += 1;
        if self.depth > 16 {
            return None;
        }
        let mut last: i16 = 0;
        loop {
            let h = self.byte()?;
            if h == 0 {
                self.depth -= 1;
                return Some(());
            }
            let t = h & 0x0f;
            let id = match h >> 4 {
                0 => self.i32()? as i16,
                d => last.checked_add(d as i16)?,
            };
            last = id;
            if !on(self, id, t)? {
                self.skip(t)?;
            }
        }
    }
}

impl PageHeader {
    /// The header at the start of `b`, and its length.
    fn parse(b: &[u8]) -> Option<(PageHeader, usize)> {
        let mut r = Thrift { b, p: 0, depth: 0 };
        let mut h = PageHeader {
            compressed_values: true,
            ..Default::default()
        };
        let mut kind = -1;
        r.fields(|r, id, t| {
            Some(match (id, t) {
                (1, 5) => {
                    kind = r.i32()?;
                    true
                }
                (2, 5) => {
                    h.uncompressed = r.i32()?;
                    true
                }
                (3, 5) => {
                    h.compressed = r.i32()?;
                    true
                }
                (5, 12) => {
                    r.fields(|r, id, t| {
                        Some(match (id, t) {
                            (1, 5) => {
                                h.num_values = r.i32()?;
                                true
                            }
                            (2, 5) => {
                                h.encoding = r.i32()?;
                                true
                            }
                            _ => false,
                        })
                    })?;
                    true
                }
                (8, 12) => {
                    r.fields(|r, id, t| {
                        Some(match (id, t) {
                            (1, 5) => {
                                h.num_values = r.i32()?;
                                true
                            }
                            (4, 5) => {
                                h.encoding = r.i32()?;
                                true
                            }
                            (5, 5) | (6, 5) => {
                                h.levels_len += r.i32()?;
                                true
                            }
                            (7, 1) => {
                                h.compressed_values = true;
                                true
                            }
                            (7, 2) => {
                                h.compressed_values = false;
                                true
                            }
                            _ => false,
                        })
                    })?;
                    true
                }
                _ => false,
            })
        })?;
        let ok = (kind == 0 || kind == 3)
            && h.compressed >= 0
            && h.uncompressed >= h.levels_len
            && h.levels_len >= 0;
        ok.then_some((h, r.p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_reads_back_as_arrow_reads_it() {
        // The fixture snapshot, written by the real builder.
        let st = crate::tools::fixture::state();
        let p = st.snaps[0].dir.join("files.parquet");
        let pages = ContentPages::open(&p).unwrap().expect("one page per file");
        let reader = code_index_schemas::table::TableReader::open_in(
            &st.snaps[0].dir,
            &code_index_schemas::files_table(),
            &["content"],
        )
        .unwrap();
        let mut row = 0;
        let (mut raw, mut out) = (Vec::new(), Vec::new());
        for batch in reader {
            let batch = batch.unwrap();
            let content = batch.str("content");
            for i in 0..batch.num_rows() {
                let got = pages.read(row, &mut raw, &mut out).unwrap();
                assert_eq!(got, content.value(i).as_bytes(), "row {row}");
                row += 1;
            }
        }
        assert_eq!(row, pages.rows());
        assert!(pages.read(row, &mut raw, &mut out).is_err());
    }

    #[test]
    fn damaged_headers_are_errors_not_panics() {
        for len in 0..64 {
            for seed in 0..32u32 {
                let b: Vec<u8> = (0..len)
                    .map(|i| (seed.wrapping_mul(2654435761).wrapping_add(i * 97) >> 7) as u8)
                    .collect();
                let _ = PageHeader::parse(&b);
            }
        }
    }
}
