//! What the model sees per chunk: the chunk text under its context header,
//! one signature input per function and one per type starting in it, and
//! one window per other definition starting past its first
//! [`WINDOW_AFTER_BYTES`].

use crate::chunk::Chunk;

/// Most characters of one chunk sent to the model.
pub const MAX_INPUT_CHARS: usize = 2000;
/// What is embedded, as recorded in the manifest.
pub const INPUT_DOC: &str = "v6. per chunk (none for a test file's module-level code, whole-file and class-summary chunks, nor for a chunk of fewer than three words of 3+ letters): its context_header's file:/in: lines + chunk text, except that a chunk which is one function/method is embedded by its signature input alone (nothing when that function is a test), and a chunk of code in a language with a grammar here in whose first 200 bytes a function or type with an input of its own (below) starts gets no input of its own text; plus, for each function/method/constructor starting inside the chunk that is not a test (a test file's test… functions; #[test], #[tokio::test], @Test anywhere), its signature (prefixed by its container when the signature does not name it) + the first paragraph of its doc; plus, for each type (class, struct, interface, trait, enum) starting inside the chunk, except in test files, its declaration + the first paragraph of its doc, or without a doc its first 400 characters; plus, for each type without an input of its own (or function without a signature input) starting past the chunk's first 800 bytes, a window of the header + the definition's doc + its text. Identifiers are split into words (parseHTTPDate -> parse http date). ids repeat: a chunk's score is its best vector. Each input is cut at 2000 characters at a line boundary, code in a language with a grammar here (after identifiers are split) at 200 bytes (at a line break past 100, else a character boundary); the model truncates further (int8 MiniLMs: 128 tokens; fp32 MiniLM: 256)";
/// Definitions starting this far into a chunk get a vector of their own.
pub const WINDOW_AFTER_BYTES: u64 = 800;
/// Most extra windows per chunk.
pub const MAX_WINDOWS: usize = 32;

/// A definition, as windows need it.
#[derive(Clone, Copy)]
pub struct DefSpan<'a> {
    pub kind: &'a str,
    /// The defined name, e.g. `wait` (a test function's marks it as one).
    pub name: &'a str,
    pub start: u64,
    pub end: u64,
    pub doc: Option<&'a str>,
    /// The declaration line(s), e.g. `func (r *Reader) Read(p []byte) (int, error)`.
    pub signature: Option<&'a str>,
    /// The enclosing class or type, e.g. `Popen` for `def wait(self)`.
    pub container: Option<&'a str>,
}

/// Chunk kinds of test files that get no vector. On the Django
/// reference-doc set: hybrid MRR@10 0.598 -> 0.594, semantic 0.561 -> 0.559
/// (within noise), for 30% fewer inputs (bench/results/embed-runtime.md).
const TEST_KINDS_UNEMBEDDED: &[&str] = &["block", "file", "class_summary", "window"];

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
    cut_at(&mut s, MAX_INPUT_CHARS);
    Some(s)
}

/// Kinds whose declaration gets a vector of its own.
const CLASS_KINDS: &[&str] = &["class", "struct", "interface", "trait", "enum"];

/// The input of a type: its signature input when it has a doc, else its
/// declaration followed by its first lines.
fn type_text(d: &DefSpan, content: &str) -> Option<String> {
    if d.doc.is_some_and(|x| !x.trim().is_empty()) {
        return signature_text(d);
    }
    let body = content.get(d.start as usize..d.end as usize)?;
    let mut s = String::new();
    if let Some(c) = d.container.filter(|c| !c.is_empty()) {
        s.push_str(c);
        s.push_str(": ");
    }
    s.push_str(body);
    cut_at(&mut s, 400);
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

/// Cut `s` to at most `max` bytes: at its last line break past `max / 2`,
/// else at the last character boundary.
fn cut_at(s: &mut String, max: usize) {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        let keep = match s[..cut].rfind('\n') {
            Some(i) if i > max / 2 => i,
            _ => cut,
        };
        s.truncate(keep);
    }
}

/// Most bytes of one input of code in a language with a grammar here, after
/// identifiers are split (about 64 model tokens). Its functions' signatures
/// and docs have inputs of their own, so a chunk's first lines stand for it;
/// code without a grammar (Ruby, Kotlin, ...) is seen through its chunks
/// only and keeps the model's full cut (a 64-token cut everywhere cost
/// semble 0.005, in those languages). Against 128 tokens: this repository's
/// set-up demo 18.5 -> 14.8 s on 2 AVX2 cores, semble hybrid 0.835 -> 0.835,
/// the Django reference-doc set 0.615 -> 0.607 (bench/results/embed-runtime.md).
pub const PARSED_INPUT_CHARS: usize = 200;

