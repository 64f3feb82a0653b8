//! Chunk metadata read from each snapshot's chunks and patterns tables.

use arrow_array::{Array, StringArray};
use code_index_schemas::table::TableReader;
use code_index_schemas::{chunks_table, patterns_table};

use super::*;

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

/// Path → index into the snapshot's `files`.
pub(crate) fn file_index_map(snap: &Snapshot) -> HashMap<&str, u32> {
    snap.files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_str(), i as u32))
        .collect()
}

pub(crate) fn load_chunks(si: usize, snap: &Snapshot) -> Result<Vec<ChunkMeta>, String> {
    let reader = TableReader::open_in(
        &snap.dir,
        &chunks_table(),
        &[
            "chunk_id",
            "path",
            "chunk_type",
            "kind",
            "symbol",
            "module_path",
            "heading_path",
            "start_line",
            "end_line",
            "start_byte",
            "end_byte",
            "is_test",
            "retrieval_weight",
            "text",
        ],
    )
    .map_err(|e| e.to_string())?;
    let index = file_index_map(snap);
    let mut out = Vec::new();
    for batch in reader {
        let b = batch.map_err(|e| e.to_string())?;
        let (id, path, ctype, kind) = (
            b.i64("chunk_id"),
            b.str("path"),
            b.str("chunk_type"),
            b.str("kind"),
        );
        let (symbol, module, heading) =
            (b.str("symbol"), b.str("module_path"), b.str("heading_path"));
        let (sl, el, sb, eb) = (
            b.i32("start_line"),
            b.i32("end_line"),
            b.i64("start_byte"),
            b.i64("end_byte"),
        );
        let (test, weight, text) = (b.bool("is_test"), b.f32("retrieval_weight"), b.str("text"));
        let opt = |a: &StringArray, i: usize| (!a.is_null(i)).then(|| Box::from(a.value(i)));
        let mut last_module: Option<Arc<str>> = None;
        for i in 0..b.num_rows() {
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
                symbol: opt(symbol, i),
                module,
                heading: opt(heading, i),
                start_line: sl.value(i) as u32,
                end_line: el.value(i) as u32,
                start_byte: sb.value(i).clamp(0, u32::MAX as i64) as u32,
                end_byte: eb.value(i).clamp(0, u32::MAX as i64) as u32,
                is_test: test.value(i),
                weight: weight.value(i),
                text: opt(text, i),
            });
        }
    }
    Ok(out)
}

/// Pattern chunks (one per pattern, on its canonical file) and membership.
#[allow(clippy::type_complexity)]
pub(crate) fn load_patterns(
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
    let reader = TableReader::open(
        &p,
        &patterns_table(),
        &["pattern_id", "name", "module_path", "path", "text"],
    )
    .map_err(|e| e.to_string())?;
    let index = file_index_map(snap);
    for batch in reader {
        let b = batch.map_err(|e| e.to_string())?;
        let (id, name, module, path, text) = (
            b.i64("pattern_id"),
            b.str("name"),
            b.str("module_path"),
            b.str("path"),
            b.str("text"),
        );
        for i in 0..b.num_rows() {
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
