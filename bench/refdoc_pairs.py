#!/usr/bin/env python3
"""Training pairs from CPython's hand-written reference docs: the first
sentence of a `.. function::` / `.. method::` / `.. class::` directive of
the library reference, and the builder's model input for the definition it
documents (signature + first docstring paragraph, as
builder/src/embeddings/input.rs makes it). The docs are paraphrases of the
code's docstrings, as Django's reference docs are of Django's (the
reference-doc set of eval_docs.py): the pairs teach the model the task that
set measures, on another project. Measured, not kept: bench/results/embed-models.md.

    apt-get download python3.11-doc && dpkg-deb -x python3.11-doc_*.deb DEB
    code-indexer index /usr/lib/python3.11 --out S --name stdlib --no-embeddings --json
    python3 bench/eval_search.py --corpus python --prepare-only --work E
    python3 bench/refdoc_pairs.py --docs DEB/usr/share/doc/python3.11/html/_sources/library \\
        --snapshot S/stdlib/<id> --held E/python/queries.jsonl --out P.jsonl
    $V/bin/python bench/finetune_model.py train --work W --lora 16 --pairs P.jsonl --out D.safetensors

A directive is resolved by importing its module (this interpreter's
standard library, which must be the documented version's: 3.11) and
asking `inspect` for the object's file and line; the definition is the
snapshot's symbol of that name nearest the line. The definitions that the
stripped Python set of eval_search.py asks for (`--held`) are left out, and
so is a sentence that several definitions share.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import re
import sys
import sysconfig
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embed_models import naturalize  # noqa: E402
from eval_search import first_sentence  # noqa: E402

DIRECTIVE = re.compile(r"^(\s*)\.\. (function|method|class|exception|classmethod|staticmethod|decorator|"
                       r"decoratormethod|coroutinefunction|coroutinemethod|abstractmethod)::\s*(.+)$")
MODULE = re.compile(r"^\s*\.\. (?:module|currentmodule)::\s*(\S+)")
ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`(~?)([^`<]*?)(?:\s*<[^>]*>)?`")
# Modules that open windows, print or are not the library proper.
BLOCKED = {"antigravity", "this", "idlelib", "turtledemo", "tkinter", "turtle", "test"}
SIGNATURE_DOC_CHARS = 600


def clean(t: str) -> str:
    """reST inline markup to its text: roles, literals, emphasis."""
    t = ROLE.sub(lambda m: m.group(2).split(".")[-1] if m.group(1) else m.group(2), t)
    t = re.sub(r"``([^`]*)``", r"\1", t)
    t = re.sub(r"\*\*([^*]*)\*\*", r"\1", t)
    t = re.sub(r"\*([^*]*)\*", r"\1", t)
    t = re.sub(r"`([^`]*)`_?", r"\1", t)
    return " ".join(t.split())


def indent(s: str) -> int:
    return len(s) - len(s.lstrip())


def directives(docs: Path) -> list[dict]:
    """(module, qualified name, first sentence) of every directive with a body."""
    out = []
    for f in sorted(docs.glob("*.rst.txt")):
        lines = f.read_text(errors="replace").splitlines()
        mod, classes = None, []
        for i, ln in enumerate(lines):
            m = MODULE.match(ln)
            if m:
                mod, classes = m.group(1), []
                continue
            d = DIRECTIVE.match(ln)
            if not d:
                continue
            ind, kind, sig = len(d.group(1)), d.group(2), d.group(3)
            classes = [c for c in classes if c[0] < ind]
            name = re.split(r"[(\s]", sig.strip(), maxsplit=1)[0]
            j, cur = i + 1, ln
            while cur.rstrip().endswith("\\") and j < len(lines):  # a signature continued
                cur, j = lines[j], j + 1
            # Options, blank lines and sibling signatures, then the first paragraph.
            while j < len(lines) and (not lines[j].strip()
                                      or (lines[j].strip().startswith(":") and indent(lines[j]) > ind)
                                      or (DIRECTIVE.match(lines[j]) and indent(lines[j]) == ind)):
                j += 1
            para = []
            while j < len(lines) and lines[j].strip() and indent(lines[j]) > ind:
                if lines[j].strip().startswith(".. "):
                    break
                para.append(lines[j].strip())
                j += 1
            if kind in ("class", "exception"):
                classes.append((ind, name.split(".")[-1]))
            qual = name
            if kind not in ("class", "exception") and classes and "." not in name:
                qual = classes[-1][1] + "." + name
            if not (para and mod):
                continue
            s = first_sentence(clean(" ".join(para)))
            if len(s.split()) >= 4 and "=" not in s[:40] and not s.startswith("["):
                out.append({"module": mod, "qual": qual, "query": s, "doc": f.name})
    return out


def resolve(e: dict) -> tuple[str, str, int] | None:
    """(file relative to the standard library, name, first line) of a directive's object."""
    if e["module"].split(".")[0] in BLOCKED:
        return None
    std = sysconfig.get_paths()["stdlib"]
    try:
        obj = importlib.import_module(e["module"])
        parts = e["qual"].split(".")
        if len(parts) > 1 and parts[0] == e["module"].split(".")[-1] and not hasattr(obj, parts[0]):
            parts = parts[1:]
        for p in parts:
            obj = getattr(obj, p)
        obj = inspect.unwrap(obj)
        if isinstance(obj, (classmethod, staticmethod)):
            obj = obj.__func__
        fn = inspect.getsourcefile(obj)
        line = inspect.getsourcelines(obj)[1]
    except Exception:  # noqa: BLE001  (C functions, attributes, modules that do not import here)
        return None
    if not fn or not fn.startswith(std + "/"):
        return None
    return fn[len(std) + 1:], parts[-1], line


