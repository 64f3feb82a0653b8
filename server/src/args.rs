//! Tool arguments checked against the tool's own input schema before any
//! work, so every malformed call is an `INVALID_ARGUMENT` naming the field,
//! its type and its valid range (rmcp's deserializer would answer with an
//! uncoded "failed to deserialize parameters"). The schemas published to
//! clients are cleaned of schemars' non-standard `format`s (`uint32`,
//! `uint64`, …), whose ranges move into `minimum`/`maximum`.

use serde_json::{Map, Value};

use crate::error::ToolError;

/// Longest string argument, in characters, unless the schema sets `maxLength`.
pub const MAX_STRING_LEN: usize = 16 * 1024;
/// Most items of an array argument (e.g. globs).
pub const MAX_ARRAY_ITEMS: usize = 256;

/// JSON Schema's own formats (draft 2020-12); any other is removed.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Remove non-standard `format`s from a schema (recursively), keeping the
/// range they stood for as `minimum`/`maximum`.
pub fn clean_schema(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(f) = m.get("format").and_then(Value::as_str).map(str::to_string) {
                if !STANDARD_FORMATS.contains(&f.as_str()) {
                    m.remove("format");
                    let (lo, hi): (Option<i128>, Option<i128>) = match f.as_str() {
                        "uint8" => (Some(0), Some(u8::MAX as i128)),
                        "uint16" => (Some(0), Some(u16::MAX as i128)),
                        "uint32" => (Some(0), Some(u32::MAX as i128)),
                        "uint64" | "uint" => (Some(0), Some(u64::MAX as i128)),
                        "int32" => (Some(i32::MIN as i128), Some(i32::MAX as i128)),
                        _ => (None, None),
                    };
                    // JSON numbers above 2^53 are not exact in every client: keep
                    // the bound only where it is.
                    let exact = |x: i128| x.abs() <= (1i128 << 53);
                    if let Some(lo) = lo.filter(|&x| exact(x)) {
                        m.entry("minimum").or_insert(Value::from(lo as i64));
                    }
                    if let Some(hi) = hi.filter(|&x| exact(x)) {
                        m.entry("maximum").or_insert(Value::from(hi as i64));
                    }
                }
            }
            for (_, x) in m.iter_mut() {
                clean_schema(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(clean_schema),
        _ => {}
    }
}

/// Check `args` against the object schema `schema` of tool `tool`. An
/// integral float where an integer is asked (`5.0`, as some clients send
/// numbers) is rewritten as that integer.
pub fn check(tool: &str, schema: &Value, args: &mut Map<String, Value>) -> Result<(), ToolError> {
    let root = schema;
    let no_props = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&no_props);
    for k in args.keys() {
        if !props.contains_key(k) {
            let valid: Vec<&str> = props.keys().map(String::as_str).collect();
            return Err(ToolError::invalid_argument(
                format!("{tool} has no parameter `{}`", clip(k, 60)),
                if valid.is_empty() {
                    format!("{tool} takes no arguments: pass {{}}")
                } else {
                    format!("valid parameters: {}", valid.join(", "))
                },
            ));
        }
    }
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        for r in req.iter().filter_map(Value::as_str) {
            if args.get(r).is_none_or(Value::is_null) {
                let want = props.get(r).map(|p| describe(p, root)).unwrap_or_default();
                return Err(ToolError::invalid_argument(
                    format!("{tool} needs `{r}`"),
                    format!("pass `{r}`: {want}"),
                ));
            }
        }
    }
    for (k, v) in args.iter_mut() {
        integral(v, &props[k], root);
        check_value(k, v, &props[k], root).map_err(|e| with_description(e, &props[k]))?;
    }
    Ok(())
}

/// The parameter's own description after the hint (it names the valid
/// values and where to go instead: "0..=20; read_file shows more").
fn with_description(e: ToolError, prop: &Value) -> ToolError {
    match prop.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => ToolError {
            hint: format!("{} ({})", e.hint, clip(d.trim_end_matches('.'), 300)),
            ..e
        },
        _ => e,
    }
}

/// `5.0` → `5` where schema `s` takes an integer.
fn integral(v: &mut Value, s: &Value, root: &Value) {
    let s = resolve(s, root);
    let takes_int = types_of(s).contains(&"integer")
        || s.get("anyOf").and_then(Value::as_array).is_some_and(|a| {
            a.iter()
                .any(|b| types_of(resolve(b, root)).contains(&"integer"))
        });
    if let (true, Value::Number(n)) = (takes_int, &*v) {
        if let Some(f) = n
            .as_f64()
            .filter(|f| !n.is_i64() && !n.is_u64() && f.fract() == 0.0)
        {
            if f.abs() < 9e15 {
                *v = Value::from(f as i64);
            }
        }
    }
}

