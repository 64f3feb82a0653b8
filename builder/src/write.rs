//! Streams rows into the snapshot's Parquet tables (zstd, dictionary-encoded
//! strings except the big text columns). Row groups are cut by row and byte
//! counts of the data itself, never by timing, so output bytes depend only
//! on the rows.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::{ArrayRef, BooleanArray, Float32Array, Int32Array, Int64Array, RecordBatch};
use code_index_schemas::Table;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use crate::error::{codes, Error, Result};

/// Rows buffered before a batch is handed to the writer.
const BATCH_ROWS: usize = 8192;
/// Row-group cut: whichever comes first.
const GROUP_ROWS: usize = 128 * 1024;
const GROUP_BYTES: usize = 64 << 20;

/// A typed column being filled.
pub enum Col {
    /// Strings go straight into the array's buffer (a `String` per value
    /// was a malloc and a second copy for each of ~200M values on the kernel).
    Str(StringBuilder),
    OptStr(StringBuilder),
    I32(Vec<i32>),
    I64(Vec<i64>),
    OptI64(Vec<Option<i64>>),
    Bool(Vec<bool>),
    F32(Vec<f32>),
}

impl Col {
    fn take(&mut self) -> ArrayRef {
        match self {
            Col::Str(b) | Col::OptStr(b) => Arc::new(b.finish()),
            Col::I32(v) => Arc::new(Int32Array::from(std::mem::take(v))),
            Col::I64(v) => Arc::new(Int64Array::from(std::mem::take(v))),
            Col::OptI64(v) => Arc::new(Int64Array::from(std::mem::take(v))),
            Col::Bool(v) => Arc::new(BooleanArray::from(std::mem::take(v))),
            Col::F32(v) => Arc::new(Float32Array::from(std::mem::take(v))),
        }
    }
}

/// One Parquet table being written.
pub struct TableWriter {
    pub table: Table,
    writer: Option<ArrowWriter<File>>,
    pub cols: Vec<Col>,
    buffered: usize,
    buffered_bytes: usize,
    group_rows: usize,
    group_bytes: usize,
    pub rows: u64,
    cursor: usize,
    path: std::path::PathBuf,
}

