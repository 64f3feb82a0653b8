"""Python oracle: scope-aware expectations for each call, from the source (ast)."""
import ast, builtins, collections, json, random, sys, pickle
sys.path.insert(0, '/tmp/s56/calls2')
from common import load, line_of

BUILTINS = set(dir(builtins))
d, files, mods, syms, edges = load('django', "= 'python'")

# module name -> path (same convention as the project: module_path + stem; __init__ is the package)
modpath = {}
path2mod = {}
for p, mp in mods.items():
    stem = p.rsplit('/', 1)[-1]
    stem = stem[:-3] if stem.endswith('.py') else stem[:-4] if stem.endswith('.pyi') else stem
    base = mp or ''
    name = base if stem == '__init__' else (f'{base}.{stem}' if base else stem)
    if name:
        modpath.setdefault(name, p)
        path2mod[p] = name


class ModInfo:
    def __init__(self, path):
        self.path = path
        self.defs = {}      # name -> (kind, qualname)
        self.imports = {}   # name -> ('module', m) | ('from', m, x)
        self.assigns = set()
        self.stars = []
        self.classes = {}   # qualname -> dict(bases=[expr], methods=set, attrs=set)
        self.tree = None


def pkg_of(path):
    m = path2mod.get(path, '')
    if path.endswith('__init__.py'):
        return m
    return m.rsplit('.', 1)[0] if '.' in m else ''


def abs_module(path, node):
    if node.level == 0:
        return node.module or ''
    base = pkg_of(path).split('.') if pkg_of(path) else []
    for _ in range(node.level - 1):
        if not base:
            return None
        base.pop()
    s = '.'.join(base)
    if node.module:
        s = f'{s}.{node.module}' if s else node.module
    return s


def import_bindings(path, node):
    out = {}
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.asname:
                out[a.asname] = ('module', a.name)
            else:
                top = a.name.split('.')[0]
                out[top] = ('module', top)
    elif isinstance(node, ast.ImportFrom):
        m = abs_module(path, node)
        if m is None:
            return out
        for a in node.names:
            if a.name == '*':
                out.setdefault('*', []).append(m)
            else:
                out[a.asname or a.name] = ('from', m, a.name)
    return out


infos = {}


def top_stmts(body):
    """Statements at module level, descending into if/try/with blocks."""
    for s in body:
        yield s
        if isinstance(s, (ast.If, ast.Try, ast.With)) or type(s).__name__ == 'TryStar':
            for f in ('body', 'orelse', 'finalbody'):
                yield from top_stmts(getattr(s, f, []) or [])
            for h in getattr(s, 'handlers', []) or []:
                yield from top_stmts(h.body)


def assigned_names(t):
    if isinstance(t, ast.Name):
        yield t.id
    elif isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            yield from assigned_names(e)
    elif isinstance(t, ast.Starred):
        yield from assigned_names(t.value)


def collect_classes(info, body, prefix):
    for s in top_stmts(body):
        if isinstance(s, ast.ClassDef):
            q = f'{prefix}{s.name}'
            c = dict(bases=s.bases, methods=set(), attrs=set(), node=s, prefix=prefix)
            for b in top_stmts(s.body):
                if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    c['methods'].add(b.name)
                elif isinstance(b, ast.Assign):
                    for t in b.targets:
                        c['attrs'].update(assigned_names(t))
                elif isinstance(b, ast.AnnAssign):
                    c['attrs'].update(assigned_names(b.target))
            info.classes[q] = c
            collect_classes(info, s.body, q + '.')
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            collect_classes(info, s.body, f'{prefix}{s.name}.')


def info_of(path):
    if path in infos:
        return infos[path]
    info = ModInfo(path)
    infos[path] = info
    try:
        tree = ast.parse(files[path])
    except Exception:
        return info
    info.tree = tree
    for s in top_stmts(tree.body):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            info.defs[s.name] = ('function', s.name)
        elif isinstance(s, ast.ClassDef):
            info.defs[s.name] = ('class', s.name)
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            b = import_bindings(path, s)
            info.stars += b.pop('*', [])
            info.imports.update(b)
        elif isinstance(s, ast.Assign):
            for t in s.targets:
                info.assigns.update(assigned_names(t))
        elif isinstance(s, ast.AnnAssign):
            info.assigns.update(assigned_names(s.target))
    collect_classes(info, tree.body, '')
    return info


