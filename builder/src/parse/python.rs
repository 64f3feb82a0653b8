//! Python: classes, functions (methods in classes), module and class level
//! assignments; docstrings; `import` / `from ... import`.

use tree_sitter::Node;

use super::first_paragraph;
use super::rules::{
    text, written_type, At, AttrValue, CallRule, CalleePath, Def, DefEdges, DefRule, Doc, Import,
    LangRules, Lead, RefRules, Step,
};

pub static RULES: LangRules = LangRules {
    defs: &[
        DefRule::class("class_definition", "class"),
        DefRule::scope("function_definition", "function").method_in_class(),
    ],
    def_fn: assignment,
    def_edges: superclasses,
    imports,
    calls: &[CallRule::last("call", "function")],
    callee: CalleePath {
        names: &["identifier"],
        steps: &[
            ("attribute", Step::Field("attribute")),
            ("generic_type", Step::FirstNamed),
        ],
    },
    qualified_calls: true,
    refs: RefRules {
        identifiers: &["identifier"],
        type_parent: Some("type"),
        field_of: Some(("attribute", "attribute")),
        ignored: &["self", "cls"],
        ..RefRules::NONE
    },
    // Decorators, and `#` comments directly above (the docstring is inside
    // the definition; comments never make its doc).
    lead: Lead {
        wrappers: &["decorated_definition"],
        comments: &["comment"],
        ..Lead::NONE
    },
    doc: Doc::Custom(docstring),
    bindings,
    attrs,
    ..LangRules::NONE
};

/// A function's local names: parameters (typed or not) and assignments to a
/// plain name; the type of `x: T` / `x: T = …`, or the call `x = Form(…)`
/// (recorded `Form()`), which resolution reads as an instance when it
/// names a class.
fn bindings(at: &At) -> Option<Vec<(String, Option<String>)>> {
    let one = |name: Node, ty: Option<String>| {
        (name.kind() == "identifier").then(|| vec![(at.text(name).to_string(), ty)])
    };
    match at.kind {
        "typed_parameter" => {
            let name = at.node.named_child(0)?;
            one(
                name,
                at.field("type").and_then(|t| written_type(at.text(t))),
            )
        }
        "typed_default_parameter" => one(
            at.field("name")?,
            at.field("type").and_then(|t| written_type(at.text(t))),
        ),
        "default_parameter" => one(at.field("name")?, None),
        // `for x in …` rebinds `x` to what the loop yields: no type shows.
        "for_statement" => one(at.field("left")?, None),
        "identifier" if at.up(0).is_some_and(|p| p.kind() == "parameters") => one(at.node, None),
        "assignment" => {
            let left = at.field("left")?;
            let ty = match (at.field("type"), at.field("right")) {
                (Some(t), _) => written_type(at.text(t)),
                (None, Some(r)) => call_type(at, r),
                _ => None,
            };
            one(left, ty)
        }
        _ => None,
    }
}

