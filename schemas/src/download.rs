//! Published snapshots: verifying a snapshot directory against its manifest,
//! and (feature `download`) fetching one that `ci/publish-snapshot.sh`
//! published. The server uses it for `--index https://…`, the builder for
//! `sync` from a configured `snapshot_url`.
//!
//! URLs:
//! - `…/<repo>-<id>.tar.zst` or `…/<repo>-<id>.manifest.json`: that
//!   snapshot (the tarball and the manifest beside it);
//! - `…/<repo>-latest.manifest.json`: the newest one, whatever its id (the
//!   publisher overwrites this copy of the newest manifest; the tarball is
//!   `<repo>-<id>.tar.zst` beside it, `<repo>` and `<id>` from the manifest);
//! - a URL ending in `/` (or `/manifest.json`): a snapshot *directory*
//!   served as static files (what `code-indexer index` writes), its files
//!   fetched one by one.
//!
//! Everything lands in a temp directory, is verified (every file's sha256,
//! and whatever the caller checks, e.g. a signature), and only then is
//! renamed into place: a failed download leaves the destination as it was.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::diag::{Code, Diagnostic};
use crate::{Manifest, MANIFEST_FILE, SCHEMA_VERSION};

fn err(message: impl Into<String>, hint: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::SnapshotInvalid, message, hint)
}

/// What to do about a snapshot that does not verify.
pub const REBUILD: &str =
    "rebuild it with `code-indexer index <repo> --out <dir>` (or download it again)";

/// A file's size and hex sha256.
pub fn sha256_file(path: &Path) -> std::io::Result<(u64, String)> {
    let mut f = File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            break;
        }
        h.update(&buf[..k]);
        n += k as u64;
    }
    Ok((n, hex::encode(h.finalize())))
}

/// Read and verify the snapshot in `dir`: its manifest parses and has this
/// schema version, `check` accepts the manifest's bytes (e.g. its
/// signature), and every listed data file has the listed size and sha256.
pub fn verify_dir<T>(
    dir: &Path,
    check: impl FnOnce(&[u8]) -> Result<T, Diagnostic>,
) -> Result<(Manifest, T), Diagnostic> {
    let mp = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&mp)
        .map_err(|e| err(format!("cannot read {}: {e}", mp.display()), REBUILD))?;
    let manifest: Manifest = serde_json::from_str(&text)
        .map_err(|e| err(format!("broken manifest {}: {e}", mp.display()), REBUILD))?;
    if manifest.schema_version != SCHEMA_VERSION {
        return Err(err(
            format!(
                "snapshot {} has schema version {}, this version reads version {SCHEMA_VERSION}",
                dir.display(),
                manifest.schema_version
            ),
            format!("{REBUILD} with code-indexer {}", env!("CARGO_PKG_VERSION")),
        ));
    }
    let checked = check(text.as_bytes())?;
    for f in &manifest.files {
        if !crate::is_plain_name(&f.name) || f.name == MANIFEST_FILE {
            return Err(err(
                format!(
                    "manifest {} lists an unusable file name {:?}",
                    mp.display(),
                    f.name.chars().take(100).collect::<String>()
                ),
                REBUILD,
            ));
        }
        let p = dir.join(&f.name);
        let (size, sha) = sha256_file(&p)
            .map_err(|e| err(format!("cannot read {}: {e}", p.display()), REBUILD))?;
        if size != f.bytes || sha != f.sha256 {
            return Err(err(
                format!("{} does not match its manifest (size or sha256 differ): the snapshot is damaged or was modified", p.display()),
                REBUILD,
            ));
        }
    }
    Ok((manifest, checked))
}

#[cfg(feature = "download")]
pub use fetching::*;

#[cfg(feature = "download")]
mod fetching {
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use super::err;
    use crate::diag::Diagnostic;
    use crate::Manifest;

    pub fn is_url(s: &str) -> bool {
        s.starts_with("https://") || s.starts_with("http://")
    }

    const HINT: &str = "pass the URL of <repo>-<snapshot-id>.tar.zst (or its .manifest.json, or <repo>-latest.manifest.json) as published by ci/publish-snapshot.sh, or of a snapshot directory ending in / (holding manifest.json)";

    /// The suffix of the manifest copy naming the newest published snapshot.
    pub const LATEST_SUFFIX: &str = "-latest.manifest.json";

