//! Java: classes, records, interfaces, enums, methods, constructors,
//! fields and enum constants; superclass and interfaces; imports.

use super::rules::{
    each_type, At, CallRule, CalleePath, Def, DefEdges, DefRule, Doc, Import, LangRules, Lead,
    RefRules, Step,
};

pub static RULES: LangRules = LangRules {
    defs: &[
        DefRule::class("class_declaration", "class"),
        DefRule::class("record_declaration", "class"),
        DefRule::class("interface_declaration", "interface"),
        DefRule::class("annotation_type_declaration", "interface"),
        DefRule::class("enum_declaration", "enum"),
        DefRule::scope("method_declaration", "method"),
        DefRule::scope("constructor_declaration", "constructor"),
        DefRule::leaf("enum_constant", "constant"),
    ],
    def_fn: field,
    def_edges: bases,
    imports,
    calls: &[
        CallRule::direct("method_invocation", "name"),
        CallRule::last("object_creation_expression", "type"),
    ],
    callee: CalleePath {
        names: &["identifier", "type_identifier"],
        steps: &[
            ("scoped_identifier", Step::Field("name")),
            ("scoped_type_identifier", Step::Field("name")),
            ("generic_type", Step::FirstNamed),
        ],
    },
    refs: RefRules {
        identifiers: &["identifier", "type_identifier"],
        types: &["type_identifier"],
        ..RefRules::NONE
    },
    // Annotations are inside the declaration (its `modifiers`).
    lead: Lead {
        comments: &["line_comment", "block_comment"],
        ..Lead::NONE
    },
    doc: Doc::CommentsAbove,
    ..LangRules::NONE
};

/// `int a = 1;`: a field named by its (first) declarator.
fn field<'t>(at: &At<'t, '_>) -> Option<Def<'t>> {
    match at.kind {
        "field_declaration" | "constant_declaration" => {
            let decl = at.field("declarator")?;
            Some(Def::leaf("field", decl.child_by_field_name("name")?))
        }
        _ => None,
    }
}

/// `extends` a superclass or (for interfaces) interfaces; `implements` interfaces.
fn bases(at: &At, e: &mut DefEdges) {
    let node = at.node;
    if let Some(s) = at.field("superclass") {
        if let Some(t) = s.named_child(0) {
            e.base("extends", t);
        }
    }
    if let Some(s) = at.field("interfaces") {
        each_type(s, &mut |t| e.base("implements", t));
    }
    let mut c = node.walk();
    for ch in node.named_children(&mut c) {
        if ch.kind() == "extends_interfaces" {
            each_type(ch, &mut |t| e.base("extends", t));
        }
    }
}

fn imports(at: &At) -> Option<Vec<Import>> {
    if at.kind != "import_declaration" {
        return None;
    }
    let node = at.node;
    let mut c = node.walk();
    let n = node
        .named_children(&mut c)
        .find(|n| matches!(n.kind(), "scoped_identifier" | "identifier"))?;
    let mut s = at.text(n).to_string();
    if at.text(node).contains(".*") {
        s.push_str(".*");
    }
    Some(vec![Import::plain(s, at.line())])
}
