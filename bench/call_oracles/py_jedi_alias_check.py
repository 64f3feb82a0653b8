"""Judge Python calls and bases written through a renaming import (feature 16) with Jedi (pip `jedi`), stop 60.

Usage: python3 py_jedi_alias_check.py OLD_SNAPSHOT_DIR NEW_SNAPSHOT_DIR [N]

Both snapshots are of the pinned django corpus. The calls and `extends` edges of NEW whose first name is an
alias an import of the file binds (`edges.alias`: `_`, `capi.get_ds_name`, `BaseLoader`) are split by what
changed against OLD (new, changed, lost, same-res, same-unres), N of each are drawn (seeded), and Jedi's
`goto(follow_imports=True)` on the last name gives the definition it infers. Agreement is judged as in
py_jedi_check.py (same file and a line inside the definition, or the same dotted name; an unresolved edge
agrees when every Jedi definition is outside the repository).
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
        c.execute(f"create view {n}e as select * from '{d}/edges.parquet' where kind in ('calls','extends')")
        c.execute(f"create view {n}s as select * from '{d}/symbols.parquet'")
    c.execute(f"create view al as select distinct src_path, alias from '{new}/edges.parquet' where kind='imports' and alias is not null")
    rows = c.sql("""
    select n.src_path,n.line,n.dst_name,n.kind,
     os.path, os.qualified_name, os.start_line, os.end_line,
     ns.path, ns.qualified_name, ns.start_line, ns.end_line
    from ne n join oe o using(src_path,line,dst_name,src_symbol,kind)
    join al on al.src_path=n.src_path and al.alias=split_part(n.dst_name,'.',1)
    left join os on os.symbol_id=o.dst_symbol_id left join ns on ns.symbol_id=n.dst_symbol_id
    where n.src_path like '%.py'
    """).fetchall()

    compare(rows, ['new', 'changed', 'lost', 'same-res', 'same-unres'], N, Judge(root), whole=True, examples=6)

if __name__ == '__main__':
    main()
