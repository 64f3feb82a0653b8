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
    receiver_value: value_expr,
    ..LangRules::NONE
};

/// A function's local names: parameters (`cx: &mut Context<'_>`) and
/// `let` bindings of a plain name, with the type written, else the value's
/// type when it shows: a struct literal (`Foo { … }` → `Foo`) or the result
/// of an associated function (`Foo::new(…)` → `Foo::new()`, `Foo::open(…)?`
/// → `Foo::open()?`), which resolution reads by that function's return type.
/// The names a pattern binds (`let (a, b)`, `if let Some(x)`, a `match`
/// arm's, `for (k, v) in …`, a closure's `|x|`) show no type: they hide an
/// outer name of theirs (feature 34; where each is in sight:
/// [`binding_span`]).
fn bindings(at: &At) -> Option<Vec<(String, Option<String>)>> {
    let name_of = |p: Node| -> Option<String> {
        let p = match p.kind() {
            "mut_pattern" => p.named_child(p.named_child_count().checked_sub(1)? as u32)?,
            _ => p,
        };
        (p.kind() == "identifier").then(|| at.text(p).to_string())
    };
    let untyped = |p: Node| -> Option<Vec<(String, Option<String>)>> {
        let mut names = Vec::new();
        pattern_names(at, p, &mut names);
        (!names.is_empty()).then(|| names.into_iter().map(|n| (n, None)).collect())
    };
    // (feature 41: a name a tuple-struct or struct pattern binds directly
    // is typed by its slot, `~P#i` / `~P#f`)
    let typed = |p: Node| -> Option<Vec<(String, Option<String>)>> {
        let mut names = Vec::new();
        slot_names(at, p, None, &mut names);
        (!names.is_empty()).then_some(names)
    };
    // A pattern matched against a value: `Some(x)` / `Ok(x)` binds `x` to
    // what `value?` gives (`=value?`: `if let`, let-else, a `match` arm,
    // feature 42); a tuple's names (`let (a, b) = value`) each to its
    // element (`=value.0`, `=value.1`; feature 42); any other as
    // [`slot_names`] types them.
    let matched = |p: Node, value: Option<Node>| -> Option<Vec<(String, Option<String>)>> {
        let w = value.and_then(|v| flat_text(v, at.src));
        if let Some(x) = some_or_ok(at, p) {
            let w = w.map(|w| format!("={w}?"));
            return Some(vec![(at.text(x).to_string(), w)]);
        }
        if let (Some(w), "tuple_pattern") = (&w, p.kind()) {
            let mut out = Vec::new();
            for (i, (k, rest)) in pattern_elems(p).into_iter().enumerate() {
                match name_of(k).filter(|_| !rest) {
                    Some(n) => out.push((n, Some(format!("={w}.{i}")))),
                    None => slot_names(at, k, None, &mut out),
                }
            }
            return (!out.is_empty()).then_some(out);
        }
        typed(p)
    };
    // (feature 44: `for x in xs` / `&self.items` / `v.iter()`: `x` is an
    // element of the value, `=xs[]`, which resolution reads from its type)
    let element = || -> Option<Vec<(String, Option<String>)>> {
        let name = name_of(at.field("pattern")?)?;
        let mut v = at.field("value")?;
        while let Some(inner) = match v.kind() {
            "reference_expression" => v.child_by_field_name("value"),
            "parenthesized_expression" => v.named_child(0),
            _ => None,
        } {
            v = inner;
        }
        let w = flat_text(v, at.src)?;
        let w = [".iter()", ".iter_mut()", ".into_iter()"]
            .iter()
            .find_map(|s| w.strip_suffix(s))
            .unwrap_or(&w);
        walked_value(w).then(|| vec![(name, Some(format!("={w}[]")))])
    };
    let (pattern, ty) = match at.kind {
        "for_expression" => return element().or_else(|| typed(at.field("pattern")?)),
        "let_condition" => return matched(at.field("pattern")?, at.field("value")),
        "match_arm" => {
            // (the arm's pattern, inside its `match_pattern`, against the
            // `match`'s value)
            let mp = at.field("pattern")?;
            let cond = mp.child_by_field_name("condition").map(|c| c.id());
            let mut c = mp.walk();
            let inner = mp.named_children(&mut c).find(|k| Some(k.id()) != cond);
            let value = at
                .anc
                .iter()
                .rev()
                .find(|a| a.kind() == "match_expression")
                .and_then(|m| m.child_by_field_name("value"));
            return match inner {
                Some(p) => matched(p, value),
                None => typed(mp),
            };
        }
        "closure_parameters" => {
            let mut c = at.node.walk();
            let params: Vec<Node> = at.node.named_children(&mut c).collect();
            let mut names: Vec<_> = params
                .iter()
                .filter(|p| p.kind() != "parameter")
                .flat_map(|p| untyped(*p).unwrap_or_default())
                .collect();
            // (feature 47: the first parameter of a closure an iterator's or
            // an `Option`'s method takes, `xs.iter().map(|x| …)`, is an
            // element of the value walked, `=xs[]`)
            let first = params.first().and_then(|p| {
                let mut p = *p;
                while matches!(p.kind(), "reference_pattern" | "mut_pattern") {
                    p = p.named_child(p.named_child_count().checked_sub(1)? as u32)?;
                }
                (p.kind() == "identifier").then(|| at.text(p).to_string())
            });
            if let (Some(n), Some(w)) = (first, closure_element(at)) {
                for (m, t) in names.iter_mut() {
                    if *m == n {
                        *t = Some(format!("={w}[]"));
                    }
                }
            }
            // (feature 57: a closure that is argument `i` of a call of `g`
            // types its parameter `j` as `g`'s signature does, `g(#i).#j`)
            if let Some((g, i)) = closure_callee(at) {
                for (j, p) in params.iter().enumerate() {
                    if p.kind() != "identifier" {
                        continue;
                    }
                    let n = at.text(*p);
                    for (m, t) in names.iter_mut() {
                        if m == n && t.is_none() {
                            *t = Some(format!("{g}(#{i}).#{j}"));
                        }
                    }
                }
            }
            return (!names.is_empty()).then_some(names);
        }
        "parameter" => (at.field("pattern")?, at.field("type")),
        "let_declaration" => (at.field("pattern")?, at.field("type")),
        _ => return None,
    };
    let Some(name) = name_of(pattern) else {
        return matched(pattern, at.field("value"));
    };
    let ty = match ty {
        Some(t) => written_type(at.text(t)).map(|w| generic_bound(at, &w).unwrap_or(w)),
        None => at.field("value").and_then(|v| value_type(at, v)),
    };
    Some(vec![(name, ty)])
}

