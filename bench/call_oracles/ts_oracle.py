"""TypeScript oracle: imports and re-exports followed by hand, `this` by the enclosing class."""
import sys, re, collections, pickle, os, posixpath
sys.path.insert(0, '/tmp/s56/calls2')
from common import load
import tree_sitter_typescript
from tree_sitter import Language, Parser

d, files, mods, syms, edges = load('ts-rxjs', "in ('typescript','tsx')")
P = Parser(Language(tree_sitter_typescript.language_typescript()))
GLOBALS = {'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Error', 'TypeError', 'Array', 'Object', 'Promise', 'Symbol',
           'Date', 'parseInt', 'parseFloat', 'isNaN', 'String', 'Number', 'Boolean', 'Math', 'JSON', 'console', 'Map', 'Set', 'WeakMap',
           'RangeError', 'queueMicrotask', 'requestAnimationFrame', 'cancelAnimationFrame', 'performance', 'globalThis', 'Reflect',
           'AbortController', 'Function', 'isFinite', 'encodeURIComponent', 'decodeURIComponent', 'XMLHttpRequest', 'fetch', 'Response',
           'FormData', 'URLSearchParams', 'Headers', 'Blob', 'ArrayBuffer', 'Uint8Array', 'RegExp', 'process', 'require'}


def txt(n, src):
    return src[n.start_byte:n.end_byte].decode('utf8', 'replace')


def resolve_spec(frm, spec):
    if not spec.startswith('.'):
        return None
    base = posixpath.normpath(posixpath.join(posixpath.dirname(frm), spec))
    for suf in ['', '.ts', '.tsx', '.d.ts', '/index.ts']:
        if base + suf in files:
            return base + suf
    return None


trees = {}


def tree_of(p):
    if p not in trees:
        trees[p] = P.parse(files[p].encode())
    return trees[p]


mod_cache = {}


def module_info(p):
    """imports: local -> (file|None, name|'*'); decls: top-level names -> kind; reexports: name -> (file, name); stars: [file]."""
    if p in mod_cache:
        return mod_cache[p]
    src = files[p].encode()
    root = tree_of(p).root_node
    imports, decls, reexp, stars, local_exports = {}, {}, {}, [], {}
    for st in root.named_children:
        k = st.type
        if k == 'import_statement':
            srcn = st.child_by_field_name('source')
            f = resolve_spec(p, txt(srcn, src).strip('\'"')) if srcn else None
            for n in walk(st):
                if n.type == 'import_specifier':
                    nm = txt(n.child_by_field_name('name'), src)
                    al = n.child_by_field_name('alias')
                    imports[txt(al, src) if al else nm] = (f, nm)
                elif n.type == 'namespace_import':
                    ids = [c for c in n.named_children if c.type == 'identifier']
                    if ids:
                        imports[txt(ids[0], src)] = (f, '*')
                elif n.type == 'import_clause':
                    for c in n.named_children:
                        if c.type == 'identifier':
                            imports[txt(c, src)] = (f, 'default')
            continue
        if k == 'export_statement':
            srcn = st.child_by_field_name('source')
            decl = st.child_by_field_name('declaration')
            if srcn is not None:
                f = resolve_spec(p, txt(srcn, src).strip('\'"'))
                specs = [n for n in walk(st) if n.type == 'export_specifier']
                if not specs and '*' in txt(st, src):
                    stars.append(f)
                for n in specs:
                    nm = txt(n.child_by_field_name('name'), src)
                    al = n.child_by_field_name('alias')
                    reexp[txt(al, src) if al else nm] = (f, nm)
                continue
            if decl is not None:
                st = decl
                k = st.type
            else:
                for n in walk(st):
                    if n.type == 'export_specifier':
                        nm = txt(n.child_by_field_name('name'), src)
                        al = n.child_by_field_name('alias')
                        local_exports[txt(al, src) if al else nm] = nm
                continue
        if k in ('function_declaration', 'generator_function_declaration', 'function_signature', 'class_declaration',
                 'abstract_class_declaration', 'interface_declaration', 'type_alias_declaration', 'enum_declaration'):
            nn = st.child_by_field_name('name')
            if nn:
                decls[txt(nn, src)] = k
        elif k in ('lexical_declaration', 'variable_declaration'):
            for vd in st.named_children:
                if vd.type == 'variable_declarator':
                    nn = vd.child_by_field_name('name')
                    if nn and nn.type == 'identifier':
                        decls[txt(nn, src)] = 'var'
    info = dict(imports=imports, decls=decls, reexp=reexp, stars=stars, local_exports=local_exports)
    mod_cache[p] = info
    return info


def walk(n):
    stack = [n]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(x.named_children)


