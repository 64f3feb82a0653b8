//! code-index-mcp: a read-only server over code-index snapshots.
//!
//! [`snapshot`] finds, verifies and loads snapshots (content held in memory);
//! [`grep`] is the ripgrep-exact scan over that content; [`cursor`] encodes
//! stable pagination. The MCP surface comes on top of these.
//!
//! **Invariants:** never reads the source checkout, never writes a snapshot.

pub mod args;
pub mod cursor;
pub mod download;
pub mod error;
pub mod grep;
pub mod guard;
pub mod memory;
pub mod outschema;
pub mod query;
pub mod recent;
pub mod semantic;
pub mod semtools;
pub mod snapshot;
pub mod store;
pub mod tools;

pub use error::ToolError;
