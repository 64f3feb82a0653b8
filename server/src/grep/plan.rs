//! Query planning: a grep's regex becomes a boolean query over the
//! snapshot's n-grams (`ngrams.bin`), true of every file the regex can
//! match in, so the exact scan only visits the files that satisfy it.
//!
//! The analysis walks the regex's syntax tree (regex-syntax's `Hir`) and
//! keeps, per node, the set of strings it matches exactly when that set is
//! small (`exact`), and otherwise a boolean condition every match satisfies
//! (`q`). Concatenation crosses exact sets (`ab[cd]` → {abc, abd}); a set that
//! grows too large, and any repetition that may match nothing, becomes a
//! condition: each exact string's trigrams must all be present (ASCII
//! letters folded to lower case, as indexed), or, for strings shorter than
//! three bytes, its non-ASCII bytes and lead-byte pairs (the indexed unigrams
//! and bigrams). A wide class without ASCII (`\p{Greek}`) needs one of its
//! characters' first two bytes. Case-insensitive
//! patterns need no special case: their letters are classes like `[Kk\u{212A}]`,
//! whose members are all kept. The plan errs only towards more candidates:
//! a pattern it cannot read, or a wide class such as `\w+`, gives `All` and
//! the scan reads every selected file, as without an index.

use std::collections::{BTreeSet, HashMap};

use code_index_schemas::ngram::{bigram, trigram, unigram, NgramIndex};
use regex_syntax::hir::{Class, Hir, HirKind};

use super::GrepRequest;

/// Most strings an exact set may hold before it becomes a condition.
const EXACT_MAX: usize = 256;
/// Most members of a class kept as exact strings.
const CLASS_MAX: usize = 16;
/// Most characters of a non-ASCII class planned as bigrams.
const BIGRAM_CLASS_MAX: u64 = 8192;

/// A boolean query over n-gram keys.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Q {
    /// Every file.
    All,
    /// The files holding the key.
    Gram(u32),
    /// All of (empty: every file).
    And(Vec<Q>),
    /// Any of (empty: no file).
    Or(Vec<Q>),
}

impl Q {
    fn none() -> Q {
        Q::Or(Vec::new())
    }

    fn and(parts: Vec<Q>) -> Q {
        let mut out: BTreeSet<Q> = BTreeSet::new();
        for p in parts {
            match p {
                Q::All => {}
                Q::And(inner) => out.extend(inner),
                Q::Or(ref v) if v.is_empty() => return Q::none(),
                p => {
                    out.insert(p);
                }
            }
        }
        match out.len() {
            0 => Q::All,
            1 => out.into_iter().next().unwrap(),
            _ => Q::And(out.into_iter().collect()),
        }
    }

    fn or(parts: Vec<Q>) -> Q {
        let mut out: BTreeSet<Q> = BTreeSet::new();
        for p in parts {
            match p {
                Q::All => return Q::All,
                Q::Or(inner) => out.extend(inner),
                p => {
                    out.insert(p);
                }
            }
        }
        if out.len() == 1 {
            return out.into_iter().next().unwrap();
        }
        Q::Or(out.into_iter().collect())
    }

    /// Is this `All` (the index cannot narrow the files)?
    pub fn is_all(&self) -> bool {
        matches!(self, Q::All)
    }
}

/// What one regex node is known to match.
struct Info {
    /// Every match is one of these strings (lower-cased ASCII), when known.
    exact: Option<BTreeSet<Vec<u8>>>,
    /// A condition every match's file satisfies (besides `exact`).
    q: Q,
}

impl Info {
    fn exact(set: BTreeSet<Vec<u8>>) -> Info {
        Info {
            exact: Some(set),
            q: Q::All,
        }
    }

    fn empty_string() -> Info {
        Info::exact(BTreeSet::from([Vec::new()]))
    }

    fn any() -> Info {
        Info {
            exact: None,
            q: Q::All,
        }
    }

    /// The whole condition: `q` and, when exact, one of the strings' n-grams.
    fn into_q(self) -> Q {
        match self.exact {
            None => self.q,
            Some(set) => Q::and(vec![
                self.q,
                Q::or(set.iter().map(|s| grams_of(s)).collect()),
            ]),
        }
    }
}

