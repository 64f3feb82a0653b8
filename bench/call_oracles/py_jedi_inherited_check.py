"""Judge Python calls through an attribute of the instance that the caller's class does not type
(`self.client.get()` in a subclass of the test case that assigns `self.client`) with Jedi, stop 62.

Usage: python3 py_jedi_inherited_check.py OLD_SNAPSHOT_DIR NEW_SNAPSHOT_DIR [N]

Both snapshots are of the pinned django corpus (~/.cache/code-index/corpora/django). The calls of
NEW written `self.<attr>.<method>` / `cls.<attr>.<method>` without `edges.receiver_type` (feature 18
resolves them through the nearest base's `attribute` edge, and stores no type: it is written in the
base's file) are split by what changed against OLD (new, changed, lost, same-res), N of each are
drawn (seed 7) and judged as in py_jedi_check.py (jedi_judge.verdict).
"""
from py_jedi_check import main

if __name__ == '__main__':
    main(r"n.receiver_type is null and regexp_matches(n.dst_name, "
         r"'^(self|cls)\.[A-Za-z_][A-Za-z_0-9]*\.[A-Za-z_][A-Za-z_0-9]*$')")
