//! Module inference: which module each file belongs to. Configured modules
//! win; otherwise the nearest `Cargo.toml`, `package.json` or `go.mod`, or
//! the top of a chain of Python packages (`__init__.py`).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use crate::config::{Config, ModuleConfig};
use crate::language::Lang;

/// Module facts of one file (the `module_*` and `submodule` columns).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModuleInfo {
    pub module_path: Option<String>,
    pub module_root: Option<String>,
    pub submodule: Option<String>,
}

#[derive(Clone, Debug)]
enum Marker {
    Cargo(String),
    Npm(String),
    Go(String),
}

/// A configured module: (path, display name, [(submodule path, submodule name)]).
type Configured = (String, Option<String>, Vec<(String, String)>);

/// The module map of a tree.
pub struct Modules {
    markers: BTreeMap<String, Marker>,
    py_packages: HashSet<String>,
    configured: Vec<Configured>,
}

fn parent(dir: &str) -> Option<&str> {
    if dir.is_empty() {
        None
    } else {
        Some(dir.rfind('/').map(|i| &dir[..i]).unwrap_or(""))
    }
}

fn dir_of(path: &str) -> &str {
    path.rfind('/').map(|i| &path[..i]).unwrap_or("")
}

fn under(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path == dir
        || (path.starts_with(dir) && path.as_bytes().get(dir.len()) == Some(&b'/'))
}

fn rel_below<'a>(path: &'a str, dir: &str) -> &'a str {
    if dir.is_empty() {
        path
    } else {
        path.get(dir.len() + 1..).unwrap_or("")
    }
}

impl Modules {
    /// Build from the sorted list of repo-relative paths; reads the small marker files.
    pub fn infer(root: &Path, paths: &[String], cfg: &Config) -> Modules {
        let mut markers = BTreeMap::new();
        let mut py_packages = HashSet::new();
        for p in paths {
            let name = p.rsplit('/').next().unwrap_or(p);
            let dir = dir_of(p).to_string();
            match name {
                "__init__.py" => {
                    py_packages.insert(dir);
                }
                "Cargo.toml" => {
                    if let Some(n) = read_small(root, p).and_then(|t| cargo_name(&t)) {
                        markers.insert(dir, Marker::Cargo(n.replace('-', "_")));
                    }
                }
                "package.json" => {
                    if let Some(n) = read_small(root, p).and_then(|t| npm_name(&t)) {
                        markers.insert(dir, Marker::Npm(n));
                    }
                }
                "go.mod" => {
                    if let Some(n) = read_small(root, p).and_then(|t| go_module(&t)) {
                        markers.insert(dir, Marker::Go(n));
                    }
                }
                _ => {}
            }
        }
        let configured = flatten(&cfg.modules);
        // A configured module no indexed file is under is most likely a typo
        // or a moved directory: say so (the build goes on; it describes nothing).
        for (mpath, _, subs) in &configured {
            for p in std::iter::once(mpath).chain(subs.iter().map(|(s, _)| s)) {
                let prefix = format!("{p}/");
                if !paths.iter().any(|f| f == p || f.starts_with(&prefix)) {
                    eprintln!(
                        "warning: the configured module path {p:?} holds no indexed file (check `modules` in {})",
                        crate::config::CONFIG_FILE
                    );
                }
            }
        }
        Modules {
            markers,
            py_packages,
            configured,
        }
    }

