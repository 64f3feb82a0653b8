//! Per-repository configuration: `.code-index.yaml`, or the `code-index:` key
//! of `.ai-devtools.yaml`. Every field is optional; unknown keys are errors so
//! a typo is caught rather than ignored.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::error::{codes, Error, Result};

pub const CONFIG_FILE: &str = ".code-index.yaml";
pub const AI_DEVTOOLS_FILE: &str = ".ai-devtools.yaml";
/// Default size limit: none, as ripgrep (which has no cap). `max_file_size`
/// (config or `--max-file-size`) skips and counts larger files.
pub const DEFAULT_MAX_FILE_SIZE: u64 = u64::MAX;
/// Files larger than this are indexed as text only (searchable by grep,
/// `search` and `read_file`): no tree-sitter parse, symbols or chunks.
pub const PARSE_MAX_BYTES: u64 = 1024 * 1024;

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Repository name used in snapshot paths (default: the directory name).
    pub name: Option<String>,
    pub default_branch: Option<String>,
    /// Where `sync` gets the newest published snapshot instead of building
    /// (`…/<repo>-latest.manifest.json` from `ci/publish-snapshot.sh`, or
    /// any URL `code-index-mcp --index` takes). Not part of the config hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_url: Option<String>,
    /// When non-empty, only files matching one of these globs are indexed.
    #[serde(default)]
    pub include: Vec<String>,
    /// Files matching these globs are left out.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Files matching these are indexed even if ignore files or default
    /// exclusions would drop them.
    #[serde(default)]
    pub include_override: Vec<String>,
    pub max_file_size: Option<u64>,
    /// Follow symbolic links, as `rg -L` does: a linked file is indexed
    /// under the link's path, a linked directory is walked (loops are
    /// skipped). Default: links are not followed, as ripgrep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_symlinks: Option<bool>,
    #[serde(default)]
    pub modules: Vec<ModuleConfig>,
    pub navigation_docs: Option<NavigationDocs>,
    /// Globs marking test files; replaces the defaults when given.
    pub test_patterns: Option<Vec<String>>,
    #[serde(default)]
    pub secrets: SecretsConfig,
    /// Directories where pattern detection looks for families of similar
    /// files (default: every directory).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pattern_dirs: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModuleConfig {
    /// Repo-relative directory of the module.
    pub path: String,
    pub name: Option<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub submodules: Vec<ModuleConfig>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NavigationDocs {
    #[serde(default = "default_nav_patterns")]
    pub patterns: Vec<String>,
    #[serde(default = "default_nav_boost")]
    pub boost: f32,
}

impl Default for NavigationDocs {
    fn default() -> Self {
        NavigationDocs {
            patterns: default_nav_patterns(),
            boost: default_nav_boost(),
        }
    }
}