/// `Some(x)` / `Ok(x)`: the name `x`.
fn some_or_ok<'t>(at: &At, p: Node<'t>) -> Option<Node<'t>> {
    if p.kind() != "tuple_struct_pattern" {
        return None;
    }
    let ty = p.child_by_field_name("type")?;
    if !matches!(at.text(ty), "Some" | "Ok") {
        return None;
    }
    let mut c = p.walk();
    let inner: Vec<Node> = p
        .named_children(&mut c)
        .filter(|k| k.id() != ty.id())
        .collect();
    (inner.len() == 1 && inner[0].kind() == "identifier").then(|| inner[0])
}

/// The names a Rust pattern binds: `x`, `mut x`, `ref x`, `x @ …`, inside
/// tuples, slices, `Some(x)`, `Foo { a, b: c }`, `A(x) | B(x)`; not the
/// path a tuple-struct or struct pattern names.
fn pattern_names(at: &At, p: Node, out: &mut Vec<String>) {
    match p.kind() {
        "identifier" | "shorthand_field_identifier" => {
            let n = at.text(p).to_string();
            if !out.contains(&n) {
                out.push(n);
            }
        }
        "field_pattern" => match p.child_by_field_name("pattern") {
            Some(q) => pattern_names(at, q, out),
            None => {
                if let Some(n) = p.child_by_field_name("name") {
                    pattern_names(at, n, out);
                }
            }
        },
        "tuple_struct_pattern"
        | "struct_pattern"
        | "tuple_pattern"
        | "slice_pattern"
        | "or_pattern"
        | "ref_pattern"
        | "mut_pattern"
        | "captured_pattern"
        | "match_pattern"
        | "reference_pattern" => {
            let ty = p.child_by_field_name("type").map(|t| t.id());
            let cond = p.child_by_field_name("condition").map(|t| t.id());
            let mut c = p.walk();
            for k in p.named_children(&mut c) {
                if Some(k.id()) != ty && Some(k.id()) != cond {
                    pattern_names(at, k, out);
                }
            }
        }
        _ => {}
    }
}

