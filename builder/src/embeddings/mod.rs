//! Chunk embeddings: what text is embedded, the persistent embedding cache,
//! and the batch run that fills `vectors.faiss`.
//!
//! What is embedded per chunk (chosen for retrieval, measured with
//! `bench/eval_search.py`): the context header's `file:`/`in:` lines, then
//! the chunk text, cut at [`MAX_INPUT_CHARS`] characters at a line boundary
//! (the tokenizer truncates further: the int8 MiniLM keeps 128 tokens, the fp32 one 256). Each function
//! or method starting in the chunk adds its signature (with its doc's first
//! paragraph) as one more vector, and each definition starting past the
//! chunk's first [`WINDOW_AFTER_BYTES`] a window of its own text, so a long
//! chunk's later definitions are not lost to truncation. A chunk scores as
//! its best vector.
//!
//! The cache is keyed by (model id, sha256 of that input): an unchanged chunk
//! is never embedded twice, across builds, branches and `--previous` runs.
//! It lives in `~/.cache/code-index/embeddings/<cache id>.bin` (append-only
//! records: 32-byte key, then `dim` little-endian f32); a torn last record,
//! as a killed build may leave, is ignored on load.
//!
//! Files: `input` (what the model sees per chunk), `cache` (the persistent
//! cache), `seed` (seeding it from a previous snapshot's vectors), `batch`
//! (embedding what the cache lacks), `snapshot_items` and `upgrade`
//! (`upgrade-embeddings`: a snapshot's inputs read back from its tables,
//! re-embedded into a new snapshot).

mod batch;
mod cache;
mod input;
mod seed;
mod snapshot_items;
mod upgrade;

pub use batch::{run, Pending, Stats};
pub use cache::{key, Cache};
pub use input::{
    header_for_model, input_text, inputs, signature_text, DefSpan, INPUT_DOC, MAX_INPUT_CHARS,
    MAX_SIGNATURES, MAX_WINDOWS, WINDOW_AFTER_BYTES,
};
pub use seed::seed_from_snapshot;
pub use snapshot_items::snapshot_items;
pub use upgrade::{upgrade, UpgradeOptions, UpgradeSummary};
