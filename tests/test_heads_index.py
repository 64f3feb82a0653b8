"""`heads.bin`, the snapshot's index of definition heads, on real corpora.

Read here from its documented format (schemas/SCHEMA.md, schemas/src/heads.rs)
by a reader of our own and checked against the tables (pyarrow): which heads
each chunk holds is recomputed from `symbols.parquet` and `chunks.parquet` by
the documented rule, and the postings of `_`-joined identifiers are the heads
whose name, signature or first doc paragraph hold the word, counted with
Python's regex engine. Then `search_code --mode keyword` must rank the same
with the heads read in place as with the ones the server builds in memory from
the symbols table (`CODE_INDEX_KEYWORDS=memory`, the path of older snapshots)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from test_keyword_index import BLOCK, HEADER, KeywordFile, assert_ranks_alike_in_place_and_built, keyword_ranking

HEAD_KINDS = {"function", "method", "constructor", "class", "struct", "interface", "trait", "enum",
              "type", "macro", "module", "namespace"}
TRAILER = struct.Struct("<QIIII8s")


class HeadsFile(KeywordFile):
    """The keyword index at the start of `heads.bin`, and the chunks' lists after it."""

    def __init__(self, path: Path):
        b = path.read_bytes()
        (index_len, self.chunks, self.nids, self.heads_version, _, magic) = TRAILER.unpack_from(b, len(b) - TRAILER.size)
        assert magic == b"CIXHEAD\0"
        assert len(b) == index_len + 4 * (self.chunks + 1 + self.nids) + TRAILER.size
        self.b = b[:index_len]
        (magic, self.version, self.tokenizer, self.docs, _, self.terms, self.total,
         self.len_off, self.blocks_off, self.index_off) = HEADER.unpack_from(self.b)
        assert magic == b"CIXBM25\0"
        assert index_len == self.index_off + 24 * -(-self.terms // BLOCK)
        self.offsets = struct.unpack_from(f"<{self.chunks + 1}I", b, index_len)
        self.ids = struct.unpack_from(f"<{self.nids}I", b, index_len + 4 * (self.chunks + 1))

    def heads_of(self, c: int) -> list[int]:
        return list(self.ids[self.offsets[c]:self.offsets[c + 1]])


def expected(snap) -> tuple[list[str], list[list[int]]]:
    """The heads' texts and each chunk's heads, by the rule SCHEMA.md states."""
    chunks = snap.read("chunks", ["path", "start_line", "end_line"]).to_pylist()
    by_path: dict[str, list[tuple[int, int, int]]] = {}
    for i, c in enumerate(chunks):
        by_path.setdefault(c["path"], []).append((c["start_line"], c["end_line"], i))
    texts: list[str] = []
    lists: list[list[int]] = [[] for _ in chunks]
    cols = ["path", "qualified_name", "kind", "signature", "doc", "start_line", "is_test"]
    for s in snap.read("symbols", cols).to_pylist():
        if s["is_test"] or s["kind"] not in HEAD_KINDS:
            continue
        holders = [i for (a, z, i) in by_path.get(s["path"], []) if a <= s["start_line"] <= z]
        if not holders:
            continue
        for i in holders:
            lists[i].append(len(texts))
        text = s["qualified_name"]
        if s["signature"] is not None:
            text += "\n" + s["signature"]
        if s["doc"] is not None:
            d = s["doc"].strip()
            text += "\n" + d.split("\n\n")[0]
        texts.append(text)
    return texts, lists


TERMS = {
    "django": ["get_or_create", "select_related", "full_clean", "add_to_class"],
    "go-stdlib": ["statfs_t", "cgo_unsafe_args", "x_cgo_init", "set_usec"],
}


@pytest.mark.parametrize("corpus", sorted(TERMS))
def test_heads_are_the_definitions_their_chunks_hold(corpus, snapshots):
    snap = snapshots(corpus)
    assert "heads.bin" in {f["name"] for f in snap.manifest["files"]}
    hf = HeadsFile(snap.dir / "heads.bin")
    assert (hf.heads_version, hf.version, hf.tokenizer) == (1, 1, 5)
    texts, lists = expected(snap)
    assert hf.chunks == len(lists), f"{hf.chunks} chunks in heads.bin, {len(lists)} in chunks.parquet"
    assert hf.docs == len(texts), f"{hf.docs} heads, {len(texts)} by the rule"
    assert len(texts) > 1000
    differ = [c for c in range(hf.chunks) if hf.heads_of(c) != lists[c]]
    assert not differ, f"{len(differ)} chunks differ, e.g. chunk {differ[0]}: {hf.heads_of(differ[0])} != {lists[differ[0]]}"
    assert hf.total == sum(hf.doc_len(d) for d in range(hf.docs))
    found = 0
    for word in TERMS[corpus]:
        rx = re.compile(rf"(?<![\w]){re.escape(word)}(?![\w])", re.IGNORECASE)
        want = {d: n for d, t in enumerate(texts) if (n := len(rx.findall(t)))}
        got = hf.postings(word.lower())
        found += len(want)
        assert got == want, f"{word}: {len(got)} heads, oracle {len(want)}; differ at {sorted(set(got.items()) ^ set(want.items()))[:5]}"
    assert found >= 5, f"the words are too rare in {corpus}'s heads to test"


QUERIES = {
    "django": ["Returns an iterable of AppConfig instances", "Validates that the input is a valid email address",
               "A mixin class that provides facilities for creating and displaying forms"],
    "go-stdlib": ["NewReaderSize returns a new Reader whose buffer has at least the specified size",
                  "ReadFull reads exactly len(buf) bytes from r into buf"],
}


@pytest.mark.parametrize("corpus", sorted(QUERIES))
def test_search_code_ranks_the_same_with_heads_read_in_place_or_built(corpus, snapshots, server_bin):
    snap = snapshots(corpus)
    assert_ranks_alike_in_place_and_built(server_bin, snap, QUERIES[corpus])
    # The stage reads the heads: on at least one query it changes the ranking.
    assert any(
        keyword_ranking(server_bin, snap, q, {}) != keyword_ranking(server_bin, snap, q, {"CODE_INDEX_RANK": "-head"})
        for q in QUERIES[corpus]
    )
