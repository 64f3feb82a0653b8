use super::*;

#[test]
fn chunk_metadata_stays_small() {
    // A hundred thousand of these live for the server's life (go-stdlib: 98k).
    assert!(
        std::mem::size_of::<ChunkMeta>() <= 136,
        "{}",
        std::mem::size_of::<ChunkMeta>()
    );
}

#[test]
fn keyword_index_read_in_place_is_the_one_the_server_would_build() {
    let st = crate::tools::fixture::state();
    let eng = st.engine();
    assert!(matches!(eng.keyword_sources[0], KeywordSource::Snapshot));
    let s = &st.snaps[0];
    let file = std::fs::read(s.dir.join(code_index_schemas::keyword::KEYWORD_FILE)).unwrap();
    // The builder's terms of each chunk are the server's, byte for byte.
    assert_eq!(keyword::build_bytes(&eng.chunks, &st.snaps), file);
    // And the index answers: `slugify` is in the util chunk and its callers.
    let hits = eng.bm25.search("slugify", &|_| true, 10);
    assert!(hits.len() >= 3, "{hits:?}");
    let paths: Vec<&str> = hits
        .iter()
        .map(|h| s.files[eng.chunks[h.0].file as usize].path.as_str())
        .collect();
    assert!(paths.contains(&"app/util.py"), "{paths:?}");
    // The index holds the stem (Porter2: `slugifi`).
    assert_eq!(eng.bm25.doc_freq(&stem("slugify")), hits.len());
}

#[test]
fn identifiers_split_and_stem() {
    assert_eq!(
        split_ident("parseHTTPRequest_v2"),
        vec!["parse", "HTTP", "Request", "v2"]
    );
    let mut t = Vec::new();
    terms("def get_or_create(self, defaults): Parsers", &mut t);
    assert!(t.contains(&"get_or_create".to_string()));
    assert!(t.contains(&"creat".to_string()));
    assert!(t.contains(&"default".to_string()));
    assert!(t.contains(&"parser".to_string()));
    assert!(!t.contains(&"self".to_string()));
}

#[test]
fn classification() {
    let no = |_: &str| false;
    let yes = |_: &str| true;
    assert_eq!(
        classify("get_or_create", &no),
        QueryType::Symbol("get_or_create".into())
    );
    assert_eq!(
        classify("QuerySet.filter", &no),
        QueryType::Symbol("QuerySet.filter".into())
    );
    assert_eq!(classify("cache", &no), QueryType::Concept);
    assert_eq!(classify("cache", &yes), QueryType::Symbol("cache".into()));
    assert_eq!(
        classify("what calls get_or_create?", &no),
        QueryType::Relationship {
            relation: Relation::Callers,
            target: "get_or_create".into()
        }
    );
    assert_eq!(
        classify("Who imports QuerySet", &no),
        QueryType::Relationship {
            relation: Relation::Importers,
            target: "QuerySet".into()
        }
    );
    assert_eq!(
        classify("subclasses of Field", &no),
        QueryType::Relationship {
            relation: Relation::Subclasses,
            target: "Field".into()
        }
    );
    assert_eq!(
        classify("what does save call", &no),
        QueryType::Relationship {
            relation: Relation::Callees,
            target: "save".into()
        }
    );
    assert_eq!(
        classify("flow from the request handler to the database", &no),
        QueryType::Flow {
            from: "request handler".into(),
            to: "database".into()
        }
    );
    assert_eq!(
        classify("how does a request get from the view to the database?", &no),
        QueryType::Flow {
            from: "view".into(),
            to: "database".into()
        }
    );
    assert_eq!(
        classify(
            "Create a new ordered dictionary with keys from iterable and values set to value.",
            &no
        ),
        QueryType::Concept
    );
    assert_eq!(
        classify("copy bytes from src to dst", &no),
        QueryType::Concept
    );
    assert_eq!(
        classify("how do importers work", &no),
        QueryType::Pattern("importers".into())
    );
    assert_eq!(
        classify("how to write a middleware", &no),
        QueryType::Pattern("middleware".into())
    );
    assert_eq!(classify("how does caching work", &no), QueryType::Concept);
    assert_eq!(
        classify("parse a date string into a datetime", &no),
        QueryType::Concept
    );
}

