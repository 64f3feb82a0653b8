"""Rust calls judged by rust-analyzer: where the compiler's own front end says each call goes.

For each crate of a corpus (a directory of crates, such as the pinned rust-crates),
`rust-analyzer scip` (the `rust-analyzer` rustup component), with every cargo feature
of the crate on, writes each name's occurrences in the crate's sources and the
symbol each refers to; this script reads those indexes and judges each `calls`
edge of a snapshot of the same corpus: the name the call ends with (`m` of
`x.m()`, `new` of `Type::new()`, `tri` of `tri!`) is looked up at the call's file
and line, and where rust-analyzer defines the symbol is compared with the edge's
target (its file and the line of its name).

Verdicts per call: `right` (same file and line), `elsewhere` (we resolved it to
another definition), `unresolved` (rust-analyzer knows a definition in the corpus,
we resolved none), `external` (the symbol is defined outside the corpus: std, a
dependency; split by whether we resolved it, which is then wrong), and `unknown`
(no occurrence of that name on that line). Calls whose name appears twice on a
line with different symbols, or whose symbol is defined in several files, are `ambiguous`
and not judged.

    rustup component add rust-analyzer
    python3 bench/call_oracles/rs_analyzer.py index CORPUS WORK   # copies each crate, runs rust-analyzer scip (network: crates.io)
    python3 bench/call_oracles/rs_analyzer.py judge SNAPSHOT WORK [--show VERDICT]

The judge step prints the table bench/results/calls.md quotes, by the shape of
the call (`x.m`, `self.m`, `Type::f`, `path::f`, `f`, `m!`)."""

from __future__ import annotations

import argparse
import collections
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path


CONFIG = {"cargo": {"features": "all"}, "procMacro": {"enable": True}}


def stamp_of(corpus: Path) -> str:
    """What the indexes of `corpus` depend on: rust-analyzer's version, its configuration, the
    crates. (Their dependencies come from crates.io at indexing time: published crates carry no
    lock file.)"""
    ra = subprocess.run(["rust-analyzer", "--version"], capture_output=True, text=True).stdout.strip()
    crates = sorted(p.name for p in corpus.iterdir() if (p / "Cargo.toml").exists())
    return json.dumps({"rust-analyzer": ra, "config": CONFIG, "crates": crates}, sort_keys=True)


def run_scip(corpus: Path, work: Path) -> list[str]:
    """Index each crate; the crates rust-analyzer failed on (no network for crates.io, say)."""
    (work / "src").mkdir(parents=True, exist_ok=True)
    (work / "scip").mkdir(parents=True, exist_ok=True)
    config = work / "ra-config.json"
    config.write_text(json.dumps(CONFIG))
    failed = []
    for crate in sorted(p for p in corpus.iterdir() if (p / "Cargo.toml").exists()):
        dst = work / "src" / crate.name
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(crate, dst)
        out = work / "scip" / f"{crate.name}.scip"
        out.unlink(missing_ok=True)
        with open(work / "scip" / f"{crate.name}.log", "w") as log:
            rc = subprocess.run(["rust-analyzer", "scip", ".", "--output", str(out), "--config-path", str(config)],
                                cwd=dst, stdout=log, stderr=log, timeout=3600).returncode
        if rc != 0 or not out.exists() or out.stat().st_size == 0:
            failed.append(crate.name)
        print(f"{crate.name}: {out.stat().st_size / 1e6 if out.exists() else 0:.1f} MB", file=sys.stderr)
    return failed


# -- the protobuf wire format, as much of it as SCIP's Index needs ------------------------------

