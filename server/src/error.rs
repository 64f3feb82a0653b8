//! Errors the model can act on: a stable code, a message and a hint.

use serde::Serialize;

/// A tool error, returned to the agent as a structured result with `isError`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ToolError {
    pub code: &'static str,
    pub message: String,
    pub hint: String,
}

impl ToolError {
    pub fn new(
        code: &'static str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> ToolError {
        ToolError {
            code,
            message: message.into(),
            hint: hint.into(),
        }
    }
    pub fn invalid_argument(message: impl Into<String>, hint: impl Into<String>) -> ToolError {
        ToolError::new(codes::INVALID_ARGUMENT, message, hint)
    }
    /// The same error with the hint a caller without grep's flags can act on
    /// (for an INVALID_PATTERN from the grep engine).
    pub fn pattern_hint(self, hint: &str) -> ToolError {
        if self.code == codes::INVALID_PATTERN {
            ToolError {
                hint: hint.to_string(),
                ..self
            }
        } else {
            self
        }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "error[{}]: {}\n  hint: {}",
            self.code, self.message, self.hint
        )
    }
}

impl std::error::Error for ToolError {}

pub mod codes {
    pub const INVALID_PATTERN: &str = "INVALID_PATTERN";
    pub const UNKNOWN_FIELD: &str = "UNKNOWN_FIELD";
    pub const UNKNOWN_REPO: &str = "UNKNOWN_REPO";
    /// A `lang` value that names no language of the loaded files.
    pub const UNKNOWN_LANG: &str = "UNKNOWN_LANG";
    pub const INVALID_CURSOR: &str = "INVALID_CURSOR";
    pub const BUDGET_EXCEEDED: &str = "BUDGET_EXCEEDED";
    pub const NOT_FOUND: &str = "NOT_FOUND";
    pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";
    /// A `search` query over the size, term or nesting limits.
    pub const QUERY_TOO_COMPLEX: &str = "QUERY_TOO_COMPLEX";
    pub const SNAPSHOT_INVALID: &str = "SNAPSHOT_INVALID";
    /// A bug met while answering (a panic caught for that call only).
    pub const INTERNAL: &str = "INTERNAL";
}
