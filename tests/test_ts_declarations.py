"""TypeScript definitions against the TypeScript compiler's parser.

`tests/ts/declarations.mjs` lists, with `typescript` 5.9.3's own parser (pinned
by tests/ts/package-lock.json, installed by scripts/setup.sh beside the MCP
SDK), every file's functions and methods with a body, classes, interfaces,
type aliases, enums, namespaces and top-level variables, and every named
declaration of any kind. On the pinned ts-effect (effect 3.10.0) and ts-rxjs:

- recall: each compiler definition must be a symbol of ours with the same
  path, name and line (its `name_line` or `start_line`);
- precision: each symbol of ours must name a declaration the compiler finds
  at that line (error recovery invents `switch` methods and `case`
  properties);
- effect's core combinators (`dual`, `pipe` in Function.ts), which the pinned
  grammar lost before feature 23, are symbols and their calls resolve there.

Judgments: `tsc` reports no syntax error in either corpus (asserted), so a
definition the grammar loses is ours to find. `declare global` (a namespace
named `global`) and ambient `declare const` lines are counted like the rest.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.corpus

TS_DIR = Path(__file__).resolve().parent / "ts"
MIN_RECALL = 0.99
MAX_FOREIGN = 0.002


def ts_client_dir() -> Path:
    home = Path(os.environ.get("CODE_INDEX_HOME") or Path.home() / ".cache" / "code-index")
    return home / "ts-client"


def compiler_declarations(root: Path) -> dict:
    client = ts_client_dir()
    if not (client / "node_modules" / "typescript" / "package.json").is_file():
        pytest.fail(f"the TypeScript compiler is not installed in {client}: run scripts/setup.sh --deps-only",
                    pytrace=False)
    p = subprocess.run(["node", str(TS_DIR / "declarations.mjs"), str(root)], capture_output=True, text=True,
                       timeout=600, cwd=client)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def compare(snap, decls: dict):
    rows = snap.read("symbols", ["path", "name", "kind", "start_line", "name_line"]).to_pylist()
    lines = collections.defaultdict(set)
    for r in rows:
        lines[(r["path"], r["name"])].update((r["start_line"], r["name_line"]))
    total, found, missed = collections.Counter(), collections.Counter(), []
    for path, v in decls.items():
        for kind, name, line in v["defs"]:
            total[kind] += 1
            if line in lines.get((path, name), ()):
                found[kind] += 1
            else:
                missed.append((path, kind, name, line))
    named = collections.defaultdict(set)
    for path, v in decls.items():
        named[path].update((n, ln) for n, ln in v["names"])
    ts_rows = [r for r in rows if r["path"] in decls]
    foreign = [r for r in ts_rows
               if (r["name"], r["name_line"]) not in named[r["path"]] and (r["name"], r["start_line"]) not in named[r["path"]]]
    return total, found, missed, foreign, len(ts_rows)


@pytest.mark.parametrize("corpus", ["ts-effect", "ts-rxjs"])
def test_typescript_definitions_match_the_compiler(snapshots, corpora, corpus):
    decls = compiler_declarations(corpora / corpus)
    assert len(decls) > 200, f"{corpus}: {len(decls)} files"
    assert sum(v["errors"] for v in decls.values()) == 0, "tsc finds syntax errors: the corpus is not what it was"
    snap = snapshots(corpus)
    total, found, missed, foreign, n = compare(snap, decls)
    recall = sum(found.values()) / sum(total.values())
    by_kind = {k: f"{found[k]}/{total[k]}" for k in total}
    print(f"{corpus}: recall {recall:.4f} {by_kind}; symbols not declared at their line {len(foreign)}/{n}")
    assert recall >= MIN_RECALL, f"{corpus}: recall {recall:.4f} {by_kind}; missed e.g. {missed[:15]}"
    for kind in ("class", "interface", "type", "function", "method"):
        if total[kind] >= 20:
            assert found[kind] / total[kind] >= 0.98, f"{corpus} {kind}: {found[kind]}/{total[kind]}: {[m for m in missed if m[1] == kind][:10]}"
    assert len(foreign) <= MAX_FOREIGN * n, f"{corpus}: {len(foreign)} of {n} symbols name no declaration: {foreign[:15]}"


def test_effect_core_combinators_are_defined_and_called(snapshots):
    snap = snapshots("ts-effect")
    syms = snap.read("symbols", ["path", "name", "kind"]).to_pylist()
    fn = {(r["name"], r["kind"]) for r in syms if r["path"] == "Function.ts"}
    # `export const dual: {…} = function (arity, body) {…}` is a function.
    assert ("dual", "function") in fn and ("pipe", "function") in fn, sorted(fn)[:40]
    # Error recovery's inventions in that file are gone.
    assert not {n for n, _ in fn} & {"switch", "case", "return", "function"}
    edges = snap.read("edges", ["kind", "src_path", "dst_name", "dst_path"]).to_pylist()
    # Every module of effect builds its data-last API with `dual(...)` and
    # composes with `pipe(...)`.
    for name in ("dual", "pipe"):
        calls = [e for e in edges if e["kind"] == "calls" and e["dst_name"] == name]
        into = sum(e["dst_path"] == "Function.ts" for e in calls)
        assert len(calls) > 1000 and into >= 0.95 * len(calls), f"{into} of {len(calls)} {name}() calls resolve to Function.ts"
