"""Judge Python calls through an attribute of the instance that the caller's class does not type
(`self.client.get()` in a subclass of the test case that assigns `self.client`) with Jedi, stop 62.

Usage: python3 py_jedi_inherited_check.py OLD_SNAPSHOT_DIR NEW_SNAPSHOT_DIR [N]

Both snapshots are of the pinned django corpus (~/.cache/code-index/corpora/django). The calls of
NEW written `self.<attr>.<method>` / `cls.<attr>.<method>` without `edges.receiver_type` (feature 18
resolves them through the nearest base's `attribute` edge, and stores no type: it is written in the
base's file) are split by what changed against OLD (new, changed, lost, same-res), N of each are
drawn (seed 7) and judged as in py_jedi_check.py (jedi_judge.verdict).
"""
import sys

import duckdb

from jedi_judge import Judge, compare


def main():
    root = '~/.cache/code-index/corpora/django'
    old, new = sys.argv[1], sys.argv[2]
    N = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    c = duckdb.connect()
    for n, d in [('o', old), ('n', new)]:
        c.execute(f"create view {n}e as select * from '{d}/edges.parquet' where kind='calls'")
        c.execute(f"create view {n}s as select * from '{d}/symbols.parquet'")
    rows = c.sql(r"""
    select n.src_path,n.line,n.dst_name,n.receiver_type,
     os.path, os.qualified_name, os.start_line, os.end_line,
     ns.path, ns.qualified_name, ns.start_line, ns.end_line
    from ne n join oe o using(src_path,line,dst_name,src_symbol)
    left join os on os.symbol_id=o.dst_symbol_id left join ns on ns.symbol_id=n.dst_symbol_id
    where n.receiver_type is null and n.src_path like '%.py'
      and regexp_matches(n.dst_name, '^(self|cls)\.[A-Za-z_][A-Za-z_0-9]*\.[A-Za-z_][A-Za-z_0-9]*$')
    """).fetchall()

    compare(rows, ['new', 'changed', 'lost', 'same-res'], N, Judge(root), examples=8)


if __name__ == '__main__':
    main()
