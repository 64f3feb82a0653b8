//! TypeScript that the pinned grammar (tree-sitter-typescript 0.23.2, the
//! latest release) does not parse, rewritten for the parser only.
//!
//! Three constructs that `tsc` accepts turn into ERROR nodes, and the error
//! usually swallows the declarations around them (effect 3.10: 185 of its 360
//! files; `Function.ts` kept 4 of its definitions):
//!
//! - variance annotations on type parameters, `interface Chunk<out A>`,
//!   `<in A, out B>`, `<in out A>` (TypeScript 4.7; upstream
//!   tree-sitter-typescript issue 370, not released);
//! - a generic call signature on the line after another member of an object
//!   type, `{ (i: number): Option<A>` / `<A>(self: Chunk<A>): Option<A> }`,
//!   which the grammar reads as a comparison with the line before;
//! - an escaped backtick in a template literal type, `` `use \`x\`` ``
//!   (the grammar's template types take no escapes at all).
//!
//! The rewrite keeps every byte's offset and every line: `out ` becomes
//! spaces, the indentation byte before such a `<` becomes `;` (the member
//! separator the line break stands for), `` \` `` becomes two spaces. The tree of
//! the rewritten bytes therefore addresses the original text, which is what
//! every name, signature and chunk is read from. A tree of the rewrite that
//! has errors is kept only when they cover fewer bytes than the original's
//! ([`error_extent`]), so a rewrite that guessed wrong costs nothing but a
//! parse.

use tree_sitter::Tree;

/// The rewritten bytes, or None when no rule applies. `signatures`: with
/// the call-signature rule (the one rule that can misfire; TSX never has it:
/// a JSX child on its own line looks like a signature).
pub(super) fn repaired(src: &[u8], signatures: bool) -> Option<Vec<u8>> {
    let mut out = src.to_vec();
    let mut changed = variance(src, &mut out);
    if signatures {
        changed |= call_signatures(src, &mut out);
    }
    changed |= template_escapes(src, &mut out);
    debug_assert_eq!(out.len(), src.len());
    changed.then_some(out)
}

/// How far a comment is looked for (`/*` … `*/`) before giving up: the
/// scans stay linear on any input.
const COMMENT_REACH: usize = 4096;

