//! Vector search: each snapshot's `vectors.faiss`, the query embedders
//! (opened once per model) and a small cache of query vectors.

use code_index_schemas::vectors::Vectors;

use super::*;

/// Per-snapshot vectors.
pub struct SnapVectors {
    pub model: String,
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
        vectors,
        chunk_of_row,
    })
}

/// `chunk_of_row` of a vector whose id matches no chunk (skipped by every search).
pub(crate) const NO_CHUNK: u32 = u32::MAX;

impl Engine {
    /// The embedder for a model id (opened once; failures are remembered).
    pub fn embedder(&self, model: &str) -> Result<Arc<dyn Embedder>, embed::EmbedError> {
        let mut m = crate::guard::lock(&self.embedders);
        if let Some(r) = m.get(model) {
            return r.clone();
        }
        let r = ModelSpec::parse(model)
            .and_then(|spec| embed::open(&spec))
            .map(Arc::from);
        m.insert(model.to_string(), r.clone());
        r
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
        let scored: Vec<(usize, f32)> = (0..v.len())
            .into_par_iter()
            .filter_map(|r| {
                let ci = sv.chunk_of_row[r];
                if ci == NO_CHUNK || !allowed(ci as usize) {
                    return None;
                }
                let row = v.row(r);
                let s: f32 = row.iter().zip(qv).map(|(a, b)| a * b).sum();
                Some((ci as usize, s))
            })
            .collect();
        // A chunk may have several vectors (definition windows): keep its best.
        let mut best: HashMap<usize, f32> = HashMap::with_capacity(scored.len());
        for (ci, s) in scored {
            let e = best.entry(ci).or_insert(f32::MIN);
            if s > *e {
                *e = s;
            }
        }
        let mut scored: Vec<(usize, f32)> = best.into_iter().collect();
        top_k(&mut scored, k);
        scored
    }
}
