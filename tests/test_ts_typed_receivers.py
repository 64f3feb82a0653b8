"""A JavaScript/TypeScript call `x.m()` through a local name whose binding
shows a type (a parameter's annotation `c: Circle`, `d: Drawer | undefined`,
`n: S.Circle<T>`; a declarator's `const k = new Circle()`, `x as Circle`)
resolves to the member `m` of that class or interface, or of its nearest
base; a type the repository does not define (`Map`, `Promise`) leaves the call
unresolved, where the rules by name took a method of the calling file
(feature 24). A bare call `f()` of a parameter or local resolves only to a
function defined in the caller or around it, closures see the typed
bindings around them, and an interface merged with a function of its name
is no call's target (feature 25). `this.x.m()` resolves in the type the class
gives field `x`; a name imported from a barrel is found in the files it
re-exports; a callback outside any function binds typed names (feature 26).
A callback's untyped parameter takes the type the called function's signature
or the call's type arguments give it; `self` is a name like any other
(feature 27). A receiver that is an expression is typed by declared return
types and fields (feature 28).
Checked on a small tree whose every edge is known (with decoys
the rules by name pick), and on rxjs against the TypeScript compiler's type
checker (bench/call_oracles/ts_checker/calls.mjs, `typescript` 5.9.3), and
on two held-out packages (mobx, @tanstack/query-core) against the same oracle."""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from helpers import build
from test_go_calls import calls

ORACLE = Path(__file__).resolve().parents[1] / "bench" / "call_oracles" / "ts_checker" / "calls.mjs"

FILES = {
    "shapes.ts": """export class Base {
  area(): number { return 0 }
}

export class Circle extends Base {
  radius(): number { return 1 }
}

export interface Drawer {
  draw(): void
}
""",
    "main.ts": """import { Circle, Drawer } from "./shapes.js"
import * as S from "./shapes.js"

// Decoys: what the rules by name take for a receiver whose type does not show.
class Decoy {
  area(): number { return 2 }
  radius(): number { return 3 }
  draw(): void {}
  get(k: string): number { return 4 }
  then(): void {}
}

export function typed(c: Circle, d: Drawer | undefined, m: Map<string, number>, n: S.Circle, p: Promise<number>) {
  c.radius()
  c.area()
  d.draw()
  m.get("x")
  n.radius()
  p.then()
}

export function locals(x: unknown) {
  const k = new Circle()
  k.radius()
  const j = x as Circle
  j.area()
  const u = make()
  u.radius()
}

function make(): any { return new Decoy() }
""",
    # Feature 25: a name the function binds hides a function of that name.
    "locals.ts": """import { Circle } from "./shapes.js"

export interface Label { text: string }
export function Label(text: string): Label { return { text } }
function loop(n: number): number { return n }

export function run(task: () => void, c: Circle) {
  task()
  const again = () => {
    task()
    c.radius()
  }
  const loop = (n: number): number => (n > 0 ? loop(n - 1) : 0)
  loop(3)
  again()
  Label("x")
}

export function task(): void {}
export function context(): void {}
export function helper(): void {}

export function leaks(f: (context: number) => void, xs: number[]) {
  context()
  xs.forEach((helper) => helper())
  helper()
}

class R {
  run(): void {}
  go(run: () => void): void { run() }
}
""",
}