/// The n-grams a string's presence implies.
fn grams_of(s: &[u8]) -> Q {
    if s.len() >= 3 {
        Q::and(
            s.windows(3)
                .map(|w| Q::Gram(trigram(w[0], w[1], w[2])))
                .collect(),
        )
    } else {
        // Shorter: the bigrams of its lead bytes, and its bytes ≥ 0x80.
        let mut parts: Vec<Q> = s
            .iter()
            .filter(|&&b| b >= 0x80)
            .map(|&b| Q::Gram(unigram(b)))
            .collect();
        parts.extend(
            s.windows(2)
                .filter(|w| w[0] >= 0xC0)
                .map(|w| Q::Gram(bigram(w[0], w[1]))),
        );
        Q::and(parts)
    }
}

fn lower(bytes: &[u8]) -> Vec<u8> {
    bytes.iter().map(u8::to_ascii_lowercase).collect()
}

/// A character's UTF-8 bytes.
fn utf8(ch: char) -> Vec<u8> {
    ch.encode_utf8(&mut [0u8; 4]).as_bytes().to_vec()
}

/// The characters of a Unicode class.
fn chars(c: &regex_syntax::hir::ClassUnicode) -> impl Iterator<Item = char> + '_ {
    c.ranges()
        .iter()
        .flat_map(|r| (r.start() as u32..=r.end() as u32).filter_map(char::from_u32))
}

fn analyze(h: &Hir) -> Info {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::empty_string(),
        HirKind::Literal(lit) => Info::exact(BTreeSet::from([lower(&lit.0)])),
        HirKind::Class(Class::Unicode(c)) => {
            let count: u64 = c
                .ranges()
                .iter()
                .map(|r| (r.end() as u64) - (r.start() as u64) + 1)
                .sum();
            if count == 0 {
                return Info::exact(BTreeSet::new());
            }
            if count <= CLASS_MAX as u64 {
                return Info::exact(chars(c).map(|ch| lower(&utf8(ch))).collect());
            }
            // A wide class without ASCII: the first two bytes of its
            // characters (bigrams) when it is not too wide, else their lead
            // bytes (unigrams).
            let lead = |ch: char| utf8(ch)[0];
            if c.ranges().iter().any(|r| lead(r.start()) < 0x80) {
                return Info::any();
            }
            if count <= BIGRAM_CLASS_MAX {
                let pairs: BTreeSet<(u8, u8)> = chars(c)
                    .map(|ch| {
                        let e = utf8(ch);
                        (e[0], e[1])
                    })
                    .collect();
                return Info {
                    exact: None,
                    q: Q::or(
                        pairs
                            .into_iter()
                            .map(|(a, b)| Q::Gram(bigram(a, b)))
                            .collect(),
                    ),
                };
            }
            let mut leads = BTreeSet::new();
            for r in c.ranges() {
                leads.extend(lead(r.start())..=lead(r.end()));
            }
            Info {
                exact: None,
                q: Q::or(leads.into_iter().map(|b| Q::Gram(unigram(b))).collect()),
            }
        }
        HirKind::Class(Class::Bytes(c)) => {
            let count: usize = c
                .ranges()
                .iter()
                .map(|r| (r.end() as usize) - (r.start() as usize) + 1)
                .sum();
            if count == 0 {
                return Info::exact(BTreeSet::new());
            }
            if count <= CLASS_MAX {
                let mut set = BTreeSet::new();
                for r in c.ranges() {
                    for b in r.start()..=r.end() {
                        set.insert(vec![b.to_ascii_lowercase()]);
                    }
                }
                return Info::exact(set);
            }
            if c.ranges().iter().all(|r| r.start() >= 0x80) {
                let mut q = Vec::new();
                for r in c.ranges() {
                    for b in r.start()..=r.end() {
                        q.push(Q::Gram(unigram(b)));
                    }
                }
                return Info {
                    exact: None,
                    q: Q::or(q),
                };
            }
            Info::any()
        }
        HirKind::Capture(c) => analyze(&c.sub),
        HirKind::Repetition(r) => {
            let sub = analyze(&r.sub);
            if r.min == 0 {
                // `x?` of a small exact set stays exact; otherwise anything goes.
                if r.max == Some(1) {
                    if let Some(mut set) = sub.exact {
                        if sub.q.is_all() {
                            set.insert(Vec::new());
                            return Info::exact(set);
                        }
                    }
                }
                return Info::any();
            }
            if r.max == Some(r.min) && r.min <= 4 {
                if let Some(set) = &sub.exact {
                    let mut acc = Info::empty_string();
                    for _ in 0..r.min {
                        acc = concat(
                            acc,
                            Info {
                                exact: Some(set.clone()),
                                q: sub.q.clone(),
                            },
                        );
                    }
                    return acc;
                }
            }
            // At least one match of the sub-pattern.
            Info {
                exact: None,
                q: sub.into_q(),
            }
        }
        HirKind::Concat(subs) => {
            let mut acc = Info::empty_string();
            for s in subs {
                acc = concat(acc, analyze(s));
            }
            acc
        }
        HirKind::Alternation(subs) => {
            let infos: Vec<Info> = subs.iter().map(analyze).collect();
            let all_exact = infos.iter().all(|i| i.exact.is_some());
            let total: usize = infos
                .iter()
                .map(|i| i.exact.as_ref().map_or(0, BTreeSet::len))
                .sum();
            if all_exact && total <= EXACT_MAX {
                let mut set = BTreeSet::new();
                let mut qs = Vec::new();
                for i in infos {
                    set.extend(i.exact.unwrap());
                    qs.push(i.q);
                }
                return Info {
                    exact: Some(set),
                    q: Q::or(qs),
                };
            }
            Info {
                exact: None,
                q: Q::or(infos.into_iter().map(Info::into_q).collect()),
            }
        }
    }
}

