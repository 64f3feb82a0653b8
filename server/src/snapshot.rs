//! Finding, verifying and loading snapshots. Every data file is checked
//! against the manifest's size and sha256 and the schema version must match
//! this server's; file contents are then held in memory for the scan.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use code_index_schemas::diag::{Code, Diagnostic};
use code_index_schemas::table::TableReader;
use code_index_schemas::{files_table, Manifest, MANIFEST_FILE};
use rayon::prelude::*;

/// A loading failure, with what to do about it.
pub type LoadError = Diagnostic;

fn err(message: impl Into<String>, hint: impl Into<String>) -> LoadError {
    LoadError::new(Code::SnapshotInvalid, message, hint)
}

use code_index_schemas::download::REBUILD;

/// One indexed file, in memory.
#[derive(Debug)]
pub struct FileEntry {
    pub path: String,
    pub language: String,
    pub size: u64,
    pub is_test: bool,
    pub is_generated: bool,
    /// Number of lines (a last line without a newline counts).
    pub lines: u32,
    /// Secrets the build redacted in this file (`files.secret_count`): their
    /// bytes read as `*`.
    pub secrets: u32,
    content: Content,
}

/// A file's text: LZ4-compressed by default (≈ 2.2× smaller on source code,
/// decompressed at ≈ 2.4 GB/s per core into a per-thread buffer when scanned),
/// or plain with `serve --plain-content`.
#[derive(Debug)]
enum Content {
    Plain(Box<str>),
    Lz4 {
        len: usize,
        bytes: Box<[u8]>,
    },
    /// Not in memory: row `row` of files.parquet, read from its page on use.
    Paged {
        pages: std::sync::Arc<crate::pages::ContentPages>,
        row: u32,
        len: usize,
    },
}

/// Public keys a snapshot must be signed by (none: signatures not required).
static TRUSTED: std::sync::OnceLock<Vec<code_index_schemas::signing::PublicKey>> =
    std::sync::OnceLock::new();

/// Require every snapshot loaded from now on to be signed by one of `keys`
/// (`serve --trust-key`, `CODE_INDEX_TRUSTED_KEYS`). Set once.
pub fn set_trusted_keys(keys: Vec<code_index_schemas::signing::PublicKey>) {
    let _ = TRUSTED.set(keys);
}

fn trusted_keys() -> &'static [code_index_schemas::signing::PublicKey] {
    TRUSTED.get().map(Vec::as_slice).unwrap_or(&[])
}

/// The signature status of the snapshot in `dir` whose manifest is
/// `manifest`: with trusted keys, a signature that is missing, invalid or
/// by another key is refused with its code.
fn check_signature(dir: &Path, manifest: &[u8]) -> Result<Option<String>, LoadError> {
    code_index_schemas::signing::check_dir(trusted_keys(), dir, manifest)
}

/// Shorter texts stay plain (LZ4 cannot shrink them much).
const MIN_COMPRESSED: usize = 64;

