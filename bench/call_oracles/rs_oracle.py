"""Rust oracle: calls from the syntax tree, judged by use statements, crate dependencies and impl scopes."""
import sys, re, collections, pickle, tomllib, os
sys.path.insert(0, '/tmp/s56/calls2')
from common import load
import tree_sitter_rust
from tree_sitter import Language, Parser

CORP = os.path.expanduser('~/.cache/code-index/corpora/rust-crates')
d, files, mods, syms, edges = load('rust-crates', "= 'rust'")
OUTPK = os.environ.get('OUTPK', '/tmp/s56/calls2/rs_results.pkl')
P = Parser(Language(tree_sitter_rust.language()))

# crates: dir -> name, deps (incl. dev and target deps), closure
crate_name, deps = {}, {}
for cd in os.listdir(CORP):
    p = f'{CORP}/{cd}/Cargo.toml'
    if not os.path.exists(p):
        continue
    t = tomllib.load(open(p, 'rb'))
    n = t['package']['name'].replace('-', '_')
    crate_name[cd] = n
    ds = set(t.get('dependencies', {})) | set(t.get('dev-dependencies', {}))
    for tv in t.get('target', {}).values():
        ds |= set(tv.get('dependencies', {})) | set(tv.get('dev-dependencies', {}))
    deps[n] = {x.replace('-', '_') for x in ds}
name2dir = {v: k for k, v in crate_name.items()}


def closure(n, seen=None):
    seen = seen or set()
    if n in seen:
        return seen
    seen.add(n)
    for x in deps.get(n, ()):
        if x in name2dir:
            closure(x, seen)
    return seen


reach = {n: closure(n) for n in name2dir}
STD = {'std', 'core', 'alloc', 'proc_macro'}

# per crate: names of types/traits/modules/functions/macros defined (from the symbols table)
defined = collections.defaultdict(lambda: collections.defaultdict(set))  # crate -> name -> kinds
for s in syms.values():
    if s['path'].endswith('.rs'):
        c = crate_name.get(s['path'].split('/')[0])
        defined[c][s['name']].add(s['kind'])
# v2: free fns per (crate, name) with their file and container, module names, std macro names
STD_MACROS = {'assert', 'assert_eq', 'assert_ne', 'debug_assert', 'debug_assert_eq', 'debug_assert_ne', 'vec', 'format', 'println', 'eprintln',
              'print', 'eprint', 'write', 'writeln', 'panic', 'unreachable', 'unimplemented', 'todo', 'matches', 'format_args', 'cfg',
              'concat', 'stringify', 'include_str', 'include_bytes', 'env', 'option_env', 'line', 'file', 'column', 'module_path', 'dbg',
              'compile_error', 'thread_local', 'assert_matches'}
modnames = collections.defaultdict(set)   # crate -> module names
fnq = collections.defaultdict(set)        # crate -> qualified names of functions (nested fns have a fn container)
for s_ in syms.values():
    if s_['path'].endswith('.rs'):
        c_ = crate_name.get(s_['path'].split('/')[0])
        if s_['kind'] == 'module':
            modnames[c_].add(s_['name'])
        if s_['kind'] == 'function':
            fnq[c_].add(s_['q'])


syms_by_path = collections.defaultdict(list)
for s_ in syms.values():
    syms_by_path[s_['path']].append(s_)


def free_like(t, crate):
    """A free item: no container, or a container that is a module or a function (nested fn)."""
    cont = t['container']
    if not cont:
        return True
    return cont.rsplit('.', 1)[-1] in modnames[crate] or cont in fnq[crate]


traits = {(crate_name.get(s['path'].split('/')[0]), s['name']) for s in syms.values() if s['kind'] == 'trait'}
all_traits = {s['name'] for s in syms.values() if s['kind'] == 'trait'}

