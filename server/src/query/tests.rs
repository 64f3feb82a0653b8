use super::*;

#[test]
fn parses_fields_negation_or_and_groups() {
    let q = parse(r#"lang:python (sym:save or "def delete") -file:tests case:yes"#).unwrap();
    assert_eq!(q.case, Case::Yes);
    assert_eq!(
        render(&q.expr),
        r#"(lang:"python" (sym:"save" or content:"def delete") -file:"tests")"#
    );
    let q = parse(r"regex:def\s+(save|delete)\( file:models").unwrap();
    assert_eq!(
        render(&q.expr),
        r#"(regex:"def\\s+(save|delete)\\(" file:"models")"#
    );
    // Quoted, a regex keeps its backslashes; `\"` and `\\` are the escapes.
    let q = parse(r#"regex:"func\s+\(srv \*Server\)" "a\"b\\c""#).unwrap();
    assert_eq!(
        render(&q.expr),
        r#"(regex:"func\\s+\\(srv \\*Server\\)" content:"a\"b\\c")"#
    );
    assert_eq!(render(&parse("--foo").unwrap().expr), r#"content:"foo""#);
    assert_eq!(
        render(&parse("std::vec").unwrap().expr),
        r#"content:"std::vec""#
    );
}

#[test]
fn errors_are_coded() {
    let e = parse("filee:foo").unwrap_err();
    assert_eq!(e.code, codes::UNKNOWN_FIELD);
    assert!(e.hint.contains("file:") && e.hint.contains("sym:"));
    assert_eq!(parse("").unwrap_err().code, codes::INVALID_ARGUMENT);
    assert_eq!(parse("(a").unwrap_err().code, codes::INVALID_ARGUMENT);
    assert_eq!(parse("a)").unwrap_err().code, codes::INVALID_ARGUMENT);
    assert_eq!(
        parse("case:maybe x").unwrap_err().code,
        codes::INVALID_ARGUMENT
    );
    assert_eq!(parse("\"open").unwrap_err().code, codes::INVALID_ARGUMENT);
    assert_eq!(parse("case:no").unwrap_err().code, codes::INVALID_ARGUMENT);
}

#[test]
fn hostile_queries_are_refused_before_work() {
    // These aborted the server (stack overflow) or kept it busy for minutes.
    for q in [
        "(".repeat(10_000),
        "-".repeat(20_000) + "x",
        vec!["a"; 20_000].join(" or "),
        "(".repeat(2_000) + "x" + &")".repeat(2_000),
        "-(".repeat(100) + "x",
    ] {
        let e = parse(&q).unwrap_err();
        assert_eq!(e.code, codes::QUERY_TOO_COMPLEX, "{}", &q[..20]);
    }
    let deep = "(".repeat(MAX_DEPTH - 1) + "x" + &")".repeat(MAX_DEPTH - 1);
    assert!(parse(&deep).is_ok());
    let deep = "(".repeat(MAX_DEPTH + 1) + "x" + &")".repeat(MAX_DEPTH + 1);
    assert_eq!(parse(&deep).unwrap_err().code, codes::QUERY_TOO_COMPLEX);
    let many = (0..MAX_TERMS).map(|i| format!("t{i}")).collect::<Vec<_>>();
    assert!(parse(&many.join(" or ")).is_ok());
    let more = (0..=MAX_TERMS).map(|i| format!("t{i}")).collect::<Vec<_>>();
    assert_eq!(
        parse(&more.join(" or ")).unwrap_err().code,
        codes::QUERY_TOO_COMPLEX
    );
}

mod props {
    use super::*;
    use code_index_schemas::fuzz;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// Inputs that once failed (none yet: the 10-minute runs found none).
    const REGRESSIONS: &[&str] = &[
        "((((((((((((((((((((x",
        "-(-(-(-(-(-(-(-(-(-x",
        "\"\\",
        "a:b:c",
        "x or or y",
    ];

    fn soup() -> impl Strategy<Value = String> {
        let tok = prop_oneof![
            Just("(".to_string()),
            Just(")".to_string()),
            Just("-".to_string()),
            Just(" or ".to_string()),
            Just(" ".to_string()),
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just(":".to_string()),
            prop::sample::select(FIELDS).prop_map(|f| format!("{f}:")),
            "[a-zA-Z_.*+?{}\\[\\]|^$]{1,6}",
            any::<char>().prop_map(String::from),
        ];
        prop::collection::vec(tok, 0..80).prop_map(|v| v.concat())
    }

    fn check_parse(q: &str) -> Result<(), TestCaseError> {
        match parse(q) {
            Ok(p) => {
                prop_assert!(atoms(&p.expr).len() <= MAX_TERMS);
                // The canonical text is stable.
                let r = render(&p.expr);
                prop_assert!(!r.is_empty());
            }
            Err(e) => {
                prop_assert!(
                    [
                        codes::INVALID_ARGUMENT,
                        codes::UNKNOWN_FIELD,
                        codes::QUERY_TOO_COMPLEX
                    ]
                    .contains(&e.code),
                    "{e}"
                );
                prop_assert!(!e.message.is_empty() && !e.hint.is_empty());
            }
        }
        Ok(())
    }

    #[test]
    fn fuzz_query_parse() {
        for q in REGRESSIONS {
            check_parse(q).unwrap();
        }
        fuzz::run("query_parse", soup(), |q| check_parse(&q));
    }

    /// A query tree over a few words, as the parser should read it back.
    #[derive(Clone, Debug)]
    enum T {
        W(u8),
        Not(Box<T>),
        And(Vec<T>),
        Or(Vec<T>),
    }

    fn tree() -> impl Strategy<Value = T> {
        let leaf = (0u8..6).prop_map(T::W);
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                inner.clone().prop_map(|t| T::Not(Box::new(t))),
                prop::collection::vec(inner.clone(), 1..4).prop_map(T::And),
                prop::collection::vec(inner, 1..4).prop_map(T::Or),
            ]
        })
    }

    fn text(t: &T) -> String {
        match t {
            T::W(i) => format!("w{i}"),
            T::Not(x) => format!("-({})", text(x)),
            T::And(v) => format!("({})", v.iter().map(text).collect::<Vec<_>>().join(" ")),
            T::Or(v) => format!("({})", v.iter().map(text).collect::<Vec<_>>().join(" or ")),
        }
    }

    fn truth(t: &T, on: &[bool; 6]) -> bool {
        match t {
            T::W(i) => on[*i as usize],
            T::Not(x) => !truth(x, on),
            T::And(v) => v.iter().all(|x| truth(x, on)),
            T::Or(v) => v.iter().any(|x| truth(x, on)),
        }
    }

    #[test]
    fn fuzz_query_semantics() {
        fuzz::run(
            "query_semantics",
            (tree(), any::<[bool; 6]>()),
            |(t, on)| {
                let q = parse(&text(&t)).map_err(|e| TestCaseError::fail(e.to_string()))?;
                let atoms = atoms(&q.expr);
                let words: HashMap<usize, bool> = atoms
                    .iter()
                    .enumerate()
                    .map(|(i, a)| match a {
                        Atom::Content { text, .. } => (i, on[text[1..].parse::<usize>().unwrap()]),
                        other => panic!("unexpected atom {other:?}"),
                    })
                    .collect();
                let mut hits: Vec<usize> = Vec::new();
                let got = eval(
                    &q.expr,
                    &atoms,
                    &mut |i| if words[&i] { vec![i] } else { vec![] },
                    &mut hits,
                );
                prop_assert_eq!(got, truth(&t, &on), "{}", text(&t));
                // Hits come only from atoms that hold.
                prop_assert!(hits.iter().all(|i| words[i]));
                Ok(())
            },
        );
    }
}