static COMPRESS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Keep file contents compressed in memory (the default) or plain.
pub fn set_compressed_content(on: bool) {
    COMPRESS.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Largest per-thread read buffer kept between files.
const KEEP_BUFFER: usize = 4 << 20;

thread_local! {
    static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    /// A page as read, and its decompressed value (paged content).
    static PAGE: std::cell::RefCell<(Vec<u8>, Vec<u8>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Most decompressed bytes one [`remember_reads`] scope keeps.
const MEMO_BYTES: usize = 32 << 20;

/// The files read in a [`remember_reads`] scope, decompressed, by where
/// their compressed text is (an address that cannot be reused while the
/// scope borrows the snapshots).
#[derive(Default)]
struct Memo {
    files: HashMap<(usize, u32), Rc<Vec<u8>>>,
    bytes: usize,
}

thread_local! {
    static MEMO: std::cell::RefCell<Option<Memo>> = const { std::cell::RefCell::new(None) };
}

/// Run `f` with this thread's file reads remembered: a file's text is read
/// and decompressed once, however many of its chunks `f` reads. A
/// search_code ranking reads the same few hundred files' chunks in several
/// stages (proximity, coverage, definitions, snippets); reading and
/// decompressing each file again took an eighth of a keyword query
/// (bench/results/latency.md). Whatever was kept is dropped when `f`
/// returns; a nested scope shares the outer one's.
pub fn remember_reads<R>(f: impl FnOnce() -> R) -> R {
    if MEMO.with(|m| m.borrow().is_some()) {
        return f();
    }
    struct Forget;
    impl Drop for Forget {
        fn drop(&mut self) {
            MEMO.with(|m| *m.borrow_mut() = None);
        }
    }
    MEMO.with(|m| *m.borrow_mut() = Some(Memo::default()));
    let _forget = Forget;
    f()
}

/// The remembered text at `key`, or `read`'s, remembered when the scope
/// has room; `None` outside a [`remember_reads`] scope.
fn remembered(key: (usize, u32), read: impl FnOnce() -> Vec<u8>) -> Option<Rc<Vec<u8>>> {
    MEMO.with(|m| {
        if let Some(hit) = m.borrow().as_ref()?.files.get(&key) {
            return Some(hit.clone());
        }
        let text = Rc::new(read());
        if let Some(memo) = m.borrow_mut().as_mut() {
            if memo.bytes + text.len() <= MEMO_BYTES {
                memo.bytes += text.len();
                memo.files.insert(key, text.clone());
            }
        }
        Some(text)
    })
}

/// Whether the loader keeps `text` compressed (see [`set_compressed_content`]).
pub fn compress_by_default(text: &str) -> bool {
    COMPRESS.load(std::sync::atomic::Ordering::Relaxed) && text.len() >= MIN_COMPRESSED
}

impl FileEntry {
    pub fn new(
        path: String,
        language: String,
        size: u64,
        is_test: bool,
        is_generated: bool,
        text: &str,
        compress: bool,
    ) -> FileEntry {
        let content = if compress {
            Content::Lz4 {
                len: text.len(),
                bytes: lz4_flex::block::compress(text.as_bytes()).into_boxed_slice(),
            }
        } else {
            Content::Plain(Box::from(text))
        };
        let lines = (memchr::memchr_iter(b'\n', text.as_bytes()).count()
            + usize::from(!text.is_empty() && !text.ends_with('\n'))) as u32;
        FileEntry {
            path,
            language,
            size,
            is_test,
            is_generated,
            lines,
            secrets: 0,
            content,
        }
    }

    /// A file whose text stays in `files.parquet` (row `row`), `len` bytes long.
    #[allow(clippy::too_many_arguments)]
    pub fn paged(
        path: String,
        language: String,
        size: u64,
        is_test: bool,
        is_generated: bool,
        lines: u32,
        pages: std::sync::Arc<crate::pages::ContentPages>,
        row: u32,
        len: usize,
    ) -> FileEntry {
        FileEntry {
            path,
            language,
            size,
            is_test,
            is_generated,
            lines,
            secrets: 0,
            content: Content::Paged { pages, row, len },
        }
    }

    /// Length of the text in bytes.
    pub fn content_len(&self) -> usize {
        match &self.content {
            Content::Plain(s) => s.len(),
            Content::Lz4 { len, .. } | Content::Paged { len, .. } => *len,
        }
    }

    /// Bytes this file's text takes in memory.
    pub fn resident_bytes(&self) -> usize {
        match &self.content {
            Content::Plain(s) => s.len(),
            Content::Lz4 { bytes, .. } => bytes.len(),
            Content::Paged { .. } => 0,
        }
    }

    /// Run `f` over the text's bytes (decompressed into a per-thread buffer).
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        let key = match &self.content {
            Content::Plain(_) => None,
            Content::Lz4 { bytes, .. } => Some((bytes.as_ptr() as usize, 0)),
            Content::Paged { pages, row, .. } => {
                Some((std::sync::Arc::as_ptr(pages) as usize, *row))
            }
        };
        if let Some(text) = key.and_then(|k| remembered(k, || self.read_bytes())) {
            return f(&text);
        }
        match &self.content {
            Content::Plain(s) => f(s.as_bytes()),
            Content::Lz4 { len, bytes } => BUF.with(|b| match b.try_borrow_mut() {
                Ok(mut buf) => {
                    if buf.len() < *len {
                        buf.resize(*len, 0);
                    }
                    let n = lz4_flex::block::decompress_into(bytes, &mut buf[..*len]).unwrap_or(0);
                    f(&buf[..n])
                }
                // Nested use on one thread: a buffer of its own.
                Err(_) => f(&lz4_flex::block::decompress(bytes, *len).unwrap_or_default()),
            }),
            // A page that cannot be read (the snapshot changed on disk after
            // its verification) reads as empty, as a damaged LZ4 block does.
            Content::Paged { pages, row, .. } => PAGE.with(|p| match p.try_borrow_mut() {
                Ok(mut bufs) => {
                    let (raw, out) = &mut *bufs;
                    let r = f(pages.read(*row as usize, raw, out).unwrap_or_default());
                    // A large file's buffers are not kept by the thread.
                    if raw.capacity() > KEEP_BUFFER || out.capacity() > KEEP_BUFFER {
                        *raw = Vec::new();
                        *out = Vec::new();
                    }
                    r
                }
                Err(_) => {
                    let (mut raw, mut out) = (Vec::new(), Vec::new());
                    f(pages
                        .read(*row as usize, &mut raw, &mut out)
                        .unwrap_or_default())
                }
            }),
        }
    }

    /// The text's bytes, owned.
    fn read_bytes(&self) -> Vec<u8> {
        match &self.content {
            Content::Plain(s) => s.as_bytes().to_vec(),
            Content::Lz4 { len, bytes } => {
                lz4_flex::block::decompress(bytes, *len).unwrap_or_default()
            }
            Content::Paged { pages, row, .. } => {
                let (mut raw, mut out) = (Vec::new(), Vec::new());
                pages
                    .read(*row as usize, &mut raw, &mut out)
                    .map(<[u8]>::to_vec)
                    .unwrap_or_default()
            }
        }
    }

    /// Run `f` over the text.
    pub fn with_content<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        match &self.content {
            Content::Plain(s) => f(s),
            Content::Lz4 { .. } | Content::Paged { .. } => {
                self.with_bytes(|b| f(std::str::from_utf8(b).unwrap_or("")))
            }
        }
    }

    /// The text, owned.
    pub fn content(&self) -> String {
        self.with_content(str::to_string)
    }
}

/// A loaded snapshot.
#[derive(Debug)]
pub struct Snapshot {
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// `Some(key id)`: its manifest.sig verified against a trusted key;
    /// `Some("unverified")`: signed, but no key is trusted; `None`: unsigned.
    pub signature: Option<String>,
    /// Sorted by path.
    pub files: Vec<FileEntry>,
    /// The n-gram index (`ngrams.bin`; snapshots before feature 5 have none).
    pub grams: Option<code_index_schemas::ngram::NgramIndex>,
    /// By file index: the file is hidden, because an overlay stands in for
    /// it (empty: none is).
    pub hidden: Vec<bool>,
}

impl Snapshot {
    /// Index into `files` (sorted by path) of the file at `path`, unless an
    /// overlay hides it.
    pub fn file_index(&self, path: &str) -> Option<u32> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| i as u32)
            .filter(|&i| self.visible(i))
    }

    /// Whether file `fi` is served (not hidden by an overlay).
    #[inline]
    pub fn visible(&self, fi: u32) -> bool {
        !self.hidden.get(fi as usize).copied().unwrap_or(false)
    }

    /// The visible files, with their indexes.
    pub fn visible_files(&self) -> impl Iterator<Item = (u32, &FileEntry)> + '_ {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (i as u32, f))
            .filter(|(i, _)| self.visible(*i))
    }

    /// Number of visible files.
    pub fn visible_count(&self) -> usize {
        self.files.len() - self.hidden.iter().filter(|h| **h).count()
    }

    /// For an overlay: the snapshot id it amends.
    pub fn overlay_of(&self) -> Option<&str> {
        self.manifest.overlay.as_ref().map(|o| o.base.as_str())
    }

    /// Hide the files at `paths` (an overlay stands in for them).
    pub fn hide(&mut self, paths: &[String]) {
        self.hidden = vec![false; self.files.len()];
        for p in paths {
            if let Ok(i) = self.files.binary_search_by(|f| f.path.as_str().cmp(p)) {
                self.hidden[i] = true;
            }
        }
    }

    pub fn repo(&self) -> &str {
        &self.manifest.repo
    }
    pub fn id(&self) -> &str {
        &self.manifest.snapshot_id
    }
    pub fn content_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.content_len() as u64).sum()
    }
}