def test_ts_typed_receivers_resolve_in_their_type(indexer, tmp_path):
    repo = tmp_path / "repo"
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    snap = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    got = {(r[1], r[2], r[5], r[6]) for r in calls(snap.dir, "e.src_path = 'main.ts'")}
    con = duckdb.connect()
    types = dict(con.execute(
        f"SELECT dst_name || '@' || line, receiver_type FROM read_parquet('{snap.dir}/edges.parquet') "
        "WHERE kind = 'calls' AND src_path = 'main.ts'").fetchall())
    expected = {
        ("typed", "c.radius", "shapes.ts", "Circle.radius"),
        ("typed", "c.area", "shapes.ts", "Base.area"),  # inherited: the nearest base's
        ("typed", "d.draw", "shapes.ts", "Drawer.draw"),  # `Drawer | undefined`: the interface's
        ("typed", "m.get", None, None),  # Map is not the repository's: not Decoy.get
        ("typed", "n.radius", "shapes.ts", "Circle.radius"),  # through the namespace import
        ("typed", "p.then", None, None),  # Promise
        ("locals", "k.radius", "shapes.ts", "Circle.radius"),  # new Circle()
        ("locals", "j.area", "shapes.ts", "Base.area"),  # x as Circle
        ("locals", "u.radius", "main.ts", "Decoy.radius"),  # no type shows: the rules by name
    }
    assert expected <= got, sorted(got)
    assert types["c.radius@14"] == "Circle" and types["n.radius@18"] == "S.Circle"
    assert types["d.draw@16"] == "Drawer" and types["m.get@17"] == "Map"
    assert types["k.radius@24"] == "Circle()" and types["j.area@26"] == "Circle"
    assert types["u.radius@28"] == "=make()"  # a call's result (feature 29), `any`: the rules by name

    # Feature 25: a parameter's call is no function's, even in a closure;
    # a local function's call is its own; a closure sees the typed parameter;
    # an interface merged with a function is no call's target.
    got = {(r[1], r[2], r[3], r[5], r[6]) for r in calls(snap.dir, "e.src_path = 'locals.ts'")}
    expected = {
        ("run", "task", 8, None, None),  # the parameter, not `export function task`
        ("run.again", "task", 10, None, None),  # the same, from a closure
        ("run.again", "c.radius", 11, "shapes.ts", "Circle.radius"),
        ("run", "loop", 14, "locals.ts", "run.loop"),  # the local, not the module's `loop` above
        ("run", "again", 15, "locals.ts", "run.again"),
        ("run", "Label", 16, "locals.ts", "Label"),
        # A function type's parameter binds nothing; a callback's binds for its body only.
        ("leaks", "context", 24, "locals.ts", "context"),
        ("leaks", "helper", 25, None, None),
        ("leaks", "helper", 26, "locals.ts", "helper"),
        ("R.go", "run", 31, None, None),  # the parameter, not the method R.run
    }
    assert expected <= got, sorted(got)
    local = dict(con.execute(
        f"SELECT dst_name || '@' || line, receiver_type FROM read_parquet('{snap.dir}/edges.parquet') "
        "WHERE kind = 'calls' AND src_path = 'locals.ts'").fetchall())
    assert local["task@8"] == "local" and local["task@10"] == "local" and local["loop@14"] == "local"
    assert local["c.radius@11"] == "Circle"  # a closure sees the typed parameter around it
    assert local["helper@26"] is None and local["context@24"] is None
    label = con.execute(
        f"SELECT s.kind FROM read_parquet('{snap.dir}/edges.parquet') e JOIN read_parquet('{snap.dir}/symbols.parquet') s "
        "ON s.symbol_id = e.dst_symbol_id WHERE e.src_path = 'locals.ts' AND e.dst_name = 'Label' AND e.kind = 'calls'").fetchall()
    assert label == [("function",)], label


FIELDS = {
    "shapes.ts": FILES["shapes.ts"],
    "holder.ts": """import { Circle, Drawer } from "./shapes.js"

class Decoy {
  radius(): number { return 5 }
  area(): number { return 6 }
  draw(): void {}
  get(k: string): number { return 7 }
  query(): void {}
}

export class Holder {
  private c: Circle
  d?: Drawer
  #k = new Circle()
  m: Map<string, number> = new Map()
  static s: Decoy
  u: any
  v = new Circle()
  protected w: Circle | undefined
  constructor(private readonly p: Circle, q: Circle, other: Decoy, public y = new Circle()) {
    this.c = q
    this.w = new Circle()
    this.v = other
  }
  run(): void {
    this.c.radius()
    this.d.draw()
    this.#k.area()
    this.m.get("x")
    this.p.radius()
    this.u.query()
    this.v.area()
    [1].forEach(() => this.c.area())
  }
  z: Drawer
  more(other: Decoy): void {
    this.z = other as any
    this.z.draw()
    this.y.radius()
  }
}
""",
    "sub.ts": """import { Holder } from "./holder.js"

class Near {
  radius(): number { return 8 }
}

export class Sub extends Holder {
  go(): void {
    this.w.radius()
  }
}
""",
}


