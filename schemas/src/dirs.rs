//! Where code-index keeps things outside a snapshot: one place for the
//! environment variables and defaults that builder and server share.
//!
//! | Directory | Variable | Default |
//! |---|---|---|
//! | cache root | (none) | `$HOME/.cache/code-index` |
//! | embedding cache (builder) | (`--embedding-cache`) | `<root>/embeddings` |
//! | offline model | `CODE_INDEX_MODEL_DIR` | `<root>/models/all-minilm-l6-v2` |
//! | onnxruntime library | `CODE_INDEX_ORT_LIB` | `<root>/onnxruntime/1.31.1/libonnxruntime.so` |
//! | server cache (downloads, table cache) | `CODE_INDEX_CACHE` | `<root>/server` |
//! | server table cache | (under the server cache) | `<server cache>/tables` |
//! | default snapshots (`suggest-context`) | `CODE_INDEX_SNAPSHOTS` | `<root>/snapshots` |
//!
//! A variable that is set wins, even when empty (its value is taken as a
//! path). With `HOME` unset, the embedding cache and the model fall back to
//! `/tmp` as the home; the server cache and the snapshots to an empty home
//! (a path relative to the working directory). Both are kept as they were
//! before this module gathered them.
//!
//! Every function reads the environment when called; [`Dirs::from_vars`]
//! applies the same rules to given values (for tests).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The cache root, relative to the home directory.
pub const CACHE_IN_HOME: &str = ".cache/code-index";
/// Replaces `<root>/server` (parent of `tables/` and `downloads/`).
pub const ENV_CACHE: &str = "CODE_INDEX_CACHE";
/// Replaces `<root>/snapshots`.
pub const ENV_SNAPSHOTS: &str = "CODE_INDEX_SNAPSHOTS";
/// Beside each table cache `<key>.duckdb` in [`Dirs::server_tables`], the
/// server writes `<key>.repos`: the names of the repositories it holds, one
/// per line, so `code-indexer invalidate <repo>` drops only that repo's.
pub const TABLE_CACHE_REPOS_EXT: &str = "repos";
/// The offline model's directory.
pub const ENV_MODEL_DIR: &str = "CODE_INDEX_MODEL_DIR";
/// The offline model's directory name under `<root>/models`.
pub const DEFAULT_MODEL: &str = "all-minilm-l6-v2";
/// The onnxruntime shared library (a file path).
pub const ENV_ORT_LIB: &str = "CODE_INDEX_ORT_LIB";
/// The pinned onnxruntime release (the PyPI wheel setup takes the library from).
pub const ORT_VERSION: &str = "1.31.1";

/// The variables the rules read, captured once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dirs {
    home: Option<OsString>,
    cache: Option<OsString>,
    snapshots: Option<OsString>,
    model_dir: Option<OsString>,
    ort_lib: Option<OsString>,
}

impl Dirs {
    /// The rules over the process environment.
    pub fn from_env() -> Dirs {
        Dirs::from_vars(|k| std::env::var_os(k))
    }

    /// The rules over `get` (name → value, `None` when unset).
    pub fn from_vars(get: impl Fn(&str) -> Option<OsString>) -> Dirs {
        Dirs {
            home: get("HOME"),
            cache: get(ENV_CACHE),
            snapshots: get(ENV_SNAPSHOTS),
            model_dir: get(ENV_MODEL_DIR),
            ort_lib: get(ENV_ORT_LIB),
        }
    }

    /// `$HOME`, if set.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref().map(Path::new)
    }

    /// `<home>/.cache/code-index`, with `unset_home` standing in for an unset `HOME`.
    fn root_or(&self, unset_home: &str) -> PathBuf {
        let home = self.home.clone().unwrap_or_else(|| unset_home.into());
        PathBuf::from(home).join(CACHE_IN_HOME)
    }

    /// The code-index cache root: `$HOME/.cache/code-index` (with `HOME`
    /// unset: `.cache/code-index`, relative to the working directory).
    pub fn cache_root(&self) -> PathBuf {
        self.root_or("")
    }

    /// The builder's default embedding cache: `<root>/embeddings` (with
    /// `HOME` unset: `/tmp/.cache/code-index/embeddings`).
    pub fn embeddings_cache(&self) -> PathBuf {
        self.root_or("/tmp").join("embeddings")
    }

    /// The offline model's directory: `$CODE_INDEX_MODEL_DIR`, else
    /// `<root>/models/all-minilm-l6-v2` (with `HOME` unset under `/tmp`).
    pub fn model_dir(&self) -> PathBuf {
        match &self.model_dir {
            Some(d) => PathBuf::from(d),
            None => self.root_or("/tmp").join("models").join(DEFAULT_MODEL),
        }
    }

    /// The onnxruntime library: `$CODE_INDEX_ORT_LIB`, else
    /// `<root>/onnxruntime/<ORT_VERSION>/libonnxruntime.so` (with `HOME`
    /// unset under `/tmp`).
    pub fn ort_lib(&self) -> PathBuf {
        match &self.ort_lib {
            Some(d) => PathBuf::from(d),
            None => self
                .root_or("/tmp")
                .join("onnxruntime")
                .join(ORT_VERSION)
                .join("libonnxruntime.so"),
        }
    }

    /// The server's cache (downloads and the table cache):
    /// `$CODE_INDEX_CACHE`, else `<root>/server`.
    pub fn server_cache(&self) -> PathBuf {
        match &self.cache {
            Some(d) => PathBuf::from(d),
            None => self.cache_root().join("server"),
        }
    }

    /// The server's DuckDB table cache: `<server cache>/tables`.
    pub fn server_tables(&self) -> PathBuf {
        self.server_cache().join("tables")
    }

    /// Where snapshots are looked for by default (`suggest-context`):
    /// `$CODE_INDEX_SNAPSHOTS`, else `<root>/snapshots`; a repo's are in
    /// `<that>/<repo>/`.
    pub fn snapshots(&self) -> PathBuf {
        match &self.snapshots {
            Some(d) => PathBuf::from(d),
            None => self.cache_root().join("snapshots"),
        }
    }
}

