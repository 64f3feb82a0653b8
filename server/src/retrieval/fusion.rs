//! Fusion of the keyword and vector lists: weighted reciprocal-rank fusion
//! (default); score-aware blends for comparison (`CODE_INDEX_FUSION`,
//! measured in bench/results/ranking.md).

use super::*;

/// Weighted reciprocal rank fusion: a document at 0-based rank r of a list
/// with weight w scores w / (k + r + 1), summed over the lists.
pub fn rrf(lists: &[(&[(usize, f32)], f32)], k: f32) -> Vec<(usize, f32)> {
    let lists: Vec<_> = lists.iter().map(|&(l, w)| (l, w, None)).collect();
    rrf_scaled(&lists, k)
}

/// A ranked list for [`rrf_scaled`]: its entries (best first), its weight,
/// and a scale per entry (none: 1).
type Scaled<'a> = (&'a [(usize, f32)], f32, Option<&'a [f32]>);

/// [`rrf`] with each entry's term multiplied by its scale.
fn rrf_scaled(lists: &[Scaled], k: f32) -> Vec<(usize, f32)> {
    sum_scores(lists.iter().flat_map(|&(l, w, scale)| {
        l.iter().enumerate().map(move |(rank, (d, _))| {
            let s = scale.and_then(|s| s.get(rank)).copied().unwrap_or(1.0);
            (*d, w * s / (k + rank as f32 + 1.0))
        })
    }))
}

/// Per-document sums of (document, score) pairs, best first.
fn sum_scores(parts: impl Iterator<Item = (usize, f32)>) -> Vec<(usize, f32)> {
    let mut acc: HashMap<usize, f32> = HashMap::new();
    for (d, s) in parts {
        *acc.entry(d).or_insert(0.0) += s;
    }
    let mut v: Vec<(usize, f32)> = acc.into_iter().collect();
    let n = v.len();
    top_k(&mut v, n);
    v
}

/// Reciprocal-rank fusion constant k (score of rank r: w / (k + r)).
pub(crate) const RRF_K: f32 = 20.0;
/// Weight of the semantic list in the fusion (keyword: 1). 2 until the
/// keyword side stemmed with Porter2 (tokenizer 2), whose better keyword
/// list keeps hybrid where it was at 1.5 (semble 0.853, the reference-doc
/// set 0.630; at 2: 0.849 / 0.629; bench/results/ranking.md).
pub(crate) const RRF_SEMANTIC_WEIGHT: f32 = 1.5;
/// Confidence of the semantic list: when its best cosine is above
/// [`CONFIDENT_FROM`], each entry's term is scaled by (its cosine / the
/// best)^g, g rising linearly to [`CONFIDENT_G`] at [`CONFIDENT_AT`]. A
/// description that all but restates one docstring (best cosine 0.9 and up,
/// far above the rest) then keeps its answer on top, where plain rank
/// fusion let a lower-ranked chunk that also matches the words overtake it;
/// at ordinary cosines nothing changes. Django reference-doc set, hybrid
/// MRR@10: 0.594 -> 0.618; semble's benchmark 0.839 -> 0.836
/// (bench/results/ranking.md).
pub(crate) const CONFIDENT_G: f32 = 4.0;
/// Best cosine above which the semantic list counts as confident.
pub(crate) const CONFIDENT_FROM: f32 = 0.6;
/// Best cosine at which the scaling is full.
pub(crate) const CONFIDENT_AT: f32 = 0.9;
/// The vector list also counts as confident when its best cosine stands
/// above its second by more than this, whatever its level (full at
/// [`CONFIDENT_GAP_AT`]; g is the larger of the two ramps). A sentence
/// whose one answer the vectors single out at an ordinary cosine keeps it.
/// Django reference-doc set, hybrid MRR@10: 0.6334 -> 0.6370 (6 queries
/// up, none down); semble's benchmark 0.8715 -> 0.8719 (1 up, 1 down).
pub(crate) const CONFIDENT_GAP_FROM: f32 = 0.08;
/// Gap between the best and the second cosine at which the scaling is full.
pub(crate) const CONFIDENT_GAP_AT: f32 = 0.25;

/// Confidence of the keyword list, the same way: when its best BM25 score is
/// more than [`KW_CONFIDENT_FROM`] times its second, each entry's term is
/// scaled by (its score / the best)^g, g rising linearly to
/// [`KW_CONFIDENT_G`] at a ratio of [`KW_CONFIDENT_AT`]. A sentence that
/// matches one chunk's words far better than any other's keeps that chunk
/// near the top, where the vector list's order used to decide. Django
/// reference-doc set, hybrid MRR@10: 0.6291 -> 0.6334 (14 queries up, 1
/// down); semble's benchmark 0.8712 -> 0.8715 (bench/results/ranking.md).
pub(crate) const KW_CONFIDENT_G: f32 = 2.0;
/// Ratio of the best keyword score to the second above which the list counts as confident.
pub(crate) const KW_CONFIDENT_FROM: f32 = 1.2;
/// Ratio at which the keyword scaling is full.
pub(crate) const KW_CONFIDENT_AT: f32 = 2.0;

