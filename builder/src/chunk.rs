//! Hierarchical chunking. Small files are one chunk; larger ones are cut at
//! top-level definitions, with gaps (imports, module code) merged into
//! blocks; classes too big for one chunk, or in large files, are cut into
//! methods with a context header; classes with many methods also get a
//! summary chunk. A definition's chunk starts at its lead (doc comments,
//! attributes, decorators: `Symbol::lead_byte`), never inside the chunk
//! before it. Markdown is cut at headings (the heading path is kept);
//! other text by windows of lines, which in code without a grammar here end
//! where a definition its layout shows starts (`outline.rs`).

use crate::ids::stable_id;
use crate::language::Lang;
use crate::parse::Symbol;

/// Most tokens in one chunk before it is cut further.
pub const MAX_TOKENS: usize = 1500;
/// Definitions smaller than this are merged with their neighbours.
pub const MIN_TOKENS: usize = 32;
/// Files above this are cut down to methods.
pub const LARGE_FILE_TOKENS: usize = 8000;
/// Classes with at least this many methods get a summary chunk.
pub const SUMMARY_METHODS: usize = 8;
const WINDOW_LINES: usize = 80;

#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub id: i64,
    pub chunk_type: String,
    pub kind: String,
    pub symbol: Option<String>,
    pub heading_path: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    pub start_byte: u64,
    pub end_byte: u64,
    pub token_count: u32,
    pub context_header: String,
    pub text: String,
}

/// Stable chunk id: a hash of path, kind and byte span.
fn chunk_id(path: &str, kind: &str, start: usize, end: usize) -> i64 {
    stable_id(&[
        path.as_bytes(),
        kind.as_bytes(),
        start.to_string().as_bytes(),
        end.to_string().as_bytes(),
    ])
}

pub fn tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

/// Byte offsets of line starts, for byte → line lookups.
pub struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    pub fn new(s: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', s.as_bytes()).map(|i| i + 1));
        Lines { starts }
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, byte: usize) -> u32 {
        match self.starts.binary_search(&byte) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
    }

    /// 1-based line of the last byte of a non-empty range ending at `end`.
    pub fn end_line(&self, start: usize, end: usize) -> u32 {
        self.line_of(end.saturating_sub(1).max(start))
    }
}

struct Ctx<'a> {
    path: &'a str,
    src: &'a str,
    lines: Lines,
    chunk_type: &'static str,
    out: Vec<Chunk>,
}

