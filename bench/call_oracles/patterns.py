"""Before/after numbers per language and pattern. Usage: python patterns.py"""
import pickle, collections, glob, duckdb, sys, re
OLD, NEW = '/tmp/s56/calls', '/tmp/s56/calls2'
SNAP = {'calls': '/tmp/s56/calls/out', 'calls2': '/tmp/s56/rc'}
JUDGED = {'right', 'right-shadowed', 'right-trait', 'override', 'wrong', 'wrong-incomplete', 'wrong?'}
WRONG = {'wrong', 'wrong-incomplete', 'wrong?'}

def langs(which, name):
    d = glob.glob(f'{SNAP[which]}/{name}/*/')[0]
    con = duckdb.connect()
    return d, dict(con.execute(f"select path, language from '{d}files.parquet'").fetchall())

LANGQ = {'django': "= 'python'", 'rust-crates': "= 'rust'", 'ts-rxjs': "in ('typescript','tsx')"}
def overall(which, name, pk):
    d, lang = langs(which, name)
    con = duckdb.connect()
    tot, res = con.execute(f"select count(*), count(dst_symbol_id) from '{d}edges.parquet' e join '{d}files.parquet' f on f.path=e.src_path where kind='calls' and f.language {LANGQ[name]}").fetchone()
    # cross-language edges
    x = collections.Counter()
    symp = dict(con.execute(f"select symbol_id, path from '{d}symbols.parquet'").fetchall())
    for sp, did in con.execute(f"select src_path, dst_symbol_id from '{d}edges.parquet' where kind='calls' and dst_symbol_id is not null").fetchall():
        a, b = lang.get(sp), lang.get(symp.get(did))
        if a != b:
            x[f'{a}->{b}'] += 1
    R = pickle.load(open(f'/tmp/s56/calls2/old_{pk}' if which == 'calls' and pk.startswith('rs') else f'/tmp/s56/{which}/{pk}', 'rb'))
    judged = sum(1 for r in R if r[3] and r[1] in JUDGED)
    wrong = sum(1 for r in R if r[3] and r[1] in WRONG)
    missed = sum(1 for r in R if not r[3] and r[1] == 'missed')
    unk = sum(1 for r in R if r[3] and r[1] == 'unknown')
    return dict(total=tot, resolved=res, share=round(100 * res / tot, 1), judged=judged, wrong=wrong,
                wrong_rate=round(100 * wrong / judged, 1) if judged else 0, missed=missed, unknown_resolved=unk, cross=dict(x)), R

def py_patterns(R):
    o = {}
    sup = [r for r in R if r[0].startswith('super/')]
    rs = [r for r in sup if r[3]]
    o['super(): resolved/total'] = f"{len(rs)}/{len(sup)}"
    o['super(): wrong'] = sum(r[1] in WRONG for r in rs)
    o['super(): right'] = sum(r[1] == 'right' for r in rs)
    o['super(): base further up (right-shadowed)'] = sum(r[1] == 'right-shadowed' for r in rs)
    o['super(): self-loops'] = sum(1 for r in rs if r[3]['path'] == r[2][0] and r[3]['q'] == r[2][1])
    o['super(): missed'] = sum(1 for r in sup if r[1] == 'missed')
    o['`super` builtin resolved'] = sum(1 for r in R if r[0] == 'name/builtin' and r[2][2] == 'super' and r[3])
    for c, lab in [('name/builtin', 'bare builtins'), ('extattr', 'stdlib module.attr'), ('name/external', 'names imported from stdlib'), ('literal', 'literal receivers')]:
        xs = [r for r in R if r[0] == c]
        o[f'{lab}: resolved/total'] = f"{sum(1 for r in xs if r[3])}/{len(xs)}"
    bm = [r for r in R if r[0].startswith('name/') and r[3] and r[3]['kind'] == 'method']
    o['bare call -> method'] = len(bm)
    o['bare call -> method, oracle-wrong'] = sum(r[1] in WRONG for r in bm)
    sf = [r for r in R if r[0].startswith('self/') and r[3]]
    o['self.m: resolved'] = len(sf)
    o['self.m: wrong (same file)'] = f"{sum(r[1] in WRONG for r in sf)} ({sum(1 for r in sf if r[1] in WRONG and r[3]['path'] == r[2][0])})"
    o['self.m: base method instead of override'] = sum(r[1] == 'right-shadowed' for r in sf)
    o['self.m: missed'] = sum(1 for r in R if r[0].startswith('self/') and r[1] == 'missed')
    nd = [r for r in R if r[0] == 'name/def' and r[1] == 'wrong' and r[4] and r[3]['path'] == r[4][0] == r[2][0] and r[3]['name'] == r[4][1].rsplit('.', 1)[-1]]
    o['nested def of same name (wrong, same file)'] = len(nd)
    for c, lab in [('classattr/', 'Class.m'), ('modattr/def', 'mod.f')]:
        xs = [r for r in R if r[0].startswith(c) and r[3]]
        o[f'{lab}: wrong/resolved'] = f"{sum(r[1] in WRONG for r in xs)}/{len(xs)}"
        o[f'{lab}: missed'] = sum(1 for r in R if r[0].startswith(c) and r[1] == 'missed')
    o['unknown receivers resolved'] = sum(1 for r in R if r[0] == 'unknown-recv' and r[3])
    o['name/def missed'] = sum(1 for r in R if r[0] == 'name/def' and r[1] == 'missed')
    return o