/// Snapshot directories named by an `--index` argument: a snapshot itself,
/// `<out>/<repo>/` (its `latest`), or `<out>/` holding several repos.
pub fn discover(arg: &Path) -> Result<Vec<PathBuf>, LoadError> {
    discover_in(arg, false)
}

/// [`discover`], or with `allow_empty` none at all when `arg` is a directory
/// that holds no snapshot yet (a server started before the first build
/// serves what appears there later).
pub fn discover_in(arg: &Path, allow_empty: bool) -> Result<Vec<PathBuf>, LoadError> {
    if !arg.exists() {
        return Err(err(
            format!("--index {} does not exist", arg.display()),
            "pass a snapshot directory, <out>/<repo>/ or <out>/ as written by code-indexer (create an empty directory to serve the snapshots a later build writes there)",
        ));
    }
    if arg.is_file() {
        // `<out>/<repo>/latest` or `<snapshot>/manifest.json` name a snapshot too.
        let parent = arg
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = arg.file_name().map(|n| n.to_string_lossy().into_owned());
        match name.as_deref() {
            Some("latest") => {
                if let Some(d) = latest_of(parent) {
                    return Ok(vec![d]);
                }
                return Err(err(
                    format!(
                        "{} does not name a snapshot directory holding {MANIFEST_FILE}",
                        arg.display()
                    ),
                    "rebuild with `code-indexer index` (it rewrites `latest`), or pass a snapshot directory",
                ));
            }
            Some(MANIFEST_FILE) => return Ok(vec![parent.to_path_buf()]),
            _ => {}
        }
        return Err(err(
            format!("--index {} is a file, not a snapshot", arg.display()),
            "pass a snapshot directory (it holds manifest.json), <out>/<repo>/ or <out>/ as written by code-indexer",
        ));
    }
    if arg.join(MANIFEST_FILE).is_file() {
        return Ok(vec![arg.to_path_buf()]);
    }
    if let Some(d) = latest_of(arg) {
        return Ok(vec![d]);
    }
    let mut found = Vec::new();
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(arg)
        .map_err(|e| {
            err(
                format!("cannot read {}: {e}", arg.display()),
                "check permissions",
            )
        })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    subdirs.sort();
    for d in subdirs {
        if let Some(s) = latest_of(&d) {
            found.push(s);
        }
    }
    if found.is_empty() && !allow_empty {
        return Err(err(
            format!("no snapshot found in {}", arg.display()),
            "pass a directory with manifest.json, or <out>/<repo>/ holding a `latest` file (written by `code-indexer index`)",
        ));
    }
    Ok(found)
}