fn default_nav_patterns() -> Vec<String> {
    [
        "AGENTS.md",
        "CLAUDE.md",
        "README.md",
        "README.rst",
        "README",
        "ARCHITECTURE.md",
        "docs/**",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn default_nav_boost() -> f32 {
    1.5
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SecretsConfig {
    /// Path globs whose findings are ignored (not redacted, not listed).
    #[serde(default)]
    pub ignore: Vec<String>,
    /// Exact secret values known to be harmless (e.g. documented examples).
    #[serde(default)]
    pub ignore_values: Vec<String>,
    /// What a build does with a secret: `redact` it (the default) or `fail`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<SecretsAction>,
}

/// What `index` does when it finds secrets.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SecretsAction {
    /// Mask them (same length, '*') in the snapshot.
    Redact,
    /// Write no snapshot; list them (kind, path, line, fingerprint) and exit 2.
    Fail,
}

/// Default test patterns (used when the config gives none).
pub const DEFAULT_TEST_PATTERNS: &[&str] = &[
    "**/test/**",
    "**/tests/**",
    "**/__tests__/**",
    "**/testdata/**",
    "**/testing/**",
    "test_*.py",
    "*_test.py",
    "tests.py",
    "conftest.py",
    "*_test.go",
    "*.test.js",
    "*.test.ts",
    "*.test.tsx",
    "*.test.jsx",
    "*.spec.js",
    "*.spec.ts",
    "*.spec.tsx",
    "*Test.java",
    "*Tests.java",
    "**/src/test/**",
    "**/spec/**",
    "*_test.cc",
    "*_test.cpp",
    "*_unittest.cc",
    "*_test.c",
    "test_*.c",
    "test_*.cpp",
    "*.test.mjs",
    "*.spec.mjs",
    "*_test.rb",
    "*_spec.rb",
    "*_test.exs",
    "*Test.kt",
    "*Tests.kt",
    "*Spec.kt",
    "*Test.swift",
    "*Tests.swift",
    "*Spec.swift",
    "*Test.scala",
    "*Spec.scala",
    "*Suite.scala",
    "*Test.php",
    "*Test.cs",
    "*Tests.cs",
    "*_test.dart",
    "*_spec.lua",
    "*_test.lua",
];

/// A compiled glob list with the matching rule of `rg -g`: a glob without
/// '/' matches the file name at any depth, one with '/' the whole path.
#[derive(Clone, Debug)]
pub struct Globs {
    set: GlobSet,
    empty: bool,
}

impl Globs {
    pub fn new(globs: &[String], source: &Path, field: &str) -> Result<Globs> {
        let mut b = GlobSetBuilder::new();
        for g in globs {
            let pattern = if g.contains('/') {
                g.trim_start_matches('/').to_string()
            } else {
                format!("**/{g}")
            };
            let glob = GlobBuilder::new(&pattern)
                .literal_separator(true)
                .build()
                .map_err(|e| {
                    Error::new(
                        codes::CONFIG_GLOB,
                        format!(
                            "invalid glob {g:?} in `{field}` of {}: {e}",
                            source.display()
                        ),
                        format!(
                            "fix or remove the glob in {} (syntax: *, **, ?, [abc], {{a,b}})",
                            source.display()
                        ),
                    )
                    .at(source)
                })?;
            b.add(glob);
            // "docs" should also cover everything below a directory named so.
            if !g.contains('*') && !g.contains('?') && !g.contains('[') {
                if let Ok(dir) = Glob::new(&format!("{}/**", pattern.trim_end_matches('/'))) {
                    b.add(dir);
                }
            }
        }
        let set = b.build().map_err(|e| {
            Error::new(
                codes::CONFIG_GLOB,
                format!("invalid globs in {}: {e}", source.display()),
                "fix the globs",
            )
        })?;
        Ok(Globs {
            set,
            empty: globs.is_empty(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.empty
    }

    pub fn is_match(&self, rel_path: &str) -> bool {
        !self.empty && self.set.is_match(rel_path)
    }
}

/// Configuration after loading: the raw config plus compiled globs.
#[derive(Clone, Debug)]
pub struct Effective {
    pub config: Config,
    /// Where it came from (repo-relative name), if a file existed.
    pub source: Option<String>,
    pub include: Globs,
    pub exclude: Globs,
    pub include_override: Globs,
    pub tests: Globs,
    pub nav_docs: Globs,
    pub nav_boost: f32,
    pub secrets_ignore: Globs,
    pub max_file_size: u64,
    /// Walk through symbolic links (`follow_symlinks`, `--follow-symlinks`).
    pub follow_symlinks: bool,
    /// sha256 of the canonical JSON of the effective settings.
    pub hash: String,
}

#[derive(Deserialize)]
struct AiDevtools {
    #[serde(rename = "code-index")]
    code_index: Option<serde_yaml::Value>,
}

/// Load the config of `repo` (or defaults when there is none).
pub fn load(repo: &Path, max_file_size_flag: Option<u64>) -> Result<Effective> {
    load_with(repo, max_file_size_flag, false)
}

/// [`load`], with `--follow-symlinks` given on the command line (it sets
/// the config's `follow_symlinks`).
pub fn load_with(
    repo: &Path,
    max_file_size_flag: Option<u64>,
    follow_flag: bool,
) -> Result<Effective> {
    let primary = repo.join(CONFIG_FILE);
    let secondary = repo.join(AI_DEVTOOLS_FILE);
    let (mut config, source) = if primary.is_file() {
        let text = read(&primary)?;
        (
            parse_config(&text, &primary)?,
            Some(CONFIG_FILE.to_string()),
        )
    } else if secondary.is_file() {
        let text = read(&secondary)?;
        let outer: AiDevtools =
            serde_yaml::from_str(&text).map_err(|e| yaml_error(&secondary, e))?;
        match outer.code_index {
            Some(v) => {
                let cfg: Config =
                    serde_yaml::from_value(v).map_err(|e| yaml_error(&secondary, e))?;
                (cfg, Some(format!("{AI_DEVTOOLS_FILE}#code-index")))
            }
            None => (Config::default(), None),
        }
    } else {
        (Config::default(), None)
    };
    let src_path: PathBuf = match &source {
        Some(s) if s.starts_with(AI_DEVTOOLS_FILE) => secondary.clone(),
        _ => primary.clone(),
    };
    if follow_flag {
        config.follow_symlinks = Some(true);
    }
    effective(config, source, &src_path, max_file_size_flag)
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        Error::io(
            codes::CONFIG_PARSE,
            "cannot read config file",
            path,
            e,
            "make the file readable UTF-8 text, or delete it to use defaults",
        )
    })
}

fn yaml_error(path: &Path, e: serde_yaml::Error) -> Error {
    let at = e
        .location()
        .map(|l| format!(" at line {}, column {}", l.line(), l.column()))
        .unwrap_or_default();
    Error::new(
        codes::CONFIG_PARSE,
        format!("broken config file {}{at}: {e}", path.display()),
        format!(
            "fix the YAML in {} (run `code-indexer init --force` for a fresh starter file; valid keys: name, default_branch, snapshot_url, include, exclude, include_override, max_file_size, follow_symlinks, modules, navigation_docs, test_patterns, secrets, pattern_dirs)",
            path.display()
        ),
    )
    .at(path)
}

pub fn parse_config(text: &str, path: &Path) -> Result<Config> {
    if text.trim().is_empty() {
        return Ok(Config::default());
    }
    serde_yaml::from_str(text).map_err(|e| yaml_error(path, e))
}

pub fn effective(
    config: Config,
    source: Option<String>,
    src_path: &Path,
    max_flag: Option<u64>,
) -> Result<Effective> {
    let tests_list: Vec<String> = config.test_patterns.clone().unwrap_or_else(|| {
        DEFAULT_TEST_PATTERNS
            .iter()
            .map(|s| s.to_string())
            .collect()
    });
    let nav = config.navigation_docs.clone().unwrap_or_default();
    let max_file_size = max_flag
        .or(config.max_file_size)
        .unwrap_or(DEFAULT_MAX_FILE_SIZE);
    // `secrets.action` decides whether a build happens, not what it writes:
    // it stays out of the hash, so both modes give the same snapshot id.
    let mut hashed = config.clone();
    hashed.secrets.action = None;
    hashed.snapshot_url = None;
    let canonical = serde_json::json!({
        "config": hashed,
        "max_file_size": max_file_size,
        "test_patterns": tests_list,
        "navigation_docs": nav,
    });
    let hash = crate::ids::sha256_hex(canonical.to_string().as_bytes());
    Ok(Effective {
        include: Globs::new(&config.include, src_path, "include")?,
        exclude: Globs::new(&config.exclude, src_path, "exclude")?,
        include_override: Globs::new(&config.include_override, src_path, "include_override")?,
        tests: Globs::new(&tests_list, src_path, "test_patterns")?,
        nav_docs: Globs::new(&nav.patterns, src_path, "navigation_docs.patterns")?,
        nav_boost: nav.boost,
        secrets_ignore: Globs::new(&config.secrets.ignore, src_path, "secrets.ignore")?,
        max_file_size,
        follow_symlinks: config.follow_symlinks.unwrap_or(false),
        hash,
        config,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_rules_follow_rg() {
        let g = Globs::new(
            &["*.py".into(), "docs/**".into(), "vendor".into()],
            Path::new("x"),
            "t",
        )
        .unwrap();
        assert!(g.is_match("a/b/c.py"));
        assert!(g.is_match("docs/x/y.md"));
        assert!(!g.is_match("src/docs.md"));
        assert!(g.is_match("third/vendor/x.c"));
    }

    #[test]
    fn invalid_glob_is_a_coded_error() {
        let e = Globs::new(&["a[b".into()], Path::new(".code-index.yaml"), "exclude").unwrap_err();
        assert_eq!(e.code, codes::CONFIG_GLOB);
        assert!(e.message.contains("a[b"));
    }

    #[test]
    fn unknown_key_is_an_error() {
        let e = parse_config("nmae: x\n", Path::new(".code-index.yaml")).unwrap_err();
        assert_eq!(e.code, codes::CONFIG_PARSE);
        assert!(e.message.contains("line 1"));
    }

    #[test]
    fn fuzz_config_reader() {
        use code_index_schemas::fuzz;
        use proptest::prelude::*;
        let line = prop_oneof![
            prop::sample::select(vec![
                "name",
                "default_branch",
                "include",
                "exclude",
                "include_override",
                "max_file_size",
                "follow_symlinks",
                "modules",
                "navigation_docs",
                "test_patterns",
                "secrets",
                "pattern_dirs",
                "ignore",
                "ignore_values",
            ])
            .prop_map(|k| format!("{k}:")),
            Just("  - ".to_string()),
            Just("  ".to_string()),
            Just("\n".to_string()),
            Just(": ".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just("{".to_string()),
            Just("&a *a !!binary ".to_string()),
            "[a-z*/.\\[\\]{},!-]{1,8}",
            "-?[0-9]{1,22}",
            any::<char>().prop_map(String::from),
        ];
        let doc = prop::collection::vec(line, 0..40).prop_map(|v| v.concat());
        let path = Path::new(".code-index.yaml");
        fuzz::run("config_reader", doc, |text| {
            match parse_config(&text, path) {
                Ok(c) => {
                    if let Err(e) = effective(c, Some(text.clone()), path, None) {
                        prop_assert!(e.code.as_str().starts_with("E_CONFIG"), "{e}");
                    }
                }
                Err(e) => {
                    prop_assert_eq!(e.code, codes::CONFIG_PARSE);
                    prop_assert!(e.hint.contains(".code-index.yaml"));
                }
            }
            Ok(())
        });
    }
}
