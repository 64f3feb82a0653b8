//! `--index https://…/<repo>-<id>.tar.zst`: fetch a snapshot published by
//! `ci/publish-snapshot.sh` (the tarball and the manifest beside it) into the
//! cache. The tarball is unpacked into a temp directory, verified against the
//! published manifest (every file's sha256), and only then renamed into
//! place; a failed download leaves the cache as it was.
//!
//! A URL ending in `/` (or `/manifest.json`) names a snapshot *directory*
//! served as static files (what `code-indexer index` writes): its
//! `manifest.json` lists the data files, which are fetched one by one and
//! verified the same way.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use code_index_schemas::diag::Code;
use code_index_schemas::Manifest;

use crate::snapshot::{self, LoadError};

pub fn is_url(s: &str) -> bool {
    s.starts_with("https://") || s.starts_with("http://")
}

fn err(message: impl Into<String>, hint: impl Into<String>) -> LoadError {
    LoadError::new(Code::SnapshotInvalid, message, hint)
}

const HINT: &str = "pass the URL of <repo>-<snapshot-id>.tar.zst (or its .manifest.json) as published by ci/publish-snapshot.sh, or of a snapshot directory ending in / (holding manifest.json)";

fn client() -> Result<reqwest::blocking::Client, LoadError> {
    // rustls with the ring provider (no C toolchain-heavy aws-lc); installed once.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(600))
        .connect_timeout(Duration::from_secs(20))
        .user_agent(concat!("code-index-mcp/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| {
            err(
                format!("cannot start the HTTP client: {e}"),
                "report this as a bug",
            )
        })
}

fn get(
    client: &reqwest::blocking::Client,
    url: &str,
) -> Result<reqwest::blocking::Response, LoadError> {
    let resp = client.get(url).send().map_err(|e| {
        err(
            format!("cannot download {url}: {e}"),
            "check the URL and the network",
        )
    })?;
    if !resp.status().is_success() {
        return Err(err(
            format!("cannot download {url}: HTTP {}", resp.status()),
            HINT,
        ));
    }
    Ok(resp)
}

/// Download (or reuse from `cache`) the snapshot at `url`; returns its directory.
pub fn fetch(url: &str, cache: &Path) -> Result<PathBuf, LoadError> {
    let (tar_url, manifest_url, dir_url) = urls(url)?;
    let client = client()?;
    let text = get(&client, &manifest_url)?
        .text()
        .map_err(|e| err(format!("cannot read {manifest_url}: {e}"), HINT))?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| {
        err(
            format!("{manifest_url} is not a snapshot manifest: {e}"),
            HINT,
        )
    })?;
    let safe = code_index_schemas::is_plain_name;
    if !safe(&manifest.repo) || !safe(&manifest.snapshot_id) {
        return Err(err(
            format!("{manifest_url} names an unusable repo or snapshot id"),
            HINT,
        ));
    }
    let repo_dir = cache.join("downloads").join(&manifest.repo);
    let dest = repo_dir.join(&manifest.snapshot_id);
    if let Ok(m) = snapshot::verify(&dest) {
        if m == manifest {
            return Ok(dest);
        }
    }
    fs::create_dir_all(&repo_dir).map_err(|e| {
        err(
            format!("cannot create {}: {e}", repo_dir.display()),
            "set CODE_INDEX_CACHE to a writable directory",
        )
    })?;
    let tmp = repo_dir.join(format!(".tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    let result = (|| -> Result<(), LoadError> {
        fs::create_dir_all(&tmp).map_err(|e| {
            err(
                format!("cannot create {}: {e}", tmp.display()),
                "check the cache directory",
            )
        })?;
        let Some(tar_url) = tar_url else {
            fetch_dir(&client, &manifest, &text, &manifest_url, &dir_url, &tmp)?;
            return move_into_place(&tmp, &dest);
        };
        fetch_tar(&client, &manifest, &manifest_url, &tar_url, &tmp)?;
        move_into_place(&tmp, &dest)
    })();
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    result.map(|_| dest)
}

/// The tarball URL (None for a directory), the manifest URL and the
/// directory base URL of a published snapshot's URL.
fn urls(url: &str) -> Result<(Option<String>, String, String), LoadError> {
    Ok(if let Some(base) = url.strip_suffix(".tar.zst") {
        (
            Some(url.to_string()),
            format!("{base}.manifest.json"),
            String::new(),
        )
    } else if let Some(base) = url.strip_suffix("/manifest.json") {
        (None, url.to_string(), format!("{base}/"))
    } else if let Some(base) = url.strip_suffix(".manifest.json") {
        (
            Some(format!("{base}.tar.zst")),
            url.to_string(),
            String::new(),
        )
    } else if url.ends_with('/') {
        (None, format!("{url}manifest.json"), url.to_string())
    } else {
        return Err(err(format!("{url} is not a published snapshot"), HINT));
    })
}