fn latest_of(repo_dir: &Path) -> Option<PathBuf> {
    let id = std::fs::read_to_string(repo_dir.join("latest")).ok()?;
    let d = repo_dir.join(id.trim());
    d.join(MANIFEST_FILE).is_file().then_some(d)
}

/// Read and verify a snapshot's manifest and data files.
pub fn verify(dir: &Path) -> Result<Manifest, LoadError> {
    verify_signed(dir).map(|(m, _)| m)
}

/// [`verify`], with the signature status [`check_signature`] found.
fn verify_signed(dir: &Path) -> Result<(Manifest, Option<String>), LoadError> {
    code_index_schemas::download::verify_dir(dir, |text| check_signature(dir, text))
}

/// The snapshot's n-gram index, when its manifest lists one (already
/// checked against its sha256); its file count must be the table's.
fn open_grams(
    dir: &Path,
    manifest: &Manifest,
    files: usize,
) -> Result<Option<code_index_schemas::ngram::NgramIndex>, LoadError> {
    use code_index_schemas::ngram::{NgramIndex, NGRAM_FILE};
    if !manifest.files.iter().any(|f| f.name == NGRAM_FILE) {
        return Ok(None);
    }
    let p = dir.join(NGRAM_FILE);
    let idx = match NgramIndex::open(&p) {
        Ok(idx) => idx,
        // Another format version: grep scans every selected file instead.
        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
            tracing::warn!("{}: {e}; grep scans without it ({REBUILD})", dir.display());
            return Ok(None);
        }
        Err(e) => return Err(err(format!("{}: {e}", p.display()), REBUILD)),
    };
    if idx.files() as usize != files {
        return Err(err(
            format!(
                "{} indexes {} files, files.parquet holds {files}",
                p.display(),
                idx.files()
            ),
            REBUILD,
        ));
    }
    Ok(Some(idx))
}