def test_ts_fields_type_calls_through_this(indexer, tmp_path):
    """Feature 26: `this.x.m()` resolves in the type the class gives field
    `x`: a declaration's annotation or `new Foo()`, a constructor's parameter
    property, `this.x = …` in a method (a typed parameter, `new Foo()`); a
    field given two types, or `any`, leaves the rules by name to decide; a
    subclass's call reads the field of its nearest base, in the base's file."""
    repo = tmp_path / "repo"
    for rel, text in FIELDS.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    snap = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    got = {(r[1], r[2], r[3], r[5], r[6]) for r in calls(snap.dir, "e.src_path IN ('holder.ts', 'sub.ts')")}
    expected = {
        ("Holder.run", "this.c.radius", 26, "shapes.ts", "Circle.radius"),  # annotation; `this.c = q`, q: Circle
        ("Holder.run", "this.d.draw", 27, "shapes.ts", "Drawer.draw"),  # an optional field, an interface
        ("Holder.run", "this.#k.area", 28, "shapes.ts", "Base.area"),  # `#k = new Circle()`, Circle's base
        ("Holder.run", "this.m.get", 29, None, None),  # Map: not Decoy.get
        ("Holder.run", "this.p.radius", 30, "shapes.ts", "Circle.radius"),  # a parameter property
        ("Holder.run", "this.u.query", 31, "holder.ts", "Decoy.query"),  # any: the rules by name
        ("Holder.run", "this.v.area", 32, "holder.ts", "Decoy.area"),  # Circle and Decoy: the rules by name
        ("Holder.run", "this.c.area", 33, "shapes.ts", "Base.area"),  # a callback's `this` is the method's
        ("Holder.more", "this.z.draw", 38, "shapes.ts", "Drawer.draw"),  # the declared type, whatever is assigned
        ("Holder.more", "this.y.radius", 39, "shapes.ts", "Circle.radius"),  # a parameter property's default
        ("Sub.go", "this.w.radius", 9, "shapes.ts", "Circle.radius"),  # the base's field, read in its file
    }
    assert expected <= got, sorted(got)
    con = duckdb.connect()
    types = dict(con.execute(
        f"SELECT dst_name || '@' || line, receiver_type FROM read_parquet('{snap.dir}/edges.parquet') "
        "WHERE kind = 'calls' AND src_path IN ('holder.ts', 'sub.ts')").fetchall())
    assert types["this.c.radius@26"] == "Circle" and types["this.#k.area@28"] == "Circle()"
    assert types["this.p.radius@30"] == "Circle" and types["this.u.query@31"] is None
    assert types["this.v.area@32"] is None and types["this.w.radius@9"] is None
    attrs = {r[0]: r[1:] for r in con.execute(
        f"SELECT e.dst_name, e.receiver_type, e.dst_path, s.qualified_name FROM read_parquet('{snap.dir}/edges.parquet') e "
        f"LEFT JOIN read_parquet('{snap.dir}/symbols.parquet') s ON s.symbol_id = e.dst_symbol_id "
        "WHERE e.kind = 'attribute' AND e.src_symbol = 'Holder'").fetchall()}
    # One `attribute` edge per field the class gives a type or a value; a static field is no instance's.
    assert set(attrs) == {"c", "d", "#k", "m", "u", "v", "w", "p", "y", "z"}, attrs
    assert attrs["d"] == ("Drawer", "shapes.ts", "Drawer") and attrs["p"] == ("Circle", "shapes.ts", "Circle")
    assert attrs["m"] == ("Map", None, None) and attrs["u"] == (None, None, None)


BARREL = {
    "shapes.ts": FILES["shapes.ts"],
    "lib/errors.ts": "export function die(): never { throw new Error() }\n",
    "lib/internal.ts": 'export * from "./errors"\nexport * from "../shapes"\n',
    "index.ts": 'export * from "./lib/internal"\n',
    "other/errors.ts": "export function die(): void {}\n",
    # A UMD library: everything inside a factory callback.
    "umd.js": """(function (global, factory) { factory(global) })(this, function (window) {
  var isWindow = function isWindow(obj) { return obj === window }
  function isArrayLike(obj) { return isWindow(obj) }
  [1].forEach(function () { var loop = function (i) { return i ? loop(i - 1) : 0 }; });
  [2].forEach(function () { var loop = function (i) { return i ? loop(i - 2) : 0 }; });
})
""",
    "tests/t.test.ts": """import { die, Circle } from ".."

class Decoy { radius(): number { return 9 } }
function describe(name: string, f: () => void) { f() }

describe("x", () => {
  let c: Circle
  c = new Circle()
  die()
  c.radius()
})
""",
}


