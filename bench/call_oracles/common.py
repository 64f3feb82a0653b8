import glob, duckdb, json, collections, re, os

def snap(name):
    return glob.glob(f"{os.environ.get('SNAPROOT', '/tmp/s56/rc')}/{name}/*/")[0]

def load(name, lang_like):
    d = snap(name)
    con = duckdb.connect()
    files = dict(con.execute(f"select path, content from '{d}files.parquet' where language {lang_like}").fetchall())
    mods = dict(con.execute(f"select path, module_path from '{d}files.parquet' where language {lang_like}").fetchall())
    syms = {}
    for r in con.execute(f"select symbol_id, path, name, qualified_name, kind, container, start_line, end_line from '{d}symbols.parquet'").fetchall():
        syms[r[0]] = dict(zip(['id', 'path', 'name', 'q', 'kind', 'container', 'start', 'end'], r))
    edges = con.execute(f"""select e.src_path, e.src_symbol, e.dst_name, e.line, e.dst_symbol_id, e.resolved
        from '{d}edges.parquet' e join '{d}files.parquet' f on f.path=e.src_path
        where e.kind='calls' and f.language {lang_like}""").fetchall()
    # new dst_name keeps the receiver/path (`self.save`, `Type::new`): match on the last identifier, keep the full name as e[6]
    edges = [(e[0], e[1], last_ident(e[2]), e[3], e[4], e[5], e[2]) for e in edges]
    return d, files, mods, syms, edges

def line_of(files, path, line):
    return files[path].split('\n')[line - 1].strip()[:140]


def last_ident(s):
    s = s.rstrip('!')  # a Rust macro call is written `m!` (feature 13)
    m = re.search(r'[A-Za-z_$][\w$]*$', s)
    return m.group(0) if m else s