/// Resolve a local `$ref`.
fn resolve<'a>(s: &'a Value, root: &'a Value) -> &'a Value {
    match s.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/")
            .and_then(|p| p.split('/').try_fold(root, |v, k| v.get(k)))
            .unwrap_or(s),
        None => s,
    }
}

fn types_of(s: &Value) -> Vec<&str> {
    match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The branches of an `anyOf`/`oneOf` schema (`None`: not one).
pub fn alternatives(s: &Value) -> Option<&Vec<Value>> {
    s.get("anyOf")
        .or_else(|| s.get("oneOf"))
        .and_then(Value::as_array)
}

/// A short description of what schema `s` accepts: "an integer in 1..=1000".
pub fn describe(s: &Value, root: &Value) -> String {
    let s = resolve(s, root);
    if let Some(any) = alternatives(s) {
        let parts: Vec<String> = any
            .iter()
            .filter(|b| types_of(resolve(b, root)) != ["null"])
            .map(|b| describe(b, root))
            .collect();
        return parts.join(" or ");
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        let vals: Vec<String> = e
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| v.to_string())
            .collect();
        return format!("one of {}", vals.join(", "));
    }
    let ts: Vec<&str> = types_of(s).into_iter().filter(|t| *t != "null").collect();
    match ts.first().copied() {
        Some("integer") | Some("number") => {
            let lo = s.get("minimum").and_then(Value::as_i64);
            let hi = s.get("maximum").and_then(Value::as_i64);
            let what = if ts[0] == "integer" {
                "an integer"
            } else {
                "a number"
            };
            match (lo, hi) {
                (Some(lo), Some(hi)) if hi < 1 << 32 => format!("{what} in {lo}..={hi}"),
                (Some(lo), _) => format!("{what} ≥ {lo}"),
                (None, Some(hi)) => format!("{what} ≤ {hi}"),
                _ => what.to_string(),
            }
        }
        Some("string") => "a string".into(),
        Some("boolean") => "true or false".into(),
        Some("array") => match s.get("items") {
            Some(i) => format!("an array of {}", plural(&describe(i, root))),
            None => "an array".into(),
        },
        Some("object") => "an object".into(),
        _ => "a value".into(),
    }
}

fn plural(d: &str) -> String {
    d.strip_prefix("a ")
        .or_else(|| d.strip_prefix("an "))
        .map(|x| format!("{x}s"))
        .unwrap_or_else(|| d.to_string())
}

fn kind_of(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("the string {:?}", clip(s, 40)),
        Value::Array(a) => format!("an array of {}", a.len()),
        Value::Object(_) => "an object".into(),
    }
}