def _varint(b: bytes, i: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        if c < 0x80:
            return n, i
        shift += 7


def _fields(b: bytes):
    """(field number, wire type, value) of a message: ints for varints, bytes for lengths."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wt}")
        yield f, wt, v


def _packed(v) -> list[int]:
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        n, i = _varint(v, i)
        out.append(n)
    return out


def read_scip(path: Path):
    """Documents of a SCIP index: [(relative path, [(line, column, end column, symbol, roles)])]."""
    data = path.read_bytes()
    docs = []
    for f, _wt, v in _fields(data):
        if f != 2:  # Index.documents
            continue
        rel, occs = None, []
        for g, _w, dv in _fields(v):
            if g == 1:
                rel = dv.decode()
            elif g == 2:  # Document.occurrences
                rng, sym, roles = [], "", 0
                for h, _x, ov in _fields(dv):
                    if h == 1:
                        rng.extend(_packed(ov))
                    elif h == 2:
                        sym = ov.decode()
                    elif h == 3:
                        roles = ov
                if len(rng) >= 3 and sym:
                    occs.append((rng[0] + 1, rng[1], rng[2] if len(rng) == 3 else rng[3], sym, roles))
        if rel is not None:
            docs.append((rel, occs))
    return docs


def judge_counts(snapshot: Path, work: Path) -> collections.Counter:
    """The verdicts' counts, nothing printed."""
    return judge(snapshot, work, [], 0, None, quiet=True)


def judge(snapshot: Path, work: Path, show: list[str], seed: int, dump: Path | None = None,
          quiet: bool = False) -> collections.Counter:
    import duckdb

    con = duckdb.connect()
    edges = con.execute(f"""
        SELECT e.src_path, e.line, e.dst_name, e.resolved, s.path, s.name_line, e.receiver_type
        FROM read_parquet('{snapshot}/edges.parquet') e
        LEFT JOIN read_parquet('{snapshot}/symbols.parquet') s ON s.symbol_id = e.dst_symbol_id
        WHERE e.kind = 'calls' AND e.src_path LIKE '%.rs'""").fetchall()
    # Which crate a path belongs to: its first segment.
    by_crate = collections.defaultdict(list)
    for e in edges:
        by_crate[e[0].split("/", 1)[0]].append(e)
    verdicts = collections.Counter()
    shapes = collections.Counter()
    examples = collections.defaultdict(list)
    # Where each symbol is defined, over every crate's index (a crate's call may land in another).
    indexes = {}
    defs: dict[str, set[tuple[str, int]]] = collections.defaultdict(set)
    for scip in sorted((work / "scip").glob("*.scip")):
        crate = scip.stem
        docs = read_scip(scip)
        indexes[crate] = docs
        for rel, occs in docs:
            for ln, _c, _e, sym, roles in occs:
                if roles & 1 and not sym.startswith("local "):
                    defs[unversioned(sym)].add((f"{crate}/{rel}", ln))
    for crate, es in sorted(by_crate.items()):
        if crate not in indexes:
            print(f"{crate}: no SCIP index, skipped", file=sys.stderr)
            continue
        at = collections.defaultdict(list)
        for rel, occs in indexes[crate]:
            path_ = work / "src" / crate / rel
            try:
                L = path_.read_text(encoding="utf-8", errors="replace").split("\n")
            except OSError:
                continue
            for ln, col, _e, sym, roles in occs:
                if roles & 1 or ln - 1 >= len(L):
                    continue
                # rust-analyzer's SCIP columns are UTF-8 byte offsets.
                text = L[ln - 1].encode()[col:].decode("utf-8", errors="replace")
                m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text)
                if not m:
                    continue
                if sym.startswith("local "):
                    targets = [("<local>", 0)]
                else:
                    targets = sorted(defs.get(unversioned(sym), set())) or [("<external>", 0)]
                at[(f"{crate}/{rel}", ln)].append((m.group(0), targets))
        for src, line, dst_name, resolved, path, name_line, rt in es:
            name = re.sub(r"!$", "", dst_name)
            name = re.split(r"::|\.", name)[-1]
            cands = [t for n, t in at.get((src, line), []) if n == name]
            shape = shape_of(dst_name)
            if not cands:
                v = "unknown"
            elif any(c != cands[0] for c in cands[1:]):
                v = "ambiguous"
            else:
                targets = cands[0]
                inside = [t for t in targets if t[0] not in ("<external>", "<local>")]
                if len({p for p, _ in inside}) > 1:
                    # One symbol defined in several files (`fn f` in three `tests/*.rs`, a
                    # `cfg` alternative): not judged.
                    v = "ambiguous"
                elif targets[0][0] == "<local>":
                    v = "local: ours resolved (wrong)" if resolved else "local: ours unresolved"
                elif not inside:
                    v = "external: ours resolved (wrong)" if resolved else "external: ours unresolved"
                elif not resolved:
                    v = "unresolved"
                elif (path, name_line) in inside:
                    v = "right"
                else:
                    v = "elsewhere"
            verdicts[v] += 1
            shapes[(shape, v)] += 1
            examples[v].append((src, line, dst_name, rt, path, name_line, cands[0] if cands else None))
    if quiet:
        return verdicts
    total = sum(verdicts.values())
    print(f"calls: {total}")
    for v, n in verdicts.most_common():
        print(f"  {v}: {n}")
    print("by shape (right / elsewhere / unresolved / external resolved):")
    for s in sorted({s for s, _ in shapes}):
        print(f"  {s}: {shapes[(s, 'right')]} / {shapes[(s, 'elsewhere')]} / {shapes[(s, 'unresolved')]} / "
              f"{shapes[(s, 'external: ours resolved (wrong)')]}")
    if dump:
        with open(dump, "w") as f:
            for v, rows in examples.items():
                for r in rows:
                    f.write(json.dumps({"verdict": v, "src": r[0], "line": r[1], "dst_name": r[2],
                                        "receiver_type": r[3], "path": r[4], "name_line": r[5],
                                        "oracle": r[6]}) + "\n")
    rnd = random.Random(seed)
    for v in show:
        ex = examples.get(v, [])
        print(f"-- {v} ({len(ex)})")
        for e in rnd.sample(ex, min(15, len(ex))):
            print("  ", e)
    return verdicts