/// Verify and load a snapshot: its files' metadata, and their texts either
/// left in `files.parquet` and read page by page on use (snapshots of
/// feature 5 on, by default) or loaded into memory (older snapshots, and
/// `serve --plain-content`).
pub fn load(dir: &Path) -> Result<Snapshot, LoadError> {
    let (manifest, signature) = verify_signed(dir)?;
    load_verified(dir, manifest, signature)
}

/// Load again a snapshot this process verified already (`known`, loaded
/// from the same directory): snapshots are immutable, so when its manifest
/// is still the same the files are not hashed a second time.
pub fn reload(dir: &Path, known: &Snapshot) -> Result<Snapshot, LoadError> {
    let same = dir == known.dir
        && std::fs::read_to_string(dir.join(MANIFEST_FILE))
            .ok()
            .and_then(|t| serde_json::from_str::<Manifest>(&t).ok())
            .is_some_and(|m| m == known.manifest);
    if !same {
        return load(dir);
    }
    load_verified(dir, known.manifest.clone(), known.signature.clone())
}

fn load_verified(
    dir: &Path,
    manifest: Manifest,
    signature: Option<String>,
) -> Result<Snapshot, LoadError> {
    let paged = if COMPRESS.load(std::sync::atomic::Ordering::Relaxed) {
        crate::pages::ContentPages::open(&dir.join(files_table().file))
            .map_err(|e| err(e.to_string(), REBUILD))?
            .map(std::sync::Arc::new)
    } else {
        None
    };
    let files = match &paged {
        Some(pages) => load_paged(dir, pages)?,
        None => load_content(dir)?,
    };
    let grams = open_grams(dir, &manifest, files.len())?;
    Ok(Snapshot {
        signature,
        dir: dir.to_path_buf(),
        manifest,
        files,
        grams,
        hidden: Vec::new(),
    })
}

