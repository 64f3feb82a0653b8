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
import collections, os, random, sys

import duckdb

from jedi_judge import Judge, verdict


def main():
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
    where n.receiver_type is not null and n.src_path like '%.py'
    """).fetchall()

    def cat(r):
        o = (r[4], r[5]); n = (r[8], r[9])
        if o == n: return 'same-res' if r[4] else 'same-unres'
        return 'new' if not r[4] else 'lost' if not r[8] else 'changed'
    by = collections.defaultdict(list)
    for r in rows: by[cat(r)].append(r)
    random.seed(7)
    judge = Judge(root)
    for k in ['new', 'changed', 'lost', 'same-res']:
        sample = random.sample(by[k], min(N, len(by[k])))
        tally = collections.Counter(); ex = []
        for r in sample:
            jt = judge.target(r[0], r[1], r[2])
            vo = verdict(r[4], r[6], r[7], jt, r[5]); vn = verdict(r[8], r[10], r[11], jt, r[9])
            tally[(vo, vn)] += 1
            if vn != 'agree' and len(ex) < 8: ex.append((r[0], r[1], r[2], r[3], r[9], jt if isinstance(jt, str) else jt[:2]))
        print('==', k, len(by[k]), 'sample', len(sample), '(old verdict, new verdict):', dict(tally))
        for e in ex: print('   ', e)
        sys.stdout.flush()


if __name__ == '__main__':
    main()
