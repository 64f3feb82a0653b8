"""Fixtures for the end-to-end tests of `code-indexer`.

- `indexer`: the binary under test ($CODE_INDEXER, else
  $CARGO_TARGET_DIR/release/code-indexer with CARGO_TARGET_DIR defaulting to
  ~/.cache/code-index/target). A missing binary fails the run loudly.
- `corpora`: the real corpora directory ($CODE_INDEX_CORPORA, default
  ~/.cache/code-index/corpora), fetched once by ../shared/bench/corpora.sh.
- `snapshots`: builds a corpus snapshot once per session and hands out the
  same one to every test; `django_snapshot` and `go_snapshot` are shortcuts.
- `cli`: runs the binary (see helpers.run_cli).
- `model_dir`: the offline model's directory ($CODE_INDEX_MODEL_DIR, default
  ~/.cache/code-index/models/all-minilm-l6-v2), installed by scripts/setup.sh.

Corpus tests carry the `corpus` marker (they take minutes, not seconds) but
run by default; deselect them with `-m "not corpus"` for a quick loop.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from helpers import (
    CORPORA_SCRIPT,
    TEST_CORPORA,
    Snapshot,
    build,
    corpora_root,
    indexer_path,
    run_cli,
)

_BUILD_LOG: list[tuple[str, float, dict]] = []


def pytest_configure(config):
    config.addinivalue_line("markers", "corpus: builds or reads a real corpus (slow; part of the default run)")


@pytest.fixture(scope="session")
def indexer() -> Path:
    path = indexer_path()
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(
            f"code-indexer binary not found at {path}.\n"
            "Build it with `cargo build --release` (CARGO_TARGET_DIR defaults to ~/.cache/code-index/target) "
            "or point $CODE_INDEXER at it.",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def cli(indexer):
    """cli(*args, check=True, ...) -> helpers.Run"""

    def _cli(*args, **kw):
        return run_cli(indexer, *args, **kw)

    return _cli


@pytest.fixture(scope="session")
def model_dir() -> Path:
    d = Path(os.environ.get("CODE_INDEX_MODEL_DIR") or Path.home() / ".cache/code-index/models/all-minilm-l6-v2")
    if not (d / "model.safetensors").is_file():
        pytest.fail(f"the offline model is not installed in {d}: run scripts/setup.sh", pytrace=False)
    return d


@pytest.fixture(scope="session")
def corpora() -> Path:
    """The corpora directory, with the five test corpora present (fetched if not)."""
    root = corpora_root()
    if not CORPORA_SCRIPT.is_file():
        missing = [c for c in TEST_CORPORA if not (root / c).is_dir()]
        if missing:
            pytest.fail(f"corpora {missing} missing in {root} and {CORPORA_SCRIPT} not found", pytrace=False)
        return root
    # The script is idempotent: stamped corpora are skipped, so this is cheap
    # once they are there (and fixes a corpus whose pin changed).
    env = dict(os.environ, CORPORA=" ".join(TEST_CORPORA))
    p = subprocess.run(["bash", str(CORPORA_SCRIPT), str(root)], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        pytest.fail(f"fetching corpora into {root} failed:\n{p.stderr[-3000:]}", pytrace=False)
    return root


class SnapshotCache:
    """One snapshot per corpus per session (built with --no-embeddings)."""

    def __init__(self, indexer: Path, corpora: Path, out: Path):
        self.indexer, self.corpora, self.out = indexer, corpora, out
        self._built: dict[str, Snapshot] = {}

    def __call__(self, corpus: str) -> Snapshot:
        if corpus not in self._built:
            repo = self.corpora / corpus
            assert repo.is_dir(), f"corpus {corpus} missing in {self.corpora}"
            snap = build(self.indexer, repo, self.out, "--no-embeddings")
            _BUILD_LOG.append((corpus, snap.seconds, snap.info))
            self._built[corpus] = snap
        return self._built[corpus]


@pytest.fixture(scope="session")
def snapshots(indexer, corpora, tmp_path_factory) -> SnapshotCache:
    return SnapshotCache(indexer, corpora, tmp_path_factory.mktemp("corpus-snapshots"))


@pytest.fixture(scope="session")
def server_bin(indexer) -> Path:
    """The server binary built beside `indexer`."""
    return indexer.parent / "code-index-mcp"


@pytest.fixture(scope="session")
def django_snapshot(snapshots) -> Snapshot:
    return snapshots("django")


@pytest.fixture(scope="session")
def go_snapshot(snapshots) -> Snapshot:
    return snapshots("go-stdlib")


def pytest_terminal_summary(terminalreporter):
    if not _BUILD_LOG:
        return
    terminalreporter.section("code-indexer corpus builds")
    for corpus, seconds, info in _BUILD_LOG:
        terminalreporter.write_line(
            f"{corpus:12s} {seconds:7.1f}s  files={info.get('files')}  snapshot={info.get('snapshot_id')}"
        )
