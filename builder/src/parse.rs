//! Extracts definitions, references and raw relations from one file's syntax
//! tree. One iterative walk per file (no recursion, so deeply nested
//! generated code cannot overflow the stack); per-language rules are plain
//! matches on node kinds.

use std::collections::HashSet;
use std::sync::Arc;

use tree_sitter::{Node, Parser, Tree};

use crate::ids::stable_id;
use crate::language::Lang;

/// A definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Symbol {
    pub id: i64,
    pub name: String,
    pub qualified_name: String,
    pub kind: &'static str,
    pub container: Option<String>,
    pub parent_id: Option<i64>,
    pub signature: String,
    pub doc: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    pub start_byte: u64,
    pub end_byte: u64,
    pub name_line: u32,
}

/// An identifier occurrence that is not a definition's name.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    pub name: String,
    pub line: u32,
    pub column: u32,
    pub start_byte: u64,
    pub ref_kind: &'static str,
    pub enclosing: Option<Arc<str>>,
}

/// A relation as written in the file, before cross-file resolution.
#[derive(Clone, Debug, PartialEq)]
pub struct RawEdge {
    pub kind: &'static str,
    pub src_symbol: Option<Arc<str>>,
    pub dst_name: String,
    pub line: u32,
}

/// Everything extracted from one file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    pub symbols: Vec<Symbol>,
    pub references: Vec<Reference>,
    pub edges: Vec<RawEdge>,
}

/// The static copy of a kind read back from a snapshot (symbol, reference or
/// edge kind, as `schemas` lists them; an unknown one is leaked once).
pub fn static_kind(s: &str) -> &'static str {
    use code_index_schemas::{EDGE_KINDS, REF_KINDS, SYMBOL_KINDS};
    SYMBOL_KINDS
        .iter()
        .chain(REF_KINDS)
        .chain(EDGE_KINDS)
        .find(|k| **k == s)
        .copied()
        .unwrap_or_else(|| Box::leak(s.to_string().into_boxed_str()))
}

/// Node kind names by kind id, per language: `Node::kind` measures and
/// validates a C string on every call, and the walk asks for every node.
fn kind_names(lang: Lang) -> &'static [&'static str] {
    static TABLES: std::sync::OnceLock<Vec<Vec<&'static str>>> = std::sync::OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        Lang::ALL
            .iter()
            .map(|l| match l.grammar() {
                Some(g) => (0..g.node_kind_count() as u16)
                    .map(|id| -> &'static str {
                        Box::leak(
                            g.node_kind_for_id(id)
                                .unwrap_or("")
                                .to_string()
                                .into_boxed_str(),
                        )
                    })
                    .collect(),
                None => Vec::new(),
            })
            .collect()
    });
    &tables[Lang::ALL.iter().position(|l| *l == lang).unwrap()]
}

thread_local! {
    static PARSERS: std::cell::RefCell<Vec<(Lang, Parser)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Parse `src` with the grammar of `lang` (parsers are reused per thread).
pub fn parse_tree(lang: Lang, src: &[u8]) -> Option<Tree> {
    let grammar = lang.grammar()?;
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let idx = match parsers.iter().position(|(l, _)| *l == lang) {
            Some(i) => i,
            None => {
                let mut p = Parser::new();
                p.set_language(&grammar).ok()?;
                parsers.push((lang, p));
                parsers.len() - 1
            }
        };
        let p = &mut parsers[idx].1;
        // A generous time budget per file: pathological inputs are chunked as text instead.
        p.reset();
        p.parse(src, None)
    })
}

struct Scope {
    depth: usize,
    qname: Arc<str>,
    symbol_id: Option<i64>,
    class_like: bool,
}

struct Def<'a> {
    kind: &'static str,
    name: Node<'a>,
    /// Overrides the scope-derived container (Go receivers, C++ `A::f`).
    container: Option<String>,
    opens_scope: bool,
    class_like: bool,
}

fn text<'a>(n: Node, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[n.start_byte()..n.end_byte()]).unwrap_or("")
}

fn line(n: Node) -> u32 {
    n.start_position().row as u32 + 1
}

/// Extract symbols, references and raw edges from a parsed file.
pub fn extract(lang: Lang, path: &str, src: &[u8], tree: &Tree) -> Parsed {
    let mut out = Parsed::default();
    let mut scopes: Vec<Scope> = Vec::new();
    let mut def_names: HashSet<usize> = HashSet::new();
    let mut callees: HashSet<usize> = HashSet::new();
    let mut import_end: usize = 0;
    let mut cursor = tree.walk();
    let mut depth = 0usize;
    // Ancestors of the current node (Node::parent is O(depth) in tree-sitter).
    let mut anc: Vec<Node> = Vec::new();
    let names = kind_names(lang);
    loop {
        let node = cursor.node();
        if node.start_byte() >= import_end {
            import_end = 0;
        }
        // Anonymous nodes (keywords, punctuation) define, import, call and name nothing.
        if node.is_named() {
            let kind = names.get(node.kind_id() as usize).copied().unwrap_or("");
            visit(
                lang,
                path,
                src,
                node,
                kind,
                &anc,
                depth,
                &mut scopes,
                &mut def_names,
                &mut callees,
                &mut import_end,
                &mut out,
            );
        }
        if cursor.goto_first_child() {
            anc.push(node);
            depth += 1;
            continue;
        }
        loop {
            while scopes.last().is_some_and(|s| s.depth >= depth) {
                scopes.pop();
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                fix_parents(&mut out.symbols);
                return out;
            }
            anc.pop();
            depth -= 1;
        }
    }
}

