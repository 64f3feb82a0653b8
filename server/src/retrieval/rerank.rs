//! The ranking stage after fusion: priors that no single chunk's text
//! carries. Each one is measured on its own (bench/results/ranking.md) and
//! can be switched off for comparison with `CODE_INDEX_RANK=-name,...`.
//!
//! - `path`: query words found in the file's name or its directory's name
//!   (split identifiers, prefix-tolerant: `dependency` ~ `dependencies`),
//!   and more for a source file the query names outright: adjacent words
//!   joined (`JSON reader` → `JsonReader.java`) or a capitalized word
//!   (`the Functor type class` → `Functor.scala`), or a word written in
//!   lower case that is the exact name of one file and no other
//!   (`namedword`: "multipart form data parsing" → `multipart.rb`). The
//!   project's own name,
//!   written out in the query, counts in no path (`ownname`: "bash-it
//!   search functionality" is not `bash-it.completion.bash`).
//! - `coherence`: a file whose chunks match the query in several places
//!   lifts its best chunk.
//! - `define`: the definition of the identifier a query is goes up, and
//!   files named after it bring their definitions in.
//! - `coverage`: the best candidates gain with the share of the query's
//!   distinct terms their text holds.
//! - `penalty`: tests, `__init__.py`-style re-export files, examples,
//!   benchmarks, compat shims, vendored third-party code and amalgamations
//!   and `.d.ts` stubs are down-weighted.
//! - `head`: a file's 50 best candidates are weighed again by how well the
//!   query matches the heads (qualified name, signature, first doc
//!   paragraph) of the definitions starting in them; the best by that
//!   weight answers for the file, which keeps its place; in keyword mode,
//!   when one file's heads lead the others', they weigh across files too.
//! - `private`: a file whose best candidate is a private definition
//!   (`_get_raw_host`) answers with its best public one when that scores
//!   nearly as well; the file keeps its place.
//! - `proximity` (on the keyword list, before fusion): adjacent query
//!   terms that stand close in a candidate's text add to its BM25 score.

use super::keyword::{is_stop, query_terms, split_ident, stem};
use super::*;

/// Which stages run (all by default; `CODE_INDEX_RANK=-path,-coherence`
/// switches stages off for an ablation). Read once.
pub(crate) fn enabled(stage: &str) -> bool {
    static OFF: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let off = OFF.get_or_init(|| {
        std::env::var("CODE_INDEX_RANK")
            .unwrap_or_default()
            .split(',')
            .filter_map(|s| s.trim().strip_prefix('-').map(str::to_string))
            .collect()
    });
    !off.iter().any(|s| s == stage)
}

/// The stage's weights. Each can be overridden for a sweep with
/// `CODE_INDEX_RANK_<NAME>=<value>` (read once); the defaults are the
/// measured ones (bench/results/ranking.md).
pub(crate) struct Knobs {
    /// Share of the best score added to a chunk whose path holds every query word.
    pub path: f32,
    /// Share of the best score added to the best chunk of the file with the
    /// largest sum of candidate scores (others in proportion).
    pub coherence: f32,
    /// Share of the best score added to a chunk defining the name a query
    /// is (half again in a file named after it).
    pub define: f32,
    /// Shortest word that matches a longer one as its prefix.
    pub prefix_min: usize,
    /// A top candidate's score is multiplied by 1 + this × the share of the
    /// query's distinct terms its text holds.
    pub coverage: f32,
    /// Path priors (multiplied).
    pub test: f32,
    pub reexport: f32,
    pub compat: f32,
    pub examples: f32,
    /// `bench/`, `benchmarks/`, `*_benchmark.cc`, `*.bench.ts`.
    pub bench: f32,
    pub data: f32,
    pub dts: f32,
    /// Share of the best score added to a chunk of a file the query names
    /// (two or three adjacent words, `JSON reader` → `JsonReader.java`).
    pub named: f32,
    /// The same for one capitalized word inside the query (`the Functor type class`).
    pub named_one: f32,
    /// How much of the `path` stage's gain depends on the share of the
    /// file name's words the query holds ([`name_precision`]): a file named
    /// exactly for the query's words beats one whose name adds others.
    pub pathprec: f32,
    /// Prior of a file under a superseded version directory ([`superseded_dirs`]).
    pub superseded: f32,
    /// Prior of vendored third-party code ([`path_penalty`]).
    pub vendor: f32,
    /// Share of a query-term pair's idf that a keyword candidate gains
    /// when the pair stands close in its text ([`super::rank`]'s proximity).
    pub proximity: f32,
    /// Prior of a definition of a name the query compares with ([`compared_names`]).
    pub compared: f32,
    /// Prior of a chunk that is a private definition ([`is_private_name`]).
    pub private: f32,
    /// Weight of a candidate's definition heads when a file's chunk is
    /// chosen ([`Ctx::heads`]).
    pub head: f32,
    /// The same across files, in keyword mode, when the best head stands
    /// out ([`HEAD_LEAD_FROM`]).
    pub head_across: f32,
    /// Weight of the file vote for "how ..." questions in hybrid mode
    /// ([`super::fusion::file_vote`]).
    pub file_vote: f32,
}

pub(crate) fn knobs() -> &'static Knobs {
    static K: std::sync::OnceLock<Knobs> = std::sync::OnceLock::new();
    K.get_or_init(|| {
        let v = |name: &str, default: f32| {
            std::env::var(format!("CODE_INDEX_RANK_{name}"))
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        Knobs {
            path: v("PATH", 1.0),
            coherence: v("COHERENCE", 0.2),
            define: v("DEFINE", 3.0),
            prefix_min: v("PREFIX_MIN", 3.0) as usize,
            coverage: v("COVERAGE", 0.3),
            test: v("TEST", 0.3),
            reexport: v("REEXPORT", 0.5),
            compat: v("COMPAT", 0.3),
            examples: v("EXAMPLES", 0.3),
            bench: v("BENCH", 0.3),
            data: v("DATA", 0.5),
            dts: v("DTS", 0.7),
            named: v("NAMED", 0.5),
            named_one: v("NAMED_ONE", 0.3),
            pathprec: v("PATHPREC", 0.25),
            superseded: v("SUPERSEDED", 0.1),
            vendor: v("VENDOR", 0.3),
            proximity: v("PROXIMITY", 0.4),
            compared: v("COMPARED", 0.5),
            private: v("PRIVATE", 0.7),
            head: v("HEAD", 2.0),
            head_across: v("HEAD_ACROSS", 1.0),
            file_vote: v("FILEVOTE", super::fusion::FILE_VOTE),
        }
    })
}

/// How many of the best candidates the coverage stage reads (their text is
/// tokenized at query time): 30 and 100 score the same, 300 no better, and
/// 30 costs 2-3 ms less per query (bench/results/ranking.md).
const COVERAGE_TOP: usize = 30;

/// How many of the best candidates the head stage reads.
const HEAD_TOP: usize = 50;
/// Across files, the head stage weighs in when the best file's head score
/// is more than this times the second file's, fully at [`HEAD_LEAD_AT`]:
/// a description that one definition's head answers, not a topic that
/// many names share (ungated, semble's benchmark lost 0.013 in keyword mode).
const HEAD_LEAD_FROM: f32 = 1.1;
const HEAD_LEAD_AT: f32 = 1.5;

/// A path's file name up to its first dot (`src/flat_hash_map.h` → `flat_hash_map`).
fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split('.').next().unwrap_or(name)
}