    /// An HTTP client (rustls with the ring provider); `agent` names the caller.
    fn client(agent: &str) -> Result<reqwest::blocking::Client, Diagnostic> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(600))
            .connect_timeout(Duration::from_secs(20))
            .user_agent(format!("{agent}/{}", env!("CARGO_PKG_VERSION")))
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
    ) -> Result<reqwest::blocking::Response, Diagnostic> {
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

    /// A published snapshot's manifest, as fetched.
    pub struct Remote {
        pub url: String,
        pub manifest: Manifest,
        text: String,
        manifest_url: String,
        /// The tarball's URL (None: a snapshot directory at `dir_url`).
        tar_url: Option<String>,
        dir_url: String,
        client: reqwest::blocking::Client,
    }

    /// Fetch the manifest of the snapshot `url` names (see the module
    /// documentation); `agent` goes into the User-Agent.
    pub fn remote(url: &str, agent: &str) -> Result<Remote, Diagnostic> {
        let (tar_url, manifest_url, dir_url) = urls(url)?;
        let client = client(agent)?;
        let text = get(&client, &manifest_url)?
            .text()
            .map_err(|e| err(format!("cannot read {manifest_url}: {e}"), HINT))?;
        let manifest: Manifest = serde_json::from_str(&text).map_err(|e| {
            err(
                format!("{manifest_url} is not a snapshot manifest: {e}"),
                HINT,
            )
        })?;
        let safe = crate::is_plain_name;
        if !safe(&manifest.repo) || !safe(&manifest.snapshot_id) || manifest.overlay.is_some() {
            return Err(err(
                format!("{manifest_url} names an unusable repo or snapshot id"),
                HINT,
            ));
        }
        // The newest: its tarball is named by the manifest it points at.
        let tar_url = match tar_url {
            Some(t) if t.is_empty() => Some(format!(
                "{}{}-{}.tar.zst",
                &manifest_url[..manifest_url.rfind('/').map_or(0, |i| i + 1)],
                manifest.repo,
                manifest.snapshot_id
            )),
            t => t,
        };
        Ok(Remote {
            url: url.to_string(),
            manifest,
            text,
            manifest_url,
            tar_url,
            dir_url,
            client,
        })
    }

    impl Remote {
        /// Download the snapshot into `dest` (a temp directory beside it
        /// first), verified by `verify` (which must return the manifest it
        /// read) against the published manifest. A `dest` that already
        /// verifies as this snapshot is kept as it is (returns false).
        pub fn fetch_into(
            &self,
            dest: &Path,
            verify: &dyn Fn(&Path) -> Result<Manifest, Diagnostic>,
        ) -> Result<bool, Diagnostic> {
            if let Ok(m) = verify(dest) {
                if m == self.manifest {
                    return Ok(false);
                }
            }
            let parent = dest.parent().unwrap_or(Path::new("."));
            fs::create_dir_all(parent).map_err(|e| {
                err(
                    format!("cannot create {}: {e}", parent.display()),
                    "set CODE_INDEX_CACHE (server) or --index (sync) to a writable directory",
                )
            })?;
            let tmp = parent.join(format!(".tmp-{}", std::process::id()));
            let _ = fs::remove_dir_all(&tmp);
            let result = (|| -> Result<(), Diagnostic> {
                fs::create_dir_all(&tmp).map_err(|e| {
                    err(
                        format!("cannot create {}: {e}", tmp.display()),
                        "check the directory's permissions",
                    )
                })?;
                let source = match &self.tar_url {
                    Some(t) => {
                        self.fetch_tar(t, &tmp)?;
                        t.clone()
                    }
                    None => {
                        self.fetch_dir(&tmp)?;
                        self.dir_url.clone()
                    }
                };
                let got = verify(&tmp)?;
                if got != self.manifest {
                    return Err(err(
                        format!(
                            "{source} does not hold the snapshot its manifest {} describes",
                            self.manifest_url
                        ),
                        "republish the snapshot",
                    ));
                }
                move_into_place(&tmp, dest)
            })();
            if result.is_err() {
                let _ = fs::remove_dir_all(&tmp);
            }
            result.map(|_| true)
        }

        /// A snapshot directory: each listed file, the manifest and its
        /// signature when it has one, into `tmp`.
        fn fetch_dir(&self, tmp: &Path) -> Result<(), Diagnostic> {
            for f in &self.manifest.files {
                if !crate::is_plain_name(&f.name) {
                    return Err(err(
                        format!(
                            "{} lists an unusable file name {:?}",
                            self.manifest_url, f.name
                        ),
                        HINT,
                    ));
                }
                let file_url = format!("{}{}", self.dir_url, f.name);
                let mut resp = get(&self.client, &file_url)?;
                let path = tmp.join(&f.name);
                let mut out = fs::File::create(&path).map_err(|e| {
                    err(
                        format!("cannot write {}: {e}", path.display()),
                        "check free space and permissions",
                    )
                })?;
                std::io::copy(&mut resp, &mut out).map_err(|e| {
                    err(
                        format!("cannot download {file_url}: {e}"),
                        "check the network",
                    )
                })?;
            }
            fs::write(tmp.join(crate::MANIFEST_FILE), self.text.as_bytes()).map_err(|e| {
                err(
                    format!("cannot write the manifest: {e}"),
                    "check free space and permissions",
                )
            })?;
            // Its signature, when it has one (checked by `verify` when keys
            // are trusted).
            let sig_url = format!("{}{}", self.dir_url, crate::signing::SIGNATURE_FILE);
            if let Ok(resp) = self.client.get(&sig_url).send() {
                if resp.status().is_success() {
                    let body = resp.bytes().map_err(|e| {
                        err(
                            format!("cannot download {sig_url}: {e}"),
                            "check the network",
                        )
                    })?;
                    fs::write(tmp.join(crate::signing::SIGNATURE_FILE), &body).map_err(|e| {
                        err(
                            format!("cannot write the signature: {e}"),
                            "check free space and permissions",
                        )
                    })?;
                }
            }
            Ok(())
        }

        /// A published tarball, unpacked into `tmp`.
        fn fetch_tar(&self, tar_url: &str, tmp: &Path) -> Result<(), Diagnostic> {
            let resp = get(&self.client, tar_url)?;
            let dec = zstd::stream::read::Decoder::new(resp)
                .map_err(|e| err(format!("{tar_url} is not zstd: {e}"), HINT))?;
            let mut ar = tar::Archive::new(dec);
            let entries = ar
                .entries()
                .map_err(|e| err(format!("{tar_url} is not a tar archive: {e}"), HINT))?;
            for entry in entries {
                let mut entry =
                    entry.map_err(|e| err(format!("broken archive {tar_url}: {e}"), HINT))?;
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
            Ok(())
        }
    }

    /// The tarball URL (None for a directory; empty: named by the manifest,
    /// for the newest), the manifest URL and the directory base URL of a
    /// published snapshot's URL.
    fn urls(url: &str) -> Result<(Option<String>, String, String), Diagnostic> {
        Ok(if let Some(base) = url.strip_suffix(".tar.zst") {
            (
                Some(url.to_string()),
                format!("{base}.manifest.json"),
                String::new(),
            )
        } else if let Some(base) = url.strip_suffix("/manifest.json") {
            (None, url.to_string(), format!("{base}/"))
        } else if url.ends_with(LATEST_SUFFIX) {
            (Some(String::new()), url.to_string(), String::new())
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

    fn move_into_place(tmp: &Path, dest: &Path) -> Result<(), Diagnostic> {
        if dest.exists() {
            fs::remove_dir_all(dest).map_err(|e| {
                err(
                    format!("cannot replace {}: {e}", dest.display()),
                    "check the directory's permissions",
                )
            })?;
        }
        fs::rename(tmp, dest).map_err(|e| {
            err(
                format!("cannot move the download into {}: {e}", dest.display()),
                "check the directory's permissions",
            )
        })
    }

    /// Where a URL's snapshot goes under a directory of repos
    /// (`<dir>/<repo>/<id>`).
    pub fn dest_under(dir: &Path, m: &Manifest) -> PathBuf {
        dir.join(&m.repo).join(&m.snapshot_id)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn url_forms() {
            let (t, m, d) = urls("https://h/p/dj-0123.tar.zst").unwrap();
            assert_eq!(
                (t.as_deref(), m.as_str(), d.as_str()),
                (
                    Some("https://h/p/dj-0123.tar.zst"),
                    "https://h/p/dj-0123.manifest.json",
                    ""
                )
            );
            let (t, m, _) = urls("https://h/p/dj-latest.manifest.json").unwrap();
            assert_eq!(
                (t.as_deref(), m.as_str()),
                (Some(""), "https://h/p/dj-latest.manifest.json")
            );
            let (t, m, d) = urls("https://h/p/snap/").unwrap();
            assert_eq!(
                (t, m.as_str(), d.as_str()),
                (None, "https://h/p/snap/manifest.json", "https://h/p/snap/")
            );
            assert!(urls("https://h/p/dj").is_err());
        }
    }
}
