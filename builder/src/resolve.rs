//! Cross-file resolution of raw relations: imports to files (or Go package
//! directories), calls and bases to definitions. Preference order for a
//! name: the same file, files it imports, the same directory, then a
//! definition unique in the repository; anything else stays unresolved.

use std::collections::{BTreeMap, HashSet};

// Looked up for each of millions of edges: foldhash, not SipHash.
use foldhash::{HashMap, HashMapExt};
use std::sync::Arc;

use crate::language::Lang;
use crate::modules::Modules;
use crate::parse::RawEdge;

/// A definition, compactly (kept for every file until resolution).
pub struct FactSym {
    pub qname: Box<str>,
    /// Byte offset of the simple name inside `qname`.
    pub name_at: u32,
    pub kind: &'static str,
    pub id: i64,
    /// A Rust function returning its own type ([`RET_SELF`],
    /// [`RET_SELF_RESULT`]; else 0).
    pub ret: u8,
    /// Its lines (Rust: which `use` inside a function or module is in
    /// sight of a caller, feature 48).
    pub lines: (u32, u32),
}

impl FactSym {
    pub fn new(name: &str, qname: &str, kind: &'static str, id: i64) -> FactSym {
        FactSym {
            name_at: (qname.len() - name.len()) as u32,
            qname: qname.into(),
            kind,
            id,
            ret: 0,
            lines: (0, 0),
        }
    }
    pub fn name(&self) -> &str {
        &self.qname[self.name_at as usize..]
    }
}

/// What resolution needs of each file.
pub struct FileFacts {
    pub path: String,
    pub lang: Lang,
    pub symbols: Vec<FactSym>,
    pub edges: Vec<RawEdge>,
    /// Rust: each struct field's qualified name and declared type; and each
    /// generic struct's, enum's or union's parameters under `Type.<>`
    /// (`A1,B1`, feature 38). Go: each struct field's.
    pub fields: Vec<(Box<str>, Box<str>)>,
    /// Go: each function's and method's first result type as its signature
    /// writes it (`*File` of `func Open(name string) (*File, error)`), by
    /// symbol index, sorted.
    pub go_results: Vec<(u32, Box<str>)>,
    /// Go: each package-level variable's and constant's type as its
    /// declaration shows it ([`go_var_type`]), by symbol index, sorted.
    pub go_vars: Vec<(u32, Box<str>)>,
    /// Go: what a type that is neither struct nor interface stands for, by
    /// symbol index, sorted: a slice, array, map or channel type (`[]*Item`
    /// of `type items []*Item`), or an alias (`= types.TypeParamList`),
    /// as [`go_underlying`] reads them (feature 30).
    pub go_types: Vec<(u32, Box<str>)>,
    /// Rust: what each module-level type alias names (`&'a ParseBuffer<'a>`
    /// of `pub type ParseStream<'a> = &'a ParseBuffer<'a>;`), by symbol
    /// index, sorted (feature 31).
    pub rust_aliases: Vec<(u32, Box<str>)>,
    /// Python: what each module-level variable's declaration shows of its
    /// value ([`py_value`]: `Signal()` of `request_finished = Signal()`,
    /// `Distance` of `D = Distance`), by symbol index, sorted (feature 32).
    pub py_values: Vec<(u32, Box<str>)>,
    /// Python: what each function's and method's result is
    /// ([`py_return_value`]: `Template()` of `return Template(…)`, `self`,
    /// `self._chain()`), by symbol index, sorted (feature 59).
    pub py_returns: Vec<(u32, Box<str>)>,
    /// Rust: each function's and method's declared return type
    /// ([`rust_return_type`]), by symbol index, sorted (feature 33).
    pub rust_rets: Vec<(u32, Box<str>)>,
    pub js_callbacks: JsCallbacks,
    /// JS/TS: each function's and method's declared return type, as the
    /// class or interface it names ([`ts_return_type`]), by symbol index,
    /// sorted (feature 28).
    pub js_returns: Vec<(u32, Box<str>)>,
}

/// JS/TS: what a function's signature says of the callbacks it takes
/// (feature 27): by symbol index, sorted, each parameter whose type is a
/// function type, with the class or interface each of that function type's
/// parameters names ([`ts_callback_params`]).
pub type JsCallbacks = Vec<(u32, Vec<(u8, Vec<Option<Box<str>>>)>)>;

/// A resolved edge row.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub kind: &'static str,
    pub src_path: String,
    pub src_symbol: Option<Arc<str>>,
    pub src_symbol_id: Option<i64>,
    pub dst_name: String,
    pub dst_path: Option<String>,
    pub dst_symbol_id: Option<i64>,
    pub line: u32,
    pub resolved: bool,
    pub receiver_type: Option<String>,
    /// An import that renames: the name it binds.
    pub alias: Option<String>,
}

type SymRef = (u32, u32); // (file index, symbol index)

/// A name: letters, digits and `_` only, not empty.
fn is_word(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn dir_of(p: &str) -> &str {
    p.rfind('/').map(|i| &p[..i]).unwrap_or("")
}

fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

fn join(dir: &str, rel: &str) -> String {
    if dir.is_empty() {
        rel.to_string()
    } else {
        format!("{dir}/{rel}")
    }
}

struct Index<'a> {
    files: &'a [FileFacts],
    paths: HashMap<&'a str, u32>,
    by_basename: HashMap<&'a str, Vec<&'a str>>,
    by_name: HashMap<&'a str, Vec<SymRef>>,
    by_dir_name: HashMap<(&'a str, &'a str), Vec<SymRef>>,
    /// Go's package-level variables by (directory, name), which calls do
    /// not name (their types do, feature 22).
    go_vars: HashMap<(&'a str, &'a str), Vec<SymRef>>,
    py_modules: HashMap<String, &'a str>,
    go_packages: BTreeMap<String, String>,
    /// Every directory that holds a file, and their ancestors.
    dirs: std::collections::HashSet<String>,
    npm: BTreeMap<String, String>,
    crates: BTreeMap<String, String>,
    /// JS/TS files that define nothing (barrels), with the files they
    /// import or re-export.
    barrels: HashMap<u32, Vec<u32>>,
    /// Rust crates (first path segments) with a `clone` method returning
    /// another type than its own, whose `.clone()` calls keep it (feature 40).
    odd_clone: std::collections::HashSet<&'a str>,
    /// Rust: each trait's name with the types its `impl`s are for (`impl
    /// AsyncWrite for BufWriter<W>`: `AsyncWrite` → `BufWriter`; a blanket
    /// impl's generic parameter, `W`), feature 53.
    rust_impls: HashMap<&'a str, Vec<&'a str>>,
}

/// Resolves files' raw edges one file at a time (so edges can be streamed).
pub struct Resolver<'a> {
    idx: Index<'a>,
    modules: &'a Modules,
}

impl<'a> Resolver<'a> {
    /// Index every file's definitions. Files must be sorted by path.
    pub fn new(files: &'a [FileFacts], modules: &'a Modules) -> Resolver<'a> {
        Resolver {
            idx: build_index(files, modules),
            modules,
        }
    }

    /// Resolved edges of file `fi`, sorted.
    pub fn file_edges(&self, fi: usize) -> Vec<Edge> {
        resolve_file(&self.idx, fi as u32, &self.idx.files[fi], self.modules)
    }
}

fn build_index<'a>(files: &'a [FileFacts], modules: &Modules) -> Index<'a> {
    let mut paths = HashMap::new();
    let mut dirs = std::collections::HashSet::new();
    let mut by_basename: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut by_name: HashMap<&str, Vec<SymRef>> = HashMap::new();
    let mut by_dir_name: HashMap<(&str, &str), Vec<SymRef>> = HashMap::new();
    let mut py_modules = HashMap::new();
    let mut go_vars: HashMap<(&str, &str), Vec<SymRef>> = HashMap::new();
    for (fi, f) in files.iter().enumerate() {
        paths.insert(f.path.as_str(), fi as u32);
        let mut d = dir_of(&f.path);
        loop {
            if !dirs.insert(d.to_string()) || d.is_empty() {
                break;
            }
            d = dir_of(d);
        }
        by_basename
            .entry(f.path.rsplit('/').next().unwrap())
            .or_default()
            .push(f.path.as_str());
        for (si, sym) in f.symbols.iter().enumerate() {
            if sym.kind == "variable" && f.lang == Lang::Go {
                go_vars
                    .entry((dir_of(&f.path), sym.name()))
                    .or_default()
                    .push((fi as u32, si as u32));
            }
            if sym.kind == "field" || sym.kind == "variable" {
                continue;
            }
            by_name
                .entry(sym.name())
                .or_default()
                .push((fi as u32, si as u32));
            by_dir_name
                .entry((dir_of(&f.path), sym.name()))
                .or_default()
                .push((fi as u32, si as u32));
        }
        if f.lang == Lang::Python {
            let info = modules.of(&f.path, Lang::Python);
            let stem = f
                .path
                .rsplit('/')
                .next()
                .unwrap()
                .trim_end_matches(".pyi")
                .trim_end_matches(".py");
            let base = info.module_path.clone().unwrap_or_default();
            let name = if stem == "__init__" {
                base
            } else if base.is_empty() {
                stem.to_string()
            } else {
                format!("{base}.{stem}")
            };
            if !name.is_empty() {
                py_modules.entry(name).or_insert(f.path.as_str());
            }
        }
    }
    let mut idx = Index {
        files,
        go_packages: modules.go_packages(&dirs),
        dirs,
        npm: modules.npm_packages(),
        crates: modules.crates(),
        paths,
        by_basename,
        by_name,
        by_dir_name,
        go_vars,
        py_modules,
        barrels: HashMap::new(),
        odd_clone: Default::default(),
        rust_impls: HashMap::new(),
    };
    for f in files.iter().filter(|f| f.lang == Lang::Rust) {
        for e in f.edges.iter().filter(|e| e.kind == "implements") {
            let Some(ty) = e.src_symbol.as_deref() else {
                continue;
            };
            let tr = e.dst_name.split('<').next().unwrap_or(&e.dst_name);
            let tr = tr.rsplit("::").next().unwrap_or(tr).trim();
            idx.rust_impls.entry(tr).or_default().push(ty);
        }
    }
    idx.odd_clone = idx
        .by_name
        .get("clone")
        .into_iter()
        .flatten()
        .filter(|r| {
            let s = &files[r.0 as usize].symbols[r.1 as usize];
            s.kind == "method" && s.ret != RET_SELF && files[r.0 as usize].lang == Lang::Rust
        })
        .map(|r| files[r.0 as usize].path.split('/').next().unwrap_or(""))
        .collect();
    // JS/TS barrels (feature 26): a file that defines nothing of its own,
    // with the files its `export … from` (and any other import) name.
    let barrels: HashMap<u32, Vec<u32>> = files
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            matches!(f.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx)
                && f.symbols.is_empty()
        })
        .filter_map(|(bi, bf)| {
            let targets: Vec<u32> = bf
                .edges
                .iter()
                .filter(|e| e.kind == "imports")
                .filter_map(|e| {
                    let d = resolve_import(&idx, bf, &e.dst_name, modules)?;
                    idx.paths.get(d.as_str()).copied()
                })
                .collect();
            (!targets.is_empty()).then_some((bi as u32, targets))
        })
        .collect();
    idx.barrels = barrels;
    idx
}

fn resolve_file(idx: &Index, fi: u32, f: &FileFacts, modules: &Modules) -> Vec<Edge> {
    let own: HashMap<&str, i64> = f.symbols.iter().rev().map(|s| (&*s.qname, s.id)).collect();
    let mut out = Vec::with_capacity(f.edges.len());
    // Imports first: their targets guide name resolution.
    let mut imported: Vec<u32> = Vec::new();
    let mut imported_dirs: Vec<String> = Vec::new();
    // Python: the package (`__init__.py`) each `from P import X` names, with
    // `X`: a bare `X()` is looked up under that package only.
    let mut named_pkgs: Vec<(u32, &str)> = Vec::new();
    // Go: the name a file calls each imported package by, and its directory.
    let mut go_names: HashMap<&str, Option<String>> = HashMap::new();
    for e in f.edges.iter().filter(|e| e.kind == "imports") {
        let dst = resolve_import(idx, f, &e.dst_name, modules);
        if f.lang == Lang::Go {
            // `import f "fmt"` calls the package `f`.
            let name = e.alias.as_deref();
            go_names.insert(name.unwrap_or(go_package_name(&e.dst_name)), dst.clone());
        }
        if let Some(d) = &dst {
            match idx.paths.get(d.as_str()) {
                Some(&i) => {
                    imported.push(i);
                    if f.lang == Lang::Python {
                        let name = e.dst_name.rsplit('.').next().unwrap_or(&e.dst_name);
                        named_pkgs.push((i, name));
                    }
                }
                None => imported_dirs.push(d.clone()),
            }
        }
        out.push(Edge {
            kind: e.kind,
            src_path: f.path.clone(),
            src_symbol: e.src_symbol.clone(),
            src_symbol_id: e.src_symbol.as_deref().and_then(|s| own.get(s).copied()),
            resolved: dst.is_some(),
            dst_name: e.dst_name.clone(),
            dst_path: dst,
            dst_symbol_id: None,
            line: e.line,
            receiver_type: None,
            alias: e.alias.clone(),
        });
    }
    // JS/TS: the files a barrel the file imports re-exports (`export * from
    // "./errors"` in an `internal.ts` or `index.ts` that defines nothing of
    // its own), up to four barrels deep, after the file's own imports
    // (feature 26).
    let direct = imported.len();
    let mut reexported: HashSet<u32> = HashSet::new();
    if matches!(f.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx) && !idx.barrels.is_empty()
    {
        let mut seen: HashSet<u32> = imported.iter().copied().collect();
        seen.insert(fi);
        let mut frontier: Vec<u32> = imported.clone();
        for _ in 0..4 {
            let mut next = Vec::new();
            for b in frontier {
                for &t in idx.barrels.get(&b).into_iter().flatten() {
                    if seen.insert(t) {
                        imported.push(t);
                        reexported.insert(t);
                        next.push(t);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
    }
    // The imports that rename (feature 16), looked up by every call.
    let aliases = renaming_imports(f);
    let py_plain = py_plain_imports(f);
    let file_imports = FileImports {
        files: &imported,
        direct,
        reexported: &reexported,
        dirs: &imported_dirs,
        named_pkgs: &named_pkgs,
        aliases: &aliases,
        py_plain: &py_plain,
        modules,
    };
    for e in f.edges.iter().filter(|e| e.kind != "imports") {
        let src_symbol_id = e.src_symbol.as_deref().and_then(|s| {
            own.get(s).copied().or_else(|| {
                // Go methods: the receiver type may live in another file of the package.
                let name = s.rsplit('.').next().unwrap_or(s);
                idx.by_dir_name
                    .get(&(dir_of(&f.path), name))
                    .and_then(|v| {
                        v.iter()
                            .map(|&(a, b)| &idx.files[a as usize].symbols[b as usize])
                            .find(|x| &*x.qname == s)
                    })
                    .map(|x| x.id)
            })
        });
        // A call through a field of `self` (Rust): the field's declared type.
        // (`where C: Consumer<T>; …`: the generic parameters in sight, and
        // a field of one of those types is what its bounds name, feature 35.)
        let bounds = e
            .recv_type
            .as_deref()
            .and_then(|t| t.strip_prefix("where "));
        let field = (e.kind == "calls"
            && f.lang == Lang::Rust
            && (e.recv_type.is_none() || bounds.is_some()))
        .then(|| self_field(idx, f, &e.dst_name, e.src_symbol.as_deref()))
        .flatten();
        let field_type = field.as_ref().map(|(_, _, t)| *t);
        let bound = field_type.zip(bounds).and_then(|(t, b)| {
            let mut t = rust_unref(t).to_string();
            // `@B1,A1`: the `impl`'s arguments of its type; the field's type is
            // the struct's parameter at some position, the `impl`'s
            // name for it the argument there (`struct Pair<A1, B1>`, `impl<B1:
            // Walker, A1: Runner> Pair<B1, A1>`: `first: A1` is `B1`).
            // (Parameters that do not show, a declaration cut short: none.)
            if let Some(args) = b.split("; ").next().and_then(|p| p.strip_prefix('@')) {
                let (sf, q, _) = field.as_ref()?;
                let params = rust_params_of(sf, q)?;
                let pos = params.split(',').position(|p| p == t)?;
                t = args.split(',').nth(pos)?.trim().to_string();
            }
            b.split("; ").find_map(|p| {
                let (n, b) = p.split_once(": ")?;
                (n == t).then(|| format!("impl {b}"))
            })
        });
        let recv_type = match bounds {
            Some(_) => bound.as_deref().or(field_type),
            None => e.recv_type.as_deref().or(field_type),
        };
        let (dst_path, dst_symbol_id) = if e.kind == "contains" {
            (Some(f.path.clone()), own.get(e.dst_name.as_str()).copied())
        } else if e.kind == "attribute" {
            // The class of the attribute's type, as the file names it
            // (`self.factory()`'s depends on the subclass: none).
            let written = recv_type.and_then(|t| match t.strip_prefix("type[") {
                Some(c) => c.strip_suffix(']').map(str::to_string),
                None if t.starts_with("self.") => None,
                None => t
                    .strip_suffix("()")
                    .map(str::to_string)
                    .or_else(|| python_annotation_type(t)),
            });
            // JS/TS: a field's annotation may name an interface (feature 26).
            let lookup = (matches!(f.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx)
                && !recv_type.is_some_and(|t| t.ends_with("()")))
            .then_some(TYPE_LOOKUP);
            let found = written
                .and_then(|w| find_scoped_call(idx, fi, f, &w, None, &file_imports, lookup))
                .filter(|r| kind_ok(idx.files[r.0 as usize].symbols[r.1 as usize].kind, true));
            match found {
                Some((a, b)) => (
                    Some(idx.files[a as usize].path.clone()),
                    Some(idx.files[a as usize].symbols[b as usize].id),
                ),
                None => (None, None),
            }
        } else {
            let name = simple_name(&e.dst_name);
            let class_like = e.kind != "calls";
            let found = if f.lang == Lang::Go {
                go_typed_call(
                    idx,
                    f,
                    &e.dst_name,
                    class_like,
                    &go_names,
                    recv_type,
                    modules,
                )
                .unwrap_or_else(|| find_go(idx, fi, f, &e.dst_name, class_like, &go_names))
            } else if !class_like && scoped_calls(f.lang) {
                find_scoped_call(
                    idx,
                    fi,
                    f,
                    &e.dst_name,
                    e.src_symbol.as_deref(),
                    &file_imports,
                    recv_type,
                )
            } else if f.lang == Lang::Rust {
                let (full, alias) = rust_unalias(&aliases, &e.dst_name);
                let outside =
                    alias.is_some_and(|a| resolve_import(idx, f, &a.dst_name, modules).is_none());
                (!outside)
                    .then(|| {
                        find_symbol(
                            idx,
                            fi,
                            f,
                            simple_name(&full),
                            class_like,
                            &imported,
                            &imported_dirs,
                        )
                    })
                    .flatten()
            } else {
                // Python (feature 32): a base whose first name an import binds
                // (`models.Manager`, `Field` of `from django.db.models import
                // Field`), read as Python reads it, unless the file defines that
                // name itself; a base made by a call names nothing.
                let head = e.dst_name.split('.').next().unwrap_or("");
                let py = (f.lang == Lang::Python && class_like)
                    .then(|| {
                        if e.dst_name.contains('(') {
                            return Some(None);
                        }
                        // (the class being defined does not count: `class Foo(Foo)`)
                        let own = f
                            .symbols
                            .iter()
                            .any(|s| *s.qname == *head && e.src_symbol.as_deref() != Some(head));
                        (!own)
                            .then(|| py_imported_class(idx, f, &e.dst_name, modules))
                            .flatten()
                    })
                    .flatten();
                // A base through a renaming import (`class Loader(BaseLoader)`).
                py.unwrap_or_else(|| {
                    through_alias(idx, f, &aliases, &e.dst_name, class_like, modules)
                        .unwrap_or_else(|| {
                            find_symbol(idx, fi, f, name, class_like, &imported, &imported_dirs)
                        })
                })
            };
            match found {
                Some((a, b)) => {
                    let tf = &idx.files[a as usize];
                    let s = &tf.symbols[b as usize];
                    (Some(tf.path.clone()), Some(s.id))
                }
                None => (None, None),
            }
        };
        out.push(Edge {
            kind: e.kind,
            src_path: f.path.clone(),
            src_symbol: e.src_symbol.clone(),
            src_symbol_id,
            dst_name: e.dst_name.clone(),
            resolved: dst_symbol_id.is_some(),
            dst_path,
            dst_symbol_id,
            line: e.line,
            receiver_type: recv_type.map(str::to_string),
            alias: None,
        });
    }
    out.sort_by(|a, b| {
        (a.kind, a.line, &a.dst_name, &a.src_symbol).cmp(&(
            b.kind,
            b.line,
            &b.dst_name,
            &b.src_symbol,
        ))
    });
    out
}

/// `models.Model` → `Model`; `Vec<T>` → `Vec`; `a::b::C` → `C`.
fn simple_name(s: &str) -> &str {
    let s = s.split(['<', '[', '(']).next().unwrap_or(s);
    let s = s.rsplit("::").next().unwrap_or(s);
    let s = s.rsplit('.').next().unwrap_or(s);
    s.trim()
}

fn kind_ok(kind: &str, class_like: bool) -> bool {
    if class_like {
        matches!(
            kind,
            "class" | "struct" | "interface" | "trait" | "type" | "enum" | "union"
        )
    } else {
        !matches!(
            kind,
            "field" | "variable" | "property" | "module" | "namespace"
        )
    }
}

fn find_symbol(
    idx: &Index,
    fi: u32,
    f: &FileFacts,
    name: &str,
    class_like: bool,
    imported: &[u32],
    imported_dirs: &[String],
) -> Option<SymRef> {
    let pick = |cands: &[SymRef], filter: &dyn Fn(&SymRef) -> bool| -> Option<SymRef> {
        cands
            .iter()
            .filter(|r| {
                filter(r)
                    && kind_ok(
                        idx.files[r.0 as usize].symbols[r.1 as usize].kind,
                        class_like,
                    )
            })
            .copied()
            .next()
    };
    let cands = idx.by_name.get(name)?;
    if let Some(r) = pick(cands, &|r| r.0 == fi) {
        return Some(r);
    }
    if let Some(r) = pick(cands, &|r| imported.contains(&r.0)) {
        return Some(r);
    }
    for d in imported_dirs {
        if let Some(v) = idx.by_dir_name.get(&(d.as_str(), name)) {
            if let Some(r) = pick(v, &|_| true) {
                return Some(r);
            }
        }
    }
    if let Some(v) = idx.by_dir_name.get(&(dir_of(&f.path), name)) {
        if let Some(r) = pick(v, &|_| true) {
            return Some(r);
        }
    }
    let ok: Vec<&SymRef> = cands
        .iter()
        .filter(|r| {
            kind_ok(
                idx.files[r.0 as usize].symbols[r.1 as usize].kind,
                class_like,
            )
        })
        .collect();
    if ok.len() == 1 {
        return Some(*ok[0]);
    }
    None
}

/// Languages whose calls keep what they select from (`self.save`,
/// `Type::new`, `this.next`) and are resolved by [`find_scoped_call`].
fn scoped_calls(l: Lang) -> bool {
    matches!(
        l,
        Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Rust
    )
}

/// Methods std's types and traits define (`Option`, `Result`, `Vec`,
/// slices, `str`, `String`, iterators, maps, atomics, pointers, paths,
/// `Clone`, `Hash`, `Display`, operators). On a Rust receiver of unknown
/// type, a call of one of these is std's far more often than the crate's
/// only method of the name: rust-analyzer puts 79 % of such guesses
/// elsewhere on the rust-crates corpus, 5 % of the others (stop 66).
/// Sorted.
const RUST_STD_METHODS: &[&str] = &[
    "add",
    "add_assign",
    "all",
    "and_then",
    "any",
    "append",
    "as_bytes",
    "as_deref",
    "as_deref_mut",
    "as_mut",
    "as_mut_ptr",
    "as_mut_slice",
    "as_ptr",
    "as_ref",
    "as_slice",
    "as_str",
    "binary_search",
    "bitand",
    "bitor",
    "bitxor",
    "borrow",
    "borrow_mut",
    "by_ref",
    "bytes",
    "capacity",
    "cast",
    "chain",
    "char_indices",
    "chars",
    "chunks",
    "clamp",
    "clear",
    "clone",
    "clone_from",
    "cloned",
    "cmp",
    "collect",
    "compare_exchange",
    "compare_exchange_weak",
    "concat",
    "contains",
    "contains_key",
    "copied",
    "copy_from_slice",
    "count",
    "dedup",
    "default",
    "deref",
    "deref_mut",
    "display",
    "div",
    "drain",
    "drop",
    "ends_with",
    "entry",
    "enumerate",
    "eq",
    "err",
    "exists",
    "expect",
    "extend",
    "extend_from_slice",
    "extension",
    "fetch_add",
    "fetch_and",
    "fetch_or",
    "fetch_sub",
    "file_name",
    "fill",
    "filter",
    "filter_map",
    "find",
    "finish",
    "first",
    "flat_map",
    "flatten",
    "fmt",
    "fold",
    "for_each",
    "from",
    "from_raw_parts",
    "fuse",
    "ge",
    "get",
    "get_key_value",
    "get_mut",
    "get_or_insert",
    "get_or_insert_with",
    "gt",
    "hash",
    "index",
    "index_mut",
    "insert",
    "inspect",
    "into",
    "into_iter",
    "is_char_boundary",
    "is_dir",
    "is_empty",
    "is_err",
    "is_file",
    "is_none",
    "is_null",
    "is_ok",
    "is_some",
    "iter",
    "iter_mut",
    "join",
    "keys",
    "last",
    "le",
    "len",
    "lines",
    "load",
    "lock",
    "lt",
    "map",
    "map_err",
    "map_or",
    "map_or_else",
    "max",
    "max_by_key",
    "min",
    "min_by_key",
    "mul",
    "ne",
    "neg",
    "next",
    "next_back",
    "not",
    "nth",
    "offset",
    "ok",
    "ok_or",
    "ok_or_else",
    "or_else",
    "or_insert",
    "or_insert_with",
    "parent",
    "parse",
    "partial_cmp",
    "partition",
    "path",
    "peekable",
    "poll",
    "pop",
    "position",
    "product",
    "push",
    "push_str",
    "read",
    "rem",
    "remove",
    "replace",
    "reserve",
    "resize",
    "retain",
    "rev",
    "reverse",
    "rfind",
    "rposition",
    "rsplit",
    "scan",
    "set_len",
    "shl",
    "shr",
    "size_hint",
    "skip",
    "skip_while",
    "sort",
    "sort_by",
    "sort_by_key",
    "sort_unstable",
    "sort_unstable_by",
    "split",
    "split_at",
    "split_at_mut",
    "split_off",
    "splitn",
    "starts_with",
    "step_by",
    "store",
    "strip_prefix",
    "strip_suffix",
    "sub",
    "sub_assign",
    "sum",
    "swap",
    "take",
    "take_while",
    "to_lowercase",
    "to_owned",
    "to_path_buf",
    "to_str",
    "to_string",
    "to_uppercase",
    "to_vec",
    "transpose",
    "trim",
    "trim_end",
    "trim_start",
    "truncate",
    "try_fold",
    "try_from",
    "try_into",
    "try_lock",
    "unwrap",
    "unwrap_or",
    "unwrap_or_default",
    "unwrap_or_else",
    "unwrap_unchecked",
    "values",
    "values_mut",
    "wake",
    "wake_by_ref",
    "windows",
    "with_capacity",
    "write",
    "write_bytes",
    "write_char",
    "write_fmt",
    "write_str",
    "zip",
];

/// Names Rust code calls without importing them: std's macros and the
/// prelude's functions and variants.
const RUST_PRELUDE: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "vec",
    "format",
    "format_args",
    "print",
    "println",
    "eprint",
    "eprintln",
    "write",
    "writeln",
    "panic",
    "unreachable",
    "unimplemented",
    "todo",
    "matches",
    "dbg",
    "concat",
    "stringify",
    "include",
    "include_str",
    "include_bytes",
    "env",
    "option_env",
    "cfg",
    "line",
    "column",
    "file",
    "module_path",
    "compile_error",
    "thread_local",
    "drop",
    "Some",
    "None",
    "Ok",
    "Err",
    "Box",
    "Vec",
    "String",
];

/// One family of languages that call each other's definitions by name.
fn family(l: Lang) -> u8 {
    match l {
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => 1,
        Lang::C | Lang::Cpp => 2,
        other => 3 + other as u8,
    }
}

/// What a file's imports resolved to: files, package directories, and
/// (Python) each package with the name a `from P import X` takes from it.
struct FileImports<'a> {
    /// The files it imports (`files[..direct]`), then those the barrels
    /// among them re-export (JS/TS).
    files: &'a [u32],
    direct: usize,
    /// `files[direct..]`, for lookups.
    reexported: &'a HashSet<u32>,
    dirs: &'a [String],
    named_pkgs: &'a [(u32, &'a str)],
    /// Its imports that rename (`edges.alias`).
    aliases: &'a [&'a RawEdge],
    /// Python: its imports that do not rename.
    py_plain: &'a [&'a RawEdge],
    modules: &'a Modules,
}

/// `recv_type` of a [`find_scoped_call`] that looks a type up by name (a
/// JS/TS binding's class or interface), not a call.
const TYPE_LOOKUP: &str = "@type";