def resolve_export(f, name, depth=0):
    """(file, name) of the declaration `name` exported by file f, or None."""
    if f is None or depth > 10:
        return None
    mi = module_info(f)
    if name in mi['local_exports']:
        name = mi['local_exports'][name]
        if name in mi['imports']:
            g, n2 = mi['imports'][name]
            return resolve_export(g, n2, depth + 1)
    if name in mi['decls']:
        return (f, name)
    if name in mi['reexp']:
        g, n2 = mi['reexp'][name]
        return resolve_export(g, n2, depth + 1)
    for s in mi['stars']:
        r = resolve_export(s, name, depth + 1)
        if r:
            return r
    return None


def class_of(f, name):
    """(file, class name) for a class-like name seen in file f."""
    mi = module_info(f)
    if name in mi['decls']:
        return (f, name)
    if name in mi['imports']:
        g, n2 = mi['imports'][name]
        return resolve_export(g, n2)
    return None


def bases(f, cls):
    """Base classes (file, name), walking `extends`."""
    out = []
    src = files[f].encode()
    for n in walk(tree_of(f).root_node):
        if n.type in ('class_declaration', 'abstract_class_declaration') and n.child_by_field_name('name') and txt(n.child_by_field_name('name'), src) == cls:
            for h in walk(n):
                if h.type == 'extends_clause':
                    v = h.child_by_field_name('value')
                    if v is None:
                        continue
                    bn = txt(v, src).split('<')[0]
                    b = class_of(f, bn)
                    if b and b not in out and len(out) < 20:
                        out.append(b)
                        out += [x for x in bases(*b) if x not in out]
            break
    return out


def local_names(node, src):
    """Names declared inside the enclosing functions of node (params, let/const/var, nested functions)."""
    names = {}
    p = node.parent
    while p is not None:
        if p.type in ('function_declaration', 'function_expression', 'arrow_function', 'method_definition', 'function', 'generator_function_declaration'):
            for n in walk(p):
                if n.type in ('required_parameter', 'optional_parameter'):
                    pat = n.child_by_field_name('pattern')
                    if pat is not None:
                        for i in walk(pat):
                            if i.type == 'identifier':
                                names.setdefault(txt(i, src), 'param')
                elif n.type == 'variable_declarator' and n is not None:
                    nn = n.child_by_field_name('name')
                    if nn is not None:
                        for i in walk(nn):
                            if i.type == 'identifier':
                                v = n.child_by_field_name('value')
                                names.setdefault(txt(i, src), 'func' if v is not None and v.type in ('arrow_function', 'function_expression', 'function') else 'var')
                elif n.type == 'function_declaration' and n is not p:
                    nn = n.child_by_field_name('name')
                    if nn is not None:
                        names.setdefault(txt(nn, src), 'func')
            if p.type == 'arrow_function':
                prm = p.child_by_field_name('parameter')
                if prm is not None:
                    names.setdefault(txt(prm, src), 'param')
        p = p.parent
    return names


def enclosing_class(node, src):
    p = node.parent
    while p is not None:
        if p.type in ('function_expression', 'function_declaration', 'function', 'generator_function_declaration'):
            return None  # `this` rebinds
        if p.type in ('class_declaration', 'abstract_class_declaration', 'class'):
            nn = p.child_by_field_name('name')
            return txt(nn, src) if nn else None
        p = p.parent
    return None


def methods_of(f, cls):
    return {(s['path'], s['q']) for s in syms_by_path[f] if s['container'] == cls}


syms_by_path = collections.defaultdict(list)
for s in syms.values():
    syms_by_path[s['path']].append(s)