/// `a` followed by `b`.
fn concat(a: Info, b: Info) -> Info {
    if let (Some(x), Some(y)) = (&a.exact, &b.exact) {
        if x.len() * y.len() <= EXACT_MAX {
            let mut set = BTreeSet::new();
            for s in x {
                for t in y {
                    let mut st = s.clone();
                    st.extend_from_slice(t);
                    set.insert(st);
                }
            }
            return Info {
                exact: Some(set),
                q: Q::and(vec![a.q, b.q]),
            };
        }
    }
    Info {
        exact: None,
        q: Q::and(vec![a.into_q(), b.into_q()]),
    }
}

/// The n-gram query of a grep request (`All` when the pattern gives none,
/// or cannot be read here: the scan then reads every selected file).
pub fn plan(req: &GrepRequest) -> Q {
    let pattern = if req.fixed_string {
        regex_syntax::escape(&req.pattern)
    } else {
        req.pattern.clone()
    };
    // Folding case only adds strings, so a case-sensitive (or smart-case)
    // request is planned case-insensitively unless it asks for exact case.
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(true)
        .utf8(false)
        .octal(false)
        .multi_line(true)
        .dot_matches_new_line(true)
        .case_insensitive(req.case_sensitive != Some(true))
        .build()
        .parse(&pattern);
    match hir {
        Ok(h) => analyze(&h).into_q(),
        Err(_) => Q::All,
    }
}

/// A set of file ids as bits.
pub type Bits = Vec<u64>;

/// The files of `idx` that satisfy `q` (`None`: every file), with each
/// key's postings decoded once. A damaged index gives `None` (scan all).
pub fn eval(q: &Q, idx: &NgramIndex) -> Option<Bits> {
    let mut memo: HashMap<u32, Bits> = HashMap::new();
    eval_in(q, idx, &mut memo).unwrap_or(None)
}

fn eval_in(
    q: &Q,
    idx: &NgramIndex,
    memo: &mut HashMap<u32, Bits>,
) -> std::io::Result<Option<Bits>> {
    let words = (idx.files() as usize).div_ceil(64);
    Ok(match q {
        Q::All => None,
        Q::Gram(k) => {
            if let Some(b) = memo.get(k) {
                return Ok(Some(b.clone()));
            }
            let b = idx.bitmap(*k)?;
            memo.insert(*k, b.clone());
            Some(b)
        }
        Q::And(parts) => {
            // Rarest keys first: the intersection empties soonest.
            let mut order: Vec<&Q> = parts.iter().collect();
            order.sort_by_key(|p| match p {
                Q::Gram(k) => idx.count(*k) as u64,
                _ => u64::MAX,
            });
            let mut acc: Option<Bits> = None;
            for p in order {
                if let Some(b) = eval_in(p, idx, memo)? {
                    acc = Some(match acc {
                        None => b,
                        Some(mut a) => {
                            for (x, y) in a.iter_mut().zip(&b) {
                                *x &= y;
                            }
                            a
                        }
                    });
                    if acc.as_ref().is_some_and(|a| a.iter().all(|&w| w == 0)) {
                        break;
                    }
                }
            }
            acc
        }
        Q::Or(parts) => {
            let mut acc = vec![0u64; words];
            for p in parts {
                match eval_in(p, idx, memo)? {
                    None => return Ok(None),
                    Some(b) => {
                        for (x, y) in acc.iter_mut().zip(&b) {
                            *x |= y;
                        }
                    }
                }
            }
            Some(acc)
        }
    })
}