impl Ctx<'_> {
    fn push(
        &mut self,
        kind: &str,
        start: usize,
        end: usize,
        symbol: Option<&str>,
        heading: Option<&str>,
        header: String,
    ) {
        let (start, end) = trim_range(self.src, start, end);
        if start >= end {
            return;
        }
        let text = self.src[start..end].to_string();
        self.out.push(Chunk {
            id: chunk_id(self.path, kind, start, end),
            chunk_type: self.chunk_type.to_string(),
            kind: kind.to_string(),
            symbol: symbol.map(|s| s.to_string()),
            heading_path: heading.map(|s| s.to_string()),
            start_line: self.lines.line_of(start),
            end_line: self.lines.end_line(start, end),
            start_byte: start as u64,
            end_byte: end as u64,
            token_count: tokens(text.len()) as u32,
            context_header: header,
            text,
        });
    }

    /// Push `[start, end)` cut into windows of lines that fit MAX_TOKENS.
    fn push_windows(
        &mut self,
        kind: &str,
        start: usize,
        end: usize,
        symbol: Option<&str>,
        heading: Option<&str>,
        header: &str,
    ) {
        if tokens(end - start) <= MAX_TOKENS {
            self.push(kind, start, end, symbol, heading, header.to_string());
            return;
        }
        let max_bytes = MAX_TOKENS * 4;
        let mut w_start = start;
        let mut pos = start;
        let mut nlines = 0;
        while pos < end {
            let line_end = memchr::memchr(b'\n', &self.src.as_bytes()[pos..end])
                .map(|i| pos + i + 1)
                .unwrap_or(end);
            if line_end - pos > max_bytes {
                // A giant line: flush, then cut it at char boundaries.
                if pos > w_start {
                    self.push("window", w_start, pos, symbol, heading, header.to_string());
                }
                let mut s = pos;
                while s < line_end {
                    let mut e = (s + max_bytes).min(line_end);
                    while !self.src.is_char_boundary(e) {
                        e += 1;
                    }
                    self.push("window", s, e, symbol, heading, header.to_string());
                    s = e;
                }
                w_start = line_end;
                nlines = 0;
            } else if (line_end - w_start > max_bytes || nlines >= WINDOW_LINES) && pos > w_start {
                self.push("window", w_start, pos, symbol, heading, header.to_string());
                w_start = pos;
                nlines = 0;
            }
            nlines += 1;
            pos = line_end;
        }
        if w_start < end {
            self.push("window", w_start, end, symbol, heading, header.to_string());
        }
    }

    /// Windows of at most WINDOW_LINES lines (and MAX_TOKENS) that end at
    /// the furthest of `cuts` (sorted byte offsets of line starts) in
    /// reach, when it leaves the window a quarter of its lines or more.
    fn push_aligned(&mut self, cuts: &[usize], header: &str) {
        let len = self.src.len();
        if tokens(len) <= MAX_TOKENS {
            self.push("file", 0, len, None, None, header.to_string());
            return;
        }
        let starts = &self.lines.starts;
        let max_bytes = MAX_TOKENS * 4;
        let mut ends = Vec::new();
        let mut w = 0;
        while w < len {
            let first = starts.partition_point(|&s| s <= w) - 1;
            let mut limit = starts.get(first + WINDOW_LINES).copied().unwrap_or(len);
            if limit - w > max_bytes {
                limit = starts[..starts.partition_point(|&s| s <= w + max_bytes)]
                    .last()
                    .copied()
                    .filter(|&s| s > w)
                    .unwrap_or(limit);
            }
            if limit >= len {
                ends.push(len);
                break;
            }
            let min_end = starts.get(first + WINDOW_LINES / 4).copied().unwrap_or(len);
            let i = cuts.partition_point(|&c| c <= limit);
            w = match i.checked_sub(1).map(|i| cuts[i]) {
                Some(c) if c > w && c >= min_end => c,
                _ => limit,
            };
            ends.push(w);
        }
        let mut w = 0;
        for e in ends {
            self.push_windows("window", w, e, None, None, header);
            w = e;
        }
    }
}

fn trim_range(src: &str, mut start: usize, mut end: usize) -> (usize, usize) {
    let b = src.as_bytes();
    while start < end && b[start].is_ascii_whitespace() {
        start += 1;
    }
    while end > start && b[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    // Keep whole first line: back up to the line start if only indentation precedes.
    let mut s = start;
    while s > 0 && (b[s - 1] == b' ' || b[s - 1] == b'\t') {
        s -= 1;
    }
    if s == 0 || b[s - 1] == b'\n' {
        start = s;
    }
    (start, end)
}

fn is_doc_text(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".txt", ".rst", ".adoc", ".org", ".textile"]
        .iter()
        .any(|e| lower.ends_with(e))
        || lower.rsplit('/').next().is_some_and(|n| {
            n.starts_with("readme") || n.starts_with("changelog") || n == "license"
        })
}

/// Chunk one file. `symbols` are its definitions: for code without a
/// grammar, its outline's units (`outline::outline`); empty for other text.
pub fn chunk_file(path: &str, lang: Lang, src: &str, symbols: &[Symbol]) -> Vec<Chunk> {
    let chunk_type = if lang == Lang::Markdown || (lang == Lang::Text && is_doc_text(path)) {
        "doc"
    } else {
        "code"
    };
    let mut cx = Ctx {
        path,
        src,
        lines: Lines::new(src),
        chunk_type,
        out: Vec::new(),
    };
    let file_header = format!("file: {path}");
    match lang {
        Lang::Markdown => chunk_markdown(&mut cx),
        Lang::Text if crate::outline::is_outlined(path) => {
            let mut cuts: Vec<usize> = symbols.iter().map(|u| u.lead_byte as usize).collect();
            cuts.sort_unstable();
            cuts.dedup();
            cx.push_aligned(&cuts, &file_header)
        }
        Lang::Text => cx.push_windows("file", 0, src.len(), None, None, &file_header),
        _ => chunk_code(&mut cx, symbols),
    }
    let mut out = cx.out;
    out.sort_by(|a, b| {
        (a.start_byte, &a.kind, a.end_byte).cmp(&(b.start_byte, &b.kind, b.end_byte))
    });
    out.dedup_by(|a, b| a.id == b.id);
    out
}

