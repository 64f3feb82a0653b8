//! Seeding the cache from a previous snapshot's vectors (`--previous`).

use std::collections::HashMap;
use std::path::Path;

use super::{Cache, Pending};

/// Seed the cache with a previous snapshot's vectors for the chunks whose
/// ids (path, kind, span) it shares with the `reused` items: their files are
/// unchanged, so chunk ids and inputs are the same as before. A
/// missing or unreadable vector file only costs re-embedding.
pub fn seed_from_snapshot(cache: &mut Cache, dir: &Path, items: &[Pending]) -> usize {
    let path = dir.join(code_index_schemas::embed::VECTORS_FILE);
    let Ok(v) = code_index_schemas::vectors::read(&path) else {
        return 0;
    };
    if v.ivf.is_some() {
        return 0;
    }
    // A chunk's vectors are consecutive, in window order, under its id.
    let mut by_id: HashMap<i64, Vec<usize>> = HashMap::new();
    for (i, &id) in v.ids.iter().enumerate() {
        by_id.entry(id).or_default().push(i);
    }
    let mut seen: HashMap<i64, usize> = HashMap::new();
    let mut n = 0;
    for p in items {
        let k = seen.entry(p.id).or_insert(0);
        let window = *k;
        *k += 1;
        if !p.reused {
            continue;
        }
        if let Some(&i) = by_id.get(&p.id).and_then(|rows| rows.get(window)) {
            if cache.get(&p.key).is_none() {
                cache.seed(p.key, v.row(i).to_vec());
                n += 1;
            }
        }
    }
    n
}
