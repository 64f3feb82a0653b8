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

mod eval;
mod parse;
mod simplify;
#[cfg(test)]
mod tests;

pub use eval::{eval, search, SearchHit};
pub use parse::parse;

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
