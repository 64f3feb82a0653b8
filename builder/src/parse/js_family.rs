//! JavaScript, TypeScript and TSX (one set of rules: the TypeScript
//! grammars extend the JavaScript one, and kinds a grammar lacks never
//! occur in it). Functions, classes, methods, fields, interfaces, types,
//! enums, namespaces, function-valued and module-level bindings; heritage
//! clauses; `import`/`export ... from`, `require()` and `import()`.

use tree_sitter::Node;

use super::rules::{
    each_type, string_content, At, AttrValue, CallRule, CalleePath, Def, DefEdges, DefRule, Doc,
    Import, LangRules, Lead, RefRules, Step,
};

pub static RULES: LangRules = LangRules {
    defs: &[
        DefRule::scope("function_declaration", "function"),
        DefRule::scope("generator_function_declaration", "function"),
        DefRule::scope("function_signature", "function"),
        DefRule::class("class_declaration", "class"),
        DefRule::class("abstract_class_declaration", "class"),
        DefRule::class("class", "class"),
        DefRule::class("interface_declaration", "interface"),
        DefRule::leaf("type_alias_declaration", "type"),
        DefRule::class("enum_declaration", "enum"),
        DefRule::scope("internal_module", "namespace"),
        DefRule::scope("module", "namespace"),
    ],
    def_fn: definition,
    def_edges: heritage,
    imports,
    calls: &[
        CallRule::last("new_expression", "constructor"),
        CallRule::last("call_expression", "function"),
    ],
    callee: CalleePath {
        names: &[
            "identifier",
            "property_identifier",
            "type_identifier",
            "private_property_identifier",
        ],
        steps: &[
            ("member_expression", Step::Field("property")),
            ("generic_type", Step::FirstNamed),
        ],
    },
    qualified_calls: true,
    refs: RefRules {
        identifiers: &[
            "identifier",
            "type_identifier",
            "property_identifier",
            "shorthand_property_identifier",
            "private_property_identifier",
        ],
        types: &["type_identifier"],
        fields: &["property_identifier"],
        ..RefRules::NONE
    },
    // Class and export decorators are inside the node; TypeScript member
    // decorators are siblings before it.
    lead: Lead {
        wrappers: &[
            "export_statement",
            "lexical_declaration",
            "variable_declaration",
            "ambient_declaration",
        ],
        comments: &["comment"],
        attributes: &["decorator"],
        ..Lead::NONE
    },
    doc: Doc::CommentsAbove,
    bindings,
    attrs,
    ..LangRules::NONE
};

/// A function's local names (feature 24): parameters and `const`/`let`/`var`
/// declarators (not a `catch` parameter nor a `for … of` variable, which
/// would outlive their block here), with the
/// type they show: a parameter's or declarator's annotation (`subscriber:
/// Subscriber<T>` → `Subscriber`, `ns.Foo<T> | undefined` → `ns.Foo`), a
/// declarator's `new Foo(…)` (recorded `Foo()`, an instance) or `… as Foo`.
/// A name bound otherwise shows none (it still hides an outer one).
fn bindings(at: &At) -> Option<Vec<(String, Option<String>)>> {
    let one = |name: Node, ty: Option<String>| {
        (name.kind() == "identifier").then(|| vec![(at.text(name).to_string(), ty)])
    };
    let annotated = |n: Node| {
        n.child_by_field_name("type")
            .and_then(|t| t.named_child(0))
            .and_then(|t| written_type(at, t))
    };
    // Parameters of a function that has a body: not of a function type
    // (`f: (context: X) => A`) nor of a signature.
    let of_a_body = || {
        at.up(1).is_some_and(|f| {
            matches!(
                f.kind(),
                "function_declaration"
                    | "generator_function_declaration"
                    | "function_expression"
                    | "function"
                    | "generator_function"
                    | "arrow_function"
                    | "method_definition"
            )
        })
    };
    match at.kind {
        "required_parameter" | "optional_parameter" if of_a_body() => {
            let name = at.field("pattern")?;
            // An annotation, even one that names no class, is the type.
            let written = at.node.child_by_field_name("type").is_some();
            let ty = annotated(at.node).or_else(|| {
                if written {
                    return None;
                }
                let f = at.up(1)?;
                let mut c = at.up(0)?.walk();
                let j = at
                    .up(0)?
                    .named_children(&mut c)
                    .position(|p| p == at.node)?;
                contextual(at, f, j)
            });
            one(name, ty)
        }
        // JavaScript: `function f(a, b = 1)`, `x => …`.
        "identifier" if at.up(0).is_some_and(|p| p.kind() == "formal_parameters") => {
            one(at.node, None)
        }
        "identifier"
            if at.up(0).is_some_and(|p| p.kind() == "arrow_function")
                && at.up(0)?.child_by_field_name("parameter") == Some(at.node) =>
        {
            one(at.node, contextual(at, at.up(0)?, 0))
        }
        "assignment_pattern" if at.up(0).is_some_and(|p| p.kind() == "formal_parameters") => {
            one(at.field("left")?, None)
        }
        "variable_declarator" => {
            let name = at.field("name")?;
            let ty =
                annotated(at.node).or_else(|| at.field("value").and_then(|v| value_type(at, v)));
            one(name, ty)
        }
        _ => None,
    }
}

