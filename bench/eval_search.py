#!/usr/bin/env python3
"""Retrieval evaluation of `search_code`, CodeSearchNet-style: MRR@10 and
recall@1/5/10 for the modes `keyword`, `semantic` and `hybrid`.

    python3 bench/eval_search.py                      # both corpora, 200 queries each
    python3 bench/eval_search.py --corpus go --reuse  # keep the snapshot of an earlier run
    python3 bench/eval_search.py --prepare-only       # build the trees and queries, print samples

Method
------
CodeSearchNet pairs a function with its documentation and asks a retriever to
find the function from the documentation. We do the same on two corpora that
are not used to tune anything else (neither is Django):

  * go:     the Go standard library (`$CODE_INDEX_CORPORA/go-stdlib`, default
            ~/.cache/code-index/corpora, fallback /tmp/corpora): the non-test
            `.go` files of a fixed list of ~25 packages (GO_PACKAGES; each
            package directory only, not its sub-packages).
  * python: the Python standard library (/usr/lib/python3.11): a seeded sample
            of `--files` files from the top-level modules and a list of
            packages (PY_PACKAGES; no test/, idlelib, lib2to3, encodings,
            distutils, site-packages, dist-packages).

1. Eval tree. Every selected file is copied into `<work>/<corpus>/src` with all
   documentation of functions, methods and classes/types removed, so that the
   query text is not in the index:
     - Python: every docstring of a function, method or class (found with
       `ast`) is deleted with its lines, or replaced by `pass` where it was the
       only statement of the body or shared a line with other code. Module
       docstrings stay. Each rewritten file must parse again (`ast.parse`);
       a file that does not is left out of the tree (counted).
     - Go: the contiguous block of `//` lines right above a top-level `func` or
       `type` line is deleted, except compiler directives (`//go:...`,
       `//line`, `//export`, ...). Docs inside `type (...)` groups and on
       interface methods stay. With `gofmt` on PATH every file is also checked
       with `gofmt -e -l` (syntax errors fail the run); without it the check is
       skipped.
   Targets (the function a query should find) are recomputed on the rewritten
   text: Python by parsing it again (def line .. end_lineno); Go by a small
   lexer that follows parentheses, braces, strings and comments from the
   `func` line to the closing brace.
2. Queries. The query of a function is the first sentence of the first
   paragraph of its removed doc, whitespace-collapsed. Go docs conventionally
   start with the function's name ("NewReader returns a new Reader ..."); we
   keep the name, as CodeSearchNet keeps the docstring tokens as written
   (`--strip-go-name` drops a leading name word instead). Candidates are
   top-level functions and methods (not nested functions) whose doc existed,
   and which are kept only if: the sentence has at least 4 words (tokens with a
   letter: a grammar rule such as `disposition-type *( ";" parameter )` is no query);
   it is not a signature (`name(args) -> result`); the function
   spans at least 3 lines in the rewritten file; the name does not start with
   `_` (Python; `--include-private` keeps them); the doc does not start with
   "Deprecated"; the sentence is unique among the candidates (after
   normalization), so every query has one right answer; and the normalized
   sentence (lowercase, non-alphanumerics -> space) does not occur anywhere in
   the normalized eval tree (a "leak": e.g. the same words in another comment).
   `--queries N` (default 200) of them are drawn per corpus with
   random.Random(--seed) (the first N of one seeded shuffle).
3. Index: `code-indexer index <work>/<corpus>/src --out <work>/snapshots
   --name eval-<corpus> --json` (with embeddings, the default of `index`;
   `--no-embeddings` passes that flag through). `--reuse` skips the build when
   an earlier run of the same tree (same content hash) left its snapshot.
4. Search: `code-index-mcp serve --index <snapshot>` through the official MCP
   Python client; for every query and mode, tool `search_code` with
   {"query": q, "mode": mode, "limit": 10, "repo": "eval-<corpus>"}. One
   warm-up call per mode (a query not in the set) is made first and not timed,
   so a lazily loaded model does not count against the first query.
5. Hit rule. A result (`path`, `line`, `end_line`: the chunk span, 1-based,
   inclusive) is a hit for a target when its path is the target's file and
   either its span contains the target's first line (the `def`/`func` line),
   or its span overlaps the target's span by at least half of the target's
   lines. The rank of a query is that of its first hit (1-based); no hit in the
   top 10 scores 0. MRR@10 = mean of 1/rank; recall@k = share of queries with
   rank <= k. Latency p50/p95 is client-side wall time of each call
   (including the client's JSON and output-schema work).
   A chunk that spans a whole class (a class summary) or a whole small file
   contains the def line of every method in it and so counts as a hit; the
   "strict" columns repeat MRR@10 and recall@10 without class-summary results
   (`kind` == "class_summary"). search_code returns one chunk per file unless
   `--max-per-file` says otherwise: a query whose file is found through another
   function of that file is then a miss, as it would be for an agent.

Output: a markdown report (corpus sizes, one row per corpus and mode, date,
command line) printed and written to `--out` (default
bench/results/eval-search.md); `--json` prints the results (and per-query
ranks) as JSON on stdout instead of the markdown. If the server does not list
`search_code`, the script says so and exits with code 2 (checked first on a
tiny snapshot built without embeddings, before any long build).

Binaries: $CODE_INDEX_BIN (a directory holding both binaries), else
$CARGO_TARGET_DIR/release (default ~/.cache/code-index/target/release);
$CODE_INDEXER / $CODE_INDEX_MCP name single binaries (as tests/helpers.py).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import datetime
import hashlib
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# --------------------------------------------------------------------------
# Corpora

GO_PACKAGES = (
    "archive/tar", "bufio", "bytes", "compress/flate", "compress/gzip", "container/heap",
    "container/list", "context", "encoding/base64", "encoding/binary", "encoding/csv", "encoding/hex",
    "encoding/json", "errors", "flag", "fmt", "io", "io/fs", "net/url", "path", "path/filepath",
    "regexp", "sort", "strings", "text/template", "time",
)

PY_LIB = Path("/usr/lib/python3.11")
PY_PACKAGES = (
    "asyncio", "collections", "concurrent", "ctypes", "curses", "dbm", "email", "html", "http",
    "importlib", "json", "logging", "multiprocessing", "re", "sqlite3", "tomllib", "unittest",
    "urllib", "wsgiref", "xml", "xmlrpc", "zoneinfo",
)
# Directories never taken (anywhere in a path) and top-level modules that are data or jokes.
PY_EXCLUDED_DIRS = {"test", "tests", "idlelib", "lib2to3", "encodings", "distutils", "pydoc_data",
                    "site-packages", "dist-packages", "__pycache__", "turtledemo", "ensurepip", "venv"}
PY_EXCLUDED_FILES = re.compile(r"^(_sysconfigdata_.*|this|antigravity|__hello__|sitecustomize)\.py$")

CORPORA = ("go", "python")
MODES = ("keyword", "semantic", "hybrid")


def corpora_root(probe: str = "go-stdlib") -> Path:
    """$CODE_INDEX_CORPORA, else the default cache, else /tmp/corpora when only it holds `probe`."""
    env = os.environ.get("CODE_INDEX_CORPORA")
    if env:
        return Path(env)
    default = Path.home() / ".cache" / "code-index" / "corpora"
    if (default / probe).is_dir() or not Path("/tmp/corpora", probe).is_dir():
        return default
    return Path("/tmp/corpora")


def binary(name: str, single_env: str) -> Path:
    if os.environ.get(single_env):
        return Path(os.environ[single_env])
    if os.environ.get("CODE_INDEX_BIN"):
        return Path(os.environ["CODE_INDEX_BIN"]) / name
    target = os.environ.get("CARGO_TARGET_DIR") or str(Path.home() / ".cache" / "code-index" / "target")
    p = Path(target) / "release" / name
    if not p.exists() and shutil.which(name):
        return Path(shutil.which(name))
    return p


def log(*a) -> None:
    print(*a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Targets and queries


@dataclass
class Target:
    path: str  # repo-relative, '/'-separated
    name: str  # qualified: Class.method, (*T).Method, Func
    line: int  # def / func line in the rewritten file, 1-based
    end_line: int  # last line, inclusive
    query: str
    doc: str = field(repr=False, default="")  # first paragraph of the removed doc


_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|resp|Mr|Dr|No)|\.\.)$", re.I)


def first_sentence(paragraph: str) -> str:
    """The first sentence of a paragraph: up to the first '.', '!' or '?' that
    is followed by whitespace or the end (not after e.g./i.e./etc.)."""
    text = " ".join(paragraph.split())
    for m in re.finditer(r"[.!?](?=\s|$)", text):
        if m.group() == "." and _ABBREV.search(text[: m.start()]):
            continue
        return text[: m.end()]
    return text


def normalize(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


# --------------------------------------------------------------------------
# Python: strip docstrings with ast, recompute targets on the rewritten text

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def py_defs(tree: ast.AST) -> list[tuple[str, ast.AST, bool]]:
    """(qualified name, node, nested-in-a-function) of every def and class, in
    source order (the same order for a file and its rewrite)."""
    out = []

    def visit(node, prefix, in_func):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _DEFS):
                q = prefix + child.name
                out.append((q, child, in_func))
                visit(child, q + ".", in_func or isinstance(child, _FUNCS))
            else:
                visit(child, prefix, in_func)

    visit(tree, "", False)
    return out


def py_docstring_node(node: ast.AST):
    body = getattr(node, "body", None)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0]
    return None


def strip_python(src: bytes) -> bytes:
    """src with every function/method/class docstring removed (ast positions
    are UTF-8 byte offsets, so the rewrite works on bytes)."""
    tree = ast.parse(src)
    edits = []
    for _, node, _ in py_defs(tree):
        doc = py_docstring_node(node)
        if doc is not None:
            edits.append((doc, len(node.body) == 1))
    lines = src.splitlines(keepends=True)
    for expr, only in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
        l0, l1 = expr.lineno - 1, expr.end_lineno - 1
        prefix, suffix = lines[l0][: expr.col_offset], lines[l1][expr.end_col_offset:]
        rest = suffix.strip()
        if not prefix.strip() and (not rest or rest.startswith(b"#")):
            eol = lines[l1][len(lines[l1].rstrip(b"\r\n")):] or b"\n"
            lines[l0: l1 + 1] = [prefix + b"pass" + eol] if only else []
        else:  # shares a line with other code: `def f(): "doc"` or `"doc"; x = 1`
            lines[l0: l1 + 1] = [prefix + b"pass" + suffix]
    return b"".join(lines)


def python_targets(rel: str, old: ast.AST, new_src: bytes, include_private: bool) -> list[Target]:
    new = ast.parse(new_src)
    old_defs, new_defs = py_defs(old), py_defs(new)
    assert [q for q, _, _ in old_defs] == [q for q, _, _ in new_defs], f"{rel}: defs differ after the rewrite"
    out = []
    for (q, o, nested), (_, n, _) in zip(old_defs, new_defs):
        if nested or not isinstance(o, _FUNCS):
            continue
        if o.name.startswith("_") and not include_private:
            continue
        doc = ast.get_docstring(o, clean=True)
        if not doc:
            continue
        para = doc.strip().split("\n\n")[0]
        out.append(Target(rel, q, n.lineno, n.end_lineno, first_sentence(para), para))
    return out


def python_pool(lib: Path) -> list[str]:
    rels = [p.name for p in lib.glob("*.py") if not PY_EXCLUDED_FILES.match(p.name)]
    for pkg in PY_PACKAGES:
        for p in (lib / pkg).rglob("*.py"):
            rel = p.relative_to(lib)
            if not PY_EXCLUDED_DIRS.intersection(rel.parts[:-1]):
                rels.append(rel.as_posix())
    return sorted(rels)


def build_python(lib: Path, dst: Path, n_files: int, seed: int, include_private: bool):
    pool = python_pool(lib)
    chosen = sorted(random.Random(seed).sample(pool, n_files)) if n_files < len(pool) else pool
    files, targets, dropped = [], [], []
    for rel in chosen:
        src = (lib / rel).read_bytes()
        try:
            old = ast.parse(src)
            new_src = strip_python(src)
            ast.parse(new_src)
        except (SyntaxError, ValueError) as e:  # unparsable, or the rewrite broke it
            dropped.append(f"{rel}: {e}")
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        (dst / rel).write_bytes(new_src)
        files.append(rel)
        targets += python_targets(rel, old, new_src, include_private)
    return {"pool": len(pool), "files": files, "dropped": dropped}, targets


# --------------------------------------------------------------------------
# Go: strip doc comments above func/type lines, find function spans by lexing

_GO_DIRECTIVE = re.compile(r"^//([a-z0-9]+:\S|line |export |extern |sys(nb)? )")
_GO_DECL = re.compile(r"^(func|type)\b")
_GO_IGNORED = re.compile(r"^//go:build ignore\s*$", re.M)
_GO_FUNC = re.compile(r"^func\s*(?:\(([^)]*)\)\s*)?([A-Za-z_]\w*)")


def go_code_lines(lines: list[str]) -> list[bool]:
    """For each line: does it start in code (not inside a raw string literal or
    a /* */ comment)? Template text in a raw string may hold `func` lines."""
    out, in_raw, in_block = [], False, False
    for s in lines:
        out.append(not (in_raw or in_block))
        k, n = 0, len(s)
        while k < n:
            if in_block or in_raw:
                e = s.find("*/" if in_block else "`", k)
                if e < 0:
                    break
                k = e + (2 if in_block else 1)
                in_block = in_raw = False
                continue
            c = s[k]
            if s.startswith("//", k):
                break
            if s.startswith("/*", k):
                in_block, k = True, k + 2
            elif c == "`":
                in_raw, k = True, k + 1
            elif c in "\"'":
                k += 1
                while k < n and s[k] != c:
                    k += 2 if s[k] == "\\" else 1
                k += 1
            else:
                k += 1
    return out


def strip_go(text: str) -> tuple[str, list[tuple[int, list[str]]]]:
    """text without the doc comments of top-level func/type declarations, and
    for each `func` line of the result: (its 1-based line, the removed doc lines)."""
    out: list[str] = []
    funcs: list[tuple[int, list[str]]] = []
    pending: list[str] = []
    lines = text.split("\n")
    for line, code in zip(lines, go_code_lines(lines)):
        if code and line.startswith("//"):
            pending.append(line)
            continue
        doc: list[str] = []
        if pending and code and _GO_DECL.match(line):
            doc = [p for p in pending if not _GO_DIRECTIVE.match(p)]
            out += [p for p in pending if _GO_DIRECTIVE.match(p)]
        else:
            out += pending
        pending = []
        if code and line.startswith("func"):
            funcs.append((len(out) + 1, doc))
        out.append(line)
    out += pending
    return "\n".join(out), funcs


def go_decl_end(lines: list[str], i: int) -> int:
    """0-based index of the last line of the func declaration starting at
    lines[i]: its body's closing brace, or the signature's end when it has no
    body (Go's semicolon insertion at a newline after `)`, `]`, `}` or a word)."""
    paren = brack = type_brace = body = 0
    in_body = in_block_comment = in_raw = False
    last, prev_word = "", ""
    for j in range(i, len(lines)):
        s, k, n = lines[j], 0, len(lines[j])
        while k < n:
            if in_block_comment:
                e = s.find("*/", k)
                if e < 0:
                    k = n
                    break
                in_block_comment, k = False, e + 2
                continue
            if in_raw:
                e = s.find("`", k)
                if e < 0:
                    k = n
                    break
                in_raw, k, last = False, e + 1, "word"
                continue
            c = s[k]
            if s.startswith("//", k):
                break
            if s.startswith("/*", k):
                in_block_comment, k = True, k + 2
                continue
            if c == "`":
                in_raw, k = True, k + 1
                continue
            if c in "\"'":
                k += 1
                while k < n and s[k] != c:
                    k += 2 if s[k] == "\\" else 1
                k, last, prev_word = k + 1, "word", ""
                continue
            if c.isalnum() or c == "_":
                m = re.match(r"\w+", s[k:])
                prev_word, last, k = m.group(), "word", k + m.end()
                continue
            if c.isspace():
                k += 1
                continue
            if c == "(":
                paren += 1
            elif c == ")":
                paren -= 1
            elif c == "[":
                brack += 1
            elif c == "]":
                brack -= 1
            elif c == "{":
                if in_body:
                    body += 1
                elif paren or brack or type_brace or prev_word in ("struct", "interface"):
                    type_brace += 1
                else:
                    in_body, body = True, 1
            elif c == "}":
                if in_body:
                    body -= 1
                    if body == 0:
                        return j
                else:
                    type_brace -= 1
            last = "close" if c in ")]}" else "op"
            prev_word = ""
            k += 1
        if not (in_body or in_raw or in_block_comment or paren or brack or type_brace) and last in ("word", "close"):
            return j
    return len(lines) - 1


def go_func_name(line: str) -> str | None:
    m = _GO_FUNC.match(line)
    if not m:
        return None
    recv, name = m.group(1), m.group(2)
    if recv is None:
        return name
    t = re.search(r"(\*?)\s*([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*$", recv.strip())
    if not t:
        return name
    return f"(*{t.group(2)}).{name}" if t.group(1) else f"{t.group(2)}.{name}"


def go_doc_paragraph(doc: list[str]) -> str:
    para = []
    for d in doc:
        body = d[2:]
        if not body.strip():
            if para:
                break
            continue
        para.append(body.strip())
    return " ".join(para)


def build_go(src_root: Path, dst: Path, packages, strip_name: bool):
    files, targets, dropped = [], [], []
    for pkg in packages:
        d = src_root / pkg
        if not d.is_dir():
            raise SystemExit(f"go-stdlib package {pkg} not found under {src_root}")
        for p in sorted(d.glob("*.go")):
            if p.name.endswith("_test.go"):
                continue
            rel = p.relative_to(src_root).as_posix()
            try:
                text = p.read_text(encoding="utf-8")
            except UnicodeDecodeError as e:
                dropped.append(f"{rel}: {e}")
                continue
            if _GO_IGNORED.search(text):  # a generator program (`go run gen.go`), not part of the package
                dropped.append(f"{rel}: //go:build ignore")
                continue
            new, funcs = strip_go(text)
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            (dst / rel).write_text(new, encoding="utf-8")
            files.append(rel)
            lines = new.split("\n")
            for line, doc in funcs:
                name = go_func_name(lines[line - 1])
                para = go_doc_paragraph(doc)
                if not name or not para:
                    continue
                end = go_decl_end(lines, line - 1) + 1
                q = first_sentence(para)
                if strip_name:
                    short = name.rsplit(".", 1)[-1]
                    if q.split(" ", 1)[0] == short and " " in q:
                        q = q.split(" ", 1)[1]
                        q = q[0].upper() + q[1:]
                targets.append(Target(rel, name, line, end, q, para))
    return {"pool": len(files), "files": files, "dropped": dropped}, targets


def gofmt_check(dst: Path) -> str:
    gofmt = shutil.which("gofmt")
    if not gofmt:
        return "skipped (no gofmt on PATH)"
    p = subprocess.run([gofmt, "-e", "-l", str(dst)], capture_output=True, text=True)
    if p.returncode != 0 or p.stderr.strip():
        raise SystemExit(f"gofmt found syntax errors in the Go eval tree:\n{p.stderr[:3000]}")
    unformatted = [s for s in p.stdout.split("\n") if s]
    return f"ok ({len(unformatted)} file(s) gofmt would reformat; no syntax errors)"


# --------------------------------------------------------------------------
# Building a corpus: tree, candidates, sample


@dataclass
class Corpus:
    name: str
    label: str
    src: Path
    files: list[str]
    tree_hash: str
    candidates: int
    filtered: dict
    queries: list[Target]
    check: str
    dropped: list[str]
    index: dict = field(default_factory=dict)


def tree_hash(src: Path, files: list[str]) -> str:
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + hashlib.sha256((src / rel).read_bytes()).digest())
    return h.hexdigest()