/// A call in Python, JavaScript/TypeScript or Rust, by the language's
/// scoping as far as names tell it; a call it cannot place stays
/// unresolved rather than land on an unrelated definition of the same name.
///
/// - `f()`: a function or class (never a method) of the calling file, of a
///   file it imports, or (Rust: its module's directory; JS/TS and Python
///   import what they call) — no repository-wide guess, so builtins,
///   the standard library and std macros (`len`, `dict`, `vec!`,
///   `assert_eq!`, `drop`) stay unresolved. A Python package lends a
///   name to `f()` only through `from P import f`.
/// - `m!()` (Rust): a macro only: one a `use` names, else the caller's
///   crate's own (`macro_rules!` is scoped by the crate, not by `use`).
/// - `self.m()`, `this.m()`, `cls.m()`, `Self::m()`: a member `m` of the
///   calling method's own class or type (in any file, for Rust's impls).
/// - `super().m()`, `super.m()`: a member `m` of the nearest base class (by
///   the `extends` edges), the caller's own class skipped.
/// - `Type::f()` (Rust) and `Cls.f()` (a capitalized receiver): a member
///   `f` of a type of that name; `module::f()` and `mod.f()`: a function of
///   a file named for the module, in the caller's crate or top directory
///   for Rust, among the imported files otherwise. `std::`, `core::` and
///   `alloc::` paths stay unresolved.
/// - `x.m()` on any other receiver: a method `m` of the calling file, else
///   the only method of that name in the language family (Rust: in the
///   caller's crate directory), else unresolved.
fn find_scoped_call(
    idx: &Index,
    fi: u32,
    f: &FileFacts,
    written: &str,
    src_symbol: Option<&str>,
    imports: &FileImports,
    recv_type: Option<&str>,
) -> Option<SymRef> {
    let (imported, imported_dirs, named_pkgs) = (imports.files, imports.dirs, imports.named_pkgs);
    let rust = f.lang == Lang::Rust;
    // Rust (feature 43): a path as it names the function, `<T as Parser>::parse`
    // → `Parser::parse`, `RangedI64ValueParser::<i64>::new` →
    // `RangedI64ValueParser::new`; and a path through a generic parameter
    // (`T::opt_len`, typed `impl RangeInteger` by its bounds) is its bound's
    // method, as a receiver of that type calls it.
    let normal;
    let written = match rust {
        true => {
            normal = rust_path_named(written);
            // (a std type's generic arguments, `Box::<dyn Error>::from`,
            // `Arc::<T>::from_raw`, choose among impls that cannot be told
            // apart here: only a type the index defines drops them)
            let typed = written
                .split("::<")
                .next()
                .filter(|_| written.contains("::<"));
            if let Some(head) = typed {
                let ty = head.rsplit("::").next().unwrap_or(head);
                let after = &written[head.len() + 2..];
                let of_type =
                    ty.starts_with(|c: char| c.is_ascii_uppercase()) && after.contains(">::");
                let defined = idx.by_name.get(ty).is_some_and(|v| {
                    v.iter().any(|r| {
                        let rf = &idx.files[r.0 as usize];
                        rf.lang == Lang::Rust
                            && matches!(
                                rf.symbols[r.1 as usize].kind,
                                "struct" | "enum" | "union" | "trait" | "type"
                            )
                    })
                });
                if of_type && !defined {
                    return None;
                }
            }
            normal.as_str()
        }
        false => written,
    };
    if rust && recv_type.is_some_and(|t| t.starts_with("impl ")) {
        if let Some((h, m)) = written.split_once("::") {
            if is_word(h) && is_word(m) {
                let v = format!("_v.{m}");
                return deeper(8, || {
                    find_scoped_call(idx, fi, f, &v, src_symbol, imports, recv_type)
                });
            }
        }
    }
    // JS/TS: a bare call of a name the caller binds (`receiver_type`
    // `local`: a parameter, a local `const`/`let`) is the function of that
    // name defined in the caller or a function around it (`outer.loop`),
    // else nothing the index holds: not a function of the same name
    // elsewhere (feature 25).
    if recv_type == Some("local")
        && !written.contains('.')
        && matches!(f.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx)
    {
        let defs = idx.by_name.get(written)?;
        let mut scope = src_symbol;
        while let Some(s) = scope {
            let q = format!("{s}.{written}");
            if let Some(r) = defs.iter().find(|r| {
                let s = &idx.files[r.0 as usize].symbols[r.1 as usize];
                r.0 == fi && *s.qname == *q && s.kind == "function"
            }) {
                return Some(*r);
            }
            scope = s.rsplit_once('.').map(|(a, _)| a);
        }
        return None;
    }
    // A name a renaming import binds (feature 16).
    let unaliased = if rust {
        let (full, alias) = rust_unalias(imports.aliases, written);
        // `use tokio_test::io::Builder as Mock;`: another library's.
        if alias.is_some_and(|e| resolve_import(idx, f, &e.dst_name, imports.modules).is_none()) {
            return None;
        }
        full
    } else {
        if let Some(r) = through_alias(idx, f, imports.aliases, written, false, imports.modules) {
            return r;
        }
        written.into()
    };
    let written: &str = &unaliased;
    // Rust: a `use` inside a function or module (`mod tests { use … }`)
    // binds for the code inside it only.
    // (by lines: an inline module's impls' methods are not named after it)
    let use_in_scope = |e: &RawEdge| {
        let Some(s) = e.src_symbol.as_deref() else {
            return true;
        };
        let Some(c) = src_symbol else {
            return false;
        };
        if c == s || c.strip_prefix(s).is_some_and(|r| r.starts_with('.')) {
            return true;
        }
        let syms = &f.symbols;
        syms.iter().filter(|x| *x.qname == *s).any(|x| {
            syms.iter()
                .filter(|y| *y.qname == *c)
                .any(|y| x.lines.0 <= y.lines.0 && y.lines.0 <= x.lines.1)
        })
    };
    // Rust: the `use`s in sight of the caller that bind `name` (not
    // renaming it), innermost first: the smallest scope's lines, a
    // file-level `use` last (features 48, 56).
    let uses_binding = |name: &str| -> Vec<&RawEdge> {
        let mut v: Vec<&RawEdge> = f
            .edges
            .iter()
            .filter(|e| {
                e.kind == "imports"
                    && e.alias.is_none()
                    && e.dst_name.rsplit_once("::").is_some_and(|(_, n)| n == name)
                    && use_in_scope(e)
            })
            .collect();
        v.sort_by_key(|e| match e.src_symbol.as_deref() {
            None => u32::MAX,
            Some(s) => f
                .symbols
                .iter()
                .find(|x| *x.qname == *s)
                .map_or(u32::MAX - 1, |x| x.lines.1 - x.lines.0),
        });
        v
    };
    let sym = |r: &SymRef| &idx.files[r.0 as usize].symbols[r.1 as usize];
    let file = |r: &SymRef| &idx.files[r.0 as usize];
    let fam = family(f.lang);
    let same_family = |r: &SymRef| family(file(r).lang) == fam;
    // Methods only: a function in an inline module or another function
    // (`tests.roundtrip`, `outer.inner`) is not a member.
    let is_member = |r: &SymRef| {
        let s = sym(r);
        s.kind == "method" || s.kind == "constructor"
    };
    let callable =
        |r: &SymRef| kind_ok(sym(r).kind, false) && same_family(r) && sym(r).kind != "method";
    // The first path segment: a crate's directory in a workspace of crates.
    let top = |p: &str| p.split('/').next().unwrap_or("").to_string();
    let (qual, name) = match written.rsplit_once("::") {
        // `Foo::new(x).m`: the method `m` of that value (feature 33).
        Some(_)
            if rust
                && written.rsplit_once('.').is_some_and(|(q, n)| {
                    n.chars().all(|c| c.is_alphanumeric() || c == '_')
                        && (q.ends_with(')')
                            || q.ends_with(")?")
                            || q.ends_with(".await")
                            || q.ends_with(".await?"))
                }) =>
        {
            let (q, n) = written.rsplit_once('.')?;
            (Some(q), n)
        }
        Some((q, n)) if rust => (Some(q), n),
        _ => match written.rsplit_once('.') {
            Some((q, n)) => (Some(q), n),
            None => (None, written),
        },
    };
    // A macro call (`tri!`, `Token![fn]`) names a macro, and a macro is all
    // it can name; a call without `!` never lands on a macro.
    let is_macro = name.ends_with('!');
    let name = name.trim_end_matches('!');
    // (Python reads modules and classes for values and class attributes,
    // which no list by name holds: feature 32.)
    let all: &[SymRef] = match idx.by_name.get(name) {
        Some(v) => v,
        None if f.lang == Lang::Python => &[],
        None => return None,
    };
    let cands_vec: Vec<SymRef>;
    let cands: &[SymRef] = if rust {
        cands_vec = all
            .iter()
            .filter(|r| (sym(r).kind == "macro") == is_macro)
            .copied()
            .collect();
        &cands_vec
    } else {
        all
    };
    let Some(q) = qual else {
        // A bare call: the file, its imports, (Rust) its module directory.
        // JS/TS: an interface or a type alias is no value; a call of the
        // name is of the function or `const` it is merged with (`interface
        // Literal` / `function Literal`), unless a type is looked up.
        let js = matches!(f.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx);
        let type_only = |r: &&SymRef| {
            js && recv_type != Some(TYPE_LOOKUP) && matches!(sym(r).kind, "interface" | "type")
        };
        // Python (feature 32): a name is in sight where Python's scopes put it:
        // the caller's own definitions and those of the functions around it
        // (a class's body is no scope of its methods), the module's; of
        // another file, only what it defines at module level.
        let py_visible = |r: &&SymRef| {
            if f.lang != Lang::Python {
                return true;
            }
            let q = &*sym(r).qname;
            if q == name {
                return true;
            }
            if r.0 != fi {
                return false;
            }
            let Some(scope) = q.strip_suffix(name).and_then(|p| p.strip_suffix('.')) else {
                return false;
            };
            let Some(caller) = src_symbol else {
                return false;
            };
            let encloses = caller == scope || caller.starts_with(&format!("{scope}."));
            let class_body = caller != scope
                && f.symbols
                    .iter()
                    .any(|s| *s.qname == *scope && kind_ok(s.kind, true));
            encloses && !class_body
        };
        let bare =
            |r: &&SymRef| callable(r) && !(rust && is_member(r)) && !type_only(r) && py_visible(r);
        if rust && RUST_PRELUDE.contains(&name) {
            // std's macros and prelude functions and variants: a crate's own
            // item of the name (a test helper, `type Ok = …`, a nested
            // `fn assert`) is not what `assert_eq!` or `Ok(…)` calls; but a
            // `macro_rules! assert_eq` of the calling file shadows std's
            // (feature 43).
            // (textually: a macro of a module the caller is in, `tests`)
            let within = |r: &&SymRef| {
                let q = &sym(r).qname;
                match q.rsplit_once('.') {
                    None => true,
                    Some((m, _)) => src_symbol.is_some_and(|s| s.starts_with(&format!("{m}."))),
                }
            };
            return cands
                .iter()
                .find(|r| is_macro && r.0 == fi && sym(r).kind == "macro" && within(r))
                .copied();
        }
        // Rust: of a function and a type of one name (syn's `struct Lite`
        // and `fn Lite`), a call names the function.
        // Else an item of the module over an enum's variant of the name
        // (serde_derive's `struct Expr` and `Fragment::Expr`; feature 42).
        // A variant the file's `use` names (`use crate::c::L::A;`) is the
        // one; so is one of an enum it imports (`use crate::c::L::*;`, which
        // the parser writes as `crate::c::L`) when no `use` names the item.
        let used_variant = |r: &&&SymRef| {
            let Some((e, n)) = sym(r).qname.rsplit_once('.') else {
                return false;
            };
            let e = e.rsplit('.').next().unwrap_or(e);
            let uses = || f.edges.iter().filter(|x| x.kind == "imports");
            let ends = |x: &RawEdge, tail: &str| {
                x.dst_name == tail || x.dst_name.ends_with(&format!("::{tail}"))
            };
            sym(r).kind == "constant"
                && r.0 != fi
                && (uses().any(|x| ends(x, &format!("{e}::{n}")))
                    || (uses().any(|x| ends(x, e)) && !uses().any(|x| ends(x, n))))
        };
        let prefer = |v: Vec<&SymRef>| -> Option<SymRef> {
            v.iter()
                .find(|r| rust && sym(r).kind == "function")
                .or_else(|| v.iter().find(|r| rust && used_variant(r)))
                .or_else(|| v.iter().find(|r| rust && !sym(r).qname.contains('.')))
                .or(v.first())
                .map(|r| **r)
        };
        // Python: the innermost of the file's definitions in sight (a
        // test's own `class BookAdmin` over the module's).
        let own: Vec<&SymRef> = cands.iter().filter(bare).filter(|r| r.0 == fi).collect();
        let innermost = (f.lang == Lang::Python)
            .then(|| own.iter().max_by_key(|r| sym(r).qname.len()).map(|r| **r))
            .flatten();
        if let Some(r) = innermost.or_else(|| prefer(own)) {
            return Some(r);
        }
        // Python (feature 32): a name an import binds is what that module
        // holds or re-exports (`path` of `from django.urls import path`:
        // `django/urls/conf.py`'s `path = partial(…)`), or nothing the
        // index holds when the module is outside it.
        if f.lang == Lang::Python {
            // The module's own variable of the name: what module-level code
            // calls, and what a function calls when it rebinds an import
            // (`void_output = partial(void_output, cpl=True)`). A function's
            // own local of the name, which the index does not hold, may hide
            // it otherwise (a test's `FormSet = formset_factory(…)`).
            let bound = py_bound(idx, f, imports.py_plain, name, imports.modules);
            let own = py_module_value(f, name);
            if let Some(i) = own.filter(|_| src_symbol.is_none() || bound.is_some()) {
                let r = (fi, i);
                return Some(py_class_alias(idx, r, imports.modules).unwrap_or(r));
            }
            match bound {
                Some(Some((t, names))) => {
                    if let [n] = names[..] {
                        let found = py_defined_in(idx, imports.modules, t, n, &py_callable, 4);
                        if let Some(r) = found {
                            return Some(py_class_alias(idx, r, imports.modules).unwrap_or(r));
                        }
                    }
                }
                Some(None) => return None,
                None => {}
            }
        }
        if rust && is_macro {
            // `macro_rules!` is scoped by the crate (textual order and
            // `#[macro_use]`/`#[macro_export]`): a `use` naming it (not any
            // import of its file: serde_json's `tri!` is not serde's), else
            // the crate's own macro of the name. Never another crate's by
            // name alone.
            let named = format!("::{name}");
            let uses_it = f
                .edges
                .iter()
                .any(|e| e.kind == "imports" && e.dst_name.ends_with(&named));
            if uses_it {
                if let Some(r) = cands.iter().find(|r| imported.contains(&r.0)) {
                    return Some(*r);
                }
            }
            let crate_of = top(&f.path);
            let mine: Vec<&SymRef> = cands
                .iter()
                .filter(|r| top(&file(r).path) == crate_of)
                .collect();
            if mine.len() == 1 {
                return Some(*mine[0]);
            }
            // Several: `cfg` alternatives of one macro (clap's `debug!` with
            // and without its feature), or module-local ones: the caller's
            // directory's, else the first.
            let here = dir_of(&f.path);
            return mine
                .iter()
                .find(|r| dir_of(&file(r).path) == here)
                .or(mine.first())
                .map(|r| **r);
        }
        // Rust (feature 48): a name a `use` binds (`use
        // crate::output::write_help;`, `use serde_json::to_string;`) is the
        // item its module holds or re-exports (`pub use self::help::write_help;`,
        // `pub use rayon_core::current_num_threads;`), not a function of that
        // name in another file the caller imports; one std binds is std's.
        if rust {
            // (a `use` inside the caller's function or module first)
            let bound = uses_binding(name);
            // (the innermost binding decides: a function's `use std::mem::swap;`
            // hides the file's `use crate::a::swap;`)
            let std_use = |e: &RawEdge| {
                matches!(
                    e.dst_name.split("::").next(),
                    Some("std" | "core" | "alloc")
                )
            };
            if bound.first().is_some_and(|e| std_use(e)) {
                return None;
            }
            let (mut std, mut other) = (false, false);
            for e in bound {
                let (mq, _) = e.dst_name.rsplit_once("::")?;
                if std_use(e) {
                    std = true;
                    continue;
                }
                other = true;
                // (of a function and a type of the name, the function:
                // syn's `struct Lite` and `fn Lite`)
                let ok = |r: &SymRef| callable(r) && !is_member(r);
                let function = |r: &SymRef| ok(r) && sym(r).kind == "function";
                let found = rust_module_of(idx, f, mq, imports.modules).and_then(|mf| {
                    through_reexports(idx, mf, name, &function, cands, imports.modules, 3).or_else(
                        || through_reexports(idx, mf, name, &ok, cands, imports.modules, 3),
                    )
                });
                if found.is_some() {
                    return found;
                }
            }
            if std && !other {
                return None;
            }
        }
        let own_imports = &imported[..imports.direct];
        if let Some(r) = prefer(
            cands
                .iter()
                .filter(bare)
                .filter(|r| own_imports.contains(&r.0))
                .collect(),
        ) {
            return Some(r);
        }
        if let Some(r) = prefer(
            cands
                .iter()
                .filter(bare)
                .filter(|r| imports.reexported.contains(&r.0))
                .collect(),
        ) {
            return Some(r);
        }
        // A package the file imports (`from django.db.models import Q` names
        // its `__init__.py`, which re-exports `Q`): the only definition of
        // the name under that package's directory. In Python, only the
        // import that names it (`from P import Q`) counts: another package
        // the file imports is not where its `Q` comes from.
        for &imp in imported {
            if f.lang == Lang::Python && !named_pkgs.contains(&(imp, name)) {
                continue;
            }
            let p = &idx.files[imp as usize].path;
            let base = p.rsplit('/').next().unwrap_or(p);
            if base.starts_with("__init__.") || base.starts_with("index.") {
                let prefix = format!("{}/", dir_of(p));
                let under: Vec<&SymRef> = cands
                    .iter()
                    .filter(bare)
                    .filter(|r| file(r).path.starts_with(&prefix))
                    .collect();
                if under.len() == 1 {
                    return Some(*under[0]);
                }
            }
        }
        for d in imported_dirs {
            if let Some(r) = cands
                .iter()
                .filter(bare)
                .find(|r| dir_of(&file(r).path) == d.as_str())
            {
                return Some(*r);
            }
        }
        if rust {
            let here = dir_of(&f.path);
            return cands
                .iter()
                .filter(bare)
                .find(|r| dir_of(&file(r).path) == here)
                .copied();
        }
        return None;
    };
    // Rust (feature 43): a macro through a path, `tokio::select!`,
    // `$crate::m!`, `crate::m!`: the macro of that name in the crate the
    // path's first name places (`#[macro_export]` puts it at the crate's
    // root wherever it is written), the caller's directory's first.
    if rust && is_macro {
        let root = q.split("::").next().unwrap_or(q);
        let krate = match root {
            "crate" | "$crate" => rust_crate_dir(&f.path),
            _ => rust_crate_dir(
                &idx.files[rust_module_of(idx, f, root, imports.modules)? as usize].path,
            ),
        };
        let mine: Vec<&SymRef> = cands
            .iter()
            .filter(|r| rust_crate_dir(&file(r).path) == krate)
            .collect();
        // (several: the one the crate's root file defines; else none, as
        // `cfg` alternatives such as tokio's `select!` for `doc` and not)
        let at_root = |r: &&&SymRef| {
            let p = &file(r).path;
            p.ends_with("src/lib.rs") || p.ends_with("src/main.rs")
        };
        // (a target's root's own first: `crate::m!` in `tests/it.rs` or
        // `src/bin/tool.rs`, each a crate of its own; not a private
        // `macro_rules!` of a module beside the caller)
        let target_root = f.path.strip_prefix(krate).is_some_and(|rel| {
            let rel = rel.trim_start_matches('/');
            rel == "src/main.rs"
                || ["tests/", "benches/", "examples/", "src/bin/"]
                    .iter()
                    .any(|d| rel.strip_prefix(d).is_some_and(|r| !r.contains('/')))
        });
        return match mine.len() {
            1 => Some(*mine[0]),
            _ => mine
                .iter()
                .find(|r| target_root && r.0 == fi)
                .or_else(|| mine.iter().find(at_root))
                .map(|r| **r),
        };
    }
    let q = q.trim();
    // Python (feature 59): a receiver that is a call, `Foo(a).m()` or
    // `Foo.create(a).m()`, is read as a local bound to that call would be
    // (`x = Foo(a); x.m()`): an instance of the class it names, or the
    // result of the function it calls.
    let py_call_recv;
    let recv_type = match recv_type {
        None if f.lang == Lang::Python => {
            py_call_recv = py_call_receiver(q);
            py_call_recv.as_deref()
        }
        // (`query = query.lists()`: the binding the call makes is not its
        // receiver's)
        Some(t)
            if f.lang == Lang::Python
                && t.rsplit_once('>').map_or(t, |(_, c)| c).strip_suffix("()") == Some(written)
                && !written.starts_with("self.") =>
        {
            None
        }
        r => r,
    };
    let q_last = q
        .split('<')
        .next()
        .unwrap_or(q)
        .rsplit("::")
        .next()
        .unwrap_or(q)
        .rsplit('.')
        .next()
        .unwrap_or(q);
    let member_of = |ty: &str, r: &SymRef| {
        let s = sym(r);
        s.qname.len() > s.name().len()
            && s.qname[..s.qname.len() - s.name().len() - 1]
                .rsplit(['.', ':'])
                .next()
                == Some(ty)
            && same_family(r)
    };
    // A member `name` of class `class_q` (of file `start`) or the nearest of
    // its bases defining it, by the `extends` edges of the file defining
    // each (as in an MRO); `skip_own` starts at the bases (`super()`).
    // The class a base written `n` (`Model`, `admin.ModelAdmin`) of class
    // `from` in file `near` names: the nearest in scope of that file's
    // (two test methods may each define `class Renamed`), the one its
    // import of the name (or of the module it is read from) leads to, one
    // of its directory, else the only one.
    let find_class = |n: &str, near: u32, from: &str| -> Option<SymRef> {
        let nf = &idx.files[near as usize];
        if nf.lang != Lang::Rust {
            let renames = renaming_imports(nf);
            if let Some(r) = through_alias(idx, nf, &renames, n, true, imports.modules) {
                return r;
            }
        }
        let simple = simple_name(n);
        let v: Vec<&SymRef> = idx
            .by_name
            .get(simple)?
            .iter()
            .filter(|r| kind_ok(sym(r).kind, true) && same_family(r))
            .collect();
        let near_dir = dir_of(&nf.path);
        let shared = |r: &&&SymRef| {
            let q = &*sym(r).qname;
            q.bytes()
                .zip(from.bytes())
                .take_while(|(a, b)| a == b)
                .count()
        };
        let imported = || -> Option<SymRef> {
            if nf.lang != Lang::Python {
                return None;
            }
            // Read as Python reads it: the module the import names, its
            // re-exports and submodules (feature 32).
            if let Some(c) = py_imported_class(idx, nf, n, imports.modules) {
                return c;
            }
            let first = n.split('.').next().unwrap_or(n);
            let named = if n.contains('.') { first } else { simple };
            nf.edges
                .iter()
                .filter(|e| e.kind == "imports")
                .filter(|e| e.dst_name.rsplit('.').next() == Some(named))
                .find_map(|e| {
                    let p = resolve_import(idx, nf, &e.dst_name, imports.modules)?;
                    let pkg = p
                        .rsplit('/')
                        .next()
                        .is_some_and(|b| b.starts_with("__init__."));
                    let prefix = format!("{}/", dir_of(&p));
                    let under: Vec<&&SymRef> = v
                        .iter()
                        .filter(|r| pkg && file(r).path.starts_with(&prefix))
                        .collect();
                    v.iter()
                        .find(|r| file(r).path == p)
                        .or_else(|| (under.len() == 1).then(|| under[0]))
                        .map(|r| **r)
                })
        };
        // `admin.ModelAdmin` read from an imported module is not the
        // file's own `ModelAdmin` (a test's `class ModelAdmin(admin.ModelAdmin)`),
        // and no class is its own base.
        let first = n.split('.').next().unwrap_or(n);
        let through_module = n.contains('.')
            && nf.edges.iter().any(|e| {
                e.kind == "imports"
                    && (e.dst_name.rsplit('.').next() == Some(first) || e.dst_name == first)
            });
        v.iter()
            .filter(|r| r.0 == near && !through_module && &*sym(r).qname != from)
            .max_by_key(|r| (shared(r), std::cmp::Reverse(sym(r).qname.len())))
            .map(|r| **r)
            .or_else(imported)
            .or_else(|| {
                v.iter()
                    .find(|r| dir_of(&file(r).path) == near_dir)
                    .map(|r| **r)
            })
            .or_else(|| (v.len() == 1).then(|| *v[0]))
    };
    // The classes of an MRO, nearest first: class `class_q` of file `start`,
    // then its bases by the `extends` edges of the file defining each;
    // `skip_own` starts at the bases (`super()`). `visit` is shown each
    // (file, qualified name) until it answers true. The flag: every base
    // the repository defines was found (a miss is then outside the
    // repository).
    let mro_walk =
        |start: u32,
         class_q: String,
         skip_own: bool,
         visit: &mut dyn FnMut(u32, &str) -> bool|
         -> bool {
            let mut complete = true;
            let mut frontier: Vec<(u32, String)> = vec![(start, class_q)];
            let mut seen: std::collections::HashSet<(u32, String)> = Default::default();
            for level in 0..8 {
                let mut next = Vec::new();
                for (cf, cq) in frontier {
                    if !seen.insert((cf, cq.clone())) {
                        continue;
                    }
                    if !(skip_own && level == 0) && visit(cf, &cq) {
                        return complete;
                    }
                    for e in idx.files[cf as usize].edges.iter().filter(|e| {
                        e.kind == "extends" && e.src_symbol.as_deref() == Some(cq.as_str())
                    }) {
                        // Python: a base written as a call
                        // (`BaseManager.from_queryset()`) is a class made at
                        // run time: what it holds does not show (feature 32).
                        let py = idx.files[cf as usize].lang == Lang::Python;
                        if py && e.dst_name.contains('(') {
                            complete = false;
                            continue;
                        }
                        match find_class(&e.dst_name, cf, &cq) {
                            Some(b) => next.push((b.0, sym(&b).qname.to_string())),
                            None => {
                                let base = simple_name(&e.dst_name);
                                complete &= !idx.by_name.get(base).is_some_and(|v| {
                                    v.iter()
                                        .any(|r| kind_ok(sym(r).kind, true) && same_family(r))
                                });
                            }
                        }
                    }
                }
                if next.is_empty() {
                    return complete;
                }
                frontier = next;
            }
            false
        };
    // A member `name` of class `class_q` (of file `start`) or of the nearest
    // of its bases defining it (as in an MRO); the flag as `mro_walk`'s.
    let in_mro =
        |cands: &[SymRef], start: u32, class_q: String, skip_own: bool| -> (Option<SymRef>, bool) {
            let mut found = None;
            let complete = mro_walk(start, class_q, skip_own, &mut |cf, cq| {
                let ty = cq.rsplit('.').next().unwrap_or(cq);
                found = cands
                    .iter()
                    .find(|r| r.0 == cf && member_of(ty, r))
                    .copied();
                found.is_some()
            });
            (found, complete)
        };
    // Python (feature 18), JS/TS (feature 26): the `attribute` edge of the
    // nearest class in the MRO of `class_q` (file `start`) assigning `attr`,
    // with its file. A class nearer that defines a method or property of
    // that name (`@property def client`; a TS field without a type) ends the
    // search: what it holds does not show.
    let attr_in_mro = |start: u32, class_q: String, attr: &str| -> Option<(u32, &RawEdge)> {
        let mut found = None;
        mro_walk(start, class_q, false, &mut |cf, cq| {
            let file = &idx.files[cf as usize];
            found = file
                .edges
                .iter()
                .find(|e| {
                    e.kind == "attribute"
                        && e.dst_name == attr
                        && e.src_symbol.as_deref() == Some(cq)
                })
                .map(|e| Some((cf, e)));
            if found.is_none() {
                let q = format!("{cq}.{attr}");
                if file
                    .symbols
                    .iter()
                    .any(|s| *s.qname == *q && s.kind != "field")
                {
                    found = Some(None);
                }
            }
            found.is_some()
        });
        found.flatten()
    };
    let in_class_or_bases =
        |start: u32, class_q: String, skip_own: bool| in_mro(cands, start, class_q, skip_own);
    // Python (feature 32): the class whose instance `self` is, the nearest
    // around the caller, which may be a function inside a method (a
    // closure sees the method's `self`); with the method it is read in.
    let py_self = || -> Option<(String, String)> {
        let s = src_symbol?;
        let mut at = s.len();
        while let Some(i) = s[..at].rfind('.') {
            let c = &s[..i];
            let last = c.rsplit('.').next().unwrap_or(c);
            let class = idx.by_name.get(last).is_some_and(|v| {
                v.iter()
                    .any(|r| r.0 == fi && *sym(r).qname == *c && kind_ok(sym(r).kind, true))
            });
            if class {
                let method = s[i + 1..].split('.').next().unwrap_or("");
                return Some((c.to_string(), format!("{c}.{method}")));
            }
            at = i;
        }
        None
    };
    let py_self_method = (f.lang == Lang::Python).then(py_self).flatten();
    let py_self_class = py_self_method.as_ref().map(|(c, _)| c.clone());
    // The caller's own class or type: its qualified name without the method.
    let own_type = match &py_self_class {
        Some(c) => Some(c.rsplit('.').next().unwrap_or(c).to_string()),
        None => src_symbol
            .and_then(|s| s.rsplit_once('.'))
            .map(|(c, _)| c.rsplit(['.', ':']).next().unwrap_or(c).to_string()),
    };
    // JS/TS: `self` is the instance only when no binding types it (a
    // parameter `self: Ref<A>`, effect's style: feature 27).
    let js_typed_self = recv_type.is_some()
        && matches!(q, "self" | "cls")
        && matches!(f.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx);
    // (Rust's `super::f`, `self::f` are paths to modules: feature 50; its
    // `this`, `cls` are names like any other: feature 52)
    let module_path = rust
        && ((written.contains("::") && matches!(q, "self" | "super"))
            || matches!(q, "this" | "cls"));
    match q {
        "self" | "this" | "cls" | "Self" | "super()" | "super"
            if !js_typed_self && !module_path =>
        {
            // `super().m()` (Python), `super.m()` (JS/TS): the nearest base
            // defining `m`, the caller's own class skipped.
            let is_super = q.starts_with("super");
            if is_super && rust {
                return None;
            }
            let ty = own_type?;
            let mut own = cands.iter().filter(|r| member_of(&ty, r));
            if !is_super {
                if let Some(r) = own.clone().find(|r| r.0 == fi) {
                    return Some(*r);
                }
                if rust {
                    return own.find(|r| top(&file(r).path) == top(&f.path)).copied();
                }
            }
            // Python, JS/TS: the class's bases, by the `extends` edges of the
            // file defining each (the nearest definition wins, as in an MRO).
            let class_q = match &py_self_class {
                Some(c) => c.clone(),
                None => src_symbol?.rsplit_once('.')?.0.to_string(),
            };
            return in_class_or_bases(fi, class_q, is_super).0;
        }
        // `super(Cls, self).m()` names where the search starts: only the
        // caller's own class is followed here.
        _ if q.starts_with("super") && !q.contains("::") && !module_path => {
            let own = own_type.as_deref().unwrap_or("");
            let first = q
                .strip_prefix("super(")
                .and_then(|a| a.split([',', ')']).next())
                .map(str::trim);
            if first != Some(own) || own.is_empty() {
                return None;
            }
            return find_scoped_call(
                idx,
                fi,
                f,
                &format!("super().{name}"),
                src_symbol,
                imports,
                None,
            );
        }
        _ => {}
    }
    // Python: what a receiver's type `t`, written in file `tf`, decides of
    // the call: `Some(found)`, or `None` for the rules by name. `Foo()` /
    // `Foo` / `type[Foo]`: the method of that class or its nearest base; a
    // builtin or a class of a module outside the repository: unresolved.
    // `self.factory()`: an instance of the class the attribute `factory`
    // holds (`client_class = Client`), looked up from the caller's class,
    // so a subclass's own `factory` wins.
    // (Asked only of `self.…` receivers and types: a scan of the file's symbols.)
    let caller_class = || {
        let (class, method) = py_self_method.as_ref()?;
        f.symbols
            .iter()
            .any(|x| *x.qname == **method && x.kind == "method")
            .then(|| class.clone())
    };
    // Python (feature 59): a function's or method's result as
    // [`py_return_value`] read it; the class a method is defined in.
    let py_result = |r: SymRef| -> Option<&str> {
        let rf = &idx.files[r.0 as usize];
        let i = rf.py_returns.binary_search_by_key(&r.1, |(i, _)| *i).ok()?;
        Some(&rf.py_returns[i].1)
    };
    let py_owner = |r: SymRef| -> Option<SymRef> {
        let rf = &idx.files[r.0 as usize];
        let (cq, _) = rf.symbols[r.1 as usize].qname.rsplit_once('.')?;
        rf.symbols
            .iter()
            .position(|s| *s.qname == *cq && kind_ok(s.kind, true))
            .map(|i| (r.0, i as u32))
    };
    // The method `m` an instance of class `c` calls: its own or its nearest base's.
    let py_method_of = |c: SymRef, m: &str| -> Option<SymRef> {
        let ms = idx.by_name.get(m)?;
        in_mro(ms, c.0, sym(&c).qname.to_string(), false)
            .0
            .filter(|r| sym(r).kind == "method")
    };
    // An instance attribute of class `c` is replaced when read (its class
    // is a descriptor's, `__get__`, or a Django field's, whose model's
    // metaclass puts a descriptor in its place).
    let py_replaced = |c: SymRef| -> bool {
        ["__get__", "contribute_to_class"].iter().any(|m| {
            idx.by_name
                .get(*m)
                .is_some_and(|v| in_mro(v, c.0, sym(&c).qname.to_string(), false).0.is_some())
        })
    };
    let py_receiver = |t: &str, tf: u32| -> Option<Option<SymRef>> {
        // A class held as a value (`type[Client]`) is no descriptor's instance.
        let class_ref = t.starts_with("type[");
        // What is read next: a value as written in a file, or a function
        // whose result it is (feature 59).
        enum Next {
            Value(String, u32),
            /// (and the class it was looked up on, whose instance `self` is)
            Result(SymRef, Option<SymRef>),
        }
        let mut next = match t.strip_prefix("self.").and_then(|r| r.strip_suffix("()")) {
            Some(a) => {
                let class = caller_class()?;
                match attr_in_mro(fi, class.clone(), a) {
                    Some((af, e)) => {
                        let held = e
                            .recv_type
                            .as_deref()?
                            .strip_prefix("type[")?
                            .strip_suffix(']')?;
                        Next::Value(format!("{held}()"), af)
                    }
                    // (feature 59) no attribute of that name: the
                    // instance's method, `self.set_up()`, returning a value.
                    None => {
                        let own = f
                            .symbols
                            .iter()
                            .position(|s| *s.qname == *class && kind_ok(s.kind, true))?;
                        let own = (fi, own as u32);
                        Next::Result(py_method_of(own, a)?, Some(own))
                    }
                }
            }
            None => match t.strip_prefix("type[").and_then(|r| r.strip_suffix(']')) {
                Some(c) => Next::Value(format!("{c}()"), tf),
                None => Next::Value(t.to_string(), tf),
            },
        };
        let mut steps = 0;
        let mut inferred = false;
        // What is still to read on the class found, innermost last: a
        // method's result (`<Engine()>engine.from_string()`: `from_string`
        // of an `Engine`) or an attribute (`<CharField()>f.widget`: the
        // `widget` a `CharField` assigns, feature 60).
        let mut pending: Vec<(bool, String)> = Vec::new();
        // The class last reached through an attribute: not a descriptor's.
        let mut via_attr = false;
        // A value written with its local's type in front is read as before
        // (`engine.from_string()`, by the rules by name) when the type does
        // not lead to a class.
        let mut plain = match &next {
            // (a receiver's chain, `Foo(a).filter(b)`, has no first name to
            // read; an attribute path is no call)
            Next::Value(t, tf) if t.starts_with('<') => t
                .rsplit_once('>')
                .filter(|(_, c)| !c.starts_with("_.") && c.ends_with("()"))
                .map(|(_, c)| (c.to_string(), *tf)),
            _ => None,
        };
        macro_rules! fallback {
            () => {
                match plain.take() {
                    Some((p, ptf)) => {
                        pending.clear();
                        via_attr = false;
                        next = Next::Value(p, ptf);
                        continue;
                    }
                    None => return None,
                }
            };
        }
        macro_rules! or_plain {
            ($e:expr) => {
                match $e {
                    Some(x) => x,
                    None => fallback!(),
                }
            };
        }
        // What class `c` gives for the innermost thing pending: its method's
        // result, or the value its attribute is assigned (feature 60).
        macro_rules! step {
            ($c:expr, $m:expr) => {{
                let c: SymRef = $c;
                let (attr, m): (bool, String) = $m;
                inferred = true;
                if via_attr && py_replaced(c) {
                    fallback!();
                }
                via_attr = attr;
                next = if attr {
                    let (af, e) = or_plain!(attr_in_mro(c.0, sym(&c).qname.to_string(), &m));
                    let v = or_plain!(e.recv_type.as_deref());
                    if v.starts_with("self.") {
                        fallback!();
                    }
                    match v.strip_prefix("type[").and_then(|x| x.strip_suffix(']')) {
                        Some(held) => Next::Value(format!("{held}()"), af),
                        None => Next::Value(v.to_string(), af),
                    }
                } else {
                    Next::Result(or_plain!(py_method_of(c, &m)), Some(c))
                };
                continue;
            }};
        }
        let (class, t, tf) = loop {
            steps += 1;
            if steps > 12 {
                return None;
            }
            let (t, tf) = match next {
                Next::Value(t, tf) => match t.strip_prefix('<').and_then(|x| x.rsplit_once('>')) {
                    // (feature 59) a method's result through a typed local;
                    // (feature 60) its attributes, `<T>x.a.b`.
                    Some((inner, call)) => {
                        let method = call.strip_suffix("()");
                        let mut segs = method.unwrap_or(call).split('.');
                        segs.next();
                        let segs: Vec<&str> = segs.collect();
                        let ok = !segs.is_empty()
                            && segs.iter().all(|x| is_word(x))
                            && (method.is_none() || segs.len() == 1);
                        if !ok {
                            fallback!();
                        }
                        for x in segs.iter().rev() {
                            pending.push((method.is_none(), x.to_string()));
                        }
                        next = Next::Value(inner.to_string(), tf);
                        continue;
                    }
                    None => (t, tf),
                },
                // A function's result: the class its returns name, the
                // method's own class for `self`, or another method's result.
                Next::Result(r, on) => {
                    inferred = true;
                    let v = or_plain!(py_result(r));
                    // (`self` is the instance of the class the method was
                    // looked up on: a subclass's, whose overrides it calls)
                    let own = on.or_else(|| py_owner(r));
                    if matches!(v, "self" | "cls()" | "self.__class__()") {
                        let own = or_plain!(own);
                        match pending.pop() {
                            Some(m) => step!(own, m),
                            None => break (Some(own), String::new(), r.0),
                        }
                    }
                    next = match v.strip_prefix("self.").and_then(|x| x.strip_suffix("()")) {
                        Some(m) if is_word(m) => {
                            let own = or_plain!(own);
                            Next::Result(or_plain!(py_method_of(own, m)), Some(own))
                        }
                        _ => Next::Value(v.to_string(), r.0),
                    };
                    continue;
                }
            };
            let written_ty = match t.strip_suffix("()") {
                Some(c) => c.to_string(),
                None => match python_annotation_type(&t) {
                    Some(w) => w,
                    None if pending.is_empty() && !via_attr => return Some(None),
                    None => fallback!(),
                },
            };
            let dotted = !written_ty.is_empty()
                && written_ty
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
            // `self.a.b` names no type (and would chase the attribute again).
            if !dotted || written_ty.starts_with("self.") || written_ty.starts_with("cls.") {
                fallback!();
            }
            let class = if tf == fi {
                find_scoped_call(idx, fi, f, &written_ty, src_symbol, imports, None)
            } else {
                find_class(&written_ty, tf, "")
            };
            match class {
                Some(r) if matches!(sym(&r).kind, "function" | "method") => {
                    // `User.from_dict(d)`: the class the method is read on.
                    let on = written_ty
                        .rsplit_once('.')
                        .filter(|(_, m)| sym(&r).kind == "method" && is_word(m))
                        .filter(|(p, _)| {
                            let last = p.rsplit('.').next().unwrap_or(p);
                            last.starts_with(|c: char| c.is_ascii_uppercase())
                        })
                        .and_then(|(p, m)| {
                            let c = if tf == fi {
                                find_scoped_call(idx, fi, f, p, src_symbol, imports, None)
                            } else {
                                find_class(p, tf, "")
                            }
                            .filter(|c| kind_ok(sym(c).kind, true))?;
                            (py_method_of(c, m) == Some(r)).then_some(c)
                        });
                    next = Next::Result(r, on);
                }
                Some(c) if kind_ok(sym(&c).kind, true) && !pending.is_empty() => {
                    let m = pending.pop().unwrap_or_default();
                    step!(c, m)
                }
                Some(c) if via_attr && kind_ok(sym(&c).kind, true) && py_replaced(c) => {
                    fallback!()
                }
                // (a method's result or an attribute through a local of a
                // type the index does not hold: read as before)
                _ if !pending.is_empty() || (via_attr && class.is_none()) => fallback!(),
                _ => break (class, written_ty, tf),
            }
        };
        let (tfile, written_ty) = (&idx.files[tf as usize], t);
        match class {
            Some(c) if kind_ok(sym(&c).kind, true) => {
                // An attribute of the instance whose class is a
                // descriptor's (`__get__`) or a Django field's (its
                // model's metaclass puts a descriptor in its place):
                // assigned in a class body, instances read something
                // else. The rules by name decide.
                let attr =
                    (written.starts_with("self.") || written.starts_with("cls.")) && !class_ref;
                let replaced = attr && py_replaced(c);
                let (found, complete) = match replaced {
                    true => (None, false),
                    false => in_class_or_bases(c.0, sym(&c).qname.to_string(), false),
                };
                // A class whose instances answer any attribute
                // (`__getattr__`: django's `LazyObject`) holds more than it
                // defines (feature 32).
                let dynamic = || {
                    let mut any = false;
                    mro_walk(c.0, sym(&c).qname.to_string(), false, &mut |cf, cq| {
                        let want = format!("{cq}.__getattr__");
                        any = idx.files[cf as usize]
                            .symbols
                            .iter()
                            .any(|s| *s.qname == *want);
                        any
                    });
                    any
                };
                // (a class a function's result names, feature 59, decides
                // only what it holds: the inference may be wrong)
                (found.is_some() || (complete && !inferred && !dynamic())).then_some(found)
            }
            // A function's result: its type does not show.
            Some(_) => None,
            None => {
                // A builtin (`dict()`, `x: str`) or a class of a
                // module outside the repository (`unittest.TestSuite()`,
                // `from pathlib import Path`, `import pandas as pd`
                // for `pd.DataFrame`).
                let last = written_ty.rsplit('.').next().unwrap_or(&written_ty);
                let first = written_ty.split('.').next().unwrap_or(&written_ty);
                let builtin = !written_ty.contains('.') && PY_BUILTIN_TYPES.contains(&last);
                let class_name = last.starts_with(|c: char| c.is_ascii_uppercase());
                let external = tfile.edges.iter().any(|e| {
                    e.kind == "imports"
                        && !e.dst_name.starts_with('.')
                        && (e.dst_name.rsplit('.').next() == Some(first)
                            || e.dst_name == first
                            || e.alias.as_deref() == Some(first))
                        && resolve_import(idx, tfile, &e.dst_name, imports.modules).is_none()
                });
                let defined = idx.by_name.get(last).is_some_and(|v| {
                    v.iter()
                        .any(|r| kind_ok(sym(r).kind, true) && same_family(r))
                });
                // `threading.Event()`: a class of a module outside,
                // whatever the repository names `Event` (a function's
                // result, `copy.copy(x)`, may be anything).
                let dotted_external = external && class_name && written_ty.contains('.');
                (builtin || dotted_external || (class_name && external && !defined)).then_some(None)
            }
        }
    };
    // Python (feature 32): a receiver read as Python reads it when its first
    // name is a module an import binds (`models.Manager`,
    // `models.signals.post_delete.connect`, `models.DateField.register_lookup`),
    // a name imported from one (`Signal` of `from django.dispatch import
    // Signal`, `request_finished` of `from django.core.signals import
    // request_finished`), or a class or variable the file defines at module
    // level (or a class of the caller's scope): module by module, class by
    // class, a module-level variable standing for the value its
    // declaration shows (`request_finished = Signal()`). A class's method
    // is its own or its nearest base's. What is not found this way is left
    // to the rules by name.
    let dotted_names = q.split('.').all(is_word);
    if f.lang == Lang::Python && recv_type.is_none() && dotted_names && !matches!(q, "self" | "cls")
    {
        let mut segs = q.split('.');
        let head = segs.next().unwrap_or(q);
        // The file's own module-level definition of the first name (or a
        // class of the caller's scope), else the import binding it.
        let own_class = || {
            let v = idx.by_name.get(head)?;
            let scope = src_symbol.unwrap_or("");
            v.iter()
                .filter(|r| r.0 == fi && kind_ok(sym(r).kind, true))
                .filter(|r| {
                    let q = &*sym(r).qname;
                    q == head
                        || q.strip_suffix(head)
                            .and_then(|p| p.strip_suffix('.'))
                            .is_some_and(|p| scope == p || scope.starts_with(&format!("{p}.")))
                })
                .max_by_key(|r| sym(r).qname.len())
                .copied()
        };
        let own_value = || py_module_value(f, head).map(|i| (fi, i));
        let start = match own_class().or_else(own_value) {
            Some(r) => py_at_of(idx, r, imports.modules).map(|a| (a, segs.collect::<Vec<&str>>())),
            None => match py_bound(idx, f, imports.py_plain, q, imports.modules) {
                Some(Some((t, names))) => Some((PyAt::Module(t), names)),
                Some(None) => return None,
                None => None,
            },
        };
        let at = start.and_then(|(at, rest)| py_walk(idx, at, &rest, imports.modules));
        let found = match at {
            None => None,
            Some(PyAt::Module(m)) => py_defined_in(idx, imports.modules, m, name, &py_callable, 4)
                .map(|r| Some(py_class_alias(idx, r, imports.modules).unwrap_or(r))),
            // A class's attribute as Python looks it up: its own or its
            // nearest base's, whatever it is (`get_lookups =
            // class_or_instance_method(…)` in a class body too).
            Some(PyAt::Class(c)) => {
                let mut found = None;
                let complete = mro_walk(c.0, sym(&c).qname.to_string(), false, &mut |cf, cq| {
                    let want = format!("{cq}.{name}");
                    found = idx.files[cf as usize]
                        .symbols
                        .iter()
                        .position(|s| *s.qname == *want)
                        .map(|i| (cf, i as u32));
                    found.is_some()
                });
                (found.is_some() || complete).then_some(found)
            }
            // Read through the value's type, a bounded number of values deep.
            Some(PyAt::Value(vf, t)) => deeper(4, || py_receiver(&t, vf)),
        };
        if let Some(r) = found {
            return r;
        }
    }
    // Python: a call through an attribute of the instance its own class
    // does not type (`self.client.get()` in a subclass of the test case
    // that assigns `self.client`): the nearest class of its MRO assigning
    // the attribute decides, its type read where that class is written
    // (feature 18).
    if recv_type.is_none() && f.lang == Lang::Python {
        let attr = q
            .strip_prefix("self.")
            .or_else(|| q.strip_prefix("cls."))
            .filter(|a| is_word(a));
        if let Some(attr) = attr {
            if let Some((af, e)) = caller_class().and_then(|c| attr_in_mro(fi, c, attr)) {
                if let Some(r) = e.recv_type.as_deref().and_then(|t| py_receiver(t, af)) {
                    return r;
                }
            }
        }
        // (feature 60) `self.a.b.m()`: the attributes of the type the class
        // assigns to `a`, read in turn.
        let path = q
            .strip_prefix("self.")
            .or_else(|| q.strip_prefix("cls."))
            .and_then(|p| p.split_once('.'))
            .filter(|(a, rest)| is_word(a) && rest.split('.').all(is_word));
        if let Some((a, rest)) = path {
            if let Some((af, e)) = caller_class().and_then(|c| attr_in_mro(fi, c, a)) {
                let held = e.recv_type.as_deref().filter(|t| !t.starts_with("self."));
                let held =
                    held.map(
                        |t| match t.strip_prefix("type[").and_then(|x| x.strip_suffix(']')) {
                            Some(c) => format!("{c}()"),
                            None => t.to_string(),
                        },
                    );
                if let Some(r) = held.and_then(|t| py_receiver(&format!("<{t}>_.{rest}"), af)) {
                    return r;
                }
            }
        }
    }
    // JS/TS (feature 24): what a receiver's type `t`, written in file `tf`,
    // decides of the call: `Some(found)`, or `None` for the rules by name.
    // The class or interface the binding names (`Foo` of an annotation,
    // `Foo()` of `new Foo(…)`; `Foo()` is the class `new` names, never an
    // interface), found as a bare name from the caller's file (from `tf`,
    // another file, as a base class is found), and its member `m` or its
    // nearest base's; a type the repository does not define (`Map`,
    // `Promise`, a package's) owns no method here.
    let js_receiver = |t: &str, tf: u32| -> Option<Option<SymRef>> {
        // `g(#i).#j`: parameter `j` of the callback that is argument `i` of
        // a call of function `g`, typed by `g`'s signature (feature 27);
        // read where `g` is written. Not placed: the rules by name.
        let (t, tf) = match js_callback_marker(t) {
            Some(_) if tf != fi => return None,
            Some((g, i, j)) => {
                let r = find_scoped_call(
                    idx,
                    tf,
                    &idx.files[tf as usize],
                    g,
                    src_symbol,
                    imports,
                    None,
                )
                .filter(|r| sym(r).kind == "function")?;
                let gf = &idx.files[r.0 as usize];
                let at = gf.js_callbacks.binary_search_by_key(&r.1, |c| c.0).ok()?;
                let ty = gf.js_callbacks[at]
                    .1
                    .iter()
                    .find(|(k, _)| *k == i)?
                    .1
                    .get(j as usize)?
                    .as_deref()?;
                (ty, r.0)
            }
            None => (t, tf),
        };
        let (ty, lookup) = match t.strip_suffix("()") {
            Some(c) => (c, None),
            None => (t, Some(TYPE_LOOKUP)),
        };
        let dotted = !ty.is_empty()
            && ty.split('.').all(|p| {
                !p.is_empty()
                    && p.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
            });
        if !dotted {
            return None;
        }
        let class = if tf == fi {
            find_scoped_call(idx, fi, f, ty, src_symbol, imports, lookup)
        } else {
            find_class(ty, tf, "")
        };
        match class {
            Some(c) if kind_ok(sym(&c).kind, true) => {
                let (found, complete) = in_class_or_bases(c.0, sym(&c).qname.to_string(), false);
                // A type alias (`type Alias = Impl`) names a type
                // elsewhere: the rules by name decide.
                (found.is_some() || (complete && sym(&c).kind != "type")).then_some(found)
            }
            // A function or a value of that name: the rules by name decide.
            Some(_) => None,
            // Neither the file nor its imports name it: a global (`Map`,
            // `Promise`, the DOM's), whatever a file it does not import
            // defines. (From another file, or a script that imports
            // nothing, whose names are the page's globals: a type the
            // repository defines nowhere.)
            None => {
                let defined = || {
                    idx.by_name.get(simple_name(ty)).is_some_and(|v| {
                        v.iter()
                            .any(|r| kind_ok(sym(r).kind, true) && same_family(r))
                    })
                };
                let script = idx.files[tf as usize]
                    .edges
                    .iter()
                    .all(|e| e.kind != "imports");
                ((tf == fi && !script) || !defined()).then_some(None)
            }
        }
    };
    // JS/TS: the class of the calling method (or constructor), which `this`
    // is.
    let js_caller_class = || {
        src_symbol
            .filter(|s| {
                f.symbols
                    .iter()
                    .any(|x| &*x.qname == *s && matches!(x.kind, "method" | "constructor"))
            })
            .and_then(|s| s.rsplit_once('.'))
            .map(|(c, _)| c.to_string())
    };
    // JS/TS: a call through a field of the instance its own class does not
    // type (`this.conn.query()` in a subclass): the nearest class of its
    // chain assigning the field decides, its type read where that class is
    // written (feature 26, as Python's feature 18).
    if recv_type.is_none() && matches!(f.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx) {
        let attr = q
            .strip_prefix("this.")
            .filter(|a| is_word(a.strip_prefix('#').unwrap_or(a)));
        if let Some(attr) = attr {
            if let Some((af, e)) = js_caller_class().and_then(|c| attr_in_mro(fi, c, attr)) {
                if let Some(r) = e.recv_type.as_deref().and_then(|t| js_receiver(t, af)) {
                    return r;
                }
            }
        }
    }
    // JS/TS: a receiver that is an expression (feature 28), `f(x).m()`,
    // `this.#client.getCache().find()`, `client.getCache().find()` through
    // a typed local (`<QueryClient>`, the type of its first name): typed
    // segment by segment, by the declared return types of the functions and
    // methods it calls and the types of the fields it reads (`attribute`
    // edges), then `m` looked up in the last type as for a local's.
    let js = matches!(f.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx);
    if js && recv_type.is_none_or(|t| t.starts_with(['<', '='])) && q != "this" {
        // The class a type written in file `tf` names.
        let type_class = |ty: &str, tf: u32| -> Option<SymRef> {
            let (ty, lookup) = match ty.strip_suffix("()") {
                Some(c) => (c, None),
                None => (ty, Some(TYPE_LOOKUP)),
            };
            if ty.contains(['(', '<', ' ']) || ty.is_empty() {
                return None;
            }
            let c = if tf == fi {
                find_scoped_call(idx, fi, f, ty, src_symbol, imports, lookup)
            } else {
                find_class(ty, tf, "")
            }?;
            kind_ok(sym(&c).kind, true).then_some(c)
        };
        // A function's or method's declared return type, with its file (`this`:
        // the method's own class).
        let returns = |r: SymRef| -> Option<(String, u32)> {
            let rf = &idx.files[r.0 as usize];
            let at = rf.js_returns.binary_search_by_key(&r.1, |x| x.0).ok()?;
            let t = &*rf.js_returns[at].1;
            if t == "this" {
                let q = &*sym(&r).qname;
                return Some((q.rsplit_once('.')?.0.to_string(), r.0));
            }
            Some((t.to_string(), r.0))
        };
        let chain = |q: &str, head: Option<&str>| -> Option<(String, u32)> {
            let segs = js_segments(q)?;
            let mut it = segs.into_iter();
            let (first, first_call) = it.next()?;
            let mut state = match head {
                Some(t) => (t.to_string(), fi),
                None if first == "this" && !first_call => (js_caller_class()?, fi),
                None if first_call => {
                    let r = find_scoped_call(idx, fi, f, first, src_symbol, imports, None)
                        .filter(|r| sym(r).kind == "function")?;
                    returns(r)?
                }
                None => return None,
            };
            for (name, call) in it {
                let class = type_class(&state.0, state.1)?;
                let class_q = sym(&class).qname.to_string();
                state = if call {
                    let v = idx.by_name.get(name)?;
                    let m = in_mro(v, class.0, class_q, false).0?;
                    returns(m)?
                } else {
                    let (af, e) = attr_in_mro(class.0, class_q, name)?;
                    (e.recv_type.clone()?, af)
                };
            }
            Some(state)
        };
        // The receiver's own text, its first name typed `<T>`; or a local
        // bound to a call's result (`=expr`, `=<T>expr`), that expression.
        let chained = match recv_type.and_then(|t| t.strip_prefix('=')) {
            Some(_) if !is_word(q) => None,
            Some(e) => match e.strip_prefix('<').and_then(|r| r.split_once('>')) {
                Some((t, expr)) => chain(expr, Some(t)),
                None => chain(e, None),
            },
            None if q.contains('(') || q.contains('.') || recv_type.is_some() => chain(
                q,
                recv_type
                    .and_then(|h| h.strip_prefix('<'))
                    .and_then(|h| h.strip_suffix('>')),
            ),
            None => None,
        };
        if let Some(r) = chained.and_then(|(t, tf)| js_receiver(&t, tf)) {
            return r;
        }
    }
    // (`<T>` types a JS/TS receiver's first name only: read above.)
    let recv_type = recv_type.filter(|t| !(js && t.starts_with(['<', '='])));
    // Rust: whether the path to a function (`nfa::Inner::default`,
    // `Foo::new`) starts at a type, `crate`/`self`/`super`, or a module the
    // index places (`aho_corasick::Input::new`, `thread::Builder::new` are
    // another crate's).
    let rust_path_placed = |p: &str| {
        let segs: Vec<&str> = p.split("::").filter(|s| !s.starts_with('<')).collect();
        let Some(&head) = segs.first() else {
            return false;
        };
        segs.len() < 2
            || head.starts_with(|c: char| c.is_ascii_uppercase())
            || matches!(head, "crate" | "self" | "super")
            || (segs.len() > 2
                && rust_module_of(idx, f, &segs[..segs.len() - 2].join("::"), imports.modules)
                    .is_some())
            || (segs.len() == 2 && rust_module_of(idx, f, head, imports.modules).is_some())
    };
    // (A type read where it is declared: `x.m()` is its own method; else,
    // when its name read in the caller's file could be another type, the
    // call is none of the index's, `Some(None)`; else undecided, `None`.)
    let decided = |st: &(String, u32), direct: bool| -> Option<Option<SymRef>> {
        if let Some(r) = direct
            .then(|| rust_method_in(idx, imports, st, name))
            .flatten()
        {
            return Some(Some(r));
        }
        // (only a name the crate gives one type is read there)
        rust_rereads_another(idx, fi, f, st).then_some(None)
    };
    // (`self`: the caller's type as its qualified name places it,
    // `bytes::RegexBuilder` where a file's `mod string` and `mod bytes` each
    // define one)
    let own_q = src_symbol
        .and_then(|s| s.rsplit_once('.'))
        .map(|(c, _)| c.replace('.', "::"));
    // Rust (feature 44): an element of a value (`for x in &self.items`:
    // `=self.items[]`; `=<Vec<Item>>xs[]` of a local): the element type of
    // the value's declared type (`Vec<T>`, `[T]`, `Option<T>` …), read in
    // the file it is written in; a value that shows no such type types
    // nothing.
    let elem_recv: Option<String>;
    let recv_type = match recv_type {
        Some(t) if rust && t.starts_with('=') && t.ends_with("[]") => {
            let (head, expr) = rust_head_type(&t[1..t.len() - 2]);
            let container = match is_word(expr) {
                true => head.map(|h| (h.to_string(), fi)),
                false => rust_fold(
                    idx,
                    fi,
                    f,
                    src_symbol,
                    imports,
                    expr,
                    head,
                    own_q.as_deref(),
                ),
            };
            // (feature 54: a method's result as its signature declares it,
            // `impl Iterator<Item = &Arg>`, `&[Arg]`, which no value of the
            // fold is: `cmd.get_arguments()`)
            let declared = || -> Option<(String, u32)> {
                let (recv, m) = expr
                    .strip_suffix("()")
                    .or_else(|| {
                        let open = expr.rfind('(')?;
                        expr.ends_with(')').then(|| &expr[..open])
                    })?
                    .rsplit_once('.')?;
                let state = match recv {
                    "self" => (own_q.clone()?, fi),
                    r if is_word(r) => (head?.to_string(), fi),
                    r => rust_fold(idx, fi, f, src_symbol, imports, r, head, own_q.as_deref())?,
                };
                let r = rust_method_in(idx, imports, &state, m)?;
                // (`Self` there is the method's own type: `-> &[Self]`)
                let raw = rust_declared_raw(idx, f, r)?;
                let owner = sym(&r).qname.rsplit_once('.')?.0;
                let owner = owner.rsplit(['.', ':']).next().unwrap_or(owner);
                Some((rust_replace_self(raw, owner), r.0))
            };
            // (feature 55: a type of the index that is an iterator yields
            // its `impl Iterator`'s `type Item`, `StateIter<'_, T>` → `State`)
            let iter_item = |c: &str, cf: u32| -> Option<(String, u32)> {
                let head = rust_unref(c).split('<').next()?.trim();
                let q = format!("{}.Item", head.rsplit("::").next()?);
                let krate = rust_crate_dir(&file(&(cf, 0)).path);
                // (the container's own file's first: `dense.rs` and
                // `sparse.rs` each have a `StateIter`)
                let items = idx.by_name.get("Item")?;
                let is = |r: &&SymRef| *sym(r).qname == *q && sym(r).kind == "type";
                let r = items.iter().filter(is).find(|r| r.0 == cf).or_else(|| {
                    items
                        .iter()
                        .filter(is)
                        .find(|r| rust_crate_dir(&file(r).path) == krate)
                })?;
                let t = rust_alias(file(r), r.1)?;
                Some((rust_unref(t).to_string(), r.0))
            };
            let element = |(c, cf): (String, u32)| match rust_element(&c) {
                Some(e) => Some((e, cf)),
                None => iter_item(&c, cf),
            };
            let st = container
                .and_then(element)
                .or_else(|| declared().and_then(element));
            if let Some(d) = st.as_ref().and_then(|st| decided(st, is_word(q))) {
                return d;
            }
            elem_recv = st.map(|(e, _)| e);
            elem_recv.as_deref()
        }
        other => other,
    };
    // Rust (feature 57): a closure's parameter `j` when the closure is
    // argument `i` of a call of `g` (`g(#i).#j`: `self.enter(|core, cx| …)`),
    // typed as `g`'s signature gives it (`F: FnOnce(Box<Core>, &Context)`),
    // read where `g` is written; untyped otherwise.
    let recv_type = match recv_type {
        Some(t) if rust => match js_callback_marker(t) {
            Some((g, i, j)) => {
                // (feature 58: `x.m`, typed as its own call is, by the
                // receiver type that call carries in the caller; untyped, not
                // read)
                let local = g.split_once('.').is_some_and(|(x, _)| x != "self");
                let rt = local
                    .then(|| {
                        f.edges.iter().find(|e| {
                            e.kind == "calls"
                                && e.dst_name == g
                                && e.src_symbol.as_deref() == src_symbol
                        })
                    })
                    .flatten()
                    .and_then(|e| e.recv_type.as_deref());
                let st = (!local || rt.is_some())
                    .then(|| {
                        deeper(8, || {
                            find_scoped_call(idx, fi, f, g, src_symbol, imports, rt)
                        })
                    })
                    .flatten()
                    .and_then(|r| {
                        let gf = &idx.files[r.0 as usize];
                        let at = gf.js_callbacks.binary_search_by_key(&r.1, |c| c.0).ok()?;
                        let ty = gf.js_callbacks[at]
                            .1
                            .iter()
                            .find(|(k, _)| *k == i)?
                            .1
                            .get(j as usize)?
                            .as_deref()?;
                        Some((ty.to_string(), r.0))
                    });
                if let Some(d) = st.as_ref().and_then(|st| decided(st, is_word(q))) {
                    return d;
                }
                None
            }
            None => Some(t),
        },
        other => other,
    };
    // Rust (feature 41): a receiver a pattern bound (`~P#i`, `~P#f`, or
    // `=<~P#i>x.f` for an expression it starts): the type its slot
    // declares. `x.m()` is that type's own method as its file reads the
    // type; failing that (a type outside the index), the receiver is a
    // local of that type as written, as is the first name of a longer one.
    // A slot of a generic parameter, or one not found, types nothing.
    let slot_recv: Option<String>;
    let recv_type = match recv_type {
        Some(t) if rust && (t.starts_with('~') || t.starts_with("=<~")) => {
            let (slot, expr) = match t.strip_prefix("=<") {
                Some(e) => {
                    let (h, rest) = rust_head_type(&t[1..]);
                    (h.unwrap_or(e), Some(rest))
                }
                None => (t, None),
            };
            let st = rust_slot_type(idx, fi, f, src_symbol, imports, slot);
            if let Some(d) = st
                .as_ref()
                .and_then(|st| decided(st, expr.is_none() && is_word(q)))
            {
                return d;
            }
            slot_recv = st.map(|(ty, _)| match expr {
                Some(e) => format!("=<{ty}>{e}"),
                None => ty,
            });
            slot_recv.as_deref()
        }
        other => other,
    };
    // Rust (feature 33): a receiver that is an associated function's call
    // (`ThreadPoolBuilder::new().num_threads(…)`, `Finder::new(n)?.find(…)`)
    // is typed as a local bound to it is (`Foo::new()`, `Foo::new()?`).
    // A path through a module (`nfa::Inner::default()`) only when the
    // module is one the index places (`aho_corasick::Input::new()`,
    // `thread::Builder::new()` are another crate's).
    // Rust (feature 34): `=expr`, a local bound to a call's result or a
    // receiver that is one: the receiver is that expression (`=<T>expr`: its
    // first name, a local, of type `T`), its `.unwrap()`, `.expect(…)`,
    // `.unwrap_or…(…)` read as `?` and its `.await` as nothing.
    // (A crate with a `clone` method returning another type than its own
    // keeps every `.clone()`, which its signature types.)
    let keep_clone = rust
        && idx
            .odd_clone
            .contains(f.path.split('/').next().unwrap_or(""));
    let rust_expr = recv_type
        .filter(|_| rust)
        .and_then(|t| t.strip_prefix('='))
        .map(|e| {
            let (head, e) = rust_head_type(e);
            (rust_settle(e, keep_clone), head)
        });
    let recv_type = recv_type.filter(|t| !(rust && t.starts_with('=')));
    let rq: String = match &rust_expr {
        Some((e, _)) => e.clone(),
        None if rust => rust_settle(q, keep_clone),
        None => q.to_string(),
    };
    // (`Pin::new(&mut self.io)`, `Arc::new(Semaphore::new(1))`: what the
    // pointer holds, whose methods it is called for; not a method the
    // pointer answers itself, `clone`, `as_ref`, `Pin`'s own `set`.)
    let rq = match rust {
        true => {
            let held = rust_unpointer(&rq);
            let pin =
                rust_split_call(&rq).is_some_and(|(c, _)| c.rsplit("::").nth(1) == Some("Pin"));
            let own = POINTER_METHODS.contains(&name) || (pin && PIN_METHODS.contains(&name));
            if held != rq && own {
                return None;
            }
            held
        }
        false => rq,
    };
    let rq = rq.as_str();
    let rhead = rust_expr.as_ref().and_then(|(_, h)| *h);
    // (The expression is its first name alone, `x.clone()`... `x.await`:
    // `x`'s type; `x.unwrap()`, `x?`: `T` of its `Option<T>`/`Result<T, _>`.)
    let unwrapped = rhead
        .filter(|_| rq.strip_suffix('?').is_some_and(is_word))
        .and_then(|h| rust_declared_value(h, true));
    let recv_type = recv_type
        .or(rhead.filter(|_| is_word(rq)))
        .or(unwrapped.as_deref());
    let value_ctor = (rust && recv_type.is_none())
        .then(|| rust_value_ctor(rq))
        .flatten()
        .filter(|c| rust_path_placed(c.trim_end_matches('?').trim_end_matches("()")));
    let recv_type = recv_type.or(value_ctor.as_deref());
    // Rust (feature 33): any other receiver that is a call (`b.long(l)`,
    // `builder.build()`, `make(x)`, `f(x)?`; an associated function's,
    // `Foo::new(x)`, was typed above) has the type the
    // called function's signature declares: `Self` (an associated
    // function's, a builder's: the type of its `impl`, and `m` its member
    // beside it, its file, else its crate), or another type (`fn build(&self)
    // -> Ignore`; `-> Result<T, _>` with `?`: `T`), read where the signature
    // is written, in the caller's crate only. `m` must be that type's own:
    // no rule by name decides here.
    // Rust: the method `name` of the type `t` the signature of `r` declares,
    // read in `r`'s file with its own renaming imports; that type's own.
    let method_of_declared = |r: SymRef, t: &str| -> Option<SymRef> {
        let rf = file(&r);
        let last = t.rsplit("::").next().unwrap_or(t);
        let aliases = renaming_imports(rf);
        let theirs = FileImports {
            aliases: &aliases,
            ..*imports
        };
        let v = format!("_v.{name}");
        find_scoped_call(idx, r.0, rf, &v, None, &theirs, Some(t))
            .filter(|x| is_member(x) && member_of(last, x))
    };
    if rust && recv_type.is_none() {
        let chained = deeper(8, || {
            let (callee, tried) = rust_split_call(rq)?;
            if callee.is_empty()
                || callee
                    .rsplit_once('.')
                    .is_some_and(|(inner, _)| inner.is_empty())
            {
                return None;
            }
            // (a path through another crate's module: `thread::Builder::new()`)
            if !callee.contains('.') && !rust_path_placed(callee) {
                return None;
            }
            // The call on the first name, a local of type `T`, is typed by
            // it; a call further on, by `T` through what comes before.
            let inner = rhead.and_then(|t| {
                let (recv, _) = callee.rsplit_once('.')?;
                let head = rq.split(['.', '(', '?', ':', '<', '[', '!']).next()?;
                if recv == head {
                    Some(t.to_string())
                } else {
                    recv.starts_with(head).then(|| format!("=<{t}>{recv}"))
                }
            });
            let r = find_scoped_call(idx, fi, f, callee, src_symbol, imports, inner.as_deref())?;
            let s = sym(&r);
            if !matches!(s.kind, "method" | "function") {
                return None;
            }
            let rf = file(&r);
            if (s.ret == RET_SELF && !tried) || (s.ret == RET_SELF_RESULT && tried) {
                let (owner, _) = s.qname.rsplit_once('.')?;
                let owner = owner.rsplit(['.', ':']).next().unwrap_or(owner);
                let mine = cands.iter().filter(|x| member_of(owner, x) && is_member(x));
                return mine
                    .clone()
                    .find(|x| x.0 == r.0)
                    .or_else(|| mine.clone().find(|x| top(&file(x).path) == top(&rf.path)))
                    .copied();
            }
            let t = rust_declared_of(idx, f, r, tried)?;
            method_of_declared(r, &t)
        });
        if chained.is_some() {
            return chained;
        }
        // Rust (feature 37): a receiver that reads a field on the way
        // (`self.shared.inject.push(…)`, `path.segments.first()`,
        // `self.raw.header().state.load()`): typed left to right; a first
        // name bound to an associated function's call (`Foo::new()`) is
        // that call.
        let word = rq
            .split(['.', '(', '?', ':', '<', '[', '!'])
            .next()
            .unwrap_or("");
        let (fq, fhead) = match rhead {
            Some(h) if h.ends_with(')') || h.ends_with(")?") => {
                (format!("{h}{}", &rq[word.len()..]), None)
            }
            other => (rq.to_string(), other),
        };
        let folded = rust_fold(
            idx,
            fi,
            f,
            src_symbol,
            imports,
            &fq,
            fhead,
            own_q.as_deref(),
        );
        if let Some(r) = folded.and_then(|st| rust_method_in(idx, imports, &st, name)) {
            return Some(r);
        }
    }
    // `x.m()` through a local name whose binding names a type (feature 15):
    // the method of that type (Python: or of its nearest base); a type the
    // repository does not define (std's `Vec`, a library's class) owns
    // methods outside it. A binding that names no type decides nothing.
    if let Some(t) = recv_type {
        let defined = |ty: &str| {
            idx.by_name.get(ty).is_some_and(|v| {
                v.iter()
                    .any(|r| kind_ok(sym(r).kind, true) && same_family(r))
            })
        };
        // Rust: `impl A + B`, a generic's bounds (feature 35): the method of
        // the first bound that holds it.
        let bounds = t
            .strip_prefix("impl ")
            .filter(|_| rust)
            .map(rust_bounds)
            .filter(|b| b.len() > 1);
        if let Some(parts) = bounds {
            for p in parts {
                let one = format!("impl {p}");
                let r = deeper(8, || {
                    find_scoped_call(idx, fi, f, written, src_symbol, imports, Some(&one))
                });
                if r.is_some() {
                    return r;
                }
            }
            return None;
        }
        if rust {
            let crate_of = top(&f.path);
            // Where the type a path names is defined: through the path as
            // written (`crate::dfa::DFA`, `proto::Conn`) or the caller's
            // `use` of it (`use tokio::sync::Mutex;`). `Err`: std's or
            // another library's; `Ok(None)`: not placed (the file's own,
            // a glob's, a generic's).
            let home_in = |ff: &FileFacts, path: &str| -> Result<Option<SymRef>, ()> {
                let ty = path.rsplit("::").next().unwrap_or(path);
                let full = if path.contains("::") {
                    Some(path.to_string())
                } else {
                    ff.edges
                        .iter()
                        .filter(|e| e.kind == "imports")
                        .find_map(|e| {
                            let p = e.dst_name.as_str();
                            let name = e.alias.as_deref().or_else(|| p.rsplit("::").next())?;
                            (name == ty && p.contains("::")).then(|| p.to_string())
                        })
                };
                let Some(full) = full else {
                    return Ok(None);
                };
                let (q, last) = full.rsplit_once("::").ok_or(())?;
                // The path's first segment, or the `use` it comes by
                // (`use std::time;` → `time::Instant`), in std.
                let head = q.split("::").next().unwrap_or(q);
                // The name a `use` binds (`use std::sync::{self, …}`:
                // `sync`; `use std::io::{self as std_io}`: `std_io`).
                let binds = |e: &RawEdge| {
                    e.alias
                        .as_deref()
                        .or_else(|| e.dst_name.trim_end_matches("::self").rsplit("::").next())
                        == Some(head)
                };
                let std_use = ff.edges.iter().any(|e| {
                    e.kind == "imports"
                        && binds(e)
                        && e.dst_name.contains("::")
                        && matches!(
                            e.dst_name.split("::").next(),
                            Some("std" | "core" | "alloc")
                        )
                });
                if std_use || matches!(head, "std" | "core" | "alloc") {
                    return Err(());
                }
                let Some(mf) = rust_module_of(idx, ff, q, imports.modules) else {
                    // (a path from a crate the index does not hold:
                    // `walkdir::DirEntry`, its first name neither the
                    // crate's own nor a module or `use` of the file; feature 41)
                    // (bound: a `use` of it, a glob, or a module of that
                    // name in the crate, which a `cfg` macro may declare)
                    let crate_of = top(&ff.path);
                    let bound = matches!(head, "crate" | "self" | "super")
                        || rust_module_of(idx, ff, head, imports.modules).is_some()
                        || ff.edges.iter().any(|e| {
                            e.kind == "imports" && (binds(e) || e.dst_name.ends_with('*'))
                        })
                        || idx.by_name.get(head).is_some_and(|v| {
                            v.iter()
                                .any(|r| sym(r).kind == "module" && top(&file(r).path) == crate_of)
                        });
                    return if bound { Ok(None) } else { Err(()) };
                };
                let Some(defs) = idx.by_name.get(last) else {
                    return Ok(None);
                };
                let is_type = |r: &SymRef| kind_ok(sym(r).kind, true) && same_family(r);
                Ok(through_reexports(
                    idx,
                    mf,
                    last,
                    &is_type,
                    defs,
                    imports.modules,
                    3,
                ))
            };
            let home = |path: &str| home_in(f, path);
            // The member `m` of the type `path` names: of its definition's
            // file, else its module's, else its crate's; a type not placed:
            // the caller's file's, else the caller's crate's.
            let member_at = |path: &str, m: &str, at: Option<SymRef>| -> Option<SymRef> {
                let ty = path.rsplit("::").next().unwrap_or(path);
                let v = idx.by_name.get(m)?;
                let v: Vec<&SymRef> = v
                    .iter()
                    .filter(|r| is_member(r) && member_of(ty, r))
                    .collect();
                if let Some(t) = at {
                    // Its file, its module's files (tokio's `Handle` of
                    // `multi_thread_alt/` has its methods there, not in the
                    // `multi_thread/` one), its crate.
                    let tp = &file(&t).path;
                    let module = format!("{}/", dir_of(tp));
                    let tc = top(tp);
                    return v
                        .iter()
                        .find(|r| r.0 == t.0)
                        .or_else(|| v.iter().find(|r| file(r).path.starts_with(&module)))
                        .or_else(|| v.iter().find(|r| top(&file(r).path) == tc))
                        .map(|r| **r);
                }
                // (A glob's, `use super::*;` in a module's `test.rs`: its
                // directory's before the crate's.)
                let here = dir_of(&f.path);
                v.iter()
                    .find(|r| r.0 == fi)
                    .or_else(|| v.iter().find(|r| dir_of(&file(r).path) == here))
                    .or_else(|| v.iter().find(|r| top(&file(r).path) == crate_of))
                    .map(|r| **r)
            };
            let member = |path: &str, m: &str| -> Result<Option<SymRef>, ()> {
                Ok(member_at(path, m, home(path)?))
            };
            // `Self` is the caller's type; a one-letter name is a generic's.
            let type_path = |p: &str| -> Option<String> {
                let p = p.split('<').next().unwrap_or(p).trim();
                let (owned, _) = rust_unalias(imports.aliases, p);
                let p: &str = &owned;
                let last = p.rsplit("::").next().unwrap_or(p);
                if last == "Self" {
                    return own_type.clone();
                }
                let generic = last.len() == 1;
                (last.starts_with(|c: char| c.is_ascii_uppercase()) && !generic)
                    .then(|| p.to_string())
            };
            // A type another library's `use … as` names (`use
            // tokio_test::io::Builder as Mock;`, `let m = Mock::new();`).
            let external_alias = |p: &str| {
                let p = p.split('<').next().unwrap_or(p).trim();
                let (_, alias) = rust_unalias(imports.aliases, p);
                alias
                    .is_some_and(|e| resolve_import(idx, f, &e.dst_name, imports.modules).is_none())
            };
            let ctor = t
                .strip_suffix("()?")
                .map(|c| (c, true))
                .or_else(|| t.strip_suffix("()").map(|c| (c, false)));
            let ty = match ctor {
                // `let x = Foo::new(…)`: `Foo` when `new` returns it.
                Some((call, tried)) => {
                    let (tq, ctor) = call.rsplit_once("::")?;
                    if external_alias(tq) {
                        return None;
                    }
                    // `Arc::new(Semaphore::new(1))`: a pointer that derefs to
                    // a value whose type does not show.
                    let head = tq.split('<').next().unwrap_or(tq);
                    let pointer = matches!(
                        head.rsplit("::").next(),
                        Some("Arc" | "Rc" | "Box" | "Pin" | "ManuallyDrop")
                    );
                    match type_path(tq).filter(|_| !pointer) {
                        None => None,
                        Some(ty) => match member(&ty, ctor) {
                            Err(()) => return None,
                            Ok(Some(r)) => {
                                let ret = sym(&r).ret;
                                if (ret == RET_SELF && !tried) || (ret == RET_SELF_RESULT && tried)
                                {
                                    Some(ty)
                                } else {
                                    // Another type its signature declares
                                    // (`DFA::config() -> Config`, `Pool::builder()
                                    // -> PoolBuilder`): `m` is that type's own,
                                    // the type read where the signature is
                                    // written (feature 36).
                                    let found = rust_declared_of(idx, f, r, tried)
                                        .and_then(|t| deeper(8, || method_of_declared(r, &t)));
                                    if found.is_some() {
                                        return found;
                                    }
                                    None
                                }
                            }
                            Ok(None) if !defined(ty.rsplit("::").next().unwrap_or(&ty)) => {
                                return None
                            }
                            Ok(None) => None,
                        },
                    }
                }
                // `Box<Expr>.clone()`: a pointer's own impl of a std trait
                // (`Clone`, `Hash`, `Debug`) is std's, not its content's.
                None if rust_pointer(t) && rust_std_method(name) => return None,
                None => match rust_receiver_type(t) {
                    Some(ty) if external_alias(&ty) => return None,
                    other => other.and_then(|ty| type_path(&ty)),
                },
            };
            // A type alias (`pub type ParseStream<'a> = &'a ParseBuffer<'a>;`)
            // stands for the type it names, placed as the alias's own file
            // names it (feature 31): the alias the path places, else the
            // caller's crate's one module-level alias of that name; not when
            // the alias's file defines a struct or enum of the name too (a
            // `cfg` alternative: tokio's `TimeDriver`); up to three hops.
            // `Some(at)`: an alias was followed, `at` is where its type is.
            let mut alias_at: Option<Result<Option<SymRef>, ()>> = None;
            // An `impl` of the alias itself (`impl OwnedDFA { … }`) holds
            // the method: that one.
            let mut on_alias: Option<SymRef> = None;
            let ty =
                ty.map(|mut t| {
                    let mut at = home(&t);
                    for _ in 0..3 {
                        let last = t.rsplit("::").next().unwrap_or(&t).to_string();
                        let alias = match at {
                            Ok(Some(r)) => (sym(&r).kind == "type").then_some(r),
                            // The caller's file's own type of the name is no alias.
                            Ok(None)
                                if f.symbols.iter().any(|x| {
                                    *x.qname == *last && kind_ok(x.kind, true) && x.kind != "type"
                                }) =>
                            {
                                None
                            }
                            Ok(None) => {
                                let mut v =
                                    idx.by_name.get(last.as_str()).into_iter().flatten().filter(
                                        |r| {
                                            sym(r).kind == "type"
                                                && !sym(r).qname.contains('.')
                                                && file(r).lang == Lang::Rust
                                                && top(&file(r).path) == crate_of
                                        },
                                    );
                                match (v.next(), v.next()) {
                                    (Some(r), None) => Some(*r),
                                    _ => None,
                                }
                            }
                            Err(()) => None,
                        };
                        let Some(a) = alias else {
                            break;
                        };
                        if let Some(r) = member_at(&t, name, Some(a)) {
                            on_alias = Some(r);
                            break;
                        }
                        let af = file(&a);
                        let beside = af.symbols.iter().any(|x| {
                            *x.qname == *last && kind_ok(x.kind, true) && x.kind != "type"
                        });
                        if beside {
                            break;
                        }
                        let Some(target) = rust_alias(af, a.1) else {
                            break;
                        };
                        // `type Shared = Arc<Inner>`: a std trait's method is
                        // the pointer's own (as for `Arc<Inner>` written out).
                        if rust_pointer(target) && rust_std_method(name) {
                            alias_at = Some(Err(()));
                            break;
                        }
                        let Some(x) = rust_receiver_type(target)
                            .map(|x| x.strip_prefix("self::").map(str::to_string).unwrap_or(x))
                            .and_then(|x| type_path(&x))
                            .filter(|x| *x != t)
                        else {
                            break;
                        };
                        at = home_in(af, &x);
                        if let Ok(None) = at {
                            // A path into another crate the index does not place
                            // (`mpsc::Sender` of `futures_channel`): outside; a
                            // plain name: the alias's file's own type of it.
                            let head = x.split("::").next().unwrap_or(&x);
                            let other_crate = x.contains("::")
                                && !matches!(head, "crate" | "self" | "super")
                                && head.starts_with(|c: char| c.is_ascii_lowercase());
                            let own = af
                                .symbols
                                .iter()
                                .position(|s| *s.qname == *x && kind_ok(s.kind, true));
                            at = match own {
                                _ if other_crate => Err(()),
                                Some(i) => Ok(Some((a.0, i as u32))),
                                None => Ok(None),
                            };
                        }
                        alias_at = Some(at);
                        t = x;
                    }
                    t
                });
            if on_alias.is_some() {
                return on_alias;
            }
            if let Some(ty) = ty {
                let found = match alias_at {
                    Some(at) => at.map(|at| member_at(&ty, name, at)),
                    None => member(&ty, name),
                };
                // A trait's method may be its supertraits' (`trait
                // UnindexedConsumer<I>: Consumer<I>`): the trait's `extends`
                // edges, read in its file, nearest first (feature 35).
                let last = ty.rsplit("::").next().unwrap_or(&ty);
                let supertraits = || -> Option<SymRef> {
                    let tr = match home(&ty) {
                        Ok(Some(r)) => Some(r),
                        // (a plain name only: a path that no `use` places is
                        // another crate's)
                        Ok(None) if !ty.contains("::") => {
                            let mut v = idx.by_name.get(last).into_iter().flatten().filter(|r| {
                                sym(r).kind == "trait" && top(&file(r).path) == crate_of
                            });
                            match (v.next(), v.next()) {
                                (Some(r), None) => Some(*r),
                                _ => None,
                            }
                        }
                        _ => None,
                    }
                    .filter(|r| sym(r).kind == "trait")?;
                    let tf = file(&tr);
                    let tq = &*sym(&tr).qname;
                    let aliases = renaming_imports(tf);
                    let theirs = FileImports {
                        aliases: &aliases,
                        ..*imports
                    };
                    let v = format!("_v.{name}");
                    // (`trait Foo: ext::Foo` is not its own supertrait)
                    tf.edges
                        .iter()
                        .filter(|e| e.kind == "extends" && e.src_symbol.as_deref() == Some(tq))
                        .filter(|e| simple_name(&e.dst_name) != last)
                        .find_map(|e| {
                            let one = format!("impl {}", e.dst_name);
                            deeper(8, || {
                                find_scoped_call(idx, tr.0, tf, &v, None, &theirs, Some(&one))
                            })
                        })
                };
                // A method no impl of the type in the index defines: of the one
                // trait in sight of the caller (its own, a `use`'s, a glob's:
                // `use tokio::io::AsyncWriteExt;`, `use rayon::prelude::*;`)
                // declaring it, as a blanket impl or a provided method gives it
                // (`w.write_all(…)` on a `BufWriter`; feature 51).
                // (Not a name std's types define, which an inherent method of
                // theirs may answer; not when an impl of the trait beside it
                // could: `impl FilterAttrs for &[Attribute]`. A blanket impl's
                // method, `impl<I: ?Sized> IntoParallelRefIterator for I`, is
                // what rust-analyzer names.)
                let trait_method = |std_type: bool| -> Option<SymRef> {
                    if rust_std_method(name) || cands.iter().any(|r| member_of(last, r)) {
                        return None;
                    }
                    let mut one: Option<(SymRef, &str)> = None;
                    for r in cands
                        .iter()
                        .filter(|r| sym(r).kind == "method" && same_family(r))
                    {
                        let Some((tq, _)) = sym(r).qname.rsplit_once('.') else {
                            continue;
                        };
                        let tname = tq.rsplit('.').next().unwrap_or(tq);
                        let Some(tr) = idx.by_name.get(tname).and_then(|v| {
                            v.iter().find(|x| {
                                x.0 == r.0 && *sym(x).qname == *tq && sym(x).kind == "trait"
                            })
                        }) else {
                            continue;
                        };
                        let seen = |x: &SymRef| x == tr;
                        let trs = [*tr];
                        if through_reexports(idx, fi, tname, &seen, &trs, imports.modules, 3)
                            .is_none()
                        {
                            continue;
                        }
                        match one {
                            Some((p, _)) if p != *r => return None,
                            _ => one = Some((*r, tname)),
                        }
                    }
                    let (r, tname) = one?;
                    // (feature 53: the type implements the trait, or a blanket
                    // impl does; a slice's impl answers a `Vec`, `[T]`)
                    // (a blanket impl's type is a generic parameter: a short
                    // capitalized name no type of the index bears, `T`, `Fut`,
                    // `St`)
                    let generic = |c: &str| {
                        let short = !c.is_empty()
                            && c.len() <= 2
                            && c.bytes()
                                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
                        short
                            || (c.len() == 3
                                && c.starts_with(|x: char| x.is_ascii_uppercase())
                                && c.bytes().all(|b| b.is_ascii_alphanumeric())
                                && !idx.by_name.get(c).is_some_and(|v| {
                                    v.iter().any(|r| {
                                        matches!(sym(r).kind, "struct" | "enum" | "union" | "trait")
                                    })
                                }))
                    };
                    let impls = idx.rust_impls.get(tname).map(Vec::as_slice).unwrap_or(&[]);
                    let blanket = impls.iter().any(|t| generic(t));
                    let sliced = matches!(last, "Vec") || last.starts_with('[');
                    // (a `String` is a `str` to a method: `impl StrExt for str`)
                    let stringy = matches!(last, "String" | "str");
                    let direct = impls.contains(&last)
                        || (sliced && impls.contains(&""))
                        || (stringy && impls.contains(&"str"));
                    let evidence = blanket || direct;
                    if !evidence {
                        return None;
                    }
                    let mut others = cands
                        .iter()
                        .filter(|x| x.0 == r.0 && **x != r && sym(x).kind == "method");
                    let answers =
                        |c: &str| generic(c) || (sliced && c.is_empty()) || (stringy && c == "str");
                    match (others.next(), others.next()) {
                        // (a std or another library's type: only an impl's own
                        // method, never the trait's declaration alone)
                        (None, _) => (!std_type || direct).then_some(r),
                        (Some(b), None)
                            if sym(b)
                                .qname
                                .rsplit_once('.')
                                .is_some_and(|(c, _)| answers(c)) =>
                        {
                            Some(*b)
                        }
                        _ => None,
                    }
                };
                match found {
                    Err(()) => return trait_method(true),
                    Ok(Some(r)) => return Some(r),
                    Ok(None) => {
                        if let Some(r) = supertraits().or_else(|| trait_method(false)) {
                            return Some(r);
                        }
                        if !defined(last) {
                            return None;
                        }
                    }
                }
            }
        } else if f.lang == Lang::Python {
            if let Some(r) = py_receiver(t, fi) {
                return r;
            }
        } else if matches!(f.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx) {
            if let Some(r) = js_receiver(t, fi) {
                return r;
            }
        }
    }
    let plain = !q.is_empty()
        && q.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':' || b == b'.');
    if rust && written.contains("::") {
        let head = q.split("::").next().unwrap_or(q);
        // `<T as Trait>::f`, `Self::Assoc::f`, std paths: not a name to look up.
        if !plain || matches!(head, "std" | "core" | "alloc" | "Self") {
            return None;
        }
        // (feature 53) `self::`/`super::` from inside an inline module
        // (`mod tests { … super::parse(…) }`): that module or the one around
        // it, in the caller's file; past the file's top, the file's own path.
        let rel;
        let q = match rust_relative(f, src_symbol, q) {
            Relative::Same => q,
            Relative::Outer(p) => {
                rel = p;
                rel.as_str()
            }
            Relative::InFile(m) => {
                let path_last = q.rsplit("::").next().unwrap_or(q);
                if path_last.starts_with(|c: char| c.is_ascii_uppercase()) {
                    // A type of that module: its member written inside it.
                    let span = f
                        .symbols
                        .iter()
                        .find(|x| *x.qname == *m && x.kind == "module")
                        .map(|x| x.lines)?;
                    let own = cands.iter().find(|r| {
                        r.0 == fi
                            && member_of(path_last, r)
                            && span.0 <= sym(r).lines.0
                            && sym(r).lines.0 <= span.1
                    });
                    // (else a type that module's `use` brings: as the caller
                    // inside it reads the name)
                    let bare = q
                        .split("::")
                        .filter(|x| !matches!(*x, "self" | "super"))
                        .count()
                        == 1;
                    return match own {
                        Some(r) => Some(*r),
                        None if bare => {
                            let w = format!("{path_last}::{name}");
                            deeper(8, || {
                                find_scoped_call(idx, fi, f, &w, src_symbol, imports, None)
                            })
                        }
                        None => None,
                    };
                }
                let qn = match q
                    .split("::")
                    .filter(|x| !matches!(*x, "self" | "super"))
                    .collect::<Vec<_>>()
                {
                    v if v.is_empty() => format!("{m}.{name}"),
                    v => format!("{m}.{}.{name}", v.join(".")),
                };
                let own = cands
                    .iter()
                    .find(|r| r.0 == fi && *sym(r).qname == *qn && callable(r) && !is_member(r));
                // (else what that module's `use` or glob brings, as a bare
                // call inside it reads the name)
                return match own {
                    Some(r) => Some(*r),
                    None if qn == format!("{m}.{name}") => deeper(8, || {
                        find_scoped_call(idx, fi, f, name, src_symbol, imports, None)
                    }),
                    None => None,
                };
            }
        };
        let q_last = q.rsplit("::").next().unwrap_or(q);
        let head = q.split("::").next().unwrap_or(q);
        let crate_of = top(&f.path);
        let in_crate = |r: &&SymRef| top(&file(r).path) == crate_of;
        if q_last.starts_with(|c: char| c.is_ascii_uppercase()) {
            // `Type::f`: a member of that type in the caller's crate, or in
            // the crate the path names (`regex::Regex::new`); a type of
            // another crate by name alone is often std's (`AtomicUsize`).
            let named_crate = |r: &&SymRef| {
                let h = head.replace('_', "-");
                let t = top(&file(r).path);
                q.contains("::") && (t == h || t.starts_with(&format!("{h}-")))
            };
            let mut m = cands.iter().filter(|r| member_of(q_last, r));
            // (feature 48: a type a `use` binds, `use syn::punctuated::Punctuated;`
            // for `Punctuated::new`, is read through that path; std's is
            // none of the index's)
            // (a type of the caller's file's own is that one)
            let own_type = || {
                f.symbols
                    .iter()
                    .any(|s| *s.qname == *q && kind_ok(s.kind, true))
            };
            let used = (!q.contains("::") && !own_type())
                .then(|| uses_binding(q).first().map(|e| e.dst_name.as_str()))
                .flatten();
            if used.is_some_and(|p| matches!(p.split("::").next(), Some("std" | "core" | "alloc")))
            {
                // (unless the caller's file implements it: `impl From<Span>
                // for Range<usize>`)
                return m
                    .clone()
                    .find(|r| r.0 == fi && Some(&*sym(r).qname) != src_symbol)
                    .copied();
            }
            // A path to the type (`crate::runtime::io::Driver::new`, as a
            // `use … as IoDriver` spells it out; `proto::Conn::new`): the
            // type the compiler finds there, and its member in its file,
            // its module, its crate.
            // (a type no `use` names, feature 50: the caller's file's globs
            // are followed, `use rayon_core::*;`, `use super::*;`)
            let spelled = used.unwrap_or(q);
            let through_path = spelled
                .rsplit_once("::")
                .map(|(tq, _)| tq)
                .or_else(|| (!own_type()).then_some(""))
                .and_then(|tq| {
                    let mf = match tq {
                        "" => fi,
                        _ => rust_module_of(idx, f, tq, imports.modules)?,
                    };
                    let is_type = |r: &SymRef| kind_ok(sym(r).kind, true) && same_family(r);
                    let defs = idx.by_name.get(q_last)?;
                    let t = through_reexports(idx, mf, q_last, &is_type, defs, imports.modules, 3)?;
                    // A type alias (clap's `pub type Error = error::Error<…>`)
                    // names a type defined elsewhere: the rules by name decide.
                    if sym(&t).kind == "type" {
                        return None;
                    }
                    let tp = &file(&t).path;
                    let module = format!("{}/", dir_of(tp));
                    let tc = top(tp);
                    // A file defining a type of that name of its own holds its
                    // own type's members (dfa's `onepass.rs` beside `dense.rs`).
                    let another = |r: &&SymRef| {
                        r.0 != t.0
                            && file(r)
                                .symbols
                                .iter()
                                .any(|s| &*s.qname == q_last && kind_ok(s.kind, true))
                    };
                    let mine = m.clone().filter(|r| !another(r));
                    // (the caller's file's own impl first: `impl From<&Id> for
                    // Str` beside `Str::from(id)`; feature 48), not the caller
                    // itself (`impl Remappable for onepass::DFA`'s `state_len`
                    // calls the type's own `DFA::state_len`)
                    let not_caller = |r: &&SymRef| Some(&*sym(r).qname) != src_symbol;
                    Some(
                        mine.clone()
                            .find(|r| r.0 == fi && not_caller(r))
                            .or_else(|| mine.clone().find(|r| r.0 == t.0))
                            .or_else(|| mine.clone().find(|r| file(r).path.starts_with(&module)))
                            .or_else(|| mine.clone().find(|r| top(&file(r).path) == tc)),
                    )
                });
            // The type found: its member, or none (a trait's, a type alias's
            // impl) rather than another type's of the same name.
            if let Some(found) = through_path {
                return found.copied();
            }
            return m
                .clone()
                .find(|r| r.0 == fi)
                .or_else(|| m.clone().find(in_crate))
                .or_else(|| m.find(named_crate))
                .copied();
        }
        // `module::f`: a free function of a file or directory named so.
        let module = if matches!(q_last, "crate" | "self" | "super") {
            None
        } else {
            Some(q_last)
        };
        // The module the path names, as the compiler finds it: through the
        // caller's `use` of its first segment (`use crate::time;` →
        // `time::sleep`), else as written (`crate::…`, `self::…`,
        // `super::…`, a child module, a crate of the workspace: `tokio::spawn`);
        // then the function there or where that module's `use` items take it
        // from (`pub use sleep::sleep;` in `time/mod.rs`).
        // (feature 53: `super::f` from a child of the crate's root, `src/b.rs`,
        // is the root's, `src/lib.rs`; an import's `super` inside an inline
        // module is read elsewhere, so only calls read it so)
        let root_child = || {
            let fname = f.path.rsplit('/').next().unwrap_or("");
            if q != "super" || matches!(fname, "lib.rs" | "main.rs") {
                return None;
            }
            // (`src/b.rs` and `src/b/mod.rs` alike)
            let dir = match fname {
                "mod.rs" => dir_of(dir_of(&f.path)),
                _ => dir_of(&f.path),
            };
            // (the root that declares the caller's module, `mod cli;` in
            // `main.rs` beside a `lib.rs`; else the library's)
            let stem = match fname {
                "mod.rs" => dir_of(&f.path).rsplit('/').next().unwrap_or(""),
                _ => fname.trim_end_matches(".rs"),
            };
            let decl = format!("mod {stem}");
            let roots: Vec<u32> = ["lib.rs", "main.rs"]
                .iter()
                .filter_map(|r| idx.paths.get(join(dir, r).as_str()).copied())
                .collect();
            roots
                .iter()
                .find(|r| {
                    idx.files[**r as usize]
                        .edges
                        .iter()
                        .any(|e| e.kind == "imports" && e.dst_name == decl)
                })
                .or(roots.first())
                .copied()
        };
        let through_path = rust_module_of(idx, f, q, imports.modules)
            .or_else(root_child)
            .and_then(|mf| {
                through_reexports(
                    idx,
                    mf,
                    name,
                    &|r: &SymRef| callable(r) && !is_member(r),
                    cands,
                    imports.modules,
                    3,
                )
            });
        // Else an inline module's (`mod parsing { … }`, whose functions are
        // named `parsing.f`; feature 50): `parsing::f` of the caller's file's
        // own, `attr::parsing::parse_inner` of the file `attr` names.
        let inline = || {
            let segs: Vec<&str> = q.split("::").collect();
            let within = |at: u32, rest: &[&str]| {
                let qn = format!("{}.{name}", rest.join("."));
                cands
                    .iter()
                    .find(|r| r.0 == at && *sym(r).qname == *qn && callable(r))
                    .copied()
            };
            if !matches!(segs[0], "crate" | "self" | "super") {
                if let Some(r) = within(fi, &segs) {
                    return Some(r);
                }
            }
            (1..segs.len()).rev().find_map(|k| {
                let mf = rust_module_of(idx, f, &segs[..k].join("::"), imports.modules)?;
                within(mf, &segs[k..])
            })
        };
        // Else a function of a file named after the module, in the caller's crate
        // (not for `self::f`, `super::f`, which name one module: feature 53).
        if matches!(q_last, "self" | "super") {
            return through_path.or_else(inline);
        }
        return through_path.or_else(inline).or_else(|| {
            cands
                .iter()
                .filter(|r| callable(r) && !is_member(r) && in_crate(r))
                .find(|r| module.is_none_or(|m| is_rust_module_file(&file(r).path, m)))
                .copied()
        });
    }
    if plain && !q.contains("::") && !rust {
        let capital = q_last.starts_with(|c: char| c.is_ascii_uppercase());
        if capital {
            // `Cls.f`: a member of a class of that name, the file's or an import's first.
            let m = cands.iter().filter(|r| member_of(q_last, r));
            if let Some(r) = m
                .clone()
                .find(|r| r.0 == fi)
                .or_else(|| m.clone().find(|r| imported.contains(&r.0)))
            {
                return Some(*r);
            }
            let all: Vec<&SymRef> = m.collect();
            if all.len() == 1 {
                return Some(*all[0]);
            }
            // `Math.max`, `Object.create`: a class the repository does not define.
            let defined = idx.by_name.get(q_last).is_some_and(|v| {
                v.iter()
                    .any(|r| same_family(r) && kind_ok(sym(r).kind, true))
            });
            if !defined {
                return None;
            }
        }
        // `mod.f`: a function of an imported file (or package) named `mod`.
        let named = |r: &SymRef| {
            let p = &file(r).path;
            let base = p.rsplit('/').next().unwrap_or(p);
            let stem = base.split('.').next().unwrap_or(base);
            stem == q_last
                || ((stem == "__init__" || stem == "index")
                    && dir_of(p).rsplit('/').next() == Some(q_last))
        };
        if let Some(r) = cands.iter().find(|r| {
            callable(r)
                && !is_member(r)
                && named(r)
                && (imported.contains(&r.0)
                    || imported_dirs
                        .iter()
                        .any(|d| dir_of(&file(r).path) == d.as_str()))
        }) {
            return Some(*r);
        }
        // A package's re-export (`models.CharField` of django/db/models/fields/):
        // the only such definition under a directory named for the module.
        let seg = format!("/{q_last}/");
        let under: Vec<&SymRef> = cands
            .iter()
            .filter(|r| {
                callable(r)
                    && !is_member(r)
                    && (named(r) || format!("/{}", file(r).path).contains(&seg))
            })
            .collect();
        if under.len() == 1 {
            return Some(*under[0]);
        }
        // A name the file imports as a module (`datetime`, `os`, `np`): its
        // functions are the module's, never some class's method.
        let module_import = f.edges.iter().any(|e| {
            e.kind == "imports" && {
                let spec = e.dst_name.trim_end_matches(['\'', '"']);
                spec.rsplit(['.', '/']).next() == Some(q_last) || spec == q_last
            }
        });
        if module_import && !capital {
            return None;
        }
    }
    // Python (feature 32): a receiver of no known type calling a method
    // of Python's builtin types (`params.extend()`, `f.seek()`,
    // `d.items()`) is most often a list, a dict, a str or a file: Jedi puts
    // 3 in 4 such calls the rules by name placed outside the repository
    // (bench/results/calls.md, stop 67).
    if f.lang == Lang::Python && PY_BUILTIN_METHODS.binary_search(&name).is_ok() {
        return None;
    }
    // Any other receiver: a method of this file, or the only one of its name.
    // Rust: only the only one of its crate. A Rust file holds many impls
    // whose methods share names (`clone`, `fmt`, `next`, `to_tokens`), and
    // rust-analyzer puts 57 % of the calls the file's one took elsewhere
    // (bench/results/calls.md, stop 66).
    let methods: Vec<&SymRef> = cands
        .iter()
        .filter(|r| is_member(r) && same_family(r) && kind_ok(sym(r).kind, false))
        .filter(|r| !rust || top(&file(r).path) == top(&f.path))
        .collect();
    if rust && rust_std_method(name) {
        return None;
    }
    methods
        .iter()
        .find(|r| r.0 == fi && !rust)
        .or_else(|| (methods.len() == 1).then(|| &methods[0]))
        .map(|r| **r)
}

