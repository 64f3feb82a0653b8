#!/usr/bin/env bash
# Build benchmark: `code-indexer index --no-embeddings` next to `ctags -R`, on
# the same corpus, in the same session (compare the ratios, not absolutes).
#
#   bench/bench_build.sh [--linux] [--runs N] [CORPUS...]
#
# CORPUS defaults to "django go-stdlib" (plus "linux" with --linux or
# BENCH_LINUX=1; it is 1.3 GB and takes minutes per run). For each corpus it
# reports the source bytes (the files ripgrep would search, which is what the
# indexer reads), the snapshot bytes and their ratio, wall time and peak RSS of
# both tools (from /usr/bin/time -v), and the time ratio. When one run of each
# tool takes less than SHORT_RUN_S seconds, hyperfine repeats them (N runs,
# default 5) and the mean is reported instead of the single run.
# Prints a Markdown table and writes it to bench/results/build-<corpus>.md.
#
# Environment:
#   CODE_INDEXER        binary (default $CARGO_TARGET_DIR/release/code-indexer,
#                       CARGO_TARGET_DIR defaulting to ~/.cache/code-index/target)
#   CODE_INDEX_CORPORA  corpora directory (default ~/.cache/code-index/corpora),
#                       filled by ../shared/bench/corpora.sh when missing
#   SHORT_RUN_S         threshold for the hyperfine repeat (default 20)
set -euo pipefail

log() { printf '[bench] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
results=$here/results

runs=5
linux=${BENCH_LINUX:-0}
corpora=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --linux) linux=1 ;;
    --runs) runs=${2:?--runs needs a number}; shift ;;
    -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) corpora+=("$1") ;;
  esac
  shift