fn clip(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Does `v` fit `s`? (the error says why not)
fn check_value(name: &str, v: &Value, s: &Value, root: &Value) -> Result<(), ToolError> {
    let s = resolve(s, root);
    let bad = || {
        ToolError::invalid_argument(
            format!("`{name}` must be {}; got {}", describe(s, root), kind_of(v)),
            format!(
                "pass `{name}` as {}, or leave it out for the default",
                describe(s, root)
            ),
        )
    };
    if let Some(any) = alternatives(s) {
        // The first branch of the value's type decides, so a range error is
        // reported as such rather than as "must be X or Y".
        let mut fit = None;
        for b in any {
            match check_value(name, v, b, root) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    if type_fits(v, resolve(b, root)) && fit.is_none() {
                        fit = Some(e);
                    }
                }
            }
        }
        return Err(fit.unwrap_or_else(bad));
    }
    let ts = types_of(s);
    if ts.is_empty() {
        return Ok(());
    }
    if !type_fits(v, s) {
        return Err(bad());
    }
    match v {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            let lo = s.get("minimum").and_then(Value::as_f64);
            let hi = s.get("maximum").and_then(Value::as_f64);
            if lo.is_some_and(|lo| x < lo) || hi.is_some_and(|hi| x > hi) || x.is_nan() {
                return Err(ToolError::invalid_argument(
                    format!("`{name}` {n} is out of range"),
                    format!("`{name}` must be {}", describe(s, root)),
                ));
            }
        }
        Value::String(t) => {
            let max = s
                .get("maxLength")
                .and_then(Value::as_u64)
                .map_or(MAX_STRING_LEN, |m| m as usize);
            let n = t.chars().count();
            if n > max {
                return Err(ToolError::invalid_argument(
                    format!("`{name}` is {n} characters; the limit is {max}"),
                    format!("shorten `{name}`"),
                ));
            }
            if t.contains('\0') {
                return Err(ToolError::invalid_argument(
                    format!("`{name}` contains a NUL character"),
                    format!("remove the NUL (\\u0000) from `{name}`"),
                ));
            }
        }
        Value::Array(a) => {
            if a.len() > MAX_ARRAY_ITEMS {
                return Err(ToolError::invalid_argument(
                    format!(
                        "`{name}` has {} items; the limit is {MAX_ARRAY_ITEMS}",
                        a.len()
                    ),
                    format!("pass fewer `{name}` items"),
                ));
            }
            if let Some(items) = s.get("items") {
                for (i, x) in a.iter().enumerate() {
                    check_value(&format!("{name}[{i}]"), x, items, root)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Is `v` of one of the types `s` allows (an integer where `integer` is asked)?
fn type_fits(v: &Value, s: &Value) -> bool {
    let ts = types_of(s);
    if ts.is_empty() {
        return true;
    }
    ts.iter().any(|t| match (*t, v) {
        ("null", Value::Null) => true,
        ("boolean", Value::Bool(_)) => true,
        ("string", Value::String(_)) => true,
        ("array", Value::Array(_)) => true,
        ("object", Value::Object(_)) => true,
        ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    })
}

/// A repo-relative `path` argument: not absolute, not leaving the repo.
pub(crate) fn check_path(p: &str) -> Result<(), ToolError> {
    let bad = |why: &str| {
        ToolError::invalid_argument(
            format!("path {p:?} {why}"),
            "paths are relative to the repository root, e.g. \"src/app.py\" or \"src/\" (see search_files)",
        )
    };
    if p.starts_with('/')
        || p.starts_with('\\')
        || p.get(1..3) == Some(":\\")
        || p.get(1..3) == Some(":/")
    {
        return Err(bad("is absolute"));
    }
    let mut depth = 0i32;
    for part in p.split(['/', '\\']) {
        match part {
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return Err(bad("leaves the repository"));
                }
            }
            "" | "." => {}
            _ => depth += 1,
        }
    }
    Ok(())
}

/// A checked `path` in the form the snapshot stores: `/` separators, no
/// `.`, `..` or empty segments (`./src\\net//http` is `src/net/http`); a
/// trailing `/` is kept, since it asks for a directory.
pub(crate) fn normalize_path(p: &str) -> String {
    let p = p.replace('\\', "/");
    let dir = p.ends_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for s in p.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let mut out = parts.join("/");
    if dir && !out.is_empty() {
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        let mut s = json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 1, "maximum": 1000},
                "max_count": {"type": ["integer", "null"], "format": "uint64", "minimum": 0},
                "flag": {"type": ["boolean", "null"]},
                "glob": {"anyOf": [{"$ref": "#/$defs/OneOrMany"}, {"type": "null"}]}
            },
            "required": ["pattern"],
            "$defs": {"OneOrMany": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}}
        });
        clean_schema(&mut s);
        s
    }

    fn err(mut args: Value) -> ToolError {
        check("grep", &schema(), args.as_object_mut().unwrap()).unwrap_err()
    }

    #[test]
    fn formats_become_ranges() {
        let s = schema();
        assert!(!s.to_string().contains("uint"));
        assert_eq!(s["properties"]["limit"]["maximum"], 1000);
        assert_eq!(s["properties"]["max_count"]["minimum"], 0);
        // u64::MAX is not exact in a JSON number: no maximum.
        assert!(s["properties"]["max_count"].get("maximum").is_none());
    }

    #[test]
    fn good_calls_pass() {
        for a in [
            json!({"pattern": "x"}),
            json!({"pattern": "x", "limit": 5, "glob": "*.py", "flag": null}),
            json!({"pattern": "x", "glob": ["a", "!b"], "limit": 1000.0}),
        ] {
            let mut a = a;
            check("grep", &schema(), a.as_object_mut().unwrap()).unwrap();
            if let Some(l) = a.get("limit").filter(|l| !l.is_null()) {
                assert!(l.is_u64(), "{l}");
            }
        }
    }

    #[test]
    fn bad_calls_name_the_field_and_range() {
        let e = err(json!({}));
        assert!(
            e.message.contains("`pattern`") && e.hint.contains("a string"),
            "{e}"
        );
        let e = err(json!({"pattern": 3}));
        assert!(e.message.contains("must be a string; got 3"), "{e}");
        let e = err(json!({"pattern": "x", "limit": -5}));
        assert!(
            e.message.contains("out of range") && e.hint.contains("1..=1000"),
            "{e}"
        );
        let e = err(json!({"pattern": "x", "limit": 1e12}));
        assert!(e.message.contains("out of range"), "{e}");
        let e = err(json!({"pattern": "x", "limit": 1e300}));
        assert!(e.message.contains("an integer in 1..=1000"), "{e}");
        let e = err(json!({"pattern": "x", "limit": 2.5}));
        assert!(e.message.contains("an integer in 1..=1000"), "{e}");
        let e = err(json!({"pattern": "x", "limit": "10"}));
        assert!(e.message.contains("the string \"10\""), "{e}");
        let e = err(json!({"pattern": "x", "glob": [1]}));
        assert!(e.message.contains("`glob[0]`"), "{e}");
        let e = err(json!({"pattern": "x", "glob": {"a": 1}}));
        assert!(e.message.contains("a string or an array of strings"), "{e}");
        let e = err(json!({"pattern": "x", "querry": 1}));
        assert!(
            e.message.contains("`querry`") && e.hint.contains("pattern"),
            "{e}"
        );
        let e = err(json!({"pattern": "x".repeat(MAX_STRING_LEN + 1)}));
        assert!(e.message.contains("the limit is 16384"), "{e}");
        let e = err(json!({"pattern": "a\u{0}b"}));
        assert!(e.message.contains("NUL"), "{e}");
        let e = err(json!({"pattern": "x", "glob": vec!["*"; MAX_ARRAY_ITEMS + 1]}));
        assert!(e.message.contains("items"), "{e}");
    }
}

