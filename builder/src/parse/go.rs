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
    bindings,
    receiver_value,
    ..LangRules::NONE
};

/// The type a call's receiver shows when it is a value, not a name
/// (feature 21): `new(T).M()`, `T{}.M()`, `F(x).M()`, `x.N(y).M()`,
/// `(&T{}).M()`.
/// Feature 30: an element (`v.Args[0].Reg()`, `(<-ch).M()`), a type
/// assertion (`w.(Flusher).Flush()`) and a conversion (`(*T)(p).m()`).
fn receiver_value(at: &At, operand: Node) -> Option<String> {
    let mut v = operand;
    while v.kind() == "parenthesized_expression" {
        v = v.named_child(0)?;
    }
    match v.kind() {
        "call_expression"
        | "composite_literal"
        | "unary_expression"
        | "index_expression"
        | "type_assertion_expression" => value_type(at, v),
        _ => None,
    }
}

/// A function's local names and the type each names (feature 19):
/// parameters and the receiver (`t *testing.T`, `s *state`), `var x T`,
/// and `x := T{…}`, `&T{…}`, `new(T)`, `F(…)` / `pkg.F(…)` (written
/// `pkg.F()`: the function's first result; `x.M(…)` of a typed local `x`
/// becomes `(T).M()` where the walk knows `x`), `var x = …` of those; any
/// other value (a map's element, a range's element) names none, so a later
/// `x := m[k]` hides an earlier type. `x := y` and `x := y.f` are written
/// `@y`, `@y.f`: the walk reads them through `y`'s type (feature 20). A
/// function's constants and `case v := <-ch:` bind names of no type shown
/// (feature 22). A function literal's names are its own (the walk gives it
/// a scope).
fn bindings(at: &At) -> Option<Vec<(String, Option<String>)>> {
    let names = |n: Node| -> Vec<String> {
        let mut c = n.walk();
        n.children_by_field_name("name", &mut c)
            .filter(|x| x.kind() == "identifier")
            .map(|x| at.text(x).to_string())
            .collect()
    };
    let each = |ns: Vec<String>, ty: Option<String>| {
        (!ns.is_empty()).then(|| ns.into_iter().map(|n| (n, ty.clone())).collect())
    };
    match at.kind {
        "parameter_declaration" => each(
            names(at.node),
            at.field("type").and_then(|t| go_written(at.text(t))),
        ),
        "variadic_parameter_declaration" => each(names(at.node), None),
        "var_spec" if !at.at_top => {
            let ns = names(at.node);
            if let Some(t) = at.field("type") {
                return each(ns, go_written(at.text(t)));
            }
            let values = at
                .field("value")
                .map(|v| expressions(v))
                .unwrap_or_default();
            let tys = ns.iter().enumerate().map(|(i, _)| {
                (values.len() == ns.len())
                    .then(|| value_type(at, values[i]))
                    .flatten()
            });
            let out: Vec<_> = ns.iter().cloned().zip(tys).collect();
            (!out.is_empty()).then_some(out)
        }
        "short_var_declaration" => {
            let left = expressions(at.field("left")?);
            let right = at
                .field("right")
                .map(|v| expressions(v))
                .unwrap_or_default();
            // `f, err := os.Open(…)`: the first name takes the call's first
            // result; `v, ok := x.(*T)`, `m[k]`, `<-ch` (feature 30) the value.
            let one_call = right.len() == 1 && right[0].kind() == "call_expression";
            let comma_ok = right.len() == 1 && left.len() == 2 && comma_ok(at, right[0]);
            let out: Vec<_> = left
                .iter()
                .enumerate()
                .filter(|(_, l)| l.kind() == "identifier")
                .map(|(i, l)| {
                    let ty = if right.len() == left.len() {
                        value_type(at, right[i])
                    } else if one_call && i == 0 {
                        value_type(at, right[0]).filter(|t| t.ends_with("()"))
                    } else if comma_ok && i == 0 {
                        value_type(at, right[0])
                    } else {
                        None
                    };
                    (at.text(*l).to_string(), ty)
                })
                .collect();
            (!out.is_empty()).then_some(out)
        }
        // A function's constants: its names, not the package's (feature 22).
        "const_spec" if !at.at_top => each(
            names(at.node),
            at.field("type").and_then(|t| go_written(at.text(t))),
        ),
        // `case v := <-ch:` binds the channel's element (feature 30).
        "receive_statement" => {
            let mut c = at.node.walk();
            let declares = at.node.children(&mut c).any(|t| t.kind() == ":=");
            let left = expressions(at.field("left").filter(|_| declares)?);
            let elem = at.field("right").and_then(|r| value_type(at, r));
            let out: Vec<_> = left
                .iter()
                .enumerate()
                .filter(|(_, l)| l.kind() == "identifier")
                .map(|(i, l)| (at.text(*l).to_string(), elem.clone().filter(|_| i == 0)))
                .collect();
            (!out.is_empty()).then_some(out)
        }
        // `for k, v := range xs` (feature 30): `k` is `(xs)[key]` (a map's
        // key, a channel's element; a slice's index is an int), `v` is
        // `(xs)[]`, the element; resolution reads them from `xs`'s type.
        // `for _, v = range xs` assigns names bound before: their types hold.
        "range_clause" => {
            let mut c = at.node.walk();
            if !at.node.children(&mut c).any(|t| t.kind() == ":=") {
                return None;
            }
            let left = expressions(at.field("left")?);
            let of = at.field("right").and_then(|r| value_type(at, r));
            let out: Vec<_> = left
                .iter()
                .enumerate()
                .filter(|(_, l)| l.kind() == "identifier")
                .map(|(i, l)| {
                    let part = ["[key]", "[]"].get(i);
                    let ty = of.as_ref().zip(part).map(|(t, p)| format!("({t}){p}"));
                    (at.text(*l).to_string(), ty)
                })
                .collect();
            (!out.is_empty()).then_some(out)
        }
        // `switch v := x.(type)`: no type shows, but in a case of one type
        // `v` is of that type (feature 30); in `default:` and a case of
        // several types, of none.
        "type_switch_statement" => untyped(at, at.field("alias")?),
        "type_case" | "default_case" => {
            let switch = at.up(0).filter(|s| s.kind() == "type_switch_statement")?;
            let alias = expressions(switch.child_by_field_name("alias")?);
            let mut c = at.node.walk();
            let types: Vec<Node> = at.node.children_by_field_name("type", &mut c).collect();
            let ty = match types[..] {
                [t] if at.text(t) != "nil" => go_written(at.text(t)),
                _ => None,
            };
            let out: Vec<_> = alias
                .iter()
                .filter(|l| l.kind() == "identifier")
                .map(|l| (at.text(*l).to_string(), ty.clone()))
                .collect();
            (!out.is_empty()).then_some(out)
        }
        _ => None,
    }
}