/// Symbols that carve a file or class into chunks.
fn is_unit(kind: &str) -> bool {
    !matches!(
        kind,
        "field" | "property" | "variable" | "constant" | "macro"
    )
}

fn chunk_code(cx: &mut Ctx, symbols: &[Symbol]) {
    let total = tokens(cx.src.len());
    let top = outermost(symbols.iter().filter(|s| is_unit(s.kind)).collect());
    let names: Vec<&str> = top
        .iter()
        .map(|s| s.name.as_str())
        .filter(|n| !n.is_empty())
        .take(12)
        .collect();
    let file_header = if names.is_empty() {
        format!("file: {}", cx.path)
    } else {
        format!("file: {}\ndefines: {}", cx.path, names.join(", "))
    };
    if total <= MAX_TOKENS || top.is_empty() {
        cx.push_windows("file", 0, cx.src.len(), None, None, &file_header);
    } else {
        let large = total > LARGE_FILE_TOKENS;
        segment(
            cx,
            0,
            cx.src.len(),
            &top,
            symbols,
            large,
            &file_header,
            None,
        );
    }
    // Summaries of classes with many methods.
    for s in symbols {
        if !matches!(s.kind, "class" | "struct" | "interface" | "trait" | "enum") {
            continue;
        }
        let methods: Vec<&Symbol> = symbols
            .iter()
            .filter(|m| {
                m.parent_id == Some(s.id) && matches!(m.kind, "method" | "constructor" | "function")
            })
            .collect();
        if methods.len() < SUMMARY_METHODS {
            continue;
        }
        let mut text = s.signature.clone();
        if let Some(d) = &s.doc {
            text.push_str("\n    ");
            text.push_str(d);
        }
        for m in &methods {
            text.push_str("\n    ");
            text.push_str(&m.signature);
        }
        let (start, end) = (s.start_byte as usize, s.end_byte as usize);
        cx.out.push(Chunk {
            id: chunk_id(cx.path, "class_summary", start, end),
            chunk_type: cx.chunk_type.to_string(),
            kind: "class_summary".into(),
            symbol: Some(s.qualified_name.clone()),
            heading_path: None,
            start_line: s.start_line,
            end_line: s.end_line,
            start_byte: s.start_byte,
            end_byte: s.end_byte,
            token_count: tokens(text.len()) as u32,
            context_header: format!(
                "file: {}\nclass: {} ({} methods)",
                cx.path,
                s.qualified_name,
                methods.len()
            ),
            text,
        });
    }
}

/// Symbols not nested in another one of the list (sorted by start).
fn outermost(mut list: Vec<&Symbol>) -> Vec<&Symbol> {
    list.sort_by_key(|s| (s.start_byte, std::cmp::Reverse(s.end_byte)));
    let mut out: Vec<&Symbol> = Vec::new();
    for s in list {
        if let Some(last) = out.last() {
            if s.start_byte < last.end_byte {
                continue;
            }
        }
        out.push(s);
    }
    out
}

/// Cut `[start, end)` at the given units; gaps and small units merge into blocks.
#[allow(clippy::too_many_arguments)]
fn segment(
    cx: &mut Ctx,
    start: usize,
    end: usize,
    units: &[&Symbol],
    all: &[Symbol],
    large: bool,
    header: &str,
    container: Option<&Symbol>,
) {
    let mut block = Block {
        span: None,
        units: Vec::new(),
        gap: false,
        all,
        large,
        header,
        container,
    };
    let mut pos = start;
    for u in units {
        if (u.start_byte as usize) < pos {
            continue;
        }
        // The unit's chunk starts at its leading docs and attributes, never
        // before the end of the previous unit (nor of the block before it).
        let us = (u.lead_byte.min(u.start_byte) as usize).max(pos);
        let ue = (u.end_byte as usize).min(end);
        // Gap before the unit.
        if us > pos && !cx.src[pos..us].trim().is_empty() {
            block.add(cx, pos, us, None);
        }
        if tokens(ue - us) < MIN_TOKENS {
            block.add(cx, us, ue, Some((u, us)));
        } else {
            block.flush(cx);
            emit_unit(cx, u, us, all, large, container);
        }
        pos = ue.max(pos);
    }
    if pos < end && !cx.src[pos..end].trim().is_empty() {
        block.add(cx, pos, end, None);
    }
    block.flush(cx);
}

