#!/usr/bin/env bash
# Runs every property-test target for a fixed time each (default 600 s) and
# prints what each did; a failure prints the shrunk input, which then goes
# into that target's regression list in the code. CI runs the same targets
# by count (code_index_schemas::fuzz::CI_CASES) as part of `cargo test`.
#
#   bench/fuzz.sh [SECONDS] [TARGET ...]
#
# Targets: query_parse query_semantics cursor_text cursor_bytes cursor_edit
# path_arguments tool_arguments globs manifest_reader config_reader.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/env.sh"
cd "$REPO_ROOT"
secs=${1:-600}
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(query_parse query_semantics cursor_text cursor_bytes cursor_edit path_arguments tool_arguments globs manifest_reader config_reader)
fi
# target -> the test that holds it
declare -A test_of=(
  [query_parse]=fuzz_query_parse [query_semantics]=fuzz_query_semantics
  [cursor_text]=fuzz_cursor [cursor_bytes]=fuzz_cursor [cursor_edit]=fuzz_cursor
  [path_arguments]=fuzz_path_arguments [tool_arguments]=fuzz_tool_arguments [globs]=fuzz_globs
  [manifest_reader]=fuzz_manifest_reader [config_reader]=fuzz_config_reader
)
cargo test --release --workspace --no-run >/dev/null 2>&1
status=0
for t in "${targets[@]}"; do
  test=${test_of[$t]:?unknown target $t}
  echo "== $t ($test, ${secs} s)"
  if ! CODE_INDEX_FUZZ_SECONDS=$secs CODE_INDEX_FUZZ=$t cargo test --release --workspace --lib -q "$test" -- --nocapture --test-threads 1 2>&1 \
      | grep -oE "fuzz [a-z_]+: [0-9]+ cases.*|panicked.*|failed after.*|minimal failing.*"; then
    status=1
  fi
done
exit $status
