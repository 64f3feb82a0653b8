#!/usr/bin/env python3
"""Retrieval evaluation of `search_code` on human-written queries: the first
sentence of each function, method and class description in Django's
hand-written reference docs, asked of Django's code (with its docstrings) with
the docs folder removed. A hit is the documented definition.

    python3 bench/eval_docs.py                          # index a docs-less copy (keyword only), run keyword
    python3 bench/eval_docs.py --index SNAP --modes keyword,hybrid,semantic   # a snapshot with vectors
    python3 bench/eval_docs.py --prepare-only           # build and write the query set, print samples

Method
------
Corpus: Django 4.2.16 as pinned by ../shared/bench/corpora.sh (the PyPI sdist,
which ships `docs/`), at `$CODE_INDEX_CORPORA/django` (default
~/.cache/code-index/corpora/django, fallback /tmp/corpora/django).

1. Queries. Every `docs/ref/**/*.txt` file (sorted) is read line by line:
   `.. module::` / `.. currentmodule::` set the module (per file, as Sphinx
   does); `.. class::` / `.. exception::` open a class context for the lines
   indented under them. Query directives are `function`, `method`,
   `classmethod`, `staticmethod`, `class` and `exception` (`attribute`, `data`,
   `setting`, template tags and the rest are not parsed). A directive with the
   `:noindex:` option is a second description of something documented
   elsewhere and is dropped (its class context still holds for what is
   nested under it). Directives on adjacent lines with no blank line between
   (`.. method:: get()` / `.. method:: aget()`) share one description; their
   signatures, like the extra signatures of one directive on continuation
   lines, are one group. The description is the first paragraph after the
   group, indented under it or (Django's habit) at its own indentation:
   blank lines, `versionadded`/`versionchanged`/`deprecated` blocks, comments
   and labels, bullet and field lists (form fields' `* Default widget: ...`,
   `:param x: ...`) and Django's `*Asynchronous version*: ...` and
   `*Availability*: ...` lines are skipped; a
   heading, any other directive (note, attribute, code-block, ...) or a line
   indented less than the directive means there is none. The query is the
   first sentence of that paragraph (`first_sentence` of eval_search.py: up to
   the first `.`/`!`/`?` followed by whitespace, not after e.g./i.e./etc.)
   after removing RST markup: :role:`text <target>` -> text,
   :role:`~a.b.C` -> C, :role:`a.b.C` -> a.b.C, ``literal`` -> literal,
   `link <url>`_ -> link, name_ -> name, *emphasis* / **strong** -> the words, backslash
   escapes dropped, a final `::` -> `:`.
2. Targets. Each signature's name is resolved to a row of the snapshot's
   `symbols` table (repo-relative path + qualified_name) of kind function,
   method or class. The dotted names tried, in order: module + enclosing
   classes + name as written; inside a class, module + name (a name written
   `Sitemap.items` under `.. class:: Sitemap`) and classes + name; the name
   alone (fully qualified names).
   Its longest prefix that is a module file (`a/b/c.py` or `a/b/c/__init__.py`
   among the snapshot's Python files) gives the file; the rest is the
   qualified name in that file. When the file does not define it, the
   resolver follows what Python would (on the stored file text, with `ast`):
   a name imported into the module (`from .base import Model`, also through
   `from x import *`, relative imports, and submodules), a module-level alias
   (`D = Distance`), an attribute of a module-level instance (`apps =
   Apps(...)`: `apps.get_model` is Apps.get_model), and a method that a
   class inherits (its bases, depth-first, left to right), so that
   `django.db.models.Model` lands on django/db/models/base.py and
   `DetailView.get_object` on SingleObjectMixin.get_object. A name that only
   resolves to an assignment (`path = partial(...)`) or not at all is dropped
   (counted by reason). When one path + qualified_name has several def rows
   (a property's getter and setter, platform-dependent defs) all of them are
   accepted; so are the definitions of the other signatures of the group
   (`aget` for `get`). The first resolved signature's first row is the target
   written to the set.
3. Filters (each counted): no description; a sentence of fewer than 3 words;
   the same sentence (lowercased, non-alphanumerics as spaces) for targets
   that differ (ambiguous; kept once when the targets are the same). Order:
   doc file, then line.
   The set is written to bench/data/django-docs-queries.jsonl (`--set-out`).
4. Index: the Django tree is copied to `<work>/tree` without its top-level
   `docs/` folder, and `code-indexer index <work>/tree --out <work>/snapshots
   --name django --no-embeddings --json` is run and timed (`--embeddings`
   builds vectors instead; about an hour on one core). `--index DIR` takes an
   existing snapshot (a `<id>` directory, or `<out>/<repo>` with `latest`)
   instead, which must hold no `docs/` file. `--reuse` keeps the snapshot of an
   earlier run of the same tree.
5. Search: `code-index-mcp serve --index <snapshot>` through the official MCP
   Python client; per query and mode, `search_code` with {"query", "mode",
   "limit": 10, "repo"}; include_tests and max_per_file at the tool's defaults
   (tests included at half weight; one chunk per file) unless `--max-per-file`.
   One untimed warm-up call per mode.
6. Hit rules (a result is `path`, `line`..`end_line`, `symbol`):
     overlap (the headline): same path as an accepted definition and the line
       ranges share at least one line;
     symbol (stricter): same path and `symbol` equals the definition's
       qualified_name;
     def-line: same path and the result's span contains the definition's
       first line or covers at least half of it (eval_search.py's rule).
   The rank of a query is its first hit's (1-based; none in the top 10: 0).
   MRR@10 = mean 1/rank; R@k = share with 0 < rank <= k. Latency p50/p95 is
   the client's wall time per call. Reported per mode, overall and by kind
   (function; method = method/classmethod/staticmethod; class = class/exception).

Output: a markdown report printed and written to `--out` (default
bench/results/eval-docs-django.md), with per-query ranks in
`<work>/results.json`.

Binaries as eval_search.py: $CODE_INDEX_BIN, else $CARGO_TARGET_DIR/release
(default ~/.cache/code-index/target/release); $CODE_INDEXER / $CODE_INDEX_MCP.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import datetime
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_search import ROOT, binary, corpora_root, first_sentence, log, metrics, normalize, pct  # noqa: E402

DJANGO_PIN = "4.2.16"  # ../shared/bench/corpora.sh: DJANGO_VER
QUERY_KINDS = {"function": "function", "method": "method", "classmethod": "method", "staticmethod": "method",
               "class": "class", "exception": "class"}
CLASS_DIRECTIVES = {"class", "exception"}
SKIPPED_BLOCKS = {"versionadded", "versionchanged", "deprecated"}
DEF_KINDS = {"function", "method", "class"}
MIN_WORDS = 3
MODES = ("keyword", "semantic", "hybrid")

# --------------------------------------------------------------------------
# 1. Reference docs -> entries


@dataclass
class Entry:
    doc: str  # docs-relative file:line of the (first) directive of the group
    directive: str
    names: list[str]  # one per signature in the group, as written (may be dotted)
    module: str | None
    classes: list[str]  # enclosing class directives, outermost first, as written
    noindex: bool
    directives: int = 1  # directives in the group (get + aget: 2)
    sentence: str | None = None
    paragraph: str | None = None


_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+(?:py:)?([a-z][\w-]*)::\s*(.*?)\s*$")
_COMMENT = re.compile(r"^(\s*)\.\.(\s|$)")
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+<>:.!$%&,/;?@\\|_])\1{2,}\s*$")
_BULLET = re.compile(r"^([-*+•]|#\.|\d+\.)\s")
_FIELD = re.compile(r"^:[^:`\s][^:`]*:(\s|$)")  # `:param x:`, not a :role:`...`
_SIG_NAME = re.compile(r"^(?:async\s+)?([A-Za-z_][\w.]*)")


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def strip_rst(text: str) -> str:
    """Plain words of an RST paragraph."""
    t = " ".join(text.split())
    literals: list[str] = []

    def keep(m):  # ``literal``: its text verbatim (no escapes, no markup)
        literals.append(m.group(1))
        return f"\ue000{len(literals) - 1}\ue001"

    def role(m):
        body = m.group(1)
        lm = re.match(r"^(.*?)\s*<[^<>]*>$", body, re.S)
        if lm and lm.group(1):
            return lm.group(1)  # :role:`text <target>`
        body = body.lstrip("!")
        short = body.startswith("~")
        body = body.lstrip("~").lstrip(".")  # `.Form.as_p`: a relative target
        if short:  # :role:`~a.b.C()` -> C()
            name, paren, args = body.partition("(")
            return name.split(".")[-1] + paren + args
        return body

    t = re.sub(r"``(.+?)``", keep, t)
    t = re.sub(r":[\w:+-]+:`([^`]+)`", role, t)
    t = re.sub(r"`([^`<]+?)\s*<[^`>]*>`__?", r"\1", t)  # `text <url>`_
    t = re.sub(r"`([^`]+)`__?", r"\1", t)  # `reference`_
    t = re.sub(r"`([^`]+)`", r"\1", t)  # `default role`
    t = re.sub(r"\b([A-Za-z0-9]+)__?(?![\w])", r"\1", t)  # word_ (a named reference)
    t = re.sub(r"\*\*(.+?)\*\*", r"\1", t)
    t = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", t)
    t = re.sub(r"\|([^|\s][^|]*)\|", r"\1", t)  # |substitution|
    t = t.replace("\\ ", "")  # escaped space: joins, as in ``QuerySet``\s
    t = re.sub(r"\\(.)", r"\1", t)
    t = t[:-3] if t.endswith(" ::") else re.sub(r"::$", ":", t)
    t = re.sub("\ue000(\\d+)\ue001", lambda m: literals[int(m.group(1))], t)
    return " ".join(t.split())


def skip_block(lines: list[str], k: int) -> int:
    """Index of the first line after the directive/comment at k and its indented body."""
    ind = indent(lines[k])
    k += 1
    while k < len(lines) and (not lines[k].strip() or indent(lines[k]) > ind):
        k += 1
    return k


def description(lines: list[str], k: int, ind: int) -> str | None:
    """First paragraph at or after line k that belongs to a directive at indentation ind."""
    n = len(lines)
    while k < n:
        line = lines[k]
        if not line.strip():
            k += 1
            continue
        if indent(line) < ind:
            return None
        m = _DIRECTIVE.match(line)
        if m:
            if m.group(2) in SKIPPED_BLOCKS:
                k = skip_block(lines, k)
                continue
            return None
        if _COMMENT.match(line):  # comment or `.. _label:`
            k = skip_block(lines, k)
            continue
        if _UNDERLINE.match(line) or (k + 1 < n and _UNDERLINE.match(lines[k + 1])):
            return None  # a heading (or its overline)
        pind = indent(line)
        para = []
        while k < n and lines[k].strip():
            para.append(lines[k].strip())
            k += 1
        text = " ".join(para)
        if re.match(r"^\*(Asynchronous versions?|Availability)\*:", text):
            continue  # Django's metadata lines (`*Asynchronous version*: aget()`, `*Availability*: PostGIS`)
        lst = _BULLET if _BULLET.match(text) else _FIELD if _FIELD.match(text) else None
        if lst:  # a list (form fields: widget, empty value, ...; :param x: ...): skip it
            while k < n and (not lines[k].strip() or indent(lines[k]) > pind or
                             (indent(lines[k]) == pind and lst.match(lines[k].strip()))):
                k += 1
            continue
        if text.startswith(">>>"):
            return None
        return text
    return None


def parse_doc_file(path: Path, rel: str) -> list[Entry]:
    lines = path.read_text(encoding="utf-8").splitlines()
    n = len(lines)
    entries: list[Entry] = []
    module: str | None = None
    stack: list[tuple[int, str]] = []  # (indent, class name as written)
    i = 0
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        ind = indent(line)
        while stack and ind <= stack[-1][0]:
            stack.pop()
        m = _DIRECTIVE.match(line)
        if not m:
            i += 1
            continue
        kind, arg = m.group(2), m.group(3)
        if kind in ("module", "currentmodule"):
            module = None if arg in ("", "None") else arg
            i += 1
            continue
        if kind not in QUERY_KINDS:
            i += 1
            continue
        # A group: this directive, its continuation signatures and options, and
        # further query directives of the same kind family on the very next lines.
        start = i
        names: list[str] = []
        noindex = False
        opt_module = None
        ndir = 1
        while True:
            sigs = [arg]
            j = i + 1
            while j < n and lines[j].strip() and indent(lines[j]) > ind:
                s = lines[j].strip()
                if s.startswith(":"):
                    if s.startswith(":noindex:") or s.startswith(":no-index:"):
                        noindex = True
                    mm = re.match(r"^:module:\s*(\S+)", s)
                    if mm:
                        opt_module = mm.group(1)
                elif not noindex and opt_module is None and not s.startswith(".."):
                    sigs.append(s)
                else:
                    break
                j += 1
            for s in sigs:
                sm = _SIG_NAME.match(s)
                if sm:
                    names.append(sm.group(1).rstrip("."))
            nxt = _DIRECTIVE.match(lines[j]) if j < n else None
            if nxt and indent(lines[j]) == ind and nxt.group(2) in QUERY_KINDS and \
                    QUERY_KINDS[nxt.group(2)] == QUERY_KINDS[kind]:
                i, arg = j, nxt.group(3)
                ndir += 1
                continue
            break
        e = Entry(doc=f"{rel}:{start + 1}", directive=kind, names=names, module=opt_module or module,
                  classes=[c for _, c in stack], noindex=noindex, directives=ndir)
        para = description(lines, j, ind)
        if para is not None:
            e.paragraph = para
            e.sentence = first_sentence(strip_rst(para))
        entries.append(e)
        if kind in CLASS_DIRECTIVES and names:
            stack.append((ind, names[0]))
        i = j
    return entries


def parse_docs(docs_ref: Path) -> list[Entry]:
    files = sorted(p for p in docs_ref.rglob("*.txt"))
    out: list[Entry] = []
    for p in files:
        out += parse_doc_file(p, p.relative_to(docs_ref.parent.parent).as_posix())
    return out


# --------------------------------------------------------------------------
# 2. Resolution against the snapshot


@dataclass
class Def:
    path: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int


class Snapshot:
    """The snapshot's symbols (definitions) and Python file texts."""

    def __init__(self, snap: Path):
        import pyarrow.parquet as pq

        self.dir = snap
        self.manifest = json.loads((snap / "manifest.json").read_text())
        files = pq.read_table(snap / "files.parquet", columns=["path", "content"]).to_pydict()
        self.paths = files["path"]
        self.py = {p: c for p, c in zip(files["path"], files["content"]) if p.endswith(".py")}
        s = pq.read_table(snap / "symbols.parquet",
                          columns=["path", "qualified_name", "kind", "start_line", "end_line", "doc"]).to_pydict()
        # Definitions whose code holds a doc (docstring) of its own.
        self.documented: set[tuple[str, str]] = {
            (p, q) for p, q, d in zip(s["path"], s["qualified_name"], s["doc"]) if d and d.strip()}
        self.defs: dict[tuple[str, str], list[Def]] = {}
        self.other: dict[tuple[str, str], str] = {}  # non-def symbols (variables, constants, fields)
        for p, q, k, a, b in zip(s["path"], s["qualified_name"], s["kind"], s["start_line"], s["end_line"]):
            if k in DEF_KINDS:
                self.defs.setdefault((p, q), []).append(Def(p, q, k, a, b))
            else:
                self.other.setdefault((p, q), k)
        self._ast: dict[str, ast.Module | None] = {}
        self._bindings: dict[str, tuple[dict, list]] = {}
        self._classes: dict[str, dict[str, ast.ClassDef]] = {}

    def has_vectors(self) -> bool:
        return (self.dir / "vectors.faiss").exists()

    def tree(self, path: str):
        if path not in self._ast:
            try:
                self._ast[path] = ast.parse(self.py[path])
            except (SyntaxError, ValueError):
                self._ast[path] = None
        return self._ast[path]

    def module_file(self, parts: list[str]) -> str | None:
        base = "/".join(parts)
        for cand in (f"{base}.py", f"{base}/__init__.py"):
            if cand in self.py:
                return cand
        return None

    def package_of(self, path: str) -> list[str]:
        parts = path[:-3].split("/")
        return parts[:-1]  # for a/b/__init__.py: a/b; for a/b/c.py: a/b

    def bindings(self, path: str):
        """What module-level statements bind a name to: ("import", dotted) for imports,
        ("alias", dotted) for `X = Y` / `X = a.Y`, ("instance", dotted) for `x = Y(...)`;
        and the modules of `from m import *`."""
        if path in self._bindings:
            return self._bindings[path]
        names: dict[str, tuple[str, list[str]]] = {}
        stars: list[list[str]] = []
        tree = self.tree(path)

        def visit(body):
            for node in body:
                if isinstance(node, ast.ImportFrom):
                    if node.level:
                        pkg = self.package_of(path)
                        pkg = pkg[: len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                        mod = pkg + (node.module.split(".") if node.module else [])
                    else:
                        mod = node.module.split(".")
                    for a in node.names:
                        if a.name == "*":
                            stars.append(mod)
                        else:
                            names.setdefault(a.asname or a.name, ("import", mod + [a.name]))
                elif isinstance(node, ast.Import):
                    for a in node.names:
                        if a.asname:
                            names.setdefault(a.asname, ("import", a.name.split(".")))
                elif isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                        isinstance(node.targets[0], ast.Name):
                    v = node.value
                    kind = "alias"
                    if isinstance(v, ast.Call):
                        kind, v = "instance", v.func
                    d = dotted_name(v)
                    if d:
                        names.setdefault(node.targets[0].id, (kind, d))
                elif isinstance(node, (ast.If, ast.Try)):
                    visit(node.body)
                    for h in getattr(node, "handlers", []):
                        visit(h.body)
                    visit(node.orelse)
                    visit(getattr(node, "finalbody", []))

        if tree is not None:
            visit(tree.body)
        self._bindings[path] = (names, stars)
        return self._bindings[path]

    def classes(self, path: str) -> dict[str, ast.ClassDef]:
        if path not in self._classes:
            out: dict[str, ast.ClassDef] = {}

            def walk(body, prefix):
                for node in body:
                    if isinstance(node, ast.ClassDef):
                        out[prefix + node.name] = node
                        walk(node.body, prefix + node.name + ".")
                    elif isinstance(node, (ast.If, ast.Try)):
                        walk(node.body, prefix)
                        walk(node.orelse, prefix)

            tree = self.tree(path)
            if tree is not None:
                walk(tree.body, "")
            self._classes[path] = out
        return self._classes[path]

    # -- resolution: (defs, steps) on success, where steps is the set of indirections
    # taken (import, alias, instance, base class; empty: defined where the docs say),
    # or (None, reason)

    def resolve_dotted(self, parts: list[str], seen: frozenset):
        # The longest prefix that is a module file, as Python's import would find it.
        for k in range(len(parts) - 1, 0, -1):
            f = self.module_file(parts[:k])
            if f is not None:
                return self.resolve_in_file(f, parts[k:], seen)
        return None, "no module file for any prefix"

    def resolve_in_file(self, path: str, qual: list[str], seen: frozenset):
        key = (path, ".".join(qual))
        if key in seen or len(seen) > 40:
            return None, "import cycle"
        seen = seen | {key}
        if key in self.defs:
            return self.defs[key], frozenset()
        # a class of this file (the longest prefix of qual): the member may be inherited
        classes = self.classes(path)
        for k in range(len(qual) - 1, 0, -1):
            cname = ".".join(qual[:k])
            if cname in classes:
                r, w = self.resolve_member(path, classes[cname], qual[k:], seen)
                return (r, w | {"base class"}) if r else (None, w)
        names, stars = self.bindings(path)
        if qual[0] in names:
            kind, target = names[qual[0]]
            if kind == "import":
                r, w = self.resolve_dotted(target + qual[1:], seen)
            elif kind == "alias":
                r, w = self.resolve_in_file(path, target + qual[1:], seen)
            elif len(qual) > 1:  # instance: an attribute of x = Cls(...) is Cls's
                r, w = self.resolve_in_file(path, target, seen)
                if r and r[0].kind == "class":
                    r, w = self.resolve_in_file(r[0].path, r[0].qualified_name.split(".") + qual[1:], seen)
                elif r:
                    r, w = None, f"{qual[0]} is the result of a call of {'.'.join(target)}, not a class"
            else:
                r, w = None, "names the result of a call (`x = f(...)`), not a def or class"
            return (r, w | {kind}) if r else (None, w)
        if key in self.other:
            return None, "names an assignment (a variable or class attribute), not a def or class"
        for mod in stars:
            r, w = self.resolve_dotted(mod + qual, seen)
            if r:
                return r, w | {"import"}
        return None, "not defined in its module"

    def resolve_member(self, path: str, cls: ast.ClassDef, rest: list[str], seen: frozenset):
        for b in cls.bases:
            dotted = dotted_name(b)
            if not dotted or dotted[0] in ("object", "Generic", "Exception", "dict", "list", "str", "int", "tuple"):
                continue
            r, _ = self.resolve_in_file(path, dotted, seen)  # the base class's definition
            if not r or r[0].kind != "class":
                continue
            base = r[0]
            r2, w2 = self.resolve_in_file(base.path, base.qualified_name.split(".") + rest, seen)
            if r2:
                return r2, w2
        return None, "not defined in the class or its bases"


def dotted_name(node) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *parts]