PRIMS = {'u8','u16','u32','u64','u128','usize','i8','i16','i32','i64','i128','isize','f32','f64','char','bool','str'}
PRELUDE_FNS = {'Some', 'Ok', 'Err', 'None', 'drop', 'Box', 'Vec', 'String', 'Default', 'Option', 'Result', 'panic', 'Into', 'From'}
STD_TYPES = {'Vec', 'String', 'Box', 'Option', 'Result', 'Rc', 'Arc', 'Cell', 'RefCell', 'HashMap', 'HashSet', 'BTreeMap', 'BTreeSet', 'VecDeque',
             'Mutex', 'RwLock', 'Duration', 'Instant', 'PhantomData', 'Pin', 'Cow', 'NonNull', 'Path', 'PathBuf', 'OsString', 'OsStr', 'Weak',
             'AtomicUsize', 'AtomicBool', 'AtomicU64', 'AtomicU32', 'AtomicPtr', 'Condvar', 'Ordering', 'Default', 'Iterator', 'From', 'Into',
             'TryFrom', 'ToString', 'ManuallyDrop', 'MaybeUninit', 'Layout', 'Wrapping', 'Reverse', 'str', 'u8', 'u16', 'u32', 'u64', 'u128', 'usize',
             'i8', 'i16', 'i32', 'i64', 'i128', 'isize', 'f32', 'f64', 'char', 'bool', 'Formatter', 'Error', 'Waker', 'Context', 'Poll', 'Thread',
             'File', 'Command', 'TcpStream', 'TcpListener', 'UdpSocket', 'SocketAddr', 'IpAddr', 'Ipv4Addr', 'Ipv6Addr', 'BufReader', 'BufWriter',
             'Cursor', 'Chars', 'Any', 'TypeId', 'CString', 'CStr', 'SystemTime', 'Once', 'OnceCell', 'OnceLock', 'Barrier', 'Sender', 'Receiver',
             'NonZeroUsize', 'NonZeroU32', 'NonZeroU64', 'Rev', 'Fuse', 'Peekable'}


def txt(n, src):
    return src[n.start_byte:n.end_byte].decode('utf8', 'replace')


def base_type(t):
    if t is None:
        return t
    t = re.sub(r"'\w+\s*", '', t.strip()).lstrip('&').replace('mut ', '').replace('const ', '').strip().lstrip('*').strip()
    t = re.sub(r"^dyn\s+", '', t)
    t = t.split('<')[0].strip()
    return t.rsplit('::', 1)[-1].rsplit('.', 1)[-1]


def use_map(root, src):
    """local name -> full path list, and glob paths."""
    m, globs = {}, []

    def walk(n, prefix):
        k = n.type
        if k == 'scoped_use_list':
            p = n.child_by_field_name('path')
            np = prefix + (txt(p, src).split('::') if p else [])
            l = n.child_by_field_name('list')
            if l:
                walk(l, np)
        elif k == 'use_list':
            for ch in n.named_children:
                walk(ch, prefix)
        elif k == 'use_as_clause':
            p = txt(n.child_by_field_name('path'), src).split('::')
            a = txt(n.child_by_field_name('alias'), src)
            m[a] = prefix + p
        elif k == 'use_wildcard':
            t = txt(n, src)
            globs.append(prefix + [x for x in t.rstrip('*').rstrip(':').split('::') if x])
        elif k in ('identifier', 'scoped_identifier', 'self', 'crate', 'super'):
            p = prefix + txt(n, src).split('::')
            if p[-1] == 'self':
                p = p[:-1]
            if p:
                m[p[-1]] = p

    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == 'use_declaration':
            a = n.child_by_field_name('argument')
            if a:
                walk(a, [])
            continue
        stack.extend(n.named_children)
    return m, globs


def enclosing_impl(n, src):
    p = n.parent
    while p is not None:
        if p.type == 'impl_item':
            t = p.child_by_field_name('type')
            tr = p.child_by_field_name('trait')
            return ('impl', base_type(txt(t, src)), base_type(txt(tr, src)) if tr else None)
        if p.type == 'trait_item':
            return ('trait', txt(p.child_by_field_name('name'), src), None)
        p = p.parent
    return None


def callee_name_node(fn):
    """The node whose text is the edge's dst_name (the last name), as the project's CalleePath does."""
    while True:
        k = fn.type
        if k in ('identifier', 'field_identifier', 'type_identifier'):
            return fn
        if k == 'field_expression':
            fn = fn.child_by_field_name('field')
        elif k in ('scoped_identifier', 'scoped_type_identifier'):
            fn = fn.child_by_field_name('name')
        elif k == 'generic_function':
            fn = fn.child_by_field_name('function') or fn.child_by_field_name('name')
        elif k == 'generic_type':
            fn = fn.named_children[0]
        else:
            return None
        if fn is None:
            return None