/// Load the overlay in force for each snapshot (verified like a snapshot),
/// hide the files it stands in for, and put it right after its base. An
/// overlay that does not verify, or amends another snapshot, is left out
/// with a warning: the base is served as it is.
pub fn with_overlays(snaps: Vec<Snapshot>) -> Vec<Snapshot> {
    let mut out = Vec::with_capacity(snaps.len());
    for mut s in snaps {
        let Some(dir) = code_index_schemas::overlay_in_force(&s.dir) else {
            out.push(s);
            continue;
        };
        match load(&dir) {
            Ok(o) if o.overlay_of() == Some(s.id()) && o.repo() == s.repo() => {
                let replaces = &o.manifest.overlay.as_ref().expect("overlay").replaces;
                s.hide(replaces);
                out.push(s);
                out.push(o);
            }
            Ok(_) => {
                tracing::warn!(
                    "{} is no overlay of {}@{}; serving the snapshot alone",
                    dir.display(),
                    s.repo(),
                    s.id()
                );
                out.push(s);
            }
            Err(e) => {
                tracing::warn!(
                    "overlay {} not loaded: {} ({}); serving the snapshot alone",
                    dir.display(),
                    e.message,
                    e.hint
                );
                out.push(s);
            }
        }
    }
    out
}

/// The files' metadata; their texts stay in their pages.
fn load_paged(
    dir: &Path,
    pages: &std::sync::Arc<crate::pages::ContentPages>,
) -> Result<Vec<FileEntry>, LoadError> {
    let reader = TableReader::open_in(
        dir,
        &files_table(),
        &[
            "path",
            "language",
            "size_bytes",
            "line_count",
            "is_test",
            "is_generated",
            "is_lossy",
            "secret_count",
        ],
    )
    .map_err(|e| err(e.to_string(), REBUILD))?
    .batch_size(8192);
    let mut files: Vec<FileEntry> = Vec::with_capacity(pages.rows());
    for batch in reader {
        let batch = batch.map_err(|e| err(e.to_string(), REBUILD))?;
        let (path, lang) = (batch.str("path"), batch.str("language"));
        let (size, lines) = (batch.i64("size_bytes"), batch.i32("line_count"));
        let (is_test, is_gen, lossy) = (
            batch.bool("is_test"),
            batch.bool("is_generated"),
            batch.bool("is_lossy"),
        );
        let secrets = batch.i32("secret_count");
        for i in 0..batch.num_rows() {
            let row = files.len();
            // A lossy conversion changes the length: read it (rare).
            let len = if lossy.value(i) {
                let (mut raw, mut out) = (Vec::new(), Vec::new());
                pages
                    .read(row, &mut raw, &mut out)
                    .map_err(|e| err(format!("files.parquet row {row}: {e}"), REBUILD))?
                    .len()
            } else {
                size.value(i) as usize
            };
            let mut f = FileEntry::paged(
                path.value(i).to_string(),
                lang.value(i).to_string(),
                size.value(i) as u64,
                is_test.value(i),
                is_gen.value(i),
                lines.value(i) as u32,
                pages.clone(),
                row as u32,
                len,
            );
            f.secrets = secrets.value(i).max(0) as u32;
            files.push(f);
        }
    }
    if files.len() != pages.rows() || !files.windows(2).all(|w| w[0].path < w[1].path) {
        return Err(err(
            "files.parquet rows are not sorted by path, or disagree with its pages",
            REBUILD,
        ));
    }
    Ok(files)
}

