use super::*;

/// Compressed, as the server keeps files by default.
fn file(path: &str, content: &str) -> FileEntry {
    FileEntry::new(
        path.into(),
        "python".into(),
        content.len() as u64,
        false,
        false,
        content,
        true,
    )
}

pub(super) fn req(p: &str) -> GrepRequest {
    GrepRequest {
        pattern: p.into(),
        limit: 100,
        budget: Duration::from_secs(10),
        ..Default::default()
    }
}

#[test]
fn smart_case_word_and_submatches() {
    let f = file("a.py", "Foo foo\nfood\nbar FOO\n");
    let c = compile(&req("foo")).unwrap();
    let m = c.search_file("r", &f);
    assert_eq!(m.iter().map(|m| m.line).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(m[0].submatches.len(), 2);
    assert_eq!(
        (m[2].submatches[0].column, m[2].submatches[0].start),
        (5, 4)
    );
    let c = compile(&GrepRequest {
        whole_word: true,
        ..req("Foo")
    })
    .unwrap();
    assert_eq!(c.search_file("r", &f).len(), 1);
}

#[test]
fn multiline_and_context() {
    let f = file("a.py", "x\ndef f():\n    return 1\ny\nz\n");
    let c = compile(&GrepRequest {
        multiline: true,
        ..req(r"def f\(\):\n\s+return")
    })
    .unwrap();
    let m = c.search_file("r", &f);
    assert_eq!((m[0].line, m[0].end_line), (2, 3));
    let c = compile(&GrepRequest {
        before: 1,
        after: 2,
        ..req("return")
    })
    .unwrap();
    let m = c.search_file("r", &f);
    assert_eq!(
        m[0].before,
        vec![ContextLine {
            line: 2,
            text: "def f():".into()
        }]
    );
    assert_eq!(
        m[0].after.iter().map(|c| c.line).collect::<Vec<_>>(),
        vec![4, 5]
    );
    // A newline in a line-mode pattern is an error, as in rg.
    assert_eq!(
        compile(&req("a\\nb")).err().unwrap().code,
        codes::INVALID_PATTERN
    );
}

#[test]
fn globs_follow_rg() {
    let c = compile(&GrepRequest {
        globs: vec!["*.py".into(), "!tests/**".into()],
        ..req("x")
    })
    .unwrap();
    assert!(c.selects(&file("a/b.py", "")));
    assert!(!c.selects(&file("a/b.go", "")));
    assert!(!c.selects(&file("tests/t.py", "")));
    let c = compile(&GrepRequest {
        globs: vec!["!*.md".into()],
        ..req("x")
    })
    .unwrap();
    assert!(c.selects(&file("a/b.go", "")));
    assert!(!c.selects(&file("README.md", "")));
}

#[test]
fn per_file_limit_cuts_and_flags_partial() {
    let big = file("big.py", &"x\n".repeat(500));
    let cands = vec![("r", &big)];
    let c = compile(&GrepRequest {
        per_file_limit: Some(Duration::ZERO),
        ..req("x")
    })
    .unwrap();
    let p = scan(&cands, &c, (0, 0));
    assert!(p.partial);
    assert_eq!(p.matches.len(), 63);
    let c = compile(&req("x")).unwrap();
    let p = scan(&cands, &c, (0, 0));
    assert!(!p.partial && p.matches.len() == 100 && p.next == Some((0, 100)));
}

#[test]
fn limit_validation_and_paging() {
    assert_eq!(
        compile(&GrepRequest {
            limit: 1001,
            ..req("x")
        })
        .err()
        .unwrap()
        .code,
        codes::INVALID_ARGUMENT
    );
    assert_eq!(
        compile(&req("")).err().unwrap().code,
        codes::INVALID_ARGUMENT
    );
    let files: Vec<FileEntry> = (0..5)
        .map(|i| file(&format!("f{i}.py"), "x\nx\nx\n"))
        .collect();
    let cands: Vec<(&str, &FileEntry)> = files.iter().map(|f| ("r", f)).collect();
    let c = compile(&GrepRequest {
        limit: 4,
        ..req("x")
    })
    .unwrap();
    let mut seen = Vec::new();
    let mut pos = (0, 0);
    loop {
        let p = scan(&cands, &c, pos);
        seen.extend(p.matches.iter().map(|m| (m.path.clone(), m.line)));
        match p.next {
            Some(n) => pos = n,
            None => break,
        }
    }
    assert_eq!(seen.len(), 15);
    let mut dedup = seen.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(dedup.len(), 15, "every match exactly once");
}

#[test]
fn cached_matchers_keep_their_flags_apart() {
    let f = file("a.py", "Foo\nfoo\nfood\n");
    let n = |r: GrepRequest| compile(&r).unwrap().search_file("r", &f).len();
    // Same pattern, different flags: each gets its own matcher.
    assert_eq!(n(req("foo")), 3);
    assert_eq!(
        n(GrepRequest {
            case_sensitive: Some(true),
            ..req("foo")
        }),
        2
    );
    assert_eq!(
        n(GrepRequest {
            whole_word: true,
            ..req("foo")
        }),
        2
    );
    assert_eq!(
        n(GrepRequest {
            fixed_string: true,
            ..req("fo.")
        }),
        0
    );
    assert_eq!(n(req("fo.")), 3);
    // And again, from the cache.
    assert_eq!(
        n(GrepRequest {
            case_sensitive: Some(true),
            ..req("foo")
        }),
        2
    );
    assert_eq!(n(req("foo")), 3);
}

#[test]
fn fuzz_globs() {
    use code_index_schemas::fuzz;
    use proptest::prelude::*;
    let glob = prop::collection::vec(
        prop_oneof![
            Just("*".to_string()),
            Just("**".to_string()),
            Just("/".to_string()),
            Just("!".to_string()),
            Just("{".to_string()),
            Just("}".to_string()),
            Just(",".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just("\\".to_string()),
            "[a-z.]{1,4}",
            any::<char>().prop_map(String::from),
        ],
        0..24,
    )
    .prop_map(|v| v.concat());
    fuzz::run("globs", prop::collection::vec(glob, 1..4), |globs| {
        let r = build_globs(&GrepRequest {
            pattern: "x".into(),
            globs,
            limit: 10,
            ..Default::default()
        });
        if let Err(e) = r {
            prop_assert_eq!(e.code, codes::INVALID_ARGUMENT);
        }
        Ok(())
    });
}

/// `*.ext` globs take a suffix check: it selects exactly what rg's override
/// matcher selects, on real paths and edge cases.
#[test]
fn extension_globs_select_as_the_override_matcher() {
    let mut paths: Vec<String> = [
        "a.c",
        "dir/b.c",
        "dir.c/x.h",
        "x.c.orig",
        ".c",
        "deep/er/f.py",
        "f.PY",
        "g.cc",
        "c",
        "src/x.rs",
        "a/b/c.tar.gz",
        "weird-name.c++",
        "dir/.hidden.c",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        paths.push(format!("src/{}", e.file_name().to_string_lossy()));
    }
    for globs in [
        vec!["*.c"],
        vec!["*.c", "*.h"],
        vec!["*.py"],
        vec!["*.rs", "*.gz"],
        vec!["*.c++"],
        vec!["*.cc", "*.PY"],
    ] {
        let globs: Vec<String> = globs.iter().map(|g| g.to_string()).collect();
        let req = GrepRequest {
            globs: globs.clone(),
            ..req("x")
        };
        let fast = build_globs(&req).unwrap();
        assert!(fast.as_ref().unwrap().exts.is_some(), "{globs:?}");
        let slow = fast.map(|g| Globs {
            ov: g.ov,
            exts: None,
        });
        for p in &paths {
            let f = file(p, "x");
            assert_eq!(
                selects(&req, &build_globs(&req).unwrap(), &f),
                selects(&req, &slow, &f),
                "{globs:?} on {p}"
            );
        }
    }
    for not_ext in [
        vec!["!*.c"],
        vec!["*.c", "src/**"],
        vec!["*.[ch]"],
        vec!["**/*.c"],
        vec!["*"],
    ] {
        let globs: Vec<String> = not_ext.iter().map(|g| g.to_string()).collect();
        assert!(ext_globs(&globs).is_none(), "{globs:?}");
    }
}

#[test]
fn unsupported_regex_errors_read_as_rg_writes_them() {
    for (pat, word) in [
        ("(?<=func )Listen", "look-around"),
        (r"(\w+) \1", "backreferences"),
    ] {
        let Err(e) = compile(&req(pat)) else {
            panic!("{pat} compiled")
        };
        assert_eq!(e.code, crate::error::codes::INVALID_PATTERN);
        assert!(
            e.message.contains(&format!("\n    {pat}\n")),
            "{}",
            e.message
        );
        assert!(!e.message.contains("(?:"), "{}", e.message);
        assert!(
            e.message.contains(word) && e.hint.contains("look-around"),
            "{e:?}"
        );
    }
}