/// A file name's stem for matching names: lowercased, `_` and `-` removed.
pub(crate) fn norm_stem(path: &str) -> String {
    file_stem(path)
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The [`norm_stem`]s of the files named after `name`: the name and its plural.
fn stems_naming(name: &str) -> [String; 2] {
    let n: String = name
        .chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    [format!("{n}s"), n]
}

/// The [`norm_stem`]s a query names: two or three adjacent words joined
/// (`streaming JSON reader` → `jsonreader`), and, apart, one capitalized word
/// that does not open the query (`how the Functor type class` → `functor`)
/// or is CamelCase (`StateFlow and SharedFlow` → `stateflow`, `sharedflow`);
/// a last word's plural is also tried singular. A capitalized opening word
/// names the file of its exact name only (`Mutex and Semaphore for …` →
/// `mutex`): a description's verb (`Reads data into p`, `Formats a
/// number`) is not folded to `read` or `format`; being exact, it may be
/// three letters long (`Job interface and …` → `job`). Joined stems under
/// six letters and other single words under four are too common to count.
pub(crate) fn named_stems(q: &str) -> (Vec<String>, Vec<String>) {
    // A possessive is its word (`model's table` names no `models` file).
    let words: Vec<&str> = q
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .map(|w| {
            let w = w.trim_matches(['\'', '’']);
            w.strip_suffix("'s").or(w.strip_suffix("’s")).unwrap_or(w)
        })
        .filter(|w| !w.is_empty() && w.chars().all(char::is_alphanumeric))
        .collect();
    let singular = |w: &str| -> Vec<String> {
        let mut v = vec![w.to_string()];
        if let Some(b) = w.strip_suffix("ies") {
            v.push(format!("{b}y"));
        } else if let Some(b) = w.strip_suffix("es") {
            v.push(b.to_string());
            v.push(format!("{b}e"));
        } else if let Some(b) = w.strip_suffix('s') {
            v.push(b.to_string());
        }
        v
    };
    let mut multi = Vec::new();
    for n in 2..=3 {
        for win in words.windows(n) {
            let head: String = win[..n - 1].iter().map(|w| w.to_lowercase()).collect();
            for last in singular(&win[n - 1].to_lowercase()) {
                let s = format!("{head}{last}");
                if s.len() >= 6 && !multi.contains(&s) {
                    multi.push(s);
                }
            }
        }
    }
    let mut one = Vec::new();
    // An opening word counts whole when it is CamelCase (`StateFlow and
    // SharedFlow`); a sentence's capital alone names only the file of its
    // exact name (a verb's `-s` is not a plural).
    let camel = |w: &str| w.chars().skip(1).any(char::is_uppercase);
    for (i, w) in words.iter().enumerate() {
        if !(w.chars().next().is_some_and(char::is_uppercase) && w.chars().any(char::is_lowercase))
        {
            continue;
        }
        let lw = w.to_lowercase();
        let (forms, min) = if i == 0 && !camel(w) {
            (vec![lw], 3)
        } else {
            (singular(&lw), 4)
        };
        for s in forms {
            if s.len() >= min && !one.contains(&s) {
                one.push(s);
            }
        }
    }
    (multi, one)
}

/// The [`norm_stem`]s that words among the query's first
/// [`UNIQUE_NAME_FIRST_WORDS`] content words, written in lower case, are,
/// when exactly one file of the index has that name (`multipart` and
/// `multipart.rb`; not `context`, which names `context.py` in three
/// directories). A word naming one file stands for it the way a name does;
/// a word that many files are named after names none of them. A topic query
/// opens with its subject ("jump plugin for bookmarking directories"); a
/// sentence describing a function names files only in passing further on
/// ("Returns the field instance given a name of a field").
/// Measured (bench/results/ranking.md, "A word that names one file"):
/// semble hybrid 0.8788 -> 0.8845, held-out 0.7613 -> 0.7667, the Django
/// reference-doc set 0.6623 -> 0.6615.
pub(crate) fn unique_file_words(q: &str, stems: &HashMap<String, Vec<(u32, u32)>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let content = q
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !is_stop(&w.to_lowercase()));
    for w in content.take(UNIQUE_NAME_FIRST_WORDS) {
        if w.chars().any(char::is_uppercase) {
            continue;
        }
        // The word as the file names are keyed (`lua_ls` -> `luals`).
        let key = norm_stem(w);
        if key.chars().count() >= UNIQUE_NAME_MIN
            && !out.contains(&key)
            && stems.get(&key).is_some_and(|f| f.len() == 1)
        {
            out.push(key);
        }
    }
    out
}

/// Shortest word that names a file by [`unique_file_words`].
const UNIQUE_NAME_MIN: usize = 3;
/// How many of the query's first content words may name a file
/// ([`unique_file_words`]); all words: semble hybrid 0.8830, the
/// reference-doc set 0.6598, docstring-stripped Python 0.445.
const UNIQUE_NAME_FIRST_WORDS: usize = 3;

/// Keywords that introduce a definition, across languages (parsed or not:
/// Kotlin, Scala, Swift, Ruby and Elixir definitions are found by these).
const DEFINERS: &str = "class|module|defmodule|def|defp|interface|struct|enum|trait|type|func|function|object|abstract class|data class|case class|fn|fun|package|namespace|protocol|record|typedef|extension|actor|impl";

/// A matcher of a definition of `name` in a chunk's text (type parameters
/// may come between the keyword and the name: Kotlin's `fun <T> withContext(`).
fn definition_re(name: &str) -> Option<regex::Regex> {
    let name = regex::escape(name);
    regex::Regex::new(&format!(
        r"(?m)(?:^|\s)(?:{DEFINERS})\s+(?:<[^>\n]*>\s*)?(?:[A-Za-z_][A-Za-z0-9_]*(?:\.|::))*{name}(?:\s|[<({{:\[;]|$)"
    ))
    .ok()
}

/// A matcher of a re-export of `name`: Rust's `pub use …{…, Name, …};`,
/// JavaScript/TypeScript's `export { Name } from …` / `export * as Name`,
/// and Python's `from … import Name` (the caller keeps that one to
/// `__init__.py`, where an import is the package's public surface).
fn reexport_re(name: &str) -> Option<[regex::Regex; 2]> {
    let n = regex::escape(name);
    let pub_use = regex::Regex::new(&format!(
        r"(?:\bpub(?:\([^)]*\))?\s+use\s[^;]*\b{n}\b|\bexport\s*(?:type\s*)?\{{[^}}]*\b{n}\b[^}}]*\}}|\bexport\s+\*\s+as\s+{n}\b)"
    ))
    .ok()?;
    let py = regex::Regex::new(&format!(
        r"(?m)^\s*from\s+\S+\s+import\s+(?:\([^)]*\b{n}\b|[^\n]*\b{n}\b)"
    ))
    .ok()?;
    Some([pub_use, py])
}

/// The names a query asks for when it is one identifier: `Sinatra::Helpers`
/// gives `Helpers` and the whole. CamelCase words inside a sentence are
/// not asked for: boosting their definitions (half strength) left semble's
/// benchmark unchanged (0.809 / 0.809) and cost 0.03 MRR@10 on the Django
/// reference-doc set ("Returns a new QuerySet ..." is about a method).
pub(crate) fn asked_names(q: &str) -> Vec<String> {
    let q = q.trim();
    if !super::route::looks_like_symbol(q) {
        return Vec::new();
    }
    let core = q.trim_end_matches("()");
    let last = last_name(core).to_string();
    let mut v = vec![last.clone()];
    if last != core {
        v.push(core.to_string());
    }
    v
}

/// The names a query holds up as a point of comparison rather than asks
/// for: "Like an IntegerField, but …", "a subclass of FileSystemStorage",
/// "same as create_user", "similar to smart_str()", "the opposite of
/// defer". A definition of such a name is the thing the answer differs
/// from, so it goes down ([`Ctx::rerank`], stage `compared`). A dotted name
/// (`dict.items`) matches only a symbol ending in the whole of it.
pub(crate) fn compared_names(q: &str) -> Vec<String> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r"(?i)\b(?:like|same as|similar to|subclass(?:es)? of|equivalent to|unlike|counterpart (?:of|to)|instead of|inverse of|opposite of)\s+(?:(?:a|an|the)\s+)?([A-Za-z_][A-Za-z0-9_.]*)",
        )
        .expect("valid regex")
    });
    // A class named as the base: "inherits all methods from FileField",
    // "A RegexValidator subclass that …", "Based on IntegerField and …"
    // (capitalized names only where a plain word could stand).
    static BASE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let base = BASE.get_or_init(|| {
        regex::Regex::new(
            r"(?:(?i:\binherit\w*\b)[^.]{0,60}?\bfrom\s+(?:(?i:a|an|the)\s+)?([A-Za-z_][A-Za-z0-9_.]*)|\b(?:[Aa]n?|is an?)\s+([A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*)\s+subclass\b|\b[Bb]ased on\s+(?:(?:a|an|the)\s+)?([A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_.]*))",
        )
        .expect("valid regex")
    });
    let mut out: Vec<String> = re
        .captures_iter(q)
        .map(|c| c[1].to_string())
        .chain(base.captures_iter(q).filter_map(|c| {
            (1..=3)
                .find_map(|i| c.get(i))
                .map(|m| m.as_str().to_string())
        }))
        .map(|n| n.trim_end_matches('.').to_string())
        .filter(|n| !n.is_empty())
        .collect();
    out.dedup();
    out
}

