use super::*;

fn run(lang: Lang, src: &str) -> Parsed {
    let tree = parse_tree(lang, src.as_bytes()).unwrap();
    extract(lang, "x", src.as_bytes(), &tree)
}

/// What one source file must yield (each list: these at least).
struct Case {
    lang: Lang,
    src: &'static str,
    /// (qualified name, kind, line of the name)
    symbols: &'static [(&'static str, &'static str, u32)],
    /// (edge kind, destination as written)
    edges: &'static [(&'static str, &'static str)],
    /// (symbol name, first paragraph of its doc)
    docs: &'static [(&'static str, &'static str)],
    /// (symbol name, name of the symbol whose id is its parent_id)
    parents: &'static [(&'static str, &'static str)],
}

const PYTHON: &str = "import os.path\nfrom .models import Model\n\nX_MAX = 3\n\nclass A(Model):\n    \"\"\"Doc of A.\n\n    more\"\"\"\n    f = 1\n    @property\n    def m(self, x):\n        return helper(x).strip()\n\ndef helper(y):\n    def inner():\n        pass\n    return y\n";

const CASES: &[Case] = &[
    Case {
        lang: Lang::Python,
        src: PYTHON,
        symbols: &[
            ("A", "class", 6),
            ("A.m", "method", 12),
            ("A.f", "field", 10),
            ("X_MAX", "constant", 4),
            ("helper.inner", "function", 16),
        ],
        edges: &[
            ("imports", "os.path"),
            ("imports", ".models.Model"),
            ("extends", "Model"),
            ("calls", "helper"),
            ("calls", "helper(x).strip"),
        ],
        docs: &[("A", "Doc of A.")],
        parents: &[("m", "A")],
    },
    Case {
        lang: Lang::Go,
        src: "package p\n\nimport (\n\t\"fmt\"\n\tnet \"net/http\"\n)\n\n// Server serves.\ntype Server struct {\n\tAddr string\n\tfmt.Stringer\n}\n\ntype Handler interface {\n\tServeHTTP(w int)\n}\n\nfunc (s *Server) Serve() error { return fmt.Errorf(\"x\") }\n\nfunc New() *Server { return &Server{} }\n",
        symbols: &[
            ("Server", "struct", 9),
            ("Server.Addr", "field", 10),
            ("Handler", "interface", 14),
            ("Handler.ServeHTTP", "method", 15),
            ("Server.Serve", "method", 18),
            ("New", "function", 20),
        ],
        edges: &[
            ("imports", "net/http"),
            ("calls", "fmt.Errorf"),
            ("extends", "fmt.Stringer"),
        ],
        docs: &[("Server", "Server serves.")],
        parents: &[("Serve", "Server")],
    },
    Case {
        lang: Lang::Rust,
        src: "use std::collections::{HashMap, hash_map::Entry};\nmod inner;\n/// A thing.\npub struct S { a: u32 }\nimpl Display for S {\n    fn fmt(&self) -> u32 { helper(1) }\n}\nmacro_rules! m { () => {} }\n",
        symbols: &[
            ("S", "struct", 4),
            ("S.a", "field", 4),
            ("S.fmt", "method", 6),
            ("m", "macro", 8),
        ],
        edges: &[
            ("imports", "std::collections::HashMap"),
            ("imports", "std::collections::hash_map::Entry"),
            ("imports", "mod inner"),
            ("implements", "Display"),
        ],
        docs: &[("S", "A thing.")],
        parents: &[],
    },
    Case {
        lang: Lang::TypeScript,
        src: "import { a } from './a';\nexport interface I { x: number; m(): void }\nexport class C extends B implements I {\n  x = 1;\n  m() { return a(); }\n}\nexport const f = () => 1;\nconst K = 2;\n",
        symbols: &[
            ("I", "interface", 2),
            ("C", "class", 3),
            ("C.m", "method", 5),
            ("f", "function", 7),
            ("K", "constant", 8),
        ],
        edges: &[("imports", "./a"), ("extends", "B"), ("implements", "I")],
        docs: &[],
        parents: &[],
    },
    Case {
        lang: Lang::C,
        src: "#include <linux/list.h>\n#define MAX 3\nstruct s { int a; char *b; };\ntypedef struct { int q; } t_t;\nstatic int *f(int x) { return g(x); }\n",
        symbols: &[
            ("MAX", "macro", 2),
            ("s", "struct", 3),
            ("s.b", "field", 3),
            ("t_t", "type", 4),
            ("f", "function", 5),
        ],
        edges: &[("imports", "<linux/list.h>"), ("calls", "g")],
        docs: &[],
        parents: &[],
    },
    Case {
        lang: Lang::Cpp,
        src: "namespace ns { class A : public B { int v; }; }\nvoid ns::A::go() {}\n",
        symbols: &[("ns.A", "class", 1), ("ns.A.go", "method", 2)],
        edges: &[("extends", "B")],
        docs: &[],
        parents: &[],
    },
    Case {
        lang: Lang::Java,
        src: "import java.util.List;\npublic class A extends B implements C {\n  private int f;\n  public A() {}\n  void m() { List.of(); }\n}\n",
        symbols: &[
            ("A", "class", 2),
            ("A.f", "field", 3),
            ("A.A", "constructor", 4),
            ("A.m", "method", 5),
        ],
        edges: &[
            ("imports", "java.util.List"),
            ("extends", "B"),
            ("implements", "C"),
        ],
        docs: &[],
        parents: &[],
    },
];

