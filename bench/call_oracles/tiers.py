import pickle, duckdb, glob, collections, sys
def tiers(lang, pk, wrong_verdicts=('wrong','wrong-incomplete')):
    d=glob.glob(f'/tmp/s56/rc/{lang}/*/')[0]
    con=duckdb.connect()
    imp=collections.defaultdict(set); impdirs=collections.defaultdict(set)
    paths=set(r[0] for r in con.execute(f"select path from '{d}files.parquet'").fetchall())
    for s,dp in con.execute(f"select src_path,dst_path from '{d}edges.parquet' where kind='imports' and dst_path is not null").fetchall():
        (imp if dp in paths else impdirs)[s].add(dp)
    R=pickle.load(open(pk,'rb'))
    def tier(e,t):
        sp=e[0]; tp=t['path']
        if tp==sp: return '1 same file'
        if tp in imp[sp]: return '2 imported file'
        if tp.rsplit('/',1)[0] in impdirs[sp]: return '3 imported dir'
        if tp.rsplit('/',1)[0]==sp.rsplit('/',1)[0]: return '4 same dir'
        return '5 unique in repo'
    out={}
    for name,sel in [('wrong',lambda r:r[1] in wrong_verdicts),('all resolved',lambda r:True)]:
        c=collections.Counter(tier(r[2],r[3]) for r in R if r[3] and sel(r))
        out[name]=c
        print(lang,name,sorted(c.items()), sum(c.values()))
    return R
tiers('django','py_results.pkl')
tiers('rust-crates','rs_results.pkl')
tiers('ts-rxjs','ts_results.pkl')
