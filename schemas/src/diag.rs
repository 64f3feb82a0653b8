//! Diagnostics: the one error type of code-index. A [`Diagnostic`] is a
//! stable [`Code`], a message saying what happened, a hint saying what to do
//! and, for the builder, the path it concerns.
//!
//! Every code either binary prints or returns is a variant of [`Code`]; its
//! wire string ([`Code::as_str`]) is what users, agents and tests see, so a
//! variant may be added but its string never changes. The crates keep short
//! aliases (`codes::INVALID_ARGUMENT` in the server, `codes::WRITE` in the
//! builder, `signing::codes::MISSING`) that name variants, never strings.
//!
//! # Rendering
//! `Display` gives the form both CLIs print on stderr and the MCP server puts
//! in an error result's text:
//!
//! ```text
//! error[E_REPO_NOT_FOUND]: repository path 'x' does not exist
//!   hint: pass the root directory of a source tree, ...
//! ```
//!
//! Where a diagnostic must fit on one line (a JSON-RPC error message of the
//! `codeindex://relevant` resource), [`Diagnostic::one_line`] formats the same
//! data as `CODE: message (hint: hint)`. The path is not rendered: messages
//! already name the file they concern.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Serialize, Serializer};

/// Declares [`Code`] from one table: variant, wire string and doc line.
macro_rules! codes {
    ($( $(#[doc = $doc:literal])+ $variant:ident = $wire:literal, )+) => {
        /// A stable error code. See the module documentation.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Code {
            $( $(#[doc = $doc])+ $variant, )+
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),+];

            /// The wire string: printed in `error[…]`, returned as `code` in
            /// MCP error results, matched by tests and users.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $wire,)+
                }
            }
        }
    };
}

