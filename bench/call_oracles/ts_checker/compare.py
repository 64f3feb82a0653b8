"""Our `calls` edges against the TypeScript checker's (the TSV of calls.mjs).

    python3 compare.py SNAPSHOT_DIR calls.tsv [shape:verdict ...]   # e.g. "bare:repo: elsewhere" prints 15 samples

A checker call is matched to our edge by file, line and callee name (two on a
line with one name: `ambiguous`). Verdicts, per shape (bare, member, this,
new, super): `repo: right` (our target's file and name or start line are the
checker's), `repo: elsewhere`, `repo: ours unresolved`; `local target`
(the checker's declaration is no symbol of ours: a parameter, a local) and
`external` (lib.d.ts, DOM) split by whether we resolved it (wrong) or not.
bench/results/ts-declarations.md holds the figures."""
import sys, duckdb, collections, random
snap, tsv = sys.argv[1], sys.argv[2]
con=duckdb.connect()
edges=con.execute(f"""select e.src_path, e.line, e.dst_name, e.dst_path, s.name_line, s.start_line, s.qualified_name, e.receiver_type
  from '{snap}/edges.parquet' e left join '{snap}/symbols.parquet' s on s.symbol_id=e.dst_symbol_id where e.kind='calls'""").fetchall()
last=lambda n: n.split('.')[-1].split('::')[-1]
symlines=set()
for p_,nl_,sl_ in con.execute(f"select path, name_line, start_line from '{snap}/symbols.parquet'").fetchall():
    symlines.add((p_,str(nl_))); symlines.add((p_,str(sl_)))
ours=collections.defaultdict(list)
for sp,l,dn,dp,nl,sl,qn,rt in edges:
    ours[(sp,l,last(dn))].append((dn,dp,nl,sl,qn,rt))
st=collections.Counter(); ex=collections.defaultdict(list)
for line in open(tsv):
    f=line.rstrip('\n').split('\t')
    if len(f)<7: continue
    sp,l,written,shape,tp,tl,tn=f
    name = written.split('.')[-1] if shape!='new' else written[4:].split('.')[-1].split('<')[0]
    if shape=='super' and written=='super': continue
    cand=ours.get((sp,int(l),name),[])
    if len(cand)!=1:
        st[(shape,'no edge' if not cand else 'ambiguous')]+=1; continue
    dn,dp,nl,sl,qn,rt=cand[0]
    if tp=='?': verdict='oracle unresolved' + (' / ours resolved' if dp else '')
    elif tp=='-': verdict='external: ours unresolved' if not dp else 'external: ours resolved (wrong)'
    elif (tp,tl) not in symlines: verdict='local target: ours resolved (wrong)' if dp else 'local target: ours unresolved'
    elif not dp: verdict='repo: ours unresolved'
    elif dp==tp and str(nl)==tl or (dp==tp and str(sl)==tl): verdict='repo: right'
    else: verdict='repo: elsewhere'
    st[(shape,verdict)]+=1
    ex[(shape,verdict)].append((sp,l,written,tp,tl,tn,dp,nl,qn))
tot=collections.Counter()
for (sh,v),n in sorted(st.items()): print(f"{sh:7} {v:35} {n}"); tot[v]+=n
print('ALL', dict(tot))
if len(sys.argv)>3:
    random.seed(1)
    for k in sys.argv[3:]:
        sh,v=k.split(':',1)
        L=ex[(sh,v)]; print('--',k,len(L))
        for e in random.sample(L,min(15,len(L))): print('  ',e)