/// For a Rust call `self.f.m` in a method of the caller's type: the file
/// and qualified name of that type's struct and the declared type of its
/// field `f`; the struct this file defines, else the crate's one struct of
/// that name (syn's `gen/clone.rs` implements `Clone` for the structs of
/// `data.rs`, feature 31).
fn self_field<'f>(
    idx: &'f Index,
    f: &'f FileFacts,
    dst_name: &str,
    src: Option<&str>,
) -> Option<(&'f FileFacts, String, &'f str)> {
    let rest = dst_name.strip_prefix("self.")?;
    let (field, m) = rest.split_once('.')?;
    // `self.a.b.m()` is called on `self.a.b`, not on `self.a`.
    if field.is_empty()
        || m.contains('.')
        || !field
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return None;
    }
    let (own, _) = src?.rsplit_once('.')?;
    let declared = |ff: &'f FileFacts, q: &str| {
        let want = format!("{q}.{field}");
        ff.fields
            .iter()
            .find(|(k, _)| **k == *want)
            .map(|(_, t)| (ff, q.to_string(), &**t))
    };
    if let Some(found) = declared(f, own) {
        return Some(found);
    }
    let name = own.rsplit('.').next().unwrap_or(own);
    let crate_of = f.path.split('/').next().unwrap_or("");
    let mut structs = idx.by_name.get(name)?.iter().filter(|r| {
        let sf = &idx.files[r.0 as usize];
        sf.lang == Lang::Rust
            && sf.symbols[r.1 as usize].kind == "struct"
            && sf.path.split('/').next() == Some(crate_of)
    });
    let r = structs.next()?;
    if structs.next().is_some() {
        return None;
    }
    let sf = &idx.files[r.0 as usize];
    declared(sf, &sf.symbols[r.1 as usize].qname)
}