/// What a class says of the type of an instance's field (feature 26), as
/// Python's attributes (feature 18): a field declaration in the class body
/// (`private conn: Conn;`, `x = new Foo()`; not a `static` one), a
/// constructor's parameter property (`constructor(private readonly conn:
/// Conn)`) and an assignment `this.x = …` in a method (`new Foo(…)`, `… as
/// Foo`, a parameter, whose binding's type counts; `null`/`undefined` say
/// nothing; `+=` and any other value: unknown).
fn attrs(at: &At) -> Option<Vec<(String, AttrValue)>> {
    let field_name = |n: Node| {
        matches!(
            n.kind(),
            "property_identifier" | "private_property_identifier"
        )
        .then(|| at.text(n).to_string())
    };
    // A declaration's annotation is the field's type, whatever is assigned
    // (`keysAtom_: IAtom` assigned `new Atom()`); none: its value's.
    let declared = |n: Node| match n.child_by_field_name("type") {
        Some(t) => AttrValue::Declared(t.named_child(0).and_then(|t| written_type(at, t))),
        None => match n.child_by_field_name("value") {
            Some(v) => attr_value(at, v),
            None => AttrValue::Nothing,
        },
    };
    // `this.x`: `x`.
    let this_field = |n: Node| {
        let object = n.child_by_field_name("object")?;
        (n.kind() == "member_expression" && object.kind() == "this")
            .then(|| field_name(n.child_by_field_name("property")?))
            .flatten()
    };
    let has_child = |n: Node, kinds: &[&str]| {
        let mut c = n.walk();
        let found = n.children(&mut c).any(|ch| kinds.contains(&ch.kind()));
        found
    };
    match at.kind {
        "public_field_definition" | "field_definition" if at.in_class => {
            if has_child(at.node, &["static"]) {
                return None;
            }
            let name = field_name(at.field("name").or_else(|| at.field("property"))?)?;
            Some(vec![(name, declared(at.node))])
        }
        // `constructor(private readonly conn: Conn)`.
        "required_parameter" | "optional_parameter" => {
            let ctor = at.up(1).filter(|m| m.kind() == "method_definition")?;
            let named_ctor = ctor
                .child_by_field_name("name")
                .is_some_and(|n| at.text(n) == "constructor");
            let property = has_child(
                at.node,
                &["accessibility_modifier", "override_modifier", "readonly"],
            );
            if !named_ctor || !property {
                return None;
            }
            let name = at.field("pattern").filter(|n| n.kind() == "identifier")?;
            Some(vec![(at.text(name).to_string(), declared(at.node))])
        }
        "assignment_expression" => {
            let name = this_field(at.field("left")?)?;
            Some(vec![(name, attr_value(at, at.field("right")?))])
        }
        "augmented_assignment_expression" => {
            let name = this_field(at.field("left")?)?;
            Some(vec![(name, AttrValue::Unknown)])
        }
        _ => None,
    }
}

/// What an assigned value shows of its type (see [`attrs`]).
fn attr_value(at: &At, v: Node) -> AttrValue {
    if let Some(t) = value_type(at, v) {
        return AttrValue::Type(t);
    }
    match v.kind() {
        "null" | "undefined" => AttrValue::Nothing,
        "identifier" if at.text(v) == "undefined" => AttrValue::Nothing,
        "identifier" => AttrValue::Local(at.text(v).to_string()),
        _ => AttrValue::Unknown,
    }
}