/// Is file `id` in `bits`?
pub fn has(bits: &Bits, id: u32) -> bool {
    bits.get((id >> 6) as usize)
        .is_some_and(|w| w & (1u64 << (id & 63)) != 0)
}

#[cfg(test)]
mod tests {
    use super::super::tests::req;
    use super::*;
    use crate::snapshot::FileEntry;
    use code_index_schemas::ngram::{file_grams, write, Run, NGRAM_FILE};
    use proptest::prelude::*;

    fn index(texts: &[String]) -> (tempfile::TempDir, NgramIndex) {
        let grams: Vec<Vec<u32>> = texts.iter().map(|t| file_grams(t.as_bytes())).collect();
        let runs: Vec<Run> = grams
            .chunks(7)
            .enumerate()
            .map(|(i, c)| Run::new((i * 7) as u32, c))
            .collect();
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(NGRAM_FILE);
        write(&p, texts.len() as u32, &runs).unwrap();
        let idx = NgramIndex::open(&p).unwrap();
        (d, idx)
    }

    /// Every text the exact scan matches is a candidate; returns (candidates, matching).
    fn check(texts: &[String], idx: &NgramIndex, r: &GrepRequest) -> (usize, usize) {
        let Ok(c) = super::super::compile(r) else {
            return (0, 0);
        };
        let q = plan(r);
        let bits = eval(&q, idx);
        let (mut cand, mut hit) = (0, 0);
        for (i, t) in texts.iter().enumerate() {
            let f = FileEntry::new(
                "f".into(),
                "text".into(),
                t.len() as u64,
                false,
                false,
                t,
                false,
            );
            let is_cand = bits.as_ref().is_none_or(|b| has(b, i as u32));
            let matches = !c.search_file("r", &f).is_empty();
            assert!(
                !matches || is_cand,
                "{:?} (fixed {}, case {:?}, word {}, multiline {}) matches text {i} {:?} but the plan {q:?} excludes it",
                r.pattern,
                r.fixed_string,
                r.case_sensitive,
                r.whole_word,
                r.multiline,
                t.chars().take(200).collect::<String>()
            );
            cand += usize::from(is_cand);
            hit += usize::from(matches);
        }
        (cand, hit)
    }