/// `search` answers the same with the n-gram index narrowing its content
/// atoms as with every file scanned (the fixture loaded twice, once without
/// its index), and the index does narrow.
#[test]
fn search_is_the_same_with_and_without_the_ngram_index() {
    use crate::snapshot;
    let st = crate::tools::fixture::state();
    let dir = st.snaps[0].dir.clone();
    let with = vec![snapshot::load(&dir).unwrap()];
    let mut without = vec![snapshot::load(&dir).unwrap()];
    assert!(with[0].grams.is_some());
    without[0].grams = None;
    let lang = |_: &str| Ok(());
    let budget = std::time::Duration::from_secs(10);
    for q in [
        "slugify",
        "\"def slug\"",
        "/price_\\w+/ -file:tests",
        "backoff OR Hello",
        "-slugify lang:python",
        "sym:slugify slugify",
        "file:app zzz_absent",
        "(?i)PRODUCT",
    ] {
        let q = crate::query::parse(q).unwrap();
        let key = |h: &super::SearchHit| (h.path.clone(), h.line, h.kind.clone());
        let a: Vec<_> = super::search(&q, &with, &st.store, &lang, budget)
            .unwrap()
            .0
            .iter()
            .map(key)
            .collect();
        let b: Vec<_> = super::search(&q, &without, &st.store, &lang, budget)
            .unwrap()
            .0
            .iter()
            .map(key)
            .collect();
        assert_eq!(a, b, "{q:?}");
    }
    let plan = crate::grep::plan::plan(&crate::grep::GrepRequest {
        pattern: "backoff".into(),
        ..Default::default()
    });
    let bits = crate::grep::plan::eval(&plan, with[0].grams.as_ref().unwrap()).unwrap();
    let n: u32 = bits.iter().map(|w| w.count_ones()).sum();
    assert_eq!(n, 1, "only app/util.py holds `backoff`");
}
