//! Routing: what kind of question a query is (a name, a relation, a flow,
//! a pattern, a concept), and the routed answers read from the tables.

use super::*;

/// What kind of question a query is (no LLM: patterns over the words).
#[derive(Clone, Debug, PartialEq)]
pub enum QueryType {
    /// A name: `parse_date`, `QuerySet.filter`, `http.Server`.
    Symbol(String),
    /// A relation: `what calls X`, `who imports Y`, `subclasses of Z`, `what does X call`.
    Relationship { relation: Relation, target: String },
    /// A path through the code: `from the API to the DB`.
    Flow { from: String, to: String },
    /// How a family of similar files works: `how do importers work`.
    Pattern(String),
    /// Anything else: a description of behaviour.
    Concept,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Relation {
    Callers,
    Callees,
    Importers,
    Imports,
    Subclasses,
}

impl Relation {
    pub fn name(self) -> &'static str {
        match self {
            Relation::Callers => "callers",
            Relation::Callees => "callees",
            Relation::Importers => "importers",
            Relation::Imports => "imports",
            Relation::Subclasses => "subclasses",
        }
    }
}

impl QueryType {
    pub fn label(&self) -> &'static str {
        match self {
            QueryType::Symbol(_) => "symbol",
            QueryType::Relationship { .. } => "relationship",
            QueryType::Flow { .. } => "flow",
            QueryType::Pattern(_) => "pattern",
            QueryType::Concept => "concept",
        }
    }
}

pub(crate) fn clean_target(s: &str) -> String {
    s.trim()
        .trim_end_matches(['?', '.', '!'])
        .trim()
        .trim_matches(['`', '"', '\''])
        .trim_start_matches("the ")
        .trim_end_matches("()")
        .trim()
        .to_string()
}

