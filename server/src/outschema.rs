//! Output schemas that clients can validate cheaply.
//!
//! MCP clients re-validate every `structuredContent` against the tool's
//! `outputSchema`. The official Python SDK does it in pure Python with
//! `jsonschema`, at ≈ 6 µs per JSON value the schema descends into: a
//! 50-match grep page with context (≈ 1,800 values) cost 14 ms of client
//! time — more than ripgrep needs for the whole search. So the schemas
//! type the envelope of every result in full (counts, cursors, flags,
//! single nested objects), and describe the items of each result list as
//! an object with its `required` keys plus a `description` listing every
//! field with its type. Validation then costs one step per item, and the
//! field contract is still in the schema for a reader (and in README.md).

use std::sync::Arc;

use rmcp::handler::server::tool::schema_for_output;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde_json::{Map, Value};

/// The output schema of `T` with list items made shallow (see the module
/// doc), which also admits the body of an error result.
pub fn output_schema<T: JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    Arc::new(with_error_body(shallow_items(&schema_for_output::<T>())))
}

/// Admit `{code, message, hint}`, the structured body of an error result
/// (`isError: true`): clients such as the TypeScript SDK validate it
/// against the output schema too. The result's `required` list becomes
/// one branch of an `anyOf`, the error's the other.
fn with_error_body(mut s: JsonObject) -> JsonObject {
    let required = s
        .remove("required")
        .unwrap_or_else(|| Value::Array(Vec::new()));
    if let Some(Value::Object(props)) = s.get_mut("properties") {
        for (k, d) in [
            (
                "code",
                "On an error result only: a stable code, e.g. INVALID_ARGUMENT.",
            ),
            ("message", "On an error result only: what is wrong."),
            (
                "hint",
                "On an error result only (or a result's advice): how to fix the call.",
            ),
        ] {
            props
                .entry(k)
                .or_insert_with(|| serde_json::json!({"type": "string", "description": d}));
        }
    }
    s.insert(
        "anyOf".into(),
        serde_json::json!([{"required": required}, {"required": ["code", "message", "hint"]}]),
    );
    s
}

fn def_name(v: &Value) -> Option<&str> {
    v.get("$ref")?.as_str()?.strip_prefix("#/$defs/")
}

/// `type` of a property schema, as a short word ("integer", "string?",
/// "array of {line, text}", …).
fn type_word(s: &Value, defs: &Map<String, Value>) -> String {
    if let Some(name) = def_name(s) {
        return match defs.get(name) {
            Some(d) => object_word(d),
            _ => "object".into(),
        };
    }
    if let Some(any) = crate::args::alternatives(s) {
        let parts: Vec<String> = any
            .iter()
            .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
            .map(|v| type_word(v, defs))
            .collect();
        let nullable = any.len() > parts.len();
        return format!("{}{}", parts.join(" | "), if nullable { "?" } else { "" });
    }
    let (ty, nullable) = match s.get("type") {
        Some(Value::String(t)) => (t.clone(), false),
        Some(Value::Array(ts)) => {
            let t: Vec<&str> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            (t.join(" | "), t.len() < ts.len())
        }
        _ => ("any".into(), false),
    };
    let ty = if ty == "array" {
        match s.get("items") {
            Some(i) => format!("array of {}", type_word(i, defs)),
            None => ty,
        }
    } else if ty == "object" && s.get("properties").is_some() {
        object_word(s)
    } else {
        ty
    };
    if nullable {
        format!("{ty}?")
    } else {
        ty
    }
}

fn object_word(d: &Value) -> String {
    format!("{{{}}}", field_order(d).join(", "))
}

/// Property names of object schema `d`: the required ones in declaration
/// order, then the optional ones.
fn field_order(d: &Value) -> Vec<&str> {
    let Some(props) = d.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let required: Vec<&str> = d
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut keys: Vec<&str> = required
        .iter()
        .copied()
        .filter(|k| props.contains_key(*k))
        .collect();
    keys.extend(
        props
            .keys()
            .map(String::as_str)
            .filter(|k| !required.contains(k)),
    );
    keys
}

