//! Errors as values: each carries a stable code, the path it concerns and a
//! hint that tells the user how to fix it. The type is the workspace's one
//! [`Diagnostic`]; `main` prints it with its `Display` and exits with
//! [`Diagnostic::exit_code`].

pub use code_index_schemas::diag::{Code, Diagnostic};

/// A builder error: `code` is stable and machine-readable, `hint` says what to do.
pub type Error = Diagnostic;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The builder's names for its codes (the README lists them).
pub mod codes {
    use super::Code;
    pub const REPO_NOT_FOUND: Code = Code::RepoNotFound;
    pub const REPO_NOT_DIR: Code = Code::RepoNotDir;
    pub const UNREADABLE_FILE: Code = Code::UnreadableFile;
    pub const CONFIG_PARSE: Code = Code::ConfigParse;
    pub const CONFIG_GLOB: Code = Code::ConfigGlob;
    pub const CONFIG_EXISTS: Code = Code::ConfigExists;
    pub const OUT_DIR: Code = Code::OutDir;
    pub const SNAPSHOT_INVALID: Code = Code::SnapshotInvalid;
    pub const PREVIOUS_INVALID: Code = Code::PreviousInvalid;
    pub const WALK: Code = Code::Walk;
    pub const WRITE: Code = Code::Write;
    pub const EMBEDDING_CACHE: Code = Code::EmbeddingCache;
    pub const SECRETS_FOUND: Code = Code::SecretsFound;
    pub const SIGNING_KEY: Code = Code::SigningKey;
    pub const KEY_EXISTS: Code = Code::KeyExists;
    pub const NO_SNAPSHOT: Code = Code::NoSnapshot;
    pub const CONFIG_CHANGED: Code = Code::ConfigChanged;
    pub const BUSY: Code = Code::Busy;
    pub const NOT_GIT: Code = Code::NotGit;
    pub const NO_METRICS: Code = Code::NoMetrics;
    pub const INTERNAL: Code = Code::BuilderInternal;
}
