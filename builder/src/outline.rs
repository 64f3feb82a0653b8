//! An outline of code in languages without a grammar here (Kotlin, Scala,
//! Swift, Ruby, Elixir, PHP, C#, ...), read from its layout: a definition
//! starts at a line at its block's indentation that neither closes a block
//! (`}`, `end`) nor continues a comment, and it takes the comments and
//! annotations right above it. Chunking ends such a file's windows of lines
//! where a unit starts (`chunk.rs`), and the units that declare a type or a
//! function by a word of their language (`class`, `fun`, `def`, ...) or by
//! their shape (`Task<int> RunAsync(`) are its definitions ([`definitions`]),
//! with the comment above as their doc. No references or calls: those need
//! a grammar.

use crate::chunk::{tokens, MAX_TOKENS};
use crate::ids::stable_id;
use crate::parse::Symbol;

/// Extensions of code whose layout is outlined (languages without a grammar).
const OUTLINED: &[&str] = &[
    "kt", "kts", "scala", "sc", "sbt", "swift", "rb", "rake", "ex", "exs", "php", "cs", "dart",
    "lua", "groovy", "gradle", "fs", "fsx", "zig", "nim", "cr", "jl", "r", "pl", "pm", "erl",
    "hrl", "hs", "ml", "mli", "clj", "cljs", "m", "mm", "vue", "svelte", "sh", "bash", "zsh",
];

/// How deep units nest (file, class, method, ...).
const MAX_DEPTH: usize = 4;

/// True for a file whose code is outlined by [`outline`].
pub fn is_outlined(path: &str) -> bool {
    OUTLINED.contains(&crate::language::extension(path).as_str())
}

/// Words that open a container of definitions (its body is outlined too).
const CONTAINERS: &[&str] = &[
    "class",
    "object",
    "interface",
    "trait",
    "struct",
    "enum",
    "module",
    "defmodule",
    "protocol",
    "extension",
    "impl",
    "namespace",
    "record",
    "companion",
    "actor",
];

/// Words that open a function.
const FUNCTIONS: &[&str] = &[
    "fun",
    "def",
    "defp",
    "defmacro",
    "defmacrop",
    "defdelegate",
    "defguard",
    "func",
    "function",
    "fn",
    "sub",
    "proc",
];

/// Other declaring words, whose next identifier names the unit.
const DECLARES: &[&str] = &[
    "val",
    "var",
    "let",
    "const",
    "type",
    "typealias",
    "alias",
    "given",
    "implicit",
    "macro",
];

/// Words before `(` that are not a function's name.
const CONTROL: &[&str] = &[
    "if", "for", "while", "switch", "catch", "return", "when", "match", "foreach", "using", "lock",
    "fixed", "sizeof", "typeof", "new", "throw", "elseif", "unless", "until", "case",
];

#[derive(Clone, Copy)]
struct Line {
    start: usize,
    end: usize,
    /// Columns of leading whitespace; None for a blank line.
    indent: Option<usize>,
    /// A comment, an annotation or attribute, or a line inside a block
    /// comment or multi-line string: it never starts a unit.
    lead: bool,
    /// Closes or continues a block (`}`, `end`, `else`, `)`): never starts a unit.
    close: bool,
}

fn lines_of(src: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut in_comment = false;
    let mut in_string = false;
    for raw in src.split_inclusive('\n') {
        let start = pos;
        pos += raw.len();
        let body = raw.trim_end();
        let t = body.trim_start();
        let indent = if t.is_empty() {
            None
        } else {
            Some(
                body[..body.len() - t.len()]
                    .chars()
                    .map(|c| if c == '\t' { 4 } else { 1 })
                    .sum(),
            )
        };
        let inside = in_comment || in_string;
        if in_comment {
            if t.contains("*/") {
                in_comment = false;
            }
        } else if !in_string && t.starts_with("/*") && !t.contains("*/") {
            in_comment = true;
        }
        let quotes = t.matches("\"\"\"").count() + t.matches("'''").count();
        let opens_string = quotes % 2 == 1;
        if opens_string {
            in_string = !in_string;
        }
        let lead = inside
            || ["//", "#", "/*", "*", "--", "@", ";", "%", "(*"]
                .iter()
                .any(|p| t.starts_with(p))
            || (opens_string && t.starts_with("\"\"\""));
        let word_end = t
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(t.len());
        let first = &t[..word_end];
        let close = t.starts_with(['}', ')', ']', '>', '.', ',', '|', '&', '+', '?', ':'])
            || matches!(
                first,
                "end"
                    | "else"
                    | "elsif"
                    | "elif"
                    | "rescue"
                    | "ensure"
                    | "catch"
                    | "finally"
                    | "except"
                    | "then"
                    | "do"
                    | "in"
                    | "where"
                    | "with"
                    | "and"
                    | "or"
            );
        out.push(Line {
            start,
            end: pos,
            indent,
            lead,
            close,
        });
    }
    out
}