/// Whether the qualified `symbol` is one of the `names` ([`compared_names`]).
pub(crate) fn names_symbol(names: &[String], symbol: &str) -> bool {
    names.iter().any(|n| {
        if n.contains('.') {
            symbol == n
                || symbol
                    .strip_suffix(n.as_str())
                    .is_some_and(|p| p.ends_with('.'))
        } else {
            last_name(symbol) == n
        }
    })
}

/// The last segment of a qualified name, in a query or a chunk's symbol
/// (`Sinatra::Helpers` -> `Helpers`, `fmt.Println()` -> `Println`,
/// `QuerySet.latest` -> `latest`).
pub(crate) fn last_name(q: &str) -> &str {
    let core = q.trim().trim_end_matches("()");
    core.rsplit(['.', ':', '\\'])
        .find(|p| !p.is_empty())
        .unwrap_or(core)
}

/// The share of the sorted terms `qt` that `text` holds (terms count alike:
/// weighting them by idf measured no better, bench/results/ranking.md).
pub(crate) fn share_held(qt: &[String], text: &str) -> f32 {
    if qt.is_empty() {
        return 0.0;
    }
    let mut seen = vec![false; qt.len()];
    code_index_schemas::keyword::for_each_term(text, |x| {
        if let Ok(k) = qt.binary_search_by(|y| y.as_str().cmp(x)) {
            seen[k] = true;
        }
    });
    seen.iter().filter(|s| **s).count() as f32 / qt.len() as f32
}

/// The query's content words, lowercased (longer than two letters, stop words out).
pub(crate) fn query_words(q: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in q.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let lw = w.to_lowercase();
        if lw.len() > 2 && !is_stop(&lw) && !out.contains(&lw) {
            out.push(lw);
        }
    }
    out
}

/// Directory names that say nothing of a project (a checkout in `main/`,
/// a service in `server/`): a snapshot named so has no name of its own to
/// keep out of the paths.
const GENERIC_REPO_NAMES: &[&str] = &[
    "api", "app", "backend", "client", "code", "common", "core", "frontend", "lib", "main",
    "master", "project", "repo", "server", "service", "src", "test", "tests", "web", "work",
];

/// The project names (`bash-it`) that the query writes out whole, as
/// consecutive words (`bash-it`, `bash it`, `Bash-it`, `bash_it`): such
/// words name the project, not a file of it. Returned: the query words they
/// make (`bash`, `it`, and the whole name as [`query_words`] keeps it) and
/// the names' [`norm_stem`]s (`bashit`), per name the query wrote. A
/// qualified name (`Ecto.Queryable`, `django.contrib.messages`) is a path,
/// not the project: its words do not count, unless it is the name itself
/// (`kotlinx.coroutines`). A generic directory name (`main`, `server`:
/// [`GENERIC_REPO_NAMES`]) names no project.
pub(crate) fn own_name_words<'a>(
    q: &str,
    repos: impl Iterator<Item = &'a str>,
) -> (Vec<String>, Vec<String>) {
    let words: Vec<String> = q
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .collect();
    let mut tokens: Vec<String> = Vec::new();
    for w in &words {
        if w.contains(['.', ':', '/']) {
            tokens.push(String::new()); // a break: no name spans it
            continue;
        }
        tokens.extend(
            w.split(|c: char| !c.is_alphanumeric())
                .filter(|t| !t.is_empty())
                .map(str::to_string),
        );
    }
    let (mut out, mut names) = (Vec::new(), Vec::new());
    for repo in repos {
        let whole = repo.to_lowercase();
        if GENERIC_REPO_NAMES.contains(&whole.as_str()) {
            continue;
        }
        let parts: Vec<String> = whole
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect();
        if !parts.is_empty()
            && (words.contains(&whole)
                || tokens.windows(parts.len()).any(|w| w == parts.as_slice()))
        {
            out.push(parts.join("_"));
            out.push(whole.clone());
            out.extend(parts);
            names.push(norm_stem(repo));
        }
    }
    out.sort();
    out.dedup();
    (out, names)
}

/// The words of a file's name and of its directory's name, lowercased,
/// identifiers split (the whole name kept too).
pub(crate) fn path_words(path: &str) -> Vec<String> {
    let stem = file_stem(path);
    let dir = path.rsplit('/').nth(1).unwrap_or("");
    let mut out = Vec::new();
    for w in [stem, dir] {
        if w.is_empty() {
            continue;
        }
        out.push(w.to_lowercase());
        out.extend(name_parts(w));
    }
    out.sort();
    out.dedup();
    out
}

/// A name's words: identifier parts split at `-` too, lowercased.
fn name_parts(name: &str) -> impl Iterator<Item = String> + '_ {
    split_ident(name)
        .into_iter()
        .flat_map(|p| p.split('-').map(str::to_lowercase).collect::<Vec<_>>())
        .filter(|q| !q.is_empty())
}

/// The acronyms a query spells, each with the `words` (indexes) it stands
/// for: the initials of three or four adjacent words or identifier parts
/// (`server-sent events` → `sse`), or of the two parts of one identifier
/// (`HuggingFace` → `hf`, `WebSocket` → `ws`). Two separate words spell
/// none (`file descriptor` is not `fd`): too many file names have two
/// letters (`de`, `io`). Three or four words spell one only when two of
/// them are joined in one written word (`server-sent events`, `WebSocket
/// client`) or all are capitalized (`Server Sent Events`): plain or
/// sentence-case words spell none (`pyenv integration plugin` is not
/// `pip`, `spatial reference system` not `srs`, `Server sent events` not
/// `sse`).
pub(crate) fn query_acronyms(q: &str, words: &[String]) -> Vec<(String, Vec<usize>)> {
    // (initial, token) for every identifier part of every token; per token,
    // the whitespace-separated word it is in and whether it is capitalized.
    let mut seq: Vec<(char, usize)> = Vec::new();
    let mut token_word: Vec<Option<usize>> = Vec::new();
    let mut token_ws: Vec<(usize, bool)> = Vec::new();
    let tokens = q.split_whitespace().enumerate().flat_map(|(ws, w)| {
        w.split(|c: char| !c.is_alphanumeric())
            .filter(|t| !t.is_empty())
            .map(move |t| (ws, t))
    });
    for (t, (ws, tok)) in tokens.enumerate() {
        let lw = tok.to_lowercase();
        token_word.push(words.iter().position(|w| *w == lw));
        token_ws.push((ws, tok.starts_with(|c: char| c.is_uppercase())));
        for p in split_ident(tok) {
            if let Some(c) = p.chars().next().filter(char::is_ascii_alphabetic) {
                seq.push((c.to_ascii_lowercase(), t));
            }
        }
    }
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for n in 2..=4 {
        for win in seq.windows(n) {
            let one_token = win.iter().all(|x| x.1 == win[0].1);
            if n == 2 && !one_token {
                continue;
            }
            let joined = win
                .windows(2)
                .any(|p| token_ws[p[0].1].0 == token_ws[p[1].1].0);
            let capitalized = win.iter().all(|x| token_ws[x.1].1);
            if !joined && !capitalized {
                continue;
            }
            let mut idx: Vec<usize> = win.iter().filter_map(|x| token_word[x.1]).collect();
            idx.dedup();
            if idx.is_empty() {
                continue;
            }
            out.push((win.iter().map(|x| x.0).collect(), idx));
        }
    }
    out
}

