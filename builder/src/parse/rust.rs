//! Rust: items, fields and variants; `impl` blocks as scopes (with
//! `implements` edges); `use` trees and `mod x;` as imports; macro calls.

use tree_sitter::Node;

use super::rules::{
    base_type_name, each_type, text, written_type, At, CallRule, CalleePath, DefEdges, DefRule,
    Doc, Import, LangRules, Lead, RefRules, ScopeRule, Step,
};
use super::RawEdge;

pub static RULES: LangRules = LangRules {
    defs: &[
        DefRule::scope("function_item", "function").method_in_class(),
        DefRule::scope("function_signature_item", "function").method_in_class(),
        DefRule::class("struct_item", "struct"),
        DefRule::class("enum_item", "enum"),
        DefRule::class("union_item", "union"),
        DefRule::class("trait_item", "trait"),
        DefRule::leaf("type_item", "type"),
        DefRule::leaf("const_item", "constant"),
        DefRule::leaf("static_item", "constant"),
        DefRule::scope("mod_item", "module"),
        DefRule::leaf("macro_definition", "macro"),
        DefRule::leaf("field_declaration", "field"),
        DefRule::leaf("enum_variant", "constant"),
    ],
    def_edges,
    scopes: &[ScopeRule {
        node: "impl_item",
        name: impl_scope,
    }],
    imports,
    calls: &[
        CallRule::last("macro_invocation", "macro"),
        CallRule::last("call_expression", "function"),
    ],
    callee: CalleePath {
        names: &["identifier", "field_identifier", "type_identifier"],
        steps: &[
            ("field_expression", Step::Field("field")),
            ("scoped_identifier", Step::Field("name")),
            ("scoped_type_identifier", Step::Field("name")),
            ("generic_function", Step::FieldOr("function", "name")),
            ("generic_type", Step::FirstNamed),
        ],
    },
    qualified_calls: true,
    refs: RefRules {
        identifiers: &["identifier", "type_identifier", "field_identifier"],
        types: &["type_identifier"],
        fields: &["field_identifier"],
        ..RefRules::NONE
    },
    lead: Lead {
        comments: &["line_comment", "block_comment"],
        attributes: &["attribute_item"],
        inner: &["//!", "/*!"],
        ..Lead::NONE
    },
    doc: Doc::CommentsAbove,
    bindings,
    ..LangRules::NONE
};

/// A function's local names: parameters (`cx: &mut Context<'_>`) and
/// `let` bindings of a plain name, with the type written, else the value's
/// type when it shows: a struct literal (`Foo { … }` → `Foo`) or the result
/// of an associated function (`Foo::new(…)` → `Foo::new()`, `Foo::open(…)?`
/// → `Foo::open()?`), which resolution reads by that function's return type.
fn bindings(at: &At) -> Option<Vec<(String, Option<String>)>> {
    let name_of = |p: Node| -> Option<String> {
        let p = match p.kind() {
            "mut_pattern" => p.named_child(p.named_child_count().checked_sub(1)? as u32)?,
            _ => p,
        };
        (p.kind() == "identifier").then(|| at.text(p).to_string())
    };
    let (pattern, ty) = match at.kind {
        // `for x in …` and a closure's untyped `|x|` rebind `x`: no type shows.
        "for_expression" => return Some(vec![(name_of(at.field("pattern")?)?, None)]),
        "closure_parameters" => {
            let mut c = at.node.walk();
            let names: Vec<_> = at
                .node
                .named_children(&mut c)
                .filter_map(|p| name_of(p).map(|n| (n, None)))
                .collect();
            return (!names.is_empty()).then_some(names);
        }
        "parameter" => (at.field("pattern")?, at.field("type")),
        "let_declaration" => (at.field("pattern")?, at.field("type")),
        _ => return None,
    };
    let name = name_of(pattern)?;
    let ty = match ty {
        Some(t) => written_type(at.text(t)),
        None => at.field("value").and_then(|v| value_type(at, v)),
    };
    Some(vec![(name, ty)])
}

