//! Extracts definitions, references and raw relations from one file's syntax
//! tree. One iterative walk per file (no recursion, so deeply nested
//! generated code cannot overflow the stack), the same for every language:
//! what a language's node kinds mean is one [`LangRules`] value in its own
//! file (`python.rs`, `rust.rs`, ...), and [`rules`] is the one place that
//! picks it. Adding a language is a rules file and an arm there (besides
//! its `Lang` and grammar in `language.rs`).

mod c_family;
mod go;
mod java;
mod js_family;
mod python;
mod rules;
mod rust;
#[cfg(test)]
mod tests;
mod ts_repair;

// Hot per-node sets of small keys: foldhash, not SipHash.
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::sync::Arc;

use tree_sitter::{Node, Parser, Tree};

use crate::ids::stable_id;
use crate::language::Lang;
pub(crate) use rules::LangRules;
use rules::{line, text, At, AttrValue, Def, DefEdges, Doc, Import, Lead};

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
    /// Where the definition's chunk starts: the first of its leading doc
    /// comments, attributes, decorators and wrappers (`export`, `template`)
    /// per its language's [`Lead`]; `start_byte` when none. Not a column:
    /// the symbols table keeps the definition's own span.
    pub lead_byte: u64,
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
    /// A call through a local name (`x.m()`): the type its binding names
    /// ([`rules::BindingsFn`]); `edges.receiver_type`.
    pub recv_type: Option<String>,
    /// An import that renames: the name it binds (`np` of `import numpy as
    /// np`); `edges.alias`.
    pub alias: Option<String>,
}

/// Everything extracted from one file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    pub symbols: Vec<Symbol>,
    pub references: Vec<Reference>,
    pub edges: Vec<RawEdge>,
}

/// The rules of a language: the only `match` on the language in parsing.
pub(crate) fn rules(lang: Lang) -> &'static LangRules {
    match lang {
        Lang::Python => &python::RULES,
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => &js_family::RULES,
        Lang::Rust => &rust::RULES,
        Lang::Go => &go::RULES,
        Lang::Java => &java::RULES,
        Lang::C | Lang::Cpp => &c_family::RULES,
        Lang::Markdown | Lang::Text => &LangRules::NONE,
    }
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

/// Run `f` with this thread's parser for `lang` (created on first use).
fn with_parser<T>(lang: Lang, f: impl FnOnce(&mut Parser) -> Option<T>) -> Option<T> {
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
        p.reset();
        f(p)
    })
}

/// Parse `src` with the grammar of `lang` (parsers are reused per thread).
/// TypeScript that [`ts_repair`] rewrites is parsed as rewritten (offsets
/// and lines are the original's); when that tree has errors, the rewrite
/// without its call-signature rule and the original are parsed too, and the
/// tree that places most of the file is taken (the original on a tie).
pub fn parse_tree(lang: Lang, src: &[u8]) -> Option<Tree> {
    if matches!(lang, Lang::TypeScript | Lang::Tsx) {
        let signatures = lang == Lang::TypeScript;
        if let Some(fixed) = ts_repair::repaired(src, signatures) {
            let again = with_parser(lang, |p| p.parse(&fixed, None))?;
            if !again.root_node().has_error() {
                return Some(again);
            }
            let mut best = (ts_repair::error_extent(&again), again);
            if let Some(fewer) = signatures
                .then(|| ts_repair::repaired(src, false))
                .flatten()
            {
                let t = with_parser(lang, |p| p.parse(&fewer, None))?;
                let e = ts_repair::error_extent(&t);
                if e < best.0 {
                    best = (e, t);
                }
            }
            let tree = with_parser(lang, |p| p.parse(src, None))?;
            return Some(if best.0 < ts_repair::error_extent(&tree) {
                best.1
            } else {
                tree
            });
        }
    }
    with_parser(lang, |p| p.parse(src, None))
}

/// Extract symbols, references and raw edges from a parsed file.
pub fn extract(lang: Lang, path: &str, src: &[u8], tree: &Tree) -> Parsed {
    let mut walk = Walk {
        rules: rules(lang),
        lang,
        path,
        src,
        base: 0,
        scopes: Vec::new(),
        def_names: HashSet::new(),
        callees: HashSet::new(),
        import_end: 0,
        attrs: HashMap::new(),
        go_import_names: Vec::new(),
        root_local_calls: Vec::new(),
        out: Parsed::default(),
    };
    walk_tree(&mut walk, tree.root_node(), 0);
    fix_parents(&mut walk.out.symbols);
    walk.attr_receivers();
    walk.root_locals();
    walk.attribute_edges();
    walk.out
}

/// How deep item-level macro bodies are parsed as items (`cfg_rt! {
/// cfg_net! { … } }`).
const MACRO_NESTING: u8 = 3;

