//! The persistent embedding cache, keyed by (the model's cache id, sha256 of
//! the input): `code_index_schemas::embed::cache_id`.
//! It lives in `~/.cache/code-index/embeddings/<cache id>.bin` (append-only
//! records: 32-byte key, then `dim` little-endian f32); a torn last record,
//! as a killed build may leave, is ignored on load.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use code_index_schemas::embed::cache_id;
use sha2::{Digest, Sha256};

use crate::error::{codes, Error, Result};

const MAGIC: &[u8; 8] = b"CIEMB01\n";

/// Cache key of an input under a model.
pub fn key(model_id: &str, input: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(cache_id(model_id).as_bytes());
    h.update([0u8]);
    h.update(input.as_bytes());
    h.finalize().into()
}

/// The persistent embedding cache of one model.
pub struct Cache {
    path: Option<PathBuf>,
    dim: Option<usize>,
    map: HashMap<[u8; 32], Vec<f32>>,
    file: Option<std::fs::File>,
}

fn cache_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::new(
        codes::EMBEDDING_CACHE,
        format!("embedding cache {}: {e}", path.display()),
        "delete the file (it is only a cache) or pass --embedding-cache <dir>",
    )
}

impl Cache {
    /// An in-memory cache only.
    pub fn memory() -> Cache {
        Cache {
            path: None,
            dim: None,
            map: HashMap::new(),
            file: None,
        }
    }

    /// Open (or create) the cache file of `model_id` under `dir`.
    pub fn open(dir: &Path, model_id: &str) -> Result<Cache> {
        let name: String = cache_id(model_id)
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("{name}.bin"));
        let mut cache = Cache {
            path: Some(path.clone()),
            ..Cache::memory()
        };
        if let Ok(mut f) = std::fs::File::open(&path) {
            let mut buf = Vec::new();
            f.read_to_end(&mut buf).map_err(|e| cache_err(&path, e))?;
            if buf.len() >= 12 && &buf[..8] == MAGIC {
                let dim = u32::from_le_bytes(buf[8..12].try_into().unwrap()) as usize;
                let rec = 32 + 4 * dim;
                let body = &buf[12..];
                let whole = body.len() / rec * rec;
                if whole != body.len() {
                    // A torn last record (killed build): cut it so appends stay aligned.
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .map_err(|e| cache_err(&path, e))?;
                    f.set_len((12 + whole) as u64)
                        .map_err(|e| cache_err(&path, e))?;
                }
                let body = &body[..whole];
                for r in body.chunks_exact(rec) {
                    let k: [u8; 32] = r[..32].try_into().unwrap();
                    let v = r[32..]
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                        .collect();
                    cache.map.insert(k, v);
                }
                cache.dim = Some(dim);
            } else if !buf.is_empty() {
                return Err(cache_err(&path, "not an embedding cache file"));
            }
        }
        Ok(cache)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Add a vector in memory only (not written to the file).
    pub fn seed(&mut self, k: [u8; 32], v: Vec<f32>) {
        self.map.entry(k).or_insert(v);
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn get(&self, k: &[u8; 32]) -> Option<&Vec<f32>> {
        self.map.get(k)
    }

    /// Add vectors and append them to the file (one write per call).
    pub fn put(&mut self, items: Vec<([u8; 32], Vec<f32>)>) -> Result<()> {
        let Some(first) = items.first() else {
            return Ok(());
        };
        let dim = first.1.len();
        if let Some(path) = self.path.clone() {
            if self.dim.is_some_and(|d| d != dim) {
                return Err(cache_err(&path, "dimension changed for the same model id"));
            }
            let mut buf = Vec::with_capacity(items.len() * (32 + 4 * dim) + 12);
            if self.file.is_none() {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| cache_err(&path, e))?;
                }
                let f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .map_err(|e| cache_err(&path, e))?;
                if f.metadata().map(|m| m.len()).unwrap_or(0) == 0 {
                    buf.extend_from_slice(MAGIC);
                    buf.extend_from_slice(&(dim as u32).to_le_bytes());
                }
                self.file = Some(f);
            }
            for (k, v) in &items {
                buf.extend_from_slice(k);
                for x in v {
                    buf.extend_from_slice(&x.to_le_bytes());
                }
            }
            if let Some(f) = self.file.as_mut() {
                f.write_all(&buf).map_err(|e| cache_err(&path, e))?;
            }
        }
        self.dim = Some(dim);
        self.map.extend(items);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_round_trips_and_ignores_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cache::open(dir.path(), "m:x").unwrap();
        c.put(vec![([1; 32], vec![1.0, 2.0]), ([2; 32], vec![3.0, 4.0])])
            .unwrap();
        c.put(vec![([3; 32], vec![5.0, 6.0])]).unwrap();
        drop(c);
        let path = dir.path().join("m_x.bin");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(&[9; 17]).unwrap(); // torn record
        let mut c = Cache::open(dir.path(), "m:x").unwrap();
        assert_eq!(c.len(), 3);
        c.put(vec![([4; 32], vec![7.0, 8.0])]).unwrap();
        drop(c);
        let c = Cache::open(dir.path(), "m:x").unwrap();
        assert_eq!(c.len(), 4);
        assert_eq!(c.get(&[4; 32]).unwrap(), &vec![7.0, 8.0]);
        assert_eq!(c.get(&[3; 32]).unwrap(), &vec![5.0, 6.0]);
        std::fs::write(&path, b"garbage!garbage").unwrap();
        assert!(Cache::open(dir.path(), "m:x").is_err());
    }
}