/// How many query words a path's words hold: equal, one a prefix (three
/// letters or more) of the other, the same stem, or spelled by a name
/// part that is their acronym (`acr`, from [`query_acronyms`]).
pub(crate) fn path_overlap(
    words: &[String],
    acr: &[(String, Vec<usize>)],
    parts: &[String],
) -> usize {
    let min = knobs().prefix_min;
    let close = |a: &str, b: &str| {
        let (s, l) = if a.len() <= b.len() { (a, b) } else { (b, a) };
        s == l || (s.len() >= min && l.starts_with(s))
    };
    let stemmed: Vec<String> = parts.iter().map(|p| stem(p)).collect();
    let mut held: Vec<bool> = words
        .iter()
        .map(|w| {
            let ws = stem(w);
            parts
                .iter()
                .zip(&stemmed)
                .any(|(p, ps)| close(w, p) || close(&ws, ps) || close(w, ps) || close(&ws, p))
        })
        .collect();
    if enabled("acronyms") {
        for p in parts.iter().filter(|p| (2..=4).contains(&p.len())) {
            for (a, idx) in acr {
                if a == p {
                    for &i in idx {
                        held[i] = true;
                    }
                }
            }
        }
    }
    held.iter().filter(|h| **h).count()
}

/// Words of a file name that say nothing of its content (`BooleanUtils`
/// is about booleans).
const GENERIC_NAME_WORDS: [&str; 6] = ["util", "utils", "helper", "helpers", "impl", "common"];

/// The share of a file name's words (its stem, identifiers split, the
/// [`GENERIC_NAME_WORDS`] left out) that the query holds: `completions.go`
/// 1, `bash_completions.go` 1/2 for "shell completion handling"; a name of
/// generic words only counts 1.
pub(crate) fn name_precision(words: &[String], acr: &[(String, Vec<usize>)], path: &str) -> f32 {
    let mut parts: Vec<String> = name_parts(file_stem(path))
        .filter(|p| !GENERIC_NAME_WORDS.contains(&p.as_str()))
        .collect();
    parts.sort();
    parts.dedup();
    if parts.is_empty() {
        return 1.0;
    }
    // Parts that spell a query acronym are held; the others when a query
    // word matches them as [`path_overlap`] matches (its test is symmetric).
    let (spelled, rest): (Vec<String>, Vec<String>) = parts
        .iter()
        .cloned()
        .partition(|p| acr.iter().any(|(a, _)| a == p));
    let held = spelled.len() + path_overlap(&rest, &[], words);
    held as f32 / parts.len() as f32
}

/// Multiplicative prior of a path: tests, re-export files, examples,
/// benchmarks, compat shims, amalgamations, declaration stubs.
/// `defines`: the chunk is a definition (a re-export file's own
/// definitions are real code: Django keeps its model fields in
/// `fields/__init__.py`).
pub(crate) fn path_penalty(path: &str, is_test: bool, defines: bool) -> f32 {
    let k = knobs();
    let mut p = 1.0;
    let dirs: Vec<&str> = path.split('/').collect();
    let name = dirs.last().copied().unwrap_or("");
    let in_dir = |names: &[&str]| dirs[..dirs.len() - 1].iter().any(|d| names.contains(d));
    if is_test {
        p *= k.test;
    }
    if !defines && matches!(name, "__init__.py" | "package-info.java") {
        p *= k.reexport;
    }
    if in_dir(&["compat", "_compat", "legacy"]) {
        p *= k.compat;
    }
    if in_dir(&["example", "examples", "_example", "_examples", "docs_src"]) {
        p *= k.examples;
    }
    let stem = file_stem(name);
    if in_dir(&["bench", "benches", "benchmark", "benchmarks"])
        || stem.ends_with("_benchmark")
        || stem.ends_with("_bench")
        || name.contains(".bench.")
    {
        p *= k.bench;
    }
    if in_dir(&[
        "vendor",
        "third_party",
        "thirdparty",
        "3rdparty",
        "node_modules",
        "bower_components",
    ]) || name.ends_with(".min.js")
    {
        p *= k.vendor;
    }
    if in_dir(&["single_include"]) {
        p *= 0.3;
    }
    if !is_code_name(name) {
        p *= k.data;
    }
    if name.ends_with(".d.ts") {
        p *= k.dts;
    }
    p
}

/// A name its language's convention marks as internal: one leading
/// underscore (`_clone`, `_get_raw_host`), not a dunder (`__init__`,
/// `__str__`), which is how Python spells a protocol.
pub(crate) fn is_private_name(name: &str) -> bool {
    let dunder = name.len() > 4 && name.starts_with("__") && name.ends_with("__");
    name.len() > 1 && name.starts_with('_') && !dunder
}

/// The version directory's number (`v3` → 3), if `seg` is one.
fn version_dir(seg: &str) -> Option<u32> {
    let n = seg.strip_prefix('v')?;
    if n.is_empty() || n.len() > 3 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// Version directories that a newer version in the same tree supersedes:
/// `src/v3` beside `src/v4` (zod), and a `v1` directory whose files repeat
/// its parent's file names (pydantic's `pydantic/v1/`, the old major
/// version kept beside the current one). A `v2` or later inside its
/// parent is the newer one (Go's `math/rand/v2`): not superseded.
/// `paths` are a snapshot's file paths; the result holds directory paths.
pub(crate) fn superseded_dirs<'a>(paths: impl Iterator<Item = &'a str>) -> HashSet<String> {
    // Directory → the names of the files directly in it; and version
    // directories by parent.
    let mut files_in: HashMap<&str, HashSet<&str>> = HashMap::new();
    let mut versions: HashMap<&str, Vec<(u32, &str)>> = HashMap::new();
    for p in paths {
        let (dir, name) = p.rsplit_once('/').unwrap_or(("", p));
        files_in.entry(dir).or_default().insert(name);
        // Every version directory on the path.
        let mut end = 0;
        for seg in dir.split('/') {
            let start = end;
            end = start + seg.len();
            if let Some(n) = version_dir(seg) {
                let parent = if start == 0 { "" } else { &dir[..start - 1] };
                let v = versions.entry(parent).or_default();
                if !v.iter().any(|x| x.1 == &dir[..end]) {
                    v.push((n, &dir[..end]));
                }
            }
            end += 1;
        }
    }
    let mut out = HashSet::new();
    for (parent, vs) in &versions {
        let newest = vs.iter().map(|x| x.0).max().unwrap_or(0);
        for &(n, d) in vs {
            if n < newest {
                out.insert(d.to_string());
            } else if n == 1 && vs.len() == 1 {
                let (Some(mine), Some(theirs)) = (files_in.get(d), files_in.get(parent)) else {
                    continue;
                };
                let shared = mine.iter().filter(|f| theirs.contains(*f)).count();
                if shared >= 3 && shared * 2 >= mine.len() {
                    out.insert(d.to_string());
                }
            }
        }
    }
    out
}

/// Whether `path` lies under one of `dirs` that the query does not ask for
/// by its version (`v3 compatibility errors` keeps `v3/`).
pub(crate) fn under_superseded(dirs: &HashSet<String>, path: &str, q_lower: &str) -> bool {
    let mut end = 0;
    for seg in path.split('/') {
        end += seg.len();
        if end >= path.len() {
            return false;
        }
        if version_dir(seg).is_some() && dirs.contains(&path[..end]) {
            let asked = q_lower
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == seg);
            return !asked;
        }
        end += 1;
    }
    false
}