/// Feature 41: the names a Rust pattern binds, as [`pattern_names`] reads
/// them, each typed by the slot it fills directly: `P(a, b)` binds `a` to
/// `~P#0` and `b` to `~P#1`, `P { f, g: x }` binds `f` to `~P#f` and `x` to
/// `~P#g` (resolution reads the slot's declared type: a tuple struct's,
/// an enum variant's, a struct's field); `ref`, `mut`, `&` and `x @`
/// keep the slot they are in. A name in a tuple, a slice, after `..`, in
/// std's `Some`/`Ok`/`Err`, or given two slots by an or-pattern's
/// alternatives, is untyped.
fn slot_names(at: &At, p: Node, slot: Option<String>, out: &mut Vec<(String, Option<String>)>) {
    let kids = |skip: &[Option<usize>]| {
        let mut c = p.walk();
        p.named_children(&mut c)
            .filter(|k| !skip.contains(&Some(k.id())))
            .collect::<Vec<Node>>()
    };
    // The path a pattern names, generic arguments dropped (`Foo::<T>::A`).
    let path = |ty: Node| -> Option<String> {
        let mut s = String::new();
        let mut depth = 0u32;
        for c in at.text(ty).chars() {
            match c {
                '<' => depth += 1,
                '>' => depth = depth.saturating_sub(1),
                c if depth == 0 && !c.is_whitespace() => s.push(c),
                _ => {}
            }
        }
        let s = s.replace("::::", "::");
        let s = s.trim_end_matches("::").to_string();
        (!matches!(s.as_str(), "Some" | "Ok" | "Err" | "None" | "")).then_some(s)
    };
    match p.kind() {
        "identifier" | "shorthand_field_identifier" => {
            let n = at.text(p).to_string();
            match out.iter_mut().find(|(m, _)| *m == n) {
                Some((_, t)) if *t != slot => *t = None,
                Some(_) => {}
                None => out.push((n, slot)),
            }
        }
        "tuple_struct_pattern" => {
            let named = p.child_by_field_name("type").and_then(path);
            for (i, (k, rest)) in pattern_elems(p).into_iter().enumerate() {
                let s = named
                    .as_ref()
                    .filter(|_| !rest)
                    .map(|n| format!("~{n}#{i}"));
                slot_names(at, k, s, out);
            }
        }
        "struct_pattern" => {
            let ty = p.child_by_field_name("type");
            let named = ty.and_then(path);
            for k in kids(&[ty.map(|t| t.id())]) {
                if k.kind() != "field_pattern" {
                    continue;
                }
                let Some(f) = k.child_by_field_name("name") else {
                    continue;
                };
                let s = named.as_ref().map(|n| format!("~{n}#{}", at.text(f)));
                match k.child_by_field_name("pattern") {
                    Some(q) => slot_names(at, q, s, out),
                    None => slot_names(at, f, s, out),
                }
            }
        }
        "ref_pattern" | "mut_pattern" | "reference_pattern" | "captured_pattern" | "or_pattern"
        | "match_pattern" => {
            let cond = p.child_by_field_name("condition").map(|c| c.id());
            for k in kids(&[cond]) {
                slot_names(at, k, slot.clone(), out);
            }
        }
        "tuple_pattern" | "slice_pattern" => {
            for k in kids(&[]) {
                slot_names(at, k, None, out);
            }
        }
        _ => {}
    }
}

