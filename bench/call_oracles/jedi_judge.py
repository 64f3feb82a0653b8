"""Jedi (pip `jedi`) as the oracle of a Python call's target, shared by py_jedi_check.py,
py_jedi_alias_check.py and tests/test_attr_receivers.py.

`Judge(root).target(path, line, dst)` runs Jedi's `goto(follow_imports=True)` on the last name of the
call `dst` as written on that line of `root/path` and lists what it infers as (repo-relative path or
`EXT:…`/`builtin`, or `LOCAL` for a name bound inside a function, full name, line). `verdict(...)` compares it with a snapshot's answer: a target
agrees when Jedi names the same file and a line inside the definition, or the same dotted name (Jedi
answers from its bundled django-stubs, which name `django.forms.fields.Field.clean`); an unresolved
call agrees when every Jedi definition is outside the repository (stdlib, typeshed), not a stub of the
repository itself. `nocol`: the call is not on that line as written; `jedi-none`: Jedi infers nothing.
`compare(...)` draws the rows of each group of what changed between two snapshots and prints the tally.
"""
import os
import re

import jedi


class Judge:
    def __init__(self, root):
        self.root = os.path.expanduser(root)
        self.project = jedi.Project(self.root)
        self.sources = {}

    def source(self, path):
        src = self.sources.get(path)
        if src is None:
            with open(os.path.join(self.root, path), encoding='utf-8', errors='replace') as f:
                src = f.read()
            self.sources[path] = src
        return src

    def target(self, path, line, dst, whole=False):
        """Jedi's definitions of the call `dst` at `line` of `path`. `whole`: match `dst`'s dotted
        parts exactly as a name (`_`, `capi.get_ds_name`); else its receiver as written, then `.m`."""
        src = self.source(path)
        text = src.split('\n')[line - 1]
        if whole or '.' not in dst:
            parts = dst.split('.')
            pat = r'(?<![\w.])' + r'\s*\.\s*'.join(re.escape(p) for p in parts) + r'\b'
            last = parts[-1]
        else:
            recv, last = dst.rsplit('.', 1)
            pat = r'\b' + re.escape(recv) + r'\s*\.\s*' + re.escape(last) + r'\b'
        mm = re.search(pat, text)
        if not mm:
            return 'nocol'
        col = mm.end() - len(last)
        script = jedi.Script(src, path=os.path.join(self.root, path), project=self.project)
        try:
            ds = script.goto(line, col, follow_imports=True)
        except Exception:
            return 'err'
        out = []
        for d in ds:
            # A name bound inside a function (`g = trans_real.f`, a
            # parameter, a loop variable): a local value, nothing a call
            # graph of definitions places.
            if d.type in ('statement', 'param') and getattr(d.parent(), 'type', None) == 'function':
                out.append(('LOCAL', d.full_name, d.line))
                continue
            if d.module_path is None:
                out.append(('builtin', d.full_name, None))
                continue
            mp = str(d.module_path)
            if mp.startswith(self.root):
                rel = os.path.relpath(mp, self.root)
            else:
                rel = 'EXT:' + mp.split('site-packages/')[-1].split('lib/python')[-1]
            out.append((rel, d.full_name, d.line))
        return out


def modname(path, q):
    m = path[:-3].replace('/', '.')
    if m.endswith('.__init__'):
        m = m[:-9]
    return m + '.' + q


def verdict(path, start, end, jt, q=None):
    """`agree`/`disagree` of a snapshot's target (`path` None: unresolved) with Jedi's `jt`."""
    if jt in ('nocol', 'err'):
        return jt
    if not jt:
        return 'jedi-none'
    if all(p == 'LOCAL' for p, _, _ in jt):
        return 'agree' if path is None else 'disagree'
    if path is None:
        outside = all((p.startswith('EXT:') and '/django-stubs/' not in p) or p in ('builtin', 'LOCAL')
                      for p, _, _ in jt)
        return 'agree' if outside else 'disagree'
    full = modname(path, q)
    inside = any((p == path and ln is not None and start <= ln <= end) or fn == full for p, fn, ln in jt)
    return 'agree' if inside else 'disagree'


def paired_calls(old, new, where='true'):
    """The Python calls of snapshot NEW matching `where` (SQL over `n`, NEW's edge; `os`/`ns`: the
    old and new targets), each joined with the same call of OLD (file, caller, name, line; a
    module-level call's NULL caller counts as equal), as rows (src, line, dst, receiver_type, old
    path, old qname, old start, old end, new path, new qname, new start, new end) for `compare`."""
    import duckdb
    c = duckdb.connect()
    for k, d in [('o', old), ('n', new)]:
        c.execute(f"create view {k}e as select * from '{d}/edges.parquet' where kind = 'calls'")
        c.execute(f"create view {k}s as select * from '{d}/symbols.parquet'")
    return c.sql("""
        select n.src_path, n.line, n.dst_name, n.receiver_type,
               os.path, os.qualified_name, os.start_line, os.end_line,
               ns.path, ns.qualified_name, ns.start_line, ns.end_line
        from ne n join oe o on o.src_path = n.src_path and o.line = n.line and o.dst_name = n.dst_name
            and o.src_symbol is not distinct from n.src_symbol
        left join os on os.symbol_id = o.dst_symbol_id left join ns on ns.symbol_id = n.dst_symbol_id
        where n.src_path like '%.py' and (""" + where + ")").fetchall()


def category(r):
    """What changed for a row (src, line, dst, extra, old path, old qname, old start, old end,
    new path, new qname, new start, new end): new, changed, lost, same-res or same-unres."""
    o = (r[4], r[5]); n = (r[8], r[9])
    if o == n:
        return 'same-res' if r[4] else 'same-unres'
    return 'new' if not r[4] else 'lost' if not r[8] else 'changed'


def compare(rows, groups, n, judge, whole=False, examples=8):
    """Draw up to `n` rows of each group (seeded), judge the old and the new target with Jedi and print
    the tally of (old verdict, new verdict) pairs, with the first disagreements of the new one."""
    import collections
    import random
    import sys
    by = collections.defaultdict(list)
    for r in rows:
        by[category(r)].append(r)
    print({k: len(v) for k, v in by.items()})
    random.seed(7)
    for k in groups:
        sample = random.sample(by[k], min(n, len(by[k])))
        tally = collections.Counter(); ex = []
        for r in sample:
            jt = judge.target(r[0], r[1], r[2], whole=whole)
            vo = verdict(r[4], r[6], r[7], jt, r[5]); vn = verdict(r[8], r[10], r[11], jt, r[9])
            tally[(vo, vn)] += 1
            if vn != 'agree' and len(ex) < examples:
                ex.append((r[0], r[1], r[2], r[3], r[8], r[9], jt if isinstance(jt, str) else jt[:2]))
        print('==', k, len(by[k]), 'sample', len(sample), '(old verdict, new verdict):', dict(tally))
        for e in ex:
            print('   ', e)
        sys.stdout.flush()