/// The outline's units of `src`, as symbols for chunking (kind `class`,
/// `function`/`method` or `block`; `name` empty when the head names nothing).
pub fn outline(path: &str, src: &str) -> Vec<Symbol> {
    let lines = lines_of(src);
    let mut out = Vec::new();
    units(path, src, &lines, 0, lines.len(), None, 0, &mut out);
    out
}

/// The units of an [`outline`] that are definitions (symbols table): the
/// named ones that declare a type or a function, with the comment above
/// as doc; a parent that is not one of them is dropped.
pub fn definitions(units: &[Symbol], src: &str) -> Vec<Symbol> {
    let mut out: Vec<Symbol> = units
        .iter()
        .filter(|s| !s.name.is_empty() && s.kind != "block")
        .cloned()
        .collect();
    let ids: std::collections::HashSet<i64> = out.iter().map(|s| s.id).collect();
    for s in &mut out {
        s.doc = doc_of(&src[s.lead_byte as usize..s.start_byte as usize]);
        if s.parent_id.is_some_and(|p| !ids.contains(&p)) {
            s.parent_id = None;
            s.container = None;
        }
    }
    out
}

/// The text of the comments above a definition (`lead`: from its lead to
/// its head), markers stripped; annotations other than Elixir's `@doc`
/// are left out. None when nothing is left.
fn doc_of(lead: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for line in lead.lines() {
        let mut t = line.trim();
        if let Some(rest) = t.strip_prefix('@') {
            let Some(text) = ["doc", "typedoc", "moduledoc"]
                .iter()
                .find_map(|k| rest.strip_prefix(k))
            else {
                continue;
            };
            t = text.trim();
        }
        for p in [
            "/**", "/*!", "/*", "*/", "///", "//!", "//", "#", "--", "\"\"\"", "*",
        ] {
            if let Some(r) = t.strip_prefix(p) {
                t = r.trim_start();
                break;
            }
        }
        let t = t.trim_end_matches("*/").trim_end_matches("\"\"\"").trim();
        if !t.is_empty() || out.last().is_some_and(|l| !l.is_empty()) {
            out.push(t);
        }
    }
    // The first paragraph, at most 300 characters, as a parsed doc.
    let para: Vec<&str> = out
        .iter()
        .copied()
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    let doc: String = para.join(" ").chars().take(300).collect();
    (!doc.is_empty()).then_some(doc)
}