/// A snapshot directory: each listed file, the manifest and its signature
/// when it has one, into `tmp`, verified against `manifest`.
fn fetch_dir(
    client: &reqwest::blocking::Client,
    manifest: &Manifest,
    text: &str,
    manifest_url: &str,
    dir_url: &str,
    tmp: &Path,
) -> Result<(), LoadError> {
    let safe = code_index_schemas::is_plain_name;
    for f in &manifest.files {
        if !safe(&f.name) {
            return Err(err(
                format!("{manifest_url} lists an unusable file name {:?}", f.name),
                HINT,
            ));
        }
        let file_url = format!("{dir_url}{}", f.name);
        let mut resp = get(client, &file_url)?;
        let path = tmp.join(&f.name);
        let mut out = fs::File::create(&path).map_err(|e| {
            err(
                format!("cannot write {}: {e}", path.display()),
                "check the cache directory",
            )
        })?;
        std::io::copy(&mut resp, &mut out).map_err(|e| {
            err(
                format!("cannot download {file_url}: {e}"),
                "check the network",
            )
        })?;
    }
    fs::write(tmp.join(code_index_schemas::MANIFEST_FILE), text.as_bytes()).map_err(|e| {
        err(
            format!("cannot write the manifest: {e}"),
            "check the cache directory",
        )
    })?;
    // Its signature, when it has one (checked by verify when keys are trusted).
    let sig_url = format!("{dir_url}{}", code_index_schemas::signing::SIGNATURE_FILE);
    if let Ok(resp) = client.get(&sig_url).send() {
        if resp.status().is_success() {
            let body = resp.bytes().map_err(|e| {
                err(
                    format!("cannot download {sig_url}: {e}"),
                    "check the network",
                )
            })?;
            fs::write(tmp.join(code_index_schemas::signing::SIGNATURE_FILE), &body).map_err(
                |e| {
                    err(
                        format!("cannot write the signature: {e}"),
                        "check the cache directory",
                    )
                },
            )?;
        }
    }
    let got = snapshot::verify(tmp)?;
    if got != *manifest {
        return Err(err(
            format!("{dir_url} does not hold the snapshot its manifest describes"),
            "republish the snapshot",
        ));
    }
    Ok(())
}

/// A published tarball, unpacked into `tmp` and verified against `manifest`.
fn fetch_tar(
    client: &reqwest::blocking::Client,
    manifest: &Manifest,
    manifest_url: &str,
    tar_url: &str,
    tmp: &Path,
) -> Result<(), LoadError> {
    let resp = get(client, tar_url)?;
    let dec = zstd::stream::read::Decoder::new(resp)
        .map_err(|e| err(format!("{tar_url} is not zstd: {e}"), HINT))?;
    let mut ar = tar::Archive::new(dec);
    let entries = ar
        .entries()
        .map_err(|e| err(format!("{tar_url} is not a tar archive: {e}"), HINT))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| err(format!("broken archive {tar_url}: {e}"), HINT))?;
        // unpack_in refuses paths that would leave the directory.
        let inside = entry
            .unpack_in(tmp)
            .map_err(|e| err(format!("cannot unpack {tar_url}: {e}"), HINT))?;
        if !inside {
            return Err(err(
                format!("{tar_url} holds a path outside the snapshot"),
                "the archive is not one ci/publish-snapshot.sh made",
            ));
        }
    }
    let got = snapshot::verify(tmp)?;
    if got != *manifest {
        return Err(err(
            format!("{tar_url} does not hold the snapshot its manifest {manifest_url} describes"),
            "republish the snapshot",
        ));
    }
    Ok(())
}

fn move_into_place(tmp: &Path, dest: &Path) -> Result<(), LoadError> {
    if dest.exists() {
        fs::remove_dir_all(dest).map_err(|e| {
            err(
                format!("cannot replace {}: {e}", dest.display()),
                "check the cache directory",
            )
        })?;
    }
    fs::rename(tmp, dest).map_err(|e| {
        err(
            format!("cannot move the download into {}: {e}", dest.display()),
            "check the cache directory",
        )
    })
}