#[test]
fn fusion_prefers_agreement() {
    let a = vec![(1, 9.0), (2, 8.0), (3, 7.0)];
    let b = vec![(3, 0.9), (1, 0.8), (4, 0.7)];
    let f = rrf(&[(&a, 1.0), (&b, 1.0)], 60.0);
    assert_eq!(f[0].0, 1);
    assert_eq!(f[1].0, 3);
}

#[test]
fn a_confident_semantic_list_keeps_its_best_on_top() {
    use super::fusion::{
        confidence_scale, fuse, CONFIDENT_AT, CONFIDENT_FROM, CONFIDENT_G, CONFIDENT_GAP_AT,
        CONFIDENT_GAP_FROM, RRF_K, RRF_SEMANTIC_WEIGHT,
    };
    let scale = |sem: &[(usize, f32)]| {
        confidence_scale(
            sem,
            CONFIDENT_G,
            CONFIDENT_FROM,
            CONFIDENT_AT,
            (CONFIDENT_GAP_FROM, CONFIDENT_GAP_AT),
        )
    };
    // Ordinary cosines close together: plain rank fusion.
    assert_eq!(scale(&[(1, 0.55), (2, 0.5)]), vec![1.0, 1.0]);
    // An ordinary best cosine far above the second: confident all the same.
    let s = scale(&[(1, 0.55), (2, 0.3)]);
    assert!(s[1] < 0.1, "{s:?}");
    // A near-restatement (0.99) far above the rest: later entries count for little.
    let s = scale(&[(1, 0.99), (2, 0.61), (3, 0.6)]);
    assert_eq!(s[0], 1.0);
    assert!(s[1] < 0.15 && s[2] < s[1], "{s:?}");
    // Halfway up the level's ramp (and a lead below the gap's), half the exponent.
    let s = scale(&[(1, 0.75), (2, 0.7)]);
    assert!((s[1] - (0.7f32 / 0.75).powi(2)).abs() < 1e-4, "{s:?}");
    // Fused: the keyword list's second pick (also the vectors' runner-up) no
    // longer overtakes the vectors' confident first.
    let kw = vec![(2, 9.0), (7, 8.0), (8, 7.5), (9, 7.2), (10, 7.1), (1, 7.0)];
    let sem = vec![(1, 0.99), (2, 0.61), (5, 0.6)];
    assert_eq!(fuse(&kw, &sem, "q")[0].0, 1);
    let flat = rrf(&[(&kw, 1.0), (&sem, RRF_SEMANTIC_WEIGHT)], RRF_K);
    assert_eq!(flat[0].0, 2);
}

#[test]
fn a_confident_keyword_list_keeps_its_best_near_the_top() {
    use super::fusion::{
        fuse, keyword_confidence_scale, KW_CONFIDENT_AT, KW_CONFIDENT_FROM, KW_CONFIDENT_G, RRF_K,
        RRF_SEMANTIC_WEIGHT,
    };
    let scale = |kw: &[(usize, f32)]| {
        keyword_confidence_scale(kw, KW_CONFIDENT_G, KW_CONFIDENT_FROM, KW_CONFIDENT_AT)
    };
    // A best score close to the second: plain rank fusion.
    assert_eq!(scale(&[(1, 9.0), (2, 8.0), (3, 1.0)]), vec![1.0, 1.0, 1.0]);
    // Twice the second or more: the exponent is full (2).
    let s = scale(&[(1, 20.0), (2, 10.0), (3, 5.0)]);
    assert_eq!(s, vec![1.0, 0.25, 0.0625]);
    // Halfway up the ramp (ratio 1.6), half the exponent.
    let s = scale(&[(1, 16.0), (2, 10.0)]);
    assert!((s[1] - 0.625).abs() < 1e-4, "{s:?}");
    // Fused: the vectors' first two (ordinary cosines) would outvote a
    // keyword match that stands far above the rest of its list.
    let kw = vec![(1, 30.0), (2, 10.0), (3, 9.0)];
    let sem = vec![(2, 0.55), (3, 0.54), (1, 0.3)];
    assert_eq!(fuse(&kw, &sem, "q")[0].0, 1);
    let flat = rrf(&[(&kw, 1.0), (&sem, RRF_SEMANTIC_WEIGHT)], RRF_K);
    assert_eq!(flat[0].0, 2);
}