/// Units of lines `[lo, hi)` at their smallest indentation, and recursively
/// those inside a container or inside a unit too big for one chunk.
#[allow(clippy::too_many_arguments)]
fn units(
    path: &str,
    src: &str,
    lines: &[Line],
    lo: usize,
    hi: usize,
    parent: Option<(i64, &str)>,
    depth: usize,
    out: &mut Vec<Symbol>,
) {
    let Some(base) = lines[lo..hi]
        .iter()
        .filter(|l| !l.lead && !l.close)
        .filter_map(|l| l.indent)
        .min()
    else {
        return;
    };
    // Heads: lines at the base indentation that start something.
    let mut heads: Vec<usize> = Vec::new();
    let mut prev_code: Option<&str> = None;
    for (i, l) in lines.iter().enumerate().take(hi).skip(lo) {
        if l.indent.is_none() || l.lead {
            continue;
        }
        let text = src[l.start..l.end].trim();
        let continues = prev_code.is_some_and(|p| {
            p.ends_with([',', '(', '[', '=', '+', '\\', '.', '|', '&'])
                || p.ends_with("->")
                || p.ends_with("=>")
        });
        if l.indent == Some(base) && !l.close && !continues {
            heads.push(i);
        }
        prev_code = Some(text);
    }
    // Each head takes the comments and annotations right above it.
    let leads: Vec<usize> = heads
        .iter()
        .map(|&h| {
            let mut j = h;
            while j > lo && lines[j - 1].lead && lines[j - 1].indent.is_some() {
                j -= 1;
            }
            j
        })
        .collect();
    for (k, &h) in heads.iter().enumerate() {
        let lead = leads[k].max(if k > 0 { heads[k - 1] + 1 } else { lo });
        let mut end_line = if k + 1 < heads.len() {
            leads[k + 1].max(h + 1)
        } else {
            hi
        };
        while end_line > h + 1 && lines[end_line - 1].indent.is_none() {
            end_line -= 1;
        }
        let head = src[lines[h].start..lines[h].end].trim();
        let (kind, name) = classify(head, parent.is_some());
        let qualified = match (parent, name.is_empty()) {
            (Some((_, p)), false) if !p.is_empty() => format!("{p}.{name}"),
            _ => name.clone(),
        };
        let start_byte = lines[h].start;
        let end_byte = lines[end_line - 1].end;
        let id = stable_id(&[
            b"outline",
            path.as_bytes(),
            start_byte.to_string().as_bytes(),
        ]);
        let signature: String = head
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(300)
            .collect();
        out.push(Symbol {
            id,
            name,
            qualified_name: qualified.clone(),
            kind,
            container: parent.map(|(_, p)| p.to_string()),
            parent_id: parent.map(|(p, _)| p),
            signature,
            doc: None,
            start_line: h as u32 + 1,
            end_line: end_line as u32,
            start_byte: start_byte as u64,
            end_byte: end_byte as u64,
            name_line: h as u32 + 1,
            lead_byte: lines[lead].start as u64,
        });
        let big = tokens(end_byte - start_byte) > MAX_TOKENS;
        if depth + 1 < MAX_DEPTH && end_line > h + 1 && (kind == "class" || big) {
            units(
                path,
                src,
                lines,
                h + 1,
                end_line,
                Some((id, &qualified)),
                depth + 1,
                out,
            );
        }
    }
}

