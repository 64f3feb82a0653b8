//! Ranking: candidates from keyword and vectors, fused, weighted (tests
//! down, named definitions up, navigation docs for explanations), routed
//! answers first, then one best chunk per file.

use super::fusion::{file_vote, fuse};
use super::*;
use code_index_schemas::keyword::K1;

/// A ranked result list (before paging), cached per query.
pub struct Ranked {
    pub query_type: String,
    pub mode: String,
    /// (chunk index, score, why).
    pub hits: Vec<(usize, f32, String)>,
    pub semantic: bool,
    pub notice: Option<String>,
}

#[derive(Clone, Copy, PartialEq)]
pub enum Tests {
    Include,
    Exclude,
    Only,
}

/// Which chunks a query may return.
pub struct Scope {
    /// By snapshot index: selected.
    pub snaps: Vec<bool>,
    pub lang: Option<String>,
    pub path: Option<String>,
    pub module: Option<String>,
    pub tests: Tests,
}

impl Scope {
    pub fn allows(&self, c: &ChunkMeta, snaps: &[Snapshot]) -> bool {
        self.allows_tests(c) && self.allows_place(c, snaps)
    }

    /// The `include_tests` part of the scope.
    pub fn allows_tests(&self, c: &ChunkMeta) -> bool {
        match self.tests {
            Tests::Exclude => !c.is_test,
            Tests::Only => c.is_test,
            Tests::Include => true,
        }
    }

    /// Every part of the scope but `include_tests`: repos, lang, path, module.
    pub fn allows_place(&self, c: &ChunkMeta, snaps: &[Snapshot]) -> bool {
        // Cheapest tests first: this runs for every posting a query's
        // terms have.
        if !self.snaps[c.snap as usize]
            || self.path.is_some() && c.kind == "pattern"
            || !snaps[c.snap as usize].visible(c.file)
        {
            return false;
        }
        let f = &snaps[c.snap as usize].files[c.file as usize];
        if let Some(l) = &self.lang {
            if &f.language != l {
                return false;
            }
        }
        if let Some(p) = &self.path {
            if !(f.path == *p || f.path.starts_with(&format!("{p}/")) || p.is_empty()) {
                return false;
            }
        }
        if let Some(m) = &self.module {
            let mp = c.module.as_deref().unwrap_or("");
            let ok = mp == m
                || mp.starts_with(&format!("{m}."))
                || mp.starts_with(&format!("{m}/"))
                || mp.starts_with(&format!("{m}::"));
            if !ok {
                return false;
            }
        }
        true
    }
}

/// Words after which a name is a point of comparison, not the subject.
const COMPARED: &[&str] = &["like", "as", "to", "than", "unlike", "except", "if"];

/// The names a query gives as identifiers, lowercased: words written as code
/// (`parse_date`, `QuerySet`, `reset()`; of `Header.FileInfo` the last part), every word of a
/// short query (three words or fewer: `queryset filter`), and every word of
/// an explanation question (`how does the autodetector work`). In a sentence
/// such as "Reset clears the block", `Reset` is English, not a name: boosting
/// every `Reset` method for it cost 0.05-0.13 MRR@10 on the Go evaluation.
/// A name right after one of [`COMPARED`] is not the subject.
pub(crate) fn named_identifiers(q: &str, explain: bool) -> Vec<String> {
    let words: Vec<&str> = q.split_whitespace().collect();
    let all = explain || words.len() <= 3;
    let mut out = Vec::new();
    let mut prev = "";
    for w in words {
        let after = std::mem::replace(&mut prev, w);
        // `Like X, but`, `same as X`, `similar to X`: the sentence describes
        // something else than X (Django reference-doc set, hybrid MRR@10
        // 0.604 -> 0.611, keyword 0.485 -> 0.492; semble's benchmark
        // unchanged). After `of` a name is as often the answer (`an
        // instance of FieldFile`) as not (`a subclass of GeoModelAdmin`).
        if !all && COMPARED.contains(&after.to_lowercase().as_str()) {
            continue;
        }
        let w = w.trim_matches(|c: char| {
            !(c.is_alphanumeric() || c == '_' || c == '(' || c == ')' || c == '.' || c == ':')
        });
        let w = w.trim_end_matches('.');
        let code_like = w.contains('_')
            || w.ends_with("()")
            || w.contains("::")
            || (w.contains('.') && !w.ends_with('.'))
            || w.chars().skip(1).any(|c| c.is_uppercase()) && w.chars().any(|c| c.is_lowercase());
        if !(all || code_like) {
            continue;
        }
        // `time.gmtime()` names gmtime; `Header.FileInfo` names FileInfo.
        if let Some(last) = w
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .rfind(|p| !p.is_empty())
        {
            out.push(last.to_lowercase());
        }
    }
    out
}