def cut(s: str, n: int) -> str:
    b = s.encode()
    if len(b) <= n:
        return s
    while n > 0 and (b[n] & 0xC0) == 0x80:
        n -= 1
    return b[:n].decode()


def model_input(sym: dict, body: str | None) -> str:
    """input.rs `signature_text` (or `type_text` for a class without a doc), naturalized."""
    sig, cont, doc = (sym["signature"] or "").strip(), sym["container"], (sym["doc"] or "").strip()
    if sym["kind"] == "class" and not doc:
        s = cut((cont + ": " if cont else "") + (body or sig), 400)
    else:
        s = (cont + ": " if cont and cont not in sig else "") + sig
        if doc:
            s += "\n" + cut(doc.split("\n\n")[0], SIGNATURE_DOC_CHARS)
    return naturalize(s)


def main() -> None:
    import pyarrow.parquet as pq

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=Path, required=True, help="the library reference's reST sources")
    ap.add_argument("--snapshot", type=Path, required=True, help="code-indexer snapshot of /usr/lib/python3.11")
    ap.add_argument("--held", type=Path, required=True, help="eval_search.py's python queries.jsonl")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--group", default="cpython-docs")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    held = set()
    for x in a.held.read_text().splitlines():
        q = json.loads(x)
        held.add((q["path"], q["name"].split(".")[-1]))
    syms = pq.read_table(a.snapshot / "symbols.parquet").to_pylist()
    by: dict[tuple[str, str], list[dict]] = {}
    for s in syms:
        by.setdefault((s["path"], s["name"]), []).append(s)
    files = {r["path"]: r["content"] for r in pq.read_table(a.snapshot / "files.parquet", columns=["path", "content"]).to_pylist()}
    entries = directives(a.docs)
    out, skipped = [], {}
    for e in entries:
        r = resolve(e)
        why = None
        if r is None:
            why = "unresolved"
        elif (r[0], r[1]) in held:
            why = "an eval_search.py target"
        else:
            near = [s for s in by.get((r[0], r[1]), []) if abs(s["start_line"] - r[2]) <= 30]
            if not near:
                why = "no symbol"
        if why:
            skipped[why] = skipped.get(why, 0) + 1
            continue
        s = min(near, key=lambda s: abs(s["start_line"] - r[2]))
        content = files.get(r[0])
        body = content[s["start_byte"]:s["end_byte"]] if content else None
        out.append({"group": a.group, "query": e["query"], "positive": model_input(s, body),
                    "path": r[0], "line": s["start_line"], "doc": e["doc"]})
    count: dict[str, int] = {}
    for o in out:
        count[o["query"].lower()] = count.get(o["query"].lower(), 0) + 1
    one: dict[tuple[str, int], dict] = {}
    for o in out:
        if count[o["query"].lower()] == 1:
            one.setdefault((o["path"], o["line"]), o)
    a.out.write_text("".join(json.dumps(o) + "\n" for o in one.values()))
    print(f"{len(entries)} directives with a sentence; {len(one)} pairs written to {a.out}; skipped {skipped}")


if __name__ == "__main__":
    main()