def select_queries(src: Path, files: list[str], targets: list[Target], n: int, seed: int):
    """Apply the filters of the module docstring; sample n deterministically."""
    why = {"short_doc": 0, "signature_doc": 0, "short_function": 0, "deprecated": 0, "duplicate_query": 0,
           "leaked": 0}
    kept = []
    for t in targets:
        if sum(1 for w in t.query.split() if re.search(r"[A-Za-z]", w)) < 4:  # 4 words, not grammar
            why["short_doc"] += 1
        elif re.match(r"[\w.]+\(.*\)\s*(->|$)", t.query):  # `name(args) -> result`, a signature, not prose
            why["signature_doc"] += 1
        elif t.end_line - t.line + 1 < 3:
            why["short_function"] += 1
        elif t.doc.lower().startswith("deprecated"):
            why["deprecated"] += 1
        else:
            kept.append(t)
    counts: dict[str, int] = {}
    for t in kept:
        counts[normalize(t.query)] = counts.get(normalize(t.query), 0) + 1
    why["duplicate_query"] = sum(c for c in counts.values() if c > 1)
    kept = [t for t in kept if counts[normalize(t.query)] == 1]
    corpus_text = " ".join(normalize((src / rel).read_text(encoding="utf-8", errors="replace")) for rel in files)
    corpus_text = f" {corpus_text} "
    leak_free = [t for t in kept if f" {normalize(t.query)} " not in corpus_text]
    why["leaked"] = len(kept) - len(leak_free)
    leak_free.sort(key=lambda t: (t.path, t.line))
    order = list(leak_free)
    random.Random(seed).shuffle(order)  # a smaller --queries takes a prefix of the same order
    return len(leak_free), why, sorted(order[:n], key=lambda t: (t.path, t.line))