done
[[ ${#corpora[@]} -gt 0 ]] || corpora=(django go-stdlib)
[[ $linux == 1 && " ${corpora[*]} " != *" linux "* ]] && corpora+=(linux)

target=${CARGO_TARGET_DIR:-$HOME/.cache/code-index/target}
indexer=${CODE_INDEXER:-$target/release/code-indexer}
[[ -x $indexer ]] || die "code-indexer not found at $indexer (build it with cargo build --release, or set CODE_INDEXER)"
for tool in ctags rg /usr/bin/time python3; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
have_hyperfine=0; command -v hyperfine >/dev/null && have_hyperfine=1
short_run=${SHORT_RUN_S:-20}

cache=${CODE_INDEX_CORPORA:-$HOME/.cache/code-index/corpora}
fetch=$root/../shared/bench/corpora.sh
missing=()
for c in "${corpora[@]}"; do [[ -d $cache/$c ]] || missing+=("$c"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  [[ -f $fetch ]] || die "corpora ${missing[*]} missing in $cache and $fetch not found"
  log "fetching ${missing[*]} into $cache"
  CORPORA="${missing[*]}" bash "$fetch" "$cache" >&2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/code-index-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$results"

# timed NAME CMD... : run once under /usr/bin/time -v; sets T_WALL (s) and T_RSS (MB)
timed() {
  local name=$1; shift
  /usr/bin/time -v -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err" || {
    tail -n 20 "$work/$name.err" >&2; die "$name failed: $*"
  }
  read -r T_WALL T_RSS < <(python3 - "$work/$name.time" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
wall = re.search(r"Elapsed \(wall clock\) time.*?: (\S+)", text).group(1)
secs = 0.0
for part in wall.split(":"):
    secs = secs * 60 + float(part)
rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
print(f"{secs:.2f} {rss_kb / 1024:.0f}")
PY
)
}

# hyperfine_mean NAME PREPARE CMD : mean wall seconds over $runs runs
hyperfine_mean() {
  local name=$1 prepare=$2 cmd=$3
  hyperfine --style none --warmup 1 --runs "$runs" --prepare "$prepare" \
    --export-json "$work/$name.hf.json" "$cmd" >&2
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"][0]; print("%.2f ± %.2f" % (r["mean"], r["stddev"] or 0))' \
    "$work/$name.hf.json"
}

mb() { python3 -c "import sys; print(f'{int(sys.argv[1]) / 1e6:.1f}')" "$1"; }
ratio() { python3 -c "import sys; a, b = map(float, sys.argv[1:3]); print(f'{a / b:.2f}' if b else 'n/a')" "$1" "$2"; }

cores=$(getconf _NPROCESSORS_ONLN)  # not nproc: it honours OMP_NUM_THREADS=1 from env.sh
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
tool_version=$("$indexer" --version 2>/dev/null | head -n 1 || echo "code-indexer ?")
ctags_version=$(ctags --version | head -n 1 | cut -d, -f1)

for corpus in "${corpora[@]}"; do
  src=$cache/$corpus
  [[ -d $src ]] || die "corpus $corpus not found in $cache"
  load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
  log "$corpus: measuring source"
  files=$(cd "$src" && rg --no-config --files | wc -l)
  src_bytes=$(cd "$src" && rg --no-config --files -0 | du -cb --files0-from=- | tail -n 1 | cut -f1)

  out=$work/out-$corpus
  log "$corpus: code-indexer index --no-embeddings"
  rm -rf "$out"
  timed indexer "$indexer" index "$src" --out "$out" --no-embeddings --json
  ci_wall=$T_WALL ci_rss=$T_RSS
  read -r snap_dir indexed < <(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["snapshot_dir"], d["files"])' "$work/indexer.out")
  snap_bytes=$(du -cb "$snap_dir"/* | tail -n 1 | cut -f1)

  log "$corpus: ctags -R"
  rm -f "$work/tags"
  timed ctags bash -c 'cd "$1" && exec ctags -R -f "$2" .' _ "$src" "$work/tags"
  ct_wall=$T_WALL ct_rss=$T_RSS

  ci_time="$ci_wall" ct_time="$ct_wall" method="one run each, /usr/bin/time -v"
  if [[ $have_hyperfine == 1 ]] && python3 -c "import sys; sys.exit(0 if max(map(float, sys.argv[1:])) < $short_run else 1)" "$ci_wall" "$ct_wall"; then
    log "$corpus: short runs, repeating with hyperfine ($runs runs)"
    ci_time=$(hyperfine_mean indexer "rm -rf '$out'" "'$indexer' index '$src' --out '$out' --no-embeddings")
    ct_time=$(hyperfine_mean ctags "rm -f '$work/tags'" "cd '$src' && ctags -R -f '$work/tags' .")
    method="hyperfine mean ± sd of $runs runs (1 warm-up); peak RSS from one /usr/bin/time -v run"
  fi
  time_ratio=$(ratio "${ci_time%% *}" "${ct_time%% *}")

  table=$(cat <<MD
## Build benchmark: $corpus

| | code-indexer | ctags -R |
|---|---:|---:|
| wall time (s) | $ci_time | $ct_time |
| peak RSS (MB) | $ci_rss | $ct_rss |
| output (MB) | $(mb "$snap_bytes") (snapshot) | $(mb "$(stat -c %s "$work/tags")") (tags) |

| corpus | files (rg) | files indexed | source MB | snapshot MB | snapshot/source | time code-indexer/ctags |
|---|---:|---:|---:|---:|---:|---:|
| $corpus | $files | $indexed | $(mb "$src_bytes") | $(mb "$snap_bytes") | $(ratio "$snap_bytes" "$src_bytes") | $time_ratio |

Source: the files \`rg --files\` lists (what the indexer reads; "indexed" leaves out binaries and default exclusions).
Timing: $method. code-indexer uses all $cores cores by default; ctags is single-threaded.
Tools: $tool_version; $ctags_version. code-index commit $commit; $(date -u +%Y-%m-%d) on $(uname -m), $cores cores; load average before the runs: $load (a busy machine skews both columns).
MD
)
  printf '%s\n\n' "$table"
  printf '%s\n' "$table" >"$results/build-$corpus.md"
  log "$corpus: wrote $results/build-$corpus.md"
done