@dataclass
class Query:
    query: str
    path: str
    qualified_name: str
    start_line: int
    end_line: int
    kind: str  # function | method | class (from the directive)
    directive: str
    documented: str  # dotted name as the docs give it (module + classes + name)
    doc: str  # docs file:line
    symbol_kind: str
    resolved_via: str
    also: list[dict] = field(default_factory=list)  # other accepted definitions


def resolve(entries: list[Entry], snap: Snapshot):
    parsed = len(entries)
    dropped: dict[str, int] = {}
    examples: dict[str, list[str]] = {}

    def count(reason: str, example: str):
        dropped[reason] = dropped.get(reason, 0) + 1
        if len(examples.setdefault(reason, [])) < 4:
            examples[reason].append(example)

    def drop(reason: str, e: Entry):
        count(reason, f"{e.doc} {'.'.join(filter(None, [e.module, *e.classes, e.names[0] if e.names else '?']))}")

    kept: list[Query] = []
    via_counts: dict[str, int] = {}
    for e in entries:
        if e.noindex:
            drop("`:noindex:` (documented again elsewhere)", e)
            continue
        if not e.names:
            drop("no name in the signature", e)
            continue
        if not e.sentence:
            drop("no description paragraph", e)
            continue
        if len([w for w in e.sentence.split() if re.search(r"[A-Za-z]", w)]) < MIN_WORDS:
            drop(f"sentence under {MIN_WORDS} words", e)
            continue
        found: list[tuple[list[Def], str, str]] = []
        last_why = ""
        for name in e.names:
            cands = []
            mod = e.module.split(".") if e.module else []
            ctx = [p for c in e.classes for p in c.split(".")]
            cands.append(mod + ctx + name.split("."))
            if ctx:  # a qualified name inside a class directive (`.. method:: Sitemap.get_urls`)
                cands.append(mod + name.split("."))
                cands.append(ctx + name.split("."))
            cands.append(name.split("."))
            for c in dict.fromkeys(tuple(c) for c in cands):
                r, w = snap.resolve_dotted(list(c), frozenset())
                if r:
                    found.append((r, "+".join(sorted(w)) or "direct", ".".join(c)))
                    break
                last_why = last_why or w
        if not found:
            drop(f"unresolved: {last_why}", e)
            continue
        defs, via, documented = found[0]
        seen_defs, accepted = set(), []
        for ds, _, _ in found:
            for d in ds:
                if (d.path, d.qualified_name, d.start_line) not in seen_defs:
                    seen_defs.add((d.path, d.qualified_name, d.start_line))
                    accepted.append(d)
        t = accepted[0]
        via_counts[via] = via_counts.get(via, 0) + 1
        kept.append(Query(query=e.sentence, path=t.path, qualified_name=t.qualified_name, start_line=t.start_line,
                          end_line=t.end_line, kind=QUERY_KINDS[e.directive], directive=e.directive,
                          documented=documented, doc=e.doc, symbol_kind=t.kind, resolved_via=via,
                          also=[asdict(d) for d in accepted[1:]]))
    # same sentence, different targets: ambiguous
    by_sentence: dict[str, list[Query]] = {}
    for q in kept:
        by_sentence.setdefault(normalize(q.query), []).append(q)
    final: list[Query] = []
    for q in kept:
        group = by_sentence[normalize(q.query)]
        if len(group) == 1:
            final.append(q)
            continue
        if len({(g.path, g.qualified_name) for g in group}) > 1:
            count("same sentence for different definitions (ambiguous)", f"{q.doc} {q.query!r}")
        elif q is group[0]:
            final.append(q)
        else:
            count("duplicate of an earlier query (same sentence, same target)", f"{q.doc} {q.query!r}")
    final.sort(key=lambda q: (q.doc.split(":")[0], int(q.doc.split(":")[1])))
    return {"parsed": parsed, "directives": sum(e.directives for e in entries),
            "signatures": sum(len(e.names) for e in entries), "dropped": dropped, "examples": examples, "resolved_via": via_counts,
            "kept_before_dedup": len(kept)}, final