/// A Rust type's generic parameters (`A1,B1`, [`rust_type_params`]) as
/// `FileFacts.fields` keeps them under `Type.<>` (feature 38).
fn rust_params_of<'f>(ff: &'f FileFacts, q: &str) -> Option<&'f str> {
    let key = format!("{q}.<>");
    ff.fields
        .iter()
        .find(|(k, _)| **k == *key)
        .map(|(_, p)| &**p)
}

/// A function's return type, for `let x = Foo::f(…)`: `Self`/`Foo`.
pub const RET_SELF: u8 = 1;
/// … `Result<Self, …>` / `Option<Self>` (unwrapped by `?`).
pub const RET_SELF_RESULT: u8 = 2;

/// What a Rust function's signature returns, as [`RET_SELF`] or
/// [`RET_SELF_RESULT`] (0: anything else); `own` is its type's name.
pub fn rust_returns(sig: &str, own: &str) -> u8 {
    let Some(ret) = rust_return_type(sig) else {
        return 0;
    };
    let ret = ret.as_str();
    // (`&mut Self` too: a builder's `fn worker_threads(&mut self, …) -> &mut Self`)
    let is_own = |t: &str| {
        let t = rust_unref(t);
        t == "Self" || (!own.is_empty() && t.split('<').next() == Some(own))
    };
    if is_own(ret) {
        return RET_SELF;
    }
    let Some((outer, args)) = ret.split_once('<') else {
        return 0;
    };
    let outer = outer.rsplit("::").next().unwrap_or(outer);
    let first = args.split([',', '>']).next().unwrap_or("");
    match outer {
        "Box" | "Arc" | "Rc" if is_own(first) => RET_SELF,
        "Result" | "Option" if is_own(first) => RET_SELF_RESULT,
        _ => 0,
    }
}

/// Rust: a function's declared return type as its signature writes it
/// (`Ignore` of `pub fn build(&self) -> Ignore {`), for [`rust_declared_value`].
pub fn rust_return_type(sig: &str) -> Option<String> {
    // The first `->` outside the parameters and generics (`F: Fn() -> X`,
    // `f: impl Fn(u8) -> W` are a bound's and a parameter's).
    let b = sig.as_bytes();
    let (mut paren, mut angle) = (0i32, 0i32);
    let mut at = None;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' => paren += 1,
            b')' | b']' => paren -= 1,
            b'-' if b.get(i + 1) == Some(&b'>') => {
                if paren == 0 && angle == 0 {
                    at = Some(i + 2);
                    break;
                }
                i += 2;
                continue;
            }
            b'<' => angle += 1,
            b'>' => angle -= 1,
            _ => {}
        }
        i += 1;
    }
    let ret = &sig[at?..];
    let ret = match ret.find(" where") {
        Some(w) if ret[w + 6..].is_empty() || ret[w + 6..].starts_with([' ', '\n']) => &ret[..w],
        _ => ret,
    };
    // (a trait's declaration ends in `;`: `fn make(&self) -> Alpha;`)
    let ret = ret.trim().trim_end_matches(['{', ';']).trim();
    (!ret.is_empty()).then(|| ret.to_string())
}

/// Rust: the type a call's value has when the function declares `ret`
/// (`tried`: the call ends in `?`, which takes `T` of `Result<T, _>` or
/// `Option<T>`); none for `Self`-relative, `impl`/`dyn` and tuple types (a
/// one-letter generic or a type the repository does not define names no
/// type at the lookup).
fn rust_declared_value(ret: &str, tried: bool) -> Option<String> {
    let t = rust_tried(ret, tried)?;
    if t.contains("Self") || t.starts_with("impl ") || t.starts_with("dyn ") || t.starts_with('(') {
        return None;
    }
    rust_receiver_type(t)
}

/// Rust: the type a call of the function or method `r` gives as its
/// signature declares it ([`rust_declared_value`]; `tried`: `?` follows),
/// read only when `r` is in the caller's (`f`'s) crate (feature 33).
fn rust_declared_of(idx: &Index, f: &FileFacts, r: SymRef, tried: bool) -> Option<String> {
    rust_declared_value(rust_declared_raw(idx, f, r)?, tried)
}

/// Rust: the return type the signature of `r` declares, as written, when
/// `r` is in the caller's (`f`'s) crate.
fn rust_declared_raw<'i>(idx: &'i Index, f: &FileFacts, r: SymRef) -> Option<&'i str> {
    let rf = &idx.files[r.0 as usize];
    let top = |p: &str| p.split('/').next().unwrap_or("").to_string();
    if top(&rf.path) != top(&f.path) {
        return None;
    }
    let at = rf.rust_rets.binary_search_by_key(&r.1, |x| x.0).ok()?;
    Some(&rf.rust_rets[at].1)
}