codes! {
    // ---- MCP tool calls (server): the `code` of an error result.
    /// A missing, mistyped, unknown or out-of-range tool argument, or a path outside the repository.
    InvalidArgument = "INVALID_ARGUMENT",
    /// A regex or glob that does not parse.
    InvalidPattern = "INVALID_PATTERN",
    /// A `search` query naming a field it does not have (`foo:x`).
    UnknownField = "UNKNOWN_FIELD",
    /// A `repo` value that names no loaded snapshot.
    UnknownRepo = "UNKNOWN_REPO",
    /// A `lang` value that names no language of the loaded files.
    UnknownLang = "UNKNOWN_LANG",
    /// A cursor from another query or snapshot, or not a cursor at all.
    InvalidCursor = "INVALID_CURSOR",
    /// A `sql` query that ran past its timeout.
    BudgetExceeded = "BUDGET_EXCEEDED",
    /// A file, symbol or resource that is not in the snapshots.
    NotFound = "NOT_FOUND",
    /// A `search` query over the size, term or nesting limits.
    QueryTooComplex = "QUERY_TOO_COMPLEX",
    /// A bug met while answering a tool call (a panic or a failed internal query), for that call only.
    Internal = "INTERNAL",

    // ---- Embedding models and vector files (schemas `embed`, `vectors`).
    /// A `--model` value (or manifest model id) that is no known model spec.
    UnknownModel = "UNKNOWN_MODEL",
    /// The offline model's files are not installed.
    ModelNotFound = "MODEL_NOT_FOUND",
    /// The offline model's files are there but cannot be loaded.
    ModelInvalid = "MODEL_INVALID",
    /// The offline model's weights are not those a snapshot's vectors were made with.
    ModelMismatch = "MODEL_MISMATCH",
    /// The offline model failed on an input (tokenizer or tensor error).
    EmbedFailed = "EMBED_FAILED",
    /// A remote model needs an API key and the environment has none.
    EmbedKeyMissing = "EMBED_KEY_MISSING",
    /// A remote model's endpoint gave an HTTP error that retrying will not fix (or no HTTP client).
    EmbedHttp = "EMBED_HTTP",
    /// A remote model's endpoint answered something other than embeddings.
    EmbedBadResponse = "EMBED_BAD_RESPONSE",
    /// A remote model's endpoint refused the API key (401, 403).
    EmbedAuth = "EMBED_AUTH",
    /// A remote model's endpoint still failed (network, 429, 5xx) after every retry.
    EmbedUnavailable = "EMBED_UNAVAILABLE",
    /// `vectors.faiss` cannot be built, written or read.
    VectorsFailed = "VECTORS_FAILED",

    // ---- Command lines (`code-indexer`, and `code-index-mcp` loading snapshots).
    /// `code-indexer index`: the repository path does not exist.
    RepoNotFound = "E_REPO_NOT_FOUND",
    /// `code-indexer index`: the repository path is a file.
    RepoNotDir = "E_REPO_NOT_DIR",
    /// A file of the repository cannot be read (without `--skip-unreadable`).
    UnreadableFile = "E_UNREADABLE_FILE",
    /// `.code-index.yaml` (or the `code-index:` key) is not valid YAML or has unknown keys.
    ConfigParse = "E_CONFIG_PARSE",
    /// A glob in the configuration does not parse.
    ConfigGlob = "E_CONFIG_GLOB",
    /// `code-indexer init` would overwrite `.code-index.yaml` (without `--force`).
    ConfigExists = "E_CONFIG_EXISTS",
    /// The output directory cannot be created or used.
    OutDir = "E_OUT_DIR",
    /// A snapshot is missing, damaged, modified or of another schema version (both binaries).
    SnapshotInvalid = "E_SNAPSHOT_INVALID",
    /// The snapshot given to `--previous` cannot be read.
    PreviousInvalid = "E_PREVIOUS_INVALID",
    /// Walking the repository failed (a directory cannot be listed).
    Walk = "E_WALK",
    /// Writing the snapshot failed (disk full, permissions): exit code 1.
    Write = "E_WRITE",
    /// The builder's embedding cache cannot be read or written.
    EmbeddingCache = "E_EMBEDDING_CACHE",
    /// Secrets found with the secrets gate on: nothing is published.
    SecretsFound = "E_SECRETS_FOUND",
    /// A signing or public key that is missing, empty or not an ed25519 key.
    SigningKey = "E_SIGNING_KEY",
    /// `code-indexer keygen` would overwrite a key pair (without `--force`).
    KeyExists = "E_KEY_EXISTS",
    /// `invalidate-file`: a path in no repository (no `.git` or `.code-index.yaml` above it), or a repository without a snapshot to amend.
    NoSnapshot = "E_NO_SNAPSHOT",
    /// `invalidate-file`: the repository's configuration changed since its snapshot was built, so an overlay would not match a full build.
    ConfigChanged = "E_CONFIG_CHANGED",
    /// Another build of the same repository (`index`, `sync`, `watch`) holds its lock.
    Busy = "E_BUSY",
    /// `hooks install`: the repository is no git work tree.
    NotGit = "E_NOT_GIT",
    /// `metrics`: no metrics file to read (nothing recorded yet, or another path).
    NoMetrics = "E_NO_METRICS",
    /// `code-indexer` failed for a reason that is not its input's (a bug, a thread pool that cannot start): exit code 1.
    BuilderInternal = "E_INTERNAL",
    /// A trusted key is configured and the snapshot has no `manifest.sig`.
    SignatureMissing = "E_SIGNATURE_MISSING",
    /// The signature does not verify: the manifest was changed or the file is damaged.
    SignatureInvalid = "E_SIGNATURE_INVALID",
    /// A valid signature by a key that is not trusted.
    SignatureUntrusted = "E_SIGNATURE_UNTRUSTED",
    /// The server cannot write its table cache (`CODE_INDEX_CACHE`).
    Cache = "E_CACHE",
    /// A server setting from the environment is invalid (`CODE_INDEX_DUCKDB_MEMORY`).
    ServerConfig = "E_CONFIG",
}