def resolve_from(m, name, depth=0):
    """What `name` is as an attribute of module m."""
    if depth > 12:
        return ('unknown',)
    p = modpath.get(m)
    if p is None:
        # maybe m is a package prefix of the repo (e.g. 'django' is a package with __init__)
        return ('external',)
    info = info_of(p)
    if name in info.defs:
        k, q = info.defs[name]
        if name in info.imports or name in info.assigns:
            return ('unknown',)  # defined twice (conditional); skip
        return ('def', p, q, k)
    if name in info.imports:
        b = info.imports[name]
        if b[0] == 'module':
            return ('module', b[1]) if b[1] in modpath else ('external',)
        return resolve_binding(b, depth + 1)
    if name in info.assigns:
        return ('var',)
    if f'{m}.{name}' in modpath:
        return ('module', f'{m}.{name}')
    for s in info.stars:
        r = resolve_from(s, name, depth + 1)
        if r[0] not in ('unknown', 'external'):
            return r
    return ('unknown',)


def resolve_binding(b, depth=0):
    if b[0] == 'module':
        return ('module', b[1]) if b[1] in modpath else ('external',)
    _, m, x = b
    if m not in modpath:
        return ('external',)
    info = info_of(modpath[m])
    # `from pkg import sub`: an attribute of pkg if defined there, else the submodule
    if x not in info.defs and x not in info.imports and x not in info.assigns and f'{m}.{x}' in modpath:
        return ('module', f'{m}.{x}')
    return resolve_from(m, x, depth)


def resolve_expr_in_module(path, expr, local=None):
    """A base-class or receiver expression, in module scope (local: extra bindings)."""
    chain = []
    e = expr
    while isinstance(e, ast.Attribute):
        chain.append(e.attr)
        e = e.value
    if not isinstance(e, ast.Name):
        return ('unknown',)
    chain.append(e.id)
    chain.reverse()
    cur = lookup_name(path, chain[0], local)
    for a in chain[1:]:
        if cur[0] == 'module':
            cur = resolve_from(cur[1], a)
        elif cur[0] == 'def' and cur[3] == 'class':
            inner = info_of(cur[1]).classes.get(f'{cur[2]}.{a}')
            cur = ('def', cur[1], f'{cur[2]}.{a}', 'class') if inner else ('unknown',)
        else:
            return ('unknown',) if cur[0] != 'external' else cur
    return cur


def lookup_name(path, name, local=None):
    if local and name in local:
        return local[name]
    info = info_of(path)
    if name in info.defs:
        if name in info.imports or name in info.assigns:
            return ('unknown',)
        k, q = info.defs[name]
        return ('def', path, q, k)
    if name in info.imports:
        return resolve_binding(info.imports[name])
    if name in info.assigns:
        return ('var',)
    for s in info.stars:
        r = resolve_from(s, name)
        if r[0] not in ('unknown', 'external'):
            return r
    if name in BUILTINS:
        return ('builtin',)
    return ('unknown',)


mro_cache = {}


