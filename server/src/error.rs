//! Errors the model can act on: a stable code, a message and a hint. The
//! type is the workspace's one [`Diagnostic`]; `mcp.rs` returns it as
//! `{code, message, hint}` with its `Display` as the result's text.

pub use code_index_schemas::diag::{Code, Diagnostic};

/// A tool error, returned to the agent as a structured result with `isError`.
pub type ToolError = Diagnostic;

/// The server's names for the codes of tool errors.
pub mod codes {
    use super::Code;
    pub const INVALID_PATTERN: Code = Code::InvalidPattern;
    pub const UNKNOWN_FIELD: Code = Code::UnknownField;
    pub const UNKNOWN_REPO: Code = Code::UnknownRepo;
    /// A `lang` value that names no language of the loaded files.
    pub const UNKNOWN_LANG: Code = Code::UnknownLang;
    pub const INVALID_CURSOR: Code = Code::InvalidCursor;
    pub const BUDGET_EXCEEDED: Code = Code::BudgetExceeded;
    pub const NOT_FOUND: Code = Code::NotFound;
    pub const INVALID_ARGUMENT: Code = Code::InvalidArgument;
    /// A `search` query over the size, term or nesting limits.
    pub const QUERY_TOO_COMPLEX: Code = Code::QueryTooComplex;
    /// A bug met while answering (a panic caught for that call only).
    pub const INTERNAL: Code = Code::Internal;
}
