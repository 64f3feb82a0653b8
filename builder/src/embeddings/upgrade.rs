//! `upgrade-embeddings`: re-embed a snapshot's chunks with another model into
//! a new snapshot (tables copied, vectors and manifest new).

use std::collections::HashSet;
use std::path::Path;

use code_index_schemas::embed::{ModelSpec, VECTORS_FILE};
use code_index_schemas::{EmbeddingInfo, Manifest, ManifestFile};

use super::{run, snapshot_items, Cache, Pending, Stats, INPUT_DOC};
use crate::error::{codes, Error, Result};

/// What `upgrade-embeddings` did.
#[derive(Debug, serde::Serialize)]
pub struct UpgradeSummary {
    pub snapshot_id: String,
    pub snapshot_dir: String,
    pub model: String,
    pub stats: Stats,
}

/// How `upgrade` embeds.
#[derive(Clone, Copy)]
pub struct UpgradeOptions<'a> {
    pub model: &'a str,
    pub cache_dir: Option<&'a Path>,
    pub flat_max: usize,
    pub progress: bool,
    /// Only announce the count.
    pub dry_run: bool,
}

/// Re-embed a snapshot's chunks with another model into a new snapshot
/// under `out` (tables are copied unchanged; vectors and manifest are new).
/// `announce` hears how many inputs will be embedded before any is; with
/// `dry_run` nothing else happens.
pub fn upgrade(
    snapshot: &Path,
    out: &Path,
    opts: &UpgradeOptions,
    announce: &mut dyn FnMut(usize, usize, usize, &str),
) -> Result<Option<UpgradeSummary>> {
    let UpgradeOptions {
        model,
        cache_dir,
        flat_max,
        progress,
        dry_run,
    } = *opts;
    let src = crate::snapshot::resolve_dir(snapshot)?;
    let mut manifest = crate::snapshot::read_manifest(&src)?;
    let spec = ModelSpec::parse(model)?;
    let model_id = spec.id();
    let sha256 = code_index_schemas::embed::weights_sha256(&spec);
    let key_id = code_index_schemas::embed::cache_key_id(&spec, sha256.as_deref());
    let mut cache = match cache_dir {
        Some(d) => Cache::open(d, &key_id)?,
        None => Cache::memory(),
    };
    let items = snapshot_items(&src, &key_id)?;
    let (todo, chunks) = counts(&items, &cache);
    announce(todo, items.len(), chunks, &model_id);
    if dry_run {
        return Ok(None);
    }
    let embedder = code_index_schemas::embed::open(&spec)?;
    let (data, dim, stats) = run(&items, embedder.as_ref(), &mut cache, progress)?;
    let tmp = crate::snapshot::begin(out, &manifest.repo)?;
    let mut files = copy_tables(&src, &tmp.dir, &manifest)?;
    let ids: Vec<i64> = items.iter().map(|p| p.id).collect();
    manifest.embeddings = None;
    if !ids.is_empty() {
        let (file, info) = write_vectors(&tmp.dir, &ids, &data, dim, flat_max, &model_id, sha256)?;
        files.push(file);
        manifest.embeddings = Some(info);
    }
    manifest.files = files;
    manifest.snapshot_id = String::new();
    manifest.snapshot_id = crate::snapshot::derive_id(&manifest);
    let dest = crate::snapshot::commit(tmp, &manifest)?;
    Ok(Some(UpgradeSummary {
        snapshot_id: manifest.snapshot_id.clone(),
        snapshot_dir: dest.display().to_string(),
        model: model_id,
        stats,
    }))
}

/// How many distinct inputs the cache lacks, and how many chunks there are.
fn counts(items: &[Pending], cache: &Cache) -> (usize, usize) {
    let mut distinct = HashSet::new();
    let todo = items
        .iter()
        .filter(|p| cache.get(&p.key).is_none() && distinct.insert(p.key))
        .count();
    let chunks = items.iter().map(|p| p.id).collect::<HashSet<_>>().len();
    (todo, chunks)
}

/// Link (or copy) the snapshot's Parquet tables, n-gram, keyword and heads indexes
/// from `src` into `dir`; their manifest entries, unchanged.
fn copy_tables(src: &Path, dir: &Path, manifest: &Manifest) -> Result<Vec<ManifestFile>> {
    let mut files = Vec::new();
    for f in manifest.files.iter().filter(|f| {
        f.name.ends_with(".parquet")
            || f.name == code_index_schemas::ngram::NGRAM_FILE
            || f.name == code_index_schemas::keyword::KEYWORD_FILE
            || f.name == code_index_schemas::heads::HEADS_FILE
    }) {
        let (from, to) = (src.join(&f.name), dir.join(&f.name));
        if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).map_err(|e| {
                Error::io(
                    codes::WRITE,
                    "cannot copy",
                    &to,
                    e,
                    "check the --out directory",
                )
            })?;
        }
        files.push(f.clone());
    }
    Ok(files)
}

/// Write the vectors file into `dir`: its manifest entry and embedding info.
fn write_vectors(
    dir: &Path,
    ids: &[i64],
    data: &[f32],
    dim: usize,
    flat_max: usize,
    model_id: &str,
    model_sha256: Option<String>,
) -> Result<(ManifestFile, EmbeddingInfo)> {
    let vpath = dir.join(VECTORS_FILE);
    let layout = code_index_schemas::vectors::write(&vpath, ids, data, dim, flat_max)?;
    let file = crate::snapshot::describe(dir, VECTORS_FILE, ids.len() as u64)?;
    let info = EmbeddingInfo {
        model: model_id.to_string(),
        dimension: dim as u32,
        metric: code_index_schemas::embed::METRIC.into(),
        normalized: true,
        index: layout,
        count: ids.len() as u64,
        input: INPUT_DOC.into(),
        model_sha256,
    };
    Ok((file, info))
}