def prepare(corpus: str, a) -> Corpus:
    src = a.work / corpus / "src"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    if corpus == "python":
        info, targets = build_python(a.python_lib, src, a.files, a.seed, a.include_private)
        label = f"Python {a.python_lib.name[len('python'):]} stdlib ({a.python_lib})"
        check = f"ast.parse ok on all {len(info['files'])} rewritten files"
    else:
        go_src = a.corpora / "go-stdlib" / "src"
        if not go_src.is_dir():
            raise SystemExit(f"go-stdlib corpus not found at {go_src} (set CODE_INDEX_CORPORA; "
                             f"scripts/test.sh fetches it with ../shared/bench/corpora.sh)")
        info, targets = build_go(go_src, src, a.go_packages, a.strip_go_name)
        m = re.search(r"^go (\S+)", (go_src / "go.mod").read_text(), re.M) if (go_src / "go.mod").exists() else None
        label = f"Go {m.group(1) if m else '?'} stdlib, {len(a.go_packages)} packages"
        check = "gofmt: " + gofmt_check(src)
    files = info["files"]
    n, why, chosen = select_queries(src, files, targets, a.queries, a.seed)
    c = Corpus(corpus, label, src, files, tree_hash(src, files), len(targets), why, chosen, check, info["dropped"])
    (a.work / corpus / "queries.jsonl").write_text("".join(json.dumps(asdict(t)) + "\n" for t in chosen))
    log(f"[{corpus}] {len(files)} files (pool {info['pool']}, {len(info['dropped'])} dropped) -> {src}; "
        f"{len(targets)} documented functions, {n} usable after filters {why}; {len(chosen)} queries; {check}")
    return c