    /// Module facts of one file.
    pub fn of(&self, path: &str, lang: Lang) -> ModuleInfo {
        let dir = dir_of(path);
        // Configured modules: the longest path containing the file.
        if let Some((mpath, name, subs)) = self
            .configured
            .iter()
            .filter(|(m, _, _)| under(dir, m) || under(path, m))
            .max_by_key(|(m, _, _)| m.len())
        {
            let sub = subs
                .iter()
                .filter(|(s, _)| under(path, s))
                .max_by_key(|(s, _)| s.len())
                .map(|(_, n)| n.clone())
                .or_else(|| first_component(rel_below(dir, mpath)));
            let module_path = match name {
                Some(n) if dir == mpath => Some(n.clone()),
                Some(n) => Some(format!("{n}/{}", rel_below(dir, mpath))),
                None => non_empty(dir),
            };
            return ModuleInfo {
                module_path,
                module_root: Some(mpath.clone()),
                submodule: sub,
            };
        }
        let marker = self.nearest_marker(dir);
        let py_root = if lang == Lang::Python || self.py_packages.contains(dir) {
            self.python_top(dir)
        } else {
            None
        };
        let (module_root, module_path) = match (py_root, &marker) {
            (Some(top), _) => {
                let base = parent(&top).unwrap_or("");
                let dotted = rel_below(dir, base).replace('/', ".");
                (Some(top.clone()), non_empty(&dotted))
            }
            (None, Some((mdir, m))) => {
                let rel = rel_below(dir, mdir);
                let mp = match m {
                    Marker::Go(name) => {
                        if name == "std" {
                            non_empty(rel)
                        } else if rel.is_empty() {
                            Some(name.clone())
                        } else {
                            Some(format!("{name}/{rel}"))
                        }
                    }
                    Marker::Npm(name) => Some(if rel.is_empty() {
                        name.clone()
                    } else {
                        format!("{name}/{rel}")
                    }),
                    Marker::Cargo(name) => {
                        let inner = rel
                            .strip_prefix("src")
                            .map(|r| r.trim_start_matches('/'))
                            .unwrap_or(rel);
                        Some(if inner.is_empty() {
                            name.clone()
                        } else {
                            format!("{name}::{}", inner.replace('/', "::"))
                        })
                    }
                };
                (Some(mdir.clone()), mp)
            }
            (None, None) => (None, non_empty(dir)),
        };
        let submodule = module_root
            .as_deref()
            .and_then(|r| first_component(rel_below(dir, r)));
        ModuleInfo {
            module_path,
            module_root,
            submodule,
        }
    }

    fn nearest_marker(&self, dir: &str) -> Option<(String, Marker)> {
        let mut d = Some(dir);
        while let Some(cur) = d {
            if let Some(m) = self.markers.get(cur) {
                return Some((cur.to_string(), m.clone()));
            }
            d = parent(cur);
        }
        None
    }

    /// Top-most directory of the chain of Python packages containing `dir`.
    fn python_top(&self, dir: &str) -> Option<String> {
        if !self.py_packages.contains(dir) {
            return None;
        }
        let mut top = dir;
        while let Some(p) = parent(top) {
            if p.is_empty() || !self.py_packages.contains(p) {
                break;
            }
            top = p;
        }
        Some(top.to_string())
    }

    /// Go import path → package directory, for import resolution.
    pub fn go_packages(&self, dirs: &HashSet<String>) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for d in dirs {
            if let Some((mdir, Marker::Go(name))) = self.nearest_marker(d) {
                let rel = rel_below(d, &mdir);
                let ip = if name == "std" {
                    rel.to_string()
                } else if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{name}/{rel}")
                };
                if !ip.is_empty() {
                    out.insert(ip, d.clone());
                }
            }
        }
        out
    }

    /// npm package name → its directory.
    pub fn npm_packages(&self) -> BTreeMap<String, String> {
        self.markers
            .iter()
            .filter_map(|(d, m)| match m {
                Marker::Npm(n) => Some((n.clone(), d.clone())),
                _ => None,
            })
            .collect()
    }

    /// Rust crate name → its directory.
    pub fn crates(&self) -> BTreeMap<String, String> {
        self.markers
            .iter()
            .filter_map(|(d, m)| match m {
                Marker::Cargo(n) => Some((n.clone(), d.clone())),
                _ => None,
            })
            .collect()
    }

    /// Directory of the nearest Cargo crate above `dir`.
    pub fn crate_dir_of(&self, dir: &str) -> Option<String> {
        let mut d = Some(dir);
        while let Some(cur) = d {
            if let Some(Marker::Cargo(_)) = self.markers.get(cur) {
                return Some(cur.to_string());
            }
            d = parent(cur);
        }
        None
    }
}