def test_ts_barrels_and_top_level_callbacks(indexer, tmp_path):
    """Feature 26: a name imported from a barrel (`index.ts`, `internal.ts`:
    `export * from` only) is found in the files it re-exports, transitively;
    `..` names the index of the directory above; a callback outside any
    function (a test's `describe`) binds typed names for its calls."""
    repo = tmp_path / "repo"
    for rel, text in BARREL.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    snap = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    got = {(r[2], r[3], r[5], r[6]) for r in calls(snap.dir, "e.src_path = 'tests/t.test.ts'")}
    expected = {
        ("die", 9, "lib/errors.ts", "die"),  # index.ts -> lib/internal.ts -> lib/errors.ts, not other/errors.ts
        ("c.radius", 10, "shapes.ts", "Circle.radius"),  # `let c: Circle` in the callback, not Decoy.radius
    }
    assert expected <= got, sorted(got)
    con = duckdb.connect()
    rows = dict(con.execute(
        f"SELECT dst_name, receiver_type FROM read_parquet('{snap.dir}/edges.parquet') "
        "WHERE kind = 'calls' AND src_path = 'tests/t.test.ts' AND line IN (9, 10)").fetchall())
    assert rows == {"die": None, "c.radius": "Circle"}, rows
    imports = con.execute(
        f"SELECT dst_path FROM read_parquet('{snap.dir}/edges.parquet') "
        "WHERE kind = 'imports' AND src_path = 'tests/t.test.ts'").fetchall()
    assert imports == [("index.ts",)], imports
    # A name a callback outside any function binds, called from a function
    # inside it: the one function of that name the file defines; of a name
    # defined twice, nothing (the two `loop`s share a name, not a scope).
    got = {(r[1], r[2], r[3], r[6]) for r in calls(snap.dir, "e.src_path = 'umd.js'")}
    assert ("isArrayLike", "isWindow", 3, "isWindow") in got, got
    assert ("loop", "loop", 4, None) in got and ("loop", "loop", 5, None) in got, got


CONTEXT = {
    "shapes.ts": FILES["shapes.ts"],
    "ops.ts": """import { Circle, Drawer } from "./shapes.js"

export function operate(init: (source: Circle, sink: Drawer | undefined) => void): void {}
export function each<T>(xs: T[], f: (x: T) => void): void {}
export function dual<A, B>(arity: number, body: B): A & B { return body as any }
""",
    "main.ts": """import { Circle } from "./shapes.js"
import { operate, each, dual } from "./ops.js"

class Decoy {
  radius(): number { return 2 }
  area(): number { return 3 }
  draw(): void {}
}

export const size = (self: Circle) => self.radius()
export const grow = dual<
  (n: number) => (self: Circle) => number,
  (self: Circle, n: number) => number
>(2, (self, n) => self.area())

export function run(cs: Circle[]): void {
  operate((source, sink) => {
    source.radius()
    sink.draw()
  })
  operate(source => source.area())
  each(cs, (x) => x.radius())
}

export function shadow(operate: (f: (s: Decoy) => void) => void): void {
  operate((source) => source.radius())
}

export function written(): void {
  operate((source: any) => source.area())
}
""",
}


