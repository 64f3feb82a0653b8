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

/// Kinds of definition a description names (fields, constants, variables
/// and properties are described with their container).
const HEAD_KINDS: &[&str] = &[
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

/// The definition heads of `snap` (`file_chunks` maps its files to their
/// chunks in `chunks`): per definition outside test files whose kind is in
/// [`HEAD_KINDS`], the terms of its qualified name, signature and the first
/// paragraph of its doc (what a description of it paraphrases, without the
/// body's other words), as a document of `heads`; each chunk that the
/// definition starts in lists it in `chunk_heads`.
pub(crate) fn load_heads(
    si: usize,
    snap: &Snapshot,
    chunks: &[ChunkMeta],
    file_chunks: &HashMap<(u32, u32), (usize, usize)>,
    heads: &mut Vec<Vec<(u64, u32)>>,
    chunk_heads: &mut [Vec<u32>],
) -> Result<(), String> {
    use code_index_schemas::keyword;
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
    let mut text = String::new();
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
            if test.value(i) || !HEAD_KINDS.contains(&kind.value(i)) {
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
            let line = sl.value(i) as u32;
            let id = heads.len() as u32;
            let mut used = false;
            for ci in spans.1.holding(line) {
                chunk_heads[ci].push(id);
                used = true;
            }
            if !used {
                continue;
            }
            text.clear();
            text.push_str(qn.value(i));
            if !sig.is_null(i) {
                text.push('\n');
                text.push_str(sig.value(i));
            }
            if !doc.is_null(i) {
                let d = doc.value(i).trim();
                text.push('\n');
                text.push_str(d.split("\n\n").next().unwrap_or(d));
            }
            let mut doc_terms = keyword::doc_terms(&text, None, None, &[]);
            doc_terms.shrink_to_fit();
            heads.push(doc_terms);
        }
    }
    Ok(())
}

/// A file's chunks by start line, with the largest end line so far, to
/// find the chunks holding a line without reading them all.
#[derive(Default)]
struct Spans {
    /// (start line, end line, chunk index), by start line.
    by_start: Vec<(u32, u32, usize)>,
    /// The largest end line among `by_start[..=i]`.
    max_end: Vec<u32>,
}

impl Spans {
    /// From (start line, end line, chunk index) triples in any order.
    fn new(spans: impl Iterator<Item = (u32, u32, usize)>) -> Spans {
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

    /// The chunks whose lines hold `line`, in descending start order.
    fn holding(&self, line: u32) -> impl Iterator<Item = usize> + '_ {
        let p = self.by_start.partition_point(|s| s.0 <= line);
        (0..p)
            .rev()
            .take_while(move |&j| self.max_end[j] >= line)
            .filter(move |&j| self.by_start[j].1 >= line)
            .map(move |j| self.by_start[j].2)
    }
}

#[cfg(test)]
mod tests {
    use super::Spans;

    #[test]
    fn spans_holding_a_line() {
        // A class summary over its methods, a gap, a later definition.
        let s = Spans::new([(12, 20, 1), (1, 100, 0), (1, 10, 2), (150, 160, 3)].into_iter());
        let held = |line: u32| {
            let mut v: Vec<usize> = s.holding(line).collect();
            v.sort_unstable();
            v
        };
        assert_eq!(held(15), vec![0, 1]);
        assert_eq!(held(1), vec![0, 2]);
        assert_eq!(held(11), vec![0]);
        assert_eq!(held(120), Vec::<usize>::new());
        assert_eq!(held(160), vec![3]);
        assert_eq!(held(161), Vec::<usize>::new());
    }
}
