//! code-index builder: turns a source tree into a versioned, reproducible
//! Parquet snapshot (see `schemas/SCHEMA.md`).
//!
//! Pipeline: [`walk`] lists files as ripgrep would → [`analyze`] reads,
//! redacts ([`secrets`]), parses ([`parse`]) and chunks ([`chunk`]) each file
//! in parallel → [`resolve`] links imports, calls and bases across files →
//! [`write`] streams rows into Parquet → [`snapshot`] writes the manifest and
//! renames the temp directory into place.

pub mod analyze;
pub mod cache;
pub mod chunk;
pub mod config;
pub mod embeddings;
pub mod error;
pub mod git;
pub mod hooks;
pub mod ids;
pub mod index;
pub mod language;
pub mod mentions;
pub mod metrics;
pub mod modules;
pub mod outline;
pub mod overlay;
pub mod parse;
pub mod patterns;
pub mod previous;
pub mod resolve;
pub mod secrets;
pub mod snapshot;
pub mod status;
pub mod sync;
pub mod walk;
pub mod write;

pub use error::{Error, Result};

/// Version of this tool, recorded in manifests.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