/// `x.(T)`, `m[k]`, `<-ch`: a value a second name can say was there (`v,
/// ok := …`).
fn comma_ok(at: &At, v: Node) -> bool {
    match v.kind() {
        "type_assertion_expression" | "index_expression" => true,
        "unary_expression" => unary_op(at, v) == "<-",
        _ => false,
    }
}

/// A unary expression's operator (`<-`, `&`, `*`), else "".
fn unary_op<'a>(at: &At<'_, 'a>, v: Node) -> &'a str {
    v.child_by_field_name("operator").map_or("", |o| at.text(o))
}

/// The longest type or value form a Go binding keeps (a test table's
/// `[]struct { in string; want *T }` fits).
pub const GO_TYPE_MAX: usize = 200;

/// A Go type as written, on one line: the fields of a `struct {…}` written
/// one per line are separated by `; ` (`[]struct { in string; want *T }`),
/// comments dropped, spaces collapsed (feature 30).
pub fn go_written(t: &str) -> Option<String> {
    let mut s = String::new();
    for line in t.lines() {
        let line = line.find("//").map_or(line, |i| &line[..i]).trim();
        if line.is_empty() {
            continue;
        }
        if !s.is_empty() {
            let joined = s.ends_with(['{', '(', ',', ';']) || line.starts_with(['}', ')']);
            s.push_str(if joined { " " } else { "; " });
        }
        s.push_str(line);
    }
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    (!s.is_empty() && s.len() <= GO_TYPE_MAX).then_some(s)
}

/// The names an expression list binds, none of them typed.
fn untyped(at: &At, left: Node) -> Option<Vec<(String, Option<String>)>> {
    let out: Vec<_> = expressions(left)
        .into_iter()
        .filter(|l| l.kind() == "identifier")
        .map(|l| (at.text(l).to_string(), None))
        .collect();
    (!out.is_empty()).then_some(out)
}

