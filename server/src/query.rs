//! The `search` query language (Zoekt-like): text is parsed into a tree,
//! simplified, and only then evaluated, file by file.
//!
//! ```text
//! query   = or
//! or      = and ("or" and)*
//! and     = unary+
//! unary   = "-" unary | "(" or ")" | atom
//! atom    = [field ":"] (word | "quoted string")
//! fields  = repo: file: lang: sym: case: regex: content:
//! ```
//! A bare word or quoted string is a literal substring of the content;
//! `regex:` a content regex; `file:` a regex on the path; `sym:` a
//! definition whose name contains the text; `case:yes|no|auto` sets case
//! sensitivity for the content atoms (auto = smart case).

use crate::error::{codes, ToolError};

pub const FIELDS: &[&str] = &["repo", "file", "lang", "sym", "case", "regex", "content"];

/// Longest query, in bytes (checked before any work).
pub const MAX_QUERY_BYTES: usize = 4096;
/// Most terms (atoms) in one query.
pub const MAX_TERMS: usize = 64;
/// Deepest nesting of parentheses and negations.
pub const MAX_DEPTH: usize = 16;

#[derive(Clone, Debug, PartialEq)]
pub enum Atom {
    Repo(String),
    File(String),
    Lang(String),
    Sym(String),
    /// Content: a literal (`regex: false`) or a regex.
    Content {
        text: String,
        regex: bool,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Atom(Atom),
    Not(Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Case {
    Yes,
    No,
    Auto,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub expr: Expr,
    pub case: Case,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    LParen,
    RParen,
    Neg,
    Or,
    Term {
        field: Option<String>,
        value: String,
    },
}

fn tokenize(s: &str) -> Result<Vec<Tok>, ToolError> {
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    let read_quoted = |i: &mut usize| -> Result<String, ToolError> {
        // chars[*i] == '"'
        *i += 1;
        let mut v = String::new();
        while *i < chars.len() {
            match chars[*i] {
                '\\' if *i + 1 < chars.len() => {
                    v.push(chars[*i + 1]);
                    *i += 2;
                }
                '"' => {
                    *i += 1;
                    return Ok(v);
                }
                c => {
                    v.push(c);
                    *i += 1;
                }
            }
        }
        Err(ToolError::invalid_argument(
            "unterminated quoted string",
            "close the string with \" (escape a quote inside as \\\")",
        ))
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '(' {
            out.push(Tok::LParen);
            i += 1;
        } else if c == ')' {
            out.push(Tok::RParen);
            i += 1;
        } else if c == '-' && i + 1 < chars.len() && !chars[i + 1].is_whitespace() {
            out.push(Tok::Neg);
            i += 1;
        } else if c == '"' {
            let v = read_quoted(&mut i)?;
            out.push(Tok::Term {
                field: None,
                value: v,
            });
        } else {
            let start = i;
            while i < chars.len()
                && !chars[i].is_whitespace()
                && chars[i] != ')'
                && chars[i] != '('
                && chars[i] != '"'
            {
                if chars[i] == ':' {
                    break;
                }
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let is_field = i < chars.len()
                && chars[i] == ':'
                && chars.get(i + 1) != Some(&':')
                && !word.is_empty()
                && word.chars().all(|c| c.is_ascii_alphabetic());
            if is_field {
                i += 1;
                let value = if i < chars.len() && chars[i] == '"' {
                    read_quoted(&mut i)?
                } else {
                    let vs = i;
                    let mut depth = 0i32;
                    while i < chars.len() && !chars[i].is_whitespace() {
                        // Parentheses inside a value (regexes) are kept when balanced.
                        match chars[i] {
                            '(' => depth += 1,
                            ')' if depth == 0 => break,
                            ')' => depth -= 1,
                            _ => {}
                        }
                        i += 1;
                    }
                    chars[vs..i].iter().collect()
                };
                out.push(Tok::Term {
                    field: Some(word.to_ascii_lowercase()),
                    value,
                });
            } else {
                // A bare word (may contain ':' later, e.g. "std::vec").
                while i < chars.len()
                    && !chars[i].is_whitespace()
                    && chars[i] != ')'
                    && chars[i] != '('
                {
                    i += 1;
                }
                let w: String = chars[start..i].iter().collect();
                if w.eq_ignore_ascii_case("or") {
                    out.push(Tok::Or);
                } else {
                    out.push(Tok::Term {
                        field: None,
                        value: w,
                    });
                }
            }
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    case: Option<Case>,
    /// Parentheses and negations open around the current token.
    depth: usize,
    /// Terms parsed so far.
    terms: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn or(&mut self) -> Result<Option<Expr>, ToolError> {
        let mut parts = Vec::new();
        if let Some(e) = self.and()? {
            parts.push(e);
        }
        while self.peek() == Some(&Tok::Or) {
            self.pos += 1;
            match self.and()? {
                Some(e) => parts.push(e),
                None => {
                    return Err(ToolError::invalid_argument(
                        "`or` needs a term on both sides",
                        "e.g. \"foo or bar\"",
                    ))
                }
            }
        }
        Ok(match parts.len() {
            0 => None,
            1 => parts.pop(),
            _ => Some(Expr::Or(parts)),
        })
    }

    fn and(&mut self) -> Result<Option<Expr>, ToolError> {
        let mut parts = Vec::new();
        while let Some(t) = self.peek() {
            if matches!(t, Tok::Or | Tok::RParen) {
                break;
            }
            if let Some(e) = self.unary()? {
                parts.push(e);
            }
        }
        Ok(match parts.len() {
            0 => None,
            1 => parts.pop(),
            _ => Some(Expr::And(parts)),
        })
    }

    fn unary(&mut self) -> Result<Option<Expr>, ToolError> {
        self.depth += 1;
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> Result<Option<Expr>, ToolError> {
        if self.depth > MAX_DEPTH {
            return Err(ToolError::new(
                codes::QUERY_TOO_COMPLEX,
                format!("the query nests parentheses and negations deeper than {MAX_DEPTH}"),
                "flatten the query: `a b` is already an and, `a or b or c` needs no parentheses",
            ));
        }
        match self.toks.get(self.pos).cloned() {
            Some(Tok::Neg) => {
                self.pos += 1;
                match self.unary()? {
                    Some(e) => Ok(Some(Expr::Not(Box::new(e)))),
                    None => Err(ToolError::invalid_argument(
                        "`-` must precede a term",
                        "e.g. \"-file:test\"",
                    )),
                }
            }
            Some(Tok::LParen) => {
                self.pos += 1;
                let e = self.or()?;
                if self.peek() != Some(&Tok::RParen) {
                    return Err(ToolError::invalid_argument(
                        "unbalanced parentheses",
                        "close every ( with )",
                    ));
                }
                self.pos += 1;
                Ok(e)
            }
            Some(Tok::Term { field, value }) => {
                self.pos += 1;
                self.terms += 1;
                if self.terms > MAX_TERMS {
                    return Err(ToolError::new(
                        codes::QUERY_TOO_COMPLEX,
                        format!("the query has more than {MAX_TERMS} terms"),
                        "split it into several searches, or use one regex: term (regex:\"a|b|c\") for many alternatives",
                    ));
                }
                self.atom(field, value)
            }
            Some(Tok::RParen) => Err(ToolError::invalid_argument(
                "unbalanced parentheses",
                "remove the extra )",
            )),
            Some(Tok::Or) | None => Ok(None),
        }
    }

    fn atom(&mut self, field: Option<String>, value: String) -> Result<Option<Expr>, ToolError> {
        let field = match field {
            None => {
                return Ok(Some(Expr::Atom(Atom::Content {
                    text: value,
                    regex: false,
                })))
            }
            Some(f) => f,
        };
        if !FIELDS.contains(&field.as_str()) {
            return Err(unknown_field(&field, &value));
        }
        if value.is_empty() {
            return Err(ToolError::invalid_argument(
                format!("`{field}:` needs a value"),
                format!("e.g. {field}:something"),
            ));
        }
        let a = match field.as_str() {
            "repo" => Atom::Repo(value),
            "file" => Atom::File(value),
            "lang" => Atom::Lang(value.to_ascii_lowercase()),
            "sym" => Atom::Sym(value),
            "content" => Atom::Content {
                text: value,
                regex: false,
            },
            "regex" => Atom::Content {
                text: value,
                regex: true,
            },
            "case" => {
                self.case = Some(match value.to_ascii_lowercase().as_str() {
                    "yes" => Case::Yes,
                    "no" => Case::No,
                    "auto" => Case::Auto,
                    _ => {
                        return Err(ToolError::invalid_argument(
                            format!("case:{value} is not a case mode"),
                            "use case:yes, case:no or case:auto",
                        ));
                    }
                });
                return Ok(None);
            }
            other => return Err(unknown_field(other, &value)),
        };
        Ok(Some(Expr::Atom(a)))
    }
}

fn unknown_field(field: &str, value: &str) -> ToolError {
    let valid: Vec<String> = FIELDS.iter().map(|f| format!("{f}:")).collect();
    ToolError::new(
        codes::UNKNOWN_FIELD,
        format!("unknown field {field:?}"),
        format!(
            "valid fields: {}; to search for text with a colon, quote it: \"{field}:{value}\"",
            valid.join(" ")
        ),
    )
}

/// Flatten nested and/or, drop double negation.
fn simplify(e: Expr) -> Expr {
    match e {
        Expr::And(v) => {
            let mut out = Vec::new();
            for x in v.into_iter().map(simplify) {
                match x {
                    Expr::And(inner) => out.extend(inner),
                    other => out.push(other),
                }
            }
            if out.len() == 1 {
                out.pop().unwrap()
            } else {
                Expr::And(out)
            }
        }
        Expr::Or(v) => {
            let mut out = Vec::new();
            for x in v.into_iter().map(simplify) {
                match x {
                    Expr::Or(inner) => out.extend(inner),
                    other => out.push(other),
                }
            }
            if out.len() == 1 {
                out.pop().unwrap()
            } else {
                Expr::Or(out)
            }
        }
        Expr::Not(x) => match simplify(*x) {
            Expr::Not(y) => *y,
            y => Expr::Not(Box::new(y)),
        },
        a => a,
    }
}

/// Parse a query string.
pub fn parse(s: &str) -> Result<Query, ToolError> {
    if s.trim().is_empty() {
        return Err(ToolError::invalid_argument(
            "empty query",
            "e.g. \"lang:python sym:get_or_create\" or \"\\\"def save\\\" -file:tests\"",
        ));
    }
    if s.len() > MAX_QUERY_BYTES {
        return Err(ToolError::new(
            codes::QUERY_TOO_COMPLEX,
            format!(
                "the query is {} bytes; the limit is {MAX_QUERY_BYTES}",
                s.len()
            ),
            "shorten the query: search for the rarest part, or use grep for a long pattern",
        ));
    }
    let mut p = Parser {
        toks: tokenize(s)?,
        pos: 0,
        case: None,
        depth: 0,
        terms: 0,
    };
    let e = p.or()?;
    if p.pos < p.toks.len() {
        return Err(ToolError::invalid_argument(
            "unbalanced parentheses",
            "close every ( with ) and remove extra )",
        ));
    }
    let expr = match e {
        Some(e) => simplify(e),
        None => {
            return Err(ToolError::invalid_argument(
                "the query has no search terms",
                "add a term, e.g. \"case:yes Foo\"",
            ))
        }
    };
    Ok(Query {
        expr,
        case: p.case.unwrap_or(Case::Auto),
    })
}

/// The distinct atoms of `e`, in first-seen order ([`eval`] indexes them).
pub fn atoms(e: &Expr) -> Vec<Atom> {
    fn collect(e: &Expr, out: &mut Vec<Atom>) {
        match e {
            Expr::Atom(a) => {
                if !out.contains(a) {
                    out.push(a.clone())
                }
            }
            Expr::Not(x) => collect(x, out),
            Expr::And(v) | Expr::Or(v) => v.iter().for_each(|x| collect(x, out)),
        }
    }
    let mut out = Vec::new();
    collect(e, &mut out);
    out
}

/// Does `e` hold for one file? `atom(i)` gives the hits of `atoms[i]` there
/// (empty: the atom does not hold); the hits of the positive atoms that made
/// `e` hold are added to `hits` (none from under a negation).
pub fn eval<H>(
    e: &Expr,
    atoms: &[Atom],
    atom: &mut dyn FnMut(usize) -> Vec<H>,
    hits: &mut Vec<H>,
) -> bool {
    fn go<H>(
        e: &Expr,
        atoms: &[Atom],
        positive: bool,
        f: &mut dyn FnMut(usize) -> Vec<H>,
        hits: &mut Vec<H>,
    ) -> bool {
        match e {
            Expr::Atom(a) => {
                let Some(i) = atoms.iter().position(|x| x == a) else {
                    return false;
                };
                let v = f(i);
                let ok = !v.is_empty();
                if ok && positive {
                    hits.extend(v);
                }
                ok
            }
            Expr::Not(x) => {
                let mut sink = Vec::new();
                !go(x, atoms, !positive, f, &mut sink)
            }
            Expr::And(v) => {
                let mut local = Vec::new();
                for x in v {
                    if !go(x, atoms, positive, f, &mut local) {
                        return false;
                    }
                }
                hits.extend(local);
                true
            }
            Expr::Or(v) => {
                let mut any = false;
                for x in v {
                    any |= go(x, atoms, positive, f, hits);
                }
                any
            }
        }
    }
    go(e, atoms, true, atom, hits)
}

/// Canonical text of a query (for cursors and caches).
pub fn render(e: &Expr) -> String {
    match e {
        Expr::Atom(Atom::Repo(v)) => format!("repo:{v:?}"),
        Expr::Atom(Atom::File(v)) => format!("file:{v:?}"),
        Expr::Atom(Atom::Lang(v)) => format!("lang:{v:?}"),
        Expr::Atom(Atom::Sym(v)) => format!("sym:{v:?}"),
        Expr::Atom(Atom::Content { text, regex: false }) => format!("content:{text:?}"),
        Expr::Atom(Atom::Content { text, regex: true }) => format!("regex:{text:?}"),
        Expr::Not(x) => format!("-{}", render(x)),
        Expr::And(v) => format!("({})", v.iter().map(render).collect::<Vec<_>>().join(" ")),
        Expr::Or(v) => format!(
            "({})",
            v.iter().map(render).collect::<Vec<_>>().join(" or ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fields_negation_or_and_groups() {
        let q = parse(r#"lang:python (sym:save or "def delete") -file:tests case:yes"#).unwrap();
        assert_eq!(q.case, Case::Yes);
        assert_eq!(
            render(&q.expr),
            r#"(lang:"python" (sym:"save" or content:"def delete") -file:"tests")"#
        );
        let q = parse(r"regex:def\s+(save|delete)\( file:models").unwrap();
        assert_eq!(
            render(&q.expr),
            r#"(regex:"def\\s+(save|delete)\\(" file:"models")"#
        );
        assert_eq!(render(&parse("--foo").unwrap().expr), r#"content:"foo""#);
        assert_eq!(
            render(&parse("std::vec").unwrap().expr),
            r#"content:"std::vec""#
        );
    }

    #[test]
    fn errors_are_coded() {
        let e = parse("filee:foo").unwrap_err();
        assert_eq!(e.code, codes::UNKNOWN_FIELD);
        assert!(e.hint.contains("file:") && e.hint.contains("sym:"));
        assert_eq!(parse("").unwrap_err().code, codes::INVALID_ARGUMENT);
        assert_eq!(parse("(a").unwrap_err().code, codes::INVALID_ARGUMENT);
        assert_eq!(parse("a)").unwrap_err().code, codes::INVALID_ARGUMENT);
        assert_eq!(
            parse("case:maybe x").unwrap_err().code,
            codes::INVALID_ARGUMENT
        );
        assert_eq!(parse("\"open").unwrap_err().code, codes::INVALID_ARGUMENT);
        assert_eq!(parse("case:no").unwrap_err().code, codes::INVALID_ARGUMENT);
    }

    #[test]
    fn hostile_queries_are_refused_before_work() {
        // These aborted the server (stack overflow) or kept it busy for minutes.
        for q in [
            "(".repeat(10_000),
            "-".repeat(20_000) + "x",
            vec!["a"; 20_000].join(" or "),
            "(".repeat(2_000) + "x" + &")".repeat(2_000),
            "-(".repeat(100) + "x",
        ] {
            let e = parse(&q).unwrap_err();
            assert_eq!(e.code, codes::QUERY_TOO_COMPLEX, "{}", &q[..20]);
        }
        let deep = "(".repeat(MAX_DEPTH - 1) + "x" + &")".repeat(MAX_DEPTH - 1);
        assert!(parse(&deep).is_ok());
        let deep = "(".repeat(MAX_DEPTH + 1) + "x" + &")".repeat(MAX_DEPTH + 1);
        assert_eq!(parse(&deep).unwrap_err().code, codes::QUERY_TOO_COMPLEX);
        let many = (0..MAX_TERMS).map(|i| format!("t{i}")).collect::<Vec<_>>();
        assert!(parse(&many.join(" or ")).is_ok());
        let more = (0..=MAX_TERMS).map(|i| format!("t{i}")).collect::<Vec<_>>();
        assert_eq!(
            parse(&more.join(" or ")).unwrap_err().code,
            codes::QUERY_TOO_COMPLEX
        );
    }

    mod props {
        use super::*;
        use code_index_schemas::fuzz;
        use proptest::prelude::*;
        use std::collections::HashMap;

        /// Inputs that once failed (none yet: the 10-minute runs found none).
        const REGRESSIONS: &[&str] = &[
            "((((((((((((((((((((x",
            "-(-(-(-(-(-(-(-(-(-x",
            "\"\\",
            "a:b:c",
            "x or or y",
        ];

        fn soup() -> impl Strategy<Value = String> {
            let tok = prop_oneof![
                Just("(".to_string()),
                Just(")".to_string()),
                Just("-".to_string()),
                Just(" or ".to_string()),
                Just(" ".to_string()),
                Just("\"".to_string()),
                Just("\\".to_string()),
                Just(":".to_string()),
                prop::sample::select(FIELDS).prop_map(|f| format!("{f}:")),
                "[a-zA-Z_.*+?{}\\[\\]|^$]{1,6}",
                any::<char>().prop_map(String::from),
            ];
            prop::collection::vec(tok, 0..80).prop_map(|v| v.concat())
        }

        fn check_parse(q: &str) -> Result<(), TestCaseError> {
            match parse(q) {
                Ok(p) => {
                    prop_assert!(atoms(&p.expr).len() <= MAX_TERMS);
                    // The canonical text is stable.
                    let r = render(&p.expr);
                    prop_assert!(!r.is_empty());
                }
                Err(e) => {
                    prop_assert!(
                        [
                            codes::INVALID_ARGUMENT,
                            codes::UNKNOWN_FIELD,
                            codes::QUERY_TOO_COMPLEX
                        ]
                        .contains(&e.code),
                        "{e}"
                    );
                    prop_assert!(!e.message.is_empty() && !e.hint.is_empty());
                }
            }
            Ok(())
        }

        #[test]
        fn fuzz_query_parse() {
            for q in REGRESSIONS {
                check_parse(q).unwrap();
            }
            fuzz::run("query_parse", soup(), |q| check_parse(&q));
        }

        /// A query tree over a few words, as the parser should read it back.
        #[derive(Clone, Debug)]
        enum T {
            W(u8),
            Not(Box<T>),
            And(Vec<T>),
            Or(Vec<T>),
        }

        fn tree() -> impl Strategy<Value = T> {
            let leaf = (0u8..6).prop_map(T::W);
            leaf.prop_recursive(4, 24, 4, |inner| {
                prop_oneof![
                    inner.clone().prop_map(|t| T::Not(Box::new(t))),
                    prop::collection::vec(inner.clone(), 1..4).prop_map(T::And),
                    prop::collection::vec(inner, 1..4).prop_map(T::Or),
                ]
            })
        }

        fn text(t: &T) -> String {
            match t {
                T::W(i) => format!("w{i}"),
                T::Not(x) => format!("-({})", text(x)),
                T::And(v) => format!("({})", v.iter().map(text).collect::<Vec<_>>().join(" ")),
                T::Or(v) => format!("({})", v.iter().map(text).collect::<Vec<_>>().join(" or ")),
            }
        }

        fn truth(t: &T, on: &[bool; 6]) -> bool {
            match t {
                T::W(i) => on[*i as usize],
                T::Not(x) => !truth(x, on),
                T::And(v) => v.iter().all(|x| truth(x, on)),
                T::Or(v) => v.iter().any(|x| truth(x, on)),
            }
        }

        #[test]
        fn fuzz_query_semantics() {
            fuzz::run(
                "query_semantics",
                (tree(), any::<[bool; 6]>()),
                |(t, on)| {
                    let q = parse(&text(&t)).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    let atoms = atoms(&q.expr);
                    let words: HashMap<usize, bool> = atoms
                        .iter()
                        .enumerate()
                        .map(|(i, a)| match a {
                            Atom::Content { text, .. } => {
                                (i, on[text[1..].parse::<usize>().unwrap()])
                            }
                            other => panic!("unexpected atom {other:?}"),
                        })
                        .collect();
                    let mut hits: Vec<usize> = Vec::new();
                    let got = eval(
                        &q.expr,
                        &atoms,
                        &mut |i| if words[&i] { vec![i] } else { vec![] },
                        &mut hits,
                    );
                    prop_assert_eq!(got, truth(&t, &on), "{}", text(&t));
                    // Hits come only from atoms that hold.
                    prop_assert!(hits.iter().all(|i| words[i]));
                    Ok(())
                },
            );
        }
    }
}
