//! Per-file analysis: read, detect binary, redact secrets, parse, chunk.
//! The result depends only on the path, the bytes and the config, which is
//! what lets `--previous` reuse it for unchanged files.

use crate::chunk::{chunk_file, Chunk};
use crate::config::Effective;
use crate::ids::sha256_hex;
use crate::language::Lang;
use crate::parse::{extract, parse_tree, Parsed};
use crate::secrets;
use crate::walk::Entry;

/// File-level facts (the files row without the module columns).
#[derive(Clone, Debug, PartialEq)]
pub struct FileRecord {
    pub path: String,
    pub lang: Lang,
    pub size: u64,
    pub line_count: u32,
    pub sha256: String,
    pub is_test: bool,
    pub is_generated: bool,
    pub is_lossy: bool,
    pub secret_count: u32,
    pub content: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    pub file: FileRecord,
    pub parsed: Parsed,
    pub chunks: Vec<Chunk>,
}

pub enum Outcome {
    Done(Box<Analysis>),
    Binary,
    Unreadable(std::io::Error),
}

/// Read and analyze one walked file.
pub fn read_and_analyze(root: &std::path::Path, entry: &Entry, cfg: &Effective) -> Outcome {
    let _ = root;
    let bytes = match std::fs::read(&entry.abs) {
        Ok(b) => b,
        Err(e) => return Outcome::Unreadable(e),
    };
    if memchr::memchr(0, &bytes).is_some() {
        return Outcome::Binary;
    }
    Outcome::Done(Box::new(analyze_bytes(&entry.rel, bytes, cfg)))
}

pub fn count_lines(b: &[u8]) -> u32 {
    let n = memchr::memchr_iter(b'\n', b).count();
    (n + usize::from(!b.is_empty() && *b.last().unwrap() != b'\n')) as u32
}

/// Nanoseconds spent per stage (read by `index` under CODE_INDEX_TIMING).
pub static STAGE_NS: [std::sync::atomic::AtomicU64; 4] =
    [const { std::sync::atomic::AtomicU64::new(0) }; 4];
pub const STAGES: [&str; 4] = ["secrets+utf8", "parse", "extract", "chunk"];

fn lap(i: usize, t: &mut std::time::Instant) {
    let now = std::time::Instant::now();
    STAGE_NS[i].fetch_add(
        (now - *t).as_nanos() as u64,
        std::sync::atomic::Ordering::Relaxed,
    );
    *t = now;
}

/// Detect and mask the secrets of the file at `path` (unless the config
/// ignores it); the findings.
fn redact(path: &str, bytes: &mut [u8], cfg: &Effective) -> Vec<secrets::Finding> {
    let findings = if cfg.secrets_ignore.is_match(path) {
        Vec::new()
    } else {
        secrets::detect(path, bytes, &cfg.config.secrets.ignore_values)
    };
    secrets::redact(bytes, &findings);
    findings
}

/// `files.content_sha256` of a file: the hash of its published (redacted)
/// bytes, as an incremental build compares it with a previous snapshot's.
pub fn published_sha256(path: &str, mut bytes: Vec<u8>, cfg: &Effective) -> String {
    redact(path, &mut bytes, cfg);
    sha256_hex(&bytes)
}