#[test]
fn symbols_edges_docs_and_parents_per_language() {
    for case in CASES {
        let lang = case.lang;
        let p = run(lang, case.src);
        let symbols: Vec<_> = p
            .symbols
            .iter()
            .map(|s| (s.qualified_name.as_str(), s.kind, s.name_line))
            .collect();
        for s in case.symbols {
            assert!(symbols.contains(s), "{lang:?}: no {s:?} in {symbols:?}");
        }
        let edges: Vec<_> = p
            .edges
            .iter()
            .map(|e| (e.kind, e.dst_name.as_str()))
            .collect();
        for e in case.edges {
            assert!(edges.contains(e), "{lang:?}: no {e:?} in {edges:?}");
        }
        let by_name = |n: &str| p.symbols.iter().find(|s| s.name == n).unwrap();
        for (name, doc) in case.docs {
            assert_eq!(by_name(name).doc.as_deref(), Some(*doc), "{lang:?}: {name}");
        }
        for (child, parent) in case.parents {
            let want = Some(by_name(parent).id);
            assert_eq!(by_name(child).parent_id, want, "{lang:?}: {child}");
        }
    }
}

#[test]
fn python_signature_and_references() {
    let p = run(Lang::Python, PYTHON);
    let a = p.symbols.iter().find(|s| s.name == "A").unwrap();
    assert_eq!(a.signature, "class A(Model)");
    let call = p.references.iter().find(|r| r.name == "helper").unwrap();
    assert_eq!(call.ref_kind, "call");
    assert_eq!(call.enclosing.as_deref(), Some("A.m"));
    assert!(!p.references.iter().any(|r| r.name == "self"));
}

/// Every node kind a rules value names exists in a grammar it serves: a
/// misspelt kind would silently never match.
#[test]
fn rules_name_only_kinds_of_their_grammars() {
    for lang in Lang::ALL {
        let r = rules(lang);
        let grammars: Vec<tree_sitter::Language> = Lang::ALL
            .iter()
            .filter(|l| std::ptr::eq(rules(**l), r))
            .filter_map(|l| l.grammar())
            .collect();
        let mut kinds: Vec<&str> = Vec::new();
        kinds.extend(r.defs.iter().map(|d| d.node));
        kinds.extend(r.scopes.iter().map(|s| s.node));
        kinds.extend(r.calls.iter().map(|c| c.node));
        kinds.extend(r.callee.names);
        kinds.extend(r.callee.steps.iter().map(|(k, _)| *k));
        kinds.extend(r.refs.identifiers);
        kinds.extend(r.refs.types);
        kinds.extend(r.refs.fields);
        kinds.extend(r.refs.type_parent);
        kinds.extend(r.refs.field_of.map(|(k, _)| k));
        kinds.extend(r.lead.wrappers);
        kinds.extend(r.lead.comments);
        kinds.extend(r.lead.attributes);
        kinds.retain(|k| grammars.iter().all(|g| g.id_for_node_kind(k, true) == 0));
        assert!(kinds.is_empty(), "{lang:?}: no node kinds {kinds:?}");
    }
}

/// Items inside an item-level macro call's body (tokio's `cfg_rt! { pub fn
/// spawn … }`) are definitions, in the scope the call sits in, with their
/// own lines, docs and calls; a body that is not items stays tokens.
#[test]
fn rust_items_inside_item_level_macros() {
    let src = "cfg_rt! {\n    /// Spawns a task.\n    pub fn spawn(x: u32) -> u32 { helper(x) }\n    cfg_net! {\n        pub struct Tcp;\n    }\n}\nimpl S {\n    cfg_io! {\n        pub fn read(&self) {}\n    }\n}\nthread_local! {\n    static KEY: u32 = 1;\n}\ncfg_if! {\n    if #[cfg(unix)] { fn unix_only() {} }\n}\nfn main() { println!(\"{}\", 1); }\n";
    let p = run(Lang::Rust, src);
    let find = |q: &str| p.symbols.iter().find(|s| s.qualified_name == q);
    let spawn = find("spawn").expect("spawn inside cfg_rt!");
    assert_eq!((spawn.kind, spawn.name_line), ("function", 3));
    assert_eq!(spawn.doc.as_deref(), Some("Spawns a task."));
    assert_eq!(
        find("Tcp").map(|s| (s.kind, s.name_line)),
        Some(("struct", 5))
    );
    assert_eq!(find("S.read").map(|s| s.kind), Some("method"));
    assert_eq!(find("KEY").map(|s| s.kind), Some("constant"));
    assert!(find("unix_only").is_none(), "cfg_if!'s body is not items");
    assert!(p.edges.iter().any(|e| e.kind == "calls"
        && e.dst_name == "helper"
        && e.src_symbol.as_deref() == Some("spawn")));
    assert!(p
        .edges
        .iter()
        .any(|e| e.kind == "calls" && e.dst_name == "cfg_rt!"));
    assert!(p
        .edges
        .iter()
        .any(|e| e.kind == "calls" && e.dst_name == "println!"));
    // Each identifier is at most one reference, not one per walk.
    let mut at: Vec<u64> = p.references.iter().map(|r| r.start_byte).collect();
    let n = at.len();
    at.sort();
    at.dedup();
    assert_eq!(at.len(), n, "{:?}", p.references);
    assert!(p.references.iter().any(|r| r.name == "x"));
}
