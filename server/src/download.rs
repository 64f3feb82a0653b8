//! `--index https://…`: a snapshot published by `ci/publish-snapshot.sh`
//! (or a snapshot directory served as static files), fetched into
//! `<cache>/downloads/<repo>/<id>/` and verified (with the trusted keys'
//! signature check) before it is used; see
//! [`code_index_schemas::download`] for the URL forms.

use std::path::{Path, PathBuf};

pub use code_index_schemas::download::is_url;

use crate::snapshot::{self, LoadError};

/// Download (or reuse from `cache`) the snapshot at `url`; returns its directory.
pub fn fetch(url: &str, cache: &Path) -> Result<PathBuf, LoadError> {
    let remote = code_index_schemas::download::remote(url, "code-index-mcp")?;
    let dest = code_index_schemas::download::dest_under(&cache.join("downloads"), &remote.manifest);
    remote.fetch_into(&dest, &snapshot::verify)?;
    Ok(dest)
}