/// The regex of a pattern written in this file, compiled once per process:
/// compiling the classifier's dozen patterns on every query took a fifth of
/// a keyword query's time (bench/results/latency.md).
fn compiled(pattern: &'static str) -> &'static regex::Regex {
    type Cache = Mutex<HashMap<&'static str, &'static regex::Regex>>;
    static CACHE: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
    let mut cache = crate::guard::lock(CACHE.get_or_init(Default::default));
    cache.entry(pattern).or_insert_with(|| {
        Box::leak(Box::new(
            regex::Regex::new(pattern).expect("a valid regex written in route.rs"),
        ))
    })
}

/// Is `s` shaped like a code name (not an English word)?
pub fn looks_like_symbol(s: &str) -> bool {
    let re = compiled(r"^[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?$");
    if !re.is_match(s) {
        return false;
    }
    let core = s.trim_end_matches("()");
    core.contains('_')
        || core.contains('.')
        || core.contains("::")
        || s.ends_with("()")
        || core.chars().skip(1).any(|c| c.is_uppercase())
        || core.chars().next().is_some_and(|c| c.is_uppercase())
}

/// Classify a query. `is_symbol` says whether a bare word names a definition.
pub fn classify(q: &str, is_symbol: &dyn Fn(&str) -> bool) -> QueryType {
    let q = q.trim();
    let lq = q.to_lowercase();
    let rel = |re: &'static str| compiled(re).captures(&lq);
    let original = |lc: &str| -> String {
        // Recover the original casing of a captured span.
        match lq.find(lc) {
            Some(i) if q.len() == lq.len() => clean_target(&q[i..i + lc.len()]),
            _ => clean_target(lc),
        }
    };
    let pats: [(&str, Relation); 8] = [
        (
            r"^(?:what|who|which\s+\w+)\s+(?:calls|invokes|uses)\s+(.+)$",
            Relation::Callers,
        ),
        (
            r"^(?:callers|usages|uses|call sites|references)\s+(?:of|to)\s+(.+)$",
            Relation::Callers,
        ),
        (
            r"^where\s+is\s+(.+?)\s+(?:called|used|invoked|referenced)\b.*$",
            Relation::Callers,
        ),
        (
            r"^(?:what|who|which\s+\w+)\s+(?:imports|depends on|requires)\s+(.+)$",
            Relation::Importers,
        ),
        (
            r"^(?:importers|dependents)\s+of\s+(.+)$",
            Relation::Importers,
        ),
        (
            r"^(?:what|who|which\s+\w+)\s+(?:extends|implements|inherits from|subclasses)\s+(.+)$",
            Relation::Subclasses,
        ),
        (
            r"^(?:subclasses|implementations|implementers)\s+of\s+(.+)$",
            Relation::Subclasses,
        ),
        (r"^what\s+does\s+(.+?)\s+call\??$", Relation::Callees),
    ];
    for (re, r) in pats {
        if let Some(c) = rel(re) {
            let t = original(c.get(1).unwrap().as_str());
            if !t.is_empty() {
                return QueryType::Relationship {
                    relation: r,
                    target: t,
                };
            }
        }
    }
    if let Some(c) = rel(r"^what\s+does\s+(.+?)\s+(?:import|depend on)\??$") {
        return QueryType::Relationship {
            relation: Relation::Imports,
            target: original(c.get(1).unwrap().as_str()),
        };
    }
    // A flow question starts with "from" ("from the API to the DB", "flow from
    // X to Y") or asks how something goes/gets/flows from X to Y; a sentence
    // such as "create a dict with keys from iterable and values set to value"
    // is not one.
    let flowish = compiled(
        r"^(?:(?:the\s+)?(?:data\s+|request\s+|call\s+)?(?:flow|path|trace)\s+)?from\s",
    )
    .is_match(&lq)
        || compiled(
            r"\b(?:flows?|path|trace|travels?|goes|go|gets?|pass(?:es)?|moves?)\b[^.]*?\bfrom\s",
        )
        .is_match(&lq);
    if let Some(c) =
        rel(r"\bfrom\s+(?:the\s+)?(.+?)\s+(?:to|into|down to|through to)\s+(?:the\s+)?(.+?)\??$")
            .filter(|_| flowish)
    {
        let (f, t) = (clean_target(&c[1]), clean_target(&c[2]));
        if !f.is_empty() && !t.is_empty() && f.split_whitespace().count() <= 4 {
            return QueryType::Flow { from: f, to: t };
        }
    }
    if let Some(c) = rel(r"^how\s+(?:do|are)\s+(?:the\s+|all\s+)?(.+?)\s+(?:work|implemented|written|structured|defined|registered|organized)\??$")
        .or_else(|| rel(r"^how\s+(?:do\s+i|to|should\s+i)\s+(?:write|add|implement|create|make)\s+(?:a\s+|an\s+|another\s+|new\s+)*(.+?)\??$"))
    {
        return QueryType::Pattern(clean_target(&c[1]));
    }
    let words: Vec<&str> = q.split_whitespace().collect();
    if words.len() == 1 {
        let w = words[0].trim_end_matches("()");
        if looks_like_symbol(words[0]) || is_symbol(w) {
            return QueryType::Symbol(w.to_string());
        }
    }
    QueryType::Concept
}

/// A question about how something works: "how ..." (`how spawned tasks are
/// scheduled onto threads`, `how to serialize models to JSON`) or an
/// [`is_explanation`] question. Its answer is a mechanism, which a file
/// holds across several chunks, so hybrid mode lets files vote
/// ([`super::fusion::file_vote`]). Navigation docs stay for
/// [`is_explanation`]'s narrower forms: lifting them for every "how ..."
/// cost semble's benchmark 0.004 in keyword mode (bench/results/ranking.md).
pub fn asks_how(q: &str) -> bool {
    let l = q.trim_start().to_lowercase();
    l.starts_with("how ") || is_explanation(&l)
}

/// "How does X work"-style questions, where navigation docs help.
pub fn is_explanation(q: &str) -> bool {
    let l = q.to_lowercase();
    [
        "how does",
        "how do",
        "how is",
        "how are",
        "what is",
        "explain",
        "overview",
        "architecture",
        "why",
    ]
    .iter()
    .any(|p| l.starts_with(p))
}

impl Ctx<'_> {
    /// Pattern chunks matching a subject, each followed by its canonical file.
    pub(crate) fn pattern_hits(
        &self,
        subject: &str,
        allowed: &Allowed,
    ) -> Vec<(usize, f32, String)> {
        let eng = self.eng;
        let only = |i: usize| eng.chunks[i].kind == "pattern" && allowed(i);
        let mut out = Vec::new();
        for (ci, _) in eng.bm25.search(subject, &only, 3) {
            let c = &eng.chunks[ci];
            let name = c.symbol.as_deref().unwrap_or_default();
            out.push((ci, 1.0, format!("pattern: {name}")));
            if let Some(&(lo, hi)) = eng.file_chunks.get(&(c.snap, c.file)) {
                let best = (lo..hi)
                    .filter(|&i| allowed(i))
                    .find(|&i| {
                        matches!(eng.chunks[i].kind, "definition" | "class_summary" | "file")
                    })
                    .unwrap_or(lo);
                out.push((best, 1.0, format!("canonical example of pattern: {name}")));
            }
        }
        out
    }

    /// Chunks holding the definitions of `name`.
    pub(crate) fn definition_hits(
        &self,
        name: &str,
        repos: &[String],
        allowed: &Allowed,
    ) -> Result<Vec<(usize, f32, String)>, ToolError> {
        let rows = self.store.definitions_named(name, repos)?;
        Ok(self.rows_to_chunks(
            rows,
            allowed,
            |r| (&r.repo, &r.path, r.line),
            |r| {
                (
                    format!("definition of {} ({})", r.qualified_name, r.kind),
                    r.tier as f32,
                )
            },
        ))
    }

    /// Map rows at (repo, path, line) to distinct chunks.
    pub(crate) fn rows_to_chunks<R>(
        &self,
        rows: Vec<R>,
        allowed: &Allowed,
        at: impl Fn(&R) -> (&str, &str, i64),
        why: impl Fn(&R) -> (String, f32),
    ) -> Vec<(usize, f32, String)> {
        let eng = self.eng;
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for r in rows {
            let (repo, path, line) = at(&r);
            let Some(si) = self.snaps.iter().position(|s| s.repo() == repo) else {
                continue;
            };
            let Some(fi) = self.snaps[si].file_index(path) else {
                continue;
            };
            let line = line.max(1) as u32;
            if let Some(ci) = eng.chunk_at(si as u32, fi, line) {
                if allowed(ci) && seen.insert(ci) {
                    let (why, v) = why(&r);
                    out.push((ci, v, why));
                }
            }
        }
        out
    }

    pub(crate) fn relation_hits(
        &self,
        rel: Relation,
        target: &str,
        repos: &[String],
        allowed: &Allowed,
    ) -> Result<Vec<(usize, f32, String)>, ToolError> {
        let store = self.store;
        let rows = match rel {
            Relation::Callers => store.callers(target, repos)?,
            Relation::Subclasses => store.subclasses(target, repos)?,
            Relation::Importers => store.importers(target, repos)?,
            Relation::Callees => store.callees(target, repos)?,
            Relation::Imports => store.imports(target, repos)?,
        };
        Ok(self.rows_to_chunks(
            rows,
            allowed,
            |r| (&r.repo, &r.path, r.line),
            |r| {
                let why = match rel {
                    Relation::Callers => format!("calls {} at line {}", r.name, r.line),
                    Relation::Subclasses => {
                        format!("extends/implements {} at line {}", r.name, r.line)
                    }
                    Relation::Importers => format!("imports {} at line {}", r.name, r.line),
                    Relation::Callees => format!("called by {}", r.symbol),
                    Relation::Imports => format!("imported by {}", r.symbol),
                };
                (why, 1.0)
            },
        ))
    }
}
