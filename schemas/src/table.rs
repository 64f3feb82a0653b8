//! Typed reading of a snapshot table, with the same [`Table`] definitions the
//! writer uses.
//!
//! [`TableReader::open`] reads the file's footer and checks, once, that every
//! column the caller asked for is there with the Arrow type the table
//! defines; a missing or retyped column is a [`TableError`] that names the
//! file, the table, the column and both types. The batches it then yields
//! give typed columns by name ([`Batch::str`], [`Batch::i64`], ...) without
//! downcasting: after the check they cannot fail, short of asking for a
//! column that was not opened (a programming error, which panics).
//!
//! A column the table declares NOT NULL but the file declares nullable (as
//! a file rewritten by another tool may) is checked batch by batch: a NULL
//! in it is a [`TableError::UnexpectedNull`], never a silent default.
//!
//! ```no_run
//! use code_index_schemas::chunks_table;
//! use code_index_schemas::table::{Nullable, TableError, TableReader};
//!
//! fn ids_and_symbols(dir: &std::path::Path) -> Result<Vec<(i64, Option<String>)>, TableError> {
//!     let reader = TableReader::open_in(dir, &chunks_table(), &["chunk_id", "symbol"])?
//!         .batch_size(8192);
//!     let mut out = Vec::new();
//!     for batch in reader {
//!         let batch = batch?;
//!         let (id, symbol) = (batch.i64("chunk_id"), batch.str("symbol"));
//!         for i in 0..batch.num_rows() {
//!             // `opt` is None for a NULL; `value` for NOT NULL columns.
//!             out.push((id.value(i), symbol.opt(i).map(str::to_string)));
//!         }
//!     }
//!     Ok(out)
//! }
//! ```

use std::fs::File;
use std::path::{Path, PathBuf};

pub use arrow_array::{
    Array, BooleanArray, Float32Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow_array::{ArrowPrimitiveType, PrimitiveArray};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;

use crate::diag::{Code, Diagnostic};
use crate::Table;

/// Rows per batch unless [`TableReader::batch_size`] says otherwise.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// Why a table cannot be read. The `Display` text names the file (and for
/// column problems the table, the column and the types). It carries no code:
/// the caller gives one with [`TableError::into_diagnostic`].
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// The file cannot be opened.
    #[error("cannot open {}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not readable Parquet (footer at open, data in a batch).
    #[error("cannot read {}: {message}", path.display())]
    Read { path: PathBuf, message: String },
    /// A requested column is not in the file.
    #[error("{} (table {table}) lacks column {column} ({expected})", path.display())]
    MissingColumn {
        path: PathBuf,
        table: &'static str,
        column: String,
        expected: DataType,
    },
    /// A requested column has another Arrow type than the table defines.
    #[error("{} (table {table}): column {column} is {found}, expected {expected}", path.display())]
    WrongType {
        path: PathBuf,
        table: &'static str,
        column: String,
        expected: DataType,
        found: DataType,
    },
    /// A NOT NULL column of the table holds a NULL in the file.
    #[error("{} (table {table}): column {column} holds NULL values, but the table declares it NOT NULL", path.display())]
    UnexpectedNull {
        path: PathBuf,
        table: &'static str,
        column: String,
    },
    /// The caller asked for a column the table does not define.
    #[error("table {table} defines no column {column} (asked for in reading {})", path.display())]
    UnknownColumn {
        path: PathBuf,
        table: &'static str,
        column: String,
    },
}

impl TableError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            TableError::Open { path, .. }
            | TableError::Read { path, .. }
            | TableError::MissingColumn { path, .. }
            | TableError::WrongType { path, .. }
            | TableError::UnexpectedNull { path, .. }
            | TableError::UnknownColumn { path, .. } => path,
        }
    }

    /// A column is missing, retyped, unexpectedly NULL or unknown (the file
    /// itself was readable).
    pub fn is_column_error(&self) -> bool {
        !matches!(self, TableError::Open { .. } | TableError::Read { .. })
    }

    /// This error as a [`Diagnostic`] with the caller's `code` and `hint`
    /// (the same unreadable table is `E_PREVIOUS_INVALID` to `--previous`
    /// and `E_SNAPSHOT_INVALID` elsewhere): the message is this error's
    /// text, the path its file.
    pub fn into_diagnostic(self, code: Code, hint: impl Into<String>) -> Diagnostic {
        let path = self.path().to_path_buf();
        Diagnostic::new(code, self.to_string(), hint).at(&path)
    }
}

