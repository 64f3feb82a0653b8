import pickle, sys, collections, random, json
sys.path.insert(0, '/tmp/s56/calls2')
from common import line_of
import py_oracle as O
files, syms, edges = O.files, O.syms, O.edges
res = pickle.load(open('/tmp/s56/calls2/py_expect.pkl', 'rb'))['res']
SUB = O.all_subclasses()

by_key = collections.defaultdict(list)
for e in edges:
    by_key[(e[0], e[3], e[2])].append(e)

stats = collections.Counter()
wrong = collections.defaultdict(list)
right = collections.defaultdict(list)
missed = collections.defaultdict(list)
unmatched_edges = 0
rows = []  # (category, verdict, edge, expectation)


def verdict(exp, tgt):
    """'right' / 'wrong' / 'unknown' / 'override' for a resolved target (or None)."""
    cat = exp[0]
    if cat == 'name':
        k = exp[1]
        if k == 'def':
            want = (exp[2], exp[3])
            return ('right' if tgt and (tgt['path'], tgt['q']) == want else ('wrong' if tgt else 'missed')), want
        if k in ('builtin', 'external'):
            return ('wrong' if tgt else 'right-unres'), None
        if k == 'module':
            return 'unknown', None
        return 'unknown', None  # local var, module var, unknown
    if cat == 'modattr':
        k = exp[2]
        if k == 'def':
            want = (exp[3], exp[4])
            return ('right' if tgt and (tgt['path'], tgt['q']) == want else ('wrong' if tgt else 'missed')), want
        if k == 'external':
            return ('wrong' if tgt else 'right-unres'), None
        return 'unknown', None
    if cat in ('extattr', 'literal'):
        return ('wrong' if tgt else 'right-unres'), None
    if cat in ('self', 'super', 'classattr'):
        k = exp[1]
        if k == 'method':
            want = exp[2]
            oks = set(exp[3])
            if not tgt:
                return 'missed', want
            t = (tgt['path'], tgt['q'])
            if t == want:
                return 'right', want
            if t in oks:
                return 'right-shadowed', want  # a base's definition that the class overrides
            return 'wrong', want
        if k == 'not-in-mro':
            complete, cls = exp[2], exp[3]
            if not tgt:
                return 'right-unres' if complete else 'unknown', None
            # target a method of a subclass of cls?
            tc = tgt['container']
            if tgt['kind'] == 'method' and tc:
                if (tgt['path'], tc) in SUB.get(cls, ()):
                    return 'override', None
            return ('wrong' if complete else 'wrong-incomplete'), None
        return 'unknown', None
    return 'unknown', None


unmatched = 0
ambiguous = 0
results = []
for key, es in by_key.items():
    exps = res.get(key)
    if not exps:
        unmatched += len(es)
        continue
    if len(set(map(repr, exps))) > 1:
        ambiguous += len(es)
        continue
    exp = exps[0]
    for e in es:
        tgt = syms.get(e[4]) if e[4] is not None else None
        v, want = verdict(exp, tgt)
        sub = exp[0] + ('/' + str(exp[1]) if exp[0] in ('name', 'self', 'super', 'classattr') else '/' + str(exp[2]) if exp[0] == 'modattr' else '')
        results.append((sub, v, e, tgt, want, exp))
pickle.dump(results, open('/tmp/s56/calls2/py_results.pkl', 'wb'))
print('edges', len(edges), 'resolved', sum(1 for e in edges if e[4] is not None), 'unmatched', unmatched, 'ambiguous', ambiguous)
tab = collections.Counter((r[0], r[1]) for r in results)
cats = sorted(set(r[0] for r in results))
vs = ['right', 'right-shadowed', 'override', 'wrong', 'wrong-incomplete', 'missed', 'right-unres', 'unknown']
print('%-28s' % 'category' + ''.join('%16s' % v for v in vs) + '   resolved')
for c in cats:
    nres = sum(1 for r in results if r[0] == c and r[3] is not None)
    print('%-28s' % c + ''.join('%16d' % tab[(c, v)] for v in vs) + '%10d' % nres)