/// The type a `let` value shows: `Foo { … }`, `Foo::f(…)`, `Foo::f(…)?`.
fn value_type(at: &At, v: Node) -> Option<String> {
    match v.kind() {
        "struct_expression" => written_type(at.text(v.child_by_field_name("name")?)),
        "call_expression" => {
            let f = v.child_by_field_name("function")?;
            let f = match f.kind() {
                "generic_function" => f.child_by_field_name("function")?,
                _ => f,
            };
            (f.kind() == "scoped_identifier")
                .then(|| written_type(at.text(f)))?
                .map(|f| format!("{f}()"))
        }
        "try_expression" => value_type(at, v.named_child(0)?)
            .filter(|t| t.ends_with("()"))
            .map(|t| format!("{t}?")),
        _ => None,
    }
}

/// Supertraits (`trait A: B + C`) are extended; `mod x;` imports `x`.
/// (`mod x;` is a definition, so the walk never asks [`imports`] about it.)
fn def_edges(at: &At, e: &mut DefEdges) {
    match at.node.kind() {
        "trait_item" => {
            if let Some(b) = at.field("bounds") {
                each_type(b, &mut |t| e.base("extends", t));
            }
        }
        "mod_item" if at.field("body").is_none() => {
            let name = e.qname.rsplit('.').next().unwrap_or(e.qname);
            e.edges.push(RawEdge {
                kind: "imports",
                src_symbol: e.enclosing.cloned(),
                dst_name: format!("mod {name}"),
                line: at.line(),
                recv_type: None,
                alias: None,
            });
        }
        _ => {}
    }
}

/// `impl [Trait for] Type`: a scope named after the type, and an
/// `implements` edge for a trait.
fn impl_scope(at: &At, edges: &mut Vec<RawEdge>) -> Option<String> {
    let ty = at.field("type")?;
    let tname = base_type_name(at.text(ty));
    if let Some(tr) = at.field("trait") {
        edges.push(RawEdge {
            kind: "implements",
            src_symbol: Some(tname.as_str().into()),
            dst_name: at.text(tr).to_string(),
            line: at.line(),
            recv_type: None,
            alias: None,
        });
    }
    Some(tname)
}

fn imports(at: &At) -> Option<Vec<Import>> {
    if at.kind != "use_declaration" {
        return None;
    }
    let arg = at.field("argument")?;
    let mut v = Vec::new();
    use_paths(arg, at.src, "", &mut v);
    let line = at.line();
    Some(
        v.into_iter()
            .map(|(spec, alias)| Import { spec, line, alias })
            .collect(),
    )
}

/// Every path a `use` tree brings in (`a::{b, c::d}` → `a::b`, `a::c::d`),
/// with the name it binds when it renames (`a::b as c` → `c`).
fn use_paths(n: Node, src: &[u8], prefix: &str, out: &mut Vec<(String, Option<String>)>) {
    let join = |a: &str, b: &str| {
        if a.is_empty() {
            b.to_string()
        } else {
            format!("{a}::{b}")
        }
    };
    match n.kind() {
        "scoped_use_list" => {
            let p = n
                .child_by_field_name("path")
                .map(|p| text(p, src))
                .unwrap_or("");
            let np = join(prefix, p);
            if let Some(list) = n.child_by_field_name("list") {
                use_paths(list, src, &np, out);
            }
        }
        "use_list" => {
            let mut c = n.walk();
            for ch in n.named_children(&mut c) {
                use_paths(ch, src, prefix, out);
            }
        }
        "use_as_clause" => {
            if let Some(p) = n.child_by_field_name("path") {
                let alias = n.child_by_field_name("alias").map(|a| text(a, src));
                // `use x as _;` brings a trait's methods in, under no name.
                let alias = alias.filter(|a| *a != "_").map(str::to_string);
                out.push((join(prefix, text(p, src)), alias));
            }
        }
        "use_wildcard" => {
            let t = text(n, src).trim_end_matches("::*").trim_end_matches('*');
            out.push((join(prefix, t), None));
        }
        _ => out.push((join(prefix, text(n, src)), None)),
    }
}