impl TableWriter {
    pub fn create(dir: &Path, table: Table, kv: &[(String, String)]) -> Result<TableWriter> {
        let path = dir.join(table.file);
        let file = File::create(&path).map_err(|e| {
            Error::io(
                codes::WRITE,
                "cannot create",
                &path,
                e,
                "check the --out directory is writable and has space",
            )
        })?;
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).unwrap()))
            .set_created_by(format!("code-indexer {}", crate::TOOL_VERSION))
            .set_max_row_group_row_count(Some(GROUP_ROWS))
            .set_key_value_metadata(Some(
                kv.iter()
                    .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
                    .chain(std::iter::once(KeyValue::new(
                        "code_index.table".to_string(),
                        table.name.to_string(),
                    )))
                    .collect(),
            ));
        // Integers are mostly sorted or small steps (ids, lines, offsets):
        // delta encoding makes them a fraction of their plain size.
        for c in &table.columns {
            if matches!(
                c.data_type,
                arrow_schema::DataType::Int32 | arrow_schema::DataType::Int64
            ) {
                props = props
                    .set_column_dictionary_enabled(ColumnPath::from(c.name), false)
                    .set_column_encoding(ColumnPath::from(c.name), Encoding::DELTA_BINARY_PACKED);
            }
        }
        if table.name == code_index_schemas::files_table().name {
            // Every file's text is a data page of its own (one value per
            // write batch, pages cut at any size), so a reader finds one
            // file's bytes through the offset index and decompresses only
            // them; no page statistics of the text.
            // LZ4 (raw blocks) rather than zstd for the text: ≈ 2× the bytes,
            // decompressed ≈ 4× faster by every scan that reads it.
            props = props
                .set_write_batch_size(1)
                .set_column_compression(ColumnPath::from("content"), Compression::LZ4_RAW)
                .set_column_data_page_size_limit(ColumnPath::from("content"), 1)
                .set_column_statistics_enabled(
                    ColumnPath::from("content"),
                    parquet::file::properties::EnabledStatistics::None,
                );
        }
        for big in ["content", "text", "context_header", "signature", "doc"] {
            if table.columns.iter().any(|c| c.name == big) {
                props = props.set_column_dictionary_enabled(ColumnPath::from(big), false);
            }
        }
        let writer =
            ArrowWriter::try_new(file, table.schema(), Some(props.build())).map_err(|e| {
                Error::new(
                    codes::WRITE,
                    format!("cannot start {}: {e}", path.display()),
                    "report this as a bug",
                )
            })?;
        let cols = table
            .columns
            .iter()
            .map(|c| match (&c.data_type, c.nullable) {
                (arrow_schema::DataType::Utf8, false) => Col::Str(StringBuilder::new()),
                (arrow_schema::DataType::Utf8, true) => Col::OptStr(StringBuilder::new()),
                (arrow_schema::DataType::Int32, _) => Col::I32(Vec::new()),
                (arrow_schema::DataType::Int64, false) => Col::I64(Vec::new()),
                (arrow_schema::DataType::Int64, true) => Col::OptI64(Vec::new()),
                (arrow_schema::DataType::Boolean, _) => Col::Bool(Vec::new()),
                (arrow_schema::DataType::Float32, _) => Col::F32(Vec::new()),
                (t, _) => panic!("unsupported column type {t}"),
            })
            .collect();
        Ok(TableWriter {
            table,
            writer: Some(writer),
            cols,
            buffered: 0,
            buffered_bytes: 0,
            group_rows: 0,
            group_bytes: 0,
            rows: 0,
            cursor: 0,
            path,
        })
    }

    /// Call after pushing one value into every column; `bytes` is the row's
    /// approximate size (for row-group cuts).
    pub fn end_row(&mut self, bytes: usize) -> Result<()> {
        assert_eq!(
            self.cursor,
            self.cols.len(),
            "row of {} has {} values for {} columns",
            self.table.name,
            self.cursor,
            self.cols.len()
        );
        self.cursor = 0;
        self.buffered += 1;
        self.buffered_bytes += bytes;
        self.rows += 1;
        if self.buffered >= BATCH_ROWS || self.buffered_bytes >= GROUP_BYTES / 4 {
            self.flush_batch()?;
        }
        Ok(())
    }

    fn err(&self, e: impl std::fmt::Display) -> Error {
        Error::new(
            codes::WRITE,
            format!("cannot write {}: {e}", self.path.display()),
            "check free space in the --out directory",
        )
    }

    fn flush_batch(&mut self) -> Result<()> {
        if self.buffered == 0 {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = self.cols.iter_mut().map(|c| c.take()).collect();
        let batch = RecordBatch::try_new(self.table.schema(), arrays).map_err(|e| self.err(e))?;
        let w = self.writer.as_mut().unwrap();
        let path = self.path.clone();
        let werr = move |e: parquet::errors::ParquetError| {
            Error::new(
                codes::WRITE,
                format!("cannot write {}: {e}", path.display()),
                "check free space in the --out directory",
            )
        };
        w.write(&batch).map_err(&werr)?;
        self.group_rows += self.buffered;
        self.group_bytes += self.buffered_bytes;
        self.buffered = 0;
        self.buffered_bytes = 0;
        if self.group_bytes >= GROUP_BYTES {
            self.writer.as_mut().unwrap().flush().map_err(&werr)?;
            self.group_rows = 0;
            self.group_bytes = 0;
        }
        let _ = self.group_rows;
        Ok(())
    }

    /// Finish the file; returns the row count.
    pub fn finish(mut self) -> Result<u64> {
        self.flush_batch()?;
        let w = self.writer.take().unwrap();
        let rows = self.rows;
        let path = self.path.clone();
        w.close().map_err(|e| {
            Error::new(
                codes::WRITE,
                format!("cannot finish {}: {e}", path.display()),
                "check free space",
            )
        })?;
        Ok(rows)
    }
}

/// Push helpers: values are pushed in schema column order; `end_row`
/// checks that every column got exactly one.
impl TableWriter {
    fn next(&mut self) -> &mut Col {
        let i = self.cursor;
        self.cursor += 1;
        &mut self.cols[i]
    }
    fn bad(&self, what: &str) -> ! {
        panic!(
            "column {} of {} is not {what}",
            self.cursor - 1,
            self.table.name
        )
    }
    pub fn s(&mut self, v: &str) {
        match self.next() {
            Col::Str(c) => c.append_value(v),
            _ => self.bad("a non-null string"),
        }
    }
    pub fn os(&mut self, v: Option<&str>) {
        match self.next() {
            Col::OptStr(c) => c.append_option(v),
            _ => self.bad("a nullable string"),
        }
    }
    pub fn i32(&mut self, v: i64) {
        match self.next() {
            Col::I32(c) => c.push(v as i32),
            _ => self.bad("i32"),
        }
    }
    pub fn i64(&mut self, v: i64) {
        match self.next() {
            Col::I64(c) => c.push(v),
            _ => self.bad("i64"),
        }
    }
    pub fn oi64(&mut self, v: Option<i64>) {
        match self.next() {
            Col::OptI64(c) => c.push(v),
            _ => self.bad("nullable i64"),
        }
    }
    pub fn b(&mut self, v: bool) {
        match self.next() {
            Col::Bool(c) => c.push(v),
            _ => self.bad("bool"),
        }
    }
    pub fn f32(&mut self, v: f32) {
        match self.next() {
            Col::F32(c) => c.push(v),
            _ => self.bad("f32"),
        }
    }
}