/// `self.x = Foo(…)`, `self.x: T = …`, `self.x = param`, `cls.x = Foo(…)`,
/// and in a class body `x = Foo()`, `x: Foo`: the attribute and what its
/// value shows (resolution reads `self.x.m()` through it). Other targets
/// naming `self.x` (`self.a, self.b = …`, `self.x += …`, `for self.x in …`)
/// make it unknown.
fn attrs(at: &At) -> Option<Vec<(String, AttrValue)>> {
    // `self.x` / `cls.x`: the attribute's name (`cls.x = …` in a
    // classmethod, `setUpClass`, sets what instances read).
    let instance_attr = |n: Node| self_attribute(at, n);
    // Every `self.x` a tuple target (or a single one) names, as unknown.
    let unknown_in = |n: Node| -> Option<Vec<(String, AttrValue)>> {
        let mut out: Vec<(String, AttrValue)> = instance_attr(n)
            .map(|a| (a, AttrValue::Unknown))
            .into_iter()
            .collect();
        if matches!(n.kind(), "pattern_list" | "tuple_pattern" | "list_pattern") {
            let mut c = n.walk();
            for ch in n.named_children(&mut c) {
                if let Some(a) = instance_attr(ch) {
                    out.push((a, AttrValue::Unknown));
                }
            }
        }
        (!out.is_empty()).then_some(out)
    };
    match at.kind {
        "augmented_assignment" => return unknown_in(at.field("left")?),
        "for_statement" | "for_in_clause" => return unknown_in(at.field("left")?),
        "assignment" => {}
        _ => return None,
    }
    let left = at.field("left")?;
    // In a class body, `x = Foo()` / `x: Foo` is what instances read until a
    // method assigns `self.x` (`rf = RequestFactory()` of a test class).
    if at.in_class && left.kind() == "identifier" {
        let value = match (at.field("type"), at.field("right")) {
            (Some(t), _) => annotation(at, t),
            // A class named as a value (`client_class = Client`): the class
            // itself, written as Python's typing does (`type[Client]`);
            // `self.client_class()` is then an instance of it.
            (None, Some(r)) if matches!(r.kind(), "identifier" | "attribute") => {
                match written_type(at.text(r)) {
                    Some(t) if names_a_class(&t) => AttrValue::Type(format!("type[{t}]")),
                    _ => AttrValue::Unknown,
                }
            }
            (None, Some(r)) => attr_value(at, r),
            (None, None) => return None,
        };
        // `x = property(getx)` reads as what `getx` returns.
        let value = match value {
            AttrValue::Local(_) => AttrValue::Unknown,
            AttrValue::Type(t)
                if matches!(
                    t.rsplit('.').next(),
                    Some("property()" | "cached_property()" | "classmethod()" | "staticmethod()")
                ) =>
            {
                AttrValue::Unknown
            }
            v => v,
        };
        return Some(vec![(at.text(left).to_string(), value)]);
    }
    let Some(attr) = instance_attr(left) else {
        return unknown_in(left);
    };
    let value = match (at.field("type"), at.field("right")) {
        (Some(t), _) => annotation(at, t),
        // `self.x = self.y = Foo()`: the inner one records its own.
        (None, Some(r)) if r.kind() == "assignment" => AttrValue::Unknown,
        (None, Some(r)) => attr_value(at, r),
        (None, None) => return None,
    };
    Some(vec![(attr, value)])
}

/// The call `Form(…)` / `forms.Form(…)` a value is the result of, written
/// `Form()` / `forms.Form()` (resolution reads it as an instance when it
/// names a class); `self.factory(…)` / `cls.factory(…)` is written
/// `self.factory()`: an instance of the class the attribute holds.
fn call_type(at: &At, r: Node) -> Option<String> {
    if r.kind() != "call" {
        return None;
    }
    let f = r
        .child_by_field_name("function")
        .filter(|f| matches!(f.kind(), "identifier" | "attribute"))?;
    if let Some(attr) = self_attribute(at, f) {
        return Some(format!("self.{attr}()"));
    }
    match written_type(at.text(f)).filter(|f| !f.contains(['(', '['])) {
        Some(f) => Some(format!("{f}()")),
        // (feature 59) a method of a call's result, `Paginator().page(2)`:
        // `<Paginator()>_.page()`.
        None => crate::resolve::py_call_receiver(at.text(r)).filter(|t| t.starts_with('<')),
    }
}