/// The expressions of an `expression_list` (or the one expression).
fn expressions(n: Node) -> Vec<Node> {
    if n.kind() != "expression_list" {
        return vec![n];
    }
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

/// The type a value shows: `T{…}`, `&T{…}`, `new(T)`, or the call `F()` /
/// `pkg.F()` whose first result it is. Feature 30 writes nested values in
/// parentheses for resolution to read: an element `(xs)[]` (`xs[i]`,
/// `<-ch`), a method's result `(v).M()` of a value that is no name
/// (`new(T).M()`, `x.f[0].M()`), a type assertion's type, a conversion's.
fn value_type(at: &At, v: Node) -> Option<String> {
    // A long chain (`b.Add(1).Add(2)…`) is not typed: each link would
    // type all those under it.
    let nested = |n: Node| {
        (n.byte_range().len() <= 2 * GO_TYPE_MAX)
            .then(|| value_type(at, n))
            .flatten()
            .filter(|t| t.len() <= GO_TYPE_MAX)
    };
    match v.kind() {
        "parenthesized_expression" => nested(v.named_child(0)?),
        // An element: `xs[i]`, `<-ch`.
        "index_expression" | "unary_expression"
            if v.kind() == "index_expression" || unary_op(at, v) == "<-" =>
        {
            Some(format!(
                "({})[]",
                nested(v.child_by_field_name("operand")?)?
            ))
        }
        "type_assertion_expression" => go_written(at.text(v.child_by_field_name("type")?)),
        "composite_literal" => go_written(at.text(v.child_by_field_name("type")?)),
        "unary_expression" if unary_op(at, v) == "&" => {
            let operand = v.child_by_field_name("operand")?;
            (operand.kind() == "composite_literal")
                .then(|| value_type(at, operand))?
                .map(|t| format!("*{t}"))
        }
        "call_expression" => {
            let f = v.child_by_field_name("function")?;
            if f.kind() == "identifier" && at.text(f) == "new" {
                let args = v.child_by_field_name("arguments")?;
                let t = args.named_child(0)?;
                return go_written(at.text(t)).map(|t| format!("*{t}"));
            }
            // `make([]T, n)` is a `[]T`; `append(xs, …)` is what `xs` is
            // (feature 30).
            if f.kind() == "identifier" && matches!(at.text(f), "make" | "append") {
                let first = v.child_by_field_name("arguments")?.named_child(0)?;
                return if at.text(f) == "make" {
                    go_written(at.text(first))
                } else {
                    value_type(at, first)
                };
            }
            // `F(…)` / `pkg.F(…)`: the function's first result, which
            // resolution reads from its signature; `x.f.M(…)` through a
            // field of a local (feature 20).
            if selector_chain(f) {
                return Some(format!("{}()", at.text(f)));
            }
            match f.kind() {
                // `new(T).M(…)`, `xs[i].M(…)`: the method's first result
                // of the value's type (feature 30).
                "selector_expression" => {
                    let m = f.child_by_field_name("field")?;
                    let operand = nested(f.child_by_field_name("operand")?)?;
                    Some(format!("({operand}).{}()", at.text(m)))
                }
                // `(*T)(p)`: a conversion (`(f)(x)` may call a function).
                "parenthesized_expression" => {
                    let t = at.text(f.named_child(0)?);
                    let name = t.strip_prefix('*')?;
                    let ok = !name.is_empty()
                        && name.split('.').count() <= 2
                        && name.split('.').all(|w| {
                            !w.is_empty()
                                && w.chars().all(|c| c.is_alphanumeric() || c == '_')
                                && !w.starts_with(|c: char| c.is_ascii_digit())
                        });
                    ok.then(|| t.to_string())
                }
                _ => None,
            }
        }
        // `x`, `x.f`: a local's value or its field's (the walk reads `@…`
        // through the local's type; anything else names none).
        "identifier" | "selector_expression" if selector_chain(v) => {
            Some(format!("@{}", at.text(v)))
        }
        _ => None,
    }
}

/// `x`, `x.f`, `x.f.g`: a name and the fields read through it.
fn selector_chain(n: Node) -> bool {
    match n.kind() {
        "identifier" => true,
        "selector_expression" => {
            n.child_by_field_name("field")
                .is_some_and(|f| f.kind() == "field_identifier")
                && n.child_by_field_name("operand").is_some_and(selector_chain)
        }
        _ => false,
    }
}

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
