//! The batch run: what waits for a vector, and embedding what the cache lacks.

use code_index_schemas::embed::Embedder;

use super::Cache;
use crate::error::Result;

/// One chunk waiting for its vector.
pub struct Pending {
    pub id: i64,
    pub key: [u8; 32],
    /// The model input.
    pub input: String,
    /// The chunk comes from a file reused unchanged from `--previous`.
    pub reused: bool,
}

/// What the embedding step did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Stats {
    pub chunks: u64,
    pub from_cache: u64,
    pub embedded: u64,
    pub seconds: f64,
}

/// Vectors in `items` order: cached ones from `cache`, the rest embedded
/// (smallest first by the model's [`Embedder::sizes`], so batches carry
/// little padding) and added to the cache
/// batch by batch (a killed build keeps what it paid for).
pub fn run(
    items: &[Pending],
    embedder: &dyn Embedder,
    cache: &mut Cache,
    progress: bool,
) -> Result<(Vec<f32>, usize, Stats)> {
    let started = std::time::Instant::now();
    let mut stats = Stats {
        chunks: items.len() as u64,
        ..Stats::default()
    };
    let mut todo: Vec<usize> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, p) in items.iter().enumerate() {
        if cache.get(&p.key).is_some() {
            stats.from_cache += 1;
        } else if seen.insert(p.key) {
            todo.push(i);
        }
    }
    let texts: Vec<&str> = todo.iter().map(|&i| items[i].input.as_str()).collect();
    let sizes = embedder.sizes(&texts);
    let mut order: Vec<usize> = (0..todo.len()).collect();
    order.sort_by_key(|&k| (sizes.get(k).copied().unwrap_or(0), texts[k].len(), todo[k]));
    let todo: Vec<usize> = order.into_iter().map(|k| todo[k]).collect();
    let bar =
        (progress && !todo.is_empty() && std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .then(|| progress_bar(todo.len() as u64));
    let bs = embedder.batch_size().max(1);
    for batch in todo.chunks(bs) {
        let texts: Vec<String> = batch.iter().map(|&i| items[i].input.clone()).collect();
        let vecs = embedder.embed_documents(&texts)?;
        stats.embedded += batch.len() as u64;
        cache.put(batch.iter().map(|&i| items[i].key).zip(vecs).collect())?;
        if let Some(b) = &bar {
            b.inc(batch.len() as u64);
        }
    }
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let dim = items
        .first()
        .and_then(|p| cache.get(&p.key))
        .map(|v| v.len())
        .unwrap_or(0);
    let mut data = Vec::with_capacity(items.len() * dim);
    for p in items {
        data.extend_from_slice(cache.get(&p.key).expect("every key was embedded"));
    }
    stats.embedded = todo.len() as u64;
    stats.seconds = started.elapsed().as_secs_f64();
    Ok((data, dim, stats))
}

/// The bar shown on a terminal while `len` inputs are embedded.
fn progress_bar(len: u64) -> indicatif::ProgressBar {
    let b = indicatif::ProgressBar::new(len);
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} embedding [{bar:40}] {pos}/{len} chunks {per_sec} eta {eta}",
        )
        .unwrap()
        .progress_chars("=> "),
    );
    b
}