# --------------------------------------------------------------------------
# 3. Tree and index


def django_version(src: Path) -> str:
    m = re.search(r"^Version:\s*(\S+)", (src / "PKG-INFO").read_text(), re.M) if (src / "PKG-INFO").exists() else None
    return m.group(1) if m else "?"


def copy_tree(src: Path, dst: Path) -> str:
    """Copy src to dst without its top-level docs/; return a content hash of the copy."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=True, ignore=lambda d, names: ["docs"] if Path(d) == src else [])
    h = hashlib.sha256()
    for p in sorted(dst.rglob("*")):
        if p.is_file() and not p.is_symlink():
            h.update(p.relative_to(dst).as_posix().encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def build_index(a, tree_hash: str) -> tuple[Path, dict]:
    state = a.work / "index.json"
    if a.reuse and state.exists():
        prev = json.loads(state.read_text())
        snap = Path(prev["summary"]["snapshot_dir"])
        if prev.get("tree_hash") == tree_hash and prev.get("embeddings") == a.embeddings and \
                (snap / "manifest.json").exists():
            log(f"reusing snapshot {snap} (built in {prev['wall_seconds']:.1f}s)")
            return snap, {**prev, "reused": True}
        log("--reuse: the earlier snapshot does not match this tree or options; rebuilding")
    cmd = [str(a.indexer), "index", str(a.work / "tree"), "--out", str(a.work / "snapshots"), "--name", "django",
           "--json"]
    if not a.embeddings:
        cmd.append("--no-embeddings")
    elif a.cold:
        cmd += ["--embedding-cache", "none"]
    log(f"indexing: {shlex.join(cmd)}")
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"code-indexer failed (exit {p.returncode}); see its message above")
    summary = json.loads(p.stdout)
    info = {"tree_hash": tree_hash, "embeddings": a.embeddings, "wall_seconds": wall, "summary": summary,
            "command": shlex.join(cmd)}
    state.write_text(json.dumps(info, indent=1))
    log(f"indexed {summary.get('files')} files in {wall:.1f}s -> {summary['snapshot_dir']}")
    return Path(summary["snapshot_dir"]), info


def snapshot_dir(p: Path) -> Path:
    if (p / "manifest.json").exists():
        return p
    if (p / "latest").exists():
        return p / (p / "latest").read_text().strip()
    subs = [d for d in p.iterdir() if d.is_dir()] if p.is_dir() else []
    if len(subs) == 1:
        return snapshot_dir(subs[0])
    raise SystemExit(f"--index {p}: no manifest.json here, nor a `latest` file")


# --------------------------------------------------------------------------
# 4. Searching through MCP


def accepted(q: Query) -> list[dict]:
    return [{"path": q.path, "qualified_name": q.qualified_name, "start_line": q.start_line,
             "end_line": q.end_line}] + q.also


def hit_overlap(r: dict, q: Query) -> bool:
    lo, hi = int(r.get("line", 0)), int(r.get("end_line", r.get("line", 0)))
    return any(r.get("path") == d["path"] and lo <= d["end_line"] and hi >= d["start_line"] for d in accepted(q))


def hit_symbol(r: dict, q: Query) -> bool:
    return any(r.get("path") == d["path"] and r.get("symbol") == d["qualified_name"] for d in accepted(q))


def hit_defline(r: dict, q: Query) -> bool:
    lo, hi = int(r.get("line", 0)), int(r.get("end_line", r.get("line", 0)))
    for d in accepted(q):
        if r.get("path") != d["path"]:
            continue
        if lo <= d["start_line"] <= hi:
            return True
        if (min(hi, d["end_line"]) - max(lo, d["start_line"]) + 1) * 2 >= d["end_line"] - d["start_line"] + 1:
            return True
    return False


RULES = {"overlap": hit_overlap, "symbol": hit_symbol, "defline": hit_defline}


async def run_queries(snap: Path, repo: str, queries: list[Query], a) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    out: dict = {}
    params = StdioServerParameters(command=str(a.server), args=["serve", "--index", str(snap)], env=dict(os.environ))
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tools = [t.name for t in (await s.list_tools()).tools]
            if "search_code" not in tools:
                raise SystemExit(f"{a.server} does not list `search_code` (it lists: {', '.join(tools)})")

            async def call(q: str, mode: str):
                args = {"query": q, "mode": mode, "limit": 10, "repo": repo}
                if a.max_per_file:
                    args["max_per_file"] = a.max_per_file
                t0 = time.perf_counter()
                res = await s.call_tool("search_code", args, read_timeout_seconds=a.timeout)
                dt = time.perf_counter() - t0
                if res.is_error:
                    raise SystemExit(f"search_code failed ({mode}, {q!r}): "
                                     f"{res.content[0].text[:500] if res.content else ''}")
                sc = res.structured_content or {}
                if "results" not in sc:
                    raise SystemExit(f"no `results` in search_code's structured content (keys: {sorted(sc)})")
                return dt, sc

            for mode in a.modes:
                await call("open a file and read it line by line", mode)  # warm-up, untimed
                ranks = {rule: [] for rule in RULES}
                lat, ran_as, top, hit_kinds, same_file = [], {}, [], [], []
                for i, q in enumerate(queries):
                    dt, sc = await call(q.query, mode)
                    lat.append(dt * 1000)
                    results = sc["results"][:10]
                    for rule, fn in RULES.items():
                        ranks[rule].append(next((k + 1 for k, x in enumerate(results) if fn(x, q)), 0))
                    same_file.append(any(x.get("path") in {d["path"] for d in accepted(q)} for x in results))
                    first = next((x for x in results if hit_overlap(x, q)), None)
                    hit_kinds.append(None if first is None else
                                     f"{first.get('kind')}{'' if hit_symbol(first, q) else ' (other symbol)' if first.get('symbol') else ''}")
                    ran = f"{sc.get('mode', '?')}{'' if sc.get('semantic', True) else ' (no vectors)'}"
                    ran_as[ran] = ran_as.get(ran, 0) + 1
                    top.append([f"{x.get('path')}:{x.get('line')}-{x.get('end_line')} {x.get('symbol') or x.get('kind')}"
                                for x in results[:3]])
                    if (i + 1) % 200 == 0:
                        log(f"{mode}: {i + 1}/{len(queries)}")
                out[mode] = {"ranks": ranks, "latency_ms": lat, "ran_as": ran_as, "top3": top, "hit_kinds": hit_kinds,
                             "same_file": same_file}
                if any(k.split()[0] != mode for k in ran_as):
                    log(f"warning: mode {mode} ran as {ran_as}")
    return out


# --------------------------------------------------------------------------
# 5. Report


def summarize(queries: list[Query], res: dict) -> dict:
    out = {}
    for mode, r in res.items():
        rows = {}
        for kind in ("all", "function", "method", "class"):
            idx = [i for i, q in enumerate(queries) if kind == "all" or q.kind == kind]
            if not idx:
                continue
            row = {rule: metrics([r["ranks"][rule][i] for i in idx]) for rule in RULES}
            lat = [r["latency_ms"][i] for i in idx]
            rows[kind] = {"n": len(idx), **row, "p50_ms": pct(lat, 50), "p95_ms": pct(lat, 95)}
        out[mode] = rows
    return out


def report(a, argv, build: dict, queries: list[Query], summary: dict, snap: Path, snapinfo: dict,
           index_info: dict | None, res: dict, documented: set | None = None) -> str:
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "?"
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    by_kind = {k: sum(1 for q in queries if q.kind == k) for k in ("function", "method", "class")}
    by_dir = {}
    for q in queries:
        by_dir[q.directive] = by_dir.get(q.directive, 0) + 1
    lines = [
        "## Retrieval evaluation: human-written queries (Django reference docs) over Django's code",
        "",
        f"{datetime.date.today().isoformat()}, commit {commit}{' (dirty)' if dirty else ''}, {os.cpu_count()} cores. "
        f"Command: `{shlex.join(['python3', 'bench/eval_docs.py', *argv])}`",
        "",
        f"Corpus: Django {build['django_version']} (pinned by ../shared/bench/corpora.sh, Django=={DJANGO_PIN}); "
        "the index holds its code with docstrings and no `docs/` folder. "
        "Query = the first sentence of a `.. function::` / `.. method::` / `.. classmethod::` / `.. staticmethod::` / "
        "`.. class::` / `.. exception::` description in `docs/ref/**/*.txt`; its target is the definition it documents "
        "(module + class context + name, resolved to the snapshot's `symbols` table through imports and base classes). "
        "The set is bench/data/django-docs-queries.jsonl; the method is the docstring of bench/eval_docs.py.",
        "",
        f"Set: {build['directives']} directives ({build['signatures']} signatures) in {build['doc_files']} files "
        f"of docs/ref, parsed into {build['parsed']} descriptions (directives on adjacent lines share one); "
        f"{len(queries)} queries kept ({', '.join(f'{k} {v}' for k, v in by_kind.items())}; by directive: "
        f"{', '.join(f'{k} {v}' for k, v in sorted(by_dir.items()))}); "
        f"resolved {', '.join(f'{k}: {v}' for k, v in sorted(build['resolved_via'].items()))}; "
        f"{sum(1 for q in queries if q.also)} queries accept more than one definition (signature groups like "
        "get/aget, property getter+setter).",
        "",
        f"{build['parsed']} descriptions = {len(queries)} kept + {sum(build['dropped'].values())} dropped; "
        f"{sum(1 for q in queries if q.query.endswith(':'))} kept sentences end with `:` (they introduce a list or an "
        "example, as written).",
        "",
        "| dropped because | count |",
        "|---|---:|",
    ]
    for reason, c in sorted(build["dropped"].items(), key=lambda kv: -kv[1]):
        lines.append(f"| {reason} | {c} |")
    emb = (snapinfo.get("embeddings") or {})
    idx_line = f"Snapshot: `{snap}` ({snapinfo.get('repo')}, id {snapinfo.get('snapshot_id')}), " \
               f"{next((f['rows'] for f in snapinfo.get('files', []) if f['name'] == 'files.parquet'), '?')} files, " \
               f"{next((f['rows'] for f in snapinfo.get('files', []) if f['name'] == 'chunks.parquet'), '?')} chunks, " \
               f"{'vectors: ' + str(emb.get('model')) + ', ' + str(emb.get('count')) if emb else 'no vectors'}."
    stamp = ", ".join(f"{b.name} {datetime.datetime.fromtimestamp(b.stat().st_mtime).strftime('%Y-%m-%d %H:%M')}"
                      for b in (a.indexer, a.server) if b.exists())
    idx_line += f" Binaries (mtime): {stamp}."
    if index_info:
        idx_line += f" Built by `{index_info['command']}` in {index_info['wall_seconds']:.1f}s wall" \
                    f"{' (reused from an earlier run)' if index_info.get('reused') else ''}."
    lines += ["", idx_line, "",
              "Hit rules: **overlap** (headline) = a result in the definition's file whose line range shares a line "
              "with the definition; **symbol** = same file and the result's `symbol` equals the definition's "
              "qualified_name; **def-line** = same file and the result's span contains the def line or covers "
              "half the definition (eval_search.py's rule). search_code arguments: limit 10, "
              f"{f'max_per_file {a.max_per_file}' if a.max_per_file else 'max_per_file and include_tests at their defaults'}.",
              "",
              "| mode | kind | queries | MRR@10 | R@1 | R@10 | symbol MRR@10 | symbol R@10 | def-line MRR@10 | p50 ms | p95 ms |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for mode in a.modes:
        for kind, m in summary.get(mode, {}).items():
            o, s, d = m["overlap"], m["symbol"], m["defline"]
            name = f"**{mode}**" if kind == "all" else mode
            lines.append(f"| {name} | {kind} | {m['n']} | {o['mrr@10']:.3f} | {o['recall@1']:.3f} | "
                         f"{o['recall@10']:.3f} | {s['mrr@10']:.3f} | {s['recall@10']:.3f} | {d['mrr@10']:.3f} | "
                         f"{m['p50_ms']:.1f} | {m['p95_ms']:.1f} |")
    ran = {mode: res[mode]["ran_as"] for mode in a.modes if mode in res}
    lines += ["", "Ran as (the mode the server reports): " +
              "; ".join(f"{m}: {', '.join(f'{k} x{v}' for k, v in r.items())}" for m, r in ran.items()), ""]
    # Headroom: the targets with and without a docstring in the code, and
    # the best of the modes per query.
    run = [m for m in a.modes if m in res]
    if run and documented is not None:
        doc = [(q.path, q.qualified_name) in documented for q in queries]
        n_doc = sum(doc)
        rr = {m: [1 / r if r else 0.0 for r in res[m]["ranks"]["overlap"]] for m in run}
        def avg(m, want):
            xs = [x for x, d in zip(rr[m], doc) if d == want]
            return sum(xs) / len(xs) if xs else float("nan")
        lines += [f"By docstring: {n_doc} targets ({100 * n_doc / len(queries):.0f} %) have a doc in the code "
                  f"(`symbols.doc`), {len(queries) - n_doc} ({100 * (len(queries) - n_doc) / len(queries):.0f} %) "
                  "none. MRR@10 (overlap), with / without: " +
                  "; ".join(f"{m} {avg(m, True):.3f} / {avg(m, False):.3f}" for m in run) + ".", ""]
        if len(run) > 1:
            best = sum(max(rr[m][i] for m in run) for i in range(len(queries))) / len(queries)
            lines += [f"Best of the modes per query ({', '.join(run)}): MRR@10 {best:.3f}.", ""]
    for mode in a.modes:
        if mode not in res:
            continue
        kinds: dict[str, dict[str, int]] = {}
        for q, hk in zip(queries, res[mode]["hit_kinds"]):
            if hk:
                kinds.setdefault(q.kind, {})
                kinds[q.kind][hk] = kinds[q.kind].get(hk, 0) + 1
        miss = [i for i, rk in enumerate(res[mode]["ranks"]["overlap"]) if rk == 0]
        in_file = sum(1 for i in miss if res[mode]["same_file"][i])
        lines += [f"{mode}: {len(miss)} misses (overlap); in {in_file} of them the definition's file is among the "
                  "10 results, but with a chunk that does not overlap the definition.", ""]
        lines += [f"{mode}: the chunk kind of the first overlap hit, per query kind (\"other symbol\": the chunk "
                  "belongs to another definition, e.g. a method query answered by its class's summary): " +
                  "; ".join(f"{k}: " + ", ".join(f"{n} {c}" for n, c in sorted(v.items(), key=lambda kv: -kv[1]))
                            for k, v in sorted(kinds.items())), ""]
    # where misses come from, by doc file (headline rule, first mode)
    if a.modes and a.modes[0] in res:
        mode = a.modes[0]
        ranks = res[mode]["ranks"]["overlap"]
        per: dict[str, list[int]] = {}
        for q, rk in zip(queries, ranks):
            per.setdefault(q.doc.split(":")[0], []).append(rk)
        worst = sorted(((f, rs) for f, rs in per.items() if len(rs) >= 10),
                       key=lambda kv: sum(1 / r for r in kv[1] if r) / len(kv[1]))[:8]
        lines += [f"Doc files with at least 10 queries and the lowest {mode} MRR@10 (overlap):", "",
                  "| doc file | queries | MRR@10 | R@10 |", "|---|---:|---:|---:|"]
        for f, rs in worst:
            mm = metrics(rs)
            lines.append(f"| {f} | {len(rs)} | {mm['mrr@10']:.3f} | {mm['recall@10']:.3f} |")
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", type=Path, default=None,
                    help="corpora dir holding django/ (default $CODE_INDEX_CORPORA, ~/.cache/code-index/corpora, "
                         "/tmp/corpora)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/eval-docs"), help="work directory (tree, snapshots)")
    ap.add_argument("--index", type=Path, default=None,
                    help="evaluate this existing snapshot (of Django without docs/) instead of building one")
    ap.add_argument("--embeddings", action="store_true",
                    help="build the snapshot with vectors (default: --no-embeddings, keyword only)")
    ap.add_argument("--cold", action="store_true",
                    help="with --embeddings: compute every vector (--embedding-cache none), as for a new model")
    ap.add_argument("--reuse", action="store_true", help="reuse the snapshot of an earlier run of the same tree")
    ap.add_argument("--modes", default=None,
                    help="comma-separated, of keyword,semantic,hybrid (default: all three when the snapshot has "
                         "vectors, else keyword)")
    ap.add_argument("--max-per-file", type=int, default=None, help="pass max_per_file to search_code")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per search_code call")
    ap.add_argument("--prepare-only", action="store_true", help="build and write the query set, print samples, stop")
    ap.add_argument("--set-out", type=Path, default=ROOT / "bench" / "data" / "django-docs-queries.jsonl")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "eval-docs-django.md")
    a = ap.parse_args(argv)
    a.work = a.work.resolve()
    a.corpora = a.corpora or corpora_root("django")
    a.indexer = binary("code-indexer", "CODE_INDEXER")
    a.server = binary("code-index-mcp", "CODE_INDEX_MCP")
    if a.modes:
        a.modes = [m.strip() for m in a.modes.split(",") if m.strip()]
        bad = [m for m in a.modes if m not in MODES]
        if bad:
            ap.error(f"--modes: unknown {bad} (choose from {', '.join(MODES)})")
    return a


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    a = parse_args(argv)
    src = a.corpora / "django"
    if not (src / "docs" / "ref").is_dir():
        raise SystemExit(f"Django corpus not found at {src} (fetch it with ../shared/bench/corpora.sh; "
                         "set CODE_INDEX_CORPORA)")
    version = django_version(src)
    if version != DJANGO_PIN:
        log(f"warning: {src} is Django {version}, the pin is {DJANGO_PIN}")
    a.work.mkdir(parents=True, exist_ok=True)

    # 1. docs -> entries
    entries = parse_docs(src / "docs" / "ref")
    doc_files = len({e.doc.split(":")[0] for e in entries})
    log(f"{len(entries)} query directives in {doc_files} files under {src / 'docs' / 'ref'}")

    # 2. snapshot
    index_info = None
    if a.index:
        snap = snapshot_dir(a.index.resolve())
    else:
        for b in (a.indexer,):
            if not b.exists():
                raise SystemExit(f"binary not found: {b} (set CODE_INDEX_BIN / CARGO_TARGET_DIR)")
        log(f"copying {src} without docs/ to {a.work / 'tree'}")
        tree_hash = copy_tree(src, a.work / "tree")
        snap, index_info = build_index(a, tree_hash)
    s = Snapshot(snap)
    in_docs = [p for p in s.paths if p.startswith("docs/")]
    if in_docs:
        raise SystemExit(f"snapshot {snap} holds {len(in_docs)} files under docs/ (e.g. {in_docs[0]}); "
                         "this evaluation needs Django without its docs folder")

    # 3. resolve -> the query set
    build, queries = resolve(entries, s)
    build.update(doc_files=doc_files, django_version=version)
    a.set_out.parent.mkdir(parents=True, exist_ok=True)
    a.set_out.write_text("".join(json.dumps(asdict(q), ensure_ascii=False) + "\n" for q in queries))
    log(f"set: {build['directives']} directives, {build['parsed']} descriptions, {len(queries)} kept, dropped {build['dropped']}; "
        f"resolved via {build['resolved_via']} -> {a.set_out}")
    for reason, ex in build["examples"].items():
        log(f"  dropped ({reason}): {'; '.join(ex)}")
    if a.prepare_only:
        for q in queries[:: max(1, len(queries) // 8)]:
            log(f"    {q.query!r}\n        -> {q.path}:{q.start_line}-{q.end_line} {q.qualified_name} ({q.doc})")
        return 0

    # 4. search
    if not a.server.exists():
        raise SystemExit(f"binary not found: {a.server} (set CODE_INDEX_BIN / CARGO_TARGET_DIR)")
    if a.modes is None:
        a.modes = list(MODES) if s.has_vectors() else ["keyword"]
    if not s.has_vectors() and any(m != "keyword" for m in a.modes):
        raise SystemExit(f"snapshot {snap} has no vectors: {'/'.join(m for m in a.modes if m != 'keyword')} would "
                         "run as keyword (build with --embeddings, or pass --index of a snapshot with vectors)")
    repo = s.manifest.get("repo", "django")
    res = asyncio.run(run_queries(snap, repo, queries, a))
    summary = summarize(queries, res)
    md = report(a, argv, build, queries, summary, snap, s.manifest, index_info, res, s.documented)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(md)
    (a.work / "results.json").write_text(json.dumps({
        "command": shlex.join(["python3", "bench/eval_docs.py", *argv]), "snapshot": str(snap),
        "set": {k: v for k, v in build.items()}, "summary": summary,
        "queries": [dict(asdict(q), ranks={m: {rule: res[m]["ranks"][rule][i] for rule in RULES} for m in res},
                         top3={m: res[m]["top3"][i] for m in res},
                         first_hit_kind={m: res[m]["hit_kinds"][i] for m in res}) for i, q in enumerate(queries)],
    }, indent=1, ensure_ascii=False))
    print(md)
    log(f"written to {a.out}; per-query ranks in {a.work / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
