//! Graph expansion: the file graph of imports and resolved calls, and the
//! path between two concepts through it ("from the API to the database").

use super::fusion::fuse;
use super::*;

/// File → files it imports or calls into.
pub type FileGraph = HashMap<String, Vec<String>>;

impl Ctx<'_> {
    /// File graph (imports and resolved calls) of one snapshot (cached).
    pub(crate) fn file_graph(&self, si: usize) -> Result<Arc<FileGraph>, ToolError> {
        if let Some(g) = crate::guard::lock(self.graphs).get(&si) {
            return Ok(g.clone());
        }
        let g = Arc::new(self.build_file_graph(si)?);
        crate::guard::lock(self.graphs).insert(si, g.clone());
        Ok(g)
    }

    pub(crate) fn build_file_graph(&self, si: usize) -> Result<FileGraph, ToolError> {
        let repo = self.snaps[si].repo();
        let links = self.store.file_links(repo)?;
        let mut g: HashMap<String, Vec<String>> = HashMap::new();
        let files = &self.snaps[si].files;
        for l in links {
            let (a, b) = (l.from, l.to);
            if a == b {
                continue;
            }
            if self.snaps[si].file_index(&b).is_some() {
                g.entry(a).or_default().push(b);
            } else {
                // A package directory (Go): link to its non-test files.
                let prefix = format!("{b}/");
                let start = files.partition_point(|f| f.path.as_str() < prefix.as_str());
                for f in files[start..]
                    .iter()
                    .take_while(|f| f.path.starts_with(&prefix))
                    .filter(|f| !f.is_test && !f.path[prefix.len()..].contains('/'))
                    .take(20)
                {
                    g.entry(a.clone()).or_default().push(f.path.clone());
                }
            }
        }
        Ok(g)
    }

    pub(crate) fn flow_hits(
        &self,
        from: &str,
        to: &str,
        snaps: &[usize],
        allowed: &Allowed,
    ) -> Result<Vec<(usize, f32, String)>, ToolError> {
        let eng = self.eng;
        let seeds = |q: &str| -> Vec<usize> {
            let kw = self.keyword_list(q, allowed);
            let sem = self.semantic_list(q, snaps, allowed).unwrap_or_default();
            let f = fuse(&kw, &sem, q);
            let mut seen = HashSet::new();
            f.into_iter()
                .map(|x| x.0)
                .filter(|&c| seen.insert((eng.chunks[c].snap, eng.chunks[c].file)))
                .take(8)
                .collect()
        };
        let (a, b) = (seeds(from), seeds(to));
        for &si in snaps {
            let sn = &self.snaps[si];
            let paths = |v: &[usize]| -> Vec<String> {
                v.iter()
                    .filter(|&&c| eng.chunks[c].snap as usize == si)
                    .map(|&c| sn.files[eng.chunks[c].file as usize].path.clone())
                    .collect()
            };
            let (src, dst) = (paths(&a), paths(&b));
            if src.is_empty() || dst.is_empty() {
                continue;
            }
            let g = self.file_graph(si)?;
            let dst_set: HashSet<&String> = dst.iter().collect();
            // BFS (directed, then undirected) from any source to any destination.
            for undirected in [false, true] {
                let mut adj: FileGraph = (*g).clone();
                if undirected {
                    for (k, vs) in g.iter() {
                        for v in vs {
                            adj.entry(v.clone()).or_default().push(k.clone());
                        }
                    }
                }
                let mut prev: HashMap<String, Option<String>> = HashMap::new();
                let mut dq = VecDeque::new();
                for s in &src {
                    prev.insert(s.clone(), None);
                    dq.push_back((s.clone(), 0));
                }
                let mut found = None;
                while let Some((n, d)) = dq.pop_front() {
                    if dst_set.contains(&n) {
                        found = Some(n);
                        break;
                    }
                    if d >= 6 {
                        continue;
                    }
                    for m in adj.get(&n).into_iter().flatten() {
                        if !prev.contains_key(m) {
                            prev.insert(m.clone(), Some(n.clone()));
                            dq.push_back((m.clone(), d + 1));
                        }
                    }
                }
                if let Some(end) = found {
                    let mut path = vec![end.clone()];
                    let mut cur = end;
                    while let Some(Some(p)) = prev.get(&cur) {
                        path.push(p.clone());
                        cur = p.clone();
                    }
                    path.reverse();
                    let q = format!("{from} {to}");
                    let hops = path.len();
                    let mut out = Vec::new();
                    for (step, p) in path.iter().enumerate() {
                        let Some(fi) = sn.file_index(p) else {
                            continue;
                        };
                        let Some(&(lo, hi)) = eng.file_chunks.get(&(si as u32, fi)) else {
                            continue;
                        };
                        let allowed_here = |c: usize| c >= lo && c < hi && allowed(c);
                        let best = eng
                            .bm25
                            .search(&q, &allowed_here, 1)
                            .first()
                            .map(|x| x.0)
                            .unwrap_or(lo);
                        out.push((
                            best,
                            1.0,
                            format!(
                                "flow step {}/{} ({})",
                                step + 1,
                                hops,
                                if undirected {
                                    "import/call graph, either direction"
                                } else {
                                    "imports/calls"
                                }
                            ),
                        ));
                    }
                    return Ok(out);
                }
            }
        }
        Ok(Vec::new())
    }
}
