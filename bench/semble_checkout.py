#!/usr/bin/env python3
"""Check out the repositories of a semble-format benchmark at the revisions
its repos.json pins, one directory per repository, as bench/eval_semble.py
reads them (`--repos-dir`):

    python3 bench/semble_checkout.py --semble-dir bench/data/semble-heldout --repos-dir DIR
    python3 bench/semble_checkout.py ... --mirrors /work/.mirror   # local bare mirrors, no network

Each repository is read from `<mirrors>/<owner>+<name>/repo` (a bare mirror)
when that exists, else cloned from its `url` (network); when the clone's
branches and tags do not reach the pinned revision, that commit is fetched by
its id. The revision is extracted with `git archive <revision> | tar -x` (a
repository whose .gitattributes uses `export-ignore` would lose those files)
into `<repos-dir>/<name>.partial`, renamed to `<repos-dir>/<name>` once whole,
so a failed checkout leaves nothing behind. An existing `<repos-dir>/<name>`
is kept. A repository that cannot be checked out is reported, the others go
on, and the exit status is 1; eval_semble.py reports it as having no checkout.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def has_commit(git_dir: Path, rev: str) -> bool:
    return subprocess.run(["git", "-C", str(git_dir), "cat-file", "-e", rev + "^{commit}"],
                          capture_output=True).returncode == 0


def extract(git_dir: Path, rev: str, dest: Path) -> None:
    """`git archive rev | tar -x` into dest, whole or not at all."""
    part = dest.with_name(dest.name + ".partial")
    shutil.rmtree(part, ignore_errors=True)
    part.mkdir(parents=True)
    try:
        archive = subprocess.Popen(["git", "-C", str(git_dir), "archive", rev], stdout=subprocess.PIPE)
        tar = subprocess.run(["tar", "-x", "-C", str(part)], stdin=archive.stdout)
        archive.stdout.close()
        if archive.wait() != 0 or tar.returncode != 0:
            raise RuntimeError(f"git archive {rev} | tar -x failed for {git_dir}")
        part.rename(dest)
    finally:
        shutil.rmtree(part, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--semble-dir", type=Path, required=True, help="holds repos.json")
    ap.add_argument("--repos-dir", type=Path, required=True)
    ap.add_argument("--mirrors", type=Path,
                    help="directory of bare mirrors named <owner>+<name>/repo (a repository without one is cloned)")
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
            if not has_commit(git_dir, rev) and git_dir != mirror:
                subprocess.run(["git", "-C", str(git_dir), "fetch", "--quiet", "--filter=blob:none", "origin", rev])
            if not has_commit(git_dir, rev):
                failed.append(f"{name}: {rev} not in {mirror if git_dir == mirror else url}")
                continue
            try:
                extract(git_dir, rev, dest)
            except (OSError, RuntimeError) as e:
                failed.append(f"{name}: {e}")
                continue
            print(f"{name}: {rev[:12]} -> {dest}", file=sys.stderr)
    for f in failed:
        print("skipped: " + f, file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
