#!/usr/bin/env python3
"""Secret detection recall: `code-indexer secrets` against detect-secrets on
the planted-secrets corpus of tests/secrets_corpus.py.

    python3 bench/bench_secrets.py [--seeds 1 2 3] [--work /tmp/bench-secrets]

For each seed: write the corpus, run `code-indexer secrets <tree> --list
--json` and `detect-secrets scan --all-files` (installed on first use into a
venv under ~/.cache/code-index/detect-secrets-venv, or $DETECT_SECRETS), and
match findings to what was planted. A planted item is found when a finding of
the same file overlaps it: by byte span when the finding has one
(start_byte/end_byte), else by line (the planted block's lines; a PEM key is
BEGIN..END). The corpus puts no two planted items on one line, so a line names
at most one. Reports per tool: secrets found, recall, look-alikes flagged,
findings on no planted line; the union of both tools; recall per kind.
Writes bench/results/secrets.md and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from secrets_corpus import Corpus, Planted, make_corpus  # noqa: E402

TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/code-index/target"))
INDEXER = Path(os.environ.get("CODE_INDEXER", TARGET / "release/code-indexer"))
DS_VENV = Path.home() / ".cache/code-index/detect-secrets-venv"


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    kind: str
    start: int | None = None
    end: int | None = None


def detect_secrets_bin() -> Path:
    env = os.environ.get("DETECT_SECRETS")
    if env:
        return Path(env)
    exe = DS_VENV / "bin/detect-secrets"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(DS_VENV)], check=True)
        subprocess.run([str(DS_VENV / "bin/pip"), "install", "-q", "detect-secrets"], check=True)
    return exe


def ours(tree: Path) -> tuple[list[Finding], float]:
    t0 = time.monotonic()
    p = subprocess.run([str(INDEXER), "secrets", str(tree), "--list", "--json"], capture_output=True, text=True)
    secs = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"code-indexer secrets failed:\n{p.stderr}")
    out = []
    for f in json.loads(p.stdout):
        out.append(Finding(f["path"], int(f["line"]), f.get("kind", "?"), f.get("start_byte"), f.get("end_byte")))
    return out, secs


def detect_secrets(exe: Path, tree: Path) -> tuple[list[Finding], float]:
    t0 = time.monotonic()
    p = subprocess.run([str(exe), "scan", "--all-files"], cwd=tree, capture_output=True, text=True)
    secs = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"detect-secrets failed:\n{p.stderr}")
    out = []
    for path, items in json.loads(p.stdout)["results"].items():
        for f in items:
            out.append(Finding(path.removeprefix("./"), int(f["line_number"]), f["type"]))
    return out, secs


def hits(item: Planted, findings: list[Finding]) -> bool:
    for f in findings:
        if f.path != item.path:
            continue
        if f.start is not None and f.end is not None:
            if f.start < item.end and item.start < f.end:
                return True
        elif item.line <= f.line <= item.end_line:
            return True
    return False


def on_planted_line(f: Finding, items: list[Planted]) -> bool:
    return any(p.path == f.path and p.line <= f.line <= p.end_line for p in items)


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f} %" if b else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench-secrets"))
    args = ap.parse_args()
    if not INDEXER.exists():
        sys.exit(f"no binary at {INDEXER}")
    ds = detect_secrets_bin()
    ds_version = subprocess.run([str(ds), "--version"], capture_output=True, text=True).stdout.strip()
    shutil.rmtree(args.work, ignore_errors=True)

    tools = ("code-indexer", "detect-secrets")
    found = {t: Counter() for t in (*tools, "union")}  # kind -> secrets found
    planted_kinds: Counter = Counter()
    look_flagged = {t: [] for t in (*tools, "union")}
    stray = Counter()
    seconds = Counter()
    n_secrets = n_looks = 0
    missed_by_both: list[Planted] = []
    for seed in args.seeds:
        corpus: Corpus = make_corpus(args.work / f"seed{seed}" / "acme-shop", seed)
        fs = {}
        fs["code-indexer"], s1 = ours(corpus.root)
        fs["detect-secrets"], s2 = detect_secrets(ds, corpus.root)
        seconds["code-indexer"] += s1
        seconds["detect-secrets"] += s2
        n_secrets += len(corpus.secrets)
        n_looks += len(corpus.lookalikes)
        items = corpus.secrets + corpus.lookalikes
        for p in corpus.secrets:
            planted_kinds[p.kind] += 1
            by = {t: hits(p, fs[t]) for t in tools}
            for t in tools:
                found[t][p.kind] += by[t]
            found["union"][p.kind] += any(by.values())
            if not any(by.values()):
                missed_by_both.append(p)
        for p in corpus.lookalikes:
            by = {t: hits(p, fs[t]) for t in tools}
            for t in tools:
                if by[t]:
                    look_flagged[t].append(p)
            if any(by.values()):
                look_flagged["union"].append(p)
        for t in tools:
            stray[t] += sum(not on_planted_line(f, items) for f in fs[t])

    seeds = ", ".join(map(str, args.seeds))
    lines = [
        "## Secret detection on the planted corpus",
        "",
        f"Corpus: tests/secrets_corpus.py, seeds {seeds}: {n_secrets} planted secrets "
        f"({len(planted_kinds)} kinds), {n_looks} harmless look-alikes. "
        f"Tools: `code-indexer secrets --list --json` ({INDEXER.name}), `detect-secrets scan --all-files` "
        f"({ds_version}, default plugins and filters). A finding counts for a planted item when it is in the "
        "same file and overlaps it (byte span if the finding has one, else line).",
        "",
        "| tool | secrets found | recall | look-alikes flagged | findings on no planted line | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for t in (*tools, "union"):
        got = sum(found[t].values())
        flagged = len(look_flagged[t])
        extra = f"{stray[t]} | {seconds[t]:.1f}" if t in tools else "- | -"
        lines.append(f"| {t} | {got} / {n_secrets} | {pct(got, n_secrets)} | {flagged} / {n_looks} "
                     f"({pct(flagged, n_looks)}) | {extra} |")
    lines += ["", "Findings on no planted line: identifiers planted as neither secret nor look-alike (a GCP `private_key_id`, a Twilio account SID).",
              "", "### Recall per kind", "", "| kind | planted | code-indexer | detect-secrets |", "|---|---|---|---|"]
    for k in sorted(planted_kinds, key=lambda k: (found["code-indexer"][k] / planted_kinds[k], k)):
        lines.append(f"| {k} | {planted_kinds[k]} | {found['code-indexer'][k]} | {found['detect-secrets'][k]} |")
    for t in tools:
        kinds = Counter(p.kind for p in look_flagged[t])
        lines += ["", f"Look-alikes flagged by {t}: " + (", ".join(f"{k} ×{n}" for k, n in sorted(kinds.items())) or "none")]
    both = Counter(p.kind for p in missed_by_both)
    lines += ["", "Missed by both: " + (", ".join(f"{k} ×{n}" for k, n in sorted(both.items())) or "none"), ""]
    text = "\n".join(lines)
    dest = ROOT / "bench/results/secrets.md"
    dest.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