/// Rust (feature 42): the tuple a call of `r` gives as its signature
/// declares it (`-> (Sender<T>, Receiver<T>)`; `-> io::Result<(A, B)>`
/// with `?`), on one line, read as [`rust_declared_of`] reads a type.
fn rust_declared_tuple(idx: &Index, f: &FileFacts, r: SymRef, tried: bool) -> Option<String> {
    let t = rust_tried(rust_declared_raw(idx, f, r)?, tried)?;
    (t.starts_with('(') && t.ends_with(')') && t.len() > 2)
        .then(|| t.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Rust: what a value of declared type `ret` is: itself, or with `?`
/// (`tried`) the `T` of its `Result<T, _>` / `Option<T>`; none for `?` on
/// any other type, or a `Result`/`Option` without it.
fn rust_tried(ret: &str, tried: bool) -> Option<&str> {
    let t = ret.trim();
    let outer = t
        .split('<')
        .next()
        .unwrap_or(t)
        .rsplit("::")
        .next()
        .unwrap_or("");
    let wrapped = matches!(outer, "Result" | "Option") && t.ends_with('>');
    match (tried, wrapped) {
        (true, true) => {
            let inner = &t[t.find('<')? + 1..t.len() - 1];
            Some(ts_split_top_at(inner, b',').first().copied()?.trim())
        }
        (false, false) => Some(t),
        _ => None,
    }
}

/// Is `name` one of [`RUST_STD_METHODS`]?
fn rust_std_method(name: &str) -> bool {
    RUST_STD_METHODS.binary_search(&name).is_ok()
}

/// `Self` in a Rust type as written, replaced by the type it stands for
/// (`Option<&Self>` of `Node` → `Option<&Node>`).
fn rust_replace_self(t: &str, owner: &str) -> String {
    let b = t.as_bytes();
    let mut out = String::with_capacity(t.len());
    let mut i = 0;
    while i < t.len() {
        let word = |k: usize| {
            b.get(k)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        };
        if t[i..].starts_with("Self") && !(i > 0 && word(i - 1)) && !word(i + 4) {
            out.push_str(owner);
            i += 4;
        } else {
            let c = t[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Feature 53: where a Rust path starting `self::` or `super::` leads from
/// a caller inside an inline module of its file.
enum Relative {
    /// Not such a path, or a caller at the file's top: read as written.
    Same,
    /// An inline module of the file (its qualified name), the rest of the
    /// path inside it.
    InFile(String),
    /// Past the file's top: the path as the file's own code writes it.
    Outer(String),
}

fn rust_relative(f: &FileFacts, src_symbol: Option<&str>, q: &str) -> Relative {
    let segs: Vec<&str> = q.split("::").collect();
    let k = segs
        .iter()
        .take_while(|s| matches!(**s, "self" | "super"))
        .count();
    if k == 0 {
        return Relative::Same;
    }
    let supers = segs[..k].iter().filter(|s| **s == "super").count();
    // The innermost inline module around the caller, and those around it.
    let mut levels: Vec<&str> = Vec::new();
    let mut p = src_symbol.unwrap_or("");
    while let Some((outer, _)) = p.rsplit_once('.') {
        p = outer;
        if f.symbols
            .iter()
            .any(|x| *x.qname == *p && x.kind == "module")
        {
            levels.push(p);
        }
    }
    // (an inline module's impl methods are not named after it, `Fx.go` in
    // `mod tests`: the modules whose lines hold the caller's, innermost first)
    if levels.is_empty() {
        if let Some(at) = src_symbol
            .and_then(|c| f.symbols.iter().find(|x| *x.qname == *c))
            .map(|x| x.lines.0)
        {
            let mut mods: Vec<&FactSym> = f
                .symbols
                .iter()
                .filter(|x| x.kind == "module" && x.lines.0 < at && at <= x.lines.1)
                .collect();
            mods.sort_by_key(|x| x.lines.1 - x.lines.0);
            levels = mods.iter().map(|x| &*x.qname).collect();
        }
    }
    if levels.is_empty() {
        return Relative::Same;
    }
    let rest = &segs[k..];
    match levels.get(supers) {
        Some(m) => Relative::InFile(m.to_string()),
        None => {
            // (`levels.len()` supers reach the file's top: `self` there)
            let up = supers - levels.len();
            let mut out: Vec<&str> = vec!["super"; up];
            if up == 0 {
                out.push("self");
            }
            out.extend_from_slice(rest);
            Relative::Outer(out.join("::"))
        }
    }
}

/// The type the Rust type alias symbol `si` of file `f` names.
fn rust_alias(f: &FileFacts, si: u32) -> Option<&str> {
    let i = f.rust_aliases.binary_search_by_key(&si, |(i, _)| *i).ok()?;
    Some(&f.rust_aliases[i].1)
}

/// The type a Rust alias declaration names, from its text (`pub type
/// ParseStream<'a> = &'a ParseBuffer<'a>;` → `&'a ParseBuffer<'a>`); `None`
/// when the declaration is cut before it.
pub fn rust_alias_target(sig: &str) -> Option<String> {
    // The `=` outside the alias's generic parameters (`type Foo<T = u8> = …`).
    let mut depth = 0i32;
    let eq = sig.char_indices().find_map(|(i, c)| {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '=' if depth == 0 => return Some(i),
            _ => {}
        }
        None
    })?;
    let mut t = sig[eq + 1..].trim().trim_end_matches(';').trim();
    // A declaration cut at the line's end (`type D<T> = proto::h1::Dispatcher<`
    // …): the type its path names, unless that is a pointer whose content
    // is cut off (`type H = Arc<`).
    if t.matches('<').count() != t.matches('>').count() {
        t = t[..t.find('<').unwrap_or(t.len())].trim();
        let head = t.rsplit("::").next().unwrap_or(t);
        if matches!(head, "Box" | "Arc" | "Rc" | "Pin") {
            return None;
        }
    }
    (!t.is_empty() && t.len() <= 120).then(|| t.to_string())
}

/// A Rust type without its references: `&'a mut T` → `T`.
fn rust_unref(t: &str) -> &str {
    let mut t = t.trim().trim_start_matches('&').trim_start();
    if t.starts_with('\'') {
        t = t.split_once(' ').map(|(_, r)| r).unwrap_or("").trim_start();
    }
    t.strip_prefix("mut ").unwrap_or(t).trim_start()
}

/// Is the Rust type `t` (references and lifetimes aside) a smart pointer:
/// `Box<…>`, `Arc<…>`, `Rc<…>`, `Pin<…>`?
fn rust_pointer(t: &str) -> bool {
    let t = rust_unref(t);
    let head = t.split('<').next().unwrap_or(t);
    matches!(head.rsplit("::").next(), Some("Box" | "Arc" | "Rc" | "Pin")) && t.ends_with('>')
}

/// The type whose methods a Rust receiver of declared type `t` calls:
/// references, `mut`, `dyn`/`impl` and the pointers that deref to their
/// contents (`Box`, `Arc`, `Rc`, `Pin`) taken off; `None` for a tuple,
/// slice, array, pointer or function type.
fn rust_receiver_type(t: &str) -> Option<String> {
    let mut t = t.trim();
    loop {
        let before = t;
        t = rust_unref(t);
        for p in ["dyn ", "impl "] {
            t = t.strip_prefix(p).unwrap_or(t).trim_start();
        }
        let head = t.split('<').next().unwrap_or(t);
        let head = head.rsplit("::").next().unwrap_or(head);
        if matches!(head, "Box" | "Arc" | "Rc" | "Pin") && t.ends_with('>') {
            t = &t[t.find('<')? + 1..t.len() - 1];
        }
        if t == before {
            break;
        }
    }
    let t = t.split(['+', '<']).next().unwrap_or(t).trim();
    if t.is_empty() || t.starts_with(['(', '[', '*']) || t.starts_with("fn") && t.contains('(') {
        return None;
    }
    Some(t.to_string())
}

/// Rust: a receiver written as a call, `callee(args)` or `callee(args)?`:
/// the callee as written and whether `?` follows.
fn rust_split_call(q: &str) -> Option<(&str, bool)> {
    let (body, tried) = match q.strip_suffix('?') {
        Some(b) => (b, true),
        None => (q, false),
    };
    let body = body.strip_suffix(')')?;
    let mut depth = 0u32;
    for (i, c) in body.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' if depth == 0 => return Some((body[..i].trim(), tried)),
            '(' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Rust (feature 35): a generic type's parameters as its declaration writes
/// them (`pub struct Pair<'a, A1: Clone, B1 = u8> {` → `'a,A1,B1`), for
/// matching its fields' types with an `impl`'s arguments by position.
pub fn rust_type_params(name: &str, sig: &str) -> Option<String> {
    let at = sig
        .match_indices(name)
        .map(|(i, _)| i + name.len())
        .find(|&e| sig[e..].starts_with('<'))?;
    let b = sig.as_bytes();
    let mut depth = 0i32;
    let mut end = None;
    for (i, &c) in b.iter().enumerate().skip(at) {
        match c {
            b'<' => depth += 1,
            b'>' if b[i - 1] != b'-' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let inner = &sig[at + 1..end?];
    let names: Vec<&str> = rust_split_top(inner, b',')
        .into_iter()
        .map(|p| {
            let p = p.trim();
            let p = p.strip_prefix("const ").unwrap_or(p);
            p.split([':', '=']).next().unwrap_or(p).trim()
        })
        .collect();
    (!names.is_empty() && names.iter().all(|n| !n.is_empty() && !n.contains(' ')))
        .then(|| names.join(","))
}

/// Rust (feature 45): would the type `t` declared in file `tf`, read by its
/// name in the caller's file `fi` instead, possibly be another type? So when
/// it is another file's and the caller's crate gives that name several
/// types, unless a `crate::` path writes it.
fn rust_rereads_another(idx: &Index, fi: u32, f: &FileFacts, (t, tf): &(String, u32)) -> bool {
    if *tf == fi || t.trim_start_matches(['&', ' ']).starts_with("crate::") {
        return false;
    }
    let Some(base) = rust_receiver_type(t) else {
        return false;
    };
    let base = base.rsplit("::").next().unwrap_or(&base);
    let krate = rust_crate_dir(&f.path);
    let types = idx.by_name.get(base).map_or(0, |v| {
        v.iter()
            .filter(|r| {
                let rf = &idx.files[r.0 as usize];
                rf.lang == Lang::Rust
                    && rust_crate_dir(&rf.path) == krate
                    && matches!(
                        rf.symbols[r.1 as usize].kind,
                        "struct" | "enum" | "union" | "trait" | "type"
                    )
            })
            .count()
    });
    types > 1
}

/// Rust (feature 43): the directory of the crate a file belongs to, the part
/// of its path before its first `src/`, `tests/`, `benches/` or `examples/`
/// directory (`crates/x/src/tests/a.rs` → `crates/x`; `src/a.rs` → the
/// root, ``); its first directory otherwise.
fn rust_crate_dir(path: &str) -> &str {
    // (the first marker: `x/src/tests/mod.rs` is `x`'s; `src/a.rs` the root's)
    let b = path.as_bytes();
    let at = |m: &str| {
        path.match_indices(m)
            .map(|(i, _)| i)
            .find(|&i| i == 0 || b[i - 1] == b'/')
    };
    ["src/", "tests/", "benches/", "examples/"]
        .iter()
        .filter_map(|m| at(m))
        .min()
        .map(|i| path[..i].trim_end_matches('/'))
        .unwrap_or_else(|| path.split('/').next().unwrap_or(""))
}

/// Rust (feature 44): the type of an element of a value of type `t`, as
/// `for x in …` takes them: `Vec<T>`, `VecDeque<T>`, the sets, `Option<T>`,
/// `[T]`, `[T; N]`, `Box<[T]>` (references taken off) give `T`; none for
/// any other (a map's elements are pairs).
fn rust_element(t: &str) -> Option<String> {
    let t = rust_unref(t);
    // (feature 53: what an iterator a signature declares yields, `impl
    // Iterator<Item = &Arg> + '_`; a slice's or a map's `Iter<'a, T>`)
    if let Some(b) = t.strip_prefix("impl ") {
        let open = b.find('<')?;
        let head = b[..open].trim().rsplit("::").next()?;
        if !matches!(
            head,
            "Iterator" | "DoubleEndedIterator" | "ExactSizeIterator" | "IntoIterator"
        ) {
            return None;
        }
        let close = rust_angle_end(b, open)?;
        return rust_split_top(&b[open + 1..close - 1], b',')
            .into_iter()
            .find_map(|a| {
                let (k, v) = a.split_once('=')?;
                (k.trim() == "Item").then(|| rust_unref(v).to_string())
            })
            .filter(|v| !v.is_empty());
    }
    if let Some(inner) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let e = rust_split_top(inner, b';').first().copied()?.trim();
        return (!e.is_empty()).then(|| e.to_string());
    }
    let (head, args) = t.split_once('<')?;
    let head = head.rsplit("::").next().unwrap_or(head).trim();
    let args = args.strip_suffix('>')?;
    let first = rust_split_top(args, b',').first().copied()?.trim();
    match head {
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" | "BinaryHeap" | "LinkedList" | "Option" => {
            (!first.is_empty()).then(|| first.to_string())
        }
        "Box" | "Rc" | "Arc" => rust_element(first),
        // (`std::slice::Iter<'a, T>`: its type argument after the lifetime)
        "Iter" | "IterMut" | "IntoIter" => rust_split_top(args, b',')
            .into_iter()
            .map(str::trim)
            .find(|a| !a.starts_with('\'') && !a.is_empty())
            .map(|a| rust_unref(a).to_string()),
        _ => None,
    }
}

/// Rust (feature 43): a call's path as it names the function: a qualified
/// path's trait (`<T as Parser>::parse` → `Parser::parse`; `<Vec<u8>>::new`
/// → `Vec::new`) and no turbofish (`Foo::<T>::new` → `Foo::new`,
/// `x.collect::<Vec<_>>` → `x.collect`).
fn rust_path_named(written: &str) -> String {
    let b = written.as_bytes();
    let close = |i: usize| rust_angle_end(written, i);
    let mut out = String::with_capacity(written.len());
    let mut i = 0;
    if written.starts_with('<') {
        let Some(e) = close(0) else {
            return written.to_string();
        };
        let inner = &written[1..e - 1];
        let named = match inner.rsplit_once(" as ") {
            Some((_, t)) => t,
            None => inner,
        };
        out.push_str(named.split('<').next().unwrap_or(named).trim());
        i = e;
    }
    while i < b.len() {
        if written[i..].starts_with("::<") {
            match close(i + 2) {
                Some(e) => {
                    i = e;
                    continue;
                }
                None => break,
            }
        }
        let c = written[i..].chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Rust: the end (after it) of the `<…>` that opens at byte `i` of `s`, its
/// `->` arrows aside.
/// The index of the bracket closing the one at `open` (`(`, `[` or `{`),
/// brackets of the three kinds counted alike.
fn bracket_end(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, &c) in s.as_bytes().iter().enumerate().skip(open) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

fn rust_angle_end(s: &str, i: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0u32;
    for (k, &c) in b.iter().enumerate().skip(i) {
        match c {
            b'<' => depth += 1,
            b'>' if !(k > 0 && b[k - 1] == b'-') => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Rust (feature 41): the field types of a tuple struct or tuple variant as
/// its declaration writes them (`pub struct Id(pub(crate) u32, Kind);` →
/// `u32`, `Kind`; `Literal(Literal)` → `Literal`), each on one line; none
/// for any other item.
pub fn rust_tuple_fields(name: &str, text: &str) -> Vec<String> {
    // (comments out first, in one scan that skips strings: a comment may
    // hold a comma or a parenthesis, a `#[doc = "…"]` a `//`)
    let text = &rust_strip_comments(text);
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    // (the item's own name: its first whole-word occurrence)
    let named = text.match_indices(name).map(|(i, _)| i).find(|&i| {
        let before = i > 0 && ident(b[i - 1]);
        let after = b.get(i + name.len()).is_some_and(|&c| ident(c));
        !before && !after
    });
    let Some(open) = named.and_then(|i| {
        let mut j = i + name.len();
        // (generic parameters: `Wrap<T: Clone>(T)`)
        if b.get(j) == Some(&b'<') {
            j = rust_angle_end(text, j)?;
        }
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        (b.get(j) == Some(&b'(')).then_some(j)
    }) else {
        return Vec::new();
    };
    let Some(close) = bracket_end(text, open) else {
        return Vec::new();
    };
    rust_split_top(&text[open + 1..close], b',')
        .into_iter()
        .map(|f| {
            let mut f = f.trim();
            // (attributes, comments and visibility before the type)
            loop {
                let before = f;
                if f.starts_with("#[") {
                    let mut d = 0i32;
                    let end = f.bytes().position(|c| {
                        d += (c == b'[') as i32 - (c == b']') as i32;
                        c == b']' && d == 0
                    });
                    f = end.map_or("", |e| &f[e + 1..]).trim_start();
                }
                if let Some(r) = f.strip_prefix("pub") {
                    let r = r.trim_start();
                    f = match r.strip_prefix('(') {
                        Some(v) => v.split_once(')').map_or("", |(_, r)| r).trim_start(),
                        None => r,
                    };
                }
                if f == before {
                    break;
                }
            }
            f.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .filter(|f| !f.is_empty())
        .collect()
}

/// Rust source without its comments (each one a space): line comments,
/// block comments however nested; string literals kept whole.
fn rust_strip_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut from) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                out.push_str(&text[from..i]);
                out.push(' ');
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                from = i;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                out.push_str(&text[from..i]);
                out.push(' ');
                let mut depth = 0u32;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                from = i.min(b.len());
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[from.min(text.len())..]);
    out
}

/// Methods a smart pointer answers itself, through std's traits (`Clone`,
/// `AsRef`, `Borrow`, `Deref`, `PartialEq`, `Hash`, `Debug` …): a call of one
/// on `Arc::new(…)` is the pointer's, not what it holds.
const POINTER_METHODS: &[&str] = &[
    "as_mut",
    "as_ref",
    "borrow",
    "borrow_mut",
    "clone",
    "clone_from",
    "cmp",
    "deref",
    "deref_mut",
    "eq",
    "fmt",
    "hash",
    "into",
    "ne",
    "partial_cmp",
    "to_owned",
    "to_string",
];

/// `Pin`'s own methods (a call on `Pin::new(…)` of one is the pointer's).
const PIN_METHODS: &[&str] = &[
    "as_mut",
    "as_ref",
    "get_mut",
    "get_ref",
    "get_unchecked_mut",
    "into_inner",
    "into_ref",
    "map_unchecked",
    "map_unchecked_mut",
    "set",
];

/// Rust (feature 39): a smart pointer made around a value (`Box::new(x)`,
/// `Arc::new(Semaphore::new(1))`, `Pin::new(&mut self.io)`, `Box::pin(f)`,
/// `Arc::clone(&a)`) is called for the value's methods: the value's
/// expression (references taken off), as many times as it is wrapped; any
/// other expression as it is.
fn rust_unpointer(q: &str) -> String {
    let mut q = q.trim();
    for _ in 0..4 {
        let Some((callee, false)) = rust_split_call(q) else {
            break;
        };
        let path: Vec<&str> = callee.split("::").filter(|s| !s.starts_with('<')).collect();
        let n = path.len();
        let wraps = n >= 2
            && matches!(path[n - 2], "Box" | "Arc" | "Rc" | "Pin")
            && matches!(path[n - 1], "new" | "pin" | "clone" | "new_unchecked");
        if !wraps {
            break;
        }
        let arg = q[callee.len()..].trim();
        let Some(arg) = arg.strip_prefix('(').and_then(|a| a.strip_suffix(')')) else {
            break;
        };
        if ts_split_top_at(arg, b',').len() != 1 {
            break;
        }
        let mut a = arg.trim();
        loop {
            let before = a;
            a = a.strip_prefix('&').unwrap_or(a).trim_start();
            a = a.strip_prefix("mut ").unwrap_or(a).trim_start();
            a = a.strip_prefix('*').unwrap_or(a).trim_start();
            if a == before {
                break;
            }
        }
        if a.is_empty() {
            break;
        }
        q = a;
    }
    q.to_string()
}

/// Rust (feature 35): the bounds of `A + B<C + D> + Fn(u8) -> X + 'a`, split at
/// the `+` outside brackets (`->` is no bracket): `A`, `B<C + D>`, `Fn(u8) -> X`,
/// `'a`.
fn rust_bounds(s: &str) -> Vec<&str> {
    rust_split_top(s, b'+')
}

/// Rust: `s` split at `sep` outside `<>`, `()` and `[]` (the `>` of `->` closes
/// nothing), each part trimmed, empty ones dropped.
fn rust_split_top(s: &str, sep: u8) -> Vec<&str> {
    let b = s.as_bytes();
    let (mut depth, mut from) = (0i32, 0);
    let mut out = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'<' | b'(' | b'[' => depth += 1,
            b'>' if i > 0 && b[i - 1] == b'-' => {}
            b'>' | b')' | b']' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(s[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[from..].trim());
    out.retain(|p| !p.is_empty());
    out
}

/// Rust (feature 37): an expression's segments, left to right: its first
/// name or path (`self`, `input`, `Foo::new`, `Vec::<u8>::new`), then each
/// `.name` (a field: `.0` too) or `.name(…)` (a method's call), each with
/// whether it is called and whether `?` follows; none for anything else (an
/// index, a cast, a block, a macro, a closure).
fn rust_segments(q: &str) -> Option<Vec<(&str, bool, bool)>> {
    let b = q.as_bytes();
    let ident = |i: usize| {
        let mut j = i;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
            j += 1;
        }
        j
    };
    // The end of a balanced group opened at `i` (`(…)`, `<…>`), after it.
    let close = |i: usize, open: u8, shut: u8| {
        let mut depth = 0u32;
        for (k, &c) in b.iter().enumerate().skip(i) {
            if c == open {
                depth += 1;
            } else if c == shut && !(shut == b'>' && k > 0 && b[k - 1] == b'-') {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k + 1);
                }
            }
        }
        None
    };
    let mut j = ident(0);
    if j == 0 {
        return None;
    }
    // A path and its turbofish (`Foo::<T>::new`).
    loop {
        if q[j..].starts_with("::<") {
            j = close(j + 2, b'<', b'>')?;
        } else if q[j..].starts_with("::") {
            let k = ident(j + 2);
            if k == j + 2 {
                return None;
            }
            j = k;
        } else {
            break;
        }
    }
    let mut segs = vec![(&q[..j], false, false)];
    let mut i = j;
    while i < b.len() {
        let last = segs.last_mut()?;
        match b[i] {
            b'(' if !last.1 => {
                last.1 = true;
                i = close(i, b'(', b')')?;
            }
            b'?' if !last.2 => {
                last.2 = true;
                i += 1;
            }
            b'.' => {
                let k = ident(i + 1);
                if k == i + 1 {
                    return None;
                }
                segs.push((&q[i + 1..k], false, false));
                i = k;
                // A method's turbofish (`.collect::<Vec<_>>()`).
                if q[i..].starts_with("::<") {
                    i = close(i + 2, b'<', b'>')?;
                }
            }
            _ => return None,
        }
    }
    Some(segs)
}

/// Rust (feature 37): the declared type of field `field` of the struct a
/// type `t` written in file `tf` names (references, `Box`, `Arc` … taken
/// off), with the struct's file: the struct the file's `use` of that name
/// leads to, else those of that name in `tf`, else in its directory, else
/// in its crate, the nearest that hold any; several only when they are one
/// file's and all declare the field with one type (two `struct Inner` in a
/// file's `mod v1` and `mod v2` with `db: DbA` and `db: DbB`, or with `db:
/// Db` in two files: none).
fn rust_field_type(
    idx: &Index,
    imports: &FileImports,
    tf: u32,
    t: &str,
    field: &str,
) -> Option<(String, u32)> {
    let ty = rust_receiver_type(t)?;
    let last = ty.rsplit("::").next().unwrap_or(&ty);
    let file = |r: &SymRef| &idx.files[r.0 as usize];
    let v: Vec<&SymRef> = idx
        .by_name
        .get(last)?
        .iter()
        .filter(|r| {
            file(r).lang == Lang::Rust
                && matches!(file(r).symbols[r.1 as usize].kind, "struct" | "union")
        })
        .collect();
    let tfile = &idx.files[tf as usize];
    let top = |p: &str| p.split('/').next().unwrap_or("").to_string();
    let field_of = |r: &SymRef| -> Option<(String, u32)> {
        let sf = file(r);
        let want = format!("{}.{field}", sf.symbols[r.1 as usize].qname);
        sf.fields
            .iter()
            .find(|(q, _)| **q == *want)
            .map(|(_, t)| (t.to_string(), r.0))
    };
    // The candidates `keep` accepts: none; the field of the one, or of
    // several when they all declare it with one type (regex's `string` and
    // `bytes` modules each hold a `RegexBuilder { builder: Builder }`); else
    // no answer at all (`Some(None)`).
    let one = |keep: &dyn Fn(&&&SymRef) -> bool| -> Option<Option<(String, u32)>> {
        let c: Vec<&&SymRef> = v.iter().filter(keep).collect();
        let first = c.first()?;
        let t = field_of(first);
        // (one file's: the same text names one type there)
        Some(t.filter(|t| {
            c.iter()
                .all(|r| r.0 == first.0 && field_of(r).is_some_and(|x| x.0 == t.0))
        }))
    };
    // The module a path or the file's `use` names it from.
    let path = if ty.contains("::") {
        ty.rsplit_once("::").map(|(m, _)| m.to_string())
    } else {
        tfile
            .edges
            .iter()
            .filter(|e| e.kind == "imports" && e.alias.is_none())
            .find_map(|e| {
                let (m, n) = e.dst_name.rsplit_once("::")?;
                (n == last).then(|| m.to_string())
            })
    };
    let placed = path
        .and_then(|m| rust_module_of(idx, tfile, &m, imports.modules))
        .and_then(|mf| one(&|r| r.0 == mf));
    placed
        .or_else(|| one(&|r| r.0 == tf))
        .or_else(|| one(&|r| dir_of(&file(r).path) == dir_of(&tfile.path)))
        .or_else(|| one(&|r| top(&file(r).path) == top(&tfile.path)))?
}

/// Rust (feature 37): the type of an expression that reads a field on the
/// way (`self.shared.inject`, `path.segments`, `self.raw.header().state`),
/// typed left to right from its first name: `self` (the caller's type
/// `own`), a local of type `head` or a path's or function's call, then each
/// field by its struct's declaration and each method's call by its
/// signature (`Self`; another type in the caller's crate), with the file
/// each type is written in. None for an expression of calls only (feature
/// 33 types those) or one any step of which does not show.
#[allow(clippy::too_many_arguments)]
fn rust_fold(
    idx: &Index,
    fi: u32,
    f: &FileFacts,
    src_symbol: Option<&str>,
    imports: &FileImports,
    q: &str,
    head: Option<&str>,
    own: Option<&str>,
) -> Option<(String, u32)> {
    let segs = rust_segments(q)?;
    if !segs.iter().skip(1).any(|s| !s.1) {
        return None;
    }
    let sym = |r: &SymRef| &idx.files[r.0 as usize].symbols[r.1 as usize];
    // What a call of `r` gives.
    let value_of = |r: SymRef, tried: bool| -> Option<(String, u32)> {
        let s = sym(&r);
        if !matches!(s.kind, "method" | "function") {
            return None;
        }
        if (s.ret == RET_SELF && !tried) || (s.ret == RET_SELF_RESULT && tried) {
            let (owner, _) = s.qname.rsplit_once('.')?;
            let owner = owner.rsplit(['.', ':']).next().unwrap_or(owner);
            return Some((owner.to_string(), r.0));
        }
        // (a tuple, `-> (Sender<T>, Receiver<T>)`, for the field `.0` that
        // follows: feature 42)
        rust_declared_of(idx, f, r, tried)
            .or_else(|| rust_declared_tuple(idx, f, r, tried))
            .map(|t| (t, r.0))
    };
    let (h, hcall, htried) = segs[0];
    let mut state = if hcall {
        let r = deeper(8, || {
            find_scoped_call(idx, fi, f, h, src_symbol, imports, None)
        })?;
        value_of(r, htried)?
    } else if h == "self" {
        (own?.to_string(), fi)
    } else {
        (head?.to_string(), fi)
    };
    for &(name, call, tried) in &segs[1..] {
        state = if call {
            let r = rust_method_in(idx, imports, &state, name)?;
            value_of(r, tried)?
        } else if state.0.starts_with('(') {
            // (an element of a tuple: `.1` of `(A, B)` is `B`)
            let i: usize = name.parse().ok()?;
            let inner = state.0.strip_prefix('(')?.strip_suffix(')')?;
            let elem = rust_split_top(inner, b',')
                .get(i)
                .map(|e| e.trim().to_string())?;
            (rust_declared_value(&elem, tried)?, state.1)
        } else {
            // (`h.bar?` of a field `bar: Option<Bar>`: `Bar`)
            let st = rust_field_type(idx, imports, state.1, &state.0, name)?;
            match tried {
                true => (rust_declared_value(&st.0, true)?, st.1),
                false => st,
            }
        };
    }
    Some(state)
}

/// Rust (feature 41): the type of a pattern's slot, `~P#i` (the `i`th of a
/// tuple struct's or tuple variant's fields) or `~P#f` (the field `f` of a
/// struct or struct variant; a variant's fields are its enum's, alike in
/// every variant that declares one), with the file it is declared in. `P`
/// is found as a call of it would be (`Self::V` is the caller's type's).
/// None for a generic parameter of the type, or a slot not found.
fn rust_slot_type(
    idx: &Index,
    fi: u32,
    f: &FileFacts,
    src_symbol: Option<&str>,
    imports: &FileImports,
    slot: &str,
) -> Option<(String, u32)> {
    let (p, k) = slot.strip_prefix('~')?.rsplit_once('#')?;
    let own = || {
        let (c, _) = src_symbol?.rsplit_once('.')?;
        Some(c.rsplit('.').next().unwrap_or(c).to_string())
    };
    let p = match p.strip_prefix("Self::") {
        Some(v) => format!("{}::{v}", own()?),
        None if p == "Self" => own()?,
        None => p.to_string(),
    };
    let r = deeper(8, || {
        find_scoped_call(idx, fi, f, &p, src_symbol, imports, None)
    })?;
    let rf = &idx.files[r.0 as usize];
    let s = &rf.symbols[r.1 as usize];
    let variant = s.kind == "constant";
    if !variant && s.kind != "struct" {
        return None;
    }
    // (a variant is named through its enum: `hir::Literal` is no
    // `HirKind::Literal`)
    let enum_written = p.rsplit("::").nth(1);
    let enum_found = s.qname.rsplit('.').nth(1);
    if variant && enum_written.is_some() && enum_written != enum_found {
        return None;
    }
    let field = |key: &str| {
        let mut v = rf
            .fields
            .iter()
            .filter(|(q, _)| **q == *key)
            .map(|(_, t)| &**t);
        let first = v.next()?;
        v.all(|t| t == first).then(|| first.to_string())
    };
    // (a variant's fields are written under its enum: `State.next`)
    let owner = match variant {
        true => s.qname.rsplit_once('.').map(|(e, _)| e)?,
        false => &*s.qname,
    };
    let ty = field(&format!("{}.{k}", s.qname)).or_else(|| {
        (variant && !k.starts_with(|c: char| c.is_ascii_digit()))
            .then(|| field(&format!("{owner}.{k}")))
            .flatten()
    })?;
    let base = rust_receiver_type(&ty)?;
    let generic = rust_params_of(rf, owner).is_some_and(|ps| ps.split(',').any(|p| p == base));
    (!generic).then_some((ty, r.0))
}

/// Rust (feature 37): the method `name` of the type `t` written in file
/// `tf`, as a local of that type there would call it; that type's own.
fn rust_method_in(
    idx: &Index,
    imports: &FileImports,
    (t, tf): &(String, u32),
    name: &str,
) -> Option<SymRef> {
    let tfile = &idx.files[*tf as usize];
    let last = rust_receiver_type(t)?;
    let last = last.rsplit("::").next().unwrap_or(&last).to_string();
    let aliases = renaming_imports(tfile);
    let theirs = FileImports {
        aliases: &aliases,
        ..*imports
    };
    let v = format!("_v.{name}");
    let r = deeper(8, || {
        find_scoped_call(idx, *tf, tfile, &v, None, &theirs, Some(t))
    })?;
    let s = &idx.files[r.0 as usize].symbols[r.1 as usize];
    let owner = s.qname.rsplit_once('.').map(|(o, _)| o)?;
    let owner = owner.rsplit(['.', ':']).next().unwrap_or(owner);
    // (a trait's method, through a bound: its trait is the owner)
    let bound = t.trim_start().starts_with("impl ");
    if s.kind != "method" || !(owner == last || bound) {
        return None;
    }
    // A type name the crate gives several types (tokio's `Mutex`: its own,
    // and loom's two): only the one beside `tf`.
    let top = |p: &str| p.split('/').next().unwrap_or("").to_string();
    let types = idx.by_name.get(last.as_str()).map_or(0, |v| {
        v.iter()
            .filter(|x| {
                let xf = &idx.files[x.0 as usize];
                xf.lang == Lang::Rust
                    && top(&xf.path) == top(&tfile.path)
                    && matches!(
                        xf.symbols[x.1 as usize].kind,
                        "struct" | "enum" | "union" | "trait" | "type"
                    )
            })
            .count()
    });
    (bound || types <= 1 || r.0 == *tf).then_some(r)
}

/// Rust (feature 34): `<T>expr` → (`T`, `expr`), the type of the
/// expression's first name written in front; `expr` alone → (none, it).
fn rust_head_type(e: &str) -> (Option<&str>, &str) {
    let Some(r) = e.strip_prefix('<') else {
        return (None, e);
    };
    let mut depth = 1u32;
    let b = r.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'<' => depth += 1,
            // (not a function type's `->`)
            b'>' if i == 0 || b[i - 1] != b'-' => {
                depth -= 1;
                if depth == 0 {
                    return (Some(&r[..i]), &r[i + 1..]);
                }
            }
            _ => {}
        }
    }
    (None, "")
}

/// Rust (feature 34): a receiver expression with what passes its value
/// through taken as `?` does (`.unwrap()`, `.expect(…)`, `.unwrap_or(…)`,
/// `.unwrap_or_else(…)`, `.unwrap_or_default()`: `T` of a `Result<T, _>` or
/// `Option<T>`), `.await` dropped (an `async fn`'s declared type is
/// what awaiting its call gives), and `.clone()` dropped but after `self`
/// (`keep_clone`: the crate has a `clone` returning another type than its
/// own, and every `.clone()` stays for its signature to type).
fn rust_settle(q: &str, keep_clone: bool) -> String {
    const TAKES: &[&str] = &[
        "unwrap",
        "expect",
        "unwrap_or",
        "unwrap_or_else",
        "unwrap_or_default",
    ];
    let b = q.as_bytes();
    let mut out = String::with_capacity(q.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'.' {
            let name_end = b[i + 1..]
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                .map_or(b.len(), |p| i + 1 + p);
            let name = &q[i + 1..name_end];
            // (`.clone()` gives its receiver's type, `Arc`'s and `&T`'s too;
            // `self.clone()` stays, which `self` alone would not type)
            let cloned =
                !keep_clone && name == "clone" && q[name_end..].starts_with("()") && out != "self";
            if name == "await" || cloned {
                i = if cloned { name_end + 2 } else { name_end };
                continue;
            }
            if TAKES.contains(&name) && b.get(name_end) == Some(&b'(') {
                // The call's closing parenthesis.
                let mut depth = 0u32;
                let mut end = None;
                for (j, &c) in b.iter().enumerate().skip(name_end) {
                    match c {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                end = Some(j + 1);
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                if let Some(end) = end {
                    out.push('?');
                    i = end;
                    continue;
                }
            }
        }
        let c = q[i..].chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Rust: the form a local bound to a receiver that is an associated
/// function's call would record (feature 33): `Foo::new(x)` → `Foo::new()`,
/// `Finder::new(n)?` → `Finder::new()?`, `Sender::<i32>::new()` →
/// `Sender::new()`; none for anything else (a method's call, `(…)`).
fn rust_value_ctor(q: &str) -> Option<String> {
    let (callee, tried) = rust_split_call(q)?;
    let path: Vec<&str> = callee.split("::").filter(|s| !s.starts_with('<')).collect();
    // (a type's function: `util::make()` is a module's, typed as any call)
    let of_type =
        path.len() > 1 && path[path.len() - 2].starts_with(|c: char| c.is_ascii_uppercase());
    (of_type && path.iter().all(|s| is_word(s)))
        .then(|| format!("{}(){}", path.join("::"), if tried { "?" } else { "" }))
}

/// The class a Python annotation names (`Form`, `forms.Form`, `"Form"`,
/// `Optional[Form]`, `Form | None`); `None` for a container or union of
/// several types.
fn python_annotation_type(t: &str) -> Option<String> {
    let mut t = t.trim().trim_matches(['"', '\'']).trim();
    if let Some(inner) = t
        .strip_prefix("Optional[")
        .or_else(|| t.strip_prefix("typing.Optional["))
    {
        t = inner.strip_suffix(']')?.trim();
    }
    let parts: Vec<&str> = t
        .split('|')
        .map(str::trim)
        .filter(|p| *p != "None")
        .collect();
    let [one] = parts[..] else {
        return None;
    };
    let ok = !one.is_empty()
        && one
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    ok.then(|| one.to_string())
}

/// Python: what a module-level variable's declaration (its name and its
/// first line) shows of its value (feature 32): a call's callee written as
/// a constructor, `Signal()` of `request_finished = Signal()` and
/// `template.Library()` of `register = template.Library()`; a plain name,
/// `Distance` of `D = Distance`; an instance of an annotation's type,
/// `Foo()` of `x: Foo = …`. A call that is not the whole value (`Foo(a).b`,
/// `Foo()[0]`, `Foo() or None`), a literal, an index or an operator: none.
pub fn py_value(name: &str, sig: &str) -> Option<String> {
    let rest = sig.trim().strip_prefix(name)?.trim_start();
    if let Some(ann) = rest.strip_prefix(':') {
        // `x: Foo = …`: an instance of `Foo`.
        let ann = ann.split_once('=').map_or(ann, |(a, _)| a);
        return python_annotation_type(ann).map(|t| format!("{t}()"));
    }
    let value = rest.strip_prefix('=')?;
    if value.starts_with('=') {
        return None;
    }
    // `a = b = Foo()`: the value is the last, `=` outside brackets.
    let mut depth = 0i32;
    let mut from = 0;
    let bytes = value.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'=' if depth == 0
                && bytes.get(i + 1) != Some(&b'=')
                && !matches!(
                    bytes.get(i.wrapping_sub(1)),
                    Some(b'=' | b'!' | b'<' | b'>')
                ) =>
            {
                from = i + 1
            }
            _ => {}
        }
    }
    let value = value[from..].trim();
    let dotted =
        |s: &str| !s.starts_with(|c: char| c.is_ascii_digit()) && s.split('.').all(is_word);
    let Some((callee, args)) = value.split_once('(') else {
        return dotted(value).then(|| value.to_string());
    };
    // The call must be the whole value (`Foo(a).bar()`, `Foo()[0]`, `Foo()
    // or None` are not a `Foo`), or the line must end inside it.
    let mut depth = 1i32;
    for (i, c) in args.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    let after = args[i + 1..].trim();
                    if !(after.is_empty() || after.starts_with('#')) {
                        return None;
                    }
                    break;
                }
            }
            _ => {}
        }
    }
    dotted(callee.trim()).then(|| format!("{}()", callee.trim()))
}

/// Python (feature 59): what a function's result is, from its signature's
/// return annotation (`-> Foo`, `-> Optional["Foo"]`: `Foo()`) or else
/// from its `return` statements, as [`py_value`] writes a value: every
/// `return` outside the functions and classes nested in it returns the
/// same call (`return Template(code, engine=self)`: `Template()`; `return
/// cls(…)`: `cls()`), `self`, the result of one of the instance's methods
/// (`return self._chain()`: `self._chain()`), or a local name each of whose
/// assignments in the function is that one call (`obj = Foo(); …; return
/// obj`). A bare `return` or `return None` says nothing either way. A
/// generator's, or any other value's (a name, a literal, an expression, two
/// different calls), is none.
pub fn py_return_value(sig: &str, text: &str) -> Option<String> {
    // (a coroutine function's call makes a coroutine, whatever it returns or
    // declares)
    if text.trim_start().starts_with("async ") || sig.trim_start().starts_with("async ") {
        return None;
    }
    // `def f(a) -> Foo:` (a signature holding a comment is not read: its
    // `->` may be the comment's).
    if !sig.contains('#') {
        let mut depth = 0i32;
        let mut close = None;
        for (i, b) in sig.bytes().enumerate() {
            match b {
                b'(' | b'[' => depth += 1,
                b')' | b']' => {
                    depth -= 1;
                    if depth == 0 && b == b')' && close.is_none() {
                        close = Some(i);
                    }
                }
                _ => {}
            }
        }
        if let Some(ann) = close.and_then(|c| sig[c + 1..].trim_start().strip_prefix("->")) {
            let ann = ann.trim().trim_end_matches(':').replace(['\'', '"'], "");
            return match python_annotation_type(&ann) {
                Some(t) if t == "Self" => Some("self".to_string()),
                Some(t) => Some(format!("{t}()")),
                None => None,
            };
        }
    }
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut lines = text.lines();
    // The `def` line (after any decorators): the body is what is indented more.
    let head = lines.find(|l| {
        let t = l.trim_start();
        t.starts_with("def ") || t.starts_with("async def ")
    })?;
    // (a coroutine function's call makes a coroutine, not its `return`'s value)
    if head.trim_start().starts_with("async ") {
        return None;
    }
    let own = indent(head);
    // The names the function's parameters bind.
    let params: Vec<&str> = match (sig.find('('), sig.rfind(')')) {
        (Some(a), Some(b)) if a < b => sig[a + 1..b]
            .split(',')
            .filter_map(|p| {
                let p = p.trim().trim_start_matches('*');
                let n = p.split([':', '=']).next()?.trim();
                is_word(n).then_some(n)
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut body: Vec<&str> = Vec::new();
    // The heads of the definitions nested in it (they bind their names).
    let mut inner: Vec<&str> = Vec::new();
    // `def m(self): return A()` on one line.
    if let Some(i) = head.find(": return ") {
        body.push(&head[i + 2..]);
    }
    // Lines of a nested `def`/`class` (deeper than this indentation) are skipped.
    let mut nested: Option<usize> = None;
    // Inside a triple-quoted string: its quote.
    let mut in_string: Option<&str> = None;
    for l in lines {
        let t = l.trim_start();
        if let Some(q) = in_string {
            if l.matches(q).count() % 2 == 1 {
                in_string = None;
            }
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let ind = indent(l);
        if ind <= own {
            break;
        }
        if let Some(n) = nested {
            if ind > n {
                continue;
            }
            nested = None;
        }
        for q in ["\"\"\"", "'''"] {
            if l.matches(q).count() % 2 == 1 {
                in_string = Some(q);
            }
        }
        if t.starts_with("def ")
            || t.starts_with("async def ")
            || t.starts_with("class ")
            || t.starts_with('@')
        {
            nested = Some(ind);
            inner.push(t);
            continue;
        }
        body.push(t);
    }
    // Whether `name` stands as a word in `t`.
    let word_at = |t: &str, name: &str| -> bool {
        t.match_indices(name).any(|(i, _)| {
            let before = t[..i].chars().next_back();
            let after = t[i + name.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    };
    // Whether line `t` binds `name`: an assignment or annotation, a walrus,
    // `as`, a star or tuple target, a loop, an import, a definition,
    // `global`/`del`.
    let binds = |t: &str, name: &str| -> bool {
        if !word_at(t, name) {
            return false;
        }
        let first = t.split([' ', '(', ':', ',', '=']).next().unwrap_or("");
        matches!(first, "import" | "from" | "del" | "class" | "def")
            || (t.starts_with("async ") && t.contains("def "))
            || (first == "for" && t.split(" in ").next().is_some_and(|x| word_at(x, name)))
            || t.contains(&format!("{name} :="))
            || t.contains(&format!("*{name}"))
            || (first != "except"
                && t.match_indices(&format!(" as {name}")).any(|(i, m)| {
                    !t[i + m.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                }))
            || t.starts_with(&format!("{name},"))
            || t.starts_with(&format!("{name}:"))
            || (t.starts_with(&format!("{name} "))
                && t.contains('=')
                && !t.starts_with(&format!("{name} ==")))
    };
    // The whole statement from `first` (body line `i`'s text from where
    // the value starts): a call's arguments may span lines.
    let statement = |i: usize, first: &str| -> String {
        let mut depth = 0i32;
        let mut out = String::new();
        let mut j = i;
        let mut line = first;
        loop {
            for b in line.bytes() {
                match b {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth -= 1,
                    _ => {}
                }
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(line.split(" #").next().unwrap_or(line).trim());
            j += 1;
            if depth <= 0 || j >= body.len() {
                return out;
            }
            line = body[j];
        }
    };
    // What a value reads as: a call (`Foo()`), `self`, or a plain name.
    let value_of = |v: &str| -> Option<String> {
        let mut v = v.trim();
        // `return (Foo())`
        while let Some(inner) = v.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
            if !inner.trim_end().ends_with(')') {
                break;
            }
            v = inner.trim();
        }
        if v == "self" {
            return Some("self".to_string());
        }
        // `type(self)(…)`: an instance of the instance's class.
        if let Some(rest) = v.strip_prefix("type(self)(") {
            let whole = py_value("_", &format!("_ = x({rest}")).is_some();
            return whole.then(|| "self.__class__()".to_string());
        }
        py_value("_", &format!("_ = {v}"))
    };
    // A callee whose first name the function binds itself (a parameter, a
    // local class, `Foo = Bar`) is not the module's. (A class a call gives,
    // `ChangeList = self.get_changelist(request)`, is taken for the
    // module's of that name: such a factory gives it or a subclass; and a
    // local import for what the module's names see, as a call is read.)
    let shadowed = |value: &str| -> bool {
        let first = value.split(['.', '(']).next().unwrap_or(value);
        let kept = |t: &str| {
            t.starts_with("import ")
                || t.starts_with("from ")
                || t.strip_prefix(first)
                    .and_then(|r| r.trim_start().strip_prefix('='))
                    .is_some_and(|r| !r.starts_with('=') && r.contains('('))
        };
        !matches!(first, "self" | "cls")
            && (params.contains(&first)
                || body
                    .iter()
                    .chain(&inner)
                    .any(|t| binds(t, first) && !kept(t)))
    };
    let mut found: Option<String> = None;
    // The values read so far (a local's name before its assignments are read).
    let mut read: Vec<String> = Vec::new();
    for (i, t) in body.iter().enumerate() {
        let yields = t.starts_with("yield") || t.contains("= yield") || t.contains("(yield");
        if yields {
            return None;
        }
        // (`if x: return y` on one line too)
        let stmt = match t.find(": return") {
            Some(k) if !t.starts_with("return") => &t[k + 2..],
            _ => t,
        };
        let Some(rest) = stmt.strip_prefix("return") else {
            continue;
        };
        if !(rest.is_empty() || rest.starts_with([' ', '(', '#'])) {
            continue;
        }
        let whole = statement(i, rest);
        let v = whole.trim();
        if v.is_empty() || v == "None" || v.starts_with('#') {
            continue;
        }
        let mut value = value_of(v)?;
        // (every return must agree: one already read needs no second look)
        if found.as_deref() == Some(value.as_str()) || read.contains(&value) {
            continue;
        }
        read.push(value.clone());
        if !value.ends_with("()") && value != "self" {
            // A local name: what every assignment to it in the function is.
            if !is_word(&value) || matches!(value.as_str(), "cls" | "True" | "False") {
                return None;
            }
            if params.contains(&value.as_str()) || inner.iter().any(|t| binds(t, &value)) {
                return None;
            }
            let assigned = format!("{value} = ");
            let mut one: Option<String> = None;
            for (k, a) in body.iter().enumerate() {
                let Some(rhs) = a.strip_prefix(&assigned) else {
                    if binds(a, &value) {
                        return None;
                    }
                    continue;
                };
                let w = value_of(&statement(k, rhs)).filter(|w| w.ends_with("()"))?;
                if shadowed(&w) {
                    return None;
                }
                match &one {
                    Some(o) if *o != w => return None,
                    _ => one = Some(w),
                }
            }
            value = one?;
        } else if shadowed(&value) {
            return None;
        }
        match &found {
            Some(x) if *x != value => return None,
            _ => found = Some(value),
        }
    }
    found
}

/// Python (feature 59): whether a function's decorators (`@…` lines, as
/// written) leave its result what its body returns. Most do (`staticmethod`,
/// `classmethod`, caches, and the wrappers of `functools.wraps`, which
/// return what the function returns: `@async_unsafe`, `@login_required`);
/// `@overload` declares one of several signatures, and a context manager's
/// decorator makes another object of a generator.
pub fn py_result_kept<'a>(decorators: impl IntoIterator<Item = &'a str>) -> bool {
    const REPLACE: [&str; 4] = [
        "asynccontextmanager",
        "contextmanager",
        "overload",
        "singledispatch",
    ];
    decorators.into_iter().all(|d| {
        let name = d.trim().trim_start_matches('@');
        let name = name.split('(').next().unwrap_or(name).trim();
        let last = name.rsplit('.').next().unwrap_or(name);
        !REPLACE.contains(&last)
    })
}

/// Python (feature 59): a receiver written as a call of a dotted name,
/// `Foo(a, b)` of `Foo(a, b).m()`, as a binding's value is written:
/// `Foo()`; and methods called on it in turn, `Foo(a).filter(b)`, with
/// the type in front as a local's is (`<Foo()>_.filter()`). `self.x(…)`
/// and `cls.x(…)` are not read this way (an attribute's call), nor
/// `super()`, nor a call's call (`f(a)(b)`), nor an index (`f(a)[0]`).
pub(crate) fn py_call_receiver(q: &str) -> Option<String> {
    let (callee, _) = q.split_once('(')?;
    if callee.is_empty()
        || !callee.split('.').all(is_word)
        || matches!(callee.split('.').next(), Some("self" | "cls" | "super"))
    {
        return None;
    }
    // The end of the parenthesis opening at `open`.
    // The end of the parenthesis opening at `open`.
    let close = |open: usize| bracket_end(q, open).map(|k| k + 1);
    let mut at = close(callee.len())?;
    let mut t = format!("{callee}()");
    while at < q.len() {
        let rest = q[at..].strip_prefix('.')?;
        let (m, _) = rest.split_once('(')?;
        if !is_word(m) || t.len() > 200 {
            return None;
        }
        at = close(at + 1 + m.len())?;
        t = format!("<{t}>_.{m}()");
    }
    Some(t)
}

/// Python: the file a dotted name's first name (`models` of
/// `models.Manager`) is bound to by an import of `f` that does not rename,
/// and the names left to read from it: `from django.db import models` →
/// `django/db/models/__init__.py`, [`Manager`]; `import os.path` and
/// `os.path.join` → that module, [`join`]; `from django.db.models import Q`
/// and `Q.create` → `django/db/models/__init__.py`, [`Q`, `create`] (the
/// import names a name of that module, not a module). `Some(None)`: an
/// import of a module outside the repository binds it.
fn py_bound<'w>(
    idx: &Index,
    f: &FileFacts,
    plain: &[&RawEdge],
    written: &'w str,
    modules: &Modules,
) -> Option<Option<(u32, Vec<&'w str>)>> {
    let mut segs = written.split('.');
    let head = segs.next()?;
    let rest: Vec<&str> = segs.collect();
    let imports = || plain.iter().copied();
    // `from a.b import c`, `import c`: the last name; else `import a.b`,
    // which binds `a` (the module `a.b` when the name goes on through it).
    // (The parser writes `import a.b` as `from a import b` is written: of
    // two imports binding the name, the later, as at run time.)
    let named = imports()
        .rev()
        .find(|e| e.dst_name.rsplit('.').next() == Some(head));
    let (e, spec, names) = match named {
        Some(e) => (e, e.dst_name.as_str(), rest),
        None => {
            let e = imports().find(|e| e.dst_name.split('.').next() == Some(head))?;
            let whole = written.len() > e.dst_name.len()
                && written.starts_with(e.dst_name.as_str())
                && written.as_bytes()[e.dst_name.len()] == b'.';
            if whole {
                let n = e.dst_name.split('.').count();
                (e, e.dst_name.as_str(), written.split('.').skip(n).collect())
            } else {
                (e, head, rest)
            }
        }
    };
    let Some(t) = import_file(idx, f, spec, modules) else {
        return Some(None);
    };
    // `from django.db.models import Q` resolves to the package that holds
    // `Q`: a name of that module, read with the rest.
    let module = spec != e.dst_name || py_names_module(idx, f, spec, t, modules);
    // The name read from the module, as `written` spells it.
    let last = match written.get(..spec.len()) {
        Some(w) if w == spec => w.rsplit('.').next().unwrap_or(head),
        _ => head,
    };
    let names = match module {
        true => names,
        false => std::iter::once(last).chain(names).collect(),
    };
    Some(Some((t, names)))
}

/// Python: whether import `spec` of `f`, resolved to file `t`, names a
/// module rather than a name the module holds (`from django.apps import
/// apps` names `apps` of the package: its parent resolves to the same file).
fn py_names_module(idx: &Index, f: &FileFacts, spec: &str, t: u32, modules: &Modules) -> bool {
    match py_parent(spec) {
        None => true,
        Some(parent) => import_file(idx, f, &parent, modules) != Some(t),
    }
}

/// Python: the imports of `f` that do not rename ([`py_bound`] reads them).
fn py_plain_imports(f: &FileFacts) -> Vec<&RawEdge> {
    if f.lang != Lang::Python {
        return Vec::new();
    }
    f.edges
        .iter()
        .filter(|e| e.kind == "imports" && e.alias.is_none())
        .collect()
}

/// Python: module `seg` of module file `m`: a package's submodule
/// (`pkg/seg.py`, `pkg/seg/__init__.py`), or a module `m` imports as `seg`
/// (`from django.db.models import signals`).
fn py_submodule(idx: &Index, m: u32, seg: &str, modules: &Modules) -> Option<u32> {
    let mf = &idx.files[m as usize];
    let base = mf.path.rsplit('/').next().unwrap_or(&mf.path);
    if base == "__init__.py" {
        let dir = dir_of(&mf.path);
        for p in [
            format!("{dir}/{seg}.py"),
            format!("{dir}/{seg}/__init__.py"),
        ] {
            if let Some(&x) = idx.paths.get(p.trim_start_matches('/')) {
                return Some(x);
            }
        }
    }
    mf.edges
        .iter()
        .filter(|e| e.kind == "imports")
        .filter(|e| match e.alias.as_deref() {
            Some(a) => a == seg,
            None => e.dst_name.rsplit('.').next() == Some(seg),
        })
        .find_map(|e| {
            let t = import_file(idx, mf, &e.dst_name, modules)?;
            (py_names_module(idx, mf, &e.dst_name, t, modules) && t != m).then_some(t)
        })
}

/// Python: what a call may land on in a module: a function, a class, a
/// module-level value (`gettext_lazy = lazy(gettext, str)`), not a field.
fn py_callable(s: &FactSym) -> bool {
    !matches!(s.kind, "field" | "property" | "module" | "namespace")
}

/// Python: the class a module-level variable names as its value (`D =
/// Distance`), found where the variable is written.
fn py_class_alias(idx: &Index, r: SymRef, modules: &Modules) -> Option<SymRef> {
    let f = &idx.files[r.0 as usize];
    let s = &f.symbols[r.1 as usize];
    if !matches!(s.kind, "variable" | "constant") {
        return None;
    }
    let v = py_value_of(f, r.1)?;
    if v.ends_with("()") || v.contains('.') || *v == *s.qname {
        return None;
    }
    let c = py_defined_in(
        idx,
        modules,
        r.0,
        v,
        &|s: &FactSym| kind_ok(s.kind, true),
        4,
    )?;
    Some(c)
}

/// Python: what a dotted name is read through, segment by segment (feature 32).
enum PyAt {
    /// A module file.
    Module(u32),
    /// A class.
    Class(SymRef),
    /// A module-level variable's value as its declaration shows it
    /// ([`py_value`]: `Signal()`), with the file it is written in.
    Value(u32, String),
}

/// Python: what a definition found in a module stands for when read
/// through: a class (a variable naming one, `D = Distance`, too), or a
/// variable whose value is a call (`request_finished = Signal()`).
fn py_at_of(idx: &Index, r: SymRef, modules: &Modules) -> Option<PyAt> {
    let r = py_class_alias(idx, r, modules).unwrap_or(r);
    let f = &idx.files[r.0 as usize];
    let s = &f.symbols[r.1 as usize];
    if kind_ok(s.kind, true) {
        return Some(PyAt::Class(r));
    }
    if !matches!(s.kind, "variable" | "constant") {
        return None;
    }
    let v = py_value_of(f, r.1)?;
    v.ends_with("()").then(|| PyAt::Value(r.0, v.to_string()))
}

/// Python: `at` read through `names` (`signals`, `post_save` of
/// `models.signals.post_save`): a module's definition, re-export or
/// submodule; a class's nested class. `None`: a segment not found this way
/// (an instance's attribute, a function).
fn py_walk(idx: &Index, mut at: PyAt, names: &[&str], modules: &Modules) -> Option<PyAt> {
    for seg in names {
        at = match &at {
            PyAt::Module(m) => match py_defined_in(idx, modules, *m, seg, &py_callable, 4) {
                Some(r) => py_at_of(idx, r, modules)?,
                None => PyAt::Module(py_submodule(idx, *m, seg, modules)?),
            },
            PyAt::Class(c) => {
                let cf = &idx.files[c.0 as usize];
                let nested = format!("{}.{seg}", cf.symbols[c.1 as usize].qname);
                let i = cf
                    .symbols
                    .iter()
                    .position(|s| *s.qname == *nested && kind_ok(s.kind, true))?;
                PyAt::Class((c.0, i as u32))
            }
            PyAt::Value(..) => return None,
        };
    }
    Some(at)
}

/// Python: the class a dotted name written in file `f` names when an
/// import binds its first name (`admin.ModelAdmin`, `Field` of `from
/// django.db.models import Field`), read as [`py_walk`] reads it.
/// (A base written as a call names none: the caller checks.)
/// `Some(None)`: an import of a module outside the repository binds it.
fn py_imported_class(
    idx: &Index,
    f: &FileFacts,
    n: &str,
    modules: &Modules,
) -> Option<Option<SymRef>> {
    let Some((t, names)) = py_bound(idx, f, &py_plain_imports(f), n, modules)? else {
        return Some(None);
    };
    match py_walk(idx, PyAt::Module(t), &names, modules)? {
        PyAt::Class(c) => Some(Some(c)),
        _ => None,
    }
}

/// Python: the module-level variable `name` of `f` whose value
/// [`py_value`] reads, by symbol index.
fn py_module_value(f: &FileFacts, name: &str) -> Option<u32> {
    f.py_values
        .iter()
        .find(|(i, _)| *f.symbols[*i as usize].qname == *name)
        .map(|(i, _)| *i)
}

/// Python: the value [`py_value`] read for symbol `si` of `f`.
fn py_value_of(f: &FileFacts, si: u32) -> Option<&str> {
    let i = f.py_values.binary_search_by_key(&si, |(i, _)| *i).ok()?;
    Some(&f.py_values[i].1)
}

thread_local! {
    /// How deep [`find_scoped_call`] reads values within values (Python:
    /// `a = B.c()` read through `B = D()`; Rust: a builder chain,
    /// `Arg::new(n).long(l).action(a)`): bounded.
    static VALUE_DEPTH: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

/// `f()` one value deeper, or `None` at depth `bound` (Python's module
/// values: 4; Rust's chains: 8).
fn deeper<T>(bound: u8, f: impl FnOnce() -> Option<T>) -> Option<T> {
    struct Restore(u8);
    impl Drop for Restore {
        fn drop(&mut self) {
            VALUE_DEPTH.with(|d| d.set(self.0));
        }
    }
    let depth = VALUE_DEPTH.with(|d| d.get());
    if depth >= bound {
        return None;
    }
    let _restore = Restore(depth);
    VALUE_DEPTH.with(|d| d.set(depth + 1));
    f()
}

/// The methods of Python's builtin types (`list`, `dict`, `set`, `str`,
/// `bytes`, `int`, `float`, files), sorted: a call of one on a receiver of
/// no known type is taken for the builtin's (feature 32).
const PY_BUILTIN_METHODS: &[&str] = &[
    "add",
    "append",
    "as_integer_ratio",
    "bit_count",
    "bit_length",
    "capitalize",
    "casefold",
    "center",
    "clear",
    "close",
    "conjugate",
    "copy",
    "count",
    "decode",
    "detach",
    "difference",
    "difference_update",
    "discard",
    "encode",
    "endswith",
    "expandtabs",
    "extend",
    "fileno",
    "find",
    "flush",
    "format",
    "format_map",
    "from_bytes",
    "fromhex",
    "fromkeys",
    "get",
    "getbuffer",
    "getvalue",
    "hex",
    "index",
    "insert",
    "intersection",
    "intersection_update",
    "is_integer",
    "isalnum",
    "isalpha",
    "isascii",
    "isatty",
    "isdecimal",
    "isdigit",
    "isdisjoint",
    "isidentifier",
    "islower",
    "isnumeric",
    "isprintable",
    "isspace",
    "issubset",
    "issuperset",
    "istitle",
    "isupper",
    "items",
    "join",
    "keys",
    "ljust",
    "lower",
    "lstrip",
    "maketrans",
    "partition",
    "pop",
    "popitem",
    "read",
    "read1",
    "readable",
    "readinto",
    "readinto1",
    "readline",
    "readlines",
    "reconfigure",
    "remove",
    "removeprefix",
    "removesuffix",
    "replace",
    "reverse",
    "rfind",
    "rindex",
    "rjust",
    "rpartition",
    "rsplit",
    "rstrip",
    "seek",
    "seekable",
    "setdefault",
    "sort",
    "split",
    "splitlines",
    "startswith",
    "strip",
    "swapcase",
    "symmetric_difference",
    "symmetric_difference_update",
    "tell",
    "title",
    "to_bytes",
    "translate",
    "truncate",
    "union",
    "update",
    "upper",
    "values",
    "writable",
    "write",
    "writelines",
    "zfill",
];

/// Python's builtin classes: a call of one makes a value whose methods are
/// outside the repository.
const PY_BUILTIN_TYPES: &[&str] = &[
    "dict",
    "list",
    "set",
    "frozenset",
    "tuple",
    "str",
    "bytes",
    "bytearray",
    "int",
    "float",
    "bool",
    "object",
    "type",
    "range",
    "memoryview",
    "complex",
    "slice",
    "super",
    "property",
    "open",
    "iter",
    "map",
    "filter",
    "zip",
    "enumerate",
    "reversed",
    "sorted",
    "defaultdict",
    "OrderedDict",
    "Counter",
    "deque",
];

/// Python and JS/TS: what `written` (`_`, `capi.get_ds_name`, `BaseLoader`,
/// `ns.f`) names when its first name is bound by a renaming import of
/// `f` (`from django.utils.translation import gettext_lazy as _`,
/// `from .prototypes import ds as capi`, `import * as ns from "./x"`):
/// looked up in the file the import resolves to, never by name elsewhere.
/// `None`: the first name is no alias, or what it names was not found
/// (the rules by name decide); `Some(None)`: the import is of a module
/// outside the repository.
fn through_alias(
    idx: &Index,
    f: &FileFacts,
    aliases: &[&RawEdge],
    written: &str,
    class_like: bool,
    modules: &Modules,
) -> Option<Option<SymRef>> {
    let mut parts = written.split('.');
    let head = parts.next()?;
    let e = aliases.iter().find(|e| e.alias.as_deref() == Some(head))?;
    let rest: Vec<&str> = parts.collect();
    let Some(target) = resolve_import(idx, f, &e.dst_name, modules) else {
        return Some(None);
    };
    // A package's directory (a workspace's npm package): the rules by name.
    let t = *idx.paths.get(target.as_str())?;
    let orig = e.dst_name.rsplit('.').next().unwrap_or(&e.dst_name);
    // `import * as ns`, `import a.b as c`, `from a import b as c` of module
    // `b`: the alias is the module. `from django.apps import apps as x`
    // names `apps` in the package (its parent resolves to the same file).
    let module = f.lang != Lang::Python || py_names_module(idx, f, &e.dst_name, t, modules);
    let names: Vec<&str> = if module {
        rest
    } else {
        std::iter::once(orig).chain(rest).collect()
    };
    let ok = |s: &FactSym| {
        if class_like {
            kind_ok(s.kind, true)
        } else {
            // A module-level value may be what is called (`gettext_lazy =
            // lazy(gettext, str)`).
            py_callable(s)
        }
    };
    let defined_in =
        |m: u32, q: &str, ok: &dyn Fn(&FactSym) -> bool| py_defined_in(idx, modules, m, q, ok, 4);
    match names.as_slice() {
        [] => Some(None),
        // Not found (a star re-export, a name the file sets at run time):
        // undecided, the rules by name go on.
        [n] => defined_in(t, n, &ok).map(Some),
        // A member of a class of that module: decided when the class is
        // found (a value's method, `apps.get_app_config`, is not).
        [c, m] => {
            let class = defined_in(t, c, &|s: &FactSym| kind_ok(s.kind, true))?;
            let cf = &idx.files[class.0 as usize];
            let q = format!("{}.{m}", cf.symbols[class.1 as usize].qname);
            let i = cf
                .symbols
                .iter()
                .position(|s| *s.qname == *q && !class_like && kind_ok(s.kind, false))?;
            Some(Some((class.0, i as u32)))
        }
        _ => None,
    }
}

/// The definition `q` (`area`, `Loader.load`) of module file `m`, or of the
/// module its import of that name comes from (a package's `__init__.py`
/// re-exporting it: `from .geom import area`), or of a module it imports
/// with `*`, `hops` imports deep at most.
fn py_defined_in(
    idx: &Index,
    modules: &Modules,
    m: u32,
    q: &str,
    ok: &dyn Fn(&FactSym) -> bool,
    hops: u32,
) -> Option<SymRef> {
    let mf = &idx.files[m as usize];
    if let Some(i) = mf.symbols.iter().position(|s| &*s.qname == q && ok(s)) {
        return Some((m, i as u32));
    }
    if hops == 0 || mf.lang != Lang::Python {
        return None;
    }
    let n = q.split('.').next().unwrap_or(q);
    let file_of = |spec: &str| import_file(idx, mf, spec, modules).filter(|&x| x != m);
    let imports = || mf.edges.iter().filter(|e| e.kind == "imports");
    // `from .geom import area`: the module holding `area`.
    let named = imports().find_map(|e| {
        let named = match e.alias.as_deref() {
            Some(a) => a == n,
            None => e.dst_name.rsplit('.').next() == Some(n),
        };
        if !named {
            return None;
        }
        file_of(&py_parent(&e.dst_name)?)
    });
    if let Some(next) = named {
        return py_defined_in(idx, modules, next, q, ok, hops - 1);
    }
    imports()
        .filter(|e| e.alias.as_deref() == Some("*"))
        .filter_map(|e| file_of(&e.dst_name))
        .find_map(|next| py_defined_in(idx, modules, next, q, ok, hops - 1))
}

/// The imports of `f` that rename (feature 16): what a name written
/// through an alias is looked up by.
fn renaming_imports(f: &FileFacts) -> Vec<&RawEdge> {
    f.edges
        .iter()
        .filter(|e| e.kind == "imports" && e.alias.is_some())
        .collect()
}

/// The index of the file an import `spec` of `from` resolves to (`None`:
/// outside the repository, or a directory).
fn import_file(idx: &Index, from: &FileFacts, spec: &str, modules: &Modules) -> Option<u32> {
    resolve_import(idx, from, spec, modules)
        .as_deref()
        .and_then(|p| idx.paths.get(p))
        .copied()
}

/// The module a Python import specifier reads its last name from: `a.b` →
/// `a`, `.views` → `.`, `..x` → `..`, `..a.b` → `..a`; `a` → none.
fn py_parent(spec: &str) -> Option<String> {
    let rest = spec.trim_start_matches('.');
    let dots = &spec[..spec.len() - rest.len()];
    match rest.rsplit_once('.') {
        Some((p, _)) => Some(format!("{dots}{p}")),
        None if !dots.is_empty() && !rest.is_empty() => Some(dots.to_string()),
        None => None,
    }
}

/// Rust: `written` with its first segment spelled out when a `use … as`
/// binds it (`generic::Two::new` with `use crate::arch::generic::memchr as
/// generic;` → `crate::arch::generic::memchr::Two::new`).
/// The `use` too, when one renamed it (`aliases`: the file's renaming imports).
fn rust_unalias<'w, 'f>(
    aliases: &[&'f RawEdge],
    written: &'w str,
) -> (std::borrow::Cow<'w, str>, Option<&'f RawEdge>) {
    let end = written
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(written.len());
    let (head, rest) = written.split_at(end);
    if head.is_empty() || !(rest.is_empty() || rest.starts_with("::") || rest.starts_with('<')) {
        return (written.into(), None);
    }
    match aliases
        .iter()
        .copied()
        .find(|e| e.alias.as_deref() == Some(head))
    {
        // `use super::unix::{self as os_impl};` names `super::unix::self`.
        Some(e) => {
            let path = e.dst_name.strip_suffix("::self").unwrap_or(&e.dst_name);
            (format!("{path}{rest}").into(), Some(e))
        }
        None => (written.into(), None),
    }
}

/// Whether the Rust file at `path` is module `m`'s own: `…/m.rs` or `…/m/mod.rs`.
fn is_rust_module_file(path: &str, m: &str) -> bool {
    let stem = path
        .rsplit('/')
        .next()
        .unwrap_or(path)
        .trim_end_matches(".rs");
    stem == m || (stem == "mod" && dir_of(path).rsplit('/').next() == Some(m))
}

/// The file of the Rust module that the path `q` names in file `f`
/// (`time`, `crate::time`, `tokio::sync::mpsc`): the caller's `use` of the
/// path's first segment spelled out, else the path as written.
fn rust_module_of(idx: &Index, f: &FileFacts, q: &str, modules: &Modules) -> Option<u32> {
    let (head, rest) = match q.split_once("::") {
        Some((h, r)) => (h, Some(r)),
        None => (q, None),
    };
    let used = f.edges.iter().find_map(|e| {
        if e.kind != "imports" {
            return None;
        }
        // `use tokio::time::{self, Instant};` names `tokio::time::self`.
        let path = e.dst_name.strip_suffix("::self").unwrap_or(&e.dst_name);
        let name = match &e.alias {
            Some(a) => a.as_str(),
            None => path.rsplit("::").next().unwrap_or(""),
        };
        (name == head && path.contains("::")).then(|| path.to_string())
    });
    let spec = match (used, rest) {
        (Some(u), Some(r)) => format!("{u}::{r}"),
        (Some(u), None) => u,
        (None, _) => q.to_string(),
    };
    let target = resolve_rust(idx, f, &spec, modules)?;
    // The whole path must name the file: `a::b` resolved to `a.rs` alone
    // names an item of `a`, not the module `b`.
    let last = spec.rsplit("::").next().unwrap_or(&spec);
    // (`super`, `self`, `crate` name the module they lead to: `super::f`
    // from `runtime/tests/queue.rs` is `runtime/tests/mod.rs`'s; feature 50)
    let named = target.ends_with("/lib.rs")
        || target.ends_with("/main.rs")
        || matches!(last, "super" | "self" | "crate")
        || is_rust_module_file(&target, last);
    named
        .then(|| idx.paths.get(target.as_str()).copied())
        .flatten()
}

/// The definition of `name` that module file `mf` holds or re-exports:
/// its own, else one its `use` items name (`pub use sleep::sleep;`,
/// `pub use self::bounded::*;`), followed `hops` times at most.
fn through_reexports(
    idx: &Index,
    mf: u32,
    name: &str,
    ok: &dyn Fn(&SymRef) -> bool,
    cands: &[SymRef],
    modules: &Modules,
    hops: u32,
) -> Option<SymRef> {
    // (each module once at most per hop count: modules re-exporting each
    // other's globs, `pub use crate::a::*;` both ways; feature 53)
    let seen = std::cell::RefCell::new(HashMap::new());
    through_reexports_seen(idx, mf, name, ok, cands, modules, hops, &seen)
}

#[allow(clippy::too_many_arguments)]
fn through_reexports_seen(
    idx: &Index,
    mf: u32,
    name: &str,
    ok: &dyn Fn(&SymRef) -> bool,
    cands: &[SymRef],
    modules: &Modules,
    hops: u32,
    seen: &std::cell::RefCell<HashMap<u32, u32>>,
) -> Option<SymRef> {
    {
        let mut s = seen.borrow_mut();
        if s.get(&mf).is_some_and(|h| *h >= hops) {
            return None;
        }
        s.insert(mf, hops);
    }
    // (a Rust module's item over an enum's variant of the name, feature 42)
    let here = |r: &&SymRef| r.0 == mf && ok(r);
    let item = |r: &&SymRef| {
        let f = &idx.files[r.0 as usize];
        f.lang != Lang::Rust || !f.symbols[r.1 as usize].qname.contains('.')
    };
    if let Some(r) = cands
        .iter()
        .find(|r| here(r) && item(r))
        .or_else(|| cands.iter().find(here))
    {
        return Some(*r);
    }
    if hops == 0 {
        return None;
    }
    let mfacts = &idx.files[mf as usize];
    let uses = || {
        mfacts
            .edges
            .iter()
            .filter(|e| e.kind == "imports" && !e.dst_name.starts_with("mod "))
            // `pub use a::B as C;` exports `C`, not `B`.
            .filter(|e| e.alias.is_none())
    };
    let follow = |next: String| {
        let nf = *idx.paths.get(next.as_str())?;
        (nf != mf)
            .then(|| through_reexports_seen(idx, nf, name, ok, cands, modules, hops - 1, seen))
            .flatten()
    };
    fn last(e: &RawEdge) -> &str {
        e.dst_name.rsplit("::").next().unwrap_or("")
    }
    // A `use` naming it first; then a glob's module (the parser records
    // `pub use self::bounded::*;` as the module's path, `self::bounded`).
    uses()
        .filter(|e| last(e) == name)
        .find_map(|e| follow(resolve_rust(idx, mfacts, &e.dst_name, modules)?))
        .or_else(|| {
            uses().filter(|e| last(e) != name).find_map(|e| {
                let p = resolve_rust(idx, mfacts, &e.dst_name, modules)?;
                // (`use super::*;`, a crate's `use rayon_core::*;`: feature 50)
                let glob = is_rust_module_file(&p, last(e))
                    || matches!(last(e), "super" | "self")
                    || (!e.dst_name.contains("::") && p.ends_with("/lib.rs"));
                glob.then(|| follow(p)).flatten()
            })
        })
}

/// The name Go code calls an imported package by, by convention the last
/// element of its path: `net/http` → `http`, `math/rand/v2` → `rand`,
/// `gopkg.in/yaml.v3` → `yaml`, `github.com/mattn/go-sqlite3` → `sqlite3`.
/// (An import that renames the package, `import f "fmt"`, is called by its
/// `edges.alias`.)
pub(crate) fn go_package_name(spec: &str) -> &str {
    let mut parts = spec.rsplit('/');
    let mut last = parts.next().unwrap_or(spec);
    let is_version =
        |x: &str| x.len() > 1 && x.starts_with('v') && x[1..].bytes().all(|b| b.is_ascii_digit());
    if is_version(last) {
        last = parts.next().unwrap_or(last);
    }
    if let Some((head, v)) = last.rsplit_once('.') {
        if is_version(v) {
            last = head;
        }
    }
    last.strip_prefix("go-").unwrap_or(last)
}

/// Go's scoping, which a bare name cannot tell: `pkg.F` is `F` of the
/// package the file imports as `pkg` (nothing else; unresolved when that
/// package is outside the repository); `x.M` for any other `x` is a
/// method `M` (of the same file, the same package, or the only one of that
/// name); a bare `F` is a function or type of the file's own package
/// (builtins such as `len` stay unresolved); cgo's `C.f` is a C function
/// beside the file.
fn find_go(
    idx: &Index,
    fi: u32,
    f: &FileFacts,
    written: &str,
    class_like: bool,
    go_names: &HashMap<&str, Option<String>>,
) -> Option<SymRef> {
    let w = written.trim_start_matches('*');
    let w = if class_like {
        w.split('[').next().unwrap_or(w)
    } else {
        w
    };
    let sym = |r: &SymRef| &idx.files[r.0 as usize].symbols[r.1 as usize];
    let not_method = |r: &&SymRef| kind_ok(sym(r).kind, class_like) && sym(r).kind != "method";
    let in_dir = |d: &str, n: &str| -> Option<SymRef> {
        idx.by_dir_name
            .get(&(d, n))?
            .iter()
            .find(not_method)
            .copied()
    };
    let Some((q, name)) = w.rsplit_once('.') else {
        // The file's own definition first (a directory of standalone
        // programs, such as Go's test/, defines a name in many files).
        let v = idx.by_dir_name.get(&(dir_of(&f.path), w))?;
        let mut own_pkg = v.iter().filter(not_method);
        return own_pkg
            .clone()
            .find(|r| r.0 == fi)
            .or_else(|| own_pkg.next())
            .copied();
    };
    let plain = is_word(q);
    if plain {
        if let Some(dir) = go_names.get(q) {
            if q == "C" && dir.is_none() {
                // cgo: `C.f` is a C function of the package's own C files.
                return in_dir(dir_of(&f.path), name);
            }
            return in_dir(dir.as_deref()?, name);
        }
    }
    if class_like {
        return None;
    }
    let methods: Vec<SymRef> = idx
        .by_name
        .get(name)?
        .iter()
        .filter(|r| sym(r).kind == "method")
        .copied()
        .collect();
    let here = dir_of(&f.path);
    methods
        .iter()
        .find(|r| r.0 == fi)
        .or_else(|| {
            methods
                .iter()
                .find(|r| dir_of(&idx.files[r.0 as usize].path) == here)
        })
        .or_else(|| (methods.len() == 1).then(|| &methods[0]))
        .copied()
}

/// A Go call `x.M()` through a local name whose binding names a type
/// (feature 19): `Some` of the method of that type, or of the type it
/// embeds (nearest first, as Go promotes them), `Some(None)` for a type of
/// a package outside the repository or a builtin one (its methods are
/// outside it); `None` when the type is not placed (the rules by name
/// decide).
fn go_typed_call(
    idx: &Index,
    f: &FileFacts,
    written: &str,
    class_like: bool,
    go_names: &HashMap<&str, Option<String>>,
    recv_type: Option<&str>,
    modules: &Modules,
) -> Option<Option<SymRef>> {
    let (t, (q, name)) = (recv_type?, written.rsplit_once('.')?);
    // `x.M`, through fields `x.f.M` (feature 20), or a receiver that is a
    // value (`new(T).M`, feature 21).
    if q.is_empty() || class_like {
        return None;
    }
    let names = |p: &str| go_names.get(p).cloned();
    go_method_of(idx, f, t, name, &names, modules)
}

/// Of one package's definitions of a name (a method or function a file per
/// platform defines: `file_plan9.go`, `file_posix.go`), the one a file at
/// `caller` builds with: the caller's own file, else one whose name names
/// the caller's platform, else one whose name names none, else linux's or
/// amd64's, else the first.
fn go_pick(idx: &Index, cands: &[&SymRef], caller: &str) -> Option<SymRef> {
    const GOOS: &[&str] = &[
        "aix",
        "android",
        // Not a GOOS, but files so named build for BSDs only (by their
        // `//go:build` lines): `syscall_bsd.go`.
        "bsd",
        "darwin",
        "dragonfly",
        "freebsd",
        "hurd",
        "illumos",
        "ios",
        "js",
        "linux",
        "nacl",
        "netbsd",
        "openbsd",
        "plan9",
        "solaris",
        "wasip1",
        "windows",
        "zos",
    ];
    const GOARCH: &[&str] = &[
        "386", "amd64", "arm", "arm64", "loong64", "mips", "mipsle", "mips64", "mips64le", "ppc64",
        "ppc64le", "riscv64", "s390x", "wasm",
        // Not GOARCHes, but files so named build for those families only
        // (`signal_linux_ppc64x.go`).
        "ppc64x", "mipsx", "mips64x",
    ];
    // The platform a file's name restricts it to: (GOOS, GOARCH).
    let tags = |p: &str| -> (Option<String>, Option<String>) {
        let base = p.rsplit('/').next().unwrap_or(p);
        let stem = base.trim_end_matches(".go").trim_end_matches("_test");
        let parts: Vec<&str> = stem.split('_').collect();
        let n = parts.len();
        let last = (n > 1).then(|| parts[n - 1]);
        let prev = (n > 2).then(|| parts[n - 2]);
        match (prev, last) {
            (Some(o), Some(a)) if GOOS.contains(&o) && GOARCH.contains(&a) => {
                (Some(o.into()), Some(a.into()))
            }
            (_, Some(a)) if GOARCH.contains(&a) => (None, Some(a.into())),
            (_, Some(o)) if GOOS.contains(&o) => (Some(o.into()), None),
            _ => (None, None),
        }
    };
    let path = |r: &SymRef| idx.files[r.0 as usize].path.as_str();
    if cands.len() <= 1 {
        return cands.first().map(|r| **r);
    }
    if let Some(r) = cands.iter().find(|r| path(r) == caller) {
        return Some(**r);
    }
    let (cos, carch) = tags(caller);
    let score = |r: &&&SymRef| {
        let (os, arch) = tags(path(r));
        // `bsd` and `ppc64x`-like names cover a family of platforms.
        let family = |f: &str, p: &str| match f {
            "bsd" => matches!(p, "darwin" | "dragonfly" | "freebsd" | "netbsd" | "openbsd"),
            "ppc64x" => matches!(p, "ppc64" | "ppc64le"),
            "mipsx" => matches!(p, "mips" | "mipsle"),
            "mips64x" => matches!(p, "mips64" | "mips64le"),
            _ => false,
        };
        let fits = |mine: &Option<String>, theirs: &Option<String>| match (mine, theirs) {
            (None, _) => 1,
            (Some(a), Some(b)) if a == b || family(a, b) => 2,
            (Some(_), _) => 0,
        };
        // Untagged callers build for any platform: untagged files first.
        let os_fit = if cos.is_none() {
            u8::from(os.is_none()) * 2
        } else {
            fits(&os, &cos)
        };
        let arch_fit = if carch.is_none() {
            u8::from(arch.is_none()) * 2
        } else {
            fits(&arch, &carch)
        };
        // Among files for other platforms, linux/amd64's (the platform
        // go/types and gopls assume on a Linux host).
        let default =
            u8::from(os.as_deref() == Some("linux")) + u8::from(arch.as_deref() == Some("amd64"));
        (os_fit, arch_fit, default)
    };
    // Of files a Go version tags (`typeparams_go117.go`, `…_go118.go`), the
    // newest's: the toolchain is newer than any such tag (feature 30).
    // `go118.go` and `x_go118.go` are 18; `not_go118.go`, `pre_go118.go`,
    // the fallbacks for older toolchains, are 0.
    let version = |r: &&&SymRef| -> u32 {
        let p = path(r);
        let stem = p.rsplit('/').next().unwrap_or(p).trim_end_matches(".go");
        let parts: Vec<&str> = stem.trim_end_matches("_test").split('_').collect();
        let Some((last, before)) = parts.split_last() else {
            return 0;
        };
        if matches!(before.last(), Some(&("not" | "pre" | "before"))) {
            return 0;
        }
        last.strip_prefix("go1")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    cands
        .iter()
        .enumerate()
        .max_by_key(|(i, r)| (score(r), version(r), std::cmp::Reverse(*i)))
        .map(|(_, r)| **r)
}

/// The type of symbol `si` of file `f` (a Go package-level variable's).
/// What the Go type symbol `si` of file `f` stands for ([`FileFacts::go_types`]).
fn go_type_of(f: &FileFacts, si: u32) -> Option<&str> {
    let i = f.go_types.binary_search_by_key(&si, |(i, _)| *i).ok()?;
    Some(&f.go_types[i].1)
}

/// A Go type declaration's type after its name (`items []*Item` →
/// `[]*Item`, `A = pkg.B` → `= pkg.B`), when it is a slice, array, map,
/// channel or pointer-to-array type, or an alias: what resolution reads
/// to type an element or follow the alias (feature 30). A generic type's
/// (`List[T any] []T`) is not read.
pub fn go_underlying(name: &str, sig: &str) -> Option<String> {
    let rest = sig.trim().strip_prefix(name)?;
    if !rest.starts_with(' ') {
        return None;
    }
    let rest = rest.trim();
    let rest = rest
        .split(" //")
        .next()
        .unwrap_or(rest)
        .trim_end_matches('{')
        .trim();
    let kept = ["[", "*[", "map[", "chan ", "chan<- ", "<-chan ", "= "];
    (kept.iter().any(|k| rest.starts_with(k)) && rest.len() <= 120).then(|| rest.to_string())
}

/// The declared type of field `name` of an inline Go struct type written
/// on one line (`struct { in string; a, b *T; sync.Mutex }`, as the parser
/// writes it): `None` when `text` is no struct type or has no such field.
fn go_struct_field(text: &str, name: &str) -> Option<String> {
    let t = text.trim().trim_start_matches('*');
    let body = t.strip_prefix("struct")?.trim_start();
    let inner = &body[1..go_close(body, 0)?];
    let (mut depth, mut from) = (0i32, 0);
    let mut parts = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ';' if depth == 0 => {
                parts.push(&inner[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[from..]);
    for part in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        // An embedded type is a field of its own name.
        if !part.contains(' ') {
            let base = part.trim_start_matches('*');
            if base.rsplit('.').next() == Some(name) {
                return Some(part.to_string());
            }
            continue;
        }
        let want = format!("S.{name}");
        if let Some((_, ty)) = go_field_types("S.x", part)
            .into_iter()
            .find(|(q, _)| **q == *want)
        {
            return Some(ty.into());
        }
    }
    None
}

/// `(inner)rest` → (`inner`, `rest`), the parentheses matched.
pub(crate) fn go_group(t: &str) -> Option<(&str, &str)> {
    if !t.starts_with('(') {
        return None;
    }
    let end = go_close(t, 0)?;
    Some((&t[1..end], &t[end + 1..]))
}

/// The index of the bracket that closes the one at byte `open` of `t`.
fn go_close(t: &str, open: usize) -> Option<usize> {
    if !matches!(t.as_bytes().get(open), Some(b'(' | b'[' | b'{')) {
        return None;
    }
    bracket_end(t, open)
}

/// The element (or, `key`, the key) of the Go type `text` written in file
/// `tf`, as written there: `[]E`, `[N]E`, `*[N]E`, `map[K]V`, `chan E`; a
/// named type through what its declaration stands for, in its own file
/// (feature 30). A range's first name over a channel is its element; over
/// a slice, an array or a string, an int (`None`).
fn go_elem<'a>(
    idx: &Index<'a>,
    mut tf: &'a FileFacts,
    text: &str,
    key: bool,
    modules: &Modules,
) -> Option<(String, &'a FileFacts)> {
    let mut s = text.trim().to_string();
    for _ in 0..4 {
        let t = s.trim();
        let t = t
            .strip_prefix('*')
            .filter(|r| r.starts_with('['))
            .unwrap_or(t);
        // Only a type a declaration could write (never a form of ours).
        let out = |e: &str| go_declared_type(e.trim()).map(|e| (e.to_string(), tf));
        if let Some(r) = t.strip_prefix("[]") {
            return if key { None } else { out(r) };
        }
        if t.starts_with('[') {
            let i = go_close(t, 0)?;
            return if key { None } else { out(&t[i + 1..]) };
        }
        if t.starts_with("map[") {
            let i = go_close(t, 3)?;
            return out(if key { &t[4..i] } else { &t[i + 1..] });
        }
        for p in ["<-chan ", "chan<- ", "chan "] {
            if let Some(r) = t.strip_prefix(p) {
                return out(r);
            }
        }
        // A named type: what its declaration stands for.
        let names = |p: &str| go_import_dir(idx, tf, p, modules);
        let (dir, n) = go_place(t, tf, &names)??;
        let def = go_type_def(idx, &dir, &n, &tf.path)?;
        let df = &idx.files[def.0 as usize];
        s = go_type_of(df, def.1)?
            .trim_start_matches('=')
            .trim()
            .to_string();
        tf = df;
    }
    None
}

/// The Go type a value's form stands for, as a declaration writes it, with
/// the file that writes it: `(T).f` a field's declared type (features 20,
/// 30: an inline `struct {…}`'s field too), `(T).M()` / `F()` / `pkg.F()` a
/// first result (`T()` of a type `T`: a conversion, the type written here),
/// `var x` a package-level variable's (feature 22), `(xs)[]` / `(xs)[key]`
/// an element or key (feature 30); any other form is a type written in `f`
/// itself. `Some(None)`: a variable or function of a package outside the
/// repository; `None`: not placed.
fn go_type_text<'a>(
    idx: &Index<'a>,
    f: &'a FileFacts,
    t: &str,
    go_names: &dyn Fn(&str) -> Option<Option<String>>,
    modules: &Modules,
) -> Option<Option<(String, &'a FileFacts)>> {
    let sym = |r: &SymRef| &idx.files[r.0 as usize].symbols[r.1 as usize];
    let own = |s: &str| go_declared_type(s).map(str::to_string);
    if let Some((inner, rest)) = go_group(t) {
        if matches!(rest, "[]" | "[key]") {
            let (text, tf) = go_type_text(idx, f, inner, go_names, modules)??;
            return go_elem(idx, tf, &text, rest == "[key]", modules).map(Some);
        }
        let rest = rest.strip_prefix('.')?;
        if let Some(m) = rest.strip_suffix("()") {
            let found = go_method_of(idx, f, inner, m, go_names, modules)??;
            let mf = &idx.files[found.0 as usize];
            return Some(Some((own(go_result(mf, found.1)?)?, mf)));
        }
        if !is_word(rest) {
            return None;
        }
        if let Some((ff, fty)) = go_field_of(idx, f, inner, rest, go_names, modules) {
            return Some(Some((own(fty)?, ff)));
        }
        // A field of an inline `struct {…}` type (a test table's row).
        let (text, tf) = go_type_text(idx, f, inner, go_names, modules)??;
        return Some(Some((go_struct_field(&text, rest)?, tf)));
    }
    if let Some(v) = t.strip_prefix("var ") {
        let Some((dir, name)) = go_qualified(v, f, go_names)? else {
            return Some(None);
        };
        let key = (dir.as_str(), name);
        let vars: Vec<&SymRef> = (idx.go_vars.get(&key).into_iter().flatten())
            .chain(idx.by_dir_name.get(&key).into_iter().flatten())
            .filter(|r| matches!(sym(r).kind, "variable" | "constant") && &*sym(r).qname == name)
            .collect();
        let var = go_pick(idx, &vars, &f.path)?;
        let vf = &idx.files[var.0 as usize];
        return Some(Some((own(go_var(vf, var.1)?)?, vf)));
    }
    if let Some(callee) = t.strip_suffix("()") {
        let Some((dir, name)) = go_qualified(callee, f, go_names)? else {
            return Some(None);
        };
        let defs = idx.by_dir_name.get(&(dir.as_str(), name))?;
        let funs: Vec<&SymRef> = defs.iter().filter(|r| sym(r).kind == "function").collect();
        // `T(x)`: a conversion, its type written here.
        let Some(fun) = go_pick(idx, &funs, &f.path) else {
            return Some(Some((callee.to_string(), f)));
        };
        let ff = &idx.files[fun.0 as usize];
        return Some(Some((own(go_result(ff, fun.1)?)?, ff)));
    }
    Some(Some((t.to_string(), f)))
}

fn go_var(f: &FileFacts, si: u32) -> Option<&str> {
    let i = f.go_vars.binary_search_by_key(&si, |(i, _)| *i).ok()?;
    Some(&f.go_vars[i].1)
}

/// The type a Go package-level variable's or constant's declaration shows,
/// from its name and its text (its first line): `x T`, `x T = v` → `T`;
/// `x = T{…}` (or `x = T`, the line cut at its brace) → `T`; `&T{…}` and
/// `new(T)` → `*T`; `F(…)`, `pkg.F(…)` → `F()`, `pkg.F()` (the function's
/// first result, or a conversion); anything else none.
pub fn go_var_type(name: &str, sig: &str) -> Option<String> {
    let rest = sig.trim().strip_prefix(name)?;
    if !rest.is_empty() && !rest.starts_with([' ', '=', ',']) {
        return None;
    }
    let mut rest = rest.trim();
    // `a, b T`: the type after the names; `a, b = …` shows none.
    let mut many = false;
    while let Some(x) = rest.strip_prefix(',') {
        let x = x.trim_start();
        let end = x
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(x.len());
        if end == 0 {
            return None;
        }
        rest = x[end..].trim_start();
        many = true;
    }
    if let Some(v) = rest.strip_prefix('=') {
        return (!many).then(|| go_value_type(v.trim())).flatten();
    }
    go_declared(rest)
}

/// `T` or `T = v` → `T`.
fn go_declared(rest: &str) -> Option<String> {
    let ty = rest.split('=').next().unwrap_or(rest).trim();
    (!ty.is_empty() && ty.len() <= 120).then(|| ty.to_string())
}

/// The type a value written in a declaration shows (see [`go_var_type`]).
fn go_value_type(v: &str) -> Option<String> {
    let v = v.trim().trim_end_matches('{').trim_end();
    let type_name = |t: &str| {
        let base = t.split('[').next().unwrap_or(t);
        let ok = match base.split_once('.') {
            Some((p, n)) => is_word(p) && is_word(n),
            None => is_word(base),
        };
        (ok && !base.starts_with(|c: char| c.is_ascii_digit()) && t.len() <= 120)
            .then(|| t.to_string())
    };
    if let Some(r) = v.strip_prefix('&') {
        return go_value_type(r)
            .filter(|t| !t.ends_with("()"))
            .map(|t| format!("*{t}"));
    }
    if let Some(t) = v.strip_prefix("new(").and_then(|r| r.strip_suffix(')')) {
        return type_name(t.trim()).map(|t| format!("*{t}"));
    }
    // The value is the literal or the call itself, not a chain from it
    // (`NewB().Build()`, `T{}.M()`, `F()[0]`): its bracket closes last,
    // or not at all where the line was cut.
    let whole = |i: usize| {
        let mut depth = 0i32;
        for (j, c) in v.char_indices().skip_while(|(j, _)| *j < i) {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return j + 1 == v.len();
                    }
                }
                _ => {}
            }
        }
        true
    };
    if let Some(i) = v.find('{') {
        return whole(i).then(|| type_name(v[..i].trim())).flatten();
    }
    if let Some(i) = v.find('(') {
        return whole(i)
            .then(|| type_name(v[..i].trim()).map(|c| format!("{c}()")))
            .flatten();
    }
    type_name(v)
}

/// The first result type of symbol `si` of file `f` (a Go function's).
fn go_result(f: &FileFacts, si: u32) -> Option<&str> {
    let i = f.go_results.binary_search_by_key(&si, |(i, _)| *i).ok()?;
    Some(&f.go_results[i].1)
}

/// The directory of the package file `f` imports as `p` (`Some(None)`:
/// outside the repository; `None`: no import of that name).
fn go_import_dir(idx: &Index, f: &FileFacts, p: &str, modules: &Modules) -> Option<Option<String>> {
    f.edges
        .iter()
        .filter(|e| e.kind == "imports")
        .find(|e| {
            e.alias
                .as_deref()
                .unwrap_or_else(|| go_package_name(&e.dst_name))
                == p
        })
        .map(|e| resolve_import(idx, f, &e.dst_name, modules))
}

/// `g(#i).#j` (a JS/TS callback's parameter, feature 27): `(g, i, j)`.
fn js_callback_marker(t: &str) -> Option<(&str, u8, u8)> {
    let (g, rest) = t.split_once("(#")?;
    let (i, j) = rest.split_once(").#")?;
    Some((g, i.parse().ok()?, j.parse().ok()?))
}

/// Rust (feature 57): the callbacks a function's signature takes, each with
/// the types its signature gives their parameters: parameter `i` (not
/// counting `self`) of type `impl FnOnce(A, B)`, `&dyn Fn(A)`, `Box<dyn
/// FnMut(A)>`, or a generic `F` bounded so (`<F: FnOnce(&Scope<'s>) -> R>`,
/// `where F: Fn(Box<Core>, &Context)`): `(i, [A, B])`.
pub fn rust_callback_params(sig: &str) -> Vec<(u8, Vec<Option<Box<str>>>)> {
    let mut out = Vec::new();
    let Some(at) = sig.find("fn ") else {
        return out;
    };
    let rest = &sig[at + 3..];
    let name_end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let mut i = name_end;
    let mut bounds: Vec<(&str, &str)> = Vec::new();
    if rest[i..].starts_with('<') {
        let Some(end) = rust_angle_end(rest, i) else {
            return out;
        };
        for g in rust_split_top(&rest[i + 1..end - 1], b',') {
            if let Some((n, b)) = g.split_once(':') {
                bounds.push((n.trim(), b.trim()));
            }
        }
        i = end;
    }
    let Some(open) = rest[i..].find('(').map(|k| k + i) else {
        return out;
    };
    let Some(close) = bracket_end(rest, open) else {
        return out;
    };
    if let Some(w) = rest[close..].find(" where ") {
        for g in rust_split_top(&rest[close + w + 7..], b',') {
            if let Some((n, b)) = g.split_once(':') {
                bounds.push((n.trim(), b.trim()));
            }
        }
    }
    // The argument list of the first `Fn(…)`, `FnMut(…)`, `FnOnce(…)` a type
    // or bound names.
    let fn_args = |t: &str| -> Option<Vec<Option<Box<str>>>> {
        let k = ["FnOnce(", "FnMut(", "Fn("]
            .iter()
            .filter_map(|p| t.find(p).map(|k| k + p.len()))
            .min()?;
        let end = bracket_end(t, k - 1)?;
        Some(
            rust_split_top(&t[k..end], b',')
                .into_iter()
                .map(|a| (!a.is_empty()).then(|| a.into()))
                .collect(),
        )
    };
    let params = rust_split_top(&rest[open + 1..close], b',');
    let mut idx = 0u8;
    for p in params {
        let Some((pat, ty)) = p.split_once(':') else {
            continue; // `self`, `&self`, `&mut self`
        };
        if pat
            .trim()
            .trim_start_matches(['&', ' '])
            .trim_start_matches("mut ")
            == "self"
        {
            continue;
        }
        let ty = ty.trim();
        let plain = ty.trim_start_matches(['&', ' ']);
        let args = if plain.contains("Fn")
            && (plain.contains("FnOnce(") || plain.contains("FnMut(") || plain.contains("Fn("))
        {
            fn_args(plain)
        } else {
            bounds
                .iter()
                .find(|(n, _)| *n == plain)
                .and_then(|(_, b)| fn_args(b))
        };
        if let Some(a) = args {
            out.push((idx, a));
        }
        idx = idx.saturating_add(1);
    }
    out
}

/// Split `s` at the commas outside any bracket (`=>` closes none).
fn ts_split_top(s: &str) -> Vec<&str> {
    ts_split_top_at(s, b',')
}

/// Split `s` at the `sep` bytes outside any bracket.
fn ts_split_top_at(s: &str, sep: u8) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0usize);
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b'>' if i > 0 && b[i - 1] == b'=' => {}
            b')' | b']' | b'}' | b'>' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// `<T, R>(a: X, b: Y): Z` (after the name): the generic names, the
/// parameters' text, split at the top-level commas, and the text after the
/// list (`: Z`); None if the text is no such list.
fn ts_params(s: &str) -> Option<(Vec<&str>, Vec<&str>, &str)> {
    let s = s.trim_start();
    let b = s.as_bytes();
    let close = |open: usize, o: u8, c: u8| -> Option<usize> {
        let mut depth = 0i32;
        for (i, &ch) in b.iter().enumerate().skip(open) {
            if ch == o {
                depth += 1;
            } else if ch == c && !(c == b'>' && i > 0 && b[i - 1] == b'=') {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
        }
        None
    };
    let (generics, rest) = if b.first() == Some(&b'<') {
        let end = close(0, b'<', b'>')?;
        let names = ts_split_top(&s[1..end])
            .into_iter()
            .filter_map(|g| g.split_whitespace().next())
            .collect();
        (names, end + 1)
    } else {
        (Vec::new(), 0)
    };
    let open = rest + s[rest..].find(|c: char| !c.is_whitespace())?;
    if b[open] != b'(' {
        return None;
    }
    let end = close(open, b'(', b')')?;
    let inner = &s[open + 1..end];
    let params = if inner.trim().is_empty() {
        Vec::new()
    } else {
        ts_split_top(inner)
    };
    Some((generics, params, &s[end + 1..]))
}

/// The class or interface a TS type's text names (`Subscriber<R>` →
/// `Subscriber`, `ns.Foo | undefined` → `ns.Foo`), unless it is one of the
/// generic names.
fn ts_type_name(t: &str, generics: &[&str]) -> Option<String> {
    let parts: Vec<&str> = ts_split_top_at(t.trim(), b'|')
        .into_iter()
        .map(str::trim)
        .filter(|p| !matches!(*p, "undefined" | "null" | ""))
        .collect();
    let [one] = parts[..] else {
        return None;
    };
    let one = one.trim_start_matches('(').trim_end_matches(')').trim();
    let name = one.split('<').next().unwrap_or(one).trim();
    let ok = !name.is_empty()
        && name.split('.').all(|p| !p.is_empty())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'$')
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && !generics.contains(&name)
        && !looks_generic(name)
        && !matches!(
            name,
            "string" | "number" | "boolean" | "any" | "unknown" | "never" | "void" | "object"
        );
    ok.then(|| name.to_string())
}

/// A type parameter by convention, which a method's signature may take
/// from its class: one capital (`T`), or `T`, a capital and a lower-case
/// letter (`TData`; not `TCPSocket`).
fn looks_generic(name: &str) -> bool {
    let b = name.as_bytes();
    (b.len() == 1 && b[0].is_ascii_uppercase())
        || (b.len() > 2
            && b[0] == b'T'
            && b[1].is_ascii_uppercase()
            && b[2].is_ascii_lowercase()
            && !name.contains('.'))
}

/// The class or interface a TS function signature's declared return type
/// names (feature 28): `getQueryCache(): QueryCache` → `QueryCache`,
/// `function innerFrom<O>(input: O): Observable<ObservedValueOf<O>>` →
/// `Observable`, `: this` → `this`; None without one, or for a generic, a
/// primitive, a union of two.
pub fn ts_return_type(sig: &str) -> Option<String> {
    let sig = sig.trim().trim_end_matches('{').trim_end();
    let start = sig.find(['<', '(']).filter(|&i| !sig[..i].contains("=>"))?;
    let (generics, _, after) = ts_params(&sig[start..])?;
    let rest = after.trim_start().strip_prefix(':')?;
    // An arrow function's body follows its return type.
    let rest = rest.split("=>").next().unwrap_or(rest).trim();
    if rest == "this" {
        return Some("this".to_string());
    }
    // `asserts x is T`, `x is T`: no value.
    if rest.contains(" is ") {
        return None;
    }
    ts_type_name(rest, &generics)
}

/// JS/TS: a receiver expression as segments (feature 28): `this.#client
/// .getCache()` → `this`, `#client`, `getCache()`; `innerFrom(x)` →
/// `innerFrom()`; each a name and whether it is a call. None for anything
/// else (an index, a cast, a call of a call's result).
fn js_segments(q: &str) -> Option<Vec<(&str, bool)>> {
    let b = q.as_bytes();
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0usize);
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'.' if depth == 0 => {
                parts.push(&q[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&q[start..]);
    let word = |w: &str| {
        let w = w.strip_prefix('#').unwrap_or(w);
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
    };
    parts
        .into_iter()
        .map(|p| {
            let p = p.trim().trim_end_matches(['!', '?']);
            match p.find(['(', '<']) {
                None => word(p).then_some((p, false)),
                Some(n) => {
                    // `name(…)` or `name<T>(…)`: one argument list, at the end.
                    let name = &p[..n];
                    let open = p[n..].find('(')? + n;
                    let mut depth = 0i32;
                    for (k, c) in p.bytes().enumerate().skip(open) {
                        match c {
                            b'(' => depth += 1,
                            b')' => {
                                depth -= 1;
                                if depth == 0 && k != p.len() - 1 {
                                    return None;
                                }
                            }
                            _ => {}
                        }
                    }
                    (word(name) && p.ends_with(')')).then_some((name, true))
                }
            }
        })
        .collect()
}

/// The callbacks a TS function signature takes (feature 27): for each
/// parameter whose type is a function type (`init: (source: Observable<T>,
/// subscriber: Subscriber<R>) => void`), its index and the class or
/// interface each of the function type's parameters names (`Observable`,
/// `Subscriber`; None for a generic, a primitive, a union of two). Empty
/// when the text is no signature.
pub fn ts_callback_params(sig: &str) -> Vec<(u8, Vec<Option<Box<str>>>)> {
    let sig = sig.trim();
    // After the name: `function f<T>(…)`, `f<T>(…): X`, `f = <T>(…) => …`.
    let start = sig.find(['<', '(']).filter(|&i| !sig[..i].contains("=>"));
    let Some((generics, params, _)) = start.and_then(|i| ts_params(&sig[i..])) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // A TS `this: X` parameter is no argument.
    let params: Vec<&str> = params
        .into_iter()
        .filter(|p| p.split(':').next().map(str::trim) != Some("this"))
        .collect();
    for (i, p) in params.iter().enumerate().take(16) {
        let Some((_, ty)) = p.split_once(':') else {
            continue;
        };
        let ty = ty.trim();
        // A function type, maybe optional (`f?: (x: X) => void`) or in
        // parentheses; `(…) => R | undefined` counts.
        let ty = ty
            .strip_prefix('(')
            .filter(|t| t.trim_start().starts_with('('))
            .map_or(ty, |t| t);
        if !ty.contains("=>") || !(ty.starts_with('(') || ty.starts_with('<')) {
            continue;
        }
        let Some((inner_generics, inner, _)) = ts_params(ty) else {
            continue;
        };
        let all: Vec<&str> = generics.iter().chain(&inner_generics).copied().collect();
        let types: Vec<Option<Box<str>>> = inner
            .iter()
            .map(|q| {
                q.split_once(':')
                    .and_then(|(_, t)| ts_type_name(t, &all))
                    .map(Box::from)
            })
            .collect();
        if types.iter().any(Option::is_some) {
            out.push((i as u8, types));
        }
    }
    out
}

/// The first result type of a Go function's signature (`func Open(name
/// string) (*File, error)` → `*File`, `(n int, err error)` → `int`).
pub fn go_first_result(sig: &str) -> Option<String> {
    // After the parameters' closing parenthesis (a method's receiver and
    // type parameters come first).
    let sig = sig.trim().trim_end_matches('{').trim();
    let bytes = sig.as_bytes();
    let mut depth = 0i32;
    let mut groups = 0;
    let mut rest = None;
    let start = sig.find('(')?;
    // A method: `func (r *T) Name(…)`: skip the receiver group first.
    let method = sig
        .strip_prefix("func")
        .is_some_and(|r| r.trim_start().starts_with('('));
    let want = if method { 2 } else { 1 };
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => {
                depth -= 1;
                if depth == 0 && b == b')' {
                    groups += 1;
                    if groups == want {
                        rest = Some(sig[i + 1..].trim());
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    let rest = rest?;
    if rest.is_empty() {
        return None;
    }
    let Some(inner) = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) else {
        return Some(rest.to_string());
    };
    // Top-level parts; named results (`n int, err error`) give the type
    // after the name, and `a, b int` groups names.
    let mut parts = Vec::new();
    let (mut d, mut from) = (0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '(' | '[' | '{' => d += 1,
            ')' | ']' | '}' => d -= 1,
            ',' if d == 0 => {
                parts.push(inner[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(inner[from..].trim());
    // A named result opens with its name: an identifier, then a space
    // (`err error`; not `<-chan Event`, `[]func() error`, `struct{ … }`).
    let named_part = |p: &str| {
        p.split_once(' ').is_some_and(|(first, _)| {
            !first.is_empty()
                && first.starts_with(|c: char| c.is_alphabetic() || c == '_')
                && first.chars().all(|c| c.is_alphanumeric() || c == '_')
                && !matches!(first, "func" | "chan" | "map" | "struct" | "interface")
        })
    };
    if parts.iter().any(|p| named_part(p)) {
        let p = parts.iter().find(|p| named_part(p))?;
        return p.split_once(' ').map(|(_, t)| t.trim().to_string());
    }
    Some(parts[0].to_string())
}

/// The qualified names and declared type of a Go field declaration, from
/// its first name's qualified name and its text (`Server.a` and `a, b
/// *Conn \`json:"a"\`` → `Server.a` and `Server.b`, both `*Conn`).
pub fn go_field_types(qname: &str, sig: &str) -> Vec<(Box<str>, Box<str>)> {
    let Some((own, _)) = qname.rsplit_once('.') else {
        return Vec::new();
    };
    let mut rest = sig.trim();
    // A tag closes the declaration: `json:"a"` in back quotes or quotes.
    for q in ['`', '"'] {
        if let Some(r) = rest.strip_suffix(q) {
            if let Some(i) = r.rfind(q) {
                rest = r[..i].trim_end();
            }
            break;
        }
    }
    let mut names = Vec::new();
    loop {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            return Vec::new();
        }
        names.push(&rest[..end]);
        rest = rest[end..].trim_start();
        match rest.strip_prefix(',') {
            Some(r) => rest = r.trim_start(),
            None => break,
        }
    }
    let ty = rest.trim();
    if ty.is_empty() || ty.len() > 120 {
        return Vec::new();
    }
    names
        .into_iter()
        .map(|n| (format!("{own}.{n}").into(), ty.into()))
        .collect()
}

/// Go's builtin types (their methods, `error`'s `Error`, are outside the
/// repository).
const GO_BUILTIN_TYPES: &[&str] = &[
    "error",
    "string",
    "bool",
    "byte",
    "rune",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uintptr",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "any",
];

/// The method `m` of the Go type `t` (as a binding writes it: `*testing.T`,
/// `state`, `bytes.Buffer`, `(*T).M()`, `F()`, `(T).f`) seen from file `f`:
/// `Some(found)` once the type is placed (its method, a promoted one of the
/// types it embeds, or none: the method is outside the repository), `None`
/// when the type is not placed (a type parameter, a type the package
/// defines in no file here, a slice or map).
fn go_method_of(
    idx: &Index,
    f: &FileFacts,
    t: &str,
    m: &str,
    go_names: &dyn Fn(&str) -> Option<Option<String>>,
    modules: &Modules,
) -> Option<Option<SymRef>> {
    let Some((first, at)) = go_type_sym(idx, f, t, go_names, modules)? else {
        return Some(None);
    };
    let sym = |r: &SymRef| &idx.files[r.0 as usize].symbols[r.1 as usize];
    let found = go_promoted(idx, first, modules, |tr, tf| {
        let tname = &*sym(&tr).qname;
        let member = |r: &&SymRef| {
            let s = sym(r);
            s.kind == "method"
                && s.qname.strip_suffix(m).and_then(|q| q.strip_suffix('.')) == Some(tname)
        };
        let v: Vec<&SymRef> = idx
            .by_dir_name
            .get(&(dir_of(&tf.path), m))?
            .iter()
            .filter(member)
            .collect();
        go_pick(idx, &v, &at.path)
    });
    Some(found)
}

/// The field `name` of the Go type `t` (written as [`go_method_of`] reads
/// it), or of a type it embeds, nearest first: its declared type and the
/// file that declares it (whose imports name that type). `None` when the
/// type is not placed or defines no such field.
fn go_field_of<'a>(
    idx: &Index<'a>,
    f: &FileFacts,
    t: &str,
    name: &str,
    go_names: &dyn Fn(&str) -> Option<Option<String>>,
    modules: &Modules,
) -> Option<(&'a FileFacts, &'a str)> {
    let (first, _) = go_type_sym(idx, f, t, go_names, modules)??;
    go_promoted(idx, first, modules, |tr, tf| {
        let tname = &*tf.symbols[tr.1 as usize].qname;
        let want = |q: &str| q.strip_suffix(name).and_then(|q| q.strip_suffix('.')) == Some(tname);
        if let Some((_, ty)) = tf.fields.iter().find(|(q, _)| want(q)) {
            return Some((tf, &**ty));
        }
        // An embedded type is a field of its own name (`s.Mutex.Lock()`).
        tf.edges
            .iter()
            .filter(|e| e.kind == "extends" && e.src_symbol.as_deref() == Some(tname))
            .find(|e| {
                let b = e.dst_name.trim_start_matches('*');
                let b = b.split('[').next().unwrap_or(b);
                b.rsplit('.').next() == Some(name)
            })
            .map(|e| (tf, e.dst_name.as_str()))
    })
}

/// Visit the Go type `first` and then the types it embeds, breadth first
/// (as Go promotes methods and fields), until `visit` finds something.
fn go_promoted<'a, R>(
    idx: &Index<'a>,
    first: SymRef,
    modules: &Modules,
    mut visit: impl FnMut(SymRef, &'a FileFacts) -> Option<R>,
) -> Option<R> {
    let mut frontier = vec![first];
    let mut seen = std::collections::HashSet::new();
    for _ in 0..5 {
        let mut next = Vec::new();
        for tr in frontier {
            if !seen.insert(tr) {
                continue;
            }
            let tf = &idx.files[tr.0 as usize];
            if let Some(r) = visit(tr, tf) {
                return Some(r);
            }
            let tname = &*tf.symbols[tr.1 as usize].qname;
            // The embedded types, named as the type's own file imports them.
            let tf_names = |p: &str| go_import_dir(idx, tf, p, modules);
            for e in tf
                .edges
                .iter()
                .filter(|e| e.kind == "extends" && e.src_symbol.as_deref() == Some(tname))
            {
                if let Some(Some((d, n))) = go_place(&e.dst_name, tf, &tf_names) {
                    if let Some(b) = go_type_def(idx, &d, &n, &tf.path) {
                        next.push(b);
                    }
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    None
}

/// `*T`, `pkg.T`, `T[int]` written in file `from` → (package directory,
/// `T`); `Some(None)`: a builtin type or a package outside the repository;
/// `None`: not a type name (a slice, a map, a function type).
fn go_place(
    t: &str,
    from: &FileFacts,
    names: &dyn Fn(&str) -> Option<Option<String>>,
) -> Option<Option<(String, String)>> {
    let t = t.trim_start_matches('*').trim();
    let t = t.split('[').next().unwrap_or(t);
    if GO_BUILTIN_TYPES.contains(&t) {
        return Some(None);
    }
    Some(go_qualified(t, from, names)?.map(|(d, n)| (d, n.to_string())))
}

/// `pkg.N` or `N` written in file `f` → (the package's directory, `N`);
/// `Some(None)`: `pkg` is a package outside the repository; `None`:
/// neither form, or no import of that name.
fn go_qualified<'t>(
    t: &'t str,
    f: &FileFacts,
    names: &dyn Fn(&str) -> Option<Option<String>>,
) -> Option<Option<(String, &'t str)>> {
    match t.split_once('.') {
        Some((p, n)) if is_word(p) && is_word(n) => Some(names(p)?.map(|d| (d, n))),
        None if is_word(t) => Some(Some((dir_of(&f.path).to_string(), t))),
        _ => None,
    }
}

/// A package-level type `ty` of the package in `dir` (not one a function
/// declares); of its per-platform definitions, the one a file at `caller`
/// builds with.
fn go_type_def(idx: &Index, dir: &str, ty: &str, caller: &str) -> Option<SymRef> {
    let sym = |r: &SymRef| &idx.files[r.0 as usize].symbols[r.1 as usize];
    let defs: Vec<&SymRef> = idx
        .by_dir_name
        .get(&(dir, ty))?
        .iter()
        .filter(|r| kind_ok(sym(r).kind, true) && &*sym(r).qname == ty)
        .collect();
    go_pick(idx, &defs, caller)
}

/// A type as a declaration writes it (a field's, a variable's, a
/// function's result), to be read by [`go_type_sym`]: never one of the
/// forms resolution writes (`(T).f`, `(T).M()`, `var x`), which a
/// declaration cannot hold but a damaged one might, and which would lead
/// resolution round in circles.
fn go_declared_type(t: &str) -> Option<&str> {
    (!t.starts_with('(') && !t.starts_with("var ")).then_some(t)
}

/// The type definition a Go type expression names, seen from file `f`,
/// with the file the expression was last read in (whose platform picks
/// among a package's per-platform definitions): `T`, `*pkg.T`; `(T).M()`,
/// the first result of `T`'s method `M`; `F()` / `pkg.F()`, a function's
/// first result (or `T(x)`, a conversion); `(T).f`, the declared type of
/// `T`'s field `f`; `var x`, a package-level variable's declared type.
/// `Some(None)`: a builtin type or a package outside the repository;
/// `None`: not placed (nor is the result of a method, or a field, of a
/// type outside the repository).
fn go_type_sym<'a>(
    idx: &Index<'a>,
    f: &'a FileFacts,
    t: &str,
    go_names: &dyn Fn(&str) -> Option<Option<String>>,
    modules: &Modules,
) -> Option<Option<(SymRef, &'a FileFacts)>> {
    let names_of = |ff: &'a FileFacts| move |p: &str| go_import_dir(idx, ff, p, modules);
    // A form (`(T).M()`, `(T).f`, `var x`, `F()`, `(xs)[]`): the type its
    // declaration writes, read as the file that writes it names it.
    let Some((text, tf)) = go_type_text(idx, f, t, go_names, modules)? else {
        return Some(None);
    };
    if !std::ptr::eq(tf, f) {
        return go_type_sym(idx, tf, &text, &names_of(tf), modules);
    }
    if text != t {
        return go_type_sym(idx, f, &text, go_names, modules);
    }
    let (dir, ty) = match go_place(t, f, go_names)? {
        Some(x) => x,
        None => return Some(None),
    };
    let mut found = (go_type_def(idx, &dir, &ty, &f.path)?, f);
    // An alias (`type TypeParamList = types.TypeParamList`) stands for the
    // type it names, as its own file names it (feature 30).
    for _ in 0..4 {
        let df = &idx.files[found.0 .0 as usize];
        let Some(a) = go_type_of(df, found.0 .1).and_then(|u| u.strip_prefix('=')) else {
            break;
        };
        match go_place(a.trim(), df, &names_of(df))? {
            Some((d, n)) => found = (go_type_def(idx, &d, &n, &df.path)?, df),
            None => return Some(None),
        }
    }
    Some(Some(found))
}

fn exists<'a>(idx: &'a Index, p: &str) -> Option<&'a str> {
    idx.paths.get_key_value(p).map(|(k, _)| *k)
}

fn resolve_import(idx: &Index, f: &FileFacts, spec: &str, modules: &Modules) -> Option<String> {
    let dir = dir_of(&f.path);
    match f.lang {
        Lang::Python => {
            let (dots, rest) = (
                spec.len() - spec.trim_start_matches('.').len(),
                spec.trim_start_matches('.'),
            );
            let full = if dots > 0 {
                let info = modules.of(&f.path, Lang::Python);
                let mut base: Vec<&str> = info
                    .module_path
                    .as_deref()
                    .map(|m| m.split('.').collect())
                    .unwrap_or_default();
                for _ in 1..dots {
                    base.pop()?;
                }
                let mut s = base.join(".");
                if !rest.is_empty() {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(rest);
                }
                s
            } else {
                spec.to_string()
            };
            if let Some(p) = idx.py_modules.get(full.as_str()) {
                return Some(p.to_string());
            }
            let parent = full.rsplit_once('.').map(|(a, _)| a)?;
            idx.py_modules.get(parent).map(|p| p.to_string())
        }
        Lang::Go => idx.go_packages.get(spec).cloned().or_else(|| {
            // A vendored copy: `vendor/<spec>` in the importing file's
            // directory or the nearest above it that has one (Go's
            // `vendor` directories; go-stdlib's `src/vendor/golang.org/x/…`).
            let mut d = dir;
            loop {
                let cand = match d {
                    "" => format!("vendor/{spec}"),
                    _ => format!("{d}/vendor/{spec}"),
                };
                if idx.dirs.contains(&cand) {
                    return Some(cand);
                }
                if d.is_empty() {
                    return None;
                }
                d = dir_of(d);
            }
        }),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
            let (base, rest) = if spec.starts_with('.') {
                (normalize(&join(dir, spec))?, String::new())
            } else {
                let mut segs = spec.splitn(3, '/');
                let first = segs.next()?;
                let (pkg, rest) = if first.starts_with('@') {
                    let second = segs.next().unwrap_or("");
                    (
                        format!("{first}/{second}"),
                        segs.next().unwrap_or("").to_string(),
                    )
                } else {
                    let r: Vec<&str> = spec.splitn(2, '/').collect();
                    (
                        first.to_string(),
                        r.get(1).copied().unwrap_or("").to_string(),
                    )
                };
                let pdir = idx.npm.get(&pkg)?;
                if rest.is_empty() {
                    return Some(pdir.clone());
                }
                (normalize(&join(pdir, &rest))?, rest)
            };
            let _ = rest;
            for suffix in [
                "",
                ".ts",
                ".tsx",
                ".d.ts",
                ".js",
                ".jsx",
                ".mjs",
                ".cjs",
                "/index.ts",
                "/index.tsx",
                "/index.js",
                "/index.jsx",
                "/index.mjs",
            ] {
                // `..` from a directory below the root: the root's index.
                let cand = match base.is_empty() {
                    true if !suffix.starts_with('/') => continue,
                    true => suffix[1..].to_string(),
                    false => format!("{base}{suffix}"),
                };
                if let Some(p) = exists(idx, &cand) {
                    return Some(p.to_string());
                }
            }
            // TS writes "./x.js" for "./x.ts".
            if let Some(stem) = base.strip_suffix(".js") {
                for suffix in [".ts", ".tsx"] {
                    if let Some(p) = exists(idx, &format!("{stem}{suffix}")) {
                        return Some(p.to_string());
                    }
                }
            }
            None
        }
        Lang::Rust => resolve_rust(idx, f, spec, modules),
        Lang::Java => {
            let s = spec.trim_end_matches(".*");
            let want = format!("{}.java", s.replace('.', "/"));
            let base = want.rsplit('/').next()?;
            let cands = idx.by_basename.get(base)?;
            cands
                .iter()
                .filter(|p| {
                    p.ends_with(&want)
                        && (p.len() == want.len() || p.as_bytes()[p.len() - want.len() - 1] == b'/')
                })
                .min_by_key(|p| (p.len(), **p))
                .map(|p| p.to_string())
        }
        Lang::C | Lang::Cpp => {
            let quoted = spec.starts_with('"');
            let inner = spec.trim_matches(|c| c == '"' || c == '<' || c == '>');
            if quoted {
                if let Some(p) = normalize(&join(dir, inner)).and_then(|p| exists(idx, &p)) {
                    return Some(p.to_string());
                }
            }
            let base = inner.rsplit('/').next()?;
            let cands = idx.by_basename.get(base)?;
            let suffix = format!("/{inner}");
            cands
                .iter()
                .filter(|p| **p == inner || p.ends_with(&suffix))
                .min_by_key(|p| (!p.contains("include/"), p.len(), **p))
                .map(|p| p.to_string())
        }
        _ => None,
    }
}

fn resolve_rust(idx: &Index, f: &FileFacts, spec: &str, modules: &Modules) -> Option<String> {
    let dir = dir_of(&f.path);
    let fname = f.path.rsplit('/').next().unwrap_or("");
    // Directory holding this module's children.
    let self_dir = if matches!(fname, "mod.rs" | "lib.rs" | "main.rs") {
        dir.to_string()
    } else {
        join(dir, fname.trim_end_matches(".rs"))
    };
    let try_mod = |base: &str, segs: &[&str]| -> Option<String> {
        for k in (1..=segs.len()).rev() {
            let p = join(base, &segs[..k].join("/"));
            for cand in [format!("{p}.rs"), format!("{p}/mod.rs")] {
                if let Some(x) = exists(idx, &cand) {
                    return Some(x.to_string());
                }
            }
        }
        None
    };
    if let Some(m) = spec.strip_prefix("mod ") {
        return try_mod(&self_dir, &[m]);
    }
    let segs: Vec<&str> = spec.split("::").filter(|s| !s.is_empty()).collect();
    let first = *segs.first()?;
    match first {
        "crate" => {
            let cdir = modules.crate_dir_of(dir)?;
            let src = join(&cdir, "src");
            try_mod(&src, &segs[1..])
                .or_else(|| exists(idx, &join(&src, "lib.rs")).map(|s| s.to_string()))
        }
        // (`self` alone: this file's module; feature 53)
        "self" if segs.len() == 1 => Some(f.path.clone()),
        "self" => try_mod(&self_dir, &segs[1..]),
        "super" => {
            let mut base = if matches!(fname, "mod.rs" | "lib.rs" | "main.rs") {
                dir_of(dir).to_string()
            } else {
                dir.to_string()
            };
            let mut rest = &segs[1..];
            while rest.first() == Some(&"super") {
                base = dir_of(&base).to_string();
                rest = &rest[1..];
            }
            try_mod(&base, rest).or_else(|| {
                let parent_file = format!("{base}.rs");
                exists(idx, &parent_file)
                    .or_else(|| exists(idx, &join(&base, "mod.rs")))
                    .map(|s| s.to_string())
            })
        }
        name => match idx.crates.get(name) {
            Some(cdir) => {
                let src = join(cdir, "src");
                try_mod(&src, &segs[1..])
                    .or_else(|| exists(idx, &join(&src, "lib.rs")).map(|s| s.to_string()))
            }
            // Rust 2018's paths: `use sleep::sleep;` under `mod sleep;`
            // names the child module.
            None => try_mod(&self_dir, &segs),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_paths() {
        assert_eq!(normalize("a/b/../c/./d").as_deref(), Some("a/c/d"));
        assert_eq!(normalize("../x"), None);
        assert_eq!(simple_name("models.Model"), "Model");
        assert_eq!(simple_name("Vec<T>"), "Vec");
    }

    #[test]
    fn go_field_types_read_from_declarations() {
        let r = |q: &str, s: &str| {
            go_field_types(q, s)
                .into_iter()
                .map(|(a, b)| format!("{a}: {b}"))
                .collect::<Vec<_>>()
        };
        assert_eq!(r("Server.mu", "mu sync.Mutex"), ["Server.mu: sync.Mutex"]);
        assert_eq!(
            r("Server.a", "a, b *Conn"),
            ["Server.a: *Conn", "Server.b: *Conn"]
        );
        assert_eq!(
            r("T.conns", "conns map[string]*Conn `json:\"c\"`"),
            ["T.conns: map[string]*Conn"]
        );
        assert_eq!(r("T.s", "s string \"x\""), ["T.s: string"]);
        assert_eq!(r("T.f", "f func() error"), ["T.f: func() error"]);
        assert!(r("f", "f int").is_empty());
        assert!(r("T.f", "f").is_empty());
    }

    #[test]
    fn rust_alias_targets_read_from_declarations() {
        let t = |s: &str| rust_alias_target(s);
        assert_eq!(
            t("pub type ParseStream<'a> = &'a ParseBuffer<'a>;").as_deref(),
            Some("&'a ParseBuffer<'a>")
        );
        assert_eq!(
            t("type Foo<T = u8> = crate::bar::Baz<T>;").as_deref(),
            Some("crate::bar::Baz<T>")
        );
        assert_eq!(
            t("pub type Result<T, E = Error> = core::result::Result<T, E>;").as_deref(),
            Some("core::result::Result<T, E>")
        );
        // cut at the line's end: the path, not a pointer without its content
        assert_eq!(
            t("type D<T, B> = proto::h1::Dispatcher<").as_deref(),
            Some("proto::h1::Dispatcher")
        );
        assert_eq!(t("type H = Arc<"), None);
        assert_eq!(t("pub(crate) type Result<T> ="), None);
    }

    #[test]
    fn rust_declared_values_read_from_signatures() {
        let r = |sig: &str| rust_return_type(sig);
        assert_eq!(
            r("pub fn build(&self) -> Ignore {").as_deref(),
            Some("Ignore")
        );
        assert_eq!(
            r("fn parse<T: Parse>(self) -> Result<T> where T: Sized {").as_deref(),
            Some("Result<T>")
        );
        assert_eq!(r("pub fn go(&self)"), None);
        // the return's arrow, not a bound's or a parameter's
        assert_eq!(
            r("pub fn with<F>(self, f: F) -> Pool where F: FnOnce() -> Other").as_deref(),
            Some("Pool")
        );
        assert_eq!(r("fn b<F: Fn() -> X>(f: F) -> Y").as_deref(), Some("Y"));
        assert_eq!(r("fn on(&mut self, f: impl Fn(u8) -> Widget)"), None);
        assert_eq!(
            rust_returns("fn name(&mut self, n: &str) -> &mut Self", "B"),
            RET_SELF
        );
        let v = |ret: &str, tried: bool| rust_declared_value(ret, tried);
        assert_eq!(v("Ignore", false).as_deref(), Some("Ignore"));
        assert_eq!(v("&mut Builder", false).as_deref(), Some("Builder"));
        assert_eq!(v("Result<Parser, Error>", true).as_deref(), Some("Parser"));
        assert_eq!(v("Option<Box<Node<'a>>>", true).as_deref(), Some("Node"));
        for (ret, tried) in [
            ("Result<Parser, Error>", false),
            ("Parser", true),
            ("Self", false),
            ("Self::Output", false),
            ("impl Iterator<Item = u8>", false),
            ("(A, B)", false),
        ] {
            assert_eq!(v(ret, tried), None, "{ret}");
        }
    }

    #[test]
    fn rust_receivers_settled_and_headed() {
        // (feature 34)
        let s = |q: &str| rust_settle(q, false);
        assert_eq!(s("Foo::open(p).unwrap()"), "Foo::open(p)?");
        assert_eq!(s("open().await?"), "open()?");
        assert_eq!(s("open().await.unwrap()"), "open()?");
        assert_eq!(
            s("b.try_build().expect(f(\"x\")).stack(1)"),
            "b.try_build()?.stack(1)"
        );
        assert_eq!(s("m.get(k).unwrap_or_default()"), "m.get(k)?");
        assert_eq!(s("x.unwrap_or_else(|| f(1)).go()"), "x?.go()");
        assert_eq!(s("Arc::new(s).clone().acquire()"), "Arc::new(s).acquire()");
        assert_eq!(s("self.clone().go()"), "self.clone().go()");
        assert_eq!(s("self.a.clone()"), "self.a");
        assert_eq!(rust_settle("h.clone().go()", true), "h.clone().go()");
        // not a method of that name: `unwrapped()`, a field `.awaited`, `unwrap` not called
        assert_eq!(s("a.unwrapped().awaited"), "a.unwrapped().awaited");
        assert_eq!(s("a.unwrap"), "a.unwrap");
        // unbalanced: kept as written
        assert_eq!(s("a.expect(b"), "a.expect(b");
        let h = rust_head_type;
        assert_eq!(h("<Vec<u8>>v.iter()"), (Some("Vec<u8>"), "v.iter()"));
        assert_eq!(
            h("<impl Fn(u8) -> X>f.call()"),
            (Some("impl Fn(u8) -> X"), "f.call()")
        );
        assert_eq!(h("f(x).g()"), (None, "f(x).g()"));
        assert_eq!(h("<Vec<u8"), (None, ""));
    }

    #[test]
    fn rust_type_params_read_from_declarations() {
        let p = rust_type_params;
        assert_eq!(
            p("Pair", "pub struct Pair<'a, A1: Clone, B1 = u8> {").as_deref(),
            Some("'a,A1,B1")
        );
        assert_eq!(
            p(
                "Map",
                "pub(crate) struct Map<I, F: Fn(u8) -> X> where I: Iterator {"
            )
            .as_deref(),
            Some("I,F")
        );
        assert_eq!(
            p("Arr", "struct Arr<const N: usize>;").as_deref(),
            Some("N")
        );
        assert_eq!(p("Plain", "pub struct Plain {"), None);
    }

    #[test]
    fn rust_elements_read_from_containers() {
        let e = |t: &str| rust_element(t);
        assert_eq!(e("Vec<Item>").as_deref(), Some("Item"));
        assert_eq!(e("&'a [Hir]").as_deref(), Some("Hir"));
        assert_eq!(
            e("&mut std::collections::VecDeque<Task<S>>").as_deref(),
            Some("Task<S>")
        );
        assert_eq!(e("[Slot; 4]").as_deref(), Some("Slot"));
        assert_eq!(e("Box<[StateID]>").as_deref(), Some("StateID"));
        assert_eq!(e("Option<Pool>").as_deref(), Some("Pool"));
        assert_eq!(e("HashMap<K, V>"), None);
        assert_eq!(e("Item"), None);
        // feature 54: iterators a signature declares
        assert_eq!(e("impl Iterator<Item = &Arg> + '_").as_deref(), Some("Arg"));
        assert_eq!(
            e("impl DoubleEndedIterator<Item = (usize, &'a str)>").as_deref(),
            Some("(usize, &'a str)")
        );
        assert_eq!(e("impl Fn(u8) -> u8"), None);
        assert_eq!(e("std::slice::Iter<'_, Hir>").as_deref(), Some("Hir"));
        // feature 56: `Self` in a walked method's signature
        assert_eq!(rust_replace_self("Option<&Self>", "Node"), "Option<&Node>");
        assert_eq!(rust_replace_self("Vec<Box<Self>>", "N"), "Vec<Box<N>>");
        assert_eq!(rust_replace_self("SelfRef<Self_>", "N"), "SelfRef<Self_>");
    }

    #[test]
    fn rust_callbacks_read_from_signatures() {
        let c = |s: &str| {
            rust_callback_params(s)
                .into_iter()
                .map(|(i, a)| (i, a.into_iter().map(|x| x.map(|x| x.to_string())).collect()))
                .collect::<Vec<(u8, Vec<Option<String>>)>>()
        };
        let some = |v: &[&str]| v.iter().map(|x| Some(x.to_string())).collect::<Vec<_>>();
        assert_eq!(
            c("fn enter<F, R>(&self, core: Box<Core>, f: F) -> (Box<Core>, R) where F: FnOnce(Box<Core>, &Context) -> R,"),
            vec![(1, some(&["Box<Core>", "&Context"]))]
        );
        assert_eq!(
            c("pub fn scope<'scope, OP, R>(op: OP) -> R where OP: FnOnce(&Scope<'scope>) -> R + Send, R: Send,"),
            vec![(0, some(&["&Scope<'scope>"]))]
        );
        assert_eq!(
            c("pub fn with_lock<R>(&self, f: impl FnOnce(&mut T) -> R) -> R"),
            vec![(0, some(&["&mut T"]))]
        );
        assert_eq!(
            c("fn each<F: FnMut(usize, &Item)>(&mut self, mut f: F)"),
            vec![(0, some(&["usize", "&Item"]))]
        );
        assert_eq!(c("fn plain(&self, x: u8) -> u8"), vec![]);
    }

    #[test]
    fn rust_paths_read_as_they_name_the_function() {
        let n = rust_path_named;
        assert_eq!(n("<T as Parser>::parse"), "Parser::parse");
        assert_eq!(
            n("<Self as crate::CommandFactory>::command"),
            "crate::CommandFactory::command"
        );
        assert_eq!(n("<Vec<u8>>::new"), "Vec::new");
        assert_eq!(
            n("RangedI64ValueParser::<i64>::new"),
            "RangedI64ValueParser::new"
        );
        assert_eq!(n("Box::<dyn Fn(u8) -> u8 + Send>::from"), "Box::from");
        assert_eq!(n("x.collect::<Vec<_>>"), "x.collect");
        assert_eq!(n("Foo::new(a).m"), "Foo::new(a).m");
        assert_eq!(n("a.b(x < y).c"), "a.b(x < y).c");
    }

    #[test]
    fn rust_tuple_fields_read_from_declarations() {
        let t = rust_tuple_fields;
        assert_eq!(t("Literal", "Literal(Literal)"), ["Literal"]);
        assert_eq!(
            t(
                "Id",
                "pub struct Id(pub(crate) u32, #[doc(hidden)] pub Box<dyn Fn(u8) -> (u8, u8)>);"
            ),
            ["u32", "Box<dyn Fn(u8) -> (u8, u8)>"]
        );
        assert_eq!(
            t(
                "Wrap",
                "struct Wrap<T: Into<u8>>(\n    // the value\n    T,\n) where T: Copy;"
            ),
            ["T"]
        );
        assert_eq!(t("Two", "Two(u8, Map<K, V>,)"), ["u8", "Map<K, V>"]);
        assert_eq!(
            t("Nfa", "pub struct Nfa(\n    // shared, and so cheap /* to clone */\n    Arc<Inner>, /* a, b */ u8\n);"),
            ["Arc<Inner>", "u8"]
        );
        assert_eq!(
            t(
                "H2",
                "pub struct H2(/* see https://x.com/a, /* nested) */ b */ pub u8, pub Pool);"
            ),
            ["u8", "Pool"]
        );
        assert_eq!(
            t(
                "H3",
                "pub struct H3(#[doc = \"see https://x, y\"] pub u8, // 1) the pool\n pub Pool);"
            ),
            ["u8", "Pool"]
        );
        // a unit variant, a braced struct (a `Plain(` in its body is not its), a discriminant
        assert!(t("Empty", "Empty").is_empty());
        assert!(t("Plain", "pub struct Plain { f: fn(Plain) }").is_empty());
        assert!(t("Start", "Start = 1 << 0").is_empty());
    }

    #[test]
    fn rust_pointers_stand_for_their_values() {
        let u = rust_unpointer;
        assert_eq!(u("Pin::new(&mut self.io)"), "self.io");
        assert_eq!(u("Arc::new(Semaphore::new(1))"), "Semaphore::new(1)");
        assert_eq!(u("std::sync::Arc::clone(&shared)"), "shared");
        assert_eq!(u("Box::pin(Box::new(make(a, b)))"), "make(a, b)");
        assert_eq!(u("Pin::new(&mut *self)"), "self");
        // two arguments, not a pointer's constructor, a method after it: as written
        assert_eq!(u("Arc::new_in(a, b)"), "Arc::new_in(a, b)");
        assert_eq!(u("Mutex::new(x)"), "Mutex::new(x)");
        assert_eq!(
            u("Pin::new(&mut x).get_mut()"),
            "Pin::new(&mut x).get_mut()"
        );
    }

    #[test]
    fn rust_bounds_split_outside_brackets() {
        assert_eq!(
            rust_bounds("A + B<Box<dyn Send + Sync>> + Fn(u8) -> X + 'a"),
            vec!["A", "B<Box<dyn Send + Sync>>", "Fn(u8) -> X", "'a"]
        );
        assert_eq!(
            rust_bounds("Conv<Box<dyn Send + Sync>>"),
            vec!["Conv<Box<dyn Send + Sync>>"]
        );
    }

    #[test]
    fn rust_expressions_read_segment_by_segment() {
        // (feature 37)
        let g = rust_segments;
        assert_eq!(
            g("self.raw.header().state"),
            Some(vec![
                ("self", false, false),
                ("raw", false, false),
                ("header", true, false),
                ("state", false, false)
            ])
        );
        assert_eq!(
            g("Foo::<u8>::open(p, (a, b))?.inner.0"),
            Some(vec![
                ("Foo::<u8>::open", true, true),
                ("inner", false, false),
                ("0", false, false)
            ])
        );
        assert_eq!(
            g("v.iter().collect::<Vec<_>>().len"),
            Some(vec![
                ("v", false, false),
                ("iter", true, false),
                ("collect", true, false),
                ("len", false, false)
            ])
        );
        for q in [
            "a[0].b", "(a).b", "a.b(", "a..b", "*a.b", "a as B", "", "a.b()()",
        ] {
            assert_eq!(g(q), None, "{q}");
        }
    }

    #[test]
    fn rust_value_ctors_read_from_receivers() {
        let v = |q: &str| rust_value_ctor(q);
        assert_eq!(
            v("ThreadPoolBuilder::new()").as_deref(),
            Some("ThreadPoolBuilder::new()")
        );
        assert_eq!(v("Finder::new(n)?").as_deref(), Some("Finder::new()?"));
        assert_eq!(v("Usage::new(self.cmd)").as_deref(), Some("Usage::new()"));
        assert_eq!(v("Sender::<i32>::new()").as_deref(), Some("Sender::new()"));
        assert_eq!(
            v("crate::tests::Runner::new(f(3), (a, b))").as_deref(),
            Some("crate::tests::Runner::new()")
        );
        for q in [
            "self.x()",
            "foo(3)",
            "(…)",
            "a.b::c()",
            "Foo::new(x).m()",
            "Foo::new",
        ] {
            assert_eq!(v(q), None, "{q}");
        }
    }

    #[test]
    fn py_values_read_from_declarations() {
        let v = |n: &str, s: &str| py_value(n, s);
        assert_eq!(
            v("request_finished", "request_finished = Signal()").as_deref(),
            Some("Signal()")
        );
        assert_eq!(
            v("pre_init", "pre_init = ModelSignal(use_caching=True)").as_deref(),
            Some("ModelSignal()")
        );
        assert_eq!(
            v("register", "register = template.Library()").as_deref(),
            Some("template.Library()")
        );
        assert_eq!(v("D", "D = Distance").as_deref(), Some("Distance"));
        assert_eq!(v("a", "a = b = Foo()").as_deref(), Some("Foo()"));
        assert_eq!(v("x", "x: Optional[Foo] = None").as_deref(), Some("Foo()"));
        assert_eq!(v("f", "f = Foo(default = Bar())").as_deref(), Some("Foo()"));
        assert_eq!(v("g", "g = Foo()  # the default").as_deref(), Some("Foo()"));
        assert_eq!(v("cut", "cut = Builder(").as_deref(), Some("Builder()"));
        for (n, s) in [
            ("N", "N = 5"),
            ("S", "S = 'a'"),
            ("L", "L = [Foo()]"),
            ("C", "C = caches[DEFAULT]"),
            ("E", "E == 1"),
            ("T", "T = a + b"),
            ("P", "P = struct.Struct(\">B\").pack"),
            ("I", "I = Foo()[0]"),
            ("O", "O = Foo() or None"),
            ("V", "V = Cmd().version if x else None"),
            ("Q", "Q = a == Foo()"),
        ] {
            assert_eq!(v(n, s), None, "{s}");
        }
    }

    #[test]
    fn py_call_receivers_read_as_values() {
        let r = |q: &str| py_call_receiver(q);
        assert_eq!(
            r("CommonMiddleware(get_response)").as_deref(),
            Some("CommonMiddleware()")
        );
        assert_eq!(r("models.F(\"a(b\")").as_deref(), None);
        assert_eq!(r("F(\"a.b\")").as_deref(), Some("F()"));
        assert_eq!(
            r("QuerySet().filter(a=f(1)).exclude(b=2)").as_deref(),
            Some("<<QuerySet()>_.filter()>_.exclude()")
        );
        for q in [
            "self.backend()",
            "cls.make(1)",
            "super()",
            "f(a)(b)",
            "f(a)[0]",
            "f(a).b",
            "x",
        ] {
            assert_eq!(r(q), None, "{q}");
        }
    }

    #[test]
    fn py_return_values_read_from_bodies() {
        let r = |sig: &str, body: &str| py_return_value(sig, body);
        let m = "    def from_string(self, code):\n        \"\"\"\n        return Nope(code)\n        \"\"\"\n        return Template(code, engine=self)\n";
        assert_eq!(
            r("def from_string(self, code)", m).as_deref(),
            Some("Template()")
        );
        let two = "def f(x):\n    if x:\n        return None\n    if not x: return\n    return forms.Form(\n        x,\n    )\n";
        assert_eq!(r("def f(x)", two).as_deref(), Some("forms.Form()"));
        let local = "def f(x):\n    obj = Foo(x)\n    obj.a = 1\n    return obj\n";
        assert_eq!(r("def f(x)", local).as_deref(), Some("Foo()"));
        let chained = "    @classmethod\n    def make(cls, a):\n        return cls(a)\n";
        assert_eq!(r("def make(cls, a)", chained).as_deref(), Some("cls()"));
        let own = "    def all(self):\n        return self._chain()\n";
        assert_eq!(r("def all(self)", own).as_deref(), Some("self._chain()"));
        let me = "    def add(self, x):\n        self.x = x  # return Foo()\n        return self\n";
        assert_eq!(r("def add(self, x)", me).as_deref(), Some("self"));
        let nested = "def deco(f):\n    def inner(*a):\n        return Bar()\n    return Foo()\n";
        assert_eq!(r("def deco(f)", nested).as_deref(), Some("Foo()"));
        assert_eq!(
            r("def f(a) -> Optional['Foo']", "").as_deref(),
            Some("Foo()")
        );
        assert_eq!(r("def f(a) -> Self", "").as_deref(), Some("self"));
        assert_eq!(r("def f(a) -> None", "def f(a):\n    return Foo()\n"), None);
        for body in [
            "def f(x):\n    if x:\n        return Foo()\n    return Bar()\n",
            "def f(x):\n    if x: return Bar()\n    return Foo()\n",
            "def f(x):\n    return x\n",
            "def f(x):\n    obj = Foo()\n    obj = Bar()\n    return obj\n",
            "def f(x):\n    obj = Foo()\n    obj += 1\n    return obj\n",
            "def f(x):\n    yield Foo()\n    return Foo()\n",
            "def f(x):\n    return Foo(x).bar\n",
            "def f(x):\n    return super().f(x)\n",
            "def f(x):\n    return [Foo()]\n",
            "def f(x):\n    pass\n",
            // (review of feature 59) a coroutine; what follows a multi-line call; names the
            // function binds itself; a returned local bound otherwise too
            "async def f(x):\n    return Foo()\n",
            "def f(x):\n    return Foo(\n        a=x,\n    ).where(b=1)\n",
            "def f(x):\n    class Foo:\n        pass\n    return Foo()\n",
            "def f(x):\n    Foo = Bar\n    return Foo()\n",
            "def f(x):\n    obj = Foo()\n    if (obj := Bar()):\n        pass\n    return obj\n",
            "def f(x):\n    obj = Foo()\n    with Bar() as obj:\n        pass\n    return obj\n",
        ] {
            assert_eq!(r("def f(x)", body), None, "{body}");
        }
        assert_eq!(r("def f(Foo)", "def f(Foo):\n    return Foo()\n"), None);
        // (a local import is read as the module's names are; `global` binds nothing new)
        let local_import = "def f(x):\n    from n import Foo\n    return Foo()\n";
        assert_eq!(r("def f(x)", local_import).as_deref(), Some("Foo()"));
        let kind = "    def copy(self):\n        return type(self)(self.a)\n";
        assert_eq!(
            r("def copy(self)", kind).as_deref(),
            Some("self.__class__()")
        );
        let typed = "async def f(x) -> Foo:\n    return Foo()\n";
        assert_eq!(r("async def f(x) -> Foo", typed), None);
        let global = "def f(x):\n    global obj\n    obj = Foo()\n    return obj\n";
        assert_eq!(r("def f(x)", global).as_deref(), Some("Foo()"));
        assert_eq!(
            r(
                "def f(x)",
                "def f(x):\n    return Foo(\n        a=x,\n    )\n"
            )
            .as_deref(),
            Some("Foo()")
        );
        assert_eq!(
            r("def m(self)", "def m(self): return Foo()\n").as_deref(),
            Some("Foo()")
        );
        assert_eq!(
            r(
                "def f(x)",
                "def f(x):\n    return (\n        Foo(x)\n    )\n"
            )
            .as_deref(),
            Some("Foo()")
        );
        assert!(py_result_kept([
            "@staticmethod",
            "@functools.lru_cache(maxsize=None)"
        ]));
        assert!(py_result_kept(["@login_required", "@classmethod"]));
        assert!(!py_result_kept(["@typing.overload"]));
        assert!(!py_result_kept(["@contextlib.contextmanager"]));
    }

    #[test]
    fn py_builtin_methods_sorted() {
        assert!(PY_BUILTIN_METHODS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn rust_std_methods_sorted() {
        assert!(RUST_STD_METHODS.windows(2).all(|w| w[0] < w[1]));
    }

    fn go_elem_text(t: &str) -> String {
        t.strip_prefix("[]").unwrap().to_string()
    }

    #[test]
    fn go_type_declarations_read_for_elements_and_aliases() {
        assert_eq!(
            go_underlying("items", "items []*Item").as_deref(),
            Some("[]*Item")
        );
        assert_eq!(
            go_underlying("m", "m map[string]T // by name").as_deref(),
            Some("map[string]T")
        );
        assert_eq!(
            go_underlying("A", "A = types.B").as_deref(),
            Some("= types.B")
        );
        assert_eq!(
            go_underlying("c", "c <-chan Event").as_deref(),
            Some("<-chan Event")
        );
        // a generic's, a struct's and a defined type's are not read
        assert_eq!(go_underlying("L", "L[T any] []T"), None);
        assert_eq!(go_underlying("S", "S struct {"), None);
        assert_eq!(go_underlying("D", "D int"), None);
        assert_eq!(go_group("((T).f)[]"), Some(("(T).f", "[]")));
        assert_eq!(go_group("(a(b)).M()"), Some(("a(b)", ".M()")));
        assert_eq!(go_group("[]*T"), None);
        let table =
            "[]struct { in string; a, b *big.Int; want map[string]int `json:\"w\"`; sync.Mutex }";
        let row = &go_elem_text(table);
        assert_eq!(go_struct_field(row, "b").as_deref(), Some("*big.Int"));
        assert_eq!(
            go_struct_field(row, "want").as_deref(),
            Some("map[string]int")
        );
        assert_eq!(go_struct_field(row, "Mutex").as_deref(), Some("sync.Mutex"));
        assert_eq!(go_struct_field(row, "nope"), None);
        assert_eq!(go_struct_field("Named", "in"), None);
    }

    #[test]
    fn go_var_types_read_from_declarations() {
        let r = |n: &str, s: &str| go_var_type(n, s);
        assert_eq!(r("Glob", "Glob int").as_deref(), Some("int"));
        assert_eq!(r("db", "db *sql.DB").as_deref(), Some("*sql.DB"));
        assert_eq!(r("c", "c Client = Client{}").as_deref(), Some("Client"));
        assert_eq!(
            r("DefaultClient", "DefaultClient = &Client{}").as_deref(),
            Some("*Client")
        );
        assert_eq!(r("pool", "pool = sync.Pool").as_deref(), Some("sync.Pool"));
        assert_eq!(r("p", "p = new(state)").as_deref(), Some("*state"));
        assert_eq!(
            r("Std", "Std = NewEncoding(encodeStd)").as_deref(),
            Some("NewEncoding()")
        );
        assert_eq!(
            r("ErrX", "ErrX = errors.New(\"x\")").as_deref(),
            Some("errors.New()")
        );
        assert_eq!(r("a", "a, b *T").as_deref(), Some("*T"));
        assert_eq!(r("f", "f format = 0x2B").as_deref(), Some("format"));
        assert_eq!(r("a", "a, b = 1, 2"), None);
        assert_eq!(r("n", "n = 0x6"), None);
        assert_eq!(r("s", "s = \"go test\""), None);
        assert_eq!(r("t", "t = []FieldsTest"), None);
        assert_eq!(r("AMOVMSKPD", "AMOVMSKPD"), None);
        assert_eq!(r("ab", "abc int"), None);
        assert_eq!(r("x", "x T =").as_deref(), Some("T"));
        assert_eq!(r("b", "b = NewB().Build()"), None);
        assert_eq!(r("v", "v = T{}.M()"), None);
        assert_eq!(r("e", "e = F()[0]"), None);
        assert_eq!(r("m", "m = F(a,").as_deref(), Some("F()"));
    }

    #[test]
    fn ts_callback_params_read_from_signatures() {
        let r = |s: &str| {
            ts_callback_params(s)
                .into_iter()
                .map(|(i, v)| {
                    let v: Vec<String> = v
                        .into_iter()
                        .map(|t| t.map_or("-".to_string(), |t| t.to_string()))
                        .collect();
                    format!("{i}:{}", v.join(","))
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            r("export function operate<T, R>( init: (liftedSource: Observable<T>, subscriber: Subscriber<R>) => (() => void) | void ): OperatorFunction<T, R>"),
            ["0:Observable,Subscriber"]
        );
        assert_eq!(
            r("function mergeInternals<T, R>( source: Observable<T>, subscriber: Subscriber<R>, project: (value: T, index: number) => ObservableInput<R>, onBeforeNext?: (innerValue: R) => void )"),
            Vec::<String>::new()
        );
        assert_eq!(
            r("subscribe(next?: ((value: T) => void) | null, error?: ((error: any) => void) | null)"),
            Vec::<String>::new()
        );
        assert_eq!(
            r("run(f: <A>(ctx: ns.Context<A> | undefined, a: A) => void, n: number)"),
            ["0:ns.Context,-"]
        );
        assert_eq!(
            r("function f(this: Ctx, cb: (s: Subscriber<R | undefined>) => void)"),
            ["0:Subscriber"]
        );
        assert!(looks_generic("TData") && looks_generic("T") && !looks_generic("TCPSocket"));
        assert_eq!(r("const x = 1"), Vec::<String>::new());
        assert_eq!(r("f = (a: Foo) => a.bar()"), Vec::<String>::new());
    }

    #[test]
    fn ts_return_types_and_receiver_segments() {
        assert_eq!(
            ts_return_type("getQueryCache(): QueryCache").as_deref(),
            Some("QueryCache")
        );
        assert_eq!(
            ts_return_type("export function innerFrom<O extends ObservableInput<any>>(input: O): Observable<ObservedValueOf<O>>").as_deref(),
            Some("Observable")
        );
        assert_eq!(ts_return_type("find<T>(filters: F): T | undefined"), None);
        assert_eq!(
            ts_return_type("setOptions(o?: Opts): this").as_deref(),
            Some("this")
        );
        assert_eq!(ts_return_type("isOnline(): boolean"), None);
        assert_eq!(ts_return_type("mount(): void {"), None);
        assert_eq!(ts_return_type("isFoo(x: any): x is Foo"), None);
        assert_eq!(ts_return_type("f = (a: A): B => a.b"), None);
        assert_eq!(
            js_segments("this.#client .getQueryCache()"),
            Some(vec![
                ("this", false),
                ("#client", false),
                ("getQueryCache", true)
            ])
        );
        assert_eq!(
            js_segments("innerFrom(notifier(x)).pipe<T>(a, b)"),
            Some(vec![("innerFrom", true), ("pipe", true)])
        );
        assert_eq!(js_segments("concatAll()(from(x))"), None);
        assert_eq!(js_segments("xs[0].a"), None);
        assert_eq!(js_segments("a?.b!"), Some(vec![("a", false), ("b", false)]));
    }

    #[test]
    fn go_first_results_read_from_signatures() {
        let r = |s: &str| go_first_result(s);
        assert_eq!(
            r("func Open(name string) (*File, error)").as_deref(),
            Some("*File")
        );
        assert_eq!(
            r("func (f *File) Read(b []byte) (n int, err error)").as_deref(),
            Some("int")
        );
        assert_eq!(
            r("func NewReader(rd io.Reader) *Reader").as_deref(),
            Some("*Reader")
        );
        assert_eq!(
            r("func (l *Loader) toLocal(i Sym) int {").as_deref(),
            Some("int")
        );
        assert_eq!(
            r("func New[T any](x T) *List[T]").as_deref(),
            Some("*List[T]")
        );
        assert_eq!(
            r("func (c *common) Errorf(format string, args ...any)"),
            None
        );
        assert_eq!(r("func f() (a, b int)").as_deref(), Some("int"));
        assert_eq!(
            r("func f() (func() error, bool)").as_deref(),
            Some("func() error")
        );
        // an interface's method
        assert_eq!(
            r("Read(p []byte) (n int, err error)").as_deref(),
            Some("int")
        );
    }

    #[test]
    fn receiver_types_read_as_the_language_does() {
        // What a constructor returns, by its signature.
        assert_eq!(rust_returns("pub fn new() -> Self", "Foo"), RET_SELF);
        assert_eq!(rust_returns("fn new(x: u8) -> Foo<T>", "Foo"), RET_SELF);
        assert_eq!(rust_returns("fn shared() -> Arc<Self>", "Foo"), RET_SELF);
        assert_eq!(
            rust_returns("fn open(p: &Path) -> io::Result<Self>", "Foo"),
            RET_SELF_RESULT
        );
        assert_eq!(
            rust_returns("fn get() -> Option<Foo> where T: Clone", "Foo"),
            RET_SELF_RESULT
        );
        assert_eq!(rust_returns("fn builder() -> FooBuilder", "Foo"), 0);
        assert_eq!(rust_returns("fn len(&self) -> usize", "Foo"), 0);
        assert_eq!(rust_returns("fn run(&self)", "Foo"), 0);
        // The type a declared receiver's methods come from.
        let t = |s: &str| rust_receiver_type(s);
        assert_eq!(t("&mut Context<'_>").as_deref(), Some("Context"));
        assert_eq!(
            t("&'a crate::dfa::DFA<Vec<u32>>").as_deref(),
            Some("crate::dfa::DFA")
        );
        assert_eq!(t("Box<dyn Strategy + Send>").as_deref(), Some("Strategy"));
        assert_eq!(t("Pin<&mut Sleep>").as_deref(), Some("Sleep"));
        assert_eq!(t("impl Read").as_deref(), Some("Read"));
        assert_eq!(t("&[u8]"), None);
        assert_eq!(t("(A, B)"), None);
        // A Python annotation naming one class.
        let a = |s: &str| python_annotation_type(s);
        assert_eq!(a("Form").as_deref(), Some("Form"));
        assert_eq!(a("\"forms.Form\"").as_deref(), Some("forms.Form"));
        assert_eq!(a("Optional[Form]").as_deref(), Some("Form"));
        assert_eq!(a("Form | None").as_deref(), Some("Form"));
        assert_eq!(a("list[Form]"), None);
        assert_eq!(a("Form | Other"), None);
    }
}
