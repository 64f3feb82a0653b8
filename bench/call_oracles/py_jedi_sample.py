"""Judge Python calls with Jedi (pip `jedi`) over the whole corpus, stop 67.

Usage:
  python3 py_jedi_sample.py sample SNAPSHOT_DIR N [SEED] [--dump F.jsonl]
  python3 py_jedi_sample.py diff OLD_SNAPSHOT_DIR NEW_SNAPSHOT_DIR N

Both read snapshots of the pinned django corpus (~/.cache/code-index/corpora/django).

`sample` draws N of every Python call of the snapshot (seeded, resolved or not) and sorts each by
what Jedi's `goto(follow_imports=True)` says of it (jedi_judge.py):
  right           resolved where Jedi puts it (same file and a line inside the definition, or the
                  same dotted name: Jedi answers Django from its bundled django-stubs)
  elsewhere       resolved, Jedi puts it on another definition of the repository
  res-but-outside resolved, Jedi puts it outside the repository (the standard library, typeshed's
                  builtins, django-stubs of a definition we place elsewhere) or on a local value
  missed          unresolved, Jedi puts it in the repository
  unres-agree     unresolved, Jedi puts it outside, or on a name bound inside a function (a local value)
  jedi-none / nocol / err: Jedi infers nothing / the call is not on its line as written / Jedi failed
A sample of 3,000 takes about 4 minutes.

`diff` joins the calls of two snapshots by (file, caller, name, line), splits those whose target
changed into new / changed / lost, draws N of each and tallies (old verdict, new verdict).
"""
import collections
import json
import random
import sys
import time

import duckdb

from jedi_judge import Judge, compare, paired_calls, verdict

ROOT = '~/.cache/code-index/corpora/django'


def classify(row, jt):
    v = verdict(row[4], row[6], row[7], jt, row[5])
    if v in ('nocol', 'err', 'jedi-none'):
        return v
    if row[4] is None:
        return 'unres-agree' if v == 'agree' else 'missed'
    if v == 'agree':
        return 'right'
    inrepo = [x for x in jt if not x[0].startswith('EXT:') and x[0] not in ('builtin', 'LOCAL')]
    return 'elsewhere' if inrepo else 'res-but-outside'


def sample(snap, n, seed, dump):
    rows = duckdb.connect().sql(f"""
        select e.src_path, e.line, e.dst_name, e.receiver_type, s.path, s.qualified_name, s.start_line, s.end_line
        from '{snap}/edges.parquet' e left join '{snap}/symbols.parquet' s on s.symbol_id = e.dst_symbol_id
        where e.kind = 'calls' and e.src_path like '%.py'
        order by e.src_path, e.line, e.dst_name, e.src_symbol, e.dst_symbol_id""").fetchall()
    random.seed(seed)
    drawn = random.sample(rows, min(n, len(rows)))
    judge = Judge(ROOT)
    tally = collections.Counter()
    out = []
    t0 = time.time()
    for r in drawn:
        jt = judge.target(r[0], r[1], r[2])
        cls = classify(r, jt)
        tally[cls] += 1
        out.append(dict(src=r[0], line=r[1], dst=r[2], receiver_type=r[3], ours=list(r[4:]),
                        jedi=jt if isinstance(jt, str) else jt[:4], cls=cls))
    print(f'{len(drawn)} of {len(rows)} calls in {time.time() - t0:.0f} s')
    for k, v in tally.most_common():
        print(f'{k:16} {v:6} {100 * v / len(drawn):5.1f} %')
    if dump:
        with open(dump, 'w') as f:
            for o in out:
                f.write(json.dumps(o, default=str) + '\n')


def diff(old, new, n):
    rows = paired_calls(old, new, "os.path is distinct from ns.path "
                                  "or os.qualified_name is distinct from ns.qualified_name")
    compare(rows, ['new', 'changed', 'lost'], n, Judge(ROOT), examples=12)


if __name__ == '__main__':
    args = sys.argv[1:]
    dump = None
    if '--dump' in args:
        i = args.index('--dump')
        dump = args[i + 1]
        del args[i:i + 2]
    if args[:1] == ['sample']:
        sample(args[1], int(args[2]), int(args[3]) if len(args) > 3 else 11, dump)
    elif args[:1] == ['diff']:
        diff(args[1], args[2], int(args[3]))
    else:
        sys.exit(__doc__)
