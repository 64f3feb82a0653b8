"""`keywords.bin`, the snapshot's keyword (BM25) index, on real corpora.

Read here from its documented format (schemas/SCHEMA.md, schemas/src/keyword.rs)
by a reader of our own, and checked against an independent oracle: the
chunks (pyarrow) holding a multi-part identifier as a whole word, counted
with Python's regex engine. Then `search_code --mode keyword` must rank the
same with the index read in place as with the one the server builds in memory
(`CODE_INDEX_KEYWORDS=memory`, the path of older snapshots)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from helpers import search_code

HEADER = struct.Struct("<8sIIIIQQQQQ")
BLOCK = 64


M64 = 0xFFFFFFFFFFFFFFFF


def term_hash(term: str) -> int:
    """schemas/src/keyword.rs `term_hash`: 8 bytes at a time, then splitmix64's finalizer."""
    b = term.encode()
    m = 0xBF58476D1CE4E5B9
    h = 0x9E3779B97F4A7C15 ^ len(b)
    for i in range(0, len(b), 8):
        w = int.from_bytes(b[i:i + 8].ljust(8, b"\0"), "little")
        h = ((h ^ w) * m) & M64
        h = ((h << 31) | (h >> 33)) & M64
    h ^= h >> 30
    h = (h * m) & M64
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & M64
    return h ^ (h >> 31)


def varint(b: bytes, at: int) -> tuple[int, int]:
    v, shift = 0, 0
    while True:
        x = b[at]
        at += 1
        v |= (x & 0x7F) << shift
        if x < 0x80:
            return v, at
        shift += 7


class KeywordFile:
    def __init__(self, path: Path):
        self.b = path.read_bytes()
        (magic, self.version, self.tokenizer, self.docs, _, self.terms, self.total,
         self.len_off, self.blocks_off, self.index_off) = HEADER.unpack_from(self.b)
        assert magic == b"CIXBM25\0"
        assert len(self.b) == self.index_off + 24 * -(-self.terms // BLOCK)

    def doc_len(self, d: int) -> int:
        return struct.unpack_from("<I", self.b, self.len_off + 4 * d)[0]

    def postings(self, term: str) -> dict[int, int]:
        """{document: tf} of a term, by a linear scan of the block index."""
        h = term_hash(term)
        nblocks = -(-self.terms // BLOCK)
        blk = None
        for i in range(nblocks):
            first, at, post = struct.unpack_from("<QQQ", self.b, self.index_off + 24 * i)
            if first > h:
                break
            blk = (i, first, at, post)
        if blk is None:
            return {}
        i, cur, at, post = blk
        for _ in range(min(BLOCK, self.terms - i * BLOCK)):
            delta, at = varint(self.b, at)
            df, at = varint(self.b, at)
            n, at = varint(self.b, at)
            cur += delta
            if cur == h:
                out, p, doc = {}, post, 0
                for _ in range(df):
                    v, p = varint(self.b, p)
                    doc += v >> 1
                    tf = 1
                    if v & 1:
                        tf, p = varint(self.b, p)
                    out[doc] = tf
                assert p == post + n
                return out
            post += n
        return {}


def documents(snap) -> list[tuple[str, str | None, str | None, str]]:
    """(text, symbol, heading, path) of every document, in the documented order."""
    content = {r["path"]: r["content"].encode() for r in snap.read("files", ["path", "content"]).to_pylist()}
    docs = []
    for c in snap.read("chunks", ["path", "kind", "symbol", "heading_path", "start_byte", "end_byte", "text"]).to_pylist():
        if c["text"] is not None:
            text = c["text"]
        else:
            raw = content[c["path"]]
            text = raw[c["start_byte"]:min(c["end_byte"], len(raw))].decode("utf-8", "replace")
        docs.append((text, c["symbol"], c["heading_path"], c["path"]))
    for p in snap.read("patterns", ["name", "path", "text"]).to_pylist():
        if p["text"] is not None:
            docs.append((p["text"], p["name"], None, p["path"]))
    return docs


# Identifiers of two or more `_`-separated parts: any spelling of the whole
# word gives the word lowercased as a term, and no other word does (parts hold
# no `_`, stemming applies to one-part words), so whole-word, case-insensitive
# counting is an oracle.
TERMS = {
    "django": ["get_or_create", "select_related", "full_clean", "add_to_class"],
    "go-stdlib": ["http_proxy", "GOROOT_FINAL", "sync_test", "_cgo_panic"],
}


@pytest.mark.parametrize("corpus", sorted(TERMS))
def test_keyword_postings_are_the_chunks_holding_the_word(corpus, snapshots):
    snap = snapshots(corpus)
    names = {f["name"] for f in snap.manifest["files"]}
    assert "keywords.bin" in names
    kw = KeywordFile(snap.dir / "keywords.bin")
    assert (kw.version, kw.tokenizer) == (1, 5)
    docs = documents(snap)
    assert kw.docs == len(docs), f"{kw.docs} documents, {len(docs)} chunks and pattern chunks"
    assert kw.total == sum(kw.doc_len(d) for d in range(kw.docs))
    for word in TERMS[corpus]:
        rx = re.compile(rf"(?<![\w]){re.escape(word)}(?![\w])", re.IGNORECASE)
        want = {}
        for d, (text, symbol, heading, path) in enumerate(docs):
            n = len(rx.findall(text)) + 2 * len(rx.findall(symbol or "")) + len(rx.findall(heading or "")) + len(rx.findall(path))
            if n:
                want[d] = n
        got = kw.postings(word.lower())
        assert len(want) >= 3, f"{word}: too rare in {corpus} to test"
        assert got == want, f"{word}: {len(got)} documents, oracle {len(want)}; differ at {sorted(set(got.items()) ^ set(want.items()))[:5]}"
    assert kw.postings("zzqx_no_such_term_42") == {}


QUERIES = {
    "django": ["get_or_create queryset", "validate email address", "csrf token middleware", "migrate database schema"],
    "go-stdlib": ["read full buffer", "parse http header", "gzip writer flush", "NewReaderSize"],
}


def keyword_ranking(server_bin, snap, query: str, env: dict) -> list:
    """`search_code --mode keyword`'s first 20 results as (path, line, end_line, score)."""
    return [(r["path"], r["line"], r["end_line"], round(r["score"], 4))
            for r in search_code(server_bin, snap.dir, query, "keyword", 20, env)]


def assert_ranks_alike_in_place_and_built(server_bin, snap, queries) -> None:
    """Keyword rankings of `queries` are equal with the snapshot's indexes
    mapped and with them built in memory (`CODE_INDEX_KEYWORDS=memory`)."""
    for q in queries:
        mapped = keyword_ranking(server_bin, snap, q, {})
        built = keyword_ranking(server_bin, snap, q, {"CODE_INDEX_KEYWORDS": "memory"})
        assert mapped, f"{q!r}: no results"
        assert mapped == built, f"{q!r}: read in place {mapped[:3]} != built in memory {built[:3]}"


@pytest.mark.parametrize("corpus", sorted(QUERIES))
def test_search_code_ranks_the_same_read_in_place_or_built(corpus, snapshots, server_bin):
    assert_ranks_alike_in_place_and_built(server_bin, snapshots(corpus), QUERIES[corpus])