/// The kind and name a head line declares (`fun <T> Scope.launch(` →
/// function `launch`; `public static void main(` → function `main`).
fn classify(head: &str, nested: bool) -> (&'static str, String) {
    let func = if nested { "method" } else { "function" };
    let words: Vec<&str> = head
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '<' || c == '>'))
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        let kind = if CONTAINERS.contains(w) {
            "class"
        } else if FUNCTIONS.contains(w) {
            func
        } else if DECLARES.contains(w) {
            "block"
        } else {
            continue;
        };
        // The next word that is a name (generic parameters skipped).
        let name = words[i + 1..]
            .iter()
            .map(|n| n.trim_start_matches("self."))
            .find(|n| !n.starts_with('<') && !CONTAINERS.contains(n) && !FUNCTIONS.contains(n))
            .map(|n| {
                let n = n.split('<').next().unwrap_or(n);
                n.rsplit('.').next().unwrap_or(n).to_string()
            })
            .filter(|n| {
                n.chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
            })
            .unwrap_or_default();
        return (kind, name);
    }
    // No declaring word: the identifier before the first `(`, as in C#
    // or Dart (`public Task<int> RunAsync(`), unless it is a keyword.
    if let Some(p) = head.find('(') {
        let before = head[..p].trim_end();
        let name: String = before
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if !name.is_empty()
            && name
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
            && !CONTROL.contains(&name.as_str())
            && before.len() > name.len()
        {
            return (func, name);
        }
    }
    ("block", String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heads(src: &str) -> Vec<(String, &'static str, u32, u32, Option<i64>)> {
        outline("x", src)
            .into_iter()
            .map(|s| {
                (
                    s.qualified_name,
                    s.kind,
                    s.start_line,
                    s.end_line,
                    s.parent_id,
                )
            })
            .collect()
    }

    #[test]
    fn kotlin_units_take_their_docs() {
        let src = "package a\n\nimport b.C\n\n/**\n * Starts it.\n */\n@JvmName(\"x\")\npublic fun <T> CoroutineScope.launch(\n    block: () -> T\n): Job {\n    return x\n}\n\nclass Foo(val a: Int) {\n    // one\n    fun bar() = 1\n\n    fun baz() {\n        if (x) {\n        }\n    }\n}\n";
        let o = outline("x.kt", src);
        let got: Vec<(&str, &str, u32, u32)> = o
            .iter()
            .map(|s| (s.qualified_name.as_str(), s.kind, s.start_line, s.end_line))
            .collect();
        assert_eq!(
            got,
            vec![
                ("", "block", 1, 1),
                ("", "block", 3, 3),
                ("launch", "function", 9, 13),
                ("Foo", "class", 15, 23),
                ("Foo.bar", "method", 17, 17),
                ("Foo.baz", "method", 19, 23),
            ]
        );
        // The doc comment and the annotation lead the function.
        let launch = &o[2];
        assert_eq!(&src[launch.lead_byte as usize..][..3], "/**");
        let bar = &o[4];
        assert!(src[bar.lead_byte as usize..].starts_with("    // one"));
    }

    #[test]
    fn ruby_and_elixir_blocks_close_with_end() {
        let src = "module Sinatra\n  class Base\n    # Routes.\n    def self.route(verb, path)\n      x\n    end\n\n    def call(env)\n      y\n    end\n  end\nend\n";
        let h = heads(src);
        let names: Vec<&str> = h.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "Sinatra",
                "Sinatra.Base",
                "Sinatra.Base.route",
                "Sinatra.Base.call"
            ]
        );
        assert_eq!((h[2].2, h[2].3), (4, 6));
        let ex = "defmodule Phoenix.Router do\n  @moduledoc \"\"\"\n  Routes.\n\n  More.\n  \"\"\"\n\n  @doc \"\"\"\n  Matches.\n  \"\"\"\n  def match(conn) do\n    conn\n  end\nend\n";
        let o = outline("r.ex", ex);
        let m = o.iter().find(|s| s.name == "match").unwrap();
        assert_eq!(m.qualified_name, "Router.match");
        assert_eq!(m.start_line, 11);
        assert!(ex[m.lead_byte as usize..].starts_with("  @doc"));
        // The moduledoc's text lines are not units.
        assert!(o.iter().all(|s| !s.signature.starts_with("Routes")));
    }

    #[test]
    fn docs_come_from_the_comments_above() {
        assert_eq!(
            doc_of("/**\n * Starts it.\n *\n * More.\n */\n@JvmName(\"x\")\n").as_deref(),
            Some("Starts it.")
        );
        assert_eq!(
            doc_of("  @doc \"\"\"\n  Matches.\n  \"\"\"\n  @spec m() :: t\n").as_deref(),
            Some("Matches.")
        );
        assert_eq!(doc_of("# Routes.\n").as_deref(), Some("Routes."));
        assert_eq!(doc_of("@Override\n"), None);
    }

    #[test]
    fn csharp_methods_named_by_their_call_shape() {
        assert_eq!(
            classify("public async Task<int> RunAsync(int x)", true),
            ("method", "RunAsync".to_string())
        );
        assert_eq!(classify("if (x) {", false), ("block", String::new()));
        assert_eq!(
            classify("case class Point(x: Int)", false),
            ("class", "Point".to_string())
        );
        assert_eq!(
            classify("extension Foo: Bar {", false),
            ("class", "Foo".to_string())
        );
    }

    #[test]
    fn only_code_extensions_are_outlined() {
        assert!(is_outlined("a/B.kt") && is_outlined("x.RB") && is_outlined("y.swift"));
        assert!(!is_outlined("notes.txt") && !is_outlined("Makefile") && !is_outlined("a.json"));
    }
}