# --------------------------------------------------------------------------
# Indexing


def index(c: Corpus, a) -> None:
    state = a.work / c.name / "index.json"
    if a.reuse and state.exists():
        prev = json.loads(state.read_text())
        snap = Path(prev["summary"]["snapshot_dir"])
        if prev.get("tree_hash") == c.tree_hash and prev.get("no_embeddings") == a.no_embeddings \
                and (snap / "manifest.json").exists():
            c.index = prev
            log(f"[{c.name}] reusing snapshot {snap}")
            return
        log(f"[{c.name}] --reuse: the earlier snapshot does not match this tree or options; rebuilding")
    cmd = [str(a.indexer), "index", str(c.src), "--out", str(a.work / "snapshots"), "--name", f"eval-{c.name}", "--json"]
    if a.no_embeddings:
        cmd.append("--no-embeddings")
    log(f"[{c.name}] indexing: {shlex.join(cmd)}")
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"code-indexer failed (exit {p.returncode}); see its message above")
    summary = json.loads(p.stdout)
    c.index = {"tree_hash": c.tree_hash, "no_embeddings": a.no_embeddings, "wall_seconds": wall, "summary": summary}
    state.write_text(json.dumps(c.index, indent=1))
    emb = summary.get("embeddings") or {}
    vec = f"{emb.get('embedded', 0)} embedded ({emb.get('from_cache', 0)} from cache)" if emb else "no embeddings"
    log(f"[{c.name}] {summary['files']} files, {chunk_count(c)} chunks, {vec}, in {wall:.1f}s")


