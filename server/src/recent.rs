//! The server's small result caches: the few most recent (key, value) pairs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Lookups that found their entry, in every cache of the process (the
/// metrics say whether a call was answered from a cache by comparing it
/// before and after).
pub static HITS: AtomicU64 = AtomicU64::new(0);

/// At most `cap` entries, oldest evicted first; lookups are linear (a cache
/// holds at most a few dozen entries).
pub struct Recent<V> {
    cap: usize,
    items: Mutex<Vec<(String, V)>>,
}

impl<V: Clone> Recent<V> {
    pub const fn new(cap: usize) -> Self {
        Recent {
            cap,
            items: Mutex::new(Vec::new()),
        }
    }

    pub fn get(&self, key: &str) -> Option<V> {
        let items = crate::guard::lock(&self.items);
        let hit = items.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        if hit.is_some() {
            HITS.fetch_add(1, Ordering::Relaxed);
        }
        hit
    }

    pub fn put(&self, key: String, value: V) {
        let mut items = crate::guard::lock(&self.items);
        items.push((key, value));
        if items.len() > self.cap {
            items.remove(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_most_recent() {
        let c = Recent::new(2);
        c.put("a".into(), 1);
        c.put("b".into(), 2);
        c.put("c".into(), 3);
        assert_eq!(
            (c.get("a"), c.get("b"), c.get("c")),
            (None, Some(2), Some(3))
        );
    }
}