/// Code gathered between the units of [`segment`]: gaps and units too small
/// for a chunk of their own, with the segment's context for emitting it.
struct Block<'s> {
    span: Option<(usize, usize)>,
    /// The units it holds, with the start of each one's chunk.
    units: Vec<(&'s Symbol, usize)>,
    /// Whether it holds code outside its units (imports, statements).
    gap: bool,
    all: &'s [Symbol],
    large: bool,
    header: &'s str,
    container: Option<&'s Symbol>,
}

impl<'s> Block<'s> {
    /// Extend by `[s, e)`, a unit or a gap (`unit` None); emit the block
    /// once it is over [`MAX_TOKENS`].
    fn add(&mut self, cx: &mut Ctx, s: usize, e: usize, unit: Option<(&'s Symbol, usize)>) {
        let (a, e) = match self.span {
            Some((a, _)) => (a, e),
            None => (s, e),
        };
        self.span = Some((a, e));
        match unit {
            Some(u) => self.units.push(u),
            None => self.gap = true,
        }
        if tokens(e - a) > MAX_TOKENS {
            self.flush(cx);
        }
    }

    /// Emit the block and empty it. A block that is one small unit and
    /// nothing else (`class BaseFormView(FormMixin, ProcessFormView)` and
    /// its one-line docstring between two large classes; a one-line
    /// `async def acount(self)`) is that unit's chunk, named after it:
    /// it used to be a `block` named after its container, or after nothing.
    fn flush(&mut self, cx: &mut Ctx) {
        let Some((s, e)) = self.span.take() else {
            return;
        };
        let units = std::mem::take(&mut self.units);
        if let ([(u, us)], false) = (&units[..], std::mem::take(&mut self.gap)) {
            emit_unit(cx, u, *us, self.all, self.large, self.container);
            return;
        }
        let sym = self
            .container
            .map(|c| c.qualified_name.as_str())
            .filter(|s| !s.is_empty());
        cx.push_windows("block", s, e, sym, None, self.header);
    }
}

/// Emit unit `u` as one chunk from `us` (its lead), or cut into its children.
fn emit_unit(
    cx: &mut Ctx,
    u: &Symbol,
    us: usize,
    all: &[Symbol],
    large: bool,
    container: Option<&Symbol>,
) {
    let ue = u.end_byte as usize;
    let children: Vec<&Symbol> = all
        .iter()
        .filter(|c| c.parent_id == Some(u.id) && is_unit(c.kind))
        .collect();
    let kind = if container.is_some() {
        "method"
    } else {
        "definition"
    };
    let header = match container {
        Some(c) => {
            let siblings: Vec<&str> = all
                .iter()
                .filter(|s| s.parent_id == Some(c.id) && s.id != u.id && is_unit(s.kind))
                .take(8)
                .map(|s| s.name.as_str())
                .collect();
            let mut h = format!("file: {}\nin: {}", cx.path, c.signature);
            if !siblings.is_empty() {
                h.push_str(&format!("\nrelated: {}", siblings.join(", ")));
            }
            h
        }
        None => format!("file: {}", cx.path),
    };
    let fits = tokens(ue - us) <= MAX_TOKENS;
    if !children.is_empty() && (!fits || large) {
        let children = outermost(children);
        segment(cx, us, ue, &children, all, large, &header, Some(u));
    } else {
        let symbol = Some(u.qualified_name.as_str()).filter(|s| !s.is_empty());
        cx.push_windows(kind, us, ue, symbol, None, &header);
    }
}

/// Markdown: one chunk per heading section, with its heading path.
fn chunk_markdown(cx: &mut Ctx) {
    let src = cx.src;
    let mut headings: Vec<(usize, usize, String)> = Vec::new(); // (byte, level, title)
    let mut fence: Option<&str> = None;
    let mut pos = 0;
    let mut prev_line: Option<(usize, &str)> = None;
    for line in src.split_inclusive('\n') {
        let t = line.trim_end();
        let trimmed = t.trim_start();
        let indent = t.len() - trimmed.len();
        if let Some(f) = fence {
            if trimmed.starts_with(f) {
                fence = None;
            }
        } else if indent < 4 && (trimmed.starts_with("```") || trimmed.starts_with("~~~")) {
            fence = Some(&trimmed[..3]);
        } else if indent < 4 && trimmed.starts_with('#') {
            let level = trimmed.bytes().take_while(|&b| b == b'#').count();
            let rest = &trimmed[level..];
            if level <= 6 && (rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
                headings.push((
                    pos,
                    level,
                    rest.trim().trim_end_matches('#').trim().to_string(),
                ));
            }
        } else if indent < 4
            && !trimmed.is_empty()
            && (trimmed.chars().all(|c| c == '=')
                || (trimmed.len() >= 2 && trimmed.chars().all(|c| c == '-')))
        {
            if let Some((pstart, ptext)) = prev_line {
                let p = ptext.trim();
                if !p.is_empty() && !p.starts_with('#') && !headings.iter().any(|h| h.0 == pstart) {
                    headings.push((
                        pstart,
                        if trimmed.starts_with('=') { 1 } else { 2 },
                        p.to_string(),
                    ));
                }
            }
        }
        prev_line = Some((pos, line));
        pos += line.len();
    }
    let header = format!("file: {}", cx.path);
    if headings.is_empty() {
        cx.push_windows("section", 0, src.len(), None, None, &header);
        return;
    }
    if headings[0].0 > 0 {
        cx.push_windows("section", 0, headings[0].0, None, None, &header);
    }
    let mut stack: Vec<(usize, String)> = Vec::new();
    for (i, (start, level, title)) in headings.iter().enumerate() {
        while stack.last().is_some_and(|(l, _)| l >= level) {
            stack.pop();
        }
        stack.push((*level, title.clone()));
        let end = headings.get(i + 1).map(|h| h.0).unwrap_or(src.len());
        let path: Vec<&str> = stack.iter().map(|(_, t)| t.as_str()).collect();
        let hp = path.join(" > ");
        let h = format!("file: {}\nsection: {hp}", cx.path);
        cx.push_windows("section", *start, end, None, Some(&hp), &h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{extract, parse_tree};

    #[test]
    fn small_file_is_one_chunk() {
        let c = chunk_file("a.txt", Lang::Text, "hello\nworld\n", &[]);
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].start_line, c[0].end_line, c[0].kind.as_str()),
            (1, 2, "file")
        );
    }

