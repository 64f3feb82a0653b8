"""Planted secrets: a synthetic repository (secrets_corpus.py) with 110+
random secrets of 32+ kinds (129 of 58 today) and 35+ harmless look-alikes
(81), written the way real code writes them in 17 syntaxes, indexed by the
real binary.

- No trace: at least 98 % of the planted secrets appear nowhere in the
  snapshot, neither whole nor either half (halves of 8+ characters), in any
  string, binary or list column of any table, the Parquet key-value metadata,
  manifest.json, or the raw bytes of any file the build wrote (Parquet footers
  hold min/max statistics).
- Look-alikes stay: at most 10 % of them are redacted (missing from their
  file's `files.content`).
- Hashes: `files.content_sha256` is the sha256 of the published (redacted)
  content; no hash of a file's unredacted bytes is stored anywhere.
- `secrets --list` (text and --json) prints no secret and no 4-character
  prefix or suffix of one (beyond the public format marker, e.g. `ghp_`).

Two seeds: every value is fresh per seed, so rules tuned to one run's strings
do not pass by luck. On failure, the assertion lists each leak (kind, place,
where it was found, value) so the rule writer can act on it.
"""

from __future__ import annotations

import hashlib
import json
import math
import string
from collections import Counter
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helpers import Snapshot, build
from secrets_corpus import Corpus, Planted, make_corpus

SEEDS = (20240611, 7)
MIN_NO_TRACE = 0.98
MAX_LOOKALIKES_REDACTED = 0.10
MIN_HALF = 8  # halves shorter than this are not searched (too likely by chance)


@dataclass
class Built:
    corpus: Corpus
    snap: Snapshot


@pytest.fixture(scope="module", params=SEEDS, ids=lambda s: f"seed{s}")
def built(request, indexer, tmp_path_factory) -> Built:
    seed = request.param
    base = tmp_path_factory.mktemp(f"secrets-seed{seed}")
    corpus = make_corpus(base / "acme-shop", seed)
    snap = build(indexer, corpus.root, base / "out", "--no-embeddings")
    return Built(corpus, snap)


# --------------------------------------------------------------------------
# Where a snapshot can hold text


def _text_arrays(arr: pa.Array) -> list[pa.Array]:
    """The string and binary leaves of an array: lists and maps flattened,
    structs split into fields, dictionaries decoded."""
    t = arr.type
    if pa.types.is_dictionary(t):
        return _text_arrays(arr.dictionary_decode())
    if pa.types.is_map(t):
        return _text_arrays(arr.keys) + _text_arrays(arr.items)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _text_arrays(arr.flatten())
    if pa.types.is_struct(t):
        return [leaf for i in range(t.num_fields) for leaf in _text_arrays(arr.field(i))]
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return [arr]
    return []


def _blob(values) -> bytes:
    return b"\0".join(v.encode() if isinstance(v, str) else bytes(v) for v in values if v is not None)


def _json_strings(obj) -> list[str]:
    if isinstance(obj, dict):
        return [s for k, v in obj.items() for s in [k, *_json_strings(v)]]
    if isinstance(obj, list):
        return [s for v in obj for s in _json_strings(v)]
    return [obj] if isinstance(obj, str) else []


def snapshot_haystacks(snap: Snapshot) -> dict[str, bytes]:
    """{place: bytes} for every place a snapshot can hold text."""
    out: dict[str, bytes] = {}
    for p in sorted(snap.dir.glob("*.parquet")):
        table = pq.read_table(p)
        for name in table.column_names:
            leaves = [leaf for chunk in table.column(name).chunks for leaf in _text_arrays(chunk)]
            if leaves:
                out[f"{p.stem}.{name}"] = _blob(v for leaf in leaves for v in leaf.to_pylist())
        kv = pq.read_metadata(p).metadata or {}
        out[f"{p.stem} (key-value metadata)"] = _blob(k + b"=" + v for k, v in kv.items())
    out["manifest.json (decoded strings)"] = _blob(_json_strings(json.loads((snap.dir / "manifest.json").read_text())))
    for p in sorted(snap.out.rglob("*")):
        if p.is_file():
            out[f"raw {p.relative_to(snap.out)}"] = p.read_bytes()
    return out


def needles(value: str) -> list[str]:
    """The value and, when 8+ characters each, its two halves."""
    half = len(value) // 2
    out = [value]
    if half >= MIN_HALF:
        out += [value[:half], value[half:]]
    return out


def trace(item: Planted, hay: dict[str, bytes]) -> list[str]:
    """Places holding the value or a half of it ('place: whole|first half|second half')."""
    found = []
    for label, needle in zip(("whole", "first half", "second half"), needles(item.value)):
        b = needle.encode()
        found += [f"{place} ({label})" for place, blob in hay.items() if b in blob]
    return found


def _short(v: str, n: int = 70) -> str:
    v = v.replace("\n", "\\n")
    return v if len(v) <= n else v[: n - 1] + "…"


def leak_report(corpus: Corpus, leaked: list[tuple[Planted, list[str]]]) -> str:
    planted = Counter(p.kind for p in corpus.secrets)
    by_kind = Counter(p.kind for p, _ in leaked)
    lines = [f"seed {corpus.seed}: {len(leaked)} of {len(corpus.secrets)} planted secrets leave a trace", "",
             "kind | leaked/planted", "---|---"]
    lines += [f"{k} | {by_kind[k]}/{planted[k]}" for k in sorted(by_kind, key=lambda k: (-by_kind[k], k))]
    lines += ["", "kind | where planted | found in | value", "---|---|---|---"]
    for p, where in sorted(leaked, key=lambda x: (x[0].kind, x[0].path, x[0].line)):
        places = sorted({w.split(" (")[0] for w in where})
        lines.append(f"{p.kind} | {p.where()} | {', '.join(places)} | {_short(p.value)}")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# The corpus itself