    /// Real source files (this crate's and the builder's), plus texts with
    /// case folds outside ASCII.
    fn corpus() -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut texts = Vec::new();
        for dir in ["server/src", "builder/src", "schemas/src"] {
            let mut stack = vec![root.join(dir)];
            while let Some(d) = stack.pop() {
                let mut ents: Vec<_> = std::fs::read_dir(&d).unwrap().flatten().collect();
                ents.sort_by_key(|e| e.path());
                for e in ents {
                    let p = e.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if let Ok(t) = std::fs::read_to_string(&p) {
                        texts.push(t);
                    }
                }
            }
        }
        for t in [
            "the \u{212A}elvin sign folds to k: \u{212A}MALLOC(size)",
            "long s: \u{17F}truct ſ, and SHARP ẞ and ß",
            "Greek: αβγ ΑΒΓ Ωmega ω",
            "emoji 🦀 and ①②③ and ﬁ ligature",
            "tab\there\r\nCRLF line\r\n",
            "",
            "x",
            "ab",
        ] {
            texts.push(t.to_string());
        }
        texts
    }

    const PATTERNS: &[&str] = &[
        "fn",
        "fn ",
        "pub fn \\w+",
        "kmalloc",
        "KMALLOC",
        "Kmalloc",
        "(?i)kmalloc",
        "struct",
        "(?i)STRUCT",
        "ſtruct",
        "elvin",
        "ELVIN",
        "(?i)Kelvin",
        "\u{212A}elvin",
        "SHARP ẞ",
        "(?i)ß",
        "αβγ",
        "(?i)ΑΒΓ",
        "\\p{Greek}",
        "\\p{Greek}+",
        "[α-ω]{2}",
        "Ω",
        "🦀",
        "①",
        "\\bfn\\b",
        "^use ",
        "^\\s+pub fn",
        "impl (Drop|Default) for",
        "TODO|FIXME|XXX",
        "Result<\\(\\)>",
        "[0-9]{4}",
        "\\d+\\.\\d+",
        "foo|bar|baz",
        "(?:ab)+c",
        "a(b|c)d",
        "colou?r",
        "snap(shot)?s",
        "x{2,}",
        "e{3}",
        "[Ss]napshot",
        "(?-u:\\xCE)",
        "(?-u:[\\x80-\\xFF])",
        ".",
        "\\w",
        "",
        "a*",
        "(?i)q[^u]",
        "let mut \\w+ = Vec::new\\(\\);",
        "\\.unwrap_or\\(",
        "\\$\\{",
        "a\\nb",
        "CRLF line\\r$",
        "tab\\there",
        "(?s)fn.*\\{",
        "(?m)^$",
        "[[:upper:]]{3}",
        "\\bSelf\\b",
        "(?x) pub \\s fn",
        "\\Qa.b\\E",
        "ﬁ",
        "(?i)FI",
        "[^\\x00-\\x7F]",
    ];

    #[test]
    fn every_match_is_a_candidate() {
        let texts = corpus();
        let (_d, idx) = index(&texts);
        let mut narrowed = 0;
        for p in PATTERNS {
            for fixed in [false, true] {
                for case in [None, Some(true), Some(false)] {
                    for word in [false, true] {
                        let r = GrepRequest {
                            fixed_string: fixed,
                            case_sensitive: case,
                            whole_word: word,
                            multiline: p.contains("\\n") || p.contains("(?s)"),
                            ..req(p)
                        };
                        let (cand, _) = check(&texts, &idx, &r);
                        narrowed += usize::from(cand < texts.len());
                    }
                }
            }
        }
        // The index does narrow: most of these patterns are selective.
        assert!(
            narrowed > PATTERNS.len() * 6,
            "only {narrowed} requests narrowed"
        );
    }

    #[test]
    fn selective_literals_narrow_to_the_matching_files() {
        let texts = corpus();
        let (_d, idx) = index(&texts);
        for p in [
            "NgramIndex::open",
            "fn every_match_is_a_candidate",
            "\u{212A}MALLOC",
        ] {
            let (cand, hit) = check(
                &texts,
                &idx,
                &GrepRequest {
                    fixed_string: true,
                    ..req(p)
                },
            );
            assert!(
                hit > 0 && cand <= hit + 2,
                "{p}: {cand} candidates for {hit} matching files"
            );
        }
        // Case-insensitive: `(?i)kmalloc` must keep the Kelvin-sign text.
        let (cand, hit) = check(&texts, &idx, &req("(?i)kmalloc"));
        assert!(hit >= 1 && cand < texts.len() / 2, "{cand} / {hit}");
        // Unselective patterns plan to All.
        assert!(plan(&req("\\w+")).is_all());
        assert!(plan(&req("a*")).is_all());
        assert!(!plan(&req("\\p{Greek}")).is_all());
        // A Greek class plans to the first two bytes of its letters (α: CE B1).
        let greek = format!("{:?}", plan(&req("\\p{Greek}")));
        assert!(
            greek.contains(&format!("Gram({})", bigram(0xCE, 0xB1))),
            "{greek}"
        );
        let alpha = format!("{:?}", plan(&req("α")));
        assert!(
            alpha.contains(&format!("Gram({})", bigram(0xCE, 0xB1))),
            "{alpha}"
        );
    }

    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            "[abkKsS]{1,4}",
            Just("\u{212A}".to_string()),
            Just("ſ".to_string()),
            Just("[ab]".to_string()),
            Just("(a|bk)".to_string()),
            Just("s?".to_string()),
            Just("k+".to_string()),
            Just("\\b".to_string()),
            Just(".".to_string()),
            Just("[^a]".to_string()),
            Just("\\p{Greek}".to_string()),
            Just("α".to_string()),
            Just("(?i)".to_string()),
            Just("a{2}".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn random_patterns_never_lose_a_match(
            pieces in proptest::collection::vec(piece(), 1..6),
            texts in proptest::collection::vec("[abkKsSſ\u{212A}αΑ .\n]{0,24}", 1..12),
            case in prop_oneof![Just(None), Just(Some(true)), Just(Some(false))],
            fixed: bool,
        ) {
            let (_d, idx) = index(&texts);
            let r = GrepRequest { case_sensitive: case, fixed_string: fixed, ..req(&pieces.concat()) };
            check(&texts, &idx, &r);
        }
    }
}