/// [`Dirs::home`] of the environment.
pub fn home() -> Option<PathBuf> {
    Dirs::from_env().home().map(Path::to_path_buf)
}

/// [`Dirs::cache_root`] of the environment.
pub fn cache_root() -> PathBuf {
    Dirs::from_env().cache_root()
}

/// [`Dirs::embeddings_cache`] of the environment.
pub fn embeddings_cache() -> PathBuf {
    Dirs::from_env().embeddings_cache()
}

/// [`Dirs::model_dir`] of the environment.
pub fn model_dir() -> PathBuf {
    Dirs::from_env().model_dir()
}

/// [`Dirs::ort_lib`] of the environment.
pub fn ort_lib() -> PathBuf {
    Dirs::from_env().ort_lib()
}

/// [`Dirs::server_cache`] of the environment.
pub fn server_cache() -> PathBuf {
    Dirs::from_env().server_cache()
}

/// [`Dirs::server_tables`] of the environment.
pub fn server_tables() -> PathBuf {
    Dirs::from_env().server_tables()
}

/// [`Dirs::snapshots`] of the environment.
pub fn snapshots() -> PathBuf {
    Dirs::from_env().snapshots()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn dirs(vars: &[(&str, &str)]) -> Dirs {
        let m: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        Dirs::from_vars(|k| m.get(k).cloned())
    }

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    #[test]
    fn defaults_under_home() {
        let d = dirs(&[("HOME", "/home/u")]);
        assert_eq!(d.home(), Some(Path::new("/home/u")));
        assert_eq!(d.cache_root(), p("/home/u/.cache/code-index"));
        assert_eq!(
            d.embeddings_cache(),
            p("/home/u/.cache/code-index/embeddings")
        );
        assert_eq!(
            d.model_dir(),
            p("/home/u/.cache/code-index/models/all-minilm-l6-v2")
        );
        assert_eq!(d.server_cache(), p("/home/u/.cache/code-index/server"));
        assert_eq!(
            d.server_tables(),
            p("/home/u/.cache/code-index/server/tables")
        );
        assert_eq!(d.snapshots(), p("/home/u/.cache/code-index/snapshots"));
    }

    #[test]
    fn variables_win_over_home() {
        let d = dirs(&[
            ("HOME", "/home/u"),
            ("CODE_INDEX_CACHE", "/c"),
            ("CODE_INDEX_SNAPSHOTS", "/s"),
            ("CODE_INDEX_MODEL_DIR", "/m"),
        ]);
        assert_eq!(d.server_cache(), p("/c"));
        assert_eq!(d.server_tables(), p("/c/tables"));
        assert_eq!(d.snapshots(), p("/s"));
        assert_eq!(d.model_dir(), p("/m"));
        // No variable for these.
        assert_eq!(
            d.embeddings_cache(),
            p("/home/u/.cache/code-index/embeddings")
        );
        assert_eq!(d.cache_root(), p("/home/u/.cache/code-index"));
    }

    #[test]
    fn home_unset_keeps_each_fallback() {
        let d = dirs(&[]);
        assert_eq!(d.home(), None);
        assert_eq!(d.embeddings_cache(), p("/tmp/.cache/code-index/embeddings"));
        assert_eq!(
            d.model_dir(),
            p("/tmp/.cache/code-index/models/all-minilm-l6-v2")
        );
        assert_eq!(d.server_tables(), p(".cache/code-index/server/tables"));
        assert_eq!(d.snapshots(), p(".cache/code-index/snapshots"));
        assert_eq!(d.cache_root(), p(".cache/code-index"));
    }

    #[test]
    fn a_set_but_empty_variable_is_taken_as_is() {
        let d = dirs(&[("HOME", "/h"), ("CODE_INDEX_CACHE", "")]);
        assert_eq!(d.server_cache(), p(""));
        assert_eq!(d.server_tables(), p("tables"));
        let d = dirs(&[("HOME", "")]);
        assert_eq!(d.embeddings_cache(), p(".cache/code-index/embeddings"));
    }
}
