//! What changed between two snapshots, or between a snapshot and its
//! overlay: files, symbols and edges added, removed and changed. Read from
//! the tables alone (`code-indexer diff` and the server's `changes` tool).
//!
//! Files compare by `content_sha256`. Only files whose content differs (or
//! that exist on one side) are opened further: a symbol is keyed by (path,
//! qualified name, kind, its rank among equal keys) and changed when its
//! source text differs; an edge is keyed by (kind, path, source symbol,
//! target name) as a multiset, and reported with its line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use arrow_array::Array;
use serde::Serialize;

use crate::table::{TableError, TableReader};
use crate::{edges_table, files_table, symbols_table};

#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileChange {
    pub path: String,
    pub language: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct SymbolChange {
    pub path: String,
    pub qualified_name: String,
    pub name: String,
    pub kind: String,
    /// Line of the name (on the new side, for removed ones the old).
    pub line: u32,
    pub signature: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct EdgeChange {
    pub kind: String,
    pub src_path: String,
    pub src_symbol: Option<String>,
    pub dst_name: String,
    pub line: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Changes<T> {
    pub added: Vec<T>,
    pub removed: Vec<T>,
    pub changed: Vec<T>,
}

impl<T> Default for Changes<T> {
    fn default() -> Self {
        Changes {
            added: Vec::new(),
            removed: Vec::new(),
            changed: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub files: Changes<FileChange>,
    pub symbols: Changes<SymbolChange>,
    /// Edges have no identity beyond their fields: added and removed only.
    pub edges: Changes<EdgeChange>,
}

/// (path, qualified name, kind, rank among equal keys).
type SymbolKey = (String, String, String, u32);
/// (kind, source path, source symbol, target name).
type EdgeKey = (String, String, Option<String>, String);

/// One side: the files (path → (language, sha)) and, for the files asked,
/// their symbols with source text and their edges.
struct Side {
    files: BTreeMap<String, (String, String)>,
    symbols: BTreeMap<SymbolKey, (SymbolChange, Vec<u8>)>,
    edges: BTreeMap<EdgeKey, Vec<u32>>,
}

fn files(
    dir: &Path,
    scope: Option<&BTreeSet<String>>,
) -> Result<BTreeMap<String, (String, String)>, TableError> {
    let mut out = BTreeMap::new();
    let reader =
        TableReader::open_in(dir, &files_table(), &["path", "language", "content_sha256"])?;
    for b in reader {
        let b = b?;
        let (p, l, h) = (b.str("path"), b.str("language"), b.str("content_sha256"));
        for i in 0..b.num_rows() {
            let path = p.value(i);
            if scope.is_none_or(|s| s.contains(path)) {
                out.insert(
                    path.to_string(),
                    (l.value(i).to_string(), h.value(i).to_string()),
                );
            }
        }
    }
    Ok(out)
}

/// Symbols (with their source text) and edges of the files in `wanted`.
fn details(dir: &Path, side: &mut Side, wanted: &BTreeSet<String>) -> Result<(), TableError> {
    if wanted.is_empty() {
        return Ok(());
    }
    let mut content: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for b in TableReader::open_in(dir, &files_table(), &["path", "content"])?.batch_size(256) {
        let b = b?;
        let (p, c) = (b.str("path"), b.str("content"));
        for i in 0..b.num_rows() {
            if wanted.contains(p.value(i)) {
                content.insert(p.value(i).to_string(), c.value(i).as_bytes().to_vec());
            }
        }
    }
    let cols = [
        "path",
        "qualified_name",
        "name",
        "kind",
        "name_line",
        "signature",
        "start_byte",
        "end_byte",
    ];
    let mut seen: BTreeMap<(String, String, String), u32> = BTreeMap::new();
    for b in TableReader::open_in(dir, &symbols_table(), &cols)? {
        let b = b?;
        let (p, q, n, k) = (
            b.str("path"),
            b.str("qualified_name"),
            b.str("name"),
            b.str("kind"),
        );
        let (line, sig) = (b.i32("name_line"), b.str("signature"));
        let (sb, eb) = (b.i64("start_byte"), b.i64("end_byte"));
        for i in 0..b.num_rows() {
            let path = p.value(i);
            let Some(text) = content.get(path) else {
                continue;
            };
            let key = (
                path.to_string(),
                q.value(i).to_string(),
                k.value(i).to_string(),
            );
            let rank = seen.entry(key.clone()).or_default();
            let (s, e) = (sb.value(i).max(0) as usize, eb.value(i).max(0) as usize);
            let src = text
                .get(s.min(e)..e.min(text.len()))
                .unwrap_or_default()
                .to_vec();
            side.symbols.insert(
                (key.0, key.1, key.2, *rank),
                (
                    SymbolChange {
                        path: path.to_string(),
                        qualified_name: q.value(i).to_string(),
                        name: n.value(i).to_string(),
                        kind: k.value(i).to_string(),
                        line: line.value(i).max(0) as u32,
                        signature: sig.value(i).to_string(),
                    },
                    src,
                ),
            );
            *rank += 1;
        }
    }
    let cols = ["kind", "src_path", "src_symbol", "dst_name", "line"];
    for b in TableReader::open_in(dir, &edges_table(), &cols)? {
        let b = b?;
        let (k, p, s, d, l) = (
            b.str("kind"),
            b.str("src_path"),
            b.str("src_symbol"),
            b.str("dst_name"),
            b.i32("line"),
        );
        for i in 0..b.num_rows() {
            if !wanted.contains(p.value(i)) {
                continue;
            }
            let src = (!s.is_null(i)).then(|| s.value(i).to_string());
            side.edges
                .entry((
                    k.value(i).to_string(),
                    p.value(i).to_string(),
                    src,
                    d.value(i).to_string(),
                ))
                .or_default()
                .push(l.value(i).max(0) as u32);
        }
    }
    Ok(())
}

/// The changes from the snapshot in `old` to the one in `new`. With `scope`
/// (an overlay's `replaces`), only those paths are compared: the overlay
/// holds nothing else.
pub fn diff(old: &Path, new: &Path, scope: Option<&BTreeSet<String>>) -> Result<Diff, TableError> {
    let mut a = Side {
        files: files(old, scope)?,
        symbols: BTreeMap::new(),
        edges: BTreeMap::new(),
    };
    let mut b = Side {
        files: files(new, None)?,
        symbols: BTreeMap::new(),
        edges: BTreeMap::new(),
    };
    let mut d = Diff {
        files: Changes::default(),
        symbols: Changes::default(),
        edges: Changes::default(),
    };
    let mut touched = BTreeSet::new();
    for (p, (lang, sha)) in &b.files {
        match a.files.get(p) {
            None => d.files.added.push(FileChange {
                path: p.clone(),
                language: lang.clone(),
            }),
            Some((_, old_sha)) if old_sha != sha => d.files.changed.push(FileChange {
                path: p.clone(),
                language: lang.clone(),
            }),
            Some(_) => continue,
        }
        touched.insert(p.clone());
    }
    for (p, (lang, _)) in &a.files {
        if !b.files.contains_key(p) {
            d.files.removed.push(FileChange {
                path: p.clone(),
                language: lang.clone(),
            });
            touched.insert(p.clone());
        }
    }
    details(old, &mut a, &touched)?;
    details(new, &mut b, &touched)?;
    for (k, (s, src)) in &b.symbols {
        match a.symbols.get(k) {
            None => d.symbols.added.push(s.clone()),
            Some((_, old_src)) if old_src != src => d.symbols.changed.push(s.clone()),
            Some(_) => {}
        }
    }
    for (k, (s, _)) in &a.symbols {
        if !b.symbols.contains_key(k) {
            d.symbols.removed.push(s.clone());
        }
    }
    let edge = |k: &EdgeKey, line: u32| EdgeChange {
        kind: k.0.clone(),
        src_path: k.1.clone(),
        src_symbol: k.2.clone(),
        dst_name: k.3.clone(),
        line,
    };
    for (k, lines) in &b.edges {
        let before = a.edges.get(k).map_or(0, Vec::len);
        for &l in lines.iter().skip(before) {
            d.edges.added.push(edge(k, l));
        }
    }
    for (k, lines) in &a.edges {
        let after = b.edges.get(k).map_or(0, Vec::len);
        for &l in lines.iter().skip(after) {
            d.edges.removed.push(edge(k, l));
        }
    }
    Ok(d)
}