def chunk_count(c: Corpus):
    return (c.index.get("summary", {}).get("tables", {}).get("chunks") or {}).get("rows")


# --------------------------------------------------------------------------
# Searching through MCP


class ToolMissing(Exception):
    pass


def is_hit(r: dict, t: Target) -> bool:
    if r.get("path") != t.path:
        return False
    lo, hi = int(r.get("line", 0)), int(r.get("end_line", r.get("line", 0)))
    if lo <= t.line <= hi:
        return True
    overlap = min(hi, t.end_line) - max(lo, t.line) + 1
    return overlap * 2 >= t.end_line - t.line + 1


def metrics(ranks: list[int]) -> dict:
    n = len(ranks) or 1
    return {"queries": len(ranks), "mrr@10": sum(1 / r for r in ranks if r) / n,
            **{f"recall@{k}": sum(1 for r in ranks if 0 < r <= k) / n for k in (1, 5, 10)}}


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


async def run_queries(c: Corpus, a) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    snap = c.index["summary"]["snapshot_dir"]
    repo = f"eval-{c.name}"
    out: dict = {}
    params = StdioServerParameters(command=str(a.server), args=["serve", "--index", str(snap)], env=dict(os.environ))
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tools = [t.name for t in (await s.list_tools()).tools]
            if "search_code" not in tools:
                raise ToolMissing(tools)

            async def call(args):
                t0 = time.perf_counter()
                res = await s.call_tool("search_code", args, read_timeout_seconds=a.timeout)
                dt = time.perf_counter() - t0
                if res.is_error:
                    text = res.content[0].text if res.content else ""
                    return dt, None, text[:500]
                sc = res.structured_content or {}
                if "results" not in sc:
                    return dt, None, f"no `results` in the structured content (keys: {sorted(sc)})"
                return dt, sc, None

            def args_for(q, mode):
                d = {"query": q, "mode": mode, "limit": 10, "repo": repo}
                if a.max_per_file:
                    d["max_per_file"] = a.max_per_file
                return d

            for mode in a.modes:
                _, _, err = await call(args_for("open a file and read it line by line", mode))
                if err:
                    log(f"[{c.name}] mode {mode}: search_code failed on the warm-up query: {err}")
                    out[mode] = {"error": err}
                    continue
                ranks, strict, lat = [], [], []
                ran_as: dict[str, int] = {}
                query_types: dict[str, int] = {}
                notices: dict[str, int] = {}
                for i, t in enumerate(c.queries):
                    dt, sc, err = await call(args_for(t.query, mode))
                    if err:
                        log(f"[{c.name}] mode {mode}: search_code failed on {t.query!r}: {err}")
                        out[mode] = {"error": err}
                        break
                    lat.append(dt * 1000)
                    results = sc["results"][:10]
                    ranks.append(next((k + 1 for k, r in enumerate(results) if is_hit(r, t)), 0))
                    strict.append(next((k + 1 for k, r in enumerate(results)
                                        if r.get("kind") != "class_summary" and is_hit(r, t)), 0))
                    ran = f"{sc.get('mode', '?')}{'' if sc.get('semantic', True) else ' (no vectors)'}"
                    ran_as[ran] = ran_as.get(ran, 0) + 1
                    query_types[sc.get("query_type", "?")] = query_types.get(sc.get("query_type", "?"), 0) + 1
                    if sc.get("notice"):
                        notices[sc["notice"]] = notices.get(sc["notice"], 0) + 1
                    if (i + 1) % 50 == 0:
                        log(f"[{c.name}] {mode}: {i + 1}/{len(c.queries)}")
                else:
                    out[mode] = {**metrics(ranks), "strict_mrr@10": metrics(strict)["mrr@10"],
                                 "strict_recall@10": metrics(strict)["recall@10"],
                                 "p50_ms": pct(lat, 50), "p95_ms": pct(lat, 95), "ran_as": ran_as,
                                 "query_types": query_types, "notices": notices, "ranks": ranks,
                                 "strict_ranks": strict}
                    if any(k != mode for k in ran_as):
                        log(f"[{c.name}] mode {mode} ran as {ran_as}; notices: {list(notices)[:3]}")
    return out


