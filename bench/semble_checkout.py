#!/usr/bin/env python3
"""Check out the repositories of a semble-format benchmark at the revisions
its repos.json pins, one directory per repository, as bench/eval_semble.py
reads them (`--repos-dir`):

    python3 bench/semble_checkout.py --semble-dir bench/data/semble-heldout --repos-dir DIR
    python3 bench/semble_checkout.py ... --mirrors /work/.mirror   # local bare mirrors, no network

Each repository is cloned from its `url` (or read from `<mirrors>/<owner>+<name>/repo`,
a bare mirror, when that exists) and its pinned revision is extracted with
`git archive <revision> | tar -x` into `<repos-dir>/<name>`. An existing
`<repos-dir>/<name>` is left as it is. A revision the source does not hold is
reported and skipped; eval_semble.py then reports the repository as having no checkout.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def has_commit(git_dir: Path, rev: str) -> bool:
    return subprocess.run(["git", "-C", str(git_dir), "cat-file", "-e", rev + "^{commit}"],
                          capture_output=True).returncode == 0


def extract(git_dir: Path, rev: str, dest: Path) -> None:
    dest.mkdir(parents=True)
    archive = subprocess.Popen(["git", "-C", str(git_dir), "archive", rev], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise RuntimeError(f"git archive {rev} failed in {git_dir}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--semble-dir", type=Path, required=True, help="holds repos.json")
    ap.add_argument("--repos-dir", type=Path, required=True)
    ap.add_argument("--mirrors", type=Path, help="directory of bare mirrors named <owner>+<name>/repo")
    ap.add_argument("--repo", action="append", default=[], help="only these names (repeatable)")
    a = ap.parse_args()
    specs = json.loads((a.semble_dir / "repos.json").read_text())
    failed = []
    for spec in specs:
        name, url, rev = spec["name"], spec["url"], spec["revision"]
        if a.repo and name not in a.repo:
            continue
        dest = a.repos_dir / name
        if dest.exists():
            print(f"{name}: {dest} exists, kept", file=sys.stderr)
            continue
        owner_repo = url.rstrip("/").removesuffix(".git").split("github.com/")[-1]
        mirror = a.mirrors / owner_repo.replace("/", "+") / "repo" if a.mirrors else None
        with tempfile.TemporaryDirectory() as tmp:
            if mirror and mirror.is_dir():
                git_dir = mirror
            else:
                git_dir = Path(tmp) / "repo.git"
                r = subprocess.run(["git", "clone", "--bare", "--filter=blob:none", "--quiet", url, str(git_dir)])
                if r.returncode != 0:
                    failed.append(f"{name}: clone of {url} failed")
                    continue
            if not has_commit(git_dir, rev):
                failed.append(f"{name}: {rev} not in {url}")
                continue
            extract(git_dir, rev, dest)
            print(f"{name}: {rev[:12]} -> {dest}", file=sys.stderr)
    for f in failed:
        print("skipped: " + f, file=sys.stderr)


if __name__ == "__main__":
    main()
