//! Pattern detection: families of files written to the same shape (Django
//! apps' `apps.py`, migrations, serializer backends, Go codec packages...).
//!
//! A file's *shape* is a set of structural features taken from its syntax
//! tree: the kinds of its top-level definitions, their base types, the names
//! of members defined inside them, and the modules it imports (definition
//! names themselves are left out: siblings name their classes differently).
//! Candidate groups are (a) the code files of one directory and (b) files
//! with the same name in sibling directories; a group needs at least
//! [`MIN_MEMBERS`] files of one language. Within a group the file with the
//! most neighbours at Jaccard similarity ≥ [`MIN_SIMILARITY`] becomes the
//! canonical file; it and its neighbours form a pattern when they are at
//! least [`MIN_MEMBERS`]; the rest of the group is clustered again.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::ids::stable_id;

pub const MIN_MEMBERS: usize = 5;
pub const MIN_SIMILARITY: f64 = 0.8;
/// Largest group compared pairwise.
const MAX_GROUP: usize = 400;

/// Feature strings by id: features repeat across files, so each is stored once.
#[derive(Default)]
pub struct Interner {
    ids: HashMap<String, u32>,
    names: Vec<String>,
}

impl Interner {
    pub fn id(&mut self, s: String) -> u32 {
        if let Some(&i) = self.ids.get(&s) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(s.clone());
        self.ids.insert(s, i);
        i
    }

    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
}

/// The shape of one file.
#[derive(Clone, Debug)]
pub struct Shape {
    pub path: String,
    pub lang: &'static str,
    pub module: Option<String>,
    /// Interned feature ids, sorted and distinct.
    pub features: Vec<u32>,
    /// Most common base type among its top-level definitions, if any.
    pub base: Option<String>,
}

/// A detected pattern.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    pub id: i64,
    pub name: String,
    pub module: Option<String>,
    pub canonical_path: String,
    pub members: Vec<(String, f32)>,
    pub similarity: f32,
    /// Text of the pattern chunk (what search_code indexes for it).
    pub text: String,
    pub shared: Vec<String>,
}

/// Shape features from a file's definitions and edges.
pub fn shape(
    path: &str,
    lang: &'static str,
    module: Option<String>,
    symbols: &[crate::parse::Symbol],
    edges: &[crate::parse::RawEdge],
    interner: &mut Interner,
) -> Option<Shape> {
    let mut f = BTreeSet::new();
    let mut bases: BTreeMap<String, usize> = BTreeMap::new();
    let top: HashSet<&str> = symbols
        .iter()
        .filter(|s| s.parent_id.is_none() && s.container.is_none())
        .map(|s| s.qualified_name.as_str())
        .collect();
    for s in symbols {
        if s.parent_id.is_none() && s.container.is_none() {
            f.insert(format!("top:{}", s.kind));
        } else if s.container.as_deref().is_some_and(|c| top.contains(c)) {
            f.insert(format!("member:{}:{}", s.kind, s.name));
        }
    }
    for e in edges {
        match e.kind {
            "extends" | "implements" => {
                let b = e
                    .dst_name
                    .rsplit(['.', ':'])
                    .next()
                    .unwrap_or(&e.dst_name)
                    .to_string();
                f.insert(format!("base:{b}"));
                *bases.entry(b).or_insert(0) += 1;
            }
            "imports" => {
                f.insert(format!("import:{}", e.dst_name));
            }
            _ => {}
        }
    }
    if f.len() < 3 {
        return None;
    }
    let base = bases
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|x| x.0);
    let mut features: Vec<u32> = f.into_iter().map(|x| interner.id(x)).collect();
    features.sort_unstable();
    Some(Shape {
        path: path.to_string(),
        lang,
        module,
        features,
        base,
    })
}