def analyse(path):
    src = files[path].encode()
    tree = P.parse(src)
    umap, globs = use_map(tree.root_node, src)
    out = []
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        stack.extend(n.named_children)
        if n.type == 'macro_invocation':
            m = n.child_by_field_name('macro')
            nm = callee_name_node(m) if m else None
            if nm is None:
                continue
            out.append(((nm.start_point[0] + 1, txt(nm, src)), dict(kind='macro', text=txt(m, src))))
        elif n.type == 'call_expression':
            f = n.child_by_field_name('function')
            nm = callee_name_node(f)
            if nm is None:
                continue
            info = dict(text=txt(f, src)[:120])
            if f.type == 'field_expression':
                v = f.child_by_field_name('value')
                info.update(kind='method', recv=txt(v, src)[:60], recv_type=v.type)
                if v.type == 'self':
                    info['impl'] = enclosing_impl(n, src)
            elif f.type == 'identifier':
                info.update(kind='bare')
            elif f.type in ('scoped_identifier', 'generic_function'):
                g = f if f.type == 'scoped_identifier' else f.child_by_field_name('function')
                if g is None or g.type != 'scoped_identifier':
                    info.update(kind='bare' if g is not None and g.type == 'identifier' else 'other')
                else:
                    pth = g.child_by_field_name('path')
                    ptxt = txt(pth, src) if pth else ''
                    info.update(kind='path', qual=ptxt)
                    if ptxt.split('::')[0].split('<')[0] == 'Self' or ptxt == 'Self':
                        info['impl'] = enclosing_impl(n, src)
            else:
                info.update(kind='other')
            out.append(((nm.start_point[0] + 1, txt(nm, src)), info))
    return out, umap, globs


def crate_of_path(segs, here_crate, umap):
    """The crate a path names: a crate name, 'STD', 'EXT' (outside the repo) or None (unknown)."""
    s0 = segs[0].split('<')[0]
    if s0 in ('crate', 'self', 'super', 'Self'):
        return here_crate
    if s0.startswith('<'):
        return None
    if s0 in umap:
        full = umap[s0]
        f0 = full[0]
        if f0 in ('crate', 'self', 'super'):
            return here_crate
        if f0 in STD:
            return 'STD'
        if f0 in name2dir:
            return f0
        if f0 == s0 and len(full) == 1:
            pass
        else:
            return 'EXT' if f0 not in defined[here_crate] else here_crate
    if s0 in STD:
        return 'STD'
    if s0 in name2dir and s0 != here_crate:
        return s0
    if s0 in defined[here_crate]:
        return here_crate
    return None


def judge(path, info, umap, globs, tgt):
    """(category, verdict, note): verdict right / wrong / unknown / right-unres / missed."""
    here_dir = path.split('/')[0]
    here = crate_name.get(here_dir)
    tcrate = crate_name.get(tgt['path'].split('/')[0]) if tgt else None
    # a target in a crate the caller cannot depend on is wrong whatever the call
    if tgt and tcrate not in reach.get(here, {here}):
        dep_wrong = True
    else:
        dep_wrong = False
    k = info['kind']
    name = info.get('name')
    if k == 'macro':
        mt = info['text']
        segs = mt.split('::')
        if len(segs) > 1:
            c = crate_of_path(segs, here, umap)
        else:
            # a macro_rules! of this crate, a used one, or std's
            if mt in umap:
                c = crate_of_path(umap[mt], here, umap)
            elif mt in STD_MACROS and not any(x['kind'] == 'macro' and x['name'] == mt for x in syms_by_path.get(path, ())):
                c = 'STD'  # v2: textual scope: a same-named test macro of another file is not in scope
            elif 'macro' in defined[here].get(mt, ()):
                c = here
            else:
                c = 'STD'
        if c in ('STD', 'EXT'):
            return 'macro/std', ('wrong' if tgt else 'right-unres'), c
        if c is None:
            return 'macro/unknown', 'unknown', None
        if not tgt:
            return 'macro/crate', 'missed', c
        return 'macro/crate', ('right' if tcrate == c and tgt['kind'] == 'macro' else 'wrong'), c
    if k == 'bare':
        nm = info['text']
        if tgt and tgt['kind'] == 'method':
            return 'bare', 'wrong', 'bare name to a method'
        if nm in umap:
            c = crate_of_path(umap[nm], here, umap)
            if c in ('STD', 'EXT'):
                return 'bare/std', ('wrong' if tgt else 'right-unres'), c
            if c is None:
                return 'bare/unknown', 'unknown', None
            if not tgt:
                return 'bare/used', 'missed', c
            return 'bare/used', ('right' if tcrate == c else 'wrong'), c
        if nm in PRELUDE_FNS and not any(x['kind'] == 'function' and x['name'] == nm and not x['container'] for x in syms_by_path.get(path, ())):
            return 'bare/std', ('wrong' if tgt else 'right-unres'), 'prelude'  # v2: Ok/Err/Some even if the crate has an assoc type Ok
        if nm in defined[here]:
            if not tgt:
                return 'bare/crate', 'missed', here
            return 'bare/crate', ('right' if tcrate == here and tgt['kind'] in ('function', 'macro', 'struct', 'enum', 'constant') and free_like(tgt, here) else 'wrong'), here
        if nm in PRELUDE_FNS:
            return 'bare/std', ('wrong' if tgt else 'right-unres'), 'prelude'
        return 'bare/unknown', ('wrong' if dep_wrong else 'unknown'), None
    if k == 'path':
        qual = info['qual']
        segs = [s for s in qual.split('::') if s]
        last = base_type(segs[-1]) if segs else ''
        if segs and segs[0] == 'Self' and len(segs) == 1:
            imp = info.get('impl')
            if not imp:
                return 'path/Self', 'unknown', None
            T = imp[1]
            if not tgt:
                return 'path/Self', 'missed', T
            ok = tcrate == here and (base_type(tgt['container']) == T or (imp[2] and tgt['container'] == imp[2]) or tgt['container'] in all_traits)
            return 'path/Self', ('right' if ok else 'wrong'), T
        c = crate_of_path(segs, here, umap)
        if segs and segs[0].split('<')[0] in PRIMS and segs[0] not in defined[here]:
            c = 'STD'
        if c in ('STD', 'EXT'):
            return 'path/external', ('wrong' if tgt else 'right-unres'), c
        if c is None:
            if last in STD_TYPES and last not in defined[here]:
                return 'path/external', ('wrong' if tgt else 'right-unres'), 'std-type'
            return 'path/unknown', ('wrong' if dep_wrong else 'unknown'), None
        typeish = last[:1].isupper()
        if not tgt:
            return 'path/type' if typeish else 'path/module', 'missed', c
        if typeish:
            ok = tcrate == c and (base_type(tgt['container']) == last or tgt['q'] == f'{last}.{tgt["name"]}' or
                                  (tgt['kind'] == 'constant' and tgt['container'] == last))
            # a trait's default method (Trait::f) or a method of an impl of trait `last`
            if not ok and tcrate == c and (last in all_traits) and tgt['container'] in (last,):
                ok = True
            return 'path/type', ('right' if ok else 'wrong'), c
        ok = tcrate == c and tgt['kind'] in ('function', 'macro', 'struct', 'constant', 'type', 'enum') and free_like(tgt, c)
        # v2: the module the path names must appear in the target's file path or container
        ml = base_type(segs[-1]) if segs else ''
        if ok and ml not in ('crate', 'self', 'super', '', c):  # a path naming the crate (`tokio::spawn`) accepts any module of it (stop 58)
            where = tgt['path'].removesuffix('.rs').split('/') + (tgt['container'] or '').split('.')
            ok = ml in where
        return 'path/module', ('right' if ok else 'wrong'), c
    if k == 'method':
        if info['recv_type'] == 'self':
            imp = info.get('impl')
            if not imp:
                return 'method/self', 'unknown', None
            T = imp[1]
            if not tgt:
                return 'method/self', 'unres', T
            cont = base_type(tgt['container'])
            if tcrate == here and cont == T:
                return 'method/self', 'right', T
            if cont in all_traits or (imp[2] and cont == imp[2]):
                return 'method/self', 'right-trait', T
            return 'method/self', 'wrong', T
        if not tgt:
            return 'method/other', 'unres', None
        if dep_wrong:
            return 'method/other', 'wrong', 'crate not a dependency'
        return 'method/other', 'unknown', None
    return 'other', ('wrong' if dep_wrong else 'unknown'), None