def test_corpus_is_what_the_tests_assume(built):
    """Enough secrets and kinds, every planted file indexed (a file the walk
    skips would pass the no-trace check for nothing), values fresh per seed,
    and the generator deterministic."""
    c = built.corpus
    assert len(c.secrets) >= 110 and len(c.kinds()) >= 32, (len(c.secrets), len(c.kinds()))
    assert len(c.lookalikes) >= 35, len(c.lookalikes)
    indexed = built.snap.paths()
    missing = sorted({p.path for p in c.secrets + c.lookalikes} - indexed)
    assert not missing, f"planted files not in files.parquet: {missing}"

    other_seed = next(s for s in SEEDS if s != c.seed)
    other = make_corpus(built.snap.out.parent / f"other-{c.seed}", other_seed)
    shared = {p.value for p in c.secrets} & {p.value for p in other.secrets}
    assert not shared, f"secret values repeat across seeds: {sorted(shared)[:5]}"
    again = make_corpus(built.snap.out.parent / f"again-{c.seed}", c.seed)
    assert again.files == c.files and again.secrets == c.secrets and again.lookalikes == c.lookalikes


# --------------------------------------------------------------------------
# Redaction


def test_planted_secrets_leave_no_trace(built):
    c = built.corpus
    hay = snapshot_haystacks(built.snap)
    leaked = [(p, where) for p in c.secrets if (where := trace(p, hay))]
    allowed = math.floor(len(c.secrets) * (1 - MIN_NO_TRACE))
    print(leak_report(c, leaked))
    assert len(leaked) <= allowed, (
        f"{len(leaked)} planted secrets leave a trace (at most {allowed} may, "
        f"{MIN_NO_TRACE:.0%} must not)\n\n{leak_report(c, leaked)}"
    )


def test_lookalikes_stay_visible(built):
    c = built.corpus
    content = {r["path"]: r["content"] for r in built.snap.read("files", ["path", "content"]).to_pylist()}
    redacted = [p for p in c.lookalikes if content.get(p.path, "").count(p.value) < c.files[p.path].count(p.value)]
    allowed = math.floor(len(c.lookalikes) * MAX_LOOKALIKES_REDACTED)
    table = "\n".join(f"{p.kind} | {p.where()} | {_short(p.value)}" for p in redacted)
    print(f"seed {c.seed}: {len(redacted)} of {len(c.lookalikes)} look-alikes redacted\n{table}")
    assert len(redacted) <= allowed, (
        f"{len(redacted)} of {len(c.lookalikes)} harmless look-alikes were redacted (at most {allowed} may be)\n\n"
        f"kind | where | value\n---|---|---\n{table}"
    )


def test_content_hash_is_of_published_content(built):
    """A hash of unredacted bytes lets anyone confirm a guessed secret offline
    (its length and position are visible in the redacted content), so the
    stored hash is that of the published content."""
    c = built.corpus
    cols = built.snap.read("files").column_names
    hash_cols = [n for n in cols if "sha" in n or "hash" in n]
    assert "content_sha256" in hash_cols, cols
    rows = built.snap.read("files", ["path", "content", *hash_cols]).to_pylist()
    wrong = [r["path"] for r in rows if r["content_sha256"] != hashlib.sha256(r["content"].encode()).hexdigest()]

    # Files where redaction changed something: there the two hashes differ.
    published = {r["path"]: r["content"] for r in rows}
    redacted_paths = {p.path for p in c.secrets if published.get(p.path, c.files[p.path]) != c.files[p.path]}
    hay = snapshot_haystacks(built.snap)
    unredacted_hashes = []
    for path in sorted(redacted_paths):
        digest = hashlib.sha256(c.files[path].encode()).hexdigest()
        for form in (digest, digest.upper()):
            places = [place for place, blob in hay.items() if form.encode() in blob]
            if places:
                unredacted_hashes.append(f"{path}: sha256 of the unredacted file in {', '.join(places)}")
                break
    assert not wrong and not unredacted_hashes, (
        f"{len(wrong)} of {len(rows)} files: content_sha256 is not the sha256 of the published content "
        f"(first: {wrong[:5]})\n" + "\n".join(unredacted_hashes)
    )


# --------------------------------------------------------------------------
# secrets --list


def list_needles(item: Planted) -> list[str]:
    """The value, and the first and last 4 characters of its secret material
    (after the public format marker). A 4-character window of hex digits is
    widened to 8: a hex fingerprint would hold any 4 hex digits by chance."""
    m = item.material
    out = [item.value]
    for take in (lambda k: m[:k], lambda k: m[-k:]):
        w = take(4)
        if all(ch in string.hexdigits for ch in w):
            w = take(8)
        out.append(w)
    return out


def test_secrets_list_prints_no_secret_material(built, cli):
    c = built.corpus
    human = cli("secrets", c.root, "--list")
    js = cli("secrets", c.root, "--list", "--json")
    js.json()
    shown = []
    for name, out in (("--list", human.stdout + human.stderr), ("--list --json", js.stdout + js.stderr)):
        for p in c.secrets:
            hits = [n for n in list_needles(p) if n in out]
            if hits:
                shown.append(f"{name}: {p.kind} {p.where()} shows {', '.join(repr(_short(h, 30)) for h in hits)}")
    assert not shown, f"{len(shown)} findings print secret material:\n" + "\n".join(shown[:80])
