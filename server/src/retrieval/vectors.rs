//! Vector search: each snapshot's `vectors.faiss`, the query embedders
//! (opened once per model) and a small cache of query vectors.

use code_index_schemas::vectors::Vectors;

use super::*;

/// Per-snapshot vectors.
pub struct SnapVectors {
    pub model: String,
    /// sha256 of the weights that made the vectors (`embeddings.model_sha256`).
    pub model_sha256: Option<String>,
    pub vectors: Vectors,
    /// Vector row → chunk index.
    pub chunk_of_row: Vec<u32>,
}

pub(crate) fn load_vectors(
    s: &Snapshot,
    chunks: &[ChunkMeta],
    base: usize,
) -> Result<SnapVectors, String> {
    let Some(info) = &s.manifest.embeddings else {
        return Err("the snapshot was built with --no-embeddings".into());
    };
    let path = s.dir.join(embed::VECTORS_FILE);
    let vectors = code_index_schemas::vectors::read(&path).map_err(|e| e.message)?;
    let by_id: HashMap<i64, u32> = chunks
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id, (base + i) as u32))
        .collect();
    let chunk_of_row = vectors
        .ids
        .iter()
        .map(|id| by_id.get(id).copied().unwrap_or(NO_CHUNK))
        .collect();
    Ok(SnapVectors {
        model: info.model.clone(),
        model_sha256: info.model_sha256.clone(),
        vectors,
        chunk_of_row,
    })
}

/// Inner product, in eight lanes so that the compiler vectorizes it (a
/// plain sum of products is a serial chain of float additions).
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// The `k` best chunks of (chunk, score) rows, a chunk scored by its best
/// row (a definition has several vectors), best first. Sorts only the best
/// rows: the first `k` distinct chunks among the rows in score order are
/// the answer, so the cut widens until it holds `k` of them (a hash map of
/// every row's chunk cost Django's 66k rows about 6 ms a query).
pub(crate) fn best_per_chunk(mut rows: Vec<(u32, f32)>, k: usize) -> Vec<(usize, f32)> {
    let cmp = |a: &(u32, f32), b: &(u32, f32)| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    };
    let mut m = (k * 4).max(1);
    loop {
        let cut = m.min(rows.len());
        if cut < rows.len() {
            rows.select_nth_unstable_by(cut, cmp);
        }
        let head = &mut rows[..cut];
        head.sort_by(cmp);
        let mut seen = HashSet::with_capacity(k);
        let out: Vec<(usize, f32)> = head
            .iter()
            .filter(|(c, _)| seen.insert(*c))
            .take(k)
            .map(|&(c, s)| (c as usize, s))
            .collect();
        if out.len() >= k || cut == rows.len() {
            return out;
        }
        m *= 2;
    }
}

/// Rows per parallel block of the exact scan.
const SCAN_BLOCK: usize = 4096;

/// `chunk_of_row` of a vector whose id matches no chunk (skipped by every search).
pub(crate) const NO_CHUNK: u32 = u32::MAX;

impl Engine {
    /// The embedder for a model id and the sha256 of the weights file it was
    /// opened from (opened once; failures are remembered).
    fn opened(&self, model: &str) -> OpenedModel {
        let mut m = crate::guard::lock(&self.embedders);
        if let Some(r) = m.get(model) {
            return r.clone();
        }
        let r = ModelSpec::parse(model).and_then(|spec| {
            // The digest of the bytes the session is about to load.
            let sha = embed::weights_sha256(&spec);
            Ok((Arc::from(embed::open(&spec)?), sha))
        });
        m.insert(model.to_string(), r.clone());
        r
    }

    /// The embedder for a model id (opened once; failures are remembered).
    pub fn embedder(&self, model: &str) -> Result<Arc<dyn Embedder>, embed::EmbedError> {
        self.opened(model).map(|(e, _)| e)
    }

    /// Whether this server's weights for `sv`'s model are the ones that made
    /// its vectors (`MODEL_MISMATCH` when not, opening the model if need be).
    /// A snapshot that records no digest (remote models, older snapshots)
    /// passes.
    pub fn check_weights(&self, sv: &SnapVectors) -> Result<(), embed::EmbedError> {
        let (_, have) = self.opened(&sv.model)?;
        match (&sv.model_sha256, have) {
            (Some(want), Some(have)) if &have != want => Err(embed::EmbedError::new(
                code_index_schemas::diag::Code::ModelMismatch,
                format!(
                    "its vectors were made by weights with sha256 {}…, this server's model file has {}…",
                    &want[..want.len().min(12)],
                    &have[..have.len().min(12)]
                ),
                "point CODE_INDEX_MODEL_DIR at the model the snapshot was built with, or rebuild it",
            )),
            _ => Ok(()),
        }
    }

