//! Text to a tree: the tokenizer and the recursive-descent parser of the
//! query grammar (with its limits on size, terms and depth).

use super::simplify::simplify;
use super::*;

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
                // `\"` and `\\` are escapes; any other backslash is kept, so a
                // quoted regex reads as written (`"func\s+\(srv"`).
                '\\' if matches!(chars.get(*i + 1), Some('"' | '\\')) => {
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
                        "close every ( with ); a space ends a term, so quote a regex that holds one: regex:\"func\\s+\\(s \\*T\\)\"",
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
                "remove the extra ); a space ends a term, so quote a regex that holds one: regex:\"func\\s+\\(s \\*T\\)\"",
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
            "close every ( with ) and remove extra ); a space ends a term, so quote a regex that holds one: regex:\"func\\s+\\(s \\*T\\)\"",
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
