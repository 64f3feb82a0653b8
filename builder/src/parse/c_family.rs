//! C and C++ (one set of rules: the C++ grammar extends the C one, and
//! kinds a grammar lacks never occur in it). Functions (methods when
//! qualified or in a class), structs, unions, enums, classes, typedefs,
//! macros, enumerators, namespaces and fields; C++ base classes; includes.

use tree_sitter::Node;

use super::rules::{
    text, At, CallRule, CalleePath, Def, DefEdges, DefRule, Doc, Import, LangRules, Lead, RefRules,
    Step,
};

pub static RULES: LangRules = LangRules {
    defs: &[
        DefRule::leaf("preproc_def", "macro"),
        DefRule::leaf("preproc_function_def", "macro"),
        DefRule::leaf("enumerator", "constant"),
        DefRule::scope("namespace_definition", "namespace"),
    ],
    def_fn: definition,
    def_edges: base_classes,
    imports,
    calls: &[CallRule::last("call_expression", "function")],
    callee: CalleePath {
        names: &["identifier", "field_identifier", "type_identifier"],
        steps: &[
            ("field_expression", Step::Field("field")),
            ("qualified_identifier", Step::Field("name")),
            ("template_function", Step::FieldOr("function", "name")),
        ],
    },
    refs: RefRules {
        identifiers: &[
            "identifier",
            "type_identifier",
            "field_identifier",
            "namespace_identifier",
        ],
        types: &["type_identifier"],
        fields: &["field_identifier"],
        ..RefRules::NONE
    },
    lead: Lead {
        wrappers: &["template_declaration"],
        comments: &["comment"],
        ..Lead::NONE
    },
    doc: Doc::CommentsAbove,
    ..LangRules::NONE
};

fn definition<'t>(at: &At<'t, '_>) -> Option<Def<'t>> {
    match at.kind {
        "function_definition" => {
            let (name, container) = declarator_name(at.field("declarator")?, at.src)?;
            let k = if container.is_some() || at.in_class {
                "method"
            } else {
                "function"
            };
            let mut d = Def::scope(k, name);
            d.container = container;
            Some(d)
        }
        "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier" => {
            at.field("body")?;
            let n = at.field("name")?;
            if n.kind() == "qualified_identifier" || n.kind() == "template_type" {
                return None;
            }
            let k = match at.kind {
                "struct_specifier" => "struct",
                "union_specifier" => "union",
                "enum_specifier" => "enum",
                _ => "class",
            };
            Some(Def::class(k, n))
        }
        "type_definition" => {
            let n = plain_declarator(at.field("declarator")?)?;
            Some(Def::class("type", n))
        }
        "field_declaration" => {
            // Members of struct/union/class bodies (not method prototypes).
            if at.up(0)?.kind() != "field_declaration_list" {
                return None;
            }
            let decl = at.field("declarator")?;
            if has_function_declarator(decl) {
                return None;
            }
            Some(Def::leaf("field", plain_declarator(decl)?))
        }
        _ => None,
    }
}

fn has_function_declarator(mut n: Node) -> bool {
    loop {
        if n.kind() == "function_declarator" {
            return true;
        }
        match n.child_by_field_name("declarator") {
            Some(d) => n = d,
            None => return false,
        }
    }
}

/// Name node of a non-function declarator (`*p`, `a[3]`, `(x)`).
fn plain_declarator(mut n: Node) -> Option<Node> {
    loop {
        match n.kind() {
            "identifier" | "field_identifier" | "type_identifier" | "primitive_type" => {
                return Some(n)
            }
            _ => n = n.child_by_field_name("declarator")?,
        }
    }
}

/// Name node and class/namespace qualifier of a function declarator.
fn declarator_name<'a>(mut n: Node<'a>, src: &[u8]) -> Option<(Node<'a>, Option<String>)> {
    loop {
        match n.kind() {
            "identifier" | "field_identifier" | "destructor_name" | "operator_name" => {
                return Some((n, None))
            }
            "qualified_identifier" => {
                let scope = n
                    .child_by_field_name("scope")
                    .map(|s| text(s, src).to_string());
                let inner = n.child_by_field_name("name")?;
                let (name, inner_scope) = declarator_name(inner, src)?;
                let container = match (scope, inner_scope) {
                    (Some(a), Some(b)) => Some(format!("{a}::{b}")),
                    (a, b) => a.or(b),
                };
                return Some((name, container.map(|c| c.replace("::", "."))));
            }
            "template_function" => n = n.child_by_field_name("name")?,
            _ => n = n.child_by_field_name("declarator")?,
        }
    }
}

/// C++ `class A : public B, C<T>`: extends edges.
fn base_classes(at: &At, e: &mut DefEdges) {
    let node = at.node;
    if !matches!(node.kind(), "class_specifier" | "struct_specifier") {
        return;
    }
    let mut c = node.walk();
    for ch in node.named_children(&mut c) {
        if ch.kind() == "base_class_clause" {
            let mut c2 = ch.walk();
            for b in ch.named_children(&mut c2) {
                if matches!(
                    b.kind(),
                    "type_identifier" | "qualified_identifier" | "template_type"
                ) {
                    e.base("extends", b);
                }
            }
        }
    }
}

fn imports(at: &At) -> Option<Vec<Import>> {
    match at.kind {
        "preproc_include" => Some(vec![Import::plain(
            at.text(at.field("path")?).to_string(),
            at.line(),
        )]),
        _ => None,
    }
}