#[cfg(test)]
mod path_tests {
    use super::*;
    use crate::error::codes;
    use code_index_schemas::fuzz;
    use proptest::prelude::*;

    /// Where `p` lands from a repo root, or None when it climbs above it.
    fn depth_after(p: &str) -> Option<usize> {
        let mut d: Vec<&str> = Vec::new();
        for part in p.split(['/', '\\']) {
            match part {
                "" | "." => {}
                ".." => {
                    d.pop()?;
                }
                x => d.push(x),
            }
        }
        Some(d.len())
    }

    #[test]
    fn fuzz_path_arguments() {
        for p in [
            "/etc",
            "..",
            "a/../..",
            "C:\\x",
            "\\\\server\\share",
            "a/./../b",
        ] {
            let _ = check_path(p);
        }
        assert!(check_path("a/../..").is_err() && check_path("a/./../b").is_ok());
        for (p, n) in [
            ("./src/net/http", "src/net/http"),
            ("src\\net\\http\\", "src/net/http/"),
            (".//a/./b//c.go", "a/b/c.go"),
            ("a/../b", "b"),
            ("./", ""),
            ("src/", "src/"),
        ] {
            assert_eq!(normalize_path(p), n, "{p:?}");
        }
        let part = prop_oneof![
            Just("..".to_string()),
            Just(".".to_string()),
            Just("".to_string()),
            "[a-z]{1,3}",
            any::<String>(),
        ];
        let path = (
            prop::collection::vec(part, 0..8),
            prop::sample::select(vec!["/", "\\"]),
            any::<bool>(),
        )
            .prop_map(|(v, sep, lead)| format!("{}{}", if lead { sep } else { "" }, v.join(sep)));
        fuzz::run("path_arguments", path, |p| {
            let absolute = p.starts_with('/') || p.starts_with('\\');
            match check_path(&p) {
                Ok(()) => {
                    prop_assert!(!absolute);
                    prop_assert!(depth_after(&p).is_some(), "{p:?} leaves the repo");
                    let n = normalize_path(&p);
                    prop_assert!(!n.starts_with('/') && !n.contains('\\') && !n.contains("//"));
                    let trimmed = n.trim_end_matches('/');
                    prop_assert!(!trimmed.split('/').any(|x| x == "." || x == ".."), "{n:?}");
                    prop_assert_eq!(normalize_path(&n), n.clone());
                    prop_assert!(check_path(&n).is_ok());
                }
                Err(e) => {
                    prop_assert_eq!(e.code, codes::INVALID_ARGUMENT);
                    prop_assert!(
                        absolute
                            || depth_after(&p).is_none()
                            || p.get(1..3).is_some_and(|x| x.starts_with(':'))
                    );
                }
            }
            Ok(())
        });
    }
}
