//! `vectors.faiss` (cargo feature `embed`): one L2-normalized vector per
//! embedded chunk, FAISS ids = chunk ids, inner-product metric. Up to
//! [`FLAT_MAX`] vectors the index is exact (`IDMap,Flat`); above it is an
//! inverted file (`IDMap,IVF<n>,Flat`) whose `nprobe` is stored in the file.
//! Builds are single-threaded in FAISS (OpenMP 1 thread) so the same input
//! gives the same bytes.

use std::path::Path;

use faiss::index::IndexImpl;
use faiss::{Idx, Index, MetricType};

use crate::diag::Code;
use crate::embed::{EmbedError, Result};

/// Most vectors kept in an exact Flat index.
pub const FLAT_MAX: usize = 200_000;

fn ferr(what: &str, e: impl std::fmt::Display) -> EmbedError {
    EmbedError::new(
        Code::VectorsFailed,
        format!("{what}: {e}"),
        "rebuild the snapshot; if it persists, build with --no-embeddings and report it",
    )
}

/// Pin FAISS (OpenMP) to one thread: reproducible builds, steady latency.
pub fn single_thread() {
    if std::env::var_os("OMP_NUM_THREADS").is_none() {
        std::env::set_var("OMP_NUM_THREADS", "1");
    }
}

/// The index layout chosen for `n` vectors: "Flat" or "IVF<nlist>,Flat".
pub fn layout(n: usize, flat_max: usize) -> (String, u32, u32) {
    if n <= flat_max {
        return ("Flat".into(), 0, 0);
    }
    let nlist = ((4.0 * (n as f64).sqrt()) as u32).clamp(16, 65536);
    let nprobe = (nlist / 3).max(32);
    (format!("IVF{nlist},Flat"), nlist, nprobe)
}

/// Write vectors (row-major, `dim` floats each) with their ids. Returns the
/// layout description.
pub fn write(
    path: &Path,
    ids: &[i64],
    data: &[f32],
    dim: usize,
    flat_max: usize,
) -> Result<String> {
    single_thread();
    assert_eq!(ids.len() * dim, data.len());
    let (desc, _nlist, nprobe) = layout(ids.len(), flat_max);
    let inner = faiss::index_factory(dim as u32, &desc, MetricType::InnerProduct)
        .map_err(|e| ferr("create index", e))?;
    let mut index = faiss::IdMap::new(inner).map_err(|e| ferr("create id map", e))?;
    if desc != "Flat" {
        // Train on an evenly spaced sample (deterministic).
        let n = ids.len();
        let want = n.min(100_000);
        let step = (n / want.max(1)).max(1);
        let mut sample = Vec::with_capacity(want * dim);
        for i in (0..n).step_by(step) {
            sample.extend_from_slice(&data[i * dim..(i + 1) * dim]);
        }
        index.train(&sample).map_err(|e| ferr("train", e))?;
    }
    let xids: Vec<Idx> = ids.iter().map(|&i| Idx::new(i as u64)).collect();
    index
        .add_with_ids(data, &xids)
        .map_err(|e| ferr("add vectors", e))?;
    if desc != "Flat" {
        set_nprobe(&index, nprobe)?;
    }
    let tmp = path.with_extension("faiss.tmp");
    faiss::write_index(&index, tmp.to_string_lossy().as_ref()).map_err(|e| ferr("write", e))?;
    std::fs::rename(&tmp, path).map_err(|e| ferr("rename", e))?;
    Ok(desc)
}

fn set_nprobe(index: &faiss::IdMap<IndexImpl>, nprobe: u32) -> Result<()> {
    let ps =
        faiss::index::autotune::ParameterSpace::new().map_err(|e| ferr("parameter space", e))?;
    ps.set_index_parameter(index, "nprobe", nprobe as f64)
        .map_err(|e| ferr("set nprobe", e))
}

/// A loaded vector file.
pub struct Vectors {
    pub dim: usize,
    /// Chunk ids, in index order.
    pub ids: Vec<i64>,
    /// Exact layout: all vectors, row-major (searched by brute force, so any
    /// filter is exact). Empty for IVF.
    pub data: Vec<f32>,
    /// Approximate layout: the FAISS index (search needs `&mut`).
    pub ivf: Option<std::sync::Mutex<faiss::IdMap<IndexImpl>>>,
}

impl Vectors {
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Vector of the i-th id (exact layout only).
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
}

/// Read `vectors.faiss`.
pub fn read(path: &Path) -> Result<Vectors> {
    single_thread();
    let idx = faiss::read_index(path.to_string_lossy().as_ref()).map_err(|e| ferr("read", e))?;
    let idmap = idx.into_id_map().map_err(|e| ferr("read id map", e))?;
    let dim = idmap.d() as usize;
    let ids: Vec<i64> = idmap
        .id_map()
        .iter()
        .map(|i| i.get().map(|x| x as i64).unwrap_or(-1))
        .collect();
    let inner: IndexImpl = idmap.into_inner();
    match inner.into_flat() {
        Ok(flat) => Ok(Vectors {
            dim,
            data: flat.xb().to_vec(),
            ids,
            ivf: None,
        }),
        Err(_) => {
            // Re-read: into_flat consumed the inner index.
            let idx =
                faiss::read_index(path.to_string_lossy().as_ref()).map_err(|e| ferr("read", e))?;
            let idmap = idx.into_id_map().map_err(|e| ferr("read id map", e))?;
            Ok(Vectors {
                dim,
                ids,
                data: Vec::new(),
                ivf: Some(std::sync::Mutex::new(idmap)),
            })
        }
    }
}