    #[test]
    fn windows_of_code_without_a_grammar_end_where_a_definition_starts() {
        // 30 functions of 6 lines: a window of 80 lines would end inside
        // the 14th; it ends at line 78, before the doc of the 14th.
        let mut src = String::new();
        for i in 0..30 {
            src.push_str(&format!(
                "/** Does {i}. */\nfun f{i}(a: Int): Int {{\n    val b = a * {i} + 1\n    val c = b * b\n    return c\n}}\n"
            ));
        }
        let src = src.repeat(4);
        let units = crate::outline::outline("A.kt", &src);
        let c = chunk_file("A.kt", Lang::Text, &src, &units);
        assert!(c.len() > 3);
        for w in &c {
            assert_eq!(w.kind, "window");
            assert!(w.text.starts_with("/** Does"), "{}", &w.text[..20]);
            assert!(w.end_line - w.start_line < 80);
        }
        assert_eq!(c[0].end_line, 78);
        // Other text keeps plain windows of 80 lines.
        let t = chunk_file("a.txt", Lang::Text, &src, &[]);
        assert_eq!(t[0].end_line, 80);
    }

    #[test]
    fn markdown_sections_keep_heading_path() {
        let md = "intro\n# A\ntext a\n## B\n```\n# not a heading\n```\ntext b\n# C\nc\n";
        let c = chunk_file("r.md", Lang::Markdown, md, &[]);
        let hp: Vec<_> = c.iter().map(|c| c.heading_path.clone()).collect();
        assert_eq!(
            hp,
            vec![
                None,
                Some("A".into()),
                Some("A > B".into()),
                Some("C".into())
            ]
        );
        assert_eq!(c[2].start_line, 4);
        assert_eq!(c[2].end_line, 8);
        assert!(c.iter().all(|c| c.chunk_type == "doc"));
    }