fn flatten(mods: &[ModuleConfig]) -> Vec<Configured> {
    let mut out = Vec::new();
    for m in mods {
        let path = m.path.trim_matches('/').to_string();
        let subs = m
            .submodules
            .iter()
            .map(|s| {
                let sp = s.path.trim_matches('/');
                let full = if sp.starts_with(&path) {
                    sp.to_string()
                } else {
                    format!("{path}/{sp}")
                };
                let name = s
                    .name
                    .clone()
                    .unwrap_or_else(|| full.rsplit('/').next().unwrap_or(&full).to_string());
                (full, name)
            })
            .collect();
        out.push((path, m.name.clone(), subs));
    }
    out
}

fn first_component(rel: &str) -> Option<String> {
    rel.split('/')
        .next()
        .filter(|s| !s.is_empty())
        .map(|s| s.to_string())
}

fn non_empty(s: &str) -> Option<String> {
    if s.is_empty() {
        None
    } else {
        Some(s.to_string())
    }
}

fn read_small(root: &Path, rel: &str) -> Option<String> {
    let p = root.join(rel);
    let meta = std::fs::metadata(&p).ok()?;
    if meta.len() > 1 << 20 {
        return None;
    }
    std::fs::read_to_string(p).ok()
}

fn cargo_name(t: &str) -> Option<String> {
    let mut in_package = false;
    for l in t.lines() {
        let l = l.trim();
        if l.starts_with('[') {
            in_package = l == "[package]";
            continue;
        }
        if in_package {
            if let Some(rest) = l.strip_prefix("name") {
                let v = rest
                    .trim_start()
                    .strip_prefix('=')?
                    .trim()
                    .trim_matches('"')
                    .trim_matches('\'');
                return Some(v.to_string());
            }
        }
    }
    None
}

fn npm_name(t: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(t).ok()?;
    v.get("name")?.as_str().map(|s| s.to_string())
}

fn go_module(t: &str) -> Option<String> {
    t.lines().find_map(|l| {
        l.trim()
            .strip_prefix("module ")
            .map(|m| m.trim().trim_matches('"').to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_chain_and_configured() {
        let paths: Vec<String> = [
            "pkg/__init__.py",
            "pkg/db/__init__.py",
            "pkg/db/q.py",
            "tools/x.py",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let m = Modules::infer(Path::new("/nonexistent"), &paths, &Config::default());
        let i = m.of("pkg/db/q.py", Lang::Python);
        assert_eq!(i.module_path.as_deref(), Some("pkg.db"));
        assert_eq!(i.module_root.as_deref(), Some("pkg"));
        assert_eq!(i.submodule.as_deref(), Some("db"));
        assert_eq!(m.of("tools/x.py", Lang::Python).module_root, None);
        let cfg = Config {
            modules: vec![ModuleConfig {
                path: "tools".into(),
                name: Some("Tools".into()),
                description: None,
                submodules: vec![],
            }],
            ..Default::default()
        };
        let m = Modules::infer(Path::new("/nonexistent"), &paths, &cfg);
        let i = m.of("tools/x.py", Lang::Python);
        assert_eq!(i.module_root.as_deref(), Some("tools"));
        assert_eq!(i.module_path.as_deref(), Some("Tools"));
    }

    #[test]
    fn manifest_parsers() {
        assert_eq!(
            cargo_name("[package]\nname = \"serde-json\"\n").as_deref(),
            Some("serde-json")
        );
        assert_eq!(npm_name("{\"name\": \"rxjs\"}").as_deref(), Some("rxjs"));
        assert_eq!(
            go_module("// c\nmodule std\n\ngo 1.19\n").as_deref(),
            Some("std")
        );
    }
}