def mro(path, q, depth=0):
    """[(path, qualname)] of the class and its bases (DFS), and whether every base was found."""
    key = (path, q)
    if key in mro_cache:
        return mro_cache[key]
    mro_cache[key] = ([key], False)
    c = info_of(path).classes.get(q)
    if c is None or depth > 30:
        return [key], False
    out, complete = [key], True
    for b in c['bases']:
        r = resolve_expr_in_module(path, b)
        if r[0] == 'def' and r[3] == 'class':
            sub, comp = mro(r[1], r[2], depth + 1)
            for x in sub:
                if x not in out:
                    out.append(x)
            complete &= comp
        elif r[0] == 'builtin' and isinstance(b, ast.Name) and b.id in ('object', 'Exception', 'ValueError', 'dict', 'list', 'str', 'int', 'tuple', 'set', 'TypeError', 'KeyError', 'RuntimeError', 'AttributeError', 'Warning', 'DeprecationWarning', 'ImportError', 'LookupError', 'OSError', 'IOError', 'frozenset', 'property', 'type', 'BaseException', 'NotImplementedError', 'UserWarning', 'RuntimeWarning', 'AssertionError', 'IndexError', 'float', 'bytes'):
            # builtin base: its methods are not in the repo
            if b.id not in ('object',):
                complete = False
        else:
            complete = False
    mro_cache[key] = (out, complete)
    return out, complete


subclasses = None


def all_subclasses():
    global subclasses
    if subclasses is not None:
        return subclasses
    subclasses = collections.defaultdict(set)
    for p in files:
        for q in info_of(p).classes:
            for anc in mro(p, q)[0][1:]:
                subclasses[anc].add((p, q))
    return subclasses


def method_expect(path, q, attr, skip_self=False):
    """Expected target of `attr` called on an instance of class (path, q)."""
    chain, complete = mro(path, q)
    if skip_self:
        chain = chain[1:]
    ok = []
    for (p, cq) in chain:
        c = info_of(p).classes.get(cq)
        if c is None:
            continue
        if attr in c['methods']:
            ok.append((p, f'{cq}.{attr}'))
        elif attr in c['attrs'] and not ok:
            return ('attr',)  # a class attribute first: not a method symbol
    if ok:
        return ('method', ok[0], ok)
    return ('not-in-mro', complete, (path, q))


def locals_of(fn, path):
    """Names bound in a function's own scope (not counting imports, which are returned apart)."""
    names, imps, glob_ = set(), {}, set()
    a = fn.args
    for x in a.posonlyargs + a.args + a.kwonlyargs:
        names.add(x.arg)
    if a.vararg:
        names.add(a.vararg.arg)
    if a.kwarg:
        names.add(a.kwarg.arg)
    stack = list(fn.body) if not isinstance(fn, ast.Lambda) else [fn.body]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
            continue  # its body is another scope
        if isinstance(n, (ast.Lambda,)):
            continue
        if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            b = import_bindings(path, n)
            b.pop('*', None)
            imps.update(b)
            continue
        if isinstance(n, ast.Global) or isinstance(n, ast.Nonlocal):
            glob_.update(n.names)
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        if isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        if isinstance(n, ast.NamedExpr):
            names.update(assigned_names(n.target))
        stack.extend(ast.iter_child_nodes(n))
    return names - glob_, imps


def is_static(fn):
    for dname in fn.decorator_list:
        if isinstance(dname, ast.Name) and dname.id == 'staticmethod':
            return True
    return False


def is_classmethod(fn):
    return any(isinstance(x, ast.Name) and x.id == 'classmethod' for x in fn.decorator_list)


LITERALS = (ast.Constant, ast.JoinedStr, ast.List, ast.Dict, ast.Set, ast.Tuple, ast.ListComp, ast.DictComp, ast.SetComp)


COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def analyse(path):
    info = info_of(path)
    if info.tree is None:
        return []
    out = []
    quals = {}

    def index_quals(node, prefix):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = prefix + ch.name
                quals[id(ch)] = q
                index_quals(ch, q + '.')
            else:
                index_quals(ch, prefix)

    index_quals(info.tree, '')

    def walk(n, scopes, cur_class):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if not isinstance(n, ast.Lambda):
                for e in n.decorator_list:
                    walk(e, scopes, None)
            for e in n.args.defaults + [x for x in n.args.kw_defaults if x]:
                walk(e, scopes, None)
            names, imps = locals_of(n, path)
            s2 = scopes + [(n, names, imps, None if isinstance(n, ast.Lambda) else cur_class)]
            if isinstance(n, ast.Lambda):
                walk(n.body, s2, None)
            else:
                for st in n.body:
                    walk(st, s2, None)
            return
        if isinstance(n, ast.ClassDef):
            for e in n.decorator_list + n.bases + [k.value for k in n.keywords]:
                walk(e, scopes, None)
            for st in n.body:
                walk(st, scopes, (path, quals[id(n)]))
            return
        if isinstance(n, COMPS):
            names = set()
            for g in n.generators:
                names.update(assigned_names(g.target))
            s2 = scopes + [(n, names, {}, None)]
            for ch in ast.iter_child_nodes(n):
                walk(ch, s2, None)
            return
        if isinstance(n, ast.Call):
            out.append(expect(n, scopes))
        for ch in ast.iter_child_nodes(n):
            walk(ch, scopes, cur_class)

    def local_lookup(name, scopes):
        for fn, names, imps, _ in reversed(scopes):
            if name in imps:
                return resolve_binding(imps[name])
            if name in names:
                if not isinstance(fn, COMPS):
                    q = quals.get(id(fn))
                    for ch in ast.walk(fn):
                        if ch is not fn and isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and ch.name == name and quals.get(id(ch)) == f'{q}.{name}':
                            return ('def', path, f'{q}.{name}', 'class' if isinstance(ch, ast.ClassDef) else 'function')
                return ('local',)
        return lookup_name(path, name)

    def self_class(scopes, rname):
        for fn, names, imps, cls in reversed(scopes):
            if rname in names:
                if isinstance(fn, COMPS) or isinstance(fn, ast.Lambda) or cls is None:
                    return None
                a = fn.args.posonlyargs + fn.args.args
                if not a or a[0].arg != rname or is_static(fn):
                    return None
                return cls
        return None

    def expect(call, scopes):
        f = call.func
        if isinstance(f, ast.Name):
            return (f.lineno, f.id), ('name',) + local_lookup(f.id, scopes)
        if not isinstance(f, ast.Attribute):
            return None, None
        key = (f.end_lineno, f.attr)
        v = f.value
        if isinstance(v, LITERALS):
            return key, ('literal',)
        if isinstance(v, ast.Name) and v.id in ('self', 'cls'):
            c = self_class(scopes, v.id)
            if c:
                return key, ('self',) + method_expect(c[0], c[1], f.attr)
            return key, ('unknown-recv',)
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == 'super':
            c = self_class(scopes, 'self') or self_class(scopes, 'cls')
            if c and not v.args:
                return key, ('super',) + method_expect(c[0], c[1], f.attr, skip_self=True)
            return key, ('unknown-recv',)
        chain = []
        e = v
        while isinstance(e, ast.Attribute):
            chain.append(e.attr)
            e = e.value
        if not isinstance(e, ast.Name):
            return key, ('unknown-recv',)
        chain.append(e.id)
        chain.reverse()
        cur = local_lookup(chain[0], scopes)
        for a in chain[1:]:
            if cur[0] == 'module':
                cur = resolve_from(cur[1], a)
            elif cur[0] == 'def' and cur[3] == 'class':
                inner = info_of(cur[1]).classes.get(f'{cur[2]}.{a}')
                cur = ('def', cur[1], f'{cur[2]}.{a}', 'class') if inner else ('unknown',)
            else:
                cur = ('unknown',) if cur[0] != 'external' else cur
                break
        if cur[0] == 'module':
            return key, ('modattr', cur[1]) + resolve_from(cur[1], f.attr)
        if cur[0] == 'external':
            return key, ('extattr',)
        if cur[0] == 'def' and cur[3] == 'class':
            return key, ('classattr',) + method_expect(cur[1], cur[2], f.attr)
        return key, ('unknown-recv', cur[0])

    for st in info.tree.body:
        walk(st, [], None)
    return [(k, e) for k, e in out if k is not None]


if __name__ == '__main__':
    res = {}
    for p in sorted(files):
        for (line, name), exp in analyse(p):
            res.setdefault((p, line, name), []).append(exp)
    pickle.dump(dict(res=res, modpath=modpath), open('/tmp/s56/calls2/py_expect.pkl', 'wb'))
    print(len(res))
