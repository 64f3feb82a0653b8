//! Definition heads (qualified name, signature, first doc paragraph) for
//! the `head` ranking stage: each snapshot's `heads.bin`, read in place,
//! or for a snapshot without one (before feature 10) built here from its
//! symbols table.

use arrow_array::Array;
use code_index_schemas::heads::{self, HeadMap, Spans, HEADS_FILE};
use code_index_schemas::keyword::{KeywordIndex, Run};
use code_index_schemas::table::TableReader;

use super::chunks::file_index_map;
use super::*;

/// BM25 over every loaded snapshot's heads (statistics of all together),
/// and which heads each chunk holds.
pub struct Heads {
    pub bm25: Bm25,
    /// Per snapshot: its first chunk in the engine, its first head, its map.
    maps: Vec<(usize, u32, HeadMap)>,
}

impl Heads {
    /// The heads of every snapshot: its `heads.bin` when the manifest lists
    /// it and it covers exactly the snapshot's table chunks, else built
    /// from its symbols table. `ranges[s]` is snapshot `s`'s chunks in
    /// `chunks` (its table chunks first, then its pattern chunks).
    pub fn load(
        snaps: &[Snapshot],
        chunks: &[ChunkMeta],
        ranges: &[(usize, usize)],
        file_chunks: &HashMap<(u32, u32), (usize, usize)>,
    ) -> Heads {
        let mut parts = Vec::new();
        let mut maps = Vec::new();
        let mut next = 0u32;
        for (si, (s, &(a, b))) in snaps.iter().zip(ranges).enumerate() {
            let table = chunks[a..b].iter().filter(|c| c.kind != "pattern").count();
            let (index, map) = match open(s, table) {
                Ok(v) => v,
                Err(why) => {
                    tracing::info!("{}: definition heads built in memory ({why})", s.repo());
                    match build(si, s, chunks, a, table, file_chunks) {
                        Ok(v) => v,
                        Err(e) => {
                            tracing::warn!("definition heads of {}: {e}", s.repo());
                            continue;
                        }
                    }
                }
            };
            let docs = index.docs();
            parts.push((next, index));
            maps.push((a, next, map));
            next += docs;
        }
        Heads {
            bm25: Bm25::new(parts),
            maps,
        }
    }

    /// The heads chunk `ci` holds (numbers of `bm25`'s documents).
    pub fn of(&self, ci: usize) -> Vec<u32> {
        // The last snapshot whose first chunk is at or before `ci`.
        let i = self.maps.partition_point(|m| m.0 <= ci);
        let Some((base, first, map)) = i.checked_sub(1).map(|i| &self.maps[i]) else {
            return Vec::new();
        };
        let local = ci - base;
        if local >= map.chunks() as usize {
            return Vec::new();
        }
        let mut v = map.heads(local as u32);
        for h in &mut v {
            *h += first;
        }
        v
    }

    /// Drop the mapped files' resident pages (an idle server).
    pub fn release_pages(&self) {
        self.bm25.release_pages();
        for m in &self.maps {
            m.2.release_pages();
        }
    }
}

/// A snapshot's `heads.bin`, when listed, readable and covering `chunks`.
fn open(s: &Snapshot, chunks: usize) -> Result<(KeywordIndex, HeadMap), String> {
    if !keyword::from_snapshots() {
        return Err("CODE_INDEX_KEYWORDS=memory".into());
    }
    if !s.manifest.files.iter().any(|f| f.name == HEADS_FILE) {
        return Err(format!(
            "no {HEADS_FILE} (feature version {})",
            s.manifest.feature_version
        ));
    }
    let (index, map) = heads::open(&s.dir.join(HEADS_FILE)).map_err(|e| e.to_string())?;
    if map.chunks() as usize != chunks {
        return Err(format!(
            "{HEADS_FILE} covers {} chunks, the snapshot has {chunks}",
            map.chunks()
        ));
    }
    Ok((index, map))
}

/// The heads of `snap` from its symbols table, as `heads.bin` holds them
/// (`code_index_schemas::heads`); its table chunks are `chunks[base..base + table]`.
fn build(
    si: usize,
    snap: &Snapshot,
    chunks: &[ChunkMeta],
    base: usize,
    table: usize,
    file_chunks: &HashMap<(u32, u32), (usize, usize)>,
) -> Result<(KeywordIndex, HeadMap), String> {
    let reader = TableReader::open_in(
        &snap.dir,
        &code_index_schemas::symbols_table(),
        &[
            "path",
            "qualified_name",
            "kind",
            "signature",
            "doc",
            "start_line",
            "is_test",
        ],
    )
    .map_err(|e| e.to_string())?;
    let index = file_index_map(snap);
    let mut docs: Vec<Vec<(u64, u32)>> = Vec::new();
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); table];
    // The current file's chunk range and its chunks by start line.
    let mut spans: ((usize, usize), Spans) = ((0, 0), Spans::default());
    for batch in reader {
        let b = batch.map_err(|e| e.to_string())?;
        let (path, qn, kind, sig, doc) = (
            b.str("path"),
            b.str("qualified_name"),
            b.str("kind"),
            b.str("signature"),
            b.str("doc"),
        );
        let (sl, test) = (b.i32("start_line"), b.bool("is_test"));
        for i in 0..b.num_rows() {
            if !heads::has_head(kind.value(i), test.value(i)) {
                continue;
            }
            let Some(&fi) = index.get(path.value(i)) else {
                continue;
            };
            let Some(&(a, z)) = file_chunks.get(&(si as u32, fi)) else {
                continue;
            };
            if spans.0 != (a, z) {
                spans = (
                    (a, z),
                    Spans::new((a..z).map(|ci| (chunks[ci].start_line, chunks[ci].end_line, ci))),
                );
            }
            let id = docs.len() as u32;
            let mut used = false;
            for ci in spans.1.holding(sl.value(i) as u32) {
                if let Some(l) = lists.get_mut(ci - base) {
                    l.push(id);
                    used = true;
                }
            }
            if used {
                let (sig, doc) = (
                    (!sig.is_null(i)).then(|| sig.value(i)),
                    (!doc.is_null(i)).then(|| doc.value(i)),
                );
                docs.push(heads::head_terms(qn.value(i), sig, doc));
            }
        }
    }
    let index = KeywordIndex::from_vec(keyword::in_memory(&[Run::new(0, &docs)]))
        .expect("an index just written is well formed");
    Ok((index, HeadMap::from_lists(&lists)))
}