def test_ts_callback_parameters_take_their_types_from_context(indexer, tmp_path):
    """Feature 27: a callback's untyped parameter takes the type the called
    function's signature gives it (`operate((source, sink) => …)` with
    `init: (source: Circle, sink: Drawer) => void`), or the type arguments of
    the call (`dual<…, (self: Circle, n: number) => number>(2, (self, n) =>
    …)`, effect's style); a parameter named `self` is a name like any other;
    a generic's parameter (`each<T>`) leaves the rules by name to decide."""
    repo = tmp_path / "repo"
    for rel, text in CONTEXT.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    snap = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    got = {(r[2], r[3], r[5], r[6]) for r in calls(snap.dir, "e.src_path = 'main.ts'")}
    expected = {
        ("self.radius", 10, "shapes.ts", "Circle.radius"),  # `self: Circle`, not Decoy's
        ("self.area", 14, "shapes.ts", "Base.area"),  # dual's type argument types `self`
        ("source.radius", 18, "shapes.ts", "Circle.radius"),  # operate's signature types the callback
        ("sink.draw", 19, "shapes.ts", "Drawer.draw"),  # `Drawer | undefined`
        ("source.area", 21, "shapes.ts", "Base.area"),  # `source => …`
        ("x.radius", 22, "main.ts", "Decoy.radius"),  # a generic's: the rules by name
        ("source.radius", 26, "main.ts", "Decoy.radius"),  # the parameter `operate`, not ops.ts's
        ("source.area", 30, "main.ts", "Decoy.area"),  # `any` as written: the rules by name
    }
    assert expected <= got, sorted(got)
    con = duckdb.connect()
    types = dict(con.execute(
        f"SELECT dst_name || '@' || line, receiver_type FROM read_parquet('{snap.dir}/edges.parquet') "
        "WHERE kind = 'calls' AND src_path = 'main.ts'").fetchall())
    assert types["self.radius@10"] == "Circle" and types["self.area@14"] == "Circle"
    assert types["source.radius@18"] == "operate(#0).#0" and types["sink.draw@19"] == "operate(#0).#1"
    assert types["x.radius@22"] == "each(#1).#0"
    assert types["source.radius@26"] is None and types["source.area@30"] is None


CHAINS = {
    "shapes.ts": FILES["shapes.ts"],
    "cache.ts": """import { Circle } from "./shapes.js"

export class Cache {
  find(): Circle { return new Circle() }
  self(): this { return this }
}

export class Client {
  #cache: Cache = new Cache()
  getCache(): Cache { return this.#cache }
  count(): number { return 0 }
  run(): void {
    this.getCache().find()
    this.#cache.self().find()
  }
}

export function makeClient(): Client { return new Client() }
export function anything<T>(x: T): T { return x }
""",
    "main.ts": """import { Client, makeClient, anything } from "./cache.js"

class Decoy {
  find(): void {}
  radius(): number { return 1 }
  getCache(): Decoy { return this }
}

export function use(client: Client): void {
  client.getCache().find()
  makeClient().getCache().find().radius()
  anything(client).getCache()
  client.count()
}

export function bound(client: Client): void {
  const cache = client.getCache()
  cache.find()
  const other = makeClient()
  other.getCache()
  const any = anything(client)
  any.getCache()
}
""",
}


def test_ts_receiver_expressions_typed_by_declared_return_types(indexer, tmp_path):
    """Feature 28: a receiver that is an expression is typed segment by
    segment: a typed local's method result (`client.getCache().find()`), a
    function's result (`makeClient().getCache()`), a field of `this`, a
    method returning `this`; a local bound to a call's result (`const cache =
    client.getCache()`, feature 29); a generic's result (`anything<T>(x): T`)
    leaves the rules by name to decide."""
    repo = tmp_path / "repo"
    for rel, text in CHAINS.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    snap = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    got = {(r[1], r[2], r[3], r[5], r[6]) for r in calls(snap.dir, "e.src_path IN ('main.ts', 'cache.ts')")}
    expected = {
        ("use", "client.getCache().find", 10, "cache.ts", "Cache.find"),  # not Decoy.find
        ("use", "makeClient().getCache().find", 11, "cache.ts", "Cache.find"),
        ("use", "makeClient().getCache().find().radius", 11, "shapes.ts", "Circle.radius"),
        ("use", "anything(client).getCache", 12, "main.ts", "Decoy.getCache"),  # T: the rules by name
        ("Client.run", "this.getCache().find", 13, "cache.ts", "Cache.find"),
        ("Client.run", "this.#cache.self().find", 14, "cache.ts", "Cache.find"),  # `: this`
        ("bound", "cache.find", 18, "cache.ts", "Cache.find"),  # `const cache = client.getCache()`
        ("bound", "other.getCache", 20, "cache.ts", "Client.getCache"),  # `const other = makeClient()`
        ("bound", "any.getCache", 22, "main.ts", "Decoy.getCache"),  # a generic's result: the rules by name
    }
    assert expected <= got, sorted(got)
    con = duckdb.connect()
    types = dict(con.execute(
        f"SELECT dst_name || '@' || line, receiver_type FROM read_parquet('{snap.dir}/edges.parquet') "
        "WHERE kind = 'calls' AND src_path = 'main.ts'").fetchall())
    assert types["client.getCache().find@10"] == "<Client>" and types["client.count@13"] == "Client"
    assert types["makeClient().getCache().find@11"] is None
    assert types["cache.find@18"] == "=<Client>client.getCache()" and types["other.getCache@20"] == "=makeClient()"


