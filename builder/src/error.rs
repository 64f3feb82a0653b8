//! Errors as values: each carries a stable code, the path it concerns and a
//! hint that tells the user how to fix it.

use std::fmt;
use std::path::{Path, PathBuf};

/// A builder error: `code` is stable and machine-readable, `hint` says what to do.
#[derive(Debug)]
pub struct Error {
    pub code: &'static str,
    pub message: String,
    pub hint: String,
    pub path: Option<PathBuf>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: &'static str, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            hint: hint.into(),
            path: None,
        }
    }

    pub fn at(mut self, path: &Path) -> Self {
        self.path = Some(path.to_path_buf());
        self
    }

    /// An I/O failure on `path` while doing `what`.
    pub fn io(code: &'static str, what: &str, path: &Path, e: std::io::Error, hint: &str) -> Self {
        Error::new(code, format!("{what} '{}': {e}", path.display()), hint).at(path)
    }

    /// Exit code for the CLI: 2 for bad input, 1 for internal failures.
    pub fn exit_code(&self) -> i32 {
        if self.code.starts_with("E_INTERNAL") || self.code == "E_WRITE" {
            1
        } else {
            2
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "error[{}]: {}\n  hint: {}",
            self.code, self.message, self.hint
        )
    }
}

impl std::error::Error for Error {}

/// Error codes, in one place so the README can list them.
pub mod codes {
    pub const REPO_NOT_FOUND: &str = "E_REPO_NOT_FOUND";
    pub const REPO_NOT_DIR: &str = "E_REPO_NOT_DIR";
    pub const UNREADABLE_FILE: &str = "E_UNREADABLE_FILE";
    pub const CONFIG_PARSE: &str = "E_CONFIG_PARSE";
    pub const CONFIG_GLOB: &str = "E_CONFIG_GLOB";
    pub const CONFIG_EXISTS: &str = "E_CONFIG_EXISTS";
    pub const OUT_DIR: &str = "E_OUT_DIR";
    pub const SNAPSHOT_INVALID: &str = "E_SNAPSHOT_INVALID";
    pub const PREVIOUS_INVALID: &str = "E_PREVIOUS_INVALID";
    pub const WALK: &str = "E_WALK";
    pub const WRITE: &str = "E_WRITE";
    pub const EMBEDDING_CACHE: &str = "E_EMBEDDING_CACHE";
    pub const SECRETS_FOUND: &str = "E_SECRETS_FOUND";
    pub const SIGNING_KEY: &str = "E_SIGNING_KEY";
    pub const KEY_EXISTS: &str = "E_KEY_EXISTS";
    pub const INTERNAL: &str = "E_INTERNAL";
}