if __name__ == '__main__':
    by_key = collections.defaultdict(list)
    by_path = collections.defaultdict(set)
    for e in edges:
        by_key[(e[0], e[3], e[2])].append(e)
        by_path[e[0]].add((e[0], e[3], e[2]))
    results = []
    unmatched = ambiguous = 0
    seen = set()
    for p in sorted(files):
        calls, umap, globs = analyse(p)
        ck = collections.defaultdict(list)
        for (line, name), info in calls:
            info['name'] = name
            ck[(p, line, name)].append(info)
        for key, es in ((k, by_key[k]) for k in by_path[p]):
            seen.add(key)
            infos = ck.get(key)
            if not infos:
                unmatched += len(es)
                continue
            for e in es:
                tgt = syms.get(e[4]) if e[4] is not None else None
                js = {judge(p, i, umap, globs, tgt) for i in infos}
                if len(js) > 1:
                    ambiguous += 1
                    continue
                cat, v, note = js.pop()
                results.append((cat, v, e, tgt, note, infos[0]))
    pickle.dump(results, open(OUTPK, 'wb'))
    print('edges', len(edges), 'resolved', sum(1 for e in edges if e[4] is not None), 'unmatched', unmatched, 'ambiguous', ambiguous)
    tab = collections.Counter((r[0], r[1]) for r in results)
    vs = ['right', 'right-trait', 'wrong', 'missed', 'right-unres', 'unres', 'unknown']
    print('%-16s' % 'category' + ''.join('%12s' % v for v in vs) + '  resolved')
    for c in sorted(set(r[0] for r in results)):
        print('%-16s' % c + ''.join('%12d' % tab[(c, v)] for v in vs) + '%10d' % sum(1 for r in results if r[0] == c and r[3]))
