#!/usr/bin/env bash
# Build a code-index snapshot of a repository and pack it for publishing.
#
#   ci/publish-snapshot.sh <repo-dir> <out-dir> [<previous-snapshot-dir-or-tar.zst>]
#
# Runs `code-indexer index <repo-dir> --json [--previous <prev>]` into a work
# directory, then writes
#   <out-dir>/<name>-<snapshot-id>.tar.zst        the snapshot directory's files
#   <out-dir>/<name>-<snapshot-id>.manifest.json  a copy of its manifest
#   <out-dir>/<name>-latest.manifest.json       the same copy, naming the newest
#                                               (what `code-indexer sync --url` and
#                                               the config's snapshot_url point at)
# and prints the first two paths (one per line) on stdout. Logs go to stderr.
#
# The tarball is deterministic (sorted names, zero mtimes and owners, GNU
# format, single-threaded zstd), so equal snapshots give equal tarballs.
#
# The previous snapshot (for incremental builds) may be a snapshot directory
# or a tarball made by this script. If the build with it fails (e.g. it comes
# from an older schema), the build is retried once without it.
#
# Environment:
#   CODE_INDEXER      the code-indexer binary (default: build it with cargo
#                     into $CARGO_TARGET_DIR, default ~/.cache/code-index/target)
#   CODE_INDEX_ARGS   extra arguments for `code-indexer index` (word-split),
#                     e.g. "--no-embeddings --threads 2"
#   ZSTD_LEVEL        zstd level for the tarball (default 9; the Parquet
#                     files are compressed already)
#   CODE_INDEX_SIGNING_KEY  the secret key from `code-indexer keygen` (its
#                     content; a CI secret): the manifest is signed, and
#                     manifest.sig goes into the tarball and beside it as
#                     <name>-<id>.manifest.sig. Servers started with
#                     --trust-key <public key> refuse anything else.
#   CODE_INDEX_ARGS may hold --secrets=fail: the build then fails, listing
#                     the secrets found (kind, path, line, fingerprint),
#                     instead of publishing them redacted.
set -euo pipefail

log() { printf '[publish-snapshot] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

if [[ $# -lt 2 || $# -gt 3 ]]; then
  sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi

repo=$1 out=$2 prev=${3:-}
[[ -d $repo ]] || die "repository directory not found: $repo"
command -v zstd >/dev/null || die "zstd is not installed"
command -v tar >/dev/null || die "tar is not installed"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")

indexer=${CODE_INDEXER:-}
if [[ -z $indexer ]]; then
  target=${CARGO_TARGET_DIR:-$HOME/.cache/code-index/target}
  log "building code-indexer (release) into $target"
  CARGO_TARGET_DIR=$target cargo build --release --locked --manifest-path "$root/Cargo.toml" \
    -p code-index-builder --bin code-indexer >&2
  indexer=$target/release/code-indexer
fi
[[ -x $indexer ]] || die "code-indexer not executable: $indexer (set CODE_INDEXER)"

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/code-index-publish.XXXXXX")
base=
trap 'rm -rf "$work"; [[ -z $base ]] || rm -f "$out/.$base.tar.zst.tmp" "$out/.$base.manifest.json.tmp"' EXIT

# --- the previous snapshot, unpacked if it is a tarball --------------------
prev_args=()
if [[ -n $prev ]]; then
  if [[ -d $prev ]]; then
    prev_dir=$prev
  elif [[ -f $prev ]]; then
    prev_dir=$work/previous
    mkdir -p "$prev_dir"
    log "unpacking previous snapshot $prev"
    zstd -q -d -c -- "$prev" | tar -x -C "$prev_dir" -f -
  else
    die "previous snapshot not found: $prev"
  fi
  if [[ -f $prev_dir/manifest.json ]]; then
    prev_args=(--previous "$prev_dir")
  else
    log "warning: $prev holds no manifest.json; building from scratch"
  fi
fi

# --- build -------------------------------------------------------------------
# shellcheck disable=SC2206  # word splitting of CODE_INDEX_ARGS is intended
extra=(${CODE_INDEX_ARGS:-})
run_index() {
  rm -rf "$work/out"
  "$indexer" index "$repo" --out "$work/out" --json "${extra[@]}" "$@" >"$work/summary.json"
}
if ! run_index "${prev_args[@]}"; then
  if [[ ${#prev_args[@]} -gt 0 ]]; then
    log "warning: build with --previous failed; retrying without it"
    run_index
  else
    die "code-indexer index failed"
  fi
fi
log "summary: $(tr -d '\n' <"$work/summary.json")"

# The out dir holds exactly <name>/<snapshot-id>/ and <name>/latest.
names=()
for d in "$work/out"/*/; do names+=("$(basename "$d")"); done
[[ ${#names[@]} -eq 1 ]] || die "expected one repository directory in the build output, got: ${names[*]:-none}"
name=${names[0]}
id=$(tr -d '[:space:]' <"$work/out/$name/latest")
snap=$work/out/$name/$id
[[ -n $id && -f $snap/manifest.json ]] || die "build output lacks $name/$id/manifest.json"

# --- sign ----------------------------------------------------------------------
if [[ -n ${CODE_INDEX_SIGNING_KEY:-} ]]; then
  "$indexer" sign "$snap" >&2 || die "signing failed"
fi

# --- pack ----------------------------------------------------------------------
base=$name-$id
tarball=$out/$base.tar.zst
manifest=$out/$base.manifest.json
mapfile -t members < <(cd "$snap" && LC_ALL=C ls -A | LC_ALL=C sort)
LC_ALL=C tar --create --file=- --directory="$snap" --format=gnu \
  --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
  --mode='u+rw,go+r,go-w' -- "${members[@]}" |
  zstd -q -T1 "-${ZSTD_LEVEL:-9}" -c >"$out/.$base.tar.zst.tmp"
# Renamed into place within out-dir, so a reader never sees half a file.
mv -f "$out/.$base.tar.zst.tmp" "$tarball"
cp "$snap/manifest.json" "$out/.$base.manifest.json.tmp"
mv -f "$out/.$base.manifest.json.tmp" "$manifest"
if [[ -f $snap/manifest.sig ]]; then
  cp "$snap/manifest.sig" "$out/$base.manifest.sig"
fi
# The newest, last: it never names a tarball that is not in place yet.
cp "$snap/manifest.json" "$out/.$name-latest.manifest.json.tmp"
mv -f "$out/.$name-latest.manifest.json.tmp" "$out/$name-latest.manifest.json"

log "snapshot $id of $name: $(du -h "$tarball" | cut -f1) packed"
printf '%s\n%s\n' "$tarball" "$manifest"