def ts_client() -> Path:
    """Where scripts/setup.sh installs the pinned npm packages of tests/ts."""
    return Path(os.environ.get("CODE_INDEX_HOME") or Path.home() / ".cache" / "code-index") / "ts-client"


def checker_calls(root: Path, tmp_path: Path) -> Path:
    client = ts_client()
    if not (client / "node_modules" / "typescript" / "package.json").is_file():
        pytest.fail(f"the TypeScript compiler is not installed in {client}: run scripts/setup.sh --deps-only",
                    pytrace=False)
    out = tmp_path / "calls.tsv"
    with out.open("w") as fh:
        p = subprocess.run(["node", str(ORACLE), str(root)], stdout=fh, stderr=subprocess.PIPE, text=True,
                           timeout=900, cwd=client)
    assert p.returncode == 0, p.stderr[-3000:]
    return out


@pytest.mark.corpus
def test_rxjs_typed_calls_agree_with_the_type_checker(snapshots, corpora, tmp_path):
    snap = snapshots("ts-rxjs")
    tsv = checker_calls(corpora / "ts-rxjs", tmp_path)
    con = duckdb.connect()
    rows = con.execute(
        f"""SELECT e.src_path, e.line, e.dst_name, e.receiver_type, e.dst_path, s.name_line
            FROM read_parquet('{snap.dir}/edges.parquet') e
            LEFT JOIN read_parquet('{snap.dir}/symbols.parquet') s ON s.symbol_id = e.dst_symbol_id
            WHERE e.kind = 'calls' AND e.dst_name LIKE '%.%' AND e.dst_name NOT LIKE 'this.%'""").fetchall()
    ours = collections.defaultdict(list)
    for r in rows:
        ours[(r[0], r[1], r[2].rsplit(".", 1)[1])].append(r)
    verdicts = collections.Counter()
    for line in tsv.read_text().splitlines():
        f = line.split("\t")
        if len(f) != 7 or f[3] != "member":
            continue
        src, ln, written, _, tpath, tline, _ = f
        cand = ours.get((src, int(ln), written.rsplit(".", 1)[1]), [])
        if len(cand) != 1:
            continue
        _, _, _, rtype, dpath, dline = cand[0]
        typed = "typed" if rtype else "untyped"
        if tpath == "?":
            continue
        if tpath == "-":
            verdicts[(typed, "outside: resolved here" if dpath else "outside: unresolved")] += 1
        elif not dpath:
            verdicts[(typed, "unresolved")] += 1
        elif dpath == tpath and str(dline) == tline:
            verdicts[(typed, "right")] += 1
        else:
            verdicts[(typed, "elsewhere")] += 1
    print(dict(verdicts))
    right, elsewhere = verdicts[("typed", "right")], verdicts[("typed", "elsewhere")]
    wrong_out = verdicts[("typed", "outside: resolved here")]
    # Stop 63 typed no JS/TS receiver. Features 24-25 measured 152 member
    # calls through typed bindings where the checker puts them, none elsewhere
    # and none into the repository for a type outside it (43 left unresolved).
    # Feature 27 (a callback's parameters typed by the called function's
    # signature, `operate((source, subscriber) => …)`): 325 right, none elsewhere.
    assert right >= 300, verdicts
    assert elsewhere + wrong_out <= 0.03 * (right + elsewhere + wrong_out), verdicts
    # Member calls into lib.d.ts / DOM types (`map.get`, `xhr.addEventListener`)
    # resolved to a method of the repository: stop 63 resolved 26.
    wrong_all = wrong_out + verdicts[("untyped", "outside: resolved here")]
    assert wrong_all <= 14, verdicts