/// Methods whose closure's first parameter is an element of their receiver
/// (an iterator's, an `Option`'s, a `Vec`'s `retain`), feature 47.
const ELEMENT_CLOSURES: &[&str] = &[
    "all",
    "and_then",
    "any",
    "filter",
    "filter_map",
    "find",
    "find_map",
    "flat_map",
    "for_each",
    "inspect",
    "is_some_and",
    "map",
    "max_by_key",
    "min_by_key",
    "partition",
    "position",
    "retain",
    "skip_while",
    "take_while",
];

/// Iterator adapters that keep the elements they walk, feature 47.
const SAME_ELEMENTS: &[&str] = &[
    "by_ref",
    "cloned",
    "copied",
    "filter",
    "peekable",
    "rev",
    "skip",
    "skip_while",
    "step_by",
    "take",
    "take_while",
];

/// Feature 47: for the parameters at `at` of a closure that is the first
/// argument of `v.m(…)` with `m` one of [`ELEMENT_CLOSURES`], the value `v`
/// whose elements the closure takes, through `.iter()`, `.iter_mut()`,
/// `.into_iter()` and [`SAME_ELEMENTS`], as a path of names
/// (`self.items`); none for any other value.
fn closure_element(at: &At) -> Option<String> {
    let (clo, args, call) = closure_call(at)?;
    if args.named_child(0)?.id() != clo.id() {
        return None;
    }
    fn called<'t>(at: &At, c: Node<'t>) -> Option<(Node<'t>, String)> {
        let f = c
            .child_by_field_name("function")
            .filter(|f| f.kind() == "field_expression")?;
        let m = at.text(f.child_by_field_name("field")?).to_string();
        Some((f.child_by_field_name("value")?, m))
    }
    let (mut v, m) = called(at, call)?;
    if !ELEMENT_CLOSURES.contains(&m.as_str()) {
        return None;
    }
    loop {
        v = match v.kind() {
            "reference_expression" => v.child_by_field_name("value")?,
            "parenthesized_expression" => v.named_child(0)?,
            "call_expression" => {
                // (feature 54: another method's result is walked as its
                // declared type yields, `cmd.get_arguments().filter(|a| …)`)
                let Some((inner, m)) = called(at, v) else {
                    break;
                };
                let walked = matches!(m.as_str(), "iter" | "iter_mut" | "into_iter");
                if !walked && !SAME_ELEMENTS.contains(&m.as_str()) {
                    break;
                }
                inner
            }
            _ => break,
        };
    }
    let w = flat_text(v, at.src)?;
    walked_value(&w).then_some(w)
}

/// A value a loop or an iterator's closure walks that resolution can type:
/// a name through fields (`self.items`), or (feature 54) a call's result
/// whose first name is a name (`cmd.get_arguments()`, `self.states()`),
/// its declared type read as what it yields.
fn walked_value(w: &str) -> bool {
    if w.split('.').all(is_word) {
        return true;
    }
    let head = w.split(['.', '(', ':']).next().unwrap_or("");
    is_word(head) && w.ends_with(')') && w.len() <= 120 && !w.contains(['|', '{', '!', '"', '\''])
}

/// The closure whose parameters are at `at`, when it is an argument of a
/// call: the closure, the arguments and the call.
fn closure_call<'t>(at: &At<'t, '_>) -> Option<(Node<'t>, Node<'t>, Node<'t>)> {
    let n = at.anc.len();
    let (clo, args, call) = (
        *at.anc.get(n.checked_sub(1)?)?,
        *at.anc.get(n.checked_sub(2)?)?,
        *at.anc.get(n.checked_sub(3)?)?,
    );
    (clo.kind() == "closure_expression"
        && args.kind() == "arguments"
        && call.kind() == "call_expression")
        .then_some((clo, args, call))
}

/// Feature 57: the function a closure is an argument of, as written (`f`,
/// `Type::f`, `crate::m::f`, `self.m`), and the argument's position.
fn closure_callee(at: &At) -> Option<(String, usize)> {
    let (clo, args, call) = closure_call(at)?;
    let mut c = args.walk();
    let i = args
        .named_children(&mut c)
        .position(|k| k.id() == clo.id())?;
    let mut f = call.child_by_field_name("function")?;
    if f.kind() == "generic_function" {
        f = f.child_by_field_name("function")?;
    }
    let g = match f.kind() {
        "identifier" | "scoped_identifier" => at.text(f).to_string(),
        // (`self.m`; feature 58: `x.m` of a local or parameter, whose call
        // carries the receiver's type)
        "field_expression" => {
            let v = f.child_by_field_name("value")?;
            matches!(v.kind(), "self" | "identifier").then(|| at.text(f).to_string())?
        }
        _ => return None,
    };
    (g.len() <= 120 && !g.contains(['<', ' ', '\n'])).then_some((g, i))
}

