//! What a build settles before it writes anything: the embedding model, the
//! secrets and unreadable-file gates, modules, and what a previous snapshot
//! can lend.

use std::collections::HashMap;
use std::path::PathBuf;

use code_index_schemas::EmbeddingInfo;
use rayon::prelude::*;

use super::{unreadable_error, Build, Options};
use crate::config::SecretsAction;
use crate::embeddings::Cache;
use crate::error::{codes, Error, Result};
use crate::modules::Modules;
use crate::previous::Previous;
use crate::snapshot;
use crate::walk::WalkResult;

/// The embedding model with its vector cache.
pub(super) struct Model {
    pub embedder: Box<dyn code_index_schemas::embed::Embedder>,
    pub cache: Cache,
    /// Most vectors in an exact Flat index.
    pub flat_max: usize,
    /// sha256 of the local model's weights file (`None`: a remote model).
    pub sha256: Option<String>,
    /// The id its vectors are cached under (`embed::cache_key_id`).
    pub key_id: String,
}

impl Model {
    pub fn id(&self) -> String {
        self.embedder.model_id()
    }
}

/// Open the model (and its cache) when embeddings are on.
pub(super) fn open_model(opts: &Options) -> Result<Option<Model>> {
    let Some(eo) = &opts.embeddings else {
        return Ok(None);
    };
    let spec = code_index_schemas::embed::ModelSpec::parse(&eo.model)?;
    let embedder = code_index_schemas::embed::open(&spec)?;
    let sha256 = code_index_schemas::embed::weights_sha256(&spec);
    let key_id = code_index_schemas::embed::cache_key_id(&spec, sha256.as_deref());
    let cache = match &eo.cache_dir {
        Some(d) => Cache::open(d, &key_id)?,
        None => Cache::memory(),
    };
    Ok(Some(Model {
        embedder,
        cache,
        flat_max: eo.flat_max,
        sha256,
        key_id,
    }))
}

/// With `secrets: fail`, any secret found stops the build here.
pub(super) fn secrets_gate(b: &Build, walked: &WalkResult) -> Result<()> {
    let action = b
        .opts
        .secrets
        .or(b.cfg.config.secrets.action)
        .unwrap_or(SecretsAction::Redact);
    if action == SecretsAction::Fail {
        let found = crate::secrets::scan(&walked.entries, &b.cfg, &b.pool);
        if !found.is_empty() {
            return Err(crate::secrets::gate_error(&found));
        }
    }
    Ok(())
}

/// A path whose metadata could not be read fails the build unless
/// `--skip-unreadable`.
pub(super) fn unreadable_gate(b: &Build, walked: &WalkResult) -> Result<()> {
    if let Some(p) = walked.unreadable.first() {
        if !b.opts.skip_unreadable {
            return Err(unreadable_error(&b.root, p, "cannot read metadata"));
        }
    }
    Ok(())
}

pub(super) fn infer_modules(b: &Build, walked: &WalkResult) -> Modules {
    let paths: Vec<String> = walked.entries.iter().map(|e| e.rel.clone()).collect();
    Modules::infer(&b.root, &paths, &b.cfg.config)
}

/// What a previous snapshot (`--previous`) lends the build.
#[derive(Default)]
pub(super) struct Reuse {
    /// Why it was not used (incompatible schema or config).
    pub ignored: Option<String>,
    /// Rows of the files whose content is unchanged.
    pub rows: Option<Previous>,
    /// Its directory and embeddings (to seed the vector cache).
    pub dir: Option<(PathBuf, Option<EmbeddingInfo>)>,
}

/// Previous snapshot: hash current files first, then load only matching rows.
pub(super) fn load_previous(b: &Build, walked: &WalkResult) -> Result<Reuse> {
    let Some(pdir) = &b.opts.previous else {
        return Ok(Reuse::default());
    };
    let pdir = snapshot::resolve_dir(pdir)
        .map_err(|e| Error::new(codes::PREVIOUS_INVALID, e.message, e.hint))?;
    let pm = snapshot::read_manifest(&pdir)?;
    if let Some(why) = crate::previous::incompatibility(&pm, &b.cfg.hash) {
        return Ok(Reuse {
            ignored: Some(why),
            ..Reuse::default()
        });
    }
    // Files outside `changed` keep the previous snapshot's hash unread.
    let known: HashMap<String, String> = match &b.opts.changed {
        Some(changed) => crate::previous::hashes(&pdir)?
            .into_iter()
            .filter(|(p, _)| !changed.contains(p))
            .collect(),
        None => HashMap::new(),
    };
    let hashes: HashMap<String, String> = b.pool.install(|| {
        walked
            .entries
            .par_iter()
            .filter_map(|e| {
                if let Some(sha) = known.get(&e.rel) {
                    return Some((e.rel.clone(), sha.clone()));
                }
                std::fs::read(&e.abs).ok().map(|bytes| {
                    let sha = crate::analyze::published_sha256(&e.rel, bytes, &b.cfg);
                    (e.rel.clone(), sha)
                })
            })
            .collect()
    });
    Ok(Reuse {
        ignored: None,
        rows: Some(crate::previous::load(&pdir, &hashes)?),
        dir: Some((pdir, pm.embeddings.clone())),
    })
}
