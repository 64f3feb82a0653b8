//! Go: functions, methods (in their receiver's type), types by what they
//! are, fields, interface methods, package-level constants and variables;
//! embedded types as bases; import specs.

use tree_sitter::Node;

use super::rules::{
    base_type_name, string_content, text, At, CallRule, CalleePath, Def, DefEdges, DefRule, Doc,
    Import, LangRules, Lead, RefRules, Step,
};

pub static RULES: LangRules = LangRules {
    defs: &[
        DefRule::scope("function_declaration", "function"),
        DefRule::leaf("method_elem", "method"),
        DefRule::leaf("field_declaration", "field"),
    ],
    def_fn: definition,
    def_edges: embedded_types,
    imports,
    calls: &[CallRule::last("call_expression", "function")],
    callee: CalleePath {
        names: &["identifier", "field_identifier", "type_identifier"],
        steps: &[
            ("selector_expression", Step::Field("field")),
            ("generic_type", Step::FirstNamed),
        ],
    },
    qualified_calls: true,
    refs: RefRules {
        identifiers: &[
            "identifier",
            "type_identifier",
            "field_identifier",
            "package_identifier",
        ],
        types: &["type_identifier"],
        fields: &["field_identifier"],
        ..RefRules::NONE
    },
    lead: Lead {
        wrappers: &["type_declaration"],
        comments: &["comment"],
        ..Lead::NONE
    },
    doc: Doc::CommentsAbove,
    ..LangRules::NONE
};

fn definition<'t>(at: &At<'t, '_>) -> Option<Def<'t>> {
    match at.kind {
        "method_declaration" => {
            let recv = at.field("receiver")?;
            let mut d = Def::scope("method", at.field("name")?);
            d.container = receiver_type(recv, at.src);
            Some(d)
        }
        "type_spec" | "type_alias" => {
            let k = match at.field("type").map(|t| t.kind()) {
                Some("struct_type") => "struct",
                Some("interface_type") => "interface",
                _ => "type",
            };
            Some(Def::class(k, at.field("name")?))
        }
        "const_spec" | "var_spec" => {
            if !at.at_top {
                return None;
            }
            let n = at.field("name")?;
            let k = if at.kind == "const_spec" {
                "constant"
            } else {
                "variable"
            };
            Some(Def::leaf(k, n))
        }
        _ => None,
    }
}

/// `func (s *Server) ...` → `Server`.
fn receiver_type(recv: Node, src: &[u8]) -> Option<String> {
    let mut cursor = recv.walk();
    for p in recv.named_children(&mut cursor) {
        if let Some(t) = p.child_by_field_name("type") {
            return Some(base_type_name(text(t, src)));
        }
    }
    None
}

/// Embedded types in structs and interfaces act as bases.
fn embedded_types(at: &At, e: &mut DefEdges) {
    if at.node.kind() != "type_spec" {
        return;
    }
    let Some(ty) = at.field("type") else {
        return;
    };
    let mut stack = vec![ty];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "field_declaration" if n.child_by_field_name("name").is_none() => {
                if let Some(t) = n.child_by_field_name("type") {
                    e.base("extends", t);
                }
            }
            "type_elem" => e.base("extends", n),
            "struct_type" | "interface_type" | "field_declaration_list" => {
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c));
            }
            _ => {}
        }
    }
}

fn imports(at: &At) -> Option<Vec<Import>> {
    match at.kind {
        "import_spec" => Some(vec![Import {
            spec: string_content(at.field("path")?, at.src),
            line: at.line(),
            // `import f "fmt"`; not `_` (no name) nor `.` (the package's names unqualified).
            alias: at
                .field("name")
                .filter(|n| n.kind() == "package_identifier")
                .map(|n| at.text(n).to_string()),
        }]),
        _ => None,
    }
}
