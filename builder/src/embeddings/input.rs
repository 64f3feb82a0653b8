//! What the model sees per chunk: the chunk text under its context header,
//! one signature input per function starting in it, and one window per
//! definition starting past its first [`WINDOW_AFTER_BYTES`].

use crate::chunk::Chunk;

/// Most characters of one chunk sent to the model.
pub const MAX_INPUT_CHARS: usize = 2000;
/// What is embedded, as recorded in the manifest.
pub const INPUT_DOC: &str = "v2. per chunk: its context_header's file:/in: lines + chunk text; plus, for each function/method/constructor starting inside the chunk, its signature (prefixed by its container when the signature does not name it) + the first paragraph of its doc; plus, for each function/method/type starting past the chunk's first 800 bytes, a window of the header + the definition's doc + its text. Identifiers are split into words (parseHTTPDate -> parse http date). ids repeat: a chunk's score is its best vector. Each input is cut at 2000 characters at a line boundary; the model truncates further (MiniLM: 256 tokens)";
/// Definitions starting this far into a chunk get a vector of their own.
pub const WINDOW_AFTER_BYTES: u64 = 800;
/// Most extra windows per chunk.
pub const MAX_WINDOWS: usize = 32;

/// A definition, as windows need it.
pub struct DefSpan<'a> {
    pub kind: &'a str,
    pub start: u64,
    pub end: u64,
    pub doc: Option<&'a str>,
    /// The declaration line(s), e.g. `func (r *Reader) Read(p []byte) (int, error)`.
    pub signature: Option<&'a str>,
    /// The enclosing class or type, e.g. `Popen` for `def wait(self)`.
    pub container: Option<&'a str>,
}

/// Kinds whose signature gets a vector of its own.
const SIGNATURE_KINDS: &[&str] = &["function", "method", "constructor"];
/// Most signature vectors per chunk.
pub const MAX_SIGNATURES: usize = 64;
/// Most characters of a doc comment added to a signature vector.
const SIGNATURE_DOC_CHARS: usize = 600;

/// The signature input of a definition: `Container: signature`, then the
/// first paragraph of its doc. A short, body-free text matches a
/// description of what the function does far better than the whole chunk
/// (measured with bench/eval_search.py: Go semantic MRR@10 0.370 -> 0.476).
pub fn signature_text(d: &DefSpan) -> Option<String> {
    let sig = d.signature.map(str::trim).filter(|x| !x.is_empty())?;
    let mut s = String::with_capacity(sig.len() + 64);
    if let Some(c) = d.container.filter(|c| !c.is_empty() && !sig.contains(*c)) {
        s.push_str(c);
        s.push_str(": ");
    }
    s.push_str(sig);
    if let Some(doc) = d.doc.map(str::trim).filter(|x| !x.is_empty()) {
        let para = doc.split("\n\n").next().unwrap_or(doc);
        let mut cut = para.len().min(SIGNATURE_DOC_CHARS);
        while !para.is_char_boundary(cut) {
            cut -= 1;
        }
        s.push('\n');
        s.push_str(&para[..cut]);
    }
    cap(&mut s);
    Some(s)
}

const WINDOW_KINDS: &[&str] = &[
    "function",
    "method",
    "constructor",
    "class",
    "struct",
    "interface",
    "trait",
    "enum",
    "macro",
];

fn cap(s: &mut String) {
    if s.len() > MAX_INPUT_CHARS {
        let mut cut = MAX_INPUT_CHARS;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        let keep = match s[..cut].rfind('\n') {
            Some(i) if i > MAX_INPUT_CHARS / 2 => i,
            _ => cut,
        };
        s.truncate(keep);
    }
}

/// Every model input of a chunk: the chunk itself, then one window per
/// definition that starts past its first [`WINDOW_AFTER_BYTES`] (so a long
/// chunk's later functions are not lost to the model's truncation).
/// `content` is the file content; `defs` the file's definitions.
pub fn inputs(c: &Chunk, content: &str, defs: &[DefSpan]) -> Vec<String> {
    let mut out = raw_inputs(c, content, defs);
    for s in &mut out {
        *s = code_index_schemas::embed::naturalize(s);
    }
    out
}

fn raw_inputs(c: &Chunk, content: &str, defs: &[DefSpan]) -> Vec<String> {
    let header = header_for_model(&c.context_header);
    let mut out = vec![input_with_header(c, &header)];
    if c.kind == "class_summary" {
        return out;
    }
    let mut sigs = 0;
    for d in defs {
        if sigs >= MAX_SIGNATURES {
            break;
        }
        if !SIGNATURE_KINDS.contains(&d.kind) || d.start < c.start_byte || d.start >= c.end_byte {
            continue;
        }
        if let Some(s) = signature_text(d) {
            out.push(s);
            sigs += 1;
        }
    }
    let windows_from = out.len();
    for d in defs {
        if out.len() - windows_from >= MAX_WINDOWS {
            break;
        }
        if !WINDOW_KINDS.contains(&d.kind)
            || d.start < c.start_byte + WINDOW_AFTER_BYTES
            || d.start >= c.end_byte
        {
            continue;
        }
        let end = d.end.min(c.end_byte) as usize;
        let Some(body) = content.get(d.start as usize..end) else {
            continue;
        };
        let mut s = String::with_capacity(header.len() + body.len().min(MAX_INPUT_CHARS) + 64);
        s.push_str(&header);
        if let Some(doc) = d.doc {
            s.push_str(doc);
            s.push('\n');
        }
        s.push_str(body);
        cap(&mut s);
        out.push(s);
    }
    out
}

