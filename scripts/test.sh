#!/usr/bin/env bash
# The one test command: unit tests, then end-to-end tests against real
# corpora and real oracles (ripgrep, universal-ctags, DuckDB, pyarrow).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$REPO_ROOT"
scripts/setup.sh --deps-only
if [[ -f "$CORPORA_SCRIPT" ]]; then
  CORPORA="django go-stdlib rust-crates ts-rxjs" bash "$CORPORA_SCRIPT" "$CODE_INDEX_CORPORA" >/dev/null
else
  echo "[test] no corpora script at $CORPORA_SCRIPT: corpus tests will be skipped" >&2
fi
cargo build --release --workspace --all-targets
cargo test --release --workspace
python3 -m pytest tests -q -p no:cacheprovider "$@"
