"""A definition's chunk keeps its leading doc comment (issue 16).

For every definition in the symbols table whose source lines directly above
its start_line are comment lines of its language (no blank line between;
attribute / annotation / decorator lines may sit among them), the chunk that
holds the definition's start line must also hold the first line of that
comment. The comment is found from the source text alone, not by our parser.

Run as a script to measure any binary (bench/results/doc-attachment.md):

    python3 tests/test_doc_attachment.py [--indexer PATH] [CORPUS...]
"""

from __future__ import annotations

import argparse
import bisect
import collections
import re
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import build, corpora_root, indexer_path  # noqa: E402

MIN_SHARE = 0.95
CORPORA = ("go-stdlib", "rust-crates", "ts-rxjs")

C_LIKE = {"go", "rust", "java", "c", "cpp", "javascript", "typescript", "tsx"}
_ATTRIBUTE = {
    "rust": re.compile(r"#\[.*\]$"),
    "java": re.compile(r"@[A-Za-z_][\w.]*(\(.*\))?$"),
    "typescript": re.compile(r"@[A-Za-z_][\w.]*(\(.*\))?;?$"),
    "tsx": re.compile(r"@[A-Za-z_][\w.]*(\(.*\))?;?$"),
    "javascript": re.compile(r"@[A-Za-z_][\w.]*(\(.*\))?;?$"),
    "python": re.compile(r"@[A-Za-z_][\w.]*(\(.*\))?$"),
}


def leading_comment_line(lines: list[str], start_line: int, language: str) -> int | None:
    """1-based first line of the comment directly above `start_line`, if any.

    Walks up from the line above: comment lines (`//`, `/* ... */` blocks;
    `#` in Python) and attribute lines continue the lead, a blank line or
    code ends it. Rust inner docs (`//!`, `/*!`) document the enclosing item
    and end it too."""
    attribute = _ATTRIBUTE.get(language)
    first = None
    i = start_line - 2
    in_block = False
    while i >= 0:
        t = lines[i].strip()
        if in_block:
            if "/*" in t:
                if not t.startswith("/*") or (language == "rust" and t.startswith("/*!")):
                    return None  # the block opens after code, or is an inner doc
                in_block, first = False, i
            i -= 1
            continue
        if not t:
            break
        if language in C_LIKE:
            if t.startswith("//"):
                if language == "rust" and t.startswith("//!"):
                    break
                first = i
            elif t.startswith("/*") and t.endswith("*/"):
                if language == "rust" and t.startswith("/*!"):
                    break
                first = i
            elif t.endswith("*/") and t.startswith("*"):
                in_block = True
            elif attribute is not None and attribute.match(t):
                pass
            else:
                break
        elif language == "python":
            if t.startswith("#"):
                first = i
            elif attribute is not None and attribute.match(t):
                pass
            else:
                break
        else:
            return None
        i -= 1
    if in_block:
        return None
    return None if first is None else first + 1


def measure(snap_dir: Path) -> dict:
    """Per language: (attached, total, first misses) over the snapshot."""
    import pyarrow.parquet as pq

    files = pq.read_table(snap_dir / "files.parquet", columns=["path", "language", "content"]).to_pydict()
    chunks = pq.read_table(snap_dir / "chunks.parquet", columns=["path", "kind", "start_line", "end_line"]).to_pydict()
    symbols = pq.read_table(snap_dir / "symbols.parquet", columns=["path", "qualified_name", "start_line"]).to_pydict()

    spans = collections.defaultdict(list)  # path -> [(start, end)], class summaries excepted
    for path, kind, s, e in zip(chunks["path"], chunks["kind"], chunks["start_line"], chunks["end_line"]):
        if kind != "class_summary":
            spans[path].append((s, e))
    for v in spans.values():
        v.sort()

    content = {p: (lang, c) for p, lang, c in zip(files["path"], files["language"], files["content"])}
    lines_of: dict[str, list[str]] = {}
    out: dict[str, list] = collections.defaultdict(lambda: [0, 0, []])
    for path, qname, start in zip(symbols["path"], symbols["qualified_name"], symbols["start_line"]):
        lang, text = content[path]
        if path not in lines_of:
            lines_of[path] = text.split("\n")
        first = leading_comment_line(lines_of[path], start, lang)
        if first is None:
            continue
        rec = out[lang]
        rec[1] += 1
        v = spans[path]
        # Chunks holding the start line: those starting at or before it that end at or after it.
        holders = [(s, e) for s, e in v[: bisect.bisect_right(v, (start, 1 << 31))] if e >= start]
        if any(s <= first for s, _ in holders):
            rec[0] += 1
        elif len(rec[2]) < 20:
            rec[2].append(f"{path}:{start} {qname} (comment at {first}, chunks {holders})")
    return dict(out)


def summarize(corpus: str, by_lang: dict) -> tuple[float, str]:
    attached = sum(r[0] for r in by_lang.values())
    total = sum(r[1] for r in by_lang.values())
    share = attached / total if total else 1.0
    report = [f"{corpus}: {share:.4f} attached ({attached}/{total} definitions with a leading comment)"]
    for lang, (a, n, misses) in sorted(by_lang.items()):
        report.append(f"  {lang:11s} {a / n:.4f} ({a}/{n})")
        report += [f"    miss: {m}" for m in misses[:8]]
    return share, "\n".join(report)


@pytest.mark.corpus
@pytest.mark.parametrize("corpus", CORPORA)
def test_leading_comments_share_the_definition_chunk(snapshots, corpus):
    snap = snapshots(corpus)
    share, report = summarize(corpus, measure(snap.dir))
    print(report)
    assert share >= MIN_SHARE, report


def test_leading_comment_detection():
    src = [
        "package p",
        "",
        "// A does a.",
        "// More.",
        "func A() {}",
        "x := 1 // trailing",
        "func B() {}",
        "/**",
        " * C.",
        " */",
        "@Override",
        "void c() {}",
        "//! inner",
        "fn d() {}",
    ]
    assert leading_comment_line(src, 5, "go") == 3
    assert leading_comment_line(src, 7, "go") is None
    assert leading_comment_line(src, 12, "java") == 8
    assert leading_comment_line(src, 14, "rust") is None
    assert leading_comment_line(["#[derive(Debug)]", "/// S.", "#[repr(C)]", "struct S;"], 4, "rust") == 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--indexer", type=Path, default=indexer_path())
    ap.add_argument("corpora", nargs="*", default=list(CORPORA))
    args = ap.parse_args()
    worst = 1.0
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in args.corpora:
            snap = build(args.indexer, corpora_root() / corpus, Path(tmp) / corpus, "--no-embeddings")
            share, report = summarize(corpus, measure(snap.dir))
            print(report, flush=True)
            worst = min(worst, share)
    return 0 if worst >= MIN_SHARE else 1


if __name__ == "__main__":
    sys.exit(main())