/// How hybrid mode fuses its two lists.
#[derive(Clone, Copy)]
enum Fusion {
    /// Weighted reciprocal rank: k, semantic weight, the semantic list's
    /// confidence scaling (g, from, at; g 0: plain), the keyword list's
    /// (g, from, at), and the semantic list's gap ramp (from, at).
    Rrf(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32),
    /// Max-normalized keyword score and cosine, A on the semantic side.
    Linear(f32),
    /// semble's blend: each list's top N min-max scaled to [0, 1], A on the
    /// semantic side (B for a query that is one identifier).
    MinMax(f32, f32, usize),
}

/// The fusion in use: weighted reciprocal rank, k = 20 and semantic weight
/// [`RRF_SEMANTIC_WEIGHT`] (k chosen with `bench/eval_search.py`: plain k = 60
/// scored MRR@10 0.440 / 0.398 on the Go / Python sets, k = 20 with weight 2
/// 0.491 / 0.414), with each list's confidence scaling ([`CONFIDENT_G`],
/// [`CONFIDENT_GAP_FROM`], [`KW_CONFIDENT_G`]).
/// `CODE_INDEX_FUSION=rrf:K:W[:G:FROM:AT[:KG:KFROM:KAT[:GAPFROM:GAPAT]]]`, `linear:A` or
/// `minmax:A:B:N` override it for experiments; the variable is read once.
fn fusion() -> Fusion {
    static F: std::sync::OnceLock<Fusion> = std::sync::OnceLock::new();
    *F.get_or_init(|| {
        let how = std::env::var("CODE_INDEX_FUSION").unwrap_or_default();
        let (kind, rest) = how.split_once(':').unwrap_or((how.as_str(), ""));
        let v: Vec<Option<f32>> = rest.split(':').map(|x| x.parse().ok()).collect();
        let arg = |i: usize, default: f32| v.get(i).copied().flatten().unwrap_or(default);
        match kind {
            "linear" => Fusion::Linear(arg(0, 0.5)),
            "minmax" => Fusion::MinMax(
                arg(0, 0.5),
                arg(1, arg(0, 0.5)),
                arg(2, CANDIDATES as f32) as usize,
            ),
            _ => Fusion::Rrf(
                arg(0, RRF_K),
                arg(1, RRF_SEMANTIC_WEIGHT),
                arg(2, CONFIDENT_G),
                arg(3, CONFIDENT_FROM),
                arg(4, CONFIDENT_AT),
                arg(5, KW_CONFIDENT_G),
                arg(6, KW_CONFIDENT_FROM),
                arg(7, KW_CONFIDENT_AT),
                arg(8, CONFIDENT_GAP_FROM),
                arg(9, CONFIDENT_GAP_AT),
            ),
        }
    })
}

/// Each semantic entry's weight in the fusion: 1, or (cosine / best
/// cosine)^g' when the list is confident, g' = g × the larger of how far the
/// best cosine is from `from` to `at` and how far its lead over the second
/// is from `gap.0` to `gap.1` (see [`CONFIDENT_G`], [`CONFIDENT_GAP_FROM`]).
/// `sem` is best first.
pub fn confidence_scale(
    sem: &[(usize, f32)],
    g: f32,
    from: f32,
    at: f32,
    gap: (f32, f32),
) -> Vec<f32> {
    let best = sem.first().map_or(0.0, |x| x.1);
    let second = sem.get(1).map_or(best, |x| x.1);
    let level = ((best - from) / (at - from).max(1e-6)).clamp(0.0, 1.0);
    let lead = ((best - second - gap.0) / (gap.1 - gap.0).max(1e-6)).clamp(0.0, 1.0);
    powers_of_best(sem, g * level.max(lead))
}

/// Each entry's (score / the list's best)^g; all 1 when g or the best is 0.
fn powers_of_best(list: &[(usize, f32)], g: f32) -> Vec<f32> {
    let best = list.first().map_or(0.0, |x| x.1);
    list.iter()
        .map(|(_, s)| {
            if g <= 0.0 || best <= 0.0 {
                1.0
            } else {
                (s.max(0.0) / best).powf(g)
            }
        })
        .collect()
}