/// The elements of a tuple or tuple-struct pattern in order (not its path),
/// `_` among them (no named node, it takes its slot), each with whether a
/// `..` comes before it (whose slot no position tells).
fn pattern_elems(p: Node) -> Vec<(Node, bool)> {
    let ty = p.child_by_field_name("type").map(|t| t.id());
    let mut c = p.walk();
    let mut rest = false;
    p.children(&mut c)
        .filter(|k| (k.is_named() || k.kind() == "_") && !k.is_extra() && Some(k.id()) != ty)
        .filter_map(|k| {
            rest |= k.kind() == "remaining_field_pattern";
            (k.kind() != "remaining_field_pattern").then_some((k, rest))
        })
        .collect()
}

/// Where a Rust binding made at `node` is in sight (feature 38): from after
/// a `let` to the end of its block; an `if let`'s / `while let`'s names in
/// the `if`'s block (not its `else`) or the loop's body; a `match` arm's and
/// a closure's names within it, a `for`'s in its body; a function's
/// parameters to its end.
pub fn binding_span(node: Node, kind: &str, anc: &[Node]) -> (usize, usize) {
    let up = |kinds: &[&str]| {
        anc.iter()
            .rev()
            .find(|a| kinds.contains(&a.kind()))
            .map_or(usize::MAX, |a| a.end_byte())
    };
    match kind {
        "let_declaration" => (node.end_byte(), up(&["block"])),
        // (an `if let`'s names are the `if`'s block's, not its `else`'s; a
        // `while let`'s its body's; a guard's its arm's)
        "let_condition" => {
            let owner = anc
                .iter()
                .rev()
                .find(|a| matches!(a.kind(), "if_expression" | "while_expression" | "match_arm"));
            let end = owner.map_or(usize::MAX, |o| {
                o.child_by_field_name("consequence")
                    .or_else(|| o.child_by_field_name("body"))
                    .unwrap_or(*o)
                    .end_byte()
            });
            (node.end_byte(), end)
        }
        // (a `for`'s names are its body's: `for x in x.iter()` reads the outer `x`)
        "for_expression" => (
            node.child_by_field_name("body")
                .map_or(node.start_byte(), |b| b.start_byte()),
            node.end_byte(),
        ),
        "match_arm" => (node.start_byte(), node.end_byte()),
        "closure_parameters" => (node.start_byte(), up(&["closure_expression"])),
        "parameter" if anc.last().is_some_and(|p| p.kind() == "closure_parameters") => {
            (node.start_byte(), up(&["closure_expression"]))
        }
        _ => (node.start_byte(), usize::MAX),
    }
}

/// Std's traits that name no methods a receiver is called for (markers,
/// and the closures' `Fn` traits, called as `f(…)`).
const MARKER_TRAITS: &[&str] = &[
    "Copy",
    "Fn",
    "FnMut",
    "FnOnce",
    "Send",
    "Sized",
    "Sync",
    "Unpin",
    "UnwindSafe",
    "RefUnwindSafe",
];

/// Feature 35: a type written as a generic parameter (`V`, `&mut S`, `FB`)
/// of the nearest function, `impl` or trait declaring it is what its bounds
/// name: `<V: Visitor<'de>>` / `where V: Visitor<'de> + Send` → `impl
/// Visitor<'de>` (several: `impl A + B`); std's markers and `Fn` traits, a
/// lifetime or `?Sized` are no bound. None when the name is no parameter or
/// has no other bound.
fn generic_bound(at: &At, written: &str) -> Option<String> {
    let mut t = written.trim_start_matches('&').trim_start();
    if t.starts_with('\'') {
        t = t.split_once(' ')?.1;
    }
    let t = t.strip_prefix("mut ").unwrap_or(t).trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    generic_bounds(at)
        .into_iter()
        .find(|(n, _)| n == t)
        .map(|(_, b)| format!("impl {}", b.join(" + ")))
}

