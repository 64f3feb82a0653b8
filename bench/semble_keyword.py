#!/usr/bin/env python3
"""semble's own keyword configuration (BM25 + its ranking stage, no vectors),
run on this machine on the same repos and queries as bench/eval_semble.py,
scored by the same NDCG@10 code: the peer measured in the same session
instead of only its published numbers.

    python3 -m venv V && V/bin/pip install semble==0.7.0 pyarrow   # MIT, from PyPI
    V/bin/python bench/semble_keyword.py --repos-dir DIR --snapshots W/snapshots

semble 0.7.0's `SembleIndex.search(q, top_k=10, alpha=0.0)`: alpha 0 gives the
vector list no weight, so the ranking is its BM25 list, fused (RRF) with
nothing, then its ranking stage (file coherence, identifier and stem boosts,
path penalties, per-file saturation). It still needs a static model to build
an index; its default (potion-code-16M) comes from the Hugging Face hub,
which this machine cannot reach, so a stand-in is built from MiniLM's
tokenizer with random 8-dim vectors: with alpha 0 those vectors do not
reach the ranking (a candidate found only by them scores 0 and is dropped).

The ideal DCG counts the targets our snapshot of the repo covers (as
eval_semble.py): `--snapshots` is the `<work>/snapshots` of an eval_semble.py
run. Paths: semble's are relative to the indexed root, like ours.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import eval_semble as E  # noqa: E402


def stand_in_model(d: Path, tokenizer_json: Path) -> None:
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    if (d / "model.safetensors").exists():
        return
    tok = Tokenizer.from_file(str(tokenizer_json))
    tok.no_truncation()
    tok.no_padding()
    v = np.random.RandomState(0).randn(tok.get_vocab_size(), 8).astype(np.float32)
    StaticModel(vectors=v, tokenizer=tok, normalize=True).save_pretrained(str(d))


def main() -> None:
    home = Path(os.path.expanduser("~/.cache/code-index"))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--semble-dir", type=Path, default=ROOT / "bench/data/semble")
    ap.add_argument("--repos-dir", type=Path, required=True)
    ap.add_argument("--snapshots", type=Path, required=True, help="<work>/snapshots of an eval_semble.py run")
    ap.add_argument("--tokenizer", type=Path, default=home / "models/all-minilm-l6-v2/tokenizer.json")
    ap.add_argument("--model-dir", type=Path, default=Path("/tmp/semble-stand-in-model"))
    ap.add_argument("--ours", type=Path, default=ROOT / "bench/results/eval-semble.md",
                    help="our report, for the side-by-side column (its per-repo keyword NDCG@10)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/semble-keyword-here.md")
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import semble
    from semble.index.index import SembleIndex

    stand_in_model(a.model_dir, a.tokenizer)
    specs, tasks = E.load(a.semble_dir)
    ours = {}
    if a.ours.exists():
        for line in a.ours.read_text().splitlines():
            c = [x.strip() for x in line.split("|")]
            if len(c) > 8 and c[1] in specs and c[3].isdigit():
                ours[c[1]] = float(c[6])
    rows = []
    skipped = []
    for name in sorted(tasks):
        root_rel = specs[name].get("benchmark_root") or ""
        root = a.repos_dir / name / root_rel
        rd = a.snapshots / name
        if not root.is_dir() or not (rd / "latest").is_file():
            continue
        prefix = (root_rel.rstrip("/") + "/") if root_rel else ""
        t = time.perf_counter()
        try:
            idx = SembleIndex.from_path(root, model_path=str(a.model_dir))
        except ValueError as e:
            # rxswift: its benchmark root is symlinks, which semble 0.7.0's walker skips.
            skipped.append((name, str(e)))
            print(f"{name:<20} skipped: {e}", file=sys.stderr, flush=True)
            continue
        ti = time.perf_counter() - t
        chunks = E.snapshot_chunks(rd / (rd / "latest").read_text().strip(), prefix)
        per_q = []
        for q in tasks[name]:
            res = idx.search(q["query"], top_k=E.K, alpha=0.0)
            results = [(prefix + r.chunk.file_path, r.chunk.start_line, r.chunk.end_line) for r in res]
            per_q.append(E.ndcg(results, q["targets"], E.n_indexed(chunks, q["targets"])))
        rows.append((name, specs[name]["language"], len(per_q), ti, E.mean(per_q), ours.get(name)))
        print(f"{name:<20} index {ti:.2f}s semble keyword {rows[-1][4]:.3f}", file=sys.stderr, flush=True)
    if not rows:
        raise SystemExit("no repo had both a checkout and a snapshot")
    L = ["# semble's keyword configuration, run here (bench/semble_keyword.py)", "",
         f"- date: {dt.date.today()}; semble {getattr(semble, '__version__', '0.7.0')} from PyPI; 2 cores",
         f"- command: `{' '.join([Path(sys.argv[0]).name] + sys.argv[1:])}`",
         "- semble: `SembleIndex.search(query, top_k=10, alpha=0.0)` (BM25 + its ranking stage; a stand-in "
         "static model, unused at alpha 0); ours: `search_code` keyword from our report "
         f"({a.ours.name}); metric and ideal DCG: eval_semble.py's",
         *([f"- skipped: {'; '.join(f'{n} ({why})' for n, why in skipped)}"] if skipped else []),
         "",
         "| repo | language | queries | semble index s | semble keyword | ours keyword |",
         "|---|---|---:|---:|---:|---:|"]
    for n, lang, nq, ti, s, o in rows:
        L.append(f"| {n} | {lang} | {nq} | {ti:.2f} | {s:.3f} | {E.f3(o)} |")
    both = [r for r in rows if r[5] is not None]
    L.append(f"| **mean over repos** | | {sum(r[2] for r in rows)} | {E.mean(r[3] for r in rows):.2f} | "
             f"**{E.mean(r[4] for r in rows):.3f}** | **{E.f3(E.mean(r[5] for r in both)) if both else '—'}** |")
    a.out.write_text("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    main()