/// Bytes under ERROR nodes (each counted with one more, so an empty one
/// counts) plus the number of MISSING nodes: how much of the file the parser
/// could not place.
pub(super) fn error_extent(tree: &Tree) -> usize {
    let mut total = 0;
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        if n.is_error() {
            total += n.end_byte() - n.start_byte() + 1;
        } else if n.is_missing() {
            total += 1;
        } else if n.has_error() {
            let mut c = n.walk();
            stack.extend(n.children(&mut c));
        }
    }
    total
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && s[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Past whitespace and comments from `i`.
fn skip_trivia(s: &[u8], mut i: usize) -> usize {
    loop {
        i = skip_ws(s, i);
        if s[i..].starts_with(b"/*") {
            // A comment inside type parameters is short (`/** @ts-ignore */`).
            let end = s.len().min(i + 2 + 512);
            match s[i + 2..end].windows(2).position(|w| w == b"*/") {
                Some(p) => i += p + 4,
                None => return i,
            }
        } else if s[i..].starts_with(b"//") {
            i = s[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(s.len(), |p| i + p);
        } else {
            return i;
        }
    }
}

/// The word (identifier) at `i`, if one starts there.
fn word_at(s: &[u8], i: usize) -> Option<&[u8]> {
    if i >= s.len() || !is_ident_start(s[i]) || (i > 0 && is_ident(s[i - 1])) {
        return None;
    }
    let mut j = i;
    while j < s.len() && is_ident(s[j]) {
        j += 1;
    }
    Some(&s[i..j])
}

/// Whether a type parameter's name starts at `i`: an identifier followed by
/// `>`, `,`, `=` or `extends`.
fn type_param_at(s: &[u8], i: usize) -> bool {
    let Some(w) = word_at(s, i) else {
        return false;
    };
    let j = skip_ws(s, i + w.len());
    match s.get(j) {
        Some(b'>' | b',' | b'=') => true,
        _ => word_at(s, j) == Some(b"extends".as_slice()),
    }
}

/// `<out A`, `, in B`, `<in out C`: the modifiers become spaces.
fn variance(src: &[u8], out: &mut [u8]) -> bool {
    let mut changed = false;
    for i in 0..src.len() {
        if !matches!(src[i], b'<' | b',') {
            continue;
        }
        let start = skip_trivia(src, i + 1);
        let mut j = start;
        let mut seen = false;
        for kw in [b"in".as_slice(), b"out".as_slice()] {
            if word_at(src, j) == Some(kw)
                && src
                    .get(j + kw.len())
                    .is_some_and(|b| b.is_ascii_whitespace())
            {
                j = skip_ws(src, j + kw.len());
                seen = true;
            }
        }
        if seen && type_param_at(src, j) {
            for b in &mut out[start..j] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
            changed = true;
        }
    }
    changed
}

/// Where the last byte before `i` is that is not whitespace or inside a
/// comment (`/* … */`, or a line that is a `//` comment).
fn previous_significant(s: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let mut j = i;
        while j > 0 && s[j - 1].is_ascii_whitespace() {
            j -= 1;
        }
        if j == 0 {
            return None;
        }
        let last = j - 1;
        if last > 0 && &s[last - 1..=last] == b"*/" {
            let from = (last - 1).saturating_sub(COMMENT_REACH);
            i = from + s[from..last - 1].windows(2).rposition(|w| w == b"/*")?;
            continue;
        }
        let line_start = s[..last]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        if s[line_start..=last].trim_ascii_start().starts_with(b"//") {
            i = line_start;
            continue;
        }
        return Some(last);
    }
}

/// Words after which a type or an expression goes on: a `<` on the next
/// line continues it. (`void` is not one: `=> void` ends many a member.)
const CONTINUING: &[&[u8]] = &[
    b"extends",
    b"return",
    b"default",
    b"as",
    b"in",
    b"of",
    b"typeof",
    b"keyof",
    b"yield",
    b"await",
    b"else",
    b"case",
    b"new",
    b"delete",
    b"throw",
    b"is",
    b"infer",
    b"satisfies",
    b"readonly",
    b"unique",
    b"asserts",
    b"export",
    b"type",
];

/// Does a line end at `last` the way a member of an object type ends: a
/// name that is no keyword, `>` (not `=>`), `)`, `]`, `}` or a literal's
/// quote? (`,`, `(`, `=`, `=>`, `:`, an operator make what follows an
/// argument or a value.)
fn ends_member(s: &[u8], last: usize) -> bool {
    let b = s[last];
    if is_ident(b) {
        let start = s[..=last]
            .iter()
            .rposition(|&c| !is_ident(c))
            .map_or(0, |p| p + 1);
        return !CONTINUING.contains(&&s[start..=last]);
    }
    match b {
        b'>' => last == 0 || s[last - 1] != b'=',
        b')' | b']' | b'}' | b'"' | b'\'' | b'`' => true,
        _ => false,
    }
}

/// Past the `<…>` opening at `i` (angle brackets balanced, `=>` not
/// counted), within [`COMMENT_REACH`] bytes.
fn past_angles(s: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let end = s.len().min(i + COMMENT_REACH);
    for j in i..end {
        match s[j] {
            b'<' => depth += 1,
            b'>' if j == 0 || s[j - 1] != b'=' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            b';' => return None,
            _ => {}
        }
    }
    None
}

/// Past the `(…)` opening at `i` (balanced), within [`COMMENT_REACH`] bytes.
fn past_parens(s: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let end = s.len().min(i + COMMENT_REACH);
    for (j, &b) in s.iter().enumerate().take(end).skip(i) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// A line that opens with a generic call signature (`  <A, B>(…): R`, `  <`
/// alone, `  <const P extends …`: type parameters, parameters and a return
/// type) after a line that ends as an object type's member does
/// ([`ends_member`]): its last indentation byte becomes `;`. A type
/// assertion `<T>(x)` or a generic call `a<b>(c)` has no `: R` after its
/// parentheses; an argument or a value (`dual(2,` / `=`) ends otherwise.
fn call_signatures(src: &[u8], out: &mut [u8]) -> bool {
    let mut changed = false;
    let mut i = 0;
    while let Some(nl) = src[i..].iter().position(|&b| b == b'\n') {
        let line = i + nl + 1;
        i = line;
        let mut lt = line;
        while lt < src.len() && matches!(src[lt], b' ' | b'\t') {
            lt += 1;
        }
        if lt == line || src.get(lt) != Some(&b'<') {
            continue;
        }
        let mut p = skip_ws(src, lt + 1);
        if word_at(src, p) == Some(b"const".as_slice()) {
            p = skip_ws(src, p + 5);
        }
        if !type_param_at(src, p) {
            continue;
        }
        let signature = past_angles(src, lt)
            .map(|k| skip_ws(src, k))
            .filter(|&k| src.get(k) == Some(&b'('))
            .and_then(|k| past_parens(src, k))
            .is_some_and(|k| src.get(skip_ws(src, k)) == Some(&b':'));
        let after_member = previous_significant(src, line).is_some_and(|l| ends_member(src, l));
        if signature && after_member {
            out[lt - 1] = b';';
            changed = true;
        }
    }
    changed
}

/// `` \` `` after an even number of backslashes: both become spaces (in a
/// string or a template string they stay inside it).
fn template_escapes(src: &[u8], out: &mut [u8]) -> bool {
    let mut changed = false;
    for i in 1..src.len() {
        if src[i] != b'`' || src[i - 1] != b'\\' {
            continue;
        }
        let run = src[..i].iter().rev().take_while(|&&b| b == b'\\').count();
        if run % 2 == 1 {
            out[i - 1] = b' ';
            out[i] = b' ';
            changed = true;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(s: &str) -> String {
        String::from_utf8(repaired(s.as_bytes(), true).unwrap_or_else(|| s.as_bytes().to_vec()))
            .unwrap()
    }

    #[test]
    fn variance_modifiers_become_spaces() {
        assert_eq!(fix("interface C<out A> {}"), "interface C<    A> {}");
        assert_eq!(
            fix("type F<in A, out B extends X> = 1"),
            "type F<   A,     B extends X> = 1"
        );
        assert_eq!(
            fix("interface I<in out A = B> {}"),
            "interface I<       A = B> {}"
        );
        assert_eq!(
            fix("class C<\n  /** c */\n  out S = X,\n> {}"),
            "class C<\n  /** c */\n      S = X,\n> {}"
        );
        // Not type parameters: a mapped type, a for-in, an identifier named out.
        for s in [
            "type M = { [K in keyof T]: T[K] }",
            "for (const k in o) {}",
            "f(a, out)",
            "a < out.b",
        ] {
            assert_eq!(fix(s), s);
        }
    }

    #[test]
    fn a_generic_signature_after_a_member_gets_its_separator() {
        let s = "const g: {\n  (i: number): Option<A>\n  /** doc */\n  <A>(self: C<A>): A\n} = f\n";
        assert_eq!(
            fix(s),
            "const g: {\n  (i: number): Option<A>\n  /** doc */\n ;<A>(self: C<A>): A\n} = f\n"
        );
        let s = "x: {\n  (a: A): (s: S) => void\n  <A>(s: S, a: A): void\n}";
        assert!(fix(s).contains("\n ;<A>"));
        let s = "x: {\n  (a: A): boolean\n  <\n    const P extends X,\n  >(p: P): P\n}";
        assert!(fix(s).contains("\n ;<\n"));
        // An argument or a value: left alone.
        for s in [
            "dual(\n  2,\n  <A>(self: A) => self\n)",
            "const f =\n  <A>(a: A) => a",
            "m(\n  <A>(a: A) => a)",
            "f((x) =>\n  <A>(a: A) => a)",
            // A generic call, a type assertion, a conditional type.
            "const x = a\n  <b>(c)\n",
            "foo(bar)\n  <T>(x)\n",
            "if (x)\n  <Foo>y.bar()\n",
            "type F<T> = T extends\n  <A>(a: A) => infer R ? R : never",
        ] {
            assert_eq!(fix(s), s);
        }
        // A first member needs nothing, nor a line without indentation.
        for s in ["const g: {\n  <A>(a: A): A\n}", "a\n<A>(x: A): A"] {
            assert_eq!(fix(s), s);
        }
    }

    #[test]
    fn hostile_input_stays_linear() {
        // Every `,` followed by an unclosed comment, every line a `<`.
        let mut s = ",/*".repeat(100_000);
        s.push_str(&"\n  <A>(x".repeat(20_000));
        assert!(repaired(s.as_bytes(), true).is_none());
    }

    #[test]
    fn escaped_backticks() {
        assert_eq!(fix(r"type T = `use \`x\``"), "type T = `use   x  `");
        assert_eq!(fix(r#"const s = "a\`b""#), r#"const s = "a  b""#);
        assert_eq!(fix(r"const s = `a\\`"), r"const s = `a\\`");
    }

    #[test]
    fn repaired_trees_parse_and_keep_lines() {
        let src = "export interface Chunk<out A> extends Iterable<A> {}\nexport const get: {\n  (index: number): <A>(self: Chunk<A>) => Option<A>\n  <A>(self: Chunk<A>, index: number): Option<A>\n} = dual(2, f)\nexport function after() {}\n";
        let first =
            super::super::with_parser(crate::language::Lang::TypeScript, |p| p.parse(src, None))
                .unwrap();
        assert!(first.root_node().has_error());
        let fixed = repaired(src.as_bytes(), true).unwrap();
        assert_eq!(fixed.len(), src.len());
        assert_eq!(
            fixed.iter().filter(|&&b| b == b'\n').count(),
            src.matches('\n').count()
        );
        let t =
            super::super::parse_tree(crate::language::Lang::TypeScript, src.as_bytes()).unwrap();
        assert!(!t.root_node().has_error(), "{}", t.root_node().to_sexp());
        assert_eq!(error_extent(&t), 0);
        assert!(error_extent(&first) > 0);
    }
}