/// Move a chunk lying inside a higher-ranked class summary of the same file
/// just above that summary when it scores at least 60% of it.
pub(crate) fn specific_first(hits: &mut [(usize, f32, String)], chunks: &[ChunkMeta]) {
    let n = hits.len().min(MAX_RESULTS * 2);
    for i in 0..n {
        let ci = hits[i].0;
        let c = &chunks[ci];
        if c.kind != "class_summary" {
            continue;
        }
        let best_inside = (i + 1..n).find(|&j| {
            let d = &chunks[hits[j].0];
            d.snap == c.snap
                && d.file == c.file
                && d.kind != "pattern"
                && d.start_line >= c.start_line
                && d.end_line <= c.end_line
                && hits[j].1 >= 0.6 * hits[i].1
        });
        if let Some(j) = best_inside {
            hits[i..=j].rotate_right(1);
            hits[i].1 = hits[i + 1].1;
        }
    }
}

/// Keyword candidates the proximity bonus reads (their text is tokenized
/// at query time): 30, 50 and 100 score alike (semble keyword 0.8580 /
/// 0.8581 / 0.8584, the reference-doc set 0.511 / 0.511 / 0.510), and 100
/// costs 3 ms more per query (bench/results/ranking.md).
const PROXIMITY_TOP: usize = 30;
/// Terms apart that still count as near: 1 / 2 / 5 give semble keyword
/// 0.8571 / 0.8585 / 0.8573, the reference-doc set 0.510 / 0.508 / 0.503
/// (weight 0.3). An identifier's whole form comes before its parts, so 2
/// spans `make_naive datetime`.
const PROXIMITY_WINDOW: usize = 2;

/// For each pair of adjacent terms of `seq` (`seq[a]`, `seq[a + 1]`), how
/// many places of `text` hold the first with the second within
/// [`PROXIMITY_WINDOW`] terms (before or after it).
pub(crate) fn near_pairs(seq: &[String], text: &str) -> Vec<usize> {
    let mut pos: Vec<Vec<usize>> = vec![Vec::new(); seq.len()];
    let mut at = 0usize;
    code_index_schemas::keyword::for_each_term(text, |t| {
        for (j, x) in seq.iter().enumerate() {
            if x == t {
                pos[j].push(at);
            }
        }
        at += 1;
    });
    (1..seq.len())
        .map(|b| {
            pos[b - 1]
                .iter()
                .filter(|&&pa| pos[b].iter().any(|&pb| pa.abs_diff(pb) <= PROXIMITY_WINDOW))
                .count()
        })
        .collect()
}

/// Weight of a doc chunk (Markdown, README-like text) for a query that
/// is not an explanation question. On semble's benchmark, keyword, NDCG@10
/// at 1.0 / 0.5 / 0.25: 27 repos 0.708 / 0.723 / 0.724 (5 repos 0.723 /
/// 0.769 / 0.777); neutral on the Django reference-doc set (no docs there).
const DOC_WEIGHT: f32 = 0.5;