/// Walk one tree (the file's, or a macro body's parsed as items, whose
/// nodes keep the file's byte offsets) from `root`, iteratively.
fn walk_tree(walk: &mut Walk, root: Node, nest: u8) {
    let names = kind_names(walk.lang);
    let mut cursor = root.walk();
    // Ancestors of the current node (Node::parent is O(depth) in tree-sitter).
    let mut anc: Vec<Node> = Vec::new();
    loop {
        let node = cursor.node();
        if node.start_byte() >= walk.import_end {
            walk.import_end = 0;
        }
        let mut descend = true;
        // Anonymous nodes (keywords, punctuation) define, import, call and name nothing.
        if node.is_named() {
            let kind = names.get(node.kind_id() as usize).copied().unwrap_or("");
            walk.visit(node, kind, &anc);
            if kind == "token_tree" && nest < MACRO_NESTING && walk.lang == Lang::Rust {
                if let Some(sub) = macro_items(node, &anc, walk.src) {
                    // Its tokens are walked as the items they are, once.
                    let base = walk.base;
                    walk.base = base + anc.len() + 1;
                    walk_tree(walk, sub.root_node(), nest + 1);
                    walk.base = base;
                    descend = false;
                }
            }
        }
        if descend && cursor.goto_first_child() {
            anc.push(node);
            continue;
        }
        loop {
            // Scopes opened at this depth or below end with their node.
            while walk
                .scopes
                .last()
                .is_some_and(|s| s.depth >= walk.base + anc.len())
            {
                walk.scopes.pop();
            }
            if anc.is_empty() {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            cursor.goto_parent();
            anc.pop();
        }
    }
}

/// The body of an item-level Rust macro call (`cfg_rt! { pub fn spawn … }`,
/// `thread_local!(static X: …)`), parsed as items when it is exactly that:
/// tree-sitter keeps a macro's body as a token tree, so the functions and
/// types tokio and others define inside one would have no symbols. A body that does not parse cleanly as items
/// (`cfg_if!`'s `if #[cfg]`, `lazy_static!`'s `static ref`) stays tokens.
fn macro_items(tt: Node, anc: &[Node], src: &[u8]) -> Option<Tree> {
    let (call, parent) = match anc {
        [.., p, c] => (c, p),
        _ => return None,
    };
    if call.kind() != "macro_invocation"
        || !matches!(parent.kind(), "source_file" | "declaration_list")
    {
        return None;
    }
    let open = tt.child(0)?;
    let close = tt.child(tt.child_count().checked_sub(1)?)?;
    if !matches!(open.kind(), "{" | "(") || close.start_byte() <= open.end_byte() {
        return None;
    }
    let range = tree_sitter::Range {
        start_byte: open.end_byte(),
        end_byte: close.start_byte(),
        start_point: open.end_position(),
        end_point: close.start_position(),
    };
    let tree = with_parser(Lang::Rust, |p| {
        p.set_included_ranges(&[range]).ok()?;
        let t = p.parse(src, None);
        // An empty list is the whole document again, for the next file.
        let _ = p.set_included_ranges(&[]);
        t
    })?;
    let root = tree.root_node();
    let items = root.named_child_count() > 0
        && !root.has_error()
        && (0..root.named_child_count()).all(|i| {
            root.named_child(i as u32).is_some_and(|c| {
                c.kind().ends_with("_item")
                    || matches!(
                        c.kind(),
                        "line_comment"
                            | "block_comment"
                            | "attribute_item"
                            | "inner_attribute_item"
                            | "use_declaration"
                            | "macro_invocation"
                            | "macro_definition"
                            | "empty_statement"
                    )
            })
        });
    items.then_some(tree)
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

/// An open definition scope.
struct Scope {
    /// Depth of the node that opened it.
    depth: usize,
    qname: Arc<str>,
    symbol_id: Option<i64>,
    class_like: bool,
    /// Names bound in it so far, in order, with the type each names.
    locals: Vec<(String, Option<String>)>,
    /// Go: where each local's block ends (the byte after it), in step with
    /// `locals`: `n := n.(*T)` in one `case` says nothing of the next
    /// (feature 30). Other languages: `usize::MAX`.
    ends: Vec<usize>,
    /// Go: names bound but not yet in sight, with the byte from which they
    /// are (`err := err.M()` calls the earlier `err`'s `M`) and their block's
    /// end (feature 30).
    pending: Vec<(usize, String, Option<String>, usize)>,
    /// A Go function literal's: its names end with it, and names of the
    /// function around it stay in sight (it names the same symbol).
    closure: bool,
}

/// The state of one file's walk.
struct Walk<'s> {
    rules: &'static LangRules,
    lang: Lang,
    path: &'s str,
    src: &'s [u8],
    /// Depth of the tree being walked's root in the file's tree (a macro
    /// body's items sit below their call): scopes record absolute depths.
    base: usize,
    scopes: Vec<Scope>,
    /// Start bytes of definition names (not references).
    def_names: HashSet<usize>,
    /// Start bytes of callee names (references of kind `call`).
    callees: HashSet<usize>,
    /// End of the import statement being walked (0: none).
    import_end: usize,
    /// Instance attributes a class assigns (or declares), by class and
    /// attribute.
    attrs: HashMap<(Arc<str>, String), AttrSeen>,
    /// Go: the names the file's imports bind (aliases, package names).
    go_import_names: Vec<String>,
    /// JS/TS: the `local` calls (by edge index) of a name a callback
    /// outside any function binds ([`Walk::root_locals`]).
    root_local_calls: Vec<usize>,
    out: Parsed,
}

/// What a class's attribute holds: the one type its values show (None: two,
/// or one that does not show), the line of its first assignment, and
/// (TypeScript) whether a declaration gave the type, which assigned values
/// then do not change.
struct AttrSeen {
    ty: Option<String>,
    line: u32,
    declared: bool,
}

/// Where the names a Go binding at `node` binds come into sight and where
/// they go out of it: after the declaration (its values read the names
/// before it), until the end of the block it is in: a `case`'s, an
/// `if`/`for`/`switch` statement's (their header's names), a `{…}`
/// block's. A type switch's names are its own, from its value on, and
/// each of its cases rebinds them from its start.
fn go_binding_span(node: Node, anc: &[Node]) -> (usize, usize) {
    let from = match node.kind() {
        "type_switch_statement" => node
            .child_by_field_name("value")
            .map_or(node.start_byte(), |v| v.end_byte()),
        "type_case" | "default_case" => node.start_byte(),
        _ => node.end_byte(),
    };
    (from, go_block_end(node, anc))
}

/// The end of the block a Go binding at `node` belongs to (see
/// [`go_binding_span`]).
fn go_block_end(node: Node, anc: &[Node]) -> usize {
    const OWN: &[&str] = &["type_switch_statement", "type_case", "default_case"];
    const BLOCKS: &[&str] = &[
        "block",
        "expression_case",
        "type_case",
        "default_case",
        "communication_case",
        "if_statement",
        "for_statement",
        "expression_switch_statement",
        "type_switch_statement",
        "select_statement",
    ];
    if OWN.contains(&node.kind()) {
        return node.end_byte();
    }
    anc.iter()
        .rev()
        .take_while(|a| {
            !matches!(
                a.kind(),
                "function_declaration" | "method_declaration" | "func_literal"
            )
        })
        .find(|a| BLOCKS.contains(&a.kind()))
        .map_or(usize::MAX, |a| a.end_byte())
}

impl<'s> Walk<'s> {
    fn enclosing(&self) -> Option<Arc<str>> {
        // A Go function literal or a JS/TS callback outside any function
        // names no symbol.
        self.scopes
            .last()
            .filter(|s| !self.callback_root_scopes() || !s.qname.is_empty())
            .map(|s| s.qname.clone())
    }

    /// The type bound to the receiver of a call `x.m` written through a
    /// local name: the latest binding of `x` in the enclosing function
    /// (Python: or a function around it, as closures see them).
    fn receiver_type(&self, dst_name: &str) -> Option<String> {
        let (recv, _) = dst_name.rsplit_once('.')?;
        self.local_type(recv)
    }

    /// The type of the receiver `recv` as [`Self::receiver_type`] reads it;
    /// Go: `x.f` and `x.f.g` through a typed local `x` are `(T).f` and
    /// `((T).f).g`, fields of its type (feature 20); a name the function
    /// does not bind nor the file import is `var x`, and an imported
    /// package's `pkg.V` is `var pkg.V`: a package-level variable, typed
    /// by resolution from its declaration (feature 22).
    fn local_type(&self, recv: &str) -> Option<String> {
        let instance_name = |n: &str| matches!(n, "self" | "cls");
        let word = |w: &str| {
            !w.is_empty()
                && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !w.starts_with(|c: char| c.is_ascii_digit())
        };
        if self.lang == Lang::Go {
            if let Some((inner, field)) = recv.rsplit_once('.') {
                if !word(field) {
                    return None;
                }
                // `pkg.V`: a package-level variable of an imported package
                // (feature 22).
                if word(inner) && !self.is_local(inner) && self.go_imports(inner) {
                    return Some(format!("var {recv}"));
                }
                let t = self.local_type(inner)?;
                return (t.len() <= go::GO_TYPE_MAX).then(|| format!("({t}).{field}"));
            }
            // A name the function does not bind, nor the file import: a
            // package-level variable (or constant) of the package (feature 22).
            if word(recv) && !self.is_local(recv) && !self.go_imports(recv) {
                return Some(format!("var {recv}"));
            }
        }
        // The instance: JS/TS `this` (a parameter named `self`, effect's
        // style, is a name like any other: feature 27); Python's `self`/`cls`;
        // Rust's `self` (`cls: &ClassUnicode`, `this: Mut<Self>` are names
        // like any other: feature 52).
        let instance = match self.lang {
            Lang::Go => false,
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => recv == "this",
            Lang::Rust => recv == "self",
            _ => matches!(recv, "self" | "this" | "cls"),
        };
        // JS/TS: `x.getCache()` / `x.cache` through a typed local `x`:
        // `<T>`, the type of its first name; resolution types the rest
        // (feature 28).
        if matches!(self.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx) && !word(recv) {
            let head = recv.split(['.', '(', '[', '!', '?']).next().unwrap_or(recv);
            let after = recv[head.len()..].chars().next();
            if matches!(after, Some('.' | '!' | '?')) && word(head) && head != "this" {
                return self
                    .local_type(head)
                    .filter(|t| !t.starts_with(['<', '=']) && t != "local")
                    .map(|t| format!("<{t}>"));
            }
            return None;
        }
        // Python (feature 60): `f.widget.m()` through a typed local `f`:
        // `<T>f.widget`, the local's type in front of the path (resolution
        // reads the attributes the classes assign).
        if self.lang == Lang::Python && !word(recv) {
            let mut segs = recv.split('.');
            let head = segs.next().unwrap_or(recv);
            if word(head) && !instance_name(head) && segs.all(word) && self.is_local(head) {
                let t = self.local_type(head)?;
                return (t.len() <= 200).then(|| format!("<{t}>{recv}"));
            }
            return None;
        }
        if !word(recv) || instance {
            return None;
        }
        for s in self.scopes.iter().rev() {
            if s.class_like {
                return None;
            }
            if let Some((_, ty)) = s.locals.iter().rev().find(|(n, _)| n == recv) {
                return ty.clone();
            }
            if !s.closure && !self.sees_outer_locals() {
                return None;
            }
        }
        None
    }

    /// Python (feature 59): a value that is a method's result through a
    /// local of a known type, `engine.from_string()` with `engine` an
    /// `Engine()`, has that type written in front:
    /// `<Engine()>engine.from_string()` (resolution reads the method's
    /// result). Any other value is kept as it is.
    fn py_value(&self, ty: Option<String>) -> Option<String> {
        let t = ty?;
        let Some((head, m)) = t.strip_suffix("()").and_then(|c| c.split_once('.')) else {
            return Some(t);
        };
        let word = |w: &str| {
            !w.is_empty()
                && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !w.starts_with(|c: char| c.is_ascii_digit())
        };
        if !word(head) || !word(m) || matches!(head, "self" | "cls") || !self.is_local(head) {
            return Some(t);
        }
        match self.local_type(head) {
            Some(h) if h.len() <= 200 => Some(format!("<{h}>{t}")),
            _ => Some(t),
        }
    }

    /// Rust (feature 34): a value written `=expr` (a call's result) as
    /// resolution reads it. A first name that is a local bound to `=…` is
    /// replaced by that expression (`let a = f(); a.g()` → `=f().g()`); one
    /// of another type has it written in front (`=<T>x.f()`); a local of
    /// no type, or one called (a closure), shows none. A first name that is
    /// no local stays: a function's call (`rt()`), a path (`Foo::f()`),
    /// `self`; a name read as a value (a `static`) shows none.
    fn rust_value(&self, ty: Option<String>) -> Option<String> {
        let t = ty?;
        // An element of a value (`=xs[]`, feature 44): the value read so,
        // a local's type written in front (`=<Vec<Item>>xs[]`).
        if let Some(v) = t.strip_suffix("[]").filter(|v| v.starts_with('=')) {
            return match self.rust_value(Some(v.to_string()))? {
                e if e.starts_with('=') => Some(format!("{e}[]")),
                ty => Some(format!("=<{ty}>{}[]", &v[1..])),
            }
            .filter(|o| o.len() <= 300);
        }
        let Some(expr) = t.strip_prefix('=') else {
            return Some(t);
        };
        let head = expr
            .split(['.', '(', '?', ':', '<', '[', '!'])
            .next()
            .unwrap_or("");
        let rest = &expr[head.len()..];
        let word = !head.is_empty()
            && head.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !head.starts_with(|c: char| c.is_ascii_digit());
        if !word {
            return None;
        }
        if head == "self" {
            return Some(t);
        }
        if !self.is_local(head) {
            return matches!(rest.chars().next(), Some('(' | ':')).then_some(t);
        }
        // (another local, `let next = curr;`: its type; feature 44)
        if rest.is_empty() {
            return self.local_type(head);
        }
        if !rest.starts_with(['.', '?']) {
            return None;
        }
        let bound = self.local_type(head)?;
        let out = match bound.strip_prefix('=') {
            Some(e) => format!("={e}{rest}"),
            None => format!("=<{bound}>{expr}"),
        };
        (out.len() <= 300).then_some(out)
    }

    /// A Go value's type as the bindings write it, read through the
    /// walk's locals: `@x.f` (`v := x.f`, feature 20) is the local's or
    /// its field's type; `x.M()` of a typed local `x` is `(T).M()`, and of
    /// an untyped one none.
    fn go_value(&self, ty: Option<String>) -> Option<String> {
        let t = ty?;
        // A nested value (feature 30): `(xs)[]`, `(xs)[key]`, `(v).M()`,
        // its inner value read as this one is.
        if let Some((inner, rest)) = crate::resolve::go_group(&t) {
            let method = rest
                .strip_prefix('.')
                .and_then(|r| r.strip_suffix("()"))
                .is_some_and(|m| {
                    !m.is_empty() && m.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                });
            if matches!(rest, "[]" | "[key]") || method {
                let inner = self.go_value(Some(inner.to_string()))?;
                return (inner.len() <= go::GO_TYPE_MAX).then(|| format!("({inner}){rest}"));
            }
            return Some(t);
        }
        if let Some(sel) = t.strip_prefix('@') {
            return self.local_type(sel).filter(|t| t.len() <= go::GO_TYPE_MAX);
        }
        let Some(call) = t.strip_suffix("()") else {
            return Some(t);
        };
        let Some((recv, m)) = call.rsplit_once('.') else {
            // `f := func() *T {…}; f()`: a local's call shows no type.
            return (!self.is_local(call)).then_some(t);
        };
        let x = recv.split('.').next().unwrap_or(recv);
        if let Some(lt) = self
            .local_type(recv)
            .filter(|lt| lt.len() <= go::GO_TYPE_MAX)
        {
            return Some(format!("({lt}).{m}()"));
        }
        if recv.contains('.') || (!x.is_empty() && self.is_local(x)) {
            return None;
        }
        Some(t)
    }

    /// Does the Go file import a package as `name` (its alias, or the
    /// package's name by its path)?
    fn go_imports(&self, name: &str) -> bool {
        self.go_import_names.iter().any(|n| n == name)
    }

    /// Is `name` a local of the enclosing function (Go: or of the function
    /// a function literal sits in)?
    fn is_local(&self, name: &str) -> bool {
        for s in self.scopes.iter().rev() {
            if s.class_like {
                return false;
            }
            if s.locals.iter().any(|(n, _)| n == name) {
                return true;
            }
            if !s.closure && !self.sees_outer_locals() {
                return false;
            }
        }
        false
    }

    /// Is `name` bound by a function (not by a callback outside any
    /// function, whose scope names no symbol)?
    fn is_function_local(&self, name: &str) -> bool {
        for s in self.scopes.iter().rev() {
            if s.class_like {
                return false;
            }
            if s.locals.iter().any(|(n, _)| n == name) {
                return !s.qname.is_empty();
            }
            if !s.closure && !self.sees_outer_locals() {
                return false;
            }
        }
        false
    }

    /// Does a function value outside any function (a Go function literal,
    /// a JS/TS callback) open a scope of its own, which names no symbol?
    fn callback_root_scopes(&self) -> bool {
        matches!(
            self.lang,
            Lang::Go | Lang::JavaScript | Lang::TypeScript | Lang::Tsx
        )
    }

    /// Does a nested function see the names of the functions around it
    /// (Python and JS/TS closures; Go's literals are marked `closure`)?
    fn sees_outer_locals(&self) -> bool {
        matches!(
            self.lang,
            Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Tsx
        )
    }

    /// Record `self.attr = value` in a method (a function directly in a
    /// class) or `attr = value` in a class body: the class's attribute
    /// keeps the one type its values show. In a function nested in a
    /// method, the value's type counts as unknown.
    fn assign_attr(&mut self, attr: String, value: AttrValue, line: u32) {
        let n = self.scopes.len();
        // The nearest class: the body's own assignment (`rf =
        // RequestFactory()`), a method's (`self.rf = …`), or deeper.
        let Some(class_at) = self.scopes.iter().rposition(|s| s.class_like) else {
            return;
        };
        let value = match n - 1 - class_at {
            0 | 1 => value,
            _ => AttrValue::Unknown,
        };
        let mut declared = false;
        let ty = match value {
            AttrValue::Nothing => return,
            AttrValue::Type(t) => Some(t),
            AttrValue::Local(name) => self.scopes[n - 1]
                .locals
                .iter()
                .rev()
                .find(|(l, _)| *l == name)
                .and_then(|(_, t)| t.clone()),
            AttrValue::Unknown => None,
            AttrValue::Declared(t) => {
                declared = true;
                t
            }
        };
        let class = self.scopes[class_at].qname.clone();
        // `x: Conn` and `self.x = Conn()` name one type.
        fn same(a: &Option<String>) -> Option<&str> {
            a.as_deref().map(|t| t.trim_end_matches("()"))
        }
        let key = (class, attr);
        match self.attrs.get_mut(&key) {
            Some(seen) => {
                if declared && !seen.declared {
                    // A declaration's type is the attribute's, whatever
                    // values were assigned before it (feature 26).
                    seen.ty = ty;
                    seen.declared = true;
                } else if declared == seen.declared && same(&seen.ty) != same(&ty) {
                    seen.ty = None;
                }
                seen.line = seen.line.min(line);
            }
            None => {
                self.attrs.insert(key, AttrSeen { ty, line, declared });
            }
        }
    }

    /// One `attribute` edge per attribute a class assigns (feature 18): the
    /// class, the attribute, its line and the one type it holds; a
    /// subclass's `self.x.m()` resolves through its nearest base's.
    fn attribute_edges(&mut self) {
        let mut rows: Vec<_> = self.attrs.drain().collect();
        rows.sort_by(|a, b| (a.1.line, &a.0).cmp(&(b.1.line, &b.0)));
        for ((class, attr), AttrSeen { ty, line, .. }) in rows {
            self.out.edges.push(RawEdge {
                kind: "attribute",
                src_symbol: Some(class),
                dst_name: attr,
                line,
                recv_type: ty,
                alias: None,
            });
        }
    }

    /// JS/TS: a call of a name a callback outside any function binds, from
    /// a function inside it (a UMD library's `var isWindow = function
    /// isWindow(…)` called in `isArrayLike`; a browserify module's `var hex
    /// = XRegExp._hex`), when the file defines one function of that name, is
    /// left to the rules by name, which find it, as before such callbacks had
    /// scopes. Where the file defines the name twice (effect's many `loop`s)
    /// or not at all (a parameter), it stays `local`.
    fn root_locals(&mut self) {
        if self.root_local_calls.is_empty() {
            return;
        }
        let mut count: HashMap<&str, u32> = HashMap::new();
        for s in &self.out.symbols {
            if s.kind == "function" {
                *count.entry(s.qualified_name.as_str()).or_default() += 1;
            }
        }
        let unique: Vec<usize> = self
            .root_local_calls
            .iter()
            .copied()
            .filter(|&i| count.get(self.out.edges[i].dst_name.as_str()) == Some(&1))
            .collect();
        for i in unique {
            self.out.edges[i].recv_type = None;
        }
    }

    /// A call `self.x.m()` in a method of a class that assigns `x` values
    /// of one type carries that type (as a local's binding would).
    fn attr_receivers(&mut self) {
        if self.attrs.is_empty() {
            return;
        }
        // Methods by qualified name: a call in a nested class's body
        // (`Outer.Inner`) is no method of `Outer`.
        let methods: HashSet<&str> = self
            .out
            .symbols
            .iter()
            .filter(|s| s.kind == "method" || s.kind == "constructor")
            .map(|s| s.qualified_name.as_str())
            .collect();
        // JS/TS: `this.x.m()`, `this.#x.m()` (feature 26).
        let js = matches!(self.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx);
        for e in self.out.edges.iter_mut() {
            if e.kind != "calls" || e.recv_type.is_some() {
                continue;
            }
            if !e.src_symbol.as_deref().is_some_and(|s| methods.contains(s)) {
                continue;
            }
            let rest = if js {
                e.dst_name.strip_prefix("this.")
            } else {
                e.dst_name
                    .strip_prefix("self.")
                    .or_else(|| e.dst_name.strip_prefix("cls."))
            };
            let Some(rest) = rest else {
                continue;
            };
            let Some((attr, m)) = rest.split_once('.') else {
                continue;
            };
            let ident = |s: &str| {
                let s = if js {
                    s.strip_prefix('#').unwrap_or(s)
                } else {
                    s
                };
                !s.is_empty()
                    && s.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || (js && b == b'$'))
            };
            if !ident(attr) || !ident(m) {
                continue;
            }
            let Some((class, _)) = e.src_symbol.as_deref().and_then(|s| s.rsplit_once('.')) else {
                continue;
            };
            let key = (Arc::from(class), attr.to_string());
            if let Some(AttrSeen { ty: Some(t), .. }) = self.attrs.get(&key) {
                e.recv_type = Some(t.clone());
            }
        }
    }

    /// A named node: the first of definition, scope, import, call or
    /// reference that it is.
    fn visit<'t>(&mut self, node: Node<'t>, kind: &'static str, anc: &[Node<'t>]) {
        let rules = self.rules;
        // Go: the names of blocks the walk has left are out of sight
        // (feature 30). Go and Rust: a name is in sight from after the
        // statement binding it (`let x = x.m();` calls the earlier `x`'s `m`).
        if matches!(self.lang, Lang::Go | Lang::Rust) {
            let at = node.start_byte();
            for s in self.scopes.iter_mut() {
                while s.ends.last().is_some_and(|&e| e <= at) {
                    s.ends.pop();
                    s.locals.pop();
                }
                if s.pending.iter().any(|p| p.0 <= at) {
                    for (from, name, ty, end) in std::mem::take(&mut s.pending) {
                        if from > at {
                            s.pending.push((from, name, ty, end));
                        } else if end > at {
                            s.locals.push((name, ty));
                            s.ends.push(end);
                        }
                    }
                }
            }
        }
        let at = At {
            node,
            kind,
            src: self.src,
            anc,
            in_class: self.scopes.last().is_some_and(|s| s.class_like),
            at_top: self.scopes.is_empty(),
        };
        // A function value that is no definition binds its own names and
        // sees those around it: a Go function literal; a JS/TS callback
        // (`xs.map((x) => …)`), whose parameters bind for its body only
        // (feature 25).
        let function_value = match self.lang {
            Lang::Go => kind == "func_literal",
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => matches!(
                kind,
                "arrow_function" | "function_expression" | "function" | "generator_function"
            ),
            _ => false,
        };
        if function_value {
            let depth = self.base + anc.len();
            if let Some(outer) = self.scopes.last().filter(|s| !s.class_like) {
                let (qname, symbol_id) = (outer.qname.clone(), outer.symbol_id);
                self.scopes.push(Scope {
                    depth,
                    qname,
                    symbol_id,
                    class_like: false,
                    locals: Vec::new(),
                    ends: Vec::new(),
                    pending: Vec::new(),
                    closure: true,
                });
            } else if self.scopes.is_empty() && self.callback_root_scopes() {
                // Outside any function (`var tests = []T{{f: func() {…}}}`,
                // `describe(() => { let client: Client … })`): its names
                // are its own, not the package's or module's (features 22,
                // 26).
                self.scopes.push(Scope {
                    depth,
                    qname: Arc::from(""),
                    symbol_id: None,
                    class_like: false,
                    locals: Vec::new(),
                    ends: Vec::new(),
                    pending: Vec::new(),
                    closure: false,
                });
            }
        }
        if let Some(mut b) = (rules.bindings)(&at) {
            // Go: `v := x.M(…)` through a typed local `x` is written
            // `(T).M()`: the first result of `T`'s method `M`.
            if self.lang == Lang::Go {
                for (_, ty) in b.iter_mut() {
                    *ty = self.go_value(ty.take());
                }
            }
            // Rust: `=expr`, a call's result (feature 34), read through the
            // walk's locals.
            if self.lang == Lang::Rust {
                for (_, ty) in b.iter_mut() {
                    *ty = self.rust_value(ty.take());
                }
            }
            // JS/TS: a callback typed by the function it is passed to
            // (`g(#i).#j`, feature 27) names that function as the file or
            // its imports do; a parameter or local of that name that is no
            // function the file defines (`const notify = (cb: …) => …`) is
            // another.
            if matches!(self.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx) {
                for (_, ty) in b.iter_mut() {
                    // `=expr` (a call's result, feature 28): its first name
                    // as `this`, a function's call, or a typed local
                    // (`=<T>expr`); anything else shows no type.
                    if let Some(expr) = ty.as_deref().and_then(|t| t.strip_prefix('=')) {
                        let head = expr.split(['.', '(', '!', '?', '<']).next().unwrap_or("");
                        let after = expr[head.len()..].chars().next();
                        *ty = if head == "this" || (after == Some('(') && !self.is_local(head)) {
                            ty.take()
                        } else if after == Some('.') {
                            self.local_type(head)
                                .filter(|t| !t.starts_with(['<', '=']) && t != "local")
                                .map(|t| format!("=<{t}>{expr}"))
                        } else {
                            None
                        };
                        continue;
                    }
                    let head = ty
                        .as_deref()
                        .filter(|t| t.contains("(#"))
                        .and_then(|t| t.split(['.', '(']).next());
                    let other = head.is_some_and(|h| {
                        self.is_local(h)
                            && !self
                                .out
                                .symbols
                                .iter()
                                .any(|s| s.kind == "function" && s.name == h)
                    });
                    if other {
                        *ty = None;
                    }
                }
            }
            // Python (feature 59): `t = engine.from_string(…)` through a
            // local `engine` of a known type: `<Engine()>engine.from_string()`.
            if self.lang == Lang::Python {
                for (_, ty) in b.iter_mut() {
                    *ty = self.py_value(ty.take());
                }
            }
            if let Some(s) = self.scopes.last_mut().filter(|s| !s.class_like) {
                if self.lang == Lang::Go {
                    let (from, end) = go_binding_span(node, anc);
                    s.pending
                        .extend(b.into_iter().map(|(n, t)| (from, n, t, end)));
                } else if self.lang == Lang::Rust {
                    let (from, end) = rust::binding_span(node, kind, anc);
                    s.pending
                        .extend(b.into_iter().map(|(n, t)| (from, n, t, end)));
                } else {
                    s.ends.extend(b.iter().map(|_| usize::MAX));
                    s.locals.extend(b);
                }
            }
        }
        for (attr, value) in (rules.attrs)(&at).into_iter().flatten() {
            self.assign_attr(attr, value, line(node));
        }
        if let Some(def) = rules.definition(&at) {
            self.define(&at, def);
        } else if let Some(rule) = rules.scopes.iter().find(|r| r.node == kind) {
            if let Some(name) = (rule.name)(&at, &mut self.out.edges) {
                self.scopes.push(Scope {
                    depth: self.base + anc.len(),
                    qname: Arc::from(name),
                    symbol_id: None,
                    class_like: true,
                    locals: Vec::new(),
                    ends: Vec::new(),
                    pending: Vec::new(),
                    closure: false,
                });
            }
        } else if let Some(specs) = (rules.imports)(&at) {
            self.import_end = node.end_byte();
            let enclosing = self.enclosing();
            for Import { spec, line, alias } in specs {
                if self.lang == Lang::Go {
                    let name = alias
                        .clone()
                        .unwrap_or_else(|| crate::resolve::go_package_name(&spec).to_string());
                    self.go_import_names.push(name);
                }
                self.out.edges.push(RawEdge {
                    kind: "imports",
                    src_symbol: enclosing.clone(),
                    dst_name: spec,
                    line,
                    recv_type: None,
                    alias,
                });
            }
        } else if let Some(callee) = rules.call_target(&at) {
            let name = text(callee, self.src);
            if !name.is_empty() {
                self.callees.insert(callee.start_byte());
                let mut dst_name = match rules.qualified_calls {
                    true => qualified_callee(&at, callee, name, self.src),
                    false => name.to_string(),
                };
                // A Rust macro call is written `name!`: it names a macro, not
                // the function, trait or type of that name (`Token![fn]`).
                if kind == "macro_invocation" {
                    dst_name.push('!');
                }
                let mut recv_type = self.receiver_type(&dst_name);
                // JS/TS: `f()` of a name the function binds (a parameter, a
                // local `const`/`let`): `local`, a function defined there or
                // nothing the index holds (feature 25).
                if matches!(self.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx)
                    && !dst_name.contains('.')
                    && self.is_local(&dst_name)
                    && self.enclosing().is_some()
                {
                    recv_type = Some("local".to_string());
                    // Bound by a callback outside any function: decided by
                    // `root_locals`.
                    if !self.is_function_local(&dst_name) {
                        self.root_local_calls.push(self.out.edges.len());
                    }
                }
                // A receiver that is a value, as a binding of it writes it.
                // Go: `new(T).M()`, `F(x).M()`. Rust: a call's result
                // (`f(x).m()`, `x.build().unwrap().m()`, however many lines
                // it spans), `=expr` (feature 34).
                let selector = match self.lang {
                    Lang::Go => Some(("selector_expression", "operand")),
                    Lang::Rust => Some(("field_expression", "value")),
                    _ => None,
                };
                if let Some((kind, field)) = selector.filter(|_| recv_type.is_none()) {
                    let operand = at
                        .field("function")
                        .filter(|f| f.kind() == kind)
                        .and_then(|f| f.child_by_field_name(field));
                    if let Some(op) = operand {
                        let v = (rules.receiver_value)(&at, op);
                        recv_type = match self.lang {
                            Lang::Go => self.go_value(v),
                            _ => self.rust_value(v),
                        };
                    }
                }
                // Rust, `self.base.m()`: the bounds of the generic parameters
                // in sight, for a field whose type is one (feature 35).
                if recv_type.is_none() && self.lang == Lang::Rust {
                    recv_type = rust::self_field_bounds(&at, &dst_name)
                        .or_else(|| rust::path_bounds(&at, &dst_name));
                }
                self.out.edges.push(RawEdge {
                    kind: "calls",
                    src_symbol: self.enclosing(),
                    dst_name,
                    line: line(callee),
                    recv_type,
                    alias: None,
                });
            }
        } else if rules.refs.identifiers.contains(&kind) && node.child_count() == 0 {
            self.reference(&at);
        }
    }

    /// Record a definition: its symbol, `contains` edge, other edges and scope.
    fn define<'t>(&mut self, at: &At<'t, '_>, def: Def<'t>) {
        let node = at.node;
        let enclosing = self.enclosing();
        let name = text(def.name, self.src).to_string();
        if name.is_empty() {
            return;
        }
        self.def_names.insert(def.name.start_byte());
        let container = def
            .container
            .clone()
            .or_else(|| enclosing.as_deref().map(str::to_string));
        let qualified_name = match &container {
            Some(c) => format!("{c}.{name}"),
            None => name.clone(),
        };
        let id = stable_id(&[
            self.path.as_bytes(),
            def.kind.as_bytes(),
            qualified_name.as_bytes(),
            node.start_byte().to_string().as_bytes(),
        ]);
        let parent_id = if def.container.is_none() {
            self.scopes.last().and_then(|s| s.symbol_id)
        } else {
            None
        };
        let (lead_byte, comments) = leading(at, &self.rules.lead);
        let doc = match &self.rules.doc {
            Doc::Custom(f) => f(node, self.src),
            Doc::CommentsAbove => comments_doc(&comments, self.src),
        };
        self.out.edges.push(RawEdge {
            kind: "contains",
            src_symbol: container.as_deref().map(Arc::from),
            dst_name: qualified_name.clone(),
            line: line(def.name),
            recv_type: None,
            alias: None,
        });
        self.out.symbols.push(Symbol {
            id,
            name,
            qualified_name: qualified_name.clone(),
            kind: def.kind,
            container,
            parent_id,
            signature: signature(node, self.src),
            doc,
            start_line: line(node),
            end_line: node.end_position().row as u32 + 1,
            start_byte: node.start_byte() as u64,
            end_byte: node.end_byte() as u64,
            name_line: line(def.name),
            lead_byte: lead_byte as u64,
        });
        let mut edges = DefEdges::new(
            &qualified_name,
            enclosing.as_ref(),
            self.src,
            &mut self.out.edges,
        );
        (self.rules.def_edges)(at, &mut edges);
        if def.opens_scope {
            self.scopes.push(Scope {
                depth: self.base + at.anc.len(),
                qname: Arc::from(qualified_name),
                symbol_id: Some(id),
                class_like: def.class_like,
                locals: Vec::new(),
                ends: Vec::new(),
                pending: Vec::new(),
                closure: false,
            });
        }
    }

    /// An identifier leaf that is not a definition's name.
    fn reference(&mut self, at: &At) {
        let refs = &self.rules.refs;
        let (node, kind) = (at.node, at.kind);
        let start = node.start_byte();
        if self.def_names.contains(&start) {
            return;
        }
        let name = text(node, self.src);
        if name.is_empty() || refs.ignored.contains(&name) {
            return;
        }
        let parent = at.up(0);
        let ref_kind = if self.callees.contains(&start) {
            "call"
        } else if self.import_end > start {
            "import"
        } else if refs.types.contains(&kind)
            || refs
                .type_parent
                .is_some_and(|t| parent.is_some_and(|p| p.kind() == t))
        {
            "type"
        } else if refs.fields.contains(&kind)
            || refs.field_of.is_some_and(|(pk, field)| {
                parent.is_some_and(|p| p.kind() == pk && p.child_by_field_name(field) == Some(node))
            })
        {
            "field"
        } else {
            "identifier"
        };
        self.out.references.push(Reference {
            name: name.to_string(),
            line: line(node),
            column: node.start_position().column as u32 + 1,
            start_byte: start as u64,
            ref_kind,
            enclosing: self.enclosing(),
        });
    }
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