def expect(p, node, src):
    """((line, name), expectation)."""
    if node.type == 'new_expression':
        c = node.child_by_field_name('constructor')
        if c is None or c.type != 'identifier':
            return None
        nm = txt(c, src)
        return (c.start_point[0] + 1, nm), bare(p, node, nm, src, new=True)
    f = node.child_by_field_name('function')
    if f is None:
        return None
    if f.type == 'identifier':
        nm = txt(f, src)
        return (f.start_point[0] + 1, nm), bare(p, node, nm, src)
    if f.type == 'member_expression':
        prop = f.child_by_field_name('property')
        obj = f.child_by_field_name('object')
        if prop is None or obj is None:
            return None
        nm = txt(prop, src)
        key = (prop.start_point[0] + 1, nm)
        if obj.type == 'this':
            cls = enclosing_class(node, src)
            if not cls:
                return key, ('this/unknown',)
            chain = [(p, cls)] + bases(p, cls)
            for (cf, cn) in chain:
                if any(s['container'] == cn and s['name'] == nm for s in syms_by_path[cf]):
                    return key, ('this', (cf, f'{cn}.{nm}'), chain)
            return key, ('this/not-found', chain)
        if obj.type == 'super':
            cls = enclosing_class(node, src)
            chain = bases(p, cls) if cls else []
            for (cf, cn) in chain:
                if any(s['container'] == cn and s['name'] == nm for s in syms_by_path[cf]):
                    return key, ('super', (cf, f'{cn}.{nm}'), chain)
            return key, ('super/not-found', chain)
        if obj.type == 'identifier':
            on = txt(obj, src)
            loc = local_names(node, src)
            if on in loc:
                return key, ('member/local',)
            mi = module_info(p)
            if on in mi['imports']:
                g, n2 = mi['imports'][on]
                if n2 == '*':
                    r = resolve_export(g, nm)
                    return key, ('member/ns', r)
                if g is None:
                    return key, ('member/external',)
                r = resolve_export(g, n2)
                if r and module_info(r[0])['decls'].get(r[1], '').endswith('class_declaration'):
                    return key, ('member/class', (r[0], f'{r[1]}.{nm}'))
                return key, ('member/imported-value', r)
            if on in mi['decls']:
                if mi['decls'][on].endswith('class_declaration'):
                    return key, ('member/class', (p, f'{on}.{nm}'))
                return key, ('member/module-value',)
            if on in GLOBALS:
                return key, ('member/global',)
            return key, ('member/unknown',)
        return key, ('member/expr',)
    return None


def bare(p, node, nm, src, new=False):
    loc = local_names(node, src)
    if nm in loc:
        return ('bare/local-' + loc[nm],)
    mi = module_info(p)
    if nm in mi['imports']:
        g, n2 = mi['imports'][nm]
        if g is None:
            return ('bare/external',)
        r = resolve_export(g, n2)
        return ('bare/imported', r)
    if nm in mi['decls']:
        return ('bare/same-file', (p, nm))
    if nm in GLOBALS:
        return ('bare/global',)
    return ('bare/unknown',)


def judge(exp, tgt, e):
    cat = exp[0]
    t = (tgt['path'], tgt['q']) if tgt else None
    if cat in ('bare/imported', 'bare/same-file', 'member/ns', 'member/class'):
        want = exp[1]
        if want is None:
            return 'unknown', None
        if not tgt:
            return 'missed', want
        ok = t == want or (cat in ('bare/imported', 'bare/same-file') and tgt['path'] == want[0] and tgt['name'] == want[1].rsplit('.', 1)[-1]
                           and tgt['kind'] in ('class', 'constructor', 'function', 'constant', 'variable'))
        # an overload signature of the same function counts as right
        return ('right' if ok else 'wrong'), want
    if cat in ('this', 'super'):
        want, chain = exp[1], exp[2]
        if not tgt:
            return 'missed', want
        if t == want:
            return 'right', want
        if (tgt['path'], tgt['container']) in chain:
            return 'right-shadowed', want
        return 'wrong', want
    if cat in ('bare/external', 'bare/global', 'member/external', 'member/global'):
        return ('wrong' if tgt else 'right-unres'), None
    if cat in ('this/not-found', 'super/not-found'):
        return ('wrong?' if tgt else 'right-unres'), None
    return ('unknown' if tgt else 'unres'), None


if __name__ == '__main__':
    by_key = collections.defaultdict(list)
    for e in edges:
        by_key[(e[0], e[3], e[2])].append(e)
    exps = collections.defaultdict(list)
    for p in files:
        src = files[p].encode()
        for n in walk(tree_of(p).root_node):
            if n.type in ('call_expression', 'new_expression'):
                r = expect(p, n, src)
                if r:
                    exps[(p, r[0][0], r[0][1])].append(r[1])
    results = []
    unmatched = amb = 0
    for key, es in by_key.items():
        ex = exps.get(key)
        if not ex:
            unmatched += len(es)
            continue
        if len(set(map(repr, ex))) > 1:
            amb += len(es)
            continue
        for e in es:
            tgt = syms.get(e[4]) if e[4] is not None else None
            v, want = judge(ex[0], tgt, e)
            results.append((ex[0][0], v, e, tgt, want, ex[0]))
    pickle.dump(results, open('/tmp/s56/calls2/ts_results.pkl', 'wb'))
    print('edges', len(edges), 'resolved', sum(1 for e in edges if e[4] is not None), 'unmatched', unmatched, 'ambiguous', amb)
    tab = collections.Counter((r[0], r[1]) for r in results)
    vs = ['right', 'right-shadowed', 'wrong', 'wrong?', 'missed', 'right-unres', 'unres', 'unknown']
    print('%-22s' % 'category' + ''.join('%14s' % v for v in vs) + '  resolved')
    for c in sorted(set(r[0] for r in results)):
        print('%-22s' % c + ''.join('%14d' % tab[(c, v)] for v in vs) + '%10d' % sum(1 for r in results if r[0] == c and r[3]))