    /// The query's vector under `model` (cached).
    pub fn query_vector(&self, model: &str, q: &str) -> Result<Arc<Vec<f32>>, embed::EmbedError> {
        if let Some((_, _, v)) = crate::guard::lock(&self.query_cache)
            .iter()
            .find(|(m, t, _)| m == model && t == q)
        {
            return Ok(v.clone());
        }
        let v = Arc::new(self.embedder(model)?.embed_query(&embed::naturalize(q))?);
        let mut c = crate::guard::lock(&self.query_cache);
        c.push((model.to_string(), q.to_string(), v.clone()));
        if c.len() > 128 {
            c.remove(0);
        }
        Ok(v)
    }

    /// Chunks by vector similarity (cosine), best first, among `allowed`.
    pub fn semantic(
        &self,
        si: usize,
        qv: &[f32],
        allowed: &Allowed,
        k: usize,
    ) -> Vec<(usize, f32)> {
        let Some(Ok(sv)) = self.vectors.get(si) else {
            return Vec::new();
        };
        let v = &sv.vectors;
        if let Some(ivf) = &v.ivf {
            let want = (k * 20).min(v.len()).max(1);
            // The lock is held for FAISS's search only, never across our code.
            let res = {
                let mut idx = crate::guard::lock(ivf);
                faiss::Index::search(&mut *idx, qv, want)
            };
            let Ok(res) = res else {
                return Vec::new();
            };
            let row_of: HashMap<i64, usize> =
                v.ids.iter().enumerate().map(|(r, &id)| (id, r)).collect();
            let mut seen = std::collections::HashSet::new();
            return res
                .labels
                .iter()
                .zip(res.distances.iter())
                .filter_map(|(l, d)| {
                    let id = l.get()? as i64;
                    let ci = *sv.chunk_of_row.get(*row_of.get(&id)?)?;
                    // A vector whose id matches no chunk is skipped.
                    if ci == NO_CHUNK {
                        return None;
                    }
                    let ci = ci as usize;
                    (allowed(ci) && seen.insert(ci)).then_some((ci, *d))
                })
                .take(k)
                .collect();
        }
        // Blocks of rows; a chunk's rows are adjacent, so the filter runs
        // once per chunk, not once per row.
        let rows: Vec<(u32, f32)> = sv
            .chunk_of_row
            .par_chunks(SCAN_BLOCK)
            .enumerate()
            .flat_map_iter(|(b, block)| {
                let mut last = (NO_CHUNK, false);
                block.iter().enumerate().filter_map(move |(j, &ci)| {
                    if ci != last.0 {
                        last = (ci, ci != NO_CHUNK && allowed(ci as usize));
                    }
                    last.1.then(|| (ci, dot(v.row(b * SCAN_BLOCK + j), qv)))
                })
            })
            .collect();
        best_per_chunk(rows, k)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn best_per_chunk_scores_a_chunk_by_its_best_row() {
        // Chunk 7 has many good rows: the cut must widen past them.
        let mut rows: Vec<(u32, f32)> = (0..50).map(|i| (7, 0.9 - i as f32 * 0.001)).collect();
        rows.extend([(1, 0.5), (2, 0.6), (1, 0.95), (3, 0.1), (2, 0.2)]);
        let got = super::best_per_chunk(rows.clone(), 3);
        assert_eq!(got, vec![(1, 0.95), (7, 0.9), (2, 0.6)]);
        let all = super::best_per_chunk(rows, 10);
        assert_eq!(all.len(), 4);
        assert_eq!(all[3], (3, 0.1));
    }

    #[test]
    fn dot_in_lanes_equals_the_plain_sum() {
        for n in [0usize, 1, 5, 8, 13, 384] {
            let a: Vec<f32> = (0..n).map(|i| ((i * 7 % 11) as f32 - 5.0) / 3.0).collect();
            let b: Vec<f32> = (0..n).map(|i| ((i * 3 % 13) as f32 - 6.0) / 7.0).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let d = super::dot(&a, &b);
            assert!(
                (d - plain).abs() <= 1e-4 * (1.0 + plain.abs()),
                "{n}: {d} vs {plain}"
            );
        }
    }
}