def rs_patterns(R):
    o = {}
    for c, lab in [('macro/std', 'std macros'), ('path/external', 'std/external paths'), ('path/type', 'Type::assoc'), ('path/module', 'module::f'),
                   ('macro/crate', 'crate macros'), ('method/self', 'self.m'), ('path/Self', 'Self::f'), ('bare/std', 'prelude fns (Ok, drop..)'),
                   ('bare/crate', 'bare crate fn'), ('bare/used', 'bare used fn'), ('method/other', 'unknown-receiver methods')]:
        xs = [r for r in R if r[0] == c]
        rs = [r for r in xs if r[3]]
        o[f'{lab}: wrong/resolved/total'] = f"{sum(r[1] in WRONG for r in rs)}/{len(rs)}/{len(xs)}"
        o[f'{lab}: missed'] = sum(1 for r in xs if r[1] == 'missed')
    pt = [r for r in R if r[0] == 'path/type' and r[1] == 'wrong']
    o['Type::assoc wrong named new'] = sum(1 for r in pt if r[2][2] == 'new')
    o['Type::assoc wrong same file'] = sum(1 for r in pt if r[3]['path'] == r[2][0])
    bm = [r for r in R if r[0].startswith('bare') and r[3] and r[3]['kind'] == 'method']
    o['bare fn -> method'] = len(bm)
    o['bare fn -> method, self-loops'] = sum(1 for r in bm if r[3]['path'] == r[2][0] and r[2][1] and r[2][1].endswith(r[3]['name']))
    o['drop( -> method'] = sum(1 for r in bm if r[2][2] == 'drop')
    o['any target outside caller deps'] = sum(1 for r in R if r[3] and r[4] == 'crate not a dependency') + 0
    import rs_oracle_reach as RR
    o['any target in non-dependency crate'] = sum(1 for r in R if r[3] and not RR.ok(r[2][0], r[3]['path']))
    o['.unwrap -> MatchesError.unwrap'] = sum(1 for r in R if r[3] and r[2][2] == 'unwrap' and r[3]['q'].endswith('MatchesError.unwrap'))
    o['Poll::Ready -> tokio Ready'] = sum(1 for r in R if r[3] and r[2][2] == 'Ready' and r[3]['q'] == 'Ready')
    o['Token![..] -> non-macro'] = sum(1 for r in R if r[3] and r[2][2] == 'Token' and r[3]['kind'] != 'macro')
    o['method/self unresolved'] = sum(1 for r in R if r[0] == 'method/self' and not r[3])
    return o

def ts_patterns(R):
    o = {}
    for c in ['super', 'this', 'bare/imported', 'bare/same-file', 'member/class', 'member/ns']:
        xs = [r for r in R if r[0] == c]
        rs = [r for r in xs if r[3]]
        o[f'{c}: wrong/resolved/total'] = f"{sum(r[1] in WRONG for r in rs)}/{len(rs)}/{len(xs)}"
        o[f'{c}: missed'] = sum(1 for r in xs if r[1] == 'missed')
    o['globals resolved'] = sum(1 for r in R if r[0] in ('bare/global', 'member/global', 'bare/external', 'member/external') and r[3])
    o['unknown receivers resolved'] = sum(1 for r in R if r[3] and r[1] == 'unknown' and r[0].startswith('member/'))
    o['all unknown resolved'] = sum(1 for r in R if r[3] and r[1] == 'unknown')
    return o

if __name__ == '__main__':
    sys.path.insert(0, NEW)
    out = {}
    for name, pk, f in [('django', 'py_results.pkl', py_patterns), ('rust-crates', 'rs_results.pkl', rs_patterns), ('ts-rxjs', 'ts_results.pkl', ts_patterns)]:
        rows = {}
        for w in ['calls', 'calls2']:
            ov, R = overall(w, name, pk)
            rows[w] = {**ov, **f(R)}
        print(f'### {name}')
        for k in rows['calls']:
            print(f'| {k} | {rows["calls"][k]} | {rows["calls2"][k]} |')
