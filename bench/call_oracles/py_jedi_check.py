"""Judge Python calls through a local name (`x.m()`) with Jedi (pip `jedi`), stop 59.

Usage: python3 py_jedi_check.py OLD_SNAPSHOT_DIR NEW_SNAPSHOT_DIR [N]

Both snapshots are of the pinned django corpus (~/.cache/code-index/corpora/django). The calls of
NEW that carry `edges.receiver_type` are split by what changed against OLD (new: resolved only now;
changed: another target; lost: resolved only before; same-res: the same target), N of each are drawn
(seeded), and Jedi's `goto(follow_imports=True)` on the method name gives the definition it infers.
A target agrees when Jedi names the same file and a line inside the definition, or the same dotted
name (Jedi answers from its bundled django-stubs, which name `django.forms.fields.Field.clean`); an
unresolved call agrees when every Jedi definition is outside the repository (stdlib, typeshed), not
a stub of django itself. Jedi's stubs are older than Django 4.2 in places (`MultiValueField.clean`,
`RenderableFormMixin.as_p`): read the disagreements before counting them as errors.
"""
import sys

import duckdb

from jedi_judge import Judge, compare


def main(where="n.receiver_type is not null"):
    """Draw and judge the calls of NEW matching `where` (SQL over `n`, NEW's edge), by what changed."""
    root = '~/.cache/code-index/corpora/django'
    old, new = sys.argv[1], sys.argv[2]
    N = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    c = duckdb.connect()
    for n, d in [('o', old), ('n', new)]:
        c.execute(f"create view {n}e as select * from '{d}/edges.parquet' where kind='calls'")
        c.execute(f"create view {n}s as select * from '{d}/symbols.parquet'")
    rows = c.sql("""
    select n.src_path,n.line,n.dst_name,n.receiver_type,
     os.path, os.qualified_name, os.start_line, os.end_line,
     ns.path, ns.qualified_name, ns.start_line, ns.end_line
    from ne n join oe o using(src_path,line,dst_name,src_symbol)
    left join os on os.symbol_id=o.dst_symbol_id left join ns on ns.symbol_id=n.dst_symbol_id
    where n.src_path like '%.py' and (""" + where + """)
    """).fetchall()

    compare(rows, ['new', 'changed', 'lost', 'same-res'], N, Judge(root), examples=8)

if __name__ == '__main__':
    main()