/// Analyze a file's bytes.
pub fn analyze_bytes(path: &str, mut bytes: Vec<u8>, cfg: &Effective) -> Analysis {
    let lang = Lang::detect(path);
    let mut t = std::time::Instant::now();
    let size = bytes.len() as u64;
    let line_count = count_lines(&bytes);
    let findings = redact(path, &mut bytes, cfg);
    // The hash of what is published: a hash of the file before redaction
    // would let a guess of a redacted secret be confirmed offline.
    let sha256 = sha256_hex(&bytes);
    let (content, is_lossy) = match String::from_utf8(bytes) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    };
    let is_generated = is_generated(path, lang, &content);
    lap(0, &mut t);
    let is_test = cfg.tests.is_match(path);
    // Generated files and files past the parse limit are text only.
    let (parsed, chunks) = if is_generated || size > crate::config::PARSE_MAX_BYTES {
        (Parsed::default(), Vec::new())
    } else {
        let (parsed, chunks) = if lang.is_code() {
            let tree = parse_tree(lang, content.as_bytes());
            lap(1, &mut t);
            let p = tree
                .map(|tree| extract(lang, path, content.as_bytes(), &tree))
                .unwrap_or_default();
            lap(2, &mut t);
            let chunks = chunk_file(path, lang, &content, &p.symbols);
            (p, chunks)
        } else if crate::outline::is_outlined(path) {
            // Code without a grammar: its outline's units cut the chunks,
            // and those that are definitions are its symbols.
            let units = crate::outline::outline(path, &content);
            let chunks = chunk_file(path, lang, &content, &units);
            let symbols = crate::outline::definitions(&units, &content);
            let p = Parsed {
                symbols,
                ..Parsed::default()
            };
            (p, chunks)
        } else {
            (Parsed::default(), chunk_file(path, lang, &content, &[]))
        };
        lap(3, &mut t);
        (parsed, chunks)
    };
    Analysis {
        file: FileRecord {
            path: path.to_string(),
            lang,
            size,
            line_count,
            sha256,
            is_test,
            is_generated,
            is_lossy,
            secret_count: findings.len() as u32,
            content,
        },
        parsed,
        chunks,
    }
}

/// Package managers' lock files: written by a tool, read by none of us.
const LOCK_FILES: &[&str] = &[
    "cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lock",
    "poetry.lock",
    "pipfile.lock",
    "uv.lock",
    "pdm.lock",
    "composer.lock",
    "gemfile.lock",
    "podfile.lock",
    "package.resolved",
    "mix.lock",
    "flake.lock",
    "go.sum",
    "packages.lock.json",
    "pubspec.lock",
];

/// Minified or bundled output, and lock files. `dist/` and `build/` alone do
/// not make a file generated (Go's `go/build` is source); the content has
/// to say so.
pub fn is_generated(path: &str, lang: Lang, content: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    if LOCK_FILES.contains(&name) {
        return true;
    }
    if [
        ".min.js",
        ".min.css",
        ".min.mjs",
        ".bundle.js",
        "-bundle.js",
        ".chunk.js",
        ".js.map",
        ".css.map",
    ]
    .iter()
    .any(|s| name.ends_with(s))
    {
        return true;
    }
    let web = lang.is_js_like() || name.ends_with(".css") || name.ends_with(".json");
    if !web || content.len() < 2048 {
        return false;
    }
    let head = &content.as_bytes()[..content.len().min(64 * 1024)];
    let lines = memchr::memchr_iter(b'\n', head).count() + 1;
    let avg = head.len() / lines;
    let longest = head
        .split(|&b| b == b'\n')
        .map(|l| l.len())
        .max()
        .unwrap_or(0);
    if avg > 300 || (longest > 5000 && lines < 20) {
        return true;
    }
    let in_out_dir = lower.starts_with("dist/")
        || lower.starts_with("build/")
        || lower.contains("/dist/")
        || lower.contains("/build/");
    in_out_dir
        && [
            "__webpack_require__",
            "webpackBootstrap",
            "/******/",
            "//# sourceMappingURL=",
            "System.register(",
        ]
        .iter()
        .any(|m| content.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_detection() {
        let long = "var a=1;".repeat(1000);
        assert!(is_generated("x/app.js", Lang::JavaScript, &long));
        assert!(is_generated("x/app.min.js", Lang::JavaScript, "a"));
        let normal = "function f() {\n  return 1;\n}\n".repeat(200);
        assert!(!is_generated("dist/index.js", Lang::JavaScript, &normal));
        let bundled = format!("{normal}//# sourceMappingURL=index.js.map\n");
        assert!(is_generated("dist/index.js", Lang::JavaScript, &bundled));
        assert!(!is_generated("src/go/build/build.go", Lang::Go, &long));
        assert!(is_generated("Cargo.lock", Lang::Text, "version = 3\n"));
        assert!(is_generated("web/package-lock.json", Lang::Text, "{}"));
        assert!(!is_generated("src/lock.rs", Lang::Rust, "fn lock() {}"));
    }

    #[test]
    fn lines_counted_like_wc_plus_last() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
    }
}
