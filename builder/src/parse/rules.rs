//! What a language can tell the walk: the vocabulary of the per-language
//! rule files (`python.rs`, `rust.rs`, ...), and the small node helpers they
//! share. Plain data where a node kind alone decides, fn pointers where the
//! context does (receivers, declarators, position in the file).

use std::sync::Arc;

use tree_sitter::Node;

use super::RawEdge;

/// Everything the walk needs to know about one language.
pub struct LangRules {
    /// Definitions decided by the node kind alone (name in the `name` field).
    pub defs: &'static [DefRule],
    /// Definitions that depend on more than the kind; `None` when `node` is not one.
    pub def_fn: DefFn,
    /// Edges a definition writes besides `contains` (bases; Rust `mod x;`).
    pub def_edges: DefEdgesFn,
    /// Scopes that are not symbols themselves (Rust `impl` blocks).
    pub scopes: &'static [ScopeRule],
    /// Import specifiers written by a node, if it is an import.
    pub imports: ImportsFn,
    /// Calls: node kind and the field holding the callee.
    pub calls: &'static [CallRule],
    /// How the name is found inside a callee expression (`a.b.c` → `c`).
    pub callee: CalleePath,
    /// A call through a selector keeps what it selects from in the edge's
    /// `dst_name` (`net.Listen`, `srv.Serve`), so resolution can tell a
    /// package's function from a method (Go).
    pub qualified_calls: bool,
    /// Which leaves are references, and of what kind.
    pub refs: RefRules,
    /// What directly precedes a definition and belongs to it (its chunk
    /// starts there): doc comments, attributes, decorators, wrappers.
    pub lead: Lead,
    /// Where a definition's documentation is.
    pub doc: Doc,
    /// Local names a node binds inside a function (parameters, `let`,
    /// assignments) and the type each binding names, if any: a call
    /// `x.m()` carries its receiver's type to resolution.
    pub bindings: BindingsFn,
    /// An attribute a method assigns on its instance (`self.x = Foo()`),
    /// so a call `self.x.m()` in any method of the class carries `x`'s type.
    pub attrs: AttrsFn,
    /// The type a call's receiver shows when it is not a name (Go:
    /// `new(big.Int).SetBytes()`, `reflect.ValueOf(x).Elem()`), written as
    /// [`BindingsFn`] writes a value's.
    pub receiver_value: ReceiverValueFn,
}

impl LangRules {
    /// A language without rules (Markdown, plain text): no symbols, no references.
    pub const NONE: LangRules = LangRules {
        defs: &[],
        def_fn: no_def,
        def_edges: no_edges,
        scopes: &[],
        imports: no_imports,
        calls: &[],
        callee: CalleePath {
            names: &[],
            steps: &[],
        },
        qualified_calls: false,
        refs: RefRules::NONE,
        lead: Lead::NONE,
        doc: Doc::CommentsAbove,
        bindings: no_bindings,
        attrs: no_attrs,
        receiver_value: no_receiver_value,
    };

    /// Is the node at `at` a definition, and of what?
    pub fn definition<'t>(&self, at: &At<'t, '_>) -> Option<Def<'t>> {
        if let Some(r) = self.defs.iter().find(|r| r.node == at.kind) {
            let name = at.field("name")?;
            let kind = if at.in_class { r.kind_in_class } else { r.kind };
            return Some(Def {
                kind,
                name,
                container: None,
                opens_scope: r.opens_scope,
                class_like: r.class_like,
            });
        }
        (self.def_fn)(at)
    }

    /// The node naming the called function, if the node at `at` is a call.
    pub fn call_target<'t>(&self, at: &At<'t, '_>) -> Option<Node<'t>> {
        let rule = self.calls.iter().find(|r| r.node == at.kind)?;
        let callee = at.field(rule.field)?;
        if rule.direct {
            Some(callee)
        } else {
            self.callee.last_name(callee)
        }
    }
}

pub type DefFn = for<'t> fn(&At<'t, '_>) -> Option<Def<'t>>;
pub type DefEdgesFn = fn(&At, &mut DefEdges);
pub type ImportsFn = fn(&At) -> Option<Vec<Import>>;

/// One import a node writes: the specifier as written, its line, and the
/// name it binds when the source renames it (`import numpy as np` → `np`,
/// `use a::b as c` → `c`, Go `import f "fmt"` → `f`, `import * as ns`).
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub spec: String,
    pub line: u32,
    pub alias: Option<String>,
}