/// A value that names a class by Python's convention: a dotted name not
/// read from the instance, whose last part is CamelCase (`Client`,
/// `autoreload.WatchmanReloader`; not `DEFAULT_MAX`, `object.__hash__`).
fn names_a_class(t: &str) -> bool {
    let last = t.rsplit('.').next().unwrap_or(t);
    !t.starts_with("self.")
        && !t.starts_with("cls.")
        && last.starts_with(|c: char| c.is_ascii_uppercase())
        && !is_constant_name(last)
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

/// An annotation's written type, unless it reads the instance (`self.a.b`,
/// which is no type and would make resolution chase the attribute).
fn annotation(at: &At, t: Node) -> AttrValue {
    match written_type(at.text(t)) {
        Some(w) if !w.starts_with("self.") && !w.starts_with("cls.") => AttrValue::Type(w),
        _ => AttrValue::Unknown,
    }
}

/// `self.x` / `cls.x`: `x`.
fn self_attribute(at: &At, n: Node) -> Option<String> {
    if n.kind() != "attribute" {
        return None;
    }
    let object = n.child_by_field_name("object")?;
    if object.kind() != "identifier" || !matches!(at.text(object), "self" | "cls") {
        return None;
    }
    Some(at.text(n.child_by_field_name("attribute")?).to_string())
}

/// What an assigned value `r` shows of its type.
fn attr_value(at: &At, r: Node) -> AttrValue {
    match r.kind() {
        "none" => AttrValue::Nothing,
        "identifier" => AttrValue::Local(at.text(r).to_string()),
        "call" => call_type(at, r).map_or(AttrValue::Unknown, AttrValue::Type),
        _ => AttrValue::Unknown,
    }
}

/// `X = ...` at module level (a constant when upper case) or in a class body (a field).
fn assignment<'t>(at: &At<'t, '_>) -> Option<Def<'t>> {
    if at.kind != "assignment" {
        return None;
    }
    let stmt = at.up(0)?;
    if stmt.kind() != "expression_statement" {
        return None;
    }
    let holder = at.up(1)?;
    let at_module = holder.kind() == "module";
    let at_class =
        holder.kind() == "block" && at.up(2).is_some_and(|p| p.kind() == "class_definition");
    if !(at_module || at_class) {
        return None;
    }
    let left = at.field("left")?;
    if left.kind() != "identifier" {
        return None;
    }
    let k = if at_class {
        "field"
    } else if is_constant_name(at.text(left)) {
        "constant"
    } else {
        "variable"
    };
    Some(Def::leaf(k, left))
}

fn is_constant_name(n: &str) -> bool {
    n.len() > 1
        && n.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && n.chars().any(|c| c.is_ascii_uppercase())
}

/// `class A(B, m.C)`: extends edges.
fn superclasses(at: &At, e: &mut DefEdges) {
    if at.node.kind() != "class_definition" {
        return;
    }
    if let Some(sup) = at.field("superclasses") {
        let mut c = sup.walk();
        for a in sup.named_children(&mut c) {
            if matches!(a.kind(), "identifier" | "attribute") {
                e.base("extends", a);
            }
            // `class Manager(BaseManager.from_queryset(QuerySet))`: a class
            // made at run time, written `BaseManager.from_queryset()`
            // (feature 32): its members do not show.
            if a.kind() == "call" {
                if let Some(callee) = a.child_by_field_name("function") {
                    if matches!(callee.kind(), "identifier" | "attribute") {
                        let name = at.text(callee).split_whitespace().collect::<String>();
                        e.base_named("extends", a, format!("{name}()"));
                    }
                }
            }
        }
    }
}

fn imports(at: &At) -> Option<Vec<Import>> {
    let (node, l) = (at.node, at.line());
    match at.kind {
        "import_statement" => {
            let mut v = Vec::new();
            let mut c = node.walk();
            for n in node.children_by_field_name("name", &mut c) {
                v.push(Import {
                    spec: at.text(imported_name(n)?).to_string(),
                    line: l,
                    alias: alias(at, n),
                });
            }
            Some(v)
        }
        "import_from_statement" => {
            let module = at.text(at.field("module_name")?).to_string();
            let mut v = Vec::new();
            let mut c = node.walk();
            for n in node.children_by_field_name("name", &mut c) {
                let m = imported_name(n)?;
                // "from a import b": b may be a module or a name in a.
                let sep = if module.ends_with('.') { "" } else { "." };
                v.push(Import {
                    spec: format!("{module}{sep}{}", at.text(m)),
                    line: l,
                    alias: alias(at, n),
                });
            }
            if v.is_empty() {
                // `from m import *` binds every public name of `m`: `*`.
                let mut c = node.walk();
                let star = node
                    .named_children(&mut c)
                    .any(|n| n.kind() == "wildcard_import");
                v.push(Import {
                    spec: module,
                    line: l,
                    alias: star.then(|| "*".to_string()),
                });
            }
            Some(v)
        }
        _ => None,
    }
}

/// `c` of `import a.b as c`.
fn alias(at: &At, n: Node) -> Option<String> {
    (n.kind() == "aliased_import")
        .then(|| n.child_by_field_name("alias"))
        .flatten()
        .map(|a| at.text(a).to_string())
}

/// `a.b` of `import a.b as c`.
fn imported_name(n: Node) -> Option<Node> {
    if n.kind() == "aliased_import" {
        n.child_by_field_name("name")
    } else {
        Some(n)
    }
}

/// The first paragraph of the docstring: the string that opens the body.
fn docstring(node: Node, src: &[u8]) -> Option<String> {
    let body = node.child_by_field_name("body")?;
    let first = body.named_child(0)?;
    if first.kind() != "expression_statement" {
        return None;
    }
    let s = first.named_child(0)?;
    if s.kind() != "string" {
        return None;
    }
    let raw = text(s, src);
    let raw = raw.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let raw = raw.trim_matches(|c| c == '"' || c == '\'');
    first_paragraph(raw)
}