/// Where the lead of the definition at `at` starts, and its comments (top
/// first): climb the wrappers it opens, then take the comments and
/// attributes directly above (no blank line between, each starting its line).
fn leading<'t>(at: &At<'t, '_>, lead: &Lead) -> (usize, Vec<Node<'t>>) {
    let src = at.src;
    let mut anchor = at.node;
    for p in at.anc.iter().rev() {
        if !lead.wrappers.contains(&p.kind()) || !first_of_kind(anchor) {
            break;
        }
        anchor = *p;
    }
    let mut start = anchor.start_byte();
    let mut comments = Vec::new();
    let mut expect_row = anchor.start_position().row;
    let mut prev = anchor.prev_sibling();
    while let Some(c) = prev {
        let kind = c.kind();
        let is_comment = lead.comments.contains(&kind);
        if !(is_comment || lead.attributes.contains(&kind))
            || last_row(c) + 1 < expect_row
            || !starts_line(src, c.start_byte())
            || (is_comment && lead.inner.iter().any(|p| text(c, src).starts_with(p)))
        {
            break;
        }
        if is_comment {
            comments.push(c);
        }
        start = c.start_byte();
        expect_row = c.start_position().row;
        prev = c.prev_sibling();
    }
    comments.reverse();
    (start, comments)
}

