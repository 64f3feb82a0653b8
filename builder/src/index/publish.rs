//! The last phases: vectors (when embeddings are on), the manifest and the
//! rename that publishes the snapshot, and the summary of the build.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use code_index_schemas::embed::{METRIC, VECTORS_FILE};
use code_index_schemas::{
    EmbeddingInfo, Manifest, ManifestFile, SkipCounts, BUILDER_NAME, FEATURE_VERSION,
    SCHEMA_VERSION,
};

use super::analyse::Totals;
use super::prepare::Model;
use super::{Build, Summary, TableSummary};
use crate::embeddings::{Pending, Stats, INPUT_DOC};
use crate::error::Result;
use crate::ids::sha256_hex;
use crate::patterns::Pattern;
use crate::snapshot::{self, TempSnapshot};

/// What the embedding phase adds to the snapshot.
#[derive(Default)]
pub(super) struct Vectors {
    /// The vectors file, when there is one.
    pub file: Option<ManifestFile>,
    pub info: Option<EmbeddingInfo>,
    pub stats: Option<Stats>,
}

/// Embed the queued chunks and the patterns, and write the vectors file.
pub(super) fn embed(
    b: &Build,
    dir: &Path,
    model: Option<Model>,
    pending: Option<(String, Vec<Pending>)>,
    pats: &[Pattern],
    previous: &Option<(PathBuf, Option<EmbeddingInfo>)>,
) -> Result<Vectors> {
    let (Some(mut model), Some((key_id, mut items))) = (model, pending) else {
        return Ok(Vectors::default());
    };
    let model_id = model.id();
    for p in pats {
        items.push(Pending {
            id: p.id,
            key: crate::embeddings::key(&key_id, &p.text),
            input: p.text.clone(),
            reused: false,
        });
    }
    // Unchanged files of a previous snapshot with the same model: its vectors seed the cache.
    if let Some((pdir, Some(pe))) = previous {
        // Same weights: the recorded sha256, or, for a snapshot from before it
        // was recorded, the pinned weights (as the embedding cache assumes).
        let same_weights = match &pe.model_sha256 {
            Some(s) => Some(s) == model.sha256.as_ref(),
            None => key_id == model_id,
        };
        if pe.model == model_id && same_weights && pe.input == INPUT_DOC {
            crate::embeddings::seed_from_snapshot(&mut model.cache, pdir, &items);
        }
    }
    let (data, dim, stats) = crate::embeddings::run(
        &items,
        model.embedder.as_ref(),
        &mut model.cache,
        b.opts.progress,
    )?;
    let ids: Vec<i64> = items.iter().map(|p| p.id).collect();
    let mut out = Vectors::default();
    if !ids.is_empty() {
        let layout = code_index_schemas::vectors::write(
            &dir.join(VECTORS_FILE),
            &ids,
            &data,
            dim,
            model.flat_max,
        )?;
        out.file = Some(snapshot::describe(dir, VECTORS_FILE, ids.len() as u64)?);
        out.info = Some(EmbeddingInfo {
            model: model_id,
            dimension: dim as u32,
            metric: METRIC.into(),
            normalized: true,
            index: layout,
            count: ids.len() as u64,
            input: INPUT_DOC.into(),
            model_sha256: model.sha256.clone(),
        });
    }
    out.stats = Some(stats);
    b.timer.phase("embeddings");
    Ok(out)
}

/// Write the manifest (its id derived from its content) and rename the temp
/// directory into place.
pub(super) fn publish(
    b: &Build,
    tmp: TempSnapshot,
    files: Vec<ManifestFile>,
    embeddings: Option<EmbeddingInfo>,
    skipped: &SkipCounts,
    input: &str,
) -> Result<(Manifest, PathBuf)> {
    let input_hash = sha256_hex(format!("{}\n{}", b.cfg.hash, input).as_bytes());
    let mut manifest = Manifest {
        schema_version: SCHEMA_VERSION,
        feature_version: FEATURE_VERSION,
        tool: BUILDER_NAME.to_string(),
        tool_version: crate::TOOL_VERSION.to_string(),
        repo: b.name.clone(),
        git: b.git.clone(),
        config_hash: b.cfg.hash.clone(),
        input_hash,
        snapshot_id: String::new(),
        skipped: skipped.clone(),
        embeddings,
        files,
        overlay: b
            .opts
            .overlay
            .as_ref()
            .map(|o| code_index_schemas::OverlayInfo {
                base: o.base.clone(),
                replaces: o.replaces.iter().cloned().collect(),
            }),
    };
    b.timer.phase("finish tables");
    manifest.snapshot_id = snapshot::derive_id(&manifest);
    let dest = snapshot::commit(tmp, &manifest)?;
    Ok((manifest, dest))
}

/// What the build did, for the CLI.
pub(super) fn summary(
    b: &Build,
    manifest: &Manifest,
    dest: &Path,
    totals: Totals,
    previous_ignored: Option<String>,
    embeddings: Option<Stats>,
) -> Summary {
    let mut tables = BTreeMap::new();
    let mut snapshot_bytes = 0;
    for f in &manifest.files {
        snapshot_bytes += f.bytes;
        tables.insert(
            f.name.trim_end_matches(".parquet").to_string(),
            TableSummary {
                rows: f.rows,
                bytes: f.bytes,
            },
        );
    }
    Summary {
        snapshot_id: manifest.snapshot_id.clone(),
        snapshot_dir: dest.display().to_string(),
        repo: b.name.clone(),
        files: manifest.files[0].rows,
        reused_files: totals.reused,
        previous: b.opts.previous.as_ref().map(|p| p.display().to_string()),
        previous_ignored,
        skipped: totals.skipped,
        source_bytes: totals.source_bytes,
        snapshot_bytes,
        tables,
        embeddings,
        seconds: b.timer.started.elapsed().as_secs_f64(),
    }
}