/// Each keyword entry's weight in the fusion: 1, or (its score / the best
/// score)^g' when the best is more than `from` times the second, g' = g ×
/// how far that ratio is from `from` to `at` (see [`KW_CONFIDENT_G`]).
/// `kw` is best first.
pub fn keyword_confidence_scale(kw: &[(usize, f32)], g: f32, from: f32, at: f32) -> Vec<f32> {
    let best = kw.first().map_or(0.0, |x| x.1);
    let second = kw.get(1).map_or(0.0, |x| x.1);
    let g = if best > 0.0 && second > 0.0 {
        g * ((best / second - from) / (at - from).max(1e-6)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    powers_of_best(kw, g)
}

/// Weight of the file vote ([`file_vote`]; `CODE_INDEX_RANK_FILEVOTE`).
/// semble's benchmark, hybrid NDCG@10, on its 142 "how ..." questions only:
/// 0.8686 -> 0.8741 (25 queries up, 14 down); 0.7 / 1.2 / 1.5: 0.8694 /
/// 0.8732 / 0.8725. For every query it gains more on semble (0.8777) and
/// costs the sentence sets far more (reference-doc hybrid MRR@10 0.659 ->
/// 0.619; bench/results/ranking.md).
pub(crate) const FILE_VOTE: f32 = 1.0;

/// A file votes with its best rank in each list: each file's best fused
/// entry takes `alpha` × the reciprocal-rank fusion (k [`RRF_K`], semantic
/// weight [`RRF_SEMANTIC_WEIGHT`]) of its file's best keyword rank and best
/// semantic rank when that is higher. A file that both lists put first, by
/// two different chunks, then leads a file that both put second by one
/// chunk, which chunk-level fusion ranks above it. `fused` is best first;
/// `file_of` names a chunk's file. Returned best first.
pub(crate) fn file_vote(
    mut fused: Vec<(usize, f32)>,
    kw: &[(usize, f32)],
    sem: &[(usize, f32)],
    file_of: impl Fn(usize) -> (u32, u32),
    alpha: f32,
) -> Vec<(usize, f32)> {
    if alpha <= 0.0 {
        return fused;
    }
    // Per file: its best rank in the keyword list and in the semantic list.
    let mut best: HashMap<(u32, u32), [Option<usize>; 2]> = HashMap::new();
    for (side, list) in [kw, sem].into_iter().enumerate() {
        for (r, &(i, _)) in list.iter().enumerate() {
            let e = best.entry(file_of(i)).or_insert([None, None]);
            e[side] = Some(e[side].map_or(r, |x: usize| x.min(r)));
        }
    }
    let term = |r: Option<usize>, w: f32| r.map_or(0.0, |r| w / (RRF_K + r as f32 + 1.0));
    let mut voted: HashSet<(u32, u32)> = HashSet::new();
    for e in fused.iter_mut() {
        let f = file_of(e.0);
        if !voted.insert(f) {
            continue;
        }
        if let Some(&[rk, rs]) = best.get(&f) {
            let s = alpha * (term(rk, 1.0) + term(rs, RRF_SEMANTIC_WEIGHT));
            e.1 = e.1.max(s);
        }
    }
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

/// Fuse the keyword and semantic lists of `query` (see [`fusion`]).
pub(crate) fn fuse(kw: &[(usize, f32)], sem: &[(usize, f32)], query: &str) -> Vec<(usize, f32)> {
    match fusion() {
        Fusion::Rrf(k, w, g, from, at, kg, kfrom, kat, gfrom, gat) => {
            let scale = confidence_scale(sem, g, from, at, (gfrom, gat));
            let kscale = keyword_confidence_scale(kw, kg, kfrom, kat);
            rrf_scaled(&[(kw, 1.0, Some(&kscale)), (sem, w, Some(&scale))], k)
        }
        Fusion::Linear(a) => {
            let mk = kw.iter().map(|x| x.1).fold(f32::MIN, f32::max).max(1e-6);
            sum_scores(
                kw.iter()
                    .map(|(i, s)| (*i, (1.0 - a) * s / mk))
                    .chain(sem.iter().map(|(i, s)| (*i, a * s.max(0.0)))),
            )
        }
        Fusion::MinMax(a, b, n) => {
            let a = if super::route::looks_like_symbol(query) {
                b
            } else {
                a
            };
            let scaled = |l: &[(usize, f32)], w: f32| -> Vec<(usize, f32)> {
                let l = &l[..l.len().min(n)];
                let hi = l.iter().map(|x| x.1).fold(f32::MIN, f32::max);
                let lo = l.iter().map(|x| x.1).fold(f32::MAX, f32::min);
                let d = (hi - lo).max(1e-9);
                l.iter().map(|(i, s)| (*i, w * (s - lo) / d)).collect()
            };
            sum_scores(scaled(kw, 1.0 - a).into_iter().chain(scaled(sem, a)))
        }
    }
}