/// No named sibling before `n` is of its kind (the first declarator of a
/// `const`, the first spec of a Go `type (...)` group).
fn first_of_kind(n: Node) -> bool {
    let mut prev = n.prev_named_sibling();
    while let Some(p) = prev {
        if p.kind_id() == n.kind_id() {
            return false;
        }
        prev = p.prev_named_sibling();
    }
    true
}

/// The row of a node's last character (a line comment may end after its newline).
fn last_row(n: Node) -> usize {
    let end = n.end_position();
    if end.column == 0 && end.row > n.start_position().row {
        end.row - 1
    } else {
        end.row
    }
}

/// Only indentation precedes `byte` on its line.
fn starts_line(src: &[u8], byte: usize) -> bool {
    src[..byte]
        .iter()
        .rev()
        .take_while(|&&b| b != b'\n')
        .all(|&b| b == b' ' || b == b'\t')
}

/// First paragraph of the leading comments.
fn comments_doc(comments: &[Node], src: &[u8]) -> Option<String> {
    if comments.is_empty() {
        return None;
    }
    let lines: Vec<String> = comments
        .iter()
        .flat_map(|c| text(*c, src).lines().map(clean_comment_line))
        .collect();
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

/// The first non-empty paragraph, lines joined, capped.
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

/// A call's callee as written when it selects the name from something:
/// `net.Listen`, `s.mu.Lock`; `(…).Close` when that something is longer than
/// a line's worth or spans lines; the bare name otherwise.
fn qualified_callee(_at: &At, callee: Node, name: &str, src: &[u8]) -> String {
    // The callee's name is the last part of a selector (`net.Listen`,
    // `self.save`, `this.next`), a member access (`obj.m`) or a path
    // (`Type::new`, `crate::util::f`): keep what it selects from.
    let Some(p) = callee.parent() else {
        return name.to_string();
    };
    let (operand_fields, sep): (&[&str], &str) = match p.kind() {
        "selector_expression" => (&["operand"], "."),
        "attribute" => (&["object"], "."),
        "member_expression" => (&["object"], "."),
        "field_expression" => (&["value"], "."),
        "scoped_identifier" => (&["path"], "::"),
        _ => return name.to_string(),
    };
    let Some(operand) = operand_fields
        .iter()
        .find_map(|f| p.child_by_field_name(f))
        .filter(|o| o.id() != callee.id())
    else {
        return name.to_string();
    };
    let o = text(operand, src);
    if o.is_empty() || o.len() > 80 || o.contains('\n') {
        format!("(…){sep}{name}")
    } else {
        format!("{o}{sep}{name}")
    }
}
