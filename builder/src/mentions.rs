//! `mentions` edges: navigation docs (README, AGENTS.md, configured
//! `navigation_docs`) linked to what they name. Inline code spans and link
//! targets are resolved, in order, to a file, a directory (module), a dotted
//! module name, or a definition (qualified or simple name defined in at most
//! three places). Unresolved spans are plain code and make no edge. The edge
//! holds the section heading as `src_symbol`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::resolve::{Edge, FileFacts};

pub struct Mentions {
    by_doc: HashMap<String, Vec<Edge>>,
}

fn normalize(base_dir: &str, t: &str) -> String {
    let mut parts: Vec<&str> = if base_dir.is_empty() {
        Vec::new()
    } else {
        base_dir.split('/').collect()
    };
    for seg in t.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// Inline code spans and link targets of one line.
fn spans(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find('`') {
        let after = &rest[i + 1..];
        match after.find('`') {
            Some(j) => {
                out.push(after[..j].to_string());
                rest = &after[j + 1..];
            }
            None => break,
        }
    }
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        match after.find(')') {
            Some(j) => {
                let t = after[..j].split('#').next().unwrap_or("");
                if !t.contains("://") && !t.is_empty() {
                    out.push(t.to_string());
                }
                rest = &after[j + 1..];
            }
            None => break,
        }
    }
    out
}

impl Mentions {
    pub fn new(facts: &[FileFacts], docs: &[(String, String)]) -> Mentions {
        let mut by_doc = HashMap::new();
        if docs.is_empty() {
            return Mentions { by_doc };
        }
        let files: HashSet<&str> = facts.iter().map(|f| f.path.as_str()).collect();
        let mut dirs: HashSet<String> = HashSet::new();
        for f in facts {
            let mut d = f.path.as_str();
            while let Some((p, _)) = d.rsplit_once('/') {
                if !dirs.insert(p.to_string()) {
                    break;
                }
                d = p;
            }
        }
        // The names the docs could mean (every code span and link target):
        // only these are looked up among the definitions, so the map stays
        // small even on a tree with millions of symbols.
        let mut wanted: HashSet<String> = HashSet::new();
        for (_, content) in docs {
            for line in content.lines() {
                for raw in spans(line) {
                    let t = raw
                        .trim()
                        .trim_end_matches("()")
                        .trim_start_matches("./")
                        .trim_end_matches('/');
                    wanted.insert(t.rsplit("::").next().unwrap_or(t).to_string());
                }
            }
        }
        // name → definitions (path, id); only distinctive names are used.
        let mut defs: HashMap<&str, Vec<(&str, i64)>> = HashMap::new();
        for f in facts {
            for s in &f.symbols {
                let q: &str = &s.qname;
                if wanted.contains(q) {
                    defs.entry(q).or_default().push((f.path.as_str(), s.id));
                }
                let simple = &q[s.name_at as usize..];
                if simple != q && wanted.contains(simple) {
                    defs.entry(simple)
                        .or_default()
                        .push((f.path.as_str(), s.id));
                }
            }
        }
        for (doc, content) in docs {
            let base = doc.rsplit_once('/').map(|x| x.0).unwrap_or("");
            let mut heading: Option<Arc<str>> = None;
            let mut fence = false;
            let mut seen: HashSet<(Option<Arc<str>>, String)> = HashSet::new();
            let mut edges = Vec::new();
            for (ln, line) in content.lines().enumerate() {
                let t = line.trim_start();
                if t.starts_with("```") || t.starts_with("~~~") {
                    fence = !fence;
                    continue;
                }
                if fence {
                    continue;
                }
                if t.starts_with('#') {
                    let h = t.trim_start_matches('#').trim();
                    if !h.is_empty() {
                        heading = Some(Arc::from(h));
                    }
                }
                for raw in spans(line) {
                    let s = raw
                        .trim()
                        .trim_end_matches("()")
                        .trim_start_matches("./")
                        .trim_end_matches('/')
                        .to_string();
                    if s.len() < 3 || s.len() > 200 || s.contains(' ') {
                        continue;
                    }
                    let mut target: Option<(Option<String>, Option<i64>)> = None;
                    for cand in [s.clone(), normalize(base, &s)] {
                        if files.contains(cand.as_str()) || dirs.contains(&cand) {
                            target = Some((Some(cand), None));
                            break;
                        }
                    }
                    if target.is_none() && s.contains('.') && !s.contains('/') {
                        let as_path = s.replace('.', "/");
                        for cand in [as_path.clone(), format!("{as_path}.py")] {
                            if files.contains(cand.as_str()) || dirs.contains(&cand) {
                                target = Some((Some(cand), None));
                                break;
                            }
                        }
                    }
                    if target.is_none() {
                        let name = s.rsplit("::").next().unwrap_or(&s);
                        let looks = name
                            .chars()
                            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
                            && name
                                .chars()
                                .next()
                                .is_some_and(|c| c.is_alphabetic() || c == '_');
                        if looks {
                            if let Some(d) = defs.get(name).filter(|d| d.len() <= 3) {
                                target = Some((Some(d[0].0.to_string()), Some(d[0].1)));
                            }
                        }
                    }
                    let Some((dst_path, dst_id)) = target else {
                        continue;
                    };
                    if !seen.insert((heading.clone(), s.clone())) {
                        continue;
                    }
                    edges.push(Edge {
                        kind: "mentions",
                        src_path: doc.clone(),
                        src_symbol: heading.clone(),
                        src_symbol_id: None,
                        dst_name: s,
                        dst_path,
                        dst_symbol_id: dst_id,
                        line: ln as u32 + 1,
                        resolved: true,
                        receiver_type: None,
                        alias: None,
                    });
                }
            }
            by_doc.insert(doc.clone(), edges);
        }
        Mentions { by_doc }
    }

    /// The mention edges of a navigation doc (None for other files).
    pub fn edges(&self, path: &str) -> Option<Vec<Edge>> {
        self.by_doc.get(path).filter(|e| !e.is_empty()).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_paths() {
        assert_eq!(
            spans("see `a/b.py` and [x](../c/d.md#top) or [web](https://x.y)"),
            vec!["a/b.py", "../c/d.md"]
        );
        assert_eq!(normalize("docs/guide", "../src/x.rs"), "docs/src/x.rs");
        assert_eq!(normalize("", "./src"), "src");
    }
}