/// Every model input of a chunk (recipe v6, [`INPUT_DOC`]): the chunk
/// itself, one signature input per function starting in it (the signature
/// alone when the chunk is that one function), then one window per type or
/// unsigned definition that starts past its first [`WINDOW_AFTER_BYTES`]
/// (so a long chunk's later definitions are not lost to the model's
/// truncation). `content` is the file content; `defs` the file's
/// definitions. A chunk of a test file that is not a definition
/// (module-level code, a whole small file, a class summary), a test itself
/// ([`is_test_function`]) and a chunk of fewer than [`MIN_WORDS`] words get
/// no input: keyword search finds them. Test helpers and classes keep
/// theirs (Django's `django/test/` is documented API). On the Django
/// reference-doc set the test rule drops a third of the inputs (31,116
/// chunks: 32,464 -> 21,307) at hybrid MRR@10 0.618 -> 0.615, semble's
/// benchmark 0.836 -> 0.835 (bench/results/embed-runtime.md).
///
/// Recipe v6: in parsed code (`parsed`), a chunk in whose first
/// [`PARSED_INPUT_CHARS`] bytes a function or type with an input of its own
/// starts gets no input of its own text: cut at those bytes, it would
/// repeat that definition's input under the file header. Inputs: docs-less
/// Django 22,882 -> 20,740 (cold build 41.5 -> 36-40 s on 2 Xeon cores), this
/// repository's set-up demo 2,573 -> 2,249; reference-doc set hybrid MRR@10
/// 0.6448 -> 0.6442, semantic 0.597 -> 0.597; semble hybrid NDCG@10 0.8718
/// -> 0.8707, semantic 0.8616 -> 0.8601, both within noise
/// (bench/results/embed-runtime.md).
pub fn inputs(
    c: &Chunk,
    is_test: bool,
    parsed: bool,
    content: &str,
    defs: &[DefSpan],
) -> Vec<String> {
    if is_test && TEST_KINDS_UNEMBEDDED.contains(&c.kind.as_str()) {
        return Vec::new();
    }
    if words(&c.text) < MIN_WORDS {
        return Vec::new();
    }
    let (mut out, repeated) = raw_inputs_lead(c, is_test, content, defs);
    if parsed && repeated && out.len() > 1 {
        // Cut at PARSED_INPUT_CHARS, the chunk's own input would repeat
        // that definition's input.
        out.remove(0);
    }
    for s in &mut out {
        *s = code_index_schemas::embed::naturalize(s);
        if parsed {
            cut_at(s, PARSED_INPUT_CHARS);
        }
    }
    out
}

#[cfg(test)]
fn raw_inputs(c: &Chunk, is_test: bool, content: &str, defs: &[DefSpan]) -> Vec<String> {
    raw_inputs_lead(c, is_test, content, defs).0
}