/// Extensions of source code in languages the builder does not parse (those
/// it parses are code by their language), and of docs, which the doc weight
/// handles. Any other file (`Cargo.toml`, `go.sum`, `BUILD.bazel`, JSON,
/// YAML, fixtures) is data or configuration.
const CODE_EXTENSIONS: &[&str] = &[
    "py", "pyi", "pyx", "pxd", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "rs", "go",
    "java", "c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx", "inc", "ipp", "m", "mm", "kt", "kts",
    "scala", "sc", "swift", "rb", "rake", "ex", "exs", "erl", "hrl", "hs", "ml", "mli", "fs",
    "fsx", "cs", "php", "dart", "lua", "r", "jl", "clj", "cljs", "groovy", "gradle", "sh", "bash",
    "zsh", "fish", "ps1", "pl", "pm", "sql", "vue", "svelte", "zig", "nim", "sol", "proto",
    "graphql", "md", "markdown", "rst", "adoc", "txt", "cmake", "el", "vim", "elm", "purs", "v",
    "sv", "vhd", "f90", "cu", "cuh", "metal", "glsl", "hlsl", "wgsl", "tf", "nix", "cr", "d",
    "ada", "pas",
];

/// Whether a path is source code (not docs, data or configuration).
pub(crate) fn is_source_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    is_code_name(name)
        && !matches!(
            name.rsplit_once('.')
                .map(|(_, e)| e.to_ascii_lowercase())
                .as_deref(),
            Some("md" | "markdown" | "rst" | "adoc" | "txt")
        )
}

/// Whether a file name is source code or docs (by extension; a name
/// without one, `Makefile`, counts as data).
pub(crate) fn is_code_name(name: &str) -> bool {
    match name.rsplit_once('.') {
        Some((_, ext)) => CODE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()),
        None => false,
    }
}