/// The type of parameter `j` of callback `f` that the call it is the last
/// argument of spells in its type arguments (feature 27): `dual<(…) => …,
/// <A>(self: Ref<A>, n: number) => …>(2, (self, n) => …)` gives `self` the
/// type `Ref`, as the checker does when the callee's parameter is typed by
/// that type argument (effect's `dual`).
///
/// Without such type arguments, a callback that is argument `i` of a call of
/// a function `g` (`operate((source, subscriber) => …)`) is written
/// `g(#i).#j`: resolution reads the type from `g`'s signature.
fn contextual(at: &At, f: Node, j: usize) -> Option<String> {
    let args = f.parent().filter(|a| a.kind() == "arguments")?;
    let call = args.parent().filter(|c| c.kind() == "call_expression")?;
    let last_arg = args.named_child(args.named_child_count().checked_sub(1)? as u32)?;
    let by_callee = || {
        let name = plain_path(at, call.child_by_field_name("function")?)?;
        let mut c = args.walk();
        let i = args.named_children(&mut c).position(|a| a == f)?;
        (i < 16 && j < 16).then(|| format!("{name}(#{i}).#{j}"))
    };
    let Some(targs) = call.child_by_field_name("type_arguments") else {
        return by_callee();
    };
    if last_arg != f {
        return by_callee();
    }
    let sig = targs.named_child(targs.named_child_count().checked_sub(1)? as u32)?;
    if sig.kind() != "function_type" {
        return by_callee();
    }
    let params = sig.child_by_field_name("parameters")?;
    let p = params.named_child(j as u32)?;
    if !matches!(p.kind(), "required_parameter" | "optional_parameter") {
        return None;
    }
    let t = p.child_by_field_name("type")?.named_child(0)?;
    written_type(at, t)
}