/// [`raw_inputs`], and whether the first input is the chunk's own text while
/// a definition with an input of its own starts within the chunk's first
/// [`PARSED_INPUT_CHARS`] bytes.
fn raw_inputs_lead(
    c: &Chunk,
    is_test: bool,
    content: &str,
    defs: &[DefSpan],
) -> (Vec<String>, bool) {
    let header = header_for_model(&c.context_header);
    let mut out = vec![input_with_header(c, &header)];
    if c.kind == "class_summary" {
        return (out, false);
    }
    let lead_until = c.start_byte + PARSED_INPUT_CHARS as u64;
    // Whether out[0] is still the chunk's own input, and whether a
    // definition with an input of its own starts within its first bytes.
    let mut whole = true;
    let mut lead = false;
    let inside = |d: &DefSpan| starts_in(c, d);
    let one_function = is_one_function(c, defs);
    // Definitions with a signature input, and tests (which get none); a
    // window would repeat them.
    let mut signed: Vec<u64> = Vec::new();
    let mut tests = 0;
    for d in defs {
        if signed.len() >= MAX_SIGNATURES {
            break;
        }
        if !SIGNATURE_KINDS.contains(&d.kind) || !inside(d) {
            continue;
        }
        if is_test_function(d, content, is_test) {
            signed.push(d.start);
            tests += 1;
            continue;
        }
        if let Some(s) = signature_text(d) {
            out.push(s);
            signed.push(d.start);
            lead |= d.start < lead_until;
        }
    }
    if one_function && signed.len() == 1 {
        if tests == 1 {
            // A chunk that is one test: keyword search finds it.
            return (Vec::new(), false);
        }
        // A chunk that is one function: its signature input stands for it.
        out.remove(0);
        whole = false;
    }
    // Each type starting in the chunk (not in a test file): its
    // declaration and the first paragraph of its doc, or without a doc its
    // first lines (`class HttpResponseGone(HttpResponse): status_code = 410`).
    // Django reference-doc set: class queries MRR@10 0.542 -> 0.585
    // (bench/results/embed-runtime.md).
    if !is_test {
        for d in defs {
            if !CLASS_KINDS.contains(&d.kind) || !inside(d) || signed.contains(&d.start) {
                continue;
            }
            if let Some(s) = type_text(d, content) {
                out.push(s);
                signed.push(d.start);
                lead |= d.start < lead_until;
            }
        }
    }
    let windows_from = out.len();
    for d in defs {
        if out.len() - windows_from >= MAX_WINDOWS {
            break;
        }
        if !WINDOW_KINDS.contains(&d.kind)
            || !inside(d)
            || d.start < c.start_byte + WINDOW_AFTER_BYTES
            || signed.contains(&d.start)
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
        cut_at(&mut s, MAX_INPUT_CHARS);
        out.push(s);
    }
    (out, whole && lead)
}

/// Fewer words (runs of three or more letters) than this in a chunk's text,
/// and it gets no vector: a closing brace, a lone `pub use`, a heading.
const MIN_WORDS: usize = 3;

/// The words of `text`, counted up to [`MIN_WORDS`].
fn words(text: &str) -> usize {
    let mut n = 0;
    let mut run = 0;
    for b in text.bytes().chain(std::iter::once(b' ')) {
        if b.is_ascii_alphabetic() {
            run += 1;
        } else {
            if run >= 3 {
                n += 1;
                if n >= MIN_WORDS {
                    return n;
                }
            }
            run = 0;
        }
    }
    n
}

/// Whether `d` is a test itself (not code it tests): a function or method
/// of a test file named `test…` (`test_parse`, `TestParse`, `testParse`),
/// or one marked as a test in any file (`#[test]`, `#[tokio::test]`,
/// `@Test`). Tests get no vector; keyword search finds them.
fn is_test_function(d: &DefSpan, content: &str, is_test_file: bool) -> bool {
    if !SIGNATURE_KINDS.contains(&d.kind) {
        return false;
    }
    if is_test_file && test_name(d.name) {
        return true;
    }
    marks(content, d).any(|l| {
        l.starts_with("#[test")
            || l.starts_with("#[rstest")
            || (l.starts_with("#[") && (l.contains("::test]") || l.contains("::test(")))
            || l.starts_with("@Test")
            || l.starts_with("@ParameterizedTest")
    })
}

/// `test`, `test_x`, `testX`, `Test_x`, `TestX`, `test1`; not `testing`.
fn test_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 4
        && b[..4].eq_ignore_ascii_case(b"test")
        && b.get(4)
            .is_none_or(|&n| n == b'_' || n.is_ascii_uppercase() || n.is_ascii_digit())
}

/// The attribute and annotation lines of `d` (trimmed): those right above
/// its first line (`#[test]` is not part of a Rust function's node) and its
/// own leading ones (a Java method's annotations are).
fn marks<'a>(content: &'a str, d: &DefSpan) -> impl Iterator<Item = &'a str> {
    let start = (d.start as usize).min(content.len());
    let (head, own) = match (content.get(..start), content.get(start..)) {
        (Some(h), Some(o)) => (h, o),
        _ => ("", ""),
    };
    let line_start = head.rfind('\n').map_or(0, |i| i + 1);
    let above = head[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .take_while(|l| l.starts_with("#[") || l.starts_with('@'))
        .take(8);
    let own = own
        .lines()
        .map(str::trim)
        .take_while(|l| l.starts_with("#[") || l.starts_with('@'))
        .take(8);
    above.chain(own)
}

/// Whether definition `d` starts inside chunk `c`.
fn starts_in(c: &Chunk, d: &DefSpan) -> bool {
    d.start >= c.start_byte && d.start < c.end_byte
}

