//! code-index-mcp: a read-only server over code-index snapshots.
//!
//! Layers, top down (a module uses only those below it):
//! - [`mcp`]: the one module that touches rmcp (router, resources, results);
//! - [`tools`]: one module per MCP tool, [`resources`] composed from them;
//! - [`state`]: the loaded snapshots, store, engine and caches;
//! - engines: [`grep`] (the ripgrep-exact scan), [`query`] (the `search`
//!   language: parse, simplify, evaluate), [`retrieval`] (search_code's
//!   keyword, vectors, fusion, ranking, routing, graph), [`store`] (DuckDB);
//! - [`snapshot`] finds, verifies and loads snapshots; [`download`],
//!   [`cursor`], [`args`], [`outschema`], [`error`], [`guard`], [`memory`],
//!   [`recent`] are shared parts; [`metrics`] records each tool call.
//!
//! **Invariants:** never reads the source checkout, never writes a snapshot.

pub mod args;
pub mod cursor;
pub mod download;
pub mod error;
pub mod grep;
pub mod guard;
pub mod live;
pub mod mcp;
pub mod memory;
pub mod metrics;
pub mod outschema;
pub mod pages;
pub mod query;
pub mod recent;
pub mod resources;
pub mod retrieval;
pub mod snapshot;
pub mod state;
pub mod store;
pub mod tools;

pub use error::ToolError;