impl Ctx<'_> {
    /// Apply the stages to `scored` (fused and weighted, any order); the
    /// caller sorts.
    pub(crate) fn rerank(
        &self,
        q: &str,
        symbol_query: bool,
        vectors: bool,
        scored: &mut Vec<(usize, f32, String)>,
        allowed: &Allowed,
    ) {
        let chunks = &self.eng.chunks;
        let path_of = |ci: usize| {
            let c = &chunks[ci];
            self.snaps[c.snap as usize].files[c.file as usize]
                .path
                .as_str()
        };
        if enabled("penalty") {
            let ql = q.to_lowercase();
            let sup = knobs().superseded;
            for h in scored.iter_mut() {
                let c = &chunks[h.0];
                let path = path_of(h.0);
                h.1 *= path_penalty(path, c.is_test, c.symbol.is_some());
                let dirs = &self.eng.superseded[c.snap as usize];
                if !dirs.is_empty() && under_superseded(dirs, path, &ql) {
                    h.1 *= sup;
                }
            }
        }
        let max = scored.iter().map(|h| h.1).fold(0.0f32, f32::max);
        if max <= 0.0 {
            return;
        }
        if enabled("path") {
            // The project's own name (`Django`, `Sinatra`) names no file in particular.
            let own = |w: &String| self.snaps.iter().any(|s| norm_stem(s.repo()) == *w);
            // A query that is one name counts no words in paths (`Router`
            // is not `route_headers.go`), only a file named after it
            // (`Tokenizer` -> `tokenizer.py`, `Args` -> `args.go`).
            let (words, acr, multi, one) = if symbol_query {
                let mut named = stems_naming(last_name(q)).to_vec();
                named.retain(|w| !own(w));
                (Vec::new(), Vec::new(), named, Vec::new())
            } else {
                let mut words = query_words(q);
                let (mut multi, mut one) = named_stems(q);
                // ... nor do its words in paths (`bash-it search functionality`
                // is not `bash-it.completion.bash`), written apart or joined,
                // when the query writes the whole name.
                if enabled("ownname") {
                    let (own_words, own_names) =
                        own_name_words(q, self.snaps.iter().map(|s| s.repo()));
                    words.retain(|w| !own_words.contains(w));
                    multi.retain(|w| !own_names.contains(w));
                }
                let acr = query_acronyms(q, &words);
                // A word in lower case that names exactly one file names it
                // as a capitalized one does (`jump plugin` ->
                // `jump.plugin.bash`, `multipart form data` -> `multipart.rb`).
                if enabled("namedword") {
                    for w in unique_file_words(q, &self.eng.stems) {
                        if !one.contains(&w) {
                            one.push(w);
                        }
                    }
                }
                one.retain(|w| !own(w));
                (words, acr, multi, one)
            };
            let k = knobs();
            // Source files the query names outright join the candidates
            // when keyword and vector search missed them (`JSON object` ->
            // `JsonObject.java`, whose chunks hold `json` and `object` as
            // often as a hundred others do).
            let joining = if enabled("namedjoin") {
                self.files_named(&multi)
            } else {
                Vec::new()
            };
            // The candidates' files are gathered only when a file is named.
            if !joining.is_empty() {
                let present: HashSet<(u32, u32)> = scored
                    .iter()
                    .map(|h| (chunks[h.0].snap, chunks[h.0].file))
                    .collect();
                for f in joining {
                    if present.contains(&f) {
                        continue;
                    }
                    let Some(&(a, b)) = self.eng.file_chunks.get(&f) else {
                        continue;
                    };
                    if let Some(ci) = (a..b).find(|&ci| allowed(ci)) {
                        scored.push((ci, 0.0, "a file the query names".to_string()));
                    }
                }
            }
            // Per file: the share of query words its path holds, and whether
            // the query names it outright.
            let mut cache: HashMap<(u32, u32), (f32, f32)> = HashMap::new();
            for h in scored.iter_mut() {
                let c = &chunks[h.0];
                let (by_words, named) = *cache.entry((c.snap, c.file)).or_insert_with(|| {
                    let path = path_of(h.0);
                    let mut share = if words.is_empty() {
                        0.0
                    } else {
                        path_overlap(&words, &acr, &path_words(path)) as f32 / words.len() as f32
                    };
                    if share > 0.0 {
                        let prec = name_precision(&words, &acr, path);
                        share *= 1.0 - k.pathprec + k.pathprec * prec;
                    }
                    let st = norm_stem(path);
                    let named = if !is_source_name(path) {
                        0.0
                    } else if multi.contains(&st) {
                        k.named
                    } else if one.contains(&st) {
                        k.named_one
                    } else {
                        0.0
                    };
                    (max * k.path * share, max * named)
                });
                h.1 += by_words;
                h.1 += named;
            }
        }
        if enabled("coverage") {
            self.coverage(q, scored);
        }
        if enabled("define") {
            self.boost_definitions(q, max, scored, allowed);
        }
        if enabled("coherence") {
            let mut sum: HashMap<(u32, u32), (f32, usize)> = HashMap::new();
            for (i, h) in scored.iter().enumerate() {
                let c = &chunks[h.0];
                let e = sum.entry((c.snap, c.file)).or_insert((0.0, i));
                e.0 += h.1;
                if h.1 > scored[e.1].1 {
                    e.1 = i;
                }
            }
            let top = sum.values().map(|x| x.0).fold(0.0f32, f32::max);
            if top > 0.0 {
                let unit = max * knobs().coherence;
                for (s, best) in sum.into_values() {
                    scored[best].1 += unit * s / top;
                }
            }
        }
        if enabled("head") {
            self.heads(q, knobs().head, vectors, scored);
        }
        if enabled("private") {
            self.public_first(scored);
        }
        if enabled("compared") {
            let names = compared_names(q);
            if !names.is_empty() {
                let f = knobs().compared;
                for h in scored.iter_mut() {
                    if chunks[h.0]
                        .symbol
                        .as_deref()
                        .is_some_and(|s| names_symbol(&names, s))
                    {
                        h.1 *= f;
                    }
                }
            }
        }
    }

    /// Definition heads among the [`HEAD_TOP`] best candidates: a
    /// candidate's head score is the best BM25 score (over the heads index,
    /// [`Engine::heads`]) of the definitions starting in it, h / the best
    /// such score its share. Within each file the candidate best by score ×
    /// (1 + `w` × share) answers for the file at the file's best score. In
    /// keyword mode, when the best file's head score leads the second's
    /// ([`HEAD_LEAD_FROM`]), scores are multiplied by 1 + g ×
    /// [`Knobs::head_across`] × share across files as well.
    fn heads(&self, q: &str, w: f32, vectors: bool, scored: &mut [(usize, f32, String)]) {
        if w <= 0.0 {
            return;
        }
        let eng = self.eng;
        let mut order: Vec<usize> = (0..scored.len()).collect();
        order.sort_by(|&a, &b| scored[b].1.total_cmp(&scored[a].1));
        order.truncate(HEAD_TOP);
        let held: Vec<Vec<u32>> = order.iter().map(|&i| eng.heads.of(scored[i].0)).collect();
        let need: HashSet<u32> = held.iter().flatten().copied().collect();
        if need.is_empty() {
            return;
        }
        let by_def: HashMap<usize, f32> = eng
            .heads
            .bm25
            .search(q, &|d| need.contains(&(d as u32)), need.len())
            .into_iter()
            .collect();
        let hs: Vec<f32> = held
            .iter()
            .map(|ds| {
                ds.iter()
                    .filter_map(|d| by_def.get(&(*d as usize)))
                    .fold(0.0f32, |a, &b| a.max(b))
            })
            .collect();
        let hmax = hs.iter().copied().fold(0.0f32, f32::max);
        if hmax <= 0.0 {
            return;
        }
        // Within each file, the candidate best by its head-weighted score
        // answers for the file.
        let share: HashMap<usize, f32> = order
            .iter()
            .zip(&hs)
            .map(|(&i, &h)| (scored[i].0, h / hmax))
            .collect();
        self.answer_by(scored, order.iter().copied(), |ci, s| {
            s * (1.0 + w * share[&ci])
        });
        // Keyword mode: across files too, when the best head stands out
        // (the vectors, when there are some, already read what heads say).
        if vectors {
            return;
        }
        let mut per: HashMap<(u32, u32), f32> = HashMap::new();
        for (&i, &h) in order.iter().zip(&hs) {
            let c = &eng.chunks[scored[i].0];
            let e = per.entry((c.snap, c.file)).or_insert(0.0);
            *e = e.max(h);
        }
        let mut files: Vec<f32> = per.into_values().collect();
        files.sort_by(|a, b| b.total_cmp(a));
        let second = files.get(1).copied().unwrap_or(0.0);
        let g = if second <= 0.0 {
            1.0
        } else {
            ((hmax / second - HEAD_LEAD_FROM) / (HEAD_LEAD_AT - HEAD_LEAD_FROM)).clamp(0.0, 1.0)
        };
        let across = knobs().head_across * g;
        if across > 0.0 {
            for (&i, &h) in order.iter().zip(&hs) {
                scored[i].1 *= 1.0 + across * h / hmax;
            }
        }
    }

    /// A file whose best candidate is a private definition answers with a
    /// public one of its candidates instead when that one scores at least
    /// [`Knobs::private`] of it: the two swap scores, so the file keeps its
    /// place and only the chunk it answers with changes (`HttpRequest.get_host`
    /// over `_get_raw_host`, `QuerySet.all` over `_clone`).
    fn public_first(&self, scored: &mut [(usize, f32, String)]) {
        let chunks = &self.eng.chunks;
        let f = knobs().private;
        self.answer_by(scored, 0..scored.len(), |ci, s| {
            let private = chunks[ci]
                .symbol
                .as_deref()
                .is_some_and(|n| is_private_name(last_name(n)));
            if private {
                s * f
            } else {
                s
            }
        });
    }

    /// Per file, among the candidates `among` (indexes into `scored`;
    /// pattern chunks left out): the one best by score and the one best by
    /// `by(chunk, score)` (the first on ties). When they differ the two swap
    /// scores: the file keeps its place and answers with the latter.
    fn answer_by(
        &self,
        scored: &mut [(usize, f32, String)],
        among: impl Iterator<Item = usize>,
        by: impl Fn(usize, f32) -> f32,
    ) {
        let chunks = &self.eng.chunks;
        // Per file: (best by score, its score, best by `by`, its value).
        let mut best: HashMap<(u32, u32), (usize, f32, usize, f32)> = HashMap::new();
        for i in among {
            let c = &chunks[scored[i].0];
            if c.kind == "pattern" {
                continue;
            }
            let (s, v) = (scored[i].1, by(scored[i].0, scored[i].1));
            let e = best.entry((c.snap, c.file)).or_insert((i, s, i, v));
            if s > e.1 {
                (e.0, e.1) = (i, s);
            }
            if v > e.3 {
                (e.2, e.3) = (i, v);
            }
        }
        for (b, _, p, _) in best.into_values() {
            if b != p {
                let (x, y) = (scored[b].1, scored[p].1);
                scored[b].1 = y;
                scored[p].1 = x;
            }
        }
    }

    /// The files whose [`norm_stem`] is one of `stems`, sorted, once each.
    fn files_named(&self, stems: &[String]) -> Vec<(u32, u32)> {
        let mut files: Vec<(u32, u32)> = stems
            .iter()
            .filter_map(|st| self.eng.stems.get(st))
            .flatten()
            .copied()
            .collect();
        files.sort_unstable();
        files.dedup();
        files
    }

    /// The best candidates (the first [`COVERAGE_TOP`] by score) gain in
    /// proportion to the share of the query's distinct terms (stemmed, stop
    /// words out) their text holds: BM25 can rank a chunk that repeats one
    /// rare word above one that holds them all, and a vector match need
    /// hold none.
    fn coverage(&self, q: &str, scored: &mut [(usize, f32, String)]) {
        let qt = query_terms(q);
        if qt.len() < 2 {
            return;
        }
        let mut order: Vec<usize> = (0..scored.len()).collect();
        order.sort_by(|&a, &b| {
            scored[b]
                .1
                .partial_cmp(&scored[a].1)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let w = knobs().coverage;
        for &i in order.iter().take(COVERAGE_TOP) {
            let c = &self.eng.chunks[scored[i].0];
            let share = with_chunk_text(c, self.snaps, |t| share_held(&qt, t));
            scored[i].1 *= 1.0 + w * share;
        }
    }

    /// Chunks that define a name the query asks for go up: candidates by
    /// their symbol or a definition keyword before the name, and the
    /// definitions in files named after it even when keyword search missed
    /// them (`Monad` → `Monad.scala`).
    fn boost_definitions(
        &self,
        q: &str,
        max: f32,
        scored: &mut Vec<(usize, f32, String)>,
        allowed: &Allowed,
    ) {
        let names = asked_names(q);
        if names.is_empty() {
            return;
        }
        let res: Vec<regex::Regex> = names.iter().filter_map(|n| definition_re(n)).collect();
        // Stems of the files named after a name asked for.
        let named: Vec<String> = names.iter().flat_map(|n| stems_naming(n)).collect();
        let chunks = &self.eng.chunks;
        let unit = max * knobs().define;
        let tier = |ci: usize| -> f32 {
            let c = &chunks[ci];
            if c.kind == "pattern" {
                return 0.0;
            }
            let by_symbol = c.symbol.as_deref().is_some_and(|s| {
                let last = last_name(s);
                names.iter().any(|n| n == last || n == s)
            });
            let defines =
                by_symbol || with_chunk_text(c, self.snaps, |t| res.iter().any(|r| r.is_match(t)));
            if !defines {
                return 0.0;
            }
            let stem = norm_stem(&self.snaps[c.snap as usize].files[c.file as usize].path);
            unit * if named.contains(&stem) { 1.5 } else { 1.0 }
        };
        let mut seen: HashSet<usize> = HashSet::new();
        let mut found = false;
        for h in scored.iter_mut() {
            seen.insert(h.0);
            let t = tier(h.0);
            found |= t > 0.0;
            h.1 += t;
        }
        // Files named after the name: their defining chunks join.
        for f in self.files_named(&named) {
            let Some(&(a, b)) = self.eng.file_chunks.get(&f) else {
                continue;
            };
            for ci in a..b {
                if seen.contains(&ci) || !allowed(ci) {
                    continue;
                }
                let t = tier(ci);
                if t > 0.0 {
                    found = true;
                    seen.insert(ci);
                    scored.push((ci, t, "definition of a name in the query".to_string()));
                }
            }
        }
        // No definition in the index (it lives in a dependency): the
        // candidates that re-export the name are where the project exposes it
        // (axum's `pub use axum_core::extract::{FromRequest, …}`).
        if found || !enabled("reexport") {
            return;
        }
        let res: Vec<[regex::Regex; 2]> = names.iter().filter_map(|n| reexport_re(n)).collect();
        for h in scored.iter_mut() {
            let c = &chunks[h.0];
            if c.kind == "pattern" {
                continue;
            }
            let path = &self.snaps[c.snap as usize].files[c.file as usize].path;
            let init = path.rsplit('/').next() == Some("__init__.py");
            let exports = with_chunk_text(c, self.snaps, |t| {
                res.iter()
                    .any(|[r, py]| r.is_match(t) || (init && py.is_match(t)))
            });
            if exports {
                h.1 += unit;
                if !h.2.is_empty() {
                    h.2.push_str("; ");
                }
                h.2.push_str("re-exports a name in the query");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_writing_the_project_name_gives_its_words() {
        let own = |q: &str, repo: &str| own_name_words(q, std::iter::once(repo)).0;
        assert_eq!(
            own("bash-it search functionality for plugins", "bash-it"),
            vec!["bash", "bash-it", "bash_it", "it"]
        );
        assert_eq!(
            own_name_words("bash-it search", std::iter::once("bash-it")).1,
            vec!["bashit"]
        );
        assert_eq!(own("how Cobra integrates pflags", "cobra"), vec!["cobra"]);
        // an underscore keeps a name one query word
        assert_eq!(
            own("my_project search", "my_project"),
            vec!["my", "my_project", "project"]
        );
        // a generic directory name names no project
        assert!(own("main entry point", "main").is_empty());
        // the name's words apart, or a part alone, name no project
        assert!(own("bash completion scripts", "bash-it").is_empty());
        assert!(own("commons for lang", "commons-lang").is_empty());
        assert!(own("cobras", "cobra").is_empty());
        // a qualified name is a path
        assert!(own("Ecto.Queryable protocol for queries", "ecto").is_empty());
        assert!(own("uses the django.contrib.messages backend", "django").is_empty());
        // ... unless it is the name itself
        assert_eq!(
            own("kotlinx.coroutines flow operators", "kotlinx.coroutines"),
            vec![
                "coroutines",
                "kotlinx",
                "kotlinx.coroutines",
                "kotlinx_coroutines"
            ]
        );
        assert_eq!(
            own("Django's rendering shortcuts", "django"),
            vec!["django"]
        );
    }

    #[test]
    fn path_words_split_names_and_directory() {
        assert_eq!(
            path_words("src/web_socket/ClientConn.go"),
            vec![
                "client",
                "clientconn",
                "conn",
                "socket",
                "web",
                "web_socket"
            ]
        );
    }

    #[test]
    fn overlap_tolerates_plural_and_prefix() {
        let w = query_words("how are dependencies resolved");
        assert_eq!(w, vec!["dependencies", "resolved"]);
        assert_eq!(
            path_overlap(&w, &[], &path_words("fastapi/dependency.py")),
            1
        );
        assert_eq!(path_overlap(&w, &[], &path_words("fastapi/routing.py")), 0);
    }

    #[test]
    fn name_precision_counts_the_file_names_words_the_query_holds() {
        let w = query_words("shell completion request handling");
        assert_eq!(name_precision(&w, &[], "cobra/completions.go"), 1.0);
        assert_eq!(name_precision(&w, &[], "cobra/bash_completions.go"), 0.5);
        assert_eq!(name_precision(&w, &[], "cobra/command.go"), 0.0);
        assert_eq!(name_precision(&w, &[], "cobra/completion_utils.go"), 1.0);
        assert_eq!(name_precision(&w, &[], "cobra/helpers.go"), 1.0);
        let w = query_words("how server-sent events are streamed");
        let acr = query_acronyms("how server-sent events are streamed", &w);
        assert_eq!(name_precision(&w, &acr, "stream/sse.types.ts"), 1.0);
    }

    #[test]
    fn a_lowercase_word_names_the_one_file_named_so() {
        let mut stems: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        stems.insert("multipart".into(), vec![(0, 1)]);
        stems.insert("context".into(), vec![(0, 2), (0, 3), (0, 4)]);
        stems.insert("jumpplugin".into(), vec![(0, 5)]);
        stems.insert("luals".into(), vec![(0, 6)]);
        stems.insert("field".into(), vec![(0, 7)]);
        // One file of that name: named.
        assert_eq!(
            unique_file_words("multipart form data parsing", &stems),
            ["multipart"]
        );
        // Three files: none.
        assert!(unique_file_words("context handling", &stems).is_empty());
        // Underscores are not part of a file's normalized name.
        assert_eq!(
            unique_file_words("how lua_ls is configured", &stems),
            ["luals"]
        );
        // Capitalized words are the capitalized-name rule's (`named_stems`).
        assert!(unique_file_words("Multipart parsing", &stems).is_empty());
        // Only among the first three content words: a sentence names files in passing.
        assert!(
            unique_file_words("Returns the instance given a name of a field", &stems).is_empty()
        );
        assert_eq!(
            unique_file_words("how the field is validated", &stems),
            ["field"]
        );
        // Stop words do not count as content words, nor do short words name files.
        stems.insert("io".into(), vec![(0, 8)]);
        assert!(unique_file_words("io reader", &stems).is_empty());
    }

    #[test]
    fn acronyms_in_file_names() {
        // The query words a path holds, acronyms counted.
        let held = |q: &str, path: &str| {
            let w = query_words(q);
            path_overlap(&w, &query_acronyms(q, &w), &path_words(path))
        };
        // server, sent, events (and parsed): three of four words.
        let q = "how server-sent events are parsed";
        assert_eq!(held(q, "plugins/sse/SSE.kt"), 3);
        assert_eq!(
            path_overlap(&query_words(q), &[], &path_words("plugins/sse/SSE.kt")),
            0
        );
        assert_eq!(
            held("pushing models to the HuggingFace Hub", "persistence/hf.py"),
            1
        );
        assert_eq!(
            held("WebSocket client implementation", "aiohttp/client_ws.py"),
            2
        );
        // Two separate words spell no acronym.
        let q = "derive enums from the input of the app";
        let acr = query_acronyms(q, &query_words(q));
        assert!(acr.iter().all(|(a, _)| a != "de" && a != "io"), "{acr:?}");
        assert_eq!(held(q, "src/de.rs"), 0);
        // Nor do plain lowercase words; capitalized ones do.
        let q = "pyenv integration plugin for bash";
        assert_eq!(held(q, "completion/available/pip.completion.bash"), 0);
        assert_eq!(held("Server Sent Events parsing", "plugins/sse/SSE.kt"), 3);
        assert_eq!(held("Server sent events parsing", "plugins/sse/SSE.kt"), 0);
        assert_eq!(
            held("spatial reference system of a raster", "gdal/srs.py"),
            0
        );
    }

    #[test]
    fn superseded_version_directories() {
        let zod = [
            "packages/zod/src/v3/types.ts",
            "packages/zod/src/v3/errors.ts",
            "packages/zod/src/v4/core/errors.ts",
            "packages/zod/src/v4/classic/schemas.ts",
            "packages/zod/src/index.ts",
        ];
        let d = superseded_dirs(zod.into_iter());
        assert_eq!(d, HashSet::from(["packages/zod/src/v3".to_string()]));
        let under =
            |path: &str, q: &str| under_superseded(&d, &format!("packages/zod/src/{path}"), q);
        assert!(under("v3/types.ts", "zod types"));
        assert!(!under("v4/core/errors.ts", "zod errors"));
        // A query that asks for the version keeps it.
        assert!(!under("v3/errors.ts", "v3 compatibility errors"));
        // pydantic keeps its old major version beside the current modules.
        let pyd = [
            "pydantic/main.py",
            "pydantic/fields.py",
            "pydantic/types.py",
            "pydantic/v1/main.py",
            "pydantic/v1/fields.py",
            "pydantic/v1/types.py",
            "pydantic/v1/mypy.py",
        ];
        let d = superseded_dirs(pyd.into_iter());
        assert_eq!(d, HashSet::from(["pydantic/v1".to_string()]));
        // Go's v2 inside its package is the newer one; a lone v1 holding
        // only directories (exposed's package path) supersedes nothing.
        let go = [
            "math/rand/rand.go",
            "math/rand/exp.go",
            "math/rand/normal.go",
            "math/rand/v2/rand.go",
            "math/rand/v2/exp.go",
            "math/rand/v2/normal.go",
            "exposed-core/src/main/kotlin/org/jetbrains/exposed/v1/core/Table.kt",
        ];
        assert!(superseded_dirs(go.into_iter()).is_empty());
    }

    #[test]
    fn reexports_of_a_name() {
        let [r, py] = reexport_re("FromRequest").unwrap();
        assert!(r.is_match(
            "pub use axum_core::extract::{\n    DefaultBodyLimit, FromRef, FromRequest, FromRequestParts,\n};"
        ));
        assert!(r.is_match("pub(crate) use self::de::FromRequest as F;"));
        assert!(r.is_match("export { Foo, FromRequest } from './x';"));
        assert!(r.is_match("export type { FromRequest } from './x';"));
        assert!(r.is_match("export * as FromRequest from './x';"));
        // An import, a longer name and a use are not re-exports.
        assert!(!r.is_match("use axum_core::extract::FromRequest;"));
        assert!(!r.is_match("pub use axum_core::extract::FromRequestParts;"));
        assert!(!r.is_match("import { FromRequest } from './x';"));
        assert!(py.is_match("from .extract import (\n    Form,\n    FromRequest,\n)"));
        assert!(py.is_match("from .extract import Form, FromRequest"));
        assert!(!py.is_match("from .extract import FromRequestParts"));
    }

    #[test]
    fn names_asked_for() {
        assert_eq!(
            asked_names("Sinatra::Helpers"),
            vec!["Helpers", "Sinatra::Helpers"]
        );
        assert!(asked_names("how does ZodType parse input").is_empty());
        assert!(asked_names("session handling").is_empty());
        let re = definition_re("Monad").unwrap();
        assert!(re.is_match("trait Monad[F[_]] extends FlatMap[F]"));
        assert!(re.is_match("  abstract class Monad<T> {"));
        assert!(!re.is_match("val m: Monad[F] = x"));
        let re = definition_re("withContext").unwrap();
        assert!(re.is_match("public suspend fun <T> withContext(\n    context: CoroutineContext,"));
        assert!(re.is_match("fun CoroutineScope.withContext(x: Int)"));
        assert!(!re.is_match("return withContext(Dispatchers.IO) {"));
        assert_eq!(norm_stem("src/flat_hash-map.h"), "flathashmap");
    }

    #[test]
    fn stems_a_query_names() {
        let (multi, one) = named_stems("streaming JSON reader and type adapter factories");
        assert!(multi.contains(&"jsonreader".to_string()));
        assert!(multi.contains(&"typeadapterfactory".to_string()));
        assert!(!multi.contains(&"json".to_string()));
        assert!(one.is_empty());
        // An opening word names a file whole when it is CamelCase, else by
        // its exact name only.
        let (_, one) = named_stems("StateFlow and SharedFlow for hot state");
        assert_eq!(one, vec!["stateflow", "sharedflow"]);
        let (_, one) = named_stems("Mutex guards; how the Functor type class maps");
        assert_eq!(one, vec!["mutex", "functor"]);
        let (_, one) = named_stems("Reads data into p");
        assert_eq!(one, vec!["reads"]);
        let (_, one) = named_stems("Channels for sending values");
        assert_eq!(one, vec!["channels"]);
        let (_, one) = named_stems("Job interface and how the Job ends");
        assert_eq!(one, vec!["job"]);
        assert!(named_stems("Io and more").1.is_empty());
        let (multi, _) = named_stems("Adds constraint to model's table");
        assert!(!multi.contains(&"models".to_string()), "{multi:?}");
        assert!(multi.contains(&"modeltable".to_string()), "{multi:?}");
        // Under six letters joined, two words name nothing.
        assert!(named_stems("io is").0.is_empty());
    }

    #[test]
    fn coverage_counts_distinct_query_terms_in_split_identifiers() {
        let qt = query_terms("parse the date, or parse a time");
        assert_eq!(qt, vec!["date", "pars", "time"]);
        let s = share_held(&qt, "fn parse_date(s: Input) -> Date { todo!() }");
        assert!((s - 2.0 / 3.0).abs() < 1e-6, "{s}");
        assert_eq!(share_held(&qt, "unrelated words only"), 0.0);
        assert_eq!(share_held(&[], "parse"), 0.0);
    }

    #[test]
    fn private_names_by_convention() {
        for n in ["_clone", "_get_raw_host", "__private_attr", "_"] {
            assert_eq!(is_private_name(n), n.len() > 1, "{n}");
        }
        for n in ["__init__", "__str__", "all", "get_host", "Clone"] {
            assert!(!is_private_name(n), "{n}");
        }
    }

    #[test]
    fn names_a_query_compares_with() {
        assert_eq!(
            compared_names("Like an IntegerField, but must be positive."),
            ["IntegerField"]
        );
        assert_eq!(
            compared_names("A subclass of the FileSystemStorage backend"),
            ["FileSystemStorage"]
        );
        assert_eq!(
            compared_names("Similar to smart_str(), except lazy"),
            ["smart_str"]
        );
        assert_eq!(
            compared_names("Like dict.items, except ..."),
            ["dict.items"]
        );
        assert_eq!(
            compared_names("Inherits all attributes and methods from FileField, but also …"),
            ["FileField"]
        );
        assert_eq!(
            compared_names("A RegexValidator subclass that checks URLs"),
            ["RegexValidator"]
        );
        assert_eq!(
            compared_names("Based on IntegerField and translates its input"),
            ["IntegerField"]
        );
        assert!(compared_names("Returns a filename based on the name parameter").is_empty());
        assert!(compared_names("a field subclass that stores dates").is_empty());
        assert!(compared_names("parse a date string").is_empty());
        let n = compared_names("Like dict.items, except ...");
        assert!(names_symbol(&n, "dict.items"));
        assert!(!names_symbol(&n, "MultiValueDict.items"));
        let n = compared_names("Works otherwise like latest except the direction is changed.");
        assert!(names_symbol(&n, "QuerySet.latest"));
        assert!(!names_symbol(&n, "QuerySet.earliest"));
    }

    #[test]
    fn penalties_multiply() {
        assert_eq!(path_penalty("src/lib.rs", false, false), 1.0);
        assert!(path_penalty("pkg/__init__.py", false, false) < 1.0);
        assert_eq!(path_penalty("pkg/__init__.py", false, true), 1.0);
        for down in [
            // Benchmarks.
            "absl/status/statusor_benchmark.cc",
            "packages/zod/src/v3/benchmarks/union.ts",
            "benches/parse.rs",
            "test/core/sort.bench.ts",
            // Vendored third-party code (exposed's database `vendors/` are its own, below).
            "django/contrib/admin/static/admin/js/vendor/jquery/jquery.js",
            "packages/server/src/vendor/unpromise/unpromise.ts",
            "third_party/zlib/inflate.c",
            "static/js/select2.min.js",
        ] {
            assert!(path_penalty(down, false, true) < 1.0, "{down}");
        }
        assert_eq!(path_penalty("src/benchmarking.rs", false, true), 1.0);
        assert_eq!(
            path_penalty("exposed-core/src/main/kotlin/org/jetbrains/exposed/v1/core/vendors/SQLiteDialect.kt", false, true),
            1.0
        );
        assert!(
            path_penalty("examples/demo.go", true, false)
                < path_penalty("examples/demo.go", false, false)
        );
    }
}