/// The context header as the model sees it: the `file:` and `in:` lines.
/// The `defines:` and `related:` name lists help keyword search but make
/// sibling chunks look alike to the model (measured: Go semantic MRR@10
/// 0.349 with them, 0.370 without), so they are left out.
pub fn header_for_model(h: &str) -> String {
    let mut s = String::with_capacity(h.len() + 1);
    for l in h.lines() {
        if l.starts_with("defines: ") || l.starts_with("related: ") {
            continue;
        }
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// The text embedded for a chunk: the model header, then the chunk text.
pub fn input_text(c: &Chunk) -> String {
    input_with_header(c, &header_for_model(&c.context_header))
}

fn input_with_header(c: &Chunk, header: &str) -> String {
    let mut s = String::with_capacity(header.len() + c.text.len().min(MAX_INPUT_CHARS));
    s.push_str(header);
    let budget = MAX_INPUT_CHARS.saturating_sub(s.len());
    if c.text.len() <= budget {
        s.push_str(&c.text);
    } else {
        let mut cut = budget;
        while cut > 0 && !c.text.is_char_boundary(cut) {
            cut -= 1;
        }
        let head = &c.text[..cut];
        let head = match head.rfind('\n') {
            Some(i) if i > budget / 2 => &head[..i],
            _ => head,
        };
        s.push_str(head);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(header: &str, text: &str) -> Chunk {
        Chunk {
            id: 1,
            chunk_type: "code".into(),
            kind: "definition".into(),
            symbol: None,
            heading_path: None,
            start_line: 1,
            end_line: 1,
            start_byte: 0,
            end_byte: text.len() as u64,
            token_count: 1,
            context_header: header.into(),
            text: text.into(),
        }
    }

    #[test]
    fn input_starts_with_header_and_is_capped() {
        let long = "x = 1\n".repeat(1000);
        let s = input_text(&chunk("file: a.py", &long));
        assert!(s.starts_with("file: a.py\nx = 1\n"));
        assert!(s.len() <= MAX_INPUT_CHARS);
        assert!(s.ends_with("x = 1"));
        let s = input_text(&chunk("h", "é".repeat(3000).as_str()));
        assert!(s.len() <= MAX_INPUT_CHARS);
    }

    #[test]
    fn model_header_drops_name_lists() {
        let h = "file: a/b.py\nin: class Popen(object)\nrelated: wait, poll, kill";
        assert_eq!(
            header_for_model(h),
            "file: a/b.py\nin: class Popen(object)\n"
        );
        let h = "file: x.go\ndefines: a, b, c";
        assert_eq!(header_for_model(h), "file: x.go\n");
    }

    #[test]
    fn one_signature_input_per_function_in_the_chunk_then_windows() {
        let body = format!(
            "def wait(self):\n    return 1\n{}def poll(self):\n    return 2\n",
            "#\n".repeat(500)
        );
        let c = chunk("file: sub.py\nin: class Popen\nrelated: wait, poll", &body);
        let poll_at = body.find("def poll").unwrap() as u64;
        let defs = [
            DefSpan {
                kind: "method",
                start: 0,
                end: 28,
                doc: Some("Wait for the child.\n\nMore details."),
                signature: Some("def wait(self)"),
                container: Some("Popen"),
            },
            DefSpan {
                kind: "method",
                start: poll_at,
                end: body.len() as u64,
                doc: None,
                signature: Some("def poll(self)"),
                container: Some("Popen"),
            },
            // A Go method names its receiver type in the signature: no prefix.
            DefSpan {
                kind: "method",
                start: poll_at + 1,
                end: body.len() as u64,
                doc: None,
                signature: Some("func (r *Reader) Read(p []byte) (int, error)"),
                container: Some("Reader"),
            },
            // Outside the chunk: no input.
            DefSpan {
                kind: "function",
                start: body.len() as u64 + 5,
                end: body.len() as u64 + 50,
                doc: None,
                signature: Some("def elsewhere()"),
                container: None,
            },
        ];
        let ins = raw_inputs(&c, &body, &defs);
        assert_eq!(ins.len(), 1 + 3 + 2, "{ins:#?}");
        assert!(ins[0].starts_with("file: sub.py\nin: class Popen\ndef wait"));
        assert_eq!(ins[1], "Popen: def wait(self)\nWait for the child.");
        assert_eq!(ins[2], "Popen: def poll(self)");
        assert_eq!(ins[3], "func (r *Reader) Read(p []byte) (int, error)");
        // Windows: the definitions past the first 800 bytes, with the model header.
        assert!(ins[4].starts_with("file: sub.py\nin: class Popen\ndef poll"));
        assert!(inputs(&c, &body, &defs)[3].starts_with("func (r *Reader) Read(p []byte)"));
        // A class summary gets no signature inputs.
        let mut summary = c.clone();
        summary.kind = "class_summary".into();
        assert_eq!(raw_inputs(&summary, &body, &defs).len(), 1);
    }
}