impl Import {
    pub fn plain(spec: String, line: u32) -> Import {
        Import {
            spec,
            line,
            alias: None,
        }
    }
}
pub type ScopeFn = fn(&At, &mut Vec<RawEdge>) -> Option<String>;
/// `(name, type)` pairs: the type as written (`&mut Context<'_>`,
/// `Optional[Form]`), or the call the value is the result of, written with
/// `()` (`Foo::new()`, `Foo::open()?`, `forms.Form()`); `None` when the
/// binding names no type (it hides an outer one).
pub type BindingsFn = fn(&At) -> Option<Vec<(String, Option<String>)>>;

pub type ReceiverValueFn = fn(&At, Node) -> Option<String>;

pub fn no_receiver_value(_: &At, _: Node) -> Option<String> {
    None
}

pub fn no_bindings(_: &At) -> Option<Vec<(String, Option<String>)>> {
    None
}

/// What an instance attribute's assigned value shows of its type.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// A type as [`BindingsFn`] writes it (`Foo()`, `Optional[Form]`).
    Type(String),
    /// A local name (a parameter): the type its binding names, if any.
    Local(String),
    /// `None`: says nothing of the type the attribute holds otherwise.
    Nothing,
    /// Any other value: the type does not show.
    Unknown,
    /// A declaration's type (TypeScript: `conn: Conn`, `private x:
    /// string`): the attribute's type whatever values are assigned (`None`:
    /// a type that names no class).
    Declared(Option<String>),
}

/// `(attribute, value)` pairs of an assignment to attributes of the
/// instance (a tuple target, `+=`, a loop's target: [`AttrValue::Unknown`]).
pub type AttrsFn = fn(&At) -> Option<Vec<(String, AttrValue)>>;

pub fn no_attrs(_: &At) -> Option<Vec<(String, AttrValue)>> {
    None
}

pub fn no_def<'t>(_: &At<'t, '_>) -> Option<Def<'t>> {
    None
}

pub fn no_edges(_: &At, _: &mut DefEdges) {}

pub fn no_imports(_: &At) -> Option<Vec<Import>> {
    None
}

/// A node under the walk, with what rules may ask about its context.
pub struct At<'t, 'a> {
    pub node: Node<'t>,
    pub kind: &'static str,
    pub src: &'a [u8],
    /// Ancestors, root first (`Node::parent` is O(depth) in tree-sitter).
    pub anc: &'a [Node<'t>],
    /// The innermost scope is class-like (class, struct, trait, impl).
    pub in_class: bool,
    /// No definition scope is open (module level).
    pub at_top: bool,
}

impl<'t, 'a> At<'t, 'a> {
    /// The i-th ancestor (0 = parent).
    pub fn up(&self, i: usize) -> Option<Node<'t>> {
        self.anc.len().checked_sub(i + 1).map(|j| self.anc[j])
    }

    pub fn field(&self, name: &str) -> Option<Node<'t>> {
        self.node.child_by_field_name(name)
    }

    pub fn text(&self, n: Node) -> &'a str {
        text(n, self.src)
    }

    pub fn line(&self) -> u32 {
        line(self.node)
    }
}

/// A definition found by the rules.
pub struct Def<'t> {
    pub kind: &'static str,
    pub name: Node<'t>,
    /// Overrides the scope-derived container (Go receivers, C++ `A::f`).
    pub container: Option<String>,
    pub opens_scope: bool,
    pub class_like: bool,
}

impl<'t> Def<'t> {
    /// Opens no scope (fields, constants, type aliases).
    pub fn leaf(kind: &'static str, name: Node<'t>) -> Self {
        Self::new(kind, name, false, false)
    }

    /// Opens a scope for what it contains (functions, modules).
    pub fn scope(kind: &'static str, name: Node<'t>) -> Self {
        Self::new(kind, name, true, false)
    }

    /// Opens a class-like scope: functions in it are methods.
    pub fn class(kind: &'static str, name: Node<'t>) -> Self {
        Self::new(kind, name, true, true)
    }

    fn new(kind: &'static str, name: Node<'t>, opens_scope: bool, class_like: bool) -> Self {
        Def {
            kind,
            name,
            container: None,
            opens_scope,
            class_like,
        }
    }
}