# Packages a newer release of a corpus crate moved its items into: serde 1.0.220 moved its
# traits to `serde_core` (and re-exports them), so serde_json's build, which takes serde
# 1.0.229 from crates.io, names `serde_core … de/Visitor#visit_f64().` for what the corpus's
# serde 1.0.210 defines as `serde … de/Visitor#visit_f64().`.
MOVED = {"serde_core": "serde"}


def unversioned(sym: str) -> str:
    """A SCIP symbol without its package's version: a crate of the corpus that another
    crate's build takes from crates.io at another version is the same package (and one
    whose items a newer release moved to another package, `MOVED`, is that package)."""
    parts = sym.split(" ", 4)
    if len(parts) != 5:
        return sym
    parts[2] = MOVED.get(parts[2], parts[2])
    return " ".join(parts[:3] + parts[4:])


def shape_of(dst_name: str) -> str:
    if dst_name.endswith("!"):
        return "m!"
    if "." in dst_name:
        head = dst_name.split(".", 1)[0]
        return "self.m" if head == "self" else "x.m"
    if "::" in dst_name:
        head = dst_name.split("::")[0]
        if head in ("crate", "self", "super") or head[:1].islower():
            return "path::f"
        return "Type::f"
    return "f"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("index")
    a.add_argument("corpus", type=Path)
    a.add_argument("work", type=Path)
    b = sub.add_parser("judge")
    b.add_argument("snapshot", type=Path)
    b.add_argument("work", type=Path)
    b.add_argument("--show", action="append", default=[])
    b.add_argument("--seed", type=int, default=2026)
    b.add_argument("--dump", type=Path, help="write each judged call as a JSON line")
    args = ap.parse_args()
    if args.cmd == "index":
        failed = run_scip(args.corpus, args.work)
        if failed:
            print(f"rust-analyzer failed on: {', '.join(failed)}", file=sys.stderr)
            return 1
    else:
        judge(args.snapshot, args.work, args.show, args.seed, args.dump)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