/// A name: letters, digits and `_`, not empty.
fn is_word(w: &str) -> bool {
    !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Feature 43: a path call through a generic parameter (`T::opt_len(…)`,
/// `F::from_bits(u)`) is what the parameter's bounds name, as a receiver of
/// that type is (`impl RangeInteger`; feature 35).
pub fn path_bounds(at: &At, dst_name: &str) -> Option<String> {
    let (head, m) = dst_name.split_once("::")?;
    if !is_word(head) || !is_word(m) || !head.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    generic_bound(at, head)
}

/// Feature 35: a call through a field of `self` (`self.base.consume(…)`)
/// in a function or `impl` with bounded generic parameters: `where C:
/// Consumer<T>; I: Iterator`, which resolution reads when the field's
/// declared type is one of them.
pub fn self_field_bounds(at: &At, dst_name: &str) -> Option<String> {
    let (field, m) = dst_name.strip_prefix("self.")?.split_once('.')?;
    if !is_word(field) || !is_word(m) {
        return None;
    }
    let all = generic_bounds(at);
    let mut w: Vec<String> = all
        .iter()
        .map(|(n, b)| format!("{n}: {}", b.join(" + ")))
        .collect();
    if w.is_empty() {
        return None;
    }
    // The `impl`'s arguments of its type (`impl<B1, A1> Pair<B1, A1>` →
    // `@B1,A1`), which resolution matches with the struct's parameters.
    let args = at
        .anc
        .iter()
        .rev()
        .find(|a| a.kind() == "impl_item")
        .and_then(|i| i.child_by_field_name("type"))
        .and_then(|t| t.child_by_field_name("type_arguments"));
    if let Some(args) = args {
        let mut c = args.walk();
        let a: Vec<String> = args
            .named_children(&mut c)
            .map(|k| at.text(k).split_whitespace().collect::<String>())
            .collect();
        if a.iter().all(|x| !x.contains([';', ','])) {
            w.insert(0, format!("@{}", a.join(",")));
        }
    }
    Some(format!("where {}", w.join("; ")))
}

/// The bounded type parameters of the functions, `impl`s and traits around
/// `at`, innermost first (a name declared twice: the inner one), each with
/// its bounds from its declaration and its item's `where` clause.
fn generic_bounds(at: &At) -> Vec<(String, Vec<String>)> {
    let take = |b: Node, bounds: &mut Vec<String>| {
        let mut c = b.walk();
        for k in b.named_children(&mut c) {
            let k = match k.kind() {
                "higher_ranked_trait_bound" => match k.child_by_field_name("type") {
                    Some(t) => t,
                    None => continue,
                },
                "type_identifier" | "generic_type" | "scoped_type_identifier" => k,
                _ => continue,
            };
            let Some(w) = written_type(at.text(k)) else {
                continue;
            };
            let head = w.split('<').next().unwrap_or(&w);
            let head = head.rsplit("::").next().unwrap_or(head).trim();
            if !MARKER_TRAITS.contains(&head) && !bounds.contains(&w) && !w.contains(';') {
                bounds.push(w);
            }
        }
    };
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    // (a function's are in sight in it, and its `impl`'s or trait's when it
    // is a method; a function nested in another sees none of the outer's)
    let mut last = false;
    let mut method = false;
    for (i, &item) in at.anc.iter().enumerate().rev() {
        let kind = item.kind();
        let is_fn = matches!(kind, "function_item" | "function_signature_item");
        if !is_fn && !matches!(kind, "impl_item" | "trait_item") {
            continue;
        }
        // (past the function, only the `impl` or trait of a method)
        let impl_of_method = method && !is_fn;
        if last && !impl_of_method {
            break;
        }
        if is_fn {
            last = true;
            method = i > 0 && at.anc[i - 1].kind() == "declaration_list";
        } else if last {
            method = false;
        }
        let Some(tp) = item.child_by_field_name("type_parameters") else {
            continue;
        };
        let mut here: Vec<(String, Vec<String>)> = Vec::new();
        let mut c = tp.walk();
        for p in tp.named_children(&mut c) {
            if p.kind() != "type_parameter" {
                continue;
            }
            let Some(n) = p
                .child_by_field_name("name")
                .map(|n| at.text(n).to_string())
            else {
                continue;
            };
            if seen.contains(&n) {
                continue;
            }
            seen.push(n.clone());
            let mut bounds = Vec::new();
            if let Some(b) = p.child_by_field_name("bounds") {
                take(b, &mut bounds);
            }
            here.push((n, bounds));
        }
        let mut c = item.walk();
        for w in item.children(&mut c).filter(|w| w.kind() == "where_clause") {
            let mut c2 = w.walk();
            for p in w.named_children(&mut c2) {
                let left = p.child_by_field_name("left").map(|l| at.text(l));
                if let Some(h) = here.iter_mut().find(|(n, _)| Some(n.as_str()) == left) {
                    if let Some(b) = p.child_by_field_name("bounds") {
                        take(b, &mut h.1);
                    }
                }
            }
        }
        out.extend(here.into_iter().filter(|(_, b)| !b.is_empty()));
    }
    out
}

/// The type a `let` value shows: `Foo { … }`, `Foo::f(…)`, `Foo::f(…)?`;
/// any other call's result as [`value_expr`] writes it.
fn value_type(at: &At, v: Node) -> Option<String> {
    // `Foo::f(…)` → `Foo::f()`.
    let path_call = |c: Node| -> Option<String> {
        let f = c.child_by_field_name("function")?;
        let f = match f.kind() {
            "generic_function" => f.child_by_field_name("function")?,
            _ => f,
        };
        // (a type's function, `Foo::new`, `Self::open`; `util::make()` is a
        // module's, written as any call's value)
        // (a smart pointer's, `Arc::new(Semaphore::new(1))`: written out,
        // resolution reads what it holds, feature 39)
        let of_type = f.kind() == "scoped_identifier"
            && f.child_by_field_name("path").is_some_and(|p| {
                let w = at.text(p);
                let last = w.rsplit("::").next().unwrap_or(w);
                let pointer = matches!(last, "Box" | "Arc" | "Rc" | "Pin");
                !pointer
                    && (last.starts_with(|c: char| c.is_ascii_uppercase()) || last.starts_with('<'))
            });
        of_type
            .then(|| written_type(at.text(f)))?
            .map(|f| format!("{f}()"))
    };
    let shown = match v.kind() {
        "struct_expression" => return written_type(at.text(v.child_by_field_name("name")?)),
        "call_expression" => path_call(v),
        "try_expression" => v
            .named_child(0)
            .filter(|c| c.kind() == "call_expression")
            .and_then(path_call)
            .map(|t| format!("{t}?")),
        // (feature 52: `vec![…]` is a `Vec`; serde's `tri!(e)` is `e?`)
        "macro_invocation" => match v.child_by_field_name("macro").map(|m| at.text(m)) {
            Some("vec") => return Some("Vec<_>".to_string()),
            Some("tri") => {
                let mut c = v.walk();
                let tt = v
                    .named_children(&mut c)
                    .find(|k| k.kind() == "token_tree")?;
                let w = flat_text(tt, at.src)?;
                let inner = w.strip_prefix('(')?.strip_suffix(')')?;
                return (!inner.is_empty()).then(|| format!("={inner}?"));
            }
            _ => None,
        },
        _ => None,
    };
    shown.or_else(|| read_value(at, v, true))
}

/// Feature 34: a value that is some other call's result (`rt()`,
/// `Builder::new_multi_thread().build().unwrap()`, `input.fork()`,
/// `UdpSocket::bind(a).await?`, `&mut Foo::new(x).unwrap()`): `=` and the
/// expression on one line ([`flat_text`]), which resolution types by the
/// declared return types of what it calls.
pub fn value_expr(at: &At, v: Node) -> Option<String> {
    read_value(at, v, false)
}

/// [`value_expr`]; feature 37: a value that reads a field on the way
/// (`x.inner.shared`, `self.raw.header().state`; a `let`'s `&self.shared`
/// when `self_fields`: a receiver `self.a` is feature 31's, `self.a.b` is
/// read as written) too, when its first name is a name.
fn read_value(at: &At, v: Node, self_fields: bool) -> Option<String> {
    let mut v = v;
    loop {
        v = match v.kind() {
            "parenthesized_expression" => v.named_child(0)?,
            "reference_expression" => v.child_by_field_name("value")?,
            _ => break,
        };
    }
    let fields = v.kind() == "field_expression" && {
        // The first name, through fields, calls, `?` and `.await`.
        let mut h = v;
        while let Some(inner) = match h.kind() {
            "field_expression" => h.child_by_field_name("value"),
            "call_expression" => h.child_by_field_name("function"),
            "try_expression" | "await_expression" => h.named_child(0),
            _ => None,
        } {
            h = inner;
        }
        match h.kind() {
            "identifier" => true,
            "self" => self_fields,
            _ => false,
        }
    };
    // (feature 44: another local, `let next = curr;`, is what it is)
    (fields
        || matches!(
            v.kind(),
            "call_expression" | "try_expression" | "await_expression" | "identifier"
        ))
    .then(|| flat_text(v, at.src))?
    .map(|w| format!("={w}"))
}

/// Rust: an expression's text on one line, for [`value_expr`]: each line
/// trimmed and the lines joined, string and character literals emptied
/// (`""`, `' '`: a parenthesis in one would unbalance the scan of a call),
/// comments dropped; none over 200 bytes.
pub fn flat_text(v: Node, src: &[u8]) -> Option<String> {
    let (from, to) = (v.start_byte(), v.end_byte());
    if to - from > 2000 {
        return None;
    }
    // The literals and comments, in order.
    let mut cut: Vec<(usize, usize, &str)> = Vec::new();
    let mut stack = vec![v];
    while let Some(n) = stack.pop() {
        let put = match n.kind() {
            "string_literal" | "raw_string_literal" => "\"\"",
            "char_literal" => "' '",
            "line_comment" | "block_comment" => "",
            _ => {
                let mut c = n.walk();
                let kids: Vec<Node> = n.children(&mut c).collect();
                stack.extend(kids.into_iter().rev());
                continue;
            }
        };
        cut.push((n.start_byte(), n.end_byte(), put));
    }
    cut.sort_unstable();
    let mut raw = Vec::with_capacity(to - from);
    let mut at = from;
    for (s, e, put) in cut {
        if s < at {
            continue;
        }
        raw.extend_from_slice(&src[at..s]);
        raw.extend_from_slice(put.as_bytes());
        at = e;
    }
    raw.extend_from_slice(&src[at..to]);
    let raw = std::str::from_utf8(&raw).ok()?;
    let out: String = raw.lines().map(str::trim).collect();
    (!out.is_empty() && out.len() <= 200).then_some(out)
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
    // (not `impl<T: Tr> Tr for &T`, which is no blanket impl: a generic
    // parameter's reference keeps its written name; feature 53)
    let written = at.text(ty);
    let referent = base_type_name(impl_referent(written));
    let generic = !referent.is_empty()
        && referent.len() <= 2
        && referent
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    let tname = match generic && impl_referent(written) != written.trim() {
        true => base_type_name(written),
        false => referent,
    };
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

/// The type a reference or pointer type refers to, as an `impl` for it is
/// named (feature 49): `&'a mut Deserializer<R>` → `Deserializer<R>`,
/// `&'de RawValue` → `RawValue`, `*const T` → `T`, `dyn Error` → `Error`.
fn impl_referent(t: &str) -> &str {
    let mut t = t.trim();
    loop {
        let before = t;
        t = t.trim_start_matches(['&', '*', ' ']);
        if let Some(r) = t.strip_prefix('\'') {
            t = r.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_');
        }
        for p in ["mut ", "const ", "dyn "] {
            t = t.strip_prefix(p).unwrap_or(t);
        }
        if t == before {
            return t;
        }
    }
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
