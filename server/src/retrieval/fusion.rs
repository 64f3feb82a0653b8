//! Fusion of the keyword and vector lists: weighted reciprocal-rank fusion
//! (default) or a linear blend (`CODE_INDEX_FUSION`).

use super::*;

/// Weighted reciprocal rank fusion: a document at 0-based rank r of a list
/// with weight w scores w / (k + r + 1), summed over the lists.
pub fn rrf(lists: &[(&[(usize, f32)], f32)], k: f32) -> Vec<(usize, f32)> {
    let mut acc: HashMap<usize, f32> = HashMap::new();
    for (l, w) in lists {
        for (rank, (d, _)) in l.iter().enumerate() {
            *acc.entry(*d).or_insert(0.0) += w / (k + rank as f32 + 1.0);
        }
    }
    let mut v: Vec<(usize, f32)> = acc.into_iter().collect();
    let n = v.len();
    top_k(&mut v, n);
    v
}

/// Reciprocal-rank fusion constant k (score of rank r: w / (k + r)).
pub(crate) const RRF_K: f32 = 20.0;
/// Weight of the semantic list in the fusion (keyword: 1).
pub(crate) const RRF_SEMANTIC_WEIGHT: f32 = 2.0;

/// How hybrid mode fuses its two lists.
#[derive(Clone, Copy)]
enum Fusion {
    /// Weighted reciprocal rank: k, semantic weight.
    Rrf(f32, f32),
    /// Max-normalized keyword score and cosine, A on the semantic side.
    Linear(f32),
}

/// The fusion in use: weighted reciprocal rank, k = 20 and semantic weight 2
/// (chosen with `bench/eval_search.py`; plain k = 60 scored MRR@10 0.440 /
/// 0.398 on the Go / Python sets, this 0.491 / 0.414).
/// `CODE_INDEX_FUSION=rrf:K:W` or `linear:A` override it for experiments;
/// the variable is read once.
fn fusion() -> Fusion {
    static F: std::sync::OnceLock<Fusion> = std::sync::OnceLock::new();
    *F.get_or_init(|| {
        let how = std::env::var("CODE_INDEX_FUSION").unwrap_or_default();
        if let Some(a) = how.strip_prefix("linear:").and_then(|a| a.parse().ok()) {
            return Fusion::Linear(a);
        }
        let mut it = how
            .strip_prefix("rrf:")
            .unwrap_or("")
            .split(':')
            .map(|x| x.parse::<f32>().ok());
        let k = it.next().flatten().unwrap_or(RRF_K);
        let w = it.next().flatten().unwrap_or(RRF_SEMANTIC_WEIGHT);
        Fusion::Rrf(k, w)
    })
}

/// Fuse the keyword and semantic lists (see [`fusion`]).
pub(crate) fn fuse(kw: &[(usize, f32)], sem: &[(usize, f32)]) -> Vec<(usize, f32)> {
    match fusion() {
        Fusion::Rrf(k, w) => rrf(&[(kw, 1.0), (sem, w)], k),
        Fusion::Linear(a) => {
            let mk = kw.iter().map(|x| x.1).fold(f32::MIN, f32::max).max(1e-6);
            let mut acc: HashMap<usize, f32> = HashMap::new();
            for (i, s) in kw {
                *acc.entry(*i).or_insert(0.0) += (1.0 - a) * s / mk;
            }
            for (i, s) in sem {
                *acc.entry(*i).or_insert(0.0) += a * s.max(0.0);
            }
            let mut v: Vec<(usize, f32)> = acc.into_iter().collect();
            let n = v.len();
            top_k(&mut v, n);
            v
        }
    }
}