/// The class or interface a written type names: `Foo`, `ns.Foo`, `Foo<T>`,
/// `Foo | undefined`, `(Foo)`; None for any other type (a union of two,
/// an array, a function type, an object literal, `string`).
fn written_type(at: &At, t: Node) -> Option<String> {
    match t.kind() {
        "type_identifier" => Some(at.text(t).to_string()),
        "nested_type_identifier" => {
            let w: String = at.text(t).split_whitespace().collect();
            w.split('.').all(|p| !p.is_empty()).then_some(w)
        }
        "generic_type" => written_type(at, t.child_by_field_name("name")?),
        "parenthesized_type" => written_type(at, t.named_child(0)?),
        "union_type" => {
            let mut c = t.walk();
            let mut named: Vec<Node> = t.named_children(&mut c).collect();
            named.retain(|m| !matches!(at.text(*m).trim(), "undefined" | "null"));
            match named.as_slice() {
                [m] => written_type(at, *m),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A name or a dotted path of names (`Foo`, `ns.Foo`, `core.map`): its text.
fn plain_path<'a>(at: &At<'_, 'a>, n: Node) -> Option<&'a str> {
    let w = at.text(n);
    let plain = matches!(n.kind(), "identifier" | "member_expression")
        && w.split('.').all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
        });
    plain.then_some(w)
}

/// The type a declarator's value shows: `new Foo(…)` → `Foo()`,
/// `new ns.Foo<T>(…)` → `ns.Foo()`, `… as Foo` / `<Foo>…` → `Foo`.
fn value_type(at: &At, v: Node) -> Option<String> {
    match v.kind() {
        "new_expression" => {
            let w = plain_path(at, v.child_by_field_name("constructor")?)?;
            Some(format!("{w}()"))
        }
        // `x as Foo`: the type is its last child (`as const` has none).
        "as_expression" => written_type(
            at,
            v.named_child(v.named_child_count().checked_sub(1)? as u32)?,
        ),
        // `<Foo>x`: the type in its type arguments.
        "type_assertion" => written_type(at, v.named_child(0)?.named_child(0)?),
        "parenthesized_expression" | "non_null_expression" => value_type(at, v.named_child(0)?),
        // `x.getCache()`, `this.#cache.get(k)`, `f(x)`: `=` and the call as
        // written, typed at resolution from declared return types (feature
        // 28; the walk writes a typed local's type in front: `=<Client>…`).
        "call_expression" => {
            let w = at.text(v);
            (w.len() <= 200 && !w.contains(['\n', '`'])).then(|| format!("={w}"))
        }
        _ => None,
    }
}

fn definition<'t>(at: &At<'t, '_>) -> Option<Def<'t>> {
    match at.kind {
        "method_definition" | "method_signature" | "abstract_method_signature" => {
            let n = at.field("name")?;
            let k = if at.text(n) == "constructor" {
                "constructor"
            } else {
                "method"
            };
            Some(Def::scope(k, n))
        }
        "public_field_definition" | "field_definition" | "property_signature" => {
            let n = at.field("name").or_else(|| at.field("property"))?;
            let is_fn = value_is(at, &["arrow_function", "function_expression", "function"]);
            Some(if is_fn {
                Def::scope("method", n)
            } else {
                Def::leaf("property", n)
            })
        }
        "variable_declarator" => variable(at),
        _ => None,
    }
}

/// Is the `value` field one of these kinds?
fn value_is(at: &At, kinds: &[&str]) -> bool {
    at.field("value").is_some_and(|v| kinds.contains(&v.kind()))
}

/// `const f = () => ...` anywhere; other bindings at module level only.
fn variable<'t>(at: &At<'t, '_>) -> Option<Def<'t>> {
    let n = at.field("name")?;
    if n.kind() != "identifier" {
        return None;
    }
    let function_kinds = [
        "arrow_function",
        "function_expression",
        "function",
        "generator_function",
    ];
    if value_is(at, &function_kinds) {
        return Some(Def::scope("function", n));
    }
    let decl = at.up(0)?;
    // `declare const x: T` (an ambient declaration) is one level deeper.
    let k = if at.up(1).is_some_and(|p| p.kind() == "ambient_declaration") {
        2
    } else {
        1
    };
    let top = at.up(k)?;
    let at_top = top.kind() == "program"
        || (top.kind() == "export_statement"
            && at.up(k + 1).is_some_and(|p| p.kind() == "program"));
    if !at_top || !at.at_top {
        return None;
    }
    let is_const = decl.child(0).is_some_and(|c| at.text(c) == "const");
    Some(Def::leaf(if is_const { "constant" } else { "variable" }, n))
}

/// `extends` / `implements` clauses of classes and interfaces.
fn heritage(at: &At, e: &mut DefEdges) {
    let node = at.node;
    if !matches!(
        node.kind(),
        "class_declaration" | "abstract_class_declaration" | "class" | "interface_declaration"
    ) {
        return;
    }
    let mut c = node.walk();
    for ch in node.named_children(&mut c) {
        match ch.kind() {
            "class_heritage" => {
                let mut c2 = ch.walk();
                for h in ch.named_children(&mut c2) {
                    match h.kind() {
                        "extends_clause" => {
                            if let Some(v) = h.child_by_field_name("value") {
                                e.base("extends", v);
                            }
                        }
                        "implements_clause" => each_type(h, &mut |t| e.base("implements", t)),
                        _ => e.base("extends", h),
                    }
                }
            }
            "extends_type_clause" => each_type(ch, &mut |t| e.base("extends", t)),
            _ => {}
        }
    }
}

fn imports(at: &At) -> Option<Vec<Import>> {
    let l = at.line();
    match at.kind {
        "import_statement" | "export_statement" => Some(vec![Import {
            spec: string_content(at.field("source")?, at.src),
            line: l,
            // `import * as ns from "./x"`: the module under a name of its own.
            alias: namespace_import(at),
        }]),
        // `require("x")` and `import("x")`.
        "call_expression" => {
            let f = at.field("function")?;
            if at.text(f) != "require" && f.kind() != "import" {
                return None;
            }
            let a = at.field("arguments")?.named_child(0)?;
            if a.kind() != "string" {
                return None;
            }
            Some(vec![Import::plain(string_content(a, at.src), l)])
        }
        _ => None,
    }
}

/// `ns` of `import * as ns from "…"` (`export * as ns from` re-exports: no local name).
fn namespace_import(at: &At) -> Option<String> {
    if at.kind != "import_statement" {
        return None;
    }
    let mut c = at.node.walk();
    let clause = at
        .node
        .named_children(&mut c)
        .find(|n| n.kind() == "import_clause")?;
    let mut c = clause.walk();
    let ns = clause
        .named_children(&mut c)
        .find(|n| n.kind() == "namespace_import")?;
    let mut c = ns.walk();
    let id = ns
        .named_children(&mut c)
        .find(|n| n.kind() == "identifier")?;
    Some(at.text(id).to_string())
}
