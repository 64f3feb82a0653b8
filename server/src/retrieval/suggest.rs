//! Suggestions for empty or thin results: synonym rewrites and wider
//! scopes that have hits, and modules named like the query.

use schemars::JsonSchema;
use serde::Serialize;

use super::*;

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Suggestion {
    /// A query to try instead.
    pub query: String,
    /// Keyword results it would give in the same scope.
    pub results: u64,
}

/// Default synonyms: a configurable YAML map (`--synonyms FILE` adds to it).
pub const DEFAULT_SYNONYMS: &str = include_str!("../synonyms.yaml");

pub fn parse_synonyms(text: &str) -> Result<HashMap<String, Vec<String>>, String> {
    serde_yaml_ng_free(text)
}

/// A tiny YAML subset reader (`word: [a, b]` or `word:` + `- a` lines), so
/// the server needs no YAML dependency for one map.
pub(crate) fn serde_yaml_ng_free(text: &str) -> Result<HashMap<String, Vec<String>>, String> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let mut cur: Option<String> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split(" #").next().unwrap_or("").trim_end();
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(item) = t.strip_prefix("- ") {
            let k = cur
                .clone()
                .ok_or_else(|| format!("line {}: list item without a key", n + 1))?;
            out.entry(k)
                .or_default()
                .push(item.trim().trim_matches(['"', '\'']).to_lowercase());
            continue;
        }
        let (k, v) = t
            .split_once(':')
            .ok_or_else(|| format!("line {}: expected `word: [synonyms]`", n + 1))?;
        let k = k.trim().trim_matches(['"', '\'']).to_lowercase();
        let v = v.trim();
        if v.is_empty() {
            cur = Some(k);
            continue;
        }
        let v = v
            .strip_prefix('[')
            .and_then(|v| v.strip_suffix(']'))
            .ok_or_else(|| format!("line {}: expected a [list]", n + 1))?;
        out.entry(k.clone()).or_default().extend(
            v.split(',')
                .map(|s| s.trim().trim_matches(['"', '\'']).to_lowercase())
                .filter(|s| !s.is_empty()),
        );
        cur = Some(k);
    }
    Ok(out)
}

impl Ctx<'_> {
    pub(crate) fn suggestions(&self, q: &str, scope: &Scope) -> (Vec<Suggestion>, Vec<String>) {
        let eng = self.eng;
        let allowed = |i: usize| scope.allows(&eng.chunks[i], self.snaps);
        let syn = self.synonyms;
        let words: Vec<String> = q
            .split_whitespace()
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
                    .to_lowercase()
            })
            .filter(|w| !w.is_empty())
            .collect();
        let mut out: Vec<Suggestion> = Vec::new();
        for (i, w) in words.iter().enumerate() {
            let alts = syn
                .get(w)
                .or_else(|| syn.get(&stem(w)))
                .cloned()
                .unwrap_or_default();
            for alt in alts {
                let mut ws = words.clone();
                ws[i] = alt;
                let s = ws.join(" ");
                let n = eng.bm25.count(&s, &allowed) as u64;
                if n > 0 && !out.iter().any(|o| o.query == s) {
                    out.push(Suggestion {
                        query: s,
                        results: n,
                    });
                }
            }
        }
        // Wider scopes: the selected repos only.
        let narrowed_tests = scope.tests == Tests::Exclude || scope.tests == Tests::Only;
        let narrowed_place = scope.path.is_some() || scope.lang.is_some() || scope.module.is_some();
        for (narrowed, widened) in [
            (narrowed_tests, "include_tests: include"),
            (narrowed_place, "without path/lang/module"),
        ] {
            if !narrowed {
                continue;
            }
            let n = eng
                .bm25
                .count(q, &|i| scope.snaps[eng.chunks[i].snap as usize]) as u64;
            if n > 0 {
                out.push(Suggestion {
                    query: format!("{q} ({widened})"),
                    results: n,
                });
            }
        }
        out.sort_by(|a, b| b.results.cmp(&a.results).then(a.query.cmp(&b.query)));
        out.truncate(6);
        // Modules whose names share a word with the query.
        let qt = crate::retrieval::query_terms(q);
        let mut mods: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for c in &eng.chunks {
            if let Some(m) = &c.module {
                if scope.snaps[c.snap as usize] && seen.insert(&**m) {
                    let mut t = Vec::new();
                    terms(m, &mut t);
                    if t.iter().any(|x| qt.contains(x)) {
                        mods.push(m.to_string());
                    }
                }
            }
        }
        mods.sort();
        mods.truncate(8);
        (out, mods)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synonyms_yaml_subset() {
        let m =
            parse_synonyms("# c\nauth: [login, authentication]\ndb:\n  - database\n  - 'sql'\n")
                .unwrap();
        assert_eq!(m["auth"], vec!["login", "authentication"]);
        assert_eq!(m["db"], vec!["database", "sql"]);
        assert!(parse_synonyms("x y z").is_err());
        assert!(!parse_synonyms(DEFAULT_SYNONYMS).unwrap().is_empty());
    }
}