/// Link each symbol to its container's id when the container is a symbol of this file.
fn fix_parents(symbols: &mut [Symbol]) {
    let map: std::collections::HashMap<String, i64> = symbols
        .iter()
        .map(|s| (s.qualified_name.clone(), s.id))
        .collect();
    for s in symbols.iter_mut() {
        if s.parent_id.is_none() {
            if let Some(c) = &s.container {
                s.parent_id = map.get(c).copied();
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn visit(
    lang: Lang,
    path: &str,
    src: &[u8],
    node: Node,
    kind: &str,
    anc: &[Node],
    depth: usize,
    scopes: &mut Vec<Scope>,
    def_names: &mut HashSet<usize>,
    callees: &mut HashSet<usize>,
    import_end: &mut usize,
    out: &mut Parsed,
) {
    let enclosing = || scopes.last().map(|s| s.qname.clone());
    let parent = anc.last().copied();

    // Definitions.
    if let Some(def) = definition(lang, node, kind, src, scopes, anc) {
        let enclosing = enclosing();
        let name = text(def.name, src).to_string();
        if !name.is_empty() {
            def_names.insert(def.name.start_byte());
            let container = def
                .container
                .clone()
                .or_else(|| enclosing.as_deref().map(str::to_string));
            let qualified_name = match &container {
                Some(c) => format!("{c}.{name}"),
                None => name.clone(),
            };
            let id = stable_id(&[
                path.as_bytes(),
                def.kind.as_bytes(),
                qualified_name.as_bytes(),
                node.start_byte().to_string().as_bytes(),
            ]);
            let parent_id = if def.container.is_none() {
                scopes.last().and_then(|s| s.symbol_id)
            } else {
                None
            };
            out.edges.push(RawEdge {
                kind: "contains",
                src_symbol: container.as_deref().map(Arc::from),
                dst_name: qualified_name.clone(),
                line: line(def.name),
            });
            out.symbols.push(Symbol {
                id,
                name,
                qualified_name: qualified_name.clone(),
                kind: def.kind,
                container,
                parent_id,
                signature: signature(node, src),
                doc: doc_of(lang, node, src),
                start_line: line(node),
                end_line: node.end_position().row as u32 + 1,
                start_byte: node.start_byte() as u64,
                end_byte: node.end_byte() as u64,
                name_line: line(def.name),
            });
            inheritance(lang, node, src, &qualified_name, out);
            if lang == Lang::Rust
                && kind == "mod_item"
                && node.child_by_field_name("body").is_none()
            {
                out.edges.push(RawEdge {
                    kind: "imports",
                    src_symbol: enclosing.clone(),
                    dst_name: format!(
                        "mod {}",
                        qualified_name.rsplit('.').next().unwrap_or(&qualified_name)
                    ),
                    line: line(node),
                });
            }
            if def.opens_scope {
                scopes.push(Scope {
                    depth,
                    qname: Arc::from(qualified_name),
                    symbol_id: Some(id),
                    class_like: def.class_like,
                });
            }
        }
        return;
    }
    // Scopes that are not symbols themselves (Rust impl blocks).
    if lang == Lang::Rust && kind == "impl_item" {
        if let Some(ty) = node.child_by_field_name("type") {
            let tname = base_type_name(text(ty, src));
            if let Some(tr) = node.child_by_field_name("trait") {
                out.edges.push(RawEdge {
                    kind: "implements",
                    src_symbol: Some(Arc::from(tname.as_str())),
                    dst_name: text(tr, src).to_string(),
                    line: line(node),
                });
            }
            scopes.push(Scope {
                depth,
                qname: Arc::from(tname),
                symbol_id: None,
                class_like: true,
            });
        }
        return;
    }

    // Imports.
    if let Some(specs) = imports(lang, node, kind, src) {
        *import_end = node.end_byte();
        let enclosing = enclosing();
        for (spec, l) in specs {
            out.edges.push(RawEdge {
                kind: "imports",
                src_symbol: enclosing.clone(),
                dst_name: spec,
                line: l,
            });
        }
        return;
    }

    // Calls.
    if let Some(callee) = call_target(lang, node, kind) {
        let name = text(callee, src);
        if !name.is_empty() {
            callees.insert(callee.start_byte());
            out.edges.push(RawEdge {
                kind: "calls",
                src_symbol: enclosing(),
                dst_name: name.to_string(),
                line: line(callee),
            });
        }
        return;
    }

    // References: identifier leaves.
    if is_identifier(lang, kind) && node.child_count() == 0 {
        let start = node.start_byte();
        if def_names.contains(&start) {
            return;
        }
        let name = text(node, src);
        if name.is_empty() || (lang == Lang::Python && (name == "self" || name == "cls")) {
            return;
        }
        let ref_kind = if callees.contains(&start) {
            "call"
        } else if *import_end > start {
            "import"
        } else if kind == "type_identifier"
            || (lang == Lang::Python && parent.is_some_and(|p| p.kind() == "type"))
        {
            "type"
        } else if kind == "field_identifier"
            || kind == "property_identifier"
            || (lang == Lang::Python
                && parent.is_some_and(|p| {
                    p.kind() == "attribute" && p.child_by_field_name("attribute") == Some(node)
                }))
        {
            "field"
        } else {
            "identifier"
        };
        out.references.push(Reference {
            name: name.to_string(),
            line: line(node),
            column: node.start_position().column as u32 + 1,
            start_byte: start as u64,
            ref_kind,
            enclosing: enclosing(),
        });
    }
}

fn is_identifier(lang: Lang, kind: &str) -> bool {
    match kind {
        "identifier" | "type_identifier" | "field_identifier" => true,
        "property_identifier" | "shorthand_property_identifier" | "private_property_identifier" => {
            lang.is_js_like()
        }
        "package_identifier" => lang == Lang::Go,
        "namespace_identifier" => lang == Lang::Cpp,
        _ => false,
    }
}

fn def<'a>(kind: &'static str, name: Node<'a>, scope: bool, class_like: bool) -> Def<'a> {
    Def {
        kind,
        name,
        container: None,
        opens_scope: scope,
        class_like,
    }
}

fn in_class(scopes: &[Scope]) -> bool {
    scopes.last().is_some_and(|s| s.class_like)
}

/// Is `node` a definition, and of what?
fn definition<'a>(
    lang: Lang,
    node: Node<'a>,
    kind: &str,
    src: &[u8],
    scopes: &[Scope],
    anc: &[Node<'a>],
) -> Option<Def<'a>> {
    // The i-th ancestor (0 = parent).
    let up = |i: usize| -> Option<Node<'a>> { anc.len().checked_sub(i + 1).map(|j| anc[j]) };
    let name = || node.child_by_field_name("name");
    match lang {
        Lang::Python => match kind {
            "class_definition" => Some(def("class", name()?, true, true)),
            "function_definition" => {
                let k = if in_class(scopes) {
                    "method"
                } else {
                    "function"
                };
                Some(def(k, name()?, true, false))
            }
            "assignment" => {
                let stmt = up(0)?;
                if stmt.kind() != "expression_statement" {
                    return None;
                }
                let holder = up(1)?;
                let at_module = holder.kind() == "module";
                let at_class = holder.kind() == "block"
                    && up(2).is_some_and(|p| p.kind() == "class_definition");
                if !(at_module || at_class) {
                    return None;
                }
                let left = node.child_by_field_name("left")?;
                if left.kind() != "identifier" {
                    return None;
                }
                let n = text(left, src);
                let k = if at_class {
                    "field"
                } else if is_constant_name(n) {
                    "constant"
                } else {
                    "variable"
                };
                Some(def(k, left, false, false))
            }
            _ => None,
        },
        Lang::Go => match kind {
            "function_declaration" => Some(def("function", name()?, true, false)),
            "method_declaration" => {
                let recv = node.child_by_field_name("receiver")?;
                let mut d = def("method", name()?, true, false);
                d.container = go_receiver_type(recv, src);
                Some(d)
            }
            "type_spec" | "type_alias" => {
                let ty = node.child_by_field_name("type");
                let k = match ty.map(|t| t.kind()) {
                    Some("struct_type") => "struct",
                    Some("interface_type") => "interface",
                    _ => "type",
                };
                Some(def(k, name()?, true, true))
            }
            "method_elem" | "method_spec" => Some(def("method", name()?, false, false)),
            "field_declaration" => {
                let n = node.child_by_field_name("name")?;
                Some(def("field", n, false, false))
            }
            "const_spec" | "var_spec" => {
                if !scopes.is_empty() {
                    return None;
                }
                let n = node.child_by_field_name("name")?;
                Some(def(
                    if kind == "const_spec" {
                        "constant"
                    } else {
                        "variable"
                    },
                    n,
                    false,
                    false,
                ))
            }
            _ => None,
        },
        Lang::Rust => match kind {
            "function_item" | "function_signature_item" => {
                let k = if in_class(scopes) {
                    "method"
                } else {
                    "function"
                };
                Some(def(k, name()?, true, false))
            }
            "struct_item" => Some(def("struct", name()?, true, true)),
            "enum_item" => Some(def("enum", name()?, true, true)),
            "union_item" => Some(def("union", name()?, true, true)),
            "trait_item" => Some(def("trait", name()?, true, true)),
            "type_item" => Some(def("type", name()?, false, false)),
            "const_item" | "static_item" => Some(def("constant", name()?, false, false)),
            "mod_item" => Some(def("module", name()?, true, false)),
            "macro_definition" => Some(def("macro", name()?, false, false)),
            "field_declaration" => Some(def("field", name()?, false, false)),
            "enum_variant" => Some(def("constant", name()?, false, false)),
            _ => None,
        },
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => match kind {
            "function_declaration" | "generator_function_declaration" | "function_signature" => {
                Some(def("function", name()?, true, false))
            }
            "class_declaration" | "abstract_class_declaration" | "class" => {
                Some(def("class", name()?, true, true))
            }
            "method_definition" | "method_signature" | "abstract_method_signature" => {
                let n = name()?;
                let k = if text(n, src) == "constructor" {
                    "constructor"
                } else {
                    "method"
                };
                Some(def(k, n, true, false))
            }
            "interface_declaration" => Some(def("interface", name()?, true, true)),
            "type_alias_declaration" => Some(def("type", name()?, false, false)),
            "enum_declaration" => Some(def("enum", name()?, true, true)),
            "internal_module" | "module" => {
                let n = name()?;
                Some(def("namespace", n, true, false))
            }
            "public_field_definition" | "field_definition" | "property_signature" => {
                let n = node
                    .child_by_field_name("name")
                    .or_else(|| node.child_by_field_name("property"))?;
                let is_fn = node.child_by_field_name("value").is_some_and(|v| {
                    matches!(
                        v.kind(),
                        "arrow_function" | "function_expression" | "function"
                    )
                });
                Some(def(
                    if is_fn { "method" } else { "property" },
                    n,
                    is_fn,
                    false,
                ))
            }
            "variable_declarator" => {
                let n = name()?;
                if n.kind() != "identifier" {
                    return None;
                }
                let is_fn = node.child_by_field_name("value").is_some_and(|v| {
                    matches!(
                        v.kind(),
                        "arrow_function"
                            | "function_expression"
                            | "function"
                            | "generator_function"
                    )
                });
                if is_fn {
                    return Some(def("function", n, true, false));
                }
                // Module-level bindings only.
                let decl = up(0)?;
                let top = up(1)?;
                let at_top = top.kind() == "program"
                    || (top.kind() == "export_statement"
                        && up(2).is_some_and(|p| p.kind() == "program"));
                if !at_top || !scopes.is_empty() {
                    return None;
                }
                let is_const = decl.child(0).is_some_and(|c| text(c, src) == "const");
                Some(def(
                    if is_const { "constant" } else { "variable" },
                    n,
                    false,
                    false,
                ))
            }
            _ => None,
        },
        Lang::Java => match kind {
            "class_declaration" | "record_declaration" => Some(def("class", name()?, true, true)),
            "interface_declaration" | "annotation_type_declaration" => {
                Some(def("interface", name()?, true, true))
            }
            "enum_declaration" => Some(def("enum", name()?, true, true)),
            "method_declaration" => Some(def("method", name()?, true, false)),
            "constructor_declaration" => Some(def("constructor", name()?, true, false)),
            "field_declaration" | "constant_declaration" => {
                let decl = node.child_by_field_name("declarator")?;
                Some(def(
                    "field",
                    decl.child_by_field_name("name")?,
                    false,
                    false,
                ))
            }
            "enum_constant" => Some(def("constant", name()?, false, false)),
            _ => None,
        },
        Lang::C | Lang::Cpp => c_definition(lang, node, kind, src, scopes, up(0)),
        Lang::Markdown | Lang::Text => None,
    }
}

fn is_constant_name(n: &str) -> bool {
    n.len() > 1
        && n.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && n.chars().any(|c| c.is_ascii_uppercase())
}

fn c_definition<'a>(
    lang: Lang,
    node: Node<'a>,
    kind: &str,
    src: &[u8],
    scopes: &[Scope],
    parent: Option<Node<'a>>,
) -> Option<Def<'a>> {
    match kind {
        "function_definition" => {
            let decl = node.child_by_field_name("declarator")?;
            let (name, container) = c_declarator_name(decl, src)?;
            let k = if container.is_some() || in_class(scopes) {
                "method"
            } else {
                "function"
            };
            let mut d = def(k, name, true, false);
            d.container = container;
            Some(d)
        }
        "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier" => {
            node.child_by_field_name("body")?;
            let n = node.child_by_field_name("name")?;
            if n.kind() == "qualified_identifier" || n.kind() == "template_type" {
                return None;
            }
            let k = match kind {
                "struct_specifier" => "struct",
                "union_specifier" => "union",
                "enum_specifier" => "enum",
                _ => "class",
            };
            Some(def(k, n, true, true))
        }
        "type_definition" => {
            let decl = node.child_by_field_name("declarator")?;
            let n = c_plain_declarator(decl)?;
            Some(def("type", n, true, true))
        }
        "preproc_def" | "preproc_function_def" => Some(def(
            "macro",
            node.child_by_field_name("name")?,
            false,
            false,
        )),
        "enumerator" => Some(def(
            "constant",
            node.child_by_field_name("name")?,
            false,
            false,
        )),
        "namespace_definition" if lang == Lang::Cpp => {
            let n = node.child_by_field_name("name")?;
            Some(def("namespace", n, true, false))
        }
        "field_declaration" => {
            // Members of struct/union/class bodies (not method prototypes).
            if parent?.kind() != "field_declaration_list" {
                return None;
            }
            let decl = node.child_by_field_name("declarator")?;
            if has_function_declarator(decl) {
                return None;
            }
            let n = c_plain_declarator(decl)?;
            Some(def("field", n, false, false))
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
fn c_plain_declarator(mut n: Node) -> Option<Node> {
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
fn c_declarator_name<'a>(mut n: Node<'a>, src: &[u8]) -> Option<(Node<'a>, Option<String>)> {
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
                let (name, inner_scope) = c_declarator_name(inner, src)?;
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

fn go_receiver_type(recv: Node, src: &[u8]) -> Option<String> {
    let mut cursor = recv.walk();
    for p in recv.named_children(&mut cursor) {
        if let Some(t) = p.child_by_field_name("type") {
            return Some(base_type_name(text(t, src)));
        }
    }
    None
}

/// `*pkg.Type[T]` → `Type`; `Vec<T>` → `Vec`; `&'a mut Foo` → `Foo`.
fn base_type_name(t: &str) -> String {
    let t = t.trim_start_matches(['*', '&', '(', ' ']);
    let t = t.trim_start_matches("mut ");
    let t = t.split(['<', '[', '(', ')']).next().unwrap_or(t);
    let t = t.rsplit("::").next().unwrap_or(t);
    let t = t.rsplit('.').next().unwrap_or(t);
    t.trim().to_string()
}

/// Header text of a definition: up to its body, whitespace collapsed, capped.
fn signature(node: Node, src: &[u8]) -> String {
    let end = node
        .child_by_field_name("body")
        .map(|b| b.start_byte())
        .unwrap_or_else(|| node.end_byte().min(node.start_byte() + 400));
    let raw = String::from_utf8_lossy(&src[node.start_byte()..end]);
    let first = if node.child_by_field_name("body").is_none() {
        raw.lines().next().unwrap_or("").to_string()
    } else {
        raw.to_string()
    };
    let mut s: String = first.split_whitespace().collect::<Vec<_>>().join(" ");
    while s.ends_with(':') || s.ends_with('{') || s.ends_with(' ') {
        s.pop();
    }
    truncate_chars(&s, 300)
}

fn truncate_chars(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// First paragraph of the docstring or the doc comment above.
fn doc_of(lang: Lang, node: Node, src: &[u8]) -> Option<String> {
    if lang == Lang::Python {
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
        return first_paragraph(raw);
    }
    // The comment block ending on the line above the definition (or its wrapper).
    let mut anchor = node;
    while let Some(p) = anchor.parent() {
        if matches!(
            p.kind(),
            "export_statement" | "template_declaration" | "decorated_definition" | "attribute_item"
        ) || (p.kind() == "type_declaration" && lang == Lang::Go)
        {
            anchor = p;
        } else {
            break;
        }
    }
    let mut lines: Vec<String> = Vec::new();
    let mut expect_row = anchor.start_position().row;
    let mut prev = anchor.prev_sibling();
    while let Some(c) = prev {
        if !(c.kind().contains("comment")) || c.end_position().row + 1 < expect_row {
            break;
        }
        let t = text(c, src);
        let mut block: Vec<String> = t.lines().map(clean_comment_line).collect();
        block.extend(lines);
        lines = block;
        expect_row = c.start_position().row;
        prev = c.prev_sibling();
    }
    if lines.is_empty() {
        return None;
    }
    first_paragraph(&lines.join("\n"))
}

fn clean_comment_line(l: &str) -> String {
    let l = l.trim();
    let l = l
        .trim_start_matches("/**")
        .trim_start_matches("/*!")
        .trim_start_matches("/*")
        .trim_start_matches("///")
        .trim_start_matches("//!")
        .trim_start_matches("//");
    let l = l.trim_end_matches("*/");
    let l = l.trim();
    let l = l.strip_prefix('*').unwrap_or(l);
    l.trim().to_string()
}

fn first_paragraph(raw: &str) -> Option<String> {
    let mut para = Vec::new();
    for l in raw.lines() {
        let t = l.trim();
        if t.is_empty() {
            if para.is_empty() {
                continue;
            }
            break;
        }
        para.push(t);
    }
    let s = para.join(" ");
    if s.is_empty() {
        None
    } else {
        Some(truncate_chars(&s, 300))
    }
}

/// extends/implements edges of a class-like definition.
fn inheritance(lang: Lang, node: Node, src: &[u8], qname: &str, out: &mut Parsed) {
    let src_symbol: Arc<str> = Arc::from(qname);
    let mut push = |kind: &'static str, n: Node| {
        let name = text(n, src).trim().to_string();
        if !name.is_empty() {
            out.edges.push(RawEdge {
                kind,
                src_symbol: Some(src_symbol.clone()),
                dst_name: name,
                line: line(n),
            });
        }
    };
    match (lang, node.kind()) {
        (Lang::Python, "class_definition") => {
            if let Some(sup) = node.child_by_field_name("superclasses") {
                let mut c = sup.walk();
                for a in sup.named_children(&mut c) {
                    if matches!(a.kind(), "identifier" | "attribute") {
                        push("extends", a);
                    }
                }
            }
        }
        (Lang::Java, _) => {
            if let Some(s) = node.child_by_field_name("superclass") {
                if let Some(t) = s.named_child(0) {
                    push("extends", t);
                }
            }
            for field in ["interfaces"] {
                if let Some(s) = node.child_by_field_name(field) {
                    each_type(s, &mut |t| push("implements", t));
                }
            }
            let mut c = node.walk();
            for ch in node.named_children(&mut c) {
                if ch.kind() == "extends_interfaces" {
                    each_type(ch, &mut |t| push("extends", t));
                }
            }
        }
        (
            l,
            "class_declaration" | "abstract_class_declaration" | "class" | "interface_declaration",
        ) if l.is_js_like() => {
            let mut c = node.walk();
            for ch in node.named_children(&mut c) {
                match ch.kind() {
                    "class_heritage" => {
                        let mut c2 = ch.walk();
                        for h in ch.named_children(&mut c2) {
                            match h.kind() {
                                "extends_clause" => {
                                    if let Some(v) = h.child_by_field_name("value") {
                                        push("extends", v);
                                    }
                                }
                                "implements_clause" => each_type(h, &mut |t| push("implements", t)),
                                _ => push("extends", h),
                            }
                        }
                    }
                    "extends_type_clause" => each_type(ch, &mut |t| push("extends", t)),
                    _ => {}
                }
            }
        }
        (Lang::Cpp, "class_specifier" | "struct_specifier") => {
            let mut c = node.walk();
            for ch in node.named_children(&mut c) {
                if ch.kind() == "base_class_clause" {
                    let mut c2 = ch.walk();
                    for b in ch.named_children(&mut c2) {
                        if matches!(
                            b.kind(),
                            "type_identifier" | "qualified_identifier" | "template_type"
                        ) {
                            push("extends", b);
                        }
                    }
                }
            }
        }
        (Lang::Go, "type_spec") => {
            // Embedded types in structs and interfaces act as bases.
            if let Some(ty) = node.child_by_field_name("type") {
                let mut stack = vec![ty];
                while let Some(n) = stack.pop() {
                    match n.kind() {
                        "field_declaration" if n.child_by_field_name("name").is_none() => {
                            if let Some(t) = n.child_by_field_name("type") {
                                push("extends", t);
                            }
                        }
                        "type_elem" => push("extends", n),
                        "struct_type" | "interface_type" | "field_declaration_list" => {
                            let mut c = n.walk();
                            stack.extend(n.named_children(&mut c));
                        }
                        _ => {}
                    }
                }
            }
        }
        (Lang::Rust, "trait_item") => {
            if let Some(b) = node.child_by_field_name("bounds") {
                each_type(b, &mut |t| push("extends", t));
            }
        }
        _ => {}
    }
}

fn each_type(n: Node, f: &mut dyn FnMut(Node)) {
    let mut c = n.walk();
    for ch in n.named_children(&mut c) {
        match ch.kind() {
            "type_identifier"
            | "identifier"
            | "scoped_type_identifier"
            | "generic_type"
            | "member_expression"
            | "nested_type_identifier" => f(ch),
            "type_list" | "extends_type_clause" => each_type(ch, f),
            _ => {}
        }
    }
}

fn string_content(n: Node, src: &[u8]) -> String {
    text(n, src)
        .trim_matches(|c| c == '"' || c == '\'' || c == '`' || c == '<' || c == '>')
        .to_string()
}

/// Import specifiers written by `node`, if it is an import.
fn imports(lang: Lang, node: Node, kind: &str, src: &[u8]) -> Option<Vec<(String, u32)>> {
    let l = line(node);
    match lang {
        Lang::Python => match kind {
            "import_statement" => {
                let mut v = Vec::new();
                let mut c = node.walk();
                for n in node.children_by_field_name("name", &mut c) {
                    let m = if n.kind() == "aliased_import" {
                        n.child_by_field_name("name")?
                    } else {
                        n
                    };
                    v.push((text(m, src).to_string(), l));
                }
                Some(v)
            }
            "import_from_statement" => {
                let module = text(node.child_by_field_name("module_name")?, src).to_string();
                let mut v = Vec::new();
                let mut c = node.walk();
                for n in node.children_by_field_name("name", &mut c) {
                    let m = if n.kind() == "aliased_import" {
                        n.child_by_field_name("name")?
                    } else {
                        n
                    };
                    // "from a import b": b may be a module or a name in a.
                    let sep = if module.ends_with('.') { "" } else { "." };
                    v.push((format!("{module}{sep}{}", text(m, src)), l));
                }
                if v.is_empty() {
                    v.push((module, l));
                }
                Some(v)
            }
            _ => None,
        },
        Lang::Go => match kind {
            "import_spec" => Some(vec![(
                string_content(node.child_by_field_name("path")?, src),
                l,
            )]),
            _ => None,
        },
        Lang::Rust => match kind {
            "use_declaration" => {
                let arg = node.child_by_field_name("argument")?;
                let mut v = Vec::new();
                rust_use_paths(arg, src, "", &mut v);
                Some(v.into_iter().map(|p| (p, l)).collect())
            }
            "mod_item" if node.child_by_field_name("body").is_none() => Some(vec![(
                format!("mod {}", text(node.child_by_field_name("name")?, src)),
                l,
            )]),
            _ => None,
        },
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => match kind {
            "import_statement" | "export_statement" => {
                let s = node.child_by_field_name("source")?;
                Some(vec![(string_content(s, src), l)])
            }
            "call_expression" => {
                let f = node.child_by_field_name("function")?;
                if text(f, src) != "require" && f.kind() != "import" {
                    return None;
                }
                let args = node.child_by_field_name("arguments")?;
                let a = args.named_child(0)?;
                if a.kind() != "string" {
                    return None;
                }
                Some(vec![(string_content(a, src), l)])
            }
            _ => None,
        },
        Lang::Java => match kind {
            "import_declaration" => {
                let mut c = node.walk();
                let n = node
                    .named_children(&mut c)
                    .find(|n| matches!(n.kind(), "scoped_identifier" | "identifier"))?;
                let mut s = text(n, src).to_string();
                if text(node, src).contains(".*") {
                    s.push_str(".*");
                }
                Some(vec![(s, l)])
            }
            _ => None,
        },
        Lang::C | Lang::Cpp => match kind {
            "preproc_include" => {
                let p = node.child_by_field_name("path")?;
                let s = text(p, src);
                Some(vec![(s.to_string(), l)])
            }
            _ => None,
        },
        _ => None,
    }
}

fn rust_use_paths(n: Node, src: &[u8], prefix: &str, out: &mut Vec<String>) {
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
                rust_use_paths(list, src, &np, out);
            }
        }
        "use_list" => {
            let mut c = n.walk();
            for ch in n.named_children(&mut c) {
                rust_use_paths(ch, src, prefix, out);
            }
        }
        "use_as_clause" => {
            if let Some(p) = n.child_by_field_name("path") {
                out.push(join(prefix, text(p, src)));
            }
        }
        "use_wildcard" => {
            let t = text(n, src).trim_end_matches("::*").trim_end_matches('*');
            out.push(join(prefix, t));
        }
        _ => out.push(join(prefix, text(n, src))),
    }
}

/// The node naming the called function, if `node` is a call.
fn call_target<'a>(lang: Lang, node: Node<'a>, kind: &str) -> Option<Node<'a>> {
    let callee = match (lang, kind) {
        (Lang::Python, "call") => node.child_by_field_name("function")?,
        (Lang::Java, "method_invocation") => return node.child_by_field_name("name"),
        (Lang::Java, "object_creation_expression") => node.child_by_field_name("type")?,
        (l, "new_expression") if l.is_js_like() => node.child_by_field_name("constructor")?,
        (Lang::Rust, "macro_invocation") => node.child_by_field_name("macro")?,
        (_, "call_expression") => node.child_by_field_name("function")?,
        _ => return None,
    };
    last_name(callee)
}