    #[test]
    fn a_lone_small_definition_is_its_own_named_chunk() {
        // Between two large classes, a two-line class (Django's
        // `BaseFormView`) was a `block` named after nothing; inside a class
        // cut into methods, a one-line method was a `block` named after
        // the class, so a query naming the class lifted it. Small
        // definitions that share a block with each other or with other code
        // stay a block.
        let big = |name: &str| {
            let mut c = format!("class {name}:\n    \"\"\"The {name} class.\"\"\"\n");
            for i in 0..120 {
                c.push_str(&format!("    def m{i}(self, x):\n        \"\"\"Method {i} of {name}.\"\"\"\n        return os.path.join(str(x + {i}), 'abcdefghijklmnopqrstuvwxyz0123456789' * 3)\n\n"));
                if i == 20 {
                    c.push_str("    async def alen(self):\n        return len(self)\n\n");
                }
            }
            c
        };
        let src = format!(
            "import os\n\n\nclass Small1:\n    pass\n\n\nclass Small2:\n    pass\n\n\n{}\n\nclass BaseFormView(A, B):\n    \"\"\"A base view.\"\"\"\n\n\n{}",
            big("Left"),
            big("Right")
        );
        let (_, c) = chunks_of(Lang::Python, "views.py", &src);
        let lone = chunk_of(&c, "BaseFormView");
        assert_eq!(lone.kind, "definition");
        assert_eq!(lone.start_line, line_with(&src, "class BaseFormView"));
        assert_eq!(lone.end_line, lone.start_line + 1);
        let alen = chunk_of(&c, "Left.alen");
        assert_eq!(alen.kind, "method");
        assert!(alen.context_header.contains("in: class Left"));
        // The imports and the two small classes: one block, as before.
        let head = c.iter().find(|c| c.start_line == 1).unwrap();
        assert_eq!(
            (head.kind.as_str(), head.symbol.as_deref()),
            ("block", None)
        );
        assert!(head.text.contains("class Small2"));
        assert!(!c
            .iter()
            .any(|c| c.kind == "block" && c.text.contains("BaseFormView")));
        assert_disjoint(&src, &c);
    }

    #[test]
    fn large_python_file_cut_by_definitions_and_methods() {
        let mut src = String::from("import os\n\n");
        src.push_str("class Big:\n    \"\"\"Big class.\"\"\"\n");
        for i in 0..45 {
            src.push_str(&format!("    def m{i}(self, x):\n        \"\"\"Method {i} does a thing with x and returns a joined path.\"\"\"\n        y = x + {i}\n        return os.path.join(str(y), 'abcdefghijklmnopqrstuvwxyz0123456789' * 3)\n\n"));
        }
        for i in 0..40 {
            src.push_str(&format!("def f{i}(a):\n    return a * {i} + len('abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz')\n\n"));
        }
        let tree = parse_tree(Lang::Python, src.as_bytes()).unwrap();
        let p = extract(Lang::Python, "big.py", src.as_bytes(), &tree);
        let c = chunk_file("big.py", Lang::Python, &src, &p.symbols);
        assert!(c
            .iter()
            .any(|c| c.kind == "method" && c.symbol.as_deref() == Some("Big.m3")));
        let m3 = c
            .iter()
            .find(|c| c.symbol.as_deref() == Some("Big.m3"))
            .unwrap();
        assert!(m3.context_header.contains("in: class Big"));
        assert!(c.iter().any(|c| c.kind == "class_summary"));
        assert!(c.iter().all(|c| (c.token_count as usize) <= MAX_TOKENS));
        // Every byte of code is in some non-summary chunk (gaps excepted).
        for s in p.symbols.iter().filter(|s| s.kind == "function") {
            assert!(
                c.iter().any(|c| c.start_byte <= s.start_byte
                    && s.end_byte <= c.end_byte
                    && c.kind != "class_summary"),
                "{} not covered",
                s.name
            );
        }
    }

    /// Chunks of `src` parsed as `lang`.
    fn chunks_of(lang: Lang, path: &str, src: &str) -> (Vec<Symbol>, Vec<Chunk>) {
        let tree = parse_tree(lang, src.as_bytes()).unwrap();
        let p = extract(lang, path, src.as_bytes(), &tree);
        let c = chunk_file(path, lang, src, &p.symbols);
        (p.symbols, c)
    }