enum State {
    Ready(Box<ParquetRecordBatchReaderBuilder<File>>),
    Reading(ParquetRecordBatchReader),
    Done,
}

/// Batches of one table file, its columns checked against the table's
/// definition. An iterator of [`Batch`]es.
pub struct TableReader {
    path: PathBuf,
    table: &'static str,
    rows: u64,
    batch_size: usize,
    /// NOT NULL in the table, nullable in the file: checked per batch.
    null_checked: Vec<String>,
    state: State,
}

impl TableReader {
    /// Open `dir/<table.file>`, reading `columns`; see [`TableReader::open`].
    pub fn open_in(dir: &Path, table: &Table, columns: &[&str]) -> Result<TableReader, TableError> {
        TableReader::open(&dir.join(table.file), table, columns)
    }

    /// Open `path` as `table`, reading only `columns` (names of the table's
    /// columns, in any order). Checks now that each is in the file with the
    /// type the table defines.
    pub fn open(path: &Path, table: &Table, columns: &[&str]) -> Result<TableReader, TableError> {
        let file = File::open(path).map_err(|source| TableError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| TableError::Read {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        let found = builder.schema().clone();
        let mut roots = Vec::with_capacity(columns.len());
        let mut null_checked = Vec::new();
        for &name in columns {
            let Some(want) = table.columns.iter().find(|c| c.name == name) else {
                return Err(TableError::UnknownColumn {
                    path: path.to_path_buf(),
                    table: table.name,
                    column: name.to_string(),
                });
            };
            let Some((i, field)) = found.column_with_name(name) else {
                return Err(TableError::MissingColumn {
                    path: path.to_path_buf(),
                    table: table.name,
                    column: name.to_string(),
                    expected: want.data_type.clone(),
                });
            };
            if field.data_type() != &want.data_type {
                return Err(TableError::WrongType {
                    path: path.to_path_buf(),
                    table: table.name,
                    column: name.to_string(),
                    expected: want.data_type.clone(),
                    found: field.data_type().clone(),
                });
            }
            if !want.nullable && field.is_nullable() && !null_checked.iter().any(|c| c == name) {
                null_checked.push(name.to_string());
            }
            roots.push(i);
        }
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
        let rows = builder.metadata().file_metadata().num_rows().max(0) as u64;
        Ok(TableReader {
            path: path.to_path_buf(),
            table: table.name,
            rows,
            batch_size: DEFAULT_BATCH_SIZE,
            null_checked,
            state: State::Ready(Box::new(builder.with_projection(mask))),
        })
    }

    /// Open `path` reading every column the table defines.
    pub fn open_all(path: &Path, table: &Table) -> Result<TableReader, TableError> {
        let names: Vec<&str> = table.columns.iter().map(|c| c.name).collect();
        TableReader::open(path, table, &names)
    }

    /// Rows per batch (default [`DEFAULT_BATCH_SIZE`]); before the first batch.
    pub fn batch_size(mut self, rows: usize) -> TableReader {
        self.batch_size = rows.max(1);
        self
    }

    /// Row count from the file's footer.
    pub fn num_rows(&self) -> u64 {
        self.rows
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read_err(&self, e: impl std::fmt::Display) -> TableError {
        TableError::Read {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }
}

impl Iterator for TableReader {
    type Item = Result<Batch, TableError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let State::Ready(_) = self.state {
            let State::Ready(b) = std::mem::replace(&mut self.state, State::Done) else {
                unreachable!()
            };
            match b.with_batch_size(self.batch_size).build() {
                Ok(r) => self.state = State::Reading(r),
                Err(e) => return Some(Err(self.read_err(e))),
            }
        }
        let State::Reading(r) = &mut self.state else {
            return None;
        };
        let rb = match r.next()? {
            Ok(rb) => rb,
            Err(e) => {
                self.state = State::Done;
                return Some(Err(self.read_err(e)));
            }
        };
        for name in &self.null_checked {
            if rb.column_by_name(name).is_some_and(|c| c.null_count() > 0) {
                self.state = State::Done;
                return Some(Err(TableError::UnexpectedNull {
                    path: self.path.clone(),
                    table: self.table,
                    column: name.clone(),
                }));
            }
        }
        Some(Ok(Batch {
            rb,
            table: self.table,
        }))
    }
}

/// One batch of rows with the columns its reader opened, typed by name.
/// Every accessor panics only on a column the reader was not asked for, or
/// on asking for it as another type than the table defines: both are
/// programming errors, since [`TableReader::open`] checked the file.
pub struct Batch {
    rb: RecordBatch,
    table: &'static str,
}

impl Batch {
    pub fn num_rows(&self) -> usize {
        self.rb.num_rows()
    }

    /// The underlying Arrow batch (projected columns only, in file order).
    pub fn record_batch(&self) -> &RecordBatch {
        &self.rb
    }

    pub fn into_record_batch(self) -> RecordBatch {
        self.rb
    }

    fn typed<T: Array + 'static>(&self, name: &str, as_type: &str) -> &T {
        let col = self.rb.column_by_name(name).unwrap_or_else(|| {
            panic!(
                "column {name} of table {} was not opened: add it to the reader's columns",
                self.table
            )
        });
        col.as_any().downcast_ref::<T>().unwrap_or_else(|| {
            panic!(
                "column {name} of table {} is {}, not {as_type} (the reader checked the file against the table)",
                self.table,
                col.data_type()
            )
        })
    }

    /// A `Utf8` column (nullable or not: see [`Nullable::opt`]).
    pub fn str(&self, name: &str) -> &StringArray {
        self.typed(name, "Utf8")
    }

    /// An `Int64` column.
    pub fn i64(&self, name: &str) -> &Int64Array {
        self.typed(name, "Int64")
    }

    /// An `Int32` column.
    pub fn i32(&self, name: &str) -> &Int32Array {
        self.typed(name, "Int32")
    }

    /// A `Boolean` column.
    pub fn bool(&self, name: &str) -> &BooleanArray {
        self.typed(name, "Boolean")
    }

    /// A `Float32` column.
    pub fn f32(&self, name: &str) -> &Float32Array {
        self.typed(name, "Float32")
    }
}

/// The value at a row of a nullable column, `None` for NULL.
pub trait Nullable {
    type Value<'a>
    where
        Self: 'a;
    fn opt(&self, i: usize) -> Option<Self::Value<'_>>;
}

impl Nullable for StringArray {
    type Value<'a> = &'a str;
    fn opt(&self, i: usize) -> Option<&str> {
        self.is_valid(i).then(|| self.value(i))
    }
}

impl Nullable for BooleanArray {
    type Value<'a> = bool;
    fn opt(&self, i: usize) -> Option<bool> {
        self.is_valid(i).then(|| self.value(i))
    }
}

impl<T: ArrowPrimitiveType> Nullable for PrimitiveArray<T> {
    type Value<'a> = T::Native;
    fn opt(&self, i: usize) -> Option<T::Native> {
        self.is_valid(i).then(|| self.value(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{chunks_table, files_table, Column};
    use arrow_array::ArrayRef;
    use arrow_schema::{Field, Schema};
    use parquet::arrow::ArrowWriter;
    use std::sync::Arc;

    /// A value array for a column of `files`, `n` rows.
    fn values(c: &Column, n: usize) -> ArrayRef {
        let i = 0..n;
        match (&c.data_type, c.name) {
            (DataType::Utf8, "module_path") => Arc::new(StringArray::from(
                i.map(|i| (i % 2 == 0).then(|| format!("m{i}")))
                    .collect::<Vec<_>>(),
            )),
            (DataType::Utf8, _) => Arc::new(StringArray::from(
                i.map(|i| format!("{}-{i}", c.name)).collect::<Vec<_>>(),
            )),
            (DataType::Int64, _) => {
                Arc::new(Int64Array::from_iter_values(i.map(|i| i as i64 * 10)))
            }
            (DataType::Int32, _) => Arc::new(Int32Array::from_iter_values(i.map(|i| i as i32))),
            (DataType::Boolean, _) => Arc::new(BooleanArray::from(
                i.map(|i| i % 3 == 0).collect::<Vec<_>>(),
            )),
            (DataType::Float32, _) => {
                Arc::new(Float32Array::from_iter_values(i.map(|i| i as f32 / 2.0)))
            }
            (t, n) => panic!("no test values for {n}: {t}"),
        }
    }

    fn write(path: &Path, schema: Arc<Schema>, arrays: Vec<ArrayRef>) {
        let batch = RecordBatch::try_new(schema.clone(), arrays).unwrap();
        let mut w = ArrowWriter::try_new(File::create(path).unwrap(), schema, None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }

    /// `files.parquet` as the writer lays it out, `n` rows.
    fn write_files_table(dir: &Path, n: usize) -> PathBuf {
        let t = files_table();
        let arrays = t.columns.iter().map(|c| values(c, n)).collect();
        let path = dir.join(t.file);
        write(&path, t.schema(), arrays);
        path
    }

    /// `files.parquet` with `column` replaced by `replacement` (or dropped).
    fn write_altered(dir: &Path, column: &str, replacement: Option<(Field, ArrayRef)>) -> PathBuf {
        let t = files_table();
        let (mut fields, mut arrays) = (Vec::new(), Vec::new());
        for c in &t.columns {
            if c.name == column {
                if let Some((f, a)) = &replacement {
                    fields.push(f.clone());
                    arrays.push(a.clone());
                }
            } else {
                fields.push(Field::new(c.name, c.data_type.clone(), c.nullable));
                arrays.push(values(c, 3));
            }
        }
        let path = dir.join(t.file);
        write(&path, Arc::new(Schema::new(fields)), arrays);
        path
    }

    #[test]
    fn round_trip_of_a_table_written_with_its_schema() {
        let dir = tempfile::tempdir().unwrap();
        let n = 20_000;
        write_files_table(dir.path(), n);
        let r = TableReader::open_in(
            dir.path(),
            &files_table(),
            &["path", "size_bytes", "line_count", "is_test", "module_path"],
        )
        .unwrap()
        .batch_size(4096);
        assert_eq!(r.num_rows(), n as u64);
        let mut row = 0;
        for batch in r {
            let b = batch.unwrap();
            assert!(b.num_rows() <= 4096);
            // Only the projected columns are read.
            assert_eq!(b.record_batch().num_columns(), 5);
            let (path, size, lines, test, module) = (
                b.str("path"),
                b.i64("size_bytes"),
                b.i32("line_count"),
                b.bool("is_test"),
                b.str("module_path"),
            );
            for i in 0..b.num_rows() {
                assert_eq!(path.value(i), format!("path-{row}"));
                assert_eq!(size.value(i), row as i64 * 10);
                assert_eq!(lines.value(i), row as i32);
                assert_eq!(test.value(i), row % 3 == 0);
                assert_eq!(
                    module.opt(i).map(str::to_string),
                    (row % 2 == 0).then(|| format!("m{row}"))
                );
                assert_eq!(size.opt(i), Some(row as i64 * 10));
                row += 1;
            }
        }
        assert_eq!(row, n);
        // Every column, and the Float32 accessor on another table.
        let all = TableReader::open_all(&dir.path().join("files.parquet"), &files_table()).unwrap();
        let b = all.into_iter().next().unwrap().unwrap();
        assert_eq!(b.record_batch().num_columns(), files_table().columns.len());
        assert_eq!(b.i32("secret_count").value(2), 2);

        let t = chunks_table();
        let arrays = t
            .columns
            .iter()
            .map(|c| match c.data_type {
                DataType::Float32 => values(c, 4),
                DataType::Utf8 if c.nullable => {
                    Arc::new(StringArray::from(vec![None::<&str>; 4])) as ArrayRef
                }
                _ => values(c, 4),
            })
            .collect();
        write(&dir.path().join(t.file), t.schema(), arrays);
        let b = TableReader::open_in(dir.path(), &t, &["retrieval_weight", "text"])
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(b.f32("retrieval_weight").value(3), 1.5);
        assert_eq!(b.str("text").opt(0), None);
    }

    #[test]
    fn a_missing_column_is_named_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_altered(dir.path(), "size_bytes", None);
        let e = TableReader::open(&path, &files_table(), &["path", "size_bytes"])
            .err()
            .unwrap();
        assert!(matches!(e, TableError::MissingColumn { .. }), "{e:?}");
        assert!(e.is_column_error());
        assert_eq!(e.path(), path);
        let msg = e.to_string();
        for part in [
            path.display().to_string().as_str(),
            "table files",
            "size_bytes",
            "Int64",
        ] {
            assert!(msg.contains(part), "{msg:?} lacks {part:?}");
        }
        // A reader that does not ask for it is fine.
        let r = TableReader::open(&path, &files_table(), &["path"]).unwrap();
        assert_eq!(r.map(|b| b.unwrap().num_rows()).sum::<usize>(), 3);
    }

    #[test]
    fn a_retyped_column_is_named_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_altered(
            dir.path(),
            "size_bytes",
            Some((
                Field::new("size_bytes", DataType::Int32, false),
                Arc::new(Int32Array::from(vec![1, 2, 3])),
            )),
        );
        let e = TableReader::open(&path, &files_table(), &["size_bytes"])
            .err()
            .unwrap();
        assert!(matches!(e, TableError::WrongType { .. }), "{e:?}");
        let msg = e.to_string();
        for part in [
            path.display().to_string().as_str(),
            "table files",
            "column size_bytes is Int32, expected Int64",
        ] {
            assert!(msg.contains(part), "{msg:?} lacks {part:?}");
        }
    }

    #[test]
    fn nulls_in_a_not_null_column_are_an_error_not_a_default() {
        let dir = tempfile::tempdir().unwrap();
        // Declared nullable in the file (as another tool may write it), no NULLs: fine.
        let path = write_altered(
            dir.path(),
            "is_test",
            Some((
                Field::new("is_test", DataType::Boolean, true),
                Arc::new(BooleanArray::from(vec![true, false, true])),
            )),
        );
        let r = TableReader::open(&path, &files_table(), &["is_test"]).unwrap();
        assert_eq!(r.map(|b| b.unwrap().num_rows()).sum::<usize>(), 3);
        // With a NULL: an error naming the column.
        let path = write_altered(
            dir.path(),
            "is_test",
            Some((
                Field::new("is_test", DataType::Boolean, true),
                Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
            )),
        );
        let mut r = TableReader::open(&path, &files_table(), &["is_test"]).unwrap();
        let e = r.next().unwrap().err().unwrap();
        assert!(matches!(e, TableError::UnexpectedNull { .. }), "{e:?}");
        assert!(e.to_string().contains("is_test"), "{e}");
        assert!(r.next().is_none());
    }

    #[test]
    fn unknown_columns_and_unreadable_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_files_table(dir.path(), 2);
        let e = TableReader::open(&path, &files_table(), &["nope"])
            .err()
            .unwrap();
        assert!(matches!(e, TableError::UnknownColumn { .. }), "{e:?}");
        let e = TableReader::open(&dir.path().join("gone.parquet"), &files_table(), &["path"])
            .err()
            .unwrap();
        assert!(matches!(e, TableError::Open { .. }), "{e:?}");
        assert!(e.to_string().starts_with("cannot open "), "{e}");
        std::fs::write(&path, b"not parquet").unwrap();
        let e = TableReader::open(&path, &files_table(), &["path"])
            .err()
            .unwrap();
        assert!(matches!(e, TableError::Read { .. }), "{e:?}");
        assert!(!e.is_column_error());
        assert!(e.to_string().starts_with("cannot read "), "{e}");
        let text = e.to_string();
        let d = e.into_diagnostic(Code::SnapshotInvalid, "rebuild it");
        assert_eq!(
            (d.code, d.message, d.hint),
            (Code::SnapshotInvalid, text, "rebuild it".into())
        );
        assert_eq!(d.path.as_deref(), Some(path.as_path()));
    }

    #[test]
    #[should_panic(expected = "column content of table files was not opened")]
    fn asking_for_a_column_not_opened_is_a_programming_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_files_table(dir.path(), 2);
        let b = TableReader::open(&path, &files_table(), &["path"])
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        b.str("content");
    }

    #[test]
    #[should_panic(expected = "column size_bytes of table files is Int64, not Int32")]
    fn asking_for_another_type_is_a_programming_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_files_table(dir.path(), 2);
        let b = TableReader::open(&path, &files_table(), &["size_bytes"])
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        b.i32("size_bytes");
    }
}