/// The shallow item schema for definition `d`.
fn shallow(d: &Value, defs: &Map<String, Value>) -> Value {
    let mut fields = Vec::new();
    if let Some(props) = d.get("properties").and_then(Value::as_object) {
        let keys = field_order(d);
        for k in keys {
            let v = &props[k];
            let mut f = format!("{k} ({})", type_word(v, defs));
            if let Some(desc) = v.get("description").and_then(Value::as_str) {
                f.push_str(": ");
                f.push_str(desc.trim_end_matches('.'));
            }
            fields.push(f);
        }
    }
    let mut description = d
        .get("description")
        .and_then(Value::as_str)
        .map(|s| format!("{} ", s.trim_end()))
        .unwrap_or_default();
    description.push_str(&format!("Fields: {}.", fields.join("; ")));
    let mut out = Map::new();
    out.insert("type".into(), "object".into());
    if let Some(r) = d.get("required") {
        out.insert("required".into(), r.clone());
    }
    out.insert("description".into(), description.into());
    Value::Object(out)
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(n) = def_name(v) {
                out.push(n.to_string());
            }
            for (k, x) in m {
                if k != "$defs" {
                    collect_refs(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

/// Replace `items: {$ref}` of every top-level array property by a shallow
/// item schema; keep only the `$defs` still referenced.
pub fn shallow_items(schema: &JsonObject) -> JsonObject {
    let mut s = schema.clone();
    let defs = s
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Object(props)) = s.get_mut("properties") {
        for p in props.values_mut() {
            let Some(items) = p.get("items") else {
                continue;
            };
            let Some(d) = def_name(items).and_then(|n| defs.get(n)) else {
                continue;
            };
            let sh = shallow(d, &defs);
            p.as_object_mut().unwrap().insert("items".into(), sh);
        }
    }
    // Keep the definitions still used (transitively).
    let mut keep: Vec<String> = Vec::new();
    let mut todo = Vec::new();
    collect_refs(&Value::Object(s.clone()), &mut todo);
    while let Some(n) = todo.pop() {
        if keep.contains(&n) {
            continue;
        }
        if let Some(d) = defs.get(&n) {
            collect_refs(d, &mut todo);
        }
        keep.push(n);
    }
    if keep.is_empty() {
        s.remove("$defs");
    } else if let Some(Value::Object(d)) = s.get_mut("$defs") {
        d.retain(|k, _| keep.contains(k));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, JsonSchema)]
    struct Ctx {
        line: u64,
        text: String,
    }
    /// One match.
    #[derive(serde::Serialize, JsonSchema)]
    struct Item {
        /// 1-based.
        line: u64,
        path: String,
        note: Option<String>,
        after: Vec<Ctx>,
    }
    #[derive(serde::Serialize, JsonSchema)]
    struct Single {
        a: u64,
    }
    #[derive(serde::Serialize, JsonSchema)]
    struct Out {
        items: Vec<Item>,
        single: Single,
        more: bool,
    }

    #[test]
    fn items_become_shallow_and_unused_defs_go() {
        let s = Value::Object((*output_schema::<Out>()).clone());
        let items = &s["properties"]["items"]["items"];
        assert_eq!(items["type"], "object");
        assert_eq!(
            items["required"],
            serde_json::json!(["line", "path", "note", "after"])
        );
        assert!(items.get("properties").is_none());
        let d = items["description"].as_str().unwrap();
        assert!(
            d.starts_with("One match. Fields: line (integer): 1-based; path (string); "),
            "{d}"
        );
        assert!(d.contains("line (integer): 1-based"), "{d}");
        assert!(d.contains("note (string?)"), "{d}");
        assert!(d.contains("after (array of {line, text})"), "{d}");
        // The single nested object keeps its full, referenced definition.
        let defs = s["$defs"].as_object().unwrap();
        assert!(defs.contains_key("Single"));
        assert!(
            !defs.contains_key("Item") && !defs.contains_key("Ctx"),
            "{defs:?}"
        );
        assert_eq!(s["properties"]["more"]["type"], "boolean");
    }
}