impl Ctx<'_> {
    /// Weights after fusion: tests down, definitions named in the query up,
    /// navigation docs up for explanation questions.
    pub(crate) fn weight(&self, c: &ChunkMeta, q_idents: &[String], explain: bool) -> f32 {
        // Tests are down-weighted with the other path priors (rerank.rs).
        let mut w = if c.is_test && !super::rerank::enabled("penalty") {
            0.5
        } else {
            1.0
        };
        if !explain && c.chunk_type != "code" {
            // Docs answer "how does X work"; other queries want the code.
            w *= DOC_WEIGHT;
        }
        if explain && c.weight > 1.0 {
            w *= c.weight;
        }
        if let Some(s) = &c.symbol {
            let last = super::rerank::last_name(s).to_lowercase();
            if q_idents.contains(&last) {
                w *= 1.5;
            }
        }
        w
    }

    pub(crate) fn keyword_list(&self, q: &str, allowed: &Allowed) -> Vec<(usize, f32)> {
        let mut v = self.eng.bm25.search(q, allowed, CANDIDATES);
        let w = super::rerank::knobs().proximity;
        if w > 0.0 && super::rerank::enabled("proximity") {
            self.proximity(q, &mut v, w);
        }
        v
    }

    /// BM25 scores each term alone: a chunk that holds "naive" in one
    /// place and "datetime" in another scores as one that says "naive
    /// datetime". The [`PROXIMITY_TOP`] best keyword candidates gain, for
    /// each pair of adjacent query terms standing within
    /// [`PROXIMITY_WINDOW`] terms of each other in their text, `w` × the
    /// pair's smaller idf, saturated in the number of such places as BM25
    /// saturates a term's frequency; then the list is sorted again.
    fn proximity(&self, q: &str, v: &mut [(usize, f32)], w: f32) {
        let mut seq: Vec<String> = Vec::new();
        code_index_schemas::keyword::for_each_term(q, |t| seq.push(t.to_string()));
        seq.dedup();
        let bm25 = &self.eng.bm25;
        let pairs: Vec<(usize, f32)> = (1..seq.len())
            .map(|i| (i - 1, bm25.idf(&seq[i - 1]).min(bm25.idf(&seq[i]))))
            .filter(|p| p.1 > 0.0)
            .collect();
        if pairs.is_empty() {
            return;
        }
        let n = v.len().min(PROXIMITY_TOP);
        for h in v[..n].iter_mut() {
            let near = with_chunk_text(&self.eng.chunks[h.0], self.snaps, |text| {
                near_pairs(&seq, text)
            });
            let bonus: f32 = pairs
                .iter()
                .filter(|p| near[p.0] > 0)
                .map(|&(a, idf)| {
                    let n = near[a] as f32;
                    idf * n * (K1 + 1.0) / (n + K1)
                })
                .sum();
            h.1 += w * bonus;
        }
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    }

    /// Semantic candidates over the selected snapshots; Err = why not available.
    pub(crate) fn semantic_list(
        &self,
        q: &str,
        snaps: &[usize],
        allowed: &Allowed,
    ) -> Result<Vec<(usize, f32)>, String> {
        let eng = self.eng;
        let mut all = Vec::new();
        let mut why = Vec::new();
        let mut any = false;
        for &si in snaps {
            match &eng.vectors[si] {
                Ok(sv) => match eng
                    .check_weights(sv)
                    .and_then(|_| eng.query_vector(&sv.model, q))
                {
                    Ok(qv) => {
                        any = true;
                        all.extend(eng.semantic(si, &qv, allowed, CANDIDATES));
                    }
                    Err(e) => why.push(format!(
                        "{}: cannot embed the query with {} ({}: {}; {})",
                        self.snaps[si].repo(),
                        sv.model,
                        e.code,
                        e.message,
                        e.hint
                    )),
                },
                Err(e) => why.push(format!("{}: {e}", self.snaps[si].repo())),
            }
        }
        if !any {
            return Err(why.join("; "));
        }
        top_k(&mut all, CANDIDATES);
        Ok(all)
    }

    /// The ranked chunks for `query` in `mode` over the snapshots `snaps`
    /// (indexes into `Ctx::snaps`) within `scope`, [`MAX_RESULTS`] in all.
    /// `per_file` caps the chunks of one file; unset, each file's best chunk
    /// comes first and, when fewer files than [`MAX_RESULTS`] matched, the
    /// files' other chunks follow in score order (a small repository still
    /// fills a page).
    pub fn rank(
        &self,
        query: &str,
        mode: &str,
        per_file: Option<usize>,
        scope: &Scope,
        snaps: &[usize],
    ) -> Result<Ranked, ToolError> {
        let mut r = self.fused(query, mode, scope, snaps)?;
        let chunks = &self.eng.chunks;
        // A class summary yields to a chunk inside it that scores nearly
        // as well (the method the query is about is the better answer).
        specific_first(&mut r.hits, chunks);
        let cap = per_file.unwrap_or(1).max(1);
        // The spans kept per file: a later chunk within one of them (a class
        // summary over its class's definition) adds no line.
        let mut per: HashMap<(u32, u32, bool), Vec<(u32, u32)>> = HashMap::new();
        let mut rest = Vec::new();
        r.hits.retain(|h| {
            let c = &chunks[h.0];
            // A pattern chunk does not take its canonical file's place.
            let spans = per
                .entry((c.snap, c.file, c.kind == "pattern"))
                .or_default();
            if spans
                .iter()
                .any(|&(a, b)| a <= c.start_line && c.end_line <= b)
            {
                return false;
            }
            spans.push((c.start_line, c.end_line));
            if spans.len() > cap && per_file.is_none() {
                rest.push(h.clone());
            }
            spans.len() <= cap
        });
        if r.hits.len() < MAX_RESULTS {
            r.hits.extend(rest);
        }
        r.hits.truncate(MAX_RESULTS);
        Ok(r)
    }

    /// Routed answers first, then the fused and weighted text candidates.
    pub(crate) fn fused(
        &self,
        query: &str,
        mode: &str,
        scope: &Scope,
        snaps: &[usize],
    ) -> Result<Ranked, ToolError> {
        let eng = self.eng;
        let chunks = &eng.chunks;
        let all_snaps = self.snaps;
        // Candidates and the ranking stage see tests whatever `include_tests`
        // says, and the tests filter comes last: a result scores the same
        // whether tests are included, excluded or asked for alone (the
        // ranking stage's boosts are relative to the best candidate).
        let allowed = |i: usize| scope.allows_place(&chunks[i], all_snaps);
        let mode = mode.to_string();
        let q = query.trim();
        if mode == "regex" {
            return self.rank_regex(q, scope, snaps);
        }
        if !["hybrid", "semantic", "keyword"].contains(&mode.as_str()) {
            return Err(ToolError::invalid_argument(
                format!("mode {mode:?} is not one of the values"),
                "use hybrid (default), semantic, keyword or regex",
            ));
        }
        let repos: Vec<String> = snaps
            .iter()
            .map(|&i| all_snaps[i].repo().to_string())
            .collect();
        let is_symbol = |w: &str| self.store.has_symbol(w, &repos).unwrap_or(false);
        let qt = classify(q, &is_symbol);
        let (routed, mut notice) = self.routed(&qt, &repos, snaps, &allowed)?;
        let text_query = match &qt {
            QueryType::Relationship { target, .. } => target.clone(),
            QueryType::Pattern(subject) => subject.clone(),
            QueryType::Flow { from, to } => format!("{from} {to}"),
            _ => q.to_string(),
        };
        let explain = is_explanation(q) || matches!(qt, QueryType::Pattern(_));
        let (kw, sem, effective) =
            self.candidates(&text_query, &mode, snaps, &allowed, &mut notice);
        // Vectors took part unless the mode is (or fell back to) keyword.
        let semantic_on = effective != "keyword";
        let kw_set: HashSet<usize> = kw.iter().map(|x| x.0).collect();
        let sem_set: HashSet<usize> = sem.iter().map(|x| x.0).collect();
        let fused: Vec<(usize, f32)> = match effective.as_str() {
            "keyword" => kw.clone(),
            "semantic" => sem.clone(),
            _ => fuse(&kw, &sem, &text_query),
        };
        // A "how ..." question: files vote (fusion.rs).
        let fused = if effective == "hybrid" && asks_how(q) && super::rerank::enabled("filevote") {
            let file_of = |i: usize| (chunks[i].snap, chunks[i].file);
            file_vote(fused, &kw, &sem, file_of, super::rerank::knobs().file_vote)
        } else {
            fused
        };
        let fused = self.credit_included_docs(fused, &allowed);
        // Names to boost. `CODE_INDEX_BOOST=all` (for comparison in
        // bench/eval_search.py) boosts every query word, the earlier rule.
        static BOOST_ALL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let boost_all =
            *BOOST_ALL.get_or_init(|| std::env::var("CODE_INDEX_BOOST").as_deref() == Ok("all"));
        let idents = if boost_all {
            text_query
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .map(|w| w.to_lowercase())
                .collect()
        } else {
            named_identifiers(&text_query, explain)
        };
        let mut scored: Vec<(usize, f32, String)> = fused
            .into_iter()
            .map(|(i, s)| {
                let why = match (kw_set.contains(&i), sem_set.contains(&i)) {
                    (true, true) => "keyword+semantic",
                    (true, false) => "keyword",
                    (false, true) => "semantic",
                    _ => "its included documentation matches",
                };
                (
                    i,
                    s * self.weight(&chunks[i], &idents, explain),
                    why.to_string(),
                )
            })
            .collect();
        self.rerank(
            &text_query,
            matches!(qt, QueryType::Symbol(_)),
            semantic_on,
            &mut scored,
            &allowed,
        );
        scored.sort_by(|a, b| {
            b.1.partial_cmp(&a.1)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.0.cmp(&b.0))
        });
        // A name's definitions: the closest matches of the name first, then
        // as the text ranking orders them (a file named after the name, the
        // fewest penalties, the most mentions), not by path.
        let mut routed = routed;
        if matches!(qt, QueryType::Symbol(_)) {
            let text: HashMap<usize, f32> = scored.iter().map(|h| (h.0, h.1)).collect();
            let at = |i: usize| text.get(&i).copied().unwrap_or(0.0);
            routed.sort_by(|a, b| a.1.total_cmp(&b.1).then(at(b.0).total_cmp(&at(a.0))));
        }
        // Routed hits first, scored above the best text result.
        let top = scored.first().map(|x| x.1).unwrap_or(1.0).max(1e-6);
        let n = routed.len() as f32;
        let mut hits: Vec<(usize, f32, String)> = routed
            .into_iter()
            .enumerate()
            .map(|(r, (i, _, why))| (i, top * (2.0 + (n - r as f32) / n.max(1.0)), why))
            .collect();
        let seen: HashSet<usize> = hits.iter().map(|h| h.0).collect();
        hits.extend(scored.into_iter().filter(|h| !seen.contains(&h.0)));
        hits.retain(|h| scope.allows_tests(&chunks[h.0]));
        Ok(Ranked {
            query_type: qt.label().into(),
            mode: effective,
            hits,
            semantic: semantic_on,
            notice,
        })
    }

    /// A doc file that a source file includes as its documentation speaks
    /// for that file: the chunk holding the attribute takes the doc's fused
    /// score when higher, and joins the candidates when missing (axum's
    /// `middleware/mod.rs` for a match in `docs/middleware.md`). The weights
    /// after fusion then treat it as the code it is.
    fn credit_included_docs(
        &self,
        mut fused: Vec<(usize, f32)>,
        allowed: &Allowed,
    ) -> Vec<(usize, f32)> {
        let eng = self.eng;
        if eng.doc_of.is_empty() || !super::rerank::enabled("included") {
            return fused;
        }
        let mut take: HashMap<usize, f32> = HashMap::new();
        for &(i, s) in &fused {
            let c = &eng.chunks[i];
            for &h in eng.doc_of.get(&(c.snap, c.file)).into_iter().flatten() {
                let e = take.entry(h).or_insert(0.0);
                *e = e.max(s);
            }
        }
        if take.is_empty() {
            return fused;
        }
        for f in fused.iter_mut() {
            if let Some(s) = take.remove(&f.0) {
                f.1 = f.1.max(s);
            }
        }
        let mut rest: Vec<(usize, f32)> = take.into_iter().filter(|&(i, _)| allowed(i)).collect();
        rest.sort_unstable_by_key(|x| x.0);
        fused.extend(rest);
        fused
    }

    /// The keyword and vector candidates for `text_query` in `mode`, and the
    /// mode that ran (keyword when vectors are unavailable, said in `notice`).
    fn candidates(
        &self,
        text_query: &str,
        mode: &str,
        snaps: &[usize],
        allowed: &Allowed,
        notice: &mut Option<String>,
    ) -> (Scored, Scored, String) {
        let eng = self.eng;
        let want_kw = mode != "semantic" || eng.vectors.iter().all(|v| v.is_err());
        let keyword = || {
            if want_kw {
                self.keyword_list(text_query, allowed)
            } else {
                Vec::new()
            }
        };
        // In hybrid mode the query's embedding (a transformer pass) and
        // the keyword ranking run side by side: the embedding on a thread
        // of its own, the keyword list here (bench/results/latency.md).
        let (kw, sem_list) = if mode == "keyword" {
            (keyword(), None)
        } else if want_kw {
            std::thread::scope(|s| {
                let sem = s.spawn(|| self.semantic_list(text_query, snaps, allowed));
                let kw = keyword();
                let sem = sem
                    .join()
                    .unwrap_or_else(|_| Err("the query's embedding failed".to_string()));
                (kw, Some(sem))
            })
        } else {
            (
                Vec::new(),
                Some(self.semantic_list(text_query, snaps, allowed)),
            )
        };
        let mut sem = Vec::new();
        let mut effective = mode.to_string();
        if let Some(sem_list) = sem_list {
            match sem_list {
                Ok(v) => {
                    sem = v;
                }
                Err(why) => {
                    let n = format!("semantic search unavailable ({why}); ran keyword only");
                    *notice = Some(match notice.take() {
                        Some(p) => format!("{p}; {n}"),
                        None => n,
                    });
                    effective = "keyword".into();
                }
            }
        }
        let kw = if effective == "keyword" && kw.is_empty() && mode == "semantic" {
            self.keyword_list(text_query, allowed)
        } else {
            kw
        };
        (kw, sem, effective)
    }

    /// Routed answers, which come first: a relation's edges, a name's
    /// definitions, a pattern's files, a flow's path; and a notice when a
    /// routed question found nothing.
    fn routed(
        &self,
        qt: &QueryType,
        repos: &[String],
        snaps: &[usize],
        allowed: &Allowed,
    ) -> Result<(Hits, Option<String>), ToolError> {
        let mut notice = None;
        let mut routed: Vec<(usize, f32, String)> = Vec::new();
        match qt {
            QueryType::Relationship { relation, target } => {
                routed = self.relation_hits(*relation, target, repos, allowed)?;
                if routed.is_empty() {
                    notice = Some(format!(
                        "no {} of {target:?} in the edges table; showing text results instead",
                        relation.name()
                    ));
                }
            }
            QueryType::Symbol(name) => {
                routed = self.definition_hits(name, repos, allowed)?;
            }
            QueryType::Pattern(subject) => {
                routed = self.pattern_hits(subject, allowed);
                if routed.is_empty() {
                    notice = Some(format!(
                        "no detected pattern matches {subject:?}; showing concept results"
                    ));
                }
            }
            QueryType::Flow { from, to } => {
                routed = self.flow_hits(from, to, snaps, allowed)?;
                if routed.is_empty() {
                    notice = Some(format!(
                        "no import/call path found from {from:?} to {to:?}; showing results for both ends"
                    ));
                }
            }
            _ => {}
        }
        Ok((routed, notice))
    }

    pub(crate) fn rank_regex(
        &self,
        q: &str,
        scope: &Scope,
        snaps: &[usize],
    ) -> Result<Ranked, ToolError> {
        let eng = self.eng;
        let req = crate::grep::GrepRequest {
            pattern: q.to_string(),
            fixed_string: false,
            case_sensitive: None,
            whole_word: false,
            multiline: false,
            globs: Vec::new(),
            path: scope.path.clone(),
            lang: scope.lang.clone(),
            before: 0,
            after: 0,
            max_count: None,
            limit: 1000,
            budget: crate::grep::SCAN_BUDGET,
            per_file_limit: None,
        };
        let sel: Vec<&Snapshot> = snaps.iter().map(|&i| &self.snaps[i]).collect();
        let (compiled, files) = crate::grep::compile_scoped(&req, &sel).map_err(|e| {
            e.pattern_hint("fix the regex (Rust regex syntax, as ripgrep), or use mode keyword for plain words")
        })?;
        let page = crate::grep::scan_up_to(&files, &compiled, (0, 0), 5000);
        let mut per_chunk: HashMap<usize, (f32, u64)> = HashMap::new();
        for m in &page.matches {
            let Some(si) = self.snaps.iter().position(|s| s.repo() == m.repo) else {
                continue;
            };
            let Some(fi) = self.snaps[si].file_index(&m.path) else {
                continue;
            };
            if let Some(ci) = eng.chunk_at(si as u32, fi, m.line as u32) {
                if scope.allows(&eng.chunks[ci], self.snaps) {
                    let e = per_chunk.entry(ci).or_insert((0.0, m.line));
                    e.0 += 1.0;
                }
            }
        }
        let mut hits: Vec<(usize, f32, String)> = per_chunk
            .into_iter()
            .map(|(ci, (n, line))| (ci, n, format!("regex match at line {line}")))
            .collect();
        hits.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0)));
        Ok(Ranked {
            query_type: "regex".into(),
            mode: "regex".into(),
            hits,
            semantic: false,
            notice: page.partial.then(|| {
                "the scan budget ran out: results are partial; narrow path or lang".to_string()
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_terms_near_each_other() {
        let mut seq = Vec::new();
        code_index_schemas::keyword::for_each_term("a naive datetime from an aware one", |t| {
            seq.push(t.to_string())
        });
        assert_eq!(seq, ["naiv", "datetim", "awar", "one"]);
        // Near in either order (an identifier is three terms: its whole
        // form, then its parts), counted per place; and too far apart.
        let text =
            "def make_naive(value):\n    Make an aware datetime naive. The aware one is kept.";
        assert_eq!(near_pairs(&seq, text), [1, 1, 1]);
        assert_eq!(near_pairs(&seq, "naive datetime naive"), [2, 0, 0]);
        assert_eq!(
            near_pairs(&seq, "naive values of any kind, then datetime"),
            [0, 0, 0]
        );
    }

    #[test]
    fn only_names_written_as_code_are_boosted_in_sentences() {
        assert!(named_identifiers("Reset clears the block with all zeros.", false).is_empty());
        let v = named_identifiers("Returns an fs.FileInfo for the Header.", false);
        assert_eq!(v, vec!["fileinfo"]);
        let v = named_identifiers(
            "Return UTC time tuple compatible with time.gmtime().",
            false,
        );
        assert_eq!(v, vec!["gmtime"]);
        let v = named_identifiers("where is parse_date called from the views", false);
        assert_eq!(v, vec!["parse_date"]);
        assert_eq!(
            named_identifiers("call reset() twice on errors", false),
            vec!["reset"]
        );
        assert_eq!(
            named_identifiers("queryset filter", false),
            vec!["queryset", "filter"]
        );
        assert!(named_identifiers("Like set_cookie(), but signs it.", false).is_empty());
        assert!(named_identifiers("Similar to SplitDateTimeWidget, but hidden", false).is_empty());
        assert_eq!(
            named_identifiers("An instance of FieldFile as a proxy", false),
            vec!["fieldfile"]
        );
        let v = named_identifiers("how does the autodetector work", true);
        assert!(v.contains(&"autodetector".to_string()));
    }
}