/// A node kind that is always a definition of one kind (when it has a name).
#[derive(Clone, Copy)]
pub struct DefRule {
    pub node: &'static str,
    pub kind: &'static str,
    /// The kind inside a class-like scope (`function` → `method`).
    pub kind_in_class: &'static str,
    pub opens_scope: bool,
    pub class_like: bool,
}

impl DefRule {
    /// See [`Def::leaf`].
    pub const fn leaf(node: &'static str, kind: &'static str) -> Self {
        Self::new(node, kind, false, false)
    }

    /// See [`Def::scope`].
    pub const fn scope(node: &'static str, kind: &'static str) -> Self {
        Self::new(node, kind, true, false)
    }

    /// See [`Def::class`].
    pub const fn class(node: &'static str, kind: &'static str) -> Self {
        Self::new(node, kind, true, true)
    }

    /// A `method` when directly in a class-like scope.
    pub const fn method_in_class(self) -> Self {
        DefRule {
            kind_in_class: "method",
            ..self
        }
    }

    const fn new(
        node: &'static str,
        kind: &'static str,
        opens_scope: bool,
        class_like: bool,
    ) -> Self {
        DefRule {
            node,
            kind,
            kind_in_class: kind,
            opens_scope,
            class_like,
        }
    }
}

/// What a definition's edge rule sees and writes.
pub struct DefEdges<'e> {
    /// Qualified name of the definition.
    pub qname: &'e str,
    /// Qualified name of the scope around it.
    pub enclosing: Option<&'e Arc<str>>,
    pub edges: &'e mut Vec<RawEdge>,
    src: &'e [u8],
    src_symbol: Arc<str>,
}

impl<'e> DefEdges<'e> {
    pub fn new(
        qname: &'e str,
        enclosing: Option<&'e Arc<str>>,
        src: &'e [u8],
        edges: &'e mut Vec<RawEdge>,
    ) -> Self {
        DefEdges {
            qname,
            enclosing,
            edges,
            src,
            src_symbol: Arc::from(qname),
        }
    }

    /// An `extends`/`implements` edge to the type written by `n`.
    pub fn base(&mut self, kind: &'static str, n: Node) {
        let name = text(n, self.src).trim().to_string();
        self.base_named(kind, n, name);
    }

    /// A base edge whose name is given (`from_queryset()` of a call).
    pub fn base_named(&mut self, kind: &'static str, n: Node, name: String) {
        if !name.is_empty() {
            self.edges.push(RawEdge {
                kind,
                src_symbol: Some(self.src_symbol.clone()),
                dst_name: name,
                line: line(n),
                recv_type: None,
                alias: None,
            });
        }
    }
}

/// A node kind that opens a class-like scope without being a symbol; `name`
/// names the scope (writing any edge it implies), or leaves it unopened.
/// The walk goes no further with such a node either way.
pub struct ScopeRule {
    pub node: &'static str,
    pub name: ScopeFn,
}

/// A node kind that is a call, and the field holding the callee.
pub struct CallRule {
    pub node: &'static str,
    pub field: &'static str,
    /// The field is the name itself (else the last name of an expression).
    pub direct: bool,
}

impl CallRule {
    /// The callee is an expression: the call is to its last name.
    pub const fn last(node: &'static str, field: &'static str) -> Self {
        CallRule {
            node,
            field,
            direct: false,
        }
    }

    /// The field is the called name.
    pub const fn direct(node: &'static str, field: &'static str) -> Self {
        CallRule {
            node,
            field,
            direct: true,
        }
    }
}

/// The rightmost name of a callee expression: the kinds that are names, and
/// one step to the right for each kind of compound expression.
pub struct CalleePath {
    pub names: &'static [&'static str],
    pub steps: &'static [(&'static str, Step)],
}

#[derive(Clone, Copy)]
pub enum Step {
    /// Go on with this field.
    Field(&'static str),
    /// Go on with the first field present.
    FieldOr(&'static str, &'static str),
    /// Go on with the first named child.
    FirstNamed,
}

impl CalleePath {
    /// `a.b.c` → `c`, `x::y` → `y` (at most 8 steps).
    pub fn last_name<'t>(&self, mut n: Node<'t>) -> Option<Node<'t>> {
        for _ in 0..8 {
            let kind = n.kind();
            if self.names.contains(&kind) {
                return Some(n);
            }
            let (_, step) = self.steps.iter().find(|(k, _)| *k == kind)?;
            n = match *step {
                Step::Field(f) => n.child_by_field_name(f)?,
                Step::FieldOr(a, b) => n
                    .child_by_field_name(a)
                    .or_else(|| n.child_by_field_name(b))?,
                Step::FirstNamed => n.named_child(0)?,
            };
        }
        None
    }
}