/// The rightmost name of a callee expression (`a.b.c` → `c`, `x::y` → `y`).
fn last_name(mut n: Node) -> Option<Node> {
    for _ in 0..8 {
        match n.kind() {
            "identifier"
            | "field_identifier"
            | "property_identifier"
            | "type_identifier"
            | "private_property_identifier" => return Some(n),
            "attribute" => n = n.child_by_field_name("attribute")?,
            "member_expression" => n = n.child_by_field_name("property")?,
            "selector_expression" | "field_expression" => n = n.child_by_field_name("field")?,
            "scoped_identifier" | "qualified_identifier" | "scoped_type_identifier" => {
                n = n.child_by_field_name("name")?
            }
            "generic_function" | "template_function" => {
                n = n
                    .child_by_field_name("function")
                    .or_else(|| n.child_by_field_name("name"))?
            }
            "generic_type" => n = n.named_child(0)?,
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lang: Lang, src: &str) -> Parsed {
        let tree = parse_tree(lang, src.as_bytes()).unwrap();
        extract(lang, "x", src.as_bytes(), &tree)
    }

    fn names(p: &Parsed) -> Vec<(String, String, u32)> {
        p.symbols
            .iter()
            .map(|s| (s.qualified_name.clone(), s.kind.to_string(), s.name_line))
            .collect()
    }

    #[test]
    fn python_classes_methods_calls_imports() {
        let p = run(
            Lang::Python,
            "import os.path\nfrom .models import Model\n\nX_MAX = 3\n\nclass A(Model):\n    \"\"\"Doc of A.\n\n    more\"\"\"\n    f = 1\n    @property\n    def m(self, x):\n        return helper(x).strip()\n\ndef helper(y):\n    def inner():\n        pass\n    return y\n",
        );
        let n = names(&p);
        assert!(n.contains(&("A".into(), "class".into(), 6)));
        assert!(n.contains(&("A.m".into(), "method".into(), 12)));
        assert!(n.contains(&("A.f".into(), "field".into(), 10)));
        assert!(n.contains(&("X_MAX".into(), "constant".into(), 4)));
        assert!(n.contains(&("helper.inner".into(), "function".into(), 16)));
        let a = p.symbols.iter().find(|s| s.name == "A").unwrap();
        assert_eq!(a.doc.as_deref(), Some("Doc of A."));
        assert_eq!(a.signature, "class A(Model)");
        let m = p.symbols.iter().find(|s| s.name == "m").unwrap();
        assert_eq!(m.parent_id, Some(a.id));
        let kinds: Vec<_> = p
            .edges
            .iter()
            .map(|e| (e.kind, e.dst_name.as_str()))
            .collect();
        assert!(kinds.contains(&("imports", "os.path")));
        assert!(kinds.contains(&("imports", ".models.Model")));
        assert!(kinds.contains(&("extends", "Model")));
        assert!(kinds.contains(&("calls", "helper")));
        assert!(kinds.contains(&("calls", "strip")));
        let call = p.references.iter().find(|r| r.name == "helper").unwrap();
        assert_eq!(call.ref_kind, "call");
        assert_eq!(call.enclosing.as_deref(), Some("A.m"));
        assert!(!p.references.iter().any(|r| r.name == "self"));
    }

    #[test]
    fn go_methods_structs_interfaces() {
        let p = run(
            Lang::Go,
            "package p\n\nimport (\n\t\"fmt\"\n\tnet \"net/http\"\n)\n\n// Server serves.\ntype Server struct {\n\tAddr string\n\tfmt.Stringer\n}\n\ntype Handler interface {\n\tServeHTTP(w int)\n}\n\nfunc (s *Server) Serve() error { return fmt.Errorf(\"x\") }\n\nfunc New() *Server { return &Server{} }\n",
        );
        let n = names(&p);
        assert!(n.contains(&("Server".into(), "struct".into(), 9)));
        assert!(n.contains(&("Server.Addr".into(), "field".into(), 10)));
        assert!(n.contains(&("Handler".into(), "interface".into(), 14)));
        assert!(n.contains(&("Handler.ServeHTTP".into(), "method".into(), 15)));
        assert!(n.contains(&("Server.Serve".into(), "method".into(), 18)));
        assert!(n.contains(&("New".into(), "function".into(), 20)));
        let s = p.symbols.iter().find(|s| s.name == "Server").unwrap();
        assert_eq!(s.doc.as_deref(), Some("Server serves."));
        let serve = p.symbols.iter().find(|s| s.name == "Serve").unwrap();
        assert_eq!(serve.parent_id, Some(s.id));
        let e: Vec<_> = p
            .edges
            .iter()
            .map(|e| (e.kind, e.dst_name.as_str()))
            .collect();
        assert!(e.contains(&("imports", "net/http")));
        assert!(e.contains(&("calls", "Errorf")));
        assert!(e.contains(&("extends", "fmt.Stringer")));
    }

    #[test]
    fn rust_impl_trait_use() {
        let p = run(
            Lang::Rust,
            "use std::collections::{HashMap, hash_map::Entry};\nmod inner;\n/// A thing.\npub struct S { a: u32 }\nimpl Display for S {\n    fn fmt(&self) -> u32 { helper(1) }\n}\nmacro_rules! m { () => {} }\n",
        );
        let n = names(&p);
        assert!(n.contains(&("S".into(), "struct".into(), 4)));
        assert!(n.contains(&("S.a".into(), "field".into(), 4)));
        assert!(n.contains(&("S.fmt".into(), "method".into(), 6)));
        assert!(n.contains(&("m".into(), "macro".into(), 8)));
        let e: Vec<_> = p
            .edges
            .iter()
            .map(|e| (e.kind, e.dst_name.as_str()))
            .collect();
        assert!(e.contains(&("imports", "std::collections::HashMap")));
        assert!(e.contains(&("imports", "std::collections::hash_map::Entry")));
        assert!(e.contains(&("imports", "mod inner")));
        assert!(e.contains(&("implements", "Display")));
        assert_eq!(
            p.symbols
                .iter()
                .find(|s| s.name == "S")
                .unwrap()
                .doc
                .as_deref(),
            Some("A thing.")
        );
    }

    #[test]
    fn ts_classes_interfaces_imports() {
        let p = run(
            Lang::TypeScript,
            "import { a } from './a';\nexport interface I { x: number; m(): void }\nexport class C extends B implements I {\n  x = 1;\n  m() { return a(); }\n}\nexport const f = () => 1;\nconst K = 2;\n",
        );
        let n = names(&p);
        assert!(n.contains(&("I".into(), "interface".into(), 2)));
        assert!(n.contains(&("C".into(), "class".into(), 3)));
        assert!(n.contains(&("C.m".into(), "method".into(), 5)));
        assert!(n.contains(&("f".into(), "function".into(), 7)));
        assert!(n.contains(&("K".into(), "constant".into(), 8)));
        let e: Vec<_> = p
            .edges
            .iter()
            .map(|e| (e.kind, e.dst_name.as_str()))
            .collect();
        assert!(e.contains(&("imports", "./a")));
        assert!(e.contains(&("extends", "B")));
        assert!(e.contains(&("implements", "I")));
    }

    #[test]
    fn c_and_cpp_declarators() {
        let p = run(
            Lang::C,
            "#include <linux/list.h>\n#define MAX 3\nstruct s { int a; char *b; };\ntypedef struct { int q; } t_t;\nstatic int *f(int x) { return g(x); }\n",
        );
        let n = names(&p);
        assert!(n.contains(&("MAX".into(), "macro".into(), 2)));
        assert!(n.contains(&("s".into(), "struct".into(), 3)));
        assert!(n.contains(&("s.b".into(), "field".into(), 3)));
        assert!(n.contains(&("t_t".into(), "type".into(), 4)));
        assert!(n.contains(&("f".into(), "function".into(), 5)));
        let e: Vec<_> = p
            .edges
            .iter()
            .map(|e| (e.kind, e.dst_name.as_str()))
            .collect();
        assert!(e.contains(&("imports", "<linux/list.h>")));
        assert!(e.contains(&("calls", "g")));
        let p = run(
            Lang::Cpp,
            "namespace ns { class A : public B { int v; }; }\nvoid ns::A::go() {}\n",
        );
        let n = names(&p);
        assert!(n.contains(&("ns.A".into(), "class".into(), 1)));
        assert!(n.contains(&("ns.A.go".into(), "method".into(), 2)));
    }

    #[test]
    fn java_classes() {
        let p = run(
            Lang::Java,
            "import java.util.List;\npublic class A extends B implements C {\n  private int f;\n  public A() {}\n  void m() { List.of(); }\n}\n",
        );
        let n = names(&p);
        assert!(n.contains(&("A".into(), "class".into(), 2)));
        assert!(n.contains(&("A.f".into(), "field".into(), 3)));
        assert!(n.contains(&("A.A".into(), "constructor".into(), 4)));
        assert!(n.contains(&("A.m".into(), "method".into(), 5)));
        let e: Vec<_> = p
            .edges
            .iter()
            .map(|e| (e.kind, e.dst_name.as_str()))
            .collect();
        assert!(e.contains(&("imports", "java.util.List")));
        assert!(e.contains(&("extends", "B")));
        assert!(e.contains(&("implements", "C")));
    }
}