#[test]
fn include_paths_resolve_against_the_including_file() {
    assert_eq!(
        join_relative("axum/src/middleware", "../docs/middleware.md").as_deref(),
        Some("axum/src/docs/middleware.md")
    );
    assert_eq!(
        join_relative("src", "./../README.md").as_deref(),
        Some("README.md")
    );
    // Out of the root, or absolute: nothing.
    assert_eq!(join_relative("src", "../../README.md"), None);
    assert_eq!(join_relative("src", "/etc/motd"), None);
}

#[test]
fn definition_heads_index_names_signatures_and_first_doc_paragraphs() {
    let st = crate::tools::fixture::state();
    let eng = st.engine();
    let s = &st.snaps[0];
    let path = |ci: usize| s.files[eng.chunks[ci].file as usize].path.as_str();
    // The doc's words find slugify's head, and through it the chunk it starts in.
    let hits = eng
        .heads
        .bm25
        .search("lower-case words joined by dashes", &|_| true, 10);
    assert_eq!(hits.len(), 1, "{hits:?}");
    let holders: Vec<usize> = (0..eng.chunks.len())
        .filter(|&ci| eng.heads.of(ci).contains(&(hits[0].0 as u32)))
        .collect();
    assert!(!holders.is_empty());
    assert!(
        holders.iter().all(|&ci| path(ci) == "app/util.py"),
        "{holders:?}"
    );
    // A body's words are not a head's: `sub` is only in slugify's body.
    assert!(eng.heads.bm25.search("sub", &|_| true, 10).is_empty());
    // Tests' definitions have no head.
    assert!((0..eng.chunks.len())
        .filter(|&ci| path(ci).starts_with("tests/"))
        .all(|ci| eng.heads.of(ci).is_empty()));
    assert!((0..eng.chunks.len()).any(|ci| path(ci).starts_with("tests/")));
}

#[test]
fn a_file_both_lists_put_first_by_different_chunks_leads_when_files_vote() {
    use super::fusion::{file_vote, rrf, FILE_VOTE, RRF_K, RRF_SEMANTIC_WEIGHT};
    // Chunks 1 and 2 are file A's, 3 is file B's, 4 file C's.
    let file_of = |i: usize| (0u32, if i <= 2 { 0 } else { i as u32 });
    let kw = vec![(1, 9.0), (3, 8.0), (4, 7.0)];
    let sem = vec![(2, 0.7), (3, 0.65), (4, 0.6)];
    // Chunk-level fusion: B's one chunk, second in both lists, leads.
    let fused = rrf(&[(&kw, 1.0), (&sem, RRF_SEMANTIC_WEIGHT)], RRF_K);
    assert_eq!(fused[0].0, 3);
    // Files vote: A (first in both) answers first with its best fused chunk,
    // which scores the file's fusion; B keeps its own score.
    let voted = file_vote(fused.clone(), &kw, &sem, file_of, FILE_VOTE);
    assert_eq!(voted[0].0, 2, "{voted:?}");
    let want = 1.0 / (RRF_K + 1.0) + RRF_SEMANTIC_WEIGHT / (RRF_K + 1.0);
    assert!((voted[0].1 - want).abs() < 1e-6, "{voted:?}");
    let b = |v: &[(usize, f32)]| v.iter().find(|x| x.0 == 3).unwrap().1;
    assert_eq!(b(&voted), b(&fused));
    // A's other chunk is not lifted; nothing is added or lost.
    let a1 = |v: &[(usize, f32)]| v.iter().find(|x| x.0 == 1).unwrap().1;
    assert_eq!(a1(&voted), a1(&fused));
    assert_eq!(voted.len(), fused.len());
    // Weight 0: the fusion as it was.
    assert_eq!(file_vote(fused.clone(), &kw, &sem, file_of, 0.0), fused);
}

#[test]
fn how_questions_are_told_from_descriptions() {
    for q in [
        "how spawned tasks are scheduled onto threads",
        "How to serialize models to JSON",
        "  how does dependency injection work",
        "what is a middleware",
        "why are futures lazy",
    ] {
        assert!(asks_how(q), "{q}");
    }
    for q in [
        "Returns the number of seconds until expiry",
        "A mixin for views manipulating multiple objects.",
        "file upload handling",
        "what runs after model initialisation in model_post_init",
        "however the cache is cleared",
        "HowTo guide",
    ] {
        assert!(!asks_how(q), "{q}");
    }
}