/// Which identifier leaves are references, and their `ref_kind`.
/// (Calls and imports are told by position, for every language.)
pub struct RefRules {
    /// Leaf kinds that are names.
    pub identifiers: &'static [&'static str],
    /// Leaf kinds that name a type.
    pub types: &'static [&'static str],
    /// Leaf kinds that name a field or property.
    pub fields: &'static [&'static str],
    /// A parent kind that makes a leaf a type (Python `type`).
    pub type_parent: Option<&'static str>,
    /// A parent kind and field in which a leaf is a field (Python `a.b`).
    pub field_of: Option<(&'static str, &'static str)>,
    /// Names that are never references (Python `self`).
    pub ignored: &'static [&'static str],
}

impl RefRules {
    pub const NONE: RefRules = RefRules {
        identifiers: &[],
        types: &[],
        fields: &[],
        type_parent: None,
        field_of: None,
        ignored: &[],
    };
}

/// What leads a definition: the nodes written directly before it (no blank
/// line between, each starting its own line) that belong to it. The walk
/// records where they start ([`super::Symbol::lead_byte`]); the chunker
/// starts the definition's chunk there, and `Doc::CommentsAbove` reads the
/// doc from the comments among them.
pub struct Lead {
    /// Nodes around a definition that belong to it when it is the first
    /// definition of its kind in them (`export`, `template<...>`, Python's
    /// decorated definition, Go's `type`, JS `const`): the lead starts
    /// above the outermost one.
    pub wrappers: &'static [&'static str],
    /// Comment kinds (doc comments and plain comments directly above).
    pub comments: &'static [&'static str],
    /// Attribute, annotation and decorator kinds written as siblings before
    /// the definition (Rust `#[...]`, TypeScript member decorators).
    pub attributes: &'static [&'static str],
    /// Comments starting with one of these document the enclosing item,
    /// not the next one (Rust `//!`, `/*!`): the lead stops at them.
    pub inner: &'static [&'static str],
}

impl Lead {
    pub const NONE: Lead = Lead {
        wrappers: &[],
        comments: &[],
        attributes: &[],
        inner: &[],
    };
}

/// Where documentation is found.
pub enum Doc {
    /// The comments of the definition's [`Lead`] (first paragraph).
    CommentsAbove,
    /// The language's own rule (Python docstrings).
    Custom(fn(Node, &[u8]) -> Option<String>),
}

/// The source text of a node (empty if not UTF-8).
pub fn text<'a>(n: Node, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[n.start_byte()..n.end_byte()]).unwrap_or("")
}

/// 1-based line of a node's start.
pub fn line(n: Node) -> u32 {
    n.start_position().row as u32 + 1
}

/// A string literal without its quotes (or `<>` of a system include).
pub fn string_content(n: Node, src: &[u8]) -> String {
    text(n, src)
        .trim_matches(|c| c == '"' || c == '\'' || c == '`' || c == '<' || c == '>')
        .to_string()
}

/// `*pkg.Type[T]` → `Type`; `Vec<T>` → `Vec`; `&'a mut Foo` → `Foo`.
pub fn base_type_name(t: &str) -> String {
    let t = t.trim_start_matches(['*', '&', '(', ' ']);
    let t = t.trim_start_matches("mut ");
    let t = t.split(['<', '[', '(', ')']).next().unwrap_or(t);
    let t = t.rsplit("::").next().unwrap_or(t);
    let t = t.rsplit('.').next().unwrap_or(t);
    t.trim().to_string()
}

/// Each type named in a list of bases (`extends A, B<T>`, `implements I`).
pub fn each_type(n: Node, f: &mut dyn FnMut(Node)) {
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

/// A type or callee as a binding records it: whitespace collapsed, at most
/// 120 bytes (a longer one is not a name to look up).
pub fn written_type(t: &str) -> Option<String> {
    let s = t.split_whitespace().collect::<Vec<_>>().join(" ");
    (!s.is_empty() && s.len() <= 120).then_some(s)
}