fn intersection(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

fn jaccard(a: &[u32], b: &[u32]) -> f64 {
    let (mut i, mut j, mut inter) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                inter += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - inter;
    if union == 0 {
        0.0
    } else {
        inter as f64 / union as f64
    }
}

fn dir_of(p: &str) -> &str {
    p.rsplit_once('/').map(|x| x.0).unwrap_or("")
}

fn base_of(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// Detect patterns among shapes (sorted by path). `dirs`, when not empty,
/// limits directory groups to these configured directories (and below).
pub fn detect(shapes: &[Shape], dirs: &[String], interner: &Interner) -> Vec<Pattern> {
    let in_dirs = |d: &str| {
        dirs.is_empty()
            || dirs.iter().any(|c| {
                d == c.trim_matches('/') || d.starts_with(&format!("{}/", c.trim_matches('/')))
            })
    };
    // Groups: by (directory, lang) and by (parent of directory, basename, lang).
    let mut groups: BTreeMap<(String, &str, u8), Vec<usize>> = BTreeMap::new();
    for (i, s) in shapes.iter().enumerate() {
        let d = dir_of(&s.path);
        if in_dirs(d) {
            groups
                .entry((d.to_string(), s.lang, 0))
                .or_default()
                .push(i);
        }
        let parent = dir_of(d);
        if !d.is_empty() && in_dirs(parent) {
            groups
                .entry((format!("{parent}/*/{}", base_of(&s.path)), s.lang, 1))
                .or_default()
                .push(i);
        }
    }
    let mut taken: HashSet<usize> = HashSet::new();
    let mut out = Vec::new();
    // Same-name groups first (the stronger signal), then directories.
    let mut keys: Vec<_> = groups.keys().cloned().collect();
    keys.sort_by(|a, b| b.2.cmp(&a.2).then(a.cmp(b)));
    for key in keys {
        let members: Vec<usize> = groups[&key]
            .iter()
            .copied()
            .filter(|i| !taken.contains(i))
            .take(MAX_GROUP)
            .collect();
        if members.len() < MIN_MEMBERS {
            continue;
        }
        let mut left = members;
        loop {
            if left.len() < MIN_MEMBERS {
                break;
            }
            let n = left.len();
            let mut sim = vec![vec![0f64; n]; n];
            for a in 0..n {
                for b in a + 1..n {
                    let s = jaccard(&shapes[left[a]].features, &shapes[left[b]].features);
                    sim[a][b] = s;
                    sim[b][a] = s;
                }
            }
            // Canonical: most neighbours, then highest total similarity, then path order.
            let best = (0..n)
                .max_by(|&a, &b| {
                    let na = sim[a].iter().filter(|&&s| s >= MIN_SIMILARITY).count();
                    let nb = sim[b].iter().filter(|&&s| s >= MIN_SIMILARITY).count();
                    let ta: f64 = sim[a].iter().sum();
                    let tb: f64 = sim[b].iter().sum();
                    na.cmp(&nb)
                        .then(ta.partial_cmp(&tb).unwrap_or(std::cmp::Ordering::Equal))
                        .then(b.cmp(&a))
                })
                .unwrap();
            let cluster: Vec<usize> = (0..n)
                .filter(|&j| j == best || sim[best][j] >= MIN_SIMILARITY)
                .collect();
            if cluster.len() < MIN_MEMBERS {
                break;
            }
            let canon = &shapes[left[best]];
            let mut mem: Vec<(String, f32)> = cluster
                .iter()
                .map(|&j| {
                    let s = if j == best { 1.0 } else { sim[best][j] as f32 };
                    (shapes[left[j]].path.clone(), s)
                })
                .collect();
            mem.sort_by(|a, b| a.0.cmp(&b.0));
            let avg = cluster
                .iter()
                .filter(|&&j| j != best)
                .map(|&j| sim[best][j])
                .sum::<f64>()
                / (cluster.len() - 1).max(1) as f64;
            // Features every member shares.
            let mut shared: Vec<u32> = canon.features.clone();
            for &j in &cluster {
                shared = intersection(&shared, &shapes[left[j]].features);
            }
            let shared: BTreeSet<String> = shared
                .into_iter()
                .map(|id| interner.name(id).to_string())
                .collect();
            let shared: Vec<String> = shared.into_iter().collect();
            let name = pattern_name(
                &key.0,
                key.2,
                canon,
                &cluster
                    .iter()
                    .map(|&j| &shapes[left[j]])
                    .collect::<Vec<_>>(),
            );
            let text = format!(
                "Pattern: {name}\nCanonical example: {}\n{} files follow it: {}\nShared structure: {}\n",
                canon.path,
                mem.len(),
                mem.iter().map(|m| m.0.as_str()).collect::<Vec<_>>().join(", "),
                shared
                    .iter()
                    .map(|s| s.replace(':', " "))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            out.push(Pattern {
                id: stable_id(&[b"pattern", canon.path.as_bytes(), name.as_bytes()]),
                name,
                module: canon.module.clone(),
                canonical_path: canon.path.clone(),
                members: mem,
                similarity: avg as f32,
                text,
                shared,
            });
            let cset: HashSet<usize> = cluster.iter().map(|&j| left[j]).collect();
            taken.extend(cset.iter().copied());
            left.retain(|i| !cset.contains(i));
        }
    }
    out.sort_by(|a, b| {
        a.canonical_path
            .cmp(&b.canonical_path)
            .then(a.name.cmp(&b.name))
    });
    out
}

fn pattern_name(group: &str, by_name: u8, canon: &Shape, members: &[&Shape]) -> String {
    let mut bases: BTreeMap<&str, usize> = BTreeMap::new();
    for m in members {
        if let Some(b) = &m.base {
            *bases.entry(b.as_str()).or_insert(0) += 1;
        }
    }
    let place = if by_name == 1 {
        group.to_string()
    } else {
        format!("{}/*", if group.is_empty() { "." } else { group })
    };
    match bases
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
    {
        Some((b, n)) if n * 10 >= members.len() * 6 => format!("{b} subclasses in {place}"),
        _ => {
            let _ = canon;
            format!("{place} family")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(it: &mut Interner, path: &str, feats: &[&str], base: Option<&str>) -> Shape {
        let mut features: Vec<u32> = feats.iter().map(|s| it.id(s.to_string())).collect();
        features.sort_unstable();
        features.dedup();
        Shape {
            path: path.into(),
            lang: "python",
            module: None,
            features,
            base: base.map(String::from),
        }
    }

    #[test]
    fn a_family_of_five_is_found_and_outliers_are_not() {
        let f = [
            "top:class",
            "base:AppConfig",
            "member:variable:name",
            "member:variable:verbose_name",
            "import:django.apps",
        ];
        let mut it = Interner::default();
        let mut shapes: Vec<Shape> = ["auth", "admin", "sites", "sessions", "messages", "humanize"]
            .iter()
            .map(|a| {
                sh(
                    &mut it,
                    &format!("contrib/{a}/apps.py"),
                    &f,
                    Some("AppConfig"),
                )
            })
            .collect();
        shapes.push(sh(
            &mut it,
            "contrib/odd/apps.py",
            &["top:function", "import:os", "member:x:y"],
            None,
        ));
        shapes.sort_by(|a, b| a.path.cmp(&b.path));
        let p = detect(&shapes, &[], &it);
        assert!(p[0].text.contains("base AppConfig"), "{}", p[0].text);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].members.len(), 6);
        assert!(p[0]
            .name
            .starts_with("AppConfig subclasses in contrib/*/apps.py"));
        assert!(!p[0].members.iter().any(|m| m.0.contains("odd")));
        // Four are not enough.
        let p = detect(&shapes[..4], &[], &it);
        assert!(p.is_empty());
    }
}