/// The files with their texts in memory (LZ4 or plain).
fn load_content(dir: &Path) -> Result<Vec<FileEntry>, LoadError> {
    let reader = TableReader::open_in(
        dir,
        &files_table(),
        &[
            "path",
            "language",
            "content",
            "size_bytes",
            "is_test",
            "is_generated",
            "secret_count",
        ],
    )
    .map_err(|e| err(e.to_string(), REBUILD))?
    .batch_size(8192);
    let mut files = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| err(e.to_string(), REBUILD))?;
        let (path, lang, content) = (
            batch.str("path"),
            batch.str("language"),
            batch.str("content"),
        );
        let (size, is_test, is_gen) = (
            batch.i64("size_bytes"),
            batch.bool("is_test"),
            batch.bool("is_generated"),
        );
        let secrets = batch.i32("secret_count");
        let rows: Vec<FileEntry> = (0..batch.num_rows())
            .into_par_iter()
            .map(|i| {
                let mut f = FileEntry::new(
                    path.value(i).to_string(),
                    lang.value(i).to_string(),
                    size.value(i) as u64,
                    is_test.value(i),
                    is_gen.value(i),
                    content.value(i),
                    compress_by_default(content.value(i)),
                );
                f.secrets = secrets.value(i).max(0) as u32;
                f
            })
            .collect();
        files.extend(rows);
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use code_index_schemas::SCHEMA_VERSION;
    use sha2::{Digest, Sha256};

    #[test]
    fn discover_takes_directories_the_latest_file_and_the_manifest() {
        let out = tempfile::tempdir().unwrap();
        let repo = out.path().join("repo");
        let snap = repo.join("0123456789abcdef");
        std::fs::create_dir_all(&snap).unwrap();
        std::fs::write(snap.join(MANIFEST_FILE), "{}").unwrap();
        std::fs::write(repo.join("latest"), "0123456789abcdef\n").unwrap();
        for arg in [
            snap.clone(),
            repo.clone(),
            repo.join("latest"),
            snap.join(MANIFEST_FILE),
        ] {
            assert_eq!(
                discover(&arg).unwrap(),
                vec![snap.clone()],
                "{}",
                arg.display()
            );
        }
        assert_eq!(discover(out.path()).unwrap(), vec![snap.clone()]);
        let other = repo.join("notes.txt");
        std::fs::write(&other, "x").unwrap();
        let e = discover(&other).unwrap_err();
        assert!(e.message.contains("is a file"), "{}", e.message);
        assert!(e.hint.contains("manifest.json"), "{}", e.hint);
        std::fs::write(repo.join("latest"), "gone\n").unwrap();
        let e = discover(&repo.join("latest")).unwrap_err();
        assert!(
            e.message.contains("does not name a snapshot"),
            "{}",
            e.message
        );
    }

    #[test]
    fn remembered_reads_give_each_file_its_own_text_and_end_with_the_scope() {
        let texts: Vec<String> = (0..3)
            .map(|i| format!("fn f{i}() {{}}\n").repeat(40 + i))
            .collect();
        let files: Vec<FileEntry> = texts
            .iter()
            .map(|t| FileEntry::new("a.rs".into(), "rust".into(), 0, false, false, t, true))
            .collect();
        let memo_len = || MEMO.with(|m| m.borrow().as_ref().map(|m| m.files.len()));
        assert_eq!(memo_len(), None);
        let seen = remember_reads(|| {
            let mut ok = true;
            for _ in 0..2 {
                for (f, t) in files.iter().zip(&texts) {
                    // Nested reads (of the same file and of another) inside a read.
                    ok &= f.with_content(|outer| {
                        outer == t
                            && f.with_content(|inner| inner == t)
                            && files[0].with_content(|other| other == texts[0])
                    });
                }
            }
            // A nested scope shares the outer one's files.
            ok &= remember_reads(memo_len) == Some(3);
            (ok, memo_len())
        });
        assert_eq!(seen, (true, Some(3)));
        assert_eq!(memo_len(), None, "the scope's files are dropped at its end");
        // A scope left by a panic forgets its files too.
        let r = std::panic::catch_unwind(|| {
            remember_reads(|| {
                files[1].with_content(|_| ());
                panic!("in the scope")
            })
        });
        assert!(r.is_err());
        assert_eq!(memo_len(), None);
    }

    #[test]
    fn compressed_content_reads_back_exactly() {
        let text = "def f():\n    return 1\n".repeat(50) + "tail without newline ünïcode";
        let plain = FileEntry::new(
            "a.py".into(),
            "python".into(),
            0,
            false,
            false,
            &text,
            false,
        );
        let lz = FileEntry::new("a.py".into(), "python".into(), 0, false, false, &text, true);
        assert!(
            lz.resident_bytes() < text.len() / 4,
            "{}",
            lz.resident_bytes()
        );
        assert_eq!(plain.resident_bytes(), text.len());
        for f in [&plain, &lz] {
            assert_eq!(f.content(), text);
            assert_eq!(f.content_len(), text.len());
            assert_eq!(f.lines, 101);
            assert_eq!(f.with_bytes(|b| b.len()), text.len());
            // Nested use on one thread (the inner call gets its own buffer).
            let both =
                f.with_content(|outer| f.with_content(|inner| outer == inner && inner == text));
            assert!(both);
        }
        let empty = FileEntry::new(
            "e".into(),
            "text".into(),
            0,
            false,
            false,
            "",
            compress_by_default(""),
        );
        assert_eq!(
            (empty.lines, empty.content(), empty.content_len()),
            (0, String::new(), 0)
        );
    }

    #[test]
    fn fuzz_manifest_reader() {
        use code_index_schemas::fuzz;
        use proptest::prelude::*;
        let dir = tempfile::tempdir().unwrap();
        let snap = dir.path().join("snap");
        std::fs::create_dir_all(&snap).unwrap();
        std::fs::write(snap.join("a.bin"), b"hello").unwrap();
        // A file beside the snapshot that no manifest may reach.
        std::fs::write(dir.path().join("outside"), b"hello").unwrap();
        let hello_sha = hex::encode(Sha256::digest(b"hello"));
        let name = prop_oneof![
            Just("a.bin".to_string()),
            Just("../outside".to_string()),
            Just("/etc/hostname".to_string()),
            Just("..".to_string()),
            Just("".to_string()),
            Just(MANIFEST_FILE.to_string()),
            "[a-z./]{1,8}",
            any::<String>(),
        ];
        let file = (name, 0u64..8, any::<bool>()).prop_map(move |(n, bytes, good_sha)| {
            serde_json::json!({"name": n, "rows": 0, "bytes": bytes,
                "sha256": if good_sha { hello_sha.clone() } else { "0".repeat(64) }})
        });
        let version = prop_oneof![
            Just(serde_json::json!(SCHEMA_VERSION)),
            Just(serde_json::json!(-1)),
            Just(serde_json::json!("1")),
            Just(serde_json::json!(u64::MAX))
        ];
        let manifest = (version, prop::collection::vec(file, 0..4), any::<bool>(), any::<bool>()).prop_map(|(v, files, drop_key, garbage)| {
            if garbage {
                return "{\"schema_version\": ".to_string();
            }
            let mut m = serde_json::json!({
                "schema_version": v, "feature_version": 1, "tool": "code-indexer", "tool_version": "0",
                "repo": "r", "git": {"commit": null, "branch": null, "commit_time": null, "dirty": false},
                "config_hash": "x", "input_hash": "x", "snapshot_id": "0123456789abcdef", "files": files,
                "skipped": {"default_excluded": 0, "config_excluded": 0, "too_large": 0, "binary": 0, "unreadable": 0},
                "embeddings": null
            });
            if drop_key {
                m.as_object_mut().unwrap().remove("git");
            }
            m.to_string()
        });
        fuzz::run("manifest_reader", manifest, |text| {
            std::fs::write(snap.join(MANIFEST_FILE), &text).unwrap();
            match verify(&snap) {
                Ok(m) => {
                    for f in &m.files {
                        prop_assert_eq!(
                            &f.name,
                            "a.bin",
                            "verified a manifest naming {:?}",
                            f.name
                        );
                    }
                }
                Err(e) => {
                    prop_assert_eq!(e.code, Code::SnapshotInvalid);
                    prop_assert!(!e.hint.is_empty());
                }
            }
            Ok(())
        });
    }
}