impl Code {
    /// The code whose wire string is `s`.
    pub fn parse(s: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Serialized as its wire string (`{"code": "NOT_FOUND", ...}`).
impl Serialize for Code {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// An error with a stable code, what happened and what to do about it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnostic {
    pub code: Code,
    pub message: String,
    pub hint: String,
    /// The file or directory it concerns (set by the builder; not rendered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
}

impl Diagnostic {
    pub fn new(
        code: impl Into<Code>,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            code: code.into(),
            message: message.into(),
            hint: hint.into(),
            path: None,
        }
    }

    /// The same diagnostic, about `path`.
    pub fn at(mut self, path: &Path) -> Diagnostic {
        self.path = Some(path.to_path_buf());
        self
    }

    /// An I/O failure on `path` while doing `what`: "{what} '{path}': {e}".
    pub fn io(code: Code, what: &str, path: &Path, e: std::io::Error, hint: &str) -> Diagnostic {
        Diagnostic::new(code, format!("{what} '{}': {e}", path.display()), hint).at(path)
    }

    /// An `INVALID_ARGUMENT` tool error.
    pub fn invalid_argument(message: impl Into<String>, hint: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Code::InvalidArgument, message, hint)
    }

    /// The same error with the hint a caller without grep's flags can act on
    /// (for an INVALID_PATTERN from the grep engine).
    pub fn pattern_hint(self, hint: &str) -> Diagnostic {
        if self.code == Code::InvalidPattern {
            Diagnostic {
                hint: hint.to_string(),
                ..self
            }
        } else {
            self
        }
    }

    /// `code-indexer`'s exit code: 1 for its own failures (`E_INTERNAL`,
    /// `E_WRITE`), 2 for bad input (every other code).
    pub fn exit_code(&self) -> i32 {
        match self.code {
            Code::BuilderInternal | Code::Write => 1,
            _ => 2,
        }
    }

    /// The diagnostic on one line: `CODE: message (hint: hint)`.
    pub fn one_line(&self) -> OneLine<'_> {
        OneLine(self)
    }
}

/// `error[CODE]: message` and, indented on the next line, `hint: hint`.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "error[{}]: {}\n  hint: {}",
            self.code, self.message, self.hint
        )
    }
}

impl std::error::Error for Diagnostic {}

/// [`Diagnostic::one_line`]: the one-line form, where a line break cannot go.
pub struct OneLine<'a>(&'a Diagnostic);

impl fmt::Display for OneLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        write!(f, "{}: {} (hint: {})", d.code, d.message, d.hint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_are_unique_and_parse_back() {
        let mut seen = std::collections::HashSet::new();
        for &c in Code::ALL {
            assert!(seen.insert(c.as_str()), "{} is used twice", c.as_str());
            assert_eq!(Code::parse(c.as_str()), Some(c));
            assert!(c
                .as_str()
                .chars()
                .all(|ch| ch.is_ascii_uppercase() || ch == '_'));
        }
        assert_eq!(Code::parse("SNAPSHOT_INVALID"), None);
    }

    #[test]
    fn display_and_one_line() {
        let d = Diagnostic::new(
            Code::RepoNotFound,
            "repository path 'x' does not exist",
            "pass a directory",
        )
        .at(Path::new("x"));
        assert_eq!(
            d.to_string(),
            "error[E_REPO_NOT_FOUND]: repository path 'x' does not exist\n  hint: pass a directory"
        );
        assert_eq!(
            d.one_line().to_string(),
            "E_REPO_NOT_FOUND: repository path 'x' does not exist (hint: pass a directory)"
        );
    }

    #[test]
    fn serializes_the_wire_string_without_an_absent_path() {
        let d = Diagnostic::new(Code::NotFound, "no file 'a'", "list the files");
        assert_eq!(d.code, Code::NotFound);
        assert_eq!(d.code, "NOT_FOUND");
        assert_eq!(
            serde_json::to_string(&d).unwrap(),
            r#"{"code":"NOT_FOUND","message":"no file 'a'","hint":"list the files"}"#
        );
    }

    #[test]
    fn exit_codes() {
        assert_eq!(Diagnostic::new(Code::Write, "", "").exit_code(), 1);
        assert_eq!(
            Diagnostic::new(Code::BuilderInternal, "", "").exit_code(),
            1
        );
        assert_eq!(Diagnostic::new(Code::ConfigParse, "", "").exit_code(), 2);
        assert_eq!(Diagnostic::new(Code::Internal, "", "").exit_code(), 2);
    }
}