async def preflight(a) -> None:
    """Is search_code listed? Checked on a one-file snapshot without
    embeddings (about a second) so a missing tool is found before a long build."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    base = a.work / "preflight"
    (base / "src").mkdir(parents=True, exist_ok=True)
    (base / "src" / "hello.py").write_text("def hello(name):\n    return f'hello {name}'\n")
    p = subprocess.run([str(a.indexer), "index", str(base / "src"), "--out", str(base / "snapshots"),
                        "--name", "eval-preflight", "--no-embeddings", "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"code-indexer failed on the preflight tree:\n{p.stderr[-2000:]}")
    snap = json.loads(p.stdout)["snapshot_dir"]
    params = StdioServerParameters(command=str(a.server), args=["serve", "--index", snap])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tools = [t.name for t in (await s.list_tools()).tools]
    if "search_code" not in tools:
        raise ToolMissing(tools)


# --------------------------------------------------------------------------
# Report


def report(corpora: list[Corpus], results: dict, a, argv: list[str]) -> str:
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "?"
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    lines = [
        "## Retrieval evaluation: `search_code` (CodeSearchNet-style)",
        "",
        f"{datetime.date.today().isoformat()}, commit {commit}{' (dirty)' if dirty else ''}, "
        f"{os.cpu_count()} cores. Command: `{shlex.join(['python3', 'bench/eval_search.py', *argv])}`",
        "",
        "Query = first sentence of a function's doc; the doc is removed from the indexed copy. "
        "Hit = a result in the target's file whose span contains the def/func line or covers at least "
        "half the function; strict = the same without class-summary chunks (which span a whole class). "
        f"search_code arguments: limit 10, {f'max_per_file {a.max_per_file}' if a.max_per_file else 'max_per_file at its default'}"
        "; \"ran as\" is the mode the server reports (a semantic request without vectors runs as keyword). "
        "Method: the docstring of bench/eval_search.py.",
        "",
        "| corpus | source | files | chunks | embedded (from cache) | index wall s | documented functions | usable | queries |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in corpora:
        s = c.index.get("summary", {})
        emb = s.get("embeddings") or {}
        usable = c.candidates - sum(c.filtered.values())
        lines.append(
            f"| {c.name} | {c.label} | {len(c.files)} | {chunk_count(c) or '-'} | "
            f"{emb.get('embedded', '-') if emb else 'none'} ({emb.get('from_cache', '-') if emb else '-'}) | "
            f"{c.index.get('wall_seconds', float('nan')):.1f} | {c.candidates} | {usable} | {len(c.queries)} |"
        )
    lines += ["", "| corpus | mode | MRR@10 | recall@1 | recall@5 | recall@10 | strict MRR@10 | strict recall@10 "
              "| p50 ms | p95 ms | ran as |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for c in corpora:
        for mode in a.modes:
            m = results.get(c.name, {}).get(mode)
            if not m:
                continue
            if "error" in m:
                lines.append(f"| {c.name} | {mode} | error: {m['error'][:120].replace('|', '/')} | | | | | | | | |")
                continue
            ran = ", ".join(f"{k}: {v}" if len(m["ran_as"]) > 1 else k for k, v in m["ran_as"].items())
            lines.append(f"| {c.name} | {mode} | {m['mrr@10']:.3f} | {m['recall@1']:.3f} | {m['recall@5']:.3f} | "
                         f"{m['recall@10']:.3f} | {m['strict_mrr@10']:.3f} | {m['strict_recall@10']:.3f} | "
                         f"{m['p50_ms']:.1f} | {m['p95_ms']:.1f} | {ran} |")
    lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", choices=("go", "python", "both"), default="both")
    ap.add_argument("--work", type=Path, default=Path("/tmp/eval"), help="work directory (trees, snapshots)")
    ap.add_argument("--files", type=int, default=300, help="Python files sampled into the tree (default 300)")
    ap.add_argument("--go-packages", nargs="+", default=list(GO_PACKAGES), help="Go packages (dirs under src/)")
    ap.add_argument("--python-lib", type=Path, default=PY_LIB)
    ap.add_argument("--corpora", type=Path, default=None, help="corpora dir (default $CODE_INDEX_CORPORA, "
                    "~/.cache/code-index/corpora, /tmp/corpora)")
    ap.add_argument("--queries", type=int, default=200, help="queries per corpus (default 200)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    ap.add_argument("--include-private", action="store_true", help="Python: also query _private functions")
    ap.add_argument("--strip-go-name", action="store_true", help="Go: drop the function name that starts a doc")
    ap.add_argument("--reuse", action="store_true", help="reuse the snapshot of an earlier run of the same tree")
    ap.add_argument("--no-embeddings", action="store_true", help="pass --no-embeddings to code-indexer")
    ap.add_argument("--prepare-only", action="store_true", help="build trees and queries, print samples, stop")
    ap.add_argument("--samples", type=int, default=3, help="sample queries printed per corpus")
    ap.add_argument("--max-per-file", type=int, default=None,
                    help="pass max_per_file to search_code (default: the tool's own default)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per search_code call")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "eval-search.md")
    ap.add_argument("--json", action="store_true", help="print results as JSON on stdout")
    a = ap.parse_args(argv)
    a.work = a.work.resolve()
    a.corpora = a.corpora or corpora_root()
    a.indexer = binary("code-indexer", "CODE_INDEXER")
    a.server = binary("code-index-mcp", "CODE_INDEX_MCP")
    return a


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    a = parse_args(argv)
    names = CORPORA if a.corpus == "both" else (a.corpus,)
    if not a.prepare_only:
        for b in (a.indexer, a.server):
            if not b.exists():
                raise SystemExit(f"binary not found: {b} (build with `cargo build --release`, or set "
                                 f"CODE_INDEX_BIN / CARGO_TARGET_DIR)")
        try:
            asyncio.run(preflight(a))
        except ToolMissing as e:
            log(f"error: {a.server} does not list the tool `search_code` (it lists: {', '.join(e.args[0])}); "
                f"build a server with the semantic layer first")
            return 2
        except Exception as e:  # noqa: BLE001 -- the server did not start or answer
            raise SystemExit(f"error: could not start `{a.server} serve` on a one-file snapshot: {e!r}") from e

    corpora = [prepare(n, a) for n in names]
    for c in corpora:
        log(f"[{c.name}] sample queries:")
        for t in random.Random(a.seed).sample(c.queries, min(a.samples, len(c.queries))):
            log(f"    {t.query!r}\n        -> {t.path}:{t.line}-{t.end_line} {t.name}")
    if a.prepare_only:
        return 0

    results: dict = {}
    for c in corpora:
        index(c, a)
        try:
            results[c.name] = asyncio.run(run_queries(c, a))
        except ToolMissing as e:
            log(f"error: {a.server} does not list the tool `search_code` (it lists: {', '.join(e.args[0])})")
            return 2

    md = report(corpora, results, a, argv)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(md)
    if a.json:
        doc = {
            "date": datetime.date.today().isoformat(),
            "command": shlex.join(["python3", "bench/eval_search.py", *argv]),
            "corpora": {
                c.name: {
                    "label": c.label, "files": len(c.files), "chunks": chunk_count(c),
                    "index": c.index.get("summary", {}).get("embeddings"),
                    "index_wall_seconds": c.index.get("wall_seconds"),
                    "documented_functions": c.candidates, "filtered": c.filtered,
                    "queries": [dict(asdict(t), ranks={m: (results[c.name].get(m) or {}).get("ranks", [None] * len(c.queries))[i]
                                                       for m in a.modes})
                                for i, t in enumerate(c.queries)],
                    "results": {m: {k: v for k, v in r.items() if not k.endswith("ranks")} for m, r in results[c.name].items()},
                }
                for c in corpora
            },
        }
        print(json.dumps(doc, indent=1))
    else:
        print(md)
    log(f"written to {a.out}")
    failed = [f"{c}/{m}" for c, r in results.items() for m, v in r.items() if "error" in v]
    if failed:
        log(f"error: search_code failed in {', '.join(failed)} (see above)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
