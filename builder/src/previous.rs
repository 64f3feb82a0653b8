//! Reads a previous snapshot back into per-file analyses, so `--previous`
//! can skip parsing files whose content hash did not change. Only used when
//! the previous snapshot was built by the same tool version, schema and
//! config; otherwise the build is a full one (and says so).

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

use arrow_array::{
    Array, BooleanArray, Float32Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use code_index_schemas::{Manifest, FEATURE_VERSION, SCHEMA_VERSION};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::analyze::{Analysis, FileRecord};
use crate::chunk::Chunk;
use crate::error::{codes, Error, Result};
use crate::language::Lang;
use crate::parse::{Parsed, RawEdge, Reference, Symbol};

/// Previous analyses by path, with the content hash they were made from.
pub struct Previous {
    pub files: HashMap<String, Analysis>,
    pub snapshot_id: String,
}

/// Why a previous snapshot cannot be reused, if it cannot.
pub fn incompatibility(m: &Manifest, config_hash: &str) -> Option<String> {
    if m.schema_version != SCHEMA_VERSION || m.feature_version != FEATURE_VERSION {
        return Some(format!(
            "schema/feature version {}/{} differs from {SCHEMA_VERSION}/{FEATURE_VERSION}",
            m.schema_version, m.feature_version
        ));
    }
    if m.tool_version != crate::TOOL_VERSION {
        return Some(format!(
            "built by code-indexer {} (this is {})",
            m.tool_version,
            crate::TOOL_VERSION
        ));
    }
    if m.config_hash != config_hash {
        return Some("the configuration changed".to_string());
    }
    None
}

pub fn read_table(dir: &Path, file: &str) -> Result<Vec<RecordBatch>> {
    let p = dir.join(file);
    let f = File::open(&p).map_err(|e| {
        Error::io(
            codes::PREVIOUS_INVALID,
            "cannot open",
            &p,
            e,
            "pass a complete snapshot to --previous, or drop the flag",
        )
    })?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(f)
        .and_then(|b| b.with_batch_size(65536).build())
        .map_err(|e| {
            Error::new(
                codes::PREVIOUS_INVALID,
                format!("cannot read {}: {e}", p.display()),
                "pass a complete snapshot to --previous, or drop the flag",
            )
        })?;
    reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| {
            Error::new(
                codes::PREVIOUS_INVALID,
                format!("cannot read {}: {e}", p.display()),
                "rebuild without --previous",
            )
        })
}

struct Cols<'a>(&'a RecordBatch);

impl<'a> Cols<'a> {
    fn get<T: 'static>(&self, name: &str) -> &'a T {
        self.0
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<T>())
            .unwrap_or_else(|| panic!("previous snapshot lacks column {name}"))
    }
    fn s(&self, name: &str, i: usize) -> String {
        self.get::<StringArray>(name).value(i).to_string()
    }
    fn os(&self, name: &str, i: usize) -> Option<String> {
        let a = self.get::<StringArray>(name);
        if a.is_null(i) {
            None
        } else {
            Some(a.value(i).to_string())
        }
    }
    fn i32(&self, name: &str, i: usize) -> i32 {
        self.get::<Int32Array>(name).value(i)
    }
    fn i64(&self, name: &str, i: usize) -> i64 {
        self.get::<Int64Array>(name).value(i)
    }
    fn oi64(&self, name: &str, i: usize) -> Option<i64> {
        let a = self.get::<Int64Array>(name);
        if a.is_null(i) {
            None
        } else {
            Some(a.value(i))
        }
    }
    fn b(&self, name: &str, i: usize) -> bool {
        self.get::<BooleanArray>(name).value(i)
    }
}