@pytest.mark.corpus
def test_rxjs_calls_agree_with_the_type_checker(snapshots, corpora, tmp_path):
    """Every call of rxjs (bare, member, `new`) against the checker: landing
    where it puts them, elsewhere, or in the repository where it puts them in
    a parameter or local (a name the function binds: feature 25) or outside."""
    snap = snapshots("ts-rxjs")
    v = checker_verdicts(snap.dir, checker_calls(corpora / "ts-rxjs", tmp_path))
    print(dict(v))
    # Stop 63: right 846, elsewhere 60, locals resolved 8, outside resolved 26.
    # Features 24-25: 999 / 25 / 6 / 11. Feature 26: 1,009 / 24 / 6 / 11.
    # Feature 27: 1,172 / 24 / 6 / 11. Feature 28 (receiver expressions
    # typed by declared return types): 1,211 / 24 / 6 / 11.
    assert v["right"] >= 1190, v
    assert v["elsewhere"] + v["a local: resolved here"] + v["outside: resolved here"] <= 55, v


def checker_verdicts(snap_dir: Path, tsv: Path) -> collections.Counter:
    """Every call of a tree (bare, member, `new`) against the checker: landing
    where it puts them, elsewhere, unresolved, or in the repository where it
    puts them in a parameter or local or outside it."""
    con = duckdb.connect()
    rows = con.execute(
        f"""SELECT e.src_path, e.line, e.dst_name, e.dst_path, s.name_line
            FROM read_parquet('{snap_dir}/edges.parquet') e
            LEFT JOIN read_parquet('{snap_dir}/symbols.parquet') s ON s.symbol_id = e.dst_symbol_id
            WHERE e.kind = 'calls'""").fetchall()
    lines = {(p, str(ln)) for p, ln in con.execute(
        f"SELECT path, name_line FROM read_parquet('{snap_dir}/symbols.parquet')").fetchall()}
    ours = collections.defaultdict(list)
    for r in rows:
        ours[(r[0], r[1], r[2].rsplit(".", 1)[-1])].append(r)
    v = collections.Counter()
    for line in tsv.read_text().splitlines():
        src, ln, written, shape, tpath, tline, _ = line.split("\t")
        name = written.rsplit(".", 1)[-1]
        if shape == "new":
            name = written[4:].rsplit(".", 1)[-1].split("<")[0]
        cand = ours.get((src, int(ln), name), [])
        if len(cand) != 1 or tpath == "?" or shape == "super":
            continue
        dpath, dline = cand[0][3], cand[0][4]
        if tpath == "-":
            v["outside: resolved here" if dpath else "outside"] += 1
        elif (tpath, tline) not in lines:
            v["a local: resolved here" if dpath else "a local"] += 1
        elif not dpath:
            v["unresolved"] += 1
        else:
            v["right" if (dpath, str(dline)) == (tpath, tline) else "elsewhere"] += 1
    return v


# Held out: two class-heavy packages that ship their TypeScript sources,
# pinned by tests/ts/package-lock.json (installed by scripts/setup.sh), never
# tuned on. Stop 64 (feature 25) -> feature 26: mobx (a barrel `internal.ts`
# every module imports from) right 334 -> 973, unresolved 744 -> 105;
# @tanstack/query-core (`this.#client.…`, tests importing `..`) right 1,728
# -> 2,273, unresolved 706 -> 161. Landing elsewhere, in a local or in the
# repository for a call outside it: mobx 105 -> 91 (`Object`'s
# `defineProperty`, which mobx re-binds, counts as outside), query-core 26 -> 20.
# Feature 28: mobx right 980, wrong 85; query-core right 2,310, wrong 18.
# Feature 29: mobx 980, wrong 83; query-core 2,353, wrong 18.
HELD_OUT = {"mobx": (900, 95), "@tanstack/query-core": (2330, 24)}


@pytest.mark.parametrize("package", sorted(HELD_OUT))
def test_held_out_packages_calls_agree_with_the_type_checker(indexer, package, tmp_path):
    client = ts_client()
    src = client / "node_modules" / package / "src"
    if not src.is_dir():
        pytest.fail(f"{package} is not installed in {client}: run scripts/setup.sh --deps-only", pytrace=False)
    repo = tmp_path / "repo"
    shutil.copytree(src, repo)
    snap = build(indexer, repo, tmp_path / "out", "--no-embeddings")
    v = checker_verdicts(snap.dir, checker_calls(repo, tmp_path))
    print(package, dict(v))
    right_min, wrong_max = HELD_OUT[package]
    assert v["right"] >= right_min, v
    assert v["elsewhere"] + v["a local: resolved here"] + v["outside: resolved here"] <= wrong_max, v
