"""Jedi (pip `jedi`) as the oracle of a Python call's target, shared by py_jedi_check.py,
py_jedi_alias_check.py and tests/test_attr_receivers.py.

`Judge(root).target(path, line, dst)` runs Jedi's `goto(follow_imports=True)` on the last name of the
call `dst` as written on that line of `root/path` and lists what it infers as (repo-relative path or
`EXT:…`/`builtin`, full name, line). `verdict(...)` compares it with a snapshot's answer: a target
agrees when Jedi names the same file and a line inside the definition, or the same dotted name (Jedi
answers from its bundled django-stubs, which name `django.forms.fields.Field.clean`); an unresolved
call agrees when every Jedi definition is outside the repository (stdlib, typeshed), not a stub of the
repository itself. `nocol`: the call is not on that line as written; `jedi-none`: Jedi infers nothing.
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
        if whole:
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
    if path is None:
        outside = all((p.startswith('EXT:') and '/django-stubs/' not in p) or p == 'builtin' for p, _, _ in jt)
        return 'agree' if outside else 'disagree'
    full = modname(path, q)
    inside = any((p == path and ln is not None and start <= ln <= end) or fn == full for p, fn, ln in jt)
    return 'agree' if inside else 'disagree'