/// Load the previous snapshot's rows for the files in `wanted` (path → content sha256).
pub fn load(dir: &Path, wanted: &HashMap<String, String>) -> Result<Previous> {
    let m = crate::snapshot::read_manifest(dir)?;
    let mut files: HashMap<String, Analysis> = HashMap::new();
    for batch in read_table(dir, "files.parquet")? {
        let c = Cols(&batch);
        for i in 0..batch.num_rows() {
            let path = c.s("path", i);
            let sha = c.s("content_sha256", i);
            if wanted.get(&path) != Some(&sha) {
                continue;
            }
            let rec = FileRecord {
                lang: Lang::from_id(&c.s("language", i)),
                size: c.i64("size_bytes", i) as u64,
                line_count: c.i32("line_count", i) as u32,
                sha256: sha,
                is_test: c.b("is_test", i),
                is_generated: c.b("is_generated", i),
                is_lossy: c.b("is_lossy", i),
                secret_count: c.i32("secret_count", i) as u32,
                content: c.s("content", i),
                path: path.clone(),
            };
            files.insert(
                path,
                Analysis {
                    file: rec,
                    parsed: Parsed::default(),
                    chunks: Vec::new(),
                },
            );
        }
    }
    for batch in read_table(dir, "symbols.parquet")? {
        let c = Cols(&batch);
        for i in 0..batch.num_rows() {
            let Some(a) = files.get_mut(&c.s("path", i)) else {
                continue;
            };
            a.parsed.symbols.push(Symbol {
                id: c.i64("symbol_id", i),
                name: c.s("name", i),
                qualified_name: c.s("qualified_name", i),
                kind: crate::parse::static_kind(&c.s("kind", i)),
                container: c.os("container", i),
                parent_id: c.oi64("parent_id", i),
                signature: c.s("signature", i),
                doc: c.os("doc", i),
                start_line: c.i32("start_line", i) as u32,
                end_line: c.i32("end_line", i) as u32,
                start_byte: c.i64("start_byte", i) as u64,
                end_byte: c.i64("end_byte", i) as u64,
                name_line: c.i32("name_line", i) as u32,
            });
        }
    }
    for batch in read_table(dir, "references.parquet")? {
        let c = Cols(&batch);
        for i in 0..batch.num_rows() {
            let Some(a) = files.get_mut(&c.s("path", i)) else {
                continue;
            };
            a.parsed.references.push(Reference {
                name: c.s("name", i),
                line: c.i32("line", i) as u32,
                column: c.i32("column", i) as u32,
                start_byte: c.i64("start_byte", i) as u64,
                ref_kind: crate::parse::static_kind(&c.s("ref_kind", i)),
                enclosing: c.os("enclosing_symbol", i).map(std::sync::Arc::from),
            });
        }
    }
    for batch in read_table(dir, "edges.parquet")? {
        let c = Cols(&batch);
        for i in 0..batch.num_rows() {
            let Some(a) = files.get_mut(&c.s("src_path", i)) else {
                continue;
            };
            if c.s("kind", i) == "mentions" {
                continue; // derived from the docs and the whole tree: recomputed every build
            }
            a.parsed.edges.push(RawEdge {
                kind: crate::parse::static_kind(&c.s("kind", i)),
                src_symbol: c.os("src_symbol", i).map(std::sync::Arc::from),
                dst_name: c.s("dst_name", i),
                line: c.i32("line", i) as u32,
            });
        }
    }
    for batch in read_table(dir, "chunks.parquet")? {
        let c = Cols(&batch);
        let _w = c.get::<Float32Array>("retrieval_weight");
        for i in 0..batch.num_rows() {
            let Some(a) = files.get_mut(&c.s("path", i)) else {
                continue;
            };
            let (sb, eb) = (
                c.i64("start_byte", i) as usize,
                c.i64("end_byte", i) as usize,
            );
            let text = c
                .os("text", i)
                .unwrap_or_else(|| a.file.content.get(sb..eb).unwrap_or_default().to_string());
            a.chunks.push(Chunk {
                id: c.i64("chunk_id", i),
                chunk_type: c.s("chunk_type", i),
                kind: c.s("kind", i),
                symbol: c.os("symbol", i),
                heading_path: c.os("heading_path", i),
                start_line: c.i32("start_line", i) as u32,
                end_line: c.i32("end_line", i) as u32,
                start_byte: c.i64("start_byte", i) as u64,
                end_byte: c.i64("end_byte", i) as u64,
                token_count: c.i32("token_count", i) as u32,
                context_header: c.s("context_header", i),
                text,
            });
        }
    }
    Ok(Previous {
        files,
        snapshot_id: m.snapshot_id,
    })
}