/// Whether chunk `c` is one function or method: the first definition
/// starting in it has a signature input, and reaches the chunk's end.
/// Such a chunk is embedded by its signature input alone (its container,
/// declaration and doc): on the Django reference-doc set, dropping the
/// whole-text input of method chunks moved hybrid MRR@10 0.592 -> 0.595 and
/// semantic 0.559 -> 0.560, and saved a third of the model's tokens.
fn is_one_function(c: &Chunk, defs: &[DefSpan]) -> bool {
    if c.kind != "method" && c.kind != "definition" {
        return false;
    }
    defs.iter()
        .filter(|d| starts_in(c, d))
        .min_by_key(|d| d.start)
        .is_some_and(|d| {
            SIGNATURE_KINDS.contains(&d.kind)
                && d.signature.is_some_and(|s| !s.trim().is_empty())
                && d.end + 2 >= c.end_byte
        })
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
    fn each_type_gets_its_declaration_and_doc_or_first_lines() {
        let body =
            "class Base(object):\n    x = 1\n\nclass Gone(HttpResponse):\n    status_code = 410\n";
        let c = chunk("file: response.py", body);
        let gone_at = body.find("class Gone").unwrap();
        let defs = [
            DefSpan {
                kind: "class",
                doc: Some("A base.\n\nMore."),
                ..func("Base", "class Base(object)", 0, gone_at - 1)
            },
            DefSpan {
                kind: "class",
                ..func("Gone", "class Gone(HttpResponse)", gone_at, body.len())
            },
        ];
        let ins = raw_inputs(&c, false, body, &defs);
        assert_eq!(ins.len(), 3, "{ins:?}");
        assert_eq!(ins[1], "class Base(object)\nA base.");
        assert_eq!(ins[2], "class Gone(HttpResponse):\n    status_code = 410\n");
        // A test file's types get none.
        assert_eq!(raw_inputs(&c, true, body, &defs).len(), 1);
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
        let body = wait_then_poll(500);
        let c = chunk("file: sub.py\nin: class Popen\nrelated: wait, poll", &body);
        let poll_at = body.find("def poll").unwrap() as u64;
        let defs = [
            DefSpan {
                kind: "method",
                name: "x",
                start: 0,
                end: 28,
                doc: Some("Wait for the child.\n\nMore details."),
                signature: Some("def wait(self)"),
                container: Some("Popen"),
            },
            DefSpan {
                kind: "method",
                name: "x",
                start: poll_at,
                end: body.len() as u64,
                doc: None,
                signature: Some("def poll(self)"),
                container: Some("Popen"),
            },
            // A Go method names its receiver type in the signature: no prefix.
            DefSpan {
                kind: "method",
                name: "x",
                start: poll_at + 1,
                end: body.len() as u64,
                doc: None,
                signature: Some("func (r *Reader) Read(p []byte) (int, error)"),
                container: Some("Reader"),
            },
            // Outside the chunk: no input.
            DefSpan {
                kind: "function",
                name: "x",
                start: body.len() as u64 + 5,
                end: body.len() as u64 + 50,
                doc: None,
                signature: Some("def elsewhere()"),
                container: None,
            },
        ];
        let ins = raw_inputs(&c, false, &body, &defs);
        // No windows: both definitions past 800 bytes have a signature input.
        assert_eq!(ins.len(), 1 + 3, "{ins:#?}");
        assert!(ins[0].starts_with("file: sub.py\nin: class Popen\ndef wait"));
        assert_eq!(ins[1], "Popen: def wait(self)\nWait for the child.");
        assert_eq!(ins[2], "Popen: def poll(self)");
        assert_eq!(ins[3], "func (r *Reader) Read(p []byte) (int, error)");
        assert!(inputs(&c, false, false, &body, &defs)[3]
            .starts_with("func (r *Reader) Read(p []byte)"));
        // In a test file a definition keeps its inputs, module-level code has none.
        assert_eq!(inputs(&c, true, false, &body, &defs).len(), 4);
        let mut block = c.clone();
        block.kind = "block".into();
        assert!(inputs(&block, true, false, &body, &defs).is_empty());
        assert_eq!(inputs(&block, false, false, &body, &defs).len(), 4);
        // A class summary gets no signature inputs.
        let mut summary = c.clone();
        summary.kind = "class_summary".into();
        assert_eq!(raw_inputs(&summary, false, &body, &defs).len(), 1);
    }

    #[test]
    fn a_function_chunk_is_its_signature_and_classes_get_windows() {
        let body = "def wait(self):\n    return self.poll()\n";
        let mut c = chunk("file: sub.py\nin: class Popen", body);
        c.kind = "method".into();
        let wait = DefSpan {
            kind: "method",
            name: "x",
            start: 0,
            end: body.len() as u64,
            doc: Some("Wait for the child."),
            signature: Some("def wait(self)"),
            container: Some("Popen"),
        };
        let ins = raw_inputs(&c, false, body, &[wait]);
        assert_eq!(
            ins,
            vec!["Popen: def wait(self)\nWait for the child.".to_string()]
        );
        // A block, or a chunk the function does not fill, keeps its text.
        c.kind = "block".into();
        assert_eq!(raw_inputs(&c, false, body, &[wait]).len(), 2);
        c.kind = "method".into();
        let short = DefSpan { end: 10, ..wait };
        assert_eq!(raw_inputs(&c, false, body, &[short]).len(), 2);
        // A class past the first 800 bytes gets its own input (a window in a
        // test file).
        let body = format!("{}class Inner:\n    x = 1\n", "#\n".repeat(500));
        let mut c = chunk("file: m.py", &body);
        c.kind = "definition".into();
        let at = body.find("class Inner").unwrap() as u64;
        let inner = DefSpan {
            kind: "class",
            name: "x",
            start: at,
            end: body.len() as u64,
            doc: None,
            signature: Some("class Inner:"),
            container: None,
        };
        let ins = raw_inputs(&c, false, &body, &[inner]);
        assert_eq!(ins.len(), 2, "{ins:#?}");
        assert_eq!(ins[1], "class Inner:\n    x = 1\n");
        let ins = raw_inputs(&c, true, &body, &[inner]);
        assert_eq!(ins.len(), 2, "{ins:#?}");
        assert!(ins[1].starts_with("file: m.py\nclass Inner:"));
    }

    #[test]
    fn parsed_chunk_led_by_a_definition_with_its_own_input_has_none_of_its_own() {
        // Two functions: the first starts at the chunk's start, so the
        // chunk's own input (cut at PARSED_INPUT_CHARS) would repeat it.
        let body = wait_then_poll(20);
        let c = chunk("file: sub.py\nin: class Popen", &body);
        let poll_at = body.find("def poll").unwrap();
        let defs = [
            DefSpan {
                doc: Some("Wait for the child."),
                ..func("wait", "def wait(self)", 0, 28)
            },
            func("poll", "def poll(self)", poll_at, body.len()),
        ];
        let parsed = inputs(&c, false, true, &body, &defs);
        assert_eq!(parsed.len(), 2, "{parsed:#?}");
        assert!(parsed[0].starts_with("def wait(self)"), "{parsed:#?}");
        // Code without a grammar keeps its chunk input (it is not cut).
        assert_eq!(inputs(&c, false, false, &body, &defs).len(), 3);
        // A definition starting past the first PARSED_INPUT_CHARS bytes
        // leaves the chunk's input: its first lines say something else.
        let late = PARSED_INPUT_CHARS + 10;
        let body = format!(
            "{}def poll(self):\n    return 2\ny = 2\n",
            "x = 1\n".repeat(late / 6 + 1)
        );
        let c = chunk("file: sub.py", &body);
        let at = body.find("def poll").unwrap();
        assert!(at > PARSED_INPUT_CHARS);
        let end = body.find("y = 2").unwrap() - 1;
        let ins = inputs(
            &c,
            false,
            true,
            &body,
            &[func("poll", "def poll(self)", at, end)],
        );
        assert_eq!(ins.len(), 2, "{ins:#?}");
        assert!(ins[0].starts_with("file: sub.py\nx = 1"), "{ins:#?}");
        // A test (no input of its own) at the start does not count.
        let body = format!(
            "def test_wait(self):\n{}\ndef poll(self):\n    return 2\ny = 2\n",
            "    assert wait()\n".repeat(15)
        );
        let c = chunk("file: sub.py", &body);
        let at = body.find("def poll").unwrap();
        assert!(at > PARSED_INPUT_CHARS);
        let end = body.find("y = 2").unwrap() - 1;
        let defs = [
            func("test_wait", "def test_wait(self)", 0, at - 1),
            func("poll", "def poll(self)", at, end),
        ];
        let ins = inputs(&c, true, true, &body, &defs);
        assert_eq!(ins.len(), 2, "{ins:#?}");
        assert!(
            ins[0].starts_with("file: sub.py\ndef test wait"),
            "{ins:#?}"
        );
        // A chunk that is one function is its signature input, which a
        // type nested in the function does not take away.
        let body = "def outer(x):\n    class Inner:\n        y = 1\n    return Inner\n";
        let mut c = chunk("file: sub.py", body);
        c.kind = "definition".into();
        let at = body.find("class Inner").unwrap();
        let defs = [
            func("outer", "def outer(x)", 0, body.len()),
            DefSpan {
                kind: "class",
                ..func("Inner", "class Inner:", at, at + 30)
            },
        ];
        let ins = inputs(&c, false, true, body, &defs);
        assert_eq!(ins.len(), 2, "{ins:#?}");
        assert_eq!(ins[0], "def outer(x)");
    }

    /// `def wait` and `def poll`, `gap` comment lines apart.
    fn wait_then_poll(gap: usize) -> String {
        format!(
            "def wait(self):\n    return 1\n{}def poll(self):\n    return 2\n",
            "#\n".repeat(gap)
        )
    }

    fn func<'a>(name: &'a str, sig: &'a str, start: usize, end: usize) -> DefSpan<'a> {
        DefSpan {
            kind: "function",
            name,
            start: start as u64,
            end: end as u64,
            doc: None,
            signature: Some(sig),
            container: None,
        }
    }

    #[test]
    fn tests_and_wordless_chunks_get_no_vector() {
        // A closing brace or a lone short statement: no input.
        let mut c = chunk("file: a.rs", "}\n");
        c.kind = "block".into();
        assert!(inputs(&c, false, false, "}\n", &[]).is_empty());
        let c = chunk("file: a.rs", "pub use a::b;\n");
        assert!(inputs(&c, false, false, "pub use a::b;\n", &[]).is_empty());
        assert_eq!(words("fn parse_int(s: &str)"), 3);

        // A test file's function named test_…: no input; elsewhere it keeps its signature.
        let body = "def test_wait(self):\n    assert wait() == 1\n";
        let mut c = chunk("file: tests/test_sub.py", body);
        c.kind = "method".into();
        let d = [func("test_wait", "def test_wait(self)", 0, body.len())];
        assert!(inputs(&c, true, false, body, &d).is_empty());
        assert_eq!(
            inputs(&c, false, false, body, &d),
            vec!["def test wait(self)".to_string()]
        );
        let d = [func("testing_env", "def testing_env(self)", 0, body.len())];
        assert_eq!(inputs(&c, true, false, body, &d).len(), 1);

        // A Rust #[test] (its attribute above the node) or #[tokio::test], in any file.
        for attr in ["#[test]", "#[tokio::test(flavor = \"multi_thread\")]"] {
            let body =
                format!("{attr}\nfn parses_numbers() {{\n    assert_eq!(parse(1), 1);\n}}\n");
            let at = body.find("fn ").unwrap();
            let mut c = chunk("file: src/lib.rs", &body);
            c.kind = "definition".into();
            let d = [func(
                "parses_numbers",
                "fn parses_numbers()",
                at,
                body.len(),
            )];
            assert!(inputs(&c, false, false, &body, &d).is_empty(), "{attr}");
        }
        // A Java @Test method (annotations inside the node), next to a helper.
        let body = "class T {\n  @Test\n  void parses() { check(); }\n  void check() { assertTrue(ok()); }\n}\n";
        let (a, b) = (
            body.find("@Test").unwrap(),
            body.find("void check").unwrap(),
        );
        let d = [
            func("parses", "void parses()", a, b),
            func("check", "void check()", b, body.len() - 2),
        ];
        let c = chunk("file: T.java", body);
        let ins = inputs(&c, true, false, body, &d);
        assert_eq!(ins.len(), 2, "{ins:#?}");
        assert_eq!(ins[1], "void check()");

        for (n, t) in [
            ("test", true),
            ("test_x", true),
            ("TestX", true),
            ("testX", true),
            ("test1", true),
        ] {
            assert_eq!(test_name(n), t, "{n}");
        }
        for n in ["testing", "tests", "Tes", "contest", "attest_x"] {
            assert!(!test_name(n), "{n}");
        }
    }
}