    /// The chunk of `symbol` (not its class summary): its first line and its text.
    fn chunk_of<'c>(chunks: &'c [Chunk], symbol: &str) -> &'c Chunk {
        chunks
            .iter()
            .find(|c| c.symbol.as_deref() == Some(symbol) && c.kind != "class_summary")
            .unwrap_or_else(|| panic!("no chunk for {symbol}: {chunks:#?}"))
    }

    /// Line (1-based) of the first line of `src` containing `needle`.
    fn line_with(src: &str, needle: &str) -> u32 {
        src.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1
    }

    /// Chunks never overlap (class summaries aside), and each starts where
    /// its text does.
    fn assert_disjoint(src: &str, chunks: &[Chunk]) {
        let mut spans: Vec<(u64, u64)> = chunks
            .iter()
            .filter(|c| c.kind != "class_summary")
            .map(|c| (c.start_byte, c.end_byte))
            .collect();
        spans.sort();
        for w in spans.windows(2) {
            assert!(w[0].1 <= w[1].0, "overlap {w:?}");
        }
        for c in chunks.iter().filter(|c| c.kind != "class_summary") {
            assert_eq!(c.text, &src[c.start_byte as usize..c.end_byte as usize]);
        }
    }

    /// Enough filler (in the language's line comments) to cut the file at
    /// definitions rather than keep it whole.
    fn filler(comment: &str) -> String {
        let line = format!("{comment} filler line that pads the file past one chunk of tokens.\n");
        line.repeat(MAX_TOKENS * 4 / line.len() + 10) + "\n"
    }

    const BODY_LINES: usize = 6;

    fn body(indent: &str, stmt: &str) -> String {
        (0..BODY_LINES)
            .map(|i| format!("{indent}{}\n", stmt.replace("{i}", &i.to_string())))
            .collect()
    }

    #[test]
    fn go_func_chunk_starts_at_its_comment() {
        let src = format!(
            "package p\n\n{}var x = 1 // trailing, not F's\n// F does things.\n// More about F.\nfunc F(a int) int {{\n{}\treturn a\n}}\n",
            filler("//"),
            body("\t", "a = a*{i} + len(\"abcdefghijklmnopqrstuvwxyz\")")
        );
        let (_, c) = chunks_of(Lang::Go, "p.go", &src);
        let f = chunk_of(&c, "F");
        assert_eq!(f.start_line, line_with(&src, "// F does things."));
        assert!(f.text.starts_with("// F does things."));
        assert_disjoint(&src, &c);
        // The leftover text before F ends before its comment.
        assert!(c.iter().any(|b| b.text.ends_with("not F's")));
    }

    #[test]
    fn rust_item_chunk_starts_at_docs_and_attributes() {
        let src = format!(
            "//! Crate docs (inner: not the struct's).\n{}/// A thing.\n#[derive(Debug, Clone)]\npub struct S {{\n{}}}\n\n#[test]\nfn t() {{\n{}}}\n",
            filler("//"),
            body("    ", "pub field_{i}: Vec<String>,"),
            body("    ", "assert_eq!(1 + {i}, {i} + 1, \"addition commutes\");")
        );
        let (syms, c) = chunks_of(Lang::Rust, "lib.rs", &src);
        let s = chunk_of(&c, "S");
        assert_eq!(s.start_line, line_with(&src, "/// A thing."));
        let t = chunk_of(&c, "t");
        assert_eq!(t.start_line, line_with(&src, "#[test]"));
        // The symbols table keeps the definition's own span.
        let sym = syms.iter().find(|x| x.name == "S").unwrap();
        assert_eq!(sym.start_line, line_with(&src, "pub struct S"));
        assert_eq!(sym.doc.as_deref(), Some("A thing."));
        assert!(!c.iter().any(|x| x.symbol.is_some() && x.start_line == 1));
        assert_disjoint(&src, &c);
    }

    #[test]
    fn java_method_chunk_starts_at_javadoc_and_annotation() {
        let methods: String = (0..30)
            .map(|m| {
                format!(
                    "    /**\n     * Method {m}.\n     */\n    @Override\n    public String m{m}(String s) {{\n{}        return s;\n    }}\n\n",
                    body("        ", "s = s + \"{i} abcdefghijklmnopqrstuvwxyz0123456789\";")
                )
            })
            .collect();
        let src = format!("package p;\n\n{}class A {{\n{methods}}}\n", filler("//"));
        let (_, c) = chunks_of(Lang::Java, "A.java", &src);
        let m3 = chunk_of(&c, "A.m3");
        assert_eq!(m3.kind, "method");
        assert_eq!(m3.start_line, line_with(&src, "* Method 3.") - 1);
        assert!(m3.text.starts_with("    /**"));
        assert_disjoint(&src, &c);
    }

    #[test]
    fn c_function_chunk_starts_at_its_block_comment() {
        let src = format!(
            "#include <stdio.h>\n\n{}/* f: adds things up.\n * Returns the sum. */\nint f(int a) {{\n{}    return a;\n}}\n",
            filler("//"),
            body("    ", "a = a * {i} + (int) sizeof(\"abcdefghijklmnopqrstuvwxyz\");")
        );
        let (_, c) = chunks_of(Lang::C, "f.c", &src);
        let f = chunk_of(&c, "f");
        assert_eq!(f.start_line, line_with(&src, "/* f: adds"));
        assert_disjoint(&src, &c);
    }

    #[test]
    fn ts_method_chunk_starts_at_jsdoc_and_decorator() {
        let methods: String = (0..30)
            .map(|m| {
                format!(
                    "  /** Method {m}. */\n  @Input()\n  m{m}(s: string): string {{\n{}    return s;\n  }}\n\n",
                    body("    ", "s = s + \"{i} abcdefghijklmnopqrstuvwxyz0123456789\";")
                )
            })
            .collect();
        let src = format!(
            "import {{ Input }} from './core';\n\n{}/** The component. */\n@Component({{}})\nexport class A {{\n{methods}}}\n",
            filler("//")
        );
        let (_, c) = chunks_of(Lang::TypeScript, "a.ts", &src);
        let m3 = chunk_of(&c, "A.m3");
        assert_eq!(m3.kind, "method");
        assert_eq!(m3.start_line, line_with(&src, "/** Method 3. */"));
        // The class's own lead opens the block of its header.
        let head = c
            .iter()
            .find(|x| x.kind == "block" && x.symbol.as_deref() == Some("A"))
            .unwrap();
        assert_eq!(head.start_line, line_with(&src, "/** The component. */"));
        assert_disjoint(&src, &c);
    }

    #[test]
    fn python_function_chunk_starts_at_decorators() {
        let src = format!(
            "import functools\n\n{}# f, cached.\n@functools.cache\n@register(\"f\")\ndef f(a):\n    \"\"\"Doc of f.\"\"\"\n{}    return a\n",
            filler("#"),
            body("    ", "a = a * {i} + len(\"abcdefghijklmnopqrstuvwxyz0123456789\")")
        );
        let (syms, c) = chunks_of(Lang::Python, "f.py", &src);
        let f = chunk_of(&c, "f");
        assert_eq!(f.start_line, line_with(&src, "# f, cached."));
        let sym = syms.iter().find(|x| x.name == "f").unwrap();
        assert_eq!(sym.start_line, line_with(&src, "def f(a)"));
        assert_eq!(sym.doc.as_deref(), Some("Doc of f."));
        assert_disjoint(&src, &c);
    }

    #[test]
    fn lead_never_reaches_into_the_previous_definition() {
        // g's comment follows f on the next line: it is g's, and f's chunk ends before it.
        let body = body("\t", "a = a*{i} + len(\"abcdefghijklmnopqrstuvwxyz\")");
        let src = format!(
            "package p\n\n{}func f(a int) int {{\n{body}\treturn a\n}}\n// g too.\nfunc g(a int) int {{\n{body}\treturn a\n}}\n",
            filler("//")
        );
        let (_, c) = chunks_of(Lang::Go, "p.go", &src);
        assert_eq!(chunk_of(&c, "g").start_line, line_with(&src, "// g too."));
        assert!(chunk_of(&c, "f").text.ends_with("}"));
        assert_disjoint(&src, &c);
    }
}
